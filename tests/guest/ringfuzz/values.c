// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* The values the WQEs are made of: keys, addresses, lengths, SGE counts. */
#include "ringfuzz.h"

uint32_t any_key(void)
{
	const struct fmr *m = &mrs[rnd(NMR)];
	uint32_t k = m->mr ? m->mr->lkey : 0;

	switch (rnd(10)) {
	case 0:
		return (uint32_t)rnd64();
	case 1:
		return 0;
	case 2:
		return nstale ? stale_keys[rnd(nstale < 16 ? nstale : 16)] : k;
	case 3:
		return k ^ 1;			/* another variant */
	case 4:
		return k + 0x100;		/* the next index */
	case 5:
		return mrs[4].mr ? mrs[4].mr->lkey : k;	/* another PD's */
	default:
		return k;
	}
}

/* An address near (or far from) one of the MRs; @len is what it covers. */
uint64_t any_addr(const struct fmr *m, uint32_t len)
{
	switch (rnd(14)) {
	case 0:
		return rnd64();
	case 1:
		return 0;
	case 2:
		return ~0ULL - rnd(16);
	case 3:
		return m->addr - 1;
	case 4:
		return m->addr + m->len;	/* just past */
	case 5:
		return m->addr + m->len - (len ? len : 1) + 1;	/* one over */
	case 6:
		return m->addr + m->len - (len < m->len ? len : m->len);
	case 7:
		return m->addr + rnd(m->len) + 1;	/* odd, for atomics */
	case 8:
		return (uintptr_t)buf + rnd(BUFSZ);	/* another MR's */
	default:
		return m->addr + (len < m->len ? rnd(m->len - len + 1) & ~7U : 0);
	}
}

uint32_t any_len(const struct fmr *m)
{
	switch (rnd(16)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return 1U << 31;
	case 3:
		return ~0U;
	case 4:
		return (1U << 31) + 1;
	case 5:
		return m->len;
	case 6:
		return m->len + 1;
	case 7:
		return 8;
	case 8:
		return (uint32_t)rnd64();
	case 9:
		return 4096;
	default:
		return 1 + rnd(m->len < 2048 ? m->len : 2048);
	}
}

void fill_sge(struct vhca_sge *s)
{
	const struct fmr *m = &mrs[rnd(NMR)];

	s->length = any_len(m);
	s->addr = any_addr(m, s->length);
	s->lkey = chance(80) && m->mr ? m->mr->lkey : any_key();
}

uint16_t any_num_sge(uint32_t max)
{
	switch (rnd(12)) {
	case 0:
		return 0;
	case 1:
		return max;
	case 2:
		return max + 1;
	case 3:
		return 255;
	case 4:
		return 0xffff;
	case 5:
		return VHCA_MAX_SGE + 1;
	default:
		return 1 + rnd(max < 4 ? max : 4);
	}
}
