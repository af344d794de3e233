// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A seeded ring fuzzer: the kernel must trust nothing a process writes into
 * the rings it shares with it.  On one vhca device it creates CQs, SRQs,
 * RC, UC and UD QPs (some on an SRQ; RC and UC connected to each other, to
 * themselves through the device's own GID, and to a GID nobody has, so
 * that the wire path runs too) and MRs of several access rights and PDs,
 * then writes random and adversarial send and receive WQEs straight into
 * the mapped slots, scribbles on the ring headers (producer, consumer,
 * ctrl), rings doorbells, arms, polls and resizes CQs, resizes SRQs, moves
 * QPs through every state, and tears everything down and builds it again
 * with WQEs outstanding.  Then the same process must still get a clean
 * ping-pong through fresh QPs, data compared byte for byte.  Prints TAP.
 *
 * Usage: ringfuzz DEVICE [--seed N] [--count WQES] [--time SECONDS]
 *			  [--trace] [--allow-known] [--no-racer] [--far DEV GID]
 *	  ringfuzz DEVICE --only-known CASE [--sges N]	(CASE: list, or a name)
 *
 * --count: WQEs written in all (default 100000), all of which must be
 * written for the run to pass; --time: a cap on the fuzz phase (none by
 * default), which fails the run when it cuts it short; a watchdog ends a
 * run still going 120 s past the cap, or after 1200 s without one.  The same seed replays the same operations of the
 * main thread; a second thread (the racer, seeded with seed + 1) works on
 * the same objects at the same time, so a run replays exactly only with
 * --no-racer.  --trace prints every WQE written and every header write to
 * stderr before the doorbell that may act on it, to find the one that
 * broke the kernel.
 *
 * Known kernel defects are kept out of the random phase (the WQEs that
 * would hit them are rewritten into harmless ones) unless --allow-known;
 * --only-known runs one single-WQE case alone, as a minimal reproducer
 * (--only-known list names them).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* mremap */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "lib/testlib.h"
#include "provider.h"

#define BUFSZ		(256 << 10)
#define NMR		7
#define NCQ		3
#define NSRQ		2
#define NQP		14
#define QKEY		0x11111111U

static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;
static struct ibv_comp_channel *chan;
static unsigned char *buf;
static union ibv_gid gid;
static int trace, allow_known, deterministic;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- randomness ----------------------------------------------------------- */

static __thread uint64_t rng_state;	/* the racer has its own */

static uint64_t rnd64(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)(rnd64() >> 32) % n : 0;
}

static int chance(int percent)
{
	return (int)rnd(100) < percent;
}

/* --- objects -------------------------------------------------------------- */

struct fmr {
	struct ibv_mr *mr;
	uint64_t addr;
	uint32_t len;
	int access;
};

/* MRs: full access, none, local write, remote read, another PD, odd edges */
static struct fmr mrs[NMR];
static uint32_t stale_keys[16];
static unsigned int nstale;

struct fcq {
	struct ibv_cq *cq;
	struct vhca_cq *v;
};

struct fsrq {
	struct ibv_srq *srq;
	struct vhca_srq *v;
};

enum peer_kind { P_PAIR, P_SELF, P_WIRE, P_NONE };

struct fqp {
	struct ibv_qp *qp;
	struct vhca_qp *v;
	enum ibv_qp_type type;
	enum peer_kind kind;
	int peer;		/* index in qps[] of a P_PAIR's other end */
	int srq;		/* index in srqs[], or -1 */
	int scq, rcq;
	int access;
	struct ibv_qp_init_attr ia;
};

static struct fcq cqs[NCQ];
static struct fsrq srqs[NSRQ];
static struct fqp qps[NQP];
static int nqp;

static struct {
	unsigned long wqes, rwqes, doorbells, hdr_writes, polls, cqes, modifies,
		      resizes, rebuilds, recreated, posts, cqe_ok, raw, mmaps,
		      mmaps_ok;
	unsigned long wc_status[32];
} st;

static const char *qpt_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

static struct vhca_qp *vqp(struct ibv_qp *qp)
{
	return container_of(qp, struct vhca_qp, vqp.qp);
}

static int reg_mr(struct fmr *m, struct ibv_pd *p, size_t off, size_t len,
		  int access)
{
	m->mr = ibv_reg_mr(p, buf + off, len, access);
	m->addr = (uintptr_t)(buf + off);
	m->len = (uint32_t)len;
	m->access = access;
	return m->mr ? 0 : -1;
}

static const int full = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

static int make_mrs(void)
{
	int err = 0;

	err |= reg_mr(&mrs[0], pd, 0, 64 << 10, full);
	err |= reg_mr(&mrs[1], pd, 64 << 10, 32 << 10, 0);
	err |= reg_mr(&mrs[2], pd, 96 << 10, 32 << 10, IBV_ACCESS_LOCAL_WRITE);
	err |= reg_mr(&mrs[3], pd, 128 << 10, 32 << 10, IBV_ACCESS_REMOTE_READ);
	err |= reg_mr(&mrs[4], pd2, 160 << 10, 32 << 10, full);
	/* not page aligned at either end */
	err |= reg_mr(&mrs[5], pd, (192 << 10) + 100, 10000, full);
	/* one byte */
	err |= reg_mr(&mrs[6], pd, (224 << 10) + 4095, 1, full);
	return err ? -1 : 0;
}

/* Re-register one MR: its old key goes stale. */
static void churn_mr(void)
{
	unsigned int i = 1 + rnd(NMR - 1);
	struct fmr *m = &mrs[i];
	size_t off = m->addr - (uintptr_t)buf;

	if (!m->mr)
		return;
	stale_keys[nstale++ % 16] = m->mr->lkey;
	ibv_dereg_mr(m->mr);
	m->mr = ibv_reg_mr(i == 4 ? pd2 : pd, buf + off, m->len, m->access);
}

/*
 * Ack every async and completion event as it comes: a destroy waits until
 * the events reported for its object are acked, and the engine raises them
 * (CQ overflow, QP errors, SRQ limits) whenever it likes.
 */
static volatile int events_stop;
static unsigned long nevents;

static void *event_thread(void *arg)
{
	struct pollfd p[2] = { { .fd = ctx->async_fd, .events = POLLIN },
			       { .fd = chan->fd, .events = POLLIN } };
	struct ibv_async_event ev;
	struct ibv_cq *ecq;
	void *cctx;

	(void)arg;
	while (!events_stop) {
		if (poll(p, 2, 100) <= 0)
			continue;
		if ((p[0].revents & POLLIN) && !ibv_get_async_event(ctx, &ev)) {
			ibv_ack_async_event(&ev);
			nevents++;
		}
		if ((p[1].revents & POLLIN) &&
		    !ibv_get_cq_event(chan, &ecq, &cctx)) {
			ibv_ack_cq_events(ecq, 1);
			nevents++;
		}
	}
	return NULL;
}

static void make_cq(int i)
{
	static const int sizes[] = { 1, 2, 16, 64, 256, 1000 };

	cqs[i].cq = ibv_create_cq(ctx, sizes[rnd(6)], NULL, i == 0 ? chan : NULL,
				  0);
	cqs[i].v = cqs[i].cq ? container_of(cqs[i].cq, struct vhca_cq, cq) : NULL;
}

static void make_srq(int i)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = 1 + rnd(64), .max_sge = 1 + rnd(32),
			  .srq_limit = chance(30) ? rnd(4) : 0 },
	};

	if (a.attr.srq_limit >= a.attr.max_wr)
		a.attr.srq_limit = 0;
	srqs[i].srq = ibv_create_srq(pd, &a);
	srqs[i].v = srqs[i].srq ?
		    container_of(srqs[i].srq, struct vhca_srq, vsrq.srq) : NULL;
}

static int qp_access_flags(void)
{
	static const int acc[] = {
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_ATOMIC,
		0, IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE,
	};

	return acc[rnd(6)];
}

static void make_qp(int i)
{
	struct fqp *q = &qps[i];
	struct ibv_qp_init_attr ia = {
		.qp_type = q->type,
		.send_cq = cqs[q->scq].cq,
		.recv_cq = cqs[q->rcq].cq,
		.srq = q->srq >= 0 ? srqs[q->srq].srq : NULL,
		.sq_sig_all = chance(20),
		.cap = {
			.max_send_wr = 1 + rnd(64),
			.max_recv_wr = 1 + rnd(64),
			.max_send_sge = rnd(33),
			.max_recv_sge = 1 + rnd(32),
			.max_inline_data = chance(50) ? rnd(513) : 0,
		},
	};

	if (!ia.send_cq || !ia.recv_cq || (q->srq >= 0 && !ia.srq)) {
		q->qp = NULL;
		q->v = NULL;
		return;
	}
	q->ia = ia;
	q->qp = ibv_create_qp(pd, &ia);
	q->v = q->qp ? vqp(q->qp) : NULL;
	q->access = qp_access_flags();
}

/* A link-local GID nobody on eth0's own link has: RC and UC to the wire. */
/*
 * --far DEV GID: the wire QPs go to GID instead: an address of vhca device
 * DEV's netdev (a veth's other end) that is not in DEV's GID table (it is
 * full), so that no device of this host claims it and the wire QPs' packets
 * really leave on one netdev and arrive on the other, where DEV's QPs (one
 * RC, one UC) answer them as a peer on another host would.
 */
