// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The extended send API, ibv_wr_post(3).  ibv_wr_start() takes the send
 * ring's lock; each builder writes its WQE straight into the next free
 * slot and the setters that follow fill it in; ibv_wr_complete() makes
 * the whole batch visible with one release store of the producer index
 * and rings the doorbell only if the engine does not own the ring, as
 * ibv_post_send() does.  Nothing is allocated and, while the engine owns
 * the ring, no system call is made.
 *
 * Builders and setters return nothing.  The first error is kept and the
 * calls after it do nothing; ibv_wr_complete() then returns it (a positive
 * errno) and posts none of the batch: the producer index never moved, so
 * the slots written are not the engine's to read.
 */
#include <errno.h>
#include <string.h>

#include "provider.h"

static inline struct vhca_qp *wr_qp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct vhca_qp, vqp.qp_ex);
}

/*
 * What each QP type may carry, as IBV_QP_EX_WITH_* bits (vhca_wr_op_bit()),
 * as ibv_wr_post(3)'s table has it, but for SEND with invalidate: RoCE has
 * its packets for RC and XRC only, and ATOMIC WRITE and FLUSH, which a
 * device has on RC when its kernel's verbs do (FLUSH with rdma-core 56,
 * whose verbs have it).  An XRC_RECV QP sends nothing.  Shared with
 * ibv_post_send().
 */
static uint64_t vhca_wr_flush_op(struct ibv_context *context)
{
#ifdef VHCA_HAVE_WR_FLUSH
	return to_vctx(context)->flush ? IBV_QP_EX_WITH_FLUSH : 0;
#else
	(void)context;
	return 0;
#endif
}

uint64_t vhca_wr_ops_of(struct ibv_context *context, enum ibv_qp_type type)
{
	const uint64_t send = IBV_QP_EX_WITH_SEND |
			      IBV_QP_EX_WITH_SEND_WITH_IMM;
	const uint64_t uc = send | IBV_QP_EX_WITH_RDMA_WRITE |
			    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			    IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW;
	const uint64_t xrc = uc | IBV_QP_EX_WITH_RDMA_READ |
			     IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			     IBV_QP_EX_WITH_SEND_WITH_INV;

	switch (type) {
	case IBV_QPT_RC:
		return xrc | (to_vctx(context)->atomic_write ?
			      IBV_QP_EX_WITH_ATOMIC_WRITE : 0) |
		       vhca_wr_flush_op(context);
	case IBV_QPT_XRC_SEND:
		return xrc;
	case IBV_QPT_UC:
		return uc;
	case IBV_QPT_UD:
		return send;
	default:
		return 0;
	}
}

_Static_assert(IBV_QP_EX_WITH_SEND_WITH_INV == 1 << IBV_WR_SEND_WITH_INV &&
	       IBV_QP_EX_WITH_LOCAL_INV == 1 << IBV_WR_LOCAL_INV &&
	       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD ==
	       1 << IBV_WR_ATOMIC_FETCH_AND_ADD &&
	       IBV_QP_EX_WITH_RDMA_WRITE == 1 << IBV_WR_RDMA_WRITE,
	       "IBV_QP_EX_WITH_<op> is 1 << IBV_WR_<op> up to TSO");

/*
 * The IBV_QP_EX_WITH_* bit of send opcode @opcode, or 0 for none.  Up to
 * IBV_WR_TSO it is 1 << opcode; FLUSH (14) has bit 11, ATOMIC_WRITE (15)
 * bit 12.
 */
uint64_t vhca_wr_op_bit(unsigned int opcode)
{
	if (opcode <= IBV_WR_TSO)
		return 1ULL << opcode;
#ifdef VHCA_HAVE_WR_FLUSH
	if (opcode == IBV_WR_FLUSH)
		return IBV_QP_EX_WITH_FLUSH;
#endif
	return opcode == IBV_WR_ATOMIC_WRITE ? IBV_QP_EX_WITH_ATOMIC_WRITE : 0;
}

/*
 * The WQE the last builder began is whole: check what its setters made
 * of it.  A UD WQE needs its address, an XRC_SEND one (but a local
 * operation's) its remote SRQ; an atomic one 8-byte SGE for the original
 * value; an ATOMIC WRITE, whose 8 bytes are in the WQE, and a FLUSH,
 * which moves no data, no SGE and no inline data.
 */
