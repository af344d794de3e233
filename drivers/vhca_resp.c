// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The responder of UC, RC and XRC on the wire.  The local path (vhca_engine.c)
 * moves a whole message at once; here a message is a sequence of packets
 * that vhca_recv.c parsed, and the responder keeps, per QP, where the
 * message under way is (struct vhca_resp): it places SENDs and WRITEs,
 * executes atomics and ATOMIC WRITEs, queues READs and sends their
 * responses from rd_work, answers duplicates, and sends ACKs, NAKs and
 * CNPs.  The requester is in vhca_req.c.
 *
 * ODP: a packet that finds a page of an ODP MR missing cannot wait for it
 * here, in softirq.  RC answers it with an RNR NAK, as an ODP HCA does,
 * and leaves the PSN where it was; fault_work faults the pages in, and
 * the requester's retry after the RNR timer finds them.  UC has no retry:
 * its packet is held, with those behind it, until held_work has faulted
 * the pages in (vhca_held.c).  rd_work faults in what a READ's responses
 * need itself.
 */
#include "vhca_roce.h"
#include "vhca_tm.h"
#include "vhca_wire.h"

/*
 * A QP's READ response packets not yet freed by the netdev, at most: the
 * packets an RC requester of vhca keeps on the wire, so that READs of up
 * to 512 packets are never held back; above it, CoDel in the responder's
 * qdisc began to drop (bench/RESULTS.md, "Bounds on packets in flight").
 */
#define VHCA_RD_INFLIGHT	512
/* READ response packets rd_work takes at once. */
#define VHCA_RD_BATCH		16
/*
 * Bytes of a message a fault maps from the packet that found them
 * missing on, within the message and the MR: each fault of an RC
 * responder costs the requester an RNR NAK and its timer, so a message
 * into cold pages costs one per this much, not one per page.
 */
#define VHCA_RESP_FAULT_AHEAD	SZ_4M
/* not a NAK code: vhca_resp_atomic() found an ODP page missing */
#define VHCA_RESP_FAULT		0x100

/*
 * Complete the receive WQE a message holds, of the message @m ends (NULL
 * if it failed); it is the QP's no more.  On a tag-matching SRQ, with
 * what the message's header made of it (resp.tm).
 */
static void vhca_resp_done(struct vhca_qp *qp, u8 status, u32 len,
			   const struct vhca_resp_msg *m)
{
	bool inv = m && (m->flags & VHCA_PKT_INV);
	struct vhca_rmsg msg;

	qp->resp.have_wqe = false;
	if (m) {
		/* a WRITE's receive completes as RDMA_WITH_IMM, as before */
		msg = (struct vhca_rmsg){
			.flags = m->flags & VHCA_PKT_WRITE ?
				 VHCA_OPF_WRITE | VHCA_OPF_IMM :
				 inv ? VHCA_OPF_INV :
				 m->flags & VHCA_PKT_IMM ? VHCA_OPF_IMM : 0,
			.se = m->se,
			.ex = inv ? be32_to_cpu(m->imm) : (__force u32)m->imm,
		};
		if (qp->resp.tm.kind) {
			vhca_tm_rmsg(&msg, &qp->resp.tm, false);
			status = vhca_tm_status(&qp->resp.tm);
		}
	} else {
		vhca_tm_lost(qp, &qp->resp.tm);
	}
	vhca_recv_done(qp, qp->resp.wqe->wr_id, status, len, m ? &msg : NULL,
		       qp->attr.dest_qp_num);
	/* matched, a rendezvous's data is read next: after this completion */
	if (m && qp->resp.tm.kind == VHCA_TM_RNDV)
		vhca_tm_job_add(qp, qp->resp.wqe, &qp->resp.tm);
}

/*
 * The receive WQE a SEND (or a WRITE's immediate data) lands in: the one
 * held, or the next.  On a tag-matching SRQ, a SEND's first packet @m
 * (the whole message if @last) is matched by its header: the tag that
 * takes it, or the SRQ's next receive WQE (vhca_tm_take()).  A matched
 * rendezvous lands nowhere, and the QP's requester reads its data into
 * the tag's buffer (vhca_tm_job_add()); if it cannot, the rendezvous is
 * left to software, and its headers land in the tag's buffer.  Returns
 * 0, -EAGAIN if there is none, or -EINVAL if it is malformed (completed
 * in error).  Caller holds rcu_read_lock().
 */
static int vhca_resp_take_wqe(struct vhca_qp *qp,
			      const struct vhca_resp_msg *m, bool last)
{
	struct vhca_resp *r = &qp->resp;
	int err;

	if (r->have_wqe)
		return 0;
	r->tm.kind = VHCA_TM_NONE;
	if (vhca_tm_srq(qp) && !(m->flags & VHCA_PKT_WRITE)) {
		/* a first packet that is not the last is of a longer message */
		err = vhca_tm_take(qp, qp->attr.dest_qp_num, m->data, m->len,
				   last ? m->len : U32_MAX, r->wqe, &r->tm);
		/* only a tag taken has a buffer to look at */
		if (!err && r->tm.kind == VHCA_TM_RNDV &&
		    !vhca_tm_job_room(qp, r->wqe, &r->tm))
			r->tm.kind = VHCA_TM_RNDV_SW;
	} else {
		err = vhca_recv_take(qp, r->wqe, qp->attr.dest_qp_num);
	}
	r->have_wqe = !err;
	return err;
}

/*
 * Start a UC message with its FIRST or ONLY packet.  A SEND takes a
 * receive WQE, unless the one a dropped message left is still held (the
 * IBA lets UC reuse it).  Returns false to drop the message.
 */
static bool vhca_resp_start(struct vhca_qp *qp, const struct vhca_resp_msg *m,
			    bool write)
{
	struct vhca_resp *r = &qp->resp;

	r->active = true;
	r->dropping = false;
	r->write = write;
	r->off = 0;
	r->skip = 0;
	if (write) {
		r->va = m->va;
		r->rkey = m->rkey;
		r->dmalen = m->dmalen;
		return true;
	}
	/* UC: no receive, no message */
	return !vhca_resp_take_wqe(qp, m, false);
}

/*
 * @f, a fault of a packet at r->off of the message, made to reach over
 * @rest more bytes of the segment it is in (VHCA_RESP_FAULT_AHEAD at
 * most), within its MR.
 */
