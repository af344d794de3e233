// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The ib_device: creation on `rdma link add`, its attributes, its one RoCEv2
 * port and the user context.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>

#include "vhca_wire.h"

/**
 * vhca_node_guid() - node GUID of a vhca device on a netdev with MAC @mac
 * @mac: the netdev's 6-byte hardware address
 *
 * rxe uses the EUI-64 of the MAC, and nvme-rdma tells HCAs apart by node
 * GUID, so vhca must not: it uses the EUI-64 with the two inserted bytes
 * 0xfffe replaced by "VH".  Unique per MAC, never equal to rxe's.
 *
 * Return: the GUID in network byte order, as ib_device.node_guid wants it.
 */
__be64 vhca_node_guid(const u8 *mac)
{
	u8 eui[8];
	__be64 guid;

	addrconf_addr_eui48(eui, mac);
	eui[3] = 'V';
	eui[4] = 'H';
	memcpy(&guid, eui, sizeof(guid));
	return guid;
}

/**
 * vhca_active_mtu() - IB path MTU a netdev MTU can carry
 * @netdev_mtu: the netdev's MTU in bytes
 *
 * Return: the largest IB MTU that fits after the RoCEv2 headers, or 0 if
 * not even IB_MTU_256 fits (such a port cannot become active).
 */
enum ib_mtu vhca_active_mtu(unsigned int netdev_mtu)
{
	return iboe_get_mtu(min_t(unsigned int, netdev_mtu, INT_MAX));
}

/**
 * vhca_port_update() - make the port follow the netdev
 * @vdev: the device
 *
 * The port is ACTIVE when the netdev is running with carrier and its MTU
 * carries RoCE, DOWN otherwise.  A change raises IB_EVENT_PORT_ACTIVE or
 * IB_EVENT_PORT_ERR, which also refreshes the core's port cache.
 */
void vhca_port_update(struct vhca_dev *vdev)
{
	struct net_device *ndev = vdev->ndev;
	enum ib_mtu mtu = vhca_active_mtu(READ_ONCE(ndev->mtu));
	enum ib_port_state state = IB_PORT_DOWN;
	struct ib_event ev = {};
	bool changed;

	if (netif_running(ndev) && netif_carrier_ok(ndev) && mtu)
		state = IB_PORT_ACTIVE;

	mutex_lock(&vdev->port_lock);
	changed = state != vdev->port_state;
	vdev->port_state = state;
	vdev->active_mtu = mtu ? mtu : IB_MTU_256;
	mutex_unlock(&vdev->port_lock);

	if (!changed)
		return;
	ev.device = &vdev->ibdev;
	ev.element.port_num = VHCA_PORT;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

static int vhca_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	/* the core's own query at registration has no udata on 7.x */
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	*attr = to_vdev(ibdev)->attrs;
	return 0;
}

/*
 * The node description, which sysfs node_desc writes; the system image
 * GUID stays the node GUID.  The ports' capabilities have nothing to
 * change on RoCE: the core answers that itself when there is no
 * modify_port.
 */
static int vhca_modify_device(struct ib_device *ibdev, int mask,
			      struct ib_device_modify *props)
{
	if (mask & ~IB_DEVICE_MODIFY_NODE_DESC)
		return -EOPNOTSUPP;
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, props->node_desc,
		       sizeof(ibdev->node_desc));
	return 0;
}

static int vhca_query_port(struct ib_device *ibdev, u32 port,
			   struct ib_port_attr *attr)
{
	struct vhca_dev *vdev = to_vdev(ibdev);

	mutex_lock(&vdev->port_lock);
	attr->state = vdev->port_state;
	attr->active_mtu = vdev->active_mtu;
	mutex_unlock(&vdev->port_lock);

	if (attr->state == IB_PORT_ACTIVE)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (READ_ONCE(vdev->ndev->flags) & IFF_UP)
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;

