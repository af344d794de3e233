// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* The receive rings: RQ and SRQ slots, legitimate receives, SRQ resizes. */
#include "ringfuzz.h"

/*
 * Receive WQEs into an RQ or SRQ ring; @m is an MR of the ring's PD, which
 * the SGEs that can take data mostly point into.  Returns how many.
 */
static int fuzz_recv_ring(struct vhca_mring *r, uint32_t max_sge,
			   const struct fmr *m, const char *what)
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
				w->sge[j].addr = m->addr + rnd(m->len / 2);
				w->sge[j].length = rnd(8192);
				w->sge[j].lkey = m->mr->lkey;
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
	return i;
}

/*
 * The SRQ @q's receives come from: its own, or for either XRC half one of
 * the domain's XRC SRQs (whichever the next message names); NULL for a
 * QP with a receive ring of its own.
 */
struct fsrq *recv_srq(const struct fqp *q)
{
	if (qpt_xrc(q->type))
		return &srqs[NBSRQ + rnd(NSRQ - NBSRQ)];
	return q->srq >= 0 ? &srqs[q->srq] : NULL;
}

/* An MR of @s's PD (of the RQ's, pd, with no SRQ) that is registered. */
static const struct fmr *recv_mr(const struct fsrq *s)
{
	return s && s->mr->mr ? s->mr : &mrs[0];
}

void fuzz_recv(struct fqp *q)
{
	struct fsrq *s = recv_srq(q);

	if (s && s->v && srq_is_xrc((int)(s - srqs)))
		st.xrwqes += fuzz_recv_ring(&s->v->ring, s->v->max_sge,
					    recv_mr(s), "xsrq-rwqe");
	else if (s && s->v)
		fuzz_recv_ring(&s->v->ring, s->v->max_sge, recv_mr(s),
			       "srq-rwqe");
	else if (!s && q->v->rq.map)
		fuzz_recv_ring(&q->v->rq, q->v->max_recv_sge, &mrs[0], "rwqe");
	if (chance(20))
		doorbell(q);	/* flushes an RQ in the error state */
}

/* A legitimate receive through the provider, to keep traffic flowing. */
void legit_recv(struct fqp *q)
{
	struct fsrq *s = recv_srq(q);
	const struct fmr *m = recv_mr(s);
	struct ibv_sge sge = { .addr = m->addr + m->len / 2 + rnd(m->len / 4),
			       .length = 4096, .lkey = m->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = rnd64(), .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int i, n = 1 + rnd(4);

	st.posts++;
	for (i = 0; i < n; i++) {
		if (s && s->srq)
			ibv_post_srq_recv(s->srq, &wr, &bad);
		else if (!s && q->v->rq.map)
			ibv_post_recv(q->qp, &wr, &bad);
	}
}

void fuzz_srq(void)
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
