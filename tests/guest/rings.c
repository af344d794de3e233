// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * CQs and SRQs on mapped rings, through plain libibverbs: sizes reported
 * back, the post_srq_recv contract of ibv_post_srq_recv(3) (bad_wr at the
 * first failure, nothing after it posted, positive errno), srq_limit, and
 * the proof that ibv_post_srq_recv() and ibv_poll_cq() make no system call
 * (they run under a seccomp filter that kills on any syscall but exit and
 * a write to the pipe that reports back).  Prints TAP.  Usage: rings DEVICE
 *
 * rings DEVICE hold: create a CQ, an SRQ and an MR, post to the SRQ; and
 * an RC QP connected to itself (PSNs 0x100) on a CQ of its own, which
 * carries HOLD_SENDS SENDs; print "ready QPN" and wait for a line on stdin
 * (the device is removed meanwhile); then use the stale rings and tear
 * down.  Exits 0 if it survives that, nothing
 * completes, and every teardown verb returns 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "lib/testlib.h"


static struct ibv_srq *srq_create(struct ibv_pd *pd, uint32_t wr, uint32_t sge,
				  uint32_t limit, int *err)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = wr, .max_sge = sge, .srq_limit = limit },
	};
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq(pd, &a);
	*err = srq ? 0 : errno;
	return srq;
}

static void cq_tests(struct ibv_context *ctx)
{
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	int err;

	cq = ibv_create_cq(ctx, 100, NULL, NULL, 0);
	check(cq != NULL, "create_cq(100)");
	if (!cq)
		return;
	check(cq->cqe >= 100 && cq->cqe < 200, "cqe reported %d >= 100", cq->cqe);
	check(ibv_poll_cq(cq, 4, wc) == 0, "poll_cq on an empty CQ returns 0");
	check(ibv_destroy_cq(cq) == 0, "destroy_cq");

	errno = 0;
	cq = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	err = errno;
	check(!cq && err == EINVAL, "create_cq(0): EINVAL (%d)", err);
	errno = 0;
	cq = ibv_create_cq(ctx, (1 << 20) + 1, NULL, NULL, 0);
	err = errno;
	check(!cq && err == EINVAL, "create_cq(1M + 1): EINVAL (%d)", err);
	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, ctx->num_comp_vectors);
	err = errno;
	check(!cq && err == EINVAL, "comp_vector out of range: EINVAL (%d)", err);
}

/* ibv_create_cq_ex() and the clock its time stamps count */
static void cq_ex_tests(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_device_attr_ex da;
	struct timespec m0, m1;
	struct ibv_cq_ex *cqx;
	uint64_t raw;
	int err;

	cqx = ibv_create_cq_ex(ctx, &ca);
	check(cqx != NULL, "create_cq_ex with the standard fields and time stamps (%d)",
	      cqx ? 0 : errno);
	if (cqx) {
		err = ibv_start_poll(cqx, &pa);
		check(err == ENOENT, "start_poll on an empty CQ: ENOENT (%d)", err);
		pa.comp_mask = 1;
		err = ibv_start_poll(cqx, &pa);
		check(err == EINVAL, "start_poll with an unknown comp_mask: EINVAL (%d)",
		      err);
		check(ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 1, NULL) == 0,
		      "poll_cq works on it too");
		check(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0, "destroy it");
	}
	ca.wc_flags = IBV_WC_EX_WITH_CVLAN;
	errno = 0;
	cqx = ibv_create_cq_ex(ctx, &ca);
	err = errno;
	check(!cqx && err == EOPNOTSUPP, "create_cq_ex with CVLAN: EOPNOTSUPP (%d)", err);
	ca.wc_flags = 0;
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	ca.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	errno = 0;
	cqx = ibv_create_cq_ex(ctx, &ca);
	err = errno;
	check(!cqx && err == EOPNOTSUPP, "create_cq_ex that may overrun: EOPNOTSUPP (%d)",
	      err);

	err = ibv_query_device_ex(ctx, NULL, &da);
	check(!err && da.completion_timestamp_mask == UINT64_MAX &&
	      da.hca_core_clock == 1000000,
	      "query_device_ex: a 64-bit time stamp at 1 GHz (mask %#llx, %llu kHz)",
	      (unsigned long long)da.completion_timestamp_mask,
	      (unsigned long long)da.hca_core_clock);
	clock_gettime(CLOCK_MONOTONIC, &m0);
	err = ibv_query_rt_values_ex(ctx, &v);
	clock_gettime(CLOCK_MONOTONIC, &m1);
	raw = v.raw_clock.tv_sec * 1000000000ull + v.raw_clock.tv_nsec;
	check(!err && v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK &&
	      raw >= m0.tv_sec * 1000000000ull + m0.tv_nsec &&
	      raw <= m1.tv_sec * 1000000000ull + m1.tv_nsec,
	      "query_rt_values_ex: the raw clock is CLOCK_MONOTONIC (%d)", err);
}

