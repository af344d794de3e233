// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Tag matching on one device: an RC client sends to an RC server whose
 * receives come from a tag-matching SRQ (IBV_SRQT_TM).  tm_caps; the SRQ
 * and QPs it refuses; eager messages matched to tags in posting order and
 * placed after their header, every byte checked; unexpected messages,
 * whole, in the SRQ's receive WQEs, and matching off until a sync says
 * software has seen them; messages with no tag; tag removal, and the
 * races: a removal and a message after the same tag (each tag goes to
 * exactly one of them, over many rounds, from two threads), a removal of
 * a tag taken, a full tag list and a full queue of list operations'
 * completions; a rendezvous read from the sender's buffer, with its FIN,
 * and one whose rkey is refused; an unexpected message that fails, which
 * leaves the SRQ in phase with what software received; last, garbage
 * written into the tag table
 * (through the provider's mapping), which costs the connection its
 * messages and nothing else.  Prints TAP.
 * Usage: tm DEVICE
 *
 * On the wire, between two hosts, from the GIDs at SGID_INDEX:
 *        tm DEVICE serve SGID_INDEX: the receiving end, on a TM SRQ:
 *        eager messages matched and placed after their header across
 *        packets, every byte checked; unexpected messages and the phase
 *        sync; no tag; a rendezvous, which the receiving QP reads with
 *        an RDMA READ of its own, then sends the FIN; one too large for
 *        its tag, which is left to software (its headers in the tag's
 *        buffer, TM_RNDV_INCOMPLETE), and software's RDMA READ of its
 *        data and its FIN on the same QP; one read while the process's
 *        own READs go on the QP; an unexpected message that fails, and
 *        the phase sync after it; last, on new QPs, a rendezvous flushed
 *        while a SEND before it waits, and one whose key the sender
 *        refuses
 *        tm DEVICE send SGID_INDEX SERVER: the sending end, an RC QP of
 *        any device, which sends what the receiving end asks for
 *        tm DEVICE serve SGID_INDEX HOLD_S [STOP_FILE]: a target for a
 *        fuzzer on the wire instead of the checks (wire_hold())
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <infiniband/tm_types.h>

#include "lib/testlib.h"
#include "provider.h"

#define LEN	8192		/* a tag's buffer, and the largest message */
#define NBUF	64		/* buffers of LEN in each end's memory */
#define RACES	2000		/* rounds of the removal race */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static struct ibv_cq *ccq;		/* the client's */
static struct ibv_cq_ex *scq;		/* the server's, and the SRQ's */
static struct ibv_srq *srq;
static struct ibv_qp *cqp, *sqp;
static struct ibv_mr *cmr, *smr;
static char *cbuf, *sbuf;
static uint32_t unexp;			/* unexpected messages handled */

/* A completion as read from the extended CQ, with its tag-matching info. */
struct twc {
	uint64_t wr_id;
	int status, opcode;
	unsigned int flags;
	uint32_t byte_len;
	uint64_t tag;
	uint32_t priv;
	uint32_t imm;	/* with IBV_WC_WITH_IMM, in host order */
};

static struct twc spoll(int ms)
{
	struct ibv_poll_cq_attr pa = {};
	struct ibv_wc_tm_info ti;
	struct twc w = { .status = NO_WC };
	int i, ret = ENOENT;

	for (i = 0; i < ms && ret == ENOENT; i++) {
		ret = ibv_start_poll(scq, &pa);
		if (ret == ENOENT)
			usleep(1000);
	}
	if (ret)
		return w;
	ibv_wc_read_tm_info(scq, &ti);
	w = (struct twc){
		.wr_id = scq->wr_id, .status = scq->status,
		.opcode = ibv_wc_read_opcode(scq),
		.flags = ibv_wc_read_wc_flags(scq),
		.byte_len = ibv_wc_read_byte_len(scq),
		.tag = ti.tag, .priv = ti.priv,
	};
	if (w.flags & IBV_WC_WITH_IMM)
		w.imm = be32toh(ibv_wc_read_imm_data(scq));
	ibv_end_poll(scq);
	return w;
}

static char *cslot(int i) { return cbuf + (size_t)i * LEN; }
static char *sslot(int i) { return sbuf + (size_t)i * LEN; }

/* A TMH of @op, @tag and app_ctx @ctx at @b. */
static void tmh(char *b, uint8_t op, uint64_t tag, uint32_t ctx)
{
	struct ibv_tmh h = { .opcode = op, .app_ctx = htobe32(ctx),
			     .tag = htobe64(tag) };

	memcpy(b, &h, sizeof(h));
}

/* Post one op on the SRQ; its errno (0). */
static int op(enum ibv_ops_wr_opcode o, uint64_t wr_id, uint64_t tag,
	      uint64_t mask, int slot, uint32_t *handle)
{
	struct ibv_sge sge = { (uintptr_t)sslot(slot), LEN, smr->lkey };
	struct ibv_ops_wr wr = {
		.wr_id = wr_id, .opcode = o, .flags = IBV_OPS_SIGNALED,
		.tm = { .unexpected_cnt = unexp,
			.add = { .recv_wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1, .tag = tag, .mask = mask } },
	}, *bad;
	int e;

	if (o == IBV_WR_TAG_DEL)
		wr.tm.handle = *handle;
	if (o == IBV_WR_TAG_SYNC)
		wr.flags |= IBV_OPS_TM_SYNC;
	e = ibv_post_srq_ops(srq, &wr, &bad);
	if (!e && o == IBV_WR_TAG_ADD && handle)
		*handle = wr.tm.handle;
	return e;
}

/* An ADD of @tag under @mask into server buffer @slot, and its TM_ADD. */
static bool add(uint64_t wr_id, uint64_t tag, uint64_t mask, int slot,
		uint32_t *handle, unsigned int *flags)
{
	struct twc w;

	if (op(IBV_WR_TAG_ADD, wr_id, tag, mask, slot, handle))
		return false;
	w = spoll(2000);
	if (flags)
		*flags = w.flags;
	return w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_ADD &&
	       w.wr_id == wr_id;
}

/* SYNC with what software has handled; its TM_SYNC. */
static bool sync_(void)
{
	struct twc w;

	if (op(IBV_WR_TAG_SYNC, 27, 0, 0, 0, NULL))
		return false;
	w = spoll(2000);
	return w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_SYNC &&
	       !w.flags;
}

/* Post a SEND of @len bytes of client buffer @slot, wr_id 100 + @slot. */
static int cpost(int slot, uint32_t len, bool imm, uint32_t data)
{
	struct ibv_sge sge = { (uintptr_t)cslot(slot), len, cmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 100 + slot, .sg_list = &sge, .num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(data),
	}, *bad;

	return ibv_post_send(cqp, &wr, &bad);
}

/* A SEND as cpost() posts it; its completion's status. */
static int csend_imm(int slot, uint32_t len, bool imm, uint32_t data)
{
	struct ibv_wc wc;

	if (cpost(slot, len, imm, data))
		return -1;
	wc = next_wc(ccq);
	return wc.opcode == IBV_WC_SEND ? (int)wc.status : -2;
}

static int csend(int slot, uint32_t len)
{
	return csend_imm(slot, len, false, 0);
}

/* A receive WQE of @n bytes of server buffer @slot on the SRQ. */
static int srecv_n(int slot, uint64_t wr_id, uint32_t n)
{
	struct ibv_sge sge = { (uintptr_t)sslot(slot), n, smr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* A receive WQE of server buffer @slot on the SRQ, for unexpected ones. */
static int srecv(int slot, uint64_t wr_id)
{
	return srecv_n(slot, wr_id, LEN);
}

/* An eager message of @n data bytes with @tag from client buffer @slot. */
static int eager(int slot, uint64_t tag, uint32_t ctx, uint32_t n,
		 unsigned int seed)
{
	tmh(cslot(slot), IBV_TMH_EAGER, tag, ctx);
	fill_seed(cslot(slot) + sizeof(struct ibv_tmh), n, seed);
	return csend(slot, sizeof(struct ibv_tmh) + n);
}

/* The server's next completion, once a send of status @st succeeded. */
static struct twc sent_then(int st)
{
	struct twc none = { .status = NO_WC };

	return st == IBV_WC_SUCCESS ? spoll(2000) : none;
}

static void caps(void)
{
	struct ibv_device_attr_ex da = {};
	struct ibv_tm_caps *t = &da.tm_caps;
	int e = ibv_query_device_ex(ctx, NULL, &da);

	check(!e && (t->flags & IBV_TM_CAP_RC) && t->max_num_tags == 1024 &&
	      t->max_ops == 1024 && t->max_sge == 4 &&
	      t->max_rndv_hdr_size == 64,
	      "tm_caps: RC, 1024 tags, 1024 operations, 4 SGEs, rendezvous headers of 64 bytes (flags %#x, %u, %u, %u, %u)",
	      t->flags, t->max_num_tags, t->max_ops, t->max_sge,
	      t->max_rndv_hdr_size);
}

static struct ibv_srq *tm_srq_on(struct ibv_cq_ex *cq, uint32_t tags,
				  uint32_t ops)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 64, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM, .pd = pd,
		.cq = ibv_cq_ex_to_cq(cq),
		.tm_cap = { .max_num_tags = tags, .max_ops = ops },
	};

	return ibv_create_srq_ex(ctx, &a);
}

static struct ibv_srq *tm_srq(uint32_t tags, uint32_t ops)
{
	return tm_srq_on(scq, tags, ops);
}

static struct ibv_qp *rc_qp(struct ibv_cq *cq, struct ibv_srq *s,
			    enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = s, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = s ? 0 : 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &a);
}

