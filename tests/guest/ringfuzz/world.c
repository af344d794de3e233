// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The fuzzer's objects: its MRs, the XRC domain, CQs, SRQs and QPs of a
 * world, built, torn down and built again, and the thread that acks their
 * events.
 */
#include "ringfuzz.h"

struct fmr mrs[NMR];
uint32_t stale_keys[16];
unsigned int nstale;
struct fcq cqs[NCQ];
struct fsrq srqs[NSRQ];
struct fqp qps[NQP];
int nqp;
struct ibv_xrcd *xrcd;
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

/*
 * A basic SRQ on pd, or (srqs[NBSRQ..]) an XRC SRQ of the world's domain:
 * the first on pd, the next on pd2, so that a WQE naming one or the other
 * changes which PD the responder checks keys against.  An XRC SRQ
 * completes on a CQ of the world, whichever it draws.
 */
static void make_srq(int i)
{
	struct fsrq *s = &srqs[i];
	struct ibv_srq_attr at = {
		.max_wr = 1 + rnd(64), .max_sge = 1 + rnd(32),
		.srq_limit = chance(30) ? rnd(4) : 0,
	};

	if (at.srq_limit >= at.max_wr)
		at.srq_limit = 0;
	s->num = 0;
	s->mr = &mrs[0];
	if (!srq_is_xrc(i)) {
		struct ibv_srq_init_attr a = { .attr = at };

		s->srq = ibv_create_srq(pd, &a);
	} else {
		int on_pd2 = (i - NBSRQ) & 1;
		struct ibv_srq_init_attr_ex a = {
			.attr = at,
			.comp_mask = IBV_SRQ_INIT_ATTR_TYPE |
				     IBV_SRQ_INIT_ATTR_XRCD |
				     IBV_SRQ_INIT_ATTR_CQ |
				     IBV_SRQ_INIT_ATTR_PD,
			.srq_type = IBV_SRQT_XRC,
			.xrcd = xrcd, .cq = cqs[rnd(NCQ)].cq,
			.pd = on_pd2 ? pd2 : pd,
		};

		if (on_pd2)
			s->mr = &mrs[4];
		s->srq = xrcd && a.cq ? ibv_create_srq_ex(ctx, &a) : NULL;
		if (s->srq && ibv_get_srq_num(s->srq, &s->num))
			s->num = 0;
	}
	s->v = s->srq ? container_of(s->srq, struct vhca_srq, vsrq.srq) : NULL;
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

/*
 * XRC's halves, through ibv_create_qp_ex(): an XRC_SEND QP on pd with a
 * send ring only, and an XRC_RECV QP of the domain with no ring at all
 * (the kernel gives it none: its receives come from the XRC SRQ each
 * message names, its completions on that SRQ's CQ).
 */
static void make_xrc_qp(struct fqp *q)
{
	struct ibv_qp_init_attr_ex a = { .qp_type = q->type };

	q->qp = NULL;
	if (q->type == IBV_QPT_XRC_RECV) {
		a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		a.xrcd = xrcd;
		if (xrcd)
			q->qp = ibv_create_qp_ex(ctx, &a);
	} else {
		a.comp_mask = IBV_QP_INIT_ATTR_PD;
		a.pd = pd;
		a.send_cq = cqs[q->scq].cq;
		a.sq_sig_all = chance(20);
		a.cap.max_send_wr = 1 + rnd(64);
		a.cap.max_send_sge = rnd(33);
		a.cap.max_inline_data = chance(50) ? rnd(513) : 0;
		/* a receive side the core drops for XRC_SEND: said anyway */
		if (chance(30)) {
			a.recv_cq = cqs[q->rcq].cq;
			a.cap.max_recv_wr = rnd(64);
			a.cap.max_recv_sge = rnd(32);
		}
		if (a.send_cq)
			q->qp = ibv_create_qp_ex(ctx, &a);
	}
	q->v = q->qp ? vqp(q->qp) : NULL;
	q->access = qp_access_flags();
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

	if (qpt_xrc(q->type)) {
		make_xrc_qp(q);
		return;
	}
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

/*
 * The QPs of one world: every type, every kind of peer, some on SRQs.
 * XRC's two halves are a pair on this device only: the kernel refuses an
 * XRC QP an AV of another host (EOPNOTSUPP), so there is no wire XRC.
 */
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
	{ IBV_QPT_XRC_SEND, P_PAIR, 15, -1 },	/* 14 -> 15, into any XRC SRQ */
	{ IBV_QPT_XRC_RECV, P_PAIR, 14, -1 },
};

void build_world(void)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,	/* a domain of its own */
	};
	int i;

	xrcd = ibv_open_xrcd(ctx, &xa);
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

/*
 * Whether anything of the world uses its XRC domain still: an XRC SRQ or
 * an XRC_RECV QP (an XRC_SEND QP is of a PD, not of the domain).
 */
static int xrcd_in_use(void)
{
	int i;

	for (i = NBSRQ; i < NSRQ; i++)
		if (srqs[i].srq)
			return 1;
	for (i = 0; i < NQP; i++)
		if (qps[i].type == IBV_QPT_XRC_RECV && qps[i].qp)
			return 1;
	return 0;
}

/*
 * Close the domain while its SRQs or QPs are there: refused (EBUSY), and
 * it stays open.  A close that works is a kernel that lost count: the
 * domain is gone under them, which the run reports.
 */
static void close_xrcd_in_use(void)
{
	int e;

	if (!xrcd || !xrcd_in_use())
		return;
	if (trace)
		fprintf(stderr, "close_xrcd in use\n");
	e = ibv_close_xrcd(xrcd);
	if (e) {
		st.xrcd_busy++;
		return;
	}
	printf("# ibv_close_xrcd closed a domain its SRQs or QPs still use\n");
	st.xrcd_closed_in_use = 1;
	xrcd = NULL;
}

/*
 * QPs first, then SRQs (XRC SRQs hold their CQs and the domain), then the
 * domain, then the CQs.  Sometimes the domain is closed too early first.
 */
int teardown_world(void)
{
	int i, err = 0, early = rnd(4);

	if (early == 0)
		close_xrcd_in_use();
	for (i = 0; i < NQP; i++) {
		if (qps[i].qp && ibv_destroy_qp(qps[i].qp))
			err = -1;
		qps[i].qp = NULL;
		qps[i].v = NULL;
	}
	if (early == 1)
		close_xrcd_in_use();	/* its SRQs hold it still */
	for (i = 0; i < NSRQ; i++) {
		if (srqs[i].srq && ibv_destroy_srq(srqs[i].srq))
			err = -1;
		srqs[i].srq = NULL;
		srqs[i].v = NULL;
		srqs[i].num = 0;
	}
	if (xrcd && ibv_close_xrcd(xrcd))
		err = -1;
	xrcd = NULL;
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