static void srq_tests(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 100, .max_sge = 1 } };
	struct ibv_recv_wr wr[3], *bad, *fill;
	struct ibv_sge sge[40] = {};
	struct ibv_srq_attr attr;
	struct ibv_srq *srq;
	uint32_t i, cap;
	int err, ret;

	srq = ibv_create_srq(pd, &init);
	check(srq != NULL, "create_srq(max_wr 100, max_sge 1)");
	if (!srq)
		return;
	check(init.attr.max_wr >= 100 && init.attr.max_sge >= 1,
	      "create_srq reports max_wr %u >= 100, max_sge %u >= 1",
	      init.attr.max_wr, init.attr.max_sge);
	cap = init.attr.max_wr;

	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_srq(srq, &attr);
	check(ret == 0 && attr.max_wr == cap && attr.max_sge == init.attr.max_sge &&
	      attr.srq_limit == 0, "query_srq agrees with create (limit %u)",
	      attr.srq_limit);
	attr.srq_limit = 10;
	check(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT) == 0, "arm srq_limit 10");
	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_srq(srq, &attr);
	check(ret == 0 && attr.srq_limit == 10, "query_srq shows limit %u",
	      attr.srq_limit);
	attr.srq_limit = cap + 1;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
	check(ret == EINVAL, "srq_limit above max_wr: EINVAL (%d)", ret);
	/* resize on an empty ring, there and back (send.c resizes under traffic) */
	attr.max_wr = cap * 2;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	check(ret == 0, "resize to %u (%d)", cap * 2, ret);
	ret = ibv_query_srq(srq, &attr);
	check(ret == 0 && attr.max_wr == cap * 2, "query_srq reports %u", attr.max_wr);
	attr.max_wr = cap;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	check(ret == 0 && ibv_query_srq(srq, &attr) == 0 && attr.max_wr == cap,
	      "and back to %u", cap);

	/* bad_wr is the first failing WR; the one before is posted, the
	 * one after is not. */
	for (i = 0; i < 3; i++) {
		wr[i] = (struct ibv_recv_wr){ .wr_id = i, .sg_list = sge,
					      .num_sge = 1 };
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].num_sge = (int)init.attr.max_sge + 1;
	bad = NULL;
	ret = ibv_post_srq_recv(srq, wr, &bad);
	check(ret == EINVAL && bad == &wr[1],
	      "num_sge past max_sge: EINVAL with bad_wr at that WR (%d)", ret);

	/* Exactly cap - 1 more fit: so wr[0] was posted and wr[2] was not. */
	fill = calloc(cap, sizeof(*fill));
	for (i = 0; i < cap; i++) {
		fill[i] = (struct ibv_recv_wr){ .wr_id = 100 + i, .sg_list = sge,
						.num_sge = 1 };
		fill[i].next = i + 1 < cap ? &fill[i + 1] : NULL;
	}
	bad = NULL;
	ret = ibv_post_srq_recv(srq, fill, &bad);
	check(ret == ENOMEM && bad == &fill[cap - 1],
	      "ring full after %u more: ENOMEM with bad_wr at the WR that did not fit (%d)",
	      cap - 1, ret);
	bad = NULL;
	ret = ibv_post_srq_recv(srq, &fill[cap - 1], &bad);
	check(ret == ENOMEM && bad == &fill[cap - 1], "still full: ENOMEM (%d)", ret);
	free(fill);
	check(ibv_destroy_srq(srq) == 0, "destroy_srq");

	srq = srq_create(pd, 8, 4, 0, &err);
	check(srq != NULL, "create_srq(max_sge 4)");
	if (srq) {
		wr[0] = (struct ibv_recv_wr){ .sg_list = sge, .num_sge = -1 };
		ret = ibv_post_srq_recv(srq, wr, &bad);
		check(ret == EINVAL && bad == wr, "negative num_sge: EINVAL (%d)", ret);
		wr[0].num_sge = 0;
		check(ibv_post_srq_recv(srq, wr, &bad) == 0, "num_sge 0 posts");
		ibv_destroy_srq(srq);
	}

	srq = srq_create(pd, 0, 1, 0, &err);
	check(!srq && err == EINVAL, "max_wr 0: EINVAL (%d)", err);
	srq = srq_create(pd, 32769, 1, 0, &err);
	check(!srq && err == EINVAL, "max_wr past max_srq_wr: EINVAL (%d)", err);
	srq = srq_create(pd, 16, 33, 0, &err);
	check(!srq && err == EINVAL, "max_sge past max_srq_sge: EINVAL (%d)", err);
	srq = srq_create(pd, 100, 1, 200, &err);
	check(!srq && err == EINVAL, "srq_limit above max_wr: EINVAL (%d)", err);
	srq = srq_create(pd, 100, 1, 50, &err);
	check(srq != NULL, "srq_limit at create arms it");
	if (srq) {
		memset(&attr, 0, sizeof(attr));
		ret = ibv_query_srq(srq, &attr);
		check(ret == 0 && attr.srq_limit == 50, "query shows limit %u",
		      attr.srq_limit);
		ibv_destroy_srq(srq);
	}
}

