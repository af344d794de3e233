// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * datacheck: every byte of every message checked, on any device pair.
 *
 *   datacheck -d DEV [-g GIDX] [-t rc|uc|ud|xrc] [-o OP,...] [-n COUNT]
 *             [-s MAXSIZE] [-r DEPTH] [-b] [-R] [-w] [-M] [-X] [-H FILE]
 *             [-T TIMEOUT] [-P] [-S] [-p PORT] [SERVER]
 *
 * Without SERVER it waits on TCP PORT (18520) for a client; the client
 * says what to run, both create a QP on their device and exchange its
 * address over the socket, like rdma-core's ping-pongs.  The client is the
 * active end of every OP (default: all the QP type can carry):
 *
 *   send, send_imm      the client SENDs, the server receives and checks
 *   write, write_imm    the client WRITEs into the server's buffer, which
 *                       the server checks after the client's completions
 *                       (write_imm: on its own receive completion)
 *   read                the client READs the server's buffer and checks
 *   awrite              (RC, -w) the client ATOMIC WRITEs 8 bytes to the
 *                       start of each of the server's slots, which the
 *                       server checks as it does a WRITE's
 *   fadd                (RC, only if asked) the client FETCH_AND_ADDs to
 *                       the word at the start of each of the server's
 *                       slots what turns the server's poison into the
 *                       message's 8 bytes, which the server checks as
 *                       it does a WRITE's; the client checks that the
 *                       original value it got back is that poison
 *   cswap               (RC, only if asked) as fadd, by COMPARE_AND_SWAP
 *                       of the poison for the message's 8 bytes; an
 *                       unsignaled CAS whose compare is one bit off the
 *                       poison goes first and must swap nothing
 *
 * Message i of an OP has a length from 1 to MAXSIZE (the extremes, the
 * path MTU and one byte past it among them) and byte k of it is a function
 * of (the QPN of the end that wrote it, OP, i, k).  Both ends leave
 * scatter lists out of order in memory and the sender inlines what fits,
 * so a byte the engine puts in the wrong place cannot pass.  Before a
 * buffer is written, every byte of it is set to the complement of what is
 * expected: a byte nobody wrote fails too, and so does one written past
 * the message's end.  Messages go in batches of DEPTH (16), each end
 * waiting for the other's word on the socket, so the receiver never runs
 * out of receive WQEs (no RNR, no drop on UC or UD).  On the first wrong
 * byte it prints the message, the offset, what it got and what it wanted,
 * and both ends exit 1.
 *
 * -R (client): the server posts each batch's receive WQEs RNR_MS after it
 * said it is ready, so SENDs that arrive first meet an empty receive
 * queue: RC's responder answers them with RNR NAKs, its requester tries
 * again until they land (rnr_retry 7).
 *
 * -w (client): it posts through the extended send API, ibv_wr_post(3):
 * a QP from ibv_create_qp_ex() with the send operations it runs, each
 * batch one ibv_wr_start() .. ibv_wr_complete(), the data set by
 * ibv_wr_set_sge(), _sge_list(), _inline_data() or _inline_data_list()
 * by the same rules as the SGEs and inlining above.
 *
 * -M (client; RC and UC): each end's buffer is reached through a type 2
 * memory window instead of its MR's rkey.  Each end binds the window over
 * its whole buffer once its QP is up (IBV_WR_BIND_MW, or ibv_wr_bind_mw()
 * with -w) and gives the peer the window's key, so every WRITE and READ
 * goes through it.
 *
 * -H FILE (client): once both QPs are up, it prints its QPN and holds the
 * QP idle until FILE exists (HOLD_MS at most), then runs as without -H:
 * what a test does to an idle QP meanwhile (a CNP, tests/guest/twohost/
 * ecn.sh) must leave it carrying every byte.
 *
 * -b (client): a message of BIG_PKTS packets or more that starts a batch,
 * on an idle QP, must not be sent inside ibv_post_send(): the doorbell's
 * system call has to return in less than half the time the message takes
 * to complete, or datacheck fails.  A device whose engine runs in the
 * poster's context (vhca) sends the rest from its own work.
 *
 * -T TIMEOUT (each end its own; RC): the local ACK timeout, 4.096 us <<
 * TIMEOUT (default 14, 67 ms), for a path that goes dark for a while (a
 * bond failing over): seven retries must outlast the gap.
 *
 * -P (each end its own): the buffer is an ODP MR (IBV_ACCESS_ON_DEMAND),
 * and its pages are dropped (MADV_DONTNEED) before each batch fills it:
 * the device meets pages it has not mapped in every batch, on whichever
 * side of the wire the end is.
 *
 * -S (each end its own): its receive WQEs go to a shared receive queue
 * (ibv_post_srq_recv) that its QP takes them from.
 *
 * -t xrc: the client sends on an XRC_SEND QP, every WQE naming the
 * server's XRC SRQ; the server receives through an XRC_RECV QP of an XRC
 * domain of its own, into that SRQ, whose CQ gets its completions.  The
 * operations are RC's but ATOMIC WRITE; no memory windows.  The server
 * prints its SRQ's number.  -X (client): then one more SEND, naming an
 * SRQ the server does not have, which must complete with
 * IBV_WC_REM_ACCESS_ERR.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "lib/testlib.h"

#define BIG_PKTS 4096		/* what -b checks: far beyond one run's share */
#define RNR_MS 500		/* -R: how late the receives come */
#define QKEY 0x11111111
#define GRH 40			/* what a UD receive gets in front */
#define BIND_ID (~0ULL)		/* -M: the wr_id of the window's bind */
#define TIMEOUT_MS 20000	/* a completion or a word from the peer */
#define HOLD_MS 300000		/* -H: the test's steps on the idle QP */
#define SETTLE_MS 5000		/* a UC WRITE may land after its completion */
#define CONNECT_MS 60000	/* a server that boots a device first */

