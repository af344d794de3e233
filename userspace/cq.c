// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion queues: the engine produces CQEs into a mapped ring and
 * ibv_poll_cq(), or ibv_start_poll() .. ibv_end_poll() on a CQ from
 * ibv_create_cq_ex(), consumes them with no system call.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "provider.h"

struct vhca_create_cq_resp_full {
	__u32 cq_handle;
	__u32 cqe;
	struct vhca_create_cq_resp drv;
};

struct vhca_create_cq_ex_resp_full {
	struct ib_uverbs_ex_create_cq_resp core;
	struct vhca_create_cq_resp drv;
};

/* Map a new CQ's ring, which the driver's part of the response names. */
static int vhca_cq_map(struct vhca_cq *cq, struct ibv_context *context,
		       const struct vhca_create_cq_resp *drv)
{
	int ret;

	ret = vhca_mring_map(&cq->ring, context->cmd_fd, drv->mmap_key,
			     drv->mmap_size, drv->log2_slots,
			     __builtin_ctz(VHCA_CQE_STRIDE),
			     sizeof(struct vhca_cqe));
	if (ret)
		return ret;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->ring_ctrl = to_vctx(context)->ring_ctrl;
	return 0;
}

/* Undo a create that failed with @ret: the kernel's CQ if @made, then ours. */
static void *vhca_cq_undo(struct vhca_cq *cq, bool made, int ret)
{
	if (made)
		ibv_cmd_destroy_cq(&cq->cq);
	free(cq);
	errno = ret;
	return NULL;
}

struct ibv_cq *vhca_create_cq(struct ibv_context *context, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct vhca_create_cq_resp_full resp = {};
	struct vhca_cmd_create_cq cmd;
	struct vhca_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector, &cq->cq,
				&cmd, sizeof(cmd),
				(struct ib_uverbs_create_cq_resp *)&resp,
				sizeof(resp));
	if (ret)
		return vhca_cq_undo(cq, false, ret);
	ret = vhca_cq_map(cq, context, &resp.drv);
	if (ret)
		return vhca_cq_undo(cq, true, ret);
	return &cq->cq;
}

