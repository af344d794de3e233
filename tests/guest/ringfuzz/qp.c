// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * QP states: the connections the fuzzer makes, and its random moves.
 * XRC's halves take RC's attributes: the core drops those a half has no
 * use for.
 */
#include "ringfuzz.h"

/* RESET -> INIT -> RTR -> RTS, each step's errors ignored (returned). */
static int qp_init(struct fqp *q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = q->access, .qkey = QKEY };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= q->type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(q->qp, &a, mask);
}

static int qp_rtr(struct fqp *q)
{
	static const uint8_t rnr_timers[] = { 1, 1, 2, 3, 4, 0 };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	uint32_t dest = q->qp->qp_num;
	int mask = IBV_QP_STATE;

	if (q->type == IBV_QPT_UD)
		return ibv_modify_qp(q->qp, &a, mask);
	if (q->kind == P_PAIR && qps[q->peer].qp)
		dest = qps[q->peer].qp->qp_num;
	if (q->kind == P_WIRE && far.name)
		dest = far_qpn(q->type);
	if (deterministic)
		;
	else if (chance(5) && qps[rnd(nqp)].qp)
		dest = qps[rnd(nqp)].qp->qp_num;	/* whoever: maybe UD */
	else if (chance(2))
		dest = rnd(1 << 24);
	a.path_mtu = deterministic ? IBV_MTU_256 :
		     chance(80) ? IBV_MTU_1024 : IBV_MTU_256 + rnd(5);
	a.dest_qp_num = dest;
	a.rq_psn = deterministic || chance(80) ? 0 : rnd(1 << 24);
	a.ah_attr = (struct ibv_ah_attr){
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = q->kind == P_WIRE ? nobody_gid() : gid,
			 .hop_limit = 1 },
	};
	mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (qpt_rc(q->type)) {
		a.max_dest_rd_atomic = deterministic ? 1 : rnd(5);
		a.min_rnr_timer = deterministic ? 1 : rnr_timers[rnd(6)];
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return ibv_modify_qp(q->qp, &a, mask);
}

static int qp_rts(struct fqp *q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS,
				 .sq_psn = chance(80) ? 0 : rnd(1 << 24) };
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (deterministic)
		a.sq_psn = 0;
	if (qpt_rc(q->type)) {
		a.timeout = deterministic ? 14 : 1 + rnd(4);
		a.retry_cnt = deterministic ? 1 : rnd(3);
		a.rnr_retry = deterministic ? 1 : chance(95) ? rnd(3) : rnd(8);
		a.max_rd_atomic = deterministic ? 1 : rnd(5);
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(q->qp, &a, mask);
}

int qp_state(struct fqp *q, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
}

/*
 * RTR of a QP to nobody's GID resolves its MAC first: without a neighbour
 * entry for it (fuzz-rings.sh adds one) that takes a second and fails, so
 * after the first failure the wire QPs are left out.
 */
static int wire_off;

int qp_connect(struct fqp *q)
{
	if (!q->qp || (q->kind == P_WIRE && wire_off))
		return -1;
	double t;

	qp_state(q, IBV_QPS_RESET);
	if (qp_init(q))
		return -1;
	t = now();
	if (qp_rtr(q)) {
		/* a failure that took long was the MAC's resolution */
		if (q->kind == P_WIRE && !wire_off && now() - t > 0.5) {
			printf("# RTR to nobody's GID failed after %.1f s: no "
			       "wire QPs\n", now() - t);
			wire_off = 1;
		}
		return -1;
	}
	return qp_rts(q);
}

/*
 * To RTS with fixed attributes, connected to @dest (RC, UC, XRC) or not
 * (UD).
 */
int qp_connect_fixed(struct fqp *q, uint32_t dest)
{
	struct ibv_qp_attr at = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .hop_limit = 1 } },
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	if (qpt_rc(q->type))
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (q->type == IBV_QPT_UD)
		mask = IBV_QP_STATE;
	if (qp_init(q) || ibv_modify_qp(q->qp, &at, mask))
		return -1;
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14,
				   .retry_cnt = 7, .rnr_retry = 7,
				   .max_rd_atomic = 1 };
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qpt_rc(q->type))
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(q->qp, &at, mask);
}

/* --- QP states -------------------------------------------------------------- */

void fuzz_state(struct fqp *q)
{
	int r = rnd(100);

	if (!q->qp)
		return;
	st.modifies++;
	if (trace)
		fprintf(stderr, "modify qp#%ld r=%d\n", (long)(q - qps), r);
	if (r < 45)
		qp_connect(q);
	else if (r < 60)
		qp_state(q, IBV_QPS_ERR);
	else if (r < 68)
		qp_state(q, IBV_QPS_RESET);
	else if (r < 78)
		qp_state(q, IBV_QPS_RTS);	/* out of SQE or SQD */
	else if (r < 82)
		qp_state(q, IBV_QPS_SQD);
	else if (r < 85)
		qp_state(q, IBV_QPS_SQE);
	else if (r < 90)
		qp_init(q);
	else if (r < 95 && !(q->kind == P_WIRE && wire_off))
		qp_rtr(q);
	else
		qp_rts(q);
}

/* Whether the engine has put @q in ERR or SQE (it tells nobody). */
int qp_failed(struct fqp *q)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	return !ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia) &&
	       (a.qp_state == IBV_QPS_ERR || a.qp_state == IBV_QPS_SQE);
}
