// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Tag matching (IBV_SRQT_TM): ibv_post_srq_ops() adds and removes tags in
 * the SRQ's tag table, which the engine takes them from as messages
 * match, with no system call either way (vhca-abi.h has the table, and
 * Documentation/rings.md the rules).  The provider completes each list
 * operation itself, into a small queue of the SRQ's that its CQ's poll
 * takes before the kernel's ring.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"

/* The engine's count of unexpected messages, and ours. */
static struct vhca_tm_hdr *vhca_tm_hdr(const struct vhca_srq *srq)
{
	return (struct vhca_tm_hdr *)srq->tm.hdr;
}

/*
 * Map a new tag-matching SRQ's tag table (@drv), and hook the SRQ on its
 * CQ, whose poll takes the completions of its list operations: at most
 * @max_ops of them wait there.
 */
int vhca_tm_attach(struct vhca_srq *srq, int cmd_fd,
		   const struct vhca_create_srq_resp *drv, struct ibv_cq *ibcq,
		   uint32_t max_ops)
{
	struct vhca_cq *cq = container_of(ibcq, struct vhca_cq, cq);
	int ret;

	if (!drv->tm_mmap_size || !max_ops || max_ops > VHCA_TM_MAX_OPS)
		return drv->tm_mmap_size ? EINVAL : EPROTO;
	ret = vhca_mring_map(&srq->tm, cmd_fd, drv->tm_mmap_key,
			     drv->tm_mmap_size, drv->tm_log2_tags,
			     __builtin_ctz(VHCA_TM_TAG_STRIDE),
			     sizeof(struct vhca_tm_tag));
	if (ret)
		return ret;
	srq->tm_ntags = 1U << drv->tm_log2_tags;
	/* a power of two, so the indices wrap with the slots */
	while (max_ops & (max_ops - 1))
		max_ops += max_ops & -max_ops;
	srq->tm_gen = calloc(srq->tm_ntags, sizeof(*srq->tm_gen));
	srq->ops = calloc(max_ops, sizeof(*srq->ops));
	if (!srq->tm_gen || !srq->ops) {
		vhca_tm_detach(srq);
		return ENOMEM;
	}
	srq->max_ops = max_ops;
	srq->cq = cq;
	pthread_spin_lock(&cq->lock);
	srq->cq_next = cq->tm_srqs;
	cq->tm_srqs = srq;
	pthread_spin_unlock(&cq->lock);
	return 0;
}

/* Undo vhca_tm_attach(), once the kernel destroyed the SRQ. */
void vhca_tm_detach(struct vhca_srq *srq)
{
	struct vhca_srq **p;

	if (srq->cq) {
		pthread_spin_lock(&srq->cq->lock);
		for (p = &srq->cq->tm_srqs; *p; p = &(*p)->cq_next)
			if (*p == srq) {
				*p = srq->cq_next;
				break;
			}
		pthread_spin_unlock(&srq->cq->lock);
	}
	vhca_mring_unmap(&srq->tm);
	free(srq->tm_gen);
	free(srq->ops);
	srq->tm_gen = NULL;
	srq->ops = NULL;
	srq->cq = NULL;
}

/*
 * IBV_WR_TAG_ADD: the first slot no tag is posted in (free, or taken by a
 * message: the engine copied it out before it took it) gets the tag, with
 * the next posting number; its state goes last, with release order, so
 * the engine that sees it POSTED sees the rest.  *@status stays
 * IBV_WC_SUCCESS.  Returns ENOMEM with the table full.
 */
