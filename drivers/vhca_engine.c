// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The engine: vhca's "hardware" consumes send rings the way a NIC would.
 * This file schedules them: the doorbell runs a few WQEs in the poster's
 * context, the work item runs the rest, RNR waits and budgets decide
 * when.  Each WQE goes to its executor: the same-host path
 * (vhca_local.c) for RC and UC between QPs of this host's vhca devices,
 * vhca_ud.c for UD and GSI datagrams (here or on the wire), the
 * completer (vhca_comp.c) and then the requester (vhca_req.c) for RC to
 * another host, the requester for UC to another host, and vhca_wqe.c
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

#include "vhca_tm.h"
#include "vhca_wire.h"

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
	if (vhca_wr_op(w->opcode)->flags & (VHCA_OPF_DATA_OUT | VHCA_OPF_READ) &&
	    !vhca_qpt_ud(qp->ibqp.qp_type))
		return vhca_exec(vdev, qp, w, sseg, dseg);
	if (vhca_wr_is(w->opcode, VHCA_OPF_LOCAL))
		return vhca_wqe_local(vdev, qp, w);
	/*
	 * A datagram (one MTU at most), the atomics and FLUSH, as the table
	 * allows: each in one RCU section, run again once the ODP pages it
	 * found missing are faulted in, out of it.
	 */
	for (;;) {
		rcu_read_lock();
		if (vhca_qpt_ud(qp->ibqp.qp_type))
			status = vhca_ud_exec(vdev, qp, w, sseg);
		else if (vhca_wr_is(w->opcode, VHCA_OPF_ATOMIC_WRITE))
			status = vhca_exec_atomic_write(vdev, qp, w);
		else if (vhca_wr_is(w->opcode, VHCA_OPF_FLUSH))
			status = vhca_exec_flush(vdev, qp, w);
		else
			status = vhca_exec_atomic(vdev, qp, w, sseg);
		rcu_read_unlock();
		if (status != VHCA_FAULT)
			break;
		vhca_odp_resolve(&qp->exec.odp);
	}
	vhca_odp_retry_reset(&qp->exec.odp);
	return status;
}

/*
 * @qp's run stops for an RNR wait of @timer (an IBA min_rnr_timer code),
 * its work queued for when it is over; an error that came meanwhile is
 * not kept waiting.
 */
static enum vhca_sq_stop vhca_sq_rnr_wait(struct vhca_qp *qp, u8 timer)
{
	vhca_qp_kick_after(qp, timer);
	if (READ_ONCE(qp->err_pending))
		vhca_qp_kick_now(qp);
	return VHCA_SQ_WAIT;
}

/*
 * The rendezvous a SEND of @qp's carried (qp->rndv), read before the
 * ring's next WQE runs (vhca_tm_rndv_run()).  Returns false once it is
 * over; true with *@stop while it goes on: in the next run, or after
 * @qp's min_rnr_timer while its FIN waits for a receive WQE of @qp's.
 */
static bool vhca_sq_rndv(struct vhca_dev *vdev, struct vhca_qp *qp,
			 enum vhca_sq_stop *stop)
{
	switch (vhca_tm_rndv_run(vdev, qp)) {
	case VHCA_PARTIAL:
		*stop = VHCA_SQ_MORE;
		return true;
	case VHCA_RNR:
		*stop = vhca_sq_rnr_wait(qp, READ_ONCE(qp->attr.min_rnr_timer));
		return true;
	}
	return false;
}

/*
 * Execute what is posted on @qp's send ring, at most *budget WQEs.  Caller
 * holds qp->lock.
 */
static enum vhca_sq_stop vhca_sq_run(struct vhca_qp *qp, unsigned int *budget)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	enum vhca_sq_stop stop;
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
	if (vhca_rc_on_wire(qp)) {
		/* RC to another host: the responses first, then requests */
		if (!vhca_comp_run(qp, &stop))
			return stop;
		return vhca_req_run(qp, budget);
	}

	if (!vhca_sq_producer(qp, qp->sq_cons, &prod)) {
		vhca_qp_set_error(qp);
		return VHCA_SQ_IDLE;
	}
	/* a rendezvous a SEND carried is read before the next WQE runs */
	if (qp->rndv.rx.kind == VHCA_TM_RNDV && vhca_sq_rndv(vdev, qp, &stop))
		return stop;
	while (qp->sq_cons != prod) {
		if (!*budget)
			return VHCA_SQ_MORE;
		(*budget)--;
		w = vhca_sq_fetch_at(qp, qp->sq_cons);
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
				return vhca_sq_rnr_wait(qp, timer);
			}
		}
		if (status == VHCA_NOPEER) {
			/* timeout 0 never times out, nor spends a retry */
			if (qp->attr.timeout && !qp->req.retry_left) {
				status = IB_WC_RETRY_EXC_ERR;
			} else {
				if (qp->attr.timeout)
					qp->req.retry_left--;
				vhca_qp_kick_timeout(qp);
				if (READ_ONCE(qp->err_pending))
					vhca_qp_kick_now(qp);
				return VHCA_SQ_WAIT;
			}
		}
		qp->rnr_left = qp->attr.rnr_retry;
		qp->req.retry_left = qp->attr.retry_cnt;
		/* the bytes are counted for a CQE only */
		len = vhca_send_signals(qp, w->flags, status) ?
		      vhca_wqe_len(qp, w) : 0;
		if (!vhca_sq_retire(qp, w, status, len)) {
			vhca_qp_wqe_failed(qp);
			return VHCA_SQ_IDLE;
		}
		if (qp->rndv.rx.kind == VHCA_TM_RNDV &&
		    vhca_sq_rndv(vdev, qp, &stop))
			return stop;
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
		return qp->req.user;
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
			vhca_qp_kick(qp);
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
