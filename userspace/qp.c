// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue pairs: ibv_post_recv() writes receive WQEs into the QP's mapped
 * receive ring with no system call; ibv_post_send() writes send WQEs into
 * the send ring and rings the doorbell unless the engine owns the ring
 * (ctrl in struct vhca_ring_hdr).  An XRC_SEND QP has a send ring only;
 * an XRC_RECV QP has neither, its receives coming from XRC SRQs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX(a, b) ((a) > (b) ? (a) : (b))

#include "provider.h"

/*
 * The core part is opaque here: on the ioctl path libibverbs fills it in
 * only partly.  Everything the provider needs is in drv.
 */
struct vhca_create_qp_resp_full {
	__u32 core[8];	/* struct ib_uverbs_create_qp_resp */
	struct vhca_create_qp_resp drv;
};

static inline struct vhca_qp *to_vqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct vhca_qp, vqp.qp);
}

/* The object of a QP the kernel is to create or open: locks, no ring. */
static struct vhca_qp *vhca_qp_new(void)
{
	struct vhca_qp *qp = calloc(1, sizeof(*qp));

	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	return qp;
}

static void vhca_qp_free(struct vhca_qp *qp)
{
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
}

/* A create or open that failed with @ret: the kernel has no QP of @qp's. */
static struct ibv_qp *vhca_qp_fail(struct vhca_qp *qp, int ret)
{
	vhca_qp_free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *vhca_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct vhca_create_qp_resp_full resp = {};
	struct vhca_cmd_create_qp cmd;
	int fd = pd->context->cmd_fd;
	struct vhca_qp *qp;
	int ret;

	qp = vhca_qp_new();
	if (!qp)
		return NULL;
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				(struct ib_uverbs_create_qp_resp *)&resp,
				sizeof(resp));
	if (ret)
		return vhca_qp_fail(qp, ret);
	ret = vhca_mring_map(&qp->sq, fd, resp.drv.sq_mmap_key,
			     resp.drv.sq_mmap_size, resp.drv.sq_log2_slots,
			     resp.drv.sq_log2_stride,
			     VHCA_SWQE_HDR_SIZE +
			     MAX((size_t)resp.drv.max_send_sge *
				 sizeof(struct vhca_sge),
				 (size_t)resp.drv.max_inline));
	if (ret)
		goto err_destroy;
	if (resp.drv.rq_mmap_size) {
		ret = vhca_mring_map(&qp->rq, fd, resp.drv.rq_mmap_key,
				     resp.drv.rq_mmap_size,
				     resp.drv.rq_log2_slots,
				     resp.drv.rq_log2_stride,
				     vhca_rwqe_bytes(resp.drv.max_recv_sge));
		if (ret)
			goto err_unmap;
	}
	qp->max_send_sge = resp.drv.max_send_sge;
	qp->max_recv_sge = resp.drv.max_recv_sge;
	qp->max_inline = resp.drv.max_inline;
	qp->ring_ctrl = to_vctx(pd->context)->ring_ctrl;

	qp->db.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	qp->db.hdr.in_words = sizeof(qp->db) / 4;
	qp->db.hdr.out_words = sizeof(qp->db_resp) / 4;
	qp->db.cmd.response = (uintptr_t)&qp->db_resp;
	qp->db.cmd.qp_handle = qp->vqp.qp.handle;
	qp->db.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return &qp->vqp.qp;

err_unmap:
	vhca_mring_unmap(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
	return vhca_qp_fail(qp, ret);
}

/*
 * The kernel calls its driver with no udata for an XRC_RECV QP: there is
 * no driver response and no ring, and the QP outlives this process while
 * another has it open.  It needs an XRC domain and no PD; libibverbs
 * sends neither a PD nor CQs, whatever the attributes say.
 */
static struct ibv_qp *vhca_create_xrc_recv(struct ibv_context *context,
					   struct ibv_qp_init_attr_ex *attr_ex)
{
	struct ibv_qp_init_attr_ex attr = *attr_ex;
	struct ib_uverbs_create_qp_resp resp;
	struct vhca_cmd_create_qp cmd;
	struct vhca_qp *qp;
	int ret;