enum op {
	OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_AWRITE,
	OP_FADD, OP_CSWAP, OP_NR
};
static const char *const op_name[OP_NR] = {
	"send", "send_imm", "write", "write_imm", "read", "awrite", "fadd",
	"cswap",
};

/* What the client asks for and each end's QP, on the socket. */
struct wire_cfg {
	uint32_t type, ops, count, maxsize, depth, late_recv, window, bad_srq;
};

struct wire_qp {
	uint32_t qpn, psn, rkey, mtu, srqn;	/* srqn: XRC's */
	uint64_t addr;
	uint8_t gid[16];
};

/* one word a batch: ready, done, ok or bad */
enum { SAY_READY = 1, SAY_DONE, SAY_OK, SAY_BAD };

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_qp_ex *qpx;	/* -w */
static struct ibv_mr *mr;
static struct ibv_mw *mw;	/* -M */
static uint32_t window;		/* -M */
static struct ibv_ah *ah;
static uint8_t *buf;		/* depth slots of slot bytes */
static uint8_t *used;		/* view_walk()'s map of one slot */
static size_t slot;
static uint32_t depth = 16;	/* messages in flight per batch */

/* the buffer's bytes: depth slots, in whole pages */
static size_t buf_len(void)
{
	return (depth * slot + 4095) & ~4095ul;
}
static int bound;		/* -b */
static int odp;			/* -P */
static struct ibv_srq *srq;	/* -S, and an XRC server's */
static struct ibv_xrcd *xrcd;	/* an XRC server's */
static int use_srq;
static int wr_api;		/* -w */
static uint32_t ops_run;	/* 1 << OP_* */
static int bound_seen;		/* messages -b checked */
static uint32_t late_recv;	/* -R */
static int sock, type, gidx;
static uint8_t ack_timeout;	/* -T; 0: qp_rts_path()'s */
static uint32_t maxsize, count, mtu, max_inline;
static struct wire_qp me, peer;

