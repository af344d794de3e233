// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* <linux/unaligned.h>, since 6.12; <asm/unaligned.h> before. */
#include <linux/unaligned.h>

u32 vhca_probe(const void *p);
u32 vhca_probe(const void *p)
{
	return get_unaligned_be32(p);
}
