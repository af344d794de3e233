// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Counters, as `rdma statistic` shows them: the port's, and counter sets
 * that QPs are bound to (`rdma statistic qp bind`, or auto mode).  Both
 * have the same counters, kept per CPU so that the wire path shares no
 * cache line between CPUs for them.  A bound QP counts in its set instead
 * of the device's, as a NIC's QP counter set does: the core shows the
 * port as the device's counts plus every set's (and what sets that are
 * gone had counted), so each event is counted once.
 */
#include <rdma/ib_verbs.h>	/* before rdma_counter.h, which it includes */
#include <rdma/rdma_counter.h>

#include "vhca.h"

static const struct rdma_stat_desc vhca_counter_descs[] = {
	[VHCA_CNT_SENT_PKTS].name = "sent_pkts",
	[VHCA_CNT_RCVD_PKTS].name = "rcvd_pkts",
	[VHCA_CNT_SEND_NO_ROUTE].name = "send_no_route",
	[VHCA_CNT_SEND_DROPPED].name = "send_dropped",
	[VHCA_CNT_RCVD_BAD_ICRC].name = "rcvd_bad_icrc",
	[VHCA_CNT_RCVD_BAD_HDR].name = "rcvd_bad_header",
	[VHCA_CNT_RCVD_UNSUPPORTED].name = "rcvd_unsupported_opcode",
	[VHCA_CNT_RCVD_NO_QP].name = "rcvd_no_qp",
	[VHCA_CNT_RCVD_NO_WQE].name = "rcvd_no_recv_wqe",
	[VHCA_CNT_RCVD_UNEXPECTED].name = "rcvd_unexpected",
	[VHCA_CNT_RCVD_QUEUE_FULL].name = "rcvd_queue_full",
	[VHCA_CNT_RCVD_OFF_PATH].name = "rcvd_off_path",
	[VHCA_CNT_RCVD_SEQ_NAKS].name = "rcvd_seq_naks",
	[VHCA_CNT_RCVD_RNR_NAKS].name = "rcvd_rnr_naks",
	[VHCA_CNT_RETRANS_TIMEOUTS].name = "retrans_timeouts",
	[VHCA_CNT_RETRANS_PKTS].name = "retrans_pkts",
	[VHCA_CNT_READ_REASKS].name = "read_rest_requests",
	[VHCA_CNT_SENT_SEQ_NAKS].name = "sent_seq_naks",
	[VHCA_CNT_RCVD_DUPLICATES].name = "rcvd_duplicate_requests",
	[VHCA_CNT_ODP_RNR].name = "sent_odp_rnr_naks",
	[VHCA_CNT_ODP_HELD].name = "rcvd_odp_held",
	[VHCA_CNT_SENT_CNPS].name = "sent_cnps",
	[VHCA_CNT_RCVD_CNPS].name = "rcvd_cnps",
	[VHCA_CNT_WINDOW_CUTS].name = "window_cuts",
};

static struct rdma_hw_stats *vhca_alloc_stats(void)
{
	BUILD_BUG_ON(ARRAY_SIZE(vhca_counter_descs) != VHCA_CNT_MAX);
	return rdma_alloc_hw_stats_struct(vhca_counter_descs, VHCA_CNT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* @stats->value[] := the sum over the CPUs of @pc. */
static void vhca_counters_sum(struct vhca_counters __percpu *pc,
			      struct rdma_hw_stats *stats)
{
	int cpu, i;

	memset(stats->value, 0, VHCA_CNT_MAX * sizeof(stats->value[0]));
	for_each_possible_cpu(cpu) {
		const struct vhca_counters *c = per_cpu_ptr(pc, cpu);

		for (i = 0; i < VHCA_CNT_MAX; i++)
			stats->value[i] += READ_ONCE(c->c[i]);
	}
}

static struct rdma_hw_stats *vhca_alloc_hw_port_stats(struct ib_device *ibdev,
						      u32 port)
{
	return vhca_alloc_stats();
}

static int vhca_get_hw_stats(struct ib_device *ibdev,
			     struct rdma_hw_stats *stats, u32 port, int index)
{
	vhca_counters_sum(to_vdev(ibdev)->cnt, stats);
	return VHCA_CNT_MAX;
}

/* Also the port's history of sets that are gone: @counter is NULL then. */
static struct rdma_hw_stats *vhca_counter_alloc_stats(struct rdma_counter *counter)
{
	return vhca_alloc_stats();
}

/*
 * Make a QP, bound to no set, count in @counter; the set's first QP gets
 * it an id and its counters.  Called by the core under @counter's lock, in
 * process context.  Returns 0, or -ENOMEM.
 */
static int vhca_counter_bind_qp(struct rdma_counter *counter,
				VHCA_COUNTER_QP_PARAMS)
{
	struct vhca_dev *vdev = to_vdev(ibqp->device);
	struct vhca_qp_counter *qc;
	int err;

	if (counter->id) {
		qc = xa_load(&vdev->counter_xa, counter->id);
		if (WARN_ON(!qc))
			return -EINVAL;
	} else {
		qc = kzalloc(sizeof(*qc), GFP_KERNEL);
		if (!qc)
			return -ENOMEM;
		qc->pc = alloc_percpu(struct vhca_counters);
		err = qc->pc ? xa_alloc(&vdev->counter_xa, &counter->id, qc,
					xa_limit_31b, GFP_KERNEL) : -ENOMEM;
		if (err) {
			free_percpu(qc->pc);
			kfree(qc);
			return err;
		}
	}
	rcu_assign_pointer(to_vqp(ibqp)->cnt, qc);
	ibqp->counter = counter;
	return 0;
}

/* The QP counts in its device's counters again; its set keeps its counts. */
static int vhca_counter_unbind_qp(VHCA_COUNTER_QP_PARAMS)
{
	RCU_INIT_POINTER(to_vqp(ibqp)->cnt, NULL);
	ibqp->counter = NULL;
	return 0;
}

/*
 * The set is gone, and its QPs unbound: once every counting that may
 * still hold it has finished (an RCU grace period), its counters go.
 */
static int vhca_counter_dealloc(struct rdma_counter *counter)
{
	struct vhca_dev *vdev = to_vdev(counter->device);
	struct vhca_qp_counter *qc;

	qc = counter->id ? xa_erase(&vdev->counter_xa, counter->id) : NULL;
	if (!qc)
		return 0;
	synchronize_rcu();
	free_percpu(qc->pc);
	kfree(qc);
	return 0;
}

static int vhca_counter_update_stats(struct rdma_counter *counter)
{
	struct vhca_dev *vdev = to_vdev(counter->device);
	struct vhca_qp_counter *qc;

	qc = counter->id ? xa_load(&vdev->counter_xa, counter->id) : NULL;
	if (!qc) {
		memset(counter->stats->value, 0,
		       VHCA_CNT_MAX * sizeof(counter->stats->value[0]));
		return 0;
	}
	vhca_counters_sum(qc->pc, counter->stats);
	return 0;
}

const struct ib_device_ops vhca_counter_ops = {
	.alloc_hw_port_stats = vhca_alloc_hw_port_stats,
	.counter_alloc_stats = vhca_counter_alloc_stats,
	.counter_bind_qp = vhca_counter_bind_qp,
	.counter_dealloc = vhca_counter_dealloc,
	.counter_unbind_qp = vhca_counter_unbind_qp,
	.counter_update_stats = vhca_counter_update_stats,
	.get_hw_stats = vhca_get_hw_stats,
};