int vhca_destroy_cq(struct ibv_cq *ibcq)
{
	struct vhca_cq *cq = container_of(ibcq, struct vhca_cq, cq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	vhca_mring_unmap(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

struct vhca_resize_cq_resp_full {
	struct ib_uverbs_resize_cq_resp core;
	struct vhca_create_cq_resp drv;
};

/*
 * The kernel moves the unpolled CQEs to a new ring, from slot 0, and hands
 * it over in the response; polling waits on the lock meanwhile.  The old
 * ring's pages stay mapped until we unmap them, so nothing reads freed
 * memory.
 */
int vhca_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct vhca_cq *cq = container_of(ibcq, struct vhca_cq, cq);
	struct vhca_resize_cq_resp_full resp = {};
	struct vhca_cmd_resize_cq cmd;
	struct vhca_mring ring;
	int ret;

	pthread_spin_lock(&cq->lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.core,
				sizeof(resp));
	if (!ret)
		ret = vhca_mring_map(&ring, ibcq->context->cmd_fd,
				     resp.drv.mmap_key, resp.drv.mmap_size,
				     resp.drv.log2_slots,
				     __builtin_ctz(VHCA_CQE_STRIDE),
				     sizeof(struct vhca_cqe));
	if (!ret) {
		vhca_mring_unmap(&cq->ring);
		cq->ring = ring;	/* consumer 0: what is left starts there */
	}
	pthread_spin_unlock(&cq->lock);
	return ret;
}

/*
 * A CQE's immediate data, or the rkey it invalidated: in tm_ex on a
 * tag-matching completion, whose ex is the TMH's app_ctx.
 */
static uint32_t vhca_cqe_ex(const struct vhca_cqe *cqe)
{
	if (!(cqe->flags & (VHCA_CQE_F_IMM | VHCA_CQE_F_INV)))
		return 0;
	return cqe->flags & VHCA_CQE_F_TM ? cqe->tm_ex : cqe->ex;
}

/* The engine reports none; a tag-matching completion's field is tm_ex. */
static uint32_t vhca_cqe_vendor_err(const struct vhca_cqe *cqe)
{
	return cqe->flags & VHCA_CQE_F_TM ? 0 : cqe->vendor_err;
}

static unsigned int vhca_cqe_wc_flags(const struct vhca_cqe *cqe)
{
	unsigned int flags = cqe->flags;
	unsigned int wc = ((flags & VHCA_CQE_F_IMM) ? IBV_WC_WITH_IMM : 0) |
			  ((flags & VHCA_CQE_F_INV) ? IBV_WC_WITH_INV : 0);

	if (flags & VHCA_CQE_F_TM)
		return wc |
		       ((flags & VHCA_CQE_F_TM_MATCH) ? IBV_WC_TM_MATCH : 0) |
		       ((flags & VHCA_CQE_F_TM_DATA) ? IBV_WC_TM_DATA_VALID : 0) |
		       ((flags & VHCA_CQE_F_TM_SYNC_REQ) ?
			IBV_WC_TM_SYNC_REQ : 0);
	return wc | ((flags & VHCA_CQE_F_GRH) ? IBV_WC_GRH : 0);
}

/*
 * A CQE's SL.  RoCE carries none; a RoCEv2 datagram's reports the L3
 * header type of the packet instead, 2 for IPv4 and 1 for IPv6, as
 * ConnectX puts it in that field of its CQE and libmlx5 passes it on.
 * UCX's ud_verbs reads it there to find the destination address in the
 * GRH slot: with 0 it takes an IPv4 packet's for an IPv6 one, matches
 * none of its GIDs and drops every datagram.
 */
static uint8_t vhca_cqe_sl(const struct vhca_cqe *cqe)
{
	if (!(cqe->flags & VHCA_CQE_F_NET_HDR))
		return cqe->sl;
	return cqe->network_hdr_type == VHCA_NETWORK_IPV4 ? 2 : 1;
}

static void vhca_cqe_to_wc(const struct vhca_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = vhca_cqe_vendor_err(cqe);
	wc->byte_len = cqe->byte_len;
	wc->imm_data = vhca_cqe_ex(cqe);
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = vhca_cqe_wc_flags(cqe);
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = vhca_cqe_sl(cqe);
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

/*
 * Drop what QP @qpn completed on @ibcq and nobody polled: it went to
 * RESET, and those completions belong to no WQE it has now (libmlx4 and
 * libmlx5 clean their CQs the same way, and rdma-core's tests that bring
 * a QP back from the error state count on it).  With @recvs false, its
 * receive completions stay: they hand back SRQ WQEs, which are the SRQ's
 * and not the QP's.  The engine appends past the producer index
 * meanwhile, so the CQEs kept move towards it and the consumer index
 * moves forward over the slots freed.
 */
void vhca_cq_clean(struct ibv_cq *ibcq, uint32_t qpn, bool recvs)
{
	struct vhca_cq *cq = container_of(ibcq, struct vhca_cq, cq);
	struct vhca_mring *r = &cq->ring;
	uint32_t prod, i, dropped = 0;

	pthread_spin_lock(&cq->lock);
	/* Acquire: the CQEs below prod are written (as in poll_cq). */
	prod = __atomic_load_n(&r->hdr->producer, __ATOMIC_ACQUIRE);
	if (!vhca_ring_sane(prod, r->idx, r->log2_slots)) {
		pthread_spin_unlock(&cq->lock);
		return;		/* poll_cq will say so */
	}
	for (i = prod; i != r->idx;) {
		const struct vhca_cqe *c = vhca_mring_slot(r, --i);

		if (c->qp_num == qpn && (recvs || !(c->opcode & IBV_WC_RECV)))
			dropped++;
		else if (dropped)
			memcpy(vhca_mring_slot(r, i + dropped), c, sizeof(*c));
	}
	if (dropped) {
		r->idx += dropped;
		/* Release: the moves are done before the slots are free. */
		__atomic_store_n(&r->hdr->consumer, r->idx, __ATOMIC_RELEASE);
	}
	pthread_spin_unlock(&cq->lock);
}

int vhca_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct vhca_cq *cq = container_of(ibcq, struct vhca_cq, cq);
	struct vhca_mring *r = &cq->ring;
	uint32_t prod, cons;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	/* tag-matching SRQs' list operations first (tm.c) */
	for (; n < ne && cq->tm_srqs && vhca_tm_take_wc(cq, &cq->tm_cqe); n++)
		vhca_cqe_to_wc(&cq->tm_cqe, &wc[n]);
	cons = r->idx;
	/*
	 * Acquire pairs with the engine's release store of the producer:
	 * every CQE below prod is fully written before we read it.
	 */
	prod = __atomic_load_n(&r->hdr->producer, __ATOMIC_ACQUIRE);
	if (!vhca_ring_sane(prod, cons, r->log2_slots)) {
		/* only this process can have written that index */
		pthread_spin_unlock(&cq->lock);
		return -EIO;
	}
	for (; n < ne && cons != prod; n++, cons++)
		vhca_cqe_to_wc(vhca_mring_slot(r, cons), &wc[n]);
	if (cons != r->idx) {
		r->idx = cons;
		/*
		 * Release: our reads of those slots happen before the engine
		 * may see them free and overwrite them.
		 */
		__atomic_store_n(&r->hdr->consumer, cons, __ATOMIC_RELEASE);
	}
	pthread_spin_unlock(&cq->lock);
	return n;
}

/*
 * Arm with no system call: add to one of the two counters in ctrl (struct
 * vhca_ring_hdr).  The lock keeps the ring from being swapped by a resize
 * meanwhile.  The kernel reads ctrl after each completion it stores and a
 * full barrier; the fence here orders the arm before this thread's next
 * poll reads the producer index, so a completion stored before the arm is
 * seen by that poll, and one stored after it fires the event.
 */
int vhca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct vhca_cq *cq = container_of(ibcq, struct vhca_cq, cq);

	if (!cq->ring_ctrl)
		return ibv_cmd_req_notify_cq(ibcq, solicited_only);
	pthread_spin_lock(&cq->lock);
	__atomic_fetch_add(&cq->ring.hdr->ctrl,
			   solicited_only ? VHCA_CQ_ARM_SOLICITED :
					    VHCA_CQ_ARM_NEXT, __ATOMIC_SEQ_CST);
	if (cq->tm_srqs)
		__atomic_fetch_or(&cq->tm_arm, solicited_only ?
				  VHCA_TM_ARM_SOLICITED : VHCA_TM_ARM_NEXT,
				  __ATOMIC_SEQ_CST);
	pthread_spin_unlock(&cq->lock);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

/*
 * The extended CQ, ibv_create_cq_ex(3).  ibv_start_poll() takes the CQ's
 * lock and the first CQE, ibv_next_poll() the next, and the read_* calls
 * read the one taken.  What was taken goes back to the engine at
 * ibv_end_poll(), with one release store of the consumer index, and the
 * lock is dropped; a start_poll that fails has dropped it already.
 */
static inline struct vhca_cq *to_vcqx(struct ibv_cq_ex *cqx)
{
	return container_of(cqx, struct vhca_cq, cq_ex);
}

static inline const struct vhca_cqe *vhca_cqx_cur(struct ibv_cq_ex *cqx)
{
	return to_vcqx(cqx)->cur;
}

/*
 * Take the CQE at the consumer index if the engine has produced it: 0, or
 * ENOENT, or EIO for a producer index that cannot be (only this process
 * can have written that).  Acquire pairs with the engine's release store
 * of the producer: the CQE is whole before we read it.
 */
static int vhca_cqx_take(struct vhca_cq *cq)
{
	struct vhca_mring *r = &cq->ring;
	const struct vhca_cqe *cqe;

	/* a tag-matching SRQ's list operation first (tm.c) */
	if (cq->tm_srqs && vhca_tm_take_wc(cq, &cq->tm_cqe)) {
		cqe = &cq->tm_cqe;
		goto took;
	}
	if (r->idx == cq->poll_prod) {
		cq->poll_prod = __atomic_load_n(&r->hdr->producer,
						__ATOMIC_ACQUIRE);
		if (!vhca_ring_sane(cq->poll_prod, r->idx, r->log2_slots))
			return EIO;
		if (r->idx == cq->poll_prod)
			return ENOENT;
	}
	cqe = vhca_mring_slot(r, r->idx++);
took:
	cq->cur = cqe;
	cq->cq_ex.wr_id = cqe->wr_id;
	cq->cq_ex.status = (enum ibv_wc_status)cqe->status;
	return 0;
}

static int vhca_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct vhca_cq *cq = to_vcqx(cqx);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	cq->poll_prod = cq->ring.idx;	/* read the producer afresh */
	ret = vhca_cqx_take(cq);
	if (ret)
		pthread_spin_unlock(&cq->lock);
	return ret;
}

static int vhca_next_poll(struct ibv_cq_ex *cqx)
{
	return vhca_cqx_take(to_vcqx(cqx));
}

static void vhca_end_poll(struct ibv_cq_ex *cqx)
{
	struct vhca_cq *cq = to_vcqx(cqx);

	/* Release: our reads of the slots happen before the engine reuses them. */
	__atomic_store_n(&cq->ring.hdr->consumer, cq->ring.idx,
			 __ATOMIC_RELEASE);
	cq->cur = NULL;
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode vhca_read_opcode(struct ibv_cq_ex *cqx)
{
	return (enum ibv_wc_opcode)vhca_cqx_cur(cqx)->opcode;
}

static uint32_t vhca_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return vhca_cqe_vendor_err(vhca_cqx_cur(cqx));
}

static uint32_t vhca_read_byte_len(struct ibv_cq_ex *cqx)
{
	return vhca_cqx_cur(cqx)->byte_len;
}

static __be32 vhca_read_imm_data(struct ibv_cq_ex *cqx)
{
	return vhca_cqe_ex(vhca_cqx_cur(cqx));
}

static uint32_t vhca_read_qp_num(struct ibv_cq_ex *cqx)
{
	return vhca_cqx_cur(cqx)->qp_num;
}

static uint32_t vhca_read_src_qp(struct ibv_cq_ex *cqx)
{
	return vhca_cqx_cur(cqx)->src_qp;
}

static unsigned int vhca_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return vhca_cqe_wc_flags(vhca_cqx_cur(cqx));
}

