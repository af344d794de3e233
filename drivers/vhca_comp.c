// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The completer of an RC QP on the wire: the responses to its requests,
 * as rxe_comp.c takes them.  They arrive in softirq and are queued to
 * the QP (vhca_comp_response()); the QP's work takes them under qp->lock
 * (vhca_comp_run()), before the requester sends anything more.  An ACK
 * completes every SEND and WRITE up to its PSN; a READ or atomic
 * completes with its responses, which are placed into it as they come
 * even while an older one waits (completion is in order), and an ATOMIC
 * WRITE with its response of no bytes or an ACK past it.  A gap in a
 * READ's responses asks for the rest of that READ again, once per gap.
 * A sequence NAK or a timeout goes back to the oldest WQE not complete,
 * for the requester to send from there (a READ or atomic keeps what its
 * responses brought and asks for the rest only), retry_cnt times at most
 * without the oldest WQE moving on; an RNR NAK waits out the responder's
 * timer, rnr_retry times at most; the other NAKs fail the WQE and the
 * QP.  ECN marks on the way halve the requester's window here; ACKs
 * open it again.
 */
#include <linux/skbuff.h>

#include "vhca_wire.h"
#include "vhca_req.h"
#include "vhca_tm.h"

/*
 * An RC response packet (ACK, READ response, atomic ACK) from the wire,
 * in skb->cb while it waits for its QP's work.
 */
struct vhca_comp_cb {
	u32 psn;
	u32 aeth;
	u64 orig;
	u32 off;	/* of the payload, from skb->data */
	u32 len;
	u32 flags;	/* VHCA_PKT_* of its opcode */
};

static_assert(sizeof(struct vhca_comp_cb) <= sizeof_field(struct sk_buff, cb));

static struct vhca_comp_cb *vhca_comp_cb(struct sk_buff *skb)
{
	return (struct vhca_comp_cb *)skb->cb;
}

/* A queue on the way to the responder is filling: send less. */
static void vhca_comp_cwnd_cut(struct vhca_qp *qp)
{
	struct vhca_req *q = &qp->req;

	if (time_before(jiffies, q->cut_next))
		return;
	q->cut_next = jiffies + VHCA_REQ_CUT_GAP;
	q->cwnd_target = q->cwnd;
	q->cwnd = max(q->cwnd / 2, VHCA_REQ_MIN_PKTS);
	q->cwnd_acked = 0;
	vhca_count_qp(qp, VHCA_CNT_WINDOW_CUTS);
}

/* @pkts more packets were acknowledged. */
static void vhca_comp_cwnd_grow(struct vhca_req *q, u32 pkts)
{
	if (q->cwnd >= VHCA_REQ_MAX_PKTS)
		return;
	q->cwnd_acked += pkts;
	if (q->cwnd_acked < q->cwnd)
		return;
	q->cwnd_acked = 0;
	if (q->cwnd_target > q->cwnd)
		q->cwnd += (q->cwnd_target - q->cwnd + 1) / 2;
	else
		q->cwnd = min(q->cwnd + VHCA_REQ_CWND_AI, VHCA_REQ_MAX_PKTS);
}

/*
 * Go back to the oldest WQE not complete and send from there again: from
 * its packet @skip, which the responder expects next (a sequence NAK says
 * so, and a SEND or WRITE goes on where it broke off), or from its start.
 */
static void vhca_comp_rewind(struct vhca_qp *qp, u32 skip)
{
	struct vhca_req *q = &qp->req;
	struct vhca_req_wqe *e = &q->fl[qp->req.cons & VHCA_REQ_FL_MASK];

	if (qp->req.cons == q->next)
		return;
	if (vhca_wr_is(e->opcode, VHCA_OPF_RD_ATOMIC) ||
	    skip >= e->npkts)
		skip = 0;	/* a READ asks again for what it has not got */
	qp->attr.sq_psn = e->psn;
	q->next = qp->req.cons;
	q->reads = 0;
	q->skip = skip;
	q->rewound = true;
	q->partial = false;	/* it goes again from the oldest */
	timer_delete(&q->timer);	/* restarted when they have gone again */
}

/*
 * The oldest WQE on the wire moved on: the retries start again, and so
 * does the timer, which measures how long nothing was answered.
 */
