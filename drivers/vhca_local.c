// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The same-host path: a send WQE of an RC or UC QP whose peer is a QP of
 * a vhca device of this host (the AV's DGID names the device, the QPN the
 * QP) runs here, from the sender's ring into the receiver's memory with
 * no packet: SEND, SEND_WITH_IMM, RDMA WRITE and WRITE_WITH_IMM on RC and
 * UC; SEND_WITH_INV, RDMA READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD,
 * ATOMIC_WRITE and FLUSH on RC.  The engine (vhca_engine.c) calls it for
 * each such WQE; the building blocks are vhca_wqe.c's.
 *
 * Objects a WQE names (QPs, MRs) are looked up under RCU; their destroy
 * paths erase them from their xarray and wait for a grace period before
 * freeing anything.
 */
#include <linux/highmem.h>
#include <linux/rcupdate.h>
#include <rdma/ib_umem.h>

#include "vhca_tm.h"
#include "vhca_wire.h"

/*
 * The responder: a QP of the vhca device the AV's DGID belongs to (this
 * one or another of this host), of the same type (an XRC INI's is an XRC
 * TGT), ready to receive, and connected back to @qp, RC and UC alike: as
 * on the wire (vhca_net_on_path()), a connected QP takes messages from
 * its own peer only, and anyone else's are dropped and counted off path.
 * NULL if there is none: on a wire nobody would answer.  For an XRC INI,
 * the XRC SRQ @w names is made the one the TGT receives with
 * (peer->xsrq), or ERR_PTR(-EACCES) if its domain has none of that
 * number: refused, as an XRCETH naming no SRQ of the TGT's domain is.
 * Caller holds rcu_read_lock().
 */
static struct vhca_qp *vhca_peer(struct vhca_dev *vdev, struct vhca_qp *qp,
				 const struct vhca_swqe *w)
{
	struct vhca_qp *peer = vhca_qp_find(vdev, READ_ONCE(qp->dst_dev),
					    qp->attr.dest_qp_num);
	bool xrc = qp->ibqp.qp_type == IB_QPT_XRC_INI;
	enum ib_qp_state state;
	struct vhca_srq *srq;

	if (!peer || peer->ibqp.qp_type != (xrc ? IB_QPT_XRC_TGT :
					    qp->ibqp.qp_type))
		return NULL;
	state = READ_ONCE(peer->state);
	if (!vhca_qps_receives(state))
		return NULL;
	if (READ_ONCE(peer->attr.dest_qp_num) != qp->ibqp.qp_num ||
	    READ_ONCE(peer->dst_dev) != vdev->ibdev.index) {
		vhca_count_qp(peer, VHCA_CNT_RCVD_OFF_PATH);
		return NULL;
	}
	if (xrc) {
		/* its 24 bits, as an XRCETH carries them */
		srq = vhca_xsrq_find(peer, w->xrc_srqn & VHCA_XRCETH_SRQ_MASK,
				     0);
		if (!srq)
			return ERR_PTR(-EACCES);
		peer->xsrq = srq;
	}
	return peer;
}

/*
 * The remote buffer an RDMA or atomic WQE names: the peer must grant
 * @access on the QP and through the rkey over the whole range.
 */
static struct vhca_mr *vhca_remote(struct vhca_qp *peer, u32 rkey, u64 va,
				   u32 len, int access)
{
	int qp_access = access & ~VHCA_FIND_ODP;

	if ((READ_ONCE(peer->attr.qp_access_flags) & qp_access) != qp_access)
		return NULL;
	return vhca_mr_find_remote(to_vdev(peer->ibqp.device), rkey, peer,
				   access, va, len);
}

/*
 * Bytes of one WQE the local engine moves under one RCU read section.  A
 * WQE may move 2 GiB, and its SGEs may overlap: between chunks the engine
 * lets go of RCU and of the CPU, and looks every QP, key and SGE up again.
 */