static const char *type_name(void)
{
	return type == IBV_QPT_RC ? "rc" : type == IBV_QPT_UC ? "uc" :
	       type == IBV_QPT_UD ? "ud" : "xrc";
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "datacheck: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* byte @k of message @i of @op written by the end whose QPN is @qpn */
static uint8_t pattern(uint32_t qpn, int op, uint32_t i, size_t k)
{
	static uint64_t key, w;		/* one mix() per 8 bytes walked */
	static int valid;
	uint64_t x = ((uint64_t)qpn << 40) ^ ((uint64_t)op << 32) ^ i ^
		     ((uint64_t)(k >> 3) << 48);

	if (!valid || x != key) {
		valid = 1;
		key = x;
		w = mix(x);
	}
	return w >> ((k & 7) * 8);
}

/* the length of message @i: the extremes and the MTU's edges among them */
static uint32_t msg_len(uint32_t i)
{
	switch (i % 8) {
	case 0:
		return maxsize;
	case 1:
		return 1;
	case 2:
		return mtu < maxsize ? mtu : maxsize;
	case 3:
		return mtu + 1 < maxsize ? mtu + 1 : maxsize;
	default:
		return 1 + mix(i) % maxsize;
	}
}

/* @op is an atomic: it returns the word's original value */
static int fetches(int op)
{
	return op == OP_FADD || op == OP_CSWAP;
}

/* the length of message @i of @op: an atomic's is 8 bytes */
static uint32_t op_len(int op, uint32_t i)
{
	return op == OP_AWRITE || fetches(op) ? 8 : msg_len(i);
}

/*
 * The scatter list of slot @s for @cap bytes.  @flat: one piece at the
 * slot's start, as the target of a WRITE or the source of a READ sees it.
 * Otherwise three pieces cut at odd offsets and listed in an order other
 * than their order in memory (the last third first); UD's receive buffers
 * start with a piece of their own for the GRH.  Returns the entries filled.
 */
static int slot_sges(int s, uint32_t cap, int flat, int grh, struct ibv_sge *sge)
{
	uint8_t *base = buf + s * slot;
	uint32_t a, b, c, n = 0;

	if (grh) {
		sge[n++] = (struct ibv_sge){ (uintptr_t)base, GRH, mr->lkey };
		base += GRH;
	}
	if (flat) {
		sge[n++] = (struct ibv_sge){ (uintptr_t)base, cap, mr->lkey };
		return n;
	}
	a = cap / 3 | 1;
	a = a < cap ? a : cap;
	b = (cap - a) / 2;
	c = cap - a - b;
	/* in memory: [a][b][c]; listed: c, a, b */
	if (c)
		sge[n++] = (struct ibv_sge){ (uintptr_t)(base + a + b), c, mr->lkey };
	if (a)
		sge[n++] = (struct ibv_sge){ (uintptr_t)base, a, mr->lkey };
	if (b)
		sge[n++] = (struct ibv_sge){ (uintptr_t)(base + a), b, mr->lkey };
	return n;
}

/*
 * How slot @s holds message @i of @op written by the end whose QPN is @qpn:
 * @cap bytes of scatter list (@flat, @grh: as slot_sges()), the message in
 * its first msg_len(@i) bytes, the complement of the pattern after them
 * and in the rest of the slot, so that a byte nobody wrote, or one
 * written past the message's end, cannot look right.
 */
struct view {
	uint32_t qpn, i, cap, len;	/* len: op_len() */
	int op, flat, grh;
};

/* the byte @v wants at logical offset @k (past the scatter list: -1 - k) */
static uint8_t view_want(const struct view *v, long long k)
{
	if (k < 0)
		return pattern(v->qpn, v->op, v->i, -1 - k) ^ 0xff;
	return pattern(v->qpn, v->op, v->i, k) ^ (k < v->len ? 0 : 0xff);
}

/*
 * Walk slot @s as @v lays it out: with @fill, write what @v wants (with
 * @poison: the complement of the message's pattern throughout, what a
 * buffer holds before the message lands); otherwise compare, and return the
 * first wrong byte's logical offset (-1 - n: n bytes past the scatter
 * list) in *@at, or 0 for none.
 */
static int view_walk(int s, const struct view *v, int fill, int poison,
		     long long *at, uint8_t *got)
{
	struct ibv_sge sge[4];
	int n = slot_sges(s, v->cap, v->flat, v->grh, sge), j;
	uint8_t *p, *end = buf + (s + 1) * slot;
	long long k = 0;
	size_t q;

	memset(used, 0, slot);
	if (v->grh) {
		if (fill)
			memset((void *)(uintptr_t)sge[0].addr, 0x5a, GRH);
		memset(used, 1, GRH);
	}
	for (j = v->grh; j < n; j++) {
		p = (uint8_t *)(uintptr_t)sge[j].addr;
		memset(used + (p - buf - s * slot), 1, sge[j].length);
		for (q = 0; q < sge[j].length; q++, k++) {
			if (fill) {
				p[q] = poison ? pattern(v->qpn, v->op, v->i, k) ^
					0xff : view_want(v, k);
			} else if (p[q] != view_want(v, k)) {
				*at = k;
				*got = p[q];
				return -1;
			}
		}
	}
	for (p = buf + s * slot, k = -1; p < end; p++) {
		if (used[p - buf - s * slot])
			continue;
		if (fill) {
			*p = view_want(v, k);
		} else if (*p != view_want(v, k)) {
			*at = k;
			*got = *p;
			return -1;
		}
		k--;
	}
	return 0;
}

static void slot_fill(int s, const struct view *v, int poison)
{
	view_walk(s, v, 1, poison, NULL, NULL);
}

/* 0 if slot @s holds what @v wants; else -1, saying where unless @quiet */
static int slot_check(int s, const struct view *v, int quiet)
{
	long long at;
	uint8_t got;

	if (!view_walk(s, v, 0, 0, &at, &got))
		return 0;
	if (!quiet && at >= 0)
		fprintf(stderr, "datacheck: %s message %u (%u bytes): %s %lld: got 0x%02x, want 0x%02x\n",
			op_name[v->op], v->i, v->len,
			at < v->len ? "first bad byte at offset" :
			"written past its end, at offset", at, got,
			view_want(v, at));
	else if (!quiet)
		fprintf(stderr, "datacheck: %s message %u (%u bytes): a byte outside the scatter list changed: got 0x%02x, want 0x%02x\n",
			op_name[v->op], v->i, v->len, got,
			view_want(v, at));
	return -1;
}

static void xfer(bool out, void *p, size_t n)
{
	if (tcp_xfer(sock, p, n, out))
		die("the peer's socket: %s", errno ? strerror(errno) : "closed");
}

static void say(uint32_t w)
{
	w = htonl(w);
	xfer(true, &w, sizeof(w));
}

static uint32_t hear(void)
{
	uint32_t w;

	xfer(false, &w, sizeof(w));
	return ntohl(w);
}

static long long now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

static long long now_ms(void)
{
	return now_us() / 1000;
}

/* one completion, checked against what it must be */
static void poll_one(int op, int recv, uint32_t i)
{
	static const enum ibv_wc_opcode sent[OP_NR] = {
		IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
		IBV_WC_RDMA_READ, IBV_WC_ATOMIC_WRITE, IBV_WC_FETCH_ADD,
		IBV_WC_COMP_SWAP,
	};
	enum ibv_wc_opcode want = !recv ? sent[op] : op == OP_WRITE_IMM ?
				  IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	long long end = now_ms() + TIMEOUT_MS;
	const char *what = op_name[op];
	struct ibv_wc wc;
	int n, imm = op == OP_SEND_IMM || op == OP_WRITE_IMM;
	uint32_t len = msg_len(i);

	while (!(n = ibv_poll_cq(cq, 1, &wc)))
		if (now_ms() > end)
			die("%s message %u: no %s completion after %d ms", what,
			    i, recv ? "receive" : "send", TIMEOUT_MS);
	if (n < 0)
		die("ibv_poll_cq: %d", n);
	if (wc.status != IBV_WC_SUCCESS)
		die("%s message %u: completion status %s (%d)", what, i,
		    ibv_wc_status_str(wc.status), wc.status);
	if (wc.wr_id != i || wc.opcode != want)
		die("%s: completion of wr_id %llu opcode %d, want wr_id %u opcode %d",
		    what, (unsigned long long)wc.wr_id, wc.opcode, i, want);
	if (!recv) {
		if (op == OP_READ && wc.byte_len != len)
			die("read message %u: byte_len %u, want %u", i,
			    wc.byte_len, len);
		return;
	}
	len += type == IBV_QPT_UD ? GRH : 0;
	if (wc.byte_len != len)
		die("%s message %u: byte_len %u, want %u", what, i, wc.byte_len, len);
	if (!!(wc.wc_flags & IBV_WC_WITH_IMM) != imm ||
	    (imm && ntohl(wc.imm_data) != i))
		die("%s message %u: wc_flags 0x%x immediate %u", what, i,
		    wc.wc_flags, ntohl(wc.imm_data));
	if (type == IBV_QPT_UD && !(wc.wc_flags & IBV_WC_GRH))
		die("%s message %u: no IBV_WC_GRH", what, i);
}

/*
 * How each end's slot sees message @i of @op (see struct view): the
 * client's scatter lists hold exactly the message; the server's receive
 * buffers and WRITE targets are as long as the longest message, its READ
 * sources flat.  An ATOMIC WRITE's 8 bytes lie flat at the start of the
 * client's slot.
 */
static struct view view_of(int op, uint32_t i, int client)
{
	int remote = op == OP_WRITE || op == OP_WRITE_IMM || op == OP_READ ||
		     op == OP_AWRITE || fetches(op);
	struct view v = { .op = op, .i = i, .cap = op_len(op, i),
			  .len = op_len(op, i),
			  .flat = op == OP_AWRITE || fetches(op) };

	/* what the client reads and what the server receives is the other's */
	v.qpn = (client == (op == OP_READ)) ? peer.qpn : me.qpn;
	if (!client) {
		v.flat = remote;
		v.grh = type == IBV_QPT_UD;
		if (op != OP_READ)
			v.cap = maxsize;
	}
	return v;
}

static void post_recv(int s, int op, uint32_t i)
{
	struct view v = view_of(op, i, 0);
	struct ibv_sge sge[4];
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = sge }, *bad;
	int e;

	/* WRITE with immediate consumes a receive WQE and places nothing */
	wr.num_sge = op == OP_WRITE_IMM ? 0 :
		     slot_sges(s, v.cap, v.flat, v.grh, sge);
	e = srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad);
	if (e)
		die("%s: %s", srq ? "ibv_post_srq_recv" : "ibv_post_recv",
		    strerror(e));
}