static void vhca_comp_progress(struct vhca_qp *qp)
{
	qp->req.retry_left = qp->attr.retry_cnt;
	/* RNR NAKs too: an ODP responder sends one per fault of a message */
	qp->rnr_left = qp->attr.rnr_retry;
	qp->req.moved = true;
}

/*
 * Complete the oldest WQE on the wire: a ring's slot goes back to the
 * poster; a rendezvous's READ completes its tag, and its FIN its job.
 */
static void vhca_comp_complete(struct vhca_qp *qp, u8 status)
{
	struct vhca_req_wqe *e = &qp->req.fl[qp->req.cons & VHCA_REQ_FL_MASK];
	struct vhca_swqe w = {
		.wr_id = e->wr_id, .opcode = e->opcode, .flags = e->flags,
	};

	if (vhca_wr_is(e->opcode, VHCA_OPF_RD_ATOMIC))
		qp->req.reads--;
	qp->req.rewound = false;
	vhca_comp_cwnd_grow(&qp->req, e->npkts);
	vhca_comp_progress(qp);
	qp->rnr_left = qp->attr.rnr_retry;
	qp->req.cons++;
	if (e->src != VHCA_REQ_RING) {
		vhca_tm_job_done(qp, e->src == VHCA_REQ_TM_FIN, e->slot, status);
		if (status != IB_WC_SUCCESS)
			vhca_qp_wqe_failed(qp);
		return;
	}
	if (!vhca_sq_retire(qp, &w, status, e->len))
		vhca_qp_wqe_failed(qp);
}

/*
 * Place one READ response packet (or an atomic's original value) into the
 * local SGEs of the WQE on the wire numbered @idx, at @off.  An ODP page
 * gone since the WQE left is faulted in here, in process context.
 * Returns false if the WQE no longer describes memory that can take it
 * (the process rewrote its ring or its tag's buffer, a key of it was
 * invalidated meanwhile, or a page cannot be had).
 */
static bool vhca_comp_place(struct vhca_qp *qp, u32 idx, const u8 *data,
			    u32 off, u32 len)
{
	const struct vhca_req_wqe *e = &qp->req.fl[idx & VHCA_REQ_FL_MASK];
	struct vhca_seg src_seg = { .kbuf = data, .len = len };
	struct vhca_swqe *w = vhca_req_fetch(qp, e->src, e->slot);
	struct vhca_odp_retry *r = &qp->exec.odp;
	struct vhca_fault f;
	unsigned int ns;
	int lost;
	s64 room;

	for (;;) {
		lost = 1;
		rcu_read_lock();
		room = vhca_req_source(qp, e->src, w, qp->seg, &ns,
				       IB_ACCESS_LOCAL_WRITE | VHCA_FIND_ODP);
		if (room >= 0 && !(w->flags & VHCA_SWQE_F_INLINE) &&
		    off + len <= room)
			lost = vhca_copy_held(qp->seg, ns, off, &src_seg, 1, 0,
					      len, &f);
		if (lost == VHCA_COPY_FAULT && vhca_odp_miss(r, &f)) {
			rcu_read_unlock();
			vhca_odp_resolve(r);
			continue;
		}
		rcu_read_unlock();
		break;
	}
	vhca_odp_retry_reset(r);
	return !lost;
}

/* A NAK's code as the requester's completion status. */
static u8 vhca_comp_nak_status(u8 code)
{
	switch (code) {
	case VHCA_NAK_REM_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case VHCA_NAK_REM_OP:
		return IB_WC_REM_OP_ERR;
	default:
		return IB_WC_REM_INV_REQ_ERR;
	}
}

/*
 * An RNR NAK: wait out the responder's timer, then send from the NAKed
 * packet (@skip of the oldest WQE's are received: an ODP responder NAKs a
 * packet in the middle of a message that found a page missing).  Returns
 * true if the QP waits, false if it failed instead.
 */
static bool vhca_comp_rnr(struct vhca_qp *qp, u8 timer, u32 skip)
{
	if (qp->attr.rnr_retry != 7 && !qp->rnr_left--) {
		vhca_comp_complete(qp, IB_WC_RNR_RETRY_EXC_ERR);
		return false;
	}
	vhca_comp_rewind(qp, skip);	/* which stops the timer */
	vhca_req_set_busy(qp, false);	/* nothing is on the wire now */
	vhca_qp_kick_after(qp, timer);
	return true;
}