static void vhca_wr_seal(struct vhca_qp *qp)
{
	struct vhca_swqe *w = qp->wr_cur;

	if (!w)
		return;
	qp->wr_cur = NULL;
	if (vhca_wqe_needs_dest(qp->vqp.qp.qp_type, w->opcode) && !qp->wr_addr)
		qp->wr_err = EINVAL;
	switch (w->opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (w->num_sge != 1 || w->sge[0].length != 8)
			qp->wr_err = EINVAL;
		break;
	case IBV_WR_ATOMIC_WRITE:
#ifdef VHCA_HAVE_WR_FLUSH
	case IBV_WR_FLUSH:
#endif
		if (w->num_sge || (w->flags & VHCA_SWQE_F_INLINE))
			qp->wr_err = EINVAL;
		break;
	default:
		break;
	}
}

/*
 * Begin a WQE of @opcode in the next slot, with the wr_id and wr_flags the
 * caller set.  Returns it, or NULL if the batch has failed (now or
 * before).
 */
static struct vhca_swqe *vhca_wr_begin(struct ibv_qp_ex *qpx,
				       enum ibv_wr_opcode opcode)
{
	const unsigned int known = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
				   IBV_SEND_FENCE | IBV_SEND_INLINE;
	struct vhca_qp *qp = wr_qp(qpx);
	struct vhca_swqe *w;

	vhca_wr_seal(qp);
	if (qp->wr_err)
		return NULL;
	if (!(vhca_wr_ops_of(qp->vqp.qp.context, qp->vqp.qp.qp_type) &
	      vhca_wr_op_bit(opcode)) ||
	    (qpx->wr_flags & ~known)) {
		qp->wr_err = EINVAL;
		return NULL;
	}
	if (!vhca_mring_room(&qp->sq, qp->wr_prod, &qp->wr_cons)) {
		qp->wr_err = ENOMEM;
		return NULL;
	}
	w = vhca_mring_slot(&qp->sq, qp->wr_prod++);
	memset(w, 0, VHCA_SWQE_HDR_SIZE);
	w->wr_id = qpx->wr_id;
	w->opcode = (uint8_t)opcode;	/* IBV_WR_* == IB_UVERBS_WR_* */
	w->flags = vhca_swqe_flags(qpx->wr_flags);
	qp->wr_cur = w;
	qp->wr_addr = false;
	return w;
}

static void vhca_wr_start(struct ibv_qp_ex *qpx)
{
	struct vhca_qp *qp = wr_qp(qpx);

	pthread_spin_lock(&qp->sq_lock);
	qp->wr_prod = qp->sq.idx;
	/* Acquire pairs with the engine's release of the consumer. */
	qp->wr_cons = __atomic_load_n(&qp->sq.hdr->consumer, __ATOMIC_ACQUIRE);
	qp->wr_cur = NULL;
	qp->wr_err = vhca_sq_postable(&qp->vqp.qp) ? 0 : EINVAL;
}

static int vhca_wr_complete(struct ibv_qp_ex *qpx)
{
	struct vhca_qp *qp = wr_qp(qpx);
	bool posted;
	int err;

	vhca_wr_seal(qp);
	err = qp->wr_err;
	posted = !err && qp->wr_prod != qp->sq.idx;
	if (posted)
		vhca_sq_publish(qp, qp->wr_prod);
	pthread_spin_unlock(&qp->sq_lock);
	if (!posted)
		return err;
	return vhca_sq_kick(qp);
}

static void vhca_wr_abort(struct ibv_qp_ex *qpx)
{
	pthread_spin_unlock(&wr_qp(qpx)->sq_lock);
}

static void vhca_wr_send(struct ibv_qp_ex *qpx)
{
	vhca_wr_begin(qpx, IBV_WR_SEND);
}

static void vhca_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct vhca_swqe *w = vhca_wr_begin(qpx, IBV_WR_SEND_WITH_IMM);

	if (w)
		w->ex = imm_data;
}

static void vhca_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct vhca_swqe *w = vhca_wr_begin(qpx, IBV_WR_SEND_WITH_INV);

	if (w)
		w->ex = invalidate_rkey;
}

static void vhca_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct vhca_swqe *w = vhca_wr_begin(qpx, IBV_WR_LOCAL_INV);

	if (w)
		w->ex = invalidate_rkey;
}

static void vhca_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
			 uint32_t rkey, uint64_t remote_addr, __be32 imm)
{
	struct vhca_swqe *w = vhca_wr_begin(qpx, opcode);

	if (!w)
		return;
	w->rdma.remote_addr = remote_addr;
	w->rdma.rkey = rkey;
	w->ex = imm;
}

static void vhca_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	vhca_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void vhca_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	vhca_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		     imm_data);
}

static void vhca_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	vhca_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

/*
 * The atomics and ATOMIC WRITE name an aligned remote word, as
 * ibv_post_send() checks: a builder that does not fails the batch.
 */