static void refused(void)
{
	struct ibv_srq *s;
	struct ibv_qp *q;

	errno = 0;
	s = tm_srq(0, 16);
	check(!s && errno == EINVAL, "a TM SRQ of 0 tags is refused (%s)",
	      strerror(errno));
	if (s)
		ibv_destroy_srq(s);
	errno = 0;
	s = tm_srq(4096, 16);
	check(!s && errno == EINVAL,
	      "a TM SRQ of more tags than tm_caps says is refused (%s)",
	      strerror(errno));
	if (s)
		ibv_destroy_srq(s);
	errno = 0;
	q = rc_qp(ibv_cq_ex_to_cq(scq), srq, IBV_QPT_UC);
	check(!q && errno == EOPNOTSUPP,
	      "a UC QP on a TM SRQ is refused: tag matching is RC's (%s)",
	      strerror(errno));
	if (q)
		ibv_destroy_qp(q);
}

static void eagers(void)
{
	uint32_t h1, h2;
	struct twc w;

	check(add(1, 5, ~0ULL, 1, &h1, NULL),
	      "ADD tag 5: TM_ADD completion, no sync asked");
	check(eager(0, 5, 0xabcd, 1000, 5) == IBV_WC_SUCCESS,
	      "an eager message of tag 5 is sent");
	w = spoll(2000);
	check(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV &&
	      w.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID) &&
	      w.wr_id == 1 && w.tag == 5 && w.priv == 0xabcd &&
	      w.byte_len == 1000,
	      "it completes TM_RECV, MATCH and DATA_VALID, the tag's wr_id, tag 5, app_ctx, 1000 bytes (status %d opcode %d flags %#x wr_id %llu tag %llu priv %#x len %u)",
	      w.status, w.opcode, w.flags, (unsigned long long)w.wr_id,
	      (unsigned long long)w.tag, w.priv, w.byte_len);
	check(filled_seed(sslot(1), 1000, 5),
	      "its data is in the tag's buffer from byte 0, without its header");
	check(add(6, 6, ~0ULL, 6, NULL, NULL), "ADD tag 6");
	tmh(cslot(0), IBV_TMH_EAGER, 6, 0x1357);
	fill_seed(cslot(0) + sizeof(struct ibv_tmh), 100, 6);
	check(csend_imm(0, sizeof(struct ibv_tmh) + 100, true, 0xfeedbeef) ==
	      IBV_WC_SUCCESS,
	      "an eager message of tag 6 with immediate data is sent");
	w = spoll(2000);
	check(w.status == IBV_WC_SUCCESS &&
	      w.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID |
			  IBV_WC_WITH_IMM) &&
	      w.imm == 0xfeedbeef && w.wr_id == 6 && w.tag == 6 &&
	      w.priv == 0x1357 && w.byte_len == 100 &&
	      filled_seed(sslot(6), 100, 6),
	      "it completes MATCH, DATA_VALID and WITH_IMM: the immediate data beside the tag and app_ctx (flags %#x imm %#x tag %llu priv %#x)",
	      w.flags, w.imm, (unsigned long long)w.tag, w.priv);

	/* two tags match; the first posted takes the first message */
	check(add(2, 7, 0xff, 2, &h1, NULL) &&
	      add(3, 0x107, 0xfff, 3, &h2, NULL),
	      "ADD tag 7 under mask 0xff and tag 0x107 under mask 0xfff");
	check(eager(0, 0x1107, 1, 64, 11) == IBV_WC_SUCCESS &&
	      eager(1, 0x3107, 2, 64, 12) == IBV_WC_SUCCESS,
	      "two messages of tags 0x1107 and 0x3107, each of which both match, are sent");
	w = spoll(2000);
	check(w.wr_id == 2 && w.tag == 0x1107 && filled_seed(sslot(2), 64, 11),
	      "the first goes to the tag posted first (wr_id %llu, tag %#llx)",
	      (unsigned long long)w.wr_id, (unsigned long long)w.tag);
	w = spoll(2000);
	check(w.wr_id == 3 && w.tag == 0x3107 && filled_seed(sslot(3), 64, 12),
	      "the second to the other (wr_id %llu, tag %#llx)",
	      (unsigned long long)w.wr_id, (unsigned long long)w.tag);
	w.status = NO_WC;
	if (!op(IBV_WR_TAG_DEL, 4, 0, 0, 0, &h2))
		w = spoll(2000);
	check(w.opcode == IBV_WC_TM_DEL && w.status == IBV_WC_TM_ERR,
	      "DEL of a tag a message took completes TM_ERR (status %d)",
	      w.status);
	check(!srecv(10, 10) && !srecv(11, 11),
	      "receive WQEs posted on the TM SRQ for unexpected messages");
	check(eager(0, 8, 0, 32, 1) == IBV_WC_SUCCESS &&
	      eager(0, 8, 0, LEN - sizeof(struct ibv_tmh), 1) ==
	      IBV_WC_SUCCESS,
	      "eager messages no tag takes are sent (unexpected)");
}

static void unexpected(void)
{
	uint32_t h;
	unsigned int flags = 0;
	struct twc w;
	int i;

	/* eagers() left two unexpected messages */
	w = spoll(2000);
	check(w.opcode == IBV_WC_TM_RECV && !w.flags && w.wr_id == 10 &&
	      w.tag == 0 && w.byte_len == 48,
	      "an unexpected message completes TM_RECV with no flags, in a receive WQE, whole (wr_id %llu, flags %#x, %u bytes)",
	      (unsigned long long)w.wr_id, w.flags, w.byte_len);
	w = spoll(2000);
	check(w.opcode == IBV_WC_TM_RECV && !w.flags && w.wr_id == 11 &&
	      w.byte_len == LEN && !memcmp(sslot(11), cslot(0), LEN),
	      "the next one too, behind it, every byte of it (wr_id %llu, %u bytes)",
	      (unsigned long long)w.wr_id, w.byte_len);
	i = add(20, 8, ~0ULL, 20, &h, &flags);
	check(i && (flags & IBV_WC_TM_SYNC_REQ),
	      "an ADD while software has not synced them completes with TM_SYNC_REQ (flags %#x)",
	      flags);
	for (i = 0; i < 4; i++)
		srecv(12 + i, 12 + i);
	w = sent_then(eager(0, 8, 0, 100, 3));
	check(w.opcode == IBV_WC_TM_RECV && !w.flags && w.wr_id == 12,
	      "out of phase, a message its tag would match is unexpected too (wr_id %llu)",
	      (unsigned long long)w.wr_id);
	unexp = 3;
	check(sync_(), "SYNC with the 3 handled: TM_SYNC, no sync asked");
	w = sent_then(eager(0, 8, 0, 100, 4));
	check(w.opcode == IBV_WC_TM_RECV &&
	      w.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID) &&
	      w.wr_id == 20 && filled_seed(sslot(20), 100, 4),
	      "in phase again, the tag takes the next message (wr_id %llu)",
	      (unsigned long long)w.wr_id);

	/* no tag: opcode NO_TAG, and a message too short for a TMH */
	tmh(cslot(0), IBV_TMH_NO_TAG, 8, 0);
	w = sent_then(csend(0, 40));
	check(w.opcode == IBV_WC_TM_NO_TAG && !w.flags && w.wr_id == 13 &&
	      w.byte_len == 40,
	      "a message of TMH opcode NO_TAG completes TM_NO_TAG, whole, in a receive WQE (opcode %d, %u bytes)",
	      w.opcode, w.byte_len);
	w = sent_then(csend(0, 10));
	check(w.opcode == IBV_WC_TM_NO_TAG && w.wr_id == 14,
	      "one shorter than a TMH has no tag either (opcode %d)",
	      w.opcode);
	w.status = NO_WC;
	if (add(21, 9, ~0ULL, 21, &h, NULL) &&
	    !op(IBV_WR_TAG_DEL, 22, 0, 0, 0, &h))
		w = spoll(2000);
	check(w.opcode == IBV_WC_TM_DEL && w.status == IBV_WC_SUCCESS,
	      "DEL of a tag no message took: TM_DEL, success");
	w.status = NO_WC;
	if (!op(IBV_WR_TAG_DEL, 23, 0, 0, 0, &h))
		w = spoll(2000);
	check(w.status == IBV_WC_TM_ERR, "DEL of it again: TM_ERR");
	w = sent_then(eager(0, 9, 0, 16, 5));
	check(w.opcode == IBV_WC_TM_RECV && !w.flags && w.wr_id == 15,
	      "a message of the tag removed is unexpected");
	unexp = 4;
	check(sync_(), "SYNC with 4");
}