/*
 * A sequence NAK (@skip: the packets of the oldest WQE before the PSN it
 * names) or a timeout (0): send again from the oldest WQE not complete,
 * or fail it when the retries are spent.
 */
static void vhca_comp_retry(struct vhca_qp *qp, u32 skip)
{
	if (qp->req.cons == qp->req.next)
		return;
	if (!qp->req.retry_left) {
		vhca_comp_complete(qp, IB_WC_RETRY_EXC_ERR);
		return;
	}
	qp->req.retry_left--;
	vhca_comp_rewind(qp, skip);
}

/*
 * After a timeout: the packets of the oldest WQE that an ACK or NAK said
 * the responder has, up to the one at q->acked (a NAK's PSN is the one it
 * misses; an ACK's goes again as a harmless duplicate).  A long SEND or
 * WRITE goes on from there instead of from its first packet.
 */
static u32 vhca_comp_acked_skip(struct vhca_qp *qp)
{
	const struct vhca_req *q = &qp->req;
	s32 d;

	if (qp->req.cons == q->next)
		return 0;
	d = vhca_psn_diff(q->acked, q->fl[qp->req.cons & VHCA_REQ_FL_MASK].psn);
	return d > 0 ? d : 0;	/* vhca_comp_rewind() checks it against the WQE */
}

/* Whether @psn is one of @e's. */
static bool vhca_comp_owns(const struct vhca_req_wqe *e, u32 psn)
{
	s32 d = vhca_psn_diff(psn, e->psn);

	return d >= 0 && d < e->npkts;
}

/*
 * Complete, in order, what the responder has answered up to @psn: SENDs
 * and WRITEs before it (@through: and the one ending at it), READs and
 * atomics whose responses are all in.  Returns the oldest WQE left on the
 * wire, or NULL.
 */
static struct vhca_req_wqe *vhca_comp_advance(struct vhca_qp *qp, u32 psn,
					      bool through)
{
	struct vhca_req_wqe *e;
	s32 d;

	while (qp->req.cons != qp->req.next && qp->state != IB_QPS_ERR) {
		e = &qp->req.fl[qp->req.cons & VHCA_REQ_FL_MASK];
		d = vhca_psn_diff(psn, e->psn + e->npkts - 1);
		/*
		 * An ATOMIC WRITE or FLUSH returns nothing: an ACK of it, or
		 * of anything after it, says it is done, as for a WRITE.
		 */
		if (vhca_wr_is(e->opcode, VHCA_OPF_EMPTY_RESP) &&
		    (d > 0 || (!d && through)))
			e->got = e->npkts;
		if (vhca_wr_is(e->opcode, VHCA_OPF_RD_ATOMIC)) {
			if (e->got < e->npkts)
				return e;
		} else if (d < 0 || (!d && !through)) {
			return e;
		}
		vhca_comp_complete(qp, e->status);
	}
	return NULL;
}

/*
 * Whether an ACK or NAK naming @psn may be for this requester: not beyond
 * the latest PSN it sent.  One beyond (a stale packet for an earlier QP of
 * this number, which real HCAs avoid by not reusing numbers at once, or a
 * forged one) would complete WQEs that never reached the responder, and
 * take them off the wire for good.  Behind is harmless: what it speaks of
 * is complete.
 */
static bool vhca_comp_psn_sent(struct vhca_qp *qp, u32 psn)
{
	const struct vhca_req *q = &qp->req;
	/* the latest PSN sent, even after a rewind; not a partial's rest */
	u32 last = q->sent == qp->req.cons ? qp->attr.sq_psn - 1 :
		   q->psn_high - 1;

	return vhca_psn_diff(psn, last & VHCA_BTH_PSN_MASK) <= 0;
}

/* The number of the WQE on the wire that @psn is one of, or -1. */
static s64 vhca_comp_find(struct vhca_qp *qp, u32 psn)
{
	u32 idx;

	for (idx = qp->req.cons; idx != qp->req.next; idx++)
		if (vhca_comp_owns(&qp->req.fl[idx & VHCA_REQ_FL_MASK], psn))
			return idx;
	return -1;
}

/*
 * A READ response packet went missing (a later one came): ask for the
 * rest of the READ again, from the first byte not placed.  The responder
 * answers it as a duplicate.  Once per gap, so the later packets still
 * on their way do not each ask again.
 */
