// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue pairs: RC, UC and UD, and for the kernel's MAD layer the GSI QP
 * (QPN 1), each with a send ring and a receive ring (or an SRQ), and the
 * IB state machine of modify_qp.
 */
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "vhca_tm.h"
#include "vhca_wire.h"

/* Attributes vhca has no use for: no alternate path, no SQD notification. */
#define VHCA_QP_UNSUPPORTED (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | \
			     IB_QP_EN_SQD_ASYNC_NOTIFY)

#define VHCA_QP_ACCESS (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			IB_ACCESS_REMOTE_ATOMIC)

static void vhca_qp_free_rings(struct vhca_qp *qp)
{
	vhca_uring_destroy(&qp->sq);
	if (qp->rq.hdr)
		vhca_uring_destroy(&qp->rq);
}

/*
 * QPN 1 for the GSI QP, the others from 2 on, cyclically (as rxe hands
 * them out): a destroyed QP's number comes back only after every other
 * one has been used, so a stale peer's packet or a late completion does
 * not find a new QP under it.  User processes together leave
 * VHCA_KERNEL_QPS of them to the kernel.  Reserved only, so that no
 * packet or peer finds the QP before it is whole.  A QP that then fails
 * to be created is freed by the core at once, with no grace period for a
 * reader that found it.
 */
static int vhca_qpn_alloc(struct vhca_dev *vdev, struct vhca_qp *qp,
			  enum ib_qp_type type, u32 *qpn)
{
	int err;

