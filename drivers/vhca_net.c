// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The netdev side of vhca: the port follows its netdev's state, and a device
 * goes away with its netdev.  RoCEv2 on that netdev: the UDP 4791 sockets
 * of each network namespace that holds a vhca netdev, and building,
 * routing and sending packets, with a QP's count of those in the netdev.
 * What arrives is taken and parsed in vhca_recv.c.
 */
#include <linux/netdevice.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "vhca_wire.h"

/*
 * RoCEv2 on the wire for devices that are not steered (vhca_recv.c says
 * when): one UDP socket per address family, bound to port 4791, exists in
 * each network namespace that holds the netdev of such a device, while
 * one does: packets arrive in the namespace of the netdev they arrive on.
 * Only one RoCE stack of a namespace can own that port: when another
 * (rdma_rxe, which on Linux 6.12 binds it in the initial namespace when it
 * loads) has it, such a device cannot be made.  Steered devices need no
 * socket and leave the port to whoever wants it.
 *
 * A namespace can be dismantled while a device still counts on it: its
 * physical netdevs move back to the initial namespace, and the devices on
 * them are unregistered from a work item, later.  The namespace's exit
 * releases the sockets then, and the last device's put frees what is left
 * without looking at the namespace again.
 */
struct vhca_netsock {
	struct list_head list;	/* on vhca_netsocks until its net exits */
	struct net *net;	/* no reference: not used once off the list */
	struct socket *sock4;
	struct socket *sock6;
	unsigned int users;
};

static DEFINE_MUTEX(vhca_sock_lock);	/* vhca_netsocks and their sockets */
static LIST_HEAD(vhca_netsocks);
/* what takes the sockets' datagrams: the receive path, which is above us */
static int (*vhca_sock_rcv)(struct sock *sk, struct sk_buff *skb);

static struct socket *vhca_sock_open(struct net *net, int family)
{
	struct udp_port_cfg cfg = {
		.family = family,
		.local_udp_port = htons(VHCA_ROCE_UDP_PORT),
	};
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = vhca_sock_rcv,
	};
	struct socket *sock;

	if (family == AF_INET6) {
		cfg.ipv6_v6only = 1;
		/* peers may send a zero UDP checksum: the ICRC covers it */
		cfg.use_udp6_rx_checksums = false;
	}
	if (udp_sock_create(net, &cfg, &sock))
		return NULL;
	vhca_udp_tunnel_setup(net, sock, &tcfg);
	return sock;
}

static void vhca_netsock_release(struct vhca_netsock *ns)
{
	if (ns->sock4)
		vhca_udp_tunnel_release(ns->sock4);
	if (ns->sock6)
		vhca_udp_tunnel_release(ns->sock6);
	ns->sock4 = NULL;
	ns->sock6 = NULL;
}

/* The sockets of @net, if it has them.  vhca_sock_lock held. */
static struct vhca_netsock *vhca_netsock_find(struct net *net)
{
	struct vhca_netsock *ns;

	list_for_each_entry(ns, &vhca_netsocks, list)
		if (net_eq(ns->net, net))
			return ns;
	return NULL;
}

/* The sockets of @net, opened for its first device.  vhca_sock_lock held. */
static struct vhca_netsock *vhca_netsock_get(struct net *net)
{
	struct vhca_netsock *ns = vhca_netsock_find(net);

	if (ns) {
		ns->users++;
		return ns;
	}
	ns = kzalloc(sizeof(*ns), GFP_KERNEL);
	if (!ns)
		return NULL;
	ns->users = 1;
	INIT_LIST_HEAD(&ns->list);
	/*
	 * A namespace on its way out gets no sockets: its exit might have
	 * run already, and nothing would release them.  While the reference
	 * is held its exit cannot start, and after that it finds them.
	 */
	if (!maybe_get_net(net))
		return ns;
	ns->net = net;
	ns->sock4 = vhca_sock_open(net, AF_INET);
	if (IS_ENABLED(CONFIG_IPV6))
		ns->sock6 = vhca_sock_open(net, AF_INET6);
	list_add(&ns->list, &vhca_netsocks);
	put_net(net);
	return ns;
}

