// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Verbs objects: protection domains, completion queues, shared receive
 * queues and address handles (QPs are in vhca_qp.c, MRs in vhca_mr.c).
 * A user object's rings are mapped by its process; a kernel object's
 * rings have the same layout in memory only the kernel sees.
 */
#include <linux/log2.h>
#include <rdma/ib_verbs.h>

#define UVERBS_MODULE_NAME vhca
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>

#include "vhca_tm.h"

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

/**
 * vhca_udata_begin() - check a create verb's user request
 * @udata: the provider's request and response, or NULL for a kernel object
 * @resp_len: the response vhca will write
 * @uctx: set to the context the object's rings are mapped into (NULL for
 *	a kernel object)
 *
 * Return: 0, -EOPNOTSUPP for a request vhca does not know, or -EINVAL when
 * there is no room for the response (a provider that cannot map rings).
 */
int vhca_udata_begin(struct ib_udata *udata, size_t resp_len,
		     struct ib_ucontext **uctx)
{
	int err;

	*uctx = NULL;
	if (!udata)
		return 0;
	err = vhca_check_udata_in(udata);
	if (err)
		return err;
	if (udata->outlen < resp_len)
		return -EINVAL;
	*uctx = vhca_udata_uctx(udata);
	return 0;
}

static int vhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			  struct vhca_create_cq_arg *arg)
{
	struct ib_udata *udata = vhca_create_cq_udata(arg);
	struct vhca_dev *vdev = to_vdev(ibcq->device);
	struct vhca_cq *cq = to_vcq(ibcq);
	struct vhca_create_cq_resp resp = {};
	struct ib_ucontext *uctx;
	struct vhca_qgeom g;
	int err, id;

	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		return -EOPNOTSUPP;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	err = vhca_cq_geometry(attr->cqe, &g);
	if (err)
		return err;
	err = vhca_udata_begin(udata, sizeof(resp), &uctx);
	if (err)
		return err;

	id = ida_alloc_max(&vdev->cq_ida, VHCA_MAX_CQ - 1, GFP_KERNEL);
	if (id < 0)
		return id;
	cq->cqn = id;
	err = vhca_uring_create(&cq->ring, uctx, &g);
	if (err)
		goto err_ida;

	cq->timestamps = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	spin_lock_init(&cq->lock);
	spin_lock_init(&cq->poll_lock);
	mutex_init(&cq->resize_lock);
	ibcq->cqe = g.max_wr;
	if (!udata)
		return 0;
	resp.mmap_key = vhca_uring_key(&cq->ring);
	resp.mmap_size = cq->ring.bytes;
	resp.log2_slots = g.log2_slots;
	resp.cqn = cq->cqn;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_ring;
	return 0;

err_ring:
	mutex_destroy(&cq->resize_lock);
	vhca_uring_destroy(&cq->ring);
err_ida:
	ida_free(&vdev->cq_ida, cq->cqn);
	return err;
}

static int vhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct vhca_cq *cq = to_vcq(ibcq);

	mutex_destroy(&cq->resize_lock);
	vhca_uring_destroy(&cq->ring);
	ida_free(&to_vdev(ibcq->device)->cq_ida, cq->cqn);
	return 0;
}

/**
 * vhca_resize_cq() - give a CQ a ring of another size
 * @ibcq: the CQ
 * @cqe: completions it must hold; rounded up like create's
 * @udata: a user CQ's response: the new ring (struct vhca_create_cq_resp)
 *
 * The completions not yet polled move to the new ring, in order; a size
 * that cannot hold them is refused, so nothing is lost.  WQEs posted before
 * the call have run first (the engine's queued work is flushed), as on a
 * HCA that completes them before the resize command is seen: they count
 * too (rdma-core's test_resize_cq relies on it).  The producer side
 * (cq->lock) and a kernel CQ's pollers (poll_lock) wait meanwhile; a user
 * CQ's provider holds its own lock across the call.
 *
 * Return: 0 or a negative errno; the CQ is unchanged on failure.
 */
static int vhca_resize_cq(struct ib_cq *ibcq, VHCA_RESIZE_CQE cqe,
			  struct ib_udata *udata)
{
	struct vhca_cq *cq = to_vcq(ibcq);
	struct vhca_create_cq_resp resp = {};
	struct vhca_uring ring, old;
	struct ib_ucontext *uctx;
	struct vhca_qgeom g;
	u32 cons;
	int err, n;

	/* a negative size, as u32, is out of range too */
	err = vhca_cq_geometry(cqe, &g);
	if (err)
		return err;
	err = vhca_udata_begin(udata, sizeof(resp), &uctx);
	if (err)
		return err;
	mutex_lock(&cq->resize_lock);
	err = vhca_uring_create(&ring, uctx, &g);
	if (err)
		goto out;
	flush_workqueue(vhca_wq);

