// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The requester on the wire: a SEND or WRITE cut into packets of the path
 * MTU (vhca_req_packets()), for UC and RC, and RC's go-back-N, as the IBA
 * has it.  UC is unacknowledged: its WQE is done when its last packet has
 * left (vhca_req_uc()).
 *
 * A WQE leaves in packets of the path MTU with consecutive PSNs (a READ
 * request takes as many PSNs as its response has packets) and stays in
 * the send ring until the responder acknowledges it: the WQEs from
 * req.cons up to req.next are on the wire, at most VHCA_REQ_WINDOW of
 * them, numbered in the order they went.  What the requester needs to
 * complete them is kept in req.fl; to send one again, or to place a READ
 * response, its slot is copied out of the ring and checked again, like
 * any WQE.  Among them go the READs and FINs of the rendezvous the QP
 * reads for its tag-matching SRQ (vhca_tm_job_next()), which no slot
 * holds: they complete the tag, not a WQE of the ring, and only the
 * ring's WQEs move the consumer the process sees (sq_cons).
 *
 * The completer (vhca_comp.c) takes the responses first, in each run of
 * the send ring: it completes WQEs, and after a sequence NAK or a timeout
 * rewinds req.next to the oldest WQE not complete, which this file then
 * sends again (a READ or atomic asks only for what it still lacks).
 *
 * ODP: a WQE's pages are faulted in before it goes (vhca_req_prefault()),
 * in process context like the rest of the requester.  A packet that finds
 * a page gone since (an invalidation) stops its message there, as a full
 * window does: the page is faulted in and the message goes on.
 */

#include "vhca_wire.h"
#include "vhca_req.h"
#include "vhca_tm.h"

/*
 * VHCA_REQ_MAX_PKTS for a UC QP's SENDs and WRITEs: UC has no ACK to
 * pace it, and a 16 MiB message sent as fast as the engine builds its
 * packets lost some to the sender's own CoDel, which loses the whole
 * message.  It also bounds what one run of the send ring sends of a WQE.
 */
#define VHCA_UC_INFLIGHT	512

static void vhca_req_timer(struct timer_list *t)
{
	struct vhca_qp *qp = timer_container_of(qp, t, req.timer);

	WRITE_ONCE(qp->req.timed_out, true);
	vhca_qp_kick(qp);
}

/**
 * vhca_req_init() - set up an RC QP's requester
 * @qp: a new RC QP
 *
 * Return: 0 or -ENOMEM.
 */
int vhca_req_init(struct vhca_qp *qp)
{
	qp->req.fl = kvcalloc(VHCA_REQ_WINDOW, sizeof(*qp->req.fl),
			      GFP_KERNEL_ACCOUNT);
	if (!qp->req.fl)
		return -ENOMEM;
	timer_setup(&qp->req.timer, vhca_req_timer, 0);
	skb_queue_head_init(&qp->req.rxq);
	vhca_req_cwnd_reset(&qp->req);
	return vhca_tm_jobs_init(qp);
}

/*
 * @qp's share of the device's bound, itself counted as busy, in packets
 * of its path MTU.
 */
static u32 vhca_req_max_pkts(struct vhca_qp *qp)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	int busy = atomic_read(&vdev->rc_busy) + !qp->req.busy;
	u32 mtu = vhca_qp_mtu(vdev, qp);
	u32 dev = min(VHCA_REQ_DEV_PKTS, VHCA_REQ_DEV_BYTES / mtu);

	return clamp_t(u32, dev / max(busy, 1), VHCA_REQ_MIN_PKTS,
		       qp->req.cwnd);
}

/**
 * vhca_req_destroy() - tear down an RC QP's requester
 * @qp: the QP, no longer findable by QPN (after a grace period), its
 *	timer shut down and its work cancelled (or a QP never created)
 */
void vhca_req_destroy(struct vhca_qp *qp)
{
	if (!qp->req.fl)
		return;
	vhca_req_set_busy(qp, false);
	skb_queue_purge(&qp->req.rxq);
	kvfree(qp->req.fl);
	qp->req.fl = NULL;
	vhca_tm_jobs_free(qp);
}

/**
 * vhca_req_fetch() - a WQE the requester sends, from where it comes
 * @qp: the QP; caller holds qp->lock
 * @src: enum vhca_req_src
 * @slot: its SQ index, or its rendezvous's index
 *
 * A send ring WQE is copied out of its slot, each time: the process may
 * have rewritten it since it went, which its caller checks.
 *
 * Return: the WQE, in the QP's scratch or its rendezvous jobs.
 */
struct vhca_swqe *vhca_req_fetch(struct vhca_qp *qp, u8 src, u32 slot)
{
	if (src == VHCA_REQ_RING)
		return vhca_sq_fetch_at(qp, slot);
	return vhca_tm_job_wqe(qp, src == VHCA_REQ_TM_FIN, slot);
}

/**
 * vhca_req_source() - the local memory of a WQE from vhca_req_fetch()
 * @qp: the QP; caller holds qp->lock and rcu_read_lock()
 * @src: where @w came from
 * @w: the WQE
 * @seg: set to its segments
 * @nseg: set to how many
 * @access: as for vhca_wqe_source()
 *
 * Return: as vhca_wqe_source().
 */
