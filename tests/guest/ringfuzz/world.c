// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The fuzzer's objects: its MRs, the CQs, SRQs and QPs of a world, built,
 * torn down and built again, and the thread that acks their events.
 */
#include "ringfuzz.h"

struct fmr mrs[NMR];
uint32_t stale_keys[16];
unsigned int nstale;
struct fcq cqs[NCQ];
struct fsrq srqs[NSRQ];
struct fqp qps[NQP];
int nqp;
struct stats st;

static int reg_mr(struct fmr *m, struct ibv_pd *p, size_t off, size_t len,
		  int access)
{
	m->mr = ibv_reg_mr(p, buf + off, len, access);
	m->addr = (uintptr_t)(buf + off);
	m->len = (uint32_t)len;
	m->access = access;
	return m->mr ? 0 : -1;
}

const int full = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

int make_mrs(void)
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
void churn_mr(void)
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
volatile int events_stop;
unsigned long nevents;

void *event_thread(void *arg)
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

void make_qp(int i)
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

void build_world(void)
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

void destroy_qp(struct fqp *q)
{
	if (q->qp)
		ibv_destroy_qp(q->qp);
	q->qp = NULL;
	q->v = NULL;
}

int teardown_world(void)
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

/* Destroy a QP with whatever it has outstanding, and make it again. */
void recreate_qp(struct fqp *q)
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
