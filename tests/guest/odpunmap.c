// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * munmap() under a message on the wire: the client WRITEs 32 MiB from an
 * ODP MR to the server on another host, and once its device has sent 2
 * MiB of it, unmaps all of its buffer from 4 MiB on.  The
 * WRITE must complete with IBV_WC_LOC_PROT_ERR, and before the QP's
 * retransmission timer (17 s) could have fired: a rest lost without a
 * word to the completer waits for it (and with retry_cnt 0 ended in
 * RETRY_EXC_ERR).  The QP must go to the error state and a WQE posted
 * after it be flushed; the server must have the first 2 MiB.  Prints TAP.
 *
 *   odpunmap DEVICE GID_INDEX            the server
 *   odpunmap DEVICE GID_INDEX SERVER     the client
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <arpa/inet.h>

#include "lib/testlib.h"

#define PORT		"18700"
#define LEN		(32u << 20)
/*
 * The client's packets sent before it unmaps, and where the hole starts:
 * the requester reaches it soon after (a debug kernel's sent 700 packets
 * a second), or the munmap() came too late to test anything.
 */
#define BEFORE		2048
#define CUT		(4u << 20)
#define PATTERN(i)	((uint8_t)((i) * 7 + ((i) >> 12)))

struct wire {
	uint32_t qpn, psn, rkey;
	uint64_t va;
	uint8_t gid[16];
};

int main(int argc, char **argv)
{
	const char *dev = argv[1], *host = argc > 3 ? argv[3] : NULL;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct qp_path p = { .timeout = 22 };	/* 17 s */
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct wire me, peer;
	union ibv_gid gid, pgid;
	struct ibv_context *ctx;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	struct timespec t0, t1;
	long long c0, c, ms;
	uint8_t *buf;
	size_t i, bad_at;
	int fd, t;
	char done;

	if (argc < 3) {
		fprintf(stderr, "usage: odpunmap DEVICE GID_INDEX [SERVER]\n");
		return 2;
	}
	printf("1..%d\n", host ? 7 : 2);
	p.sgid_index = atoi(argv[2]);
	ctx = open_dev(dev);
	if (!ctx || ibv_query_gid(ctx, 1, p.sgid_index, &gid))
		return 1;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	ia.send_cq = ia.recv_cq = cq;
	qp = pd && cq ? ibv_create_qp(pd, &ia) : NULL;
	buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!qp || buf == MAP_FAILED)
		return 1;
	for (i = 0; host && i < LEN; i++)
		buf[i] = PATTERN(i);
	mr = ibv_reg_mr(pd, buf, LEN, host ?
			IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE :
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	fd = tcp_connect(host, PORT, 60000);
	if (!mr || fd < 0)
		return 1;
	srand48(getpid());
	me = (struct wire){ .qpn = htonl(qp->qp_num),
			    .psn = htonl(lrand48() & 0xffffff),
			    .rkey = htonl(mr->rkey), .va = (uintptr_t)buf };
	memcpy(me.gid, gid.raw, 16);
	if (tcp_xfer(fd, &me, sizeof(me), true) ||
	    tcp_xfer(fd, &peer, sizeof(peer), false))
		return 1;
	memcpy(pgid.raw, peer.gid, 16);
	p.dest = ntohl(peer.qpn);
	p.gid = &pgid;
	p.rq_psn = ntohl(peer.psn);
	p.sq_psn = ntohl(me.psn);
	t = qp_rts_path(qp, &p);
	check(!t, "the RC QP is connected to the peer's (timeout 17 s): %s",
	      strerror(t));

	if (!host) {
		/* the client says when its WRITE has ended, one way or the other */
		t = !tcp_xfer(fd, &done, 1, false);
		for (i = 0, bad_at = LEN; i < BEFORE * 1024; i++)
			if (buf[i] != PATTERN(i) && bad_at == LEN)
				bad_at = i;
		check(t && bad_at == LEN,
		      "the first 2 MiB, sent before the unmap, arrived intact (first byte that differs: %zd, -1 for none)",
		      bad_at == LEN ? (ssize_t)-1 : (ssize_t)bad_at);
		return tap_done();
	}

	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = LEN,
				.lkey = mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_WRITE,
				   .send_flags = IBV_SEND_SIGNALED };
	wr.wr.rdma.remote_addr = peer.va;
	wr.wr.rdma.rkey = ntohl(peer.rkey);
	c0 = port_counter(dev, "sent_pkts");
	t = ibv_post_send(qp, &wr, &bad);
	check(!t, "a 32 MiB WRITE from the ODP MR is posted: %s", strerror(t));
	/* the core reads the counters at most every 10 ms */
	for (i = 0, c = c0; i < 30000 && c - c0 < BEFORE; i += 20) {
		usleep(20000);
		c = port_counter(dev, "sent_pkts");
	}
	t = munmap(buf + CUT, LEN - CUT);
	check(!t && c - c0 >= BEFORE && c - c0 < CUT / 1024,
	      "all of it from 4 MiB on is unmapped mid-message: %lld of its 32768 packets had gone",
	      c - c0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	wc = next_wc_within(cq, 60000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	check(wc.status == IBV_WC_LOC_PROT_ERR,
	      "the WRITE completes with a local protection error: %s (%d)",
	      wc.status == NO_WC ? "no completion" :
	      ibv_wc_status_str(wc.status), (int)wc.status);
	/* half the timer: a debug kernel's guests take a few seconds */
	check(ms < 8500,
	      "it did not wait for the retransmission timer (17 s): %lld ms after the unmap",
	      ms);
	t = ibv_query_qp(qp, &qa, IBV_QP_STATE, &qia);
	check(!t && qa.qp_state == IBV_QPS_ERR, "the QP is in the error state: %d",
	      t ? -1 : (int)qa.qp_state);
	sge.length = 4096;
	wr.wr_id = 2;
	t = ibv_post_send(qp, &wr, &bad);
	wc = next_wc_within(cq, 10000);
	check(!t && wc.wr_id == 2 && wc.status == IBV_WC_WR_FLUSH_ERR,
	      "a WRITE posted after it is flushed: %s",
	      wc.status == NO_WC ? "no completion" :
	      ibv_wc_status_str(wc.status));
	done = 1;
	tcp_xfer(fd, &done, 1, true);
	return tap_done();
}