static int vhca_tm_add(struct vhca_srq *srq, struct ibv_ops_wr *op)
{
	struct vhca_tm_tag *t = NULL;
	uint32_t i, st;
	int k;

	if (op->tm.add.num_sge < 0 || op->tm.add.num_sge > VHCA_TM_MAX_SGE ||
	    (op->tm.add.num_sge && !op->tm.add.sg_list))
		return EINVAL;
	for (i = 0; i < srq->tm_ntags; i++) {
		t = vhca_mring_slot(&srq->tm, i);
		st = __atomic_load_n(&t->state, __ATOMIC_RELAXED);
		if ((st & VHCA_TM_STATE_MASK) != VHCA_TM_POSTED)
			break;
	}
	if (i == srq->tm_ntags)
		return ENOMEM;
	t->num_sge = op->tm.add.num_sge;
	t->tag = op->tm.add.tag;
	t->mask = op->tm.add.mask;
	t->wr_id = op->tm.add.recv_wr_id;
	for (k = 0; k < op->tm.add.num_sge; k++)
		t->sge[k] = (struct vhca_sge){
			.addr = op->tm.add.sg_list[k].addr,
			.length = op->tm.add.sg_list[k].length,
			.lkey = op->tm.add.sg_list[k].lkey,
		};
	st = (srq->tm_seq++ << VHCA_TM_SEQ_SHIFT) | VHCA_TM_POSTED;
	/* Release pairs with the engine's acquire of state. */
	__atomic_store_n(&t->state, st, __ATOMIC_RELEASE);
	op->tm.handle = (uint32_t)++srq->tm_gen[i] << 16 | i;
	return 0;
}

/*
 * IBV_WR_TAG_DEL: the tag of handle op->tm.handle leaves the table unless
 * a message took it first, whichever of the two wins the compare-and-swap
 * of its state; a tag taken, or removed already, completes IBV_WC_TM_ERR
 * (its slot may hold another tag by now: its generation says so).
 */
