// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Nanoseconds per WR of ibv_post_recv and ibv_post_srq_recv on DEVICE:
 * single-WR posts into an empty receive ring until it is full, over fresh
 * QPs/SRQs, timed in userspace.  Prints "post_recv_ns <v>" and
 * "post_srq_recv_ns <v>".  Usage: post_recv DEVICE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define DEPTH 4096
#define ROUNDS 8

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_sge sge = { .length = 64 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	double t, qp_ns = 0, srq_ns = 0;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i, r, n;

	for (i = 0; argc == 2 && list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (!pd || !cq)
		return 1;
	sge.addr = (uintptr_t)malloc(64);

	for (r = 0; r < ROUNDS; r++) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = DEPTH, .max_sge = 1 } };
		struct ibv_qp_init_attr qa = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 1, .max_recv_wr = DEPTH,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
		struct ibv_srq *srq = ibv_create_srq(pd, &sa);
		struct ibv_qp *qp = ibv_create_qp(pd, &qa);

		if (!srq || !qp || ibv_modify_qp(qp, &a, IBV_QP_STATE |
						 IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						 IBV_QP_ACCESS_FLAGS))
			return 1;
		t = now();
		for (n = 0; n < DEPTH && !ibv_post_recv(qp, &wr, &bad); n++)
			wr.wr_id++;
		qp_ns += (now() - t) / n;
		t = now();
		for (n = 0; n < DEPTH && !ibv_post_srq_recv(srq, &wr, &bad); n++)
			wr.wr_id++;
		srq_ns += (now() - t) / n;
		ibv_destroy_qp(qp);
		ibv_destroy_srq(srq);
	}
	printf("post_recv_ns %.1f\npost_srq_recv_ns %.1f\n", qp_ns / ROUNDS,
	       srq_ns / ROUNDS);
	return 0;
}
