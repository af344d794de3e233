// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Multicast for UD QPs: the groups QPs attach to, the host's IGMP or MLD
 * membership for each, and delivery to every QP attached.
 *
 * RoCEv2 multicast is IP multicast to UDP port 4791 with the destination
 * QPN 0xFFFFFF; the MGID is the group's IPv6 address, or its IPv4 address
 * mapped (::ffff:224.x.y.z).  While a group has QPs attached, the device's
 * netdev is a member of it, as a NIC's driver makes it when its HCA joins:
 * the netdev takes the group's frames, and switches that snoop IGMP/MLD
 * forward them.  A datagram to the group arrives through the steering
 * (vhca_mcast_joined() says the group is the device's) or the UDP socket,
 * and one sent from this host comes back through IP's multicast loopback,
 * as a NIC loops back to the QPs of its port: so every QP attached here
 * gets a copy, the sender's own included, and nothing is delivered twice.
 *
 * The groups are a short RCU list per device, changed under rtnl (for the
 * membership) and then mcast_lock; a group's QPs are slots that readers
 * scan whole, so a slot filled or emptied meanwhile is seen or not, never
 * twice.
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "vhca_wire.h"

/**
 * struct vhca_mcast - a multicast group QPs of a device are attached to
 * @list: on vhca_dev.mcasts (RCU)
 * @mgid: its GID
 * @qp: the QPs attached, NULL in the free slots (RCU)
 * @rcu: freed after a grace period
 */
struct vhca_mcast {
	struct list_head list;
	union ib_gid mgid;
	struct vhca_qp *qp[VHCA_MAX_MCAST_QP];
	struct rcu_head rcu;
};

static struct vhca_mcast *vhca_mcast_find(struct vhca_dev *vdev,
					  const union ib_gid *mgid)
{
	struct vhca_mcast *g;

	list_for_each_entry_rcu(g, &vdev->mcasts, list,
				lockdep_is_held(&vdev->mcast_lock))
		if (!memcmp(&g->mgid, mgid, sizeof(*mgid)))
			return g;
	return NULL;
}

/* The netdev joins or leaves @mgid's IP group.  Caller holds rtnl. */
static int vhca_mcast_member(struct vhca_dev *vdev, const union ib_gid *mgid,
			     bool join)
{
	const struct in6_addr *a6 = (const struct in6_addr *)mgid->raw;
	struct in_device *in_dev;

	if (ipv6_addr_v4mapped(a6)) {
		in_dev = __in_dev_get_rtnl(vdev->ndev);
		if (!in_dev)
			return join ? -ENODEV : 0;
		if (join)
			ip_mc_inc_group(in_dev, a6->s6_addr32[3]);
		else
			ip_mc_dec_group(in_dev, a6->s6_addr32[3]);
		return 0;
	}
	if (!IS_ENABLED(CONFIG_IPV6))
		return join ? -EAFNOSUPPORT : 0;
	if (join)
		return ipv6_dev_mc_inc(vdev->ndev, a6);
	ipv6_dev_mc_dec(vdev->ndev, a6);
	return 0;
}

/* A group's last QP is gone: leave it.  Caller holds rtnl, mcast_lock. */
static void vhca_mcast_free(struct vhca_dev *vdev, struct vhca_mcast *g)
{
	vhca_mcast_member(vdev, &g->mgid, false);
	list_del_rcu(&g->list);
	vdev->nr_mcast--;
	kfree_rcu(g, rcu);
}

static bool vhca_mcast_empty(const struct vhca_mcast *g)
{
	unsigned int i;

	for (i = 0; i < VHCA_MAX_MCAST_QP; i++)
		if (g->qp[i])
			return false;
	return true;
}

/*
 * ib_attach_mcast() has checked that @ibqp is UD and @gid multicast; the
 * LID means nothing on RoCE.
 */
static int vhca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct vhca_dev *vdev = to_vdev(ibqp->device);
	struct vhca_qp *qp = to_vqp(ibqp);
	struct vhca_mcast *g;
	int err = 0, free = -1, i;

	rtnl_lock();
	mutex_lock(&vdev->mcast_lock);
	g = vhca_mcast_find(vdev, gid);
	if (!g) {
		err = -ENOMEM;
		if (vdev->nr_mcast >= VHCA_MAX_MCAST_GRP -
				      (ibqp->uobject ? VHCA_KERNEL_MCAST : 0))
			goto out;
		g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);
		if (!g)
			goto out;
		g->mgid = *gid;
		err = vhca_mcast_member(vdev, gid, true);
		if (err) {
			kfree(g);
			goto out;
		}
		list_add_rcu(&g->list, &vdev->mcasts);
		vdev->nr_mcast++;
	}
	for (i = VHCA_MAX_MCAST_QP - 1; i >= 0; i--) {
		if (g->qp[i] == qp)
			goto out;	/* attached already: nothing to do */
		if (!g->qp[i])
			free = i;
	}
	if (free < 0) {
		err = -ENOMEM;
		goto out;
	}
	WRITE_ONCE(g->qp[free], qp);
	qp->nr_mcast++;