#define VHCA_EXEC_CHUNK		SZ_1M
/*
 * Bytes of one WQE a run of the send ring moves, holding qp->lock: then
 * the WQE waits for the next run, in the engine's work.  So a doorbell
 * returns to its poster, and modify_qp or destroy_qp get the lock, after
 * this much of a 2 GiB WQE, not all of it.
 */
#define VHCA_EXEC_RUN		(4 * VHCA_EXEC_CHUNK)
#define VHCA_MORE		0x101	/* not a status: the WQE goes on */

/*
 * Where a SEND of @len bytes lands: the receive WQE taken for it
 * (qp->rwqe), whose SGEs go into @dseg and *@nd.  A message a tag took
 * (x->tm) lands behind its tag-matching header, which goes to x->tm.sink
 * out of the way; so does all of a rendezvous, whose data is read into
 * the tag's buffer later, if that buffer holds it.  If not, the
 * rendezvous is left to software and lands whole.  SEND_WITH_INV's rkey
 * goes before any byte is placed.  Returns false with *@status, the
 * requester's completion status, if the SEND cannot land: the receive
 * completed here, in error.  Caller holds rcu_read_lock().
 */
static bool vhca_exec_recv_sges(struct vhca_qp *qp, struct vhca_qp *peer,
				const struct vhca_swqe *w,
				struct vhca_seg *dseg, unsigned int *nd,
				s64 len, int *status)
{
	struct vhca_dev *pdev = to_vdev(peer->ibqp.device);
	bool rc = vhca_qpt_rc(qp->ibqp.qp_type);
	struct vhca_rwqe *rwqe = qp->rwqe;
	struct vhca_exec_state *x = &qp->exec;
	u32 sink = x->tm.kind == VHCA_TM_EAGER ? VHCA_TMH_LEN : 0;
	s64 room;

	if (sink)
		dseg[0] = (struct vhca_seg){ .kdst = x->tm.sink, .len = sink };
	*nd = 0;
	room = vhca_sges(pdev, rwqe->sge, rwqe->num_sge, vhca_qp_pd(peer),
			 IB_ACCESS_LOCAL_WRITE | VHCA_FIND_ODP, dseg + !!sink,
			 nd);
	*nd += !!sink;
	if (room >= 0)
		room += sink;
	if (x->tm.kind == VHCA_TM_RNDV && room >= 0) {
		if (room < x->tm.len) {
			x->tm.kind = VHCA_TM_RNDV_SW;
		} else {
			dseg[0] = (struct vhca_seg){ .kdst = x->tm.sink,
						     .len = len };
			*nd = 1;
			room = len;
		}
	}
	if (room < 0 || room < len) {
		x->took = false;	/* completed here */
		vhca_exec_recv_failed(qp, peer, room < 0 ? IB_WC_LOC_PROT_ERR :
							   IB_WC_LOC_LEN_ERR);
		/* UC never knows */
		*status = !rc ? IB_WC_SUCCESS :
			  room < 0 ? IB_WC_REM_OP_ERR : IB_WC_REM_INV_REQ_ERR;
		return false;
	}
	if (vhca_wr_is(w->opcode, VHCA_OPF_INV) && !x->off &&
	    !vhca_invalidate(pdev, peer, w->ex, true)) {
		vhca_exec_recv_failed(qp, peer, IB_WC_LOC_PROT_ERR);
		*status = IB_WC_REM_INV_REQ_ERR;
		return false;
	}
	return true;
}

/*
 * A SEND of @len bytes from @sseg to @peer's tag-matching SRQ: where it
 * lands, by its header (vhca_tm_take()), which is read first.  Returns as
 * vhca_tm_take() does, VHCA_FAULT to fault pages of the header in
 * (x->odp), or -EFAULT if our own key went.
 */