/* The last user of @ns releases its port.  vhca_sock_lock held. */
static void vhca_netsock_put(struct vhca_netsock *ns)
{
	if (--ns->users)
		return;
	vhca_netsock_release(ns);
	list_del(&ns->list);	/* initialised: fine if already off */
	kfree(ns);
}

/**
 * vhca_net_get() - a device that is not steered needs the UDP sockets
 * @vdev: the device, listed, not registered yet
 *
 * Process context.  The IPv4 socket is a must: without it the device could
 * only reach the vhca devices of this host, a device that looks whole and
 * is not.  Failing to open the IPv6 one leaves IPv6 GIDs unreachable from
 * the wire, as a host without IPv6 has none.
 *
 * Return: 0, -ENOMEM, or -EADDRINUSE if another stack has the port.
 */
int vhca_net_get(struct vhca_dev *vdev)
{
	struct vhca_netsock *ns;
	int err = 0;

	mutex_lock(&vhca_sock_lock);
	ns = vhca_netsock_get(dev_net(vdev->ndev));
	if (!ns) {
		err = -ENOMEM;
	} else if (!ns->sock4) {
		vhca_netsock_put(ns);
		netdev_warn(vdev->ndev,
			    "vhca: not steered, and UDP port %d of its namespace is in use (by rdma_rxe?): no device\n",
			    VHCA_ROCE_UDP_PORT);
		err = -EADDRINUSE;
	} else {
		vdev->netsock = ns;
	}
	mutex_unlock(&vhca_sock_lock);
	return err;
}

/**
 * vhca_net_put() - a vhca device has gone
 * @vdev: the device, off the list and out of the receive path
 *
 * The last device of a namespace releases its port.  Process context.
 */
void vhca_net_put(struct vhca_dev *vdev)
{
	struct vhca_netsock *ns = vdev->netsock;

	if (!ns)
		return;
	vdev->netsock = NULL;
	mutex_lock(&vhca_sock_lock);
	vhca_netsock_put(ns);
	mutex_unlock(&vhca_sock_lock);
}

/* A namespace is dismantled: its sockets go, whoever still counts on them. */
static void __net_exit vhca_net_ns_exit(struct net *net)
{
	struct vhca_netsock *ns;

	mutex_lock(&vhca_sock_lock);
	ns = vhca_netsock_find(net);
	if (ns) {
		vhca_netsock_release(ns);
		list_del_init(&ns->list);
		ns->net = NULL;
	}
	mutex_unlock(&vhca_sock_lock);
}

static struct pernet_operations vhca_pernet_ops = {
	.exit = vhca_net_ns_exit,
};

/*
 * How many more of @qp's packets may go to the netdev, of @max.  If none,
 * *@wait tells their destructors (vhca_req_uc_free(), vhca_resp_rd_free()) to
 * kick whoever waits: they decrement, then look at *@wait; this sets it,
 * then looks at the count, so one of the two sees the other.
 */
u32 vhca_net_room(struct vhca_qp *qp, bool *wait, int max)
{
	int n = atomic_read(&qp->net_inflight);

	if (n < max)
		return max - n;
	WRITE_ONCE(*wait, true);
	smp_mb();	/* pairs with atomic_dec_return() in the destructors */
	n = atomic_read(&qp->net_inflight);
	return n < max ? max - n : 0;
}

/**
 * vhca_net_drain() - wait for a QP's packets to leave the netdev
 * @qp: a QP being destroyed, which sends nothing any more
 *
 * Their destructor refers to it.  The qdisc frees what it holds when the
 * netdev goes down, so the wait ends.
 */
void vhca_net_drain(struct vhca_qp *qp)
{
	wait_var_event(&qp->net_inflight, !atomic_read(&qp->net_inflight));
	synchronize_rcu();	/* the destructors that saw it fall are done */
}

