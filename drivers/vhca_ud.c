// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * UD and GSI datagrams: a send WQE to a QP of a vhca device of this host
 * is delivered here with its GRH, one to any other GID goes on the wire
 * as RoCEv2 (vhca_net.c), and those from the wire are delivered to their
 * QP, or to every QP attached to their multicast group.
 */
#include <linux/ip.h>
#include <linux/rcupdate.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>

#include "vhca_wire.h"

/*
 * The 40-byte GRH slot of a UD receive, as RoCEv2 puts it there: an IPv6
 * header, or 20 bytes of zeroes and then an IPv4 header.  Returns the
 * network type.
 */
static u8 vhca_build_grh(const struct ib_gid_attr *sgid,
			 const struct vhca_av *av, u32 len, u8 *grh)
{
	/* the payload after the IP header: UDP, BTH, DETH, data, ICRC */
	u32 inner = 8 + 12 + 8 + len + 4;
	u8 net = rdma_gid_attr_network_type(sgid);

	memset(grh, 0, 40);
	if (net == RDMA_NETWORK_IPV4) {
		struct iphdr *ip = (struct iphdr *)(grh + 20);

		ip->version = 4;
		ip->ihl = 5;
		ip->tos = av->traffic_class;
		ip->tot_len = htons(sizeof(*ip) + inner);
		ip->frag_off = htons(IP_DF);
		ip->ttl = av->hop_limit;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, sgid->gid.raw + 12, 4);
		memcpy(&ip->daddr, av->dgid + 12, 4);
		ip->check = ip_fast_csum(ip, ip->ihl);
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)grh;

		ip6_flow_hdr(ip6, av->traffic_class,
			     cpu_to_be32(av->flow_label & 0xfffff));
		ip6->payload_len = htons(inner);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = av->hop_limit;
		memcpy(&ip6->saddr, sgid->gid.raw, 16);
		memcpy(&ip6->daddr, av->dgid, 16);
	}
	return net;
}

/*
 * Deliver a UD message to @peer: its next receive WQE takes the 40-byte
 * GRH slot, then @len bytes from @src; the completion says @net and @vlan
 * (vhca_recv_done_grh()).  A missing receive drops the message, counted
 * in the receiver's rcvd_no_recv_wqe; a receive that cannot hold it
 * fails.  @msg says whether it carries immediate data and the solicited
 * flag.  Returns VHCA_FAULT if a page of an ODP MR of the receive is
 * missing, for @odp to fault in: the receive WQE stays taken
 * (resp.have_wqe) for the next try, or the next datagram.  Caller holds
 * peer->resp.lock and rcu_read_lock().
 */
static int vhca_ud_deliver(struct vhca_dev *pdev, struct vhca_qp *peer,
			   const u8 *grh, u8 net, u16 vlan,
			   struct vhca_cursor *src, u32 len,
			   const struct vhca_rmsg *msg, u32 src_qpn,
			   struct vhca_odp_retry *odp)
{
	struct vhca_seg grh_seg = { .kbuf = grh, .len = 40 };
	struct vhca_cursor gsrc = { .seg = &grh_seg, .nseg = 1 };
	struct vhca_resp *r = &peer->resp;
	struct vhca_cursor dst, all;
	struct vhca_fault f;
	unsigned int nd;
	s64 room;
	int err;