static struct {
	const char *name;
	union ibv_gid gid;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char *buf;
	struct fqp qp[2];	/* RC, UC */
	unsigned long cqes, ok;
} far;

static union ibv_gid nobody_gid(void)
{
	union ibv_gid g = { .raw = { 0xfe, 0x80, [8] = 0x50, 0x54, 0x00, 0xff,
				     0xfe, 0x00, 0xbe, 0xef } };

	return far.name ? far.gid : g;
}

/* The QPN the wire QP of @type sends to: DEV's first QPs are 2 and 3. */
static uint32_t far_qpn(enum ibv_qp_type type)
{
	int i = type == IBV_QPT_RC ? 0 : 1;

	return far.qp[i].qp ? far.qp[i].qp->qp_num : 2 + (uint32_t)i;
}

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
	if (q->type == IBV_QPT_RC) {
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
	if (q->type == IBV_QPT_RC) {
		a.timeout = deterministic ? 14 : 1 + rnd(4);
		a.retry_cnt = deterministic ? 1 : rnd(3);
		a.rnr_retry = deterministic ? 1 : chance(95) ? rnd(3) : rnd(8);
		a.max_rd_atomic = deterministic ? 1 : rnd(5);
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(q->qp, &a, mask);
}

static int qp_state(struct fqp *q, enum ibv_qp_state s)
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

static int qp_connect(struct fqp *q)
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

/* To RTS with fixed attributes, connected to @dest (RC, UC) or not (UD). */
static int qp_connect_fixed(struct fqp *q, uint32_t dest)
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

	if (q->type == IBV_QPT_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (q->type == IBV_QPT_UD)
		mask = IBV_QP_STATE;
	if (qp_init(q) || ibv_modify_qp(q->qp, &at, mask))
		return -1;
	at = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14,
				   .retry_cnt = 7, .rnr_retry = 7,
				   .max_rd_atomic = 1 };
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (q->type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(q->qp, &at, mask);
}

/* The QPs of one world: every type, every kind of peer, some on SRQs. */
static const struct {
	enum ibv_qp_type type;
	enum peer_kind kind;
	int peer, srq;
} layout[NQP] = {
	{ IBV_QPT_RC, P_PAIR, 1, -1 },	/* 0 <-> 1 */
	{ IBV_QPT_RC, P_PAIR, 0, 0 },
	{ IBV_QPT_RC, P_SELF, -1, -1 },	/* 2: loopback */
	{ IBV_QPT_RC, P_SELF, -1, 1 },
	{ IBV_QPT_UC, P_PAIR, 5, -1 },	/* 4 <-> 5 */
	{ IBV_QPT_UC, P_PAIR, 4, 1 },
	{ IBV_QPT_UC, P_SELF, -1, -1 },
	{ IBV_QPT_UD, P_NONE, -1, -1 },
	{ IBV_QPT_UD, P_NONE, -1, 0 },
	{ IBV_QPT_UD, P_NONE, -1, -1 },
	{ IBV_QPT_RC, P_WIRE, -1, -1 },	/* 10: to nobody's GID */
	{ IBV_QPT_UC, P_WIRE, -1, -1 },
	{ IBV_QPT_RC, P_PAIR, 13, 0 },	/* 12 <-> 13, both on SRQ 0 */
	{ IBV_QPT_RC, P_PAIR, 12, 0 },
};

static void build_world(void)
{
	int i;

	for (i = 0; i < NCQ; i++)
		make_cq(i);
	for (i = 0; i < NSRQ; i++)
		make_srq(i);
	nqp = NQP;
	for (i = 0; i < NQP; i++) {
		qps[i].type = layout[i].type;
		qps[i].kind = layout[i].kind;
		qps[i].peer = layout[i].peer;
		qps[i].srq = layout[i].srq;
		qps[i].scq = rnd(NCQ);
		qps[i].rcq = rnd(NCQ);
		make_qp(i);
	}
	for (i = 0; i < NQP; i++)
		qp_connect(&qps[i]);
}

static void destroy_qp(struct fqp *q)
{
	if (q->qp)
		ibv_destroy_qp(q->qp);
	q->qp = NULL;
	q->v = NULL;
}

static int teardown_world(void)
{
	int i, err = 0;

	for (i = 0; i < NQP; i++) {
		if (qps[i].qp && ibv_destroy_qp(qps[i].qp))
			err = -1;
		qps[i].qp = NULL;
		qps[i].v = NULL;
	}
	for (i = 0; i < NSRQ; i++) {
		if (srqs[i].srq && ibv_destroy_srq(srqs[i].srq))
			err = -1;
		srqs[i].srq = NULL;
		srqs[i].v = NULL;
	}
	for (i = 0; i < NCQ; i++) {
		if (cqs[i].cq && ibv_destroy_cq(cqs[i].cq))
			err = -1;
		cqs[i].cq = NULL;
		cqs[i].v = NULL;
	}
	return err;
}

/* --- interesting values --------------------------------------------------- */

static uint32_t any_key(void)
{
	const struct fmr *m = &mrs[rnd(NMR)];
	uint32_t k = m->mr ? m->mr->lkey : 0;

	switch (rnd(10)) {
	case 0:
		return (uint32_t)rnd64();
	case 1:
		return 0;
	case 2:
		return nstale ? stale_keys[rnd(nstale < 16 ? nstale : 16)] : k;
	case 3:
		return k ^ 1;			/* another variant */
	case 4:
		return k + 0x100;		/* the next index */
	case 5:
		return mrs[4].mr ? mrs[4].mr->lkey : k;	/* another PD's */
	default:
		return k;
	}
}

/* An address near (or far from) one of the MRs; @len is what it covers. */
static uint64_t any_addr(const struct fmr *m, uint32_t len)
{
	switch (rnd(14)) {
	case 0:
		return rnd64();
	case 1:
		return 0;
	case 2:
		return ~0ULL - rnd(16);
	case 3:
		return m->addr - 1;
	case 4:
		return m->addr + m->len;	/* just past */
	case 5:
		return m->addr + m->len - (len ? len : 1) + 1;	/* one over */
	case 6:
		return m->addr + m->len - (len < m->len ? len : m->len);
	case 7:
		return m->addr + rnd(m->len) + 1;	/* odd, for atomics */
	case 8:
		return (uintptr_t)buf + rnd(BUFSZ);	/* another MR's */
	default:
		return m->addr + (len < m->len ? rnd(m->len - len + 1) & ~7U : 0);
	}
}

static uint32_t any_len(const struct fmr *m)
{
	switch (rnd(16)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return 1U << 31;
	case 3:
		return ~0U;
	case 4:
		return (1U << 31) + 1;
	case 5:
		return m->len;
	case 6:
		return m->len + 1;
	case 7:
		return 8;
	case 8:
		return (uint32_t)rnd64();
	case 9:
		return 4096;
	default:
		return 1 + rnd(m->len < 2048 ? m->len : 2048);
	}
}

static void fill_sge(struct vhca_sge *s)
{
	const struct fmr *m = &mrs[rnd(NMR)];

	s->length = any_len(m);
	s->addr = any_addr(m, s->length);
	s->lkey = chance(80) && m->mr ? m->mr->lkey : any_key();
}

/* --- send WQEs ------------------------------------------------------------ */

static const uint8_t legit_ops[] = {
	IB_UVERBS_WR_SEND, IB_UVERBS_WR_SEND_WITH_IMM, IB_UVERBS_WR_RDMA_WRITE,
	IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, IB_UVERBS_WR_RDMA_READ,
	IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD,
	IB_UVERBS_WR_SEND_WITH_INV, IB_UVERBS_WR_LOCAL_INV,
};

static uint8_t any_opcode(void)
{
	int r = rnd(100);

	if (r < 70)
		return legit_ops[rnd(sizeof(legit_ops))];
	if (r < 78)
		return VHCA_WR_REG_MR;
	if (r < 90)
		return rnd(14);	/* every IB_UVERBS_WR_* value */
	return (uint8_t)rnd(256);
}

static uint8_t any_flags(void)
{
	if (chance(85))
		return rnd(16);	/* SIGNALED, SOLICITED, FENCE, INLINE */
	return (uint8_t)rnd(256);
}

static uint16_t any_num_sge(uint32_t max)
{
	switch (rnd(12)) {
	case 0:
		return 0;
	case 1:
		return max;
	case 2:
		return max + 1;
	case 3:
		return 255;
	case 4:
		return 0xffff;
	case 5:
		return VHCA_MAX_SGE + 1;
	default:
		return 1 + rnd(max < 4 ? max : 4);
	}
}

static uint32_t any_inline_len(uint32_t max, uint32_t room)
{
	switch (rnd(12)) {
	case 0:
		return 0;
	case 1:
		return max;
	case 2:
		return max + 1;
	case 3:
		return room;
	case 4:
		return room + 1;
	case 5:
		return 0xffffffff;
	case 6:
		return 0x80000000;
	case 7:
		return VHCA_MAX_INLINE + 1;
	default:
		return rnd(max + 1);
	}
}

static void fill_av(struct vhca_av *av, struct fqp *q)
{
	static const uint8_t mcast[16] = { 0xff, 0x02, [15] = 1 };
	union ibv_gid nb = nobody_gid();
	int r = rnd(10);

	memset(av, 0, sizeof(*av));
	if (r < 6)
		memcpy(av->dgid, gid.raw, 16);
	else if (r < 8)
		memcpy(av->dgid, nb.raw, 16);
	else if (r < 9)
		memcpy(av->dgid, mcast, 16);
	else if (gid.raw[0] == 0xfe) {
		memcpy(av->dgid, gid.raw, 16);
		av->dgid[15] ^= (uint8_t)(1 + rnd(255));	/* a neighbour */
	} else {
		memcpy(av->dgid, nb.raw, 16);
	}
	av->flow_label = chance(80) ? 0 : (uint32_t)rnd64();
	/*
	 * Any source GID for a datagram that stays on this host; on the
	 * wire only GID 0, link-local like the destinations above, so that
	 * nothing is addressed beyond the guest's own link.
	 */
	av->sgid_index = r < 6 && chance(20) ? (uint8_t)rnd(256) : 0;
	av->hop_limit = chance(80) ? 64 : (uint8_t)rnd(256);
	av->traffic_class = chance(80) ? 0 : (uint8_t)rnd(256);
	av->network_type = chance(70) ? (gid.raw[10] == 0xff ? 1 : 2) :
			   (uint8_t)rnd(256);
	if (chance(20))
		for (int i = 0; i < 6; i++)
			av->dmac[i] = (uint8_t)rnd(256);
	(void)q;
}

static uint32_t any_qpn(void)
{
	int i = rnd(nqp);

	if (chance(80) && qps[i].qp)
		return qps[i].qp->qp_num;
	return chance(50) ? rnd(1 << 24) : (uint32_t)rnd64();
}

/*
 * Steer the random phase around the kernel defects already known (see
 * --only-known); --allow-known lets them through.
 */
static void avoid_known(const struct fqp *q, struct vhca_swqe *w)
{
	if (allow_known)
		return;
	/* read-inline: an RDMA READ with INLINE on a local RC QP */
	if (q->type == IBV_QPT_RC && q->kind != P_WIRE &&
	    w->opcode == IB_UVERBS_WR_RDMA_READ)
		w->flags &= ~VHCA_SWQE_F_INLINE;
	/* ud-write: RDMA WRITE (with or without immediate) on a UD QP */
	if (q->type == IBV_QPT_UD &&
	    (w->opcode == IB_UVERBS_WR_RDMA_WRITE ||
	     w->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM))
		w->opcode = IB_UVERBS_WR_SEND;
}

static void gen_swqe(struct fqp *q, struct vhca_swqe *w, size_t stride)
{
	uint32_t room_sge = (uint32_t)(stride - VHCA_SWQE_HDR_SIZE) /
			    sizeof(struct vhca_sge);
	const struct fmr *m = &mrs[chance(60) ? 0 : rnd(NMR)];
	uint32_t i, n, rlen;

	memset(w, 0, stride);
	w->wr_id = rnd64();
	w->opcode = any_opcode();
	w->flags = any_flags();
	if ((w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	     w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD) && chance(60))
		w->flags &= ~VHCA_SWQE_F_INLINE;
	w->num_sge = any_num_sge(q->v->max_send_sge);
	w->ex = chance(50) ? any_key() : (uint32_t)rnd64();
	if (w->flags & VHCA_SWQE_F_INLINE) {
		w->inline_len = any_inline_len(q->v->max_inline,
					       (uint32_t)stride - VHCA_SWQE_HDR_SIZE);
		n = (uint32_t)(stride - VHCA_SWQE_HDR_SIZE) / 8;
		for (i = 0; i < n; i++)
			((uint64_t *)w->sge)[i] = rnd64();
	} else {
		w->inline_len = chance(90) ? 0 : (uint32_t)rnd64();
		n = w->num_sge < room_sge ? w->num_sge : room_sge;
		for (i = 0; i < n; i++)
			fill_sge(&w->sge[i]);
		/* atomics: one 8-byte SGE, mostly */
		if (n && chance(50) &&
		    (w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
		     w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD)) {
			w->num_sge = 1;
			w->sge[0].length = 8;
			w->sge[0].addr = mrs[0].addr + (rnd(1024) << 3);
			w->sge[0].lkey = mrs[0].mr->lkey;
		}
	}
	if (q->type == IBV_QPT_UD && chance(90)) {
		fill_av(&w->ud.av, q);
		w->ud.remote_qpn = any_qpn();
		w->ud.remote_qkey = chance(70) ? QKEY :
				    chance(50) ? 0x80000000 : (uint32_t)rnd64();
	} else if (w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
		   w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD) {
		w->atomic.remote_addr = chance(60) ?
			mrs[0].addr + (rnd(8192) << 3) : any_addr(m, 8);
		w->atomic.compare_add = rnd64();
		w->atomic.swap = rnd64();
		w->atomic.rkey = chance(70) && m->mr ? m->mr->rkey : any_key();
	} else if (chance(95)) {
		rlen = any_len(m);
		w->rdma.remote_addr = any_addr(m, rlen);
		w->rdma.rkey = chance(70) && m->mr ? m->mr->rkey : any_key();
	} else {
		for (i = 0; i < sizeof(w->raw); i++)
			w->raw[i] = (uint8_t)rnd(256);
	}
	/* a wire QP's peer is DEV: its MR, mostly */
	if (q->kind == P_WIRE && far.mr && q->type != IBV_QPT_UD && chance(70)) {
		struct fmr fm = { .mr = far.mr, .addr = (uintptr_t)far.buf,
				  .len = BUFSZ };

		if (w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
		    w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD) {
			w->atomic.remote_addr = chance(70) ?
				fm.addr + (rnd(BUFSZ / 8) << 3) : any_addr(&fm, 8);
			w->atomic.rkey = chance(80) ? far.mr->rkey : any_key();
		} else {
			rlen = any_len(&fm);
			w->rdma.remote_addr = any_addr(&fm, rlen);
			w->rdma.rkey = chance(80) ? far.mr->rkey : any_key();
		}
	}
	if (w->opcode == VHCA_WR_REG_MR && chance(50)) {
		w->reg.iova = any_addr(m, 4096);
		w->reg.length = chance(50) ? any_len(m) : rnd64();
		w->reg.access = chance(50) ? (uint32_t)full : (uint32_t)rnd64();
		w->reg.page_shift = chance(50) ? 12 : rnd(70);
	}
	avoid_known(q, w);
}

static void dump_swqe(const char *what, const struct fqp *q, uint32_t idx,
		      const struct vhca_swqe *w, size_t stride)
{
	uint32_t i, n;

	if (!trace)
		return;
	fprintf(stderr, "%s qp#%ld %s qpn=%#x idx=%#x op=%#x fl=%#x nsge=%u "
		"ex=%#x inl=%#x u=", what, (long)(q - qps), qpt_name(q->type),
		q->qp->qp_num, idx, w->opcode, w->flags, w->num_sge, w->ex,
		w->inline_len);
	for (i = 0; i < sizeof(w->raw); i++)
		fprintf(stderr, "%02x", w->raw[i]);
	n = (uint32_t)(stride - VHCA_SWQE_HDR_SIZE) / sizeof(struct vhca_sge);
	if (w->num_sge < n)
		n = w->num_sge;
	if (w->flags & VHCA_SWQE_F_INLINE)
		n = 0;
	for (i = 0; i < n; i++)
		fprintf(stderr, " sge%u=%#llx/%#x/%#x", i,
			(unsigned long long)w->sge[i].addr,
			w->sge[i].length, w->sge[i].lkey);
	fprintf(stderr, "\n");
}

static void doorbell(struct fqp *q)
{
	if (!q->qp)
		return;
	st.doorbells++;
	if (trace)
		fprintf(stderr, "doorbell qp#%ld\n", (long)(q - qps));
	/* the provider's own POST_SEND with no WR */
	if (write(ctx->cmd_fd, &q->v->db, sizeof(q->v->db)) < 0)
		(void)errno;
}

/* A legitimate post through the provider: publishes and rings. */
static void legit_send(struct fqp *q)
{
	struct ibv_sge sge = { .addr = mrs[0].addr + rnd(4096),
			       .length = rnd(64), .lkey = mrs[0].mr->lkey };
	struct ibv_send_wr wr = { .wr_id = rnd64(), .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = chance(50) ? IBV_SEND_SIGNALED : 0 };
	struct ibv_send_wr *bad;
	struct ibv_ah *ah = NULL;

	if (q->type == IBV_QPT_UD) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
					  .grh = { .dgid = gid, .hop_limit = 1 } };

		ah = ibv_create_ah(pd, &aa);
		if (!ah)
			return;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = any_qpn();
		wr.wr.ud.remote_qkey = QKEY;
	} else if (q->type == IBV_QPT_RC && chance(30)) {
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = mrs[0].addr + 8192;
		wr.wr.rdma.rkey = mrs[0].mr->rkey;
	}
	if (trace)
		fprintf(stderr, "post_send qp#%ld op=%d len=%u\n",
			(long)(q - qps), wr.opcode, sge.length);
	st.posts++;
	ibv_post_send(q->qp, &wr, &bad);
	if (ah)
		ibv_destroy_ah(ah);
}

