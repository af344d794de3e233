// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The engine: vhca's "hardware".  It consumes send rings the way a NIC
 * would and moves data between QPs of the vhca devices of this host (the
 * AV's DGID names the device, the QPN the QP): SEND, SEND_WITH_IMM, RDMA
 * WRITE and WRITE_WITH_IMM on RC and UC; SEND_WITH_INV, RDMA READ,
 * ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD, ATOMIC_WRITE and FLUSH on RC; SEND
 * and SEND_WITH_IMM on UD and GSI, with the GRH; LOCAL_INV, BIND_MW and,
 * for kernel QPs, REG_MR.  A UD datagram to a GID no device here has goes
 * on the wire (vhca_net.c), and those from the wire are delivered here.  A
 * UC or RC QP whose peer is on another host goes to the requester
 * (vhca_req.c).  The building blocks every path shares are in vhca_wqe.c.
 *
 * Everything it reads from a ring was written by an untrusted process: a
 * WQE is copied out of the ring before it is looked at, and no index,
 * count, length or key is used before it is bounded.  Objects a WQE names
 * (QPs, MRs) are looked up under RCU; their destroy paths erase them from
 * their xarray and wait for a grace period before freeing anything.
 */
#include <linux/highmem.h>
#include <linux/ip.h>
#include <linux/rcupdate.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_umem.h>

#include "vhca.h"

#define VHCA_RNR	0x100	/* not a status: try the WQE again later */

struct workqueue_struct *vhca_wq;
struct workqueue_struct *vhca_tx_wq;

/* The QP @qpn of the vhca device with ib_device index @dev, if any. */
static struct vhca_qp *vhca_qp_find(struct vhca_dev *vdev, u32 dev, u32 qpn)
{
	struct vhca_dev *dst = vhca_dev_by_index(vdev, dev);

	return dst ? xa_load(&dst->qp_xa, qpn) : NULL;
}

/*
 * The responder: a QP of the vhca device the AV's DGID belongs to (this
 * one or another of this host), of the same type, ready to receive, and
 * connected back to @qp, RC and UC alike: as on the wire
 * (vhca_net_on_path()), a connected QP takes messages from its own
 * peer only, and anyone else's are dropped and counted off path.  NULL
 * if there is none: on a wire nobody would answer.  Caller holds
 * rcu_read_lock().
 */
static struct vhca_qp *vhca_peer(struct vhca_dev *vdev, struct vhca_qp *qp)
{
	struct vhca_qp *peer = vhca_qp_find(vdev, READ_ONCE(qp->dst_dev),
					    qp->attr.dest_qp_num);
	enum ib_qp_state state;

	if (!peer || peer->ibqp.qp_type != qp->ibqp.qp_type)
		return NULL;
	state = READ_ONCE(peer->state);
	if (!vhca_qps_receives(state))
		return NULL;
	if (READ_ONCE(peer->attr.dest_qp_num) != qp->ibqp.qp_num ||
	    READ_ONCE(peer->dst_dev) != vdev->ibdev.index) {
		vhca_count_qp(peer, VHCA_CNT_RCVD_OFF_PATH);
		return NULL;
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
	if ((READ_ONCE(peer->attr.qp_access_flags) & access) != access)
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
 * (qp->rwqe), whose SGEs go into @dseg and *@nd.  SEND_WITH_INV's rkey
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
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	struct vhca_rwqe *rwqe = qp->rwqe;
	struct vhca_exec_state *x = &qp->exec;
	s64 room;

	room = vhca_sges(pdev, rwqe->sge, rwqe->num_sge, peer->ibqp.pd,
			 IB_ACCESS_LOCAL_WRITE, dseg, nd);
	if (room < 0 || room < len) {
		x->took = false;	/* completed here */
		vhca_recv_done(peer, rwqe->wr_id,
			       room < 0 ? IB_WC_LOC_PROT_ERR : IB_WC_LOC_LEN_ERR,
			       0, NULL, qp->ibqp.qp_num);
		/* UC never knows */
		*status = !rc ? IB_WC_SUCCESS :
			  room < 0 ? IB_WC_REM_OP_ERR : IB_WC_REM_INV_REQ_ERR;
		return false;
	}
	if (vhca_wr_is(w->opcode, VHCA_OPF_INV) && !x->off &&
	    !vhca_invalidate(pdev, peer, w->ex, true)) {
		vhca_recv_done(peer, rwqe->wr_id, IB_WC_LOC_PROT_ERR, 0, NULL,
			       qp->ibqp.qp_num);
		*status = IB_WC_REM_INV_REQ_ERR;
		return false;
	}
	return true;
}

/*
 * The next chunk of @qp's current WQE: SEND, RDMA WRITE or RDMA READ.
 * Returns the requester's completion status, VHCA_RNR when the responder
 * has no receive WQE yet, or VHCA_MORE when bytes are left.  Everything
 * is looked up anew for each chunk.  Caller holds rcu_read_lock().
 */
static int vhca_exec_chunk(struct vhca_dev *vdev, struct vhca_qp *qp,
			   const struct vhca_swqe *w, struct vhca_seg *sseg,
			   struct vhca_seg *dseg, struct vhca_exec_state *x)
{
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	bool imm = vhca_wr_is(w->opcode, VHCA_OPF_IMM);
	bool send = vhca_wr_is(w->opcode, VHCA_OPF_SEND);
	/* what a lost or refused message completes with: UC never knows */
	int gone = rc ? IB_WC_RETRY_EXC_ERR : IB_WC_SUCCESS;
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
			      reads ? IB_ACCESS_LOCAL_WRITE : 0);
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

	peer = vhca_peer(vdev, qp);
	if (!peer)
		return gone;

	/* A zero-length RDMA operation names no memory: no key to check. */
	if (!send && len) {
		int access = reads ? IB_ACCESS_REMOTE_READ : IB_ACCESS_REMOTE_WRITE;

		rmr = vhca_remote(peer, w->rdma.rkey, w->rdma.remote_addr, len,
				  access);
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
		switch (vhca_copy_held(sseg, ns, x->off, dseg, nd, x->off, n)) {
		case 1:
			return refused;
		case 2:
			return IB_WC_LOC_PROT_ERR;
		}
		x->off += n;
		return x->off < len ? VHCA_MORE : IB_WC_SUCCESS;
	}

	if ((send || imm) && !x->took) {
		switch (vhca_recv_take(peer, rwqe, qp->ibqp.qp_num)) {
		case -EAGAIN:
			/* as on the wire: RC is told RNR, UC's is lost */
			vhca_count_qp(peer, VHCA_CNT_RCVD_NO_WQE);
			return rc ? VHCA_RNR : IB_WC_SUCCESS;
		case -EINVAL:
			return rc ? IB_WC_REM_INV_REQ_ERR : IB_WC_SUCCESS;
		}
		x->took = true;
	}
	if (send && !vhca_exec_recv_sges(qp, peer, w, dseg, &nd, len, &status))
		return status;
	lost = vhca_copy_held(dseg, nd, x->off, sseg, ns, x->off, n);
	if (lost) {
		/*
		 * A receive taken before any byte moved completes here (after
		 * that, vhca_exec_abort() does): our key went, or the
		 * responder's.
		 */
		if (x->took && !x->off) {
			x->took = false;
			vhca_recv_done(peer, rwqe->wr_id,
				       lost == 1 ? IB_WC_REM_ABORT_ERR :
						   IB_WC_LOC_PROT_ERR,
				       0, NULL, qp->ibqp.qp_num);
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

		vhca_recv_done(peer, rwqe->wr_id, IB_WC_SUCCESS, len, &msg,
			       qp->ibqp.qp_num);
	}
	return IB_WC_SUCCESS;
}

/**
 * vhca_exec_abort() - forget how far the local engine got in a WQE
 * @qp: the QP; caller holds qp->lock
 *
 * For a WQE that will not run again: failed, flushed, or its QP reset.  A
 * receive WQE taken for its message completes in error, so the responder
 * loses no completion.
 */
void vhca_exec_abort(struct vhca_qp *qp)
{
	struct vhca_qp *peer;

	/*
	 * Before the first byte, a failure completed the receive itself.
	 * The peer is looked up whatever its state (not vhca_peer()): one in
	 * error still gets the completion, flushed or not.
	 */
	if (qp->exec.took && qp->exec.off && qp->exec.off < qp->exec.len) {
		rcu_read_lock();
		peer = vhca_qp_find(to_vdev(qp->ibqp.device),
				    READ_ONCE(qp->dst_dev),
				    qp->attr.dest_qp_num);
		if (peer && peer->ibqp.qp_type == qp->ibqp.qp_type &&
		    READ_ONCE(peer->state) != IB_QPS_RESET)
			vhca_recv_done(peer, qp->rwqe->wr_id,
				       IB_WC_REM_ABORT_ERR, 0, NULL,
				       qp->ibqp.qp_num);
		rcu_read_unlock();
	}
	qp->exec = (struct vhca_exec_state){};
}

/*
 * Execute @qp's current WQE, a SEND, RDMA WRITE or RDMA READ, chunk by
 * chunk, VHCA_EXEC_RUN bytes of it at most.  Returns as vhca_exec_chunk()
 * does, with VHCA_PARTIAL instead of VHCA_MORE: qp->exec says where the
 * next run goes on.  Process context; caller holds qp->lock.
 */
static int vhca_exec(struct vhca_dev *vdev, struct vhca_qp *qp,
		     const struct vhca_swqe *w, struct vhca_seg *sseg,
		     struct vhca_seg *dseg)
{
	u32 end = qp->exec.off + VHCA_EXEC_RUN;
	int status;

	for (;;) {
		rcu_read_lock();
		status = vhca_exec_chunk(vdev, qp, w, sseg, dseg, &qp->exec);
		rcu_read_unlock();
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
 * An atomic on the peer's 8 bytes at remote_addr; the original value goes
 * to our one 8-byte SGE.  cmpxchg on the mapped word makes it atomic
 * against every other atomic of this device (and the CPUs).
 */
static int vhca_exec_atomic(struct vhca_dev *vdev, struct vhca_qp *qp,
			    const struct vhca_swqe *w, struct vhca_seg *seg)
{
	u64 va = w->atomic.remote_addr, old;
	struct vhca_cursor src, dst;
	struct vhca_seg res;
	struct vhca_qp *peer;
	struct vhca_mr *rmr;
	unsigned int ns;
	int err;

	if (w->num_sge != 1)
		return IB_WC_LOC_LEN_ERR;
	if (vhca_sges(vdev, w->sge, 1, qp->ibqp.pd, IB_ACCESS_LOCAL_WRITE,
		      seg, &ns) != sizeof(u64))
		return IB_WC_LOC_LEN_ERR;
	peer = vhca_peer(vdev, qp);
	if (!peer)
		return IB_WC_RETRY_EXC_ERR;
	if (va & 7)
		return IB_WC_REM_INV_REQ_ERR;
	rmr = vhca_remote(peer, w->atomic.rkey, va, sizeof(u64),
			  IB_ACCESS_REMOTE_ATOMIC);
	if (!rmr)
		return IB_WC_REM_ACCESS_ERR;

	err = vhca_atomic(rmr, w->atomic.rkey, va,
			  w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP,
			  w->atomic.compare_add, w->atomic.swap, &old);
	if (err)
		return vhca_atomic_status(err);
	res = (struct vhca_seg){ .kbuf = (const u8 *)&old, .len = sizeof(old) };
	src = (struct vhca_cursor){ .seg = &res, .nseg = 1 };
	dst = (struct vhca_cursor){ .seg = seg, .nseg = 1 };
	vhca_copy(&dst, &src, sizeof(old));
	return IB_WC_SUCCESS;
}

/*
 * An ATOMIC WRITE: the 8 bytes in the WQE go to the peer's word at
 * remote_addr in one store.  The responder's rules of the wire path
 * apply: write access, an aligned word, and responder resources.
 */
static int vhca_exec_atomic_write(struct vhca_dev *vdev, struct vhca_qp *qp,
				  const struct vhca_swqe *w)
{
	u64 va = w->atomic.remote_addr;
	struct vhca_qp *peer;
	struct vhca_mr *rmr;

	peer = vhca_peer(vdev, qp);
	if (!peer)
		return IB_WC_RETRY_EXC_ERR;
	if (va & 7 || !READ_ONCE(peer->attr.max_dest_rd_atomic))
		return IB_WC_REM_INV_REQ_ERR;
	rmr = vhca_remote(peer, w->atomic.rkey, va, sizeof(u64),
			  IB_ACCESS_REMOTE_WRITE);
	if (!rmr)
		return IB_WC_REM_ACCESS_ERR;
	return vhca_atomic_status(vhca_atomic_store(rmr, w->atomic.rkey, va,
						    w->atomic.swap));
}

/*
 * A FLUSH: the peer's checks of the wire path (vhca_flush()), where the
 * data the WQEs before it placed is already in the peer's memory.
 */
static int vhca_exec_flush(struct vhca_dev *vdev, struct vhca_qp *qp,
			   const struct vhca_swqe *w)
{
	struct vhca_qp *peer = vhca_peer(vdev, qp);

	if (!peer)
		return IB_WC_RETRY_EXC_ERR;
	return vhca_flush(peer, w->flush.rkey, w->flush.remote_addr,
			  w->flush.length, w->flush.type, w->flush.level);
}

/*
 * The 40-byte GRH slot of a UD receive, as RoCEv2 puts it there: an IPv6
 * header, or 20 bytes of zeroes and then an IPv4 header.  Returns the
 * network type.
 */
static u8 vhca_build_grh(const struct ib_gid_attr *sgid,
			 const struct vhca_av *av, u32 len, u8 *grh)
{
	/* the payload after the IP header: UDP, BTH, DETH, data, ICRC */
	u32 inner = 8 + 12 + 8 + len + 4;
	u8 net = rdma_gid_attr_network_type(sgid);

	memset(grh, 0, 40);
	if (net == RDMA_NETWORK_IPV4) {
		struct iphdr *ip = (struct iphdr *)(grh + 20);

		ip->version = 4;
		ip->ihl = 5;
		ip->tos = av->traffic_class;
		ip->tot_len = htons(sizeof(*ip) + inner);
		ip->frag_off = htons(IP_DF);
		ip->ttl = av->hop_limit;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, sgid->gid.raw + 12, 4);
		memcpy(&ip->daddr, av->dgid + 12, 4);
		ip->check = ip_fast_csum(ip, ip->ihl);
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)grh;

		ip6_flow_hdr(ip6, av->traffic_class,
			     cpu_to_be32(av->flow_label & 0xfffff));
		ip6->payload_len = htons(inner);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = av->hop_limit;
		memcpy(&ip6->saddr, sgid->gid.raw, 16);
		memcpy(&ip6->daddr, av->dgid, 16);
	}
	return net;
}

/*
 * Deliver a UD message to @peer: its next receive WQE (copied into @rwqe)
 * takes the 40-byte GRH slot, then @len bytes from @src.  A missing
 * receive drops the message, counted in the receiver's rcvd_no_recv_wqe;
 * a receive that cannot hold it fails.  @msg says whether it carries
 * immediate data and the solicited flag.
 */
static void vhca_ud_deliver(struct vhca_dev *pdev, struct vhca_qp *peer,
			    struct vhca_rwqe *rwqe, struct vhca_seg *dseg,
			    const u8 *grh, u8 net, struct vhca_cursor *src,
			    u32 len, const struct vhca_rmsg *msg, u32 src_qpn)
{
	struct vhca_cursor dst, gsrc;
	struct vhca_seg grh_seg;
	unsigned int nd;
	s64 room;

	switch (vhca_recv_take(peer, rwqe, src_qpn)) {
	case -EAGAIN:
		vhca_count_qp(peer, VHCA_CNT_RCVD_NO_WQE);
		return;		/* no receive: dropped */
	case -EINVAL:
		return;		/* completed in error */
	}
	room = vhca_sges(pdev, rwqe->sge, rwqe->num_sge, peer->ibqp.pd,
			 IB_ACCESS_LOCAL_WRITE, dseg, &nd);
	if (room < 0 || room < len + 40) {
		vhca_recv_done(peer, rwqe->wr_id,
			       room < 0 ? IB_WC_LOC_PROT_ERR : IB_WC_LOC_LEN_ERR,
			       0, NULL, src_qpn);
		return;
	}
	grh_seg = (struct vhca_seg){ .kbuf = grh, .len = 40 };
	dst = (struct vhca_cursor){ .seg = dseg, .nseg = nd };
	gsrc = (struct vhca_cursor){ .seg = &grh_seg, .nseg = 1 };
	vhca_copy(&dst, &gsrc, 40);
	vhca_copy(&dst, src, len);
	vhca_recv_done_grh(peer, rwqe->wr_id, IB_WC_SUCCESS, len + 40, msg,
			   src_qpn, net);
}

/* Scratch for the receive path: it runs per CPU with bottom halves off. */
struct vhca_rx_scratch {
	u8 rwqe[VHCA_MAX_RWQE_STRIDE] __aligned(8);
	struct vhca_seg seg[VHCA_MAX_SGE];
};

static DEFINE_PER_CPU(struct vhca_rx_scratch, vhca_rx_scratch);

/* Whether @peer takes a UD message with @qkey. */
static bool vhca_ud_accepts(struct vhca_qp *peer, u32 qkey)
{
	return peer && vhca_qpt_ud(peer->ibqp.qp_type) &&
	       vhca_qps_receives(READ_ONCE(peer->state)) &&
	       qkey == READ_ONCE(peer->attr.qkey);
}

/**
 * vhca_ud_take() - a UD datagram from the wire to @peer, if it takes it
 * @vdev: the device it arrived on
 * @peer: the QP it is for, or NULL
 * @m: the datagram
 *
 * Softirq context (bottom halves off), under rcu_read_lock().
 *
 * Return: false if @peer is no UD QP that receives with @m's Q_Key.
 */
bool vhca_ud_take(struct vhca_dev *vdev, struct vhca_qp *peer,
		  const struct vhca_ud_msg *m)
{
	struct vhca_rx_scratch *sc = this_cpu_ptr(&vhca_rx_scratch);
	struct vhca_rmsg msg = {
		.flags = m->h.has_imm ? VHCA_OPF_IMM : 0,
		.se = m->h.se,
		.ex = (__force u32)m->h.imm,
	};
	struct vhca_seg data = { .kbuf = m->data, .len = m->len };
	struct vhca_cursor src = { .seg = &data, .nseg = 1 };

	if (!vhca_ud_accepts(peer, m->h.qkey))
		return false;
	vhca_count_qp(peer, VHCA_CNT_RCVD_PKTS);
	vhca_ud_deliver(vdev, peer, (struct vhca_rwqe *)sc->rwqe, sc->seg,
			m->grh, m->net, &src, m->len, &msg, m->h.sqpn);
	return true;
}

/**
 * vhca_ud_from_wire() - a UD datagram from the wire for QP @m->h.dqpn
 * @vdev: the device it arrived on
 * @m: the datagram
 *
 * The multicast QPN means every QP attached to the group it was sent to.
 * A datagram no QP takes (none, not UD, not receiving, or the wrong
 * Q_Key) is dropped, as the IBA says.  Softirq context (bottom halves
 * off), under rcu_read_lock().
 */
void vhca_ud_from_wire(struct vhca_dev *vdev, const struct vhca_ud_msg *m)
{
	bool taken;

	if (m->h.dqpn == IB_MULTICAST_QPN)
		taken = vhca_mcast_from_wire(vdev, m);
	else
		taken = vhca_ud_take(vdev, xa_load(&vdev->qp_xa, m->h.dqpn),
				     m);
	if (!taken) {
		vhca_count(vdev, VHCA_CNT_RCVD_PKTS);
		vhca_count(vdev, VHCA_CNT_RCVD_NO_QP);
	}
}

/*
 * A UD SEND to a GID that is not this host's: RoCEv2 on the wire, from
 * @sgid, the AV's source GID as vhca_exec_ud() found it (an ERR_PTR if
 * it has none).
 */
static int vhca_ud_wire(struct vhca_dev *vdev, struct vhca_qp *qp,
			const struct vhca_swqe *w, struct vhca_seg *sseg,
			unsigned int ns, u32 len, u32 qkey,
			const struct ib_gid_attr *sgid)
{
	bool imm = vhca_wr_is(w->opcode, VHCA_OPF_IMM);
	struct vhca_tx_hdr h = {
		.opcode = imm ? VHCA_OP_UD_SEND_ONLY_IMM : VHCA_OP_UD_SEND_ONLY,
		.dqpn = w->ud.remote_qpn,
		.psn = qp->attr.sq_psn,
		.has_deth = true,
		.qkey = qkey,
		.sqpn = qp->ibqp.qp_num,
		.imm = (__force __be32)w->ex,
		.has_imm = imm,
		.se = w->flags & VHCA_SWQE_F_SOLICITED,
	};
	struct vhca_seg out = { .len = len };
	struct vhca_cursor src = { .seg = sseg, .nseg = ns };
	struct vhca_cursor dst = { .seg = &out, .nseg = 1 };
	struct sk_buff *skb;

	skb = vhca_net_alloc(vdev, &h, len, &out.kdst);
	if (!skb)
		return IB_WC_SUCCESS;	/* lost, as on a congested wire */
	vhca_copy(&dst, &src, len);
	qp->attr.sq_psn = (qp->attr.sq_psn + 1) & VHCA_BTH_PSN_MASK;
	vhca_net_send(vdev, skb, &w->ud.av, sgid, qp);
	return IB_WC_SUCCESS;
}

/*
 * A UD SEND: to the QP remote_qpn of the vhca device of this host that has
 * the destination GID, if there is one and the qkey matches; to the wire
 * otherwise.  A datagram nobody takes is lost and the sender still
 * completes.  The receiver's buffers take the GRH first, then the data.
 * Caller holds rcu_read_lock().
 */
static int vhca_exec_ud(struct vhca_dev *vdev, struct vhca_qp *qp,
			const struct vhca_swqe *w, struct vhca_seg *sseg,
			struct vhca_seg *dseg)
{
	const struct vhca_av *av = &w->ud.av;
	struct vhca_rmsg msg;
	struct vhca_cursor src;
	const struct ib_gid_attr *sgid;
	struct vhca_dev *pdev;
	struct vhca_qp *peer;
	unsigned int ns;
	u8 grh[40], net;
	u32 qkey;
	s64 len;

	len = vhca_wqe_source(vdev, qp, w, sseg, &ns, 0);
	if (len < 0)
		return -len;
	if (len > ib_mtu_enum_to_int(READ_ONCE(vdev->active_mtu)))
		return IB_WC_LOC_LEN_ERR;
	/* IB: a qkey with the high bit set means "use the sender's own" */
	qkey = (w->ud.remote_qkey & 0x80000000) ? qp->attr.qkey :
						  w->ud.remote_qkey;

	/*
	 * The source GID says the sender's namespace, where the destination
	 * is local or not; one gone since the AH was made has no route, and
	 * the wire path drops the datagram and counts it.
	 */
	sgid = rdma_get_gid_attr(qp->ibqp.device, VHCA_PORT, av->sgid_index);
	pdev = IS_ERR(sgid) ? NULL :
	       vhca_dev_by_gid(vdev, (const union ib_gid *)av->dgid,
			       vhca_gid_net(sgid));
	if (!pdev) {
		int status = vhca_ud_wire(vdev, qp, w, sseg, ns, len, qkey,
					  sgid);

		if (!IS_ERR(sgid))
			rdma_put_gid_attr(sgid);
		return status;
	}
	peer = xa_load(&pdev->qp_xa, w->ud.remote_qpn);
	net = vhca_build_grh(sgid, av, len, grh);
	rdma_put_gid_attr(sgid);
	if (!vhca_ud_accepts(peer, qkey))
		return IB_WC_SUCCESS;
	src = (struct vhca_cursor){ .seg = sseg, .nseg = ns };
	msg = vhca_rmsg_of(w);
	vhca_ud_deliver(pdev, peer, qp->rwqe, dseg, grh, net, &src, len, &msg,
			qp->ibqp.qp_num);
	return IB_WC_SUCCESS;
}

/*
 * Copy the send WQE at index @idx out of the ring, header and what
 * follows, into the QP's scratch.  Caller holds qp->lock.
 */
struct vhca_swqe *vhca_sq_fetch_at(struct vhca_qp *qp, u32 idx)
{
	memcpy(qp->wqe, vhca_uring_slot(&qp->sq, idx),
	       1U << qp->sq.g.log2_stride);
	return qp->wqe;
}

static struct vhca_swqe *vhca_sq_fetch(struct vhca_qp *qp)
{
	return vhca_sq_fetch_at(qp, qp->sq_cons);
}

void vhca_sq_advance(struct vhca_qp *qp)
{
	qp->sq_cons++;
	qp->wire_pkt = 0;
	/* Release: the slot is copied before it is handed back. */
	smp_store_release(&qp->sq.hdr->consumer, qp->sq_cons);
}

/**
 * vhca_sq_retire() - hand the oldest send WQE back, and complete it
 * @qp: the QP; caller holds qp->lock
 * @w: the WQE, copied out of its slot (wr_id, opcode and flags are read)
 * @status: its completion status
 * @len: the bytes it moved, for the CQE
 *
 * The slot is free before the completion is visible: whoever polls the
 * completion of WR n may post again at once.  A WQE that failed takes
 * the QP to the error state, or a UC or UD QP's send queue only
 * (IBA 10.3.1).  The local engine and the requester on the wire both
 * retire their WQEs here.
 *
 * Return: false if the WQE failed.
 */
bool vhca_sq_retire(struct vhca_qp *qp, const struct vhca_swqe *w,
		    int status, u32 len)
{
	vhca_sq_advance(qp);
	if (vhca_send_signals(qp, w->flags, status))
		vhca_send_done(qp, w, status, len);
	if (status == IB_WC_SUCCESS)
		return true;
	if (qp->ibqp.qp_type == IB_QPT_RC)
		vhca_qp_set_error(qp);
	else
		vhca_qp_set_sq_error(qp);
	return false;
}

/**
 * vhca_sq_producer() - read a send ring's producer, and check it
 * @qp: the QP; caller holds qp->lock
 * @sent: the index up to which WQEs are taken already (sq_cons, or further
 *	for RC on the wire)
 * @prod: where the producer goes
 *
 * A producer that the process moved out of the ring's bounds, or back
 * behind WQEs the engine took, moves the QP to the error state.
 *
 * Return: false if it did.
 */
bool vhca_sq_producer(struct vhca_qp *qp, u32 sent, u32 *prod)
{
	/* Acquire pairs with the provider's release of the producer. */
	*prod = smp_load_acquire(&qp->sq.hdr->producer);
	if (vhca_ring_sane(*prod, qp->sq_cons, qp->sq.g.log2_slots) &&
	    *prod - qp->sq_cons >= sent - qp->sq_cons)
		return true;
	vhca_qp_set_error(qp);
	return false;
}

/*
 * WQEs flushed between two chances for the scheduler: a ring holds up to
 * VHCA_MAX_QP_WR of them.
 */
#define VHCA_FLUSH_RESCHED	256

/**
 * vhca_qp_flush_sq() - complete the posted send WQEs with FLUSH_ERR
 * @qp: a QP in the error or send queue error state; caller holds qp->lock
 *
 * Those posted when it reads the producer, one ring's worth at most:
 * what a process posts meanwhile waits for the next call, so one that
 * keeps its producer a ring ahead cannot hold the caller here.
 *
 * Return: the number of WQEs flushed.
 */
u32 vhca_qp_flush_sq(struct vhca_qp *qp)
{
	/* Acquire pairs with the provider's release of the producer. */
	u32 prod = smp_load_acquire(&qp->sq.hdr->producer);
	u32 n = 0;

	vhca_exec_abort(qp);
	if (!vhca_ring_sane(prod, qp->sq_cons, qp->sq.g.log2_slots))
		return 0;	/* the process broke its own ring */
	while (qp->sq_cons != prod) {
		struct vhca_swqe *w = vhca_sq_fetch(qp);

		vhca_sq_advance(qp);	/* free before completing: see below */
		vhca_send_done(qp, w, IB_WC_WR_FLUSH_ERR, 0);
		if (!(++n % VHCA_FLUSH_RESCHED))
			cond_resched();
	}
	if (qp->req.fl)
		vhca_req_reset(qp);	/* what was on the wire is flushed */
	return n;
}

/*
 * Execute one send WQE here: checked against the opcode table first.
 * Returns its completion status, VHCA_RNR, or VHCA_PARTIAL to run it
 * again (a local WQE's next VHCA_EXEC_RUN bytes, or UC on the wire).
 * Process context; caller holds qp->lock.
 */
static int vhca_sq_exec(struct vhca_dev *vdev, struct vhca_qp *qp,
			const struct vhca_swqe *w)
{
	struct vhca_seg *sseg = qp->seg, *dseg = qp->seg + VHCA_MAX_SGE;
	int status = vhca_wqe_check(qp, w);

	if (status)
		return status;
	if (vhca_wr_op(w->opcode)->flags & (VHCA_OPF_DATA_OUT | VHCA_OPF_READ)) {
		if (!vhca_qpt_ud(qp->ibqp.qp_type))
			return vhca_exec(vdev, qp, w, sseg, dseg);
		/* a datagram is one MTU at most: one RCU section */
		rcu_read_lock();
		status = vhca_exec_ud(vdev, qp, w, sseg, dseg);
		rcu_read_unlock();
		return status;
	}
	if (vhca_wr_is(w->opcode, VHCA_OPF_LOCAL))
		return vhca_wqe_local(vdev, qp, w);
	/* the atomics and FLUSH, as the table allows */
	rcu_read_lock();
	if (vhca_wr_is(w->opcode, VHCA_OPF_ATOMIC_WRITE))
		status = vhca_exec_atomic_write(vdev, qp, w);
	else if (vhca_wr_is(w->opcode, VHCA_OPF_FLUSH))
		status = vhca_exec_flush(vdev, qp, w);
	else
		status = vhca_exec_atomic(vdev, qp, w, sseg);
	rcu_read_unlock();
	return status;
}

/*
 * Execute what is posted on @qp's send ring, at most *budget WQEs.  Caller
 * holds qp->lock.
 */
static enum vhca_sq_stop vhca_sq_run(struct vhca_qp *qp, unsigned int *budget)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_swqe *w;
	u32 prod, len;
	int status;

	if (qp->state == IB_QPS_ERR || qp->state == IB_QPS_SQE) {
		/*
		 * Flushed WQEs spend the budget too: a process that keeps
		 * posting to a QP in error gets one ring's worth flushed per
		 * run, and the rest is the engine's work's, run by run.
		 */
		if (!*budget)
			return VHCA_SQ_MORE;
		*budget -= min(*budget, vhca_qp_flush_sq(qp));
		if (qp->state == IB_QPS_ERR && qp->rq.hdr)
			vhca_qp_flush_rq(qp);
		return VHCA_SQ_IDLE;
	}
	if (qp->state != IB_QPS_RTS)
		return VHCA_SQ_IDLE;	/* posted WQEs wait for RTS */
	if (vhca_rc_on_wire(qp))
		return vhca_req_run(qp, budget);	/* RC to another host */

	if (!vhca_sq_producer(qp, qp->sq_cons, &prod))
		return VHCA_SQ_IDLE;
	while (qp->sq_cons != prod) {
		if (!*budget)
			return VHCA_SQ_MORE;
		(*budget)--;
		w = vhca_sq_fetch(qp);
		status = vhca_sq_exec(vdev, qp, w);

		/* the work goes on with it, when a packet is freed if it waits */
		if (status == VHCA_PARTIAL)
			return READ_ONCE(qp->uc_wait) ? VHCA_SQ_BLOCKED :
							VHCA_SQ_MORE;
		if (status == VHCA_RNR) {
			struct vhca_qp *peer;
			u8 timer = 0;

			if (qp->attr.rnr_retry != 7 && !qp->rnr_left--) {
				status = IB_WC_RNR_RETRY_EXC_ERR;
			} else {
				rcu_read_lock();
				peer = vhca_qp_find(vdev, READ_ONCE(qp->dst_dev),
						    qp->attr.dest_qp_num);
				if (peer)
					timer = peer->attr.min_rnr_timer;
				rcu_read_unlock();
				/* even over a kick queued meanwhile */
				qp->rnr_wait = true;
				mod_delayed_work(vhca_wq, &qp->sq_work,
						 vhca_rnr_jiffies(timer));
				if (READ_ONCE(qp->err_pending))
					vhca_qp_kick_now(qp);
				return VHCA_SQ_WAIT;
			}
		}
		qp->rnr_left = qp->attr.rnr_retry;
		/* the bytes are counted for a CQE only */
		len = vhca_send_signals(qp, w->flags, status) ?
		      vhca_wqe_len(qp, w) : 0;
		if (!vhca_sq_retire(qp, w, status, len))
			return VHCA_SQ_IDLE;
	}
	return VHCA_SQ_IDLE;
}

/* WQEs a doorbell runs in the poster's context, and one work item runs. */
#define VHCA_SQ_INLINE_BUDGET	32
#define VHCA_SQ_WORK_BUDGET	256

static void vhca_sq_set_active(struct vhca_qp *qp, bool active)
{
	if (qp->ibqp.uobject)
		WRITE_ONCE(qp->sq.hdr->ctrl, active ? VHCA_SQ_ACTIVE : 0);
}

/* The index of the next send WQE to run: RC on the wire runs ahead. */
static u32 vhca_sq_next(struct vhca_qp *qp)
{
	if (vhca_rc_on_wire(qp))
		return qp->req.next;
	return qp->sq_cons;
}

/*
 * Run @qp's send ring until it is idle or @budget WQEs have run, then
 * hand it back to the poster without losing a WQE.  While this runs, ctrl
 * says VHCA_SQ_ACTIVE and the provider rings no doorbell; so before
 * letting go it clears the bit, issues a full barrier and reads the
 * producer again (see struct vhca_ring_hdr).  With the budget spent, or an
 * RNR timer pending, the bit stays set: the queued work runs the ring.
 * Caller holds qp->lock.
 */
static void vhca_sq_service(struct vhca_qp *qp, unsigned int budget)
{
	enum vhca_sq_stop stop;
	u32 prod;

	if (qp->rnr_wait)
		return;	/* the RNR timer's work runs the ring */
	for (;;) {
		vhca_sq_set_active(qp, true);
		stop = vhca_sq_run(qp, &budget);
		if (stop == VHCA_SQ_WAIT || stop == VHCA_SQ_BLOCKED)
			return;
		if (stop == VHCA_SQ_MORE) {
			queue_delayed_work(vhca_wq, &qp->sq_work, 0);
			return;
		}
		vhca_sq_set_active(qp, false);
		/* Pairs with the provider's barrier after its producer store. */
		smp_mb();
		prod = READ_ONCE(qp->sq.hdr->producer);
		if (prod == vhca_sq_next(qp) ||
		    !vhca_ring_sane(prod, qp->sq_cons, qp->sq.g.log2_slots) ||
		    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_ERR &&
		     qp->state != IB_QPS_SQE))
			return;
	}
}

