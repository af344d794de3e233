// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What stops a QP's engines: the error states and the flushes that enter
 * them, and forgetting what each path had in progress (the same-host
 * path's WQE, the requester's packets on the wire, the responder's
 * pending READs).  modify_qp, the scheduler and the executors call down
 * into it when a QP must stop; it calls only the WQE helpers, the CQs
 * and the lookups below it.
 */
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "vhca_tm.h"
#include "vhca_wire.h"
#include "vhca_req.h"

static void vhca_qp_event(struct vhca_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/**
 * vhca_qp_flush_rq() - flush a QP's receive ring
 * @qp: the QP, in the error state
 *
 * Complete every receive WQE posted so far with IB_WC_WR_FLUSH_ERR, in
 * order.  Each WQE is copied out before it is read: the process may be
 * rewriting its ring.  A producer index that cannot be is the process's
 * own damage, and it gets no flush.  Any context; rq_lock serialises it
 * with the engines taking WQEs.
 */
void vhca_qp_flush_rq(struct vhca_qp *qp)
{
	struct vhca_cq *cq = to_vcq(qp->ibqp.recv_cq);
	struct vhca_uring *r = &qp->rq;
	struct vhca_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};
	struct vhca_rwqe wqe;
	unsigned long flags;
	u32 prod;

	spin_lock_irqsave(&qp->rq_lock, flags);
	/* Acquire pairs with the provider's release store of the producer. */
	prod = smp_load_acquire(&r->hdr->producer);
	if (!vhca_ring_sane(prod, qp->rq_cons, r->g.log2_slots))
		goto out;
	while (qp->rq_cons != prod) {
		memcpy(&wqe, vhca_uring_slot(r, qp->rq_cons), sizeof(wqe));
		cqe.wr_id = wqe.wr_id;
		if (vhca_cq_post(cq, &cqe, false))
			break;
		qp->rq_cons++;
	}
	/* Release: our reads of the slots are done before they are reused. */
	smp_store_release(&r->hdr->consumer, qp->rq_cons);
out:
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}

/*
 * A receive WQE a message from the wire took, and which that message (or
 * a dropped one) still holds, completes first, in order: on an XRC TGT
 * QP's, on the CQ of the XRC SRQ it came from, if that is still there.
 */
static void vhca_qp_resp_flush(struct vhca_qp *qp)
{
	struct vhca_resp *r = &qp->resp;
	struct vhca_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};
	struct ib_cq *cq = qp->ibqp.recv_cq;
	struct vhca_srq *srq;

	rcu_read_lock();
	spin_lock_bh(&r->lock);
	if (r->have_wqe && qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		srq = vhca_xsrq_find(qp, r->xsrqn, r->xsrq_uid);
		cq = srq ? srq->ibsrq.ext.cq : NULL;
	}
	if (r->have_wqe)
		vhca_tm_lost(qp, &r->tm);
	if (r->have_wqe && cq) {
		cqe.wr_id = r->wqe->wr_id;
		vhca_cq_post(to_vcq(cq), &cqe, false);
	}
	r->have_wqe = false;
	r->active = false;
	r->closed = true;
	vhca_held_purge(qp);	/* what they hold is not delivered */
	vhca_resp_rd_forget(r);	/* READs are not answered */
	spin_unlock_bh(&r->lock);
	rcu_read_unlock();
}

/*
 * Whether @peer is the QP the receive WQE @qp took is completed on: of
 * its type, and for an XRC INI the TGT QP, with the XRC SRQ the WQE came
 * from made its peer->xsrq again, if that SRQ is still there.  Caller
 * holds rcu_read_lock().
 */
static bool vhca_exec_abort_srq(struct vhca_qp *qp, struct vhca_qp *peer)
{
	struct vhca_srq *srq;

	if (qp->ibqp.qp_type != IB_QPT_XRC_INI)
		return peer->ibqp.qp_type == qp->ibqp.qp_type;
	if (peer->ibqp.qp_type != IB_QPT_XRC_TGT)
		return false;
	srq = vhca_xsrq_find(peer, qp->exec.xsrqn, qp->exec.xsrq_uid);
	if (!srq)
		return false;	/* gone, and its WQEs with it */
	peer->xsrq = srq;
	return true;
}