	attr->max_mtu = IB_MTU_4096;
	attr->gid_tbl_len = VHCA_GID_TBL_LEN;
	attr->pkey_tbl_len = 1;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = 1U << 31;
	/* Fails only while the netdev goes away; the port is down by then. */
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static enum rdma_link_layer vhca_get_link_layer(struct ib_device *ibdev,
						u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int vhca_get_port_immutable(struct ib_device *ibdev, u32 port,
				   struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = VHCA_GID_TBL_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int vhca_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			   u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int vhca_alloc_ucontext(struct ib_ucontext *ibuc,
			       struct ib_udata *udata)
{
	struct vhca_alloc_ucontext_resp resp = {
		.ring_hdr_size = VHCA_RING_HDR_SIZE,
		.max_sge = VHCA_MAX_SGE,
		.caps = VHCA_CAP_RING_CTRL | VHCA_CAP_CQE_TS,
	};

	return ib_copy_to_udata(udata, &resp,
				min(udata->outlen, sizeof(resp)));
}

static void vhca_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Having this lets the device go away (link del, netdev removal, rmmod)
 * while processes hold it open: the core destroys their objects, zaps the
 * mappings it tracks, reports IB_EVENT_DEVICE_FATAL and fails their later
 * calls with EIO.  Without it, unregistration waits for every process to
 * close the device.  vhca keeps no per-context state beyond its objects.
 */
static void vhca_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", VHCA_HCA_TYPE);
}
static DEVICE_ATTR_RO(hca_type);

static struct attribute *vhca_dev_attributes[] = {
	&dev_attr_hca_type.attr,
	NULL,
};

/*
 * hca_type is what the provider matches on: vhca has no driver id to be
 * matched by, and the device name is the user's choice.
 */
static const struct attribute_group vhca_attr_group = {
	.attrs = vhca_dev_attributes,
};

static void vhca_dealloc_driver(struct ib_device *ibdev)
{
	struct vhca_dev *vdev = to_vdev(ibdev);
	bool listed;

	/* the netdev's rx_handler is no longer vhca's once this returns */
	rtnl_lock();
	vhca_recv_unsteer(vdev);
	rtnl_unlock();
	listed = vhca_dev_list_del(vdev);
	if (listed)
		vhca_net_put(vdev);
	vhca_mcast_dev_gone(vdev);
	mutex_destroy(&vdev->mcast_lock);

	netdev_put(vdev->ndev, &vdev->ndev_tracker);
	ida_destroy(&vdev->pd_ida);
	ida_destroy(&vdev->cq_ida);
	ida_destroy(&vdev->srq_ida);
	xa_destroy(&vdev->mr_xa);
	xa_destroy(&vdev->qp_xa);
	xa_destroy(&vdev->xsrq_xa);
	WARN_ON(!xa_empty(&vdev->counter_xa));	/* the core frees its sets first */
	xa_destroy(&vdev->counter_xa);
	mutex_destroy(&vdev->port_lock);
	free_percpu(vdev->cnt);
	if (listed)
		vhca_dev_gone();
}

static const struct ib_device_ops vhca_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = VHCA_UVERBS_ABI_VERSION,

	.alloc_ucontext = vhca_alloc_ucontext,
	.dealloc_driver = vhca_dealloc_driver,
	.dealloc_ucontext = vhca_dealloc_ucontext,
	.device_group = &vhca_attr_group,
	.disassociate_ucontext = vhca_disassociate_ucontext,
	.get_link_layer = vhca_get_link_layer,
	.get_port_immutable = vhca_get_port_immutable,
	.modify_device = vhca_modify_device,
	.query_device = vhca_query_device,
	.query_pkey = vhca_query_pkey,
	.query_port = vhca_query_port,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, vhca_ucontext, ibuc),
};

/*
 * Limits the ring geometry enforces.  Nothing is promised before it exists:
 * no memory windows yet.  Fast registration (REG_MR, LOCAL_INV,
 * SEND_WITH_INV) is what nvme-rdma and iSER need.
 */