/* Runs under seccomp: any syscall but exit and a write to @fd kills. */
static void no_syscall_child(struct ibv_srq *srq, struct ibv_cq *cq, int fd)
{
	struct ibv_sge sge = { .length = 64 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc[8];
	int i, posted = 0, polled = 0;

	if (seccomp_only_write_to(fd))
		syscall(SYS_exit, 3);
	for (i = 0; i < 1000; i++) {
		wr.wr_id = i;
		posted += ibv_post_srq_recv(srq, &wr, &bad) == 0;
		polled += ibv_poll_cq(cq, 8, wc);
	}
	/* 64 fit, the rest found the ring full: errors are syscall-free too */
	if (write(fd, posted == 64 && polled == 0 ? "ok" : "no", 2) != 2)
		syscall(SYS_exit, 4);
	syscall(SYS_exit, 0);
}

static void no_syscall_test(struct ibv_pd *pd, struct ibv_context *ctx)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	char buf[2] = "";
	int fds[2], status = -1, err;
	struct ibv_srq *srq = srq_create(pd, 64, 1, 0, &err);
	pid_t pid;

	if (!cq || !srq || pipe(fds)) {
		check(0, "set-up for the no-syscall test");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		no_syscall_child(srq, cq, fds[1]);
	close(fds[1]);
	if (read(fds[0], buf, 2) < 0)
		buf[0] = 0;
	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "ibv_post_srq_recv and ibv_poll_cq make no system call (%s)",
	      WIFSIGNALED(status) ? "killed by seccomp" : "exited");
	check(!memcmp(buf, "ok", 2), "under seccomp: 64 posts fit, then ENOMEM; polls return 0");
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
}

