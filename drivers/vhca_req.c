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
 * sq_cons up to req.next are on the wire, at most VHCA_RC_WINDOW of them.
 * What the requester needs to complete them is kept in req.fl; to send
 * one again, or to place a READ response, its slot is copied out of the
 * ring and checked again, like any WQE.
 *
 * Responses arrive in softirq and are queued to the QP (vhca_req_response);
 * the QP's work takes them under qp->lock, completes WQEs in order and
 * then sends what it may.  An ACK completes every SEND and WRITE up to its
 * PSN; a READ or atomic completes with its responses, which are placed
 * into it as they come even while an older one waits (completion is in
 * order), and an ATOMIC WRITE with its response of no bytes or an ACK
 * past it.  A gap in a READ's responses asks for the rest of that READ
 * again, once per gap.  A sequence NAK or a
 * timeout goes back to the oldest WQE not complete and sends from there
 * (a READ or atomic keeps what its responses brought and asks for the
 * rest only), retry_cnt times at most without the oldest WQE moving on;
 * an RNR NAK waits out the responder's timer, rnr_retry times at most;
 * the other NAKs fail the WQE and the QP.
 */

#include "vhca.h"

/*
 * WQEs an RC requester has on the wire at once: a power of two, and more
 * than the 128 that perftest keeps posted, so small messages are bounded
 * by VHCA_RC_MAX_PKTS, not by this.
 */
#define VHCA_RC_WINDOW		256

#define VHCA_RC_FL_MASK		(VHCA_RC_WINDOW - 1)
/*
 * Packets on the wire at most for one QP, unless one WQE has more.  After
 * a loss go-back-N sends them all again, so this is what a loss can cost;
 * RoCE runs on lossless Ethernet, where the bound is what keeps the path
 * full: the smallest bound at which WRITEs moved as much as with larger
 * ones, below where the sender's own qdisc began to drop
 * (bench/RESULTS.md, "Bounds on packets in flight").
 */
#define VHCA_RC_MAX_PKTS	512
/*
 * The same for all of a device's RC QPs together, split evenly among
 * those with requests on the wire (vhca_req_max_pkts()): the packets wait
 * in one qdisc, whichever QP sent them, and with VHCA_RC_MAX_PKTS each,
 * four or eight QPs overflowed it.  The largest bound with which several
 * QPs lost nothing.  A queue drains so many packets or so many bytes a
 * second, whichever runs out first, so the bound is in bytes too, for
 * jumbo frames (bench/RESULTS.md, "Bounds on packets in flight").
 */
#define VHCA_RC_DEV_PKTS	1024
#define VHCA_RC_DEV_BYTES	(2 * 1024 * 1024)
/* A QP's share never goes below this, however many QPs are busy. */
#define VHCA_RC_MIN_PKTS	16
/*
 * Congestion (ECN): a CNP from the responder, or a READ response that a
 * queue on the way marked, halves the QP's window, down to
 * VHCA_RC_MIN_PKTS, at most once per VHCA_RC_CUT_GAP: a queue's AQM
 * (CoDel's interval is 100 ms) marks again while the packets sent before
 * the cut drain.  For each window's worth of packets acknowledged after
 * that, the window climbs half the way back to what it was before the
 * cut, then on by VHCA_RC_CWND_AI packets a window, as DCQCN's fast
 * recovery and additive increase do with a rate.
 */
#define VHCA_RC_CUT_GAP		(HZ / 10)
#define VHCA_RC_CWND_AI		8
/*
 * A request packet asks for an ACK at least this often.  The last packet
 * sent in a run of the send ring asks too: the responder ACKs only what
 * is asked for (the IBA lets it coalesce the rest), so a stream of small
 * messages is not answered packet by packet, and nothing waits for an
 * ACK that was not asked for.
 */
#define VHCA_RC_ACKREQ_EVERY	32
/* Responses one QP may have waiting for its work. */
#define VHCA_RC_RXQ_MAX		1024

/*
 * The same for a UC QP's SENDs and WRITEs: UC has no ACK to pace it, and
 * a 16 MiB message sent as fast as the engine builds its packets lost
 * some to the sender's own CoDel, which loses the whole message.  It also
 * bounds what one run of the send ring sends of a WQE.
 */
#define VHCA_UC_INFLIGHT	512

/* What an RC requester remembers of a WQE on the wire. */
struct vhca_req_wqe {
	u64 wr_id;
	u32 psn;	/* of its first packet */
	u32 npkts;	/* PSNs it takes: a READ's are its responses' */
	u32 got;	/* response packets placed so far */
	u32 asked;	/* @got when the rest of a READ was asked for again */
	u32 len;
	u8 opcode;
	u8 flags;
	u8 status;	/* what it completes with once answered */
};