/**
 * vhca_net_alloc() - start a packet for the wire
 * @vdev: the sending device
 * @h: its transport fields
 * @len: payload bytes, which the caller writes at *@payload
 * @payload: where they go
 *
 * The skb has room in front for UDP, IP and the link layer, and holds the
 * BTH, then XRCETH, DETH, FETH, RETH and ImmDt as @h asks (in the IBA's
 * order), the payload, the pad and the ICRC.  Any context.
 *
 * Return: the skb, or NULL if there is no memory (the packet is lost).
 */
struct sk_buff *vhca_net_alloc(struct vhca_dev *vdev,
			       const struct vhca_tx_hdr *h, u32 len,
			       u8 **payload)
{
	u32 pad = -len & 3, head, size;
	struct vhca_bth *bth;
	struct sk_buff *skb;

	head = LL_RESERVED_SPACE(vdev->ndev) + sizeof(struct ipv6hdr) +
	       sizeof(struct udphdr);
	size = sizeof(*bth) + (h->has_xrceth ? sizeof(__be32) : 0) +
	       (h->has_deth ? sizeof(struct vhca_deth) : 0) +
	       (h->has_feth ? sizeof(__be32) : 0) +
	       (h->has_reth ? sizeof(struct vhca_reth) : 0) +
	       (h->has_atomic ? sizeof(struct vhca_atomic_eth) : 0) +
	       (h->has_imm ? 4 : 0) +
	       (h->has_aeth ? sizeof(struct vhca_aeth) : 0) +
	       (h->has_orig ? 8 : 0) + len + pad + VHCA_ICRC_SIZE;
	skb = alloc_skb(head + size, GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, head);
	bth = skb_put(skb, sizeof(*bth));
	bth->opcode = h->opcode;
	bth->flags = (h->se ? VHCA_BTH_SE : 0) | (pad << VHCA_BTH_PAD_SHIFT);
	bth->pkey = htons(IB_DEFAULT_PKEY_FULL);
	bth->qpn = htonl((h->dqpn & VHCA_BTH_QPN_MASK) |
			 (h->becn ? VHCA_BTH_BECN : 0));
	bth->apsn = htonl((h->psn & VHCA_BTH_PSN_MASK) |
			  (h->ackreq ? VHCA_BTH_ACKREQ : 0));
	if (h->has_xrceth)
		put_unaligned_be32(h->xrcsrq & VHCA_XRCETH_SRQ_MASK,
				   skb_put(skb, sizeof(__be32)));
	if (h->has_deth) {
		struct vhca_deth *deth = skb_put(skb, sizeof(*deth));

		deth->qkey = htonl(h->qkey);
		deth->sqp = htonl(h->sqpn & VHCA_BTH_QPN_MASK);
	}
	if (h->has_feth)
		put_unaligned_be32(h->feth, skb_put(skb, sizeof(__be32)));
	if (h->has_reth) {
		struct vhca_reth *reth = skb_put(skb, sizeof(*reth));

		reth->va = cpu_to_be64(h->va);
		reth->rkey = htonl(h->rkey);
		reth->dmalen = htonl(h->dmalen);
	}
	if (h->has_atomic) {
		struct vhca_atomic_eth *a = skb_put(skb, sizeof(*a));

		put_unaligned_be64(h->va, &a->va);
		a->rkey = htonl(h->rkey);
		put_unaligned_be64(h->swap, &a->swap_add);
		put_unaligned_be64(h->compare, &a->compare);
	}
	if (h->has_imm)
		skb_put_data(skb, &h->imm, 4);
	if (h->has_aeth) {
		struct vhca_aeth *aeth = skb_put(skb, sizeof(*aeth));

		aeth->smsn = htonl(h->aeth);
	}
	if (h->has_orig)
		put_unaligned_be64(h->orig, skb_put(skb, 8));
	*payload = skb_put(skb, len);
	skb_put_zero(skb, pad + VHCA_ICRC_SIZE);
	/* the ICRC's slot says which ICRC goes there, until it does */
	if (h->rxe_icrc)
		put_unaligned(VHCA_ICRC_RXE_MARK,
			      (u32 *)(skb_tail_pointer(skb) - VHCA_ICRC_SIZE));
	return skb;
}

