// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* The uverbs command file: doorbells, raw commands, mmap()s of it. */
#include "ringfuzz.h"

void doorbell(struct fqp *q)
{
	struct vhca_doorbell own, *db;
	struct ib_uverbs_post_send_resp resp;

	if (!q->qp)
		return;
	st.doorbells++;
	if (trace)
		fprintf(stderr, "doorbell qp#%ld\n", (long)(q - qps));
	/* the provider's own POST_SEND with no WR */
	db = &q->v->db;
	/*
	 * It builds none for an XRC_RECV QP, which has no ring; the same
	 * doorbell on its handle still reaches the kernel's QP (a kernel QP
	 * with a send ring nobody fills).
	 */
	if (!has_sq(q)) {
		own = (struct vhca_doorbell){
			.hdr = { .command = IB_USER_VERBS_CMD_POST_SEND,
				 .in_words = sizeof(own) / 4,
				 .out_words = sizeof(resp) / 4 },
			.cmd = { .response = (uintptr_t)&resp,
				 .qp_handle = q->qp->handle,
				 .wqe_size = sizeof(struct ib_uverbs_send_wr) },
		};
		db = &own;
	}
	if (write(ctx->cmd_fd, db, sizeof(*db)) < 0)
		(void)errno;
}

/*
 * What a process can say besides the rings: POST_SEND, POST_RECV and
 * POST_SRQ_RECV with real WRs (a user QP's WQEs live in its rings, so the
 * kernel must refuse them), and mmap() of guessed keys with wrong sizes,
 * flags and protections.
 */
void fuzz_raw(struct fqp *q)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		union {
			struct ib_uverbs_post_send send;
			struct ib_uverbs_post_recv recv;
			struct ib_uverbs_post_srq_recv srq;
		};
		uint64_t wrs[64];
	} c;
	struct ib_uverbs_post_send_resp resp;
	uint32_t nwr = 1 + rnd(3), nsge = rnd(4), i;
	struct fsrq *s;
	size_t wsz;
	int r = rnd(4);

	memset(&c, 0, sizeof(c));
	for (i = 0; i < 64; i++)
		c.wrs[i] = chance(50) ? rnd64() : rnd(4);
	if (r == 0 || r == 1) {
		struct ib_uverbs_send_wr *w = (void *)c.wrs;

		wsz = sizeof(*w);
		c.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
		c.send.qp_handle = q->qp->handle;
		c.send.wr_count = nwr;
		c.send.sge_count = nsge;
		c.send.wqe_size = chance(80) ? wsz : rnd(256);
		for (i = 0; i < nwr && (i + 1) * wsz <= 256; i++) {
			w = (void *)((char *)c.wrs + i * wsz);
			w->opcode = rnd(14);
			w->num_sge = i ? 0 : nsge;
			w->send_flags = rnd(16);
		}
	} else if (r == 2) {
		wsz = sizeof(struct ib_uverbs_recv_wr);
		c.hdr.command = IB_USER_VERBS_CMD_POST_RECV;
		c.recv.qp_handle = q->qp->handle;
		c.recv.wr_count = nwr;
		c.recv.sge_count = nsge;
		c.recv.wqe_size = wsz;
	} else {
		wsz = sizeof(struct ib_uverbs_recv_wr);
		s = recv_srq(q);	/* an XRC QP's: one of the domain's */
		c.hdr.command = IB_USER_VERBS_CMD_POST_SRQ_RECV;
		c.srq.srq_handle = s && s->srq ? s->srq->handle :
				   (uint32_t)rnd64();
		c.srq.wr_count = nwr;
		c.srq.sge_count = nsge;
		c.srq.wqe_size = wsz;
	}
	c.send.response = (uintptr_t)&resp;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	if (trace)
		fprintf(stderr, "raw cmd %u qp#%ld wr_count %u sge_count %u\n",
			c.hdr.command, (long)(q - qps), nwr, nsge);
	st.raw++;
	if (write(ctx->cmd_fd, &c, sizeof(c)) < 0)
		(void)errno;
}

void fuzz_mmap(void)
{
	static const size_t sizes[] = { 4096, 8192, 12288, 65536, 1 << 20 };
	off_t off = (off_t)rnd(512) << 12;
	size_t len = sizes[rnd(5)];
	int prot = PROT_READ | (chance(80) ? PROT_WRITE : 0) |
		   (chance(10) ? PROT_EXEC : 0);
	int flags = chance(85) ? MAP_SHARED : MAP_PRIVATE;
	unsigned char *p;

	if (trace)
		fprintf(stderr, "mmap off %#lx len %#zx prot %d flags %d\n",
			(long)off, len, prot, flags);
	st.mmaps++;
	p = mmap(NULL, len, prot, flags, ctx->cmd_fd, off);
	if (p == MAP_FAILED)
		return;
	st.mmaps_ok++;
	/* someone's ring: scribble on its header, as its owner could */
	if (prot & PROT_WRITE) {
		if (chance(50))
			__atomic_store_n((uint32_t *)p, (uint32_t)rnd64(),
					 __ATOMIC_RELEASE);
		else
			p[rnd(len < 4096 ? len : 4096)] = (unsigned char)rnd(256);
	}
	if (chance(30)) {
		void *n = mremap(p, len, len * 2, MREMAP_MAYMOVE);

		if (n != MAP_FAILED) {
			p = n;
			len *= 2;
		}
	}
	munmap(p, len);
}
