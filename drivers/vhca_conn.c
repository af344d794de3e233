// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Connected service on the wire: UC messages to and from a QP on another
 * host, in packets of the path MTU with consecutive PSNs.  The local path
 * (vhca_engine.c) moves a whole message at once; here a message is a
 * sequence of packets, and the responder keeps, per QP, where the message
 * under way is (struct vhca_resp).
 */
#include "vhca_roce.h"
#include "vhca.h"

/* The operation part of a connected opcode for one packet of a message. */
static u8 vhca_conn_op(bool write, bool first, bool last, bool imm)
{
	if (first && last)
		return write ? (imm ? VHCA_OP_WRITE_ONLY_IMM : VHCA_OP_WRITE_ONLY) :
			       (imm ? VHCA_OP_SEND_ONLY_IMM : VHCA_OP_SEND_ONLY);
	if (first)
		return write ? VHCA_OP_WRITE_FIRST : VHCA_OP_SEND_FIRST;
	if (last)
		return write ? (imm ? VHCA_OP_WRITE_LAST_IMM : VHCA_OP_WRITE_LAST) :
			       (imm ? VHCA_OP_SEND_LAST_IMM : VHCA_OP_SEND_LAST);
	return write ? VHCA_OP_WRITE_MIDDLE : VHCA_OP_SEND_MIDDLE;
}

/*
 * A UC SEND or WRITE to a QP on another host: the message in packets of
 * the path MTU, each with the next PSN.  UC is unacknowledged: the WQE is
 * done when the last packet has left, and a lost packet is the
 * responder's to notice.
 */
int vhca_uc_wire(struct vhca_dev *vdev, struct vhca_qp *qp,
		 const struct vhca_swqe *w, struct vhca_seg *sseg,
		 unsigned int ns, u32 len)
{
	bool write = w->opcode == IB_UVERBS_WR_RDMA_WRITE ||
		     w->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	bool imm = w->opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
		   w->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	enum ib_mtu pmtu = min(qp->attr.path_mtu, READ_ONCE(vdev->active_mtu));
	int mtu = ib_mtu_enum_to_int(pmtu);
	u32 off = 0, n;
	struct vhca_cursor src = { .seg = sseg, .nseg = ns }, dst;
	struct vhca_tx_hdr h = {
		.dqpn = qp->attr.dest_qp_num,
		.va = w->rdma.remote_addr,
		.rkey = w->rdma.rkey,
		.dmalen = len,
		.imm = (__force __be32)w->ex,
	};
	struct vhca_seg out;
	struct sk_buff *skb;
	struct vhca_av av;

	/* packets no larger than the path MTU or the netdev can carry */
	if (mtu <= 0 || vhca_av_from_ah(&qp->attr.ah_attr, &av))
		return IB_WC_LOC_QP_OP_ERR;
	do {
		bool first = !off, last;

		n = min(len - off, (u32)mtu);
		last = off + n == len;
		h.opcode = VHCA_OP_UC | vhca_conn_op(write, first, last, imm);
		h.psn = qp->attr.sq_psn;
		qp->attr.sq_psn = (qp->attr.sq_psn + 1) & VHCA_BTH_PSN_MASK;
		h.se = last && (w->flags & VHCA_SWQE_F_SOLICITED);
		h.has_reth = write && first;
		h.has_imm = imm && last;
		skb = vhca_net_alloc(vdev, &h, n, &out.kdst);
		if (!skb)
			return IB_WC_SUCCESS;	/* lost: UC never knows */
		out.len = n;
		dst = (struct vhca_cursor){ .seg = &out, .nseg = 1 };
		vhca_copy(&dst, &src, n);
		vhca_net_send(vdev, skb, &av, qp->ibqp.qp_num);
		off += n;
	} while (off < len);
	return IB_WC_SUCCESS;
}

/* Move @c forward by @n bytes; the caller knows they are there. */
static void vhca_cursor_skip(struct vhca_cursor *c, u32 n)
{
	while (n) {
		u32 k = min(n, c->seg->len - c->off);

		c->off += k;
		n -= k;
		if (c->off == c->seg->len) {
			c->seg++;
			c->off = 0;
		}
	}
}

/* Complete the receive WQE a UC message holds; it is the QP's no more. */
static void vhca_resp_done(struct vhca_qp *qp, u8 status, u32 len,
			   const struct vhca_swqe *w)
{
	qp->resp.have_wqe = false;
	vhca_recv_done(qp, qp->resp.wqe->wr_id, status, len, w,
		       qp->attr.dest_qp_num);
}

/*
 * Start a UC message with its FIRST or ONLY packet.  A SEND takes a
 * receive WQE, unless the one a dropped message left is still held (the
 * IBA lets UC reuse it).  Returns false to drop the message.
 */
static bool vhca_resp_start(struct vhca_qp *qp, const struct vhca_conn_msg *m,
			    bool write)
{
	struct vhca_resp *r = &qp->resp;
	u32 max_sge;

	r->active = true;
	r->dropping = false;
	r->write = write;
	r->off = 0;
	if (write) {
		r->va = m->va;
		r->rkey = m->rkey;
		r->dmalen = m->dmalen;
		return true;
	}
	if (!r->have_wqe) {
		if (!vhca_pop_recv(qp, r->wqe, &max_sge))
			return false;	/* UC: no receive, no message */
		r->have_wqe = true;
		if (r->wqe->num_sge > max_sge) {
			vhca_resp_done(qp, IB_WC_LOC_QP_OP_ERR, 0, NULL);
			return false;
		}
	}
	return true;
}

/*
 * Place one packet's payload at offset r->off of the message: into the
 * held receive WQE's buffers, or at the WRITE's remote address.  Keys are
 * looked up again for each packet.  Returns an IB_WC_* status.
 */