/* Whether @ch has an event within @ms, which is then taken and acked. */
static bool event_within(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&p, 1, ms) != 1 || ibv_get_cq_event(ch, &cq, &cq_ctx))
		return false;
	ibv_ack_cq_events(cq, 1);
	return true;
}

/* One list operation on @s, signaled: ADD of @tag, or DEL of @handle. */
static int op_on(struct ibv_srq *s, enum ibv_ops_wr_opcode o, uint64_t tag,
		 uint32_t *handle)
{
	struct ibv_sge sge = { (uintptr_t)sslot(62), LEN, smr->lkey };
	struct ibv_ops_wr wr = {
		.wr_id = 500 + o, .opcode = o, .flags = IBV_OPS_SIGNALED,
		.tm = { .handle = *handle,
			.add = { .recv_wr_id = 500, .sg_list = &sge,
				 .num_sge = 1, .tag = tag, .mask = ~0ULL } },
	}, *bad;
	int e = ibv_post_srq_ops(s, &wr, &bad);

	if (!e && o == IBV_WR_TAG_ADD)
		*handle = wr.tm.handle;
	return e;
}

/* The completions waiting on @cq: how many, of which @opcode how many. */
static int drain(struct ibv_cq_ex *cq, int opcode, int *of)
{
	struct ibv_poll_cq_attr pa = {};
	int n = 0;

	*of = 0;
	if (ibv_start_poll(cq, &pa))
		return 0;
	do {
		n++;
		*of += (int)ibv_wc_read_opcode(cq) == opcode;
	} while (!ibv_next_poll(cq));
	ibv_end_poll(cq);
	return n;
}

/*
 * The list operations' completions raise their CQ's event as any other
 * completion does, though the provider makes them with no system call:
 * none unarmed, one when armed for the next, one when armed for solicited
 * ones only if an operation failed.
 */
static void events(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16, .channel = ch,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_cq_ex *ecq = ch ? ibv_create_cq_ex(ctx, &ca) : NULL;
	struct ibv_srq *s = ecq ? tm_srq_on(ecq, 8, 8) : NULL;
	struct ibv_cq *cq = ecq ? ibv_cq_ex_to_cq(ecq) : NULL;
	uint32_t h = 0;
	int n, of;

	check(s != NULL, "a TM SRQ on a CQ with a completion channel");
	if (!s)
		goto out;
	check(!op_on(s, IBV_WR_TAG_ADD, 0x600, &h) && !event_within(ch, 200) &&
	      drain(ecq, IBV_WC_TM_ADD, &of) == 1 && of == 1,
	      "an ADD on the CQ not armed: its completion, and no event");
	check(!ibv_req_notify_cq(cq, 0) && !op_on(s, IBV_WR_TAG_DEL, 0, &h) &&
	      event_within(ch, 2000),
	      "armed for the next completion, a DEL: the CQ's event");
	n = drain(ecq, IBV_WC_TM_DEL, &of);
	check(n == 1 && of == 1, "and its TM_DEL completion (%d)", n);
	check(!ibv_req_notify_cq(cq, 1) &&
	      !op_on(s, IBV_WR_TAG_ADD, 0x601, &h) && !event_within(ch, 200),
	      "armed for solicited ones, an ADD that succeeds: no event");
	check(!op_on(s, IBV_WR_TAG_DEL, 0, &h) &&
	      !op_on(s, IBV_WR_TAG_DEL, 0, &h) && event_within(ch, 2000),
	      "then a DEL that fails (TM_ERR): the event");
	n = drain(ecq, IBV_WC_TM_DEL, &of);
	check(n == 3 && of == 2, "the ADD's and both DELs' completions (%d, %d)",
	      n, of);
	ibv_destroy_srq(s);
out:
	if (ecq)
		ibv_destroy_cq(cq);
	if (ch)
		ibv_destroy_comp_channel(ch);
}

/* The removal race: a thread removing the tags a client sends to. */
struct racer {
	uint32_t handle[RACES];
	volatile int added;
	volatile int stop;	/* the rounds ended early: no more tags come */
	int del_ok, del_err;
};

static void *remover(void *arg)
{
	struct racer *r = arg;
	struct ibv_ops_wr wr = { .opcode = IBV_WR_TAG_DEL }, *bad;
	int i;

	for (i = 0; i < RACES; i++) {
		while (__atomic_load_n(&r->added, __ATOMIC_ACQUIRE) <= i)
			if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
				return NULL;
		wr.tm.handle = r->handle[i];
		wr.flags = 0;	/* unsignaled: its result is the tag's fate */
		if (ibv_post_srq_ops(srq, &wr, &bad))
			r->del_err = -1000000;
	}
	return NULL;
}

/*
 * Each round adds a tag of its own and sends a message to it while the
 * other thread removes it: every message is matched or unexpected, and
 * the tags a message took are exactly those whose removal lost.
 */
static void race(void)
{
	struct racer r = {};
	int i, e, matched = 0, unex = 0, bad = 0;
	uint64_t rid = 0;
	struct ibv_ops_wr wr = { .opcode = IBV_WR_TAG_ADD }, *badw;
	struct ibv_sge sge = { (uintptr_t)sslot(40), LEN, smr->lkey };
	pthread_t t;
	struct twc w;

	wr.tm.add.sg_list = &sge;
	wr.tm.add.num_sge = 1;
	wr.tm.add.mask = ~0ULL;
	pthread_create(&t, NULL, remover, &r);
	for (i = 0; i < RACES; i++) {
		/* one receive WQE waits for an unexpected message */
		if (!rid && !srecv(41, 1000000 + i))
			rid = 1000000 + i;
		wr.tm.add.tag = 0x100000 + i;
		wr.tm.add.recv_wr_id = 0x100000 + i;
		e = ibv_post_srq_ops(srq, &wr, &badw);
		if (e) {
			printf("# round %d: ADD failed (%s)\n", i, strerror(e));
			bad++;
			break;
		}
		r.handle[i] = wr.tm.handle;
		__atomic_store_n(&r.added, i + 1, __ATOMIC_RELEASE);
		e = eager(0, 0x100000 + i, 0, 64, i);
		if (e != IBV_WC_SUCCESS) {
			printf("# round %d: the SEND completed %d\n", i, e);
			bad++;
			break;
		}
		w = spoll(5000);
		if (w.opcode == IBV_WC_TM_RECV && w.flags &&
		    w.wr_id == 0x100000ULL + i && filled_seed(sslot(40), 64, i)) {
			matched++;
		} else if (w.opcode == IBV_WC_TM_RECV && !w.flags &&
			   w.wr_id == rid && rid) {
			unex++;
			unexp++;
			rid = 0;
			if (!sync_())
				bad++;
		} else if (bad++ < 5) {
			printf("# round %d: status %d opcode %d flags %#x wr_id %#llx\n",
			       i, w.status, w.opcode, w.flags,
			       (unsigned long long)w.wr_id);
		}
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	check(!bad && matched + unex == RACES && matched && unex,
	      "%d rounds of ADD, a message to the tag and a DEL racing it: each message matched (%d) or unexpected (%d), none lost or wrong (%d)",
	      RACES, matched, unex, bad);
	check(r.del_err == 0, "every DEL was accepted by ibv_post_srq_ops");
}

static void full(void)
{
	struct ibv_srq *s = tm_srq(2, 2);
	struct ibv_sge sge = { (uintptr_t)sslot(50), LEN, smr->lkey };
	struct ibv_ops_wr w[3] = {}, *bad = NULL;
	int i;

	check(s != NULL, "a TM SRQ of 2 tags and 2 list operations (%s)",
	      s ? "made" : strerror(errno));
	if (!s)
		return;
	for (i = 0; i < 3; i++) {
		w[i].opcode = IBV_WR_TAG_ADD;
		w[i].flags = IBV_OPS_SIGNALED;
		w[i].wr_id = 60 + i;
		w[i].tm.add = (typeof(w[i].tm.add)){ .sg_list = &sge,
			.num_sge = 1, .tag = i, .mask = ~0ULL };
		w[i].next = i < 2 ? &w[i + 1] : NULL;
	}
	check(ibv_post_srq_ops(s, w, &bad) == ENOMEM && bad == &w[2],
	      "three signaled ADDs: the third finds the queue of completions full, ENOMEM, bad_op on it");
	check(spoll(2000).wr_id == 60 && spoll(2000).wr_id == 61 &&
	      spoll(200).status == NO_WC,
	      "the first two complete, nothing of the third");
	w[2].next = NULL;
	check(ibv_post_srq_ops(s, &w[2], &bad) == ENOMEM,
	      "with two tags posted the list is full: ENOMEM");
	w[0].opcode = IBV_WR_TAG_DEL;
	w[0].next = NULL;
	w[0].tm.handle = 7 << 16 | 5;
	check(ibv_post_srq_ops(s, &w[0], &bad) == EINVAL,
	      "a DEL of a handle outside the table: EINVAL");
	check(ibv_destroy_srq(s) == 0, "the TM SRQ with tags posted is destroyed");
}

static int qp_state_now(struct ibv_qp *q)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	return ibv_query_qp(q, &a, IBV_QP_STATE, &ia) ? -1 : (int)a.qp_state;
}

