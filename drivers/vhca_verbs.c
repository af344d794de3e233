// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Verbs objects.  Protection domains exist; completion queues, shared
 * receive queues and queue pairs (vhca_qp.c) exist for userspace, on rings
 * it maps, and so do user memory regions.  The kernel's own objects arrive
 * with the engine,
 * and until then their verbs answer -EOPNOTSUPP so that callers (libibverbs,
 * pyverbs, the MAD layer) see "not supported" rather than a failure of
 * something that exists.
 */
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "vhca.h"

static int vhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);
	struct vhca_pd *pd = to_vpd(ibpd);
	struct vhca_alloc_pd_resp resp = {};
	int id, err;

	id = ida_alloc_max(&vdev->pd_ida, VHCA_MAX_PD - 1, GFP_KERNEL);
	if (id < 0)
		return id;
	pd->pdn = id;

	if (udata) {
		resp.pdn = pd->pdn;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err) {
			ida_free(&vdev->pd_ida, id);
			return err;
		}
	}
	return 0;
}

static int vhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	ida_free(&to_vdev(ibpd->device)->pd_ida, to_vpd(ibpd)->pdn);
	return 0;
}

/*
 * vhca defines no request payload yet: anything non-zero there is from a
 * newer provider asking for something this kernel does not know.
 */
int vhca_check_udata_in(struct ib_udata *udata)
{
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	return 0;
}

struct ib_ucontext *vhca_udata_uctx(struct ib_udata *udata)
{
	return &rdma_udata_to_drv_context(udata, struct vhca_ucontext,
					  ibuc)->ibuc;
}

static int vhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			  struct uverbs_attr_bundle *attrs)
{
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;
	struct vhca_dev *vdev = to_vdev(ibcq->device);
	struct vhca_cq *cq = to_vcq(ibcq);
	struct vhca_create_cq_resp resp = {};
	struct vhca_qgeom g;
	int err, id;

	if (!udata)
		return -EOPNOTSUPP;	/* kernel CQs come with the engine */
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	err = vhca_cq_geometry(attr->cqe, &g);
	if (err)
		return err;
	err = vhca_check_udata_in(udata);
	if (err)
		return err;
	if (udata->outlen < sizeof(resp))
		return -EINVAL;	/* a provider that cannot map the ring */

	id = ida_alloc_max(&vdev->cq_ida, VHCA_MAX_CQ - 1, GFP_KERNEL);
	if (id < 0)
		return id;
	cq->cqn = id;
	err = vhca_uring_create(&cq->ring, vhca_udata_uctx(udata), &g);
	if (err)
		goto err_ida;

	spin_lock_init(&cq->lock);
	ibcq->cqe = g.max_wr;
	resp.mmap_key = vhca_uring_key(&cq->ring);
	resp.mmap_size = cq->ring.bytes;
	resp.log2_slots = g.log2_slots;
	resp.cqn = cq->cqn;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_ring;
	return 0;

err_ring:
	vhca_uring_destroy(&cq->ring);
err_ida:
	ida_free(&vdev->cq_ida, cq->cqn);
	return err;
}

static int vhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct vhca_cq *cq = to_vcq(ibcq);

	vhca_uring_destroy(&cq->ring);
	ida_free(&to_vdev(ibcq->device)->cq_ida, cq->cqn);
	return 0;
}

static int vhca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			   struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibsrq->device);
	struct vhca_srq *srq = to_vsrq(ibsrq);
	struct vhca_create_srq_resp resp = {};
	struct vhca_qgeom g;
	int err, id;

	if (!udata)
		return -EOPNOTSUPP;	/* kernel SRQs come with the engine */
	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	err = vhca_rq_geometry(init->attr.max_wr, init->attr.max_sge,
			       VHCA_MAX_QP_WR, &g);
	if (err)
		return err;
	if (init->attr.srq_limit > g.max_wr)
		return -EINVAL;
	err = vhca_check_udata_in(udata);
	if (err)
		return err;
	if (udata->outlen < sizeof(resp))
		return -EINVAL;

	id = ida_alloc_max(&vdev->srq_ida, VHCA_MAX_SRQ - 1, GFP_KERNEL);
	if (id < 0)
		return id;
	srq->srqn = id;
	err = vhca_uring_create(&srq->ring, vhca_udata_uctx(udata), &g);
	if (err)
		goto err_ida;
	srq->limit = init->attr.srq_limit;
	spin_lock_init(&srq->lock);

	/* ibv_create_srq(3): report what was created, >= what was asked */
	init->attr.max_wr = g.max_wr;
	init->attr.max_sge = g.max_sge;

	resp.mmap_key = vhca_uring_key(&srq->ring);
	resp.mmap_size = srq->ring.bytes;
	resp.log2_slots = g.log2_slots;
	resp.log2_stride = g.log2_stride;
	resp.max_sge = g.max_sge;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_ring;
	return 0;

