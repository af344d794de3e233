// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libvhca: the rdma-core provider for vhca devices.
 *
 * It matches devices by their sysfs hca_type, opens a context and provides
 * the verbs vhca implements.  Verbs it leaves out keep libibverbs' dummy
 * operations, which fail with EOPNOTSUPP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"

struct vhca_device {
	struct verbs_device vdev;
};


/* The kernel's get_context answer: core part, then vhca's. */
struct vhca_get_context_resp {
	struct ib_uverbs_get_context_resp_hdr {
		__u32 async_fd;
		__u32 num_comp_vectors;
	} core;
	struct vhca_alloc_ucontext_resp drv;
};

struct vhca_alloc_pd_resp_full {
	__u32 pd_handle;
	struct vhca_alloc_pd_resp drv;
};

static int vhca_query_device_ex(struct ibv_context *context,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size,
				       &resp, &resp_size);
	if (ret)
		return ret;
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32),
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int vhca_query_port(struct ibv_context *context, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct vhca_cmd_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *vhca_alloc_pd(struct ibv_context *context)
{
	struct vhca_alloc_pd_resp_full resp = {};
	struct vhca_cmd_alloc_pd cmd;
	struct vhca_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_pd(context, &pd->ibpd, &cmd, sizeof(cmd),
			       (struct ib_uverbs_alloc_pd_resp *)&resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->pdn = resp.drv.pdn;
	return &pd->ibpd;
}

static int vhca_dealloc_pd(struct ibv_pd *ibpd)
{
	struct vhca_pd *pd = container_of(ibpd, struct vhca_pd, ibpd);
	int ret;

	if (pd->parent_of) {
		__atomic_fetch_sub(&pd->parent_of->parents, 1, __ATOMIC_RELAXED);
		free(pd);
		return 0;
	}
	if (__atomic_load_n(&pd->parents, __ATOMIC_RELAXED))
		return EBUSY;
	ret = ibv_cmd_dealloc_pd(ibpd);
	if (!ret)
		free(pd);
	return ret;
}

/*
 * ibv_alloc_parent_domain(3): a PD of @context's, with allocators and a
 * context that are kept but never called (struct vhca_pd); no thread
 * domain, as vhca has none.
 */
static struct ibv_pd *
vhca_alloc_parent_domain(struct ibv_context *context,
			 struct ibv_parent_domain_init_attr *attr)
{
	struct vhca_pd *pd, *parent;

	if (attr->td) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
					  IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT) ||
	    !attr->pd || attr->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	parent = container_of(attr->pd, struct vhca_pd, ibpd);
	if (parent->parent_of) {
		errno = EINVAL;	/* a parent domain wraps a PD, not another */
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibpd.context = context;
	pd->ibpd.handle = parent->ibpd.handle;
	pd->pdn = parent->pdn;
	pd->parent_of = parent;
	__atomic_fetch_add(&parent->parents, 1, __ATOMIC_RELAXED);
	return &pd->ibpd;
}

/*
 * ibv_open_xrcd(3).  A domain is the kernel's, shared between processes
 * through the inode of the file given if any; the driver has nothing to say.
 */
static struct ibv_xrcd *vhca_open_xrcd(struct ibv_context *context,
				       struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct vhca_cmd_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd) {
		errno = ENOMEM;
		return NULL;
	}
	/* all of it, or libibverbs keeps no handle */
	ret = ibv_cmd_open_xrcd(context, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

static int vhca_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int ret = ibv_cmd_close_xrcd(xrcd);

	if (!ret)
		free(xrcd);
	return ret;
}

static struct ibv_mr *vhca_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				  uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct vhca_cmd_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int vhca_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

/*
 * ibv_rereg_mr(3).  The kernel may answer with new keys (a new
 * translation); ibv_cmd_rereg_mr() stores them in the MR.
 */
static int vhca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			 void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct vhca_cmd_rereg_mr cmd;
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		errno = ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	return 0;
}

/* Windows live in the kernel: binding one is a WQE (vhca_bind_mw()). */
static struct ibv_mw *vhca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct vhca_cmd_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int vhca_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (!ret)
		free(mw);
	return ret;
}