/*
 * An RC response packet (ACK, READ response, atomic ACK) from the wire,
 * in skb->cb while it waits for its QP's work.
 */
struct vhca_req_cb {
	u32 psn;
	u32 aeth;
	u64 orig;
	u32 off;	/* of the payload, from skb->data */
	u32 len;
	u32 flags;	/* VHCA_PKT_* of its opcode */
};

static_assert((VHCA_RC_WINDOW & VHCA_RC_FL_MASK) == 0);
static_assert(sizeof(struct vhca_req_cb) <= sizeof_field(struct sk_buff, cb));

static struct vhca_req_cb *vhca_req_cb(struct sk_buff *skb)
{
	return (struct vhca_req_cb *)skb->cb;
}

static void vhca_req_cwnd_reset(struct vhca_req *q)
{
	q->cwnd = VHCA_RC_MAX_PKTS;
	q->cwnd_target = VHCA_RC_MAX_PKTS;
	q->cwnd_acked = 0;
	q->cut_next = jiffies;
	WRITE_ONCE(q->congested, false);
}

/* A queue on the way to the responder is filling: send less. */
static void vhca_req_cwnd_cut(struct vhca_qp *qp)
{
	struct vhca_req *q = &qp->req;

	if (time_before(jiffies, q->cut_next))
		return;
	q->cut_next = jiffies + VHCA_RC_CUT_GAP;
	q->cwnd_target = q->cwnd;
	q->cwnd = max(q->cwnd / 2, VHCA_RC_MIN_PKTS);
	q->cwnd_acked = 0;
	vhca_count_qp(qp, VHCA_CNT_WINDOW_CUTS);
}

/* @pkts more packets were acknowledged. */
static void vhca_req_cwnd_grow(struct vhca_req *q, u32 pkts)
{
	if (q->cwnd >= VHCA_RC_MAX_PKTS)
		return;
	q->cwnd_acked += pkts;
	if (q->cwnd_acked < q->cwnd)
		return;
	q->cwnd_acked = 0;
	if (q->cwnd_target > q->cwnd)
		q->cwnd += (q->cwnd_target - q->cwnd + 1) / 2;
	else
		q->cwnd = min(q->cwnd + VHCA_RC_CWND_AI, VHCA_RC_MAX_PKTS);
}

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
	qp->req.fl = kvcalloc(VHCA_RC_WINDOW, sizeof(*qp->req.fl),
			      GFP_KERNEL_ACCOUNT);
	if (!qp->req.fl)
		return -ENOMEM;
	timer_setup(&qp->req.timer, vhca_req_timer, 0);
	skb_queue_head_init(&qp->req.rxq);
	vhca_req_cwnd_reset(&qp->req);
	return 0;
}

/* Count @qp in or out of its device's RC QPs with requests on the wire. */
static void vhca_req_set_busy(struct vhca_qp *qp, bool busy)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);

	if (qp->req.busy == busy)
		return;
	qp->req.busy = busy;
	if (busy)
		atomic_inc(&vdev->rc_busy);
	else
		atomic_dec(&vdev->rc_busy);
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
	u32 dev = min(VHCA_RC_DEV_PKTS, VHCA_RC_DEV_BYTES / mtu);

	return clamp_t(u32, dev / max(busy, 1), VHCA_RC_MIN_PKTS,
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
}

/**
 * vhca_req_reset() - forget what was on the wire
 * @qp: the QP, its send ring just flushed or reset; caller holds qp->lock
 */