	if (!(attr.comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr.xrcd ||
	    attr.xrcd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	/* all ibv_cmd_create_qp_ex() takes; no create flag, no send op here */
	attr.comp_mask &= IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD;
	qp = vhca_qp_new();
	if (!qp)
		return NULL;
	ret = ibv_cmd_create_qp_ex(context, &qp->vqp, &attr, &cmd, sizeof(cmd),
				   &resp, sizeof(resp));
	if (ret)
		return vhca_qp_fail(qp, ret);
	attr_ex->cap = attr.cap;
	return &qp->vqp.qp;
}

/*
 * ibv_open_qp(3): another handle on an XRC_RECV QP of the domain, which
 * the kernel alone sees to (it refuses any other type).
 */
struct ibv_qp *vhca_open_qp(struct ibv_context *context,
			    struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct vhca_cmd_open_qp cmd = {};
	struct vhca_qp *qp;
	int ret;

	/* libibverbs reads the domain's handle unchecked */
	if ((attr->comp_mask & IBV_QP_OPEN_ATTR_XRCD) &&
	    (!attr->xrcd || attr->xrcd->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	qp = vhca_qp_new();
	if (!qp)
		return NULL;
	/* the whole verbs_qp, or libibverbs leaves out the domain */
	ret = ibv_cmd_open_qp(context, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret)
		return vhca_qp_fail(qp, ret);
	return &qp->vqp.qp;
}

/*
 * ibv_create_qp_ex() with a PD, or for XRC_RECV an XRC domain, no create
 * flag, and the ibv_wr_* send API if asked for
 * (IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) for operations the QP's type can
 * carry.  Without this entry, libibverbs fails every call whose comp_mask
 * is more than IBV_QP_INIT_ATTR_PD with EOPNOTSUPP, even
 * IBV_QP_INIT_ATTR_CREATE_FLAGS with no flag set.  The rest (TSO, RSS,
 * any create flag) vhca does not have.
 */
struct ibv_qp *vhca_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr_ex)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	bool wr_api = attr_ex->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct ibv_qp_init_attr attr;
	struct ibv_qp *qp;

	if ((attr_ex->comp_mask & ~known) ||
	    ((attr_ex->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr_ex->create_flags) ||
	    (wr_api && (attr_ex->send_ops_flags &
			~vhca_wr_ops_of(context, attr_ex->qp_type)))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr_ex->qp_type == IBV_QPT_XRC_RECV)
		return vhca_create_xrc_recv(context, attr_ex);
	if (!(attr_ex->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr_ex->pd ||
	    attr_ex->pd->context != context ||
	    (attr_ex->comp_mask & IBV_QP_INIT_ATTR_XRCD)) {
		errno = EINVAL;
		return NULL;
	}
	attr = (struct ibv_qp_init_attr){
		.qp_context = attr_ex->qp_context,
		.send_cq = attr_ex->send_cq,
		.recv_cq = attr_ex->recv_cq,
		.srq = attr_ex->srq,
		.cap = attr_ex->cap,
		.qp_type = attr_ex->qp_type,
		.sq_sig_all = attr_ex->sq_sig_all,
	};
	qp = vhca_create_qp(attr_ex->pd, &attr);
	if (!qp)
		return NULL;
	attr_ex->cap = attr.cap;	/* what was created */
	if (wr_api)
		vhca_wr_init(to_vqp(qp));
	return qp;
}

int vhca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	struct vhca_cmd_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, mask, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	/*
	 * libibverbs 44 leaves qp->state alone; post_recv needs it.  Only
	 * modify_qp moves a QP out of or into RESET, so this copy is exact
	 * for that.
	 */
	if (mask & IBV_QP_STATE)
		__atomic_store_n(&ibqp->state, attr->qp_state, __ATOMIC_RELEASE);
	/*
	 * The kernel has reset its side of the rings; reset ours.  A QP
	 * without rings completes nothing itself, whatever CQs it was
	 * created with (an XRC_RECV QP's completions are its SRQs'), and an
	 * XRC_SEND QP may have no receive CQ.
	 */
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET &&
	    qp->sq.map) {
		vhca_mring_reset(&qp->sq, &qp->sq_lock);
		if (qp->rq.map)
			vhca_mring_reset(&qp->rq, &qp->rq_lock);
		vhca_cq_clean(ibqp->send_cq, ibqp->qp_num, !ibqp->srq);
		if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
			vhca_cq_clean(ibqp->recv_cq, ibqp->qp_num, !ibqp->srq);
	}
	return 0;
}

int vhca_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		  struct ibv_qp_init_attr *init)
{
	struct vhca_cmd_query_qp cmd = {};

	return ibv_cmd_query_qp(qp, attr, mask, init, &cmd, sizeof(cmd));
}

int vhca_destroy_qp(struct ibv_qp *ibqp)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	vhca_mring_unmap(&qp->rq);
	vhca_mring_unmap(&qp->sq);
	vhca_qp_free(qp);
	return 0;
}

