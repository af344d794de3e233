// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vhca devices: the list of those the link type created, and the lookups
 * the engine and the receive path make in it.
 *
 * vhca has no rdma_driver_id of its own (that enum is uapi and closed to
 * out-of-tree drivers), so it cannot use ib_unregister_driver() or
 * ib_device_get_by_netdev(): both would see other drivers' devices.  It
 * keeps its own list instead.  The engine reads the list under RCU to find
 * the device a GID belongs to: traffic between vhca devices of this host
 * stays off the network.
 */
#include <linux/if_vlan.h>
#include <linux/rculist.h>
#include <linux/wait_bit.h>
#include <rdma/ib_cache.h>

#include "vhca.h"

static DEFINE_MUTEX(vhca_dev_lock);	/* nests inside rtnl_lock */
static LIST_HEAD(vhca_dev_list);	/* writers hold the lock; RCU readers */
/* Devices listed and not yet through dealloc_driver: module exit waits. */
static atomic_t vhca_devs_alive = ATOMIC_INIT(0);

/**
 * vhca_gid_net() - the network namespace a source GID sends from
 * @sgid: the GID attribute a QP or an AV names as its source
 *
 * Caller holds rcu_read_lock().
 *
 * Return: the namespace of the GID's netdev, or NULL if it has none.
 */
struct net *vhca_gid_net(const struct ib_gid_attr *sgid)
{
	struct net_device *ndev = rdma_read_gid_attr_ndev_rcu(sgid);

	return IS_ERR(ndev) ? NULL : dev_net(ndev);
}

/*
 * Whether @vdev has @gid on a netdev of @net.  The first entry with the
 * GID is the one looked at (rdma_find_gid_by_filter() is not exported):
 * an address held twice by one device, in two namespaces, is left to the
 * wire.
 */
static bool vhca_dev_has_gid(struct vhca_dev *vdev, const union ib_gid *gid,
			     struct net *net)
{
	const struct ib_gid_attr *attr;
	bool here;

	/* a device not (or no longer) registered has no GIDs to offer */
	if (!ib_device_try_get(&vdev->ibdev))
		return false;
	attr = rdma_find_gid_by_port(&vdev->ibdev, gid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, VHCA_PORT,
				     NULL);
	ib_device_put(&vdev->ibdev);
	if (IS_ERR(attr))
		return false;
	here = net_eq(vhca_gid_net(attr), net);
	rdma_put_gid_attr(attr);
	return here;
}

/**
 * vhca_dev_by_gid() - the vhca device of this host that has a GID
 * @self: the asking device, tried first
 * @gid: the GID
 * @net: the sender's network namespace (vhca_gid_net())
 *
 * A GID is this host's only where the sender would find its address
 * local: on a netdev of the sender's namespace.  The same address held
 * in another namespace is another host as far as the sender can tell,
 * and its traffic goes to the wire, as routing would send it.
 *
 * Caller holds rcu_read_lock(); the device stays valid until it drops it.
 *
 * Return: the device, or NULL if no vhca device here has @gid in @net.
 */
struct vhca_dev *vhca_dev_by_gid(struct vhca_dev *self, const union ib_gid *gid,
				 struct net *net)
{
	struct vhca_dev *vdev;

	if (!net)
		return NULL;
	if (vhca_dev_has_gid(self, gid, net))
		return self;
	list_for_each_entry_rcu(vdev, &vhca_dev_list, list)
		if (vdev != self && vhca_dev_has_gid(vdev, gid, net))
			return vdev;
	return NULL;
}

/**
 * vhca_dev_by_index() - the vhca device with an ib_device index
 * @self: the asking device, tried first
 * @index: the index, as vhca_dev_by_gid() found it earlier
 *
 * Caller holds rcu_read_lock(); the device stays valid until it drops it.
 *
 * Return: the device, or NULL if it has gone.
 */
struct vhca_dev *vhca_dev_by_index(struct vhca_dev *self, u32 index)
{
	struct vhca_dev *vdev;

	if (self->ibdev.index == index)
		return self;
	list_for_each_entry_rcu(vdev, &vhca_dev_list, list)
		if (vdev->ibdev.index == index)
			return vdev;
	return NULL;
}

/**
 * vhca_dev_by_netdev_rcu() - the vhca device bound to a netdev
 * @ndev: the netdev, or a VLAN device above it
 *
 * For the receive path.  A VLAN's GIDs are its real device's link's (no
 * link is on a VLAN device: vhca_dev.c refuses it), so a VLAN device
 * stands for its real device.  Caller holds rcu_read_lock().
 *
 * Return: the device, or NULL.
 */
struct vhca_dev *vhca_dev_by_netdev_rcu(const struct net_device *ndev)
{
	struct vhca_dev *vdev;

	if (is_vlan_dev(ndev))
		ndev = vlan_dev_real_dev(ndev);
	list_for_each_entry_rcu(vdev, &vhca_dev_list, list)
		if (vdev->ndev == ndev)
			return vdev;
	return NULL;
}

