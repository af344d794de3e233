/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/* What the compiled guest tests share: TAP output, opening a device. */
#ifndef VHCA_TESTLIB_H
#define VHCA_TESTLIB_H

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

/*
 * The count of checks and of failures.  A test built from several files
 * keeps one for all of them: each file defines TESTLIB_SHARED before it
 * includes this, and one of them defines the two.
 */
#ifdef TESTLIB_SHARED
extern int tap_n, tap_failed;
#else
static int tap_n __attribute__((unused)), tap_failed __attribute__((unused));
#endif

/* One test: "ok N - what" or "not ok N - what". */
static inline void __attribute__((format(printf, 2, 3)))
check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	tap_failed += !cond;
}

/*
 * @n checks that do not apply here: "ok N - skipped # SKIP why" lines,
 * counted apart from passes, which keep a suite's plan the same
 * everywhere.
 */
static inline void __attribute__((format(printf, 2, 3), unused))
skip(int n, const char *fmt, ...)
{
	va_list ap;
	int i;

	for (i = 1; i <= n; i++) {
		printf("ok %d - skipped (%d of %d) # SKIP ", ++tap_n, i, n);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
}

/* The plan line; the exit status for main(). */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/*
 * From here on the process may only write to @fd and exit: any other
 * system call kills it (SIGSYS).  Strict mode is not enough to prove a
 * verb makes no system call: it allows write(), and a doorbell is one.
 */
static inline int seccomp_only_write_to(int fd)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)fd, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* next_wc()'s status when no completion came */
#define NO_WC 255

/* The next completion on @cq within @ms; status NO_WC if none came. */
static inline struct ibv_wc next_wc_within(struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < ms * 10; i++) {
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			return wc;
		usleep(100);
	}
	wc.status = NO_WC;
	return wc;
}

/* The next completion on @cq within 3 s; status NO_WC if none came. */
static inline struct ibv_wc next_wc(struct ibv_cq *cq)
{
	return next_wc_within(cq, 3000);
}

/*
 * @len bytes at @b that depend on each byte's offset and on @seed, so a
 * byte moved, lost or taken from another message shows (fill_seed());
 * whether they are there (filled_seed()).
 */
static inline void __attribute__((unused))
fill_seed(char *b, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (char)(i * 29 + seed);
}

static inline bool __attribute__((unused))
filled_seed(const char *b, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (char)(i * 29 + seed))
			return false;
	return true;
}

/* Open the device called @name, or return NULL. */
static inline struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* IB_UVERBS_DEVICE_ATOMIC_WRITE: libibverbs 44 has no name for it */
#define DEV_ATOMIC_WRITE (1ULL << 40)

/* Whether @ctx's device has ATOMIC WRITE: not where its kernel's verbs lack it (6.1). */
static inline bool dev_has_atomic_write(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex da;

	return !ibv_query_device_ex(ctx, NULL, &da) &&
	       (da.device_cap_flags_ex & DEV_ATOMIC_WRITE);
}

/*
 * Wait up to 3 s for an async event of @type (about @obj, unless NULL),
 * acking every event read: destroying an object waits for its acks.
 */
static inline int wait_async(struct ibv_context *ctx, enum ibv_event_type type,
			     void *obj)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int found = 0;

	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	while (!found && poll(&p, 1, 3000) > 0) {
		if (ibv_get_async_event(ctx, &ev))
			break;
		found = ev.event_type == type &&
			(!obj || ev.element.cq == obj ||
			 (void *)ev.element.qp == obj ||
			 (void *)ev.element.srq == obj);
		ibv_ack_async_event(&ev);
	}
	return found;
}

/* Where qp_rts_path() points a QP, and with what; 0 takes the default. */
struct qp_path {
	uint32_t dest;			/* the peer's QPN (RC, UC) */
	const union ibv_gid *gid;	/* the peer's GID (RC, UC) */
	uint8_t sgid_index;
	enum ibv_mtu mtu;		/* IBV_MTU_1024 */
	uint32_t rq_psn, sq_psn;
	uint32_t qkey;			/* UD: 0x11111111 */
	uint8_t rd_atomic;		/* both directions: 1 */
	uint8_t min_rnr_timer;		/* 1 */
	uint8_t timeout;		/* RC: 14 (67 ms) */
	int access;			/* granted besides the defaults */
};

/*
 * RC's protocol, and its attributes: RC, and XRC's two halves (the core
 * drops those of the attributes that a half has no use for).
 */
static inline bool qp_rc(const struct ibv_qp *qp)
{
	return qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_SEND ||
	       qp->qp_type == IBV_QPT_XRC_RECV;
}

