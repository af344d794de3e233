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
	ret = vhca_uring_map(&srq->ring, pd->context->cmd_fd,
			     resp.drv.mmap_key, resp.drv.mmap_size,
			     resp.drv.log2_slots, resp.drv.log2_stride,
			     vhca_rwqe_bytes(resp.drv.max_sge));
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

int vhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct vhca_srq *srq = container_of(ibsrq, struct vhca_srq, vsrq.srq);

	return vhca_post_rwqes(&srq->ring, &srq->lock, srq->max_sge, wr,
			       bad_wr);
}