static int count_left(unsigned long count)
{
	return st.wqes < count;
}

static void fuzz_send(struct fqp *q)
{
	struct vhca_mring *r = &q->v->sq;
	size_t stride = (size_t)1 << r->log2_stride;
	int k = 1 + rnd(4), i;
	uint32_t cons;

	for (i = 0; i < k; i++) {
		cons = __atomic_load_n(&r->hdr->consumer, __ATOMIC_ACQUIRE);
		/* mostly into free slots; sometimes over what waits */
		if (vhca_ring_full(r->idx, cons, r->log2_slots) && chance(80))
			break;
		gen_swqe(q, vhca_mring_slot(r, r->idx), stride);
		dump_swqe("swqe", q, r->idx, vhca_mring_slot(r, r->idx), stride);
		r->idx++;
		st.wqes++;
	}
	__atomic_store_n(&r->hdr->producer, r->idx, __ATOMIC_RELEASE);
	if (chance(80))
		doorbell(q);
	else if (chance(50))
		legit_send(q);
}

/* Receive WQEs into an RQ or SRQ ring. */
static void fuzz_recv_ring(struct vhca_mring *r, uint32_t max_sge,
			   const char *what)
{
	size_t stride = (size_t)1 << r->log2_stride;
	uint32_t room = (uint32_t)(stride - sizeof(struct vhca_rwqe)) /
			sizeof(struct vhca_sge);
	int k = 1 + rnd(4), i;
	uint32_t j, n, cons;

	for (i = 0; i < k; i++) {
		struct vhca_rwqe *w = vhca_mring_slot(r, r->idx);

		cons = __atomic_load_n(&r->hdr->consumer, __ATOMIC_ACQUIRE);
		if (vhca_ring_full(r->idx, cons, r->log2_slots) && chance(80))
			break;
		memset(w, 0, stride);
		w->wr_id = rnd64();
		w->num_sge = chance(80) ? 1 + rnd(max_sge < 4 ? max_sge : 4) :
			     any_num_sge(max_sge);
		if (chance(3))
			w->num_sge = (uint32_t)rnd64();
		w->rsvd = chance(90) ? 0 : (uint32_t)rnd64();
		n = w->num_sge < room ? w->num_sge : room;
		for (j = 0; j < n; j++) {
			fill_sge(&w->sge[j]);
			if (chance(60)) {	/* mostly something that can take data */
				w->sge[j].addr = mrs[0].addr + rnd(32768);
				w->sge[j].length = rnd(8192);
				w->sge[j].lkey = mrs[0].mr->lkey;
			}
		}
		if (trace) {
			fprintf(stderr, "%s idx=%#x wr_id=%#llx nsge=%#x", what,
				r->idx, (unsigned long long)w->wr_id,
				w->num_sge);
			for (j = 0; j < n; j++)
				fprintf(stderr, " sge%u=%#llx/%#x/%#x", j,
					(unsigned long long)w->sge[j].addr,
					w->sge[j].length,
					w->sge[j].lkey);
			fprintf(stderr, "\n");
		}
		r->idx++;
		st.rwqes++;
		st.wqes++;
	}
	__atomic_store_n(&r->hdr->producer, r->idx, __ATOMIC_RELEASE);
}