static void vhca_resp_fault_ahead(struct vhca_fault *f, u64 rest)
{
	const struct vhca_mr *mr = f->mr;
	u64 end = READ_ONCE(mr->iova) + READ_ONCE(mr->length);

	rest = min_t(u64, min_t(u64, rest, VHCA_RESP_FAULT_AHEAD),
		     end > f->va ? end - f->va : 0);
	f->len = max_t(u64, f->len, rest);
}

/*
 * Place one packet's payload at offset r->off of the message: into the
 * held receive WQE's buffers (what r->skip says first skipped), or at the
 * WRITE's remote address.  Keys are
 * looked up again for each packet.  Returns an IB_WC_* status, or
 * VHCA_FAULT with @f: an ODP page to fault in.
 */
static int vhca_resp_place(struct vhca_dev *vdev, struct vhca_qp *qp,
			   const struct vhca_resp_msg *m, struct vhca_fault *f)
{
	struct vhca_resp *r = &qp->resp;
	/* a matched eager message's header lands nowhere */
	u32 skip = r->write ? 0 : min(r->skip, m->len);
	struct vhca_seg data = { .kbuf = m->data + skip,
				 .len = m->len - skip };
	unsigned int i, nd = 1;
	u32 doff = 0;
	struct vhca_mr *mr;
	int lost;
	s64 room;

	r->skip -= skip;
	if (!data.len)
		return IB_WC_SUCCESS;
	/* IBA: a message is 2^31 bytes at most; r->off cannot wrap */
	if ((u64)r->off + data.len > SZ_2G)
		return IB_WC_LOC_LEN_ERR;
	if (r->write) {
		if (r->off + data.len > r->dmalen)
			return IB_WC_LOC_LEN_ERR;
		if (!(READ_ONCE(qp->attr.qp_access_flags) &
		      IB_ACCESS_REMOTE_WRITE))
			return IB_WC_REM_ACCESS_ERR;
		mr = vhca_mr_find_remote(vdev, r->rkey, qp,
					 IB_ACCESS_REMOTE_WRITE | VHCA_FIND_ODP,
					 r->va + r->off, data.len);
		if (!mr)
			return IB_WC_REM_ACCESS_ERR;
		r->seg[0] = (struct vhca_seg){ .mr = mr, .key = r->rkey,
					       .va = r->va + r->off,
					       .len = data.len };
	} else {
		room = vhca_sges(vdev, r->wqe->sge, r->wqe->num_sge,
				 vhca_qp_pd(qp),
				 IB_ACCESS_LOCAL_WRITE | VHCA_FIND_ODP, r->seg, &nd);
		if (room < 0)
			return IB_WC_LOC_PROT_ERR;
		if (r->off + data.len > room)
			return IB_WC_LOC_LEN_ERR;
		doff = r->off;
	}
	/* a LOCAL_INV elsewhere that completed keeps this packet out */
	lost = vhca_copy_held(r->seg, nd, doff, &data, 1, 0, data.len, f);
	if (lost == VHCA_COPY_FAULT) {
		if (r->write) {
			vhca_resp_fault_ahead(f, r->dmalen - r->off);
			return VHCA_FAULT;
		}
		for (i = 0; i < nd; i++)
			if (r->seg[i].mr == f->mr && f->va >= r->seg[i].va &&
			    f->va - r->seg[i].va < r->seg[i].len)
				vhca_resp_fault_ahead(f, r->seg[i].va +
						      r->seg[i].len - f->va);
		return VHCA_FAULT;
	}
	if (lost)
		return r->write ? IB_WC_REM_ACCESS_ERR : IB_WC_LOC_PROT_ERR;
	r->off += data.len;
	return IB_WC_SUCCESS;
}

/**
 * vhca_resp_fault_work() - fault in the ODP pages a packet found missing
 * @work: the QP's resp.fault_work
 *
 * If that fails, or the packet found pages missing VHCA_ODP_TRIES times
 * in a row, its next miss fails it (vhca_resp_fault()).
 */
void vhca_resp_fault_work(struct work_struct *work)
{
	struct vhca_qp *qp = container_of(work, struct vhca_qp,
					  resp.fault_work);
	struct vhca_resp *r = &qp->resp;
	struct vhca_fault f = r->fault;	/* stable while fault_busy */
	int err;

	err = vhca_odp_fault(f.mr, f.va, f.len, f.write, true);
	vhca_odp_put(f.mr);
	spin_lock_bh(&r->lock);
	r->fault_busy = false;
	if (err || ++r->faults >= VHCA_ODP_TRIES)
		r->fault_failed = true;
	spin_unlock_bh(&r->lock);
}

/**
 * vhca_resp_fault_drain() - forget a fault not yet begun, for good
 * @qp: a QP being destroyed, which receives nothing any more
 */
void vhca_resp_fault_drain(struct vhca_qp *qp)
{
	if (cancel_work_sync(&qp->resp.fault_work))
		vhca_odp_put(qp->resp.fault.mr);
}

/*
 * A packet found the ODP pages @f missing.  Returns true if they are to
 * be faulted in (or are being): the packet is to come again.  False if
 * it fails instead: their fault failed (the flag is spent), or the MR is
 * going.  Caller holds qp->resp.lock, under rcu_read_lock().
 */
static bool vhca_resp_fault(struct vhca_qp *qp, const struct vhca_fault *f)
{
	struct vhca_resp *r = &qp->resp;

	if (r->fault_failed) {
		r->fault_failed = false;
		r->faults = 0;
		return false;
	}
	if (r->fault_busy)
		return true;	/* one at a time: perhaps this very one */
	if (!vhca_odp_get(f->mr))
		return false;
	r->fault = *f;
	r->fault_busy = true;
	queue_work(vhca_wq, &r->fault_work);
	return true;
}

/* An ACK, a NAK or an atomic ACK for @psn to @qp's requester. */
static void vhca_resp_ack(struct vhca_dev *vdev, struct vhca_qp *qp, u8 op,
			  u32 psn, u8 syndrome, u64 orig)
{
	struct vhca_tx_hdr h = {
		.opcode = vhca_qp_class(qp) | op,
		.dqpn = qp->attr.dest_qp_num,
		.psn = psn & VHCA_BTH_PSN_MASK,
		.has_aeth = true,
		.aeth = (u32)syndrome << 24 |
			(qp->resp.msn & VHCA_AETH_MSN_MASK),
		.has_orig = op == VHCA_OP_ATOMIC_ACK,
		.orig = orig,
	};
	struct sk_buff *skb;
	u8 *payload;

	skb = vhca_net_alloc(vdev, &h, 0, &payload);
	if (skb)	/* else lost: the requester asks again */
		vhca_net_send_qp(vdev, skb, qp);
}

