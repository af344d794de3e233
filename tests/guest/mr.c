// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Memory regions through plain libibverbs: keys, access flags and their
 * rules, memory that cannot be pinned as asked, and keys that do not come
 * back after deregistration.  Prints TAP.  Usage: mr DEVICE
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "lib/testlib.h"

static struct ibv_mr *reg(struct ibv_pd *pd, void *addr, size_t len,
			  int access, int *err)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, access);
	*err = mr ? 0 : errno;
	return mr;
}

int main(int argc, char **argv)
{
	const size_t len = 64 << 10;
	struct ibv_context *ctx;
	struct ibv_mr *a, *b, *mr;
	struct ibv_pd *pd;
	uint32_t key;
	char *buf, *ro, *gone;
	int i, err, ok;

	if (argc != 2)
		return 2;
	ctx = open_dev(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	check(pd != NULL, "context and PD on %s", argv[1]);
	if (!pd)
		return tap_done();
	buf = aligned_alloc(4096, len);
	memset(buf, 0, len);

	a = reg(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, &err);
	check(a != NULL, "reg_mr with every access vhca grants (%d)", err);
	b = reg(pd, buf + 4096, 4096, IBV_ACCESS_LOCAL_WRITE, &err);
	check(b != NULL, "a second MR over part of the same buffer (%d)", err);
	if (!a || !b)
		return tap_done();
	check(a->lkey == a->rkey && a->lkey != 0, "lkey == rkey, non-zero (0x%x)",
	      a->lkey);
	check(a->lkey != b->lkey, "two MRs have two keys");
	check(a->addr == buf && a->length == len, "addr and length reported");

	mr = reg(pd, buf, len, IBV_ACCESS_REMOTE_WRITE, &err);
	check(!mr && err == EINVAL, "remote write without local write: EINVAL (%d)", err);
	mr = reg(pd, buf, len, IBV_ACCESS_REMOTE_ATOMIC, &err);
	check(!mr && err == EINVAL, "remote atomic without local write: EINVAL (%d)", err);
	mr = reg(pd, buf, len, IBV_ACCESS_MW_BIND | IBV_ACCESS_LOCAL_WRITE, &err);
	check(mr && !ibv_dereg_mr(mr), "MW_BIND: windows may bind to it (%d)", err);
	/* what one does with it: tests/guest/odp.c */
	mr = reg(pd, buf, len, IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE, &err);
	check(mr && !ibv_dereg_mr(mr), "ON_DEMAND: an ODP MR (%d)", err);
	mr = reg(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE, &err);
	check(!mr && err == EINVAL, "length 0: EINVAL (%d)", err);

	ro = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mr = reg(pd, ro, len, IBV_ACCESS_LOCAL_WRITE, &err);
	check(!mr && err == EFAULT, "local write on read-only memory: EFAULT (%d)", err);
	mr = reg(pd, ro, len, IBV_ACCESS_REMOTE_READ, &err);
	check(mr != NULL, "read-only memory for remote read (%d)", err);
	if (mr)
		ibv_dereg_mr(mr);
	gone = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, len);
	mr = reg(pd, gone, len, IBV_ACCESS_LOCAL_WRITE, &err);
	check(!mr && err == EFAULT, "unmapped memory: EFAULT (%d)", err);

	errno = 0;
	mr = ibv_reg_mr_iova(pd, buf, len, 0x100000000ULL, IBV_ACCESS_LOCAL_WRITE);
	check(mr != NULL, "reg_mr_iova with an iova of its own (%d)", errno);
	if (mr)
		ibv_dereg_mr(mr);

	key = b->lkey;
	check(ibv_dereg_mr(b) == 0, "dereg_mr");
	b = reg(pd, buf + 4096, 4096, IBV_ACCESS_LOCAL_WRITE, &err);
	check(b && b->lkey != key, "a new MR does not get the old key back (0x%x, was 0x%x)",
	      b ? b->lkey : 0, key);
	if (b)
		ibv_dereg_mr(b);

	for (ok = 0, i = 0; i < 500; i++) {
		mr = reg(pd, buf, len, IBV_ACCESS_LOCAL_WRITE, &err);
		ok += mr && ibv_dereg_mr(mr) == 0;
	}
	check(ok == 500, "500 register/deregister rounds (%d)", ok);

	check(ibv_dereg_mr(a) == 0, "dereg_mr");
	check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	check(ibv_close_device(ctx) == 0, "close_device");
	free(buf);
	return tap_done();
}