static void fuzz_recv(struct fqp *q)
{
	if (q->srq >= 0) {
		struct fsrq *s = &srqs[q->srq];

		if (s->v)
			fuzz_recv_ring(&s->v->ring, s->v->max_sge, "srq-rwqe");
	} else {
		fuzz_recv_ring(&q->v->rq, q->v->max_recv_sge, "rwqe");
	}
	if (chance(20))
		doorbell(q);	/* flushes an RQ in the error state */
}

/* A legitimate receive through the provider, to keep traffic flowing. */
static void legit_recv(struct fqp *q)
{
	struct ibv_sge sge = { .addr = mrs[0].addr + 32768 + rnd(16384),
			       .length = 4096, .lkey = mrs[0].mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = rnd64(), .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int i, n = 1 + rnd(4);

	st.posts++;
	for (i = 0; i < n; i++) {
		if (q->srq >= 0 && srqs[q->srq].srq)
			ibv_post_srq_recv(srqs[q->srq].srq, &wr, &bad);
		else if (q->srq < 0)
			ibv_post_recv(q->qp, &wr, &bad);
	}
}

/* --- ring headers ----------------------------------------------------------- */

static uint32_t any_index(uint32_t idx, uint32_t log2)
{
	uint32_t n = 1U << log2;

	switch (rnd(12)) {
	case 0:
		return 0;
	case 1:
		return idx + 1;
	case 2:
		return idx - 1;
	case 3:
		return idx + n;
	case 4:
		return idx + n + 1;
	case 5:
		return idx - n;
	case 6:
		return 0x7fffffff;
	case 7:
		return 0x80000000;
	case 8:
		return 0xffffffff;
	case 9:
		return idx + rnd(n + 1);
	case 10:
		return idx;
	default:
		return (uint32_t)rnd64();
	}
}

static void scribble(struct vhca_mring *r, const char *what, long i,
		     bool provider_resyncs)
{
	uint32_t *field, v;
	const char *fname;

	switch (rnd(3)) {
	case 0:
		field = &r->hdr->producer;
		fname = "producer";
		break;
	case 1:
		field = &r->hdr->consumer;
		fname = "consumer";
		break;
	default:
		field = &r->hdr->ctrl;
		fname = "ctrl";
		break;
	}
	v = field == &r->hdr->ctrl ? (chance(50) ? rnd(4) : (uint32_t)rnd64()) :
	    any_index(r->idx, r->log2_slots);
	if (trace)
		fprintf(stderr, "hdr %s#%ld %s: %#x -> %#x (idx %#x, log2 %u)\n",
			what, i, fname, *field, v, r->idx, r->log2_slots);
	__atomic_store_n(field, v, __ATOMIC_RELEASE);
	/* the provider follows its own index; sometimes make it ours */
	if (provider_resyncs && field == &r->hdr->producer && chance(50))
		r->idx = v;
	st.hdr_writes++;
}

static void fuzz_header(void)
{
	int r = rnd(4), i;
	struct fqp *q = &qps[rnd(nqp)];

	if (r == 0 && q->qp) {
		scribble(&q->v->sq, "sq", q - qps, true);
		if (chance(70))
			doorbell(q);
	} else if (r == 1 && q->qp && q->v->rq.map) {
		scribble(&q->v->rq, "rq", q - qps, true);
		if (chance(50))
			doorbell(q);
	} else if (r == 2) {
		i = rnd(NSRQ);
		if (srqs[i].v)
			scribble(&srqs[i].v->ring, "srq", i, true);
	} else {
		i = rnd(NCQ);
		if (cqs[i].v)
			scribble(&cqs[i].v->ring, "cq", i, false);
	}
}

/* --- CQs -------------------------------------------------------------------- */

static void poll_cqs(void)
{
	struct ibv_wc wc[16];
	int i, n;

	for (i = 0; i < NCQ; i++) {
		struct fcq *c = &cqs[i];

		if (!c->cq)
			continue;
		st.polls++;
		n = ibv_poll_cq(c->cq, 16, wc);
		if (n > 0)
			st.cqes += n;
		for (int j = 0; j < n; j++) {
			if (wc[j].status == IBV_WC_SUCCESS)
				st.cqe_ok++;
			if (wc[j].status < 32)
				st.wc_status[wc[j].status]++;
		}
		if (n < 0) {
			/* our own scribbling: skip to what the kernel wrote */
			pthread_spin_lock(&c->v->lock);
			c->v->ring.idx = __atomic_load_n(&c->v->ring.hdr->producer,
							 __ATOMIC_ACQUIRE);
			__atomic_store_n(&c->v->ring.hdr->consumer, c->v->ring.idx,
					 __ATOMIC_RELEASE);
			pthread_spin_unlock(&c->v->lock);
		}
	}
}

static void fuzz_cq(void)
{
	struct fcq *c = &cqs[rnd(NCQ)];
	static const int sizes[] = { 0, 1, 2, 7, 64, 512, 4096, 65536, 65537,
				     1 << 20, -1 };

	if (!c->cq)
		return;
	switch (rnd(4)) {
	case 0:
		ibv_req_notify_cq(c->cq, chance(50));
		break;
	case 1:
		__atomic_fetch_add(&c->v->ring.hdr->ctrl, chance(50) ?
				   VHCA_CQ_ARM_NEXT : VHCA_CQ_ARM_SOLICITED,
				   __ATOMIC_SEQ_CST);
		break;
	default:
		st.resizes++;
		if (trace)
			fprintf(stderr, "resize_cq cq#%ld\n", (long)(c - cqs));
		ibv_resize_cq(c->cq, sizes[rnd(11)]);
		break;
	}
}

static void fuzz_srq(void)
{
	struct fsrq *s = &srqs[rnd(NSRQ)];
	struct ibv_srq_attr a = { .max_wr = 1 + rnd(128), .srq_limit = rnd(8) };
	static const uint32_t odd[] = { 0, 1, 32768, 32769, 1U << 20, ~0U };

	if (!s->srq)
		return;
	if (chance(20))
		a.max_wr = odd[rnd(6)];
	st.resizes++;
	if (trace)
		fprintf(stderr, "modify_srq srq#%ld max_wr=%u limit=%u\n",
			(long)(s - srqs), a.max_wr, a.srq_limit);
	ibv_modify_srq(s->srq, &a, chance(70) ? IBV_SRQ_MAX_WR :
			chance(50) ? IBV_SRQ_LIMIT : IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT);
}

/* --- QP states -------------------------------------------------------------- */

static void fuzz_state(struct fqp *q)
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

/*
 * What a process can say besides the rings: POST_SEND, POST_RECV and
 * POST_SRQ_RECV with real WRs (a user QP's WQEs live in its rings, so the
 * kernel must refuse them), and mmap() of guessed keys with wrong sizes,
 * flags and protections.
 */
static void fuzz_raw(struct fqp *q)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		union {
			struct ib_uverbs_post_send send;
			struct ib_uverbs_post_recv recv;
			struct ib_uverbs_post_srq_recv srq;
		};
		uint64_t wrs[64];
	} c;
	struct ib_uverbs_post_send_resp resp;
	uint32_t nwr = 1 + rnd(3), nsge = rnd(4), i;
	size_t wsz;
	int r = rnd(4);

	memset(&c, 0, sizeof(c));
	for (i = 0; i < 64; i++)
		c.wrs[i] = chance(50) ? rnd64() : rnd(4);
	if (r == 0 || r == 1) {
		struct ib_uverbs_send_wr *w = (void *)c.wrs;

		wsz = sizeof(*w);
		c.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
		c.send.qp_handle = q->qp->handle;
		c.send.wr_count = nwr;
		c.send.sge_count = nsge;
		c.send.wqe_size = chance(80) ? wsz : rnd(256);
		for (i = 0; i < nwr && (i + 1) * wsz <= 256; i++) {
			w = (void *)((char *)c.wrs + i * wsz);
			w->opcode = rnd(14);
			w->num_sge = i ? 0 : nsge;
			w->send_flags = rnd(16);
		}
	} else if (r == 2) {
		wsz = sizeof(struct ib_uverbs_recv_wr);
		c.hdr.command = IB_USER_VERBS_CMD_POST_RECV;
		c.recv.qp_handle = q->qp->handle;
		c.recv.wr_count = nwr;
		c.recv.sge_count = nsge;
		c.recv.wqe_size = wsz;
	} else {
		wsz = sizeof(struct ib_uverbs_recv_wr);
		c.hdr.command = IB_USER_VERBS_CMD_POST_SRQ_RECV;
		c.srq.srq_handle = q->srq >= 0 && srqs[q->srq].srq ?
				   srqs[q->srq].srq->handle : (uint32_t)rnd64();
		c.srq.wr_count = nwr;
		c.srq.sge_count = nsge;
		c.srq.wqe_size = wsz;
	}
	c.send.response = (uintptr_t)&resp;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	if (trace)
		fprintf(stderr, "raw cmd %u qp#%ld wr_count %u sge_count %u\n",
			c.hdr.command, (long)(q - qps), nwr, nsge);
	st.raw++;
	if (write(ctx->cmd_fd, &c, sizeof(c)) < 0)
		(void)errno;
}