	if (!r->have_wqe) {
		switch (vhca_recv_take(peer, r->wqe, src_qpn)) {
		case -EAGAIN:
			vhca_count_qp(peer, VHCA_CNT_RCVD_NO_WQE);
			return 0;	/* no receive: dropped */
		case -EINVAL:
			return 0;	/* completed in error */
		}
		r->have_wqe = true;
	}
	room = vhca_sges(pdev, r->wqe->sge, r->wqe->num_sge, peer->ibqp.pd,
			 IB_ACCESS_LOCAL_WRITE | VHCA_FIND_ODP, r->seg, &nd);
	if (room < 0 || room < len + 40) {
		r->have_wqe = false;
		vhca_recv_done(peer, r->wqe->wr_id,
			       room < 0 ? IB_WC_LOC_PROT_ERR : IB_WC_LOC_LEN_ERR,
			       0, NULL, src_qpn);
		return 0;
	}
	dst = (struct vhca_cursor){ .seg = r->seg, .nseg = nd };
	all = dst;
	/* a LOCAL_INV that completed keeps the datagram out, as an unmap */
	err = vhca_cursor_hold(all, len + 40, true, &f);
	if (err == -EFAULT && vhca_odp_miss(odp, &f))
		return VHCA_FAULT;
	r->have_wqe = false;
	if (err) {
		vhca_recv_done(peer, r->wqe->wr_id, IB_WC_LOC_PROT_ERR, 0,
			       NULL, src_qpn);
		return 0;
	}
	vhca_copy(&dst, &gsrc, 40);
	vhca_copy(&dst, src, len);
	vhca_cursor_release(all, len + 40);
	vhca_recv_done_grh(peer, r->wqe->wr_id, IB_WC_SUCCESS, len + 40, msg,
			   src_qpn, net, vlan);
	return 0;
}

/* Whether @peer takes a UD message with @qkey. */
static bool vhca_ud_accepts(struct vhca_qp *peer, u32 qkey)
{
	return peer && vhca_qpt_ud(peer->ibqp.qp_type) &&
	       vhca_qps_receives(READ_ONCE(peer->state)) &&
	       qkey == READ_ONCE(peer->attr.qkey);
}

/*
 * Deliver datagram @m from the wire to @qp (vhca_ud_deliver()).  Caller
 * holds qp->resp.lock and rcu_read_lock().
 */
static int vhca_ud_wire_deliver(struct vhca_dev *vdev, struct vhca_qp *qp,
				const struct vhca_ud_msg *m,
				struct vhca_odp_retry *odp)
{
	struct vhca_rmsg msg = {
		.flags = m->h.has_imm ? VHCA_OPF_IMM : 0,
		.se = m->h.se,
		.ex = (__force u32)m->h.imm,
	};
	struct vhca_seg data = { .kbuf = m->data, .len = m->len };
	struct vhca_cursor src = { .seg = &data, .nseg = 1 };

	return vhca_ud_deliver(vdev, qp, m->grh, m->net, m->vlan, &src,
			       m->len, &msg, m->h.sqpn, odp);
}

/* A held datagram (struct vhca_held), delivered by held_work. */
static int vhca_ud_held(struct vhca_qp *qp, struct vhca_held *h)
{
	return vhca_ud_wire_deliver(to_vdev(qp->ibqp.device), qp, &h->ud,
				    &qp->resp.hodp);
}

/*
 * Hold datagram @m for held_work, as vhca_resp.c holds a UC packet: one
 * that found an ODP page missing (@fault), or one behind it.  One that
 * cannot be held is lost; the fault is made for the next.
 */
static void vhca_ud_hold(struct vhca_qp *qp, const struct vhca_ud_msg *m,
			 bool fault)
{
	struct vhca_held *h = vhca_held_new(qp, m->data, m->len, fault);

	if (!h)
		return;
	h->ud = *m;
	h->ud.data = h->data;
	h->deliver = vhca_ud_held;
	vhca_held_add(qp, h);
}

/**
 * vhca_ud_take() - a UD datagram from the wire to @peer, if it takes it
 * @vdev: the device it arrived on
 * @peer: the QP it is for, or NULL
 * @m: the datagram
 *
 * One that finds an ODP page of the receive missing is held, with those
 * behind it, until the page is faulted in (vhca_held.c).  Softirq context
 * (bottom halves off), under rcu_read_lock().
 *
 * Return: false if @peer is no UD QP that receives with @m's Q_Key.
 */
static bool vhca_ud_take(struct vhca_dev *vdev, struct vhca_qp *peer,
			 const struct vhca_ud_msg *m)
{
	struct vhca_resp *r;

	if (!vhca_ud_accepts(peer, m->h.qkey))
		return false;
	vhca_count_qp(peer, VHCA_CNT_RCVD_PKTS);
	r = &peer->resp;
	spin_lock_bh(&r->lock);
	/* closed: in ERR since the check above */
	if (!r->closed && r->held_run)
		vhca_ud_hold(peer, m, false);
	else if (!r->closed &&
		 vhca_ud_wire_deliver(vdev, peer, m, &r->hodp) == VHCA_FAULT)
		vhca_ud_hold(peer, m, true);
	spin_unlock_bh(&r->lock);
	return true;
}