s64 vhca_req_source(struct vhca_qp *qp, u8 src, const struct vhca_swqe *w,
		    struct vhca_seg *seg, unsigned int *nseg, int access)
{
	if (src == VHCA_REQ_RING)
		return vhca_wqe_source(to_vdev(qp->ibqp.device), qp, w, seg,
				       nseg, access);
	return vhca_tm_job_source(qp, w, seg, nseg, access);
}

/* Send the packet held back, first asking for an ACK if @ack. */
static void vhca_req_flush(struct vhca_qp *qp, bool ack)
{
	struct sk_buff *skb = qp->req.held;

	if (!skb)
		return;
	qp->req.held = NULL;
	if (ack) {
		vhca_bth_set_ackreq(skb);
		qp->req.unacked = 0;
	}
	vhca_net_send_qp(to_vdev(qp->ibqp.device), skb, qp);
}

/**
 * vhca_req_xmit() - send a SEND or WRITE request packet, in PSN order
 * @qp: the RC QP; caller holds qp->lock
 * @skb: the packet, from vhca_net_alloc(), not asking for an ACK; consumed
 * @last: it ends its message
 *
 * Every VHCA_REQ_ACKREQ_EVERY-th packet asks for an ACK.  A message's last
 * packet that does not is held back until the next packet goes, or until
 * vhca_req_run() ends and it asks.
 */
static void vhca_req_xmit(struct vhca_qp *qp, struct sk_buff *skb, bool last)
{
	vhca_req_flush(qp, false);
	if (++qp->req.unacked >= VHCA_REQ_ACKREQ_EVERY) {
		vhca_bth_set_ackreq(skb);
		qp->req.unacked = 0;
	} else if (last) {
		qp->req.held = skb;
		return;
	}
	vhca_net_send_qp(to_vdev(qp->ibqp.device), skb, qp);
}

/* The operation part of a connected opcode for one packet of a message. */
static u8 vhca_req_op(bool write, bool first, bool last, bool imm)
{
	if (first && last)
		return write ? (imm ? VHCA_OP_WRITE_ONLY_IMM : VHCA_OP_WRITE_ONLY) :
			       (imm ? VHCA_OP_SEND_ONLY_IMM : VHCA_OP_SEND_ONLY);
	if (first)
		return write ? VHCA_OP_WRITE_FIRST : VHCA_OP_SEND_FIRST;
	if (last)
		return write ? (imm ? VHCA_OP_WRITE_LAST_IMM : VHCA_OP_WRITE_LAST) :
			       (imm ? VHCA_OP_SEND_LAST_IMM : VHCA_OP_SEND_LAST);
	return write ? VHCA_OP_WRITE_MIDDLE : VHCA_OP_SEND_MIDDLE;
}

/*
 * What every request of WQE @w carries besides its operation: the
 * destination QP and, from an XRC INI, the XRCETH with the SRQ @w names.
 */
static void vhca_req_hdr(const struct vhca_qp *qp, const struct vhca_swqe *w,
			 struct vhca_tx_hdr *h)
{
	h->dqpn = qp->attr.dest_qp_num;
	h->has_xrceth = qp->ibqp.qp_type == IB_QPT_XRC_INI;
	h->xrcsrq = w->xrc_srqn;
}

/* The packets, and PSNs, of a SEND or WRITE of @len bytes. */
static u32 vhca_req_npkts(struct vhca_dev *vdev, struct vhca_qp *qp, u32 len)
{
	return len ? DIV_ROUND_UP(len, vhca_qp_mtu(vdev, qp)) : 1;
}

/*
 * Packets of one message between two looks at whether the CPU is wanted:
 * a message of 2 GiB is millions of them.
 */
#define VHCA_REQ_YIELD		64

/*
 * The destructor of a UC SEND or WRITE packet: the netdev is done with it.
 * Once half the QP's allowance is free, a message waiting for it goes on
 * in the QP's work.  Any context.
 */
static void vhca_req_uc_free(struct sk_buff *skb)
{
	struct vhca_qp *qp = skb_shinfo(skb)->destructor_arg;
	int left;

	rcu_read_lock();	/* vhca_net_drain() waits for it */
	left = atomic_dec_return(&qp->net_inflight);
	if (left <= VHCA_UC_INFLIGHT / 2 && READ_ONCE(qp->uc_wait)) {
		WRITE_ONCE(qp->uc_wait, false);
		vhca_qp_kick(qp);
	}
	if (!left)
		wake_up_var(&qp->net_inflight);
	rcu_read_unlock();
}

/*
 * Let go of RCU and of the CPU in the middle of a long message, then find
 * its SGEs again, into qp->seg, and @src at @off of them.  Returns false
 * if they no longer describe @len bytes: the rest of the message is lost.
 * Process context, under rcu_read_lock() once.
 */
