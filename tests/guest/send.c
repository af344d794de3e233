// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The engine, through plain libibverbs on two RC QPs of one device:
 * data moved byte for byte (gather, scatter, inline, immediate data, RDMA
 * WRITE and READ, atomics, access rules),
 * completions (signaled or not, src_qp, byte_len), the error statuses a
 * user can provoke (LOC_LEN_ERR and REM_INV_REQ_ERR, LOC_PROT_ERR,
 * RNR_RETRY_EXC_ERR, WR_FLUSH_ERR), RNR retry that recovers, ibv_post_send
 * errors, the SRQ limit event, SRQ and CQ resize under traffic, and the
 * ring's ctrl word: posts that need no doorbell while the engine owns the
 * send ring, CQ arming with no system call (next and solicited), and
 * receives posted to a QP in the error state being flushed.
 * Prints TAP.  Usage: send DEVICE
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "lib/testlib.h"

#define BUF (64 << 10)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr, *rmr;	/* rmr grants remote access */
static unsigned char *buf;

struct pair {
	struct ibv_qp *a, *b;
};

static struct ibv_qp *make_qp(struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 128 },
	};

	return ibv_create_qp(pd, &ia);
}

/* The receiver's RNR NAK timer code: 1 is 10 us, 28 is 164 ms. */
static uint8_t rnr_timer = 1;

static int qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_ATOMIC;

static int connect_qp(struct ibv_qp *qp, uint32_t dest, int rnr_retry)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = qp_access };
	union ibv_gid gid;

	if (ibv_query_gid(ctx, 1, 0, &gid) ||
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest, .max_dest_rd_atomic = 1,
		.min_rnr_timer = rnr_timer,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .hop_limit = 1 } },
	};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14,
				  .retry_cnt = 7, .rnr_retry = rnr_retry,
				  .max_rd_atomic = 1 };
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			     IBV_QP_MAX_QP_RD_ATOMIC);
}

static int make_pair(struct pair *p, struct ibv_srq *srq, int rnr_retry)
{
	p->a = make_qp(NULL);
	p->b = make_qp(srq);
	return !p->a || !p->b || connect_qp(p->a, p->b->qp_num, rnr_retry) ||
	       connect_qp(p->b, p->a->qp_num, rnr_retry);
}

static void free_pair(struct pair *p)
{
	ibv_destroy_qp(p->a);
	ibv_destroy_qp(p->b);
}

/* Poll until @n completions are in @wc, or 2 s pass. */
static int poll_n(struct ibv_wc *wc, int n)
{
	struct timespec t0, t;
	int got = 0, r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 2)
			break;
		if (!r)
			usleep(100);
	}
	return got;
}

static struct ibv_wc *find(struct ibv_wc *wc, int n, uint64_t wr_id)
{
	int i;

	for (i = 0; i < n; i++)
		if (wc[i].wr_id == wr_id)
			return &wc[i];
	return NULL;
}

static int post_recv(struct ibv_qp *qp, uint64_t id, struct ibv_sge *sge, int n)
{
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = n }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct ibv_qp *qp, uint64_t id, struct ibv_sge *sge, int n,
		     enum ibv_wr_opcode op, int flags, uint32_t imm)
{
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = n,
				  .opcode = op, .send_flags = flags,
				  .imm_data = htobe32(imm) }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static struct ibv_sge sge_at(size_t off, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)buf + off, .length = len,
				 .lkey = mr->lkey };
}