static bool vhca_wr_aligned(struct ibv_qp_ex *qpx, uint64_t remote_addr)
{
	if (!(remote_addr & 7))
		return true;
	vhca_wr_seal(wr_qp(qpx));
	wr_qp(qpx)->wr_err = EINVAL;
	return false;
}

static void vhca_wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
			   uint32_t rkey, uint64_t remote_addr,
			   uint64_t compare_add, uint64_t swap)
{
	struct vhca_swqe *w;

	if (!vhca_wr_aligned(qpx, remote_addr))
		return;
	w = vhca_wr_begin(qpx, opcode);
	if (!w)
		return;
	w->atomic.remote_addr = remote_addr;
	w->atomic.compare_add = compare_add;
	w->atomic.swap = swap;
	w->atomic.rkey = rkey;
}

static void vhca_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare,
				   uint64_t swap)
{
	vhca_wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
		       compare, swap);
}

static void vhca_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	vhca_wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
		       add, 0);
}

/* The WQE the setters fill, or NULL after an error. */
static struct vhca_swqe *vhca_wr_cur(struct ibv_qp_ex *qpx)
{
	struct vhca_qp *qp = wr_qp(qpx);

	if (!qp->wr_cur && !qp->wr_err)
		qp->wr_err = EINVAL;	/* a setter with no builder before it */
	return qp->wr_cur;
}

static void vhca_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct vhca_swqe *w = vhca_wr_cur(qpx);
	struct vhca_qp *qp = wr_qp(qpx);
	size_t i;

	if (!w)
		return;
	if (num_sge > qp->max_send_sge) {
		qp->wr_err = EINVAL;
		return;
	}
	w->flags &= ~VHCA_SWQE_F_INLINE;
	w->inline_len = 0;
	w->num_sge = (uint16_t)num_sge;
	for (i = 0; i < num_sge; i++) {
		w->sge[i].addr = sg_list[i].addr;
		w->sge[i].length = sg_list[i].length;
		w->sge[i].lkey = sg_list[i].lkey;
	}
}

static void vhca_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	const struct ibv_sge sge = {
		.addr = addr, .length = length, .lkey = lkey,
	};

	vhca_wr_set_sge_list(qpx, 1, &sge);
}

/* Inline data is for what sends data out of the SGEs: SENDs and WRITEs. */
static void vhca_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					 size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct vhca_swqe *w = vhca_wr_cur(qpx);
	struct vhca_qp *qp = wr_qp(qpx);
	unsigned char *p;
	size_t i, len = 0;

	if (!w)
		return;
	for (i = 0; i < num_buf; i++) {
		if (buf_list[i].length > qp->max_inline - len) {
			qp->wr_err = EINVAL;
			return;
		}
		len += buf_list[i].length;
	}
	if (!vhca_op_sends_data(w->opcode)) {
		qp->wr_err = EINVAL;
		return;
	}
	p = (unsigned char *)w->sge;
	for (i = 0; i < num_buf; i++) {
		memcpy(p, buf_list[i].addr, buf_list[i].length);
		p += buf_list[i].length;
	}
	w->flags |= VHCA_SWQE_F_INLINE;
	w->num_sge = 0;
	w->inline_len = (uint32_t)len;
}

static void vhca_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				    size_t length)
{
	const struct ibv_data_buf buf = { .addr = addr, .length = length };

	vhca_wr_set_inline_data_list(qpx, 1, &buf);
}

static void vhca_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct vhca_swqe *w = vhca_wr_cur(qpx);
	struct vhca_qp *qp = wr_qp(qpx);

	if (!w)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD || !ah) {
		qp->wr_err = EINVAL;
		return;
	}
	w->ud.av = container_of(ah, struct vhca_ah, ibah)->av;
	w->ud.remote_qpn = remote_qpn;
	w->ud.remote_qkey = remote_qkey;
	qp->wr_addr = true;
}

/*
 * A builder refused before it began a WQE: the batch fails with @err,
 * unless it failed before (the first error is kept).
 */
static void vhca_wr_fail(struct ibv_qp_ex *qpx, int err)
{
	struct vhca_qp *qp = wr_qp(qpx);

	vhca_wr_seal(qp);
	if (!qp->wr_err)
		qp->wr_err = err;
}

/* ibv_wr_bind_mw() binds type 2 windows, as IBV_WR_BIND_MW does. */
static void vhca_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			    uint32_t rkey,
			    const struct ibv_mw_bind_info *bind_info)
{
	struct vhca_swqe *w;

	if (!vhca_bind_postable(&qpx->qp_base, mw, IBV_MW_TYPE_2, rkey,
				bind_info)) {
		vhca_wr_fail(qpx, EINVAL);
		return;
	}
	w = vhca_wr_begin(qpx, IBV_WR_BIND_MW);
	if (w)
		vhca_swqe_bind(w, rkey, bind_info);
}

