// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* A user buffer by its address is pinned with ib_umem_get_va() (7.x). */
#include <rdma/ib_umem.h>

struct ib_umem *vhca_probe(struct ib_device *dev, unsigned long addr);
struct ib_umem *vhca_probe(struct ib_device *dev, unsigned long addr)
{
	return ib_umem_get_va(dev, addr, PAGE_SIZE, 0);
}
