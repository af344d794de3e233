// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue pairs through plain libibverbs: capacities reported back, the IB
 * state machine and its attribute rules, ibv_post_recv(3) (bad_wr at the
 * first failure, SRQ-attached QPs refused, nothing in RESET, no system
 * call), RESET forgetting what was posted, ibv_destroy_srq(3) failing
 * while a QP uses the SRQ, and the error state: receives flushed in order
 * with IBV_WC_WR_FLUSH_ERR, a CQ too small raising IBV_EVENT_CQ_ERR, and an
 * SRQ-attached QP raising IBV_EVENT_QP_LAST_WQE_REACHED.
 * Prints TAP.  Usage: qp DEVICE
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "lib/testlib.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static struct ibv_qp *qp_create(enum ibv_qp_type type, struct ibv_srq *srq,
				uint32_t wr, uint32_t sge, uint32_t inl, int *err)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = sge, .max_recv_sge = sge,
			 .max_inline_data = inl },
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(pd, &a);
	*err = qp ? 0 : errno;
	return qp;
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* post n single-SGE receives as one chain; returns the index of bad_wr */
static int post_n(struct ibv_qp *qp, int n, int *ret)
{
	struct ibv_recv_wr *wr = calloc(n, sizeof(*wr)), *bad = NULL;
	struct ibv_sge sge = { .length = 64 };
	int i, at;

	for (i = 0; i < n; i++) {
		wr[i] = (struct ibv_recv_wr){ .wr_id = i, .sg_list = &sge,
					      .num_sge = 1 };
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	*ret = ibv_post_recv(qp, wr, &bad);
	at = bad ? (int)(bad - wr) : -1;
	free(wr);
	return at;
}

static void rc_tests(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_recv_wr wr[3], *bad;
	struct ibv_sge sge[4] = {};
	struct ibv_device_attr dattr;
	struct ibv_qp_attr a;
	union ibv_gid gid;
	struct ibv_qp *qp;
	uint32_t cap;
	int err, ret, at, i;

	qp = qp_create(IBV_QPT_RC, NULL, 10, 2, 64, &err);
	check(qp != NULL, "create RC QP (%d)", err);
	if (!qp)
		return;
	memset(&a, 0, sizeof(a));
	ret = ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_CAP, &init);
	check(ret == 0 && a.qp_state == IBV_QPS_RESET, "a new QP is in RESET");
	check(init.cap.max_send_wr >= 10 && init.cap.max_recv_wr >= 10 &&
	      init.cap.max_send_sge >= 2 && init.cap.max_recv_sge >= 2 &&
	      init.cap.max_inline_data >= 64,
	      "caps >= asked (send %u/%u recv %u/%u inline %u)",
	      init.cap.max_send_wr, init.cap.max_send_sge, init.cap.max_recv_wr,
	      init.cap.max_recv_sge, init.cap.max_inline_data);
	cap = init.cap.max_recv_wr;

	at = post_n(qp, 1, &ret);
	check(ret == EINVAL && at == 0, "post_recv in RESET: EINVAL at the first WR (%d)", ret);

	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1 };
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT);
	check(ret == EINVAL, "RESET->INIT without the required attributes: EINVAL (%d)", ret);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 2 };
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	check(ret == EINVAL, "port 2: EINVAL (%d)", ret);
	ret = to_state(qp, IBV_QPS_RTS);
	check(ret == EINVAL, "RESET->RTS: EINVAL (%d)", ret);
	check(to_init(qp) == 0, "RESET->INIT");

	/* bad_wr at the first failure; the one before posted, not the one after */
	for (i = 0; i < 3; i++) {
		wr[i] = (struct ibv_recv_wr){ .wr_id = i, .sg_list = sge, .num_sge = 1 };
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].num_sge = (int)init.cap.max_recv_sge + 1;
	bad = NULL;
	ret = ibv_post_recv(qp, wr, &bad);
	check(ret == EINVAL && bad == &wr[1],
	      "num_sge past max_recv_sge: EINVAL with bad_wr at that WR (%d)", ret);
	at = post_n(qp, cap, &ret);
	check(ret == ENOMEM && at == (int)cap - 1,
	      "then exactly %u more fit: ENOMEM at the one that did not (%d at %d)",
	      cap - 1, ret, at);

	ret = ibv_query_gid(ctx, 1, 0, &gid);
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = qp->qp_num, .rq_psn = 0x123456,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .sgid_index = 0, .hop_limit = 64 } },
	};
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	check(ret == 0, "INIT->RTR with a RoCE address vector (%d)", ret);
	check(ibv_query_device(ctx, &dattr) == 0 &&
	      dattr.max_qp_init_rd_atom >= 128,
	      "max_qp_init_rd_atom is at least rxe's 128, so perftest's READs connect (%d)",
	      dattr.max_qp_init_rd_atom);
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14,
				  .retry_cnt = 7, .rnr_retry = 7,
				  .sq_psn = 0x654321,
				  .max_rd_atomic = dattr.max_qp_init_rd_atom + 1 };
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			    IBV_QP_MAX_QP_RD_ATOMIC);
	check(ret == EINVAL, "max_rd_atomic past max_qp_init_rd_atom: EINVAL (%d)", ret);
	a.max_rd_atomic = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			    IBV_QP_MAX_QP_RD_ATOMIC);
	check(ret == 0, "RTR->RTS (%d)", ret);
	memset(&a, 0, sizeof(a));
	ret = ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			   IBV_QP_SQ_PSN | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT, &init);
	check(ret == 0 && a.qp_state == IBV_QPS_RTS && a.dest_qp_num == qp->qp_num &&
	      a.rq_psn == 0x123456 && a.sq_psn == 0x654321 &&
	      a.path_mtu == IBV_MTU_1024 && a.timeout == 14,
	      "query_qp reports what modify_qp set");
	ret = to_state(qp, IBV_QPS_RTR);
	check(ret == EINVAL, "RTS->RTR: EINVAL (%d)", ret);
	at = post_n(qp, 2, &ret);
	check(to_state(qp, IBV_QPS_ERR) == 0, "RTS->ERR, with 2 receives posted");
	{
		struct ibv_wc wc;
		int n = 0, i;

		for (i = 0; i < 300 && !n; i++, usleep(10000))
			n = ibv_poll_cq(cq, 1, &wc);
		check(n == 1 && wc.status == IBV_WC_WR_FLUSH_ERR,
		      "ERR flushed them (the first polled: %d)", n);
		check(to_state(qp, IBV_QPS_RESET) == 0, "ERR->RESET");
		n = ibv_poll_cq(cq, 1, &wc);
		check(n == 0, "RESET took the QP's unpolled completion off its CQ (%d left)", n);
	}
	at = post_n(qp, 1, &ret);
	check(ret == EINVAL && at == 0, "post_recv in RESET again: EINVAL (%d)", ret);
	check(to_init(qp) == 0, "RESET->INIT again");
	at = post_n(qp, cap + 1, &ret);
	check(ret == ENOMEM && at == (int)cap,
	      "RESET forgot what was posted: the whole ring is free again (%d at %d)",
	      ret, at);

	{
		struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad = NULL;

		ret = ibv_post_send(qp, &swr, &sbad);
		check(ret == EINVAL && sbad == &swr,
		      "post_send in INIT: EINVAL at the first WR (%d)", ret);
	}
	check(ibv_destroy_qp(qp) == 0, "destroy_qp");
}

