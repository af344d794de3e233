// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* The rings' headers: producer, consumer and ctrl, scribbled on. */
#include "ringfuzz.h"

uint32_t any_index(uint32_t idx, uint32_t log2)
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

void fuzz_header(void)
{
	int r = rnd(4), i;
	struct fqp *q = &qps[rnd(nqp)];

	if (r == 0 && has_sq(q)) {
		scribble(&q->v->sq, "sq", q - qps, true);
		if (chance(70))
			doorbell(q);
	} else if (r == 1 && q->qp && q->v->rq.map) {
		scribble(&q->v->rq, "rq", q - qps, true);
		if (chance(50))
			doorbell(q);
	} else if (r == 2) {
		i = rnd(NSRQ);	/* XRC SRQs' rings among them */
		if (srqs[i].v)
			scribble(&srqs[i].v->ring, "srq", i, true);
	} else {
		i = rnd(NCQ);
		if (cqs[i].v)
			scribble(&cqs[i].v->ring, "cq", i, false);
	}
}
