// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue pairs: ibv_post_recv() writes receive WQEs into the QP's mapped
 * receive ring with no system call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

struct ibv_qp *vhca_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct vhca_create_qp_resp_full resp = {};
	struct vhca_cmd_create_qp cmd;
	int fd = pd->context->cmd_fd;
	struct vhca_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				(struct ib_uverbs_create_qp_resp *)&resp,
				sizeof(resp));
	if (ret)
		goto err_free;
	ret = vhca_uring_map(&qp->sq, fd, resp.drv.sq_mmap_key,
			     resp.drv.sq_mmap_size, resp.drv.sq_log2_slots,
			     resp.drv.sq_log2_stride);
	if (ret)
		goto err_destroy;
	if (resp.drv.rq_mmap_size) {
		if (sizeof(struct vhca_rwqe) + resp.drv.max_recv_sge *
		    sizeof(struct vhca_sge) > (1U << resp.drv.rq_log2_stride)) {
			ret = EPROTO;
			goto err_unmap;
		}
		ret = vhca_uring_map(&qp->rq, fd, resp.drv.rq_mmap_key,
				     resp.drv.rq_mmap_size,
				     resp.drv.rq_log2_slots,
				     resp.drv.rq_log2_stride);
		if (ret)
			goto err_unmap;
	}
	qp->max_send_sge = resp.drv.max_send_sge;
	qp->max_recv_sge = resp.drv.max_recv_sge;
	qp->max_inline = resp.drv.max_inline;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	return &qp->vqp.qp;

err_unmap:
	vhca_uring_unmap(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
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
	/* The kernel has reset its side of the rings; reset ours. */
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		vhca_uring_reset(&qp->sq, &qp->sq_lock);
		if (qp->rq.map)
			vhca_uring_reset(&qp->rq, &qp->rq_lock);
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
	vhca_uring_unmap(&qp->rq);
	vhca_uring_unmap(&qp->sq);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
	return 0;
}

/*
 * ibv_post_recv(3): a QP attached to an SRQ has no receive queue of its
 * own, and a QP in RESET takes no receives; both are refused at the first
 * WR.  qp->state is what vhca_modify_qp recorded.
 */
int vhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct vhca_qp *qp = to_vqp(ibqp);

	if (ibqp->srq ||
	    __atomic_load_n(&ibqp->state, __ATOMIC_ACQUIRE) == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	return vhca_post_rwqes(&qp->rq, &qp->rq_lock, qp->max_recv_sge, wr,
			       bad_wr);
}

/* Sends need the engine, which is not there yet. */
int vhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	(void)ibqp;
	*bad_wr = wr;
	return EOPNOTSUPP;
}