/**
 * vhca_bth_set_ackreq() - have a packet not yet sent ask for an ACK
 * @skb: from vhca_net_alloc(), its data still starting at the BTH
 */
void vhca_bth_set_ackreq(struct sk_buff *skb)
{
	struct vhca_bth *bth = (struct vhca_bth *)skb->data;

	bth->apsn |= htonl(VHCA_BTH_ACKREQ);
}

/**
 * vhca_net_on_path() - whether a packet came the way a connected QP's path
 *	says
 * @skb: a packet received, its network header set
 * @av: the QP's AV: its destination GID is the packet's source
 * @sgid: the QP's source GID: the packet's destination
 *
 * A connected QP takes packets from its peer alone, as an HCA checks them
 * against its QP context: a QPN is easy to find or guess, and whoever
 * reaches UDP port 4791 could otherwise write into the QP's receive
 * buffers, or answer for its peer.  Caller holds a lock the AV is
 * written under.
 *
 * Return: true if the IP source and destination are the path's.
 */
bool vhca_net_on_path(const struct sk_buff *skb, const struct vhca_av *av,
		      const union ib_gid *sgid)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *ip = ip_hdr(skb);

		return av->network_type == RDMA_NETWORK_IPV4 &&
		       !memcmp(&ip->saddr, av->dgid + 12, 4) &&
		       !memcmp(&ip->daddr, sgid->raw + 12, 4);
	}
	if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = ipv6_hdr(skb);

		return av->network_type == RDMA_NETWORK_IPV6 &&
		       !memcmp(&ip6->saddr, av->dgid, 16) &&
		       !memcmp(&ip6->daddr, sgid->raw, 16);
	}
	return false;
}

/*
 * The ICRC, into the slot vhca_net_alloc() left: IBA's, or rxe's for a
 * FLUSH whose slot holds VHCA_ICRC_RXE_MARK.
 */
static void vhca_put_icrc(struct sk_buff *skb)
{
	u8 *slot = skb_tail_pointer(skb) - VHCA_ICRC_SIZE;
	u32 len = slot - skb_network_header(skb);
	__le32 icrc;

	if (get_unaligned((u32 *)slot) == VHCA_ICRC_RXE_MARK)
		icrc = cpu_to_le32(vhca_icrc_rxe(skb_network_header(skb), len));
	else
		icrc = cpu_to_le32(vhca_icrc(skb_network_header(skb), len));
	memcpy(slot, &icrc, sizeof(icrc));
}

static struct udphdr *vhca_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *udp;

	udp = skb_push(skb, sizeof(*udp));
	skb_reset_transport_header(skb);
	udp->source = htons(sport);
	udp->dest = htons(VHCA_ROCE_UDP_PORT);
	udp->len = htons(skb->len);
	udp->check = 0;
	return udp;
}

/*
 * What ip_local_out() said of a packet it consumed: a drop on this host
 * (a full queue) is counted.  net_xmit_eval() evaluates its argument
 * twice, so never hand it the call.
 */
static void vhca_net_out(struct vhca_dev *vdev, int ret)
{
	if (net_xmit_eval(ret))
		vhca_count(vdev, VHCA_CNT_SEND_DROPPED);
}

/*
 * Where a packet from the source GID at @index leaves: the GID's netdev,
 * in that netdev's namespace.  The GID of a VLAN, a macvlan or a bridge
 * above the link's netdev is that device's, and so is the way out: a
 * VLAN tags the packet as it passes.  @attr is the GID's attribute if
 * the caller holds it (UD), or NULL to find it by @index, where the GID
 * copied into the QP at modify_qp() (@gid) was.  A GID the core deleted
 * and added again elsewhere in the table, as it does with a bond's on
 * each failover, is found by its value: its address is still this
 * host's, and the QP goes on as an HCA's does, whose table entry lives
 * while a QP refers to it.  Caller holds rcu_read_lock().
 *
 * Return: the netdev, or NULL if no GID of the table has @gid's value.
 */
