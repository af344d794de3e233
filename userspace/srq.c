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

/* The object of an SRQ the kernel is to create: its lock, no ring. */
static struct vhca_srq *vhca_srq_new(void)
{
	struct vhca_srq *srq = calloc(1, sizeof(*srq));

	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	return srq;
}

static void vhca_srq_free(struct vhca_srq *srq)
{
	pthread_spin_destroy(&srq->lock);
	free(srq);
}

/*
 * The kernel made @srq (or failed with @ret): map the ring its driver
 * response @drv names, or undo the create.  ibv_create_srq() sets pd and
 * srq_context after its provider returns, ibv_create_srq_ex() does not.
 */
static struct ibv_srq *vhca_srq_made(struct vhca_srq *srq, int ret,
				     struct ibv_pd *pd, void *srq_context,
				     const struct vhca_create_srq_resp *drv)
{
	if (ret)
		goto err_free;
	ret = vhca_mring_map(&srq->ring, pd->context->cmd_fd, drv->mmap_key,
			     drv->mmap_size, drv->log2_slots, drv->log2_stride,
			     vhca_rwqe_bytes(drv->max_sge));
	if (ret)
		goto err_destroy;
	srq->max_sge = drv->max_sge;
	srq->vsrq.srq.pd = pd;
	srq->vsrq.srq.srq_context = srq_context;
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	vhca_srq_free(srq);
	errno = ret;
	return NULL;
}

struct ibv_srq *vhca_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct vhca_create_srq_resp_full resp = {};
	struct vhca_cmd_create_srq cmd;
	struct vhca_srq *srq;
	int ret;

	srq = vhca_srq_new();
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 (struct ib_uverbs_create_srq_resp *)&resp,
				 sizeof(resp));
	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	return vhca_srq_made(srq, ret, pd, attr->srq_context, &resp.drv);
}

/*
 * An XRC SRQ is a basic one that XRC_RECV QPs of its domain take their
 * receives from, completing on its CQ: the same ring, the same driver
 * response.  A tag-matching SRQ has that ring for its unexpected messages
 * and a tag table besides (tm.c), and completes on its CQ too.
 * libibverbs records the type, domain, CQ and number.
 */
static struct ibv_srq *vhca_create_srq_typed(struct ibv_srq_init_attr_ex *attr)
{
	struct vhca_create_srq_resp_full resp = {};
	struct vhca_cmd_create_xsrq cmd = {};
	struct vhca_srq *srq;
	struct ibv_srq *made;
	int ret;

	srq = vhca_srq_new();
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq_ex(attr->pd->context, &srq->vsrq, attr, &cmd,
				    sizeof(cmd),
				    (struct ib_uverbs_create_srq_resp *)&resp,
				    sizeof(resp));
	made = vhca_srq_made(srq, ret, attr->pd, attr->srq_context, &resp.drv);
	if (!made || attr->srq_type != IBV_SRQT_TM)
		return made;
	ret = vhca_tm_attach(srq, attr->pd->context->cmd_fd, &resp.drv,
			     attr->cq, attr->tm_cap.max_ops);
	if (ret) {
		vhca_destroy_srq(made);
		errno = ret;
		return NULL;
	}
	return made;
}

/*
 * ibv_create_srq_ex(3) for what ibv_create_srq() cannot say: a basic SRQ
 * with more in comp_mask (which it does not need), an XRC one, or a
 * tag-matching one.  libibverbs dereferences the PD, domain and CQ it is
 * given unchecked, so they are checked here.
 */
struct ibv_srq *vhca_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr)
{
	const uint32_t xrc = IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	const uint32_t tm = IBV_SRQ_INIT_ATTR_TM | IBV_SRQ_INIT_ATTR_CQ;
	enum ibv_srq_type type = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ?
				 attr->srq_type : IBV_SRQT_BASIC;