static bool vhca_req_yield(struct vhca_dev *vdev, struct vhca_qp *qp,
			   const struct vhca_swqe *w, struct vhca_cursor *src,
			   u32 len, u32 off)
{
	unsigned int ns;

	rcu_read_unlock();
	cond_resched();
	rcu_read_lock();
	if (vhca_wqe_source(vdev, qp, w, qp->seg, &ns, VHCA_FIND_ODP) != len)
		return false;
	*src = (struct vhca_cursor){ .seg = qp->seg, .nseg = ns };
	vhca_cursor_skip(src, off);
	return true;
}

/**
 * vhca_req_packets() - send a SEND or WRITE in packets of the path MTU
 * @vdev: the sending device
 * @qp: the sending UC or RC QP, with its AV and destination QPN
 * @w: the WQE: its opcode, flags, immediate data or rkey to invalidate,
 *	and remote address
 * @src: its data, found in qp->seg
 * @len: how many bytes
 * @psn: the PSN of the first packet
 * @from: the first packet to send: 0, where an RC responder's sequence
 *	NAK said the message broke off, or where an earlier call stopped
 * @max: packets to send at most in this call
 *
 * FIRST, MIDDLE, LAST or ONLY, with the RETH on a WRITE's first packet,
 * the ImmDt (or IETH) on the last.  RC's packets go through
 * vhca_req_xmit(), which decides which of them ask for an ACK; the last of
 * a call that leaves packets for later counts as a message's last there,
 * so the run's end makes it ask, and a window the call filled opens
 * again.  A packet that cannot be allocated is lost, as on a wire, and so
 * are the ones after it: RC sends the WQE again, UC never knows.  Every
 * VHCA_REQ_YIELD packets the CPU may go to another task.  Data in ODP
 * MRs is copied under a hold (vhca_cursor_hold()); a missing page stops
 * the message at its packet with the fault pending in qp->exec.odp, or,
 * if its fault failed, with the rest lost (qp->exec.odp.lost).  Process
 * context, under rcu_read_lock().
 *
 * Return: the first packet not sent, to go on from later (or not at all,
 * if lost to a fault); the message's count of packets (vhca_req_npkts())
 * once it is all gone or lost to an allocation.
 */
static u32 vhca_req_packets(struct vhca_dev *vdev, struct vhca_qp *qp,
			    const struct vhca_swqe *w,
			    struct vhca_cursor *src, u32 len, u32 psn,
			    u32 from, u32 max)
{
	bool rc = vhca_qpt_rc(qp->ibqp.qp_type);
	u8 class = vhca_qp_class(qp);
	bool write = vhca_wr_is(w->opcode, VHCA_OPF_WRITE);
	bool imm = vhca_wr_is(w->opcode, VHCA_OPF_IMM);
	bool inv = vhca_wr_is(w->opcode, VHCA_OPF_INV);
	u32 mtu = vhca_qp_mtu(vdev, qp), npkts = vhca_req_npkts(vdev, qp, len);
	struct vhca_tx_hdr h = {
		.va = w->rdma.remote_addr,
		.rkey = w->rdma.rkey,
		.dmalen = len,
		.imm = inv ? cpu_to_be32(w->ex) : (__force __be32)w->ex,
	};
	bool odp = vhca_segs_odp(src->seg, src->nseg);
	struct vhca_cursor dst, at;
	struct vhca_fault f;
	struct vhca_seg out;
	struct sk_buff *skb;
	u32 i, n, off, end;
	int err;

	vhca_req_hdr(qp, w, &h);
	/* the process may have rewritten the WQE to fewer bytes meanwhile */
	from = min(from, npkts - 1);
	end = from + min(max, npkts - from);
	off = from * mtu;
	vhca_cursor_skip(src, off);
	for (i = from; i < end; i++) {
		bool first = !i, last = i == npkts - 1;

		if (i != from && !((i - from) % VHCA_REQ_YIELD) &&
		    need_resched()) {
			if (!vhca_req_yield(vdev, qp, w, src, len, off))
				return npkts;
			odp = vhca_segs_odp(src->seg, src->nseg);
		}
		n = min(len - off, mtu);
		h.opcode = class | vhca_req_op(write, first, last, imm);
		if (inv && last)
			h.opcode = class | (first ? VHCA_OP_SEND_ONLY_INV :
					    VHCA_OP_SEND_LAST_INV);
		h.psn = (psn + i) & VHCA_BTH_PSN_MASK;
		h.se = last && (w->flags & VHCA_SWQE_F_SOLICITED);
		h.has_reth = write && first;
		h.has_imm = (imm || inv) && last;
		skb = vhca_net_alloc(vdev, &h, n, &out.kdst);
		if (!skb)
			return npkts;
		out.len = n;
		dst = (struct vhca_cursor){ .seg = &out, .nseg = 1 };
		at = *src;
		err = odp ? vhca_cursor_hold(at, n, false, &f) : 0;
		if (err) {
			kfree_skb(skb);
			if (err != -EFAULT)
				return npkts;
			vhca_odp_miss(&qp->exec.odp, &f);	/* pending or lost */
			return i;
		}
		vhca_copy(&dst, src, n);
		if (odp)
			vhca_cursor_release(at, n);
		if (rc) {
			vhca_req_xmit(qp, skb, i == end - 1);
		} else {
			atomic_inc(&qp->net_inflight);
			skb->destructor = vhca_req_uc_free;
			skb_shinfo(skb)->destructor_arg = qp;
			vhca_net_send_qp(vdev, skb, qp);
		}
		off += n;
	}
	return end;
}