/*
 * -o cswap: before each message's CAS, one whose compare is one bit off
 * the server's @poison and whose swap is one bit off the message @want.
 * Its original value lands where the real one's does, and is overwritten
 * by it.  Had it swapped, the real one would find no poison: it would
 * swap nothing, and get back the wrong original value.
 */
static void cswap_decoy(const struct ibv_send_wr *real, uint64_t poison,
			uint64_t want)
{
	struct ibv_send_wr wr = *real, *bad;
	int e;

	wr.send_flags = 0;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = poison ^ 1;
	wr.wr.atomic.swap = want ^ 1;
	e = ibv_post_send(qp, &wr, &bad);
	if (e)
		die("ibv_post_send, cswap decoy of message %llu: %s",
		    (unsigned long long)wr.wr_id, strerror(e));
}

static void post_send(int s, int op, uint32_t i)
{
	static const enum ibv_wr_opcode opcode[OP_NR] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	};
	struct view v = view_of(op, i, 1);
	struct ibv_sge sge[4];
	struct ibv_send_wr wr = {
		.wr_id = i, .sg_list = sge, .opcode = opcode[op],
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int e;

	if (op == OP_AWRITE)
		die("awrite: ibv_post_send() cannot carry it; -w");
	wr.num_sge = slot_sges(s, v.cap, v.flat, v.grh, sge);
	if (fetches(op)) {
		uint64_t want, poison;
		uint8_t *p = (uint8_t *)&want, *q = (uint8_t *)&poison;

		/* the client's slot holds the message: the server's poison */
		memcpy(p, buf + s * slot, 8);
		for (e = 0; e < 8; e++)
			q[e] = p[e] ^ 0xff;
		wr.wr.atomic.remote_addr = peer.addr + s * slot;
		wr.wr.atomic.rkey = peer.rkey;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.compare_add = want - poison;
		if (op == OP_CSWAP) {
			cswap_decoy(&wr, poison, want);
			wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			wr.wr.atomic.compare_add = poison;
			wr.wr.atomic.swap = want;
		}
	}
	if (type == IBV_QPT_UD) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = peer.qpn;
		wr.wr.ud.remote_qkey = QKEY;
	}
	if (type == IBV_QPT_XRC_SEND)
		wr.qp_type.xrc.remote_srqn = peer.srqn;
	/* every other message that fits goes inline */
	if (op != OP_READ && !fetches(op) && v.cap <= max_inline && i % 2)
		wr.send_flags |= IBV_SEND_INLINE;
	if (op == OP_SEND_IMM || op == OP_WRITE_IMM)
		wr.imm_data = htonl(i);
	if (op == OP_WRITE || op == OP_WRITE_IMM || op == OP_READ) {
		wr.wr.rdma.remote_addr = peer.addr + s * slot;
		wr.wr.rdma.rkey = peer.rkey;
	}
	e = ibv_post_send(qp, &wr, &bad);
	if (e)
		die("ibv_post_send %s message %u: %s", op_name[op], i, strerror(e));
}

/* post_send() through the ibv_wr_* API, inside the batch's critical section */
static void post_send_wr(int s, int op, uint32_t i)
{
	struct view v = view_of(op, i, 1);
	uint64_t raddr = peer.addr + s * slot;
	struct ibv_data_buf data[4];
	struct ibv_sge sge[4];
	int n, k;

	qpx->wr_id = i;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case OP_SEND: ibv_wr_send(qpx); break;
	case OP_SEND_IMM: ibv_wr_send_imm(qpx, htonl(i)); break;
	case OP_WRITE: ibv_wr_rdma_write(qpx, peer.rkey, raddr); break;
	case OP_WRITE_IMM:
		ibv_wr_rdma_write_imm(qpx, peer.rkey, raddr, htonl(i));
		break;
	case OP_AWRITE:
		ibv_wr_atomic_write(qpx, peer.rkey, raddr, buf + s * slot);
		return;
	default: ibv_wr_rdma_read(qpx, peer.rkey, raddr); break;
	}
	if (type == IBV_QPT_UD)
		ibv_wr_set_ud_addr(qpx, ah, peer.qpn, QKEY);
	if (type == IBV_QPT_XRC_SEND)
		ibv_wr_set_xrc_srqn(qpx, peer.srqn);
	n = slot_sges(s, v.cap, v.flat, v.grh, sge);
	if (op != OP_READ && v.cap <= max_inline && i % 2) {
		for (k = 0; k < n; k++)
			data[k] = (struct ibv_data_buf){
				(void *)(uintptr_t)sge[k].addr, sge[k].length,
			};
		if (n == 1)
			ibv_wr_set_inline_data(qpx, data[0].addr, data[0].length);
		else
			ibv_wr_set_inline_data_list(qpx, n, data);
	} else if (n == 1) {
		ibv_wr_set_sge(qpx, sge[0].lkey, sge[0].addr, sge[0].length);
	} else {
		ibv_wr_set_sge_list(qpx, n, sge);
	}
}