static int vhca_exec_tm_take(struct vhca_qp *qp, struct vhca_qp *peer,
			     struct vhca_exec_state *x,
			     const struct vhca_seg *sseg, unsigned int ns,
			     s64 len)
{
	u8 hdr[VHCA_TM_RNDV_HDR];
	struct vhca_seg h = { .kdst = hdr,
			      .len = min_t(s64, len, sizeof(hdr)) };
	struct vhca_fault f;
	int lost = 0;

	if (h.len)
		lost = vhca_copy_held(&h, 1, 0, sseg, ns, 0, h.len, &f);
	if (lost == VHCA_COPY_FAULT)
		return vhca_odp_miss(&x->odp, &f) ? VHCA_FAULT : -EFAULT;
	if (lost)
		return -EFAULT;
	return vhca_tm_take(peer, qp->ibqp.qp_num, hdr, h.len, len, qp->rwqe,
			    &x->tm);
}

/*
 * A rendezvous a tag took: @qp's engine reads it into the tag's buffer
 * once the SEND that carried it has completed (vhca_tm_rndv_run()).
 */
static void vhca_exec_tm_rndv(struct vhca_qp *qp, struct vhca_qp *peer,
			      const struct vhca_exec_state *x)
{
	struct vhca_tm_rndv *rv = &qp->rndv;

	rv->peer_qpn = peer->ibqp.qp_num;
	rv->peer_dev = peer->ibqp.device->index;
	rv->rx = x->tm;
	rv->wr_id = qp->rwqe->wr_id;
	rv->num_sge = qp->rwqe->num_sge;
	memcpy(rv->sge, qp->rwqe->sge, rv->num_sge * sizeof(*rv->sge));
	rv->off = 0;
	rv->odp = (struct vhca_odp_retry){};
	rv->fin = false;
}

/*
 * vhca_copy_held() of @n bytes at x->off of both sides, for a chunk.  A
 * missing ODP page is kept in x->odp, its MR held, for vhca_exec() to
 * fault in (VHCA_COPY_FAULT); unless its fault failed last time, when the
 * copy fails as if that side's key had gone.
 */
static int vhca_exec_copy(struct vhca_exec_state *x,
			  const struct vhca_seg *dseg, unsigned int nd,
			  const struct vhca_seg *sseg, unsigned int ns, u32 n)
{
	struct vhca_fault f;
	int lost;

	lost = vhca_copy_held(dseg, nd, x->off, sseg, ns, x->off, n, &f);
	if (lost != VHCA_COPY_FAULT)
		return lost;
	return vhca_odp_miss(&x->odp, &f) ? VHCA_COPY_FAULT :
	       f.write ? 2 : 1;
}

/*
 * The next chunk of @qp's current WQE: SEND, RDMA WRITE or RDMA READ.
 * Returns the requester's completion status, VHCA_RNR when the responder
 * has no receive WQE yet, VHCA_NOPEER when an RC responder is not there
 * (yet), VHCA_FAULT when pages of an ODP MR must be
 * faulted in first (x->fault), or VHCA_MORE when bytes are left.
 * Everything is looked up anew for each chunk.  Caller holds
 * rcu_read_lock().
 */
static int vhca_exec_chunk(struct vhca_dev *vdev, struct vhca_qp *qp,
			   const struct vhca_swqe *w, struct vhca_seg *sseg,
			   struct vhca_seg *dseg, struct vhca_exec_state *x)
{
	bool rc = vhca_qpt_rc(qp->ibqp.qp_type);
	bool imm = vhca_wr_is(w->opcode, VHCA_OPF_IMM);
	bool send = vhca_wr_is(w->opcode, VHCA_OPF_SEND);
	/* what a lost or refused message completes with: UC never knows */
	int gone = rc ? VHCA_NOPEER : IB_WC_SUCCESS;
	int refused = rc ? IB_WC_REM_ACCESS_ERR : IB_WC_SUCCESS;
	struct vhca_rwqe *rwqe = qp->rwqe;
	bool reads = vhca_wr_is(w->opcode, VHCA_OPF_READ);
	struct vhca_mr *rmr = NULL;
	unsigned int ns, nd = 0;
	struct vhca_qp *peer;
	int lost, status;
	s64 len;
	u32 n;

