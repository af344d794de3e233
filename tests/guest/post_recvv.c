// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * rdma_post_recvv(3), sentence by sentence, over an RDMA CM connection on
 * vhca0 (librdmacm's synchronous rdma_create_ep API, as its man pages use
 * it):
 *  - one WR of several SGEs receives one message, scattered in order;
 *  - its context comes back as the completion's wr_id;
 *  - an error is -1 with errno set, and posts nothing;
 *  - buffer space too small for the message fails that receive (mode
 *    "small"), and so does a buffer that is not registered ("unreg"); the
 *    failure is the completion's, and the QP's error flushes the rest.
 *
 *   post_recvv -s ADDR small|unreg   (server: posts, checks, prints TAP)
 *   post_recvv -c ADDR               (client: sends the messages)
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "lib/testlib.h"

#define PORT "7471"
#define MSG 64

/* What the client sends, in order: two full messages, then 32 bytes. */
static const unsigned int lens[] = { MSG, MSG, 32 };

static void fill(unsigned char *p, unsigned int len, int seed)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(seed * 31 + i * 7 + 1);
}

static struct rdma_cm_id *endpoint(const char *addr, int passive)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 4 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct rdma_addrinfo *res;
	struct rdma_cm_id *id;

	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(addr, PORT, &hints, &res)) {
		perror("rdma_getaddrinfo");
		return NULL;
	}
	if (rdma_create_ep(&id, res, NULL, passive ? NULL : &attr)) {
		perror("rdma_create_ep");
		id = NULL;
	}
	rdma_freeaddrinfo(res);
	return id;
}

static int client(const char *addr)
{
	unsigned char buf[MSG];
	struct rdma_cm_id *id = endpoint(addr, 0);
	struct ibv_wc wc;
	struct ibv_mr *mr;
	unsigned int i;

	if (!id || rdma_connect(id, NULL)) {
		perror("connect");
		return 1;
	}
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	for (i = 0; mr && i < sizeof(lens) / sizeof(lens[0]); i++) {
		fill(buf, lens[i], i);
		if (rdma_post_send(id, NULL, buf, lens[i], mr, 0) ||
		    rdma_get_send_comp(id, &wc) <= 0)
			return 1;
		printf("# send %u: %s\n", i, ibv_wc_status_str(wc.status));
		if (wc.status != IBV_WC_SUCCESS)
			break;
	}
	rdma_disconnect(id);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	return 0;
}