static void fuzz_mmap(void)
{
	static const size_t sizes[] = { 4096, 8192, 12288, 65536, 1 << 20 };
	off_t off = (off_t)rnd(512) << 12;
	size_t len = sizes[rnd(5)];
	int prot = PROT_READ | (chance(80) ? PROT_WRITE : 0) |
		   (chance(10) ? PROT_EXEC : 0);
	int flags = chance(85) ? MAP_SHARED : MAP_PRIVATE;
	unsigned char *p;

	if (trace)
		fprintf(stderr, "mmap off %#lx len %#zx prot %d flags %d\n",
			(long)off, len, prot, flags);
	st.mmaps++;
	p = mmap(NULL, len, prot, flags, ctx->cmd_fd, off);
	if (p == MAP_FAILED)
		return;
	st.mmaps_ok++;
	/* someone's ring: scribble on its header, as its owner could */
	if (prot & PROT_WRITE) {
		if (chance(50))
			__atomic_store_n((uint32_t *)p, (uint32_t)rnd64(),
					 __ATOMIC_RELEASE);
		else
			p[rnd(len < 4096 ? len : 4096)] = (unsigned char)rnd(256);
	}
	if (chance(30)) {
		void *n = mremap(p, len, len * 2, MREMAP_MAYMOVE);

		if (n != MAP_FAILED) {
			p = n;
			len *= 2;
		}
	}
	munmap(p, len);
}

/* Whether the engine has put @q in ERR or SQE (it tells nobody). */
static int qp_failed(struct fqp *q)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	return !ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia) &&
	       (a.qp_state == IBV_QPS_ERR || a.qp_state == IBV_QPS_SQE);
}

/* DEV's QP of @i's type, connected back to our wire QP of that type. */
static void far_connect(int i)
{
	struct fqp *f = &far.qp[i], *w = NULL;
	int j;

	for (j = 0; j < nqp; j++)
		if (qps[j].kind == P_WIRE && qps[j].type == f->type)
			w = &qps[j];
	if (!f->qp || !w || !w->qp)
		return;
	qp_state(f, IBV_QPS_RESET);
	/* qp_connect_fixed's AV is our own GID: the wire QPs' netdev's */
	if (qp_connect_fixed(f, w->qp->qp_num) && trace)
		fprintf(stderr, "far qp %d: connect failed\n", i);
}

static void far_connect_all(void)
{
	if (far.ctx) {
		far_connect(0);
		far_connect(1);
	}
}

static int far_setup(void)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 256, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 64 },
	};
	int i, tries;

	for (tries = 0; tries < 50 && !far.ctx; tries++) {
		far.ctx = open_dev(far.name);
		if (!far.ctx)
			usleep(100000);
	}
	if (!far.ctx)
		return -1;
	far.buf = malloc(BUFSZ);
	far.pd = ibv_alloc_pd(far.ctx);
	far.cq = far.pd ? ibv_create_cq(far.ctx, 4096, NULL, NULL, 0) : NULL;
	far.mr = far.cq && far.buf ? ibv_reg_mr(far.pd, far.buf, BUFSZ, full) : NULL;
	if (!far.mr)
		return -1;
	ia.send_cq = ia.recv_cq = far.cq;
	for (i = 0; i < 2; i++) {
		struct fqp *f = &far.qp[i];

		f->type = ia.qp_type = i ? IBV_QPT_UC : IBV_QPT_RC;
		f->kind = P_WIRE;
		f->srq = -1;
		f->access = full & ~IBV_ACCESS_LOCAL_WRITE;
		f->qp = ibv_create_qp(far.pd, &ia);
		if (!f->qp)
			return -1;
		f->v = vqp(f->qp);
	}
	printf("# far: %s's RC QP %#x and UC QP %#x answer the wire QPs\n",
	       far.name, far.qp[0].qp->qp_num, far.qp[1].qp->qp_num);
	far_connect_all();
	/* and the wire QPs again, in case DEV's QPNs were not 2 and 3 */
	for (i = 0; i < nqp; i++)
		if (qps[i].kind == P_WIRE)
			qp_connect(&qps[i]);
	return 0;
}