static int vhca_tm_del(struct vhca_srq *srq, struct ibv_ops_wr *op,
		       uint8_t *status)
{
	uint32_t i = op->tm.handle & 0xffff, st;
	struct vhca_tm_tag *t;

	if (i >= srq->tm_ntags)
		return EINVAL;
	t = vhca_mring_slot(&srq->tm, i);
	st = __atomic_load_n(&t->state, __ATOMIC_RELAXED);
	if (op->tm.handle >> 16 != srq->tm_gen[i] ||
	    (st & VHCA_TM_STATE_MASK) != VHCA_TM_POSTED ||
	    !__atomic_compare_exchange_n(&t->state, &st,
					 (st & ~VHCA_TM_STATE_MASK) |
					 VHCA_TM_FREE, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		*status = IBV_WC_TM_ERR;
	return 0;
}

/*
 * The event of the list operations' completions just queued on @cq (one
 * of them failed if @failed), which the kernel never sees: if the process
 * armed the CQ since the last such call, for any completion or for
 * solicited ones and one failed, the kernel fires it for an arm it has
 * not used (VHCA_IB_METHOD_CQ_EVENT; the kernel decides again, and fires
 * nothing if a completion of its own used the arm first).  A system call
 * only then: a process that polls never arms.  Dekker's pattern with the
 * arm: we store the completion, then load tm_arm; the arm stores tm_arm,
 * then the poller's next poll loads the completions.  With SEQ_CST on
 * both sides at least one of them sees the other's store, so a
 * completion is either polled after the arm or gets its event.
 */
static void vhca_tm_event(struct vhca_cq *cq, bool failed)
{
	const struct ib_uverbs_attr attr[] = {
		{ .attr_id = VHCA_IB_ATTR_CQ_EVENT_HANDLE,
		  .flags = UVERBS_ATTR_F_MANDATORY,
		  .data = cq->cq.handle },
		{ .attr_id = VHCA_IB_ATTR_CQ_EVENT_FLAGS,
		  .len = sizeof(uint32_t),
		  .data = failed ? VHCA_CQ_EVENT_FAILED : 0 },
	};
	uint32_t arm;

	/* the completions' release store of ops_prod before the load */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	arm = __atomic_load_n(&cq->tm_arm, __ATOMIC_SEQ_CST);
	if (!(arm & VHCA_TM_ARM_NEXT) &&
	    !((arm & VHCA_TM_ARM_SOLICITED) && failed))
		return;
	__atomic_store_n(&cq->tm_arm, 0, __ATOMIC_SEQ_CST);
	/* an error leaves the event unsent, as a lost interrupt would */
	(void)vhca_method(cq->cq.context, UVERBS_OBJECT_CQ,
			  VHCA_IB_METHOD_CQ_EVENT, attr, 2);
}

/* One list operation, applied and, if signaled, completed. */
static int vhca_tm_op(struct vhca_srq *srq, struct ibv_ops_wr *op)
{
	static const uint8_t wc[] = {
		[IBV_WR_TAG_ADD] = IBV_WC_TM_ADD,
		[IBV_WR_TAG_DEL] = IBV_WC_TM_DEL,
		[IBV_WR_TAG_SYNC] = IBV_WC_TM_SYNC,
	};
	struct vhca_tm_hdr *h = vhca_tm_hdr(srq);
	bool sig = op->flags & IBV_OPS_SIGNALED;
	uint8_t status = IBV_WC_SUCCESS;
	struct vhca_tm_wc *c;
	int ret;

	if (op->flags & ~(IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC) ||
	    (unsigned int)op->opcode >= sizeof(wc))
		return EINVAL;
	/* room for its completion first: nothing is applied unsaid */
	if (sig && srq->ops_prod - __atomic_load_n(&srq->ops_cons,
						    __ATOMIC_ACQUIRE) >=
		   srq->max_ops)
		return ENOMEM;
	switch (op->opcode) {
	case IBV_WR_TAG_ADD:
		ret = vhca_tm_add(srq, op);
		break;
	case IBV_WR_TAG_DEL:
		ret = vhca_tm_del(srq, op, &status);
		break;
	default:
		ret = 0;
		break;
	}
	if (ret)
		return ret;
	if (op->opcode == IBV_WR_TAG_SYNC || (op->flags & IBV_OPS_TM_SYNC))
		__atomic_store_n(&h->synced, op->tm.unexpected_cnt,
				 __ATOMIC_RELEASE);
	if (!sig)
		return 0;
	c = &srq->ops[srq->ops_prod & (srq->max_ops - 1)];
	*c = (struct vhca_tm_wc){
		.wr_id = op->wr_id, .opcode = wc[op->opcode], .status = status,
		/* out of phase: the engine matches nothing until a sync */
		.flags = __atomic_load_n(&h->unexpected, __ATOMIC_ACQUIRE) !=
			 __atomic_load_n(&h->synced, __ATOMIC_RELAXED) ?
			 VHCA_CQE_F_TM_SYNC_REQ : 0,
	};
	/* Release pairs with the poll's acquire: the completion is whole. */
	__atomic_store_n(&srq->ops_prod, srq->ops_prod + 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * ibv_post_srq_ops(3): each operation in order until one fails, which
 * *bad_op names (EINVAL: malformed, or not a tag-matching SRQ; ENOMEM:
 * the table or the queue of completions is full).
 */
int vhca_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *op,
		      struct ibv_ops_wr **bad_op)
{
	struct vhca_srq *srq = container_of(ibsrq, struct vhca_srq, vsrq.srq);
	bool queued, failed = false;
	uint32_t i, first;
	int ret = 0;

	if (!srq->tm.map) {
		*bad_op = op;
		return EINVAL;
	}
	pthread_spin_lock(&srq->lock);
	first = srq->ops_prod;
	for (; op; op = op->next) {
		ret = vhca_tm_op(srq, op);
		if (ret) {
			*bad_op = op;
			break;
		}
	}
	queued = srq->ops_prod != first;
	for (i = first; i != srq->ops_prod; i++)
		failed |= srq->ops[i & (srq->max_ops - 1)].status !=
			  IBV_WC_SUCCESS;
	pthread_spin_unlock(&srq->lock);
	if (queued)
		vhca_tm_event(srq->cq, failed);
	return ret;
}

/*
 * The oldest completion of a list operation of a tag-matching SRQ of @cq,
 * as a CQE in @cqe.  Caller holds cq->lock.  Returns false if none waits.
 */
bool vhca_tm_take_wc(struct vhca_cq *cq, struct vhca_cqe *cqe)
{
	struct vhca_srq *srq;
	struct vhca_tm_wc *c;
	uint32_t cons;

	for (srq = cq->tm_srqs; srq; srq = srq->cq_next) {
		cons = srq->ops_cons;
		/* Acquire pairs with the post's release of ops_prod. */
		if (cons == __atomic_load_n(&srq->ops_prod, __ATOMIC_ACQUIRE))
			continue;
		c = &srq->ops[cons & (srq->max_ops - 1)];
		*cqe = (struct vhca_cqe){
			.wr_id = c->wr_id, .status = c->status,
			.opcode = c->opcode,
			.flags = VHCA_CQE_F_TM | c->flags,
		};
		/* Release: the slot is read before a post may reuse it. */
		__atomic_store_n(&srq->ops_cons, cons + 1, __ATOMIC_RELEASE);
		return true;
	}
	return false;
}