/*
 * A datagram for the multicast QPN: each QP attached to the group of its
 * destination IP address takes it if its Q_Key matches.  Returns how
 * many took it.
 */
static unsigned int vhca_ud_to_group(struct vhca_dev *vdev,
				     const struct vhca_ud_msg *m)
{
	struct vhca_qp *qps[VHCA_MAX_MCAST_QP];
	unsigned int i, nq, n = 0;
	union ib_gid mgid;

	if (m->net == RDMA_NETWORK_IPV4)
		ipv6_addr_set_v4mapped(((const struct iphdr *)(m->grh + 20))->daddr,
				       (struct in6_addr *)mgid.raw);
	else
		memcpy(mgid.raw, &((const struct ipv6hdr *)m->grh)->daddr, 16);
	nq = vhca_mcast_qps(vdev, &mgid, qps);
	for (i = 0; i < nq; i++)
		if (vhca_ud_take(vdev, qps[i], m))
			n++;
	return n;
}

/**
 * vhca_ud_from_wire() - a UD datagram from the wire for QP @m->h.dqpn
 * @vdev: the device it arrived on
 * @m: the datagram
 *
 * The multicast QPN means every QP attached to the group it was sent to.
 * A datagram no QP takes (none, not UD, not receiving, or the wrong
 * Q_Key) is dropped, as the IBA says.  Softirq context (bottom halves
 * off), under rcu_read_lock().
 */
void vhca_ud_from_wire(struct vhca_dev *vdev, const struct vhca_ud_msg *m)
{
	bool taken;

	if (m->h.dqpn == IB_MULTICAST_QPN)
		taken = vhca_ud_to_group(vdev, m);
	else
		taken = vhca_ud_take(vdev, xa_load(&vdev->qp_xa, m->h.dqpn),
				     m);
	if (!taken) {
		vhca_count(vdev, VHCA_CNT_RCVD_PKTS);
		vhca_count(vdev, VHCA_CNT_RCVD_NO_QP);
	}
}

/*
 * A UD SEND to a GID that is not this host's: RoCEv2 on the wire, from
 * @sgid, the AV's source GID as vhca_ud_send() found it (an ERR_PTR if
 * it has none).
 */
static int vhca_ud_wire(struct vhca_dev *vdev, struct vhca_qp *qp,
			const struct vhca_swqe *w, struct vhca_cursor *src,
			u32 len, u32 qkey, const struct ib_gid_attr *sgid)
{
	bool imm = vhca_wr_is(w->opcode, VHCA_OPF_IMM);
	struct vhca_tx_hdr h = {
		.opcode = imm ? VHCA_OP_UD_SEND_ONLY_IMM : VHCA_OP_UD_SEND_ONLY,
		.dqpn = w->ud.remote_qpn,
		.psn = qp->attr.sq_psn,
		.has_deth = true,
		.qkey = qkey,
		.sqpn = qp->ibqp.qp_num,
		.imm = (__force __be32)w->ex,
		.has_imm = imm,
		.se = w->flags & VHCA_SWQE_F_SOLICITED,
	};
	struct vhca_seg out = { .len = len };
	struct vhca_cursor dst = { .seg = &out, .nseg = 1 };
	struct sk_buff *skb;

	skb = vhca_net_alloc(vdev, &h, len, &out.kdst);
	if (!skb)
		return IB_WC_SUCCESS;	/* lost, as on a congested wire */
	vhca_copy(&dst, src, len);
	qp->attr.sq_psn = (qp->attr.sq_psn + 1) & VHCA_BTH_PSN_MASK;
	vhca_net_send(vdev, skb, &w->ud.av, sgid, qp);
	return IB_WC_SUCCESS;
}

