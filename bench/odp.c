// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * What ODP costs on DEVICE, against a pinned registration: registering and
 * deregistering REG_MIB MiB of untouched memory each way, then RDMA WRITEs
 * of WRITE_MIB MiB through an RC QP connected to itself, into an ODP MR
 * whose pages the process never touched (the device faults every one in),
 * into the same MR again (its pages mapped: warm), and into a pinned MR.
 * Prints "name value" lines: milliseconds and MB/s, and the first touch's
 * cost per 4 KiB page (cold minus warm).  Each figure is the best of
 * ROUNDS.  Usage: odp DEVICE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "../tests/guest/lib/testlib.h"

#define REG_MIB		1024
#define WRITE_MIB	64
#define CHUNK		(1 << 20)	/* one WRITE */
#define ROUNDS		3
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

static struct ibv_pd *pd;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *fresh(size_t len)
{
	void *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (b == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return b;
}

/* reg and dereg of REG_MIB MiB of untouched memory, in ms */
static void reg_cost(int access, double *reg, double *dereg)
{
	size_t len = (size_t)REG_MIB << 20;
	void *b = fresh(len);
	struct ibv_mr *mr;
	double t0 = now_ms(), t1;

	mr = ibv_reg_mr(pd, b, len, access);
	t1 = now_ms();
	if (!mr) {
		fprintf(stderr, "ibv_reg_mr of %d MiB: %s\n", REG_MIB,
			strerror(errno));
		exit(1);
	}
	*reg = t1 - t0;
	ibv_dereg_mr(mr);
	*dereg = now_ms() - t1;
	munmap(b, len);
}

/* WRITE_MIB MiB from @src into @dst's MR, CHUNK a WRITE; ms */
static double write_all(struct ibv_qp *qp, struct ibv_cq *cq,
			struct ibv_mr *src, struct ibv_mr *dst)
{
	double t0 = now_ms();
	size_t off;

	for (off = 0; off < (size_t)WRITE_MIB << 20; off += CHUNK) {
		struct ibv_sge sge = { (uintptr_t)src->addr, CHUNK, src->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr = { .rdma = { (uintptr_t)dst->addr + off,
					  dst->rkey } },
		}, *bad;
		struct ibv_wc wc;

		if (ibv_post_send(qp, &wr, &bad) ||
		    (wc = next_wc(cq)).status != IBV_WC_SUCCESS) {
			fprintf(stderr, "WRITE at %zu failed\n", off);
			exit(1);
		}
	}
	return now_ms() - t0;
}

static double mbps(double ms)
{
	return WRITE_MIB * 1048576.0 / 1e6 / (ms / 1e3);
}

static double best(double a, double b)
{
	return a < b ? a : b;
}

int main(int argc, char **argv)
{
	size_t wlen = (size_t)WRITE_MIB << 20;
	double reg[2] = { 1e9, 1e9 }, dereg[2] = { 1e9, 1e9 };
	double cold = 1e9, warm = 1e9, pinned = 1e9, r, d;
	struct ibv_context *ctx;
	struct ibv_mr *src, *dst;
	union ibv_gid gid;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	void *s, *b;
	int i;

	if (argc != 2)
		return 2;
	ctx = open_dev(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (!pd || !cq || ibv_query_gid(ctx, 1, 0, &gid))
		return 1;
	{
		struct ibv_qp_init_attr qa = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		qp = ibv_create_qp(pd, &qa);
	}
	if (!qp || qp_self_rts(qp, &gid))
		return 1;

	for (i = 0; i < ROUNDS; i++) {
		reg_cost(ACCESS, &r, &d);
		reg[0] = best(reg[0], r);
		dereg[0] = best(dereg[0], d);
		reg_cost(ACCESS | IBV_ACCESS_ON_DEMAND, &r, &d);
		reg[1] = best(reg[1], r);
		dereg[1] = best(dereg[1], d);
	}

	s = fresh(CHUNK);
	memset(s, 0x5a, CHUNK);
	src = ibv_reg_mr(pd, s, CHUNK, ACCESS);
	if (!src)
		return 1;
	for (i = 0; i < ROUNDS; i++) {
		b = fresh(wlen);
		dst = ibv_reg_mr(pd, b, wlen, ACCESS | IBV_ACCESS_ON_DEMAND);
		if (!dst)
			return 1;
		cold = best(cold, write_all(qp, cq, src, dst));
		warm = best(warm, write_all(qp, cq, src, dst));
		ibv_dereg_mr(dst);
		munmap(b, wlen);

		b = fresh(wlen);
		dst = ibv_reg_mr(pd, b, wlen, ACCESS);
		if (!dst)
			return 1;
		pinned = best(pinned, write_all(qp, cq, src, dst));
		ibv_dereg_mr(dst);
		munmap(b, wlen);
	}

	printf("reg_1GiB_pinned_ms %.1f\n", reg[0]);
	printf("reg_1GiB_odp_ms %.2f\n", reg[1]);
	printf("dereg_1GiB_pinned_ms %.1f\n", dereg[0]);
	printf("dereg_1GiB_odp_ms %.2f\n", dereg[1]);
	printf("write_64MiB_odp_cold_MBps %.0f\n", mbps(cold));
	printf("write_64MiB_odp_warm_MBps %.0f\n", mbps(warm));
	printf("write_64MiB_pinned_MBps %.0f\n", mbps(pinned));
	printf("first_touch_us_per_page %.2f\n",
	       (cold - warm) * 1e3 / (wlen / 4096));
	ibv_destroy_qp(qp);
	ibv_dereg_mr(src);
	return 0;
}
