// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Port counters the administrator's guide points to, each provoked and
 * its delta checked (device suite).  Prints TAP.
 *
 *   counters DEVICE no-wqe
 *	UD datagrams to a QP of the same device with no receive posted:
 *	each is dropped and counted in rcvd_no_recv_wqe; one with a
 *	receive is delivered and not counted.
 *   counters DEVICE dropped|sent SGID_INDEX DEST_IPV4
 *	UD datagrams to DEST_IPV4 on the wire, from the GID at SGID_INDEX.
 *	dropped: the netdev's queue drops them all (the caller set its
 *	qdisc so), each counted in send_dropped.  sent: they leave,
 *	counted in sent_pkts and not in send_dropped.
 *   counters DEVICE queue-full SGID_INDEX DEST_IPV4
 *	An RC QP connected to QPN 0x123 at DEST_IPV4, in RTR, prints
 *	"# qpn QPN" and waits for a line on stdin that says how many forged
 *	responses were sent to it meanwhile.  Its requester does not run
 *	before RTS, so whatever the CPUs did meanwhile, RXQ_MAX of them wait
 *	in the QP's queue, counted in rcvd_pkts, and each one after them is
 *	counted in rcvd_queue_full.  In RTS the QP takes the ones waiting,
 *	responses to nothing it sent (rcvd_unexpected), and stays in RTS.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "lib/testlib.h"

#define N	10	/* datagrams per case */
/* the responses a QP's work may have waiting: the admin guide's figure */
#define RXQ_MAX	1024

static struct ibv_context *ctx;
static const char *dev;
static struct ibv_pd *pd;
static struct ibv_cq *cq, *rcq;	/* sends', receives' */
static char buf[4096];
static struct ibv_mr *mr;

static struct ibv_qp *ud_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = rcq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = N, .max_recv_wr = N,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (qp && qp_self_rts(qp, NULL)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* N signalled SENDs of 64 bytes through @ah; how many completed well */
static int send_n(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t qpn)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.sg_list = &sge, .num_sge = 1,
		.wr = { .ud = { .ah = ah, .remote_qpn = qpn,
				.remote_qkey = 0x11111111 } },
	}, *bad;
	int i, ok = 0;

	for (i = 0; i < N; i++) {
		struct ibv_wc wc;

		wr.wr_id = i;
		if (ibv_post_send(qp, &wr, &bad))
			break;
		wc = next_wc(cq);
		ok += wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND;
	}
	return ok;
}

static long long settled(const char *name)
{
	usleep(100000);	/* past the counters' lifespan, and the engine's work */
	return port_counter(dev, name);
}

static void no_wqe(void)
{
	struct ibv_qp *a = ud_qp(), *b = ud_qp();
	union ibv_gid gid;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .hop_limit = 64 } };
	struct ibv_sge sge = { .addr = (uintptr_t)buf + 1024, .length = 1024,
			       .lkey = mr->lkey };
	struct ibv_recv_wr rw = { .wr_id = 99, .sg_list = &sge, .num_sge = 1 },
		*rbad;
	struct ibv_ah *ah;
	long long c0, c1, c2;
	struct ibv_wc wc;
	int ok;

	if (!a || !b || ibv_query_gid(ctx, 1, 0, &gid)) {
		check(0, "no-wqe: two UD QPs");
		return;
	}
	aa.grh.dgid = gid;
	ah = ibv_create_ah(pd, &aa);
	if (!ah) {
		check(0, "no-wqe: an AH to GID 0");
		return;
	}
	c0 = settled("rcvd_no_recv_wqe");
	ok = send_n(a, ah, b->qp_num);
	c1 = settled("rcvd_no_recv_wqe");
	check(ok == N, "no-wqe: %d UD SENDs to a QP with no receive complete on the sender (%d)",
	      N, ok);
	check(c0 >= 0 && c1 - c0 == N,
	      "no-wqe: each is counted in rcvd_no_recv_wqe (%lld -> %lld)",
	      c0, c1);
	check(!ibv_post_recv(b, &rw, &rbad), "no-wqe: a receive posted");
	ok = send_n(a, ah, b->qp_num);
	wc = next_wc(rcq);
	c2 = settled("rcvd_no_recv_wqe");
	check(wc.wr_id == 99 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV,
	      "no-wqe: with a receive, one is delivered (wr_id %llu, %s)",
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	check(c2 - c1 == N - 1,
	      "no-wqe: the %d that found none are counted, not the delivered one (%lld -> %lld)",
	      N - 1, c1, c2);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
}