/*
 * @fin, as tag_matching.md has it: the TMH and RVH of the rendezvous
 * @req, opcode FIN
 */
static bool fin_of(const char *fin, const char *req)
{
	return fin[0] == IBV_TMH_FIN &&
	       !memcmp(fin + 1, req + 1, sizeof(struct ibv_tmh) +
		       sizeof(struct ibv_rvh) - 1);
}

static int qp_state(struct ibv_qp *q)
{
	int st = -1;

	for (int i = 0; i < 100; i++) {
		st = qp_state_now(q);
		if (st < 0 || st == IBV_QPS_ERR)
			break;
		usleep(10000);	/* its work moves it there */
	}
	return st;
}

static void rndv(void)
{
	struct ibv_rvh rvh;
	struct ibv_recv_wr rw = { .wr_id = 77 }, *rbad;
	struct ibv_sge rsge = { (uintptr_t)cslot(60), 64, cmr->lkey };
	struct ibv_wc wc;
	uint32_t h;
	struct twc w;

	rw.sg_list = &rsge;
	rw.num_sge = 1;
	check(!ibv_post_recv(cqp, &rw, &rbad), "the client posts a receive for the FIN");
	fill_seed(cslot(30), 6000, 9);
	check(add(30, 0x77, ~0ULL, 30, &h, NULL), "ADD tag 0x77");
	tmh(cslot(1), IBV_TMH_RNDV, 0x77, 0x1234);
	rvh = (struct ibv_rvh){ .va = htobe64((uintptr_t)cslot(30)),
				.rkey = htobe32(cmr->rkey), .len = htobe32(6000) };
	memcpy(cslot(1) + sizeof(struct ibv_tmh), &rvh, sizeof(rvh));
	check(csend(1, 64) == IBV_WC_SUCCESS,
	      "a rendezvous of 6000 bytes (64 bytes of headers) is sent; its SEND completes first");
	w = spoll(2000);
	check(w.opcode == IBV_WC_TM_RECV && w.flags == IBV_WC_TM_MATCH &&
	      w.wr_id == 30 && w.tag == 0x77 && w.priv == 0x1234,
	      "the tag takes it: TM_RECV, MATCH alone (flags %#x, wr_id %llu)",
	      w.flags, (unsigned long long)w.wr_id);
	wc = next_wc(ccq);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	      wc.wr_id == 77 && wc.byte_len == 32 && fin_of(cslot(60), cslot(1)),
	      "the client receives the FIN: 32 bytes, its TMH and RVH, opcode FIN (status %d, %u bytes, opcode %d)",
	      wc.status, wc.byte_len, cslot(60)[0]);
	w = spoll(2000);
	check(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV &&
	      w.flags == IBV_WC_TM_DATA_VALID && w.wr_id == 30 &&
	      w.byte_len == 6000 && filled_seed(sslot(30), 6000, 9),
	      "then TM_RECV, DATA_VALID: the 6000 bytes read into the tag's buffer (flags %#x, %u bytes)",
	      w.flags, w.byte_len);

	/* no receive for the FIN yet: it waits, as a SEND would (RNR) */
	check(add(34, 0x7b, ~0ULL, 34, &h, NULL), "ADD tag 0x7b");
	tmh(cslot(1), IBV_TMH_RNDV, 0x7b, 0x55);
	rvh.len = htobe32(3000);
	memcpy(cslot(1) + sizeof(struct ibv_tmh), &rvh, sizeof(rvh));
	w = sent_then(csend(1, 32));
	check(w.flags == IBV_WC_TM_MATCH && w.wr_id == 34,
	      "a rendezvous with no receive posted for its FIN: matched");
	w = spoll(2000);
	check(w.status == IBV_WC_SUCCESS && w.flags == IBV_WC_TM_DATA_VALID &&
	      w.byte_len == 3000 && filled_seed(sslot(34), 3000, 9),
	      "its data read and the tag completed all the same (flags %#x, %u bytes)",
	      w.flags, w.byte_len);
	wc = next_wc_within(ccq, 300);
	check(wc.status == NO_WC, "no FIN lost meanwhile: none delivered (%d)",
	      wc.status);
	check(!ibv_post_recv(cqp, &rw, &rbad), "the client posts its receive");
	wc = next_wc_within(ccq, 2000);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	      wc.byte_len == 32 && fin_of(cslot(60), cslot(1)),
	      "then the FIN that waited for it (status %d, %u bytes)",
	      wc.status, wc.byte_len);

	/* a buffer too small for the data: software's to finish */
	check(add(32, 0x79, ~0ULL, 32, &h, NULL), "ADD tag 0x79");
	tmh(cslot(1), IBV_TMH_RNDV, 0x79, 0x99);
	rvh.len = htobe32(LEN + 1);
	memcpy(cslot(1) + sizeof(struct ibv_tmh), &rvh, sizeof(rvh));
	w = sent_then(csend(1, 48));
	check(w.status == IBV_WC_TM_RNDV_INCOMPLETE &&
	      w.opcode == IBV_WC_TM_RECV && w.flags == IBV_WC_TM_MATCH &&
	      w.wr_id == 32 && w.tag == 0x79 && w.priv == 0x99 &&
	      w.byte_len == 48 && !memcmp(sslot(32), cslot(1), 48),
	      "a rendezvous of more than the tag's buffer: TM_RNDV_INCOMPLETE, MATCH, its 48 bytes of headers in the tag's buffer (status %d, flags %#x, %u bytes)",
	      w.status, w.flags, w.byte_len);
	wc = next_wc_within(ccq, 300);
	check(wc.status == NO_WC, "no FIN: software sends it (%d)", wc.status);
	check(qp_state_now(sqp) == IBV_QPS_RTS,
	      "the receiving QP is still in RTS: no error (%d)",
	      qp_state_now(sqp));

	check(add(31, 0x78, ~0ULL, 31, &h, NULL), "ADD tag 0x78");
	check(!ibv_post_recv(cqp, &rw, &rbad), "the client posts a receive for a FIN");
	tmh(cslot(1), IBV_TMH_RNDV, 0x78, 0);
	rvh.len = htobe32(6000);
	rvh.rkey = htobe32(cmr->rkey ^ 0x80);
	memcpy(cslot(1) + sizeof(struct ibv_tmh), &rvh, sizeof(rvh));
	w = sent_then(csend(1, 32));
	check(w.flags == IBV_WC_TM_MATCH,
	      "a rendezvous whose rkey is not the sender's is matched");
	w = spoll(2000);
	check(w.status == IBV_WC_REM_ACCESS_ERR && w.wr_id == 31,
	      "its read is refused: the tag completes REM_ACCESS_ERR, as the READ would (status %d)",
	      w.status);
	check(qp_state(sqp) == IBV_QPS_ERR,
	      "and the receiving QP is in the error state, as after a READ refused (%d)",
	      qp_state(sqp));
	wc = next_wc_within(ccq, 300);
	check(wc.status == NO_WC, "no FIN for a rendezvous not read (%d)",
	      wc.status);
}

/* The completions left on both ends' CQs, taken. */
static void drain_both(void)
{
	while (next_wc_within(ccq, 200).status != NO_WC)
		;
	while (spoll(200).status != NO_WC)
		;
}

/* A fresh client and server pair, for one a test left in error. */
static bool new_pair(void)
{
	ibv_destroy_qp(sqp);
	ibv_destroy_qp(cqp);
	cqp = rc_qp(ccq, NULL, IBV_QPT_RC);
	sqp = rc_qp(ibv_cq_ex_to_cq(scq), srq, IBV_QPT_RC);
	check(cqp && sqp && !qp_rts_to(cqp, sqp->qp_num, &gid) &&
	      !qp_rts_to(sqp, cqp->qp_num, &gid),
	      "a new RC pair on the TM SRQ, connected");
	return cqp && sqp;
}

/*
 * An unexpected message its receive WQE is too small for fails at both
 * ends.  Software counts the unexpected messages it received, which this
 * one is not: synced with that count, the SRQ is in phase, and a tag
 * takes the next message.
 */