static struct net_device *vhca_net_out_dev(struct vhca_dev *vdev,
					   const struct ib_gid_attr *attr,
					   u8 index, const union ib_gid *gid)
{
	const struct ib_gid_attr *found = NULL;
	struct net_device *ndev = ERR_PTR(-ENODEV);

	if (!attr) {
		found = rdma_get_gid_attr(&vdev->ibdev, VHCA_PORT, index);
		attr = IS_ERR(found) ? NULL : found;
	}
	if (attr && !memcmp(&attr->gid, gid, sizeof(*gid)))
		ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (!IS_ERR_OR_NULL(found))
		rdma_put_gid_attr(found);
	if (!IS_ERR(ndev))
		return ndev;
	found = rdma_find_gid_by_port(&vdev->ibdev, gid,
				      IB_GID_TYPE_ROCE_UDP_ENCAP, VHCA_PORT,
				      NULL);
	if (IS_ERR(found))
		return NULL;
	ndev = rdma_read_gid_attr_ndev_rcu(found);
	rdma_put_gid_attr(found);
	return IS_ERR(ndev) ? NULL : ndev;
}

/*
 * Each returns 0 with @skb sent (consumed), or an error with it untouched.
 * @dc, a connected QP's, keeps the route from one packet to the next;
 * local BH is disabled around its use, as dst_cache wants.  A route is
 * looked up out of the source GID's netdev (vhca_net_out_dev()); the
 * packet is sent in the namespace of the device the route leaves by.
 */
static int vhca_xmit4(struct vhca_dev *vdev, struct sk_buff *skb,
		      const struct vhca_av *av, const struct ib_gid_attr *attr,
		      const union ib_gid *sgid, u16 sport, u8 tclass,
		      struct dst_cache *dc)
{
	struct flowi4 fl = { .flowi4_proto = IPPROTO_UDP };
	struct net_device *out;
	struct rtable *rt;
	struct iphdr *ip;
	struct net *net;

	memcpy(&fl.daddr, av->dgid + 12, 4);
	memcpy(&fl.saddr, sgid->raw + 12, 4);
	rt = dc ? dst_cache_get_ip4(dc, &fl.saddr) : NULL;
	if (!rt) {
		out = vhca_net_out_dev(vdev, attr, av->sgid_index, sgid);
		if (!out)
			return -ENODEV;
		fl.flowi4_oif = out->ifindex;
		rt = ip_route_output_key(dev_net(out), &fl);
		if (IS_ERR(rt))
			return PTR_ERR(rt);
		if (dc)
			dst_cache_set_ip4(dc, &rt->dst, fl.saddr);
	}
	net = dev_net(rt->dst.dev);
	vhca_push_udp(skb, sport);
	ip = skb_push(skb, sizeof(*ip));
	skb_reset_network_header(skb);
	ip->version = 4;
	ip->ihl = 5;
	ip->tos = tclass;
	ip->tot_len = htons(skb->len);
	ip->frag_off = htons(IP_DF);
	ip->ttl = av->hop_limit ? av->hop_limit : 64;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = fl.saddr;
	ip->daddr = fl.daddr;
	skb->protocol = htons(ETH_P_IP);
	skb_dst_set(skb, &rt->dst);
	ip_select_ident(net, skb, NULL);
	ip_send_check(ip);
	vhca_put_icrc(skb);
	vhca_net_out(vdev, ip_local_out(net, NULL, skb));
	return 0;
}

