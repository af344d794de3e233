// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Shared receive queues: ibv_post_srq_recv() writes receive WQEs into a
 * mapped ring with no system call; the engine consumes them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"

struct vhca_create_srq_resp_full {
	struct ib_uverbs_create_srq_resp_core {
		__u32 srq_handle;
		__u32 max_wr;
		__u32 max_sge;
		__u32 srqn;
	} core;
	struct vhca_create_srq_resp drv;
};

struct ibv_srq *vhca_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct vhca_create_srq_resp_full resp = {};
	struct vhca_cmd_create_srq cmd;
	struct vhca_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 (struct ib_uverbs_create_srq_resp *)&resp,
				 sizeof(resp));
	if (ret)
		goto err_free;
	if (resp.drv.log2_stride < __builtin_ctz(VHCA_WQE_MIN_STRIDE) ||
	    sizeof(struct vhca_rwqe) + resp.drv.max_sge *
	    sizeof(struct vhca_sge) > (1U << resp.drv.log2_stride)) {
		ret = EPROTO;
		goto err_destroy;
	}
	ret = vhca_uring_map(&srq->ring, pd->context->cmd_fd,
			     resp.drv.mmap_key, resp.drv.mmap_size,
			     resp.drv.log2_slots, resp.drv.log2_stride);
	if (ret)
		goto err_destroy;
	srq->max_sge = resp.drv.max_sge;
	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

int vhca_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct vhca_cmd_modify_srq cmd;

	return ibv_cmd_modify_srq(srq, attr, mask, &cmd, sizeof(cmd));
}

int vhca_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct vhca_cmd_query_srq cmd;

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int vhca_destroy_srq(struct ibv_srq *ibsrq)
{
	struct vhca_srq *srq = container_of(ibsrq, struct vhca_srq, vsrq.srq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	vhca_uring_unmap(&srq->ring);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

/*
 * Post WRs in order; stop at the first that cannot be posted and return it
 * through *bad_wr with a positive errno (EINVAL: too many SGEs; ENOMEM: the
 * ring is full).  WRs before it are posted, none after it.
 */
int vhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct vhca_srq *srq = container_of(ibsrq, struct vhca_srq, vsrq.srq);
	struct vhca_uring *r = &srq->ring;
	uint32_t prod, cons;
	int i, ret = 0;

	pthread_spin_lock(&srq->lock);
	prod = r->idx;
	/*
	 * Acquire pairs with the engine's release store of the consumer: it
	 * has finished copying a WQE out before we see its slot as free.
	 */
	cons = __atomic_load_n(&r->hdr->consumer, __ATOMIC_ACQUIRE);
	for (; wr; wr = wr->next) {
		struct vhca_rwqe *wqe;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge) {
			ret = EINVAL;
			break;
		}
		if (vhca_ring_full(prod, cons, r->log2_slots)) {
			cons = __atomic_load_n(&r->hdr->consumer,
					       __ATOMIC_ACQUIRE);
			if (vhca_ring_full(prod, cons, r->log2_slots)) {
				ret = ENOMEM;
				break;
			}
		}
		wqe = vhca_uring_slot(r, prod);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = (uint32_t)wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			wqe->sge[i].addr = wr->sg_list[i].addr;
			wqe->sge[i].length = wr->sg_list[i].length;
			wqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		prod++;
	}
	if (prod != r->idx) {
		r->idx = prod;
		/* Release: the WQEs are written before the index that shows them. */
		__atomic_store_n(&r->hdr->producer, prod, __ATOMIC_RELEASE);
	}
	pthread_spin_unlock(&srq->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}
