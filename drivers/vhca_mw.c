// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Memory windows: rkeys for part of a user MR that its owner grants and
 * revokes through its send queue, without a system call.
 *
 * A window is an entry of the key table like an MR (a struct vhca_mr of
 * type VHCA_MR_MW), so the responder and the local engine find either by
 * rkey (vhca_mr_find_remote()) and copy through it under the same rules.
 * Type 1 windows are bound by ibv_bind_mw() and type 2 windows by
 * IBV_WR_BIND_MW; the provider posts both as a BIND_MW WQE, which the
 * engine runs in order with the QP's other WQEs (vhca_mw_bind()).  A type
 * 2 window belongs to the QP that bound it and is invalidated by a
 * LOCAL_INV or by a SEND_WITH_INV arriving on that QP; a type 1 window
 * only by binding it again, with a length of zero to unbind it.
 */
#include <rdma/ib_verbs.h>

#include "vhca.h"

/*
 * What a window can grant.  LOCAL_WRITE means nothing for a key that is
 * only ever an rkey, and is accepted because binders pass their MR's
 * flags; ZERO_BASED windows are not offered.
 */
#define VHCA_MW_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

/* Let go of @win's MR; caller holds win->lock and took the key away. */
static void vhca_mw_unbind(struct vhca_mr *win)
{
	if (!win->length)
		return;		/* never bound, or bound with length 0 */
	atomic_dec(&win->parent->nr_mw);
	WRITE_ONCE(win->length, 0);
}

/*
 * The user MR a bind names, if a window of @access may be bound over
 * [addr, addr + len) of it from a QP of @pd.  Caller holds
 * rcu_read_lock().
 */
static struct vhca_mr *vhca_mw_target(struct vhca_dev *vdev, struct ib_pd *pd,
				      u32 lkey, u64 addr, u64 len, int access)
{
	struct vhca_mr *mr = xa_load(&vdev->mr_xa, lkey >> 8);
	int mr_access;

	if (!mr || mr->type != VHCA_MR_USER || READ_ONCE(mr->key) != lkey ||
	    READ_ONCE(mr->pd) != pd)
		return NULL;
	mr_access = READ_ONCE(mr->access);
	if (!(mr_access & IB_ACCESS_MW_BIND))
		return NULL;
	/* a window others may write needs an MR its owner may write */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr_access & IB_ACCESS_LOCAL_WRITE))
		return NULL;
	if (addr + len < addr || addr < mr->iova ||
	    addr + len > mr->iova + mr->length)
		return NULL;
	return mr;
}

/**
 * vhca_mw_bind() - run a BIND_MW WQE
 * @vdev: the QP's device
 * @qp: the QP that posted it
 * @w: the WQE: ex is the window's new rkey, bind the rest
 *
 * The window and the MR must be in the QP's PD.  A type 2 window must be
 * free (o10-37.2.30) and is bound to @qp, to no QP that later has its
 * QPN; a type 1 window is bound again
 * over whatever it was bound to, and a length of 0 leaves it unbound
 * under its new key.  The window stops answering to its old key, and
 * copies through it end, before the new binding takes effect.  Nothing in
 * @w is trusted: it came from a ring the process writes.  Caller holds
 * rcu_read_lock().
 *
 * Return: IB_WC_SUCCESS or IB_WC_MW_BIND_ERR.
 */
