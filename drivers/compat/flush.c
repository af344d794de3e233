// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * FLUSH, IBA 1.5's memory placement operation (6.2): its work request and
 * completion opcodes, the device capability and the FETH's values.
 */
#include <rdma/ib_verbs.h>

int vhca_probe(void);
int vhca_probe(void)
{
	return IB_UVERBS_WR_FLUSH + IB_WC_FLUSH + IB_FLUSH_GLOBAL +
	       IB_FLUSH_PERSISTENT + IB_FLUSH_RANGE + IB_FLUSH_MR +
	       !!(IB_DEVICE_FLUSH_GLOBAL & 1);
}