	if (qp->user &&
	    atomic_inc_return(&vdev->nr_user_qps) > VHCA_MAX_QP - VHCA_KERNEL_QPS) {
		atomic_dec(&vdev->nr_user_qps);
		return -ENOMEM;
	}
	if (type == IB_QPT_GSI) {
		*qpn = 1;
		err = xa_insert(&vdev->qp_xa, 1, NULL, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic(&vdev->qp_xa, qpn, NULL,
				      XA_LIMIT(VHCA_FIRST_QPN,
					       VHCA_FIRST_QPN + VHCA_MAX_QP - 1),
				      &vdev->qp_next, GFP_KERNEL);
	}
	if (err > 0)
		err = 0;	/* the cursor wrapped */
	if (err && qp->user)
		atomic_dec(&vdev->nr_user_qps);
	return err == -EBUSY ? -ENOMEM : err;
}

static void vhca_qpn_free(struct vhca_dev *vdev, struct vhca_qp *qp)
{
	xa_erase(&vdev->qp_xa, qp->ibqp.qp_num);
	if (qp->user)
		atomic_dec(&vdev->nr_user_qps);
}

/* The engine's scratch, the responder's and the RC requester's state. */
static void vhca_qp_free_bufs(struct vhca_qp *qp)
{
	dst_cache_destroy(&qp->dst_cache);	/* never set up is fine */
	vhca_req_destroy(qp);
	kfree(qp->resp.rd);
	kfree(qp->resp.atomic);
	kfree(qp->resp.seg);
	kfree(qp->resp.wqe);
	kfree(qp->seg);
	kfree(qp->wqe);
}

/*
 * A new QP's scratch for the WQEs it runs, and for UC and RC its
 * responder's on the wire; RC's requester too, charged to the creator's
 * memory cgroup as its rings are.  What it got before failing is for
 * vhca_qp_free_bufs().  Returns 0 or -ENOMEM.
 */
static int vhca_qp_alloc_bufs(struct vhca_qp *qp, enum ib_qp_type type,
			      const struct vhca_qgeom *sg)
{
	qp->wqe = kmalloc((1U << sg->log2_stride) + VHCA_MAX_RWQE_STRIDE,
			  GFP_KERNEL_ACCOUNT);
	qp->seg = kmalloc_array(2 * VHCA_MAX_SGE, sizeof(*qp->seg),
				GFP_KERNEL_ACCOUNT);
	if (!qp->wqe || !qp->seg)
		return -ENOMEM;
	qp->rwqe = qp->wqe + (1U << sg->log2_stride);
	spin_lock_init(&qp->resp.lock);
	qp->resp.cnp_next = jiffies;
	INIT_LIST_HEAD(&qp->resp.held);
	/* the receiver of messages from the wire, and of UD's from here */
	qp->resp.wqe = kmalloc(VHCA_MAX_RWQE_STRIDE, GFP_KERNEL_ACCOUNT);
	qp->resp.seg = kmalloc_array(VHCA_MAX_SGE, sizeof(*qp->resp.seg),
				     GFP_KERNEL_ACCOUNT);
	if (!qp->resp.wqe || !qp->resp.seg)
		return -ENOMEM;
	if (type != IB_QPT_UD && type != IB_QPT_GSI &&
	    dst_cache_init(&qp->dst_cache, GFP_KERNEL_ACCOUNT))
		return -ENOMEM;
	if (!vhca_qpt_rc(type))
		return 0;
	qp->resp.atomic = kcalloc(VHCA_RESP_ATOMIC_RES, sizeof(*qp->resp.atomic),
				  GFP_KERNEL_ACCOUNT);
	qp->resp.rd = kmalloc_array(VHCA_RD_QUEUE, sizeof(*qp->resp.rd),
				    GFP_KERNEL_ACCOUNT);
	if (!qp->resp.atomic || !qp->resp.rd)
		return -ENOMEM;
	return vhca_req_init(qp);
}

/* Tell the provider where a user QP's rings are and what they hold. */
static int vhca_qp_copy_resp(struct vhca_qp *qp, struct ib_udata *udata,
			     const struct vhca_qgeom *sg,
			     const struct vhca_qgeom *rg, u32 inline_cap)
{
	struct vhca_create_qp_resp resp = {};	/* no byte left unset */

	resp.sq_mmap_key = vhca_uring_key(&qp->sq);
	resp.sq_mmap_size = qp->sq.bytes;
	resp.sq_log2_slots = sg->log2_slots;
	resp.sq_log2_stride = sg->log2_stride;
	resp.max_inline = inline_cap;
	resp.max_send_sge = sg->max_sge;
	resp.max_recv_sge = rg->max_sge;
	if (qp->rq.hdr) {
		resp.rq_mmap_key = vhca_uring_key(&qp->rq);
		resp.rq_mmap_size = qp->rq.bytes;
		resp.rq_log2_slots = rg->log2_slots;
		resp.rq_log2_stride = rg->log2_stride;
	}
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

/**
 * vhca_create_qp() - create an RC, UC, UD or (kernel) GSI QP
 * @ibqp: the QP the core allocated
 * @init: what was asked; cap is updated with what was created
 * @udata: the provider's request and response; NULL for a kernel QP
 *
 * Return: 0 or a negative errno.
 */
static int vhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			  struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibqp->device);
	struct vhca_qp *qp = to_vqp(ibqp);
	struct vhca_qgeom sg, rg = {};
	struct ib_ucontext *uctx;
	u32 qpn, inline_cap;
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_XRC_INI:
		break;
	case IB_QPT_XRC_TGT:
		/*
		 * The core makes it for a user with no udata: a kernel QP
		 * of the XRC domain, whose receives come from the XRC SRQ
		 * each message names.  It posts nothing: its rings are the
		 * smallest there are, and empty.
		 */
		init->cap = (struct ib_qp_cap){ .max_send_wr = 1,
						.max_send_sge = 1 };
		init->srq = NULL;
		break;
	case IB_QPT_GSI:
		if (!udata)
			break;
		fallthrough;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	/* tag matching is RC's (tm_caps.flags: IBV_TM_CAP_RC) */
	if (init->srq && init->srq->srq_type == IB_SRQT_TM &&
	    init->qp_type != IB_QPT_RC)
		return -EOPNOTSUPP;
	err = vhca_udata_begin(udata, sizeof(struct vhca_create_qp_resp), &uctx);
	if (err)
		return err;

	err = vhca_sq_geometry(init->cap.max_send_wr, init->cap.max_send_sge,
			       init->cap.max_inline_data, VHCA_MAX_QP_WR, &sg,
			       &inline_cap);
	if (err)
		return err;
	/* XRC QPs receive into the XRC SRQ a message names, never an RQ */
	if (!init->srq && !vhca_qpt_xrc(init->qp_type)) {
		/* a send-only QP still gets one receive slot */
		err = vhca_rq_geometry(max(init->cap.max_recv_wr, 1U),
				       init->cap.max_recv_sge, VHCA_MAX_QP_WR,
				       &rg);
		if (err)
			return err;
	}

