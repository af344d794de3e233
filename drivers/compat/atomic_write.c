// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* IBA 1.5's ATOMIC WRITE in the verbs: opcode, completion, capability (6.2). */
#include <rdma/ib_verbs.h>

int vhca_probe(void);
int vhca_probe(void)
{
	return IB_UVERBS_WR_ATOMIC_WRITE + IB_WC_ATOMIC_WRITE +
	       !!(IB_DEVICE_ATOMIC_WRITE & 1);
}