static void lost(void)
{
	struct twc w = { .status = NO_WC };
	int i, st = -1;

	/* rndv() left the server's QP in the error state */
	if (!new_pair())
		return;
	check(sync_(), "in phase to begin with (%u unexpected handled)",
	      unexp);
	check(!srecv_n(42, 42, 32), "a receive WQE of 32 bytes on the SRQ");
	/* the receive WQEs earlier tests left go first (race() leaves one) */
	for (i = 0; i < 4; i++) {
		st = eager(0, 0x7c, 0, 100, 7);
		w = spoll(2000);
		if (st != IBV_WC_SUCCESS || w.status != IBV_WC_SUCCESS ||
		    w.flags || w.opcode != IBV_WC_TM_RECV)
			break;
		unexp++;
		sync_();
	}
	check(st == IBV_WC_REM_INV_REQ_ERR && w.wr_id == 42 &&
	      w.status == IBV_WC_LOC_LEN_ERR,
	      "an unexpected message of 116 bytes into it fails: LOC_LEN_ERR there, REM_INV_REQ_ERR at the sender (%d, %d, wr_id %llu)",
	      w.status, st, (unsigned long long)w.wr_id);
	drain_both();
	check(sync_(),
	      "SYNC with the %u software received: in phase, no TM_SYNC_REQ",
	      unexp);
	if (!new_pair())
		return;
	check(add(43, 0x7c, ~0ULL, 43, NULL, NULL) && !srecv(44, 44),
	      "ADD tag 0x7c, and a receive WQE of %u bytes", LEN);
	w = sent_then(eager(0, 0x7c, 0, 100, 8));
	check(w.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID) &&
	      w.wr_id == 43 && filled_seed(sslot(43), 100, 8),
	      "the tag takes the next message to it (flags %#x, wr_id %llu)",
	      w.flags, (unsigned long long)w.wr_id);
	/* scribble() wants no receive WQE left */
	w = sent_then(eager(0, 0x7d, 0, 16, 9));
	check(w.wr_id == 44 && !w.flags,
	      "and the next with no tag posted is unexpected (wr_id %llu)",
	      (unsigned long long)w.wr_id);
	unexp++;
}

/*
 * Every slot of the table POSTED with tag 0x5000 and garbage: too many
 * SGEs, then a key that is nobody's.  The engine copies each out and
 * checks it like a receive WQE: the message fails on both ends, the QP
 * pair goes to the error state, and the kernel goes on.
 */
static void scribble(void)
{
	struct vhca_srq *v = container_of(srq, struct vhca_srq, vsrq.srq);
	struct vhca_tm_hdr *h = (struct vhca_tm_hdr *)v->tm.hdr;
	struct vhca_tm_tag *t;
	struct twc w;
	uint32_t i;

	if (!new_pair())
		return;

	h->synced = h->unexpected;
	for (i = 0; i < v->tm_ntags; i++) {
		t = vhca_mring_slot(&v->tm, i);
		memset(t, 0xa5, sizeof(*t));
		t->tag = 0x5000;
		t->mask = ~0ULL;
		t->num_sge = i ? 1 : 0xffff;
		/* slot 0 the first posted */
		t->state = i << VHCA_TM_SEQ_SHIFT | VHCA_TM_POSTED;
	}
	i = eager(0, 0x5000, 0, 64, 1);
	check(i == IBV_WC_REM_INV_REQ_ERR,
	      "a message to a tag of 65535 SGEs fails at the sender, REM_INV_REQ_ERR (%d)",
	      (int)i);
	w = spoll(2000);
	check(w.status == IBV_WC_LOC_QP_OP_ERR,
	      "and at the receiver, LOC_QP_OP_ERR (status %d, opcode %d, wr_id %#llx)",
	      w.status, w.opcode, (unsigned long long)w.wr_id);
	drain_both();
}

/*
 * On the wire: the receiving end ("serve") has the TM SRQ and checks what
 * lands; the sending end ("send"), a plain RC QP on any device (rxe
 * too), runs what the receiving end asks for over TCP, one command at a
 * time, and answers with its SEND's status.
 */
#define WIRE_PORT	"18560"
#define HOLD_TAGS	8	/* tags and receive WQEs kept posted in a hold */

/*
 * CMD_QUIET: an eager message whose send the sender does not report;
 * CMD_LONG: one the receiver has no room for, which must fail;
 * CMD_RNDV_BAD: a rendezvous whose RVH names a key the sender refuses,
 * which must bring no FIN; CMD_RNDV_NORECV: a rendezvous with no receive
 * posted for its FIN, and no wait for one; CMD_AGAIN: a new QP, connected
 * to the receiver's new one; CMD_EAGER_IMM: an eager message with
 * immediate data, the bits of its app_ctx flipped
 */
enum { CMD_EAGER, CMD_NO_TAG, CMD_RNDV, CMD_QUIET, CMD_LONG, CMD_RNDV_BAD,
       CMD_RNDV_NORECV, CMD_AGAIN, CMD_EAGER_IMM, CMD_END };

struct cmd {
	uint32_t op, ctx, n, seed;
	uint64_t tag;
};

/* What each end tells the other of its QP. */
struct wire_qp {
	uint32_t qpn;
	union ibv_gid gid;
};

static int wire_fd = -1;
static int wire_sgid;		/* the GID index both ends connect from */

/* Trade QPs with the peer and connect @q to its; 0 or an errno. */
static int wire_connect(struct ibv_qp *q, int sgid_index)
{
	struct wire_qp me = { .qpn = q->qp_num }, peer;
	struct qp_path p = { .sgid_index = sgid_index };

	if (ibv_query_gid(ctx, 1, sgid_index, &me.gid) ||
	    tcp_xfer(wire_fd, &me, sizeof(me), true) ||
	    tcp_xfer(wire_fd, &peer, sizeof(peer), false))
		return EIO;
	p.dest = peer.qpn;
	p.gid = &peer.gid;
	return qp_rts_path(q, &p);
}

/* A rendezvous's SEND, from client slot 1 (cpost()), and its FIN's receive. */
enum { RNDV_WR = 100 + 1, FIN_WR = 88 };

/*
 * The end of a rendezvous whose key is refused, its SEND (RNDV_WR)
 * posted: no FIN comes, so the receive posted for one (FIN_WR) never
 * succeeds.  rxe's responder takes its QP to the error state when it NAKs
 * the receiver's READ, which may come before or after the ACK of the SEND:
 * then the SEND completes SUCCESS or WR_FLUSH_ERR, before or after the
 * receive's flush.  0, or -3 for any other completion or none of the SEND.
 */
static int32_t rndv_bad_end(void)
{
	bool sent = false;
	struct ibv_wc wc;

	for (wc = next_wc_within(ccq, 5000); wc.status != NO_WC;
	     wc = next_wc_within(ccq, sent ? 300 : 5000)) {
		if (wc.wr_id == RNDV_WR && !sent &&
		    (wc.status == IBV_WC_SUCCESS ||
		     wc.status == IBV_WC_WR_FLUSH_ERR))
			sent = true;
		else if (wc.wr_id != FIN_WR || wc.status != IBV_WC_WR_FLUSH_ERR)
			break;
	}
	if (sent && wc.status == NO_WC)
		return 0;
	if (wc.status == NO_WC)
		printf("# no completion of the SEND\n");
	else
		printf("# a completion not expected: wr_id %llu status %d\n",
		       (unsigned long long)wc.wr_id, wc.status);
	return -3;
}

/*
 * The end of a rendezvous whose SEND (RNDV_WR) is posted: the SEND's
 * status, or -3 if the FIN received back (FIN_WR) is wrong or missing.
 * The FIN may complete before the SEND does, if the SEND's ACK is late.
 */
static int32_t rndv_end(void)
{
	int32_t st = -3;
	bool fin = false;
	struct ibv_wc wc;
	int k;

	for (k = 0; k < 2; k++) {
		wc = next_wc(ccq);
		if (wc.status != NO_WC && wc.wr_id == RNDV_WR && st == -3)
			st = wc.status;
		else if (wc.status == IBV_WC_SUCCESS && wc.wr_id == FIN_WR &&
			 !fin)
			fin = wc.opcode == IBV_WC_RECV && wc.byte_len == 32 &&
			      fin_of(cslot(20), cslot(1));
	}
	return st ? st : fin ? 0 : -3;
}

/* The sender's part of @c: the SEND's status, or for a rendezvous -3 if
 * the FIN that must follow is wrong or missing, or came when none must. */
static int32_t wire_run(const struct cmd *c)
{
	struct ibv_recv_wr rw = { .wr_id = FIN_WR }, *rbad;
	struct ibv_sge rsge = { (uintptr_t)cslot(20), 64, cmr->lkey };
	struct ibv_rvh rvh;

	if (c->op == CMD_EAGER || c->op == CMD_QUIET || c->op == CMD_LONG)
		return eager(0, c->tag, c->ctx, c->n, c->seed);
	if (c->op == CMD_NO_TAG) {
		tmh(cslot(0), IBV_TMH_NO_TAG, c->tag, c->ctx);
		fill_seed(cslot(0) + sizeof(struct ibv_tmh), c->n, c->seed);
		return csend(0, sizeof(struct ibv_tmh) + c->n);
	}
	if (c->op == CMD_EAGER_IMM) {
		tmh(cslot(0), IBV_TMH_EAGER, c->tag, c->ctx);
		fill_seed(cslot(0) + sizeof(struct ibv_tmh), c->n, c->seed);
		return csend_imm(0, sizeof(struct ibv_tmh) + c->n, true, ~c->ctx);
	}
	if (c->op == CMD_AGAIN) {
		cqp = rc_qp(ccq, NULL, IBV_QPT_RC);
		return cqp ? wire_connect(cqp, wire_sgid) : EIO;
	}
	/* a rendezvous of @n bytes at slot 10, with 16 bytes of our own */
	rw.sg_list = &rsge;
	rw.num_sge = 1;
	if (c->op != CMD_RNDV_NORECV && ibv_post_recv(cqp, &rw, &rbad))
		return -1;
	fill_seed(cslot(10), c->n, c->seed);
	tmh(cslot(1), IBV_TMH_RNDV, c->tag, c->ctx);
	rvh = (struct ibv_rvh){
		.va = htobe64((uintptr_t)cslot(10)),
		.rkey = htobe32(cmr->rkey ^ (c->op == CMD_RNDV_BAD ? 0x80 : 0)),
		.len = htobe32(c->n),
	};
	memcpy(cslot(1) + sizeof(struct ibv_tmh), &rvh, sizeof(rvh));
	fill_seed(cslot(1) + 32, 16, c->seed + 1);
	if (c->op == CMD_RNDV_NORECV)
		return csend(1, 48);
	if (cpost(1, 48, false, 0))
		return -1;
	return c->op == CMD_RNDV_BAD ? rndv_bad_end() : rndv_end();
}