	qp->user = !!udata;
	err = vhca_qpn_alloc(vdev, qp, init->qp_type, &qpn);
	if (err)
		return err;
	ibqp->qp_num = qpn;
	qp->uid = atomic64_inc_return(&vdev->qp_uid);

	err = vhca_uring_create(&qp->sq, uctx, &sg);
	if (err)
		goto err_qpn;
	if (rg.log2_stride) {
		err = vhca_uring_create(&qp->rq, uctx, &rg);
		if (err)
			goto err_sq;
	}
	err = vhca_qp_alloc_bufs(qp, init->qp_type, &sg);
	if (err)
		goto err_buf;
	mutex_init(&qp->lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->sq_post_lock);
	spin_lock_init(&qp->rq_post_lock);
	INIT_DELAYED_WORK(&qp->sq_work, vhca_sq_work);
	INIT_WORK(&qp->rd_work, vhca_resp_rd_work);
	INIT_WORK(&qp->resp.fault_work, vhca_resp_fault_work);
	INIT_WORK(&qp->resp.held_work, vhca_held_work);
	qp->rd_cpu = -1;
	qp->state = IB_QPS_RESET;
	qp->dst_dev = U32_MAX;
	qp->max_inline = inline_cap;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;

	init->cap.max_send_wr = sg.max_wr;
	init->cap.max_send_sge = sg.max_sge;
	init->cap.max_inline_data = inline_cap;
	init->cap.max_recv_wr = rg.max_wr;
	init->cap.max_recv_sge = rg.max_sge;
	if (udata) {
		err = vhca_qp_copy_resp(qp, udata, &sg, &rg, inline_cap);
		if (err)
			goto err_rings;
	}
	/* the slot is reserved: storing into it allocates nothing */
	xa_store(&vdev->qp_xa, qpn, qp, GFP_KERNEL);
	return 0;

err_rings:
	mutex_destroy(&qp->lock);
err_buf:
	vhca_qp_free_bufs(qp);
	if (qp->rq.hdr)
		vhca_uring_destroy(&qp->rq);
err_sq:
	vhca_uring_destroy(&qp->sq);
err_qpn:
	vhca_qpn_free(vdev, qp);
	return err;
}

/*
 * RESET empties the rings.  The engine's side of the send ring is ours
 * (qp->lock); a peer's engine may be taking a receive WQE right now
 * (rq_lock); a kernel QP's producers belong to its posters (the post
 * locks), a user QP's to its process, which restarts them itself.
 */
static void vhca_qp_reset_rings(struct vhca_qp *qp)
{
	bool kernel = !qp->ibqp.uobject;

	vhca_exec_abort(qp);
	vhca_tm_rndv_abort(qp);
	WRITE_ONCE(qp->err_pending, false);
	if (qp->rnr_wait)
		vhca_qp_kick_now(qp);	/* its work finds RESET and lets go */
	spin_lock_bh(&qp->resp.lock);
	qp->resp.have_wqe = false;	/* its ring is reset below */
	vhca_held_purge(qp);
	qp->resp.active = false;
	qp->resp.closed = false;
	qp->resp.fault_failed = false;
	qp->resp.faults = 0;
	vhca_resp_rd_forget(&qp->resp);
	spin_unlock_bh(&qp->resp.lock);
	spin_lock_irq(&qp->sq_post_lock);
	qp->sq_cons = 0;
	qp->wire_pkt = 0;
	WRITE_ONCE(qp->sq.hdr->consumer, 0);
	WRITE_ONCE(qp->sq.hdr->ctrl, 0);
	if (kernel)
		WRITE_ONCE(qp->sq.hdr->producer, 0);
	spin_unlock_irq(&qp->sq_post_lock);
	if (qp->req.fl)
		vhca_req_reset(qp);

	spin_lock_irq(&qp->rq_post_lock);
	spin_lock(&qp->rq_lock);
	qp->rq_cons = 0;
	if (qp->rq.hdr) {
		WRITE_ONCE(qp->rq.hdr->consumer, 0);
		WRITE_ONCE(qp->rq.hdr->ctrl, 0);
		if (kernel)
			WRITE_ONCE(qp->rq.hdr->producer, 0);
	}
	spin_unlock(&qp->rq_lock);
	spin_unlock_irq(&qp->rq_post_lock);
}