static void vhca_init_attrs(struct vhca_dev *vdev)
{
	struct ib_device_attr *a = &vdev->attrs;

	a->sys_image_guid = vdev->ibdev.node_guid;
	a->vendor_id = VHCA_VENDOR_ID;
	a->page_size_cap = PAGE_SIZE;
	a->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_MEM_MGT_EXTENSIONS |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B |
			      VHCA_DEVICE_ATOMIC_WRITE |
			      VHCA_DEVICE_FLUSH |
			      IB_DEVICE_SRQ_RESIZE |
			      IB_DEVICE_XRC;
	a->max_fast_reg_page_list_len = VHCA_MAX_FAST_PAGES;
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	/*
	 * ODP: what works on the wire as on this host.  The engine faults in
	 * what a WQE sends and what a READ or atomic response lands in;
	 * RC's responder answers a missing page with an RNR NAK and faults
	 * it in, so every RC operation and SRQ may use ODP MRs.  UC and UD
	 * have no retry: their receivers hold a packet that finds a page
	 * missing, and those behind it, until it is faulted in
	 * (vhca_held.c), so their receives (RQ or SRQ) and UC's WRITEs may
	 * too.  Implicit ODP (the whole address space, vhca_odp.c) works
	 * wherever ODP does.
	 */
	if (IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)) {
		a->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
		a->odp_caps.general_caps = IB_ODP_SUPPORT |
					   IB_ODP_SUPPORT_IMPLICIT;
		a->odp_caps.per_transport_caps.rc_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
			IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV |
			VHCA_ODP_SUPPORT_ATOMIC_WRITE | VHCA_ODP_SUPPORT_FLUSH;
		a->odp_caps.per_transport_caps.uc_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_SRQ_RECV;
		a->odp_caps.per_transport_caps.ud_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			IB_ODP_SUPPORT_SRQ_RECV;
		/* XRC is RC's protocol, into SRQs, without the newest ops */
		a->odp_caps.per_transport_caps.xrc_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_WRITE |
			IB_ODP_SUPPORT_READ | IB_ODP_SUPPORT_ATOMIC |
			IB_ODP_SUPPORT_SRQ_RECV;
	}
	a->max_pd = VHCA_MAX_PD;
	a->max_cq = VHCA_MAX_CQ;
	a->max_srq = VHCA_MAX_SRQ;
	/* tag matching on RC, between QPs of this host (vhca_tm.c) */
	a->tm_caps.max_rndv_hdr_size = VHCA_TM_RNDV_HDR;
	a->tm_caps.max_num_tags = VHCA_TM_MAX_TAGS;
	a->tm_caps.flags = IB_TM_CAP_RNDV_RC;
	a->tm_caps.max_ops = VHCA_TM_MAX_OPS;
	a->tm_caps.max_sge = VHCA_TM_MAX_SGE;
	a->max_mr = VHCA_MAX_MR;
	a->max_mw = VHCA_MAX_MR;	/* MRs and windows share the key table */
	a->max_mcast_grp = VHCA_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = VHCA_MAX_MCAST_QP;
	a->max_total_mcast_qp_attach = VHCA_MAX_MCAST_GRP * VHCA_MAX_MCAST_QP;
	a->max_qp = VHCA_MAX_QP;
	a->max_qp_rd_atom = VHCA_MAX_RD_ATOM;
	a->max_qp_init_rd_atom = VHCA_MAX_RD_ATOM;
	/* each QP's responder keeps its own, none shared */
	a->max_res_rd_atom = VHCA_MAX_RD_ATOM * VHCA_MAX_QP;
	a->max_ah = VHCA_MAX_AH;
	a->local_ca_ack_delay = VHCA_ACK_DELAY;
	a->max_mr_size = U64_MAX;
	a->max_qp_wr = VHCA_MAX_QP_WR;
	a->max_send_sge = VHCA_MAX_SGE;
	a->max_recv_sge = VHCA_MAX_SGE;
	a->max_cqe = VHCA_MAX_CQE;
	a->max_srq_wr = VHCA_MAX_QP_WR;
	a->max_srq_sge = VHCA_MAX_SGE;
	a->max_pkeys = 1;
	a->atomic_cap = IB_ATOMIC_HCA;
	a->max_sge_rd = VHCA_MAX_SGE;
	/* CQE time stamps are CLOCK_MONOTONIC ns: a 1 GHz, 64-bit clock */
	a->hca_core_clock = NSEC_PER_SEC / 1000;	/* in kHz */
	a->timestamp_mask = U64_MAX;
}