/*
 * Traffic under seccomp: an RC QP sends to itself (@srq: to a second QP
 * that receives from an SRQ) in rounds of TR_ROUND SENDs and as many
 * receives, through a CQ of TR_CQE entries that wraps many times.  One
 * SEND, posted before the filter with no receive for it, waits in RNR at
 * the head of the send ring for the whole run: the engine owns the ring
 * (VHCA_SQ_ACTIVE) and every ibv_post_send() under the filter must need no
 * doorbell, while each round's receives let the SENDs before them through.
 */
#define TR_ROUND	8
#define TR_ROUNDS	40
#define TR_CQE		32
#define TR_LEN		256

struct traffic {
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;	/* the CQ's, when polled with ibv_start_poll() */
	struct timespec mono0, real0;	/* before the child starts */
	struct ibv_comp_channel *ch;
	struct ibv_qp *tx, *rx;
	struct ibv_qp_ex *qpx;	/* tx's, when it posts through ibv_wr_* */
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	uint8_t *buf;		/* TR_ROUND + 1 send slots, then receive slots */
	unsigned long long tsc_per_ms;
};

static uint8_t tr_byte(uint32_t msg, uint32_t k)
{
	return (uint8_t)(msg * 131 + k * 7 + (msg >> 8));
}

static int tr_post_send(struct traffic *t, uint32_t msg)
{
	uint8_t *p = t->buf + (msg % (TR_ROUND + 1)) * TR_LEN;
	struct ibv_sge sge = { (uintptr_t)p, TR_LEN, t->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = msg, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t k;

	for (k = 0; k < TR_LEN; k++)
		p[k] = tr_byte(msg, k);
	if (!t->qpx)
		return ibv_post_send(t->tx, &wr, &bad);
	ibv_wr_start(t->qpx);
	t->qpx->wr_id = msg;
	t->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(t->qpx);
	ibv_wr_set_sge(t->qpx, sge.lkey, sge.addr, sge.length);
	return ibv_wr_complete(t->qpx);
}

static int tr_post_recv(struct traffic *t, uint32_t msg)
{
	uint8_t *p = t->buf + (TR_ROUND + 1 + msg % TR_ROUND) * TR_LEN;
	struct ibv_sge sge = { (uintptr_t)p, TR_LEN, t->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = msg, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	memset(p, 0xee, TR_LEN);
	return t->srq ? ibv_post_srq_recv(t->srq, &wr, &bad) :
			ibv_post_recv(t->rx, &wr, &bad);
}

static unsigned long long tsc(void)
{
	return __builtin_ia32_rdtsc();
}

/* the child's report: "ok" or what went wrong, through the pipe */
static void __attribute__((noreturn)) tr_say(int fd, const char *what)
{
	if (write(fd, what, strlen(what)) < 0)
		syscall(SYS_exit, 4);
	syscall(SYS_exit, 0);
	__builtin_unreachable();
}

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + ts->tv_nsec;
}

/*
 * Up to @max completions, through ibv_poll_cq() or, on an extended CQ,
 * ibv_start_poll() .. ibv_end_poll(), whose time stamps must be after the
 * child started (both clocks), in order, and 60 s at most later.  Returns
 * the count, or -1 with *why set.
 */
static int tr_poll(struct traffic *t, struct ibv_wc *wc, int max,
		   const char **why)
{
	struct ibv_poll_cq_attr attr = { 0 };
	static uint64_t last_ts;
	uint64_t ts, real;
	int n = 0, e;

	if (!t->cqx) {
		n = ibv_poll_cq(t->cq, max, wc);
		if (n < 0)
			*why = "poll_cq failed";
		return n;
	}
	e = ibv_start_poll(t->cqx, &attr);
	if (e) {
		if (e == ENOENT)
			return 0;
		*why = "start_poll failed";
		return -1;
	}
	do {
		wc[n] = (struct ibv_wc){
			.wr_id = t->cqx->wr_id, .status = t->cqx->status,
			.opcode = ibv_wc_read_opcode(t->cqx),
			.byte_len = ibv_wc_read_byte_len(t->cqx),
			.qp_num = ibv_wc_read_qp_num(t->cqx),
			.wc_flags = ibv_wc_read_wc_flags(t->cqx),
		};
		ts = ibv_wc_read_completion_ts(t->cqx);
		real = ibv_wc_read_completion_wallclock_ns(t->cqx);
		if (ts < ns_of(&t->mono0) || ts > ns_of(&t->mono0) + 60000000000ull ||
		    ts < last_ts)
			*why = "a completion time stamp out of order or out of range";
		else if (real < ns_of(&t->real0) ||
			 real > ns_of(&t->real0) + 60000000000ull)
			*why = "a completion wall-clock time out of range";
		last_ts = ts;
		n++;
	} while (!*why && n < max && !(e = ibv_next_poll(t->cqx)));
	ibv_end_poll(t->cqx);
	if (e && e != ENOENT)
		*why = "next_poll failed";
	return *why ? -1 : n;
}

/* Runs under seccomp: any syscall but exit and a write to @fd kills. */
static void traffic_child(struct traffic *t, int fd)
{
	uint32_t sent = 1, got_send = 0, got_recv = 0, round, i, k;
	struct ibv_wc wc[TR_CQE];
	unsigned long long end;
	static char msg[160];
	const char *why = NULL;
	int n, j;

	if (seccomp_only_write_to(fd))
		syscall(SYS_exit, 3);
	if (ibv_req_notify_cq(t->cq, 0))
		tr_say(fd, "req_notify_cq failed");
	for (round = 0; round < TR_ROUNDS; round++) {
		/* the engine owns the send ring: no doorbell */
		for (i = 0; i < TR_ROUND; i++)
			if (tr_post_send(t, sent++))
				tr_say(fd, "post_send failed");
		/* receives for the SENDs before these: the head one first */
		for (i = 0; i < TR_ROUND; i++)
			if (tr_post_recv(t, round * TR_ROUND + i))
				tr_say(fd, t->srq ? "post_srq_recv failed" :
					   "post_recv failed");
		end = tsc() + 20000 * t->tsc_per_ms;
		while ((got_send < (round + 1) * TR_ROUND ||
			got_recv < (round + 1) * TR_ROUND) && tsc() < end) {
			n = tr_poll(t, wc, TR_CQE, &why);
			for (j = 0; j < n; j++) {
				if (wc[j].status != IBV_WC_SUCCESS)
					tr_say(fd, "a completion failed");
				if (wc[j].opcode == IBV_WC_SEND) {
					if (wc[j].wr_id != got_send++)
						tr_say(fd, "send completions out of order");
					continue;
				}
				if (wc[j].opcode != IBV_WC_RECV ||
				    wc[j].wr_id != got_recv ||
				    wc[j].byte_len != TR_LEN)
					tr_say(fd, "a wrong receive completion");
				for (k = 0; k < TR_LEN; k++)
					if (t->buf[(TR_ROUND + 1 + got_recv % TR_ROUND) *
						   TR_LEN + k] != tr_byte(got_recv, k))
						tr_say(fd, "received data is wrong");
				got_recv++;
			}
			if (n < 0)
				tr_say(fd, why);
		}
		if (tsc() >= end) {
			snprintf(msg, sizeof(msg), "round %u: %u sends, %u receives completed in 20 s",
				 round, got_send, got_recv);
			tr_say(fd, msg);
		}
	}
	/* the SENDs of the last round still wait for receives: fine */
	tr_say(fd, "ok");
}

static void traffic_test(struct ibv_context *ctx, struct ibv_pd *pd, int srq,
			 int wr, int cqx)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = TR_CQE,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * TR_ROUND + 2, .max_recv_wr = TR_ROUND,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = TR_ROUND, .max_sge = 1 } };
	const char *how = srq ? "post_srq_recv" : wr ? "ibv_wr_*, post_recv" :
			  cqx ? "extended CQ, time stamps" : "post_recv";
	const char *post = wr ? "ibv_wr_complete" : "post_send";
	struct ibv_qp_init_attr_ex iax;
	struct traffic t = { 0 };
	struct timespec t0, t1;
	unsigned long long c0;
	union ibv_gid gid;
	char buf[160] = "";
	int fds[2], status = -1, err = 0;
	struct pollfd pfd = { .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int ev;
	pid_t pid;

	t.ch = ibv_create_comp_channel(ctx);
	ca.channel = t.ch;
	if (cqx) {
		t.cqx = t.ch ? ibv_create_cq_ex(ctx, &ca) : NULL;
		t.cq = t.cqx ? ibv_cq_ex_to_cq(t.cqx) : NULL;
	} else {
		t.cq = t.ch ? ibv_create_cq(ctx, TR_CQE, NULL, t.ch, 0) : NULL;
	}
	/*
	 * Shared: at fork the child gets a copy of a private page the MR has
	 * pinned, and would write and check memory the engine never sees.
	 */
	t.buf = mmap(NULL, (2 * TR_ROUND + 1) * TR_LEN, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t.buf == MAP_FAILED)
		t.buf = NULL;
	t.mr = t.buf && t.cq ? ibv_reg_mr(pd, t.buf, (2 * TR_ROUND + 1) * TR_LEN,
					  IBV_ACCESS_LOCAL_WRITE) : NULL;
	t.srq = srq && t.mr ? ibv_create_srq(pd, &sa) : NULL;
	ia.send_cq = ia.recv_cq = t.cq;
	ia.srq = t.srq;
	iax = (struct ibv_qp_init_attr_ex){
		.send_cq = t.cq, .recv_cq = t.cq, .cap = ia.cap,
		.qp_type = IBV_QPT_RC, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	if (wr && t.mr) {
		t.tx = ibv_create_qp_ex(ctx, &iax);
		t.qpx = t.tx ? ibv_qp_to_qp_ex(t.tx) : NULL;
		if (!t.qpx)
			t.tx = NULL;
	} else {
		t.tx = t.mr && (!srq || t.srq) ? ibv_create_qp(pd, &ia) : NULL;
	}
	t.rx = t.tx && srq ? ibv_create_qp(pd, &ia) : t.tx;
	if (!t.rx || ibv_query_gid(ctx, 1, 0, &gid) || pipe(fds)) {
		check(0, "traffic under seccomp (%s): set-up", how);
		return;
	}
	/* one QP to itself, or two to each other */
	err = srq ? qp_rts_to(t.tx, t.rx->qp_num, &gid) ?:
		    qp_rts_to(t.rx, t.tx->qp_num, &gid) :
		    qp_self_rts(t.tx, &gid);
	check(!err, "traffic under seccomp (%s): QPs connected (%d)", how, err);
	if (err)
		return;
	/* the TSC's rate, for a timeout that needs no system call */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c0 = tsc();
	do
		clock_gettime(CLOCK_MONOTONIC, &t1);
	while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 50);
	t.tsc_per_ms = (tsc() - c0) / 50 + 1;

	/* the SEND that waits in RNR until the first round's receives */
	err = tr_post_send(&t, 0);
	check(!err, "traffic under seccomp (%s): a SEND with no receive posted (%d)",
	      how, err);
	if (err)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t.mono0);
	clock_gettime(CLOCK_REALTIME, &t.real0);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		traffic_child(&t, fds[1]);
	close(fds[1]);
	if (read(fds[0], buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "traffic under seccomp (%s): %s with the engine owning the ring, %s, req_notify_cq and %s make no system call (%s)",
	      how, post, srq ? how : "post_recv",
	      cqx ? "start/next/end_poll" : "poll_cq", WIFSIGNALED(status) ? "killed by seccomp" : "exited");
	check(!strcmp(buf, "ok"),
	      "traffic under seccomp (%s): %d SENDs through a %d-entry CQ, every byte and completion checked (%s)",
	      how, TR_ROUND * TR_ROUNDS, TR_CQE, buf[0] ? buf : "no report");
	/* the arm made under the filter reached the kernel */
	pfd.fd = t.ch->fd;
	ev = poll(&pfd, 1, 3000) == 1 &&
	     !ibv_get_cq_event(t.ch, &ev_cq, &ev_ctx) && ev_cq == t.cq;
	check(ev, "traffic under seccomp (%s): the CQ armed under the filter raised its event",
	      how);
	if (ev)
		ibv_ack_cq_events(t.cq, 1);
	ibv_destroy_qp(t.tx);
	if (t.rx != t.tx)
		ibv_destroy_qp(t.rx);
	if (t.srq)
		ibv_destroy_srq(t.srq);
	ibv_dereg_mr(t.mr);
	ibv_destroy_cq(t.cq);
	ibv_destroy_comp_channel(t.ch);
	munmap(t.buf, (2 * TR_ROUND + 1) * TR_LEN);
}