static void vhca_comp_read_rest(struct vhca_qp *qp, struct vhca_req_wqe *e)
{
	e->asked = e->got;
	vhca_count_qp(qp, VHCA_CNT_READ_REASKS);
	vhca_req_ask_read(qp, e, vhca_req_fetch(qp, e->src, e->slot));
}

/*
 * A READ response packet: placed into its READ, which need not be the
 * oldest.  Returns false if its PSN is no READ's on the wire: then it is
 * no response at all, and acknowledges nothing.
 */
static bool vhca_comp_read_resp(struct vhca_qp *qp, struct sk_buff *skb)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_comp_cb *cb = vhca_comp_cb(skb);
	u32 mtu = vhca_qp_mtu(vdev, qp);
	bool end = cb->flags & VHCA_PKT_LAST;
	struct vhca_req_wqe *e;
	s64 idx = vhca_comp_find(qp, cb->psn);
	u32 off;
	s32 d;

	if (idx < 0) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_UNEXPECTED);
		return false;
	}
	e = &qp->req.fl[idx & VHCA_REQ_FL_MASK];
	if (vhca_wr_is(e->opcode, VHCA_OPF_EMPTY_RESP) && !cb->len &&
	    (cb->flags & VHCA_PKT_FIRST) && end) {
		e->got = e->npkts;	/* the response of no bytes it earns */
		return true;
	}
	if (!vhca_wr_is(e->opcode, VHCA_OPF_READ)) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_UNEXPECTED);
		return false;
	}
	d = vhca_psn_diff(cb->psn, e->psn + e->got);
	if (d < 0)
		return true;	/* a duplicate: placed already */
	if (d > 0) {
		if (e->asked != e->got)
			vhca_comp_read_rest(qp, e);
		return true;
	}
	off = e->got * mtu;
	if (end ? off + cb->len != e->len || e->got != e->npkts - 1 :
		  cb->len != mtu || e->got == e->npkts - 1) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_BAD_HDR);
		return false;
	}
	if (cb->len && !vhca_comp_place(qp, idx, skb->data + cb->off, off,
					cb->len)) {
		/* the process rewrote its READ's SGEs: it fails */
		e->status = IB_WC_LOC_PROT_ERR;
		e->got = e->npkts;
		return true;
	}
	e->got++;
	/*
	 * Progress, if the oldest WQE made it: a younger READ answered while
	 * the oldest never is must not keep the retries going for good.
	 */
	if (idx == qp->req.cons)
		vhca_comp_progress(qp);
	return true;
}

/* An atomic ACK: the original value goes into its atomic's one SGE. */
static void vhca_comp_atomic_ack(struct vhca_qp *qp,
				 const struct vhca_comp_cb *cb)
{
	s64 idx = vhca_comp_find(qp, cb->psn);
	struct vhca_req_wqe *e;
	u8 orig[8];

	e = idx < 0 ? NULL : &qp->req.fl[idx & VHCA_REQ_FL_MASK];
	if (!e || !vhca_wr_is(e->opcode, VHCA_OPF_ATOMIC)) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_UNEXPECTED);
		return;
	}
	if (!e->got) {
		/* the requester's memory order is the host's */
		memcpy(orig, &cb->orig, sizeof(orig));
		if (!vhca_comp_place(qp, idx, orig, 0, sizeof(orig)))
			e->status = IB_WC_LOC_PROT_ERR;
		e->got = 1;
	}
	vhca_comp_advance(qp, cb->psn, false);
}

/*
 * Act on one response from the wire.  Returns true if the QP must wait
 * (an RNR NAK).  Caller holds qp->lock.
 */
