// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The engine: vhca's "hardware" consumes send rings the way a NIC would.
 * This file schedules them: the doorbell runs a few WQEs in the poster's
 * context, the work item runs the rest, RNR waits and budgets decide
 * when.  Each WQE goes to its executor: the same-host path
 * (vhca_local.c) for RC and UC between QPs of this host's vhca devices,
 * vhca_ud.c for UD and GSI datagrams (here or on the wire), the
 * requester (vhca_req.c) for RC and UC to another host, and vhca_wqe.c
 * for the WQEs that act on this device only (LOCAL_INV, BIND_MW,
 * REG_MR).
 *
 * Everything it reads from a ring was written by an untrusted process: a
 * WQE is copied out of the ring before it is looked at, and no index,
 * count, length or key is used before it is bounded.
 */
#include <linux/highmem.h>
#include <linux/ip.h>
#include <linux/rcupdate.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_umem.h>

#include "vhca.h"

struct workqueue_struct *vhca_wq;
struct workqueue_struct *vhca_tx_wq;

/*
 * Copy the send WQE at index @idx out of the ring, header and what
 * follows, into the QP's scratch.  Caller holds qp->lock.
 */
struct vhca_swqe *vhca_sq_fetch_at(struct vhca_qp *qp, u32 idx)
{
	memcpy(qp->wqe, vhca_uring_slot(&qp->sq, idx),
	       1U << qp->sq.g.log2_stride);
	return qp->wqe;
}

static struct vhca_swqe *vhca_sq_fetch(struct vhca_qp *qp)
{
	return vhca_sq_fetch_at(qp, qp->sq_cons);
}

void vhca_sq_advance(struct vhca_qp *qp)
{
	qp->sq_cons++;
	qp->wire_pkt = 0;
	/* Release: the slot is copied before it is handed back. */
	smp_store_release(&qp->sq.hdr->consumer, qp->sq_cons);
}

/**
 * vhca_sq_retire() - hand the oldest send WQE back, and complete it
 * @qp: the QP; caller holds qp->lock
 * @w: the WQE, copied out of its slot (wr_id, opcode and flags are read)
 * @status: its completion status
 * @len: the bytes it moved, for the CQE
 *
 * The slot is free before the completion is visible: whoever polls the
 * completion of WR n may post again at once.  A WQE that failed takes
 * the QP to the error state, or a UC or UD QP's send queue only
 * (IBA 10.3.1).  The local engine and the requester on the wire both
 * retire their WQEs here.
 *
 * Return: false if the WQE failed.
 */
bool vhca_sq_retire(struct vhca_qp *qp, const struct vhca_swqe *w,
		    int status, u32 len)
{
	vhca_sq_advance(qp);
	if (vhca_send_signals(qp, w->flags, status))
		vhca_send_done(qp, w, status, len);
	if (status == IB_WC_SUCCESS)
		return true;
	if (qp->ibqp.qp_type == IB_QPT_RC)
		vhca_qp_set_error(qp);
	else
		vhca_qp_set_sq_error(qp);
	return false;
}

/**
 * vhca_sq_producer() - read a send ring's producer, and check it
 * @qp: the QP; caller holds qp->lock
 * @sent: the index up to which WQEs are taken already (sq_cons, or further
 *	for RC on the wire)
 * @prod: where the producer goes
 *
 * A producer that the process moved out of the ring's bounds, or back
 * behind WQEs the engine took, moves the QP to the error state.
 *
 * Return: false if it did.
 */