static int vhca_xmit6(struct vhca_dev *vdev, struct sk_buff *skb,
		      const struct vhca_av *av, const struct ib_gid_attr *attr,
		      const union ib_gid *sgid, u16 sport, u8 tclass,
		      struct dst_cache *dc)
{
	struct flowi6 fl = {
		.flowi6_proto = IPPROTO_UDP,
		.flowlabel = cpu_to_be32(av->flow_label & 0xfffff),
	};
	struct net_device *out;
	struct dst_entry *dst;
	struct ipv6hdr *ip6;
	struct udphdr *udp;

	memcpy(&fl.daddr, av->dgid, 16);
	memcpy(&fl.saddr, sgid->raw, 16);
	dst = dc ? dst_cache_get_ip6(dc, &fl.saddr) : NULL;
	if (!dst) {
		out = vhca_net_out_dev(vdev, attr, av->sgid_index, sgid);
		if (!out)
			return -ENODEV;
		fl.flowi6_oif = out->ifindex;
		dst = ip6_route_output(dev_net(out), NULL, &fl);
		if (dst->error) {
			int err = dst->error;

			dst_release(dst);
			return err;
		}
		if (dc)
			dst_cache_set_ip6(dc, dst, &fl.saddr);
	}
	udp = vhca_push_udp(skb, sport);
	ip6 = skb_push(skb, sizeof(*ip6));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6, tclass, fl.flowlabel);
	ip6->payload_len = udp->len;
	ip6->nexthdr = IPPROTO_UDP;
	ip6->hop_limit = av->hop_limit ? av->hop_limit : 64;
	ip6->saddr = fl.saddr;
	ip6->daddr = fl.daddr;
	skb->protocol = htons(ETH_P_IPV6);
	skb_dst_set(skb, dst);
	/* the ICRC masks the UDP checksum, which covers the ICRC */
	vhca_put_icrc(skb);
	udp->check = csum_ipv6_magic(&ip6->saddr, &ip6->daddr,
				     ntohs(udp->len), IPPROTO_UDP,
				     csum_partial(udp, ntohs(udp->len), 0));
	if (!udp->check)
		udp->check = CSUM_MANGLED_0;
	skb->ip_summed = CHECKSUM_NONE;
	vhca_net_out(vdev, ip6_local_out(dev_net(dst->dev), NULL, skb));
	return 0;
}

/*
 * Finish @skb of @qp from @sgid to @av and send it; consumed either way.
 * @attr: @sgid's attribute if the caller holds it, else NULL.
 * @ect: the packet is ECN-capable (ECT(0)) unless the AV's traffic class
 * sets the ECN field itself.
 *
 * The packet's priority is the one the RDMA CM gives a RoCE path of that
 * traffic class (rt_tos2priority(), as iboe_tos_to_sl() takes it): a
 * VLAN's egress map turns it into the 802.1p priority of the tag, which
 * is the SL the CM chose, and a priority qdisc (mqprio) on the netdev
 * sorts by it.
 */
static void vhca_net_xmit(struct vhca_dev *vdev, struct sk_buff *skb,
			  const struct vhca_av *av,
			  const struct ib_gid_attr *attr,
			  const union ib_gid *sgid, u8 network_type,
			  struct vhca_qp *qp, bool ect, struct dst_cache *dc)
{
	u32 sqpn = qp->ibqp.qp_num;
	u8 tclass = av->traffic_class;
	u16 sport;
	int err;

	skb->priority = rt_tos2priority(tclass);
	if (ect && !(tclass & INET_ECN_MASK))
		tclass |= INET_ECN_ECT_0;
	sport = rdma_get_udp_sport(av->flow_label, sqpn,
				   ntohl(((struct vhca_bth *)skb->data)->qpn) &
				   VHCA_BTH_QPN_MASK);
	/* the GID's netdev is read under RCU; dst_cache wants BH off */
	local_bh_disable();
	rcu_read_lock();
	if (network_type == RDMA_NETWORK_IPV4)
		err = vhca_xmit4(vdev, skb, av, attr, sgid, sport, tclass, dc);
	else
		err = vhca_xmit6(vdev, skb, av, attr, sgid, sport, tclass, dc);
	rcu_read_unlock();
	local_bh_enable();
	if (err) {	/* no route: not sent */
		vhca_count_qp(qp, VHCA_CNT_SEND_NO_ROUTE);
		kfree_skb(skb);
		return;
	}
	vhca_count_qp(qp, VHCA_CNT_SENT_PKTS);
}

