// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What `rdma res show qp|cq|srq|mr -d` adds to the core's fields: the
 * rings' indices and the engine's state, to see where a stuck queue
 * stands.  An index a process writes (a producer of a send or receive
 * ring, a CQ's consumer) is shown as it reads now, for what it is worth;
 * the engine's own copies are what it acts on.
 */
#include <rdma/restrack.h>

#include "vhca.h"

/* A ring's producer and consumer as its header holds them now. */
static u32 vhca_res_prod(const struct vhca_uring *r)
{
	return r->hdr ? READ_ONCE(r->hdr->producer) : 0;
}

static u32 vhca_res_cons(const struct vhca_uring *r)
{
	return r->hdr ? READ_ONCE(r->hdr->consumer) : 0;
}

/* A ring's slots, producer and consumer, under the names given. */
static int vhca_res_put_ring(struct sk_buff *msg, const char *depth_name,
			     const char *prod_name, const char *cons_name,
			     u32 depth, u32 prod, u32 cons)
{
	if (rdma_nl_put_driver_u32(msg, depth_name, depth) ||
	    rdma_nl_put_driver_u32(msg, prod_name, prod) ||
	    rdma_nl_put_driver_u32(msg, cons_name, cons))
		return -EMSGSIZE;
	return 0;
}

/* @r's, its producer as the header has it; nothing if @r is not there */
static int vhca_res_ring(struct sk_buff *msg, const char *depth_name,
			 const char *prod_name, const char *cons_name,
			 const struct vhca_uring *r, u32 cons)
{
	if (!r->hdr)
		return 0;
	return vhca_res_put_ring(msg, depth_name, prod_name, cons_name,
				 1U << r->g.log2_slots, vhca_res_prod(r), cons);
}

/* The requester of an RC QP on the wire; caller holds qp->lock. */
static int vhca_res_req(struct sk_buff *msg, struct vhca_qp *qp)
{
	const struct vhca_req *q = &qp->req;

	if (!q->fl)
		return 0;
	if (rdma_nl_put_driver_u32(msg, "wqes_on_wire", q->next - q->cons) ||
	    rdma_nl_put_driver_u32_hex(msg, "next_psn", qp->attr.sq_psn) ||
	    rdma_nl_put_driver_u32_hex(msg, "acked_psn", q->acked) ||
	    rdma_nl_put_driver_u32(msg, "window", q->cwnd) ||
	    rdma_nl_put_driver_u32(msg, "retries_left", q->retry_left) ||
	    rdma_nl_put_driver_u32(msg, "timer_pending",
				   timer_pending(&q->timer)))
		return -EMSGSIZE;
	return 0;
}

/**
 * vhca_fill_res_qp_entry() - a QP's rings, PSNs and engine state
 * @msg: the netlink message, inside the QP's entry
 * @ibqp: the QP, held by the core for the call
 *
 * Process context: takes the QP's locks for a consistent snapshot.  A
 * connected QP past INIT says whether its peer is on this host or on the
 * wire; PSNs, the MSN and the requester's window are the wire's, so a
 * QP whose peer is local shows none (the engine moves its messages
 * without packets, and they would never change).
 *
 * Return: 0 or -EMSGSIZE.
 */
int vhca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	bool rc = vhca_qpt_rc(ibqp->qp_type), uc = ibqp->qp_type == IB_QPT_UC;
	struct vhca_qp *qp = to_vqp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool local = READ_ONCE(qp->dst_dev) != U32_MAX;
	bool routed = (rc || uc) && state != IB_QPS_RESET &&
		      state != IB_QPS_INIT;
	struct nlattr *table;
	u32 rq_cons, epsn, msn;
	unsigned long flags;
	bool rq_flush;
	int err;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;

	spin_lock_irqsave(&qp->rq_lock, flags);
	rq_cons = qp->rq_cons;
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	spin_lock_bh(&qp->resp.lock);
	epsn = qp->resp.epsn;
	msn = qp->resp.msn;
	spin_unlock_bh(&qp->resp.lock);
	rq_flush = qp->rq.hdr &&
		   (READ_ONCE(qp->rq.hdr->ctrl) & VHCA_RQ_FLUSH);

	mutex_lock(&qp->lock);
	err = rdma_nl_put_driver_string(msg, "engine",
					qp->rnr_wait ? "rnr-wait" :
					delayed_work_pending(&qp->sq_work) ?
					"queued" : "idle");
	if (!err && routed)
		err = rdma_nl_put_driver_string(msg, "path",
						local ? "local" : "wire");
	if (!err)
		err = vhca_res_ring(msg, "sq_depth", "sq_prod", "sq_cons",
				    &qp->sq, qp->sq_cons);
	if (!err && rc && !local)
		err = vhca_res_req(msg, qp);
	mutex_unlock(&qp->lock);
	if (!err && qp->rq.hdr)	/* none with an SRQ, nor for XRC */
		err = vhca_res_ring(msg, "rq_depth", "rq_prod", "rq_cons",
				    &qp->rq, rq_cons);
	if (!err && !local)
		err = rdma_nl_put_driver_u32_hex(msg, "expected_psn", epsn);
	if (!err && rc && !local)
		err = rdma_nl_put_driver_u32(msg, "msn", msn);
	if (!err && rq_flush)
		err = rdma_nl_put_driver_string(msg, "rq", "flushing");
	if (err) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/**
 * vhca_fill_res_cq_entry() - a CQ's ring and state
 * @msg: the netlink message, inside the CQ's entry
 * @ibcq: the CQ, held by the core for the call
 *
 * Return: 0 or -EMSGSIZE.
 */
int vhca_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct vhca_cq *cq = to_vcq(ibcq);
	bool overflowed, timestamps;
	struct nlattr *table;
	unsigned long flags;
	u32 prod, cons;
	u8 notify;

	mutex_lock(&cq->resize_lock);	/* the ring stays */
	spin_lock_irqsave(&cq->lock, flags);
	prod = cq->prod;
	overflowed = cq->overflowed;
	notify = cq->notify;
	timestamps = cq->timestamps;
	spin_unlock_irqrestore(&cq->lock, flags);
	cons = vhca_res_cons(&cq->ring);

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		goto err;
	if (rdma_nl_put_driver_u32(msg, "cqn", cq->cqn) ||
	    rdma_nl_put_driver_u32(msg, "depth", 1U << cq->ring.g.log2_slots) ||
	    rdma_nl_put_driver_u32(msg, "prod", prod) ||
	    rdma_nl_put_driver_u32(msg, "cons", cons) ||
	    rdma_nl_put_driver_string(msg, "armed",
				      notify == IB_CQ_NEXT_COMP ? "next" :
				      notify == IB_CQ_SOLICITED ? "solicited" :
				      "no") ||
	    rdma_nl_put_driver_u32(msg, "overflowed", overflowed) ||
	    rdma_nl_put_driver_u32(msg, "timestamps", timestamps))
		goto err_cancel;
	nla_nest_end(msg, table);
	mutex_unlock(&cq->resize_lock);
	return 0;

err_cancel:
	nla_nest_cancel(msg, table);
err:
	mutex_unlock(&cq->resize_lock);
	return -EMSGSIZE;
}

