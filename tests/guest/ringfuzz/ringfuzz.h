/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What the ring fuzzer's files share: tests/guest/ringfuzz.c (the run and
 * its turns) and tests/guest/ringfuzz/ (what each turn fuzzes).  Their
 * objects, their randomness, their counters.
 */
#ifndef VHCA_RINGFUZZ_H
#define VHCA_RINGFUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* mremap */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

/* one TAP count for all the files (lib/testlib.h) */
#define TESTLIB_SHARED
#include "../lib/testlib.h"
#include "provider.h"

#define BUFSZ		(256 << 10)
#define NMR		7
#define NCQ		3
#define NSRQ		4	/* srqs[]: NBSRQ basic ones, then XRC ones */
#define NBSRQ		2
#define NQP		16
#define QKEY		0x11111111U

/* ringfuzz.c: the device and what main() set up */
extern struct ibv_context *ctx;
extern struct ibv_pd *pd, *pd2;
extern struct ibv_comp_channel *chan;
extern unsigned char *buf;
extern union ibv_gid gid;
extern int trace, allow_known, deterministic;

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- randomness ----------------------------------------------------------- */

extern __thread uint64_t rng_state;	/* the racer has its own */

static inline uint64_t rnd64(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static inline uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)(rnd64() >> 32) % n : 0;
}

static inline int chance(int percent)
{
	return (int)rnd(100) < percent;
}

/* --- objects (ringfuzz/world.c) ------------------------------------------- */

struct fmr {
	struct ibv_mr *mr;
	uint64_t addr;
	uint32_t len;
	int access;
};


/* MRs: full access, none, local write, remote read, another PD, odd edges */
extern struct fmr mrs[NMR];
extern uint32_t stale_keys[16];
extern unsigned int nstale;
/* the access of the full-access MRs */
extern const int full;

struct fcq {
	struct ibv_cq *cq;
	struct vhca_cq *v;
};

struct fsrq {
	struct ibv_srq *srq;
	struct vhca_srq *v;
	uint32_t num;		/* an XRC SRQ's number (ibv_get_srq_num) */
	const struct fmr *mr;	/* an MR of its PD, for receives that work */
};

/* srqs[NBSRQ..]: XRC SRQs of the world's domain, on pd and on pd2 */
static inline int srq_is_xrc(int i)
{
	return i >= NBSRQ;
}

enum peer_kind { P_PAIR, P_SELF, P_WIRE, P_NONE };

struct fqp {
	struct ibv_qp *qp;
	struct vhca_qp *v;
	enum ibv_qp_type type;
	enum peer_kind kind;
	int peer;		/* index in qps[] of a P_PAIR's other end */
	int srq;		/* index in srqs[], or -1 */
	int scq, rcq;
	int access;
	struct ibv_qp_init_attr ia;
};

extern struct fcq cqs[NCQ];
extern struct fsrq srqs[NSRQ];
extern struct fqp qps[NQP];
extern int nqp;
/* the world's XRC domain: its XRC SRQs and XRC QPs are in srqs[], qps[] */
extern struct ibv_xrcd *xrcd;

/* what the run did, for its report */
struct stats {
	unsigned long wqes, rwqes, doorbells, hdr_writes, polls, cqes, modifies,
		      resizes, rebuilds, recreated, posts, cqe_ok, raw, mmaps,
		      mmaps_ok;
	unsigned long wc_status[32];
	/* XRC: WQEs on XRC_SEND rings and XRC SRQ rings; refused closes */
	unsigned long xwqes, xrwqes, xrcd_busy;
	/* completions of the XRC_SEND QP [0] and the XRC_RECV QP [1] */
	unsigned long xcqes[2], xcqes_ok[2];
	int xrcd_closed_in_use;	/* a close that should have been refused */
};
extern struct stats st;

static inline const char *qpt_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" :
	       t == IBV_QPT_XRC_SEND ? "XRC_SEND" :
	       t == IBV_QPT_XRC_RECV ? "XRC_RECV" : "UD";
}