/* -b: message @i's ibv_post_send() took @post us, its completion @done */
static void bound_check(int op, uint32_t i, long long post, long long done)
{
	printf("datacheck: %s message %u (%u packets): ibv_post_send returned after %lld us, the completion came after %lld us\n",
	       op_name[op], i, (msg_len(i) + mtu - 1) / mtu, post, done);
	if (post * 2 >= done)
		die("%s message %u: the doorbell's system call sent most of the message",
		    op_name[op], i);
	bound_seen++;
}

/* -P: the buffer's pages go, for the device to fault in again */
static void drop_pages(void)
{
	if (odp && madvise(buf, buf_len(), MADV_DONTNEED))
		die("madvise(MADV_DONTNEED): %s", strerror(errno));
}

/*
 * -o fadd, cswap: the original value message @i got back into slot @s is the
 * server's poison, the complement of the message
 */
static int fetch_check(int op, int s, uint32_t i)
{
	uint8_t *p = buf + s * slot, want;
	int k;

	for (k = 0; k < 8; k++) {
		want = pattern(me.qpn, op, i, k) ^ 0xff;
		if (p[k] != want) {
			printf("datacheck: %s message %u: byte %d of the original value is 0x%02x, want 0x%02x\n",
			       op_name[op], i, k, p[k], want);
			return -1;
		}
	}
	return 0;
}

/* the client's side of @op, one batch: messages @i0 .. @i0 + @n - 1 */
static int client_batch(int op, uint32_t i0, int n)
{
	long long t0, t1 = 0;
	struct view v;
	int s, bad = 0;

	drop_pages();
	for (s = 0; s < n; s++) {
		v = view_of(op, i0 + s, 1);
		slot_fill(s, &v, op == OP_READ);
	}
	if (hear() != SAY_READY)
		die("%s: the server is not ready", op_name[op]);
	t0 = now_us();
	if (wr_api) {
		ibv_wr_start(qpx);
		for (s = 0; s < n; s++)
			post_send_wr(s, op, i0 + s);
		s = ibv_wr_complete(qpx);
		if (s)
			die("ibv_wr_complete, %s messages %u to %u: %s",
			    op_name[op], i0, i0 + n - 1, strerror(s));
		t1 = now_us();
	}
	for (s = 0; s < n && !wr_api; s++) {
		post_send(s, op, i0 + s);
		if (!s)
			t1 = now_us();
	}
	for (s = 0; s < n; s++) {
		poll_one(op, 0, i0 + s);
		if (!s && bound && op != OP_READ &&
		    msg_len(i0) / BIG_PKTS >= mtu)
			bound_check(op, i0, t1 - t0, now_us() - t0);
	}
	for (s = 0; s < n && !bad && op == OP_READ; s++) {
		v = view_of(op, i0 + s, 1);
		bad = slot_check(s, &v, 0);
	}
	for (s = 0; s < n && !bad && fetches(op); s++)
		bad = fetch_check(op, s, i0 + s);
	say(bad ? SAY_BAD : SAY_DONE);
	return hear() == SAY_OK && !bad ? 0 : -1;
}

/* the server's side of @op, one batch */
static int server_batch(int op, uint32_t i0, int n)
{
	int recv = op == OP_SEND || op == OP_SEND_IMM || op == OP_WRITE_IMM;
	long long end;
	struct view v;
	int s, bad = 0;

	drop_pages();
	for (s = 0; s < n; s++) {
		v = view_of(op, i0 + s, 0);
		slot_fill(s, &v, op != OP_READ);
		if (recv && !late_recv)
			post_recv(s, op, i0 + s);
	}
	say(SAY_READY);
	if (recv && late_recv) {
		usleep(RNR_MS * 1000);
		for (s = 0; s < n; s++)
			post_recv(s, op, i0 + s);
	}
	for (s = 0; s < n && recv; s++)
		poll_one(op, 1, i0 + s);
	if (hear() != SAY_DONE) {
		say(SAY_BAD);
		return -1;
	}
	/*
	 * A UC WRITE's completion says it left, not that it landed: give
	 * the last packets a moment before calling a byte wrong.
	 */
	end = now_ms() + (type == IBV_QPT_UC && op == OP_WRITE ? SETTLE_MS : 0);
	for (s = 0; s < n && !bad && op != OP_READ; s++) {
		v = view_of(op, i0 + s, 0);
		while ((bad = slot_check(s, &v, now_ms() < end)) &&
		       now_ms() < end)
			usleep(1000);
	}
	say(bad ? SAY_BAD : SAY_OK);
	return bad;
}

/*
 * -X: a SEND naming no SRQ of the server's domain (the next number, 24
 * bits) fails with IBV_WC_REM_ACCESS_ERR; the server hears how it went.
 */
static int bad_srq(int client)
{
	struct ibv_sge sge = { (uintptr_t)buf, 1, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.qp_type.xrc.remote_srqn = (peer.srqn + 1) & 0xffffff,
	}, *bad;
	long long end = now_ms() + TIMEOUT_MS;
	struct ibv_wc wc;
	int n, e;

	if (!client)
		return hear() == SAY_OK ? 0 : -1;
	e = ibv_post_send(qp, &wr, &bad);
	if (e)
		die("-X: ibv_post_send: %s", strerror(e));
	while (!(n = ibv_poll_cq(cq, 1, &wc)))
		if (now_ms() > end)
			die("-X: no completion after %d ms", TIMEOUT_MS);
	printf("datacheck: a SEND to XRC SRQ %u, which the server lacks: %s\n",
	       wr.qp_type.xrc.remote_srqn, ibv_wc_status_str(wc.status));
	n = n == 1 && wc.status == IBV_WC_REM_ACCESS_ERR;
	say(n ? SAY_OK : SAY_BAD);
	return n ? 0 : -1;
}

