// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * On-demand paging: user MRs whose pages are not pinned.  The core's
 * ib_umem_odp follows the process's page tables (an MMU interval
 * notifier over the region, hmm_range_fault() to fault pages in); this
 * file keeps vhca's own map of the pages the engine may touch, and the
 * rule that makes that map safe to read without a lock:
 *
 *   reader (the engine, any context)      invalidation (process context)
 *   readers++, full barrier               umem_mutex, inval++, full barrier
 *   inval == 0 and every page mapped?     wait until readers == 0
 *     copy, then readers--                clear the map over the range
 *   else readers--: fault, try again      inval--, umem_mutex released
 *
 * So once the invalidation returns, and the kernel frees or moves a
 * page, no copy into or out of it is under way or can start: a copy that
 * began before waited out, one after finds the page gone.  Faults run in
 * process context (vhca_odp_fault()), outside the engine's RCU section,
 * holding a count on the MR that deregistration waits for.
 */
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/hmm.h>
#include <linux/mmu_notifier.h>
#include <rdma/ib_umem_odp.h>

#include "vhca.h"

/* Bit 0 of an odp_map entry (a struct page pointer): it may be written. */
#define VHCA_ODP_WRITABLE	1UL

/*
 * What a copy maps if the map has no page where it was told there was
 * one: a bug, which must not become a write into someone else's memory.
 */
static struct page *vhca_odp_sink;

/* The index in odp_map of the page holding the MR's byte @va. */
static u64 vhca_odp_index(const struct vhca_mr *mr, u64 va)
{
	return (va - mr->iova + mr->offset) >> PAGE_SHIFT;
}

/*
 * The MMU notifier's callback: a part of the region's address range is
 * about to lose its pages (munmap, migration, swap, copy-on-write after
 * fork).  See the rule at the top.
 */