static void vhca_free_context(struct ibv_context *ibctx)
{
	struct vhca_context *ctx =
		container_of(ibctx, struct vhca_context, vctx.context);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops vhca_ctx_ops = {
	/* prefetching ODP MRs is the kernel's: nothing here to do first */
	.advise_mr = ibv_cmd_advise_mr,
	.alloc_mw = vhca_alloc_mw,
	.alloc_parent_domain = vhca_alloc_parent_domain,
	.alloc_pd = vhca_alloc_pd,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = vhca_bind_mw,
	.close_xrcd = vhca_close_xrcd,
	.create_ah = vhca_create_ah,
	.create_cq = vhca_create_cq,
	.create_cq_ex = vhca_create_cq_ex,
	.create_qp = vhca_create_qp,
	.create_qp_ex = vhca_create_qp_ex,
	.create_srq = vhca_create_srq,
	.create_srq_ex = vhca_create_srq_ex,
	.dealloc_mw = vhca_dealloc_mw,
	.dealloc_pd = vhca_dealloc_pd,
	.dereg_mr = vhca_dereg_mr,
	.destroy_ah = vhca_destroy_ah,
	.destroy_cq = vhca_destroy_cq,
	.destroy_qp = vhca_destroy_qp,
	.destroy_srq = vhca_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = vhca_free_context,
	.get_srq_num = vhca_get_srq_num,
	.modify_qp = vhca_modify_qp,
	.modify_srq = vhca_modify_srq,
	.open_qp = vhca_open_qp,
	.open_xrcd = vhca_open_xrcd,
	.poll_cq = vhca_poll_cq,
	.post_recv = vhca_post_recv,
	.post_send = vhca_post_send,
	.post_srq_ops = vhca_post_srq_ops,
	.post_srq_recv = vhca_post_srq_recv,
	.query_device_ex = vhca_query_device_ex,
	.query_port = vhca_query_port,
	.query_qp = vhca_query_qp,
	.query_rt_values = vhca_query_rt_values,
	.query_srq = vhca_query_srq,
	.reg_mr = vhca_reg_mr,
	.rereg_mr = vhca_rereg_mr,
	.req_notify_cq = vhca_req_notify_cq,
	.resize_cq = vhca_resize_cq,
};

static struct verbs_context *vhca_alloc_context(struct ibv_device *ibdev,
						int cmd_fd, void *private_data)
{
	struct vhca_get_context_resp resp = {};
	struct vhca_cmd_get_context cmd;
	const struct ibv_query_device_ex_input din = {};
	struct ibv_device_attr_ex dattr;
	struct vhca_context *ctx;
	int ret;

	(void)private_data;
	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
			(struct verbs_context *)offsetof(struct vhca_context, vctx),
			0 /* RDMA_DRIVER_UNKNOWN: vhca has no id */);
	if (!ctx)
		return NULL;

	ret = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd),
				  (struct ib_uverbs_get_context_resp *)&resp,
				  sizeof(resp));
	if (ret)
		goto err;
	/* A kernel with another ring header would corrupt every queue. */
	if (resp.drv.ring_hdr_size != VHCA_RING_HDR_SIZE) {
		ret = EPROTO;
		goto err;
	}
	ctx->max_sge = resp.drv.max_sge;
	ctx->ring_ctrl = resp.drv.caps & VHCA_CAP_RING_CTRL;
	ctx->cqe_ts = resp.drv.caps & VHCA_CAP_CQE_TS;
	ret = vhca_query_device_ex(&ctx->vctx.context, &din, &dattr,
				   sizeof(dattr));
	if (ret)
		goto err;
	ctx->atomic_write = dattr.device_cap_flags_ex &
			    VHCA_UVERBS_DEVICE_ATOMIC_WRITE;
	ctx->flush = dattr.device_cap_flags_ex & VHCA_UVERBS_DEVICE_FLUSH_GLOBAL;
	verbs_set_ops(&ctx->vctx, &vhca_ctx_ops);
	return &ctx->vctx;

err:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static bool vhca_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char buf[32];
	int len;

	len = ibv_read_ibdev_sysfs_file(buf, sizeof(buf), sysfs_dev,
					"hca_type");
	if (len <= 0)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	return strcmp(buf, VHCA_HCA_TYPE) == 0;
}

static struct verbs_device *vhca_device_alloc(struct verbs_sysfs_dev *sysfs)
{
	struct vhca_device *dev = calloc(1, sizeof(*dev));

	(void)sysfs;
	return dev ? &dev->vdev : NULL;
}

static void vhca_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct vhca_device, vdev));
}

/*
 * No entry can match a vhca device (see vhca_match_device), but the table
 * must exist: when a device with a driver id (rxe, mlx5, ...) is matched,
 * libibverbs 44 walks every provider's table without checking for NULL.
 */
static const struct verbs_match_ent vhca_match_table[] = {
	{}
};

static const struct verbs_device_ops vhca_dev_ops = {
	.name = "vhca",
	.match_min_abi_version = VHCA_UVERBS_ABI_VERSION,
	.match_max_abi_version = VHCA_UVERBS_ABI_VERSION,
	.match_table = vhca_match_table,
	.match_device = vhca_match_device,
	.alloc_device = vhca_device_alloc,
	.uninit_device = vhca_uninit_device,
	.alloc_context = vhca_alloc_context,
};

static void __attribute__((constructor)) vhca_register(void)
{
	verbs_register_driver_34(&vhca_dev_ops);
}
