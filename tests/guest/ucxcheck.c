// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ucxcheck: data carried by UCX between two processes, every byte checked.
 * ucx_perftest measures and never looks at what arrived; this does.  The
 * transports and device are UCX's choice from the environment (UCX_TLS,
 * UCX_NET_DEVICES: tests/guest/lib/clients.sh's ucx_env).
 *
 * Tagged messages go both ways at sizes that take each of UCP's protocols
 * (short, eager copy, eager zero-copy, rendezvous), then the client PUTs
 * into the server's mapped memory (which the server checks, and the bytes
 * around the range too) and GETs from it.  The worker addresses and the
 * remote key travel over a TCP connection, which also carries each step's
 * verdict, so both ends fail on what either one saw.
 *
 *   ucxcheck [-p PORT]           the server: serves one client
 *   ucxcheck [-p PORT] SERVER    the client
 *
 * Prints a TAP line for each check; the exit status is 0 when all passed.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include "lib/testlib.h"

/* the mapped region PUT and GET reach: room for the largest size and an
 * offset that is not a multiple of a word */
#define REGION		(4U << 20)
#define RMA_OFF		13

static const size_t tag_sizes[] = { 1, 8, 200, 4096, 8193, 65536,
				    262144, 4U << 20 };
static const size_t rma_sizes[] = { 8, 4096, 65536, REGION - 2 * RMA_OFF };

static ucp_context_h ucp;
static ucp_worker_h worker;
static ucp_ep_h ep;
static int sock = -1;
static int server;

/* byte @k of message @seed: no period of a page, so a page delivered at
 * the wrong offset does not match */
static uint8_t pat(size_t k, unsigned int seed)
{
	return (uint8_t)(k * 131 + (k >> 8) + seed * 7 + 1);
}

static void fill(uint8_t *b, size_t n, unsigned int seed)
{
	size_t k;

	for (k = 0; k < n; k++)
		b[k] = pat(k, seed);
}

/* the first byte of @b that is not message @seed's, or @n */
static size_t first_bad(const uint8_t *b, size_t n, unsigned int seed)
{
	size_t k;

	for (k = 0; k < n && b[k] == pat(k, seed); k++)
		;
	return k;
}

static int xfer(void *buf, size_t n, bool out)
{
	return tcp_xfer(sock, buf, n, out);
}

/*
 * Wait for @n bytes from the peer over TCP while the worker progresses:
 * a GET or PUT over a transport without RMA (ud_verbs) is carried out by
 * the target's UCP, which must run meanwhile.
 */
static int recv_progress(void *buf, size_t n)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };

	for (;;) {
		ucp_worker_progress(worker);
		if (poll(&p, 1, 0) > 0)
			return xfer(buf, n, false);
		if (p.revents & (POLLERR | POLLHUP))
			return -1;
	}
}

/* Wait for a UCP operation to finish; 0 or -1 */
static int wait_op(ucs_status_ptr_t r, const char *what)
{
	ucs_status_t st;

	if (UCS_PTR_IS_ERR(r)) {
		printf("# %s: %s\n", what, ucs_status_string(UCS_PTR_STATUS(r)));
		return -1;
	}
	if (!r)
		return 0;
	while ((st = ucp_request_check_status(r)) == UCS_INPROGRESS)
		ucp_worker_progress(worker);
	ucp_request_free(r);
	if (st != UCS_OK)
		printf("# %s: %s\n", what, ucs_status_string(st));
	return st == UCS_OK ? 0 : -1;
}

/* Each end's verdict to the other: a step passes when both saw it pass. */
static bool agree(bool mine)
{
	uint8_t me = mine, peer = 0;

	if (xfer(&me, 1, true) || recv_progress(&peer, 1))
		return false;
	return mine && peer;
}

/* a length-prefixed blob each way: the worker address, the remote key */
static int swap_blobs(const void *mine, uint64_t len, void **theirs)
{
	uint64_t n;

	if (xfer(&len, sizeof(len), true) || xfer((void *)mine, len, true) ||
	    xfer(&n, sizeof(n), false) || n > (1U << 20))
		return -1;
	*theirs = malloc(n ? n : 1);
	return *theirs && !xfer(*theirs, n, false) ? 0 : -1;
}