static int server(const char *addr, int small_mode)
{
	/* three SGEs with gaps between them, odd sizes, one of 1 byte */
	static unsigned char buf[4 * MSG];
	static const struct { unsigned int off, len; } part[] = {
		{ 0, 10 }, { 40, 1 }, { 100, MSG - 11 },
	};
	unsigned char want[MSG], *tail = buf + 3 * MSG;
	struct rdma_cm_id *listen = endpoint(addr, 1), *id;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 4 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct ibv_sge sgl[8], small[2], bad;
	int ctx1, ctx2, ctx3, ctx4, ok;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	unsigned int i, j;

	if (!listen || rdma_listen(listen, 1) || rdma_get_request(listen, &id)) {
		perror("listen");
		return 1;
	}
	if (rdma_create_qp(id, NULL, &attr)) {
		perror("rdma_create_qp");
		return 1;
	}
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	check(mr != NULL, "registered the receive buffers");
	if (!mr)
		return tap_done();
	memset(buf, 0xee, sizeof(buf));
	for (i = 0; i < 3; i++)
		sgl[i] = (struct ibv_sge){ (uintptr_t)buf + part[i].off,
					   part[i].len, mr->lkey };

	/* Receives are posted before the peer can send (before accept). */
	check(rdma_post_recvv(id, &ctx1, sgl, 3) == 0,
	      "rdma_post_recvv of 3 SGEs returns 0");
	/* an error: more SGEs than the QP takes; -1, errno, nothing posted */
	for (i = 3; i < 8; i++)
		sgl[i] = (struct ibv_sge){ (uintptr_t)tail, 1, mr->lkey };
	errno = 0;
	ok = rdma_post_recvv(id, &ctx2, sgl, 8);
	check(ok == -1 && errno == EINVAL,
	      "8 SGEs on a QP of max_recv_sge %u: -1, errno EINVAL (got %d, %s)",
	      attr.cap.max_recv_sge, ok, strerror(errno));
	sgl[3] = (struct ibv_sge){ (uintptr_t)tail, MSG, mr->lkey };
	check(rdma_post_recvv(id, &ctx2, &sgl[3], 1) == 0,
	      "rdma_post_recvv of 1 SGE returns 0");
	if (small_mode) {
		/* 16 bytes of room for the 32-byte message */
		small[0] = (struct ibv_sge){ (uintptr_t)buf + 160, 8, mr->lkey };
		small[1] = (struct ibv_sge){ (uintptr_t)buf + 176, 8, mr->lkey };
		check(rdma_post_recvv(id, &ctx3, small, 2) == 0,
		      "rdma_post_recvv of 16 bytes of room returns 0");
	} else {
		/* not registered: an lkey nobody has */
		bad = (struct ibv_sge){ (uintptr_t)tail, MSG, mr->lkey ^ 0x5a5a00 };
		check(rdma_post_recvv(id, &ctx3, &bad, 1) == 0,
		      "an unregistered buffer is posted (it fails on completion)");
	}
	check(rdma_post_recvv(id, &ctx4, sgl, 3) == 0,
	      "one more receive is posted");

	if (rdma_accept(id, NULL)) {
		perror("rdma_accept");
		return 1;
	}

	/* message 0: scattered in order over the three SGEs, nothing else */
	ok = rdma_get_recv_comp(id, &wc) > 0;
	check(ok && wc.status == IBV_WC_SUCCESS && wc.byte_len == MSG,
	      "first receive completes with %d bytes (%s)",
	      ok ? (int)wc.byte_len : -1, ok ? ibv_wc_status_str(wc.status) : "none");
	check(ok && wc.wr_id == (uintptr_t)&ctx1,
	      "its wr_id is the context given to rdma_post_recvv");
	fill(want, MSG, 0);
	ok = 1;
	for (i = 0, j = 0; i < 3; j += part[i].len, i++)
		ok &= !memcmp(buf + part[i].off, want + j, part[i].len);
	check(ok, "the message is scattered over the SGEs in order");
	ok = buf[10] == 0xee && buf[39] == 0xee && buf[41] == 0xee &&
	     buf[99] == 0xee && buf[100 + MSG - 11] == 0xee;
	check(ok, "bytes between and after the SGEs are untouched");

	/* message 1 lands in the next WR posted: the refused one took none */
	ok = rdma_get_recv_comp(id, &wc) > 0;
	fill(want, MSG, 1);
	check(ok && wc.status == IBV_WC_SUCCESS && wc.wr_id == (uintptr_t)&ctx2 &&
	      !memcmp(tail, want, MSG),
	      "second message fills the next posted WR, with its context");

	/* message 2: too long for its buffers, or into unregistered ones */
	ok = rdma_get_recv_comp(id, &wc) > 0;
	if (small_mode)
		check(ok && wc.wr_id == (uintptr_t)&ctx3 &&
		      wc.status == IBV_WC_LOC_LEN_ERR &&
		      buf[168] == 0xee && buf[184] == 0xee,
		      "32 bytes into 16 bytes of room: IBV_WC_LOC_LEN_ERR, nothing past the SGEs (%s)",
		      ok ? ibv_wc_status_str(wc.status) : "none");
	else
		check(ok && wc.wr_id == (uintptr_t)&ctx3 &&
		      wc.status == IBV_WC_LOC_PROT_ERR,
		      "an unregistered buffer: IBV_WC_LOC_PROT_ERR (%s)",
		      ok ? ibv_wc_status_str(wc.status) : "none");

	/* that error took the QP to the error state: the rest is flushed */
	ok = rdma_get_recv_comp(id, &wc) > 0;
	check(ok && wc.wr_id == (uintptr_t)&ctx4 &&
	      wc.status == IBV_WC_WR_FLUSH_ERR,
	      "the receive after it is flushed (%s)",
	      ok ? ibv_wc_status_str(wc.status) : "none");

	rdma_disconnect(id);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(listen);
	return tap_done();
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "-s"))
		return server(argv[2], !strcmp(argv[3], "small"));
	if (argc == 3 && !strcmp(argv[1], "-c"))
		return client(argv[2]);
	fprintf(stderr, "usage: post_recvv -s ADDR small|unreg | -c ADDR\n");
	return 2;
}
