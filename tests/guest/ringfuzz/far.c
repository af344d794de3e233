// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* --far: a real peer for the wire QPs, on another vhca device. */
#include "ringfuzz.h"

struct far_peer far;

/* A link-local GID nobody on eth0's own link has: RC and UC to the wire. */
union ibv_gid nobody_gid(void)
{
	union ibv_gid g = { .raw = { 0xfe, 0x80, [8] = 0x50, 0x54, 0x00, 0xff,
				     0xfe, 0x00, 0xbe, 0xef } };

	return far.name ? far.gid : g;
}

/* The QPN the wire QP of @type sends to: DEV's first QPs are 2 and 3. */
uint32_t far_qpn(enum ibv_qp_type type)
{
	int i = type == IBV_QPT_RC ? 0 : 1;

	return far.qp[i].qp ? far.qp[i].qp->qp_num : 2 + (uint32_t)i;
}

/* DEV's QP of @i's type, connected back to our wire QP of that type. */
static void far_connect(int i)
{
	struct fqp *f = &far.qp[i], *w = NULL;
	int j;

	for (j = 0; j < nqp; j++)
		if (qps[j].kind == P_WIRE && qps[j].type == f->type)
			w = &qps[j];
	if (!f->qp || !w || !w->qp)
		return;
	qp_state(f, IBV_QPS_RESET);
	/* qp_connect_fixed's AV is our own GID: the wire QPs' netdev's */
	if (qp_connect_fixed(f, w->qp->qp_num) && trace)
		fprintf(stderr, "far qp %d: connect failed\n", i);
}

void far_connect_all(void)
{
	if (far.ctx) {
		far_connect(0);
		far_connect(1);
	}
}

int far_setup(void)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 256, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 64 },
	};
	int i, tries;

	for (tries = 0; tries < 50 && !far.ctx; tries++) {
		far.ctx = open_dev(far.name);
		if (!far.ctx)
			usleep(100000);
	}
	if (!far.ctx)
		return -1;
	far.buf = malloc(BUFSZ);
	far.pd = ibv_alloc_pd(far.ctx);
	far.cq = far.pd ? ibv_create_cq(far.ctx, 4096, NULL, NULL, 0) : NULL;
	far.mr = far.cq && far.buf ? ibv_reg_mr(far.pd, far.buf, BUFSZ, full) : NULL;
	if (!far.mr)
		return -1;
	ia.send_cq = ia.recv_cq = far.cq;
	for (i = 0; i < 2; i++) {
		struct fqp *f = &far.qp[i];

		f->type = ia.qp_type = i ? IBV_QPT_UC : IBV_QPT_RC;
		f->kind = P_WIRE;
		f->srq = -1;
		f->access = full & ~IBV_ACCESS_LOCAL_WRITE;
		f->qp = ibv_create_qp(far.pd, &ia);
		if (!f->qp)
			return -1;
		f->v = vqp(f->qp);
	}
	printf("# far: %s's RC QP %#x and UC QP %#x answer the wire QPs\n",
	       far.name, far.qp[0].qp->qp_num, far.qp[1].qp->qp_num);
	far_connect_all();
	/* and the wire QPs again, in case DEV's QPNs were not 2 and 3 */
	for (i = 0; i < nqp; i++)
		if (qps[i].kind == P_WIRE)
			qp_connect(&qps[i]);
	return 0;
}

/* Keep DEV's QPs supplied with receives and its CQ drained. */
void far_service(void)
{
	struct ibv_sge sge = { .length = 4096, .lkey = far.mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc[32];
	int i, n;

	for (i = 0; i < 2; i++) {
		sge.addr = (uintptr_t)far.buf + rnd(BUFSZ - 4096);
		ibv_post_recv(far.qp[i].qp, &wr, &bad);
		ibv_post_recv(far.qp[i].qp, &wr, &bad);
	}
	n = ibv_poll_cq(far.cq, 32, wc);
	for (i = 0; i < n; i++) {
		far.cqes++;
		far.ok += wc[i].status == IBV_WC_SUCCESS;
	}
	/* an error moved DEV's QP: connect it again */
	if (chance(5)) {
		for (i = 0; i < 2; i++)
			if (qp_failed(&far.qp[i]))
				far_connect(i);
	}
}

void far_teardown(void)
{
	int i;

	if (!far.ctx)
		return;
	for (i = 0; i < 2; i++)
		if (far.qp[i].qp)
			ibv_destroy_qp(far.qp[i].qp);
	if (far.mr)
		ibv_dereg_mr(far.mr);
	if (far.cq)
		ibv_destroy_cq(far.cq);
	if (far.pd)
		ibv_dealloc_pd(far.pd);
	ibv_close_device(far.ctx);
}