static void vhca_resp_nak(struct vhca_dev *vdev, struct vhca_qp *qp, u32 psn,
			  u8 code)
{
	vhca_resp_ack(vdev, qp, VHCA_OP_ACK, psn, VHCA_AETH_NAK | code, 0);
}

/*
 * No more than one CNP per QP in this long: the requester cuts its window
 * at most once per 100 ms, and a queue marks many packets while it
 * drains.
 */
#define VHCA_CNP_GAP	(HZ / 100 ?: 1)

/*
 * Requests executed once and answered from the results the responder
 * keeps (struct vhca_atomic_res), a duplicate with them again.
 */
#define VHCA_PKT_RES	(VHCA_PKT_ATOMIC | VHCA_PKT_ATOMIC_WRITE | VHCA_PKT_FLUSH)

/*
 * A request that a queue on the way marked Congestion Experienced: tell
 * the requester with a CNP (annex A17.9.3), the BECN set, its DestQP the
 * requester's QP.  Caller holds qp->resp.lock.
 */
static void vhca_resp_cnp(struct vhca_dev *vdev, struct vhca_qp *qp)
{
	struct vhca_tx_hdr h = {
		.opcode = VHCA_OP_CNP,
		.dqpn = qp->attr.dest_qp_num,
		.becn = true,
	};
	struct sk_buff *skb;
	u8 *payload;

	if (time_before(jiffies, qp->resp.cnp_next))
		return;
	qp->resp.cnp_next = jiffies + VHCA_CNP_GAP;
	skb = vhca_net_alloc(vdev, &h, VHCA_CNP_LEN, &payload);
	if (!skb)
		return;	/* lost: the next mark sends another */
	memset(payload, 0, VHCA_CNP_LEN);
	vhca_count_qp(qp, VHCA_CNT_SENT_CNPS);
	vhca_net_send_qp(vdev, skb, qp);
}

/*
 * Where a QP's READ responses are sent from: the CPU that last freed one,
 * which is where the netdev reaps its transmit completions.  Sending from
 * another CPU makes the two contend for the transmit queue's lock on every
 * packet, and a vCPU spinning there while the holder's host thread is
 * preempted is the costliest thing an emulated host does.
 */
static void vhca_resp_rd_kick(struct vhca_qp *qp)
{
	int cpu = READ_ONCE(qp->rd_cpu);

	if (cpu < 0 || !cpu_online(cpu))
		cpu = raw_smp_processor_id();
	queue_work_on(cpu, vhca_tx_wq, &qp->rd_work);
}

/*
 * The destructor of a READ response packet: the netdev is done with it.
 * Any context.  Once half the QP's allowance is free, the READs waiting
 * go on in its rd_work: sending from here could re-enter the transmit
 * path of the netdev that is freeing the skb.
 */
static void vhca_resp_rd_free(struct sk_buff *skb)
{
	struct vhca_qp *qp = skb_shinfo(skb)->destructor_arg;
	int left;

	rcu_read_lock();	/* vhca_net_drain() waits for it */
	WRITE_ONCE(qp->rd_cpu, raw_smp_processor_id());
	left = atomic_dec_return(&qp->net_inflight);
	if (left <= VHCA_RD_INFLIGHT / 2 && READ_ONCE(qp->resp.rd_wait))
		vhca_resp_rd_kick(qp);
	if (!left)
		wake_up_var(&qp->net_inflight);
	rcu_read_unlock();
}

/*
 * Packets of one READ that rd_work has taken to send: what it needs of the
 * QP, copied under resp.lock, so that they are built and sent without it.
 */
struct vhca_rd_batch {
	struct vhca_rd_resp e;	/* the READ; e.sent is the first packet */
	u32 n;
	u32 dqpn;
	struct vhca_av av;
	union ib_gid sgid;
};

/*
 * Take the next packets of the oldest READ with any left to send: at most
 * VHCA_RD_BATCH, and no more than the QP has room for in flight, where
 * they count from now on.  Returns false if there are none to take.
 */
static bool vhca_resp_rd_take(struct vhca_qp *qp, struct vhca_rd_batch *b)
{
	struct vhca_resp *r = &qp->resp;
	struct vhca_rd_resp *e = NULL;
	u32 room;

	spin_lock_bh(&r->lock);
	WRITE_ONCE(r->rd_wait, false);
	for (; r->rd_head != r->rd_tail; r->rd_head++) {
		e = &r->rd[r->rd_head & (VHCA_RD_QUEUE - 1)];
		if (e->sent < e->npkts)
			break;
	}
	room = r->rd_head == r->rd_tail ? 0 :
	       vhca_net_room(qp, &r->rd_wait, VHCA_RD_INFLIGHT);
	if (room) {
		b->e = *e;
		b->n = min3(e->npkts - e->sent, room, VHCA_RD_BATCH);
		b->dqpn = qp->attr.dest_qp_num;
		b->av = qp->av;
		b->sgid = qp->sgid;
		e->sent += b->n;
		atomic_add(b->n, &qp->net_inflight);
	}
	spin_unlock_bh(&r->lock);
	return room;
}

/*
 * Send packet @b->e.sent of @b's READ from @src.  Returns false if there
 * was no memory: the requester finds the gap and asks again.
 */
static bool vhca_resp_rd_send(struct vhca_dev *vdev, struct vhca_qp *qp,
			      struct vhca_rd_batch *b, struct vhca_cursor *src)
{
	struct vhca_rd_resp *e = &b->e;
	u32 i = e->sent, k = min(e->len - i * e->mtu, e->mtu);
	struct vhca_tx_hdr h = {
		.dqpn = b->dqpn,
		.psn = (e->psn + i) & VHCA_BTH_PSN_MASK,
		.aeth = (VHCA_AETH_ACK | VHCA_AETH_NO_CREDITS) << 24 |
			(e->msn & VHCA_AETH_MSN_MASK),
	};
	u8 op = e->npkts == 1 ? VHCA_OP_READ_RESP_ONLY :
		!i ? VHCA_OP_READ_RESP_FIRST :
		i == e->npkts - 1 ? VHCA_OP_READ_RESP_LAST :
		VHCA_OP_READ_RESP_MIDDLE;
	struct vhca_cursor dst;
	struct sk_buff *skb;
	struct vhca_seg out;