void vhca_req_reset(struct vhca_qp *qp)
{
	qp->req.next = qp->sq_cons;
	qp->req.sent = qp->sq_cons;
	qp->req.reads = 0;
	qp->req.skip = 0;
	qp->req.rewound = false;
	qp->req.partial = false;
	qp->req.retry_left = qp->attr.retry_cnt;
	WRITE_ONCE(qp->req.timed_out, false);
	qp->req.moved = false;
	timer_delete(&qp->req.timer);
	skb_queue_purge(&qp->req.rxq);
	kfree_skb(qp->req.held);
	qp->req.held = NULL;
	vhca_req_set_busy(qp, false);
	vhca_req_cwnd_reset(&qp->req);
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
 * Every VHCA_RC_ACKREQ_EVERY-th packet asks for an ACK.  A message's last
 * packet that does not is held back until the next packet goes, or until
 * vhca_req_run() ends and it asks.
 */
static void vhca_req_xmit(struct vhca_qp *qp, struct sk_buff *skb, bool last)
{
	vhca_req_flush(qp, false);
	if (++qp->req.unacked >= VHCA_RC_ACKREQ_EVERY) {
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
	if (vhca_wqe_source(vdev, qp, w, qp->seg, &ns, 0) != len)
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
 * VHCA_REQ_YIELD packets the CPU may go to another task.  Process
 * context, under rcu_read_lock().
 *
 * Return: the first packet not sent, to go on from later; the message's
 * count of packets (vhca_req_npkts()) once it is all gone or lost.
 */
static u32 vhca_req_packets(struct vhca_dev *vdev, struct vhca_qp *qp,
			    const struct vhca_swqe *w,
			    struct vhca_cursor *src, u32 len, u32 psn,
			    u32 from, u32 max)
{
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	bool write = vhca_wr_is(w->opcode, VHCA_OPF_WRITE);
	bool imm = vhca_wr_is(w->opcode, VHCA_OPF_IMM);
	bool inv = vhca_wr_is(w->opcode, VHCA_OPF_INV);
	u32 mtu = vhca_qp_mtu(vdev, qp), npkts = vhca_req_npkts(vdev, qp, len);
	struct vhca_tx_hdr h = {
		.dqpn = qp->attr.dest_qp_num,
		.va = w->rdma.remote_addr,
		.rkey = w->rdma.rkey,
		.dmalen = len,
		.imm = inv ? cpu_to_be32(w->ex) : (__force __be32)w->ex,
	};
	struct vhca_cursor dst;
	struct vhca_seg out;
	struct sk_buff *skb;
	u32 i, n, off, end;

	/* the process may have rewritten the WQE to fewer bytes meanwhile */
	from = min(from, npkts - 1);
	end = from + min(max, npkts - from);
	off = from * mtu;
	vhca_cursor_skip(src, off);
	for (i = from; i < end; i++) {
		bool first = !i, last = i == npkts - 1;

		if (i != from && !((i - from) % VHCA_REQ_YIELD) &&
		    need_resched() && !vhca_req_yield(vdev, qp, w, src, len, off))
			return npkts;
		n = min(len - off, mtu);
		h.opcode = (rc ? VHCA_OP_RC : VHCA_OP_UC) |
			   vhca_req_op(write, first, last, imm);
		if (inv && last)
			h.opcode = VHCA_OP_RC | (first ? VHCA_OP_SEND_ONLY_INV :
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
		vhca_copy(&dst, src, n);
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
 * system call nor the QP's lock until its last packet.
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

	if (next < npkts) {
		qp->wire_pkt = next;
		return VHCA_PARTIAL;
	}
	qp->wire_pkt = 0;
	qp->attr.sq_psn = (qp->attr.sq_psn + npkts) & VHCA_BTH_PSN_MASK;
	return IB_WC_SUCCESS;
}

/* The retransmission timeout: 4.096 us * 2^timeout, 0 meaning never. */
static unsigned long vhca_req_timeout_jiffies(struct vhca_qp *qp)
{
	u8 t = qp->attr.timeout;

	if (!t)
		return 0;
	/*
	 * Not below 50 ms: a peer under emulation answers that slowly, and
	 * a retransmission it did not need costs a retry.
	 */
	return max(nsecs_to_jiffies(4096ULL << min_t(u8, t, 31)),
		   msecs_to_jiffies(50));
}

/*
 * Go back to the oldest WQE not complete and send from there again: from
 * its packet @skip, which the responder expects next (a sequence NAK says
 * so, and a SEND or WRITE goes on where it broke off), or from its start.
 */
static void vhca_req_rewind(struct vhca_qp *qp, u32 skip)
{
	struct vhca_req *q = &qp->req;
	struct vhca_req_wqe *e = &q->fl[qp->sq_cons & VHCA_RC_FL_MASK];

	if (qp->sq_cons == q->next)
		return;
	if (vhca_wr_is(e->opcode, VHCA_OPF_RD_ATOMIC) ||
	    skip >= e->npkts)
		skip = 0;	/* a READ asks again for what it has not got */
	qp->attr.sq_psn = e->psn;
	q->next = qp->sq_cons;
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
static void vhca_req_progress(struct vhca_qp *qp)
{
	qp->req.retry_left = qp->attr.retry_cnt;
	qp->req.moved = true;
}

/* Complete the oldest WQE on the wire: its slot goes back to the poster. */
static void vhca_req_complete(struct vhca_qp *qp, u8 status)
{
	struct vhca_req_wqe *e = &qp->req.fl[qp->sq_cons & VHCA_RC_FL_MASK];
	struct vhca_swqe w = {
		.wr_id = e->wr_id, .opcode = e->opcode, .flags = e->flags,
	};

	if (vhca_wr_is(e->opcode, VHCA_OPF_RD_ATOMIC))
		qp->req.reads--;
	qp->req.rewound = false;
	vhca_req_cwnd_grow(&qp->req, e->npkts);
	vhca_req_progress(qp);
	qp->rnr_left = qp->attr.rnr_retry;
	vhca_sq_retire(qp, &w, status, e->len);
}

/*
 * Place one READ response packet (or an atomic's original value) into the
 * local SGEs of the WQE at SQ index @idx, at @off.  Returns false if the WQE no longer
 * describes memory that can take it (the process rewrote its ring, or a
 * key of it was invalidated meanwhile).
 */
static bool vhca_req_place(struct vhca_qp *qp, u32 idx, const u8 *data,
			   u32 off, u32 len)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_seg src_seg = { .kbuf = data, .len = len };
	struct vhca_swqe *w = vhca_sq_fetch_at(qp, idx);
	unsigned int ns;
	bool ok = false;
	s64 room;

	rcu_read_lock();
	room = vhca_wqe_source(vdev, qp, w, qp->seg, &ns,
			       IB_ACCESS_LOCAL_WRITE);
	if (room >= 0 && !(w->flags & VHCA_SWQE_F_INLINE) &&
	    off + len <= room)
		ok = !vhca_copy_held(qp->seg, ns, off, &src_seg, 1, 0, len);
	rcu_read_unlock();
	return ok;
}

/* A NAK's code as the requester's completion status. */
static u8 vhca_req_nak_status(u8 code)
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
 * WQE.  Returns true if the QP waits, false if it failed instead.
 */
static bool vhca_req_rnr(struct vhca_qp *qp, u8 timer)
{
	if (qp->attr.rnr_retry != 7 && !qp->rnr_left--) {
		vhca_req_complete(qp, IB_WC_RNR_RETRY_EXC_ERR);
		return false;
	}
	vhca_req_rewind(qp, 0);	/* which stops the timer */
	qp->rnr_wait = true;
	mod_delayed_work(vhca_wq, &qp->sq_work, vhca_rnr_jiffies(timer));
	return true;
}

/*
 * A sequence NAK (@skip: the packets of the oldest WQE before the PSN it
 * names) or a timeout (0): send again from the oldest WQE not complete,
 * or fail it when the retries are spent.
 */
static void vhca_req_retry(struct vhca_qp *qp, u32 skip)
{
	if (qp->sq_cons == qp->req.next)
		return;
	if (!qp->req.retry_left) {
		vhca_req_complete(qp, IB_WC_RETRY_EXC_ERR);
		return;
	}
	qp->req.retry_left--;
	vhca_req_rewind(qp, skip);
}

/*
 * After a timeout: the packets of the oldest WQE that an ACK or NAK said
 * the responder has, up to the one at q->acked (a NAK's PSN is the one it
 * misses; an ACK's goes again as a harmless duplicate).  A long SEND or
 * WRITE goes on from there instead of from its first packet.
 */
static u32 vhca_req_acked_skip(struct vhca_qp *qp)
{
	const struct vhca_req *q = &qp->req;
	s32 d;

	if (qp->sq_cons == q->next)
		return 0;
	d = vhca_psn_diff(q->acked, q->fl[qp->sq_cons & VHCA_RC_FL_MASK].psn);
	return d > 0 ? d : 0;	/* vhca_req_rewind() checks it against the WQE */
}

/* Whether @psn is one of @e's. */
static bool vhca_req_owns(const struct vhca_req_wqe *e, u32 psn)
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
static struct vhca_req_wqe *vhca_req_advance(struct vhca_qp *qp, u32 psn,
					     bool through)
{
	struct vhca_req_wqe *e;
	s32 d;

	while (qp->sq_cons != qp->req.next && qp->state != IB_QPS_ERR) {
		e = &qp->req.fl[qp->sq_cons & VHCA_RC_FL_MASK];
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
		vhca_req_complete(qp, e->status);
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
static bool vhca_req_psn_sent(struct vhca_qp *qp, u32 psn)
{
	const struct vhca_req *q = &qp->req;
	/* the latest PSN sent, even after a rewind; not a partial's rest */
	u32 last = q->sent == qp->sq_cons ? qp->attr.sq_psn - 1 :
		   q->psn_high - 1;

	return vhca_psn_diff(psn, last & VHCA_BTH_PSN_MASK) <= 0;
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

	if (qp->sq_cons != q->next) {
		base = q->fl[qp->sq_cons & VHCA_RC_FL_MASK].psn;
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
	q->partial = next < e->npkts;
	q->tail = next;
}

/* The SQ index of the WQE on the wire that @psn is one of, or -1. */
static s64 vhca_req_find(struct vhca_qp *qp, u32 psn)
{
	u32 idx;

	for (idx = qp->sq_cons; idx != qp->req.next; idx++)
		if (vhca_req_owns(&qp->req.fl[idx & VHCA_RC_FL_MASK], psn))
			return idx;
	return -1;
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
static void vhca_req_ask_read(struct vhca_qp *qp, const struct vhca_req_wqe *e,
			      const struct vhca_swqe *w)
{
	u32 done = e->got * vhca_qp_mtu(to_vdev(qp->ibqp.device), qp);
	struct vhca_tx_hdr h = {
		.opcode = VHCA_OP_RC | VHCA_OP_READ_REQ,
		.dqpn = qp->attr.dest_qp_num,
		.psn = (e->psn + e->got) & VHCA_BTH_PSN_MASK,
		.ackreq = true,
		.has_reth = true,
		.va = w->rdma.remote_addr + done,
		.rkey = w->rdma.rkey,
		.dmalen = e->len - done,
	};

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
		.opcode = VHCA_OP_RC |
			  (aw ? VHCA_OP_ATOMIC_WRITE :
			   cas ? VHCA_OP_CMP_SWAP : VHCA_OP_FETCH_ADD),
		.dqpn = qp->attr.dest_qp_num,
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
 * A READ response packet went missing (a later one came): ask for the
 * rest of the READ again, from the first byte not placed.  The responder
 * answers it as a duplicate.  Once per gap, so the later packets still
 * on their way do not each ask again.
 */
static void vhca_req_read_rest(struct vhca_qp *qp, u32 idx,
			       struct vhca_req_wqe *e)
{
	e->asked = e->got;
	vhca_count_qp(qp, VHCA_CNT_READ_REASKS);
	vhca_req_ask_read(qp, e, vhca_sq_fetch_at(qp, idx));
}

/*
 * A READ response packet: placed into its READ, which need not be the
 * oldest.  Returns false if its PSN is no READ's on the wire: then it is
 * no response at all, and acknowledges nothing.
 */
static bool vhca_req_read_resp(struct vhca_qp *qp, struct sk_buff *skb)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_req_cb *cb = vhca_req_cb(skb);
	u32 mtu = vhca_qp_mtu(vdev, qp);
	bool end = cb->flags & VHCA_PKT_LAST;
	struct vhca_req_wqe *e;
	s64 idx = vhca_req_find(qp, cb->psn);
	u32 off;
	s32 d;

	if (idx < 0) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_UNEXPECTED);
		return false;
	}
	e = &qp->req.fl[idx & VHCA_RC_FL_MASK];
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
			vhca_req_read_rest(qp, idx, e);
		return true;
	}
	off = e->got * mtu;
	if (end ? off + cb->len != e->len || e->got != e->npkts - 1 :
		  cb->len != mtu || e->got == e->npkts - 1) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_BAD_HDR);
		return false;
	}
	if (cb->len && !vhca_req_place(qp, idx, skb->data + cb->off, off,
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
	if (idx == qp->sq_cons)
		vhca_req_progress(qp);
	return true;
}

/* An atomic ACK: the original value goes into its atomic's one SGE. */
static void vhca_req_atomic_ack(struct vhca_qp *qp,
				const struct vhca_req_cb *cb)
{
	s64 idx = vhca_req_find(qp, cb->psn);
	struct vhca_req_wqe *e;
	u8 orig[8];

	e = idx < 0 ? NULL : &qp->req.fl[idx & VHCA_RC_FL_MASK];
	if (!e || !vhca_wr_is(e->opcode, VHCA_OPF_ATOMIC)) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_UNEXPECTED);
		return;
	}
	if (!e->got) {
		/* the requester's memory order is the host's */
		memcpy(orig, &cb->orig, sizeof(orig));
		if (!vhca_req_place(qp, idx, orig, 0, sizeof(orig)))
			e->status = IB_WC_LOC_PROT_ERR;
		e->got = 1;
	}
	vhca_req_advance(qp, cb->psn, false);
}

/*
 * Act on one response from the wire.  Returns true if the QP must wait
 * (an RNR NAK).  Caller holds qp->lock.
 */
static bool vhca_req_handle(struct vhca_qp *qp, struct sk_buff *skb)
{
	struct vhca_req_cb *cb = vhca_req_cb(skb);
	u8 syn = cb->aeth >> 24, type = syn & VHCA_AETH_TYPE_MASK;
	struct vhca_req_wqe *e;

	if (cb->flags & VHCA_PKT_PAYLOAD) {
		/*
		 * A READ response acknowledges the requests before it, as an
		 * ACK would: only one for a READ of ours may complete them.
		 */
		if (vhca_req_read_resp(qp, skb))
			vhca_req_advance(qp, cb->psn, false);
		return false;
	}
	if (cb->flags & VHCA_PKT_ATMACK) {
		vhca_req_atomic_ack(qp, cb);
		return false;
	}

	if (!vhca_req_psn_sent(qp, cb->psn)) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_UNEXPECTED);
		return false;
	}
	/*
	 * An ACK or a NAK: everything before its PSN has arrived.  If that
	 * is further than before, the responder made progress, even inside
	 * one long WQE: the retries start again.
	 */
	if (qp->sq_cons != qp->req.next &&
	    vhca_psn_diff(cb->psn, qp->req.acked) > 0) {
		qp->req.acked = cb->psn;
		vhca_req_progress(qp);
	}
	if (type == VHCA_AETH_ACK) {
		vhca_req_advance(qp, cb->psn, true);
		return false;
	}
	e = vhca_req_advance(qp, cb->psn, false);
	if (!e || !vhca_req_owns(e, cb->psn))
		return false;	/* stale, or behind a READ still coming */
	if (type == VHCA_AETH_RNR_NAK) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_RNR_NAKS);
		return vhca_req_rnr(qp, syn);
	}
	if (type != VHCA_AETH_NAK)
		return false;	/* reserved */
	if ((syn & 0x1f) == VHCA_NAK_PSN_SEQ) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_SEQ_NAKS);
		vhca_req_retry(qp, vhca_psn_diff(cb->psn, e->psn));
	} else {
		vhca_req_complete(qp, vhca_req_nak_status(syn & 0x1f));
	}
	return false;
}