static void data_tests(void)
{
	struct ibv_sge s[3], r[2];
	struct ibv_wc wc[8], *w;
	struct pair p;
	int n, i, same;

	if (make_pair(&p, NULL, 7)) {
		check(0, "connect two RC QPs");
		return;
	}
	for (i = 0; i < 15000; i++)
		buf[i] = (unsigned char)(i * 7 + 1);
	memset(buf + 32768, 0, 16000);
	/* gather 3 x 5000 (across pages), scatter into 8000 + 7000 */
	s[0] = sge_at(0, 5000);
	s[1] = sge_at(5000, 5000);
	s[2] = sge_at(10000, 5000);
	r[0] = sge_at(32768, 8000);
	r[1] = sge_at(32768 + 8000, 7000);
	check(post_recv(p.b, 1, r, 2) == 0, "post a 2-SGE receive");
	check(post_send(p.a, 2, s, 3, IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED,
			0xabcd1234) == 0, "post a 3-SGE SEND_WITH_IMM");
	n = poll_n(wc, 2);
	w = find(wc, n, 1);
	check(w && w->status == IBV_WC_SUCCESS && w->opcode == IBV_WC_RECV &&
	      w->byte_len == 15000 && (w->wc_flags & IBV_WC_WITH_IMM) &&
	      be32toh(w->imm_data) == 0xabcd1234 && w->src_qp == p.a->qp_num &&
	      w->qp_num == p.b->qp_num,
	      "receive completion: RECV, 15000 bytes, immediate data, src_qp");
	w = find(wc, n, 2);
	check(w && w->status == IBV_WC_SUCCESS && w->opcode == IBV_WC_SEND &&
	      w->qp_num == p.a->qp_num, "send completion: SEND, success");
	same = !memcmp(buf, buf + 32768, 15000);
	check(same, "the bytes arrived, gathered and scattered in order");

	memcpy(buf + 40000, "inline payload", 15);
	s[0] = sge_at(40000, 15);
	r[0] = sge_at(41000, 64);
	post_recv(p.b, 3, r, 1);
	check(post_send(p.a, 4, s, 1, IBV_WR_SEND,
			IBV_SEND_INLINE | IBV_SEND_SIGNALED, 0) == 0, "post an inline SEND");
	memset(buf + 40000, 0, 15);	/* inline: the buffer is free at once */
	n = poll_n(wc, 2);
	w = find(wc, n, 3);
	check(w && w->status == IBV_WC_SUCCESS && w->byte_len == 15 &&
	      !(w->wc_flags & IBV_WC_WITH_IMM) &&
	      !memcmp(buf + 41000, "inline payload", 15),
	      "inline data arrives although its buffer was cleared after posting");

	post_recv(p.b, 5, r, 1);
	post_send(p.a, 6, s, 1, IBV_WR_SEND, 0, 0);	/* unsignaled */
	n = poll_n(wc, 2);
	check(n == 1 && wc[0].wr_id == 5, "an unsignaled send completes on the receiver only (%d)", n);

	/* receive buffer too small */
	r[0] = sge_at(41000, 10);
	post_recv(p.b, 7, r, 1);
	post_recv(p.b, 71, r, 1);	/* the receiver's next receive */
	r[1] = sge_at(42000, 64);
	post_recv(p.a, 70, &r[1], 1);	/* the sender's own receive */
	s[0] = sge_at(0, 100);
	post_send(p.a, 8, s, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, 0);
	n = poll_n(wc, 4);
	w = find(wc, n, 71);
	check(w && w->status == IBV_WC_WR_FLUSH_ERR && w->qp_num == p.b->qp_num,
	      "the receiver is in error too: its next receive is flushed");
	w = find(wc, n, 7);
	check(w && w->status == IBV_WC_LOC_LEN_ERR, "receiver: IBV_WC_LOC_LEN_ERR");
	w = find(wc, n, 8);
	check(w && w->status == IBV_WC_REM_INV_REQ_ERR, "sender: IBV_WC_REM_INV_REQ_ERR");
	w = find(wc, n, 70);
	check(w && w->status == IBV_WC_WR_FLUSH_ERR && w->qp_num == p.a->qp_num,
	      "the failed sender's posted receive is flushed too (it is in ERR)");
	post_send(p.a, 9, s, 1, IBV_WR_SEND, 0, 0);
	n = poll_n(wc, 1);
	check(n == 1 && wc[0].wr_id == 9 && wc[0].status == IBV_WC_WR_FLUSH_ERR,
	      "the sender is in error: a later (even unsignaled) send is flushed");
	free_pair(&p);
}