/*
 * The control: on an idle QP, ibv_post_send() must ring the doorbell, a
 * system call, and the same filter must kill the child for it.  Without
 * it, the traffic test above could pass with a filter that stops nothing.
 */
/* An RC QP of @wr WRs each way, one SGE, on a CQ of its own (in *@cqp) */
static struct ibv_qp *rc_qp_own_cq(struct ibv_context *ctx, struct ibv_pd *pd,
				   uint32_t wr, struct ibv_cq **cqp)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 2 * wr, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	*cqp = cq;
	return cq ? ibv_create_qp(pd, &ia) : NULL;
}

static void doorbell_control(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_cq *cq;
	struct ibv_qp *qp = rc_qp_own_cq(ctx, pd, 1, &cq);
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND }, *bad;
	union ibv_gid gid;
	int fds[2], status = 0;
	pid_t pid;

	if (!qp || ibv_query_gid(ctx, 1, 0, &gid) || qp_self_rts(qp, &gid) ||
	    pipe(fds)) {
		check(0, "doorbell control: set-up");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (seccomp_only_write_to(fds[1]))
			syscall(SYS_exit, 3);
		ibv_post_send(qp, &wr, &bad);
		syscall(SYS_exit, 0);
	}
	close(fds[0]);
	close(fds[1]);
	waitpid(pid, &status, 0);
	check(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS,
	      "control: ibv_post_send on an idle QP rings the doorbell, and the filter kills for it (%s)",
	      WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static void mmap_tests(struct ibv_context *ctx)
{
	void *p;
	int err;

	errno = 0;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd,
		 (off_t)0x7fff0000 << 12);
	err = errno;
	check(p == MAP_FAILED && err == EINVAL, "mmap of an unknown key: EINVAL (%d)", err);
	errno = 0;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, ctx->cmd_fd, 0);
	err = errno;
	check(p == MAP_FAILED, "a private mapping is refused (%d)", err);
}

