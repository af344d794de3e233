// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The kernel's side of the rings: ib_post_send(), ib_post_recv(),
 * ib_post_srq_recv() and ib_poll_cq() of kernel QPs, SRQs and CQs.  They
 * write the WQEs and read the CQEs the provider does, in the same layout,
 * in rings only the kernel sees; the engine runs them exactly as it runs a
 * user's (and trusts them no more).  Any context, as the verbs allow.
 *
 * For a user QP, POST_SEND with no WR is the send doorbell; user rings are
 * never written here.
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>

#include "vhca_engine.h"

/* What each QP type may post; the engine checks again. */
static bool vhca_wr_ok(enum ib_qp_type type, enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
		return type == IB_QPT_RC || type == IB_QPT_UC;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return type == IB_QPT_RC;
	default:
		return false;
	}
}

/* The WR's data, copied into the WQE (IB_SEND_INLINE). */
static int vhca_wqe_inline(struct vhca_qp *qp, const struct ib_send_wr *wr,
			   struct vhca_swqe *w)
{
	u8 *p = (u8 *)w->sge;
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > qp->max_inline - len)
			return -EINVAL;
		/* a virtual-DMA device's addresses are kernel addresses */
		memcpy(p + len, (void *)(uintptr_t)sge->addr, sge->length);
		len += sge->length;
	}
	w->inline_len = len;
	w->flags |= VHCA_SWQE_F_INLINE;
	return 0;
}

/**
 * vhca_wqe_from_wr() - write a send WR as a WQE
 * @qp: the kernel QP
 * @wr: the WR
 * @w: its slot in the send ring
 *
 * Return: 0, or -EINVAL for a WR the QP cannot take (opcode, SGE count,
 * inline size), which is then not posted.
 */
static int vhca_wqe_from_wr(struct vhca_qp *qp, const struct ib_send_wr *wr,
			    struct vhca_swqe *w)
{
	enum ib_qp_type type = qp->ibqp.qp_type;
	const struct ib_reg_wr *reg;
	int i;

	memset(w, 0, VHCA_SWQE_HDR_SIZE);
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;	/* IB_WR_* == IB_UVERBS_WR_*, REG_MR too */
	/*
	 * In ERR every WR completes with FLUSH_ERR and nothing else is read.
	 * ib_drain_sq() posts an RDMA WRITE whatever the QP type, UD too, so
	 * the opcode must not be refused here (nor its ud_wr() read).
	 */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		return 0;
	if (!vhca_wr_ok(type, wr->opcode))
		return -EINVAL;
	if (wr->send_flags & IB_SEND_SIGNALED)
		w->flags |= VHCA_SWQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		w->flags |= VHCA_SWQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		w->flags |= VHCA_SWQE_F_FENCE;

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
		w->ex = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
		w->ex = wr->ex.invalidate_rkey;
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		w->ex = (__force u32)wr->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		w->rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->atomic.compare_add = atomic_wr(wr)->compare_add;
		w->atomic.swap = atomic_wr(wr)->swap;
		w->atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_LOCAL_INV:
		w->ex = wr->ex.invalidate_rkey;
		return 0;
	case IB_WR_REG_MR:
		/* The page list stays in the MR; the WQE says what to map. */
		reg = reg_wr(wr);
		w->ex = reg->key;
		w->reg.iova = reg->mr->iova;
		w->reg.length = reg->mr->length;
		w->reg.access = reg->access;
		w->reg.page_shift = ilog2(reg->mr->page_size);
		return 0;
	default:
		break;
	}
	if (vhca_qpt_ud(type)) {
		w->ud.av = to_vah(ud_wr(wr)->ah)->av;
		w->ud.remote_qpn = ud_wr(wr)->remote_qpn;
		w->ud.remote_qkey = ud_wr(wr)->remote_qkey;
	}

	if ((wr->send_flags & IB_SEND_INLINE) && wr->opcode != IB_WR_RDMA_READ &&
	    wr->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
	    wr->opcode != IB_WR_ATOMIC_FETCH_AND_ADD)
		return vhca_wqe_inline(qp, wr, w);
	if (wr->num_sge < 0 || wr->num_sge > qp->sq.g.max_sge)
		return -EINVAL;
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i].addr = wr->sg_list[i].addr;
		w->sge[i].length = wr->sg_list[i].length;
		w->sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/*
 * Posting follows the IB rules: WRs are taken in order up to the first
 * that cannot be, which *bad_wr names; nothing after it is posted.  A
 * full ring is -ENOMEM.  A QP in RESET takes nothing; a QP in ERR takes
 * WRs and flushes them, which is what ib_drain_qp() relies on.
 */
static int vhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	struct vhca_uring *r = &qp->sq;
	unsigned long flags;
	bool posted = false;
	int err = 0;
	u32 prod;

	if (ibqp->uobject) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;	/* user WRs live in the ring */
		}
		vhca_qp_doorbell(qp);
		return 0;
	}
	/*
	 * An XRC TGT QP sends nothing (its uverbs handle ends here too),
	 * and a kernel WR has no field for an INI's remote XRC SRQ.
	 */
	if (READ_ONCE(qp->state) == IB_QPS_RESET ||
	    vhca_qpt_xrc(ibqp->qp_type)) {
		*bad_wr = wr;
		return wr ? -EINVAL : 0;
	}

	spin_lock_irqsave(&qp->sq_post_lock, flags);
	prod = r->hdr->producer;	/* ours alone: the post lock */
	for (; wr; wr = wr->next) {
		/* Acquire pairs with the engine's release of what it freed. */
		u32 cons = smp_load_acquire(&r->hdr->consumer);

		if (vhca_ring_full(prod, cons, r->g.log2_slots)) {
			err = -ENOMEM;
			break;
		}
		err = vhca_wqe_from_wr(qp, wr, vhca_uring_slot(r, prod));
		if (err)
			break;
		/* Release: the WQE is written before the index shows it. */
		smp_store_release(&r->hdr->producer, ++prod);
		posted = true;
	}
	spin_unlock_irqrestore(&qp->sq_post_lock, flags);
	if (err)
		*bad_wr = wr;
	if (posted)
		vhca_qp_kick(qp);
	return err;
}

