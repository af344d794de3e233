// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion queues: the engine produces CQEs into a mapped ring and
 * ibv_poll_cq() consumes them with no system call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"

struct vhca_create_cq_resp_full {
	__u32 cq_handle;
	__u32 cqe;
	struct vhca_create_cq_resp drv;
};

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
		goto err_free;
	ret = vhca_mring_map(&cq->ring, context->cmd_fd, resp.drv.mmap_key,
			     resp.drv.mmap_size, resp.drv.log2_slots,
			     __builtin_ctz(VHCA_CQE_STRIDE),
			     sizeof(struct vhca_cqe));
	if (ret)
		goto err_destroy;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->ring_ctrl = to_vctx(context)->ring_ctrl;
	return &cq->cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
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

static void vhca_cqe_to_wc(const struct vhca_cqe *cqe, struct ibv_wc *wc)
{
	unsigned int flags = cqe->flags;

	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = (flags & (VHCA_CQE_F_IMM | VHCA_CQE_F_INV)) ? cqe->ex : 0;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = ((flags & VHCA_CQE_F_GRH) ? IBV_WC_GRH : 0) |
		       ((flags & VHCA_CQE_F_IMM) ? IBV_WC_WITH_IMM : 0) |
		       ((flags & VHCA_CQE_F_INV) ? IBV_WC_WITH_INV : 0);
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

int vhca_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct vhca_cq *cq = container_of(ibcq, struct vhca_cq, cq);
	struct vhca_mring *r = &cq->ring;
	uint32_t prod, cons;
	int n = 0;

	pthread_spin_lock(&cq->lock);
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
	if (n) {
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
	pthread_spin_unlock(&cq->lock);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}