	h.opcode = vhca_qp_class(qp) | op;
	h.has_aeth = op != VHCA_OP_READ_RESP_MIDDLE;
	skb = vhca_net_alloc(vdev, &h, k, &out.kdst);
	if (!skb)
		return false;
	out.len = k;
	dst = (struct vhca_cursor){ .seg = &out, .nseg = 1 };
	vhca_copy(&dst, src, k);
	skb->destructor = vhca_resp_rd_free;
	skb_shinfo(skb)->destructor_arg = qp;
	vhca_net_send_av(vdev, skb, qp, &b->av, &b->sgid);
	e->sent++;
	return true;
}

/*
 * The MR or window READ @e reads from, if its rkey still grants it.  An
 * XRC TGT QP's READ is of the PD of the XRC SRQ its request named, which
 * is made the QP's again under resp.lock, as for a packet; if that SRQ
 * is gone, so is the READ.  Under rcu_read_lock().
 */
static struct vhca_mr *vhca_resp_rd_mr(struct vhca_dev *vdev,
				       struct vhca_qp *qp,
				       const struct vhca_rd_resp *e)
{
	int access = IB_ACCESS_REMOTE_READ | VHCA_FIND_ODP;
	struct vhca_mr *mr = NULL;
	struct vhca_srq *srq;

	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT)
		return vhca_mr_find_remote(vdev, e->rkey, qp, access, e->va,
					   e->len);
	spin_lock(&qp->resp.lock);	/* bottom halves are off */
	srq = vhca_xsrq_find(qp, e->xsrqn, e->xsrq_uid);
	if (srq) {
		qp->xsrq = srq;
		mr = vhca_mr_find_remote(vdev, e->rkey, qp, access, e->va,
					 e->len);
	}
	spin_unlock(&qp->resp.lock);
	return mr;
}

/*
 * Send the packets of @b up to packet @end.  The MR is looked up again
 * for each batch: if the process deregistered it since the request, the
 * rest of that READ is never sent, as if lost, and the requester's retry
 * earns a remote access NAK.  An ODP MR's pages are held packet by
 * packet.  A packet that finds one missing stops the batch, with @odp
 * pending (fault them in and go on from that packet) or lost (the READ
 * fails).
 */
static void vhca_resp_rd_batch(struct vhca_dev *vdev, struct vhca_qp *qp,
			       struct vhca_rd_batch *b, u32 end,
			       struct vhca_odp_retry *odp)
{
	struct vhca_rd_resp *e = &b->e;
	struct vhca_cursor src, at;
	struct vhca_mr *mr = NULL;
	struct vhca_fault f;
	bool paged = false, ok;
	struct vhca_seg seg;
	u32 k;
	int err;

	rcu_read_lock();
	if (e->len) {
		mr = vhca_resp_rd_mr(vdev, qp, e);
		paged = mr && mr->type == VHCA_MR_ODP;
		if (mr && !paged && !vhca_mr_read_begin(mr, e->rkey))
			mr = NULL;
	}
	if (mr || !e->len) {
		seg = (struct vhca_seg){ .mr = mr, .va = e->va, .len = e->len };
		src = (struct vhca_cursor){ .seg = &seg, .nseg = 1 };
		vhca_cursor_skip(&src, e->sent * e->mtu);
		while (e->sent < end) {
			k = min(e->len - e->sent * e->mtu, e->mtu);
			at = src;
			err = paged ? vhca_cursor_hold(at, k, false, &f) : 0;
			if (err) {
				if (err == -EFAULT)	/* pending or lost */
					vhca_odp_miss(odp, &f);
				break;
			}
			ok = vhca_resp_rd_send(vdev, qp, b, &src);
			if (paged)
				vhca_cursor_release(at, k);
			if (!ok)
				break;
		}
	}
	if (mr && !paged)
		vhca_mr_read_end(mr);
	rcu_read_unlock();
	if (odp->pending)
		vhca_resp_fault_ahead(&odp->fault,
				      e->len - e->sent * e->mtu);
}

/*
 * A READ whose pages cannot be had (@e, from its packet e->sent on): none
 * of the rest is sent, and the requester gets a remote access NAK.
 */
static void vhca_resp_rd_refuse(struct vhca_dev *vdev, struct vhca_qp *qp,
				const struct vhca_rd_resp *e)
{
	struct vhca_resp *r = &qp->resp;
	struct vhca_rd_resp *q;
	unsigned int i;

	spin_lock_bh(&r->lock);
	for (i = r->rd_head; i != r->rd_tail; i++) {
		q = &r->rd[i & (VHCA_RD_QUEUE - 1)];
		if (q->psn == e->psn)
			q->sent = q->npkts;
	}
	vhca_resp_nak(vdev, qp, e->psn + e->sent, VHCA_NAK_REM_ACCESS);
	spin_unlock_bh(&r->lock);
}

/**
 * vhca_resp_rd_work() - send the READs a QP answers
 * @work: the QP's rd_work, kicked by each READ request and as the QP's
 *	packets in flight are freed
 *
 * resp.lock is held only to take a batch: the requests arriving on other
 * CPUs do not wait while it is built and sent.  ODP pages a batch finds
 * missing are faulted in here, as every engine step does (vhca_odp_miss()),
 * and the batch goes on.
 */
void vhca_resp_rd_work(struct work_struct *work)
{
	struct vhca_qp *qp = container_of(work, struct vhca_qp, rd_work);
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_odp_retry odp = {};
	struct vhca_rd_batch b;
	u32 end;

	while (vhca_resp_rd_take(qp, &b)) {
		end = b.e.sent + b.n;
		vhca_odp_retry_reset(&odp);
		for (;;) {
			/* as in softirq, where the rest of the responder runs */
			local_bh_disable();
			vhca_resp_rd_batch(vdev, qp, &b, end, &odp);
			local_bh_enable();
			if (!odp.pending)
				break;
			vhca_odp_resolve(&odp);
		}
		if (odp.lost)
			vhca_resp_rd_refuse(vdev, qp, &b.e);
		/* what was taken and not sent no longer counts */
		if (b.e.sent < end &&
		    !atomic_sub_return(end - b.e.sent, &qp->net_inflight))
			wake_up_var(&qp->net_inflight);
		cond_resched();
	}
}

/**
 * vhca_resp_rd_drain() - stop answering READs, for good
 * @qp: an RC QP being destroyed, which receives nothing any more
 *
 * Waits until the netdev has freed every READ response packet of @qp, for
 * their destructor refers to it.  The qdisc frees what it holds when the
 * netdev goes down, so the wait ends.
 */
void vhca_resp_rd_drain(struct vhca_qp *qp)
{
	spin_lock_bh(&qp->resp.lock);
	vhca_resp_rd_forget(&qp->resp);
	spin_unlock_bh(&qp->resp.lock);
	vhca_net_drain(qp);
	cancel_work_sync(&qp->rd_work);
}