static int run(int op, int client)
{
	unsigned long long bytes = 0;
	uint32_t i, n;
	int fixed = op == OP_AWRITE || fetches(op);	/* 8 bytes each */

	for (i = 0; i < count; i += n) {
		n = count - i < depth ? count - i : depth;
		if ((client ? client_batch : server_batch)(op, i, n)) {
			printf("datacheck: %s %s: FAILED in messages %u to %u\n",
			       type_name(), op_name[op], i, i + n - 1);
			return -1;
		}
	}
	if (client != (op == OP_READ))
		return 0;	/* the end that checked it says so */
	for (i = 0; i < count; i++)
		bytes += op_len(op, i);
	printf("datacheck: %s %s: %u messages of %u to %u bytes (%llu bytes) intact\n",
	       type_name(), op_name[op], count, fixed ? 8 : 1, fixed ? 8 : maxsize, bytes);
	fflush(stdout);
	return 0;
}

static void qp_up(void)
{
	union ibv_gid g;
	struct qp_path p = {
		.dest = peer.qpn, .gid = &g,
		.sgid_index = gidx, .rq_psn = peer.psn, .sq_psn = me.psn,
		.qkey = QKEY, .rd_atomic = 4, .min_rnr_timer = 12,
		.timeout = ack_timeout,
		.mtu = mtu == 4096 ? IBV_MTU_4096 : mtu == 2048 ? IBV_MTU_2048 :
		       mtu == 512 ? IBV_MTU_512 : mtu == 256 ? IBV_MTU_256 :
		       IBV_MTU_1024,
	};
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .hop_limit = 64, .sgid_index = gidx },
	};
	int e;

	memcpy(g.raw, peer.gid, 16);
	e = qp_rts_path(qp, &p);
	if (e)
		die("modify_qp to RTS: %s", strerror(e));
	if (type == IBV_QPT_UD) {
		memcpy(aa.grh.dgid.raw, peer.gid, 16);
		ah = ibv_create_ah(pd, &aa);
		if (!ah)
			die("ibv_create_ah: %s", strerror(errno));
	}
}

/*
 * -M: bind the window over the whole buffer under the key the peer was
 * given, and wait for the bind's completion.
 */
static void bind_window(void)
{
	struct ibv_mw_bind_info bi = {
		.mr = mr, .addr = (uintptr_t)buf, .length = depth * slot,
		.mw_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_send_wr wr = {
		.wr_id = BIND_ID, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = me.rkey, .bind_info = bi },
	}, *bad;
	long long end = now_ms() + TIMEOUT_MS;
	struct ibv_wc wc;
	int n, e;

	if (qpx) {
		ibv_wr_start(qpx);
		qpx->wr_id = BIND_ID;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(qpx, mw, me.rkey, &bi);
		e = ibv_wr_complete(qpx);
	} else {
		e = ibv_post_send(qp, &wr, &bad);
	}
	if (e)
		die("binding the window: %s", strerror(e));
	while (!(n = ibv_poll_cq(cq, 1, &wc)))
		if (now_ms() > end)
			die("no completion of the bind after %d ms", TIMEOUT_MS);
	if (n < 0 || wc.status != IBV_WC_SUCCESS || wc.wr_id != BIND_ID ||
	    wc.opcode != IBV_WC_BIND_MW)
		die("the bind completed with status %s, wr_id %llu, opcode %d",
		    ibv_wc_status_str(wc.status),
		    (unsigned long long)wc.wr_id, wc.opcode);
}

/* Whether device @name has ATOMIC WRITE (not on 6.1). */
static bool has_awrite(const char *name)
{
	struct ibv_context *c = open_dev(name);
	bool has = c && dev_has_atomic_write(c);

	if (c)
		ibv_close_device(c);
	return has;
}

/* ibv_create_qp(), or with -w ibv_create_qp_ex() for the ibv_wr_* API */
static struct ibv_qp *create_qp(struct ibv_qp_init_attr *ia)
{
	static const uint64_t ops[] = {
		[IBV_QPT_RC] = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			       IBV_QP_EX_WITH_RDMA_WRITE |
			       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			       IBV_QP_EX_WITH_RDMA_READ,
		[IBV_QPT_UC] = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			       IBV_QP_EX_WITH_RDMA_WRITE |
			       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
		[IBV_QPT_UD] = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
		[IBV_QPT_XRC_SEND] = IBV_QP_EX_WITH_SEND |
				     IBV_QP_EX_WITH_SEND_WITH_IMM |
				     IBV_QP_EX_WITH_RDMA_WRITE |
				     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				     IBV_QP_EX_WITH_RDMA_READ,
	};
	const uint64_t bind = window ? IBV_QP_EX_WITH_BIND_MW : 0;
	const uint64_t aw = ops_run & 1 << OP_AWRITE ?
			    IBV_QP_EX_WITH_ATOMIC_WRITE : 0;
	struct ibv_qp_init_attr_ex iax = {
		.send_cq = ia->send_cq, .recv_cq = ia->recv_cq, .srq = ia->srq,
		.cap = ia->cap,
		.qp_type = ia->qp_type, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = ops[ia->qp_type] | bind | aw,
	};
	struct ibv_qp *q;

	if (ia->qp_type == IBV_QPT_XRC_RECV) {
		/* the server's: no PD, no rings, of its XRC domain */
		iax = (struct ibv_qp_init_attr_ex){
			.qp_type = IBV_QPT_XRC_RECV,
			.comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = xrcd,
		};
		return ibv_create_qp_ex(ctx, &iax);
	}
	if (ia->qp_type == IBV_QPT_XRC_SEND) {
		/* the client's: sends only */
		iax.recv_cq = NULL;
		iax.srq = NULL;
		iax.cap.max_recv_wr = iax.cap.max_recv_sge = 0;
		if (!wr_api)
			iax.comp_mask = IBV_QP_INIT_ATTR_PD;
	} else if (!wr_api) {
		return ibv_create_qp(pd, ia);
	}
	q = ibv_create_qp_ex(ctx, &iax);
	if (!q)
		return NULL;
	ia->cap = iax.cap;
	if (!wr_api)
		return q;
	qpx = ibv_qp_to_qp_ex(q);
	if (!qpx)
		die("ibv_qp_to_qp_ex: no ibv_qp_ex for a QP with send_ops_flags");
	return q;
}