/*
 * A UC SEND or WRITE to a QP on another host.  UC is unacknowledged: the
 * WQE is done when its last packet has left, and a lost packet is the
 * responder's to notice.  One call sends no more than the netdev has
 * room for (vhca_net_room(), VHCA_UC_INFLIGHT at most) and returns
 * VHCA_PARTIAL if more are left: the engine runs the WQE again from
 * qp->wire_pkt later, so a message of 2 GiB holds neither the doorbell's
 * system call nor the QP's lock until its last packet.  VHCA_FAULT: the
 * same, once the ODP pages its next packet needs are faulted in.
 */
int vhca_req_uc(struct vhca_dev *vdev, struct vhca_qp *qp,
		const struct vhca_swqe *w, struct vhca_seg *sseg,
		unsigned int ns, u32 len)
{
	struct vhca_cursor src = { .seg = sseg, .nseg = ns };
	u32 npkts = vhca_req_npkts(vdev, qp, len);
	u32 room = vhca_net_room(qp, &qp->uc_wait, VHCA_UC_INFLIGHT);
	u32 next = vhca_req_packets(vdev, qp, w, &src, len, qp->attr.sq_psn,
				  qp->wire_pkt, room);

	if (next < npkts && !qp->exec.odp.lost) {
		qp->wire_pkt = next;
		return qp->exec.odp.pending ? VHCA_FAULT : VHCA_PARTIAL;
	}
	qp->wire_pkt = 0;
	qp->attr.sq_psn = (qp->attr.sq_psn + npkts) & VHCA_BTH_PSN_MASK;
	return qp->exec.odp.lost ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

/*
 * @n request packets from PSN @psn have gone, and the latest of them
 * takes PSNs up to @end: those before q->psn_high went before.
 */
static void vhca_req_went(struct vhca_qp *qp, u32 psn, u32 n, u32 end)
{
	struct vhca_req *q = &qp->req;
	s32 again = vhca_psn_diff(q->psn_high, psn);

	if (again > 0)
		vhca_count_qp_n(qp, VHCA_CNT_RETRANS_PKTS, min_t(u32, again, n));
	if (vhca_psn_diff(end & VHCA_BTH_PSN_MASK, q->psn_high) > 0)
		q->psn_high = end & VHCA_BTH_PSN_MASK;
}

/*
 * Packets the QP may send from PSN @psn on before the window is full:
 * counted from the oldest WQE on the wire, or from the first PSN not
 * acknowledged inside it (a long WQE moves on packet by packet).
 */
static u32 vhca_req_room(struct vhca_qp *qp, u32 psn)
{
	const struct vhca_req *q = &qp->req;
	u32 max = vhca_req_max_pkts(qp), base = psn;
	s32 used;

	if (q->cons != q->next) {
		base = q->fl[q->cons & VHCA_REQ_FL_MASK].psn;
		if (vhca_psn_diff((q->acked + 1) & VHCA_BTH_PSN_MASK, base) > 0)
			base = (q->acked + 1) & VHCA_BTH_PSN_MASK;
	}
	used = vhca_psn_diff(psn & VHCA_BTH_PSN_MASK, base);
	if (used <= 0)
		return max;
	return (u32)used < max ? max - used : 0;
}

/*
 * Send SEND or WRITE @e (WQE @w, its data at @src) from its packet @from,
 * as far as the window has room: the rest, if any, waits in q->tail for
 * vhca_req_continue().  Under rcu_read_lock().
 */
static void vhca_req_data(struct vhca_qp *qp, struct vhca_req_wqe *e,
			  const struct vhca_swqe *w, struct vhca_cursor *src,
			  u32 from)
{
	struct vhca_req *q = &qp->req;
	u32 psn = e->psn + from, next;

	next = vhca_req_packets(to_vdev(qp->ibqp.device), qp, w, src, e->len,
				e->psn, from, vhca_req_room(qp, psn));
	if (next > from)
		vhca_req_went(qp, psn, next - from, e->psn + next);
	q->partial = next < e->npkts && !qp->exec.odp.lost;
	q->tail = next;
}

/*
 * A request packet answered by a response of its own (READ, atomic, ATOMIC
 * WRITE), with @len bytes of @data: lost if no memory.
 */
static void vhca_req_request(struct vhca_qp *qp, const struct vhca_tx_hdr *h,
			     const void *data, u32 len)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct sk_buff *skb;
	u8 *payload;

	vhca_req_flush(qp, false);
	qp->req.unacked = 0;	/* its response acknowledges what went before */
	skb = vhca_net_alloc(vdev, h, len, &payload);
	if (!skb)
		return;	/* lost: the timer or the next gap asks again */
	if (len)
		memcpy(payload, data, len);
	vhca_net_send_qp(vdev, skb, qp);
}

