// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What arrives from the wire: RoCEv2 taken before the IP stack (steering)
 * or from the UDP 4791 sockets, checked (lengths, ICRC, BTH) and parsed,
 * then handed on by what it is: a UD datagram to the engine, a UC or RC
 * request to the responder (vhca_resp.c), an RC response or a CNP to the
 * requester (vhca_req.c).  Nothing a packet says is used before it is
 * bounded here or there.
 */
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/udp.h>

#include "vhca_wire.h"

/*
 * A UD datagram for @vdev: everything after the UDP header is in the
 * linear part and the ICRC has been checked.  Returns false to drop it.
 */
static bool vhca_recv_ud(struct vhca_dev *vdev, struct sk_buff *skb,
			 const struct vhca_bth *bth, u32 pkt)
{
	const struct vhca_deth *deth = (const void *)(bth + 1);
	struct vhca_ud_msg m = {};
	u32 hlen;

	if (!vhca_pkt_bounds(skb, bth, pkt, &hlen, &m.len))
		return false;
	m.h.has_imm = pkt & VHCA_PKT_IMM;
	m.h.dqpn = ntohl(bth->qpn) & VHCA_BTH_QPN_MASK;
	m.h.psn = ntohl(bth->apsn) & VHCA_BTH_PSN_MASK;
	m.h.se = bth->flags & VHCA_BTH_SE;
	m.h.qkey = ntohl(deth->qkey);
	m.h.sqpn = ntohl(deth->sqp) & VHCA_BTH_QPN_MASK;
	if (m.h.has_imm)
		memcpy(&m.h.imm, deth + 1, 4);
	m.data = skb->data + hlen;
	m.vlan = is_vlan_dev(skb->dev) ? vlan_dev_vlan_id(skb->dev) :
					 VHCA_NO_VLAN;

	if (skb->protocol == htons(ETH_P_IP)) {
		m.net = RDMA_NETWORK_IPV4;
		memcpy(m.grh + 20, ip_hdr(skb), sizeof(struct iphdr));
	} else {
		m.net = RDMA_NETWORK_IPV6;
		memcpy(m.grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	}
	vhca_ud_from_wire(vdev, &m);
	return true;
}

/*
 * A UC, RC or XRC request for @vdev, laid out like vhca_recv_ud()'s: its
 * extension headers in the IBA's order, XRCETH, FETH, RETH or AtomicETH,
 * then ImmDt or IETH.  Returns false to drop it as malformed.
 */
static bool vhca_recv_req(struct vhca_dev *vdev, struct sk_buff *skb,
			  const struct vhca_bth *bth, u32 pkt, bool ce)
{
	const u8 *p = (const u8 *)(bth + 1);
	struct vhca_resp_msg m = {};
	u32 hlen;

	if (!vhca_pkt_bounds(skb, bth, pkt, &hlen, &m.len))
		return false;
	m.op = bth->opcode & ~VHCA_OP_CLASS_MASK;
	m.flags = pkt;
	m.xrc = pkt & VHCA_PKT_XRCETH;
	m.rc = m.xrc || (bth->opcode & VHCA_OP_CLASS_MASK) == VHCA_OP_RC;
	if (m.xrc) {
		m.xrcsrq = get_unaligned_be32(p) & VHCA_XRCETH_SRQ_MASK;
		p += sizeof(__be32);
	}
	if (pkt & VHCA_PKT_FETH) {
		m.feth = get_unaligned_be32(p);
		p += sizeof(__be32);
	}
	if (pkt & VHCA_PKT_RETH) {
		const struct vhca_reth *reth = (const void *)p;

		m.va = get_unaligned_be64(&reth->va);
		m.rkey = ntohl(reth->rkey);
		m.dmalen = ntohl(reth->dmalen);
		p += sizeof(*reth);
	}
	if (pkt & VHCA_PKT_ATMETH) {
		const struct vhca_atomic_eth *a = (const void *)p;

		m.va = get_unaligned_be64(&a->va);
		m.rkey = ntohl(a->rkey);
		m.swap = get_unaligned_be64(&a->swap_add);
		m.compare = get_unaligned_be64(&a->compare);
		if (m.op == VHCA_OP_FETCH_ADD)
			m.compare = m.swap;	/* the addend */
	}
	if (pkt & (VHCA_PKT_IMM | VHCA_PKT_INV))
		memcpy(&m.imm, p, 4);
	m.dqpn = ntohl(bth->qpn) & VHCA_BTH_QPN_MASK;
	m.psn = ntohl(bth->apsn) & VHCA_BTH_PSN_MASK;
	m.ackreq = ntohl(bth->apsn) & VHCA_BTH_ACKREQ;
	m.se = bth->flags & VHCA_BTH_SE;
	m.ce = ce;
	m.data = skb->data + hlen;
	m.skb = skb;
	vhca_resp_recv(vdev, &m);	/* which counts it, for its QP */
	return true;
}

/*
 * A RoCEv2 packet that arrived on @vdev's netdev, from the UDP socket or
 * the steering below: its data starts at the UDP header, whose length and
 * checksum are checked, and its network header is set.  Consumed.
 * Softirq, under rcu_read_lock().  Anything malformed or failing its
 * ICRC is dropped and counted, and so is an opcode vhca does not have.
 */
static void vhca_recv_roce(struct vhca_dev *vdev, struct sk_buff *skb)
{
	u32 min = sizeof(struct udphdr) + sizeof(struct vhca_bth) +
		  VHCA_ICRC_SIZE;
	const struct vhca_bth *bth;
	u32 pkt;
	u32 l3_len, icrc;
	bool ok = false, ce;

	if (skb->len < min || skb_linearize(skb) ||
	    (skb->protocol == htons(ETH_P_IP) && ip_hdr(skb)->ihl != 5)) {
		/* too short, or IP options, which RoCEv2 does not have */
		vhca_count(vdev, VHCA_CNT_RCVD_BAD_HDR);
		goto out;
	}
	l3_len = skb_tail_pointer(skb) - skb_network_header(skb) -
		 VHCA_ICRC_SIZE;
	icrc = get_unaligned_le32(skb_tail_pointer(skb) - VHCA_ICRC_SIZE);
	bth = (const struct vhca_bth *)(skb->data + sizeof(struct udphdr));
	/* a FLUSH from rxe carries rxe's ICRC (vhca_icrc_rxe()) */
	if (icrc != vhca_icrc(skb_network_header(skb), l3_len) &&
	    (bth->opcode != (VHCA_OP_RC | VHCA_OP_FLUSH) ||
	     icrc != vhca_icrc_rxe(skb_network_header(skb), l3_len))) {
		vhca_count(vdev, VHCA_CNT_RCVD_BAD_ICRC);
		goto out;
	}
	ce = INET_ECN_is_ce(skb->protocol == htons(ETH_P_IP) ?
			    ip_hdr(skb)->tos : ipv6_get_dsfield(ipv6_hdr(skb)));
	if (bth->flags & VHCA_BTH_TVER_MASK ||
	    (ntohs(bth->pkey) & 0x7fff) != 0x7fff) {
		vhca_count(vdev, VHCA_CNT_RCVD_BAD_HDR);
		goto out;
	}
	pkt = vhca_pkt_ops[bth->opcode];
	if (!pkt) {
		/* reserved, or not valid for the class */
		vhca_count(vdev, VHCA_CNT_RCVD_UNSUPPORTED);
		goto out;
	}
	if (pkt & VHCA_PKT_RESP) {
		/* the requester's work takes the skb */
		if (vhca_comp_response(vdev, skb, bth, pkt, ce))
			return;
		goto out;
	}
	if (pkt & VHCA_PKT_DETH)
		ok = vhca_recv_ud(vdev, skb, bth, pkt);
	else if (pkt & VHCA_PKT_CNP)
		ok = vhca_comp_cnp(vdev, skb, bth);
	else
		ok = vhca_recv_req(vdev, skb, bth, pkt, ce);
	if (!ok)
		vhca_count(vdev, VHCA_CNT_RCVD_BAD_HDR);
out:
	if (ok)
		consume_skb(skb);
	else
		kfree_skb(skb);
}

/*
 * udp_tunnel's encap_rcv for port 4791: every datagram is ours to consume
 * (return 0).  Called with rcu_read_lock() held and bottom halves off.
 * The UDP layer has checked the lengths and the checksum.
 */
int vhca_recv_udp(struct sock *sk, struct sk_buff *skb)
{
	struct vhca_dev *vdev = vhca_dev_by_netdev_rcu(skb->dev);

	if (vdev)
		vhca_recv_roce(vdev, skb);
	else
		kfree_skb(skb);	/* not a vhca netdev: nobody to count it */
	return 0;
}

/*
 * Steering.  A RoCE NIC hands what arrives for UDP port 4791 of its own
 * addresses, and of the multicast groups its QPs are attached to, to its
 * RDMA engine; the host's IP stack never sees it.  vhca does the same with
 * an rx_handler on its netdev: a packet of its wire is checked as the IP
 * and UDP layers would for local delivery and goes straight to
 * vhca_recv_roce().  Routing, netfilter and the socket lookup are not
 * consulted for it, as for a NIC's RoCE traffic; packet taps (tcpdump)
 * still see it.  Anything else, or anything in doubt, is passed on to the
 * stack as it came.
 *
 * A steered device needs no UDP socket, so it leaves port 4791 of its
 * namespace free: rdma_rxe, which binds it when it loads, works beside it
 * on other netdevs.  A device that is not steered (the module parameter
 * steer=0, or a netdev whose rx_handler another driver holds: a bridge
 * port, a bond member) receives through the port's socket instead, and
 * cannot be made while another stack holds it.
 *
 * The VLANs of a steered netdev are steered as well: the 802.1Q layer
 * matches a tagged frame's VLAN id to its VLAN device and hands it over
 * untagged before any rx_handler runs, so vhca's handler sits on each
 * VLAN device too (vhca_recv_vlan_event() follows them) and checks the
 * VLAN's own addresses.  A frame tagged for a VLAN this host has no
 * device for is left to the stack, which drops it: vhca does not answer
 * for a VLAN it is not on.  Through the socket, a VLAN's packet is its
 * real device's (vhca_recv_udp()).
 */

/*
 * Steering takes RoCEv2 past netfilter, as a RoCE NIC's engine does: a
 * host firewall rule on UDP port 4791 does not apply to it.  An
 * administrator whose rules must see it turns steering off; a device then
 * receives through its UDP socket, after routing and netfilter.  Read when
 * a link is added.
 */
static bool vhca_steer_on = true;
module_param_named(steer, vhca_steer_on, bool, 0644);
MODULE_PARM_DESC(steer,
		 "take RoCEv2 before the IP stack, past netfilter (default: on; read at rdma link add)");

/*
 * Whether a datagram to @mgid (on the wire as @pkt_type) is for @vdev: a
 * group its QPs are attached to, which the netdev took as multicast, or
 * which came back through IP's multicast loopback from this host.
 */
static bool vhca_steer_group(struct vhca_dev *vdev, const union ib_gid *mgid,
			     u8 pkt_type)
{
	return (pkt_type == PACKET_MULTICAST || pkt_type == PACKET_LOOPBACK) &&
	       vhca_mcast_joined(vdev, mgid);
}

/*
 * The length of @skb's IPv4 packet if it is a datagram to UDP port 4791
 * of an address of its netdev, or of a group of @vdev, else 0.  Only looks.
 */
static u32 vhca_steer_len4(struct vhca_dev *vdev, const struct sk_buff *skb)
{
	struct {
		struct iphdr ip;
		struct udphdr udp;
	} _h;
	const struct in_ifaddr *ifa;
	const struct in_device *in_dev;
	const typeof(_h) *h;
	union ib_gid mgid;
	u32 len;

	h = skb_header_pointer(skb, 0, sizeof(*h), &_h);
	if (!h || h->ip.version != 4 || h->ip.ihl != 5 ||
	    h->ip.protocol != IPPROTO_UDP || ip_is_fragment(&h->ip) ||
	    h->udp.dest != htons(VHCA_ROCE_UDP_PORT) ||
	    ip_fast_csum(&h->ip, h->ip.ihl))
		return 0;
	len = ntohs(h->ip.tot_len);
	if (len > skb->len || len < sizeof(*h) ||
	    ipv4_is_multicast(h->ip.saddr) || ipv4_is_lbcast(h->ip.saddr) ||
	    ipv4_is_zeronet(h->ip.saddr) || ipv4_is_loopback(h->ip.saddr))
		return 0;
	if (ipv4_is_multicast(h->ip.daddr)) {
		ipv6_addr_set_v4mapped(h->ip.daddr, (struct in6_addr *)mgid.raw);
		return vhca_steer_group(vdev, &mgid, skb->pkt_type) ? len : 0;
	}
	in_dev = __in_dev_get_rcu(skb->dev);
	if (skb->pkt_type != PACKET_HOST || !in_dev)
		return 0;
	in_dev_for_each_ifa_rcu(ifa, in_dev)
		if (ifa->ifa_local == h->ip.daddr)
			return len;
	return 0;
}

/* The same for IPv6: no extension header, an address of the netdev. */
static u32 vhca_steer_len6(struct vhca_dev *vdev, const struct sk_buff *skb)
{
	struct {
		struct ipv6hdr ip;
		struct udphdr udp;
	} _h;
	const typeof(_h) *h;
	union ib_gid mgid;
	u32 len;

	if (!IS_ENABLED(CONFIG_IPV6))
		return 0;
	h = skb_header_pointer(skb, 0, sizeof(*h), &_h);
	if (!h || h->ip.version != 6 || h->ip.nexthdr != IPPROTO_UDP ||
	    h->udp.dest != htons(VHCA_ROCE_UDP_PORT) ||
	    ipv6_addr_is_multicast(&h->ip.saddr) ||
	    ipv6_addr_loopback(&h->ip.saddr))
		return 0;
	len = sizeof(h->ip) + ntohs(h->ip.payload_len);
	if (len > skb->len || len < sizeof(*h))
		return 0;
	if (ipv6_addr_is_multicast(&h->ip.daddr)) {
		memcpy(mgid.raw, &h->ip.daddr, sizeof(mgid.raw));
		return vhca_steer_group(vdev, &mgid, skb->pkt_type) ? len : 0;
	}
	if (skb->pkt_type != PACKET_HOST ||
	    !ipv6_chk_addr(dev_net(skb->dev), &h->ip.daddr, skb->dev, 1))
		return 0;
	return len;
}

static rx_handler_result_t vhca_rx_handler(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct vhca_dev *vdev = rcu_dereference(skb->dev->rx_handler_data);
	struct udphdr *uh;
	u32 len, nhlen;
	bool v4;

	if (skb_is_gso(skb) ||
	    (skb_vlan_tag_present(skb) && skb_vlan_tag_get_id(skb)))
		return RX_HANDLER_PASS;	/* tagged for a VLAN not here */
	v4 = skb->protocol == htons(ETH_P_IP);
	if (v4)
		len = vhca_steer_len4(vdev, skb);
	else if (skb->protocol == htons(ETH_P_IPV6))
		len = vhca_steer_len6(vdev, skb);
	else
		return RX_HANDLER_PASS;
	if (!len)
		return RX_HANDLER_PASS;

	/* ours from here on; a packet tap may hold it too */
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return RX_HANDLER_CONSUMED;
	nhlen = v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	if (pskb_trim_rcsum(skb, len) ||
	    !pskb_may_pull(skb, nhlen + sizeof(*uh)))
		goto drop;
	skb_pull_rcsum(skb, nhlen);
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	/* as the UDP layer: a shorter UDP length trims, a longer is bad */
	len = ntohs(uh->len);
	if (len < sizeof(*uh) || len > skb->len || pskb_trim_rcsum(skb, len))
		goto bad;
	/* a zero checksum is taken, as by the socket (the ICRC covers all) */
	if (skb_checksum_validate_zero_check(skb, IPPROTO_UDP, uh->check,
					     (v4 ? inet_compute_pseudo :
						   ip6_compute_pseudo)))
		goto bad;
	vhca_recv_roce(vdev, skb);
	return RX_HANDLER_CONSUMED;
bad:
	vhca_count(vdev, VHCA_CNT_RCVD_BAD_HDR);
drop:
	kfree_skb(skb);
	return RX_HANDLER_CONSUMED;
}

/*
 * A VLAN device above a steered netdev, which vhca's rx_handler is on.
 * Its reference is dropped when the VLAN unregisters or the device stops
 * steering, whichever comes first.
 */
struct vhca_steered_vlan {
	struct list_head list;		/* on vdev->steered_vlans; rtnl */
	struct net_device *dev;
	netdevice_tracker tracker;
};

/*
 * vhca's handler on a VLAN device of @vdev's netdev, if it is free.  No
 * sleeping: it runs in vhca_recv_steer_vlans()' walk, under RCU.
 */
static void vhca_recv_steer_vlan(struct vhca_dev *vdev, struct net_device *dev)
{
	struct vhca_steered_vlan *v;

	v = kzalloc(sizeof(*v), GFP_ATOMIC);
	if (v && !netdev_rx_handler_register(dev, vhca_rx_handler, vdev)) {
		v->dev = dev;
		netdev_hold(dev, &v->tracker, GFP_ATOMIC);
		list_add(&v->list, &vdev->steered_vlans);
		return;
	}
	kfree(v);
	netdev_info(dev,
		    "vhca: cannot steer this VLAN of %s (no memory, or its rx_handler is taken): its RoCEv2 is not received\n",
		    netdev_name(vdev->ndev));
}

static void vhca_recv_unsteer_vlan(struct vhca_steered_vlan *v)
{
	netdev_rx_handler_unregister(v->dev);
	netdev_put(v->dev, &v->tracker);
	list_del(&v->list);
	kfree(v);
}

/*
 * Each VLAN device whose real device is @priv's netdev, QinQ's included:
 * not one above another kind of upper (a VLAN of a macvlan).  rtnl
 * keeps the upper lists still.
 */
static int vhca_recv_upper(struct net_device *dev,
			   struct netdev_nested_priv *priv)
{
	struct vhca_dev *vdev = priv->data;

	if (is_vlan_dev(dev) && vlan_dev_real_dev(dev) == vdev->ndev)
		vhca_recv_steer_vlan(vdev, dev);
	return 0;
}

static void vhca_recv_steer_vlans(struct vhca_dev *vdev)
{
	struct netdev_nested_priv priv = { .data = vdev };

	rcu_read_lock();
	netdev_walk_all_upper_dev_rcu(vdev->ndev, vhca_recv_upper, &priv);
	rcu_read_unlock();
}

/**
 * vhca_recv_steer() - take the device's RoCEv2 packets before the IP stack
 * @vdev: a listed device whose netdev is registered
 *
 * Not with the module parameter steer=0, nor on a netdev whose rx_handler
 * is taken: the device then needs its namespace's UDP socket.  Packets
 * may arrive before the device is registered, as through the socket: they
 * find no QP.  The VLANs above the netdev are steered with it.  Caller
 * holds rtnl.
 *
 * Return: whether the device is steered.
 */
bool vhca_recv_steer(struct vhca_dev *vdev)
{
	int err;

	ASSERT_RTNL();
	if (!READ_ONCE(vhca_steer_on)) {
		netdev_info(vdev->ndev,
			    "vhca: steering off: RoCEv2 goes through the IP stack and netfilter\n");
		return false;
	}
	err = netdev_rx_handler_register(vdev->ndev, vhca_rx_handler, vdev);
	vdev->steered = !err;
	if (err) {
		netdev_info(vdev->ndev,
			    "vhca: the netdev has an rx_handler already: RoCEv2 goes through the IP stack (%d)\n",
			    err);
		return false;
	}
	vhca_recv_steer_vlans(vdev);
	return true;
}

/**
 * vhca_recv_unsteer() - stop vhca_recv_steer()
 * @vdev: the device
 *
 * When the function returns, no packet is in vhca_rx_handler(), and none
 * will find @vdev there: it may be freed.  Caller holds rtnl.
 */
void vhca_recv_unsteer(struct vhca_dev *vdev)
{
	struct vhca_steered_vlan *v, *next;

	ASSERT_RTNL();
	list_for_each_entry_safe(v, next, &vdev->steered_vlans, list)
		vhca_recv_unsteer_vlan(v);
	if (vdev->steered)
		netdev_rx_handler_unregister(vdev->ndev);
	vdev->steered = false;
}

/**
 * vhca_recv_vlan_event() - follow the VLAN devices above steered netdevs
 * @dev: a netdev that is not a vhca device's own
 * @event: what the netdev notifier says of it
 *
 * A VLAN device registered (or moved into a namespace) above a steered
 * netdev is steered; one unregistered (or moved out) is let go.  Caller
 * holds rtnl.
 */
void vhca_recv_vlan_event(struct net_device *dev, unsigned long event)
{
	struct vhca_steered_vlan *v;
	struct vhca_dev *vdev;

	ASSERT_RTNL();
	if (!is_vlan_dev(dev))
		return;
	if (event == NETDEV_UNREGISTER) {
		if (!vhca_recv_steers(dev))
			return;
		vdev = rtnl_dereference(dev->rx_handler_data);
		list_for_each_entry(v, &vdev->steered_vlans, list)
			if (v->dev == dev) {
				vhca_recv_unsteer_vlan(v);
				return;
			}
		return;
	}
	if (event != NETDEV_REGISTER)
		return;
	rcu_read_lock();
	vdev = vhca_dev_by_netdev_rcu(dev);
	/* whether it is steered changes only under rtnl, which is held */
	if (vdev && !vdev->steered)
		vdev = NULL;
	rcu_read_unlock();
	if (vdev)
		vhca_recv_steer_vlan(vdev, dev);
}

/**
 * vhca_recv_steers() - whether vhca's rx_handler is on a netdev
 * @dev: the netdev
 *
 * Caller holds rtnl.
 *
 * Return: true for a steered device's netdev and its VLANs.
 */
bool vhca_recv_steers(const struct net_device *dev)
{
	ASSERT_RTNL();
	return rcu_access_pointer(dev->rx_handler) == vhca_rx_handler;
}