/*
 * Whether nothing of the send queue is under way: no WQE on the wire
 * waiting for its ACK, no UC message half sent, no local WQE half moved.
 * Caller holds qp->lock.
 */
static bool vhca_qp_sq_drained(const struct vhca_qp *qp)
{
	return !qp->exec.off && !qp->wire_pkt &&
	       !(qp->req.fl && qp->req.next != qp->req.cons);
}

/* Checks ib_modify_qp_is_ok() leaves to the device. */
static int vhca_qp_check_attr(struct vhca_qp *qp, struct ib_qp_attr *attr,
			      int mask, enum ib_qp_state cur)
{
	struct vhca_av av;

	if (mask & VHCA_QP_UNSUPPORTED)
		return -EOPNOTSUPP;
	/*
	 * A path changes in SQD once the send queue has drained, as IBA's
	 * SQ Drained event says it may: a WQE under way would go on by the
	 * other path (local and wire state mixed, a peer's receive taken
	 * and never completed).
	 */
	if ((mask & (IB_QP_AV | IB_QP_PATH_MTU)) && cur == IB_QPS_SQD &&
	    !vhca_qp_sq_drained(qp))
		return -EBUSY;
	if ((mask & IB_QP_PORT) && attr->port_num != VHCA_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > VHCA_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > VHCA_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > 0xffffff)
		return -EINVAL;
	/*
	 * ON_DEMAND is an MR's, but rdma-core's ODP tests give a QP the
	 * access flags of their MRs, as mlx5 and rxe let them: ignored.
	 */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(VHCA_QP_ACCESS | IB_ACCESS_LOCAL_WRITE |
					VHCA_ACCESS_FLUSH |
					IB_ACCESS_ON_DEMAND)))
		return -EINVAL;
	if ((mask & IB_QP_AV) &&
	    (rdma_ah_get_port_num(&attr->ah_attr) != VHCA_PORT ||
	     vhca_av_from_ah(&attr->ah_attr, &av)))
		return -EINVAL;	/* RoCE needs a GRH and a source GID */
	return 0;
}

/*
 * The vhca device of this host whose GID the AV names, as an ib_device
 * index (the engine finds it again under RCU), or U32_MAX for none.
 */
static u32 vhca_av_dst_dev(struct vhca_qp *qp, struct rdma_ah_attr *ah)
{
	struct vhca_dev *dst;
	u32 index = U32_MAX;

	rcu_read_lock();
	dst = vhca_dev_by_gid(to_vdev(qp->ibqp.device),
			      &rdma_ah_read_grh(ah)->dgid,
			      vhca_gid_net(rdma_ah_read_grh(ah)->sgid_attr));
	if (dst)
		index = dst->ibdev.index;
	rcu_read_unlock();
	return index;
}

static void vhca_qp_store_attr(struct vhca_qp *qp, struct ib_qp_attr *attr,
			       int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		rdma_replace_ah_attr(&a->ah_attr, &attr->ah_attr);
		WRITE_ONCE(qp->dst_dev, vhca_av_dst_dev(qp, &attr->ah_attr));
		/* checked by vhca_qp_check_attr() */
		spin_lock_bh(&qp->resp.lock);
		vhca_av_from_ah(&attr->ah_attr, &qp->av);
		qp->sgid = attr->ah_attr.grh.sgid_attr->gid;
		/* nothing sends meanwhile: RTR is not RTS, RESET drops packets */
		dst_cache_reset(&qp->dst_cache);
		spin_unlock_bh(&qp->resp.lock);
	}
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT) {
		a->retry_cnt = attr->retry_cnt;
		qp->req.retry_left = attr->retry_cnt;
	}
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN) {
		a->rq_psn = attr->rq_psn & 0xffffff;
		spin_lock_bh(&qp->resp.lock);
		qp->resp.epsn = a->rq_psn;
		qp->resp.msn = 0;
		qp->resp.nak_sent = false;
		qp->resp.answered = false;
		qp->resp.active = false;
		vhca_resp_rd_forget(&qp->resp);	/* their PSNs mean nothing now */
		if (qp->resp.atomic)
			memset(qp->resp.atomic, 0, VHCA_RESP_ATOMIC_RES *
			       sizeof(*qp->resp.atomic));
		spin_unlock_bh(&qp->resp.lock);
	}
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
}