#define HOLD_SENDS	3

/* hold()'s QP: HOLD_SENDS SENDs to itself, each received; 0 if all went well */
static int hold_qp(struct ibv_context *ctx, struct ibv_pd *pd,
		   struct ibv_mr *mr, struct ibv_qp **qpp, struct ibv_cq **cqp)
{
	struct ibv_cq *cq;
	struct ibv_qp *qp = rc_qp_own_cq(ctx, pd, 8, &cq);
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = 64,
			       .lkey = mr->lkey };
	struct ibv_recv_wr rw = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr sw = { .opcode = IBV_WR_SEND, .sg_list = &sge,
				  .num_sge = 1, .send_flags = IBV_SEND_SIGNALED },
		*sbad;
	union ibv_gid gid;
	struct qp_path path = { .gid = &gid, .sq_psn = 0x100, .rq_psn = 0x100 };
	int i, ok = 0;

	*qpp = qp;
	*cqp = cq;
	if (!qp || ibv_query_gid(ctx, 1, 0, &gid)) {
		printf("hold: no QP, or no GID 0\n");
		return 1;
	}
	path.dest = qp->qp_num;
	i = qp_rts_path(qp, &path);
	if (i) {
		printf("hold: the QP to RTS: %s\n", strerror(i));
		return 1;
	}
	for (i = 0; i < HOLD_SENDS; i++)
		if (ibv_post_recv(qp, &rw, &rbad) || ibv_post_send(qp, &sw, &sbad)) {
			printf("hold: a post failed\n");
			return 1;
		}
	for (i = 0; i < 2 * HOLD_SENDS; i++) {
		struct ibv_wc wc = next_wc(cq);

		if (wc.status != IBV_WC_SUCCESS)
			printf("hold: completion %d: status %d\n", i, wc.status);
		ok += wc.status == IBV_WC_SUCCESS;
	}
	return ok != 2 * HOLD_SENDS;
}