void vhca_sq_work(struct work_struct *work)
{
	struct vhca_qp *qp = container_of(to_delayed_work(work),
					  struct vhca_qp, sq_work);

	mutex_lock(&qp->lock);
	qp->rnr_wait = false;
	if (READ_ONCE(qp->err_pending)) {
		WRITE_ONCE(qp->err_pending, false);
		if (qp->state != IB_QPS_RESET)
			vhca_qp_set_error(qp);
	}
	vhca_sq_service(qp, VHCA_SQ_WORK_BUDGET);
	mutex_unlock(&qp->lock);
}

/**
 * vhca_qp_kick() - have the engine's work run @qp's send ring
 * @qp: the QP
 *
 * Queued, not run: any context.  A pending RNR timer is not cut short;
 * vhca_qp_kick_now() does that, for a QP that has to leave its wait.
 */
void vhca_qp_kick(struct vhca_qp *qp)
{
	queue_delayed_work(vhca_wq, &qp->sq_work, 0);
}

void vhca_qp_kick_now(struct vhca_qp *qp)
{
	mod_delayed_work(vhca_wq, &qp->sq_work, 0);
}

/**
 * vhca_qp_doorbell() - a user QP's send doorbell
 * @qp: the QP
 *
 * Runs what is posted in the caller's context, as a NIC would start on a
 * doorbell at once: no work item to wake for the common case of a few
 * WQEs.  If the engine's work holds the ring (or modify_qp does), that
 * holder will see the WQEs, or the work queued here will.  Process
 * context.
 */
void vhca_qp_doorbell(struct vhca_qp *qp)
{
	if (!mutex_trylock(&qp->lock)) {
		vhca_qp_kick(qp);
		return;
	}
	vhca_sq_service(qp, VHCA_SQ_INLINE_BUDGET);
	mutex_unlock(&qp->lock);
}