/*
 * ibv_post_recv(3): a QP attached to an SRQ, and an XRC QP of either
 * side, has no receive queue of its own, and a QP in RESET takes no
 * receives; both are refused at the first WR.  qp->state is what
 * vhca_modify_qp recorded.
 *
 * No system call, except on a QP the kernel has put in the error state
 * (VHCA_RQ_FLUSH): there the doorbell has the WQEs flushed, as the verbs
 * require.
 */
int vhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	int ret;

	if (!qp->rq.map ||
	    __atomic_load_n(&ibqp->state, __ATOMIC_ACQUIRE) == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	ret = vhca_post_rwqes(&qp->rq, &qp->rq_lock, qp->max_recv_sge, wr,
			      bad_wr);
	if ((!ret || *bad_wr != wr) && qp->ring_ctrl &&
	    (vhca_ctrl_after_post(&qp->rq) & VHCA_RQ_FLUSH))
		vhca_ring_doorbell(qp);	/* the WQEs are posted either way */
	return ret;
}

#define VHCA_SEND_FLAGS (IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
			 IBV_SEND_FENCE | IBV_SEND_INLINE)

/*
 * RoCE addresses are GIDs: an AH needs a GRH.  It is kept here, in
 * userspace; the kernel sees it only inside the WQEs that use it.
 */
struct ibv_ah *vhca_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct vhca_ah *ah;

	(void)pd;
	if (!attr->is_global || attr->port_num != 1) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(ah->av.dgid, attr->grh.dgid.raw, 16);
	ah->av.flow_label = attr->grh.flow_label;
	ah->av.sgid_index = attr->grh.sgid_index;
	ah->av.hop_limit = attr->grh.hop_limit;
	ah->av.traffic_class = attr->grh.traffic_class;
	ah->av.network_type = memcmp(ah->av.dgid, v4mapped, 12) ?
			      VHCA_NETWORK_IPV6 : VHCA_NETWORK_IPV4;
	return &ah->ibah;
}

int vhca_destroy_ah(struct ibv_ah *ah)
{
	free(container_of(ah, struct vhca_ah, ibah));
	return 0;
}

static int vhca_check_send(const struct vhca_qp *qp,
			   const struct ibv_send_wr *wr, bool bind_verb)
{
	uint32_t len = 0;
	int i;

	if (!(vhca_wr_ops_of(qp->vqp.qp.context, qp->vqp.qp.qp_type) &
	      vhca_wr_op_bit(wr->opcode)))
		return EOPNOTSUPP;
	/*
	 * struct ibv_send_wr has no room for ATOMIC WRITE's 8 bytes, nor for
	 * FLUSH's type and level: ibv_wr_* only
	 */
	if (wr->opcode == IBV_WR_ATOMIC_WRITE)
		return EINVAL;
#ifdef VHCA_HAVE_WR_FLUSH
	if (wr->opcode == IBV_WR_FLUSH)
		return EINVAL;
#endif
	if ((wr->send_flags & IBV_SEND_INLINE) && !vhca_op_sends_data(wr->opcode))
		return EINVAL;
	if (wr->send_flags & ~VHCA_SEND_FLAGS)
		return EINVAL;
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND &&
	    vhca_wqe_needs_dest(IBV_QPT_XRC_SEND, wr->opcode) &&
	    wr->qp_type.xrc.remote_srqn > VHCA_XRC_SRQN_MAX)
		return EINVAL;
	/* type 2 windows from ibv_post_send(), type 1 from ibv_bind_mw() */
	if (wr->opcode == IBV_WR_BIND_MW)
		return vhca_bind_postable(&qp->vqp.qp, wr->bind_mw.mw,
					  bind_verb ? IBV_MW_TYPE_1 :
						      IBV_MW_TYPE_2,
					  wr->bind_mw.rkey,
					  &wr->bind_mw.bind_info) ? 0 : EINVAL;
	if (bind_verb)
		return EINVAL;
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
		/* one 8-byte result buffer, an aligned remote word */
		return wr->num_sge != 1 || wr->sg_list[0].length != 8 ||
		       (wr->wr.atomic.remote_addr & 7) ? EINVAL : 0;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	if (wr->num_sge < 0)
		return EINVAL;
	if (!(wr->send_flags & IBV_SEND_INLINE))
		return (uint32_t)wr->num_sge > qp->max_send_sge ? EINVAL : 0;
	for (i = 0; i < wr->num_sge; i++) {
		len += wr->sg_list[i].length;
		if (len > qp->max_inline || len < wr->sg_list[i].length)
			return EINVAL;
	}
	return 0;
}