static int hold(const char *name)
{
	struct ibv_sge sge = { .length = 64 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_context *ctx = open_dev(name);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	static char mem[4096];
	struct ibv_cq *qcq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int err, ret, post, dqp, dsrq, dcq, dmr, dpd, dctx;
	char line[16];

	srq = cq ? srq_create(pd, 16, 1, 0, &err) : NULL;
	mr = srq ? ibv_reg_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr || ibv_post_srq_recv(srq, &wr, &bad)) {
		printf("hold: no CQ, SRQ or MR\n");
		return 1;
	}
	if (hold_qp(ctx, pd, mr, &qp, &qcq))
		return 1;
	printf("ready %u\n", qp->qp_num);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	/*
	 * The rings are stale memory now: harmless to use.  A post may fail
	 * (a positive errno) or not; nothing completes any more; tearing
	 * down a removed device's objects succeeds (rdma-core takes the
	 * kernel's EIO for a dead context as done).
	 */
	post = ibv_post_srq_recv(srq, &wr, &bad);
	ret = ibv_poll_cq(cq, 1, &wc);
	dqp = ibv_destroy_qp(qp);
	dsrq = ibv_destroy_srq(srq);
	dcq = ibv_destroy_cq(cq) | ibv_destroy_cq(qcq);
	dmr = ibv_dereg_mr(mr);
	dpd = ibv_dealloc_pd(pd);
	dctx = ibv_close_device(ctx);
	printf("after removal: post_srq_recv %d, poll_cq %d, destroy_qp %d, destroy_srq %d, destroy_cq %d, dereg_mr %d, dealloc_pd %d, close_device %d\n",
	       post, ret, dqp, dsrq, dcq, dmr, dpd, dctx);
	return post < 0 || ret || dqp || dsrq || dcq || dmr || dpd || dctx;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_pd *pd;
	int ret;

	if (argc == 3 && !strcmp(argv[2], "hold"))
		return hold(argv[1]);
	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE [hold]\n", argv[0]);
		return 2;
	}
	ctx = open_dev(argv[1]);
	check(ctx != NULL, "open %s", argv[1]);
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	check(pd != NULL, "alloc_pd");
	if (!pd)
		return 1;
	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_device(ctx, &attr);
	check(ret == 0 && attr.max_cq > 0 && attr.max_srq > 0 &&
	      (attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE),
	      "device offers CQs, SRQs and SRQ resize (max_cq %d, max_srq %d)",
	      attr.max_cq, attr.max_srq);

	cq_tests(ctx);
	cq_ex_tests(ctx);
	srq_tests(pd);
	no_syscall_test(pd, ctx);
	traffic_test(ctx, pd, 0, 0, 0);
	traffic_test(ctx, pd, 1, 0, 0);
	traffic_test(ctx, pd, 0, 1, 0);
	traffic_test(ctx, pd, 0, 0, 1);
	doorbell_control(ctx, pd);
	mmap_tests(ctx);

	check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	check(ibv_close_device(ctx) == 0, "close_device");
	return tap_done();
}