/* tm DEVICE send SGID_INDEX SERVER */
static int wire_send(int sgid_index, const char *server)
{
	struct cmd c = { .op = CMD_EAGER };
	int32_t st;
	int e;

	wire_sgid = sgid_index;
	wire_fd = tcp_connect(server, WIRE_PORT, 60000);
	cqp = wire_fd >= 0 ? rc_qp(ccq, NULL, IBV_QPT_RC) : NULL;
	e = cqp ? wire_connect(cqp, sgid_index) : EIO;
	check(!e, "an RC QP connected to the receiver's at %s (%s)", server,
	      strerror(e));
	while (!e && !tcp_xfer(wire_fd, &c, sizeof(c), false) &&
	       c.op != CMD_END) {
		st = wire_run(&c);
		if (c.op == CMD_LONG)
			check(st == IBV_WC_REM_INV_REQ_ERR,
			      "an eager message of %u bytes the receiver has no room for: REM_INV_REQ_ERR (%d)",
			      c.n, st);
		else if (c.op != CMD_QUIET)
			check(!st, "%s of tag %#llx, %u bytes: sent (%d)",
		      c.op == CMD_EAGER ? "an eager message" :
		      c.op == CMD_EAGER_IMM ? "an eager message with immediate data" :
		      c.op == CMD_NO_TAG ? "a message with no tag" :
		      c.op == CMD_AGAIN ? "a new QP, connected to the receiver's new one, before a message" :
		      c.op == CMD_RNDV_BAD ? "a rendezvous naming a key refused, and no FIN back" :
		      c.op == CMD_RNDV_NORECV ? "a rendezvous, no receive posted for its FIN" :
		      "a rendezvous, and its FIN received back: its TMH and RVH",
		      (unsigned long long)c.tag, c.n, st);
		if (tcp_xfer(wire_fd, &st, sizeof(st), true))
			break;
	}
	check(!e && c.op == CMD_END, "the receiver said it is done");
	return tap_done();
}

/* The receiver: ask the sender for @c; its SEND's status comes later. */
static void ask(uint32_t op, uint64_t tag, uint32_t ctx, uint32_t n,
		uint32_t seed)
{
	struct cmd c = { .op = op, .tag = tag, .ctx = ctx, .n = n,
			 .seed = seed };

	if (tcp_xfer(wire_fd, &c, sizeof(c), true))
		check(0, "the sender is gone");
}

/* The sender's status of what was asked last. */
static int32_t told(void)
{
	int32_t st = -1;

	if (tcp_xfer(wire_fd, &st, sizeof(st), false))
		return -1;
	return st;
}

/* The receiver's own SEND or READ of @n bytes on @sqp; its status. */
static int spost(enum ibv_wr_opcode o, char *b, uint32_t n, uint64_t va,
		 uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)b, n, smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 99, .sg_list = &sge, .num_sge = 1, .opcode = o,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = va, .rkey = rkey },
	}, *bad;
	struct twc w;

	if (ibv_post_send(sqp, &wr, &bad))
		return -1;
	w = spoll(5000);
	return w.wr_id == 99 ? w.status : -2;
}

/* The receiving end's eager messages, matched and placed after their
 * TMH, across packets of a 1024-byte MTU */
static void wire_eagers(void)
{
	static const uint32_t len[] = { 1, 1008, 4000, LEN };
	struct twc w;
	int k;

	for (k = 0; k < 4; k++)
		check(add(k, 0x10 + k, ~0ULL, k, NULL, NULL),
		      "ADD tag %#x (%u bytes)", 0x10 + k, LEN);
	for (k = 3; k >= 0; k--) {
		ask(CMD_EAGER, 0x10 + k, 0x100 + k, len[k], 40 + k);
		w = spoll(5000);
		check(told() == IBV_WC_SUCCESS && w.status == IBV_WC_SUCCESS &&
		      w.opcode == IBV_WC_TM_RECV &&
		      w.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID) &&
		      w.wr_id == (uint64_t)k && w.tag == 0x10u + k &&
		      w.priv == 0x100u + k && w.byte_len == len[k] &&
		      filled_seed(sslot(k), len[k], 40 + k),
		      "an eager message of %u bytes from the wire: TM_RECV, MATCH and DATA_VALID, its tag's, every byte after the TMH (status %d flags %#x wr_id %llu %u bytes)",
		      len[k], w.status, w.flags, (unsigned long long)w.wr_id,
		      w.byte_len);
	}
	check(add(9, 0x14, ~0ULL, 9, NULL, NULL), "ADD tag 0x14");
	ask(CMD_EAGER_IMM, 0x14, 0x104, 2000, 44);
	w = spoll(5000);
	check(told() == IBV_WC_SUCCESS && w.status == IBV_WC_SUCCESS &&
	      w.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID |
			  IBV_WC_WITH_IMM) &&
	      w.imm == ~0x104u && w.wr_id == 9 && w.tag == 0x14 &&
	      w.priv == 0x104 && w.byte_len == 2000 &&
	      filled_seed(sslot(9), 2000, 44),
	      "one with immediate data: MATCH, DATA_VALID and WITH_IMM, the immediate beside the tag and app_ctx (flags %#x imm %#x priv %#x)",
	      w.flags, w.imm, w.priv);
}

/* Unexpected ones, the phase sync, and one with no tag */
static void wire_unexpected(void)
{
	unsigned int flags = 0;
	struct twc w;
	int k;

	for (k = 0; k < 3; k++)
		srecv(20 + k, 20 + k);
	ask(CMD_EAGER, 0x99, 0, 100, 50);
	w = spoll(5000);
	check(told() == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV &&
	      !w.flags && w.wr_id == 20 && w.byte_len == 116 &&
	      sslot(20)[0] == IBV_TMH_EAGER &&
	      filled_seed(sslot(20) + sizeof(struct ibv_tmh), 100, 50),
	      "a message no tag takes: TM_RECV, no flags, whole in a receive WQE (wr_id %llu, flags %#x, %u bytes)",
	      (unsigned long long)w.wr_id, w.flags, w.byte_len);
	k = add(4, 0x20, ~0ULL, 4, NULL, &flags);
	check(k && (flags & IBV_WC_TM_SYNC_REQ),
	      "an ADD before software synced it: TM_SYNC_REQ (flags %#x)",
	      flags);
	ask(CMD_EAGER, 0x20, 0, 64, 51);
	w = spoll(5000);
	check(told() == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV &&
	      !w.flags && w.wr_id == 21,
	      "out of phase, a message its tag would match is unexpected too (wr_id %llu)",
	      (unsigned long long)w.wr_id);
	unexp = 2;
	check(sync_(), "SYNC with the 2 handled");
	ask(CMD_EAGER, 0x20, 0, 64, 52);
	w = spoll(5000);
	check(told() == IBV_WC_SUCCESS &&
	      w.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID) &&
	      w.wr_id == 4 && filled_seed(sslot(4), 64, 52),
	      "in phase again, the tag takes the next one (wr_id %llu)",
	      (unsigned long long)w.wr_id);
	ask(CMD_NO_TAG, 0x20, 0, 40, 53);
	w = spoll(5000);
	check(told() == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_NO_TAG &&
	      w.wr_id == 22 && w.byte_len == 56 &&
	      filled_seed(sslot(22) + sizeof(struct ibv_tmh), 40, 53),
	      "TMH opcode NO_TAG: TM_NO_TAG, whole in a receive WQE (opcode %d, %u bytes)",
	      w.opcode, w.byte_len);
}

/*
 * Rendezvous from the wire.  A tag takes one (MATCH); the receiving QP
 * reads its data with an RDMA READ of its own and sends the FIN, then the
 * tag completes DATA_VALID.  One of more than the tag's buffer is left to
 * software: its headers in the tag's buffer, TM_RNDV_INCOMPLETE; the
 * process reads the data and sends the FIN itself, on the same QP.  Last,
 * the process's own READs on that QP while the engine reads one: each
 * completes in order, and the tag too.
 */
