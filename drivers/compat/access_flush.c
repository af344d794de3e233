// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* FLUSH's access flags, IBA 1.5 (6.2). */
#include <rdma/ib_verbs.h>

int vhca_probe(void);
int vhca_probe(void)
{
	return IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT;
}