static int post_rdma(struct ibv_qp *qp, uint64_t id, struct ibv_sge *sge,
		     enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
		     uint32_t imm)
{
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htobe32(imm),
				  .wr.rdma = { .remote_addr = raddr, .rkey = rkey } }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int post_atomic(struct ibv_qp *qp, uint64_t id, struct ibv_sge *sge,
		       enum ibv_wr_opcode op, uint64_t raddr, uint64_t cmp_add,
		       uint64_t swap)
{
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = raddr, .compare_add = cmp_add,
			       .swap = swap, .rkey = rmr->rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static void rdma_tests(void)
{
	uint64_t *word = (uint64_t *)(buf + 49152), *res = (uint64_t *)(buf + 49160);
	struct ibv_sge s, r;
	struct ibv_wc wc[4], *w;
	struct pair p;
	int n, ret;

	if (make_pair(&p, NULL, 7)) {
		check(0, "connect a pair for RDMA");
		return;
	}
	memcpy(buf, "written by RDMA WRITE", 22);
	memset(buf + 20480, 0, 64);
	s = sge_at(0, 22);
	post_rdma(p.a, 50, &s, IBV_WR_RDMA_WRITE, (uintptr_t)buf + 20480, rmr->rkey, 0);
	n = poll_n(wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_RDMA_WRITE &&
	      !memcmp(buf + 20480, "written by RDMA WRITE", 22),
	      "RDMA WRITE lands, the responder sees no completion");

	r = sge_at(8192, 64);
	post_recv(p.b, 51, &r, 1);
	post_rdma(p.a, 52, &s, IBV_WR_RDMA_WRITE_WITH_IMM, (uintptr_t)buf + 20544,
		  rmr->rkey, 0x55aa);
	n = poll_n(wc, 2);
	w = find(wc, n, 51);
	check(w && w->status == IBV_WC_SUCCESS && w->opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	      w->byte_len == 22 && be32toh(w->imm_data) == 0x55aa &&
	      !memcmp(buf + 20544, "written by RDMA WRITE", 22),
	      "WRITE_WITH_IMM: data at the address, RECV_RDMA_WITH_IMM with the immediate");

	memcpy(buf + 24576, "read me", 8);
	r = sge_at(25000, 8);
	post_rdma(p.a, 53, &r, IBV_WR_RDMA_READ, (uintptr_t)buf + 24576, rmr->rkey, 0);
	n = poll_n(wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_RDMA_READ &&
	      !memcmp(buf + 25000, "read me", 8), "RDMA READ brings the bytes back");

	*word = 5;
	r = sge_at(49160, 8);
	post_atomic(p.a, 54, &r, IBV_WR_ATOMIC_CMP_AND_SWP, (uintptr_t)word, 5, 9);
	n = poll_n(wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_COMP_SWAP &&
	      *res == 5 && *word == 9, "CMP_AND_SWP: equal, swapped, old value returned");
	post_atomic(p.a, 55, &r, IBV_WR_ATOMIC_CMP_AND_SWP, (uintptr_t)word, 5, 1);
	n = poll_n(wc, 1);
	check(n == 1 && *res == 9 && *word == 9, "CMP_AND_SWP: not equal, left alone");
	post_atomic(p.a, 56, &r, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)word, 3, 0);
	n = poll_n(wc, 1);
	check(n == 1 && wc[0].opcode == IBV_WC_FETCH_ADD && *res == 9 && *word == 12,
	      "FETCH_AND_ADD: added, old value returned");
	ret = post_atomic(p.a, 57, &r, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)word + 1, 1, 0);
	check(ret == EINVAL, "a misaligned atomic: EINVAL at post (%d)", ret);

	s = sge_at(0, 8);
	post_rdma(p.a, 58, &s, IBV_WR_RDMA_WRITE, (uintptr_t)buf + 20480, mr->rkey, 0);
	n = poll_n(wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_REM_ACCESS_ERR,
	      "WRITE through an rkey without remote write: IBV_WC_REM_ACCESS_ERR");
	free_pair(&p);

	if (make_pair(&p, NULL, 7)) {
		check(0, "reconnect");
		return;
	}
	post_rdma(p.a, 59, &s, IBV_WR_RDMA_WRITE, (uintptr_t)buf + BUF - 4, rmr->rkey, 0);
	n = poll_n(wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_REM_ACCESS_ERR,
	      "WRITE past the end of the region: IBV_WC_REM_ACCESS_ERR");
	free_pair(&p);

	qp_access = IBV_ACCESS_REMOTE_WRITE;	/* no remote read on the QP */
	ret = make_pair(&p, NULL, 7);
	qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		    IBV_ACCESS_REMOTE_ATOMIC;
	if (ret) {
		check(0, "connect a pair without remote read");
		return;
	}
	post_rdma(p.a, 60, &r, IBV_WR_RDMA_READ, (uintptr_t)buf + 24576, rmr->rkey, 0);
	n = poll_n(wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_REM_ACCESS_ERR,
	      "READ from a QP that does not allow it: IBV_WC_REM_ACCESS_ERR");
	free_pair(&p);
	while (ibv_poll_cq(cq, 4, wc) > 0)
		;	/* leave the CQ empty for the next tests */
}

