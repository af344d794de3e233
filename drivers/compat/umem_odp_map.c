// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * An ODP umem keeps its HMM pfns in a struct hmm_dma_map (6.16), not in
 * pfn_list and dma_list of its own; an access mask is then HMM's bits.
 */
#include <rdma/ib_umem_odp.h>

unsigned long *vhca_probe(struct ib_umem_odp *odp);
unsigned long *vhca_probe(struct ib_umem_odp *odp)
{
	return odp->map.pfn_list;
}