/* The WQE at q->next has gone (again). */
static void vhca_req_next(struct vhca_qp *qp)
{
	struct vhca_req *q = &qp->req;

	q->next++;
	if ((s32)(q->next - q->sent) > 0)
		q->sent = q->next;
}

/*
 * Send WQE @w (SQ index q->next) from its first packet, and remember it.
 * Returns an IB_WC_* status for a WQE that cannot go (it is not sent).
 */
static int vhca_req_send(struct vhca_qp *qp, const struct vhca_swqe *w)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_req_wqe *e = &qp->req.fl[qp->req.next & VHCA_RC_FL_MASK];
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
	struct vhca_cursor src;
	unsigned int ns;
	s64 len = fl ? 0 : sizeof(u64);

	qp->req.skip = 0;
	qp->req.partial = false;	/* until vhca_req_data() says */
	if (!aw && !fl)
		len = vhca_wqe_source(vdev, qp, w, sseg, &ns,
				      rd || at ? IB_ACCESS_LOCAL_WRITE : 0);
	if (len < 0)
		return -len;
	if (at && !fl && len != sizeof(u64))
		return IB_WC_LOC_LEN_ERR;

	/* nothing else on the wire, and not going again: nothing is acked */
	if (qp->req.next == qp->sq_cons && !qp->req.rewound) {
		qp->req.acked = (qp->attr.sq_psn - 1) & VHCA_BTH_PSN_MASK;
		/* nor was anything beyond it ever sent */
		if (qp->req.sent == qp->sq_cons)
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
	};
	if (rd) {
		e->npkts = len ? DIV_ROUND_UP(len, vhca_qp_mtu(vdev, qp)) : 1;
		vhca_req_ask_read(qp, e, w);
	} else if (at) {
		e->npkts = 1;
		vhca_req_ask_one(qp, e, w);
	} else {
		src = (struct vhca_cursor){ .seg = sseg, .nseg = ns };
		e->npkts = vhca_req_npkts(vdev, qp, len);
		vhca_req_data(qp, e, w, &src, min(skip, e->npkts - 1));
	}
