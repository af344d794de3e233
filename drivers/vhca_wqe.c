// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * WQE helpers: what each send opcode is, in one table, and the check every
 * send WQE passes before the local engine or the RC requester acts on it.
 * A user QP's send ring is written by its process at will, so the table,
 * not whoever posted the WQE, says which opcodes a QP type has and which
 * of them may carry their data inline.
 */
#include "vhca.h"

#define VHCA_QPT(t)	BIT(IB_QPT_##t)
#define VHCA_QPT_CONN	(VHCA_QPT(RC) | VHCA_QPT(UC))
#define VHCA_QPT_ALL	(VHCA_QPT_CONN | VHCA_QPT(UD) | VHCA_QPT(GSI))

const struct vhca_wr_op vhca_wr_ops[VHCA_WR_OPS] = {
	[IB_UVERBS_WR_RDMA_WRITE] = {
		.qpts = VHCA_QPT_CONN,
		.flags = VHCA_OPF_DATA_OUT | VHCA_OPF_REMOTE,
		.wc = IB_WC_RDMA_WRITE,
	},
	[IB_UVERBS_WR_RDMA_WRITE_WITH_IMM] = {
		.qpts = VHCA_QPT_CONN,
		.flags = VHCA_OPF_DATA_OUT | VHCA_OPF_REMOTE | VHCA_OPF_IMM,
		.wc = IB_WC_RDMA_WRITE,
	},
	[IB_UVERBS_WR_SEND] = {
		.qpts = VHCA_QPT_ALL,
		.flags = VHCA_OPF_DATA_OUT,
		.wc = IB_WC_SEND,
	},
	[IB_UVERBS_WR_SEND_WITH_IMM] = {
		.qpts = VHCA_QPT_ALL,
		.flags = VHCA_OPF_DATA_OUT | VHCA_OPF_IMM,
		.wc = IB_WC_SEND,
	},
	[IB_UVERBS_WR_SEND_WITH_INV] = {
		.qpts = VHCA_QPT(RC),
		.flags = VHCA_OPF_DATA_OUT,
		.wc = IB_WC_SEND,
	},
	/* a READ's SGEs are written: nothing to carry inline */
	[IB_UVERBS_WR_RDMA_READ] = {
		.qpts = VHCA_QPT(RC),
		.flags = VHCA_OPF_REMOTE | VHCA_OPF_RD_ATOMIC,
		.wc = IB_WC_RDMA_READ,
	},
	[IB_UVERBS_WR_ATOMIC_CMP_AND_SWP] = {
		.qpts = VHCA_QPT(RC),
		.flags = VHCA_OPF_REMOTE | VHCA_OPF_RD_ATOMIC,
		.wc = IB_WC_COMP_SWAP,
	},
	[IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD] = {
		.qpts = VHCA_QPT(RC),
		.flags = VHCA_OPF_REMOTE | VHCA_OPF_RD_ATOMIC,
		.wc = IB_WC_FETCH_ADD,
	},
	[IB_UVERBS_WR_LOCAL_INV] = {
		.qpts = VHCA_QPT_ALL,
		.flags = VHCA_OPF_LOCAL,
		.wc = IB_WC_LOCAL_INV,
	},
	/* a user's ring cannot describe a page list */
	[VHCA_WR_REG_MR] = {
		.qpts = VHCA_QPT_ALL,
		.flags = VHCA_OPF_LOCAL | VHCA_OPF_KERNEL,
		.wc = IB_WC_REG_MR,
	},
};

/**
 * vhca_wqe_check() - whether a send WQE may run on its QP at all
 * @qp: the QP whose send ring it was copied from
 * @w: the WQE, in the QP's scratch (never the ring itself)
 *
 * The opcode must be one the QP's type has (a UD QP has no RDMA WRITE, a
 * UC QP no READ), REG_MR is for kernel QPs, and only an opcode whose SGEs
 * are the data it sends may carry that data inline instead: anything
 * else would have the engine write into, or take keys from, the WQE's
 * own bytes.  Lengths, keys and SGEs are checked where they are used.
 *
 * Return: 0, or the IB_WC_* status the WQE completes with.
 */
int vhca_wqe_check(const struct vhca_qp *qp, const struct vhca_swqe *w)
{
	const struct vhca_wr_op *op = vhca_wr_op(w->opcode);

	if (!op || !(op->qpts & BIT(qp->ibqp.qp_type)))
		return IB_WC_LOC_QP_OP_ERR;
	if ((op->flags & VHCA_OPF_KERNEL) && qp->ibqp.uobject)
		return IB_WC_LOC_QP_OP_ERR;
	if ((w->flags & VHCA_SWQE_F_INLINE) && !(op->flags & VHCA_OPF_DATA_OUT))
		return IB_WC_LOC_QP_OP_ERR;
	return 0;
}

/**
 * vhca_wqe_len() - the bytes a send WQE that ran moved, for its completion
 * @qp: its QP
 * @w: the WQE, in the QP's scratch
 *
 * What its inline data or its SGEs add up to (a READ's: what it read).
 * The SGEs were checked when it ran; they are bounded again here because
 * a WQE that failed may complete with this too.
 *
 * Return: the length, at most U32_MAX.
 */
u32 vhca_wqe_len(const struct vhca_qp *qp, const struct vhca_swqe *w)
{
	u32 i, n = min_t(u32, w->num_sge, qp->sq.g.max_sge);
	u64 len = 0;

	if (w->flags & VHCA_SWQE_F_INLINE)
		return w->inline_len;
	for (i = 0; i < n; i++)
		len += w->sge[i].length;
	return min_t(u64, len, U32_MAX);
}
