// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Packets held for an ODP fault.  A UC or UD packet from the wire that
 * finds a page of an ODP MR missing cannot wait for it in softirq, and
 * neither transport has a retry that would bring it again (RC has: its
 * responder answers RNR, vhca_resp.c).  So the packet is copied here, and
 * so is every later one for the same QP, in order, while the QP's
 * held_work faults the pages in and delivers them, the first again.
 * Beyond VHCA_HELD_QP packets of a QP, or VHCA_HELD_DEV of a device, a
 * packet is dropped, as a NIC drops what its receive buffer cannot take:
 * UC and UD allow it.
 *
 * The receive path (vhca_resp.c for UC, vhca_ud.c for UD) decides what is
 * held, under the QP's resp.lock, and gives each packet the function that
 * delivers it; held_work calls it under that lock too, so a held packet
 * meets the QP exactly as it would have in softirq.  While held_run is
 * set, resp.hodp (the faults of the packet at the head) is held_work's
 * alone.
 */
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "vhca_wire.h"

/*
 * Packets of one QP held at most: those that arrive while its first one
 * waits for a fault, which maps up to VHCA_RESP_FAULT_AHEAD (4 MiB) of
 * the message at once.  At the largest MTU they are 1 MiB of copies.
 */
#define VHCA_HELD_QP	256
/*
 * Packets of one device held at most, whatever remote senders do: 16 MiB
 * of kernel memory at the largest MTU.
 */
#define VHCA_HELD_DEV	4096

/*
 * vhca_held_start() - have held_work fault in resp.hodp's pages
 * @qp: the QP whose packet found them missing; caller holds resp.lock
 *
 * From here on, @qp's packets are held behind it until held_work has
 * delivered them all.
 */
static void vhca_held_start(struct vhca_qp *qp)
{
	qp->resp.held_run = true;
	queue_work(vhca_wq, &qp->resp.held_work);
}

/**
 * vhca_held_new() - a copy of a packet's payload, to hold for @qp
 * @qp: the QP it is for; caller holds qp->resp.lock
 * @data: the payload
 * @len: its length (one MTU at most)
 * @fault: the packet found an ODP page missing (resp.hodp has it), rather
 *	than coming behind one that did; counted in rcvd_odp_held
 *
 * The caller fills in the packet's message, pointing it at the copy's
 * data, and its deliver function, then vhca_held_add()s it.
 *
 * Return: the copy, or NULL if @qp or its device holds all it may, or
 * there is no memory: the packet is dropped, and a fault it found is
 * still made, for the packets after it.
 */
struct vhca_held *vhca_held_new(struct vhca_qp *qp, const u8 *data, u32 len,
				bool fault)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_held *h;

	if (fault)
		vhca_count_qp(qp, VHCA_CNT_ODP_HELD);
	if (qp->resp.nr_held >= VHCA_HELD_QP)
		goto drop;
	if (atomic_inc_return(&vdev->nr_held) > VHCA_HELD_DEV)
		goto full;
	h = kmalloc(struct_size(h, data, len), GFP_ATOMIC | __GFP_NOWARN);
	if (!h)
		goto full;
	memcpy(h->data, data, len);
	h->begun = fault;
	return h;
full:
	atomic_dec(&vdev->nr_held);
drop:
	if (fault)
		vhca_held_start(qp);
	return NULL;
}

static void vhca_held_free(struct vhca_qp *qp, struct vhca_held *h)
{
	list_del(&h->node);
	qp->resp.nr_held--;
	atomic_dec(&to_vdev(qp->ibqp.device)->nr_held);
	kfree(h);
}

/**
 * vhca_held_add() - hold a packet, behind those already held
 * @qp: its QP; caller holds qp->resp.lock
 * @h: the packet, from vhca_held_new()
 */
void vhca_held_add(struct vhca_qp *qp, struct vhca_held *h)
{
	list_add_tail(&h->node, &qp->resp.held);
	qp->resp.nr_held++;
	vhca_held_start(qp);
}

/**
 * vhca_held_purge() - drop every packet @qp holds
 * @qp: the QP, in ERR, reset or destroyed; caller holds qp->resp.lock
 *
 * held_work still resolves a fault it has begun, then stops.
 */
void vhca_held_purge(struct vhca_qp *qp)
{
	struct vhca_held *h, *n;

	list_for_each_entry_safe(h, n, &qp->resp.held, node)
		vhca_held_free(qp, h);
}

/**
 * vhca_held_work() - fault in what the first held packet needs, deliver
 *	it and those behind it
 * @work: the QP's resp.held_work
 *
 * A packet whose pages went again before it could be delivered is tried
 * again, VHCA_ODP_TRIES times at most (vhca_odp_resolve()); after that
 * its deliver function fails it as it would a packet whose key went.
 */
void vhca_held_work(struct work_struct *work)
{
	struct vhca_qp *qp = container_of(work, struct vhca_qp,
					  resp.held_work);
	struct vhca_resp *r = &qp->resp;
	struct vhca_held *h;
	int status;

	spin_lock_bh(&r->lock);
	for (;;) {
		if (r->hodp.pending) {
			/* nothing else touches hodp while held_run */
			spin_unlock_bh(&r->lock);
			vhca_odp_resolve(&r->hodp);
			spin_lock_bh(&r->lock);
		}
		h = list_first_entry_or_null(&r->held, struct vhca_held, node);
		if (!h || r->closed) {
			vhca_held_purge(qp);
			vhca_odp_retry_reset(&r->hodp);
			r->held_run = false;
			break;
		}
		rcu_read_lock();
		status = h->deliver(qp, h);
		rcu_read_unlock();
		if (status == VHCA_FAULT)
			continue;	/* hodp is pending again */
		vhca_odp_retry_reset(&r->hodp);
		vhca_held_free(qp, h);
		if (need_resched()) {
			spin_unlock_bh(&r->lock);
			cond_resched();
			spin_lock_bh(&r->lock);
		}
	}
	spin_unlock_bh(&r->lock);
}

/**
 * vhca_held_drain() - drop what a QP being destroyed holds
 * @qp: the QP, off its xarray for a grace period: no packet comes
 *
 * Waits for held_work to let go of the MR of a fault it has begun.
 */
void vhca_held_drain(struct vhca_qp *qp)
{
	spin_lock_bh(&qp->resp.lock);
	qp->resp.closed = true;
	vhca_held_purge(qp);
	spin_unlock_bh(&qp->resp.lock);
	flush_work(&qp->resp.held_work);
}