/**
 * vhca_modify_qp() - move a QP through the IB state machine
 * @ibqp: the QP
 * @attr: the new attributes
 * @mask: which of them are given
 * @udata: the provider's request (vhca defines none)
 *
 * The transition and the attributes it requires or allows are checked by
 * ib_modify_qp_is_ok(); the values by vhca_qp_check_attr().  Moving to
 * RESET forgets the rings' contents: the kernel's side of each ring
 * restarts at 0, and the provider restarts its own.
 *
 * Return: 0 or a negative errno; nothing changes on failure.
 */
static int vhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_udata *udata)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	enum ib_qp_state cur, next;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (udata) {
		err = vhca_check_udata_in(udata);
		if (err)
			return err;
	}

	mutex_lock(&qp->lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out;
	}
	err = vhca_qp_check_attr(qp, attr, mask, cur);
	if (err)
		goto out;

	vhca_qp_store_attr(qp, attr, mask);
	if (next == IB_QPS_RESET && qp->state != IB_QPS_RESET)
		vhca_qp_reset_rings(qp);
	if (next == IB_QPS_ERR)
		vhca_qp_set_error(qp);
	if (next == IB_QPS_RTS && qp->state != IB_QPS_RTS) {
		qp->rnr_left = qp->attr.rnr_retry;
		vhca_qp_kick(qp);	/* sends posted before RTS run now */
	}
	WRITE_ONCE(qp->state, next);
out:
	mutex_unlock(&qp->lock);
	return err;
}

static int vhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			 int mask, struct ib_qp_init_attr *init)
{
	struct vhca_qp *qp = to_vqp(ibqp);

	mutex_lock(&qp->lock);
	*attr = qp->attr;	/* the ah_attr is lent, as the core expects */
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	mutex_unlock(&qp->lock);

	attr->cap.max_send_wr = qp->sq.g.max_wr;
	attr->cap.max_send_sge = qp->sq.g.max_sge;
	attr->cap.max_inline_data = qp->max_inline;
	attr->cap.max_recv_wr = qp->rq.hdr ? qp->rq.g.max_wr : 0;
	attr->cap.max_recv_sge = qp->rq.hdr ? qp->rq.g.max_sge : 0;

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/*
 * Once the QP is off the xarray and a grace period has passed, no engine
 * (of this QP or of a peer sending to it) can be looking at it.
 */
static int vhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct vhca_qp *qp = to_vqp(ibqp);

	vhca_mcast_qp_gone(qp);
	vhca_qpn_free(to_vdev(ibqp->device), qp);
	synchronize_rcu();
	vhca_resp_fault_drain(qp);
	vhca_held_drain(qp);
	if (qp->resp.rd)
		vhca_resp_rd_drain(qp);
	if (qp->ibqp.qp_type == IB_QPT_UC)
		vhca_net_drain(qp);
	/* a tag whose rendezvous it was to read; the work may be kicked */
	mutex_lock(&qp->lock);
	vhca_tm_jobs_reset(qp);
	mutex_unlock(&qp->lock);
	if (qp->req.fl)
		timer_shutdown_sync(&qp->req.timer);	/* it kicks the work */
	cancel_delayed_work_sync(&qp->sq_work);
	mutex_lock(&qp->lock);
	vhca_exec_abort(qp);	/* a peer's receive taken by a WQE half done */
	vhca_tm_rndv_abort(qp);	/* and a tag a rendezvous of its took */
	mutex_unlock(&qp->lock);
	vhca_qp_free_rings(qp);
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	vhca_qp_free_bufs(qp);
	mutex_destroy(&qp->lock);
	return 0;
}

const struct ib_device_ops vhca_qp_ops = {
	.create_qp = vhca_create_qp,
	.destroy_qp = vhca_destroy_qp,
	.modify_qp = vhca_modify_qp,
	.query_qp = vhca_query_qp,

	INIT_RDMA_OBJ_SIZE(ib_qp, vhca_qp, ibqp),
};