/*
 * A duplicate READ request: the requester lost responses, or timed out,
 * and asks again, for the whole of a READ or for the rest of it from a
 * packet on.  It is answered only from the READ it repeats, one of those
 * remembered, and from the packet it asks for: sending the rest of an
 * answer under way first would keep the requester waiting for nothing it
 * can use, beyond its timeout.  A request that repeats no READ (or names
 * other bytes than the one it claims to repeat) is dropped: taken as new
 * it would have one small packet stream a whole MR.  Returns true if it
 * was answered.
 */
static bool vhca_resp_read_again(struct vhca_qp *qp,
				 const struct vhca_resp_msg *m)
{
	struct vhca_resp *r = &qp->resp;
	struct vhca_rd_resp *e;
	unsigned int i;
	s32 d;

	for (i = r->rd_tail; i != r->rd_old; i--) {
		e = &r->rd[(i - 1) & (VHCA_RD_QUEUE - 1)];
		d = vhca_psn_diff(m->psn, e->psn);
		if (d < 0 || d >= e->npkts)
			continue;
		if (m->rkey != e->rkey || m->va != e->va + (u64)d * e->mtu ||
		    m->dmalen != e->len - d * e->mtu)
			return false;
		e->sent = d;
		/* what lies between was all sent: rd_take() steps over it */
		if ((int)(i - 1 - r->rd_head) < 0)
			r->rd_head = i - 1;
		return true;
	}
	return false;
}

/* READs taken whose responses are not all sent. */
static unsigned int vhca_resp_rd_pending(const struct vhca_resp *r)
{
	unsigned int i, n = 0;

	for (i = r->rd_head; i != r->rd_tail; i++) {
		const struct vhca_rd_resp *e = &r->rd[i & (VHCA_RD_QUEUE - 1)];

		n += e->sent < e->npkts;
	}
	return n;
}

/*
 * Take a new RDMA READ request: queued, its packets of the path MTU with
 * PSNs from the request's on; *@npkts says how many.  No more READs wait
 * to be answered than max_dest_rd_atomic, the responder resources the
 * requester was given: a requester within its max_rd_atomic never meets
 * that bound, as a READ it has outstanding is never answered twice over.
 * Returns a NAK code, or -1 once taken.  Caller holds qp->resp.lock.
 */
static int vhca_resp_read(struct vhca_dev *vdev, struct vhca_qp *qp,
			  const struct vhca_resp_msg *m, u32 *npkts)
{
	u32 mtu = vhca_qp_mtu(vdev, qp);
	struct vhca_resp *r = &qp->resp;

	*npkts = m->dmalen ? DIV_ROUND_UP(m->dmalen, mtu) : 1;
	if (m->dmalen > SZ_2G)
		return VHCA_NAK_INV_REQ;	/* IBA: 2^31 bytes at most */
	if (vhca_resp_rd_pending(r) >= READ_ONCE(qp->attr.max_dest_rd_atomic))
		return VHCA_NAK_INV_REQ;
	if (m->dmalen) {
		if (!(READ_ONCE(qp->attr.qp_access_flags) &
		      IB_ACCESS_REMOTE_READ))
			return VHCA_NAK_REM_ACCESS;
		if (!vhca_mr_find_remote(vdev, m->rkey, qp,
					 IB_ACCESS_REMOTE_READ | VHCA_FIND_ODP,
					 m->va, m->dmalen))
			return VHCA_NAK_REM_ACCESS;
	}
	/* the oldest READ remembered makes room, once it is all sent */
	if (r->rd_tail - r->rd_old == VHCA_RD_QUEUE) {
		if (r->rd_old == r->rd_head)
			return VHCA_NAK_INV_REQ;
		r->rd_old++;
	}
	r->rd[r->rd_tail++ & (VHCA_RD_QUEUE - 1)] = (struct vhca_rd_resp){
		.va = m->va, .rkey = m->rkey, .len = m->dmalen,
		.psn = m->psn, .msn = r->msn, .mtu = mtu, .npkts = *npkts,
		.xsrqn = r->xsrqn, .xsrq_uid = r->xsrq_uid,
	};
	vhca_resp_rd_kick(qp);
	return -1;
}

/*
 * What vhca_atomic() or vhca_atomic_store() returned, as a NAK code, or
 * -1 for none: -EACCES, the key invalidated since it was found; -EINVAL,
 * the word not aligned in memory.
 */
static int vhca_resp_atomic_nak(int err)
{
	switch (err) {
	case 0:
		return -1;
	case -EACCES:
		return VHCA_NAK_REM_ACCESS;
	default:
		return VHCA_NAK_INV_REQ;
	}
}

/*
 * What vhca_atomic() or vhca_atomic_store() returned, as a NAK code, -1
 * for none, or VHCA_RESP_FAULT for an ODP page to fault in (@f).
 */
static int vhca_resp_atomic_err(int err, struct vhca_fault *f)
{
	if (err != -EFAULT)
		return vhca_resp_atomic_nak(err);
	vhca_resp_fault_ahead(f, sizeof(u64));
	return VHCA_RESP_FAULT;
}

/*
 * Execute an atomic request.  Returns a NAK code, -1 with *@orig, or
 * VHCA_RESP_FAULT with @f.
 */
static int vhca_resp_atomic(struct vhca_dev *vdev, struct vhca_qp *qp,
			    const struct vhca_resp_msg *m, u64 *orig,
			    struct vhca_fault *f)
{
	struct vhca_mr *mr;

	if (m->va & 7 || !READ_ONCE(qp->attr.max_dest_rd_atomic))
		return VHCA_NAK_INV_REQ;	/* misaligned; no resources */
	if (!(READ_ONCE(qp->attr.qp_access_flags) & IB_ACCESS_REMOTE_ATOMIC))
		return VHCA_NAK_REM_ACCESS;
	mr = vhca_mr_find_remote(vdev, m->rkey, qp,
				 IB_ACCESS_REMOTE_ATOMIC | VHCA_FIND_ODP,
				 m->va, sizeof(u64));
	if (!mr)
		return VHCA_NAK_REM_ACCESS;
	return vhca_resp_atomic_err(vhca_atomic(mr, m->rkey, m->va,
						m->op == VHCA_OP_CMP_SWAP,
						m->compare, m->swap, orig, f),
				    f);
}

/*
 * Execute an ATOMIC WRITE request: exactly 8 bytes, to an aligned word,
 * with write access.  It takes a responder resource, as an atomic does,
 * so a duplicate is answered without storing again.  Returns as
 * vhca_resp_atomic() does.
 */