/*
 * Devices that take what their ports receive (a bridge, a bond or team,
 * an Open vSwitch): whether @upper is one, and whether @ndev is a port
 * of one.
 */
static bool vhca_dev_master_takes(const struct net_device *upper)
{
	return netif_is_bridge_master(upper) || netif_is_lag_master(upper) ||
	       netif_is_ovs_master(upper);
}

static bool vhca_dev_is_port(const struct net_device *ndev)
{
	return netif_is_bridge_port(ndev) || netif_is_lag_port(ndev) ||
	       netif_is_ovs_port(ndev);
}

/**
 * vhca_dev_check_upper() - refuse to make a link's netdev a port
 * @ndev: the netdev about to get an upper device
 * @info: the notifier's NETDEV_PRECHANGEUPPER information
 *
 * A port of a bridge or a bond receives for its master: a link on it
 * would see none of its RoCEv2.  Enslaving the netdev of a link, or a
 * VLAN that vhca steers, is refused, with the reason in the extack and
 * the log; the link goes on the master instead.  (With steering, the
 * master's own rx_handler registration fails first, with -EBUSY.)
 * Caller holds rtnl.
 *
 * Return: a notifier result.
 */
int vhca_dev_check_upper(struct net_device *ndev,
			 struct netdev_notifier_changeupper_info *info)
{
	struct netlink_ext_ack *extack =
		netdev_notifier_info_to_extack(&info->info);
	struct vhca_dev *vdev;

	if (!info->linking || !vhca_dev_master_takes(info->upper_dev))
		return NOTIFY_DONE;
	vdev = vhca_dev_get_by_netdev(ndev);
	if (!vdev && !vhca_recv_steers(ndev))
		return NOTIFY_DONE;
	if (vdev)
		ib_device_put(&vdev->ibdev);
	NL_SET_ERR_MSG(extack,
		       "vhca: an RDMA link is on this netdev: delete it, then add one on the master");
	netdev_info(ndev,
		    "vhca: not made a port of %s: an RDMA link is on this netdev\n",
		    netdev_name(info->upper_dev));
	return notifier_from_errno(-EBUSY);
}

static int vhca_check_netdev(struct net_device *ndev)
{
	struct ib_device *other;
	bool roce;

	if (ndev->type != ARPHRD_ETHER || ndev->addr_len != ETH_ALEN) {
		netdev_info(ndev, "vhca: not an Ethernet device\n");
		return -EINVAL;
	}
	/*
	 * RoCE on a VLAN is a GID of the real device's link, as with rxe
	 * and a RoCE NIC: the core lists the VLAN's addresses there, and
	 * vhca sends and receives them through the VLAN device.
	 */
	if (is_vlan_dev(ndev)) {
		netdev_info(ndev,
			    "vhca: a VLAN device: add the link on %s, whose GIDs include the VLAN's addresses\n",
			    netdev_name(vlan_dev_real_dev(ndev)));
		return -EINVAL;
	}
	if (vhca_dev_is_port(ndev)) {
		netdev_info(ndev,
			    "vhca: a port of a bridge or bond, which receives for its master: add the link on the master\n");
		return -EBUSY;
	}
	/*
	 * One RoCE stack per netdev: two would answer for the same GIDs and
	 * hand out the same QPNs, and vhca's steering would take the other's
	 * packets.  An iWARP device (siw) speaks TCP there and is no bother.
	 * RDMA_DRIVER_UNKNOWN matches any driver, vhca's own devices too.
	 */
	other = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	if (!other)
		return 0;
	roce = !rdma_protocol_iwarp(other, rdma_start_port(other));
	if (roce)
		netdev_info(ndev, "vhca: %s does RoCE on this netdev already\n",
			    dev_name(&other->dev));
	ib_device_put(other);
	return roce ? -EBUSY : 0;
}

/**
 * vhca_dev_add() - create and register a device on a netdev
 * @name: the ib_device name the user chose
 * @ndev: the netdev (the caller holds a reference for the duration)
 *
 * Return: 0 or a negative errno; nothing is left behind on failure.
 */