/*
 * Ask for READ @e (WQE @w) from its first byte not placed: the whole of
 * it when it is sent, the rest after a gap in its responses.
 */
void vhca_req_ask_read(struct vhca_qp *qp, const struct vhca_req_wqe *e,
		       const struct vhca_swqe *w)
{
	u32 done = e->got * vhca_qp_mtu(to_vdev(qp->ibqp.device), qp);
	struct vhca_tx_hdr h = {
		.opcode = vhca_qp_class(qp) | VHCA_OP_READ_REQ,
		.psn = (e->psn + e->got) & VHCA_BTH_PSN_MASK,
		.ackreq = true,
		.has_reth = true,
		.va = w->rdma.remote_addr + done,
		.rkey = w->rdma.rkey,
		.dmalen = e->len - done,
	};

	vhca_req_hdr(qp, w, &h);
	vhca_req_went(qp, h.psn, 1, e->psn + e->npkts);
	vhca_req_request(qp, &h, NULL, 0);
}

/*
 * Ask for atomic or ATOMIC WRITE @e (WQE @w).  An ATOMIC WRITE is a RETH
 * and its 8 bytes, as they lie in the WQE.
 */
static void vhca_req_ask_atomic(struct vhca_qp *qp, const struct vhca_req_wqe *e,
				const struct vhca_swqe *w)
{
	bool cas = w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;
	bool aw = vhca_wr_is(w->opcode, VHCA_OPF_ATOMIC_WRITE);
	struct vhca_tx_hdr h = {
		.opcode = vhca_qp_class(qp) |
			  (aw ? VHCA_OP_ATOMIC_WRITE :
			   cas ? VHCA_OP_CMP_SWAP : VHCA_OP_FETCH_ADD),
		.psn = e->psn,
		.ackreq = true,
		.has_reth = aw,
		.has_atomic = !aw,
		.va = w->atomic.remote_addr,
		.rkey = w->atomic.rkey,
		.dmalen = aw ? sizeof(u64) : 0,
		/* FETCH_ADD's addend travels in the swap field */
		.swap = cas ? w->atomic.swap : w->atomic.compare_add,
		.compare = cas ? w->atomic.compare_add : 0,
	};

	vhca_req_hdr(qp, w, &h);
	vhca_req_went(qp, h.psn, 1, e->psn + 1);
	vhca_req_request(qp, &h, &w->atomic.swap, aw ? sizeof(u64) : 0);
}

/*
 * Ask for FLUSH @e (WQE @w): a FETH with the placement type and
 * selectivity level the process gave, its reserved bits zero, and a RETH;
 * no payload.  The responder judges the values.  rxe drops a FLUSH with
 * IBA's ICRC, and an IBA responder one with rxe's (vhca_icrc_rxe()): the
 * form this QP last had answered goes first, the other when it goes
 * again (vhca_req_resume()).
 */
static void vhca_req_ask_flush(struct vhca_qp *qp, const struct vhca_req_wqe *e,
			       const struct vhca_swqe *w)
{
	struct vhca_tx_hdr h = {
		.opcode = VHCA_OP_RC | VHCA_OP_FLUSH,
		.dqpn = qp->attr.dest_qp_num,
		.psn = e->psn,
		.ackreq = true,
		.has_feth = true,
		.feth = (w->flush.type & VHCA_FETH_PLT_MASK) |
			((w->flush.level << VHCA_FETH_SEL_SHIFT) &
			 VHCA_FETH_SEL_MASK),
		.has_reth = true,
		.va = w->flush.remote_addr,
		.rkey = w->flush.rkey,
		.dmalen = w->flush.length,
		.rxe_icrc = qp->req.flush_rxe,
	};

	vhca_req_went(qp, h.psn, 1, e->psn + 1);
	vhca_req_request(qp, &h, NULL, 0);
}

/* Ask for atomic, ATOMIC WRITE or FLUSH @e (WQE @w): one packet. */
static void vhca_req_ask_one(struct vhca_qp *qp, const struct vhca_req_wqe *e,
			     const struct vhca_swqe *w)
{
	if (vhca_wr_is(w->opcode, VHCA_OPF_FLUSH))
		vhca_req_ask_flush(qp, e, w);
	else
		vhca_req_ask_atomic(qp, e, w);
}

/*
 * A READ or atomic going again after a rewind (WQE @w of @len bytes, its
 * record @e): it keeps the responses it got and asks only for the rest,
 * or for nothing once they are all in.  Asking for a READ from its start
 * again after its rest was asked for is not answered by every responder:
 * rxe narrows its record of the READ to the latest request and drops one
 * that starts before it, so the READ would wait for good.  Returns false
 * if @e is not the record of @w (the process rewrote the slot, or nothing
 * is going again): @w goes as new.
 */