static void error_tests(void)
{
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge s, r;
	struct ibv_wc wc[4], *w;
	struct pair p;
	int n, ret, i;

	if (make_pair(&p, NULL, 0)) {
		check(0, "connect a pair with rnr_retry 0");
		return;
	}
	s = sge_at(0, 64);
	post_send(p.a, 10, &s, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, 0);
	n = poll_n(wc, 1);
	check(n == 1 && wc[0].status == IBV_WC_RNR_RETRY_EXC_ERR,
	      "no receive posted, rnr_retry 0: IBV_WC_RNR_RETRY_EXC_ERR");
	free_pair(&p);

	if (make_pair(&p, NULL, 7)) {
		check(0, "connect a pair with rnr_retry 7");
		return;
	}
	post_send(p.a, 11, &s, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, 0);
	usleep(50000);
	r = sge_at(8192, 64);
	post_recv(p.b, 12, &r, 1);
	n = poll_n(wc, 2);
	w = find(wc, n, 11);
	check(w && w->status == IBV_WC_SUCCESS && find(wc, n, 12),
	      "rnr_retry 7: the send waits for the receive and then succeeds");

	/*
	 * The same MR index with another variant byte: never a live key.
	 * lkey + 1 is the next MR's key when the variant byte is 0xff.
	 */
	s.lkey = mr->lkey ^ 1;
	i = post_send(p.a, 13, &s, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, 0);
	n = poll_n(wc, 1);
	check(!i && n == 1 && wc[0].status == IBV_WC_LOC_PROT_ERR,
	      "a bad lkey: IBV_WC_LOC_PROT_ERR (post_send %d, %d completions, the first %s)",
	      i, n, n > 0 ? ibv_wc_status_str(wc[0].status) : "none");
	free_pair(&p);

	if (make_pair(&p, NULL, 7)) {
		check(0, "connect another pair");
		return;
	}
	/* bad_wr at the first failure, nothing after it posted */
	s = sge_at(0, 8);
	for (i = 0; i < 3; i++) {
		wr[i] = (struct ibv_send_wr){ .wr_id = 20 + i, .sg_list = &s,
					      .num_sge = 1, .opcode = IBV_WR_SEND,
					      .send_flags = IBV_SEND_SIGNALED };
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	{
		struct ibv_qp_init_attr ia;
		struct ibv_qp_attr qa;

		ibv_query_qp(p.a, &qa, IBV_QP_CAP, &ia);
		wr[1].num_sge = (int)ia.cap.max_send_sge + 1;
	}
	for (i = 0; i < 3; i++) {
		r = sge_at(8192 + 64 * i, 64);
		post_recv(p.b, 30 + i, &r, 1);
	}
	bad = NULL;
	ret = ibv_post_send(p.a, wr, &bad);
	check(ret == EINVAL && bad == &wr[1], "num_sge past max_send_sge: EINVAL at that WR (%d)", ret);
	n = poll_n(wc, 4);
	check(n == 2 && find(wc, n, 20) && find(wc, n, 30),
	      "the WR before it was sent, the one after it was not (%d completions)", n);
	wr[0].opcode = IBV_WR_BIND_MW;
	wr[0].next = NULL;
	wr[0].bind_mw.mw = NULL;
	ret = ibv_post_send(p.a, wr, &bad);
	check(ret == EINVAL && bad == wr, "BIND_MW naming no window: EINVAL (%d)", ret);
	free_pair(&p);

	p.a = make_qp(NULL);
	ret = p.a ? post_send(p.a, 40, &s, 1, IBV_WR_SEND, 0, 0) : -1;
	check(ret == EINVAL, "post_send in RESET: EINVAL (%d)", ret);
	if (p.a)
		ibv_destroy_qp(p.a);
}

/* rdma-core's test_modify_srq_limit: post 10, limit 7, send 4. */
static void srq_limit_test(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_srq_attr attr = { .srq_limit = 7 };
	struct ibv_recv_wr rw, *bad;
	struct ibv_sge s, r;
	struct ibv_wc wc[16];
	struct pair p;
	int i, n;

	if (!srq || make_pair(&p, srq, 7)) {
		check(0, "SRQ and a pair whose receiver uses it");
		return;
	}
	for (i = 0; i < 10; i++) {
		r = sge_at(16384 + 64 * i, 64);
		rw = (struct ibv_recv_wr){ .wr_id = 100 + i, .sg_list = &r, .num_sge = 1 };
		ibv_post_srq_recv(srq, &rw, &bad);
	}
	check(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT) == 0, "arm the SRQ at 7");
	s = sge_at(0, 32);
	for (i = 0; i < 4; i++)
		post_send(p.a, 200 + i, &s, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, 0);
	n = poll_n(wc, 8);
	check(n == 8 && find(wc, n, 100) && find(wc, n, 103),
	      "4 sends take the first 4 SRQ receives, in order (%d)", n);
	check(wait_async(ctx, IBV_EVENT_SRQ_LIMIT_REACHED, NULL),
	      "fewer than 7 left: IBV_EVENT_SRQ_LIMIT_REACHED");
	memset(&attr, 0, sizeof(attr));
	check(ibv_query_srq(srq, &attr) == 0 && attr.srq_limit == 0,
	      "the limit is one-shot: disarmed after the event");
	free_pair(&p);
	ibv_destroy_srq(srq);
}