/**
 * vhca_exec_recv_failed() - the receive WQE a WQE took completes in error
 * @qp: the sending QP, whose qp->rwqe holds the receive WQE it took
 * @peer: the QP it took it at
 * @status: the error
 *
 * The message did not land: on a tag-matching SRQ, an unexpected one is
 * not counted (vhca_tm_lost()).
 */
void vhca_exec_recv_failed(struct vhca_qp *qp, struct vhca_qp *peer,
			   u8 status)
{
	vhca_tm_lost(peer, &qp->exec.tm);
	vhca_recv_done(peer, qp->rwqe->wr_id, status, 0, NULL,
		       qp->ibqp.qp_num);
}

/**
 * vhca_exec_abort() - forget how far the local engine got in a WQE
 * @qp: the QP; caller holds qp->lock
 *
 * For a WQE that will not run again: failed, flushed, or its QP reset.  A
 * receive WQE taken for its message completes in error, so the responder
 * loses no completion.
 */
void vhca_exec_abort(struct vhca_qp *qp)
{
	struct vhca_qp *peer;

	/*
	 * Before the first byte, a failure completed the receive itself.
	 * The peer is looked up whatever its state (not vhca_peer()): one in
	 * error still gets the completion, flushed or not.
	 */
	if (qp->exec.took && qp->exec.off && qp->exec.off < qp->exec.len) {
		rcu_read_lock();
		peer = vhca_qp_find(to_vdev(qp->ibqp.device),
				    READ_ONCE(qp->dst_dev),
				    qp->attr.dest_qp_num);
		if (peer && vhca_exec_abort_srq(qp, peer) &&
		    READ_ONCE(peer->state) != IB_QPS_RESET)
			vhca_exec_recv_failed(qp, peer, IB_WC_REM_ABORT_ERR);
		rcu_read_unlock();
	}
	qp->exec = (struct vhca_exec_state){};
}

/*
 * WQEs flushed between two chances for the scheduler: a ring holds up to
 * VHCA_MAX_QP_WR of them.
 */
#define VHCA_FLUSH_RESCHED	256

/**
 * vhca_qp_flush_sq() - complete the posted send WQEs with FLUSH_ERR
 * @qp: a QP in the error or send queue error state; caller holds qp->lock
 *
 * Those posted when it reads the producer, one ring's worth at most:
 * what a process posts meanwhile waits for the next call, so one that
 * keeps its producer a ring ahead cannot hold the caller here.
 *
 * Return: the number of WQEs flushed.
 */
u32 vhca_qp_flush_sq(struct vhca_qp *qp)
{
	/* Acquire pairs with the provider's release of the producer. */
	u32 prod = smp_load_acquire(&qp->sq.hdr->producer);
	u32 n = 0;

	vhca_exec_abort(qp);
	vhca_tm_rndv_abort(qp);
	if (!vhca_ring_sane(prod, qp->sq_cons, qp->sq.g.log2_slots))
		return 0;	/* the process broke its own ring */
	while (qp->sq_cons != prod) {
		struct vhca_swqe *w = vhca_sq_fetch_at(qp, qp->sq_cons);

		vhca_sq_advance(qp);	/* free before completing: see below */
		vhca_send_done(qp, w, IB_WC_WR_FLUSH_ERR, 0);
		if (!(++n % VHCA_FLUSH_RESCHED))
			cond_resched();
	}
	if (qp->req.fl)
		vhca_req_reset(qp);	/* what was on the wire is flushed */
	return n;
}

/*
 * Entering the error state.  The engine runs a QP's send ring under
 * qp->lock, which the caller holds, so nothing of this QP is in flight:
 * what was posted is flushed now, and an SRQ-attached QP will take no more
 * WQEs from its SRQ, which IB_EVENT_QP_LAST_WQE_REACHED says (ib_drain_qp
 * waits for it).
 */