static void wire_rndv(void)
{
	struct ibv_sge sge[4];
	struct ibv_send_wr wr[4], *bad;
	struct ibv_rvh rvh;
	struct twc w;
	int st, k, reads = 0, in_order = 1, data = 0;

	check(add(5, 0x30, ~0ULL, 5, NULL, NULL), "ADD tag 0x30");
	ask(CMD_RNDV, 0x30, 0x4321, 6000, 60);
	w = spoll(5000);
	check(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV &&
	      w.flags == IBV_WC_TM_MATCH && w.wr_id == 5 && w.tag == 0x30 &&
	      w.priv == 0x4321,
	      "a rendezvous from the wire: the tag takes it, TM_RECV, MATCH alone, tag and app_ctx (status %d flags %#x wr_id %llu)",
	      w.status, w.flags, (unsigned long long)w.wr_id);
	w = spoll(5000);
	check(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_TM_RECV &&
	      w.flags == IBV_WC_TM_DATA_VALID && w.wr_id == 5 &&
	      w.byte_len == 6000 && filled_seed(sslot(5), 6000, 60),
	      "then TM_RECV, DATA_VALID: the receiving QP read the 6000 bytes into the tag's buffer, every one (status %d flags %#x %u bytes)",
	      w.status, w.flags, w.byte_len);
	check(told() == 0, "the sender got the FIN: its TMH and RVH");
	check(qp_state_now(sqp) == IBV_QPS_RTS,
	      "the receiving QP is still in RTS (%d)", qp_state_now(sqp));

	check(add(6, 0x31, ~0ULL, 6, NULL, NULL), "ADD tag 0x31");
	ask(CMD_RNDV, 0x31, 0x4322, LEN + 1, 62);
	w = spoll(5000);
	memcpy(&rvh, sslot(6) + sizeof(struct ibv_tmh), sizeof(rvh));
	check(w.status == IBV_WC_TM_RNDV_INCOMPLETE &&
	      w.opcode == IBV_WC_TM_RECV && w.flags == IBV_WC_TM_MATCH &&
	      w.wr_id == 6 && w.tag == 0x31 && w.priv == 0x4322 &&
	      w.byte_len == 48 && sslot(6)[0] == IBV_TMH_RNDV &&
	      be32toh(rvh.len) == LEN + 1 &&
	      filled_seed(sslot(6) + 32, 16, 63),
	      "a rendezvous of more than the tag's buffer: TM_RNDV_INCOMPLETE, MATCH, tag and app_ctx, its 48 bytes (TMH, RVH, the sender's own) in the tag's buffer (status %d flags %#x %u bytes)",
	      w.status, w.flags, w.byte_len);
	st = spost(IBV_WR_RDMA_READ, sslot(8), LEN + 1, be64toh(rvh.va),
		   be32toh(rvh.rkey));
	check(st == IBV_WC_SUCCESS && filled_seed(sslot(8), LEN + 1, 62),
	      "software reads the %u bytes the RVH names, every one (%d)",
	      LEN + 1, st);
	memcpy(sslot(10), sslot(6), 32);
	sslot(10)[0] = IBV_TMH_FIN;
	st = spost(IBV_WR_SEND, sslot(10), 32, 0, 0);
	check(st == IBV_WC_SUCCESS, "and sends the FIN: TMH and RVH (%d)", st);
	check(told() == 0, "the sender got that FIN");

	/* the sender's buffer is at the same place each time (wire_run()) */
	check(add(7, 0x32, ~0ULL, 7, NULL, NULL), "ADD tag 0x32");
	ask(CMD_RNDV, 0x32, 0x4323, LEN, 64);
	w = spoll(5000);
	check(w.flags == IBV_WC_TM_MATCH && w.wr_id == 7,
	      "a rendezvous of %u bytes: matched (flags %#x)", LEN, w.flags);
	for (k = 0; k < 4; k++) {
		sge[k] = (struct ibv_sge){ (uintptr_t)sslot(40 + k), 1000,
					   smr->lkey };
		wr[k] = (struct ibv_send_wr){
			.wr_id = 100 + k, .sg_list = &sge[k], .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = be64toh(rvh.va),
				     .rkey = be32toh(rvh.rkey) },
			.next = k < 3 ? &wr[k + 1] : NULL,
		};
	}
	check(!ibv_post_send(sqp, wr, &bad),
	      "while it is read, the process posts 4 READs of its own on the QP");
	for (k = 0; k < 5; k++) {
		w = spoll(5000);
		if (w.wr_id == 7 && w.flags == IBV_WC_TM_DATA_VALID &&
		    w.status == IBV_WC_SUCCESS && w.byte_len == LEN)
			data = filled_seed(sslot(7), LEN, 64);
		else if (w.wr_id == 100u + reads && !w.status &&
			 filled_seed(sslot(40 + reads), 1000, 64))
			reads++;
		else
			in_order = 0;
	}
	check(data, "the tag completes DATA_VALID, its %u bytes every one",
	      LEN);
	check(reads == 4 && in_order,
	      "and the 4 READs complete in order, every byte (%d of 4)", reads);
	check(told() == 0, "the sender got the FIN");
}

/*
 * An unexpected message its receive WQE is too small for fails at both
 * ends, and is not one software received: synced with the count it has,
 * the SRQ is in phase.  Last: the QPs are in the error state after it.
 */
static void wire_lost(void)
{
	struct twc w;
	int32_t st;

	check(!srecv_n(23, 23, 32), "a receive WQE of 32 bytes on the SRQ");
	ask(CMD_LONG, 0x98, 0, 100, 54);
	w = spoll(5000);
	st = told();
	check(st == IBV_WC_REM_INV_REQ_ERR && w.wr_id == 23 &&
	      w.status == IBV_WC_LOC_LEN_ERR,
	      "an unexpected message of 116 bytes into it fails: LOC_LEN_ERR here, REM_INV_REQ_ERR at the sender (%d, %d, wr_id %llu)",
	      w.status, st, (unsigned long long)w.wr_id);
	while (spoll(200).status != NO_WC)
		;
	check(sync_(),
	      "SYNC with the %u software received: in phase, no TM_SYNC_REQ",
	      unexp);
}

/* A new pair of QPs, the receiver's on the TM SRQ; @n says which. */
static bool wire_again(const char *n)
{
	int e;

	ask(CMD_AGAIN, 0, 0, 0, 0);
	sqp = rc_qp(ibv_cq_ex_to_cq(scq), srq, IBV_QPT_RC);
	e = sqp ? wire_connect(sqp, wire_sgid) : EIO;
	e = e ? e : told() ? EIO : 0;
	check(!e, "a %s RC QP on the TM SRQ, connected to the sender's %s (%s)",
	      n, n, strerror(e));
	return !e;
}

/*
 * On a new pair of QPs (wire_lost() left the first in the error state), a
 * rendezvous whose READ is answered while a SEND of the process's, sent
 * before it, waits for a receive at the sender (RNR NAKs, for ever): the
 * tag does not complete before that SEND, and when the process moves the
 * QP to the error state, both are flushed.
 */