out:
	mutex_unlock(&vdev->mcast_lock);
	rtnl_unlock();
	return err;
}

static int vhca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct vhca_dev *vdev = to_vdev(ibqp->device);
	struct vhca_qp *qp = to_vqp(ibqp);
	struct vhca_mcast *g;
	int err = -EINVAL, i;

	rtnl_lock();
	mutex_lock(&vdev->mcast_lock);
	g = vhca_mcast_find(vdev, gid);
	for (i = 0; g && i < VHCA_MAX_MCAST_QP; i++) {
		if (g->qp[i] != qp)
			continue;
		WRITE_ONCE(g->qp[i], NULL);
		qp->nr_mcast--;
		if (vhca_mcast_empty(g))
			vhca_mcast_free(vdev, g);
		err = 0;
		break;
	}
	mutex_unlock(&vdev->mcast_lock);
	rtnl_unlock();
	return err;
}

/**
 * vhca_mcast_qp_gone() - take a QP being destroyed out of its groups
 * @qp: the QP, before the grace period that ends its readers
 *
 * uverbs detaches a process's QPs itself; this is for kernel users that
 * did not.  A group left empty stays, and keeps its membership, until the
 * device goes: rtnl is not to be taken here.
 */
void vhca_mcast_qp_gone(struct vhca_qp *qp)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_mcast *g;
	unsigned int i;

	if (!qp->nr_mcast)
		return;
	mutex_lock(&vdev->mcast_lock);
	list_for_each_entry(g, &vdev->mcasts, list)
		for (i = 0; i < VHCA_MAX_MCAST_QP; i++)
			if (g->qp[i] == qp)
				WRITE_ONCE(g->qp[i], NULL);
	qp->nr_mcast = 0;
	mutex_unlock(&vdev->mcast_lock);
}

/**
 * vhca_mcast_dev_gone() - leave every group of a device going away
 * @vdev: the device, with no QP left
 */
void vhca_mcast_dev_gone(struct vhca_dev *vdev)
{
	struct vhca_mcast *g, *n;

	rtnl_lock();
	mutex_lock(&vdev->mcast_lock);
	list_for_each_entry_safe(g, n, &vdev->mcasts, list)
		vhca_mcast_free(vdev, g);
	mutex_unlock(&vdev->mcast_lock);
	rtnl_unlock();
}

/**
 * vhca_mcast_qps() - the QPs of a device attached to a group
 * @vdev: the device
 * @mgid: the group's GID (an IPv4 group mapped)
 * @qps: where they go, VHCA_MAX_MCAST_QP at most
 *
 * Under rcu_read_lock(), which keeps each QP valid until it is dropped; a
 * QP attached or detached meanwhile may be seen either way.
 *
 * Return: how many were put in @qps.
 */
unsigned int vhca_mcast_qps(struct vhca_dev *vdev, const union ib_gid *mgid,
			    struct vhca_qp **qps)
{
	struct vhca_mcast *g = vhca_mcast_find(vdev, mgid);
	unsigned int i, n = 0;
	struct vhca_qp *qp;

	for (i = 0; g && i < VHCA_MAX_MCAST_QP; i++) {
		qp = READ_ONCE(g->qp[i]);
		if (qp)
			qps[n++] = qp;
	}
	return n;
}

/**
 * vhca_mcast_joined() - whether QPs of a device are attached to a group
 * @vdev: the device
 * @mgid: the group's GID (an IPv4 group mapped)
 *
 * Under rcu_read_lock(); a group being joined or left meanwhile may be
 * seen either way.
 *
 * Return: true if the device has the group.
 */
bool vhca_mcast_joined(struct vhca_dev *vdev, const union ib_gid *mgid)
{
	return vhca_mcast_find(vdev, mgid);
}

const struct ib_device_ops vhca_mcast_ops = {
	.attach_mcast = vhca_attach_mcast,
	.detach_mcast = vhca_detach_mcast,
};
