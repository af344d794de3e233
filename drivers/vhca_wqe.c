// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * WQE helpers that the local engine, the requester and the responder
 * share: what each send opcode is, in one table, and the check every send
 * WQE passes before anything acts on it; turning SGEs into segments and
 * copying between them; taking receive WQEs and completing WQEs; atomics.
 * A user QP's send ring is written by its process at will, so the table,
 * not whoever posted the WQE, says which opcodes a QP type has and which
 * of them may carry their data inline.
 */
#include <linux/gfp.h>	/* 6.1's fault-inject.h needs bool and gfp_t first */
#include <linux/fault-inject.h>

#include "vhca_wqe.h"

static_assert((int)VHCA_NETWORK_IPV4 == (int)RDMA_NETWORK_IPV4 &&
	      (int)VHCA_NETWORK_IPV6 == (int)RDMA_NETWORK_IPV6);

#define VHCA_QPT(t)	BIT(IB_QPT_##t)
/* XRC's sending half has what RC has, but the newest opcodes */
#define VHCA_QPT_RC	(VHCA_QPT(RC) | VHCA_QPT(XRC_INI))
#define VHCA_QPT_CONN	(VHCA_QPT_RC | VHCA_QPT(UC))
#define VHCA_QPT_ALL	(VHCA_QPT_CONN | VHCA_QPT(UD) | VHCA_QPT(GSI))