/*
 * An XRC server: its own XRC domain, an XRC SRQ of it whose completions go
 * to the CQ, and an XRC_RECV QP (made by create_qp()) instead of @ia's.
 */
static void xrc_server(const char *dev, struct ibv_qp_init_attr *ia)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = depth, .max_sge = 4 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.cq = cq, .pd = pd,
	};

	xrcd = ibv_open_xrcd(ctx, &xa);
	if (!xrcd)
		die("%s: ibv_open_xrcd: %s", dev, strerror(errno));
	sa.xrcd = xrcd;
	srq = ibv_create_srq_ex(ctx, &sa);
	if (!srq || ibv_get_srq_num(srq, &me.srqn))
		die("%s: an XRC SRQ: %s", dev, strerror(errno));
	printf("datacheck: XRC SRQ %u\n", me.srqn);
	fflush(stdout);
	ia->qp_type = IBV_QPT_XRC_RECV;
}

static void setup(const char *dev, int client)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		/* -o cswap posts two WRs a message */
		.cap = { .max_send_wr = 2 * depth, .max_recv_wr = depth,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 64 },
	};
	struct ibv_port_attr pa;
	union ibv_gid gid;
	ctx = open_dev(dev);
	if (!ctx)
		die("no device %s", dev);
	if (ibv_query_port(ctx, 1, &pa) || ibv_query_gid(ctx, 1, gidx, &gid))
		die("%s: port 1 or GID %d: %s", dev, gidx, strerror(errno));
	mtu = 128 << pa.active_mtu;
	slot = (maxsize + GRH + 7) & ~7ul;	/* an ATOMIC WRITE's is aligned */
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 2 * depth, NULL, NULL, 0) : NULL;
	buf = aligned_alloc(4096, buf_len());
	used = malloc(slot);
	if (!used)
		die("no memory for %zu bytes", slot);
	mr = buf && cq ? ibv_reg_mr(pd, buf, depth * slot, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_ATOMIC |
				    (odp ? IBV_ACCESS_ON_DEMAND : 0) |
				    (window ? IBV_ACCESS_MW_BIND : 0)) : NULL;
	if (mr && window) {
		mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		if (!mw)
			die("%s: ibv_alloc_mw(type 2): %s", dev, strerror(errno));
	}
	ia.send_cq = ia.recv_cq = cq;
	if (mr && type == IBV_QPT_XRC_SEND && !client)
		xrc_server(dev, &ia);
	if (mr && use_srq && !srq) {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = depth, .max_sge = 4 },
		};

		srq = ibv_create_srq(pd, &sa);
		if (!srq)
			die("%s: ibv_create_srq: %s", dev, strerror(errno));
		ia.srq = srq;
	}
	qp = mr ? create_qp(&ia) : NULL;
	if (!qp && mr) {	/* a device that inlines less */
		ia.cap.max_inline_data = 0;
		qp = create_qp(&ia);
	}
	if (!qp)
		die("%s: setting up a %s QP: %s", dev, type_name(),
		    strerror(errno));
	max_inline = ia.cap.max_inline_data;
	srand48(getpid() ^ time(NULL));
	me = (struct wire_qp){
		.qpn = qp->qp_num, .psn = lrand48() & 0xffffff,
		.rkey = mw ? ibv_inc_rkey(mw->rkey) : mr->rkey,
		.mtu = mtu, .addr = (uintptr_t)buf, .srqn = me.srqn,
	};
	memcpy(me.gid, gid.raw, 16);
}