	spin_lock_irq(&cq->poll_lock);
	spin_lock(&cq->lock);
	/* Acquire pairs with the poller's release of what it consumed. */
	cons = smp_load_acquire(&cq->ring.hdr->consumer);
	n = vhca_ring_move(&ring, &cq->ring, cons, cq->prod);
	if (n >= 0) {
		/* an arm in the old ring's ctrl still counts; the new is 0 */
		if (ibcq->uobject)
			vhca_cq_take_arm(cq);
		cq->arm_seen = 0;
		old = cq->ring;
		cq->ring = ring;
		cq->prod = n;
		ibcq->cqe = g.max_wr;
	}
	spin_unlock(&cq->lock);
	spin_unlock_irq(&cq->poll_lock);
	vhca_uring_destroy(n < 0 ? &ring : &old);
	err = min(n, 0);
	if (err || !udata)
		goto out;

	resp.mmap_key = vhca_uring_key(&cq->ring);
	resp.mmap_size = cq->ring.bytes;
	resp.log2_slots = g.log2_slots;
	resp.cqn = cq->cqn;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
out:
	mutex_unlock(&cq->resize_lock);
	return err;
}

static int vhca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			   struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibsrq->device);
	struct vhca_srq *srq = to_vsrq(ibsrq);
	struct vhca_create_srq_resp resp = {};
	struct ib_ucontext *uctx;
	struct vhca_qgeom g;
	int err, id;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC &&
	    init->srq_type != IB_SRQT_TM)
		return -EOPNOTSUPP;
	err = vhca_rq_geometry(init->attr.max_wr, init->attr.max_sge,
			       VHCA_MAX_QP_WR, &g);
	if (err)
		return err;
	if (init->attr.srq_limit > g.max_wr)
		return -EINVAL;
	err = vhca_udata_begin(udata, sizeof(resp), &uctx);
	if (err)
		return err;

	/* from 1: an XRC SRQ's number 0 reads as "none" to some users */
	id = ida_alloc_range(&vdev->srq_ida, 1, VHCA_MAX_SRQ, GFP_KERNEL);
	if (id < 0)
		return id;
	srq->srqn = id;
	err = vhca_uring_create(&srq->ring, uctx, &g);
	if (err)
		goto err_ida;
	srq->limit = init->attr.srq_limit;
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->post_lock);
	srq->uid = atomic64_inc_return(&vdev->qp_uid);
	if (init->srq_type == IB_SRQT_XRC) {
		/* the number XRC senders name it by (the XRCETH's 24 bits) */
		ibsrq->ext.xrc.srq_num = srq->srqn;
		err = xa_err(xa_store(&vdev->xsrq_xa, srq->srqn, srq,
				      GFP_KERNEL));
		if (err)
			goto err_ring;
	}
	if (init->srq_type == IB_SRQT_TM) {
		err = vhca_tm_create(srq, uctx,
				     init->ext.tag_matching.max_num_tags);
		if (err)
			goto err_ring;
		init->ext.tag_matching.max_num_tags = srq->tm->ntags;
	}

	/* ibv_create_srq(3): report what was created, >= what was asked */
	init->attr.max_wr = g.max_wr;
	init->attr.max_sge = g.max_sge;
	if (!udata)
		return 0;

	resp.mmap_key = vhca_uring_key(&srq->ring);
	resp.mmap_size = srq->ring.bytes;
	resp.log2_slots = g.log2_slots;
	resp.log2_stride = g.log2_stride;
	resp.max_sge = g.max_sge;
	if (srq->tm) {
		resp.tm_mmap_key = vhca_uring_key(&srq->tm->table);
		resp.tm_mmap_size = srq->tm->table.bytes;
		resp.tm_log2_tags = srq->tm->table.g.log2_slots;
	}
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_xa;
	return 0;

err_xa:
	vhca_tm_destroy(srq);
	if (init->srq_type == IB_SRQT_XRC) {
		xa_erase(&vdev->xsrq_xa, srq->srqn);
		synchronize_rcu();
	}
err_ring:
	vhca_uring_destroy(&srq->ring);
err_ida:
	ida_free(&vdev->srq_ida, srq->srqn);
	return err;
}

/**
 * vhca_srq_resize() - give an SRQ a ring of another size
 * @srq: the SRQ
 * @max_wr: WRs it must hold; rounded up like create's
 * @uctx: the user context of a user SRQ, NULL for a kernel one
 *
 * The WQEs not yet taken move to the new ring, in order; a size that
 * cannot hold them, or that is below the armed limit, is refused.  The
 * engine (srq->lock) and a kernel SRQ's posters (post_lock) wait
 * meanwhile; a user SRQ's provider holds its own lock across the call.
 *
 * Return: 0 or a negative errno; the SRQ is unchanged on failure.
 */