/* RC's protocol and attributes: RC, and XRC's two halves */
static inline int qpt_rc(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND ||
	       t == IBV_QPT_XRC_RECV;
}

static inline int qpt_xrc(enum ibv_qp_type t)
{
	return t == IBV_QPT_XRC_SEND || t == IBV_QPT_XRC_RECV;
}

static inline struct vhca_qp *vqp(struct ibv_qp *qp)
{
	return container_of(qp, struct vhca_qp, vqp.qp);
}

/*
 * Whether @q has a send ring mapped: not an XRC_RECV QP, which is the
 * kernel's alone (no ring of it is mapped, nothing may be written there).
 */
static inline int has_sq(const struct fqp *q)
{
	return q->qp && q->v->sq.map;
}

extern volatile int events_stop;
extern unsigned long nevents;
int make_mrs(void);
void churn_mr(void);
void *event_thread(void *arg);
void make_qp(int i);
void build_world(void);
void destroy_qp(struct fqp *q);
int teardown_world(void);
void recreate_qp(struct fqp *q);

/* --- QP states (ringfuzz/qp.c) -------------------------------------------- */

int qp_state(struct fqp *q, enum ibv_qp_state s);
int qp_connect(struct fqp *q);
int qp_connect_fixed(struct fqp *q, uint32_t dest);
void fuzz_state(struct fqp *q);
int qp_failed(struct fqp *q);

/* --- the far peer (ringfuzz/far.c) ---------------------------------------- */

/*
 * --far DEV GID: the wire QPs go to GID instead: an address of vhca device
 * DEV's netdev (a veth's other end) that is not in DEV's GID table (it is
 * full), so that no device of this host claims it and the wire QPs' packets
 * really leave on one netdev and arrive on the other, where DEV's QPs (one
 * RC, one UC) answer them as a peer on another host would.
 */
struct far_peer {
	const char *name;
	union ibv_gid gid;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char *buf;
	struct fqp qp[2];	/* RC, UC */
	unsigned long cqes, ok;
};
extern struct far_peer far;

union ibv_gid nobody_gid(void);
uint32_t far_qpn(enum ibv_qp_type type);
void far_connect_all(void);
int far_setup(void);
void far_service(void);
void far_teardown(void);

/* --- what the rings are fed ----------------------------------------------- */

/* ringfuzz/values.c: keys, addresses, lengths, SGE counts */
uint32_t any_key(void);
uint64_t any_addr(const struct fmr *m, uint32_t len);
uint32_t any_len(const struct fmr *m);
void fill_sge(struct vhca_sge *s);
uint16_t any_num_sge(uint32_t max);

/* ringfuzz/send.c: the send rings */
uint32_t basic_srqn(void);
void dump_swqe(const char *what, const struct fqp *q, uint32_t idx,
	       const struct vhca_swqe *w, size_t stride);
void legit_send(struct fqp *q);
void fuzz_send(struct fqp *q);

/* ringfuzz/recv.c: the receive rings, RQs' and SRQs' */
struct fsrq *recv_srq(const struct fqp *q);
void fuzz_recv(struct fqp *q);
void legit_recv(struct fqp *q);
void fuzz_srq(void);

/* ringfuzz/ringhdr.c: the rings' headers */
uint32_t any_index(uint32_t idx, uint32_t log2);
void fuzz_header(void);

/* ringfuzz/cq.c: the CQs */
void poll_cqs(void);
void fuzz_cq(void);

/* ringfuzz/cmd.c: the uverbs command file */
void doorbell(struct fqp *q);
void fuzz_raw(struct fqp *q);
void fuzz_mmap(void);

/* --- the runs besides the fuzz -------------------------------------------- */

/* ringfuzz/known.c: --only-known CASE */
extern unsigned int big_sges;
int run_known(const char *name);

/* ringfuzz/pingpong.c: the clean ping-pong at the end */
void pingpong(void);

#endif