static bool vhca_comp_handle(struct vhca_qp *qp, struct sk_buff *skb)
{
	struct vhca_comp_cb *cb = vhca_comp_cb(skb);
	u8 syn = cb->aeth >> 24, type = syn & VHCA_AETH_TYPE_MASK;
	struct vhca_req_wqe *e;

	if (cb->flags & VHCA_PKT_PAYLOAD) {
		/*
		 * A READ response acknowledges the requests before it, as an
		 * ACK would: only one for a READ of ours may complete them.
		 */
		if (vhca_comp_read_resp(qp, skb))
			vhca_comp_advance(qp, cb->psn, false);
		return false;
	}
	if (cb->flags & VHCA_PKT_ATMACK) {
		vhca_comp_atomic_ack(qp, cb);
		return false;
	}

	if (!vhca_comp_psn_sent(qp, cb->psn)) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_UNEXPECTED);
		return false;
	}
	/*
	 * An ACK or a NAK: everything before its PSN has arrived.  If that
	 * is further than before, the responder made progress, even inside
	 * one long WQE: the retries start again.
	 */
	if (qp->req.cons != qp->req.next &&
	    vhca_psn_diff(cb->psn, qp->req.acked) > 0) {
		qp->req.acked = cb->psn;
		vhca_comp_progress(qp);
	}
	if (type == VHCA_AETH_ACK) {
		vhca_comp_advance(qp, cb->psn, true);
		return false;
	}
	e = vhca_comp_advance(qp, cb->psn, false);
	if (!e || !vhca_comp_owns(e, cb->psn))
		return false;	/* stale, or behind a READ still coming */
	if (type == VHCA_AETH_RNR_NAK) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_RNR_NAKS);
		return vhca_comp_rnr(qp, syn, vhca_psn_diff(cb->psn, e->psn));
	}
	if (type != VHCA_AETH_NAK)
		return false;	/* reserved */
	if ((syn & 0x1f) == VHCA_NAK_PSN_SEQ) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_SEQ_NAKS);
		vhca_comp_retry(qp, vhca_psn_diff(cb->psn, e->psn));
	} else {
		vhca_comp_complete(qp, vhca_comp_nak_status(syn & 0x1f));
	}
	return false;
}

/*
 * The RC QP or XRC INI whose requester a response or CNP with @bth is
 * for, or NULL (counted) if there is none that takes it.  Under
 * rcu_read_lock().
 */
static struct vhca_qp *vhca_comp_requester(struct vhca_dev *vdev,
					   const struct vhca_bth *bth)
{
	struct vhca_qp *qp;

	qp = xa_load(&vdev->qp_xa, ntohl(bth->qpn) & VHCA_BTH_QPN_MASK);
	/* an XRC TGT QP only receives: it has nothing to complete */
	if (!qp || !qp->req.fl || qp->ibqp.qp_type == IB_QPT_XRC_TGT ||
	    READ_ONCE(qp->state) == IB_QPS_RESET) {
		vhca_count(vdev, VHCA_CNT_RCVD_NO_QP);
		return NULL;
	}
	return qp;
}

/**
 * vhca_comp_response() - an RC response from the wire
 * @vdev: the device it arrived on
 * @skb: the packet, linear, its ICRC checked
 * @bth: its BTH
 * @pkt: its opcode's VHCA_PKT_* flags: a response's
 * @ce: a queue on the way marked it Congestion Experienced
 *
 * Queued for the QP's work with what its headers say in skb->cb.  Softirq
 * context, under rcu_read_lock().  A marked READ response is congestion
 * on the way that the requester's own window controls: the work cuts it,
 * with no CNP.
 *
 * Return: true if the skb was taken, false to have the caller drop it
 * (counted here).
 */
bool vhca_comp_response(struct vhca_dev *vdev, struct sk_buff *skb,
			const struct vhca_bth *bth, u32 pkt, bool ce)
{
	struct vhca_comp_cb cb = { .flags = pkt };
	const u8 *p = (const u8 *)(bth + 1);
	struct vhca_qp *qp;

	if (!vhca_pkt_bounds(skb, bth, pkt, &cb.off, &cb.len))
		goto bad;
	if (pkt & VHCA_PKT_AETH) {
		cb.aeth = get_unaligned_be32(p);
		p += sizeof(struct vhca_aeth);
	}
	if (pkt & VHCA_PKT_ATMACK)
		cb.orig = get_unaligned_be64(p);
	cb.psn = ntohl(bth->apsn) & VHCA_BTH_PSN_MASK;

	qp = vhca_comp_requester(vdev, bth);
	if (!qp)
		return false;
	/* an RC response for an RC QP, an XRC one for an XRC INI */
	if ((bth->opcode & VHCA_OP_CLASS_MASK) != vhca_qp_class(qp)) {
		vhca_count(vdev, VHCA_CNT_RCVD_NO_QP);
		return false;
	}
	if (skb_queue_len_lockless(&qp->req.rxq) >= VHCA_REQ_RXQ_MAX) {
		/* the work is that far behind: lost, and asked for again */
		vhca_count_qp(qp, VHCA_CNT_RCVD_QUEUE_FULL);
		return false;
	}
	vhca_count_qp(qp, VHCA_CNT_RCVD_PKTS);
	*vhca_comp_cb(skb) = cb;
	if (ce)
		WRITE_ONCE(qp->req.congested, true);
	skb_queue_tail(&qp->req.rxq, skb);
	vhca_qp_kick(qp);
	return true;
bad:
	vhca_count(vdev, VHCA_CNT_RCVD_BAD_HDR);
	return false;
}