int vhca_dev_add(const char *name, struct net_device *ndev)
{
	struct vhca_dev *vdev;
	struct ib_device *ibdev;
	bool gone, steered = false;
	int err;

	err = vhca_check_netdev(ndev);
	if (err)
		return err;

	vdev = ib_alloc_device(vhca_dev, ibdev);
	if (!vdev)
		return -ENOMEM;
	ibdev = &vdev->ibdev;
	INIT_LIST_HEAD(&vdev->list);
	INIT_LIST_HEAD(&vdev->steered_vlans);
	mutex_init(&vdev->port_lock);
	mutex_init(&vdev->mcast_lock);
	INIT_LIST_HEAD(&vdev->mcasts);
	ida_init(&vdev->pd_ida);
	ida_init(&vdev->cq_ida);
	ida_init(&vdev->srq_ida);
	xa_init_flags(&vdev->mr_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&vdev->qp_xa, XA_FLAGS_ALLOC);
	xa_init(&vdev->xsrq_xa);
	xa_init_flags(&vdev->counter_xa, XA_FLAGS_ALLOC1);
	vdev->port_state = IB_PORT_DOWN;
	vdev->active_mtu = IB_MTU_256;
	vdev->ndev = ndev;
	netdev_hold(ndev, &vdev->ndev_tracker, GFP_KERNEL);

	ibdev->node_type = RDMA_NODE_IB_CA;
	/* POST_SEND with no WR is the send doorbell of user QPs */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->node_guid = vhca_node_guid(ndev->dev_addr);
	ibdev->dev.parent = ndev->dev.parent;
	strscpy(ibdev->node_desc, "vhca", sizeof(ibdev->node_desc));
	ib_set_device_ops(ibdev, &vhca_dev_ops);
	ib_set_device_ops(ibdev, &vhca_verbs_ops);
	ib_set_device_ops(ibdev, &vhca_qp_ops);
	ib_set_device_ops(ibdev, &vhca_mr_ops);
	ib_set_device_ops(ibdev, &vhca_mw_ops);
	ib_set_device_ops(ibdev, &vhca_mcast_ops);
	ib_set_device_ops(ibdev, &vhca_kverbs_ops);
	ib_set_device_ops(ibdev, &vhca_counter_ops);
	ibdev->driver_def = vhca_uapi_defs;
	vhca_init_attrs(vdev);
	/* from here on, failing is err_dealloc: dealloc_driver frees it all */
	vdev->cnt = alloc_percpu(struct vhca_counters);
	if (!vdev->cnt) {
		err = -ENOMEM;
		goto err_dealloc;
	}

	err = vhca_dev_list_add(vdev);
	if (err) {
		netdev_info(ndev, "vhca: already has a vhca device\n");
		goto err_dealloc;
	}
	/* a netdev going away meanwhile must not keep vhca's rx_handler */
	rtnl_lock();
	if (ndev->reg_state != NETREG_REGISTERED)
		err = -ENODEV;
	else
		steered = vhca_recv_steer(vdev);
	rtnl_unlock();
	if (!err && !steered)
		err = vhca_net_get(vdev);
	if (err)
		goto err_dealloc;
	err = ib_device_set_netdev(ibdev, ndev, VHCA_PORT);
	if (err)
		goto err_dealloc;
	vhca_mark_name_assigned_by_user(ibdev);
	err = ib_register_device(ibdev, name, NULL);
	if (err)
		goto err_dealloc;

	/*
	 * Until ib_register_device() returned, the netdev notifier could not
	 * take a reference on the device and skipped it.  It runs under rtnl:
	 * either an unregistration of the netdev already began (reg_state
	 * says so) or the notifier will find the registered device.
	 */
	rtnl_lock();
	gone = ndev->reg_state != NETREG_REGISTERED;
	if (!gone)
		vhca_port_update(vdev);
	rtnl_unlock();

	if (gone) {
		ib_unregister_device(ibdev);
		return -ENODEV;
	}
	return 0;

err_dealloc:
	ib_dealloc_device(ibdev);
	return err;
}