static uint32_t vhca_read_slid(struct ibv_cq_ex *cqx)
{
	return vhca_cqx_cur(cqx)->slid;
}

static uint8_t vhca_read_sl(struct ibv_cq_ex *cqx)
{
	return vhca_cqe_sl(vhca_cqx_cur(cqx));
}

static uint8_t vhca_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return vhca_cqx_cur(cqx)->dlid_path_bits;
}

static uint64_t vhca_read_completion_ts(struct ibv_cq_ex *cqx)
{
	return vhca_cqx_cur(cqx)->ts;
}

static uint64_t vhca_read_completion_wallclock_ns(struct ibv_cq_ex *cqx)
{
	return vhca_cqx_cur(cqx)->ts_real;
}

/* A tag-matching completion's tag and the TMH's app_ctx (zero else). */
static void vhca_read_tm_info(struct ibv_cq_ex *cqx,
			      struct ibv_wc_tm_info *info)
{
	const struct vhca_cqe *cqe = vhca_cqx_cur(cqx);
	bool tm = cqe->flags & VHCA_CQE_F_TM;

	info->tag = tm ? cqe->tm_tag : 0;
	info->priv = tm ? be32toh(cqe->ex) : 0;
}

#define VHCA_CQ_TS_FLAGS (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/*
 * The standard fields, both time stamps and tag matching's; no VLAN or
 * flow tag, and no CQ that may overrun.  A parent domain is taken as
 * ibv_create_cq_ex(3) allows and not used: the CQ's ring is the
 * kernel's.  A single-threaded CQ is only a hint: it is locked all the
 * same.
 */