static bool vhca_req_resume(struct vhca_qp *qp, struct vhca_req_wqe *e,
			    const struct vhca_swqe *w, u32 len)
{
	if ((s32)(qp->req.sent - qp->req.next) <= 0 ||
	    e->opcode != w->opcode || e->wr_id != w->wr_id || e->len != len ||
	    e->psn != qp->attr.sq_psn)
		return false;
	if (e->got < e->npkts) {
		if (vhca_wr_is(e->opcode, VHCA_OPF_READ)) {
			e->asked = e->got;	/* the gaps before are asked for */
			vhca_req_ask_read(qp, e, w);
		} else {
			/* unanswered: perhaps its ICRC was not the peer's */
			if (vhca_wr_is(e->opcode, VHCA_OPF_FLUSH))
				qp->req.flush_rxe = !qp->req.flush_rxe;
			vhca_req_ask_one(qp, e, w);
		}
	}
	return true;
}

/*
 * The WQE at q->next, from @src, has gone (again); the first time, its
 * source moves on.
 */
static void vhca_req_next(struct vhca_qp *qp, u8 src)
{
	struct vhca_req *q = &qp->req;

	if (q->next++ != q->sent)
		return;
	q->sent = q->next;
	if (src == VHCA_REQ_RING)
		q->user++;
	else
		vhca_tm_job_went(qp, src == VHCA_REQ_TM_FIN);
}

/*
 * Send WQE @w (sequence number q->next; from @src, at @slot there) from
 * its first packet, and remember it.  Returns an IB_WC_* status for a WQE
 * that cannot go (it is not sent).
 */
static int vhca_req_send(struct vhca_qp *qp, const struct vhca_swqe *w,
			 u8 src, u32 slot)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_req_wqe *e = &qp->req.fl[qp->req.next & VHCA_REQ_FL_MASK];
	bool rd = vhca_wr_is(w->opcode, VHCA_OPF_READ);
	bool aw = vhca_wr_is(w->opcode, VHCA_OPF_ATOMIC_WRITE);
	bool fl = vhca_wr_is(w->opcode, VHCA_OPF_FLUSH);
	/*
	 * An ATOMIC WRITE goes as an atomic does, its data in the WQE, and
	 * so does a FLUSH, which has none: one packet, answered
	 */
	bool at = aw || fl || vhca_wr_is(w->opcode, VHCA_OPF_ATOMIC);
	struct vhca_seg *sseg = qp->seg;
	u32 skip = qp->req.skip;	/* for this WQE alone */
	struct vhca_cursor data;
	unsigned int ns;
	s64 len = fl ? 0 : sizeof(u64);

	qp->req.skip = 0;
	qp->req.partial = false;	/* until vhca_req_data() says */
	if (!aw && !fl)
		len = vhca_req_source(qp, src, w, sseg, &ns,
				      (rd || at ? IB_ACCESS_LOCAL_WRITE : 0) |
				      VHCA_FIND_ODP);
	if (len < 0)
		return -len;
	if (at && !fl && len != sizeof(u64))
		return IB_WC_LOC_LEN_ERR;

	/* nothing else on the wire, and not going again: nothing is acked */
	if (qp->req.next == qp->req.cons && !qp->req.rewound) {
		qp->req.acked = (qp->attr.sq_psn - 1) & VHCA_BTH_PSN_MASK;
		/* nor was anything beyond it ever sent */
		if (qp->req.sent == qp->req.cons)
			qp->req.psn_high = qp->attr.sq_psn;
	}
	if ((rd || at) && vhca_req_resume(qp, e, w, len))
		goto sent;
	*e = (struct vhca_req_wqe){
		.wr_id = w->wr_id,
		.psn = qp->attr.sq_psn,
		.asked = U32_MAX,
		.status = IB_WC_SUCCESS,
		.len = len,
		.opcode = w->opcode,
		.flags = w->flags,
		.src = src,
		.slot = slot,
	};
	if (rd) {
		e->npkts = len ? DIV_ROUND_UP(len, vhca_qp_mtu(vdev, qp)) : 1;
		vhca_req_ask_read(qp, e, w);
	} else if (at) {
		e->npkts = 1;
		vhca_req_ask_one(qp, e, w);
	} else {
		data = (struct vhca_cursor){ .seg = sseg, .nseg = ns };
		e->npkts = vhca_req_npkts(vdev, qp, len);
		vhca_req_data(qp, e, w, &data, min(skip, e->npkts - 1));
	}
sent:
	if (rd || at)
		qp->req.reads++;
	qp->attr.sq_psn = (e->psn + e->npkts) & VHCA_BTH_PSN_MASK;
	vhca_req_next(qp, src);
	return IB_WC_SUCCESS;
}

/*
 * Go on with the SEND or WRITE at q->next - 1 that a full window cut
 * short.  Its slot is copied out and checked again; if the process
 * rewrote it meanwhile, its rest is lost, and the responder's sequence
 * NAK or the timer has it sent again from its start, as it is now.
 * Returns true while packets of it are left.
 */
