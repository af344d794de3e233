// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* The clean ping-pong at the end, on the device the fuzz went through. */
#include "ringfuzz.h"

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

void pingpong(void)
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