static void srq_tests(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_qp *qp;
	int err, ret, at;

	check(srq != NULL, "SRQ for an SRQ-attached QP");
	if (!srq)
		return;
	qp = qp_create(IBV_QPT_RC, srq, 8, 1, 0, &err);
	check(qp != NULL, "create an RC QP on the SRQ (%d)", err);
	if (!qp)
		return;
	ret = ibv_query_qp(qp, &a, IBV_QP_CAP, &init);
	check(ret == 0 && init.cap.max_recv_wr == 0,
	      "it has no receive queue of its own (max_recv_wr %u)", init.cap.max_recv_wr);
	to_init(qp);
	at = post_n(qp, 2, &ret);
	check(ret == EINVAL && at == 0,
	      "ibv_post_recv on an SRQ-attached QP: EINVAL, bad_wr at the first WR (%d)", ret);
	ret = ibv_destroy_srq(srq);
	check(ret != 0, "ibv_destroy_srq fails while a QP uses the SRQ (%d)", ret);
	check(ibv_destroy_qp(qp) == 0, "destroy the QP");
	check(ibv_destroy_srq(srq) == 0, "then the SRQ goes");

	{
		struct ibv_srq_init_attr_ex x = {
			.attr = { .max_wr = 16, .max_sge = 2 },
			.comp_mask = IBV_SRQ_INIT_ATTR_PD |
				     IBV_SRQ_INIT_ATTR_TYPE,
			.srq_type = IBV_SRQT_BASIC, .pd = pd,
		};

		srq = ibv_create_srq_ex(ctx, &x);
		check(srq && x.attr.max_wr >= 16 && x.attr.max_sge >= 2,
		      "ibv_create_srq_ex(BASIC): max_wr %u, max_sge %u",
		      x.attr.max_wr, x.attr.max_sge);
		if (srq)
			ibv_destroy_srq(srq);
		/* an XRC SRQ with no domain (tests/guest/xrc.c has XRC) */
		x.srq_type = IBV_SRQT_XRC;
		x.comp_mask |= IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_XRCD;
		x.cq = cq;
		errno = 0;
		srq = ibv_create_srq_ex(ctx, &x);
		check(!srq && errno == EINVAL,
		      "ibv_create_srq_ex(XRC) with no XRC domain: EINVAL (%d)",
		      errno);
		/* tag matching (tm.c): not without the tags it is to hold */
		x.srq_type = IBV_SRQT_TM;
		x.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE |
			      IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
		x.tm_cap.max_num_tags = 0;
		x.tm_cap.max_ops = 16;
		errno = 0;
		srq = ibv_create_srq_ex(ctx, &x);
		check(!srq && errno == EINVAL,
		      "ibv_create_srq_ex(TM) of no tags: EINVAL (%d)", errno);
	}
}