	if (attr->comp_mask >= IBV_SRQ_INIT_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != context ||
	    (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC &&
	     type != IBV_SRQT_TM)) {
		errno = EINVAL;
		return NULL;
	}
	if (type == IBV_SRQT_BASIC)
		/* its first members are struct ibv_srq_init_attr's */
		return vhca_create_srq(attr->pd,
				       (struct ibv_srq_init_attr *)attr);
	if ((type == IBV_SRQT_XRC &&
	     ((attr->comp_mask & xrc) != xrc || !attr->xrcd ||
	      attr->xrcd->context != context)) ||
	    (type == IBV_SRQT_TM &&
	     ((attr->comp_mask & tm) != tm || !attr->tm_cap.max_num_tags ||
	      !attr->tm_cap.max_ops)) ||
	    !attr->cq || attr->cq->context != context) {
		errno = EINVAL;
		return NULL;
	}
	return vhca_create_srq_typed(attr);
}

/* ibv_get_srq_num(3): the kernel numbers XRC SRQs only. */
int vhca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct verbs_srq *vsrq = container_of(ibsrq, struct verbs_srq, srq);

	if (vsrq->srq_type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = vsrq->srq_num;
	return 0;
}

/*
 * vhca's own uverbs method: MODIFY_SRQ has no response, and the new ring's
 * key and geometry must come back.  A plain RDMA_VERBS_IOCTL on cmd_fd.
 */
static int vhca_srq_resize(struct vhca_srq *srq, uint32_t max_wr,
			   struct vhca_create_srq_resp *resp)
{
	const struct ib_uverbs_attr attr[] = {
		{ .attr_id = VHCA_IB_ATTR_SRQ_RESIZE_HANDLE,
		  .flags = UVERBS_ATTR_F_MANDATORY,
		  .data = srq->vsrq.srq.handle },
		/* 8 bytes or less travel in data itself */
		{ .attr_id = VHCA_IB_ATTR_SRQ_RESIZE_MAX_WR,
		  .len = sizeof(max_wr),
		  .flags = UVERBS_ATTR_F_MANDATORY,
		  .data = max_wr },
		{ .attr_id = VHCA_IB_ATTR_SRQ_RESIZE_RESP,
		  .len = sizeof(*resp),
		  .flags = UVERBS_ATTR_F_MANDATORY,
		  .data = (uintptr_t)resp },
	};

	return vhca_method(srq->vsrq.srq.context, UVERBS_OBJECT_SRQ,
			   VHCA_IB_METHOD_SRQ_RESIZE, attr, 3);
}

/*
 * IBV_SRQ_MAX_WR: the kernel moves the WQEs not yet taken to a new ring,
 * from slot 0; posting waits on the lock until we map it.  IBV_SRQ_LIMIT
 * then goes the usual way.
 */
int vhca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int mask)
{
	struct vhca_srq *srq = container_of(ibsrq, struct vhca_srq, vsrq.srq);
	struct vhca_create_srq_resp resp = {};
	struct vhca_cmd_modify_srq cmd;
	struct vhca_mring ring;
	int ret;

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR) {
		pthread_spin_lock(&srq->lock);
		ret = vhca_srq_resize(srq, attr->max_wr, &resp);
		if (!ret)
			ret = resp.log2_stride == srq->ring.log2_stride &&
			      resp.max_sge == srq->max_sge ? 0 : EPROTO;
		if (!ret)
			ret = vhca_mring_map(&ring, ibsrq->context->cmd_fd,
					     resp.mmap_key, resp.mmap_size,
					     resp.log2_slots, resp.log2_stride,
					     vhca_rwqe_bytes(resp.max_sge));
		if (!ret) {
			/* our producer continues after the moved WQEs */
			ring.idx = __atomic_load_n(&ring.hdr->producer,
						   __ATOMIC_ACQUIRE);
			vhca_mring_unmap(&srq->ring);
			srq->ring = ring;
		}
		pthread_spin_unlock(&srq->lock);
		if (ret)
			return ret;
	}
	if (!(mask & IBV_SRQ_LIMIT))
		return 0;
	return ibv_cmd_modify_srq(ibsrq, attr, IBV_SRQ_LIMIT, &cmd,
				  sizeof(cmd));
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
	vhca_tm_detach(srq);
	vhca_mring_unmap(&srq->ring);
	vhca_srq_free(srq);
	return 0;
}

int vhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct vhca_srq *srq = container_of(ibsrq, struct vhca_srq, vsrq.srq);

	return vhca_post_rwqes(&srq->ring, &srq->lock, srq->max_sge, wr,
			       bad_wr);
}