int vhca_mw_bind(struct vhca_dev *vdev, struct vhca_qp *qp,
		 const struct vhca_swqe *w)
{
	struct vhca_mr *win = xa_load(&vdev->mr_xa, w->ex >> 8);
	struct ib_pd *pd = qp->ibqp.pd;
	u64 len = w->bind.length;
	struct vhca_mr *mr = NULL;
	int status = IB_WC_MW_BIND_ERR;
	u32 old;

	if (!win || win->type != VHCA_MR_MW || win->pd != pd ||
	    (w->bind.access & ~VHCA_MW_ACCESS))
		return IB_WC_MW_BIND_ERR;
	if (len) {
		mr = vhca_mw_target(vdev, pd, w->bind.mr_lkey, w->bind.addr,
				    len, w->bind.access);
		if (!mr)
			return IB_WC_MW_BIND_ERR;
	} else if (win->mw_type == IB_MW_TYPE_2) {
		return IB_WC_MW_BIND_ERR;	/* o10-37.2.40 */
	}

	spin_lock_bh(&win->lock);
	old = READ_ONCE(win->key);
	if (win->dead || (win->mw_type == IB_MW_TYPE_2 && old))
		goto out;
	/* an MR whose deregistration has begun takes no window */
	if (mr && !atomic_inc_unless_negative(&mr->nr_mw))
		goto out;
	if (old)
		vhca_mr_revoke(win, old);
	vhca_mw_unbind(win);
	if (mr) {
		WRITE_ONCE(win->parent, mr);
		WRITE_ONCE(win->iova, w->bind.addr);
		WRITE_ONCE(win->length, len);
		WRITE_ONCE(win->access, w->bind.access);
		WRITE_ONCE(win->qp_uid, qp->uid);
		/* Release: the binding is in place before its key works. */
		smp_store_release(&win->key, w->ex);
	}
	status = IB_WC_SUCCESS;
out:
	spin_unlock_bh(&win->lock);
	return status;
}

/**
 * vhca_mw_invalidate() - invalidate a type 2 window
 * @win: the window
 * @key: its key, as the LOCAL_INV or SEND_WITH_INV gave it
 * @remote: for a SEND_WITH_INV, the QP it arrived on; else NULL
 *
 * A type 1 window cannot be invalidated (o10-37.2.26), and a SEND_WITH_INV
 * invalidates only a window of the QP it arrives on.  The window is free
 * again, and its MR may be deregistered, once copies through it end.
 *
 * Return: true if @key was valid and is not any more.
 */
bool vhca_mw_invalidate(struct vhca_mr *win, u32 key,
			const struct vhca_qp *remote)
{
	bool done = false;

	if (win->mw_type != IB_MW_TYPE_2)
		return false;
	spin_lock_bh(&win->lock);
	if ((!remote || win->qp_uid == remote->uid) &&
	    vhca_mr_revoke(win, key)) {
		vhca_mw_unbind(win);
		done = true;
	}
	spin_unlock_bh(&win->lock);
	return done;
}

static int vhca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct vhca_mr *win;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	win = kzalloc(sizeof(*win), GFP_KERNEL_ACCOUNT);
	if (!win)
		return -ENOMEM;
	win->type = VHCA_MR_MW;
	win->mw_type = ibmw->type;
	win->pd = ibmw->pd;
	spin_lock_init(&win->lock);
	/* no key works until a bind gives it one */
	err = vhca_mr_key_alloc(to_vdev(ibmw->device), win, false);
	if (err) {
		kfree(win);
		return err;
	}
	ibmw->rkey = win->ibmr.rkey;
	to_vmw(ibmw)->win = win;
	return 0;
}

/**
 * vhca_mw_kill() - end a window that is being deallocated
 * @win: the window, gone from mr_xa already
 *
 * Its key goes, its MR is let go, and a bind that found the window before
 * it left mr_xa, and runs after this, binds nothing: it would take a hold
 * on the MR that no one would ever drop.
 */
void vhca_mw_kill(struct vhca_mr *win)
{
	spin_lock_bh(&win->lock);
	win->dead = true;
	vhca_mr_revoke(win, READ_ONCE(win->key));
	vhca_mw_unbind(win);
	spin_unlock_bh(&win->lock);
}

/*
 * The core frees the ib_mw when this returns; the engine may still be
 * looking at the window under RCU, so that is freed after a grace period.
 */
static int vhca_dealloc_mw(struct ib_mw *ibmw)
{
	struct vhca_mr *win = to_vmw(ibmw)->win;

	vhca_mr_key_free(to_vdev(ibmw->device), win);
	vhca_mw_kill(win);
	kfree_rcu(win, rcu);
	return 0;
}

const struct ib_device_ops vhca_mw_ops = {
	.alloc_mw = vhca_alloc_mw,
	.dealloc_mw = vhca_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, vhca_mw, ibmw),
};