static bool vhca_req_continue(struct vhca_qp *qp)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_req *q = &qp->req;
	struct vhca_req_wqe *e = &q->fl[(q->next - 1) & VHCA_REQ_FL_MASK];
	struct vhca_swqe *w;
	struct vhca_cursor src;
	unsigned int ns;
	s64 len = -1;

	if (!vhca_req_room(qp, e->psn + q->tail))
		return true;
	w = vhca_req_fetch(qp, e->src, e->slot);
	rcu_read_lock();
	if (w->opcode == e->opcode && w->wr_id == e->wr_id &&
	    !vhca_wqe_check(qp, w))
		len = vhca_req_source(qp, e->src, w, qp->seg, &ns,
				      VHCA_FIND_ODP);
	if (len == e->len && vhca_req_npkts(vdev, qp, len) == e->npkts) {
		src = (struct vhca_cursor){ .seg = qp->seg, .nseg = ns };
		vhca_req_data(qp, e, w, &src, q->tail);
	} else {
		q->partial = false;
	}
	rcu_read_unlock();
	return q->partial;
}

/*
 * Fault in the ODP pages of WQE @w before it goes: its data, or where a
 * READ's or atomic's response lands (@write).  One SGE at a time, each
 * looked up again under RCU and faulted in out of it.  Returns 0, or
 * IB_WC_LOC_PROT_ERR if a page cannot be had (nothing mapped there, or
 * not writable): the WQE fails before it leaves.  Process context.
 */
static int vhca_req_prefault(struct vhca_qp *qp, const struct vhca_swqe *w,
			     bool write)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	int access = (write ? IB_ACCESS_LOCAL_WRITE : 0) | VHCA_FIND_ODP;
	struct vhca_seg *seg = qp->seg;
	unsigned int i = 0, ns;
	struct vhca_mr *mr;
	u64 va, len;
	int err;

	/* a WQE's keys are its QP's PD's: none of them is ODP */
	if (!atomic_read(&to_vpd(qp->ibqp.pd)->nr_odp_mrs))
		return 0;
	for (;;) {
		rcu_read_lock();
		if (vhca_wqe_source(vdev, qp, w, seg, &ns, access) < 0) {
			rcu_read_unlock();
			return 0;	/* vhca_req_send() says why */
		}
		while (i < ns && !(seg[i].mr && seg[i].mr->type == VHCA_MR_ODP &&
				   seg[i].len))
			i++;
		if (i == ns) {
			rcu_read_unlock();
			return 0;
		}
		mr = seg[i].mr;
		va = seg[i].va;
		len = seg[i].len;
		if (!vhca_odp_get(mr)) {
			rcu_read_unlock();
			return IB_WC_LOC_PROT_ERR;
		}
		rcu_read_unlock();
		err = vhca_odp_fault(mr, va, len, write, true);
		vhca_odp_put(mr);
		if (err)
			return IB_WC_LOC_PROT_ERR;
		i++;
	}
}

/*
 * The rest of a partial message whose packet found an ODP page gone:
 * faulted in, and sent on, until it is all gone or the window fills.  If
 * a page cannot be had, the rest is lost (q->lost).  Returns true while
 * packets of it are left.
 */
static bool vhca_req_rest(struct vhca_qp *qp)
{
	while (qp->exec.odp.pending) {
		vhca_odp_resolve(&qp->exec.odp);
		vhca_req_continue(qp);
	}
	if (qp->exec.odp.lost)
		qp->req.lost = true;
	vhca_odp_retry_reset(&qp->exec.odp);
	return qp->req.partial;
}

/*
 * Whether the WQE at q->next may go now.  A READ or atomic beyond
 * max_rd_atomic, a fenced WQE behind a READ or atomic, and a local
 * operation behind anything wait for what is on the wire.
 */
static bool vhca_req_may_send(struct vhca_qp *qp, const struct vhca_swqe *w)
{
	struct vhca_req *q = &qp->req;

	/* bounded in packets too: go-back-N sends them all again */
	if (q->next != q->cons &&
	    vhca_psn_diff(qp->attr.sq_psn,
			  q->fl[q->cons & VHCA_REQ_FL_MASK].psn) >=
	    vhca_req_max_pkts(qp))
		return false;
	if (vhca_wr_is(w->opcode, VHCA_OPF_RD_ATOMIC) &&
	    q->reads >= max_t(u8, qp->attr.max_rd_atomic, 1))
		return false;
	if ((w->flags & VHCA_SWQE_F_FENCE) && q->reads)
		return false;
	if (vhca_wr_is(w->opcode, VHCA_OPF_LOCAL))
		return q->cons == q->next;
	return true;
}

/*
 * A local operation (@status IB_WC_SUCCESS: it runs here), or a WQE that
 * failed before it left (@status says how), from @src at @slot: done here,
 * with nothing on the wire before it.  A rendezvous's READ whose tag's
 * buffer went meanwhile fails the tag.
 */
static void vhca_req_local(struct vhca_qp *qp, struct vhca_swqe *w, u8 src,
			   u32 slot, int status)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);

	if (status == IB_WC_SUCCESS)
		status = vhca_wqe_local(vdev, qp, w);
	vhca_req_next(qp, src);
	qp->req.cons++;
	if (src != VHCA_REQ_RING) {
		vhca_tm_job_done(qp, src == VHCA_REQ_TM_FIN, slot, status);
		vhca_qp_wqe_failed(qp);
		return;
	}
	if (!vhca_sq_retire(qp, w, status, 0))
		vhca_qp_wqe_failed(qp);
}