	/* A READ's local SGEs are written, everything else's read. */
	len = vhca_wqe_source(vdev, qp, w, sseg, &ns,
			      (reads ? IB_ACCESS_LOCAL_WRITE : 0) |
			      VHCA_FIND_ODP);
	if (len < 0)
		return -len;
	if (!x->off) {
		x->len = len;
		x->opcode = w->opcode;
		x->wr_id = w->wr_id;
		if (!rc && READ_ONCE(qp->dst_dev) == U32_MAX)
			return vhca_req_uc(vdev, qp, w, sseg, ns, len);
	} else if (len != x->len) {
		return IB_WC_LOC_LEN_ERR;	/* rewritten between chunks */
	} else if (w->opcode != x->opcode || w->wr_id != x->wr_id) {
		return IB_WC_LOC_QP_OP_ERR;
	}

	peer = vhca_peer(vdev, qp, w);
	if (IS_ERR_OR_NULL(peer))
		return peer ? refused : gone;
	/* its receive came from an XRC SRQ that went, or it names another */
	if (x->took && peer->xsrq && peer->xsrq->uid != x->xsrq_uid)
		return IB_WC_LOC_QP_OP_ERR;

	/* A zero-length RDMA operation names no memory: no key to check. */
	if (!send && len) {
		int access = reads ? IB_ACCESS_REMOTE_READ : IB_ACCESS_REMOTE_WRITE;

		rmr = vhca_remote(peer, w->rdma.rkey, w->rdma.remote_addr, len,
				  access | VHCA_FIND_ODP);
		if (!rmr)
			return refused;
		dseg[0] = (struct vhca_seg){ .mr = rmr, .key = w->rdma.rkey,
					     .va = w->rdma.remote_addr,
					     .len = len };
		nd = 1;
	}
	n = min_t(s64, len - x->off, VHCA_EXEC_CHUNK);
	if (reads) {
		/* the peer's bytes into our SGEs */
		switch (vhca_exec_copy(x, sseg, ns, dseg, nd, n)) {
		case 1:
			return refused;
		case 2:
			return IB_WC_LOC_PROT_ERR;
		case VHCA_COPY_FAULT:
			return VHCA_FAULT;
		}
		x->off += n;
		return x->off < len ? VHCA_MORE : IB_WC_SUCCESS;
	}

	if ((send || imm) && !x->took) {
		switch (send && vhca_tm_srq(peer) ?
			vhca_exec_tm_take(qp, peer, x, sseg, ns, len) :
			vhca_recv_take(peer, rwqe, qp->ibqp.qp_num)) {
		case VHCA_FAULT:
			return VHCA_FAULT;
		case -EFAULT:
			return IB_WC_LOC_PROT_ERR;
		case -EAGAIN:
			/* as on the wire: RC is told RNR, UC's is lost */
			vhca_count_qp(peer, VHCA_CNT_RCVD_NO_WQE);
			return rc ? VHCA_RNR : IB_WC_SUCCESS;
		case -EINVAL:
			return rc ? IB_WC_REM_INV_REQ_ERR : IB_WC_SUCCESS;
		}
		x->took = true;
		if (peer->xsrq) {
			x->xsrqn = peer->xsrq->srqn;
			x->xsrq_uid = peer->xsrq->uid;
		}
	}
	if (send && !vhca_exec_recv_sges(qp, peer, w, dseg, &nd, len, &status))
		return status;
	lost = vhca_exec_copy(x, dseg, nd, sseg, ns, n);
	if (lost == VHCA_COPY_FAULT)
		return VHCA_FAULT;
	if (lost) {
		/*
		 * A receive taken before any byte moved completes here (after
		 * that, vhca_exec_abort() does): our key went, or the
		 * responder's.
		 */
		if (x->took && !x->off) {
			x->took = false;
			vhca_exec_recv_failed(qp, peer,
					      lost == 1 ? IB_WC_REM_ABORT_ERR :
							  IB_WC_LOC_PROT_ERR);
		}
		if (lost == 1)
			return IB_WC_LOC_PROT_ERR;
		if (!send)
			return refused;
		return rc ? IB_WC_REM_OP_ERR : IB_WC_SUCCESS;
	}
	x->off += n;
	if (x->off < len)
		return VHCA_MORE;
	if (send || imm) {
		struct vhca_rmsg msg = vhca_rmsg_of(w);

		if (x->tm.kind) {
			vhca_tm_rmsg(&msg, &x->tm, false);
			/* a matched message's header is not its data */
			len = x->tm.kind == VHCA_TM_EAGER ? len - VHCA_TMH_LEN :
			      x->tm.kind == VHCA_TM_RNDV ? 0 : len;
			if (x->tm.kind == VHCA_TM_RNDV)
				vhca_exec_tm_rndv(qp, peer, x);
		}
		vhca_recv_done(peer, rwqe->wr_id, vhca_tm_status(&x->tm), len,
			       &msg, qp->ibqp.qp_num);
	}
	return IB_WC_SUCCESS;
}