bool vhca_sq_producer(struct vhca_qp *qp, u32 sent, u32 *prod)
{
	/* Acquire pairs with the provider's release of the producer. */
	*prod = smp_load_acquire(&qp->sq.hdr->producer);
	if (vhca_ring_sane(*prod, qp->sq_cons, qp->sq.g.log2_slots) &&
	    *prod - qp->sq_cons >= sent - qp->sq_cons)
		return true;
	vhca_qp_set_error(qp);
	return false;
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
	if (!vhca_ring_sane(prod, qp->sq_cons, qp->sq.g.log2_slots))
		return 0;	/* the process broke its own ring */
	while (qp->sq_cons != prod) {
		struct vhca_swqe *w = vhca_sq_fetch(qp);

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
 * Execute one send WQE here: checked against the opcode table first.
 * Returns its completion status, VHCA_RNR, or VHCA_PARTIAL to run it
 * again (a local WQE's next VHCA_EXEC_RUN bytes, or UC on the wire).
 * Process context; caller holds qp->lock.
 */
static int vhca_sq_exec(struct vhca_dev *vdev, struct vhca_qp *qp,
			const struct vhca_swqe *w)
{
	struct vhca_seg *sseg = qp->seg, *dseg = qp->seg + VHCA_MAX_SGE;
	int status = vhca_wqe_check(qp, w);

	if (status)
		return status;
	if (vhca_wr_op(w->opcode)->flags & (VHCA_OPF_DATA_OUT | VHCA_OPF_READ)) {
		if (!vhca_qpt_ud(qp->ibqp.qp_type))
			return vhca_exec(vdev, qp, w, sseg, dseg);
		/* a datagram is one MTU at most: one RCU section */
		rcu_read_lock();
		status = vhca_ud_exec(vdev, qp, w, sseg, dseg);
		rcu_read_unlock();
		return status;
	}
	if (vhca_wr_is(w->opcode, VHCA_OPF_LOCAL))
		return vhca_wqe_local(vdev, qp, w);
	/* the atomics and FLUSH, as the table allows */
	rcu_read_lock();
	if (vhca_wr_is(w->opcode, VHCA_OPF_ATOMIC_WRITE))
		status = vhca_exec_atomic_write(vdev, qp, w);
	else if (vhca_wr_is(w->opcode, VHCA_OPF_FLUSH))
		status = vhca_exec_flush(vdev, qp, w);
	else
		status = vhca_exec_atomic(vdev, qp, w, sseg);
	rcu_read_unlock();
	return status;
}

/*
 * Execute what is posted on @qp's send ring, at most *budget WQEs.  Caller
 * holds qp->lock.
 */
static enum vhca_sq_stop vhca_sq_run(struct vhca_qp *qp, unsigned int *budget)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_swqe *w;
	u32 prod, len;
	int status;

	if (qp->state == IB_QPS_ERR || qp->state == IB_QPS_SQE) {
		/*
		 * Flushed WQEs spend the budget too: a process that keeps
		 * posting to a QP in error gets one ring's worth flushed per
		 * run, and the rest is the engine's work's, run by run.
		 */
		if (!*budget)
			return VHCA_SQ_MORE;
		*budget -= min(*budget, vhca_qp_flush_sq(qp));
		if (qp->state == IB_QPS_ERR && qp->rq.hdr)
			vhca_qp_flush_rq(qp);
		return VHCA_SQ_IDLE;
	}
	if (qp->state != IB_QPS_RTS)
		return VHCA_SQ_IDLE;	/* posted WQEs wait for RTS */
	if (vhca_rc_on_wire(qp))
		return vhca_req_run(qp, budget);	/* RC to another host */

	if (!vhca_sq_producer(qp, qp->sq_cons, &prod))
		return VHCA_SQ_IDLE;
	while (qp->sq_cons != prod) {
		if (!*budget)
			return VHCA_SQ_MORE;
		(*budget)--;
		w = vhca_sq_fetch(qp);
		status = vhca_sq_exec(vdev, qp, w);

		/* the work goes on with it, when a packet is freed if it waits */
		if (status == VHCA_PARTIAL)
			return READ_ONCE(qp->uc_wait) ? VHCA_SQ_BLOCKED :
							VHCA_SQ_MORE;
		if (status == VHCA_RNR) {
			struct vhca_qp *peer;
			u8 timer = 0;

			if (qp->attr.rnr_retry != 7 && !qp->rnr_left--) {
				status = IB_WC_RNR_RETRY_EXC_ERR;
			} else {
				rcu_read_lock();
				peer = vhca_qp_find(vdev, READ_ONCE(qp->dst_dev),
						    qp->attr.dest_qp_num);
				if (peer)
					timer = peer->attr.min_rnr_timer;
				rcu_read_unlock();
				/* even over a kick queued meanwhile */
				qp->rnr_wait = true;
				mod_delayed_work(vhca_wq, &qp->sq_work,
						 vhca_rnr_jiffies(timer));
				if (READ_ONCE(qp->err_pending))
					vhca_qp_kick_now(qp);
				return VHCA_SQ_WAIT;
			}
		}
		qp->rnr_left = qp->attr.rnr_retry;
		/* the bytes are counted for a CQE only */
		len = vhca_send_signals(qp, w->flags, status) ?
		      vhca_wqe_len(qp, w) : 0;
		if (!vhca_sq_retire(qp, w, status, len))
			return VHCA_SQ_IDLE;
	}
	return VHCA_SQ_IDLE;
}

/* WQEs a doorbell runs in the poster's context, and one work item runs. */
#define VHCA_SQ_INLINE_BUDGET	32
#define VHCA_SQ_WORK_BUDGET	256

static void vhca_sq_set_active(struct vhca_qp *qp, bool active)
{
	if (qp->ibqp.uobject)
		WRITE_ONCE(qp->sq.hdr->ctrl, active ? VHCA_SQ_ACTIVE : 0);
}

/* The index of the next send WQE to run: RC on the wire runs ahead. */
static u32 vhca_sq_next(struct vhca_qp *qp)
{
	if (vhca_rc_on_wire(qp))
		return qp->req.next;
	return qp->sq_cons;
}

/*
 * Run @qp's send ring until it is idle or @budget WQEs have run, then
 * hand it back to the poster without losing a WQE.  While this runs, ctrl
 * says VHCA_SQ_ACTIVE and the provider rings no doorbell; so before
 * letting go it clears the bit, issues a full barrier and reads the
 * producer again (see struct vhca_ring_hdr).  With the budget spent, or an
 * RNR timer pending, the bit stays set: the queued work runs the ring.
 * Caller holds qp->lock.
 */
static void vhca_sq_service(struct vhca_qp *qp, unsigned int budget)
{
	enum vhca_sq_stop stop;
	u32 prod;

	if (qp->rnr_wait)
		return;	/* the RNR timer's work runs the ring */
	for (;;) {
		vhca_sq_set_active(qp, true);
		stop = vhca_sq_run(qp, &budget);
		if (stop == VHCA_SQ_WAIT || stop == VHCA_SQ_BLOCKED)
			return;
		if (stop == VHCA_SQ_MORE) {
			queue_delayed_work(vhca_wq, &qp->sq_work, 0);
			return;
		}
		vhca_sq_set_active(qp, false);
		/* Pairs with the provider's barrier after its producer store. */
		smp_mb();
		prod = READ_ONCE(qp->sq.hdr->producer);
		if (prod == vhca_sq_next(qp) ||
		    !vhca_ring_sane(prod, qp->sq_cons, qp->sq.g.log2_slots) ||
		    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_ERR &&
		     qp->state != IB_QPS_SQE))
			return;
	}
}

void vhca_sq_work(struct work_struct *work)
{
	struct vhca_qp *qp = container_of(to_delayed_work(work),
					  struct vhca_qp, sq_work);

	mutex_lock(&qp->lock);
	qp->rnr_wait = false;
	if (READ_ONCE(qp->err_pending)) {
		WRITE_ONCE(qp->err_pending, false);
		if (qp->state != IB_QPS_RESET)
			vhca_qp_set_error(qp);
	}
	vhca_sq_service(qp, VHCA_SQ_WORK_BUDGET);
	mutex_unlock(&qp->lock);
}

/**
 * vhca_qp_kick() - have the engine's work run @qp's send ring
 * @qp: the QP
 *
 * Queued, not run: any context.  A pending RNR timer is not cut short;
 * vhca_qp_kick_now() does that, for a QP that has to leave its wait.
 */
void vhca_qp_kick(struct vhca_qp *qp)
{
	queue_delayed_work(vhca_wq, &qp->sq_work, 0);
}

void vhca_qp_kick_now(struct vhca_qp *qp)
{
	mod_delayed_work(vhca_wq, &qp->sq_work, 0);
}

/**
 * vhca_qp_doorbell() - a user QP's send doorbell
 * @qp: the QP
 *
 * Runs what is posted in the caller's context, as a NIC would start on a
 * doorbell at once: no work item to wake for the common case of a few
 * WQEs.  If the engine's work holds the ring (or modify_qp does), that
 * holder will see the WQEs, or the work queued here will.  Process
 * context.
 */
void vhca_qp_doorbell(struct vhca_qp *qp)
{
	if (!mutex_trylock(&qp->lock)) {
		vhca_qp_kick(qp);
		return;
	}
	vhca_sq_service(qp, VHCA_SQ_INLINE_BUDGET);
	mutex_unlock(&qp->lock);
}
