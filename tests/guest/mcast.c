// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Multicast on one device: UD QPs attached to a group get each datagram
 * sent to it, the sender's own QP included when attached, through the
 * netdev's IP multicast loopback as from a NIC's port; the netdev is a
 * member of the group (MLD) while QPs are attached.  TAP output.
 *
 *   mcast DEV NETDEV [killed]
 *
 * killed: attach one QP, say so, and wait to be killed with it attached;
 * the caller checks that the netdev left the group.
 */
#include <stdlib.h>
#include <unistd.h>

#include "lib/testlib.h"

#define QKEY 0x1234567
#define LEN 256
#define NQP 4

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq[NQP];	/* each QP's receives */
static struct ibv_cq *scq;	/* the sends */
static struct ibv_qp *qp[NQP];	/* qp[0] sends */
static struct ibv_mr *mr;
static unsigned char *buf;	/* LEN + 40 bytes a QP, and the send's */
static const char *netdev;
/* ff02::1:2:3, link-local scope: the GID of a link-local source */
static union ibv_gid mgid = { .raw = { 0xff, 0x02, [11] = 0x01, [13] = 0x02,
				      [15] = 0x03 } };

static struct ibv_qp *ud_qp(struct ibv_cq *c, uint32_t qkey)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = c, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct qp_path p = { .qkey = qkey };
	struct ibv_qp *q = ibv_create_qp(pd, &ia);

	if (q && qp_rts_path(q, &p)) {
		ibv_destroy_qp(q);
		return NULL;
	}
	return q;
}

static void post_recv(int i)
{
	struct ibv_sge s = { (uintptr_t)buf + i * (LEN + 40), LEN + 40,
			     mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &s, .num_sge = 1 },
			   *bad;

	ibv_post_recv(qp[i], &wr, &bad);
}

/* One datagram from qp[0] to the group, @tag in every byte. */
static int send_tag(struct ibv_ah *ah, unsigned char tag)
{
	unsigned char *p = buf + NQP * (LEN + 40);
	struct ibv_sge s = { (uintptr_t)p, LEN, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 100, .opcode = IBV_WR_SEND, .sg_list = &s,
		.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = 0xffffff,
			   .remote_qkey = QKEY },
	}, *bad;
	struct ibv_wc wc;
	int i, n = 0;

	memset(p, tag, LEN);
	if (ibv_post_send(qp[0], &wr, &bad))
		return -1;
	for (i = 0; i < 3000 && !n; i++, usleep(1000))
		n = ibv_poll_cq(scq, 1, &wc);
	return n == 1 && wc.opcode == IBV_WC_SEND && !wc.status ? 0 : -1;
}

/*
 * Whether qp[@i] received @tag within @ms: its one receive completed with
 * the GRH and LEN bytes of @tag.
 */
static int got(int i, unsigned char tag, int ms)
{
	struct ibv_wc wc;
	int t, n = 0, k;

	for (t = 0; t < ms && !n; t++, usleep(1000))
		n = ibv_poll_cq(cq[i], 1, &wc);
	if (n != 1 || wc.status || wc.byte_len != LEN + 40 ||
	    !(wc.wc_flags & IBV_WC_GRH) || wc.src_qp != qp[0]->qp_num)
		return 0;
	for (k = 0; k < LEN; k++)
		if (buf[i * (LEN + 40) + 40 + k] != tag)
			return 0;
	return 1;
}