static void wire_flushed(void)
{
	struct ibv_sge sge = { (uintptr_t)sslot(12), 64, smr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 120, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	int sent = 0, tag = 0, other = 0, k;
	struct twc w;

	if (!wire_again("second"))
		return;
	check(!ibv_post_send(sqp, &wr, &bad),
	      "a SEND to the sender, which has no receive posted");
	check(add(12, 0x34, ~0ULL, 12, NULL, NULL), "ADD tag 0x34");
	ask(CMD_RNDV_NORECV, 0x34, 0x4325, 6000, 68);
	w = spoll(5000);
	check(told() == 0 && w.flags == IBV_WC_TM_MATCH && w.wr_id == 12,
	      "a rendezvous behind it: matched (flags %#x wr_id %llu)",
	      w.flags, (unsigned long long)w.wr_id);
	w = spoll(500);
	check(w.status == NO_WC,
	      "its tag does not complete before the SEND before it (status %d wr_id %llu)",
	      w.status, (unsigned long long)w.wr_id);
	check(!ibv_modify_qp(sqp, &a, IBV_QP_STATE),
	      "the process moves the QP to the error state");
	for (k = 0; k < 2; k++) {
		w = spoll(2000);
		if (w.wr_id == 120 && w.status == IBV_WC_WR_FLUSH_ERR)
			sent++;
		else if (w.wr_id == 12 && w.status == IBV_WC_WR_FLUSH_ERR)
			tag++;
		else
			other++;
	}
	check(sent == 1 && tag == 1 && !other,
	      "the SEND and the tag complete WR_FLUSH_ERR (%d, %d, %d other)",
	      sent, tag, other);
}

/*
 * On a new pair of QPs, a rendezvous whose RVH names a key the sender
 * refuses: the tag takes it, the sender NAKs the receiving QP's READ, the
 * tag completes REM_ACCESS_ERR as the READ would, no FIN goes, and the
 * receiving QP is in the error state.
 */
static void wire_refused(void)
{
	struct twc w;

	if (!wire_again("third"))
		return;
	check(add(11, 0x33, ~0ULL, 11, NULL, NULL), "ADD tag 0x33");
	ask(CMD_RNDV_BAD, 0x33, 0x4324, 6000, 66);
	w = spoll(5000);
	check(w.status == IBV_WC_SUCCESS && w.flags == IBV_WC_TM_MATCH &&
	      w.wr_id == 11,
	      "a rendezvous naming a key the sender refuses: matched (status %d flags %#x)",
	      w.status, w.flags);
	w = spoll(5000);
	check(w.status == IBV_WC_REM_ACCESS_ERR && w.wr_id == 11,
	      "its READ is NAKed: the tag completes REM_ACCESS_ERR, as the READ would (status %d wr_id %llu)",
	      w.status, (unsigned long long)w.wr_id);
	check(told() == 0, "no FIN reached the sender");
	check(qp_state(sqp) == IBV_QPS_ERR,
	      "the receiving QP is in the error state (%d)", qp_state(sqp));
}

static long long ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* What the hold's completions were. */
struct hold {
	unsigned int sent;	/* eager messages the sender was told went */
	unsigned int theirs;	/* completions of such messages */
	unsigned int foreign;	/* completions of anything else */
	unsigned int bad;	/* completions no posted buffer could give */
};

/*
 * A completion of the hold: put back the tag or receive WQE it used, sync
 * an unexpected message, and count it.  The sender's messages are 256
 * bytes for tags 0x40.., app_ctx 0; anything else is the fuzzer's.  A
 * completion must name a tag or receive WQE the hold posted and fit its
 * buffer, whatever came.
 */
static void hold_one(const struct twc *w, struct hold *h)
{
	uint64_t k = w->wr_id;
	bool tag = k >= 200 && k < 200 + HOLD_TAGS;
	bool wqe = k >= 300 && k < 300 + HOLD_TAGS;

	if (w->opcode == IBV_WC_TM_ADD || w->opcode == IBV_WC_TM_DEL ||
	    w->opcode == IBV_WC_TM_SYNC)
		return;
	if (tag)
		add(k, 0x40 + k - 200, ~0ULL, 40 + k - 200, NULL, NULL);
	if (wqe)
		srecv(48 + k - 300, k);
	if (w->status == IBV_WC_SUCCESS && w->opcode == IBV_WC_TM_RECV &&
	    !w->flags) {
		unexp++;
		sync_();
	}
	if ((!tag && !wqe) || (w->status == IBV_WC_SUCCESS &&
			       w->byte_len > LEN)) {
		h->bad++;
		printf("# a completion no buffer posted gives: wr_id %llu status %d opcode %d %u bytes\n",
		       (unsigned long long)k, w->status, w->opcode,
		       w->byte_len);
	} else if (tag && w->status == IBV_WC_SUCCESS &&
		   w->flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID) &&
		   w->tag == 0x40 + k - 200 && !w->priv && w->byte_len == 256) {
		h->theirs++;
	} else {
		h->foreign++;
	}
}

/*
 * tm DEVICE serve SGID_INDEX HOLD_S [STOP_FILE]: instead of the checks,
 * eager messages from the sender for HOLD_S seconds, or until STOP_FILE
 * exists, with HOLD_TAGS tags and receive WQEs kept posted, for a fuzzer
 * on the wire to learn the QP from and send its own to
 * (tests/guest/fuzz-wire.sh): TMHs of every opcode, any tag and RVH, at
 * any length, at the PSN the QP expects.  Whatever arrives is completed
 * from a buffer the hold posted, and the fuzzer's must show: completions
 * of its messages, or a connection it broke.  (A message of the fuzzer's
 * at the PSN the sender's next one has takes that one's place: the
 * responder answers the sender's as a duplicate.  So the sender's are
 * not all delivered; that is RC's answer to a spoofed peer.)
 */
static void wire_hold(int secs, const char *stop)
{
	long long end = ms_now() + secs * 1000LL;
	struct hold h = {};
	int32_t st = 0;
	struct twc w;
	unsigned int k;

	for (k = 0; k < HOLD_TAGS; k++) {
		add(200 + k, 0x40 + k, ~0ULL, 40 + k, NULL, NULL);
		srecv(48 + k, 300 + k);
	}
	while (ms_now() < end && (!stop || access(stop, F_OK))) {
		if (!st) {
			ask(CMD_QUIET, 0x40 + h.sent % HOLD_TAGS, 0, 256,
			    h.sent);
			st = told();
			h.sent += !st;
		}
		for (w = spoll(st ? 100 : 1); w.status != NO_WC; w = spoll(1))
			hold_one(&w, &h);
	}
	/* the last ones in flight */
	for (w = spoll(1000); w.status != NO_WC; w = spoll(200))
		hold_one(&w, &h);
	check(!h.bad,
	      "held %d s at most: %u completions of the sender's %u eager messages, %u of others; %u from no buffer posted",
	      secs, h.theirs, h.sent, h.foreign, h.bad);
	check(h.foreign || st,
	      "a fuzzer's messages reached the TM SRQ (%u), or broke the connection (the sender's status %d)",
	      h.foreign, st);
}

/* tm DEVICE serve SGID_INDEX [HOLD_S [STOP_FILE]] */
static int wire_serve(int sgid_index, int hold, const char *stop)
{
	int e;

	wire_sgid = sgid_index;
	wire_fd = tcp_connect(NULL, WIRE_PORT, 0);
	srq = wire_fd >= 0 ? tm_srq(16, 16) : NULL;
	sqp = srq ? rc_qp(ibv_cq_ex_to_cq(scq), srq, IBV_QPT_RC) : NULL;
	e = sqp ? wire_connect(sqp, sgid_index) : EIO;
	check(!e, "an RC QP on a TM SRQ connected to the sender's (%s)",
	      strerror(e));
	if (!e && hold)
		wire_hold(hold, stop);
	if (!e && !hold) {
		wire_eagers();
		wire_unexpected();
		wire_rndv();
		wire_lost();
		wire_flushed();
		wire_refused();
	}
	ask(CMD_END, 0, 0, 0, 0);
	return tap_done();
}

int main(int argc, char **argv)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS |
					IBV_WC_EX_WITH_TM_INFO,
	};
	const char *mode = argc > 2 ? argv[2] : "";
	bool sender = !strcmp(mode, "send");

	if (argc != 2 && (argc < 4 || argc > 6 || strcmp(mode, "serve")) &&
	    (argc != 5 || !sender)) {
		fprintf(stderr, "usage: tm DEVICE [serve SGID_INDEX [HOLD_S [STOP_FILE]] | send SGID_INDEX SERVER]\n");
		return 2;
	}
	ctx = open_dev(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	ccq = pd ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	/* a sender may be any device's: it needs no tag-matching info */
	scq = ccq && !sender ? ibv_create_cq_ex(ctx, &ca) : NULL;
	cbuf = calloc(NBUF, LEN);
	sbuf = calloc(NBUF, LEN);
	cmr = pd && cbuf ? ibv_reg_mr(pd, cbuf, NBUF * LEN,
				      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_READ) : NULL;
	smr = pd && sbuf ? ibv_reg_mr(pd, sbuf, NBUF * LEN,
				      IBV_ACCESS_LOCAL_WRITE) : NULL;
	check((scq || sender) && cmr && smr && !ibv_query_gid(ctx, 1, 0, &gid),
	      "context, CQs%s, memory, GID 0 of %s",
	      sender ? "" : " with tag-matching info", argv[1]);
	if ((!scq && !sender) || !cmr || !smr)
		return tap_done();
	if (sender)
		return wire_send(atoi(argv[3]), argv[4]);
	if (argc >= 4)
		return wire_serve(atoi(argv[3]), argc >= 5 ? atoi(argv[4]) : 0,
				  argc == 6 ? argv[5] : NULL);
	caps();
	srq = tm_srq(64, 64);
	check(srq != NULL, "a TM SRQ of 64 tags on the extended CQ (%s)",
	      srq ? "made" : strerror(errno));
	if (!srq)
		return tap_done();
	cqp = rc_qp(ccq, NULL, IBV_QPT_RC);
	sqp = rc_qp(ibv_cq_ex_to_cq(scq), srq, IBV_QPT_RC);
	check(cqp && sqp && !qp_rts_to(cqp, sqp->qp_num, &gid) &&
	      !qp_rts_to(sqp, cqp->qp_num, &gid),
	      "an RC client, and an RC server on the TM SRQ, connected");
	if (!cqp || !sqp)
		return tap_done();
	refused();
	eagers();
	unexpected();
	race();
	full();
	events();
	rndv();
	lost();
	scribble();
	check(sqp && cqp && ibv_destroy_qp(sqp) == 0 &&
	      ibv_destroy_qp(cqp) == 0 && ibv_destroy_srq(srq) == 0,
	      "QPs and the TM SRQ destroyed");
	return tap_done();
}