static int vhca_resp_place(struct vhca_dev *vdev, struct vhca_qp *qp,
			   const struct vhca_conn_msg *m)
{
	struct vhca_resp *r = &qp->resp;
	struct vhca_seg data = { .kbuf = m->data, .len = m->len };
	struct vhca_cursor src = { .seg = &data, .nseg = 1 }, dst;
	unsigned int nd = 0;
	struct vhca_mr *mr;
	s64 room;

	if (!m->len)
		return IB_WC_SUCCESS;
	if (r->write) {
		if (r->off + m->len > r->dmalen)
			return IB_WC_LOC_LEN_ERR;
		if (!(READ_ONCE(qp->attr.qp_access_flags) &
		      IB_ACCESS_REMOTE_WRITE))
			return IB_WC_REM_ACCESS_ERR;
		mr = vhca_mr_find(vdev, r->rkey, qp->ibqp.pd,
				  IB_ACCESS_REMOTE_WRITE, r->va + r->off,
				  m->len);
		if (!mr)
			return IB_WC_REM_ACCESS_ERR;
		r->seg[0] = (struct vhca_seg){ .mr = mr, .va = r->va + r->off,
					       .len = m->len };
		dst = (struct vhca_cursor){ .seg = r->seg, .nseg = 1 };
	} else {
		room = vhca_sges(vdev, r->wqe->sge, r->wqe->num_sge,
				 qp->ibqp.pd, IB_ACCESS_LOCAL_WRITE, r->seg,
				 &nd);
		if (room < 0)
			return IB_WC_LOC_PROT_ERR;
		if (r->off + m->len > room)
			return IB_WC_LOC_LEN_ERR;
		dst = (struct vhca_cursor){ .seg = r->seg, .nseg = nd };
		vhca_cursor_skip(&dst, r->off);
	}
	vhca_copy(&dst, &src, m->len);
	r->off += m->len;
	return IB_WC_SUCCESS;
}

/**
 * vhca_conn_recv() - a UC packet from the wire for QP @m->dqpn
 * @vdev: the device it arrived on
 * @m: the packet
 *
 * UC as the IBA has it: packets in PSN order make a message; a packet out
 * of order drops the message under way, and only a FIRST or ONLY starts
 * the next.  A message with no receive WQE, a bad key or that does not fit
 * is dropped (a SEND's WQE then completes in error).  Nothing goes back
 * to the sender.  Softirq context, under rcu_read_lock().
 */
void vhca_conn_recv(struct vhca_dev *vdev, const struct vhca_conn_msg *m)
{
	struct vhca_qp *qp = xa_load(&vdev->qp_xa, m->dqpn);
	bool first, last, write, imm;
	struct vhca_swqe w = {};
	struct vhca_resp *r;
	unsigned long flags;
	int status;

	if (!qp || qp->ibqp.qp_type != IB_QPT_UC || !qp->resp.wqe ||
	    !vhca_qps_receives(READ_ONCE(qp->state))) {
		vhca_count(vdev, VHCA_CNT_RCVD_NO_QP);
		return;
	}
	write = m->op >= VHCA_OP_WRITE_FIRST;
	first = m->op == VHCA_OP_SEND_FIRST || m->op == VHCA_OP_SEND_ONLY ||
		m->op == VHCA_OP_SEND_ONLY_IMM || m->op == VHCA_OP_WRITE_FIRST ||
		m->op == VHCA_OP_WRITE_ONLY || m->op == VHCA_OP_WRITE_ONLY_IMM;
	last = m->op != VHCA_OP_SEND_FIRST && m->op != VHCA_OP_SEND_MIDDLE &&
	       m->op != VHCA_OP_WRITE_FIRST && m->op != VHCA_OP_WRITE_MIDDLE;
	imm = m->op == VHCA_OP_SEND_LAST_IMM || m->op == VHCA_OP_SEND_ONLY_IMM ||
	      m->op == VHCA_OP_WRITE_LAST_IMM || m->op == VHCA_OP_WRITE_ONLY_IMM;

	r = &qp->resp;
	spin_lock_irqsave(&r->lock, flags);
	if (r->closed)
		goto out;	/* in ERR since the check above */
	if (m->psn != r->epsn)
		r->dropping = true;	/* a packet was lost: so is the message */
	r->epsn = (m->psn + 1) & VHCA_BTH_PSN_MASK;
	if (first) {
		if (!vhca_resp_start(qp, m, write)) {
			r->dropping = true;
			goto out;
		}
	} else if (!r->active || r->dropping || r->write != write) {
		r->dropping = true;
		goto out;
	}
	status = vhca_resp_place(vdev, qp, m);
	if (status != IB_WC_SUCCESS) {
		if (!write)
			vhca_resp_done(qp, status, 0, NULL);
		r->active = false;
		goto out;
	}
	if (!last)
		goto out;
	r->active = false;
	w.opcode = write ? IB_UVERBS_WR_RDMA_WRITE_WITH_IMM :
		   imm ? IB_UVERBS_WR_SEND_WITH_IMM : IB_UVERBS_WR_SEND;
	w.flags = m->se ? VHCA_SWQE_F_SOLICITED : 0;
	w.ex = (__force u32)m->imm;
	if (!write) {
		vhca_resp_done(qp, IB_WC_SUCCESS, r->off, &w);
	} else if (imm) {
		/* a WRITE with immediate data consumes a receive WQE */
		if (vhca_resp_start(qp, m, false))
			vhca_resp_done(qp, IB_WC_SUCCESS, r->dmalen, &w);
		r->active = false;
	}
out:
	spin_unlock_irqrestore(&r->lock, flags);
}