/* Whether the netdev is a member of the group: /proc/net/igmp6. */
static int member(void)
{
	char line[256], hex[33];
	FILE *f = fopen("/proc/net/igmp6", "r");
	int k, found = 0;

	for (k = 0; k < 16; k++)
		sprintf(hex + 2 * k, "%02x", mgid.raw[k]);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, netdev) && strstr(line, hex))
			found = 1;
	if (f)
		fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	struct ibv_device_attr da;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .hop_limit = 1 } };
	union ibv_gid bad_gid = { .raw = { 0xfe, 0x80, [15] = 1 } };
	struct ibv_qp_init_attr rci = { .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 1,
						 .max_recv_wr = 1,
						 .max_send_sge = 1,
						 .max_recv_sge = 1 } };
	struct ibv_qp *rc;
	struct ibv_ah *ah;
	int i, ret;

	ctx = open_dev(argc > 1 ? argv[1] : "vhca0");
	netdev = argc > 2 ? argv[2] : "eth0";
	if (!ctx)
		return printf("Bail out! no device\n"), 1;
	pd = ibv_alloc_pd(ctx);
	buf = calloc(NQP + 1, LEN + 40);
	mr = ibv_reg_mr(pd, buf, (NQP + 1) * (LEN + 40),
			IBV_ACCESS_LOCAL_WRITE);
	ret = ibv_query_device(ctx, &da);
	check(!ret && da.max_mcast_grp > 0 && da.max_mcast_qp_attach > 0 &&
	      da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach,
	      "ibv_query_device: max_mcast_grp %d, max_mcast_qp_attach %d, max_total_mcast_qp_attach %d",
	      da.max_mcast_grp, da.max_mcast_qp_attach,
	      da.max_total_mcast_qp_attach);
	scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	for (i = 0; i < NQP; i++) {
		cq[i] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		qp[i] = cq[i] ? ud_qp(cq[i], i == 3 ? QKEY + 1 : QKEY) : NULL;
		if (!qp[i])
			return printf("Bail out! UD QP %d: %s\n", i,
				      strerror(errno)), 1;
		post_recv(i);
	}
	if (argc > 3 && !strcmp(argv[3], "killed")) {
		if (ibv_attach_mcast(qp[1], &mgid, 0) || !member())
			return printf("attach failed\n"), 1;
		printf("attached\n");
		fflush(stdout);
		pause();
	}
	aa.grh.dgid = mgid;
	ah = ibv_create_ah(pd, &aa);
	if (!ah)
		return printf("Bail out! AH: %s\n", strerror(errno)), 1;

	check(!member(), "%s is not a member of ff02::1:2:3 before", netdev);
	check(!ibv_attach_mcast(qp[1], &mgid, 0) &&
	      !ibv_attach_mcast(qp[2], &mgid, 0) &&
	      !ibv_attach_mcast(qp[3], &mgid, 0),
	      "three UD QPs attach to ff02::1:2:3");
	check(!ibv_attach_mcast(qp[1], &mgid, 0),
	      "attaching again is no error");
	check(member(), "%s is a member of the group (/proc/net/igmp6)",
	      netdev);
	check(!send_tag(ah, 0xa1), "a SEND to the group completes");
	check(got(1, 0xa1, 3000) && got(2, 0xa1, 3000),
	      "both QPs with its Q_Key get it, with the GRH");
	check(!got(3, 0xa1, 200), "the QP with another Q_Key does not");
	check(!got(0, 0xa1, 200), "the sender, not attached, does not");

	post_recv(1);
	post_recv(2);
	check(!ibv_detach_mcast(qp[2], &mgid, 0), "one QP detaches");
	check(ibv_detach_mcast(qp[2], &mgid, 0) == EINVAL,
	      "detaching again: EINVAL");
	check(!ibv_attach_mcast(qp[0], &mgid, 0), "the sender attaches");
	check(!send_tag(ah, 0xb2), "another SEND to the group");
	check(got(1, 0xb2, 3000), "the QP still attached gets it");
	check(got(0, 0xb2, 3000), "so does the sender: its port loops it back");
	check(!got(2, 0xb2, 200), "the QP that detached does not");

	check(ibv_attach_mcast(qp[1], &bad_gid, 0) == EINVAL,
	      "attaching to a GID that is no multicast GID: EINVAL");
	rci.send_cq = rci.recv_cq = scq;
	rc = ibv_create_qp(pd, &rci);
	check(rc && ibv_attach_mcast(rc, &mgid, 0) == EINVAL,
	      "attaching an RC QP: EINVAL");
	if (rc)
		ibv_destroy_qp(rc);

	check(!ibv_detach_mcast(qp[0], &mgid, 0) &&
	      !ibv_detach_mcast(qp[1], &mgid, 0), "two more detach");
	check(member(), "%s stays a member while a QP is attached", netdev);
	check(ibv_destroy_qp(qp[3]) == EBUSY,
	      "destroying a QP still attached: EBUSY (uverbs' rule)");
	check(!ibv_detach_mcast(qp[3], &mgid, 0) && !ibv_destroy_qp(qp[3]),
	      "the last QP detaches, and goes");
	check(!member(), "%s has left the group", netdev);
	for (i = 0; i < 3; i++)
		ibv_destroy_qp(qp[i]);
	ibv_destroy_ah(ah);
	return tap_done();
}