static int post_srq(struct ibv_srq *srq, uint64_t id, size_t off)
{
	struct ibv_sge r = sge_at(off, 64);
	struct ibv_recv_wr rw = { .wr_id = id, .sg_list = &r, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &rw, &bad);
}

/*
 * Resize keeps what was posted and what was produced: an SRQ grows while
 * WQEs wait in it, a CQ while completions wait in it, and both go on in
 * order; sizes that cannot hold what waits are refused with nothing lost.
 */
static void resize_test(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq_attr attr = { .max_wr = 40 };
	struct ibv_cq *main_cq = cq;
	struct ibv_srq *srq;
	struct ibv_wc wc[64];
	uint64_t next = 103;
	struct ibv_sge s;
	int i, n, ok = 1, got = 0;
	struct pair p;

	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	srq = cq ? ibv_create_srq(pd, &sa) : NULL;
	if (!srq || make_pair(&p, srq, 7)) {
		check(0, "an 8-entry CQ, an 8-WR SRQ and a pair using them");
		cq = main_cq;
		return;
	}
	for (i = 0; i < 8; i++)
		post_srq(srq, 100 + i, 20000 + 64 * i);
	check(post_srq(srq, 99, 0) == ENOMEM, "the SRQ is full with 8 WRs");

	/* 3 messages: 6 completions wait unpolled in the 8-entry CQ */
	s = sge_at(0, 16);
	for (i = 0; i < 3; i++) {
		memset(buf, 'a' + i, 16);
		post_send(p.a, 200 + i, &s, 1, IBV_WR_SEND,
			  IBV_SEND_SIGNALED | IBV_SEND_INLINE, 0);
	}
	/* sends posted before resize_cq have completed when it counts */
	check(ibv_resize_cq(cq, 2) == EINVAL,
	      "resize_cq below what waits in it: EINVAL");
	ok = ibv_resize_cq(cq, 64) == 0;
	check(ok && cq->cqe >= 64,
	      "resize_cq to 64 while completions wait (cqe %d)", cq->cqe);
	check(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) == 0,
	      "IBV_SRQ_MAX_WR to 40 while 5 WRs wait");
	memset(&attr, 0, sizeof(attr));
	ok = ibv_query_srq(srq, &attr) == 0;
	check(ok && attr.max_wr >= 40, "query_srq reports max_wr %u >= 40",
	      attr.max_wr);
	n = poll_n(wc, 6);
	check(n == 6 && find(wc, n, 100) && find(wc, n, 102) &&
	      !memcmp(buf + 20000 + 128, "cccc", 4),
	      "the completions that waited survive the CQ's resize (%d)", n);

	/* 35 more than the old SRQ could hold, through the moved WQEs */
	ok = 1;
	for (i = 0; i < 30; i++)
		ok &= post_srq(srq, 108 + i, 20000 + 64 * (8 + i)) == 0;
	check(ok, "30 more WRs fit in the resized SRQ");
	for (i = 0; i < 35; i++) {
		post_send(p.a, 300 + i, &s, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, 0);
		if (i % 8 != 7 && i != 34)
			continue;
		n = poll_n(wc, 2 * (i % 8 + 1));
		for (int j = 0; j < n; j++) {
			if (wc[j].opcode != IBV_WC_RECV)
				continue;
			ok &= wc[j].status == IBV_WC_SUCCESS &&
			      wc[j].wr_id == next;
			next++;
			got++;
		}
	}
	check(ok && got == 35 && next == 138,
	      "35 messages take WRs 103..137 in order, the moved ones first (%d)",
	      got);
	attr.max_wr = 4;
	for (i = 0; i < 6; i++)
		post_srq(srq, 400 + i, 0);
	check(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) == EINVAL,
	      "IBV_SRQ_MAX_WR below the 6 WRs waiting: EINVAL");
	s = sge_at(0, 8);
	for (i = 0; i < 6; i++)
		post_send(p.a, 500 + i, &s, 1, IBV_WR_SEND, 0, 0);
	n = poll_n(wc, 6);
	check(n == 6 && wc[0].wr_id == 400 && wc[5].wr_id == 405,
	      "and they are all still there, in order (%d)", n);
	free_pair(&p);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	cq = main_cq;
}