/**
 * vhca_dev_get_by_netdev() - find the vhca device bound to a netdev
 * @ndev: the netdev
 *
 * Return: the device with a registration reference held (drop it with
 * ib_device_put()), or NULL if there is none or it is not registered.
 */
struct vhca_dev *vhca_dev_get_by_netdev(struct net_device *ndev)
{
	struct vhca_dev *vdev, *found = NULL;

	mutex_lock(&vhca_dev_lock);
	list_for_each_entry(vdev, &vhca_dev_list, list) {
		if (vdev->ndev == ndev && ib_device_try_get(&vdev->ibdev)) {
			found = vdev;
			break;
		}
	}
	mutex_unlock(&vhca_dev_lock);
	return found;
}

/**
 * vhca_dev_list_add() - claim a netdev for a new device
 * @vdev: the device, not registered yet
 *
 * Return: 0, or -EEXIST if a device (registered or not) already uses
 * @vdev->ndev: one vhca device per netdev, as with rxe.
 */
int vhca_dev_list_add(struct vhca_dev *vdev)
{
	struct vhca_dev *other;
	int err = 0;

	mutex_lock(&vhca_dev_lock);
	list_for_each_entry(other, &vhca_dev_list, list) {
		if (other->ndev == vdev->ndev) {
			err = -EEXIST;
			break;
		}
	}
	if (!err)
		list_add_tail_rcu(&vdev->list, &vhca_dev_list);
	mutex_unlock(&vhca_dev_lock);
	if (!err)
		atomic_inc(&vhca_devs_alive);
	return err;
}

/*
 * Off the list, and no engine or receive path still looking at it (the
 * caller has taken the netdev's rx_handler back): it can be freed.  A
 * device that never made it onto the list has nothing to undo.  Returns
 * whether it was listed; if so, vhca_dev_gone() must follow once
 * dealloc_driver is done with it.
 */
bool vhca_dev_list_del(struct vhca_dev *vdev)
{
	mutex_lock(&vhca_dev_lock);
	if (list_empty(&vdev->list)) {
		mutex_unlock(&vhca_dev_lock);
		return false;
	}
	list_del_rcu(&vdev->list);
	mutex_unlock(&vhca_dev_lock);
	synchronize_rcu();
	return true;
}

/* The last thing dealloc_driver does for a listed device. */
void vhca_dev_gone(void)
{
	if (atomic_dec_and_test(&vhca_devs_alive))
		wake_up_var(&vhca_devs_alive);
}

/**
 * vhca_dev_unregister_all() - unregister every device, for module exit
 *
 * Unregister every device.  A device that is already being unregistered
 * (link del, netdev removal) stays on the list until its dealloc_driver
 * runs, and ib_unregister_device() waits for that unregistration to finish.
 * One that has left the list may still be in dealloc_driver, which sleeps
 * after list_del (a grace period, releasing the UDP sockets): the module
 * exit waits for vhca_devs_alive to drop to zero too.
 */
void vhca_dev_unregister_all(void)
{
	struct vhca_dev *vdev;

	for (;;) {
		mutex_lock(&vhca_dev_lock);
		vdev = list_first_entry_or_null(&vhca_dev_list,
						struct vhca_dev, list);
		if (vdev)
			get_device(&vdev->ibdev.dev);
		mutex_unlock(&vhca_dev_lock);
		if (!vdev)
			break;
		ib_unregister_device(&vdev->ibdev);
		put_device(&vdev->ibdev.dev);
	}
}

/* Module exit: every listed device is through dealloc_driver. */
void vhca_dev_wait_gone(void)
{
	wait_var_event(&vhca_devs_alive, !atomic_read(&vhca_devs_alive));
}

/* The QP @qpn of the vhca device with ib_device index @dev, if any. */
struct vhca_qp *vhca_qp_find(struct vhca_dev *vdev, u32 dev, u32 qpn)
{
	struct vhca_dev *dst = vhca_dev_by_index(vdev, dev);

	return dst ? xa_load(&dst->qp_xa, qpn) : NULL;
}

/**
 * vhca_xsrq_find() - the XRC SRQ a message for an XRC TGT QP names
 * @tgt: the XRC TGT QP
 * @srqn: the SRQ's number, from the message (the XRCETH, or the WQE of
 *	an INI of this host)
 * @uid: 0, or the uid the SRQ must have: a receive WQE taken from an SRQ
 *	since destroyed is never completed on a new one of its number
 *
 * An SRQ of another XRC domain than @tgt's is not found: a sender may
 * name only the SRQs of the domain its TGT QP is in.  Caller holds
 * rcu_read_lock(): an XRC SRQ is freed a grace period after it leaves
 * the table.
 *
 * Return: the SRQ, or NULL.
 */
struct vhca_srq *vhca_xsrq_find(const struct vhca_qp *tgt, u32 srqn, u64 uid)
{
	struct vhca_dev *vdev = to_vdev(tgt->ibqp.device);
	struct vhca_srq *srq = xa_load(&vdev->xsrq_xa, srqn);

	if (!srq || srq->ibsrq.ext.xrc.xrcd != tgt->ibqp.xrcd ||
	    (uid && srq->uid != uid))
		return NULL;
	return srq;
}