/**
 * vhca_fill_res_srq_entry() - an SRQ's ring and limit
 * @msg: the netlink message, inside the SRQ's entry
 * @ibsrq: the SRQ, held by the core for the call
 *
 * Return: 0 or -EMSGSIZE.
 */
int vhca_fill_res_srq_entry(struct sk_buff *msg, struct ib_srq *ibsrq)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);
	u32 depth, prod, cons, limit;
	struct nlattr *table;
	unsigned long flags;

	/*
	 * A resize swaps the ring under this lock, then frees the old one:
	 * nothing of the ring is read outside it.
	 */
	spin_lock_irqsave(&srq->lock, flags);
	depth = 1U << srq->ring.g.log2_slots;
	prod = vhca_res_prod(&srq->ring);
	cons = srq->cons;
	limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "srqn", srq->srqn) ||
	    vhca_res_put_ring(msg, "depth", "prod", "cons", depth, prod,
			      cons) ||
	    rdma_nl_put_driver_u32(msg, "limit", limit)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/**
 * vhca_fill_res_mr_entry() - an MR's kind and extent
 * @msg: the netlink message, inside the MR's entry
 * @ibmr: the MR, held by the core for the call
 *
 * Return: 0 or -EMSGSIZE.
 */
int vhca_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	static const char * const kind[] = {
		[VHCA_MR_USER] = "user", [VHCA_MR_DMA] = "dma",
		[VHCA_MR_FAST] = "fast-reg", [VHCA_MR_ODP] = "odp",
	};
	struct vhca_mr *mr = to_vmr(ibmr);
	struct nlattr *table;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "kind", kind[mr->type]) ||
	    rdma_nl_put_driver_u32(msg, "valid", READ_ONCE(mr->key) != 0) ||
	    (mr->type == VHCA_MR_FAST &&
	     (rdma_nl_put_driver_u32(msg, "pages", mr->npages) ||
	      rdma_nl_put_driver_u32(msg, "max_pages", mr->max_pages))) ||
	    (mr->odp_tree &&
	     rdma_nl_put_driver_u32(msg, "children",
				    vhca_odp_children(mr)))) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}