static void vhca_write_swqe(struct vhca_swqe *w, const struct ibv_send_wr *wr,
			    enum ibv_qp_type type)
{
	int i;

	if (type == IBV_QPT_UD) {
		w->ud.av = container_of(wr->wr.ud.ah, struct vhca_ah, ibah)->av;
		w->ud.remote_qpn = wr->wr.ud.remote_qpn;
		w->ud.remote_qkey = wr->wr.ud.remote_qkey;
	}

	w->wr_id = wr->wr_id;
	w->opcode = (uint8_t)wr->opcode;	/* IBV_WR_* == IB_UVERBS_WR_* */
	w->flags = vhca_swqe_flags(wr->send_flags);
	/* the slot may hold an older WQE; only XRC_SEND's name an SRQ */
	w->xrc_srqn = type == IBV_QPT_XRC_SEND &&
		      vhca_wqe_needs_dest(type, wr->opcode) ?
		      wr->qp_type.xrc.remote_srqn : 0;
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		w->ex = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		w->ex = wr->invalidate_rkey;
		break;
	default:
		w->ex = 0;
		break;
	}
	switch (type == IBV_QPT_UD ? IBV_WR_SEND : wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->atomic.remote_addr = wr->wr.atomic.remote_addr;
		w->atomic.compare_add = wr->wr.atomic.compare_add;
		w->atomic.swap = wr->wr.atomic.swap;
		w->atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_BIND_MW:
		vhca_swqe_bind(w, wr->bind_mw.rkey, &wr->bind_mw.bind_info);
		return;
	case IBV_WR_LOCAL_INV:
		w->num_sge = 0;	/* it has no data */
		w->inline_len = 0;
		return;
	default:
		break;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		unsigned char *p = (unsigned char *)w->sge;

		w->flags |= VHCA_SWQE_F_INLINE;
		w->num_sge = 0;
		w->inline_len = 0;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(p + w->inline_len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			w->inline_len += wr->sg_list[i].length;
		}
		return;
	}
	w->num_sge = (uint16_t)wr->num_sge;
	w->inline_len = 0;
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i].addr = wr->sg_list[i].addr;
		w->sge[i].length = wr->sg_list[i].length;
		w->sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/*
 * Post WRs in order, stopping at the first that cannot be posted: it is
 * returned through *bad_wr with a positive errno, those before it are
 * posted and those after it are not.  Then one doorbell for the batch.
 * @bind_verb: @wr is ibv_bind_mw()'s, binding a type 1 window.
 */
static int vhca_post(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr, bool bind_verb)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	struct vhca_mring *r = &qp->sq;
	struct ibv_send_wr *first = wr;
	uint32_t prod, cons;
	bool posted;
	int ret = 0, db;

	/* an XRC_RECV QP has no send ring (and an opened one no state) */
	if (!r->map || !vhca_sq_postable(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->sq_lock);
	prod = r->idx;
	/* Acquire pairs with the engine's release of the consumer. */
	cons = __atomic_load_n(&r->hdr->consumer, __ATOMIC_ACQUIRE);
	for (; wr; wr = wr->next) {
		ret = vhca_check_send(qp, wr, bind_verb);
		if (ret)
			break;
		if (!vhca_mring_room(r, prod, &cons)) {
			ret = ENOMEM;
			break;
		}
		vhca_write_swqe(vhca_mring_slot(r, prod), wr, ibqp->qp_type);
		prod++;
	}
	posted = prod != r->idx;
	if (posted)
		vhca_sq_publish(qp, prod);
	pthread_spin_unlock(&qp->sq_lock);
	if (ret)
		*bad_wr = wr;
	if (!posted)
		return ret;
	db = vhca_sq_kick(qp);
	if (db && !ret) {
		ret = db;
		*bad_wr = first;
	}
	return ret;
}

int vhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	return vhca_post(ibqp, wr, bad_wr, false);
}

/*
 * ibv_bind_mw(3): a type 1 window is bound by a WQE like a type 2 one,
 * under the next key; mw->rkey becomes it once the WQE is posted, and
 * works once it has completed.
 */
int vhca_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	}, *bad;
	int ret;

	ret = vhca_post(qp, &wr, &bad, true);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}