struct ibv_cq_ex *vhca_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct vhca_create_cq_ex_resp_full resp = {};
	struct vhca_cmd_create_cq_ex cmd = {};
	struct ibv_cq_ex *cqx;
	struct vhca_cq *cq;
	int ret;

	if ((attr->wc_flags & ~(uint64_t)(IBV_WC_STANDARD_FLAGS |
					  VHCA_CQ_TS_FLAGS |
					  IBV_WC_EX_WITH_TM_INFO)) ||
	    ((attr->wc_flags & VHCA_CQ_TS_FLAGS) && !to_vctx(context)->cqe_ts) ||
	    (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					   IBV_CQ_INIT_ATTR_MASK_PD)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	     !vhca_is_parent_domain(context, attr->parent_domain)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	/* the time stamp flags become IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION */
	ret = ibv_cmd_create_cq_ex(context, attr, (struct verbs_cq *)&cq->cq,
				   &cmd, sizeof(cmd), &resp.core, sizeof(resp),
				   0);
	if (ret)
		return vhca_cq_undo(cq, false, ret);
	ret = vhca_cq_map(cq, context, &resp.drv);
	if (ret)
		return vhca_cq_undo(cq, true, ret);
	cqx = &cq->cq_ex;
	cqx->start_poll = vhca_start_poll;
	cqx->next_poll = vhca_next_poll;
	cqx->end_poll = vhca_end_poll;
	cqx->read_opcode = vhca_read_opcode;
	cqx->read_vendor_err = vhca_read_vendor_err;
	cqx->read_byte_len = vhca_read_byte_len;
	cqx->read_imm_data = vhca_read_imm_data;
	cqx->read_qp_num = vhca_read_qp_num;
	cqx->read_src_qp = vhca_read_src_qp;
	cqx->read_wc_flags = vhca_read_wc_flags;
	cqx->read_slid = vhca_read_slid;
	cqx->read_sl = vhca_read_sl;
	cqx->read_dlid_path_bits = vhca_read_dlid_path_bits;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cqx->read_completion_ts = vhca_read_completion_ts;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cqx->read_completion_wallclock_ns =
			vhca_read_completion_wallclock_ns;
	if (attr->wc_flags & IBV_WC_EX_WITH_TM_INFO)
		cqx->read_tm_info = vhca_read_tm_info;
	return cqx;
}

/*
 * The device's raw clock, which CQE time stamps count: CLOCK_MONOTONIC
 * in ns (hca_core_clock 1 GHz), read through the vDSO.
 */
int vhca_query_rt_values(struct ibv_context *context,
			 struct ibv_values_ex *values)
{
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (!to_vctx(context)->cqe_ts)
		return EOPNOTSUPP;
	if ((values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) &&
	    clock_gettime(CLOCK_MONOTONIC, &values->raw_clock))
		return errno;
	return 0;
}
