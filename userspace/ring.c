// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/* Mapping the kernel's rings. */
#include <errno.h>
#include <sys/mman.h>

#include "provider.h"

/* Map a ring and check that the geometry the kernel gave fits the mapping. */
int vhca_uring_map(struct vhca_uring *r, int cmd_fd, uint64_t key,
		   uint32_t size, uint32_t log2_slots, uint32_t log2_stride)
{
	void *p;

	if (log2_slots > VHCA_RING_MAX_LOG2 || log2_stride > 16 ||
	    (uint64_t)VHCA_RING_HDR_SIZE +
	    ((uint64_t)1 << (log2_slots + log2_stride)) > size)
		return EPROTO;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
		 (off_t)key);
	if (p == MAP_FAILED)
		return errno;
	r->map = p;
	r->map_size = size;
	r->hdr = p;
	r->slots = (unsigned char *)p + VHCA_RING_HDR_SIZE;
	r->log2_slots = log2_slots;
	r->log2_stride = log2_stride;
	r->idx = 0;
	return 0;
}

void vhca_uring_unmap(struct vhca_uring *r)
{
	if (r->map)
		munmap(r->map, r->map_size);
	r->map = NULL;
}