/*
 * @qp from RESET to RTR: RC or UC connected as @p says (port 1), or UD.
 * Remote read, write and atomics are granted, and p->access.  Returns 0,
 * or the errno of the modify that failed.
 */
static inline int qp_rtr_path(struct ibv_qp *qp, const struct qp_path *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qkey = p->qkey ? p->qkey : 0x11111111,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_ATOMIC | p->access,
	};
	bool ud = qp->qp_type == IBV_QPT_UD, rc = qp_rc(qp);
	uint8_t rd = p->rd_atomic ? p->rd_atomic : 1;

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS)))
		return errno ? errno : EIO;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (!ud) {
		a.path_mtu = p->mtu ? p->mtu : IBV_MTU_1024;
		a.dest_qp_num = p->dest;
		a.rq_psn = p->rq_psn;
		a.max_dest_rd_atomic = rd;
		a.min_rnr_timer = p->min_rnr_timer ? p->min_rnr_timer : 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = *p->gid;
		a.ah_attr.grh.sgid_index = p->sgid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
	}
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | (ud ? 0 :
			  IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN) | (rc ? IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER : 0)))
		return errno ? errno : EIO;
	return 0;
}

/* @qp, in RTR by qp_rtr_path() on @p, to RTS */
static inline int qp_rtr_to_rts(struct ibv_qp *qp, const struct qp_path *p)
{
	bool rc = qp_rc(qp);
	uint8_t rd = p->rd_atomic ? p->rd_atomic : 1;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };

	a.sq_psn = p->sq_psn;
	a.timeout = p->timeout ? p->timeout : 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = rd;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | (rc ?
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0)))
		return errno ? errno : EIO;
	return 0;
}

/* @qp from RESET to RTS, as qp_rtr_path() and qp_rtr_to_rts() */
static inline int qp_rts_path(struct ibv_qp *qp, const struct qp_path *p)
{
	return qp_rtr_path(qp, p) ?: qp_rtr_to_rts(qp, p);
}

/* qp_rts_path() to QPN @dest at @gid, with the defaults. */
static inline int qp_rts_to(struct ibv_qp *qp, uint32_t dest,
			    const union ibv_gid *gid)
{
	struct qp_path p = { .dest = dest, .gid = gid };

	return qp_rts_path(qp, &p);
}

/* qp_rts_to() the QP itself */
static inline int qp_self_rts(struct ibv_qp *qp, const union ibv_gid *gid)
{
	return qp_rts_to(qp, qp->qp_num, gid);
}

/*
 * Port 1's counter @name of device @dev, as `rdma statistic` shows it, or
 * -1.  The core keeps what it read for the counters' lifespan (10 ms):
 * read after a pause.
 */
static inline long long port_counter(const char *dev, const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev, name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * A TCP connection to the peer of a two-host test, to trade QP numbers:
 * to @host's @port, or, @host NULL, the first that comes to @port.  A
 * client tries again for @wait_ms (the server may still be setting up its
 * device, or its address).  Returns the socket, or -1 having said
 * why on stderr.
 */
static inline int __attribute__((unused))
tcp_connect(const char *host, const char *port, long long wait_ms)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = host ? 0 : AI_PASSIVE }, *ai;
	struct timespec t0, t;
	int fd, one = 1, e;

	e = getaddrinfo(host, port, &hints, &ai);
	if (e) {
		fprintf(stderr, "%s: %s\n", host ? host : "listen", gai_strerror(e));
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		fd = socket(ai->ai_family, SOCK_STREAM, 0);
		if (fd < 0 || !host || !connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		e = errno;
		close(fd);
		fd = -1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > wait_ms) {
			fprintf(stderr, "connect to %s:%s: %s\n", host, port,
				strerror(e));
			break;
		}
		usleep(100000);
	}
	if (fd >= 0 && !host) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1)) {
			fprintf(stderr, "port %s: %s\n", port, strerror(errno));
			close(fd);
			fd = -1;
		} else {
			e = accept(fd, NULL, NULL);
			if (e < 0)
				fprintf(stderr, "accept: %s\n", strerror(errno));
			close(fd);
			fd = e;
		}
	}
	freeaddrinfo(ai);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/*
 * All @n bytes at @p to (@out) or from socket @fd.  Returns 0, or -1 if
 * the socket failed or the peer closed it (errno 0).
 */
static inline int __attribute__((unused))
tcp_xfer(int fd, void *p, size_t n, bool out)
{
	ssize_t r;

	for (; n; n -= (size_t)r, p = (uint8_t *)p + r) {
		errno = 0;
		r = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
		if (r <= 0)
			return -1;
	}
	return 0;
}

#endif /* VHCA_TESTLIB_H */