static int vhca_srq_resize(struct vhca_srq *srq, u32 max_wr,
			   struct ib_ucontext *uctx)
{
	struct vhca_qgeom g = srq->ring.g;
	struct vhca_uring ring, old;
	int err, n;
	u32 prod;

	if (!max_wr || max_wr > VHCA_MAX_QP_WR)
		return -EINVAL;
	g.log2_slots = order_base_2(max_wr);
	g.max_wr = 1U << g.log2_slots;
	err = vhca_uring_create(&ring, uctx, &g);
	if (err)
		return err;

	spin_lock_irq(&srq->post_lock);
	spin_lock(&srq->lock);
	/* Acquire pairs with the poster's release of the producer. */
	prod = smp_load_acquire(&srq->ring.hdr->producer);
	n = srq->limit > g.max_wr ? -EINVAL :
	    vhca_ring_move(&ring, &srq->ring, srq->cons, prod);
	if (n >= 0) {
		old = srq->ring;
		srq->ring = ring;
		srq->cons = 0;
	}
	spin_unlock(&srq->lock);
	spin_unlock_irq(&srq->post_lock);
	vhca_uring_destroy(n < 0 ? &ring : &old);
	return min(n, 0);
}

static int vhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR) {
		/* a user SRQ learns its new ring from VHCA_IB_METHOD_SRQ_RESIZE */
		if (udata)
			return -EOPNOTSUPP;
		err = vhca_srq_resize(srq, attr->max_wr, NULL);
		if (err)
			return err;
	}
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
/*
 * XRC domains hold nothing of vhca's: the core keeps the TGT QPs (and
 * shares the domain between processes by inode), and each XRC SRQ says
 * its own.  A domain is not its creator's: any process may free it.
 */
static int vhca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return 0;
}

static int vhca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return 0;
}

/*
 * An XRC SRQ leaves the table first; a grace period later no engine or
 * responder can be taking from it (they find it under RCU).
 */
static int vhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);

	if (ibsrq->srq_type == IB_SRQT_XRC) {
		xa_erase(&to_vdev(ibsrq->device)->xsrq_xa, srq->srqn);
		synchronize_rcu();
	}
	vhca_tm_destroy(srq);
	vhca_uring_destroy(&srq->ring);
	ida_free(&to_vdev(ibsrq->device)->srq_ida, srq->srqn);
	return 0;
}

/*
 * Kernel users' address handles; the provider makes user AHs itself, in
 * its own memory.  The core calls this in atomic context too (the CM does,
 * under a spinlock): it only copies.
 */
static int vhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			  struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibah->device);
	int err;

	if (udata)
		return -EOPNOTSUPP;
	if (rdma_ah_get_port_num(init->ah_attr) != VHCA_PORT)
		return -EINVAL;
	if (!atomic_add_unless(&vdev->nr_ah, 1, VHCA_MAX_AH))
		return -ENOMEM;
	err = vhca_av_from_ah(init->ah_attr, &to_vah(ibah)->av);
	if (err)
		atomic_dec(&vdev->nr_ah);
	return err;
}

/**
 * vhca_av_from_ah() - the address vector of an AH or a connected QP
 * @attr: the core's attributes; RoCE needs a GRH with a resolved source GID
 * @av: filled in
 *
 * Return: 0, or -EINVAL.
 */
int vhca_av_from_ah(const struct rdma_ah_attr *attr, struct vhca_av *av)
{
	const struct ib_global_route *grh;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	if (grh->sgid_index >= VHCA_GID_TBL_LEN || !grh->sgid_attr)
		return -EINVAL;
	memcpy(av->dgid, grh->dgid.raw, sizeof(av->dgid));
	av->flow_label = grh->flow_label;
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->network_type = rdma_gid_attr_network_type(grh->sgid_attr);
	memcpy(av->dmac, attr->roce.dmac, sizeof(av->dmac));
	return 0;
}

static int vhca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_vdev(ibah->device)->nr_ah);
	return 0;
}

