// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The engine's workqueues, and waking a QP's send work.  The bottom of the
 * engine: every layer above may kick a QP, and this file calls none of
 * them.
 */
#include <linux/workqueue.h>

#include "vhca_wqe.h"

struct workqueue_struct *vhca_wq;
struct workqueue_struct *vhca_tx_wq;

/**
 * vhca_work_init() - allocate the engine's workqueues
 *
 * Return: 0 or -ENOMEM.
 */
int vhca_work_init(void)
{
	/* The engine: unbound, so QPs' work spreads over the CPUs. */
	vhca_wq = alloc_workqueue("vhca", WQ_UNBOUND, 0);
	if (!vhca_wq)
		return -ENOMEM;
	/* Per CPU: packets go out where the netdev frees them. */
	vhca_tx_wq = alloc_workqueue("vhca_tx", WQ_MEM_RECLAIM | VHCA_WQ_PERCPU, 0);
	if (!vhca_tx_wq) {
		destroy_workqueue(vhca_wq);
		return -ENOMEM;
	}
	return 0;
}

void vhca_work_exit(void)
{
	destroy_workqueue(vhca_tx_wq);
	destroy_workqueue(vhca_wq);
}

/* IB spec table 45: the RNR NAK timer field in microseconds. */
static const u32 vhca_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* The wait an RNR NAK's (or min_rnr_timer's) 5-bit timer field asks for. */
static unsigned long vhca_rnr_jiffies(u8 timer)
{
	return usecs_to_jiffies(vhca_rnr_usecs[timer & 31]);
}

/**
 * vhca_qp_timeout_jiffies() - an RC QP's retransmission timeout
 * @qp: the QP
 *
 * Return: 4.096 us * 2^timeout, 0 meaning never.
 */
unsigned long vhca_qp_timeout_jiffies(const struct vhca_qp *qp)
{
	u8 t = qp->attr.timeout;

	if (!t)
		return 0;
	/*
	 * Not below 50 ms: a peer under emulation answers that slowly, and
	 * a retransmission it did not need costs a retry.
	 */
	return max(nsecs_to_jiffies(4096ULL << min_t(u8, t, 31)),
		   msecs_to_jiffies(50));
}

/**
 * vhca_qp_kick_timeout() - run @qp's send ring after its timeout
 * @qp: the QP, whose peer on this host did not answer; caller holds
 *	qp->lock
 *
 * A QP that never times out (timeout 0) looks again every 50 ms, for ever.
 */
void vhca_qp_kick_timeout(struct vhca_qp *qp)
{
	unsigned long t = vhca_qp_timeout_jiffies(qp);

	qp->rnr_wait = true;
	mod_delayed_work(vhca_wq, &qp->sq_work, t ?: msecs_to_jiffies(50));
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
 * vhca_qp_kick_after() - run @qp's send ring after an RNR wait
 * @qp: the QP; caller holds qp->lock
 * @timer: the responder's RNR timer code
 *
 * Even over a kick queued meanwhile: the wait is the responder's.
 */
void vhca_qp_kick_after(struct vhca_qp *qp, u8 timer)
{
	qp->rnr_wait = true;
	mod_delayed_work(vhca_wq, &qp->sq_work, vhca_rnr_jiffies(timer));
}