/* Post receive WRs on a kernel ring; caller holds its post lock. */
static int vhca_post_rwqes(struct vhca_uring *r, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{
	u32 prod = r->hdr->producer;	/* ours alone: the post lock */
	int i;

	for (; wr; wr = wr->next) {
		/* Acquire pairs with the engine's release of what it took. */
		u32 cons = smp_load_acquire(&r->hdr->consumer);
		struct vhca_rwqe *w;

		if (wr->num_sge < 0 || wr->num_sge > r->g.max_sge) {
			*bad_wr = wr;
			return -EINVAL;
		}
		if (vhca_ring_full(prod, cons, r->g.log2_slots)) {
			*bad_wr = wr;
			return -ENOMEM;
		}
		w = vhca_uring_slot(r, prod);
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		w->rsvd = 0;
		for (i = 0; i < wr->num_sge; i++) {
			w->sge[i].addr = wr->sg_list[i].addr;
			w->sge[i].length = wr->sg_list[i].length;
			w->sge[i].lkey = wr->sg_list[i].lkey;
		}
		/* Release: the WQE is written before the index shows it. */
		smp_store_release(&r->hdr->producer, ++prod);
	}
	return 0;
}

static int vhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	unsigned long flags;
	int err;

	/* no user QP comes here (no POST_RECV in uverbs_cmd_mask) */
	if (ibqp->uobject || !qp->rq.hdr ||
	    READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_post_lock, flags);
	err = vhca_post_rwqes(&qp->rq, wr, bad_wr);
	spin_unlock_irqrestore(&qp->rq_post_lock, flags);
	/* nothing will ever arrive for these: complete them now */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		vhca_qp_flush_rq(qp);
	return err;
}

static int vhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad_wr)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);
	unsigned long flags;
	int err;

	if (ibsrq->uobject) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->post_lock, flags);
	err = vhca_post_rwqes(&srq->ring, wr, bad_wr);
	spin_unlock_irqrestore(&srq->post_lock, flags);
	return err;
}

/* A CQE as ib_poll_cq() reports it.  Caller holds rcu_read_lock(). */
static void vhca_cqe_to_wc(struct vhca_dev *vdev, const struct vhca_cqe *cqe,
			   struct ib_wc *wc)
{
	struct vhca_qp *qp = xa_load(&vdev->qp_xa, cqe->qp_num);
	u16 f = cqe->flags;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	/* a kernel QP outlives its completions: its user drains it first */
	wc->qp = qp ? &qp->ibqp : NULL;
	if (f & VHCA_CQE_F_IMM) {
		wc->ex.imm_data = (__force __be32)cqe->ex;
		wc->wc_flags |= IB_WC_WITH_IMM;
	}
	if (f & VHCA_CQE_F_INV) {
		wc->ex.invalidate_rkey = cqe->ex;
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	if (f & VHCA_CQE_F_GRH)
		wc->wc_flags |= IB_WC_GRH;
	if (f & VHCA_CQE_F_NET_HDR) {
		wc->network_hdr_type = cqe->network_hdr_type;
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
	}
	if (f & VHCA_CQE_F_SMAC) {
		memcpy(wc->smac, cqe->smac, ETH_ALEN);
		wc->wc_flags |= IB_WC_WITH_SMAC;
	}
	if (f & VHCA_CQE_F_VLAN) {
		wc->vlan_id = cqe->vlan_id;
		wc->wc_flags |= IB_WC_WITH_VLAN;
	}
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->port_num = VHCA_PORT;
}

static int vhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct vhca_dev *vdev = to_vdev(ibcq->device);
	struct vhca_cq *cq = to_vcq(ibcq);
	struct vhca_uring *r = &cq->ring;
	unsigned long flags;
	u32 cons, prod;
	int n = 0;

	if (ibcq->uobject)
		return -EINVAL;	/* a user CQ is polled in userspace */
	spin_lock_irqsave(&cq->poll_lock, flags);
	cons = r->hdr->consumer;	/* ours alone: the poll lock */
	/* Acquire pairs with vhca_cq_post()'s release of the producer. */
	prod = smp_load_acquire(&r->hdr->producer);
	rcu_read_lock();
	for (; n < num_entries && cons != prod; n++, cons++)
		vhca_cqe_to_wc(vdev, vhca_uring_slot(r, cons), &wc[n]);
	rcu_read_unlock();
	/* Release: the CQEs are read before their slots are handed back. */
	smp_store_release(&r->hdr->consumer, cons);
	spin_unlock_irqrestore(&cq->poll_lock, flags);
	return n;
}

const struct ib_device_ops vhca_kverbs_ops = {
	.poll_cq = vhca_poll_cq,
	.post_recv = vhca_post_recv,
	.post_send = vhca_post_send,
	.post_srq_recv = vhca_post_srq_recv,
};
