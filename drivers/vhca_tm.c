// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Tag matching (IBV_SRQT_TM).  A tag-matching SRQ has, besides its ring of
 * receive WQEs, a tag table it shares with its process: the provider adds
 * tags (a buffer, a tag and a mask) and removes them there, with no
 * system call, and completes its list operations itself.  The engine
 * reads the first bytes of each SEND for the SRQ, the tag-matching header
 * (TMH, rdma-core's struct ibv_tmh), and gives an eager message or a
 * rendezvous the posted tag it matches, the one posted first; it takes
 * the tag by compare-and-swap of its state word, so a removal and a
 * message that race for one tag never both have it.  What no tag takes
 * is unexpected, and goes whole into a receive WQE of the SRQ; from then
 * on no tag matches until the provider says it has handled as many
 * unexpected messages as the engine delivered (the phase sync of
 * ibv_post_srq_ops(3)).  A matched rendezvous is read from the sender's
 * buffer into the tag's, by the sender's engine once its SEND completed
 * if the sender is on this host, else by the receiving QP's requester
 * with an RDMA READ; then a FIN message goes back to the sender.  One
 * that is not read is left to software, as tag_matching.md has it for a
 * tag's buffer too small for the data: its headers land in the tag's
 * buffer, which completes IBV_WC_TM_RNDV_INCOMPLETE, and the process
 * reads the data and sends the FIN itself.  Documentation/rings.md has
 * the table's layout and the races.
 *
 * Everything in the table is the process's to write: each tag is copied
 * out before it is used, and its SGEs are looked up like any receive
 * WQE's.  Nothing the process writes there is trusted beyond the
 * process's own buffers.
 */
#include "vhca_tm.h"

/* The TMH's opcodes (rdma-core's enum ibv_tmh_op). */
enum {
	VHCA_TMH_NO_TAG	= 0,
	VHCA_TMH_RNDV	= 1,
	VHCA_TMH_FIN	= 2,
	VHCA_TMH_EAGER	= 3,
};

/*
 * Scans of the table for one message: each one after the first follows
 * a tag that was removed or taken between being found and being taken.
 * The process can keep that up; then the message is unexpected.
 */
#define VHCA_TM_TRIES		8
/* A FIN: the rendezvous's TMH and RVH. */
#define VHCA_TM_FIN_LEN		(VHCA_TMH_LEN + VHCA_RVH_LEN)
/* Bytes of a rendezvous read under one RCU read section, and a run. */
#define VHCA_TM_CHUNK		SZ_1M
#define VHCA_TM_RUN		(4 * VHCA_TM_CHUNK)

static_assert(sizeof(struct vhca_tm_hdr) == VHCA_RING_HDR_SIZE);
static_assert(sizeof(struct vhca_tm_tag) == VHCA_TM_TAG_STRIDE);

static struct vhca_tm_hdr *vhca_tm_hdr(const struct vhca_tm *tm)
{
	return (struct vhca_tm_hdr *)tm->table.hdr;
}

/**
 * vhca_tm_create() - give a new SRQ its tag table
 * @srq: an SRQ being created as IB_SRQT_TM
 * @uctx: its process's context, which maps the table
 * @max_tags: the tags it asked for; it gets a power of two at least
 *
 * Return: 0, -EINVAL for a number out of range, -EOPNOTSUPP for a
 * kernel SRQ (a kernel ULP has no way to post tags), or -ENOMEM.
 */
int vhca_tm_create(struct vhca_srq *srq, struct ib_ucontext *uctx,
		   u32 max_tags)
{
	struct vhca_qgeom g = {
		.log2_stride = ilog2(VHCA_TM_TAG_STRIDE),
		.max_sge = VHCA_TM_MAX_SGE,
	};
	struct vhca_tm *tm;
	int err;

	if (!uctx)
		return -EOPNOTSUPP;
	if (!max_tags || max_tags > VHCA_TM_MAX_TAGS)
		return -EINVAL;
	g.log2_slots = order_base_2(max_tags);
	g.max_wr = 1U << g.log2_slots;
	tm = kzalloc(sizeof(*tm), GFP_KERNEL_ACCOUNT);
	if (!tm)
		return -ENOMEM;
	err = vhca_uring_create(&tm->table, uctx, &g);
	if (err) {
		kfree(tm);
		return err;
	}
	spin_lock_init(&tm->lock);
	tm->ntags = g.max_wr;
	srq->tm = tm;
	return 0;
}

void vhca_tm_destroy(struct vhca_srq *srq)
{
	if (!srq->tm)
		return;
	vhca_uring_destroy(&srq->tm->table);
	kfree(srq->tm);
	srq->tm = NULL;
}

/* Whether a tag of state @a was posted before one of state @b. */
static bool vhca_tm_before(u32 a, u32 b)
{
	return (s32)(((a >> VHCA_TM_SEQ_SHIFT) - (b >> VHCA_TM_SEQ_SHIFT)) <<
		     VHCA_TM_SEQ_SHIFT) < 0;
}

/*
 * Take the tag a message with TMH tag @tag matches: the POSTED one posted
 * first of those whose tag is @tag under their mask.  Its buffer and
 * completion go into @wqe.  Returns 0, -ENOENT if none matches (or the
 * table kept changing), or -EINVAL for a tag taken whose fields cannot
 * be (too many SGEs).  The fields are read after the acquire of the state
 * and before the compare-and-swap, which fails if the process removed the
 * tag, or removed and added it again, in between.
 */
static int vhca_tm_claim(struct vhca_tm *tm, u64 tag, struct vhca_rwqe *wqe)
{
	struct vhca_tm_tag *t, *best;
	u32 st, best_st = 0, i, tries;

	for (tries = 0; tries < VHCA_TM_TRIES; tries++) {
		best = NULL;
		for (i = 0; i < tm->ntags; i++) {
			t = vhca_uring_slot(&tm->table, i);
			/* Acquire pairs with the provider's release of state. */
			st = smp_load_acquire(&t->state);
			if ((st & VHCA_TM_STATE_MASK) != VHCA_TM_POSTED ||
			    (tag & READ_ONCE(t->mask)) != READ_ONCE(t->tag))
				continue;
			if (!best || vhca_tm_before(st, best_st)) {
				best = t;
				best_st = st;
			}
		}
		if (!best)
			return -ENOENT;
		wqe->wr_id = READ_ONCE(best->wr_id);
		wqe->num_sge = READ_ONCE(best->num_sge);
		if (wqe->num_sge <= VHCA_TM_MAX_SGE)
			memcpy(wqe->sge, best->sge,
			       wqe->num_sge * sizeof(*wqe->sge));
		/* fully ordered: the reads above happen before it */
		if (cmpxchg(&best->state, best_st,
			    (best_st & ~VHCA_TM_STATE_MASK) | VHCA_TM_TAKEN) ==
		    best_st)
			return wqe->num_sge <= VHCA_TM_MAX_SGE ? 0 : -EINVAL;
	}
	return -ENOENT;
}

/*
 * What the header @hdr (@avail bytes of it can be read) of a message of
 * @len bytes says it is: an eager message or a rendezvous with their
 * fields in @rx, or one with no tag.  A rendezvous carries its TMH and
 * RVH in VHCA_TM_RNDV_HDR bytes at most, all of them in @hdr.
 */
static void vhca_tm_parse(const u8 *hdr, u32 avail, u32 len,
			  struct vhca_tm_rx *rx)
{
	u8 op = avail >= VHCA_TMH_LEN ? hdr[0] : VHCA_TMH_NO_TAG;

	rx->kind = VHCA_TM_NO_TAG;
	if (op == VHCA_TMH_RNDV &&
	    (len < VHCA_TMH_LEN + VHCA_RVH_LEN || len > VHCA_TM_RNDV_HDR ||
	     avail < len))
		op = VHCA_TMH_NO_TAG;
	if (op != VHCA_TMH_EAGER && op != VHCA_TMH_RNDV)
		return;
	rx->kind = op == VHCA_TMH_EAGER ? VHCA_TM_EAGER : VHCA_TM_RNDV;
	rx->ctx = get_unaligned((const __be32 *)(hdr + 4));
	rx->tag = get_unaligned_be64(hdr + 8);
	if (op == VHCA_TMH_RNDV) {
		rx->va = get_unaligned_be64(hdr + VHCA_TMH_LEN);
		rx->rkey = get_unaligned_be32(hdr + VHCA_TMH_LEN + 8);
		rx->len = get_unaligned_be32(hdr + VHCA_TMH_LEN + 12);
	}
}

/**
 * vhca_tm_take() - where a SEND to a tag-matching SRQ lands
 * @dst: the QP it arrives on, whose SRQ is a tag-matching one
 * @src_qpn: the sender's QP, for a completion in error
 * @hdr: the message's first bytes
 * @avail: how many of them there are (a packet's may be fewer than its
 *	message's VHCA_TM_RNDV_HDR first bytes)
 * @len: the message's length; more than @avail if the rest is to come
 * @wqe: set to where it lands: the buffer of the tag that takes it, or
 *	the SRQ's next receive WQE
 * @rx: set to what its header made of it (struct vhca_tm_rx)
 *
 * An eager message or a rendezvous is matched while the SRQ is in phase:
 * every unexpected message the engine delivered, the provider has said
 * it handled (vhca_tm_hdr.synced).  One no tag takes is unexpected and
 * counted.  Messages for one SRQ are decided one at a time, so each sees
 * the count the one before left.  Caller holds rcu_read_lock().
 *
 * Return: 0; -EAGAIN if the SRQ has no receive WQE for a message no tag
 * takes (nothing was taken or counted); -EINVAL for a malformed tag or
 * WQE, taken and completed here in error.
 */
int vhca_tm_take(struct vhca_qp *dst, u32 src_qpn, const u8 *hdr,
		 u32 avail, u32 len, struct vhca_rwqe *wqe,
		 struct vhca_tm_rx *rx)
{
	struct vhca_tm *tm = to_vsrq(dst->ibqp.srq)->tm;
	unsigned long flags;
	int err = -ENOENT;

	vhca_tm_parse(hdr, avail, len, rx);
	spin_lock_irqsave(&tm->lock, flags);
	if (rx->kind != VHCA_TM_NO_TAG &&
	    READ_ONCE(vhca_tm_hdr(tm)->synced) == tm->unexpected)
		err = vhca_tm_claim(tm, rx->tag, wqe);
	if (err == -ENOENT) {
		err = vhca_recv_take(dst, wqe, src_qpn);
		if (!err && rx->kind != VHCA_TM_NO_TAG) {
			rx->kind = VHCA_TM_UNEXPECTED;
			WRITE_ONCE(vhca_tm_hdr(tm)->unexpected, ++tm->unexpected);
		}
	} else if (err == -EINVAL) {
		vhca_recv_done(dst, wqe->wr_id, IB_WC_LOC_QP_OP_ERR, 0, NULL,
			       src_qpn);
	}
	spin_unlock_irqrestore(&tm->lock, flags);
	return err;
}

/**
 * vhca_tm_lost() - a message a receive WQE was taken for did not land
 * @dst: the QP it was for
 * @rx: what its header made of it
 *
 * Its receive WQE completes in error.  Software counts the unexpected
 * messages it received, and syncs with that count: an unexpected one
 * that failed is no longer counted here either, or the SRQ would never
 * be in phase again.
 */
void vhca_tm_lost(struct vhca_qp *dst, const struct vhca_tm_rx *rx)
{
	struct vhca_tm *tm;
	unsigned long flags;

	if (rx->kind != VHCA_TM_UNEXPECTED || !vhca_tm_srq(dst))
		return;
	tm = to_vsrq(dst->ibqp.srq)->tm;
	spin_lock_irqsave(&tm->lock, flags);
	WRITE_ONCE(vhca_tm_hdr(tm)->unexpected, --tm->unexpected);
	spin_unlock_irqrestore(&tm->lock, flags);
}

/**
 * vhca_tm_rmsg() - what a receive completion of a tag-matching SRQ says
 * @m: the completion's message, to which the tag-matching fields go
 * @rx: what the message's header made of it
 * @data: for a rendezvous, the completion that its data is in (the first
 *	says that a tag took it)
 *
 * The opcode, flags, tag and app_ctx: a matched message's
 * (IBV_WC_TM_RECV with IBV_WC_TM_MATCH, the tag and app_ctx; a
 * rendezvous's second completion IBV_WC_TM_DATA_VALID alone; one left to
 * software MATCH alone, in a completion of vhca_tm_status()), an
 * unexpected one's (IBV_WC_TM_RECV, no flags), or one with no tag
 * (IBV_WC_TM_NO_TAG).
 */
void vhca_tm_rmsg(struct vhca_rmsg *m, const struct vhca_tm_rx *rx,
		  bool data)
{
	m->tm_op = rx->kind == VHCA_TM_NO_TAG ? VHCA_WC_TM_NO_TAG :
						VHCA_WC_TM_RECV;
	if (rx->kind == VHCA_TM_RNDV && data) {
		m->tm_flags = VHCA_CQE_F_TM_DATA;
		return;
	}
	if (rx->kind != VHCA_TM_EAGER && rx->kind != VHCA_TM_RNDV &&
	    rx->kind != VHCA_TM_RNDV_SW)
		return;
	m->tm_flags = VHCA_CQE_F_TM_MATCH |
		      (rx->kind == VHCA_TM_EAGER ? VHCA_CQE_F_TM_DATA : 0);
	m->tm_tag = rx->tag;
	m->tm_ctx = rx->ctx;
}

/**
 * vhca_tm_status() - the status of a message's receive completion
 * @rx: what the message's header made of it
 *
 * Return: IBV_WC_TM_RNDV_INCOMPLETE for a rendezvous left to software,
 * which is not an error: the QP goes on.  Else IB_WC_SUCCESS.
 */
u8 vhca_tm_status(const struct vhca_tm_rx *rx)
{
	return rx->kind == VHCA_TM_RNDV_SW ? VHCA_WC_TM_RNDV_INCOMPLETE :
					     IB_WC_SUCCESS;
}

/*
 * The QP a rendezvous of @qp's arrived on, if it is still there and
 * still @qp's peer on a tag-matching SRQ.  Caller holds rcu_read_lock().
 */
static struct vhca_qp *vhca_tm_rndv_peer(struct vhca_dev *vdev,
					 struct vhca_qp *qp,
					 const struct vhca_tm_rndv *rv)
{
	struct vhca_qp *peer = vhca_qp_find(vdev, rv->peer_dev, rv->peer_qpn);

	if (!peer || !vhca_tm_srq(peer) ||
	    READ_ONCE(peer->attr.dest_qp_num) != qp->ibqp.qp_num)
		return NULL;
	return peer;
}

/*
 * Read @n bytes of @qp's rendezvous @rv from rv->off: from the sender's
 * buffer (@qp's, as an RDMA READ from @peer would find it: remote read
 * access on the QP and through the rkey) into the tag's buffer.  Returns
 * an IB_WC_* status, or VHCA_COPY_FAULT with @f.  Caller holds
 * rcu_read_lock().
 */
static int vhca_tm_rndv_chunk(struct vhca_dev *vdev, struct vhca_qp *qp,
			      struct vhca_qp *peer, struct vhca_tm_rndv *rv,
			      u32 n, struct vhca_fault *f)
{
	struct vhca_dev *pdev = to_vdev(peer->ibqp.device);
	struct vhca_seg dseg[VHCA_TM_MAX_SGE], sseg;
	unsigned int nd;
	struct vhca_mr *mr;
	s64 room;
	int lost;

	if (!(READ_ONCE(qp->attr.qp_access_flags) & IB_ACCESS_REMOTE_READ))
		return IB_WC_REM_ACCESS_ERR;
	mr = vhca_mr_find_remote(vdev, rv->rx.rkey, qp,
				 IB_ACCESS_REMOTE_READ | VHCA_FIND_ODP,
				 rv->rx.va + rv->off, n);
	if (!mr)
		return IB_WC_REM_ACCESS_ERR;
	sseg = (struct vhca_seg){ .mr = mr, .key = rv->rx.rkey,
				  .va = rv->rx.va + rv->off, .len = n };
	room = vhca_sges(pdev, rv->sge, rv->num_sge, vhca_qp_pd(peer),
			 IB_ACCESS_LOCAL_WRITE | VHCA_FIND_ODP, dseg, &nd);
	if (room < 0)
		return IB_WC_LOC_PROT_ERR;
	if (room < rv->rx.len)
		return IB_WC_LOC_LEN_ERR;
	lost = vhca_copy_held(dseg, nd, rv->off, &sseg, 1, 0, n, f);
	if (lost == VHCA_COPY_FAULT)
		return lost;
	return lost ? IB_WC_REM_ACCESS_ERR : IB_WC_SUCCESS;
}

/* A rendezvous's FIN (tag_matching.md): a copy of its TMH and RVH, op FIN. */
static void vhca_tm_fin(u8 *fin, const struct vhca_tm_rx *rx)
{
	memset(fin, 0, VHCA_TM_FIN_LEN);
	fin[0] = VHCA_TMH_FIN;
	memcpy(fin + 4, &rx->ctx, sizeof(rx->ctx));
	put_unaligned_be64(rx->tag, fin + 8);
	put_unaligned_be64(rx->va, fin + VHCA_TMH_LEN);
	put_unaligned_be32(rx->rkey, fin + VHCA_TMH_LEN + 8);
	put_unaligned_be32(rx->len, fin + VHCA_TMH_LEN + 12);
}

/*
 * The FIN of @qp's rendezvous @rv: a copy of its TMH and RVH, opcode FIN
 * (tag_matching.md), into @qp's next receive WQE.  Returns false if none
 * is posted (counted, as a SEND into an empty receive queue is).  Caller
 * holds rcu_read_lock().
 */
static bool vhca_tm_rndv_fin(struct vhca_dev *vdev, struct vhca_qp *qp,
			     struct vhca_qp *peer, struct vhca_tm_rndv *rv)
{
	u8 fin[VHCA_TM_FIN_LEN];
	struct vhca_seg src = { .kbuf = fin, .len = sizeof(fin) }, dseg[VHCA_MAX_SGE];
	struct vhca_rwqe *wqe = qp->resp.wqe;
	bool sent = true;
	unsigned int nd;
	s64 room;
	u8 st;

	vhca_tm_fin(fin, &rv->rx);
	spin_lock_bh(&qp->resp.lock);	/* resp.wqe; the wire has no use of it */
	switch (vhca_recv_take(qp, wqe, peer->ibqp.qp_num)) {
	case 0:
		room = vhca_sges(vdev, wqe->sge, wqe->num_sge, qp->ibqp.pd,
				 IB_ACCESS_LOCAL_WRITE, dseg, &nd);
		st = room < 0 ? IB_WC_LOC_PROT_ERR :
		     room < sizeof(fin) ? IB_WC_LOC_LEN_ERR :
		     vhca_copy_held(dseg, nd, 0, &src, 1, 0, sizeof(fin),
				    NULL) ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
		vhca_recv_done(qp, wqe->wr_id, st,
			       st == IB_WC_SUCCESS ? sizeof(fin) : 0,
			       st == IB_WC_SUCCESS ? &(struct vhca_rmsg){} : NULL,
			       peer->ibqp.qp_num);
		break;
	case -EAGAIN:
		vhca_count_qp(qp, VHCA_CNT_RCVD_NO_WQE);
		sent = false;
		break;
	}
	spin_unlock_bh(&qp->resp.lock);
	return sent;
}

/*
 * Send @qp's rendezvous @rv its FIN.  With no receive WQE of @qp's posted
 * it waits, as a SEND would for an RNR NAK: VHCA_RNR, to come again after
 * @qp's min_rnr_timer, rv->rnr_left times (7: for ever); then the
 * receiving QP, whose FIN it is, goes to the error state as after
 * IB_WC_RNR_RETRY_EXC_ERR, and the FIN is dropped.  The receiving QP
 * gone, so is the FIN.  Returns VHCA_RNR or 0 (done).
 */
static int vhca_tm_rndv_fin_run(struct vhca_dev *vdev, struct vhca_qp *qp,
				struct vhca_tm_rndv *rv)
{
	struct vhca_qp *peer;
	int ret = 0;

	rcu_read_lock();
	peer = vhca_tm_rndv_peer(vdev, qp, rv);
	if (peer && !vhca_tm_rndv_fin(vdev, qp, peer, rv)) {
		if (rv->rnr_left == 7 || rv->rnr_left--) {
			ret = VHCA_RNR;
		} else {
			WRITE_ONCE(peer->err_pending, true);
			vhca_qp_kick_now(peer);
		}
	}
	rcu_read_unlock();
	if (!ret) {
		rv->fin = false;
		rv->rx.kind = VHCA_TM_NONE;
	}
	return ret;
}

/*
 * The end of @qp's rendezvous @rv, read with @status: the tag's
 * completion that its data is in, and the FIN to send next (rv->fin).  A
 * read that failed sends no FIN (the sender's buffer was not read) and
 * completes the tag with the status a READ would have had, which takes
 * the receiving QP to the error state, as a failed READ would.  Caller
 * holds rcu_read_lock().
 */
static void vhca_tm_rndv_end(struct vhca_qp *qp, struct vhca_qp *peer,
			     struct vhca_tm_rndv *rv, u8 status)
{
	struct vhca_rmsg m = {};

	vhca_tm_rmsg(&m, &rv->rx, true);
	vhca_recv_done(peer, rv->wr_id, status,
		       status == IB_WC_SUCCESS ? rv->rx.len : 0,
		       status == IB_WC_SUCCESS ? &m : NULL, qp->ibqp.qp_num);
	if (status == IB_WC_SUCCESS) {
		rv->fin = true;
		rv->rnr_left = READ_ONCE(peer->attr.rnr_retry);
	}
}

/**
 * vhca_tm_rndv_abort() - give up the rendezvous @qp's engine was to read
 * @qp: the QP whose SEND carried it, flushed, reset or destroyed; caller
 *	holds qp->lock
 *
 * Its tag completes with IB_WC_REM_ABORT_ERR, so the receiver does not
 * wait for its data, and its QP, whose peer went, goes to the error
 * state; no FIN goes back.  A FIN that waited is dropped: its tag had
 * completed.
 */
void vhca_tm_rndv_abort(struct vhca_qp *qp)
{
	struct vhca_tm_rndv *rv = &qp->rndv;
	struct vhca_qp *peer;

	if (rv->rx.kind != VHCA_TM_RNDV)
		return;
	if (rv->fin) {
		rv->fin = false;
		rv->rx.kind = VHCA_TM_NONE;
		return;
	}
	rcu_read_lock();
	peer = vhca_tm_rndv_peer(to_vdev(qp->ibqp.device), qp, rv);
	if (peer)
		vhca_recv_done(peer, rv->wr_id, IB_WC_REM_ABORT_ERR, 0, NULL,
			       qp->ibqp.qp_num);
	rcu_read_unlock();
	rv->rx.kind = VHCA_TM_NONE;
}

/**
 * vhca_tm_rndv_run() - read a matched rendezvous into its tag's buffer
 * @vdev: @qp's device
 * @qp: the QP whose SEND carried it (qp->rndv); caller holds qp->lock
 *
 * The device of the QP it arrived on reads the sender's buffer as an RDMA
 * READ would, VHCA_TM_RUN bytes a run of @qp's send ring at most; then
 * vhca_tm_rndv_end() and the FIN (vhca_tm_rndv_fin_run()).  The
 * receiving QP gone, it is dropped.  ODP pages are faulted in as the
 * engine's own copies do (vhca_odp_miss(), in rndv.odp).
 *
 * Return: VHCA_PARTIAL while bytes are left for the next run, VHCA_RNR
 * while the FIN waits for a receive WQE, else 0.
 */
int vhca_tm_rndv_run(struct vhca_dev *vdev, struct vhca_qp *qp)
{
	struct vhca_tm_rndv *rv = &qp->rndv;
	u32 end = rv->off + VHCA_TM_RUN, n;
	struct vhca_qp *peer;
	struct vhca_fault f;
	int status;

	if (rv->fin)
		return vhca_tm_rndv_fin_run(vdev, qp, rv);
	for (;;) {
		n = min(rv->rx.len - rv->off, VHCA_TM_CHUNK);
		rcu_read_lock();
		peer = vhca_tm_rndv_peer(vdev, qp, rv);
		status = peer && n ?
			 vhca_tm_rndv_chunk(vdev, qp, peer, rv, n, &f) :
			 IB_WC_SUCCESS;
		if (status == VHCA_COPY_FAULT) {
			if (vhca_odp_miss(&rv->odp, &f)) {
				rcu_read_unlock();
				vhca_odp_resolve(&rv->odp);
				continue;
			}
			status = IB_WC_REM_ACCESS_ERR;	/* its fault failed */
		}
		if (peer && status == IB_WC_SUCCESS) {
			rv->off += n;
			vhca_odp_retry_reset(&rv->odp);
		}
		if (!peer || status != IB_WC_SUCCESS || rv->off >= rv->rx.len) {
			if (peer)
				vhca_tm_rndv_end(qp, peer, rv, status);
			rcu_read_unlock();
			if (rv->fin)
				return vhca_tm_rndv_fin_run(vdev, qp, rv);
			rv->rx.kind = VHCA_TM_NONE;
			return 0;
		}
		rcu_read_unlock();
		if (rv->off >= end)
			return VHCA_PARTIAL;
		cond_resched();
	}
}

/*
 * Rendezvous from the wire.  The responder matches the message to a tag
 * as for one from this host; the QP it arrived on then reads the sender's
 * buffer with an RDMA READ and answers with a FIN, both sent by its own
 * requester in its PSN sequence, among the WQEs of its send ring (struct
 * vhca_req, @cons).  The responder adds the job once the tag's first
 * completion (MATCH) is written; the requester's completer completes the
 * tag (DATA_VALID) when the READ is answered, and sends the FIN next.
 */

/**
 * vhca_tm_jobs_init() - give an RC QP of a tag-matching SRQ its jobs
 * @qp: the new QP
 *
 * Return: 0 or -ENOMEM.
 */
int vhca_tm_jobs_init(struct vhca_qp *qp)
{
	if (!vhca_tm_srq(qp))
		return 0;
	qp->req.tmj = kzalloc(sizeof(*qp->req.tmj), GFP_KERNEL_ACCOUNT);
	return qp->req.tmj ? 0 : -ENOMEM;
}

void vhca_tm_jobs_free(struct vhca_qp *qp)
{
	kfree(qp->req.tmj);
	qp->req.tmj = NULL;
}

static struct vhca_tm_job *vhca_tm_job(const struct vhca_qp *qp, u32 idx)
{
	return &qp->req.tmj->job[idx % VHCA_TM_JOBS];
}

/**
 * vhca_tm_job_room() - whether @qp's requester can read a rendezvous
 * @qp: an RC QP on the wire; caller holds qp->resp.lock and
 *	rcu_read_lock()
 * @tag: the tag it matched
 * @rx: what its header said
 *
 * Return: whether the QP sends (RTS), has a job free, and the tag's
 * buffer holds the data.  If not, the rendezvous is left to software.
 */
bool vhca_tm_job_room(struct vhca_qp *qp, const struct vhca_rwqe *tag,
		      const struct vhca_tm_rx *rx)
{
	struct vhca_tm_jobs *tmj = qp->req.tmj;
	unsigned int nd;
	s64 room;

	if (!tmj || READ_ONCE(qp->state) != IB_QPS_RTS ||
	    tag->num_sge > VHCA_TM_MAX_SGE ||
	    /* Acquire pairs with the requester's release of a finished job. */
	    tmj->tail - smp_load_acquire(&tmj->head) >= VHCA_TM_JOBS)
		return false;
	room = vhca_sges(to_vdev(qp->ibqp.device), tag->sge, tag->num_sge,
			 vhca_qp_pd(qp), IB_ACCESS_LOCAL_WRITE | VHCA_FIND_ODP,
			 qp->resp.seg, &nd);
	return room >= rx->len;
}

/**
 * vhca_tm_job_add() - have @qp's requester read a rendezvous
 * @qp: the QP it arrived on, which vhca_tm_job_room() said can; caller
 *	holds qp->resp.lock
 * @tag: the tag it matched, whose first completion is written
 * @rx: what its header said
 */
void vhca_tm_job_add(struct vhca_qp *qp, const struct vhca_rwqe *tag,
		     const struct vhca_tm_rx *rx)
{
	struct vhca_tm_jobs *tmj = qp->req.tmj;
	struct vhca_tm_job *j = vhca_tm_job(qp, tmj->tail);

	j->rx = *rx;
	j->wr_id = tag->wr_id;
	j->num_sge = tag->num_sge;
	memcpy(j->sge, tag->sge, tag->num_sge * sizeof(*j->sge));
	j->read = false;
	/* Release: the job is written before the requester sees it. */
	smp_store_release(&tmj->tail, tmj->tail + 1);
	vhca_qp_kick(qp);
}

/**
 * vhca_tm_job_next() - the step of a rendezvous @qp's requester sends next
 * @qp: the QP; caller holds qp->lock
 * @fin: set to whether it is a FIN (else a READ)
 * @idx: set to its job's index
 *
 * A FIN whose READ was answered goes first: it frees the sender's buffer.
 *
 * Return: false if there is none.
 */
bool vhca_tm_job_next(struct vhca_qp *qp, bool *fin, u32 *idx)
{
	struct vhca_tm_jobs *tmj = qp->req.tmj;

	if (!tmj)
		return false;
	if (tmj->fin != tmj->read && vhca_tm_job(qp, tmj->fin)->read) {
		*fin = true;
		*idx = tmj->fin;
		return true;
	}
	/* Acquire pairs with the responder's release of a new job. */
	if (tmj->read != smp_load_acquire(&tmj->tail)) {
		*fin = false;
		*idx = tmj->read;
		return true;
	}
	return false;
}

/* The step vhca_tm_job_next() gave has gone for the first time. */
void vhca_tm_job_went(struct vhca_qp *qp, bool fin)
{
	if (fin)
		qp->req.tmj->fin++;
	else
		qp->req.tmj->read++;
}

/**
 * vhca_tm_job_wqe() - the send WQE a step of a rendezvous goes as
 * @qp: its QP; caller holds qp->lock
 * @fin: the FIN (an inline SEND of VHCA_TM_FIN_LEN bytes), else the READ
 *	(the sender's buffer into the tag's SGEs)
 * @idx: its job's index
 *
 * Return: the WQE, in the QP's jobs; vhca_tm_job_source() finds its data.
 * A READ's ex is the length it reads.
 */
struct vhca_swqe *vhca_tm_job_wqe(struct vhca_qp *qp, bool fin, u32 idx)
{
	struct vhca_swqe *w = (struct vhca_swqe *)qp->req.tmj->wqe;
	const struct vhca_tm_job *j = vhca_tm_job(qp, idx);

	memset(w, 0, VHCA_SWQE_HDR_SIZE);
	w->wr_id = j->wr_id;
	if (fin) {
		w->opcode = IB_UVERBS_WR_SEND;
		w->flags = VHCA_SWQE_F_INLINE;
		w->inline_len = VHCA_TM_FIN_LEN;
		vhca_tm_fin((u8 *)w->sge, &j->rx);
	} else {
		w->opcode = IB_UVERBS_WR_RDMA_READ;
		w->num_sge = j->num_sge;
		w->rdma.remote_addr = j->rx.va;
		w->rdma.rkey = j->rx.rkey;
		w->ex = j->rx.len;	/* what it reads: the tag's may hold more */
		memcpy(w->sge, j->sge, j->num_sge * sizeof(*w->sge));
	}
	return w;
}

/**
 * vhca_tm_job_source() - where a step of a rendezvous finds its data
 * @qp: its QP; caller holds qp->lock and rcu_read_lock()
 * @w: its WQE, from vhca_tm_job_wqe()
 * @seg: set to the FIN's inline bytes, or the tag's buffer a READ lands in
 * @nseg: set to how many segments
 * @access: the access the lookup needs (a READ's: local write)
 *
 * Return: the bytes it moves (a READ: the rendezvous's length, which the
 * tag's buffer holds), or a negative IB_WC_* status.
 */
s64 vhca_tm_job_source(struct vhca_qp *qp, const struct vhca_swqe *w,
		       struct vhca_seg *seg, unsigned int *nseg, int access)
{
	s64 room;

	/* the FIN: its bytes are the kernel's, not bound by max_inline */
	if (w->flags & VHCA_SWQE_F_INLINE)
		return vhca_wqe_inline_seg(w, seg, nseg);
	room = vhca_sges(to_vdev(qp->ibqp.device), w->sge, w->num_sge,
			 vhca_qp_pd(qp), access, seg, nseg);
	if (room < 0)
		return -IB_WC_LOC_PROT_ERR;
	if (room < w->ex)
		return -IB_WC_LOC_LEN_ERR;
	return w->ex;
}

/**
 * vhca_tm_job_done() - a step of a rendezvous was answered, or failed
 * @qp: its QP; caller holds qp->lock
 * @fin: the FIN, else the READ
 * @idx: its job's index
 * @status: how it ended
 *
 * A READ completes the tag: DATA_VALID with the data's length, or in
 * error; then its FIN may go.  A FIN ends the job.  A step that failed
 * takes the QP to the error state, which is the caller's to do, as for a
 * WQE of its ring.
 */
void vhca_tm_job_done(struct vhca_qp *qp, bool fin, u32 idx, u8 status)
{
	struct vhca_tm_job *j = vhca_tm_job(qp, idx);
	struct vhca_rmsg m = {};
	bool ok = status == IB_WC_SUCCESS;

	if (fin) {
		/* Release: the job is read before the responder reuses it. */
		smp_store_release(&qp->req.tmj->head, idx + 1);
		return;
	}
	vhca_tm_rmsg(&m, &j->rx, true);
	vhca_recv_done(qp, j->wr_id, status, ok ? j->rx.len : 0,
		       ok ? &m : NULL, qp->attr.dest_qp_num);
	j->read = true;
}

/**
 * vhca_tm_jobs_reset() - forget @qp's rendezvous from the wire
 * @qp: the QP, flushed, reset or destroyed; caller holds qp->lock
 *
 * A tag whose data was not read completes with IB_WC_WR_FLUSH_ERR, so the
 * receiver does not wait for it; a FIN not sent is dropped (its tag had
 * completed).
 */
void vhca_tm_jobs_reset(struct vhca_qp *qp)
{
	struct vhca_tm_jobs *tmj = qp->req.tmj;
	struct vhca_tm_job *j;
	u32 i;

	if (!tmj)
		return;
	spin_lock_bh(&qp->resp.lock);	/* no job is added meanwhile */
	for (i = tmj->head; i != tmj->tail; i++) {
		j = vhca_tm_job(qp, i);
		if (!j->read)
			vhca_recv_done(qp, j->wr_id, IB_WC_WR_FLUSH_ERR, 0, NULL,
				       qp->attr.dest_qp_num);
	}
	tmj->head = tmj->tail;
	tmj->read = tmj->tail;
	tmj->fin = tmj->tail;
	spin_unlock_bh(&qp->resp.lock);
}