/**
 * vhca_comp_cnp() - a congestion notification from the wire
 * @vdev: the device it arrived on
 * @skb: the packet, linear, its ICRC checked; the caller frees it
 * @bth: its BTH, whose DestQP is the RC QP whose requests were marked
 *
 * The QP's work cuts its window.  Softirq context, under rcu_read_lock().
 *
 * Return: false if it is malformed (the caller counts it).
 */
bool vhca_comp_cnp(struct vhca_dev *vdev, struct sk_buff *skb,
		   const struct vhca_bth *bth)
{
	struct vhca_qp *qp;
	bool on_path;

	if (skb->len < sizeof(struct udphdr) + sizeof(*bth) + VHCA_CNP_LEN +
		       VHCA_ICRC_SIZE)
		return false;
	qp = vhca_comp_requester(vdev, bth);
	if (!qp) {
		vhca_count(vdev, VHCA_CNT_RCVD_PKTS);
		return true;
	}
	vhca_count_qp(qp, VHCA_CNT_RCVD_PKTS);
	spin_lock(&qp->resp.lock);	/* the AV's */
	on_path = vhca_net_on_path(skb, &qp->av, &qp->sgid);
	spin_unlock(&qp->resp.lock);
	if (!on_path) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_OFF_PATH);
		return true;
	}
	vhca_count_qp(qp, VHCA_CNT_RCVD_CNPS);
	WRITE_ONCE(qp->req.congested, true);
	vhca_qp_kick(qp);
	return true;
}

/**
 * vhca_comp_run() - take an RC QP's responses, and its timeout
 * @qp: the QP, in RTS; caller holds qp->lock
 * @stop: where the send ring stops, if it does here
 *
 * Before the requester sends: what the responses complete frees room in
 * the window, and a timeout or sequence NAK rewinds it.
 *
 * Return: true if the requester may send; false if the QP went to the
 * error state (*@stop VHCA_SQ_IDLE) or waits out an RNR NAK
 * (VHCA_SQ_WAIT).
 */
bool vhca_comp_run(struct vhca_qp *qp, enum vhca_sq_stop *stop)
{
	struct vhca_req *q = &qp->req;
	struct sk_buff *skb;

	*stop = VHCA_SQ_IDLE;
	while ((skb = skb_dequeue(&q->rxq))) {
		bool wait = false;

		/* the AV is written under qp->lock too: checked here */
		if (vhca_net_on_path(skb, &qp->av, &qp->sgid))
			wait = vhca_comp_handle(qp, skb);
		else
			vhca_count_qp(qp, VHCA_CNT_RCVD_OFF_PATH);

		consume_skb(skb);
		if (qp->state == IB_QPS_ERR)
			return false;	/* and flushed */
		if (wait) {
			*stop = VHCA_SQ_WAIT;
			return false;
		}
	}
	/*
	 * The rest of a message was lost to a page that cannot be had: what
	 * went of it asked for no ACK, and the timer would spend a retry (or
	 * end in RETRY_EXC_ERR).  Going back now, the oldest WQE's resend
	 * fails that one, after what is before it (vhca_req_pump()).
	 */
	if (q->lost) {
		q->lost = false;
		vhca_comp_rewind(qp, vhca_comp_acked_skip(qp));
	}
	if (READ_ONCE(q->congested)) {
		WRITE_ONCE(q->congested, false);
		vhca_comp_cwnd_cut(qp);
	}
	if (READ_ONCE(q->timed_out)) {
		WRITE_ONCE(q->timed_out, false);
		if (qp->req.cons != q->next)
			vhca_count_qp(qp, VHCA_CNT_RETRANS_TIMEOUTS);
		vhca_comp_retry(qp, vhca_comp_acked_skip(qp));
		if (qp->state == IB_QPS_ERR)
			return false;
	}
	return true;
}