sent:
	if (rd || at)
		qp->req.reads++;
	qp->attr.sq_psn = (e->psn + e->npkts) & VHCA_BTH_PSN_MASK;
	vhca_req_next(qp);
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
	struct vhca_req_wqe *e = &q->fl[(q->next - 1) & VHCA_RC_FL_MASK];
	struct vhca_swqe *w;
	struct vhca_cursor src;
	unsigned int ns;
	s64 len = -1;

	if (!vhca_req_room(qp, e->psn + q->tail))
		return true;
	w = vhca_sq_fetch_at(qp, q->next - 1);
	rcu_read_lock();
	if (w->opcode == e->opcode && w->wr_id == e->wr_id &&
	    !vhca_wqe_check(qp, w))
		len = vhca_wqe_source(vdev, qp, w, qp->seg, &ns, 0);
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
 * Whether the WQE at q->next may go now.  A READ or atomic beyond
 * max_rd_atomic, a fenced WQE behind a READ or atomic, and a local
 * operation behind anything wait for what is on the wire.
 */
static bool vhca_req_may_send(struct vhca_qp *qp, const struct vhca_swqe *w)
{
	struct vhca_req *q = &qp->req;

	if (q->next - qp->sq_cons >= VHCA_RC_WINDOW)
		return false;
	/* bounded in packets too: go-back-N sends them all again */
	if (q->next != qp->sq_cons &&
	    vhca_psn_diff(qp->attr.sq_psn,
			  q->fl[qp->sq_cons & VHCA_RC_FL_MASK].psn) >=
	    vhca_req_max_pkts(qp))
		return false;
	if (vhca_wr_is(w->opcode, VHCA_OPF_RD_ATOMIC) &&
	    q->reads >= max_t(u8, qp->attr.max_rd_atomic, 1))
		return false;
	if ((w->flags & VHCA_SWQE_F_FENCE) && q->reads)
		return false;
	if (vhca_wr_is(w->opcode, VHCA_OPF_LOCAL))
		return qp->sq_cons == q->next;
	return true;
}