static int ucp_up(void)
{
	ucp_params_t cp = { .field_mask = UCP_PARAM_FIELD_FEATURES,
			    .features = UCP_FEATURE_TAG | UCP_FEATURE_RMA };
	ucp_worker_params_t wp = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	ucp_ep_params_t ep_params = {
		.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
	};
	ucp_address_t *addr;
	size_t alen;
	void *peer;
	int ret;

	if (ucp_init(&cp, NULL, &ucp) != UCS_OK)
		return -1;
	if (ucp_worker_create(ucp, &wp, &worker) != UCS_OK)
		return -1;
	if (ucp_worker_get_address(worker, &addr, &alen) != UCS_OK)
		return -1;
	ret = swap_blobs(addr, alen, &peer);
	ucp_worker_release_address(worker, addr);
	if (ret)
		return -1;
	ep_params.address = peer;
	ret = ucp_ep_create(worker, &ep_params, &ep) == UCS_OK ? 0 : -1;
	free(peer);
	return ret;
}

static int tag_send(const void *b, size_t n, ucp_tag_t tag)
{
	ucp_request_param_t p = { 0 };

	return wait_op(ucp_tag_send_nbx(ep, b, n, tag, &p), "ucp_tag_send_nbx");
}

static int tag_recv(void *b, size_t n, ucp_tag_t tag)
{
	ucp_request_param_t p = { 0 };

	return wait_op(ucp_tag_recv_nbx(worker, b, n, tag, (ucp_tag_t)-1, &p),
		       "ucp_tag_recv_nbx");
}

/* Each size from the client, then from the server, checked where it lands */
static void tag_tests(uint8_t *buf)
{
	unsigned int i;

	for (i = 0; i < sizeof(tag_sizes) / sizeof(tag_sizes[0]); i++) {
		size_t n = tag_sizes[i], bad = n;
		bool ok = true;
		int dir;

		for (dir = 0; dir < 2; dir++) {
			/* first from the client, then from the server */
			bool sender = (dir == 0) != server;
			unsigned int seed = 2 * i + dir;

			if (sender) {
				fill(buf, n, seed);
				ok &= !tag_send(buf, n, seed);
			} else {
				memset(buf, 0, n);
				ok &= !tag_recv(buf, n, seed);
				bad = first_bad(buf, n, seed);
				ok &= bad == n;
			}
		}
		check(agree(ok),
		      "tagged messages of %zu bytes each way, every byte%s",
		      n, ok ? "" : " (a bad byte or a failed operation here)");
		if (bad != n)
			printf("# first bad byte at %zu of %zu\n", bad, n);
	}
}

static int flush_ep(void)
{
	ucp_request_param_t p = { 0 };

	return wait_op(ucp_ep_flush_nbx(ep, &p), "ucp_ep_flush_nbx");
}