static int vhca_resp_atomic_write(struct vhca_dev *vdev, struct vhca_qp *qp,
				  const struct vhca_resp_msg *m,
				  struct vhca_fault *f)
{
	struct vhca_mr *mr;
	u64 val;

	if (m->len != sizeof(u64) || m->dmalen != sizeof(u64) || m->va & 7 ||
	    !READ_ONCE(qp->attr.max_dest_rd_atomic))
		return VHCA_NAK_INV_REQ;
	if (!(READ_ONCE(qp->attr.qp_access_flags) & IB_ACCESS_REMOTE_WRITE))
		return VHCA_NAK_REM_ACCESS;
	mr = vhca_mr_find_remote(vdev, m->rkey, qp,
				 IB_ACCESS_REMOTE_WRITE | VHCA_FIND_ODP,
				 m->va, sizeof(u64));
	if (!mr)
		return VHCA_NAK_REM_ACCESS;
	memcpy(&val, m->data, sizeof(val));	/* in memory order */
	return vhca_resp_atomic_err(vhca_atomic_store(mr, m->rkey, m->va, val,
						      f), f);
}

/*
 * What answers an atomic, ATOMIC WRITE or FLUSH, first time or again: an
 * atomic ACK with the original value, or for the other two a READ
 * response of no bytes, as rxe sends; vhca's requester takes that or an
 * ACK.
 */
static void vhca_resp_atomic_ack(struct vhca_dev *vdev, struct vhca_qp *qp,
				 const struct vhca_atomic_res *res)
{
	vhca_resp_ack(vdev, qp, res->kind == VHCA_PKT_ATOMIC ?
			  VHCA_OP_ATOMIC_ACK : VHCA_OP_READ_RESP_ONLY,
		      res->psn, VHCA_AETH_NO_CREDITS, res->orig);
}

/*
 * A request the responder has seen before (its PSN is behind): its ACK,
 * READ response or atomic result was lost.  A READ is answered again, an
 * atomic from the results kept (never executed twice).  A SEND or WRITE
 * gets an ACK of all that was received, unless the newest request is
 * one answered by a response of its own: that response acknowledges the
 * duplicate too, and no ACK may name a PSN at or behind a READ that
 * rxe's requester (6.12) is still receiving.  An ACK of the READ's last
 * PSN completes the READ there without the data still to come (seen as
 * nvmet-rdma on rxe writing zeros for the last packet of a READ from
 * vhca); an ACK behind it makes the next response packet fail the QP.
 * An ACK of a PSN beyond the READ is safe: the READ is asked again.
 */
static void vhca_resp_duplicate(struct vhca_dev *vdev, struct vhca_qp *qp,
				const struct vhca_resp_msg *m)
{
	struct vhca_resp *r = &qp->resp;
	unsigned int i;

	if (m->flags & VHCA_PKT_READ) {
		if (vhca_resp_read_again(qp, m))
			vhca_resp_rd_kick(qp);
		else
			vhca_count_qp(qp, VHCA_CNT_RCVD_UNEXPECTED);
		return;
	}
	if (m->flags & VHCA_PKT_RES) {
		for (i = 0; i < VHCA_RESP_ATOMIC_RES; i++) {
			if (r->atomic[i].valid && r->atomic[i].psn == m->psn &&
			    r->atomic[i].kind == (m->flags & VHCA_PKT_RES)) {
				vhca_resp_atomic_ack(vdev, qp, &r->atomic[i]);
				return;
			}
		}
		return;	/* too old to answer: the requester times out */
	}
	if (!r->answered)
		vhca_resp_ack(vdev, qp, VHCA_OP_ACK, r->epsn - 1,
			      VHCA_AETH_NO_CREDITS, 0);
}

/* The NAK a responder's placement error earns. */
static u8 vhca_resp_nak_code(int status)
{
	switch (status) {
	case IB_WC_REM_ACCESS_ERR:
		return VHCA_NAK_REM_ACCESS;
	case IB_WC_LOC_PROT_ERR:
		return VHCA_NAK_REM_OP;
	default:
		return VHCA_NAK_INV_REQ;
	}
}

/*
 * Execute a FLUSH request (vhca_flush()): no payload, and a FETH with
 * nothing in its reserved bits.  It takes a responder resource, as an
 * ATOMIC WRITE does, so a duplicate is answered from it; it does not need
 * max_dest_rd_atomic, as rxe's responder does not (nor does rxe's
 * requester count it in max_rd_atomic).  Returns a NAK code, or -1.
 */
static int vhca_resp_flush(struct vhca_qp *qp, const struct vhca_resp_msg *m)
{
	int status;

	if (m->len || m->feth & ~(VHCA_FETH_PLT_MASK | VHCA_FETH_SEL_MASK))
		return VHCA_NAK_INV_REQ;
	status = vhca_flush(qp, m->rkey, m->va, m->dmalen,
			    m->feth & VHCA_FETH_PLT_MASK,
			    (m->feth & VHCA_FETH_SEL_MASK) >> VHCA_FETH_SEL_SHIFT);
	return status == IB_WC_SUCCESS ? -1 : vhca_resp_nak_code(status);
}

/*
 * An RNR NAK for @psn: it is to come again after the responder's timer.
 * For a page fault, the packets behind it that are on their way get no
 * sequence NAK: the requester sends them again after @psn anyway.
 */
static void vhca_resp_rnr(struct vhca_dev *vdev, struct vhca_qp *qp, u32 psn,
			  bool fault)
{
	if (fault) {
		qp->resp.nak_sent = true;
		vhca_count_qp(qp, VHCA_CNT_ODP_RNR);
	}
	vhca_resp_ack(vdev, qp, VHCA_OP_ACK, psn,
		      VHCA_AETH_RNR_NAK | (qp->attr.min_rnr_timer & 0x1f), 0);
}

/*
 * An RC request with the PSN expected next: executed, and acknowledged
 * if the requester asked.  A SEND with no receive WQE, and a packet that
 * found an ODP page missing, get an RNR NAK and leave the PSN where it
 * was, so the requester's retry is the same request.  Caller holds
 * qp->resp.lock.
 */
