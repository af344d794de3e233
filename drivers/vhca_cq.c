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

/**
 * vhca_cq_post() - add a completion to a CQ
 * @cq: the CQ
 * @cqe: the completion
 *
 * The consumer index is userspace's to write, so it is only checked for
 * being possible: a full ring, or an index that cannot be, overflows the
 * CQ.  An overflowed CQ takes no more completions and raises
 * IB_EVENT_CQ_ERR once, as a hardware CQ would.  Any context.
 *
 * Return: 0, or -ENOSPC if the CQ overflowed (now or before).
 */
int vhca_cq_post(struct vhca_cq *cq, const struct vhca_cqe *cqe)
{
	struct vhca_uring *r = &cq->ring;
	bool first_overflow = false;
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
	memcpy(vhca_uring_slot(r, cq->prod), cqe, sizeof(*cqe));
	/* Release: the CQE is written before the index that shows it. */
	smp_store_release(&r->hdr->producer, ++cq->prod);
out:
	spin_unlock_irqrestore(&cq->lock, flags);
	if (first_overflow)
		vhca_cq_error(cq);
	return err;
}
