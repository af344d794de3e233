/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The bottom of vhca's engine: what every path does with a WQE
 * (vhca_wqe.c), the send ring's primitives, and waking a QP's work
 * (vhca_work.c).  The scheduler, the executors and the verbs call down
 * into it; it calls only the objects of vhca.h.
 */
#ifndef VHCA_WQE_H
#define VHCA_WQE_H

#include "vhca.h"

/* vhca_wqe.c: what every path does with a WQE */
enum {
	VHCA_OPF_DATA_OUT	= 1 << 0,	/* its SGEs, or inline bytes, are sent */
	VHCA_OPF_REMOTE		= 1 << 1,	/* names remote memory by rkey */
	/*
	 * a READ, atomic, ATOMIC WRITE or FLUSH: counts against
	 * max_rd_atomic, is answered by the responder's resources, done by
	 * its response
	 */
	VHCA_OPF_RD_ATOMIC	= 1 << 2,
	VHCA_OPF_IMM		= 1 << 3,	/* carries immediate data */
	VHCA_OPF_LOCAL		= 1 << 4,	/* no packet: done on this host */
	VHCA_OPF_KERNEL		= 1 << 5,	/* kernel QPs only */
	VHCA_OPF_SEND		= 1 << 6,	/* takes a receive WQE */
	VHCA_OPF_WRITE		= 1 << 7,	/* an RDMA WRITE */
	VHCA_OPF_READ		= 1 << 8,	/* an RDMA READ */
	VHCA_OPF_ATOMIC		= 1 << 9,	/* an atomic */
	VHCA_OPF_INV		= 1 << 10,	/* invalidates the responder's rkey */
	VHCA_OPF_ATOMIC_WRITE	= 1 << 11,	/* stores 8 bytes at once */
	VHCA_OPF_FLUSH		= 1 << 12,	/* makes placed data visible */
	/*
	 * answered by a READ response of no bytes, which an ACK of a later
	 * PSN stands for (rxe's requester takes either)
	 */
	VHCA_OPF_EMPTY_RESP	= 1 << 13,
};

/**
 * struct vhca_wr_op - what a send opcode is
 * @qpts: the QP types that have it, as BIT(IB_QPT_*)
 * @flags: VHCA_OPF_*
 * @wc: the opcode its completion reports
 */
struct vhca_wr_op {
	u16 qpts;
	u16 flags;
	u8 wc;
};

#define VHCA_WR_OPS	(VHCA_WR_REG_MR + 1)
extern const struct vhca_wr_op vhca_wr_ops[VHCA_WR_OPS];

/* The table's entry for @opcode, or NULL for an opcode vhca does not have. */
static inline const struct vhca_wr_op *vhca_wr_op(u8 opcode)
{
	if (opcode >= VHCA_WR_OPS || !vhca_wr_ops[opcode].qpts)
		return NULL;
	return &vhca_wr_ops[opcode];
}

/* Whether send opcode @opcode has all of @flags: never one vhca lacks. */
static inline bool vhca_wr_is(u8 opcode, u16 flags)
{
	const struct vhca_wr_op *op = vhca_wr_op(opcode);

	return op && (op->flags & flags) == flags;
}

/**
 * struct vhca_rmsg - what a receive completion says of its message
 * @flags: VHCA_OPF_WRITE, VHCA_OPF_IMM and VHCA_OPF_INV, as the send
 *	opcode of the message has them
 * @se: the sender asked for a solicited event
 * @ex: the immediate data, or the rkey the message invalidated
 * @tm_op: on a tag-matching SRQ: the completion's opcode (VHCA_WC_TM_*)
 * @tm_flags: and its VHCA_CQE_F_TM_MATCH and _DATA
 * @tm_tag: and its tag
 * @tm_ctx: and the TMH's app_ctx
 */
struct vhca_rmsg {
	u16 flags;
	bool se;
	u32 ex;
	u8 tm_op;
	u16 tm_flags;
	u64 tm_tag;
	__be32 tm_ctx;
};

/* What a receive completion says of a message sent by send WQE @w. */
static inline struct vhca_rmsg vhca_rmsg_of(const struct vhca_swqe *w)
{
	const struct vhca_wr_op *op = vhca_wr_op(w->opcode);

	return (struct vhca_rmsg){
		.flags = op ? op->flags : 0,
		.se = w->flags & VHCA_SWQE_F_SOLICITED,
		.ex = w->ex,
	};
}

/*
 * Whether a send WQE that ran with send flags @flags leaves a CQE: if it
 * asked for one, its QP signals all, or it failed.
 */
static inline bool vhca_send_signals(const struct vhca_qp *qp, u8 flags,
				     u8 status)
{
	return status != IB_WC_SUCCESS || qp->sig_all ||
	       (flags & VHCA_SWQE_F_SIGNALED);
}