/*
 * Run @fn in a child under seccomp_only_write_to(-1): the child exits 0
 * if @fn returned 0.  Returns 0 if it did, 1 if it exited otherwise, 2 if
 * a system call killed it.  The child shares the rings (MAP_SHARED), not
 * the provider's own indices: the parent must not post to the same ring
 * afterwards.
 */
static int no_syscall(int (*fn)(void *), void *arg)
{
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (seccomp_only_write_to(-1))
			syscall(SYS_exit, 3);
		syscall(SYS_exit, fn(arg) ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	if (WIFSIGNALED(status))
		return 2;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static int post_4_sends(void *qp)
{
	struct ibv_sge s = sge_at(0, 32);
	int i, ret = 0;

	for (i = 0; i < 4; i++)
		ret |= post_send(qp, 601 + i, &s, 1, IBV_WR_SEND,
				 IBV_SEND_SIGNALED, 0);
	return ret;
}

/*
 * While the engine owns a send ring (here: it waits out an RNR timer),
 * ibv_post_send writes the WQEs and rings no doorbell, and the engine
 * still runs them.
 */
static void active_test(void)
{
	struct ibv_wc wc[16];
	struct ibv_sge s, r;
	struct pair p;
	int i, n, ret;

	rnr_timer = 28;
	ret = make_pair(&p, NULL, 7);
	rnr_timer = 1;
	if (ret) {
		check(0, "a pair with a 164 ms RNR timer");
		return;
	}
	s = sge_at(0, 32);
	post_send(p.a, 600, &s, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, 0);
	/* no receive: the engine waits and keeps the ring (rnr_retry 7) */
	ret = no_syscall(post_4_sends, p.a);
	check(ret == 0, "ibv_post_send while the engine owns the ring makes no system call (%s)",
	      ret == 2 ? "killed by seccomp" : ret ? "failed" : "ok");
	for (i = 0; i < 5; i++) {
		r = sge_at(8192 + 64 * i, 64);
		post_recv(p.b, 700 + i, &r, 1);
	}
	n = poll_n(wc, 10);
	ret = n == 10;
	for (i = 0; ret && i < 5; i++)
		ret = find(wc, n, 600 + i) && find(wc, n, 700 + i) &&
		      find(wc, n, 600 + i)->status == IBV_WC_SUCCESS;
	check(ret, "and the engine runs those WQEs without a doorbell (%d completions)", n);
	free_pair(&p);
}

/* 1 if an event for @c arrives on @ch within @ms; it is acked. */
static int cq_event(struct ibv_comp_channel *ch, struct ibv_cq *c, int ms)
{
	struct pollfd pf = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ecq;
	void *ectx;

	if (poll(&pf, 1, ms) != 1 || ibv_get_cq_event(ch, &ecq, &ectx))
		return 0;
	ibv_ack_cq_events(ecq, 1);
	return ecq == c;
}

/*
 * One event and no second: a "none" check that waited 300 ms is proven by
 * the next check, which would also find the event it missed, come late.
 */
static int one_event(struct ibv_comp_channel *ch, struct ibv_cq *c, int ms)
{
	return cq_event(ch, c, ms) && !cq_event(ch, c, 0);
}

static int arm_next(void *c)
{
	return ibv_req_notify_cq(c, 0);
}

/* One SEND from a to b, both completions polled. */
static int exchange(struct pair *p, uint64_t id, int flags)
{
	struct ibv_sge s = sge_at(0, 16), r = sge_at(8192, 64);
	struct ibv_wc wc[2];

	post_recv(p->b, id + 1, &r, 1);
	post_send(p->a, id, &s, 1, IBV_WR_SEND, IBV_SEND_SIGNALED | flags, 0);
	return poll_n(wc, 2) == 2 && wc[0].status == IBV_WC_SUCCESS &&
	       wc[1].status == IBV_WC_SUCCESS;
}

/* ibv_req_notify_cq with no system call, and its two kinds of arming. */
static void arm_test(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *main_cq = cq;
	struct pair p;
	int ret;

	cq = ch ? ibv_create_cq(ctx, 16, NULL, ch, 0) : NULL;
	if (!cq || make_pair(&p, NULL, 7)) {
		check(0, "a CQ on a completion channel and a pair using it");
		cq = main_cq;
		return;
	}
	ret = no_syscall(arm_next, cq);
	check(ret == 0, "ibv_req_notify_cq makes no system call (%s)",
	      ret == 2 ? "killed by seccomp" : ret ? "failed" : "ok");
	check(exchange(&p, 800, 0) && one_event(ch, cq, 2000),
	      "that arm fires on the next completion, once");
	check(exchange(&p, 810, 0) && !cq_event(ch, cq, 300),
	      "one event per arm: the next completion fires none");

	ibv_req_notify_cq(cq, 1);
	check(exchange(&p, 820, 0) && !cq_event(ch, cq, 300),
	      "armed for solicited: an unsolicited success fires none");
	check(exchange(&p, 830, IBV_SEND_SOLICITED) && one_event(ch, cq, 2000),
	      "armed for solicited: a solicited message fires, once (none came late for 810 or 820)");

	ibv_req_notify_cq(cq, 1);
	ibv_req_notify_cq(cq, 0);
	check(exchange(&p, 840, 0) && one_event(ch, cq, 2000),
	      "solicited then next: any completion fires, once");
	ibv_req_notify_cq(cq, 0);
	ibv_req_notify_cq(cq, 1);
	check(exchange(&p, 850, 0) && one_event(ch, cq, 2000),
	      "next then solicited: still any completion fires, once");
	free_pair(&p);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
	cq = main_cq;
}

/*
 * Receives posted to a QP in the error state complete with WR_FLUSH_ERR,
 * whether the user or the engine put the QP there.
 */
static void err_flush_test(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge s, r;
	struct ibv_wc wc[4], *w;
	struct pair p;
	int n;

	if (make_pair(&p, NULL, 0)) {
		check(0, "connect a pair");
		return;
	}
	ibv_modify_qp(p.b, &a, IBV_QP_STATE);
	r = sge_at(8192, 64);
	post_recv(p.b, 900, &r, 1);
	post_recv(p.b, 901, &r, 1);
	n = poll_n(wc, 2);
	check(n == 2 && wc[0].wr_id == 900 && wc[1].wr_id == 901 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR &&
	      wc[1].status == IBV_WC_WR_FLUSH_ERR,
	      "receives posted after modify_qp(ERR) are flushed, in order (%d)", n);
	free_pair(&p);

	if (make_pair(&p, NULL, 0)) {
		check(0, "connect a pair");
		return;
	}
	/* 64 bytes into an 8-byte receive: b fails, and the engine errs it */
	s = sge_at(0, 64);
	r = sge_at(8192, 8);
	post_recv(p.b, 910, &r, 1);
	post_send(p.a, 911, &s, 1, IBV_WR_SEND, IBV_SEND_SIGNALED, 0);
	n = poll_n(wc, 2);
	w = find(wc, n, 910);
	check(n == 2 && w && w->status == IBV_WC_LOC_LEN_ERR,
	      "a receive too small: IBV_WC_LOC_LEN_ERR");
	usleep(20000);	/* the engine moves b to ERR on its own work */
	r = sge_at(8192, 64);
	post_recv(p.b, 912, &r, 1);
	n = poll_n(wc, 1);
	check(n == 1 && wc[0].wr_id == 912 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR,
	      "a receive posted after the engine moved the QP to ERR is flushed (%d)", n);
	free_pair(&p);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	ctx = open_dev(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	buf = aligned_alloc(4096, BUF);
	mr = pd ? ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE) : NULL;
	rmr = pd ? ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC) : NULL;
	check(mr && rmr && cq, "context, PD, CQ and MRs on %s", argv[1]);
	if (!mr || !rmr || !cq)
		return tap_done();

	data_tests();
	rdma_tests();
	error_tests();
	srq_limit_test();
	resize_test();
	active_test();
	arm_test();
	err_flush_test();

	ibv_dereg_mr(rmr);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