static void vhca_qp_enter_error(struct vhca_qp *qp)
{
	if (qp->rq.hdr && qp->ibqp.uobject) {
		/* From here a post_recv rings the doorbell to be flushed. */
		WRITE_ONCE(qp->rq.hdr->ctrl, VHCA_RQ_FLUSH);
		/*
		 * Pairs with the provider's barrier between its producer
		 * store and its read of ctrl: what the flush below misses,
		 * the provider sees the flag for.
		 */
		smp_mb();
	}
	if (qp->rnr_wait)
		vhca_qp_kick_now(qp);	/* flushes posts made meanwhile */
	vhca_qp_resp_flush(qp);
	vhca_qp_flush_sq(qp);
	if (qp->rq.hdr)
		vhca_qp_flush_rq(qp);
	if (qp->ibqp.srq)
		vhca_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/**
 * vhca_qp_set_error() - move a QP to the error state
 * @qp: the QP; caller holds qp->lock
 *
 * The one way into ERR, for modify_qp and for the engine alike: both
 * rings are flushed and an SRQ-attached QP raises LAST_WQE_REACHED.
 */
void vhca_qp_set_error(struct vhca_qp *qp)
{
	if (qp->state == IB_QPS_ERR)
		return;
	vhca_qp_enter_error(qp);
	WRITE_ONCE(qp->state, IB_QPS_ERR);
}

/**
 * vhca_qp_set_sq_error() - move a UC or UD QP to the send queue error state
 * @qp: the QP; caller holds qp->lock
 *
 * A UC or UD send WQE that completes in error stops the send queue only
 * (IBA 10.3.1): the WQEs after it are flushed, and so is whatever is
 * posted until modify_qp moves the QP back to RTS; receives go on.
 */
void vhca_qp_set_sq_error(struct vhca_qp *qp)
{
	if (qp->state == IB_QPS_ERR || qp->state == IB_QPS_SQE)
		return;
	WRITE_ONCE(qp->state, IB_QPS_SQE);
	vhca_qp_flush_sq(qp);
}

/**
 * vhca_qp_wqe_failed() - stop a QP whose send WQE completed in error
 * @qp: the QP, the WQE retired; caller holds qp->lock
 *
 * An RC QP (or XRC INI) goes to the error state; a UC or UD QP's send
 * queue only (IBA 10.3.1).
 */
void vhca_qp_wqe_failed(struct vhca_qp *qp)
{
	if (vhca_qpt_rc(qp->ibqp.qp_type))
		vhca_qp_set_error(qp);
	else
		vhca_qp_set_sq_error(qp);
}

/*
 * The RC requester's state, which vhca_req.c and vhca_comp.c change and a
 * reset forgets.  The congestion window starts full: ECN marks cut it.
 */
void vhca_req_cwnd_reset(struct vhca_req *q)
{
	q->cwnd = VHCA_REQ_MAX_PKTS;
	q->cwnd_target = VHCA_REQ_MAX_PKTS;
	q->cwnd_acked = 0;
	q->cut_next = jiffies;
	WRITE_ONCE(q->congested, false);
}

/* Count @qp in or out of its device's RC QPs with requests on the wire. */
void vhca_req_set_busy(struct vhca_qp *qp, bool busy)
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

/**
 * vhca_req_reset() - forget what was on the wire
 * @qp: the QP, its send ring just flushed or reset; caller holds qp->lock
 */
void vhca_req_reset(struct vhca_qp *qp)
{
	vhca_tm_jobs_reset(qp);
	qp->req.next = qp->req.cons;
	qp->req.sent = qp->req.cons;
	qp->req.user = qp->sq_cons;
	qp->req.reads = 0;
	qp->req.skip = 0;
	qp->req.rewound = false;
	qp->req.partial = false;
	qp->req.lost = false;
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