/*
 * A UD SEND of @len bytes from @src: to the QP remote_qpn of the vhca
 * device of this host that has the destination GID, if there is one and
 * the qkey matches; to the wire otherwise.  A datagram nobody takes is
 * lost and the sender still completes.  The receiver's buffers take the
 * GRH first, then the data.  Caller holds rcu_read_lock().
 */
static int vhca_ud_send(struct vhca_dev *vdev, struct vhca_qp *qp,
			const struct vhca_swqe *w, struct vhca_cursor *src,
			u32 len)
{
	const struct vhca_av *av = &w->ud.av;
	const struct ib_gid_attr *sgid;
	struct vhca_dev *pdev;
	struct vhca_rmsg msg;
	struct vhca_qp *peer;
	u16 vlan = VHCA_NO_VLAN;
	u8 grh[40], net;
	int status = 0;
	u32 qkey;

	/* IB: a qkey with the high bit set means "use the sender's own" */
	qkey = (w->ud.remote_qkey & 0x80000000) ? qp->attr.qkey :
						  w->ud.remote_qkey;

	/*
	 * The source GID says the sender's namespace, where the destination
	 * is local or not; one gone since the AH was made has no route, and
	 * the wire path drops the datagram and counts it.
	 */
	sgid = rdma_get_gid_attr(qp->ibqp.device, VHCA_PORT, av->sgid_index);
	pdev = IS_ERR(sgid) ? NULL :
	       vhca_dev_by_gid(vdev, (const union ib_gid *)av->dgid,
			       vhca_gid_net(sgid));
	if (!pdev) {
		status = vhca_ud_wire(vdev, qp, w, src, len, qkey, sgid);
		if (!IS_ERR(sgid))
			rdma_put_gid_attr(sgid);
		return status;
	}
	peer = xa_load(&pdev->qp_xa, w->ud.remote_qpn);
	net = vhca_build_grh(sgid, av, len, grh);
	/* the datagram stays on the sender's VLAN, as on the wire */
	rdma_read_gid_l2_fields(sgid, &vlan, NULL);
	rdma_put_gid_attr(sgid);
	if (!vhca_ud_accepts(peer, qkey))
		return IB_WC_SUCCESS;
	msg = vhca_rmsg_of(w);
	spin_lock_bh(&peer->resp.lock);
	if (!peer->resp.closed)
		status = vhca_ud_deliver(pdev, peer, grh, net, vlan, src, len,
					 &msg, qp->ibqp.qp_num, &qp->exec.odp);
	spin_unlock_bh(&peer->resp.lock);
	return status == VHCA_FAULT ? VHCA_FAULT : IB_WC_SUCCESS;
}

/*
 * A UD SEND WQE (vhca_ud_send()).  Its ODP pages are held while the
 * datagram is built or delivered; one missing, of its own or of the
 * receive that takes it on this host, makes it VHCA_FAULT, for the engine
 * to fault in (qp->exec.odp) and run it again.  Caller holds
 * rcu_read_lock().
 */
int vhca_ud_exec(struct vhca_dev *vdev, struct vhca_qp *qp,
		 const struct vhca_swqe *w, struct vhca_seg *sseg)
{
	struct vhca_cursor src, all;
	struct vhca_fault f;
	bool held = false;
	unsigned int ns;
	int status;
	s64 len;

	len = vhca_wqe_source(vdev, qp, w, sseg, &ns, VHCA_FIND_ODP);
	if (len < 0)
		return -len;
	if (len > ib_mtu_enum_to_int(READ_ONCE(vdev->active_mtu)))
		return IB_WC_LOC_LEN_ERR;
	src = (struct vhca_cursor){ .seg = sseg, .nseg = ns };
	all = src;
	if (vhca_segs_odp(sseg, ns)) {
		status = vhca_cursor_hold(all, len, false, &f);
		if (status)
			return status == -EFAULT &&
			       vhca_odp_miss(&qp->exec.odp, &f) ?
			       VHCA_FAULT : IB_WC_LOC_PROT_ERR;
		held = true;
	}
	status = vhca_ud_send(vdev, qp, w, &src, len);
	if (held)
		vhca_cursor_release(all, len);
	return status;
}