/*
 * A local operation (@status IB_WC_SUCCESS: it runs here), or a WQE that
 * failed before it left (@status says how): done here.
 */
static void vhca_req_local(struct vhca_qp *qp, struct vhca_swqe *w, int status)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);

	if (status == IB_WC_SUCCESS)
		status = vhca_wqe_local(vdev, qp, w);
	vhca_req_next(qp);
	vhca_sq_retire(qp, w, status, 0);
}

/* vhca_req_run()'s work, which may leave a packet held back. */
static enum vhca_sq_stop vhca_req_pump(struct vhca_qp *qp, unsigned int *budget)
{
	struct vhca_req *q = &qp->req;
	enum vhca_sq_stop stop = VHCA_SQ_IDLE;
	u32 prod;
	unsigned long timeout;
	struct vhca_swqe *w;
	struct sk_buff *skb;
	int status;

	while ((skb = skb_dequeue(&q->rxq))) {
		bool wait = false;

		/* the AV is written under qp->lock too: checked here */
		if (vhca_net_on_path(skb, &qp->av, &qp->sgid))
			wait = vhca_req_handle(qp, skb);
		else
			vhca_count_qp(qp, VHCA_CNT_RCVD_OFF_PATH);

		consume_skb(skb);
		if (qp->state == IB_QPS_ERR)
			return VHCA_SQ_IDLE;	/* and flushed */
		if (wait)
			return VHCA_SQ_WAIT;
	}
	if (READ_ONCE(q->congested)) {
		WRITE_ONCE(q->congested, false);
		vhca_req_cwnd_cut(qp);
	}
	if (READ_ONCE(q->timed_out)) {
		WRITE_ONCE(q->timed_out, false);
		if (qp->sq_cons != q->next)
			vhca_count_qp(qp, VHCA_CNT_RETRANS_TIMEOUTS);
		vhca_req_retry(qp, vhca_req_acked_skip(qp));
		if (qp->state == IB_QPS_ERR)
			return VHCA_SQ_IDLE;
	}