/* Keep DEV's QPs supplied with receives and its CQ drained. */
static void far_service(void)
{
	struct ibv_sge sge = { .length = 4096, .lkey = far.mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc[32];
	int i, n;

	for (i = 0; i < 2; i++) {
		sge.addr = (uintptr_t)far.buf + rnd(BUFSZ - 4096);
		ibv_post_recv(far.qp[i].qp, &wr, &bad);
		ibv_post_recv(far.qp[i].qp, &wr, &bad);
	}
	n = ibv_poll_cq(far.cq, 32, wc);
	for (i = 0; i < n; i++) {
		far.cqes++;
		far.ok += wc[i].status == IBV_WC_SUCCESS;
	}
	/* an error moved DEV's QP: connect it again */
	if (chance(5)) {
		for (i = 0; i < 2; i++)
			if (qp_failed(&far.qp[i]))
				far_connect(i);
	}
}

static void far_teardown(void)
{
	int i;

	if (!far.ctx)
		return;
	for (i = 0; i < 2; i++)
		if (far.qp[i].qp)
			ibv_destroy_qp(far.qp[i].qp);
	if (far.mr)
		ibv_dereg_mr(far.mr);
	if (far.cq)
		ibv_destroy_cq(far.cq);
	if (far.pd)
		ibv_dealloc_pd(far.pd);
	ibv_close_device(far.ctx);
}

/* Destroy a QP with whatever it has outstanding, and make it again. */
static void recreate_qp(struct fqp *q)
{
	if (trace)
		fprintf(stderr, "recreate qp#%ld\n", (long)(q - qps));
	st.recreated++;
	destroy_qp(q);
	make_qp((int)(q - qps));
	qp_connect(q);
	if (q->kind == P_PAIR)
		qp_connect(&qps[q->peer]);
	if (q->kind == P_WIRE)
		far_connect_all();
}

/* --- the known defects, one each ---------------------------------------------- */

/* One WQE on a fresh QP of @type connected to itself, and its doorbell. */
static int known_one(enum ibv_qp_type type, enum peer_kind kind,
		     void (*craft)(struct vhca_swqe *w, struct fqp *q))
{
	double t;
	struct ibv_wc wc;
	struct fqp *q = &qps[0];
	struct vhca_mring *r;
	struct vhca_swqe *w;
	int i, n = 0;

	cqs[0].cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cqs[0].cq)
		return -1;
	q->type = type;
	q->kind = kind;
	q->srq = -1;
	q->ia = (struct ibv_qp_init_attr){
		.qp_type = type, .send_cq = cqs[0].cq, .recv_cq = cqs[0].cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 32, .max_recv_sge = 32,
			 .max_inline_data = 64 },
	};
	q->qp = ibv_create_qp(pd, &q->ia);
	if (!q->qp)
		return -1;
	q->v = vqp(q->qp);
	nqp = 1;
	q->access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC;
	if (kind == P_WIRE ? qp_connect(q) :
	    qp_connect_fixed(q, q->qp->qp_num))
		return -1;
	printf("# QP %#x (%s), max_inline %u, max_send_sge %u, connected to "
	       "%s\n", q->qp->qp_num, qpt_name(type), q->v->max_inline,
	       q->v->max_send_sge, kind == P_WIRE ? "nobody's GID" : "itself");
	r = &q->v->sq;
	w = vhca_mring_slot(r, r->idx);
	memset(w, 0, (size_t)1 << r->log2_stride);
	craft(w, q);
	trace = 1;
	dump_swqe("known swqe", q, r->idx, w, (size_t)1 << r->log2_stride);
	r->idx++;
	__atomic_store_n(&r->hdr->producer, r->idx, __ATOMIC_RELEASE);
	t = now();
	doorbell(q);
	printf("# the doorbell returned after %.3f s\n", now() - t);
	for (i = 0; i < 3000 && !n; i++) {
		n = ibv_poll_cq(cqs[0].cq, 1, &wc);
		usleep(10000);
	}
	printf("# completion after %.3f s: %s\n", now() - t,
	       n > 0 ? ibv_wc_status_str(wc.status) : "none");
	destroy_qp(q);
	ibv_destroy_cq(cqs[0].cq);
	cqs[0].cq = NULL;
	return 0;
}

/* RDMA READ, INLINE, 16 bytes, from this QP's own full-access MR. */
static void craft_read_inline(struct vhca_swqe *w, struct fqp *q)
{
	(void)q;
	w->wr_id = 1;
	w->opcode = IB_UVERBS_WR_RDMA_READ;
	w->flags = VHCA_SWQE_F_SIGNALED | VHCA_SWQE_F_INLINE;
	w->inline_len = 16;
	w->rdma.remote_addr = mrs[0].addr;
	w->rdma.rkey = mrs[0].mr->rkey;
}

/* RDMA WRITE of one 16-byte SGE on a UD QP (the union read as rdma). */
static void craft_ud_write(struct vhca_swqe *w, struct fqp *q)
{
	(void)q;
	w->wr_id = 2;
	w->opcode = IB_UVERBS_WR_RDMA_WRITE;
	w->flags = VHCA_SWQE_F_SIGNALED;
	w->num_sge = 1;
	w->sge[0].addr = mrs[0].addr;
	w->sge[0].length = 16;
	w->sge[0].lkey = mrs[0].mr->lkey;
	w->rdma.remote_addr = mrs[0].addr + 4096;
	w->rdma.rkey = mrs[0].mr->rkey;
}

static void craft_ud_write_imm(struct vhca_swqe *w, struct fqp *q)
{
	craft_ud_write(w, q);
	w->opcode = IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
}

/*
 * A 2 GiB SEND to the wire: 32 SGEs over one 64 MiB MR.  At a path MTU
 * of 256 that is 8 Mi packets, which the doorbell builds and transmits in
 * one go, under rcu_read_lock() and the QP's mutex.
 */
static unsigned int big_sges = 32;	/* --sges: fewer for a smaller SEND */

static struct ibv_mr *big_mr(void)
{
	static struct ibv_mr *big;
	size_t len = 64 << 20;
	void *p;

	if (!big) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		big = p == MAP_FAILED ? NULL : ibv_reg_mr(pd, p, len, full);
	}
	return big;
}

static void craft_wire_2g(struct vhca_swqe *w, struct fqp *q)
{
	struct ibv_mr *big = big_mr();
	size_t len = 64 << 20;
	int i;

	printf("# a 64 MiB MR: %s; QP max_send_sge %u\n", big ? "yes" : "no",
	       q->v->max_send_sge);
	w->wr_id = 3;
	w->opcode = IB_UVERBS_WR_SEND;
	w->flags = VHCA_SWQE_F_SIGNALED;
	w->num_sge = q->v->max_send_sge < big_sges ? q->v->max_send_sge :
							big_sges;
	for (i = 0; big && i < w->num_sge; i++) {
		w->sge[i].addr = (uintptr_t)big->addr;
		w->sge[i].length = (uint32_t)len;
		w->sge[i].lkey = big->lkey;
	}
}

/*
 * The same 2 GiB SEND on an RC QP connected to itself, into a receive WQE
 * of 32 SGEs over the same MR: a 2 GiB copy in the doorbell.
 */
static void craft_self_2g(struct vhca_swqe *w, struct fqp *q)
{
	struct vhca_mring *r = &q->v->rq;
	struct vhca_rwqe *rw = vhca_mring_slot(r, r->idx);
	unsigned int i, n;

	craft_wire_2g(w, q);
	n = q->v->max_recv_sge < big_sges ? q->v->max_recv_sge : big_sges;
	rw->wr_id = 4;
	rw->num_sge = n;
	for (i = 0; i < n; i++)
		rw->sge[i] = w->sge[i];
	r->idx++;
	__atomic_store_n(&r->hdr->producer, r->idx, __ATOMIC_RELEASE);
	printf("# a receive WQE of %u SGEs of 64 MiB posted\n", n);
}

static const struct known {
	const char *name;
	enum ibv_qp_type type;
	enum peer_kind kind;
	void (*craft)(struct vhca_swqe *w, struct fqp *q);
	const char *what;
} knowns[] = {
	{ "read-inline", IBV_QPT_RC, P_SELF, craft_read_inline,
	  "RDMA READ with INLINE on an RC QP connected to itself" },
	{ "ud-write", IBV_QPT_UD, P_NONE, craft_ud_write,
	  "RDMA WRITE on a UD QP" },
	{ "ud-write-imm", IBV_QPT_UD, P_NONE, craft_ud_write_imm,
	  "RDMA WRITE_WITH_IMM on a UD QP" },
	{ "uc-wire-2g", IBV_QPT_UC, P_WIRE, craft_wire_2g,
	  "a 2 GiB SEND (32 SGEs of 64 MiB) on a UC QP to the wire" },
	{ "rc-wire-2g", IBV_QPT_RC, P_WIRE, craft_wire_2g,
	  "a 2 GiB SEND (32 SGEs of 64 MiB) on an RC QP to the wire" },
	{ "rc-self-2g", IBV_QPT_RC, P_SELF, craft_self_2g,
	  "a 2 GiB SEND on an RC QP connected to itself (a 2 GiB copy)" },
};

/*
 * RESIZE_CQ from two threads at once on one CQ, past the provider's lock
 * (which serialises its own callers): uverbs holds the CQ only for
 * reading, and vhca_resize_cq() reads cq->ring for its response after it
 * has dropped cq->lock.  Each response must describe one ring: its
 * mmap_size must be what its log2_slots make, and its key must map.
 */
struct resize_arg {
	struct ibv_cq *cq;
	int sizes[2];
	unsigned long calls, ok, mismatched, unmappable;
};

struct resize_resp {
	struct ib_uverbs_resize_cq_resp core;
	struct vhca_create_cq_resp drv;
};

static volatile int resize_stop;

static void *resize_thread(void *arg)
{
	struct resize_arg *a = arg;
	long page = sysconf(_SC_PAGESIZE);

	while (!resize_stop) {
		struct vhca_cmd_resize_cq cmd;
		struct resize_resp resp = {};
		size_t want;
		void *p;

		if (ibv_cmd_resize_cq(a->cq, a->sizes[a->calls++ & 1], &cmd,
				      sizeof(cmd), &resp.core, sizeof(resp)))
			continue;
		a->ok++;
		want = VHCA_RING_HDR_SIZE +
		       ((size_t)VHCA_CQE_STRIDE << resp.drv.log2_slots);
		want = (want + page - 1) & ~(size_t)(page - 1);
		if (resp.drv.mmap_size != want) {
			a->mismatched++;
			if (a->mismatched <= 3)
				printf("# a response of %u slots says mmap_size %u "
				       "(%zu expected), key %#llx\n",
				       1U << resp.drv.log2_slots,
				       resp.drv.mmap_size, want,
				       (unsigned long long)resp.drv.mmap_key);
		}
		p = mmap(NULL, resp.drv.mmap_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, ctx->cmd_fd, (off_t)resp.drv.mmap_key);
		if (p == MAP_FAILED)
			a->unmappable++;
		else
			munmap(p, resp.drv.mmap_size);
	}
	return NULL;
}