static void vhca_wr_send_tso(struct ibv_qp_ex *qpx, void *hdr,
			     uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	vhca_wr_fail(qpx, EOPNOTSUPP);	/* vhca has no TSO */
}

/*
 * The XRC SRQ of the responder's domain an XRC_SEND WQE goes to.  A local
 * operation goes to none: there it is taken and not written.
 */
static void vhca_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct vhca_swqe *w = vhca_wr_cur(qpx);
	struct vhca_qp *qp = wr_qp(qpx);

	if (!w)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND ||
	    remote_srqn > VHCA_XRC_SRQN_MAX) {
		qp->wr_err = EINVAL;
		return;
	}
	if (vhca_wqe_needs_dest(IBV_QPT_XRC_SEND, w->opcode))
		w->xrc_srqn = remote_srqn;
	qp->wr_addr = true;
}

/*
 * ATOMIC WRITE: @atomic_wr's 8 bytes travel in the WQE, as they lie in
 * memory, and land at @remote_addr in one store.
 */
static void vhca_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				 uint64_t remote_addr, const void *atomic_wr)
{
	struct vhca_swqe *w;

	if (!vhca_wr_aligned(qpx, remote_addr))
		return;
	w = vhca_wr_begin(qpx, IBV_WR_ATOMIC_WRITE);
	if (!w)
		return;
	w->atomic.remote_addr = remote_addr;
	w->atomic.rkey = rkey;
	memcpy(&w->atomic.swap, atomic_wr, sizeof(w->atomic.swap));
	w->atomic.compare_add = 0;
}

#ifdef VHCA_HAVE_WR_FLUSH
/*
 * FLUSH (IBA 1.5): what the WRITEs before it placed in [@remote_addr,
 * + @len) of @rkey's MR, or in all of it (@level IBV_FLUSH_MR, which
 * ignores both), is to reach @type at the responder, which judges @type
 * and @level.  The wire carries a 32-bit length.
 */
static void vhca_wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t remote_addr, size_t len, uint8_t type,
			  uint8_t level)
{
	struct vhca_swqe *w;

	if (level != IBV_FLUSH_MR && len > UINT32_MAX) {
		vhca_wr_fail(qpx, EINVAL);
		return;
	}
	w = vhca_wr_begin(qpx, IBV_WR_FLUSH);
	if (!w)
		return;
	w->flush.remote_addr = remote_addr;
	w->flush.rkey = rkey;
	w->flush.length = level == IBV_FLUSH_MR ? 0 : (uint32_t)len;
	w->flush.type = type;
	w->flush.level = level;
}
#endif

/*
 * Make @qp an ibv_qp_ex whose ibv_wr_* calls post to its send ring.  Every
 * pointer is set, so an operation the QP cannot carry fails its batch
 * instead of calling through NULL.
 */
void vhca_wr_init(struct vhca_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_start = vhca_wr_start;
	qpx->wr_complete = vhca_wr_complete;
	qpx->wr_abort = vhca_wr_abort;
	qpx->wr_send = vhca_wr_send;
	qpx->wr_send_imm = vhca_wr_send_imm;
	qpx->wr_send_inv = vhca_wr_send_inv;
	qpx->wr_local_inv = vhca_wr_local_inv;
	qpx->wr_rdma_write = vhca_wr_rdma_write;
	qpx->wr_rdma_write_imm = vhca_wr_rdma_write_imm;
	qpx->wr_rdma_read = vhca_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = vhca_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = vhca_wr_atomic_fetch_add;
	qpx->wr_set_sge = vhca_wr_set_sge;
	qpx->wr_set_sge_list = vhca_wr_set_sge_list;
	qpx->wr_set_inline_data = vhca_wr_set_inline_data;
	qpx->wr_set_inline_data_list = vhca_wr_set_inline_data_list;
	qpx->wr_set_ud_addr = vhca_wr_set_ud_addr;
	qpx->wr_bind_mw = vhca_wr_bind_mw;
	qpx->wr_send_tso = vhca_wr_send_tso;
	qpx->wr_set_xrc_srqn = vhca_wr_set_xrc_srqn;
	qpx->wr_atomic_write = vhca_wr_atomic_write;
#ifdef VHCA_HAVE_WR_FLUSH
	qpx->wr_flush = vhca_wr_flush;
#endif
	qp->vqp.comp_mask |= VERBS_QP_EX;
}