	if (!vhca_sq_producer(qp, q->next, &prod))
		return VHCA_SQ_IDLE;
	/* a partial's rest goes before anything later, in PSN order */
	if (q->partial && qp->sq_cons != q->next && vhca_req_continue(qp))
		stop = VHCA_SQ_BLOCKED;
	while (stop == VHCA_SQ_IDLE && q->next != prod) {
		if (!*budget) {
			stop = VHCA_SQ_MORE;
			break;
		}
		w = vhca_sq_fetch_at(qp, q->next);
		if (!vhca_req_may_send(qp, w)) {
			stop = VHCA_SQ_BLOCKED;
			break;
		}
		(*budget)--;
		status = vhca_wqe_check(qp, w);
		if (!status && (vhca_wr_op(w->opcode)->flags & VHCA_OPF_LOCAL)) {
			status = -1;	/* vhca_req_local() runs it */
		} else if (!status) {
			rcu_read_lock();
			status = vhca_req_send(qp, w);
			rcu_read_unlock();
		}
		if (status == IB_WC_SUCCESS) {
			if (q->partial)
				stop = VHCA_SQ_BLOCKED;	/* ACKs open the window */
			continue;
		}
		/* completes in order: after what is on the wire */
		if (qp->sq_cons != q->next) {
			stop = VHCA_SQ_BLOCKED;
			break;
		}
		vhca_req_local(qp, w, status < 0 ? IB_WC_SUCCESS : status);
		if (qp->state == IB_QPS_ERR)
			return VHCA_SQ_IDLE;
	}