/*
 * Execute @qp's current WQE, a SEND, RDMA WRITE or RDMA READ, chunk by
 * chunk, VHCA_EXEC_RUN bytes of it at most.  Returns as vhca_exec_chunk()
 * does, with VHCA_PARTIAL instead of VHCA_MORE: qp->exec says where the
 * next run goes on.  Process context; caller holds qp->lock.
 */
int vhca_exec(struct vhca_dev *vdev, struct vhca_qp *qp,
	      const struct vhca_swqe *w, struct vhca_seg *sseg,
	      struct vhca_seg *dseg)
{
	u32 end = qp->exec.off + VHCA_EXEC_RUN;
	int status;

	for (;;) {
		rcu_read_lock();
		status = vhca_exec_chunk(vdev, qp, w, sseg, dseg, &qp->exec);
		rcu_read_unlock();
		if (status == VHCA_FAULT) {
			vhca_odp_resolve(&qp->exec.odp);
			continue;
		}
		vhca_odp_retry_reset(&qp->exec.odp);
		if (status != VHCA_MORE) {
			if (status != VHCA_RNR)
				vhca_exec_abort(qp);
			return status;
		}
		if (qp->exec.off >= end)
			return VHCA_PARTIAL;
		cond_resched();
	}
}

/*
 * What vhca_atomic() or vhca_atomic_store() returned, as the requester's
 * completion status: -EACCES, the key invalidated since it was found;
 * -EINVAL, the word not aligned in memory.
 */
static int vhca_atomic_status(int err)
{
	switch (err) {
	case 0:
		return IB_WC_SUCCESS;
	case -EACCES:
		return IB_WC_REM_ACCESS_ERR;
	default:
		return IB_WC_REM_INV_REQ_ERR;
	}
}

/*
 * An ODP page an atomic found missing (@f): VHCA_FAULT for the engine to
 * fault it in and run the atomic again (nothing was done), or @status if
 * its fault failed before.
 */
static int vhca_atomic_miss(struct vhca_qp *qp, const struct vhca_fault *f,
			    int status)
{
	return vhca_odp_miss(&qp->exec.odp, f) ? VHCA_FAULT : status;
}

/*
 * An atomic on the peer's 8 bytes at remote_addr; the original value goes
 * to our one 8-byte SGE.  cmpxchg on the mapped word makes it atomic
 * against every other atomic of this device (and the CPUs).  The SGE is
 * held before the atomic runs: once it has, the result must land.
 * Returns a completion status, or VHCA_FAULT (qp->exec.odp).
 */
