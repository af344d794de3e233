// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Producing completions: the one place the kernel writes CQEs into a ring
 * that userspace consumes.
 */
#include "vhca.h"

static void vhca_cq_error(struct vhca_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * Call @cq's completion handler as an HCA's interrupt would, with bottom
 * halves off where they can be turned off.  A CQ its consumer polls in
 * softirq (IB_POLL_SOFTIRQ: nvme-rdma's, iSER's) is then polled when they
 * come back on, in this context; from process context (the engine's
 * work) the handler's raise would otherwise wake ksoftirqd, one more
 * thread to schedule per completion.  In hardirq context, or with
 * interrupts off (a kernel consumer may post to a QP in error, whose WQEs
 * complete at once, under a spinlock), bottom halves cannot be turned back
 * on here, and the raise needs no wakeup anyway.
 */
static void vhca_cq_fire(struct vhca_cq *cq)
{
	if (in_hardirq() || irqs_disabled()) {
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		return;
	}
	local_bh_disable();
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	local_bh_enable();
}

/*
 * Whether a completion just made visible fires @cq's event: the CQ is
 * armed for any, or for solicited ones and @solicited (solicited or
 * failed).  If so it is disarmed.  A user CQ's arms are taken from ctrl
 * first.  Caller holds cq->lock.
 */
static bool vhca_cq_arm_fires(struct vhca_cq *cq, bool solicited)
{
	if (cq->ibcq.uobject) {
		/* Pairs with the provider's barrier between arm and poll. */
		smp_mb();
		vhca_cq_take_arm(cq);
	}
	if (cq->notify != IB_CQ_NEXT_COMP &&
	    (cq->notify != IB_CQ_SOLICITED || !solicited))
		return false;
	cq->notify = 0;
	return true;
}

/**
 * vhca_cq_post() - add a completion to a CQ
 * @cq: the CQ
 * @cqe: the completion
 * @solicited: it completes a message sent with the solicited flag
 *
 * An armed CQ is disarmed and its completion handler called (for a user
 * CQ that is the event on its completion channel): for any completion
 * when armed for the next one, for a solicited or failed one when armed
 * for solicited ones.
 *
 * The consumer index is userspace's to write, so it is only checked for
 * being possible: a full ring, or an index that cannot be, overflows the
 * CQ.  An overflowed CQ takes no more completions and raises
 * IB_EVENT_CQ_ERR once, as a hardware CQ would.  Any context.
 *
 * Return: 0, or -ENOSPC if the CQ overflowed (now or before).
 */
int vhca_cq_post(struct vhca_cq *cq, const struct vhca_cqe *cqe,
		 bool solicited)
{
	struct vhca_uring *r = &cq->ring;
	bool first_overflow = false, fire = false;
	struct vhca_cqe *slot;
	unsigned long flags;
	u32 cons;
	int err = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflowed) {
		err = -ENOSPC;
		goto out;
	}
	/* Acquire pairs with the provider's release store after its reads. */
	cons = smp_load_acquire(&r->hdr->consumer);
	if (!vhca_ring_sane(cq->prod, cons, r->g.log2_slots) ||
	    vhca_ring_full(cq->prod, cons, r->g.log2_slots)) {
		cq->overflowed = true;
		first_overflow = true;
		err = -ENOSPC;
		goto out;
	}
	slot = vhca_uring_slot(r, cq->prod);
	memcpy(slot, cqe, sizeof(*cqe));
	if (cq->timestamps) {
		u64 now = ktime_get_ns();

		slot->ts = now;
		slot->ts_real = ktime_mono_to_real(now);
	}
	/* Release: the CQE is written before the index that shows it. */
	smp_store_release(&r->hdr->producer, ++cq->prod);
	fire = vhca_cq_arm_fires(cq, solicited ||
				 cqe->status != IB_WC_SUCCESS);
out:
	spin_unlock_irqrestore(&cq->lock, flags);
	if (first_overflow)
		vhca_cq_error(cq);
	if (fire && cq->ibcq.comp_handler)
		vhca_cq_fire(cq);
	return err;
}

/**
 * vhca_cq_take_arm() - apply the arms a user CQ's provider wrote in ctrl
 * @cq: a user CQ; caller holds cq->lock
 *
 * ctrl holds two counters the provider adds to (struct vhca_ring_hdr): a
 * change of the NEXT one arms for the next completion, else a change of
 * the SOLICITED one for the next solicited or failed one, unless already
 * armed for any.  The value is the process's to write; whatever it holds
 * can only make this CQ's own events more or fewer.
 */
void vhca_cq_take_arm(struct vhca_cq *cq)
{
	u32 arm = READ_ONCE(cq->ring.hdr->ctrl), old = cq->arm_seen;

	if (arm == old)
		return;
	cq->arm_seen = arm;
	if ((arm ^ old) & VHCA_CQ_ARM_NEXT_MASK)
		cq->notify = IB_CQ_NEXT_COMP;
	else if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_SOLICITED;
}

/**
 * vhca_cq_user_event() - the event of completions a provider made itself
 * @cq: a user CQ
 * @failed: one of them failed
 *
 * Fires the CQ's event as vhca_cq_post() would for a completion of its
 * own, if the CQ is armed for one (VHCA_IB_METHOD_CQ_EVENT).  Process
 * context.
 */
void vhca_cq_user_event(struct vhca_cq *cq, bool failed)
{
	unsigned long flags;
	bool fire;

	spin_lock_irqsave(&cq->lock, flags);
	fire = vhca_cq_arm_fires(cq, failed);
	spin_unlock_irqrestore(&cq->lock, flags);
	if (fire && cq->ibcq.comp_handler)
		vhca_cq_fire(cq);
}

/**
 * vhca_req_notify_cq() - arm a CQ for its next (solicited) completion
 * @ibcq: the CQ
 * @flags: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED, maybe with
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * Return: 0, or 1 with IB_CQ_REPORT_MISSED_EVENTS when completions are
 * already waiting (the consumer index is the poller's, so this is only a
 * hint, as the verb allows).
 */
int vhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct vhca_cq *cq = to_vcq(ibcq);
	unsigned long irq;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irq);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    cq->prod != READ_ONCE(cq->ring.hdr->consumer))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irq);
	return ret;
}
