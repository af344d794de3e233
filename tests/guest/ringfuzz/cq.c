// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* The CQs: polls, arms, resizes. */
#include "ringfuzz.h"

/*
 * Whether XRC gets anywhere: completions of the XRC_SEND QP, and those on
 * the XRC SRQs' CQs, which bear the XRC_RECV QP's number.
 */
static void count_xrc(const struct ibv_wc *wc)
{
	int i;

	for (i = 0; i < nqp; i++) {
		const struct fqp *q = &qps[i];
		int k = q->type == IBV_QPT_XRC_RECV;

		if (!qpt_xrc(q->type) || !q->qp || q->qp->qp_num != wc->qp_num)
			continue;
		st.xcqes[k]++;
		st.xcqes_ok[k] += wc->status == IBV_WC_SUCCESS;
	}
}

void poll_cqs(void)
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
			count_xrc(&wc[j]);
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

void fuzz_cq(void)
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
