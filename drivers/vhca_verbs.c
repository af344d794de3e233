// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Verbs objects.  Protection domains exist; queue pairs, completion queues
 * and memory regions arrive with their rings, and until then their verbs
 * answer -EOPNOTSUPP so that callers (libibverbs, pyverbs, the MAD layer)
 * see "not supported" rather than a failure of something that exists.
 */
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

static int vhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			  struct uverbs_attr_bundle *attrs)
{
	return -EOPNOTSUPP;
}

static int vhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	return 0;
}

static int vhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	return -EOPNOTSUPP;
}

static int vhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	return -EOPNOTSUPP;
}

static int vhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			  struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int vhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int vhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	return 0;
}

static int vhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
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

static struct ib_mr *vhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				      u64 iova, int access,
				      struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int vhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	return 0;
}

const struct ib_device_ops vhca_verbs_ops = {
	.alloc_pd = vhca_alloc_pd,
	.create_cq = vhca_create_cq,
	.create_qp = vhca_create_qp,
	.dealloc_pd = vhca_dealloc_pd,
	.dereg_mr = vhca_dereg_mr,
	.destroy_cq = vhca_destroy_cq,
	.destroy_qp = vhca_destroy_qp,
	.get_dma_mr = vhca_get_dma_mr,
	.modify_qp = vhca_modify_qp,
	.poll_cq = vhca_poll_cq,
	.post_recv = vhca_post_recv,
	.post_send = vhca_post_send,
	.reg_user_mr = vhca_reg_user_mr,
	.req_notify_cq = vhca_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, vhca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, vhca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, vhca_qp, ibqp),
};