const struct vhca_wr_op vhca_wr_ops[VHCA_WR_OPS] = {
	[IB_UVERBS_WR_RDMA_WRITE] = {
		.qpts = VHCA_QPT_CONN,
		.flags = VHCA_OPF_DATA_OUT | VHCA_OPF_REMOTE | VHCA_OPF_WRITE,
		.wc = IB_WC_RDMA_WRITE,
	},
	[IB_UVERBS_WR_RDMA_WRITE_WITH_IMM] = {
		.qpts = VHCA_QPT_CONN,
		.flags = VHCA_OPF_DATA_OUT | VHCA_OPF_REMOTE | VHCA_OPF_WRITE |
			 VHCA_OPF_IMM,
		.wc = IB_WC_RDMA_WRITE,
	},
	[IB_UVERBS_WR_SEND] = {
		.qpts = VHCA_QPT_ALL,
		.flags = VHCA_OPF_DATA_OUT | VHCA_OPF_SEND,
		.wc = IB_WC_SEND,
	},
	[IB_UVERBS_WR_SEND_WITH_IMM] = {
		.qpts = VHCA_QPT_ALL,
		.flags = VHCA_OPF_DATA_OUT | VHCA_OPF_SEND | VHCA_OPF_IMM,
		.wc = IB_WC_SEND,
	},
	[IB_UVERBS_WR_SEND_WITH_INV] = {
		.qpts = VHCA_QPT_RC,
		.flags = VHCA_OPF_DATA_OUT | VHCA_OPF_SEND | VHCA_OPF_INV,
		.wc = IB_WC_SEND,
	},
	/* a READ's SGEs are written: nothing to carry inline */
	[IB_UVERBS_WR_RDMA_READ] = {
		.qpts = VHCA_QPT_RC,
		.flags = VHCA_OPF_REMOTE | VHCA_OPF_RD_ATOMIC | VHCA_OPF_READ,
		.wc = IB_WC_RDMA_READ,
	},
	[IB_UVERBS_WR_ATOMIC_CMP_AND_SWP] = {
		.qpts = VHCA_QPT_RC,
		.flags = VHCA_OPF_REMOTE | VHCA_OPF_RD_ATOMIC | VHCA_OPF_ATOMIC,
		.wc = IB_WC_COMP_SWAP,
	},
	[IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD] = {
		.qpts = VHCA_QPT_RC,
		.flags = VHCA_OPF_REMOTE | VHCA_OPF_RD_ATOMIC | VHCA_OPF_ATOMIC,
		.wc = IB_WC_FETCH_ADD,
	},
#ifdef VHCA_HAVE_ATOMIC_WRITE
	/* its 8 bytes are in the WQE: no SGE, nothing inline */
	[IB_UVERBS_WR_ATOMIC_WRITE] = {
		.qpts = VHCA_QPT(RC),
		.flags = VHCA_OPF_REMOTE | VHCA_OPF_RD_ATOMIC |
			 VHCA_OPF_ATOMIC_WRITE | VHCA_OPF_EMPTY_RESP,
		.wc = IB_WC_ATOMIC_WRITE,
	},
#endif
#ifdef VHCA_FLUSH
	/*
	 * no data either way; posted by user QPs only, as the kernel's verbs
	 * have no work request carrying a FLUSH's fields (vhca_kverbs.c
	 * refuses IB_WR_FLUSH)
	 */
	[IB_UVERBS_WR_FLUSH] = {
		.qpts = VHCA_QPT(RC),
		.flags = VHCA_OPF_REMOTE | VHCA_OPF_RD_ATOMIC | VHCA_OPF_FLUSH |
			 VHCA_OPF_EMPTY_RESP,
		.wc = IB_WC_FLUSH,
	},
#endif
	[IB_UVERBS_WR_LOCAL_INV] = {
		.qpts = VHCA_QPT_ALL,
		.flags = VHCA_OPF_LOCAL,
		.wc = IB_WC_LOCAL_INV,
	},
	/* a user QP only: windows are for userspace */
	[IB_UVERBS_WR_BIND_MW] = {
		.qpts = VHCA_QPT_CONN,
		.flags = VHCA_OPF_LOCAL,
		.wc = IB_WC_BIND_MW,
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

/* Move @c forward by @n bytes; the caller knows they are there. */
void vhca_cursor_skip(struct vhca_cursor *c, u32 n)
{
	while (n) {
		u32 k = min(n, c->seg->len - c->off);

		c->off += k;
		n -= k;
		if (c->off == c->seg->len) {
			c->seg++;
			c->off = 0;
		}
	}
}

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * /sys/kernel/debug/vhca/corrupt_copy: the fault-injection attributes
 * (probability, times, ...) of one flipped byte in what the engine
 * copies.  The tests arm it to show that their data checks catch what
 * they are there to catch; kernels without fault injection have none.
 */
static DECLARE_FAULT_ATTR(vhca_corrupt_copy);

/* Flip a byte of @n just copied to @p, if armed. */
static void vhca_fault_corrupt(void *p, u32 n)
{
	if (should_fail(&vhca_corrupt_copy, n))
		((u8 *)p)[n / 2] ^= 0xff;
}

/**
 * vhca_wqe_debugfs_init() - the copy's fault point, in vhca's debugfs
 * @dir: vhca's directory
 */
void vhca_wqe_debugfs_init(struct dentry *dir)
{
	fault_create_debugfs_attr("corrupt_copy", dir, &vhca_corrupt_copy);
}
#else
static void vhca_fault_corrupt(void *p, u32 n) { }
#endif

/* Copy @len bytes from @src to @dst; both have at least that much. */
void vhca_copy(struct vhca_cursor *dst, struct vhca_cursor *src, u32 len)
{
	while (len) {
		const struct vhca_seg *d = dst->seg, *s = src->seg;
		u32 n = min3(len, d->len - dst->off, s->len - src->off);
		u32 droom = n, sroom = n;
		void *dp, *sp;

		if (!n) {
			if (dst->off == d->len) {
				dst->seg++;
				dst->off = 0;
			}
			if (src->off == s->len) {
				src->seg++;
				src->off = 0;
			}
			continue;
		}
		dp = d->kdst ? d->kdst + dst->off :
			 vhca_mr_map(d->mr, d->va + dst->off, &droom);
		sp = s->kbuf ? NULL : vhca_mr_map(s->mr, s->va + src->off, &sroom);
		n = min3(n, droom, sroom);
		memcpy(dp, sp ? sp : s->kbuf + src->off, n);
		vhca_fault_corrupt(dp, n);
		if (sp)
			vhca_mr_unmap(s->mr, sp);
		if (!d->kdst)
			vhca_mr_unmap(d->mr, dp);
		dst->off += n;
		src->off += n;
		len -= n;
	}
}

/*
 * Turn a WQE's SGEs into segments in @seg, checking each key for @pd and
 * @access.  Returns the total length, or -1 for a bad key or range.
 */
s64 vhca_sges(struct vhca_dev *vdev, const struct vhca_sge *sge, u32 num,
	      struct ib_pd *pd, int access, struct vhca_seg *seg,
	      unsigned int *nseg)
{
	s64 total = 0;
	u32 i;

	*nseg = 0;
	for (i = 0; i < num; i++) {
		u32 len = READ_ONCE(sge[i].length);
		u32 key = READ_ONCE(sge[i].lkey);
		u64 va = READ_ONCE(sge[i].addr);
		struct vhca_mr *mr;

		if (!len)
			continue;
		mr = vhca_mr_find(vdev, key, pd, access, va, len);
		if (!mr)
			return -1;
		seg[(*nseg)++] = (struct vhca_seg){ .mr = mr, .key = key,
						    .va = va, .len = len };
		total += len;
	}
	return total;
}

/* The WQE's data: its inline bytes or its SGEs (read locally). */
s64 vhca_wqe_source(struct vhca_dev *vdev, struct vhca_qp *qp,
		    const struct vhca_swqe *w, struct vhca_seg *seg,
		    unsigned int *nseg, int access)
{
	s64 len;

	if (w->flags & VHCA_SWQE_F_INLINE) {
		if (w->inline_len > qp->max_inline)
			return -IB_WC_LOC_LEN_ERR;
		return vhca_wqe_inline_seg(w, seg, nseg);
	}
	if (w->num_sge > qp->sq.g.max_sge)
		return -IB_WC_LOC_LEN_ERR;
	len = vhca_sges(vdev, w->sge, w->num_sge, qp->ibqp.pd, access, seg,
			nseg);
	if (len < 0)
		return -IB_WC_LOC_PROT_ERR;
	if (len > SZ_2G)
		return -IB_WC_LOC_LEN_ERR;
	return len;
}

/*
 * Fast-register MRs and windows can lose their key, and ODP MRs their
 * pages: a copy through one of those holds it (vhca_range_hold()).
 */
static bool vhca_seg_held(const struct vhca_seg *seg)
{
	return seg->mr && (seg->mr->type == VHCA_MR_FAST ||
			   seg->mr->type == VHCA_MR_MW ||
			   seg->mr->type == VHCA_MR_ODP);
}

static bool vhca_segs_held(const struct vhca_seg *seg, unsigned int n)
{
	while (n--)
		if (vhca_seg_held(&seg[n]))
			return true;
	return false;
}

/*
 * Let go of what vhca_range_hold() held for @len bytes from @c: the same
 * walk, so the same segments.
 */
static void vhca_range_release(struct vhca_cursor c, u32 len)
{
	while (len) {
		u32 k = min(len, c.seg->len - c.off);

		if (k && vhca_seg_held(c.seg))
			vhca_mr_read_end(c.seg->mr);
		len -= k;
		c.seg++;
		c.off = 0;
	}
}

/*
 * Hold the segments that @len bytes from @c touch, for a copy that
 * writes them if @write: a fast-register MR's or window's key stays
 * valid (LOCAL_INV and SEND_WITH_INV, on any QP and CPU, complete only
 * once vhca_range_release() let go: vhca_mr_revoke() waits), and an ODP
 * MR's pages stay (its invalidation waits: vhca_odp.c).  Bottom halves
 * off from here to the release: the invalidations spin, and may run in
 * softirq on this CPU.
 *
 * Returns 0; -ENOENT if a key went since it was looked up; or -EFAULT if
 * an ODP page is missing, which @f (if not NULL) then describes.  Nothing
 * is held on failure.
 */
static int vhca_range_hold(struct vhca_cursor c, u32 len, bool write,
			   struct vhca_fault *f)
{
	struct vhca_cursor first = c;
	u32 done = 0;

	while (len) {
		const struct vhca_seg *seg = c.seg;
		u32 k = min(len, seg->len - c.off);
		bool ok = true;

		if (!k) {
			c.seg++;
			c.off = 0;
			continue;
		}
		if (seg->mr && seg->mr->type == VHCA_MR_ODP) {
			ok = vhca_odp_hold(seg->mr, seg->va + c.off, k, write);
			if (!ok && f)
				*f = (struct vhca_fault){ .mr = seg->mr,
							  .va = seg->va + c.off,
							  .len = k,
							  .write = write };
		} else if (vhca_seg_held(seg)) {
			ok = vhca_mr_read_begin(seg->mr, seg->key);
		}
		if (!ok) {
			vhca_range_release(first, done);
			return seg->mr->type == VHCA_MR_ODP ? -EFAULT : -ENOENT;
		}
		done += k;
		len -= k;
		c.seg++;
		c.off = 0;
	}
	return 0;
}

/**
 * vhca_cursor_hold() - hold what @len bytes from @c touch, for copies
 * @c: where they start
 * @len: how many
 * @write: they are to be written
 * @f: where to say which ODP pages are missing, or NULL
 *
 * For a caller that copies in steps of its own (vhca_copy() on a cursor
 * of its own) what vhca_copy_held() copies at once: bottom halves are off
 * until vhca_cursor_release(), and the same rules hold.
 *
 * Return: 0; -ENOENT if a key went, -EFAULT if an ODP page is missing
 * (@f says which).  Nothing is held then.
 */
int vhca_cursor_hold(struct vhca_cursor c, u32 len, bool write,
		     struct vhca_fault *f)
{
	int err;

	local_bh_disable();
	err = vhca_range_hold(c, len, write, f);
	if (err)
		local_bh_enable();
	return err;
}

/* Let go of what vhca_cursor_hold() held over the same bytes. */
void vhca_cursor_release(struct vhca_cursor c, u32 len)
{
	vhca_range_release(c, len);
	local_bh_enable();
}

/* Whether any of @n segments is of an ODP MR. */
bool vhca_segs_odp(const struct vhca_seg *seg, unsigned int n)
{
	while (n--)
		if (seg[n].mr && seg[n].mr->type == VHCA_MR_ODP)
			return true;
	return false;
}

/*
 * The code vhca_copy_held() returns for a side (1 the source, 2 the
 * destination) whose hold failed with @err.
 */
static int vhca_copy_lost(int side, int err, struct vhca_fault *f)
{
	return err == -EFAULT && f ? VHCA_COPY_FAULT : side;
}

/**
 * vhca_copy_held() - copy between segments that an invalidation may hit
 * @dseg: the destination's segments
 * @nd: how many
 * @doff: where in them the copy starts
 * @sseg: the source's segments
 * @ns: how many
 * @soff: where in them the copy starts
 * @len: bytes to copy; both sides have that many from their offsets
 * @f: where to say which pages to fault in, or NULL if the caller cannot
 *	(it then gives no ODP MR: see VHCA_FIND_ODP)
 *
 * vhca_copy(), with what both sides touch held (vhca_range_hold()): once
 * a LOCAL_INV or SEND_WITH_INV has completed, no byte of the copy moves
 * in or out of its MR; once an ODP MR's pages are invalidated, none moves
 * in or out of them.  Any context; caller holds rcu_read_lock().
 *
 * Return: 0, or, copying nothing: which side lost a key since it was
 * looked up (1 the source, 2 the destination), or VHCA_COPY_FAULT: @f
 * says which pages of an ODP MR to fault in (vhca_odp_fault()) before
 * trying again.  Without @f a missing page counts as a lost key.
 */
int vhca_copy_held(const struct vhca_seg *dseg, unsigned int nd, u32 doff,
		   const struct vhca_seg *sseg, unsigned int ns, u32 soff,
		   u32 len, struct vhca_fault *f)
{
	struct vhca_cursor dst = { .seg = dseg, .nseg = nd };
	struct vhca_cursor src = { .seg = sseg, .nseg = ns };
	int lost = 0, err;

	vhca_cursor_skip(&dst, doff);
	vhca_cursor_skip(&src, soff);
	/* MRs that keep their key and pages need no hold: softirqs may run */
	if (!vhca_segs_held(dseg, nd) && !vhca_segs_held(sseg, ns)) {
		vhca_copy(&dst, &src, len);
		return 0;
	}
	local_bh_disable();
	err = vhca_range_hold(src, len, false, f);
	if (err) {
		lost = vhca_copy_lost(1, err, f);
	} else {
		err = vhca_range_hold(dst, len, true, f);
		if (err) {
			vhca_range_release(src, len);
			lost = vhca_copy_lost(2, err, f);
		} else {
			struct vhca_cursor d = dst, s = src;

			vhca_copy(&d, &s, len);
			vhca_range_release(dst, len);
			vhca_range_release(src, len);
		}
	}
	local_bh_enable();
	return lost;
}

/*
 * Take the next receive WQE of @dst (its RQ or its SRQ) into @wqe, bounded
 * by the ring's stride and SGE limit.  Returns false if there is none (or
 * the ring's producer index is impossible).  Any context.
 */
bool vhca_pop_recv(struct vhca_qp *dst, struct vhca_rwqe *wqe, u32 *max_sge)
{
	struct vhca_uring *r;
	spinlock_t *lock;	/* the ring's consumer side */
	struct vhca_srq *srq = NULL;
	unsigned long flags;
	u32 prod, *cons;
	bool ok = false;

	/* an XRC TGT QP takes from the SRQ its message names */
	if (dst->ibqp.srq || dst->ibqp.qp_type == IB_QPT_XRC_TGT) {
		srq = dst->ibqp.srq ? to_vsrq(dst->ibqp.srq) : dst->xsrq;
		r = &srq->ring;
		lock = &srq->lock;
		cons = &srq->cons;
	} else {
		r = &dst->rq;
		lock = &dst->rq_lock;
		cons = &dst->rq_cons;
	}
	*max_sge = r->g.max_sge;

	spin_lock_irqsave(lock, flags);
	/* Acquire pairs with the provider's release of the producer. */
	prod = smp_load_acquire(&r->hdr->producer);
	if (vhca_ring_sane(prod, *cons, r->g.log2_slots) &&
	    !vhca_ring_empty(prod, *cons)) {
		memcpy(wqe, vhca_uring_slot(r, *cons), 1U << r->g.log2_stride);
		(*cons)++;
		/* Release: the slot is copied before it is handed back. */
		smp_store_release(&r->hdr->consumer, *cons);
		ok = true;
		if (srq && srq->limit && vhca_ring_used(prod, *cons) < srq->limit) {
			struct ib_event ev = {
				.device = srq->ibsrq.device,
				.element.srq = &srq->ibsrq,
				.event = IB_EVENT_SRQ_LIMIT_REACHED,
			};

			srq->limit = 0;	/* one-shot: re-armed by modify_srq */
			if (srq->ibsrq.event_handler)
				srq->ibsrq.event_handler(&ev,
							 srq->ibsrq.srq_context);
		}
	}
	spin_unlock_irqrestore(lock, flags);
	return ok;
}

/*
 * The CQ @dst's receives complete on: an XRC SRQ's and a tag-matching
 * SRQ's are their own (an XRC TGT QP has none; a tag-matching SRQ's list
 * operations complete there too), any other QP's its receive CQ.
 */
static struct vhca_cq *vhca_recv_cq(const struct vhca_qp *dst)
{
	if (dst->ibqp.qp_type == IB_QPT_XRC_TGT)
		return to_vcq(dst->xsrq->ibsrq.ext.cq);
	if (dst->ibqp.srq && dst->ibqp.srq->srq_type == IB_SRQT_TM)
		return to_vcq(dst->ibqp.srq->ext.cq);
	return to_vcq(dst->ibqp.recv_cq);
}

/*
 * A receive completion on @dst's CQ, of the message @msg says (NULL for a
 * WQE that failed); @net is a GRH's network type, or 0, and @vlan the
 * VLAN id the datagram came on, or VHCA_NO_VLAN.  The core matches a
 * RoCE MAD's VLAN to the GID it answers from (ib_init_ah_attr_from_wc()):
 * the RDMA CM on a VLAN needs it.
 */
void vhca_recv_done_grh(struct vhca_qp *dst, u64 wr_id, u8 status,
			u32 len, const struct vhca_rmsg *msg, u32 src_qpn,
			u8 net, u16 vlan)
{
	struct vhca_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.byte_len = len,
		.qp_num = dst->ibqp.qp_num,
		.src_qp = src_qpn,
	};

	if (net) {
		cqe.flags |= VHCA_CQE_F_GRH | VHCA_CQE_F_NET_HDR;
		cqe.network_hdr_type = net;
	}
	if (vlan != VHCA_NO_VLAN) {
		cqe.flags |= VHCA_CQE_F_VLAN;
		cqe.vlan_id = vlan;
	}
	if (msg && (msg->flags & VHCA_OPF_IMM)) {
		cqe.flags |= VHCA_CQE_F_IMM;
		cqe.ex = msg->ex;
	}
	if (msg && (msg->flags & VHCA_OPF_INV)) {
		cqe.flags |= VHCA_CQE_F_INV;
		cqe.ex = msg->ex;
	}
	/* only a WRITE with immediate data completes a receive */
	if (msg && (msg->flags & VHCA_OPF_WRITE))
		cqe.opcode = IB_WC_RECV_RDMA_WITH_IMM;
	if (msg && msg->tm_op) {
		/* ex is the TMH's app_ctx: immediate data moves to tm_ex */
		cqe.opcode = msg->tm_op;
		cqe.tm_ex = cqe.ex;
		cqe.flags |= VHCA_CQE_F_TM | msg->tm_flags;
		cqe.tm_tag = msg->tm_tag;
		cqe.ex = (__force u32)msg->tm_ctx;
	}
	vhca_cq_post(vhca_recv_cq(dst), &cqe, msg && msg->se);
	/*
	 * A connected QP whose WQE completed in error is in error too (a
	 * rendezvous left to software is no error).  Its
	 * lock is not ours to take here: its own work does it, and flushes
	 * what else it has posted.
	 */
	if (status != IB_WC_SUCCESS && status != VHCA_WC_TM_RNDV_INCOMPLETE &&
	    vhca_qpt_rc(dst->ibqp.qp_type)) {
		WRITE_ONCE(dst->err_pending, true);
		vhca_qp_kick_now(dst);
	}
}

void vhca_recv_done(struct vhca_qp *dst, u64 wr_id, u8 status, u32 len,
		    const struct vhca_rmsg *msg, u32 src_qpn)
{
	vhca_recv_done_grh(dst, wr_id, status, len, msg, src_qpn, 0,
			   VHCA_NO_VLAN);
}

/**
 * vhca_recv_take() - take @dst's next receive WQE for a message
 * @dst: the receiving QP (its RQ, or its SRQ)
 * @wqe: where the WQE is copied to
 * @src_qpn: the sender's QPN, for the completion of a malformed WQE
 *
 * A WQE with more SGEs than its ring was made for completes at once, with
 * IB_WC_LOC_QP_OP_ERR, and takes no message.  Any context.
 *
 * Return: 0, -EAGAIN if none is posted, or -EINVAL if it was malformed.
 */
int vhca_recv_take(struct vhca_qp *dst, struct vhca_rwqe *wqe, u32 src_qpn)
{
	u32 max_sge;

	if (!vhca_pop_recv(dst, wqe, &max_sge))
		return -EAGAIN;
	if (wqe->num_sge > max_sge) {
		vhca_recv_done(dst, wqe->wr_id, IB_WC_LOC_QP_OP_ERR, 0, NULL,
			       src_qpn);
		return -EINVAL;
	}
	return 0;
}

/**
 * vhca_send_done() - post the completion of a send WQE
 * @qp: its QP
 * @w: the WQE (its wr_id and opcode are all that is read)
 * @status: an IB_WC_* status
 * @len: the bytes it moved, for byte_len: ibv_poll_cq(3) makes it
 *	relevant for READs and atomics; it is given for every opcode that
 *	succeeded, as rxe does
 */
void vhca_send_done(struct vhca_qp *qp, const struct vhca_swqe *w, u8 status,
		    u32 len)
{
	struct vhca_cqe cqe = {
		.wr_id = w->wr_id,
		.status = status,
		.byte_len = status == IB_WC_SUCCESS ? len : 0,
		/* a WQE the table refuses completes as a SEND would */
		.opcode = vhca_wr_op(w->opcode) ? vhca_wr_op(w->opcode)->wc :
						  IB_WC_SEND,
		.qp_num = qp->ibqp.qp_num,
	};

	vhca_cq_post(to_vcq(qp->ibqp.send_cq), &cqe, false);
}

/**
 * vhca_wqe_local() - run a LOCAL_INV, BIND_MW or REG_MR WQE
 * @vdev: the QP's device
 * @qp: the QP; caller holds qp->lock
 * @w: the WQE, checked against the opcode table
 *
 * Return: its completion status.
 */
int vhca_wqe_local(struct vhca_dev *vdev, struct vhca_qp *qp,
		   const struct vhca_swqe *w)
{
	int status;

	rcu_read_lock();
	if (w->opcode == IB_UVERBS_WR_LOCAL_INV)
		status = vhca_invalidate(vdev, qp, w->ex, false) ?
			 IB_WC_SUCCESS : IB_WC_LOC_PROT_ERR;
	else if (w->opcode == IB_UVERBS_WR_BIND_MW)
		status = vhca_mw_bind(vdev, qp, w);
	else
		status = vhca_mr_fast_reg(vdev, qp->ibqp.pd, w->ex,
					  w->reg.iova, w->reg.length,
					  w->reg.access, w->reg.page_shift);
	rcu_read_unlock();
	return status;
}

/*
 * The 8 bytes at @va of @mr, mapped, or NULL if they are not one aligned
 * word in memory.  @va is aligned, but an MR's addresses are its user's
 * to choose (ibv_reg_mr_iova()): the word they name may start anywhere in
 * a page, and one that crosses a page would reach into the next physical
 * page, which need not be the MR's.
 */
static u64 *vhca_atomic_map(struct vhca_mr *mr, u64 va)
{
	void *p;
	u32 room;

	p = vhca_mr_map(mr, va, &room);
	if (room < sizeof(u64) || !IS_ALIGNED((uintptr_t)p, sizeof(u64))) {
		vhca_mr_unmap(mr, p);
		return NULL;
	}
	return p;
}

/*
 * Map @mr's word at @va for one atomic, holding the key it was found by
 * as vhca_range_hold() does for a copy: a LOCAL_INV or SEND_WITH_INV of a
 * fast-register MR or a window completes only once vhca_atomic_end() let
 * go, so the word is never written after the key is gone nor in pages a
 * REG_MR put there since.  Bottom halves are off in between: an
 * invalidation spins for the hold, and may run in softirq on this CPU.
 * Returns the word, or an ERR_PTR: -EINVAL if it is not one aligned word
 * in memory (vhca_atomic_map()), -EACCES if the key went, -EFAULT if an
 * ODP page is missing (then @f, if not NULL, says which; without @f that
 * is -EACCES).
 */
static u64 *vhca_atomic_begin(struct vhca_mr *mr, u32 key, u64 va,
			      struct vhca_fault *f)
{
	struct vhca_seg seg = { .mr = mr, .key = key, .va = va,
				.len = sizeof(u64) };
	struct vhca_cursor c = { .seg = &seg, .nseg = 1 };
	u64 *p;
	int err;

	local_bh_disable();
	err = vhca_range_hold(c, sizeof(u64), true, f);
	if (err) {
		local_bh_enable();
		return ERR_PTR(err == -EFAULT && f ? -EFAULT : -EACCES);
	}
	p = vhca_atomic_map(mr, va);
	if (!p) {
		vhca_range_release(c, sizeof(u64));
		local_bh_enable();
		return ERR_PTR(-EINVAL);
	}
	return p;
}

static void vhca_atomic_end(struct vhca_mr *mr, u32 key, u64 *p)
{
	struct vhca_seg seg = { .mr = mr, .key = key, .len = sizeof(u64) };
	struct vhca_cursor c = { .seg = &seg, .nseg = 1 };

	vhca_mr_unmap(mr, p);
	vhca_range_release(c, sizeof(u64));
	local_bh_enable();
}

/**
 * vhca_atomic() - compare-and-swap or fetch-and-add on 8 bytes of an MR
 * @mr: the MR, found for @va with IB_ACCESS_REMOTE_ATOMIC
 * @key: the rkey it was found by
 * @va: 8-byte aligned
 * @cas: compare-and-swap (else fetch-and-add)
 * @compare_add: what to compare with, or to add
 * @swap: what to store if the comparison holds
 * @orig: set to the original value
 * @f: where to say which ODP page to fault in, or NULL (see
 *	vhca_copy_held())
 *
 * cmpxchg on the mapped word makes it atomic against every other atomic
 * of this host (and the CPUs).
 *
 * Return: 0; or, with nothing done, -EINVAL if the word is not aligned in
 * memory (vhca_atomic_map()), -EACCES if the key was invalidated since
 * it was found, -EFAULT if the word's ODP page must be faulted in (@f).
 */
int vhca_atomic(struct vhca_mr *mr, u32 key, u64 va, bool cas,
		u64 compare_add, u64 swap, u64 *orig, struct vhca_fault *f)
{
	u64 *p, old, new, seen;

	p = vhca_atomic_begin(mr, key, va, f);
	if (IS_ERR(p))
		return PTR_ERR(p);
	old = READ_ONCE(*p);
	for (;;) {
		if (cas)
			new = old == compare_add ? swap : old;
		else
			new = old + compare_add;
		seen = cmpxchg64(p, old, new);
		if (seen == old)
			break;
		old = seen;
	}
	vhca_atomic_end(mr, key, p);
	*orig = old;
	return 0;
}

/**
 * vhca_atomic_store() - an ATOMIC WRITE's store of 8 bytes into an MR
 * @mr: the MR, found for @va with IB_ACCESS_REMOTE_WRITE
 * @key: the rkey it was found by
 * @va: 8-byte aligned
 * @val: the bytes, in the order they go to memory
 * @f: as for vhca_atomic()
 *
 * One store, which no reader of the word sees half done, ordered after
 * every store the QP made before it: what an ATOMIC WRITE is for is to
 * publish data the WRITEs before it placed (a flag, a tail index).
 *
 * Return: 0, or as vhca_atomic() does, with nothing stored.
 */
int vhca_atomic_store(struct vhca_mr *mr, u32 key, u64 va, u64 val,
		      struct vhca_fault *f)
{
	u64 *p = vhca_atomic_begin(mr, key, va, f);

	if (IS_ERR(p))
		return PTR_ERR(p);
	/* Release: the QP's earlier stores are seen before this one. */
	smp_store_release(p, val);
	vhca_atomic_end(mr, key, p);
	return 0;
}

#ifdef VHCA_FLUSH
/**
 * vhca_flush() - what a FLUSH does at its responder (IBA 1.5)
 * @qp: the responder's QP
 * @rkey: the rkey its RETH names
 * @va: the first byte of the range (IB_FLUSH_RANGE)
 * @len: the range's bytes, 2^31 at most
 * @type: its placement type: IB_FLUSH_GLOBAL and/or IB_FLUSH_PERSISTENT
 * @level: its selectivity level: IB_FLUSH_RANGE, or IB_FLUSH_MR for the
 *	whole of the MR whatever @va and @len say
 *
 * The QP must grant the IB_ACCESS_FLUSH_* of each type asked, and the MR
 * (or window) too, over the range.  No vhca MR grants persistence (the
 * device does not offer it, and the core refuses an MR that asks), so a
 * persistent FLUSH fails on the key, as it does on an rxe MR that is not
 * persistent memory.  Visibility is what is left: vhca places data with
 * the CPU's stores, which every CPU sees once they are done; what a FLUSH
 * adds is order, that the stores of the requests before it, on whatever
 * CPU placed them, are done before its response says so.  Caller holds
 * rcu_read_lock().
 *
 * Return: IB_WC_SUCCESS; IB_WC_REM_INV_REQ_ERR for a placement type or
 * level that is no IBA value, or one the QP does not grant; or
 * IB_WC_REM_ACCESS_ERR for a key that does not grant it where asked.
 */
int vhca_flush(struct vhca_qp *qp, u32 rkey, u64 va, u32 len, u8 type,
	       u8 level)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	int access = 0;
	struct vhca_mr *mr;

	if (!type || type & ~(IB_FLUSH_GLOBAL | IB_FLUSH_PERSISTENT) ||
	    level > IB_FLUSH_MR || len > SZ_2G)
		return IB_WC_REM_INV_REQ_ERR;
	if (type & IB_FLUSH_GLOBAL)
		access |= IB_ACCESS_FLUSH_GLOBAL;
	if (type & IB_FLUSH_PERSISTENT)
		access |= IB_ACCESS_FLUSH_PERSISTENT;
	if ((READ_ONCE(qp->attr.qp_access_flags) & access) != access)
		return IB_WC_REM_INV_REQ_ERR;
	/* an ODP MR's pages need not be there: a FLUSH touches none */
	if (level == IB_FLUSH_MR)
		mr = vhca_mr_find_remote_whole(vdev, rkey, qp,
					       access | VHCA_FIND_ODP);
	else
		mr = vhca_mr_find_remote(vdev, rkey, qp,
					 access | VHCA_FIND_ODP, va, len);
	if (!mr)
		return IB_WC_REM_ACCESS_ERR;
	/* the stores before, on any CPU, are done before the response */
	smp_mb();
	return IB_WC_SUCCESS;
}
#endif

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
 * completion of WR n may post again at once.  The local engine and the
 * requester on the wire both retire their WQEs here; a WQE that failed
 * is theirs to act on, with vhca_qp_wqe_failed().
 *
 * Return: false if the WQE failed.
 */
bool vhca_sq_retire(struct vhca_qp *qp, const struct vhca_swqe *w,
		    int status, u32 len)
{
	vhca_sq_advance(qp);
	if (vhca_send_signals(qp, w->flags, status))
		vhca_send_done(qp, w, status, len);
	return status == IB_WC_SUCCESS;
}

/**
 * vhca_sq_producer() - read a send ring's producer, and check it
 * @qp: the QP; caller holds qp->lock
 * @sent: the index up to which WQEs are taken already (sq_cons, or further
 *	for RC on the wire)
 * @prod: where the producer goes
 *
 * Return: false if the process moved it out of the ring's bounds, or back
 * behind WQEs the engine took: the caller moves the QP to the error state.
 */
bool vhca_sq_producer(struct vhca_qp *qp, u32 sent, u32 *prod)
{
	/* Acquire pairs with the provider's release of the producer. */
	*prod = smp_load_acquire(&qp->sq.hdr->producer);
	return vhca_ring_sane(*prod, qp->sq_cons, qp->sq.g.log2_slots) &&
	       *prod - qp->sq_cons >= sent - qp->sq_cons;
}
