// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* The ODP capability bit of ATOMIC WRITE on ODP MRs (6.16). */
#include <rdma/ib_verbs.h>

int vhca_probe(void);
int vhca_probe(void)
{
	return IB_ODP_SUPPORT_ATOMIC_WRITE;
}