static void type_tests(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x11111111 };
	struct ibv_qp *qp;
	int err, ret;

	qp = qp_create(IBV_QPT_UD, NULL, 4, 1, 0, &err);
	check(qp != NULL, "create UD QP (%d)", err);
	if (qp) {
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_QKEY);
		ret = ret ?: to_state(qp, IBV_QPS_RTR);
		a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 1 };
		ret = ret ?: ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
		check(ret == 0, "UD QP to RTS (%d)", ret);
		ibv_destroy_qp(qp);
	}
	qp = qp_create(IBV_QPT_UC, NULL, 4, 1, 0, &err);
	check(qp != NULL, "create UC QP (%d)", err);
	if (qp)
		ibv_destroy_qp(qp);
	qp = qp_create(IBV_QPT_RC, NULL, 32769, 1, 0, &err);
	check(!qp && err == EINVAL, "max_send_wr past max_qp_wr: EINVAL (%d)", err);
	qp = qp_create(IBV_QPT_RC, NULL, 4, 33, 0, &err);
	check(!qp && err == EINVAL, "max_sge past the limit: EINVAL (%d)", err);
	qp = qp_create(IBV_QPT_RC, NULL, 4, 1, 513, &err);
	check(!qp && err == EINVAL, "max_inline_data past 512: EINVAL (%d)", err);
}

/* ibv_create_qp_ex(): the extended entry point, as far as vhca goes. */
static void ex_tests(void)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 5, .max_recv_wr = 3,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = pd,
	};
	struct ibv_qp_init_attr_ex b;
	struct ibv_qp *qp;

	b = a;
	qp = ibv_create_qp_ex(ctx, &b);
	check(qp && qp->qp_type == IBV_QPT_RC && qp->pd == pd &&
	      qp->state == IBV_QPS_RESET && b.cap.max_send_wr >= 5 &&
	      b.cap.max_recv_wr >= 3,
	      "create_qp_ex with PD and no create flags (%d; %u, %u WRs)",
	      qp ? 0 : errno, b.cap.max_send_wr, b.cap.max_recv_wr);
	if (qp) {
		check(to_init(qp) == 0, "its QP to INIT");
		ibv_destroy_qp(qp);
	}
	b = a;
	b.qp_type = IBV_QPT_UD;
	qp = ibv_create_qp_ex(ctx, &b);
	check(qp && qp->qp_type == IBV_QPT_UD, "create_qp_ex UD (%d)",
	      qp ? 0 : errno);
	if (qp)
		ibv_destroy_qp(qp);
	b = a;
	b.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	errno = 0;
	qp = ibv_create_qp_ex(ctx, &b);
	check(!qp && errno == EOPNOTSUPP, "a create flag: EOPNOTSUPP (%d)",
	      errno);
	b = a;
	b.comp_mask |= IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
	b.max_tso_header = 64;
	errno = 0;
	qp = ibv_create_qp_ex(ctx, &b);
	check(!qp && errno == EOPNOTSUPP, "TSO: EOPNOTSUPP (%d)", errno);
	b = a;
	b.comp_mask = IBV_QP_INIT_ATTR_CREATE_FLAGS;
	errno = 0;
	qp = ibv_create_qp_ex(ctx, &b);
	check(!qp && errno == EINVAL, "no PD: EINVAL (%d)", errno);
	b = a;
	b.cap.max_send_wr = 32769;
	errno = 0;
	qp = ibv_create_qp_ex(ctx, &b);
	check(!qp && errno == EINVAL, "max_send_wr past max_qp_wr: EINVAL (%d)",
	      errno);
}