	/* The timer runs while anything is on the wire, from the last progress. */
	timeout = vhca_req_timeout_jiffies(qp);
	if (qp->sq_cons == q->next)
		timer_delete(&q->timer);
	else if (timeout && (q->moved || !timer_pending(&q->timer)))
		mod_timer(&q->timer, jiffies + timeout);
	q->moved = false;
	if (stop == VHCA_SQ_IDLE && qp->sq_cons != q->next)
		stop = VHCA_SQ_BLOCKED;	/* responses will run it again */
	return stop;
}

/**
 * vhca_req_run() - run an RC QP's send ring to another host
 * @qp: the QP, in RTS; caller holds qp->lock
 * @budget: WQEs it may send
 *
 * Takes the responses that arrived, retransmits after a timeout or a
 * sequence NAK, then sends what is posted as far as the window allows.
 *
 * Return: where it stopped; VHCA_SQ_BLOCKED while WQEs wait for
 * responses, which kick the QP's work when they come.
 */
enum vhca_sq_stop vhca_req_run(struct vhca_qp *qp, unsigned int *budget)
{
	enum vhca_sq_stop stop = vhca_req_pump(qp, budget);

	vhca_req_flush(qp, true);	/* the last packet of the run asks */
	vhca_req_set_busy(qp, qp->sq_cons != qp->req.next);
	return stop;
}

/*
 * The RC QP whose requester a response or CNP with @bth is for, or NULL
 * (counted) if there is none that takes it.  Under rcu_read_lock().
 */
static struct vhca_qp *vhca_req_requester(struct vhca_dev *vdev,
					  const struct vhca_bth *bth)
{
	struct vhca_qp *qp;

	qp = xa_load(&vdev->qp_xa, ntohl(bth->qpn) & VHCA_BTH_QPN_MASK);
	if (!qp || !qp->req.fl || READ_ONCE(qp->state) == IB_QPS_RESET) {
		vhca_count(vdev, VHCA_CNT_RCVD_NO_QP);
		return NULL;
	}
	return qp;
}

/**
 * vhca_req_response() - an RC response from the wire
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
bool vhca_req_response(struct vhca_dev *vdev, struct sk_buff *skb,
		       const struct vhca_bth *bth, u32 pkt, bool ce)
{
	struct vhca_req_cb cb = { .flags = pkt };
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

	qp = vhca_req_requester(vdev, bth);
	if (!qp)
		return false;
	if (skb_queue_len_lockless(&qp->req.rxq) >= VHCA_RC_RXQ_MAX) {
		/* the work is that far behind: lost, and asked for again */
		vhca_count_qp(qp, VHCA_CNT_RCVD_QUEUE_FULL);
		return false;
	}
	vhca_count_qp(qp, VHCA_CNT_RCVD_PKTS);
	*vhca_req_cb(skb) = cb;
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
 * vhca_req_cnp() - a congestion notification from the wire
 * @vdev: the device it arrived on
 * @skb: the packet, linear, its ICRC checked; the caller frees it
 * @bth: its BTH, whose DestQP is the RC QP whose requests were marked
 *
 * The QP's work cuts its window.  Softirq context, under rcu_read_lock().
 *
 * Return: false if it is malformed (the caller counts it).
 */
bool vhca_req_cnp(struct vhca_dev *vdev, struct sk_buff *skb,
		  const struct vhca_bth *bth)
{
	struct vhca_qp *qp;
	bool on_path;

	if (skb->len < sizeof(struct udphdr) + sizeof(*bth) + VHCA_CNP_LEN +
		       VHCA_ICRC_SIZE)
		return false;
	qp = vhca_req_requester(vdev, bth);
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