/* A position in a list of segments: where a copy reads or writes next. */
struct vhca_cursor {
	const struct vhca_seg *seg;
	unsigned int nseg;
	u32 off;	/* within *seg */
};

int vhca_wqe_check(const struct vhca_qp *qp, const struct vhca_swqe *w);
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
void vhca_wqe_debugfs_init(struct dentry *dir);
#endif
u32 vhca_wqe_len(const struct vhca_qp *qp, const struct vhca_swqe *w);

/* A WQE's inline bytes, in its slot, as its data: one segment, or none. */
static inline u32 vhca_wqe_inline_seg(const struct vhca_swqe *w,
				      struct vhca_seg *seg, unsigned int *nseg)
{
	seg[0] = (struct vhca_seg){ .kbuf = (const u8 *)w->sge,
				    .len = w->inline_len };
	*nseg = w->inline_len ? 1 : 0;
	return w->inline_len;
}

s64 vhca_wqe_source(struct vhca_dev *vdev, struct vhca_qp *qp,
		    const struct vhca_swqe *w, struct vhca_seg *seg,
		    unsigned int *nseg, int access);
s64 vhca_sges(struct vhca_dev *vdev, const struct vhca_sge *sge, u32 num,
	      struct ib_pd *pd, int access, struct vhca_seg *seg,
	      unsigned int *nseg);
void vhca_cursor_skip(struct vhca_cursor *c, u32 n);
void vhca_copy(struct vhca_cursor *dst, struct vhca_cursor *src, u32 len);

/* vhca_copy_held()'s code for "fault these pages in, then again" */
#define VHCA_COPY_FAULT	3
int vhca_copy_held(const struct vhca_seg *dseg, unsigned int nd, u32 doff,
		   const struct vhca_seg *sseg, unsigned int ns, u32 soff,
		   u32 len, struct vhca_fault *f);
int vhca_cursor_hold(struct vhca_cursor c, u32 len, bool write,
		     struct vhca_fault *f);
void vhca_cursor_release(struct vhca_cursor c, u32 len);
bool vhca_segs_odp(const struct vhca_seg *seg, unsigned int n);
bool vhca_pop_recv(struct vhca_qp *dst, struct vhca_rwqe *wqe, u32 *max_sge);
/* a receive completion's VLAN when it came on none (the core's value) */
#define VHCA_NO_VLAN	0xffff
void vhca_recv_done_grh(struct vhca_qp *dst, u64 wr_id, u8 status,
			u32 len, const struct vhca_rmsg *msg, u32 src_qpn,
			u8 net, u16 vlan);
void vhca_recv_done(struct vhca_qp *dst, u64 wr_id, u8 status, u32 len,
		    const struct vhca_rmsg *msg, u32 src_qpn);
int vhca_recv_take(struct vhca_qp *dst, struct vhca_rwqe *wqe, u32 src_qpn);
void vhca_send_done(struct vhca_qp *qp, const struct vhca_swqe *w, u8 status,
		    u32 len);
int vhca_wqe_local(struct vhca_dev *vdev, struct vhca_qp *qp,
		   const struct vhca_swqe *w);
int vhca_atomic(struct vhca_mr *mr, u32 key, u64 va, bool cas,
		u64 compare_add, u64 swap, u64 *orig, struct vhca_fault *f);
int vhca_atomic_store(struct vhca_mr *mr, u32 key, u64 va, u64 val,
		      struct vhca_fault *f);
#ifdef VHCA_FLUSH
int vhca_flush(struct vhca_qp *qp, u32 rkey, u64 va, u32 len, u8 type,
	       u8 level);
#else
/* a kernel whose verbs have no FLUSH: the device does not offer it */
static inline int vhca_flush(struct vhca_qp *qp, u32 rkey, u64 va, u32 len,
			     u8 type, u8 level)
{
	return IB_WC_REM_INV_REQ_ERR;
}
#endif
struct vhca_swqe *vhca_sq_fetch_at(struct vhca_qp *qp, u32 idx);
void vhca_sq_advance(struct vhca_qp *qp);
bool vhca_sq_retire(struct vhca_qp *qp, const struct vhca_swqe *w,
		    int status, u32 len);
bool vhca_sq_producer(struct vhca_qp *qp, u32 sent, u32 *prod);

/* vhca_work.c: the workqueues */
extern struct workqueue_struct *vhca_wq;
extern struct workqueue_struct *vhca_tx_wq;

int vhca_work_init(void);
void vhca_work_exit(void);
void vhca_qp_kick(struct vhca_qp *qp);
void vhca_qp_kick_now(struct vhca_qp *qp);
void vhca_qp_kick_after(struct vhca_qp *qp, u8 timer);
unsigned long vhca_qp_timeout_jiffies(const struct vhca_qp *qp);
void vhca_qp_kick_timeout(struct vhca_qp *qp);

#endif /* VHCA_WQE_H */