static void vhca_resp_execute(struct vhca_dev *vdev, struct vhca_qp *qp,
			      const struct vhca_resp_msg *m, bool first,
			      bool last, bool imm)
{
	bool write = m->flags & VHCA_PKT_WRITE;
	bool inv = m->flags & VHCA_PKT_INV;
	struct vhca_resp *r = &qp->resp;
	struct vhca_fault f;
	int nak, status;
	u32 npkts;
	u64 orig;

	if (m->flags & VHCA_PKT_READ) {
		r->msn++;
		nak = vhca_resp_read(vdev, qp, m, &npkts);
		if (nak >= 0) {
			r->msn--;
			vhca_resp_nak(vdev, qp, m->psn, nak);
			return;
		}
		r->epsn = (m->psn + npkts) & VHCA_BTH_PSN_MASK;
		r->answered = true;
		return;
	}
	if (m->flags & VHCA_PKT_RES) {
		u32 kind = m->flags & VHCA_PKT_RES;
		struct vhca_atomic_res *res = &r->atomic[r->atomic_next];

		orig = 0;
		if (kind == VHCA_PKT_ATOMIC_WRITE)
			nak = vhca_resp_atomic_write(vdev, qp, m, &f);
		else if (kind == VHCA_PKT_FLUSH)
			nak = vhca_resp_flush(qp, m);
		else
			nak = vhca_resp_atomic(vdev, qp, m, &orig, &f);
		if (nak == VHCA_RESP_FAULT) {
			if (vhca_resp_fault(qp, &f)) {
				vhca_resp_rnr(vdev, qp, m->psn, true);
				return;
			}
			nak = VHCA_NAK_REM_ACCESS;
		}
		r->faults = 0;
		if (nak >= 0) {
			vhca_resp_nak(vdev, qp, m->psn, nak);
			return;
		}
		r->msn++;
		*res = (struct vhca_atomic_res){
			.valid = true, .kind = kind, .psn = m->psn, .orig = orig,
		};
		r->atomic_next = (r->atomic_next + 1) % VHCA_RESP_ATOMIC_RES;
		r->epsn = (m->psn + 1) & VHCA_BTH_PSN_MASK;
		r->answered = true;
		vhca_resp_atomic_ack(vdev, qp, res);
		return;
	}

	if (first) {
		r->active = true;
		r->write = write;
		r->off = 0;
		r->va = m->va;
		r->rkey = m->rkey;
		r->dmalen = m->dmalen;
	} else if (!r->active || r->write != write) {
		vhca_resp_nak(vdev, qp, m->psn, VHCA_NAK_INV_REQ);
		return;
	}
	if (!write || (imm && last)) {
		status = vhca_resp_take_wqe(qp, m, last);
		if (status == -EAGAIN) {
			vhca_count_qp(qp, VHCA_CNT_RCVD_NO_WQE);
			vhca_resp_rnr(vdev, qp, m->psn, false);
			return;
		}
		if (status) {
			r->active = false;
			vhca_resp_nak(vdev, qp, m->psn, VHCA_NAK_INV_REQ);
			return;
		}
	}
	/*
	 * A matched eager message's header lands nowhere, nor does all of a
	 * rendezvous read later (one packet: vhca_tm_take())
	 */
	if (first)
		r->skip = write ? 0 :
			  r->tm.kind == VHCA_TM_EAGER ? VHCA_TMH_LEN :
			  r->tm.kind == VHCA_TM_RNDV ? U32_MAX : 0;
	status = vhca_resp_place(vdev, qp, m, &f);
	if (status == VHCA_FAULT) {
		if (vhca_resp_fault(qp, &f)) {
			vhca_resp_rnr(vdev, qp, m->psn, true);
			return;
		}
		status = write ? IB_WC_REM_ACCESS_ERR : IB_WC_LOC_PROT_ERR;
	}
	r->faults = 0;
	if (status == IB_WC_SUCCESS && inv && last &&
	    !vhca_invalidate(vdev, qp, be32_to_cpu(m->imm), true))
		status = IB_WC_LOC_PROT_ERR;
	if (status != IB_WC_SUCCESS) {
		if (r->have_wqe)
			vhca_resp_done(qp, status, 0, NULL);
		r->active = false;
		vhca_resp_nak(vdev, qp, m->psn, vhca_resp_nak_code(status));
		return;
	}
	r->epsn = (m->psn + 1) & VHCA_BTH_PSN_MASK;
	r->answered = false;
	if (last) {
		r->active = false;
		r->msn++;
		if (r->have_wqe)
			vhca_resp_done(qp, IB_WC_SUCCESS,
				       write ? r->dmalen : r->off, m);
	}
	if (m->ackreq)
		vhca_resp_ack(vdev, qp, VHCA_OP_ACK, m->psn,
			      VHCA_AETH_NO_CREDITS, 0);
}

/*
 * XRC: the XRC SRQ the XRCETH of @m names, in the TGT QP's domain, made
 * the one the QP receives with (qp->xsrq): its receive WQEs, CQ and PD.
 * The packets of a message name the same SRQ, the one that gave the
 * receive WQE held; a WQE held for an SRQ since destroyed went with it.
 * Returns a NAK code, or -1.  Caller holds qp->resp.lock.
 */
static int vhca_resp_xsrq(struct vhca_qp *qp, const struct vhca_resp_msg *m)
{
	struct vhca_resp *r = &qp->resp;
	bool cont = r->have_wqe || (r->active && !(m->flags & VHCA_PKT_FIRST));
	struct vhca_srq *srq;

	if (cont && m->xrcsrq != r->xsrqn)
		return VHCA_NAK_INV_REQ;
	srq = vhca_xsrq_find(qp, m->xrcsrq, cont ? r->xsrq_uid : 0);
	if (!srq) {
		r->have_wqe = false;
		r->active = false;
		return VHCA_NAK_REM_ACCESS;
	}
	qp->xsrq = srq;
	r->xsrqn = srq->srqn;
	r->xsrq_uid = srq->uid;
	return -1;
}

/*
 * An RC request packet: in PSN order it is executed; behind, it is a
 * duplicate; ahead, one was lost, and a sequence NAK (one per gap) asks
 * for it again.  Caller holds qp->resp.lock.
 */
static void vhca_resp_rc(struct vhca_dev *vdev, struct vhca_qp *qp,
			 const struct vhca_resp_msg *m, bool first, bool last,
			 bool imm)
{
	struct vhca_resp *r = &qp->resp;
	s32 d = vhca_psn_diff(m->psn, r->epsn);
	int nak;

	if (m->ce)
		vhca_resp_cnp(vdev, qp);
	if (d > 0) {
		if (!r->nak_sent) {
			r->nak_sent = true;
			vhca_count_qp(qp, VHCA_CNT_SENT_SEQ_NAKS);
			vhca_resp_nak(vdev, qp, r->epsn, VHCA_NAK_PSN_SEQ);
		}
		return;
	}
	if (d < 0) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_DUPLICATES);
		vhca_resp_duplicate(vdev, qp, m);
		return;
	}
	r->nak_sent = false;
	if (m->xrc) {
		nak = vhca_resp_xsrq(qp, m);
		if (nak >= 0) {
			vhca_resp_nak(vdev, qp, m->psn, nak);
			return;
		}
	}
	vhca_resp_execute(vdev, qp, m, first, last, imm);
}