err_ring:
	vhca_uring_destroy(&srq->ring);
err_ida:
	ida_free(&vdev->srq_ida, srq->srqn);
	return err;
}

static int vhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	/* Resizing a mapped ring is not offered (no IB_DEVICE_SRQ_RESIZE). */
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->ring.g.max_wr)
			return -EINVAL;
		spin_lock_irq(&srq->lock);
		srq->limit = attr->srq_limit;
		spin_unlock_irq(&srq->lock);
	}
	return 0;
}

static int vhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);

	attr->max_wr = srq->ring.g.max_wr;
	attr->max_sge = srq->ring.g.max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

/* The core refuses this with -EBUSY while a QP uses the SRQ. */
static int vhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);

	vhca_uring_destroy(&srq->ring);
	ida_free(&to_vdev(ibsrq->device)->srq_ida, srq->srqn);
	return 0;
}

static int vhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	return -EOPNOTSUPP;
}

/*
 * For a user QP this is the doorbell: the provider has written WQEs into
 * the send ring and calls POST_SEND with no WR.  Kernel QPs do not exist
 * yet.
 */
static int vhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	if (!ibqp->uobject || wr) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	vhca_qp_kick(to_vqp(ibqp));
	return 0;
}

static int vhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static struct ib_mr *vhca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

/* What a vhca MR can grant; the core has already checked the combination. */
#define VHCA_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			IB_ACCESS_RELAXED_ORDERING)

/*
 * Keys are an xarray index shifted left by 8 with a variant byte below, so
 * a key that outlived its region misses instead of finding the next one.
 */
static int vhca_mr_key_alloc(struct vhca_dev *vdev, struct vhca_mr *mr)
{
	u32 index;
	int err;

	err = xa_alloc(&vdev->mr_xa, &index, mr, XA_LIMIT(1, VHCA_MAX_MR),
		       GFP_KERNEL);
	if (err)
		return err == -EBUSY ? -ENOMEM : err;
	mr->ibmr.lkey = index << 8 | (u8)atomic_inc_return(&vdev->mr_variant);
	mr->ibmr.rkey = mr->ibmr.lkey;
	return 0;
}

/* The pinned pages in order, so the engine can reach any byte directly. */
static int vhca_mr_pages(struct vhca_mr *mr)
{
	size_t n = ib_umem_num_pages(mr->umem), i = 0;
	struct sg_page_iter it;

	mr->pages = kvmalloc_array(n, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &it, 0) {
		if (i == n)
			break;
		mr->pages[i++] = sg_page_iter_page(&it);
	}
	if (i != n) {
		kvfree(mr->pages);
		return -EFAULT;
	}
	mr->offset = ib_umem_offset(mr->umem);
	return 0;
}

static struct ib_mr *vhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				      u64 iova, int access,
				      struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);
	struct vhca_mr *mr;
	int err;

	if (access & ~VHCA_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);	/* MW_BIND, ZERO_BASED, ... */
	if (!len || iova + len < iova)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = ib_umem_get(ibpd->device, start, len, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_free;
	}
	mr->iova = iova;
	mr->length = len;
	mr->access = access;
	mr->pd = ibpd;
	err = vhca_mr_pages(mr);
	if (err)
		goto err_umem;
	err = vhca_mr_key_alloc(vdev, mr);
	if (err)
		goto err_pages;
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_umem:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/* The engine finds MRs under RCU: gone from the xarray, then a grace period. */
static int vhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct vhca_mr *mr = to_vmr(ibmr);

	xa_erase(&to_vdev(ibmr->device)->mr_xa, ibmr->lkey >> 8);
	synchronize_rcu();
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}

const struct ib_device_ops vhca_verbs_ops = {
	.alloc_pd = vhca_alloc_pd,
	.create_cq = vhca_create_cq,
	.create_qp = vhca_create_qp,
	.create_srq = vhca_create_srq,
	.dealloc_pd = vhca_dealloc_pd,
	.dereg_mr = vhca_dereg_mr,
	.destroy_cq = vhca_destroy_cq,
	.destroy_qp = vhca_destroy_qp,
	.destroy_srq = vhca_destroy_srq,
	.get_dma_mr = vhca_get_dma_mr,
	.mmap = vhca_mmap,
	.mmap_free = vhca_mmap_free,
	.modify_qp = vhca_modify_qp,
	.modify_srq = vhca_modify_srq,
	.poll_cq = vhca_poll_cq,
	.post_recv = vhca_post_recv,
	.post_send = vhca_post_send,
	.query_qp = vhca_query_qp,
	.query_srq = vhca_query_srq,
	.reg_user_mr = vhca_reg_user_mr,
	.req_notify_cq = vhca_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, vhca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, vhca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, vhca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, vhca_srq, ibsrq),
};