static int parse_ops(char *s)
{
	char *t;
	int ops = 0, o;

	for (t = strtok(s, ","); t; t = strtok(NULL, ",")) {
		for (o = 0; o < OP_NR && strcmp(t, op_name[o]); o++)
			;
		if (o == OP_NR)
			die("unknown operation %s", t);
		ops |= 1 << o;
	}
	return ops;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *port = "18520", *server;
	struct wire_cfg cfg = { .type = IBV_QPT_RC, .count = 1000, .maxsize = 65536 };
	int c, o, failed = 0;
	char *ops = NULL, *hold = NULL;

	cfg.depth = depth;
	while ((c = getopt(argc, argv, "d:g:t:o:n:s:r:bRwMXH:T:PSp:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 'n': cfg.count = strtoul(optarg, NULL, 0); break;
		case 's': cfg.maxsize = strtoul(optarg, NULL, 0); break;
		case 'r': cfg.depth = strtoul(optarg, NULL, 0); break;
		case 'b': bound = 1; break;
		case 'R': cfg.late_recv = 1; break;
		case 'w': wr_api = 1; break;
		case 'M': cfg.window = 1; break;
		case 'X': cfg.bad_srq = 1; break;
		case 'H': hold = optarg; break;
		case 'T': ack_timeout = strtoul(optarg, NULL, 0); break;
		case 'P': odp = 1; break;
		case 'S': use_srq = 1; break;
		case 'o': ops = optarg; break;
		case 't':
			cfg.type = !strcmp(optarg, "rc") ? IBV_QPT_RC :
				   !strcmp(optarg, "uc") ? IBV_QPT_UC :
				   !strcmp(optarg, "ud") ? IBV_QPT_UD :
				   !strcmp(optarg, "xrc") ? IBV_QPT_XRC_SEND : 0;
			if (!cfg.type)
				die("-t rc, uc, ud or xrc");
			break;
		default:
			die("usage: datacheck -d DEV [-g GIDX] [-t rc|uc|ud|xrc] [-o OP,...] [-n COUNT] [-s MAXSIZE] [-r DEPTH] [-b] [-R] [-w] [-M] [-X] [-H FILE] [-T TIMEOUT] [-p PORT] [SERVER]");
		}
	}
	if (!dev)
		die("-d DEV");
	server = optind < argc ? argv[optind] : NULL;
	/* by default, all the QP type carries, and the device has */
	cfg.ops = ops ? parse_ops(ops) : cfg.type == IBV_QPT_XRC_SEND ?
		  (1 << OP_AWRITE) - 1 : cfg.type == IBV_QPT_RC ?
		  ((1 << OP_AWRITE) - 1) |
		  (wr_api && cfg.maxsize >= 8 && has_awrite(dev) ?
		   1 << OP_AWRITE : 0) :
		  cfg.type == IBV_QPT_UC ? (1 << OP_READ) - 1 :
		  1 << OP_SEND | 1 << OP_SEND_IMM;
	if ((cfg.ops & 1 << OP_AWRITE) &&
	    (cfg.type != IBV_QPT_RC || !wr_api || cfg.maxsize < 8))
		die("awrite: RC, -w, and -s 8 or more");
	if ((cfg.ops & (1 << OP_FADD | 1 << OP_CSWAP)) &&
	    ((cfg.type != IBV_QPT_RC && cfg.type != IBV_QPT_XRC_SEND) ||
	     wr_api || cfg.maxsize < 8))
		die("fadd, cswap: RC or XRC, no -w, and -s 8 or more");
	if (cfg.type == IBV_QPT_XRC_SEND && cfg.window)
		die("-M: not with XRC");
	if (cfg.type != IBV_QPT_XRC_SEND && cfg.bad_srq)
		die("-X: XRC only");
	if (cfg.type == IBV_QPT_UD &&
	    (cfg.ops & ~(1 << OP_SEND | 1 << OP_SEND_IMM)))
		die("UD carries send and send_imm only");
	if (cfg.type == IBV_QPT_UC && (cfg.ops & 1 << OP_READ))
		die("UC carries no read");
	if (cfg.type == IBV_QPT_UD && cfg.window)
		die("-M: UD has no memory windows");
	if (!cfg.count || !cfg.maxsize || !cfg.depth || cfg.depth > 256)
		die("-n and -s must be at least 1, -r from 1 to 256");

	sock = tcp_connect(server, port, CONNECT_MS);
	if (sock < 0)
		die("no connection to the peer");
	if (server) {
		struct wire_cfg w = { htonl(cfg.type), htonl(cfg.ops),
				      htonl(cfg.count), htonl(cfg.maxsize),
				      htonl(cfg.depth), htonl(cfg.late_recv),
				      htonl(cfg.window), htonl(cfg.bad_srq) };

		xfer(true, &w, sizeof(w));
	} else {
		xfer(false, &cfg, sizeof(cfg));
		cfg.type = ntohl(cfg.type);
		cfg.ops = ntohl(cfg.ops);
		cfg.count = ntohl(cfg.count);
		cfg.maxsize = ntohl(cfg.maxsize);
		cfg.depth = ntohl(cfg.depth);
		cfg.late_recv = ntohl(cfg.late_recv);
		cfg.window = ntohl(cfg.window);
		cfg.bad_srq = ntohl(cfg.bad_srq);
	}
	window = cfg.window;
	late_recv = cfg.late_recv;
	ops_run = cfg.ops;
	if (!cfg.depth || cfg.depth > 256)
		die("the client asked for batches of %u", cfg.depth);
	depth = cfg.depth;
	type = cfg.type;
	count = cfg.count;
	maxsize = cfg.maxsize;
	setup(dev, !!server);
	{
		struct wire_qp w = me;

		w.qpn = htonl(w.qpn);
		w.psn = htonl(w.psn);
		w.rkey = htonl(w.rkey);
		w.mtu = htonl(w.mtu);
		w.srqn = htonl(w.srqn);
		w.addr = htobe64(w.addr);
		xfer(true, &w, sizeof(w));
		xfer(false, &peer, sizeof(peer));
		peer.qpn = ntohl(peer.qpn);
		peer.psn = ntohl(peer.psn);
		peer.rkey = ntohl(peer.rkey);
		peer.mtu = ntohl(peer.mtu);
		peer.srqn = ntohl(peer.srqn);
		peer.addr = be64toh(peer.addr);
	}
	if (peer.mtu < mtu)
		mtu = peer.mtu;
	if (type == IBV_QPT_UD && maxsize > mtu)
		die("a UD message of %u bytes is more than the MTU, %u", maxsize, mtu);
	qp_up();
	if (mw)
		bind_window();
	/* before the word the server waits for without a time limit */
	if (hold && server) {
		long long end = now_ms() + HOLD_MS;

		printf("datacheck: holding QPN %u idle until %s exists\n",
		       qp->qp_num, hold);
		fflush(stdout);
		while (access(hold, F_OK) && now_ms() < end)
			usleep(100000);
		if (access(hold, F_OK))
			die("-H: no %s after %d ms", hold, HOLD_MS);
	}
	say(SAY_READY);		/* both ends' QPs take packets now */
	if (hear() != SAY_READY)
		die("the peer did not come up");
	for (o = 0; o < OP_NR && !failed; o++)
		if (cfg.ops & 1 << o)
			failed = run(o, !!server);
	if (!failed && cfg.bad_srq)
		failed = bad_srq(!!server);
	if (!failed && bound && !bound_seen)
		die("-b: no message of %u packets or more started a batch", BIG_PKTS);
	/*
	 * The window before the QP it is bound to: rxe (Linux 6.12) holds
	 * the QP while a type 2 window is bound and warns, after 200 ms of
	 * waiting, if the process exit destroys the QP first.
	 */
	if (mw && ibv_dealloc_mw(mw))
		die("ibv_dealloc_mw: %s", strerror(errno));
	return failed ? 1 : 0;
}
