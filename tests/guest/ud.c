// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * UD through plain libibverbs, and the sentence of ibv_post_recv(3) and
 * ibv_post_srq_recv(3) about it: the GRH of the incoming message is placed
 * in the first 40 bytes of the buffer(s), and the data starts at offset 40.
 * Checked byte for byte for the IPv6 (RoCEv2 link-local GID) and the IPv4
 * form, across two SGEs, with IBV_WC_GRH; plus qkey rules, an oversized
 * datagram and a receive buffer too small for it.  Prints TAP.
 * Usage: ud DEVICE IPV4_GID_INDEX
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "lib/testlib.h"

#define QKEY 0x11111111

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static unsigned char *buf;

static struct ibv_qp *ud_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2,
			 .max_recv_sge = 2 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = QKEY };

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_QKEY))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? NULL : qp;
}

static int poll_n(struct ibv_wc *wc, int n, int ms)
{
	struct timespec t0, t;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		got += ibv_poll_cq(cq, n - got, wc + got);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (got >= n || (t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return got;
		usleep(100);
	}
}

/* Send @len bytes from buf to @dst's QPN through @ah; receive into @r. */
static int ud_round(struct ibv_qp *src, struct ibv_qp *dst, struct ibv_ah *ah,
		    uint32_t qkey, uint32_t len, struct ibv_sge *r, int nr,
		    struct ibv_wc *wc)
{
	struct ibv_sge s = { .addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr rw = { .wr_id = 1, .sg_list = r, .num_sge = nr }, *rbad;
	struct ibv_send_wr sw = { .wr_id = 2, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
				  .wr.ud = { .ah = ah, .remote_qpn = dst->qp_num,
					     .remote_qkey = qkey } }, *sbad;

	if ((nr && ibv_post_recv(dst, &rw, &rbad)) || ibv_post_send(src, &sw, &sbad))
		return -1;
	return poll_n(wc, 2, 500);
}

static struct ibv_wc *find(struct ibv_wc *wc, int n, uint64_t id)
{
	for (int i = 0; i < n; i++)
		if (wc[i].wr_id == id)
			return &wc[i];
	return NULL;
}

static struct ibv_ah *ah_to(int gid_index, union ibv_gid *gid)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1,
				 .grh = { .sgid_index = gid_index, .hop_limit = 64 } };

	if (ibv_query_gid(ctx, 1, gid_index, gid))
		return NULL;
	a.grh.dgid = *gid;
	return ibv_create_ah(pd, &a);
}