/*
 * What goes at q->next: what went there before a rewind; else a step of
 * a rendezvous the QP reads, which goes before the send ring's next WQE
 * (if the process posted one: @prod).  Returns false if nothing does.
 */
static bool vhca_req_pick(struct vhca_qp *qp, u32 prod, u8 *src, u32 *slot)
{
	struct vhca_req *q = &qp->req;
	const struct vhca_req_wqe *e = &q->fl[q->next & VHCA_REQ_FL_MASK];
	bool fin;

	if (q->next != q->sent) {
		*src = e->src;
		*slot = e->slot;
		return true;
	}
	if (vhca_tm_job_next(qp, &fin, slot)) {
		*src = fin ? VHCA_REQ_TM_FIN : VHCA_REQ_TM_READ;
		return true;
	}
	*src = VHCA_REQ_RING;
	*slot = q->user;
	return q->user != prod;
}

/* vhca_req_run()'s work, which may leave a packet held back. */
static enum vhca_sq_stop vhca_req_pump(struct vhca_qp *qp, unsigned int *budget)
{
	struct vhca_req *q = &qp->req;
	enum vhca_sq_stop stop = VHCA_SQ_IDLE;
	u32 prod, slot;
	unsigned long timeout;
	struct vhca_swqe *w;
	int status;
	u8 src;

	if (!vhca_sq_producer(qp, q->user, &prod)) {
		vhca_qp_set_error(qp);
		return VHCA_SQ_IDLE;
	}
	/* a partial's rest goes before anything later, in PSN order */
	if (q->partial && q->cons != q->next) {
		vhca_req_continue(qp);
		if (vhca_req_rest(qp))
			stop = VHCA_SQ_BLOCKED;
	}
	while (stop == VHCA_SQ_IDLE && !q->lost) {
		if (q->next - q->cons >= VHCA_REQ_WINDOW) {
			stop = VHCA_SQ_BLOCKED;
			break;
		}
		if (!vhca_req_pick(qp, prod, &src, &slot))
			break;
		if (!*budget) {
			stop = VHCA_SQ_MORE;
			break;
		}
		w = vhca_req_fetch(qp, src, slot);
		if (!vhca_req_may_send(qp, w)) {
			stop = VHCA_SQ_BLOCKED;
			break;
		}
		(*budget)--;
		/* a rendezvous's READ or FIN is the kernel's own: sound */
		status = src == VHCA_REQ_RING ? vhca_wqe_check(qp, w) : 0;
		if (!status && (vhca_wr_op(w->opcode)->flags & VHCA_OPF_LOCAL))
			status = -1;	/* vhca_req_local() runs it */
		else if (!status && src == VHCA_REQ_RING)
			status = vhca_req_prefault(qp, w,
						   vhca_wr_is(w->opcode,
							      VHCA_OPF_RD_ATOMIC));
		if (!status) {
			rcu_read_lock();
			status = vhca_req_send(qp, w, src, slot);
			rcu_read_unlock();
		}
		if (status == IB_WC_SUCCESS) {
			if (vhca_req_rest(qp))
				stop = VHCA_SQ_BLOCKED;	/* ACKs open the window */
			continue;
		}
		/* completes in order: after what is on the wire */
		if (q->cons != q->next) {
			stop = VHCA_SQ_BLOCKED;
			break;
		}
		vhca_req_local(qp, w, src, slot,
			       status < 0 ? IB_WC_SUCCESS : status);
		if (qp->state == IB_QPS_ERR)
			return VHCA_SQ_IDLE;
	}
	/* vhca_comp_run() goes back at once, in the next run */
	if (q->lost)
		stop = VHCA_SQ_MORE;

	/* The timer runs while anything is on the wire, from the last progress. */
	timeout = vhca_qp_timeout_jiffies(qp);
	if (q->cons == q->next)
		timer_delete(&q->timer);
	else if (timeout && (q->moved || !timer_pending(&q->timer)))
		mod_timer(&q->timer, jiffies + timeout);
	q->moved = false;
	if (stop == VHCA_SQ_IDLE && q->cons != q->next)
		stop = VHCA_SQ_BLOCKED;	/* responses will run it again */
	return stop;
}

/**
 * vhca_req_run() - run an RC QP's send ring to another host
 * @qp: the QP, in RTS; caller holds qp->lock
 * @budget: WQEs it may send
 *
 * Sends what is posted as far as the window allows, after the completer
 * took the responses that arrived (vhca_comp_run()): from the oldest WQE
 * not complete again if it rewound.
 *
 * Return: where it stopped; VHCA_SQ_BLOCKED while WQEs wait for
 * responses, which kick the QP's work when they come.
 */
enum vhca_sq_stop vhca_req_run(struct vhca_qp *qp, unsigned int *budget)
{
	enum vhca_sq_stop stop = vhca_req_pump(qp, budget);

	vhca_req_flush(qp, true);	/* the last packet of the run asks */
	vhca_req_set_busy(qp, qp->req.cons != qp->req.next);
	return stop;
}
