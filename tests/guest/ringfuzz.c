// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A seeded ring fuzzer: the kernel must trust nothing a process writes into
 * the rings it shares with it.  On one vhca device it creates CQs, SRQs,
 * RC, UC and UD QPs (some on an SRQ; RC and UC connected to each other, to
 * themselves through the device's own GID, and to a GID nobody has, so
 * that the wire path runs too), an XRC domain with two XRC SRQs and an
 * XRC_SEND QP connected to an XRC_RECV QP (XRC is for this host only), and
 * MRs of several access rights and PDs, then writes random and adversarial
 * send and receive WQEs straight into the mapped slots (an XRC_SEND WQE
 * naming any SRQ number, others' with garbage there too), scribbles on the
 * ring headers (producer, consumer, ctrl), rings doorbells, arms, polls
 * and resizes CQs, resizes SRQs, moves QPs through every state, and tears
 * everything down and builds it again with WQEs outstanding.  Then the
 * same process must still get a clean ping-pong through fresh QPs, RC and
 * XRC, data compared byte for byte.  Prints TAP.
 *
 * Usage: ringfuzz DEVICE [--seed N] [--count WQES] [--time SECONDS]
 *			  [--trace] [--allow-known] [--no-racer] [--far DEV GID]
 *	  ringfuzz DEVICE --only-known CASE [--sges N]	(CASE: list, or a name)
 *
 * --count: WQEs written in all (default 100000), all of which must be
 * written for the run to pass; --time: a cap on the fuzz phase (none by
 * default), which fails the run when it cuts it short; a watchdog ends a
 * run still going 120 s past the cap, or after 1200 s without one.  The same seed replays the same operations of the
 * main thread; a second thread (the racer, seeded with seed + 1) works on
 * the same objects at the same time, so a run replays exactly only with
 * --no-racer.  --trace prints every WQE written and every header write to
 * stderr before the doorbell that may act on it, to find the one that
 * broke the kernel.
 *
 * Known kernel defects are kept out of the random phase (the WQEs that
 * would hit them are rewritten into harmless ones) unless --allow-known;
 * --only-known runs one single-WQE case alone, as a minimal reproducer
 * (--only-known list names them).
 *
 * This file is the run: its options, the world's set-up, the main
 * thread's turns and the racer's, the report.  What each turn fuzzes is
 * in tests/guest/ringfuzz/: the send rings (send.c), the receive rings
 * and SRQs (recv.c), the rings' headers (ringhdr.c), the CQs (cq.c),
 * doorbells, raw commands and mmap()s (cmd.c), QP states (qp.c), over the
 * objects of world.c and the far peer of far.c; known.c holds the known
 * defects' reproducers and pingpong.c the clean ping-pong at the end.
 */
#include "ringfuzz/ringfuzz.h"

int tap_n, tap_failed;	/* lib/testlib.h's, for every file */

struct ibv_context *ctx;
struct ibv_pd *pd, *pd2;
struct ibv_comp_channel *chan;
unsigned char *buf;
union ibv_gid gid;
int trace, allow_known, deterministic;
__thread uint64_t rng_state;
static pthread_t evth;		/* event_thread() */

static int count_left(unsigned long count)
{
	return st.wqes < count;
}

/*
 * The racer: a second thread that rings doorbells, changes QP states,
 * scribbles on ring headers, arms and polls, on the same objects as the
 * main thread, so that the kernel sees them from two CPUs at once.  It
 * holds world_lock for reading; the main thread takes it for writing
 * around whatever unmaps rings or destroys objects (resizes, re-creation,
 * rebuilds).  Its choices come from seed + 1, but what it races with is
 * timing: --no-racer for a run that replays exactly.
 */
static pthread_rwlock_t world_lock;
static volatile int racer_stop;
static unsigned long racer_ops;

static void *racer(void *arg)
{
	uint64_t seed = *(uint64_t *)arg;
	struct ibv_wc wc[4];

	rng_state = seed ? seed : 1;
	while (!racer_stop) {
		struct fqp *q;
		int r = rnd(100);

		pthread_rwlock_rdlock(&world_lock);
		q = &qps[rnd(nqp)];
		if (!q->qp) {
			pthread_rwlock_unlock(&world_lock);
			continue;
		}
		racer_ops++;
		if (r < 35) {
			doorbell(q);
		} else if (r < 45) {
			struct ibv_qp_attr a = { .qp_state = chance(50) ?
				IBV_QPS_ERR : IBV_QPS_RTS };

			ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
		} else if (r < 50) {
			qp_connect(q);
		} else if (r < 60 && !has_sq(q)) {
			doorbell(q);	/* XRC_RECV: no ring to scribble on */
		} else if (r < 60) {
			struct vhca_mring *u = chance(50) || !q->v->rq.map ?
					       &q->v->sq : &q->v->rq;
			uint32_t *f = chance(50) ? &u->hdr->producer :
				      &u->hdr->consumer;

			__atomic_store_n(f, any_index(u->idx, u->log2_slots),
					 __ATOMIC_RELEASE);
			doorbell(q);
		} else if (r < 75) {
			struct fcq *c = &cqs[rnd(NCQ)];

			if (c->cq) {
				ibv_req_notify_cq(c->cq, chance(50));
				ibv_poll_cq(c->cq, 4, wc);
			}
		} else if (r < 85) {
			legit_recv(q);
		} else if (r < 95) {
			legit_send(q);
		} else {
			qp_failed(q);
		}
		pthread_rwlock_unlock(&world_lock);
	}
	return NULL;
}

/* A hang must end the run too, with a word about where it was. */
static void on_alarm(int sig)
{
	static const char msg[] = "Bail out! ringfuzz: still running at its "
				  "watchdog's deadline (a hang)\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(4);
	_exit(3);
}

/* --- the main thread's turns ------------------------------------------------ */

/*
 * Each turn draws r, 0 to 999, and takes the first row whose bound is
 * above it; the time it took adds up in its row's slot of the report.
 */
static void turn_send(struct fqp *q, int r)
{
	(void)r;
	fuzz_send(q);
}

static void turn_recv(struct fqp *q, int r)
{
	(void)r;
	fuzz_recv(q);
}

static void turn_legit_recv(struct fqp *q, int r)
{
	(void)r;
	legit_recv(q);
}

static void turn_header(struct fqp *q, int r)
{
	(void)q;
	(void)r;
	fuzz_header();
}

static void turn_poll(struct fqp *q, int r)
{
	(void)q;
	(void)r;
	poll_cqs();
}

/* resizes unmap rings the racer may be using */
static void turn_resize(struct fqp *q, int r)
{
	(void)q;
	pthread_rwlock_wrlock(&world_lock);
	r < 880 ? fuzz_cq() : fuzz_srq();
	pthread_rwlock_unlock(&world_lock);
}

/* a QP in error moves more often; else it has its doorbell rung */
static void turn_state(struct fqp *q, int r)
{
	if (r < 910 || qp_failed(q))
		fuzz_state(q);
	else
		doorbell(q);
}

static void turn_recreate(struct fqp *q, int r)
{
	(void)r;
	pthread_rwlock_wrlock(&world_lock);
	recreate_qp(q);
	pthread_rwlock_unlock(&world_lock);
}

static void turn_legit_send(struct fqp *q, int r)
{
	(void)r;
	legit_send(q);
}

static void turn_raw(struct fqp *q, int r)
{
	r & 1 ? fuzz_raw(q) : fuzz_mmap();
}

static void turn_doorbell(struct fqp *q, int r)
{
	(void)r;
	doorbell(q);
}

static const char *const slots[] = {
	"send", "recv", "legit recv", "headers", "polls", "CQ ops",
	"SRQ resize", "modify", "recreate", "legit send", "doorbell", "rebuild",
};
#define NSLOT (sizeof(slots) / sizeof(slots[0]))
#define SLOT_REBUILD (NSLOT - 1)

static const struct turn {
	int below;		/* r below this, and not below the row before */
	unsigned int slot;	/* in slots[] */
	void (*run)(struct fqp *q, int r);
} turns[] = {
	{ 540, 0, turn_send },
	{ 640, 1, turn_recv },
	{ 680, 2, turn_legit_recv },
	{ 740, 3, turn_header },
	{ 860, 4, turn_poll },
	{ 880, 5, turn_resize },	/* fuzz_cq */
	{ 890, 6, turn_resize },	/* fuzz_srq */
	{ 930, 7, turn_state },
	{ 935, 8, turn_recreate },
	{ 955, 9, turn_legit_send },
	{ 960, 9, turn_raw },
	{ 1000, 10, turn_doorbell },
};

/* --- the run ---------------------------------------------------------------- */

struct opts {
	const char *dev;
	unsigned long count;
	double tmax;
	uint64_t seed;
	const char *known;
	int use_racer;
};

/* The options into @o: 0, or 2 (the exit status) for a wrong one. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	int i;

	*o = (struct opts){
		.count = 100000,
		.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32),
		.use_racer = 1,
	};
	if (argc < 2) {
		fprintf(stderr, "usage: ringfuzz DEVICE [--seed N] [--count WQES] "
			"[--time S] [--trace] [--allow-known] [--only-known CASE]\n");
		return 2;
	}
	o->dev = argv[1];
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			o->seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--count") && i + 1 < argc)
			o->count = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--time") && i + 1 < argc)
			o->tmax = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--only-known") && i + 1 < argc)
			o->known = argv[++i];
		else if (!strcmp(argv[i], "--sges") && i + 1 < argc)
			big_sges = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--trace"))
			trace = 1;
		else if (!strcmp(argv[i], "--far") && i + 2 < argc) {
			far.name = argv[++i];
			if (inet_pton(AF_INET6, argv[++i], far.gid.raw) != 1) {
				fprintf(stderr, "ringfuzz: bad GID %s\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--no-racer"))
			o->use_racer = 0;
		else if (!strcmp(argv[i], "--allow-known"))
			allow_known = 1;
		else {
			fprintf(stderr, "ringfuzz: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	return 0;
}

/* The device, two PDs, a completion channel and the MRs (2 checks). */
static int setup(const char *dev)
{
	int ok;

	ctx = open_dev(dev);
	check(ctx != NULL, "open %s", dev);
	if (!ctx)
		return -1;
	buf = mmap(NULL, BUFSZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	chan = ibv_create_comp_channel(ctx);
	ok = buf != MAP_FAILED && pd && pd2 && chan && !ibv_query_gid(ctx, 1, 0, &gid);
	if (ok)
		fcntl(chan->fd, F_SETFL, fcntl(chan->fd, F_GETFL) | O_NONBLOCK);
	if (ok) {
		fcntl(ctx->async_fd, F_SETFL,
		      fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
		ok = !pthread_create(&evth, NULL, event_thread, NULL);
	}
	ok = ok && !make_mrs();
	check(ok, "two PDs, a completion channel, %d MRs (full, none, local "
	      "write, remote read, another PD's, unaligned, one byte)", NMR);
	if (!ok)
		return -1;
	/* a key that was valid once */
	churn_mr();
	return 0;
}

/* The main thread's turns until @o's count of WQEs is written. */
static void fuzz_loop(const struct opts *o, double t0, double *tcat)
{
	unsigned long per_world = 5000, world_start = 0, iter = 0;
	const struct turn *t;
	double tc;

	while (count_left(o->count)) {
		/* with a far peer, the wire QPs get half of the turns */
		struct fqp *q = &qps[far.ctx && chance(50) ? 10 + rnd(2) :
				     rnd(nqp)];
		int r = rnd(1000);

		if (!(++iter & 63)) {
			if (o->tmax && now() - t0 > o->tmax)
				break;
		}
		if (st.wqes - world_start > per_world) {
			if (trace)
				fprintf(stderr, "rebuild\n");
			tc = now();
			pthread_rwlock_wrlock(&world_lock);
			teardown_world();
			if (chance(50))
				churn_mr();
			build_world();
			far_connect_all();
			pthread_rwlock_unlock(&world_lock);
			tcat[SLOT_REBUILD] += now() - tc;
			world_start = st.wqes;
			st.rebuilds++;
			continue;
		}
		if (!q->qp) {
			if (chance(10)) {
				pthread_rwlock_wrlock(&world_lock);
				make_qp((int)(q - qps));
				qp_connect(q);
				pthread_rwlock_unlock(&world_lock);
			}
			continue;
		}
		if (far.ctx && chance(10))
			far_service();
		/* a wire QP in error is worth bringing back: it has a peer */
		if (far.ctx && q->kind == P_WIRE && q->qp && chance(10) &&
		    qp_failed(q)) {
			qp_connect(q);
			far_connect_all();
		}
		tc = now();
		for (t = turns; r >= t->below; t++)
			;
		t->run(q, r);
		tcat[t->slot] += now() - tc;
	}
}

/* What the fuzz did, in '#' lines. */
static void report(double el, const double *tcat)
{
	unsigned int i;

	printf("# seconds in:");
	for (i = 0; i < NSLOT; i++)
		printf("%s %s %.1f", i ? "," : "", slots[i], tcat[i]);
	printf("\n");
	printf("# %lu WQEs (%lu receive) in %.1f s: %.0f WQEs/s; %lu doorbells, "
	       "%lu posts, %lu header writes, %lu polls (%lu CQEs), %lu modifies, "
	       "%lu resizes, %lu QPs recreated, %lu worlds rebuilt, %lu events\n",
	       st.wqes, st.rwqes, el, st.wqes / (el > 0 ? el : 1), st.doorbells,
	       st.posts, st.hdr_writes, st.polls, st.cqes, st.modifies,
	       st.resizes, st.recreated, st.rebuilds, nevents);
	printf("# %lu raw POST_SEND/POST_RECV/POST_SRQ_RECV commands, %lu "
	       "mmaps of guessed keys (%lu mapped)\n", st.raw, st.mmaps,
	       st.mmaps_ok);
	printf("# XRC: %lu WQEs on XRC_SEND rings, %lu on XRC SRQs' rings; "
	       "completions: %lu of the XRC_SEND QP (%lu successful), %lu "
	       "through the XRC_RECV QP (%lu successful); %lu closes of a "
	       "domain in use refused\n", st.xwqes, st.xrwqes, st.xcqes[0],
	       st.xcqes_ok[0], st.xcqes[1], st.xcqes_ok[1], st.xrcd_busy);
	printf("# completions by status:");
	for (i = 0; i < 32; i++)
		if (st.wc_status[i])
			printf(" %s %lu,", ibv_wc_status_str(i), st.wc_status[i]);
	printf("\n");
}

/* The world, the fuzz and its report, the teardown and the ping-pong. */
static int fuzz(const struct opts *o)
{
	double t0, tcat[NSLOT] = { 0 };
	pthread_t racer_th;
	uint64_t racer_seed;
	int use_racer = o->use_racer;
	int i, ok, nsrq;

	t0 = now();
	build_world();
	if (far.name) {
		ok = !far_setup();
		check(ok, "far: %s's RC and UC QPs connected to the wire QPs",
		      far.name);
		if (!ok)
			return tap_done();
	}
	if (use_racer) {
		pthread_rwlockattr_t ra;

		pthread_rwlockattr_init(&ra);
		pthread_rwlockattr_setkind_np(&ra,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&world_lock, &ra);
		racer_seed = o->seed + 1;
		use_racer = !pthread_create(&racer_th, NULL, racer, &racer_seed);
	}
	for (i = 0, ok = 0; i < NQP; i++)
		ok += qps[i].qp != NULL;
	for (i = 0, nsrq = 0; i < NSRQ; i++)
		nsrq += srqs[i].srq != NULL;
	check(ok == NQP && nsrq == NSRQ && xrcd,
	      "a world of %d CQs, %d SRQs (%d XRC), %d QPs (RC, UC, UD; pairs, "
	      "loopback, wire, on SRQs; XRC_SEND to XRC_RECV) in an XRC "
	      "domain: %d SRQs, %d QPs made", NCQ, NSRQ, NSRQ - NBSRQ, NQP,
	      nsrq, ok);
	fuzz_loop(o, t0, tcat);
	if (use_racer) {
		racer_stop = 1;
		pthread_join(racer_th, NULL);
		printf("# the racer: %lu operations\n", racer_ops);
	}
	report(now() - t0, tcat);
	check(st.wqes >= o->count, "fuzzed %lu WQEs of %lu (seed %" PRIu64 ")%s",
	      st.wqes, o->count, o->seed,
	      st.wqes < o->count ? ": cut short by the time cap" : "");
	usleep(200000);	/* let queued work and RNR timers run */
	if (far.ctx) {
		far_service();
		printf("# far: %lu completions on %s, %lu successful\n", far.cqes,
		       far.name, far.ok);
	}
	ok = teardown_world() == 0;
	check(ok && !st.xrcd_closed_in_use, "every fuzzed QP, SRQ and CQ "
	      "destroyed, the XRC domain closed (and never while in use: "
	      "%lu early closes refused)", st.xrcd_busy);
	far_teardown();
	for (i = 0, ok = 1; i < NMR; i++)
		if (mrs[i].mr && ibv_dereg_mr(mrs[i].mr))
			ok = 0;
	events_stop = 1;
	pthread_join(evth, NULL);
	ibv_destroy_comp_channel(chan);
	check(ok && !ibv_dealloc_pd(pd) && !ibv_dealloc_pd(pd2),
	      "MRs deregistered, PDs freed");
	pingpong();
	ibv_close_device(ctx);
	return tap_done();
}

int main(int argc, char **argv)
{
	struct opts o;

	if (parse_args(argc, argv, &o))
		return 2;
	if (o.known && !strcmp(o.known, "list"))
		return run_known(o.known) ? 2 : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(o.known ? 600 : o.tmax ? (unsigned int)o.tmax + 120 : 1200);
	printf("# ringfuzz seed %" PRIu64 " count %lu time %.0f%s%s\n", o.seed,
	       o.count, o.tmax, allow_known ? " allow-known" : "",
	       o.use_racer ? "" : " no-racer");
	rng_state = o.seed ? o.seed : 1;
	if (setup(o.dev))
		return tap_done();
	if (o.known) {
		deterministic = 1;
		return run_known(o.known) ? 2 : tap_done();
	}
	return fuzz(&o);
}
