// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* The receive rings: RQ and SRQ slots, legitimate receives, SRQ resizes. */
#include "ringfuzz.h"

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

void fuzz_recv(struct fqp *q)
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
void legit_recv(struct fqp *q)
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