static int cq_resize_race(void)
{
	struct resize_arg a[2] = { { .sizes = { 64, 128 } },
				   { .sizes = { 4096, 8192 } } };
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	pthread_t th[2];
	int i;

	if (!cq)
		return -1;
	a[0].cq = a[1].cq = cq;
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, resize_thread, &a[i]);
	sleep(20);
	resize_stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 2; i++)
		printf("# thread %d: %lu resizes, %lu done, %lu responses whose "
		       "size is another ring's, %lu keys that did not map\n", i,
		       a[i].calls, a[i].ok, a[i].mismatched, a[i].unmappable);
	/*
	 * A key that no longer maps is fair: the other thread's resize may
	 * have replaced that ring already.  A size that is not the ring's
	 * whose slot count the same response gives is not.
	 */
	check(!a[0].mismatched && !a[1].mismatched,
	      "cq-resize-race: every resize's response describes one ring");
	/* the provider's mapping is the first ring's: stale, but mapped */
	return ibv_destroy_cq(cq);
}

static int run_known(const char *name)
{
	size_t i;

	if (!strcmp(name, "list"))
		printf("cq-resize-race: RESIZE_CQ from two threads at once\n");
	if (!strcmp(name, "cq-resize-race")) {
		check(cq_resize_race() == 0, "cq-resize-race: the CQ is destroyed");
		return 0;
	}

	for (i = 0; i < sizeof(knowns) / sizeof(knowns[0]); i++) {
		if (!strcmp(name, "list")) {
			printf("%s: %s\n", knowns[i].name, knowns[i].what);
			continue;
		}
		if (strcmp(name, knowns[i].name))
			continue;
		printf("# known defect %s: %s\n", knowns[i].name, knowns[i].what);
		fflush(stdout);
		check(known_one(knowns[i].type, knowns[i].kind,
				knowns[i].craft) == 0,
		      "known %s: the WQE was posted and the process lives on",
		      knowns[i].name);
		return 0;
	}
	if (!strcmp(name, "list"))
		return 0;
	fprintf(stderr, "no known case %s\n", name);
	return -1;
}

/* --- the clean ping-pong at the end --------------------------------------------- */

static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < 5000; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		usleep(1000);
	}
	return 0;
}