/*
 * A UC packet's place in its message, as the IBA has it: packets in PSN
 * order make a message; a packet out of order drops the message under
 * way, and only a FIRST or ONLY starts the next.  Returns false to drop
 * the packet.
 */
static bool vhca_resp_uc_begin(struct vhca_qp *qp,
			       const struct vhca_resp_msg *m)
{
	struct vhca_resp *r = &qp->resp;
	bool write = m->flags & VHCA_PKT_WRITE;

	if (m->psn != r->epsn)
		r->dropping = true;	/* a packet was lost: so is the message */
	r->epsn = (m->psn + 1) & VHCA_BTH_PSN_MASK;
	if (m->flags & VHCA_PKT_FIRST) {
		if (vhca_resp_start(qp, m, write))
			return true;
	} else if (r->active && !r->dropping && r->write == write) {
		return true;
	}
	r->dropping = true;
	return false;
}

/*
 * Place a UC packet vhca_resp_uc_begin() let in, and complete its message
 * if it is the last.  A message with a bad key or that does not fit is
 * dropped (a SEND's receive WQE then completes in error).  Returns
 * VHCA_FAULT if the packet found an ODP page missing that @odp is to
 * fault in: the packet changed nothing and is to be placed again.
 */
static int vhca_resp_uc_place(struct vhca_dev *vdev, struct vhca_qp *qp,
			      const struct vhca_resp_msg *m,
			      struct vhca_odp_retry *odp)
{
	bool write = m->flags & VHCA_PKT_WRITE;
	struct vhca_resp *r = &qp->resp;
	struct vhca_fault f;
	int status;

	status = vhca_resp_place(vdev, qp, m, &f);
	if (status == VHCA_FAULT) {
		if (vhca_odp_miss(odp, &f))
			return VHCA_FAULT;
		/* its fault failed: as if the key had gone */
		status = write ? IB_WC_REM_ACCESS_ERR : IB_WC_LOC_PROT_ERR;
	}
	if (status != IB_WC_SUCCESS) {
		if (!write)
			vhca_resp_done(qp, status, 0, NULL);
		r->active = false;
		return 0;
	}
	if (!(m->flags & VHCA_PKT_LAST))
		return 0;
	r->active = false;
	if (!write) {
		vhca_resp_done(qp, IB_WC_SUCCESS, r->off, m);
	} else if (m->flags & VHCA_PKT_IMM) {
		/* a WRITE with immediate data consumes a receive WQE */
		if (vhca_resp_start(qp, m, false))
			vhca_resp_done(qp, IB_WC_SUCCESS, r->dmalen, m);
		r->active = false;
	}
	return 0;
}

/* A held UC packet (struct vhca_held), delivered by held_work. */
static int vhca_resp_uc_held(struct vhca_qp *qp, struct vhca_held *h)
{
	if (!h->begun) {
		if (!vhca_resp_uc_begin(qp, &h->uc))
			return 0;
		h->begun = true;
	}
	return vhca_resp_uc_place(to_vdev(qp->ibqp.device), qp, &h->uc,
				  &qp->resp.hodp);
}

/*
 * Hold UC packet @m for held_work: @begun, one that found an ODP page
 * missing (resp.hodp has it), else one that came behind such a one.  One
 * that cannot be held is lost, and with it its message; the receive WQE
 * it took stays for the next, and the fault is made for it.
 */
static void vhca_resp_uc_hold(struct vhca_qp *qp,
			      const struct vhca_resp_msg *m, bool begun)
{
	struct vhca_held *h = vhca_held_new(qp, m->data, m->len, begun);

	if (!h) {
		if (begun)
			qp->resp.dropping = true;
		return;
	}
	h->uc = *m;
	h->uc.data = h->data;
	h->uc.skb = NULL;	/* its path was checked */
	h->deliver = vhca_resp_uc_held;
	vhca_held_add(qp, h);
}

/**
 * vhca_resp_recv() - a UC, RC or XRC request packet for QP @m->dqpn
 * @vdev: the device it arrived on
 * @m: the packet
 *
 * RC and XRC go to vhca_resp_rc().  UC is placed as it comes
 * (vhca_resp_uc_begin()); nothing goes back to the sender.  A UC packet
 * that finds an ODP page missing is held with those behind it, in order,
 * until the page is faulted in (vhca_held.c).  Softirq context, under
 * rcu_read_lock().
 */
void vhca_resp_recv(struct vhca_dev *vdev, const struct vhca_resp_msg *m)
{
	struct vhca_qp *qp = xa_load(&vdev->qp_xa, m->dqpn);
	struct vhca_resp *r;

	if (!qp || qp->ibqp.qp_type != (m->xrc ? IB_QPT_XRC_TGT :
					m->rc ? IB_QPT_RC : IB_QPT_UC) ||
	    !vhca_qps_receives(READ_ONCE(qp->state))) {
		vhca_count(vdev, VHCA_CNT_RCVD_PKTS);
		vhca_count(vdev, VHCA_CNT_RCVD_NO_QP);
		return;
	}
	vhca_count_qp(qp, VHCA_CNT_RCVD_PKTS);

	r = &qp->resp;
	spin_lock_bh(&r->lock);
	if (r->closed)
		goto out;	/* in ERR since the check above */
	if (!vhca_net_on_path(m->skb, &qp->av, &qp->sgid)) {
		vhca_count_qp(qp, VHCA_CNT_RCVD_OFF_PATH);
		goto out;
	}
	if (m->rc) {
		vhca_resp_rc(vdev, qp, m, m->flags & VHCA_PKT_FIRST,
			     m->flags & VHCA_PKT_LAST, m->flags & VHCA_PKT_IMM);
		goto out;
	}
	if (r->held_run)
		vhca_resp_uc_hold(qp, m, false);
	else if (vhca_resp_uc_begin(qp, m) &&
		 vhca_resp_uc_place(vdev, qp, m, &r->hodp) == VHCA_FAULT)
		vhca_resp_uc_hold(qp, m, true);
out:
	spin_unlock_bh(&r->lock);
}