static bool vhca_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	u64 start, end, first, last;
	struct vhca_mr *mr;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	/* NULL until registration set it: nothing is mapped yet */
	mr = odp->private;
	start = max_t(u64, range->start, ib_umem_start(odp));
	end = min_t(u64, range->end, ib_umem_end(odp));
	if (mr && start < end) {
		atomic_inc(&mr->odp_inval);
		smp_mb__after_atomic();	/* the flag, then the readers' count */
		/*
		 * Each copies 1 MiB at most, with bottom halves off.  Sleep,
		 * not spin: on PREEMPT_RT a reader with bottom halves off
		 * can be preempted, by this thread too.
		 */
		while (atomic_read(&mr->readers))
			usleep_range(10, 50);
		first = (start - ib_umem_start(odp)) >> PAGE_SHIFT;
		last = (end - ib_umem_start(odp)) >> PAGE_SHIFT;
		while (first < last)
			WRITE_ONCE(mr->odp_map[first++], 0);
		ib_umem_odp_unmap_dma_pages(odp, start, end);
		smp_mb__before_atomic();	/* the map, then the flag */
		atomic_dec(&mr->odp_inval);
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops vhca_odp_mni_ops = {
	.invalidate = vhca_odp_invalidate,
};

/**
 * vhca_odp_init_mr() - set up a user MR's memory to be paged on demand
 * @mr: the MR, with @iova, @length and @access set; not yet keyed
 * @start: the user address the region starts at
 * @len: its length
 *
 * Return: 0, or a negative errno (the core's, from ib_umem_odp_get()).
 */
int vhca_odp_init_mr(struct vhca_mr *mr, u64 start, u64 len)
{
	struct ib_umem_odp *odp;
	size_t n;

	odp = ib_umem_odp_get(mr->pd->device, start, len, mr->access,
			      &vhca_odp_mni_ops);
	if (IS_ERR(odp))
		return PTR_ERR(odp);
	n = ib_umem_odp_num_pages(odp);
	mr->odp_map = kvcalloc(n, sizeof(*mr->odp_map), GFP_KERNEL_ACCOUNT);
	if (!mr->odp_map) {
		ib_umem_odp_release(odp);
		return -ENOMEM;
	}
	mr->umem = &odp->umem;
	mr->max_pages = n;
	mr->offset = start - ib_umem_start(odp);
	atomic_set(&mr->odp_users, 1);
	atomic_inc(&to_vdev(mr->pd->device)->nr_odp_mrs);
	mutex_lock(&odp->umem_mutex);
	odp->private = mr;
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/**
 * vhca_odp_release() - tear down what vhca_odp_init_mr() set up
 * @mr: an ODP MR whose key no lookup can find any more (a grace period
 *	after it left the key table)
 *
 * Waits for faults under way.  The notifier goes with the umem, so no
 * invalidation runs after this.
 */
void vhca_odp_release(struct vhca_mr *mr)
{
	if (!atomic_dec_and_test(&mr->odp_users))
		wait_var_event(&mr->odp_users, !atomic_read(&mr->odp_users));
	ib_umem_odp_release(to_ib_umem_odp(mr->umem));
	kvfree(mr->odp_map);
	atomic_dec(&to_vdev(mr->pd->device)->nr_odp_mrs);
}

/**
 * vhca_odp_get() - keep an ODP MR for a fault outside RCU
 * @mr: found under rcu_read_lock()
 *
 * Return: false if its deregistration has begun.
 */
bool vhca_odp_get(struct vhca_mr *mr)
{
	return atomic_inc_not_zero(&mr->odp_users);
}

void vhca_odp_put(struct vhca_mr *mr)
{
	if (atomic_dec_and_test(&mr->odp_users))
		wake_up_var(&mr->odp_users);
}

/**
 * vhca_odp_fault() - fault in the pages behind a range of an ODP MR
 * @mr: the MR, held by vhca_odp_get()
 * @va: the range's first byte, as the MR's users name it
 * @len: its length (at least 1)
 * @write: the pages are to be written (breaks copy-on-write sharing)
 * @fault: fault in what is not there; false maps only the pages the
 *	process has (a prefetch that must not fault)
 *
 * Process context; sleeps (page faults, and I/O for a file or swap).
 *
 * Return: 0, or a negative errno: -EFAULT if the range is not within the
 * MR or a page cannot be had (no mapping there any more, or one that may
 * not be written), -EPERM if the MR does not grant writes.
 */
int vhca_odp_fault(struct vhca_mr *mr, u64 va, u64 len, bool write,
		   bool fault)
{
	struct ib_umem_odp *odp = to_ib_umem_odp(mr->umem);
	u64 first, last, i, uva;
	unsigned long *pfns;
	int ret;

	if (write && !mr->umem->writable)
		return -EPERM;
	if (va < mr->iova || va + len < va || va + len > mr->iova + mr->length)
		return -EFAULT;
	uva = va - mr->iova + mr->umem->address;
	ret = ib_umem_odp_map_dma_and_lock(odp, uva, len,
					   write ? VHCA_ODP_ACCESS_WRITE :
						   VHCA_ODP_ACCESS_READ,
					   fault);
	if (ret < 0)
		return ret == -EBUSY ? -EAGAIN : -EFAULT;
	/* under umem_mutex: no invalidation runs, the pfns are current */
	pfns = vhca_odp_pfns(odp);
	first = (uva - ib_umem_start(odp)) >> PAGE_SHIFT;
	last = (uva + len - 1 - ib_umem_start(odp)) >> PAGE_SHIFT;
	for (i = first; i <= last; i++) {
		unsigned long pfn = pfns[i];

		if (!(pfn & HMM_PFN_VALID))
			continue;
		WRITE_ONCE(mr->odp_map[i],
			   (unsigned long)hmm_pfn_to_page(pfn) |
			   (pfn & HMM_PFN_WRITE ? VHCA_ODP_WRITABLE : 0));
	}
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/**
 * vhca_odp_miss() - a step of the engine found pages of an ODP MR missing
 * @r: the step's faults
 * @f: the pages (from vhca_copy_held() or vhca_cursor_hold())
 *
 * Under rcu_read_lock(), where the MR was found.
 *
 * Return: true if the step is to fault them in (vhca_odp_resolve(), out
 * of RCU: the MR is held) and try again; false if it fails instead: the
 * fault of those pages failed last time, or the MR is going.
 */
bool vhca_odp_miss(struct vhca_odp_retry *r, const struct vhca_fault *f)
{
	if ((r->failed == f->mr && r->failed_write == f->write) ||
	    !vhca_odp_get(f->mr)) {
		r->lost = true;
		return false;
	}
	r->fault = *f;
	r->pending = true;
	return true;
}

/**
 * vhca_odp_resolve() - fault in what vhca_odp_miss() took
 * @r: the step's faults
 *
 * If that fails (nothing mapped there, or not writable), or the pages
 * keep going before the step can copy (VHCA_ODP_TRIES faults in a row),
 * the step's next miss there fails.  Process context, no lock held that
 * an invalidation takes.
 */
void vhca_odp_resolve(struct vhca_odp_retry *r)
{
	struct vhca_fault *f = &r->fault;
	int err;

	r->pending = false;
	err = vhca_odp_fault(f->mr, f->va, f->len, f->write, true);
	vhca_odp_put(f->mr);
	if (err || ++r->faults >= VHCA_ODP_TRIES) {
		r->failed = f->mr;
		r->failed_write = f->write;
	}
	cond_resched();
}

/* The step is over: the next starts with no faults behind it. */
void vhca_odp_retry_reset(struct vhca_odp_retry *r)
{
	r->lost = false;
	r->failed = NULL;
	r->faults = 0;
}

/**
 * vhca_odp_hold() - start a copy into or out of a range of an ODP MR
 * @mr: the MR, found under rcu_read_lock()
 * @va: the range's first byte
 * @len: its length (at least 1)
 * @write: the copy writes the range
 *
 * Bottom halves off until vhca_mr_read_end(): an invalidation spins
 * until the copy is done.
 *
 * Return: true if every page of the range is there (writable if @write)
 * and stays until vhca_mr_read_end(); false, holding nothing, if one must
 * be faulted in first.
 */
bool vhca_odp_hold(struct vhca_mr *mr, u64 va, u32 len, bool write)
{
	u64 i = vhca_odp_index(mr, va), last = vhca_odp_index(mr, va + len - 1);

	atomic_inc(&mr->readers);
	smp_mb__after_atomic();	/* the count, then the invalidation's flag */
	if (atomic_read(&mr->odp_inval) || last >= mr->max_pages)
		goto miss;
	for (; i <= last; i++) {
		unsigned long e = READ_ONCE(mr->odp_map[i]);

		if (!e || (write && !(e & VHCA_ODP_WRITABLE)))
			goto miss;
	}
	return true;
miss:
	atomic_dec(&mr->readers);
	return false;
}

/**
 * vhca_odp_map() - reach the byte at @va of an ODP MR
 * @mr: the MR, held over @va by vhca_odp_hold()
 * @va: the byte
 * @room: set to the bytes that follow it in its page
 *
 * Return: its kernel address; give it back with kunmap_local().
 */
void *vhca_odp_map(struct vhca_mr *mr, u64 va, u32 *room)
{
	u64 off = va - mr->iova + mr->offset;
	u64 idx = min_t(u64, off >> PAGE_SHIFT, mr->max_pages - 1);
	unsigned long e = READ_ONCE(mr->odp_map[idx]);
	struct page *page = (struct page *)(e & ~VHCA_ODP_WRITABLE);

	*room = PAGE_SIZE - offset_in_page(off);
	if (WARN_ON_ONCE(!page))
		page = vhca_odp_sink;
	return kmap_local_page(page) + offset_in_page(off);
}

int vhca_odp_init(void)
{
	vhca_odp_sink = alloc_page(GFP_KERNEL);
	return vhca_odp_sink ? 0 : -ENOMEM;
}

void vhca_odp_exit(void)
{
	__free_page(vhca_odp_sink);
}