/**
 * vhca_net_send() - finish a packet and put it on the wire
 * @vdev: the sending device
 * @skb: from vhca_net_alloc(), payload written; consumed
 * @av: the address vector: destination GID, IP fields
 * @sgid: its source GID's attribute, held by the caller, or an ERR_PTR
 *	if the AV's index names none
 * @qp: the sending QP (its number is the UDP source port's entropy)
 *
 * For UD, whose AV comes with each WQE: the route is looked up for every
 * packet.  Any context.  A datagram that cannot be routed is dropped, as
 * a wire would.
 */
void vhca_net_send(struct vhca_dev *vdev, struct sk_buff *skb,
		   const struct vhca_av *av, const struct ib_gid_attr *sgid,
		   struct vhca_qp *qp)
{
	if (IS_ERR(sgid)) {
		vhca_count_qp(qp, VHCA_CNT_SEND_NO_ROUTE);
		kfree_skb(skb);
		return;
	}
	vhca_net_xmit(vdev, skb, av, sgid, &sgid->gid,
		      rdma_gid_attr_network_type(sgid), qp, false, NULL);
}

/**
 * vhca_net_send_qp() - put a packet of a connected QP on the wire
 * @vdev: the sending device
 * @skb: from vhca_net_alloc(), payload written; consumed
 * @qp: the RC or UC QP, its AV set
 *
 * The source GID and the route are the QP's, taken at modify_qp() and on
 * the first packet: no lock is shared with other QPs.  Any context.
 */
void vhca_net_send_qp(struct vhca_dev *vdev, struct sk_buff *skb,
		      struct vhca_qp *qp)
{
	vhca_net_send_av(vdev, skb, qp, &qp->av, &qp->sgid);
}

/**
 * vhca_net_send_av() - vhca_net_send_qp() with the QP's AV and source GID
 *	as copied under one of its locks
 * @vdev: the sending device
 * @skb: from vhca_net_alloc(), payload written; consumed
 * @qp: the RC or UC QP, for its route cache and QPN
 * @av: its AV
 * @sgid: its source GID
 *
 * RC requests and READ responses are ECN-capable: a queue on the way that
 * would drop them for congestion marks them instead, the receiver answers
 * a mark with a CNP and the sender halves its window (vhca_req.c).  ACKs
 * and CNPs are not, nor is UC, which has no one to slow down.
 */
void vhca_net_send_av(struct vhca_dev *vdev, struct sk_buff *skb,
		      struct vhca_qp *qp, const struct vhca_av *av,
		      const union ib_gid *sgid)
{
	u8 op = ((struct vhca_bth *)skb->data)->opcode;
	u8 rop = op & ~VHCA_OP_CLASS_MASK;
	bool ect = vhca_qpt_rc(qp->ibqp.qp_type) && op != VHCA_OP_CNP &&
		   rop != VHCA_OP_ACK && rop != VHCA_OP_ATOMIC_ACK;

	vhca_net_xmit(vdev, skb, av, NULL, sgid, av->network_type, qp, ect,
		      &qp->dst_cache);
}

/**
 * vhca_net_init() - set up the sockets' side of the wire, at module load
 * @rcv: what takes each datagram the sockets receive (vhca_recv_udp())
 *
 * Return: 0, or the errno of register_pernet_subsys().
 */
int vhca_net_init(int (*rcv)(struct sock *sk, struct sk_buff *skb))
{
	vhca_sock_rcv = rcv;
	return register_pernet_subsys(&vhca_pernet_ops);
}

void vhca_net_exit(void)
{
	unregister_pernet_subsys(&vhca_pernet_ops);
}