static void wire(bool drop, int sgid_index, const char *dest)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .hop_limit = 64,
					   .sgid_index = sgid_index } };
	const char *what = drop ? "dropped" : "sent";
	struct ibv_qp *qp = ud_qp();
	long long d0, d1, s0, s1;
	struct ibv_ah *ah;
	struct in_addr a4;
	int ok;

	if (inet_pton(AF_INET, dest, &a4) != 1 || !qp) {
		check(0, "%s: a UD QP, and %s an IPv4 address", what, dest);
		return;
	}
	aa.grh.dgid.raw[10] = 0xff;
	aa.grh.dgid.raw[11] = 0xff;
	memcpy(&aa.grh.dgid.raw[12], &a4, 4);
	ah = ibv_create_ah(pd, &aa);
	if (!ah) {
		check(0, "%s: an AH to %s from GID %d", what, dest, sgid_index);
		ibv_destroy_qp(qp);
		return;
	}
	d0 = settled("send_dropped");
	s0 = port_counter(dev, "sent_pkts");
	ok = send_n(qp, ah, 0x123);
	d1 = settled("send_dropped");
	s1 = port_counter(dev, "sent_pkts");
	check(ok == N, "%s: %d UD SENDs to %s complete (%d): UD does not know",
	      what, N, dest, ok);
	if (drop)
		check(d0 >= 0 && d1 - d0 == N,
		      "dropped: each drop by the netdev's queue is counted in send_dropped (%lld -> %lld)",
		      d0, d1);
	else
		check(d0 >= 0 && d1 == d0 && s1 - s0 == N,
		      "sent: none counted in send_dropped (%lld -> %lld), each in sent_pkts (%lld -> %lld)",
		      d0, d1, s0, s1);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
}

static void queue_full(int sgid_index, const char *dest)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = N, .max_recv_wr = N,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct qp_path path = { .dest = 0x123, .sgid_index = sgid_index };
	long long q0, q1, r0, r1, u0, u1;
	int i;
	struct ibv_qp_init_attr ria;
	struct ibv_qp_attr qa;
	union ibv_gid gid = { .raw = { [10] = 0xff, [11] = 0xff } };
	struct ibv_qp *qp;
	long long sent;
	char line[64];

	if (inet_pton(AF_INET, dest, &gid.raw[12]) != 1) {
		check(0, "queue-full: %s is an IPv4 address", dest);
		return;
	}
	path.gid = &gid;
	qp = ibv_create_qp(pd, &ia);
	if (!qp || qp_rtr_path(qp, &path)) {
		check(0, "queue-full: an RC QP in RTR to %s", dest);
		return;
	}
	q0 = settled("rcvd_queue_full");
	r0 = port_counter(dev, "rcvd_pkts");
	u0 = port_counter(dev, "rcvd_unexpected");
	printf("# qpn %u\n", qp->qp_num);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) || sscanf(line, "%lld", &sent) != 1) {
		check(0, "queue-full: how many were sent, on stdin");
		ibv_destroy_qp(qp);
		return;
	}
	q1 = settled("rcvd_queue_full");
	r1 = port_counter(dev, "rcvd_pkts");
	check(sent > RXQ_MAX, "queue-full: more than %d forged responses sent (%lld)",
	      RXQ_MAX, sent);
	check(r0 >= 0 && r1 - r0 == RXQ_MAX,
	      "queue-full: %d of them wait for the QP's requester, counted in rcvd_pkts (%lld -> %lld)",
	      RXQ_MAX, r0, r1);
	check(q0 >= 0 && q1 - q0 == sent - RXQ_MAX,
	      "queue-full: each one after them counted in rcvd_queue_full: %lld (%lld -> %lld)",
	      sent - RXQ_MAX, q0, q1);
	u1 = -1;
	/* 10 s at most for the QP's work to take them (the debug kernel) */
	for (i = 0; !i || (i < 100 && u1 >= 0 && u1 - u0 < r1 - r0); i++)
		u1 = i || !qp_rtr_to_rts(qp, &path) ?
		     settled("rcvd_unexpected") : -1;
	check(u0 >= 0 && u1 - u0 == r1 - r0 &&
	      !ibv_query_qp(qp, &qa, IBV_QP_STATE, &ria) &&
	      qa.qp_state == IBV_QPS_RTS,
	      "queue-full: in RTS the QP took the %lld waiting as responses to nothing it sent (rcvd_unexpected %lld -> %lld), and stays in RTS",
	      r1 - r0, u0, u1);
	ibv_destroy_qp(qp);
}

int main(int argc, char **argv)
{
	bool modes_wire = argc == 5 && (!strcmp(argv[2], "dropped") ||
					!strcmp(argv[2], "sent") ||
					!strcmp(argv[2], "queue-full"));

	if (!(argc == 3 && !strcmp(argv[2], "no-wqe")) && !modes_wire) {
		fprintf(stderr, "usage: counters DEVICE no-wqe | counters DEVICE dropped|sent|queue-full SGID_INDEX DEST_IPV4\n");
		return 2;
	}
	dev = argv[1];
	ctx = open_dev(dev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 2 * N, NULL, NULL, 0) : NULL;
	rcq = ctx ? ibv_create_cq(ctx, 2 * N, NULL, NULL, 0) : NULL;
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr || !cq || !rcq) {
		check(0, "open %s, a PD, a CQ and an MR", dev);
		return tap_done();
	}
	if (!strcmp(argv[2], "queue-full"))
		queue_full(atoi(argv[3]), argv[4]);
	else if (modes_wire)
		wire(!strcmp(argv[2], "dropped"), atoi(argv[3]), argv[4]);
	else
		no_wqe();
	ibv_destroy_cq(cq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return tap_done();
}