int vhca_exec_atomic(struct vhca_dev *vdev, struct vhca_qp *qp,
		     const struct vhca_swqe *w, struct vhca_seg *seg)
{
	u64 va = w->atomic.remote_addr, old;
	struct vhca_cursor src, dst, d;
	struct vhca_seg res;
	struct vhca_fault f;
	struct vhca_qp *peer;
	struct vhca_mr *rmr;
	unsigned int ns;
	int err;

	if (w->num_sge != 1)
		return IB_WC_LOC_LEN_ERR;
	if (vhca_sges(vdev, w->sge, 1, qp->ibqp.pd,
		      IB_ACCESS_LOCAL_WRITE | VHCA_FIND_ODP, seg, &ns) !=
	    sizeof(u64))
		return IB_WC_LOC_LEN_ERR;
	peer = vhca_peer(vdev, qp, w);
	if (IS_ERR_OR_NULL(peer))
		return peer ? IB_WC_REM_ACCESS_ERR : VHCA_NOPEER;
	if (va & 7)
		return IB_WC_REM_INV_REQ_ERR;
	rmr = vhca_remote(peer, w->atomic.rkey, va, sizeof(u64),
			  IB_ACCESS_REMOTE_ATOMIC | VHCA_FIND_ODP);
	if (!rmr)
		return IB_WC_REM_ACCESS_ERR;

	dst = (struct vhca_cursor){ .seg = seg, .nseg = 1 };
	err = vhca_cursor_hold(dst, sizeof(old), true, &f);
	if (err)
		return err == -EFAULT ?
		       vhca_atomic_miss(qp, &f, IB_WC_LOC_PROT_ERR) :
		       IB_WC_LOC_PROT_ERR;
	err = vhca_atomic(rmr, w->atomic.rkey, va,
			  w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP,
			  w->atomic.compare_add, w->atomic.swap, &old, &f);
	if (!err) {
		res = (struct vhca_seg){ .kbuf = (const u8 *)&old,
					 .len = sizeof(old) };
		src = (struct vhca_cursor){ .seg = &res, .nseg = 1 };
		d = dst;
		vhca_copy(&d, &src, sizeof(old));
	}
	vhca_cursor_release(dst, sizeof(old));
	if (err == -EFAULT)
		return vhca_atomic_miss(qp, &f, IB_WC_REM_ACCESS_ERR);
	return vhca_atomic_status(err);
}

/*
 * An ATOMIC WRITE: the 8 bytes in the WQE go to the peer's word at
 * remote_addr in one store.  The responder's rules of the wire path
 * apply: write access, an aligned word, and responder resources.
 * Returns a completion status, or VHCA_FAULT (qp->exec.odp).
 */
int vhca_exec_atomic_write(struct vhca_dev *vdev, struct vhca_qp *qp,
			   const struct vhca_swqe *w)
{
	u64 va = w->atomic.remote_addr;
	struct vhca_fault f;
	struct vhca_qp *peer;
	struct vhca_mr *rmr;
	int err;

	peer = vhca_peer(vdev, qp, w);
	if (IS_ERR_OR_NULL(peer))
		return peer ? IB_WC_REM_ACCESS_ERR : VHCA_NOPEER;
	if (va & 7 || !READ_ONCE(peer->attr.max_dest_rd_atomic))
		return IB_WC_REM_INV_REQ_ERR;
	rmr = vhca_remote(peer, w->atomic.rkey, va, sizeof(u64),
			  IB_ACCESS_REMOTE_WRITE | VHCA_FIND_ODP);
	if (!rmr)
		return IB_WC_REM_ACCESS_ERR;
	err = vhca_atomic_store(rmr, w->atomic.rkey, va, w->atomic.swap, &f);
	if (err == -EFAULT)
		return vhca_atomic_miss(qp, &f, IB_WC_REM_ACCESS_ERR);
	return vhca_atomic_status(err);
}

/*
 * A FLUSH: the peer's checks of the wire path (vhca_flush()), where the
 * data the WQEs before it placed is already in the peer's memory.
 */
int vhca_exec_flush(struct vhca_dev *vdev, struct vhca_qp *qp,
		    const struct vhca_swqe *w)
{
	struct vhca_qp *peer = vhca_peer(vdev, qp, w);

	if (IS_ERR_OR_NULL(peer))
		return peer ? IB_WC_REM_ACCESS_ERR : VHCA_NOPEER;
	return vhca_flush(peer, w->flush.rkey, w->flush.remote_addr,
			  w->flush.length, w->flush.type, w->flush.level);
}