int main(int argc, char **argv)
{
	struct ibv_sge r[2];
	struct ibv_wc wc[4], *w;
	union ibv_gid g6, g4;
	struct ibv_qp *a, *b;
	struct ibv_ah *ah6, *ah4;
	unsigned char *in;
	int i, n;

	if (argc != 3)
		return 2;
	ctx = open_dev(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	buf = aligned_alloc(4096, 65536);
	mr = cq ? ibv_reg_mr(pd, buf, 65536, IBV_ACCESS_LOCAL_WRITE) : NULL;
	a = mr ? ud_qp() : NULL;
	b = a ? ud_qp() : NULL;
	ah6 = b ? ah_to(0, &g6) : NULL;
	ah4 = ah6 ? ah_to(atoi(argv[2]), &g4) : NULL;
	check(ah4 != NULL, "two UD QPs in RTS, AHs to the IPv6 and IPv4 GIDs");
	if (!ah4)
		return tap_done();
	in = buf + 32768;

	for (i = 0; i < 100; i++)
		buf[i] = (unsigned char)(0xa0 + i);
	memset(in, 0xee, 200);
	r[0] = (struct ibv_sge){ .addr = (uintptr_t)in, .length = 200, .lkey = mr->lkey };
	n = ud_round(a, b, ah6, QKEY, 100, r, 1, wc);
	w = find(wc, n, 1);
	check(w && w->status == IBV_WC_SUCCESS && (w->wc_flags & IBV_WC_GRH) &&
	      w->byte_len == 140 && w->src_qp == a->qp_num,
	      "IBV_WC_GRH, byte_len = 40 + 100, src_qp");
	check(!memcmp(in + 40, buf, 100), "the data starts at offset 40");
	/* as libmlx5 reports a ConnectX CQE's; UCX's ud_verbs reads it */
	check(w && w->sl == 1, "IPv6 GID: the SL says the L3 header type, IPv6 (1)");
	check((in[0] >> 4) == 6 && !memcmp(in + 8, g6.raw, 16) &&
	      !memcmp(in + 24, g6.raw, 16),
	      "IPv6 GID: the first 40 bytes are an IPv6 header, source and destination GIDs");
	check(find(wc, n, 2) && find(wc, n, 2)->status == IBV_WC_SUCCESS,
	      "the send completes");

	/* the GRH across two SGEs: "the first 40 bytes of the buffer(s)" */
	memset(in, 0xee, 400);
	r[0] = (struct ibv_sge){ .addr = (uintptr_t)in, .length = 24, .lkey = mr->lkey };
	r[1] = (struct ibv_sge){ .addr = (uintptr_t)in + 200, .length = 200, .lkey = mr->lkey };
	n = ud_round(a, b, ah4, QKEY, 100, r, 2, wc);
	w = find(wc, n, 1);
	check(w && w->status == IBV_WC_SUCCESS && w->byte_len == 140,
	      "IPv4 GID, receive split over 24 + 200 bytes");
	check(w && w->sl == 2, "IPv4 GID: the SL says the L3 header type, IPv4 (2)");
	/* GRH bytes 0-23 in the first SGE, 24-39 at the start of the second */
	check((in[20] >> 4) == 4 && !memcmp(in + 200 + (32 - 24), g4.raw + 12, 4),
	      "IPv4 GID: an IPv4 header at offset 20 of the slot, with our address as source");
	check(!memcmp(in + 200 + 16, buf, 100),
	      "and the data at offset 40 of the scatter list, across the SGE boundary");

	r[0] = (struct ibv_sge){ .addr = (uintptr_t)in, .length = 200, .lkey = mr->lkey };
	n = ud_round(a, b, ah6, QKEY + 1, 10, r, 1, wc);
	check(n == 1 && wc[0].wr_id == 2 && wc[0].status == IBV_WC_SUCCESS,
	      "a wrong qkey: the datagram is dropped, the sender completes");
	/* the receive posted above is still there: this one lands in it */
	n = ud_round(a, b, ah6, 0x80000000, 10, NULL, 0, wc);
	w = find(wc, n, 1);
	check(w && w->status == IBV_WC_SUCCESS && w->byte_len == 50,
	      "a qkey with the high bit set means the sender's own qkey: delivered");
	r[0].length = 60;
	n = ud_round(a, b, ah6, QKEY, 100, r, 1, wc);
	w = find(wc, n, 1);
	check(w && w->status == IBV_WC_LOC_LEN_ERR,
	      "a receive buffer too small for GRH + data: IBV_WC_LOC_LEN_ERR");
	r[0].length = 200;
	n = ud_round(a, b, ah6, QKEY, 4096, r, 1, wc);
	w = find(wc, n, 2);
	check(w && w->status == IBV_WC_LOC_LEN_ERR,
	      "a datagram larger than the path MTU: IBV_WC_LOC_LEN_ERR for the sender");

	/* IBA 10.3.1: a UD send error stops the send queue only */
	{
		struct ibv_qp_attr qa = {};
		struct ibv_qp_init_attr qia;

		if (ibv_query_qp(a, &qa, IBV_QP_STATE, &qia))
			qa.qp_state = IBV_QPS_UNKNOWN;
		check(qa.qp_state == IBV_QPS_SQE,
		      "the failed send moved the UD QP to SQE, not ERR (%d)",
		      qa.qp_state);
		n = ud_round(b, a, ah6, QKEY, 100, r, 1, wc);
		w = find(wc, n, 1);
		check(n == 2 && w && w->status == IBV_WC_SUCCESS &&
		      w->qp_num == a->qp_num,
		      "in SQE it still receives");
		n = ud_round(a, b, ah6, QKEY, 10, NULL, 0, wc);
		check(n == 1 && wc[0].wr_id == 2 &&
		      wc[0].status == IBV_WC_WR_FLUSH_ERR,
		      "in SQE a posted send is flushed (%d)", n);
		qa.qp_state = IBV_QPS_RTS;
		check(!ibv_modify_qp(a, &qa, IBV_QP_STATE),
		      "modify_qp SQE -> RTS");
		/* b still holds the receive the oversized datagram missed */
		n = ud_round(a, b, ah6, QKEY, 100, NULL, 0, wc);
		check(n == 2 && find(wc, n, 1) && find(wc, n, 2) &&
		      find(wc, n, 1)->status == IBV_WC_SUCCESS &&
		      find(wc, n, 2)->status == IBV_WC_SUCCESS,
		      "back in RTS it sends again (%d)", n);
	}

	ibv_destroy_ah(ah4);
	ibv_destroy_ah(ah6);
	ibv_destroy_qp(b);
	ibv_destroy_qp(a);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
