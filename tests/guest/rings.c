// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * CQs and SRQs on mapped rings, through plain libibverbs: sizes reported
 * back, the post_srq_recv contract of ibv_post_srq_recv(3) (bad_wr at the
 * first failure, nothing after it posted, positive errno), srq_limit, and
 * the proof that ibv_post_srq_recv() and ibv_poll_cq() make no system call
 * (they run under a seccomp filter that kills on any syscall but exit and
 * a write to the pipe that reports back).  Prints TAP.  Usage: rings DEVICE
 *
 * rings DEVICE hold: create a CQ and an SRQ, post to it, print "ready" and
 * wait for a line on stdin (the device is removed meanwhile); then use the
 * stale rings and tear down.  Exits 0 if all of that is survivable.
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
#include <unistd.h>
#include <infiniband/verbs.h>

#include "testlib.h"


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
	cq = ibv_create_cq(ctx, 65537, NULL, NULL, 0);
	err = errno;
	check(!cq && err == EINVAL, "create_cq(65537): EINVAL (%d)", err);
	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, ctx->num_comp_vectors);
	err = errno;
	check(!cq && err == EINVAL, "comp_vector out of range: EINVAL (%d)", err);
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

static int hold(const char *name)
{
	struct ibv_sge sge = { .length = 64 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_context *ctx = open_dev(name);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_srq *srq;
	struct ibv_wc wc;
	char line[16];
	int err, ret;

	srq = cq ? srq_create(pd, 16, 1, 0, &err) : NULL;
	if (!srq || ibv_post_srq_recv(srq, &wr, &bad))
		return 1;
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	/* the rings are stale memory now: harmless to use */
	ibv_post_srq_recv(srq, &wr, &bad);
	ret = ibv_poll_cq(cq, 1, &wc);
	printf("after removal: poll_cq %d, destroy_srq %d, destroy_cq %d\n",
	       ret, ibv_destroy_srq(srq), ibv_destroy_cq(cq));
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
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
	srq_tests(pd);
	no_syscall_test(pd, ctx);
	mmap_tests(ctx);

	check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	check(ibv_close_device(ctx) == 0, "close_device");
	return tap_done();
}