static void pingpong(void)
{
	const size_t len = 64 << 10;
	struct ibv_pd *p = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = p ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	unsigned char *a = malloc(len), *b = malloc(len);
	struct ibv_mr *ma = NULL, *mb = NULL;
	struct fqp x = { .type = IBV_QPT_RC, .kind = P_PAIR, .peer = -1,
			 .srq = -1 };
	struct fqp y = x;
	static const uint32_t sizes[] = { 1, 7, 64, 1000, 1024, 4096, 8191,
					  65536 };
	int ok = 1, i, good;
	struct ibv_wc wc;

	check(p && cq && a && b, "pingpong: fresh PD and CQ on the fuzzed device");
	if (!p || !cq || !a || !b)
		return;
	ma = ibv_reg_mr(p, a, len, full);
	mb = ibv_reg_mr(p, b, len, full);
	x.ia = (struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	x.qp = ibv_create_qp(p, &x.ia);
	y.qp = ibv_create_qp(p, &x.ia);
	check(ma && mb && x.qp && y.qp, "pingpong: MRs and two RC QPs");
	if (!ma || !mb || !x.qp || !y.qp)
		return;
	x.access = y.access = full & ~IBV_ACCESS_LOCAL_WRITE;
	ok = !qp_connect_fixed(&x, y.qp->qp_num) &&
	     !qp_connect_fixed(&y, x.qp->qp_num);
	check(ok, "pingpong: both QPs to RTS, connected");
	if (!ok)
		return;

	good = 0;
	for (i = 0; i < 16; i++) {
		uint32_t n = sizes[i % 8];
		struct ibv_qp *s = i & 1 ? y.qp : x.qp, *d = i & 1 ? x.qp : y.qp;
		unsigned char *sb = i & 1 ? b : a, *db = i & 1 ? a : b;
		struct ibv_mr *sm = i & 1 ? mb : ma, *dm = i & 1 ? ma : mb;
		struct ibv_sge ss = { (uintptr_t)sb, n, sm->lkey };
		struct ibv_sge ds = { (uintptr_t)db, (uint32_t)len, dm->lkey };
		struct ibv_recv_wr rw = { .wr_id = 100 + i, .sg_list = &ds,
					  .num_sge = 1 }, *brw;
		struct ibv_send_wr sw = { .wr_id = i, .sg_list = &ss, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bsw;
		int got = 0, j;
		uint32_t k;

		for (k = 0; k < n; k++)
			sb[k] = (unsigned char)rnd(256);
		memset(db, 0, n);
		if (ibv_post_recv(d, &rw, &brw) || ibv_post_send(s, &sw, &bsw))
			break;
		for (j = 0; j < 2; j++) {
			if (wait_wc(cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
				break;
			if (wc.wr_id == (uint64_t)(100 + i) && wc.byte_len == n)
				got |= 1;
			if (wc.wr_id == (uint64_t)i)
				got |= 2;
		}
		if (got != 3 || memcmp(sb, db, n))
			break;
		good++;
	}
	check(good == 16, "pingpong: 16 SENDs of 1 to 65536 bytes, received "
	      "byte for byte (%d)", good);

	/* RDMA WRITE x -> y and READ it back into a */
	{
		struct ibv_sge ss = { (uintptr_t)a, 8192, ma->lkey };
		struct ibv_send_wr sw = {
			.wr_id = 1000, .sg_list = &ss, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)b + 4096, mb->rkey },
		}, *bsw;
		uint32_t k;

		for (k = 0; k < 8192; k++)
			a[k] = (unsigned char)rnd(256);
		ok = !ibv_post_send(x.qp, &sw, &bsw) && wait_wc(cq, &wc) == 1 &&
		     wc.status == IBV_WC_SUCCESS && !memcmp(a, b + 4096, 8192);
		check(ok, "pingpong: RDMA WRITE of 8192 bytes lands byte for byte");
		memset(a + 16384, 0, 8192);
		ss.addr = (uintptr_t)a + 16384;
		sw.opcode = IBV_WR_RDMA_READ;
		sw.wr_id = 1001;
		ok = !ibv_post_send(x.qp, &sw, &bsw) && wait_wc(cq, &wc) == 1 &&
		     wc.status == IBV_WC_SUCCESS &&
		     !memcmp(a + 16384, b + 4096, 8192);
		check(ok, "pingpong: RDMA READ of 8192 bytes comes back byte for byte");
	}
	check(!ibv_destroy_qp(x.qp) && !ibv_destroy_qp(y.qp) &&
	      !ibv_dereg_mr(ma) && !ibv_dereg_mr(mb) && !ibv_destroy_cq(cq) &&
	      !ibv_dealloc_pd(p), "pingpong: everything destroyed");
	free(a);
	free(b);
}

/*
 * The racer: a second thread that rings doorbells, changes QP states,
 * scribbles on ring headers, arms and polls, on the same objects as the
 * main thread, so that the kernel sees them from two CPUs at once.  It
 * holds world_lock for reading; the main thread takes it for writing
 * around whatever unmaps rings or destroys objects (resizes, re-creation,
 * rebuilds).  Its choices come from seed + 1, but what it races with is
 * timing: --no-racer for a run that replays exactly.
 */
static pthread_rwlock_t world_lock;
static volatile int racer_stop;
static unsigned long racer_ops;

static void *racer(void *arg)
{
	uint64_t seed = *(uint64_t *)arg;
	struct ibv_wc wc[4];

	rng_state = seed ? seed : 1;
	while (!racer_stop) {
		struct fqp *q;
		int r = rnd(100);

		pthread_rwlock_rdlock(&world_lock);
		q = &qps[rnd(nqp)];
		if (!q->qp) {
			pthread_rwlock_unlock(&world_lock);
			continue;
		}
		racer_ops++;
		if (r < 35) {
			doorbell(q);
		} else if (r < 45) {
			struct ibv_qp_attr a = { .qp_state = chance(50) ?
				IBV_QPS_ERR : IBV_QPS_RTS };

			ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
		} else if (r < 50) {
			qp_connect(q);
		} else if (r < 60) {
			struct vhca_mring *u = chance(50) || !q->v->rq.map ?
					       &q->v->sq : &q->v->rq;
			uint32_t *f = chance(50) ? &u->hdr->producer :
				      &u->hdr->consumer;

			__atomic_store_n(f, any_index(u->idx, u->log2_slots),
					 __ATOMIC_RELEASE);
			doorbell(q);
		} else if (r < 75) {
			struct fcq *c = &cqs[rnd(NCQ)];

			if (c->cq) {
				ibv_req_notify_cq(c->cq, chance(50));
				ibv_poll_cq(c->cq, 4, wc);
			}
		} else if (r < 85) {
			legit_recv(q);
		} else if (r < 95) {
			legit_send(q);
		} else {
			qp_failed(q);
		}
		pthread_rwlock_unlock(&world_lock);
	}
	return NULL;
}

/* A hang must end the run too, with a word about where it was. */
static void on_alarm(int sig)
{
	static const char msg[] = "Bail out! ringfuzz: still running at its "
				  "watchdog's deadline (a hang)\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(4);
	_exit(3);
}

/* --- main ------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	unsigned long count = 100000, per_world = 5000, world_start = 0;
	double tmax = 0, t0, el, tc, tcat[12] = { 0 };
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	const char *known = NULL;
	unsigned long iter = 0;
	pthread_t evth, racer_th;
	uint64_t racer_seed;
	int use_racer = 1;
	int i, ok;

	if (argc < 2) {
		fprintf(stderr, "usage: ringfuzz DEVICE [--seed N] [--count WQES] "
			"[--time S] [--trace] [--allow-known] [--only-known CASE]\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--count") && i + 1 < argc)
			count = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--time") && i + 1 < argc)
			tmax = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--only-known") && i + 1 < argc)
			known = argv[++i];
		else if (!strcmp(argv[i], "--sges") && i + 1 < argc)
			big_sges = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--trace"))
			trace = 1;
		else if (!strcmp(argv[i], "--far") && i + 2 < argc) {
			far.name = argv[++i];
			if (inet_pton(AF_INET6, argv[++i], far.gid.raw) != 1) {
				fprintf(stderr, "ringfuzz: bad GID %s\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--no-racer"))
			use_racer = 0;
		else if (!strcmp(argv[i], "--allow-known"))
			allow_known = 1;
		else {
			fprintf(stderr, "ringfuzz: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (known && !strcmp(known, "list"))
		return run_known(known) ? 2 : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(known ? 600 : tmax ? (unsigned int)tmax + 120 : 1200);
	printf("# ringfuzz seed %" PRIu64 " count %lu time %.0f%s%s\n", seed,
	       count, tmax, allow_known ? " allow-known" : "",
	       use_racer ? "" : " no-racer");
	rng_state = seed ? seed : 1;

	ctx = open_dev(argv[1]);
	check(ctx != NULL, "open %s", argv[1]);
	if (!ctx)
		return tap_done();
	buf = mmap(NULL, BUFSZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	chan = ibv_create_comp_channel(ctx);
	ok = buf != MAP_FAILED && pd && pd2 && chan && !ibv_query_gid(ctx, 1, 0, &gid);
	if (ok)
		fcntl(chan->fd, F_SETFL, fcntl(chan->fd, F_GETFL) | O_NONBLOCK);
	if (ok) {
		fcntl(ctx->async_fd, F_SETFL,
		      fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
		ok = !pthread_create(&evth, NULL, event_thread, NULL);
	}
	ok = ok && !make_mrs();
	check(ok, "two PDs, a completion channel, %d MRs (full, none, local "
	      "write, remote read, another PD's, unaligned, one byte)", NMR);
	if (!ok)
		return tap_done();
	/* a key that was valid once */
	churn_mr();

	if (known) {
		deterministic = 1;
		if (run_known(known))
			return 2;
		return tap_done();
	}

	t0 = now();
	build_world();
	if (far.name) {
		ok = !far_setup();
		check(ok, "far: %s's RC and UC QPs connected to the wire QPs",
		      far.name);
		if (!ok)
			return tap_done();
	}
	if (use_racer) {
		pthread_rwlockattr_t ra;

		pthread_rwlockattr_init(&ra);
		pthread_rwlockattr_setkind_np(&ra,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&world_lock, &ra);
		racer_seed = seed + 1;
		use_racer = !pthread_create(&racer_th, NULL, racer, &racer_seed);
	}
	for (i = 0, ok = 0; i < NQP; i++)
		ok += qps[i].qp != NULL;
	check(ok == NQP, "a world of %d CQs, %d SRQs, %d QPs (RC, UC, UD; pairs, "
	      "loopback, wire, on SRQs): %d made", NCQ, NSRQ, NQP, ok);
	while (count_left(count)) {
		/* with a far peer, the wire QPs get half of the turns */
		struct fqp *q = &qps[far.ctx && chance(50) ? 10 + rnd(2) :
				     rnd(nqp)];
		int r = rnd(1000);

		if (!(++iter & 63)) {
			if (tmax && now() - t0 > tmax)
				break;
		}
		if (st.wqes - world_start > per_world) {
			if (trace)
				fprintf(stderr, "rebuild\n");
			tc = now();
			pthread_rwlock_wrlock(&world_lock);
			teardown_world();
			if (chance(50))
				churn_mr();
			build_world();
			far_connect_all();
			pthread_rwlock_unlock(&world_lock);
			tcat[11] += now() - tc;
			world_start = st.wqes;
			st.rebuilds++;
			continue;
		}
		if (!q->qp) {
			if (chance(10)) {
				pthread_rwlock_wrlock(&world_lock);
				make_qp((int)(q - qps));
				qp_connect(q);
				pthread_rwlock_unlock(&world_lock);
			}
			continue;
		}
		if (far.ctx && chance(10))
			far_service();
		/* a wire QP in error is worth bringing back: it has a peer */
		if (far.ctx && q->kind == P_WIRE && q->qp && chance(10) &&
		    qp_failed(q)) {
			qp_connect(q);
			far_connect_all();
		}
		tc = now();
		if (r < 540)
			fuzz_send(q);
		else if (r < 640)
			fuzz_recv(q);
		else if (r < 680)
			legit_recv(q);
		else if (r < 740)
			fuzz_header();
		else if (r < 860)
			poll_cqs();
		else if (r < 890) {
			/* resizes unmap rings the racer may be using */
			pthread_rwlock_wrlock(&world_lock);
			r < 880 ? fuzz_cq() : fuzz_srq();
			pthread_rwlock_unlock(&world_lock);
		}
		else if (r < 910 || (r < 930 && qp_failed(q)))
			fuzz_state(q);
		else if (r < 930)
			doorbell(q);
		else if (r < 935) {
			pthread_rwlock_wrlock(&world_lock);
			recreate_qp(q);
			pthread_rwlock_unlock(&world_lock);
		}
		else if (r < 955)
			legit_send(q);
		else if (r < 960)
			r & 1 ? fuzz_raw(q) : fuzz_mmap();
		else
			doorbell(q);
		tcat[r < 540 ? 0 : r < 640 ? 1 : r < 680 ? 2 : r < 740 ? 3 :
		     r < 860 ? 4 : r < 880 ? 5 : r < 890 ? 6 : r < 930 ? 7 :
		     r < 935 ? 8 : r < 960 ? 9 : 10] += now() - tc;
	}
	if (use_racer) {
		racer_stop = 1;
		pthread_join(racer_th, NULL);
		printf("# the racer: %lu operations\n", racer_ops);
	}
	el = now() - t0;
	printf("# seconds in: send %.1f, recv %.1f, legit recv %.1f, headers %.1f, "
	       "polls %.1f, CQ ops %.1f, SRQ resize %.1f, modify %.1f, recreate "
	       "%.1f, legit send %.1f, doorbell %.1f, rebuild %.1f\n", tcat[0],
	       tcat[1], tcat[2], tcat[3], tcat[4], tcat[5], tcat[6], tcat[7],
	       tcat[8], tcat[9], tcat[10], tcat[11]);
	printf("# %lu WQEs (%lu receive) in %.1f s: %.0f WQEs/s; %lu doorbells, "
	       "%lu posts, %lu header writes, %lu polls (%lu CQEs), %lu modifies, "
	       "%lu resizes, %lu QPs recreated, %lu worlds rebuilt, %lu events\n",
	       st.wqes, st.rwqes, el, st.wqes / (el > 0 ? el : 1), st.doorbells,
	       st.posts, st.hdr_writes, st.polls, st.cqes, st.modifies,
	       st.resizes, st.recreated, st.rebuilds, nevents);
	printf("# %lu raw POST_SEND/POST_RECV/POST_SRQ_RECV commands, %lu "
	       "mmaps of guessed keys (%lu mapped)\n", st.raw, st.mmaps,
	       st.mmaps_ok);
	printf("# completions by status:");
	for (i = 0; i < 32; i++)
		if (st.wc_status[i])
			printf(" %s %lu,", ibv_wc_status_str(i), st.wc_status[i]);
	printf("\n");
	check(st.wqes >= count, "fuzzed %lu WQEs of %lu (seed %" PRIu64 ")%s",
	      st.wqes, count, seed,
	      st.wqes < count ? ": cut short by the time cap" : "");
	usleep(200000);	/* let queued work and RNR timers run */
	if (far.ctx) {
		far_service();
		printf("# far: %lu completions on %s, %lu successful\n", far.cqes,
		       far.name, far.ok);
	}
	check(teardown_world() == 0, "every fuzzed QP, SRQ and CQ destroyed");
	far_teardown();
	for (i = 0, ok = 1; i < NMR; i++)
		if (mrs[i].mr && ibv_dereg_mr(mrs[i].mr))
			ok = 0;
	events_stop = 1;
	pthread_join(evth, NULL);
	ibv_destroy_comp_channel(chan);
	check(ok && !ibv_dealloc_pd(pd) && !ibv_dealloc_pd(pd2),
	      "MRs deregistered, PDs freed");
	pingpong();
	ibv_close_device(ctx);
	return tap_done();
}