static void error_tests(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_cq *fcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *small = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {
		.send_cq = fcq, .recv_cq = fcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_wc wc[16];
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	int ret, n, i, in_order;

	qp = ibv_create_qp(pd, &qa);
	if (!fcq || !small || !qp || to_init(qp)) {
		check(0, "set-up for the error-state tests");
		return;
	}
	post_n(qp, 5, &ret);
	check(ret == 0, "5 receives posted");
	check(to_state(qp, IBV_QPS_ERR) == 0, "INIT->ERR");
	n = ibv_poll_cq(fcq, 16, wc);
	for (in_order = n == 5, i = 0; i < n; i++)
		in_order &= wc[i].wr_id == (uint64_t)i &&
			    wc[i].status == IBV_WC_WR_FLUSH_ERR &&
			    wc[i].qp_num == qp->qp_num;
	check(in_order, "the 5 complete with IBV_WC_WR_FLUSH_ERR, in order (%d polled)", n);
	check(ibv_poll_cq(fcq, 16, wc) == 0, "and nothing more");
	ibv_destroy_qp(qp);

	qa.recv_cq = small;
	qp = ibv_create_qp(pd, &qa);
	if (!qp || to_init(qp)) {
		check(0, "QP on a 4-entry CQ");
		return;
	}
	post_n(qp, 8, &ret);
	to_state(qp, IBV_QPS_ERR);
	n = ibv_poll_cq(small, 16, wc);
	check(n == 4 && small->cqe == 4, "a 4-entry CQ takes 4 of the 8 flushes (%d)", n);
	check(wait_async(ctx, IBV_EVENT_CQ_ERR, small),
	      "the overflow raises IBV_EVENT_CQ_ERR on that CQ");
	ibv_destroy_qp(qp);

	srq = ibv_create_srq(pd, &sa);
	qa.recv_cq = fcq;
	qa.srq = srq;
	qp = srq ? ibv_create_qp(pd, &qa) : NULL;
	if (!qp || to_init(qp)) {
		check(0, "SRQ-attached QP");
		return;
	}
	to_state(qp, IBV_QPS_ERR);
	check(wait_async(ctx, IBV_EVENT_QP_LAST_WQE_REACHED, qp),
	      "an SRQ-attached QP entering ERR raises IBV_EVENT_QP_LAST_WQE_REACHED");
	ibv_destroy_qp(qp);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(small);
	ibv_destroy_cq(fcq);
}

static void no_syscall_test(void)
{
	struct ibv_sge sge = { .length = 64 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_qp *qp;
	int err, status = -1, i, posted = 0;
	pid_t pid;

	qp = qp_create(IBV_QPT_RC, NULL, 64, 1, 0, &err);
	if (!qp || to_init(qp)) {
		check(0, "set-up for the no-syscall test");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (seccomp_only_write_to(-1))	/* no write at all */
			syscall(SYS_exit, 3);
		for (i = 0; i < 1000; i++)
			posted += ibv_post_recv(qp, &wr, &bad) == 0;
		syscall(SYS_exit, posted == 64 ? 0 : 4);
	}
	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "ibv_post_recv makes no system call: 64 fit, then ENOMEM (%s %d)",
	      WIFSIGNALED(status) ? "killed by seccomp" : "exit",
	      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	ibv_destroy_qp(qp);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	ctx = open_dev(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	check(pd && cq, "context, PD and CQ on %s", argv[1]);
	if (!pd || !cq)
		return tap_done();

	rc_tests();
	srq_tests();
	type_tests();
	ex_tests();
	error_tests();
	no_syscall_test();

	check(ibv_destroy_cq(cq) == 0, "destroy_cq");
	check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	check(ibv_close_device(ctx) == 0, "close_device");
	return tap_done();
}