/* The client's PUTs land in the server's region, untouched around them. */
static void rma_tests(uint8_t *buf)
{
	ucp_mem_map_params_t mp = {
		.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
			      UCP_MEM_MAP_PARAM_FIELD_LENGTH,
		.length = REGION,
	};
	uint8_t *region = aligned_alloc(4096, REGION);
	ucp_request_param_t p = { 0 };
	ucp_rkey_h rkey = NULL;
	void *packed = NULL, *theirs = NULL;
	uint64_t base = (uintptr_t)region;
	size_t plen = 0;
	ucp_mem_h mem = NULL;
	unsigned int i;
	bool ok;

	mp.address = region;
	/* UCX 1.15 on registers what it may map slowly as ODP (explicit) */
	if (getenv("UCXCHECK_NONBLOCK")) {
		mp.field_mask |= UCP_MEM_MAP_PARAM_FIELD_FLAGS;
		mp.flags = UCP_MEM_MAP_NONBLOCK;
	}
	ok = region && ucp_mem_map(ucp, &mp, &mem) == UCS_OK &&
	     ucp_rkey_pack(ucp, mem, &packed, &plen) == UCS_OK;
	/* the region is registered now: a test may look at its MR here */
	if (ok && getenv("UCXCHECK_ON_MAP"))
		ok = system(getenv("UCXCHECK_ON_MAP")) == 0;
	/* both send theirs; the server's is the one used */
	ok = !swap_blobs(ok ? packed : "", ok ? plen : 0, &theirs) && ok &&
	     !xfer(&base, sizeof(base), true) &&
	     !xfer(&base, sizeof(base), false);
	if (ok && !server)
		ok = ucp_ep_rkey_unpack(ep, theirs, &rkey) == UCS_OK;
	check(agree(ok), "a mapped region each, the server's remote key unpacked");
	if (!ok)
		goto out;

	for (i = 0; i < sizeof(rma_sizes) / sizeof(rma_sizes[0]); i++) {
		size_t n = rma_sizes[i], bad;
		unsigned int seed = 100 + i;

		/* three steps, each ending in both ends' verdict: the region
		 * cleared, the PUT done and flushed, the bytes checked */
		if (server) {
			memset(region, 0, REGION);
			agree(true);
			agree(true);
			bad = first_bad(region + RMA_OFF, n, seed);
			ok = bad == n && !region[RMA_OFF - 1] &&
			     !region[RMA_OFF + n];
			if (bad != n)
				printf("# first bad byte at %zu of %zu\n", bad, n);
		} else {
			ok = agree(true);
			fill(buf, n, seed);
			ok = ok && !wait_op(ucp_put_nbx(ep, buf, n, base + RMA_OFF,
						       rkey, &p), "ucp_put_nbx") &&
			     !flush_ep();
			agree(ok);
		}
		check(agree(ok),
		      "a PUT of %zu bytes lands byte for byte, nothing around it changes",
		      n);
	}

	for (i = 0; i < sizeof(rma_sizes) / sizeof(rma_sizes[0]); i++) {
		size_t n = rma_sizes[i], bad = n;
		unsigned int seed = 200 + i;

		if (server) {
			fill(region + RMA_OFF, n, seed);
			ok = agree(true);	/* ready to be read */
		} else {
			ok = agree(true);
			memset(buf, 0, n);
			ok = ok && !wait_op(ucp_get_nbx(ep, buf, n, base + RMA_OFF,
						       rkey, &p), "ucp_get_nbx");
			bad = first_bad(buf, n, seed);
			ok = ok && bad == n;
			if (bad != n)
				printf("# first bad byte at %zu of %zu\n", bad, n);
		}
		check(agree(ok), "a GET of %zu bytes comes back byte for byte", n);
	}
out:
	if (rkey)
		ucp_rkey_destroy(rkey);
	if (packed)
		ucp_rkey_buffer_release(packed);
	if (mem)
		ucp_mem_unmap(ucp, mem);
	free(theirs);
	free(region);
}

/*
 * UCX before 1.14 crashes in ucp_cleanup() as it releases the implicit
 * ODP MR that UCX_IB_REG_METHODS=odp registers (openucx/ucx#8735, SIGSEGV
 * in uct_ib_md_close): the process's exit releases it then.
 */
static bool ucp_cleanup_crashes(void)
{
	const char *m = getenv("UCX_IB_REG_METHODS");
	unsigned int major, minor, release;

	ucp_get_version(&major, &minor, &release);
	return m && strstr(m, "odp") && major == 1 && minor < 14;
}

/*
 * Both ends said they are done: the worker goes with its endpoint.  A
 * close that flushes would wait for a peer that may be gone already
 * (UCX then reports an endpoint timeout).
 */
static void ucp_down(void)
{
	if (worker)
		ucp_worker_destroy(worker);
	if (ucp && !ucp_cleanup_crashes())
		ucp_cleanup(ucp);
}

int main(int argc, char **argv)
{
	const char *port = "13370";
	uint8_t *buf;
	int opt;

	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt != 'p') {
			fprintf(stderr, "usage: ucxcheck [-p PORT] [SERVER]\n");
			return 2;
		}
		port = optarg;
	}
	server = optind == argc;
	sock = tcp_connect(server ? NULL : argv[optind], port, 60000);
	check(sock >= 0, "%s on TCP port %s", server ? "a client came" :
	      "connected to the server", port);
	if (sock < 0)
		return tap_done();
	buf = aligned_alloc(4096, REGION);
	check(buf && !ucp_up(), "UCP up, the endpoint to the peer made");
	if (!buf || !ep)
		return tap_done();
	tag_tests(buf);
	rma_tests(buf);
	/* neither closes while the other still reads */
	check(agree(true), "both ends done");
	ucp_down();
	free(buf);
	return tap_done();
}