static int UVERBS_HANDLER(VHCA_IB_METHOD_SRQ_RESIZE)(struct uverbs_attr_bundle *attrs)
{
	struct ib_srq *ibsrq =
		uverbs_attr_get_obj(attrs, VHCA_IB_ATTR_SRQ_RESIZE_HANDLE);
	struct vhca_srq *srq = to_vsrq(ibsrq);
	struct vhca_create_srq_resp resp = {};
	struct ib_ucontext *uctx;
	u32 max_wr;
	int err;

	err = uverbs_copy_from(&max_wr, attrs, VHCA_IB_ATTR_SRQ_RESIZE_MAX_WR);
	if (err)
		return err;
	uctx = ib_uverbs_get_ucontext(attrs);
	if (IS_ERR(uctx))
		return PTR_ERR(uctx);
	/* the uobject is held for write: no other resize or destroy */
	err = vhca_srq_resize(srq, max_wr, uctx);
	if (err)
		return err;
	resp.mmap_key = vhca_uring_key(&srq->ring);
	resp.mmap_size = srq->ring.bytes;
	resp.log2_slots = srq->ring.g.log2_slots;
	resp.log2_stride = srq->ring.g.log2_stride;
	resp.max_sge = srq->ring.g.max_sge;
	return uverbs_copy_to(attrs, VHCA_IB_ATTR_SRQ_RESIZE_RESP, &resp,
			      sizeof(resp));
}

DECLARE_UVERBS_NAMED_METHOD(VHCA_IB_METHOD_SRQ_RESIZE,
			    UVERBS_ATTR_IDR(VHCA_IB_ATTR_SRQ_RESIZE_HANDLE,
					    UVERBS_OBJECT_SRQ,
					    UVERBS_ACCESS_WRITE, UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(VHCA_IB_ATTR_SRQ_RESIZE_MAX_WR,
					       UVERBS_ATTR_TYPE(u32),
					       UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(VHCA_IB_ATTR_SRQ_RESIZE_RESP,
						UVERBS_ATTR_STRUCT(struct vhca_create_srq_resp,
								   max_sge),
						UA_MANDATORY));

ADD_UVERBS_METHODS(vhca_srq_methods, UVERBS_OBJECT_SRQ,
		   &UVERBS_METHOD(VHCA_IB_METHOD_SRQ_RESIZE));

static int UVERBS_HANDLER(VHCA_IB_METHOD_CQ_EVENT)(struct uverbs_attr_bundle *attrs)
{
	struct ib_cq *ibcq =
		uverbs_attr_get_obj(attrs, VHCA_IB_ATTR_CQ_EVENT_HANDLE);
	u32 flags;
	int err;

	err = uverbs_get_flags32(&flags, attrs, VHCA_IB_ATTR_CQ_EVENT_FLAGS,
				 VHCA_CQ_EVENT_FAILED);
	if (err)
		return err;
	vhca_cq_user_event(to_vcq(ibcq), flags & VHCA_CQ_EVENT_FAILED);
	return 0;
}

DECLARE_UVERBS_NAMED_METHOD(VHCA_IB_METHOD_CQ_EVENT,
			    UVERBS_ATTR_IDR(VHCA_IB_ATTR_CQ_EVENT_HANDLE,
					    UVERBS_OBJECT_CQ,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_FLAGS_IN(VHCA_IB_ATTR_CQ_EVENT_FLAGS,
						 u32, UA_OPTIONAL));

ADD_UVERBS_METHODS(vhca_cq_methods, UVERBS_OBJECT_CQ,
		   &UVERBS_METHOD(VHCA_IB_METHOD_CQ_EVENT));

/* vhca's own uverbs methods, chained onto the core's objects. */
const struct uapi_definition vhca_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_SRQ, &vhca_srq_methods),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_CQ, &vhca_cq_methods),
	{},
};

const struct ib_device_ops vhca_verbs_ops = {
	.alloc_pd = vhca_alloc_pd,
	.alloc_xrcd = vhca_alloc_xrcd,
	.create_ah = vhca_create_ah,
	.create_cq = vhca_create_cq,
	.create_srq = vhca_create_srq,
	.dealloc_pd = vhca_dealloc_pd,
	.destroy_ah = vhca_destroy_ah,
	.destroy_cq = vhca_destroy_cq,
	.dealloc_xrcd = vhca_dealloc_xrcd,
	.destroy_srq = vhca_destroy_srq,
	.fill_res_cq_entry = vhca_fill_res_cq_entry,
	.fill_res_mr_entry = vhca_fill_res_mr_entry,
	.fill_res_qp_entry = vhca_fill_res_qp_entry,
#ifdef VHCA_HAVE_FILL_RES_SRQ_ENTRY
	.fill_res_srq_entry = vhca_fill_res_srq_entry,
#endif
	.mmap = vhca_mmap,
	.mmap_free = vhca_mmap_free,
	.modify_srq = vhca_modify_srq,
	.query_srq = vhca_query_srq,
	.req_notify_cq = vhca_req_notify_cq,
	.VHCA_OP_RESIZE_CQ = vhca_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, vhca_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, vhca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, vhca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_srq, vhca_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, vhca_xrcd, ibxrcd),
};
