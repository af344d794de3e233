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
 *
 * An implicit ODP MR (address 0, length SIZE_MAX: the whole address
 * space, iova the user address) has a root umem with no pages; each
 * VHCA_ODP_KID_SIZE range the engine faults in gets a child umem, with
 * its notifier and its map (struct vhca_odp_kid), found by address in an
 * xarray.  The rule above holds with the MR's counters for all of them.
 * A child whose pages have all gone (the process unmapped or dropped its
 * range) is freed by a work item (vhca_odp_reap()), as mlx5 frees its
 * implicit children: a process that maps and unmaps as it runs keeps no
 * more children than it has memory in use.
 */
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/hmm.h>
#include <linux/mmu_notifier.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem_odp.h>

#include "vhca.h"

/* Bit 0 of an odp_map entry (a struct page pointer): it may be written. */
#define VHCA_ODP_WRITABLE	1UL

/*
 * What a copy maps if the map has no page where it was told there was
 * one: a bug, which must not become a write into someone else's memory.
 */
static struct page *vhca_odp_sink;

/*
 * An implicit MR's child: 16 MiB of address space, whose map (4096
 * entries, 32 KiB) and the core's pfn and DMA lists (as much again each)
 * exist once the engine faulted a page of it in.
 */
#define VHCA_ODP_KID_SHIFT	24
#define VHCA_ODP_KID_PAGES	(1UL << (VHCA_ODP_KID_SHIFT - PAGE_SHIFT))
/*
 * Children of one implicit MR at most at once: 64 GiB of address space
 * faulted in, about 400 MiB of kernel memory.  A process reaches the cap
 * by keeping a page mapped in each 16 MiB of a large sparse mapping; past
 * it, a fault fails (an access error).  Children whose pages are gone do
 * not count once vhca_odp_reap() freed them.
 */
#define VHCA_ODP_MAX_KIDS	4096

/**
 * struct vhca_odp_kid - an implicit MR's child
 * @odp: its umem
 * @mr: the implicit MR
 * @mapped: entries of @map that hold a page, under @odp's umem_mutex
 * @next: on vhca_odp_reap()'s list of children to free
 * @map: the engine's map of its pages, as an explicit MR's odp_map
 */
struct vhca_odp_kid {
	struct ib_umem_odp *odp;
	struct vhca_mr *mr;
	unsigned long mapped;
	struct vhca_odp_kid *next;
	unsigned long map[];
};

/**
 * struct vhca_odp_tree - an implicit MR's children
 * @kids: by address >> VHCA_ODP_KID_SHIFT; read under RCU, freed a grace
 *	period after they leave it
 * @lock: serialises adding one
 * @sem: faults (read) against freeing children (write): a fault uses a
 *	child it found outside RCU
 * @nr: how many there are
 * @dying: the MR is going: no child is freed but by it
 * @reap: frees the children with no page left (vhca_odp_reap())
 */
struct vhca_odp_tree {
	struct xarray kids;
	struct mutex lock;	/* adding a child */
	struct rw_semaphore sem;
	unsigned int nr;
	bool dying;
	struct work_struct reap;
};

/* The index in odp_map of the page holding the MR's byte @va. */
static u64 vhca_odp_index(const struct vhca_mr *mr, u64 va)
{
	return (va - mr->iova + mr->offset) >> PAGE_SHIFT;
}

/*
 * The map's entry for page @idx of @mr (vhca_odp_index()); for an implicit
 * MR, page @idx of the address space, 0 where no child is.  Under RCU, or
 * with the MR held.
 */
static unsigned long vhca_odp_entry(const struct vhca_mr *mr, u64 idx)
{
	struct vhca_odp_kid *kid;

	if (!mr->odp_tree)
		return READ_ONCE(mr->odp_map[idx]);
	kid = xa_load(&mr->odp_tree->kids,
		      idx >> (VHCA_ODP_KID_SHIFT - PAGE_SHIFT));
	return kid ? READ_ONCE(kid->map[idx & (VHCA_ODP_KID_PAGES - 1)]) : 0;
}

/*
 * An MMU notifier's callback: a part of a umem's address range is about
 * to lose its pages (munmap, migration, swap, copy-on-write after fork).
 * See the rule at the top.  @kid: the umem is an implicit MR's child.
 */
static bool vhca_odp_inval(struct mmu_interval_notifier *mni,
			   const struct mmu_notifier_range *range,
			   unsigned long cur_seq, bool kid)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct vhca_odp_kid *k = NULL;
	u64 start, end, first, last;
	unsigned long *map;
	struct vhca_mr *mr;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	/* NULL until registration set it: nothing is mapped yet */
	if (kid) {
		k = odp->private;
		mr = k ? k->mr : NULL;
		map = k ? k->map : NULL;
	} else {
		mr = odp->private;
		map = mr ? mr->odp_map : NULL;
	}
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
		for (; first < last; first++) {
			if (kid && map[first])
				k->mapped--;
			WRITE_ONCE(map[first], 0);
		}
		ib_umem_odp_unmap_dma_pages(odp, start, end);
		smp_mb__before_atomic();	/* the map, then the flag */
		atomic_dec(&mr->odp_inval);
		/* not here: freeing a child waits for its notifier */
		if (kid && !k->mapped)
			queue_work(system_unbound_wq, &mr->odp_tree->reap);
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static bool vhca_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	return vhca_odp_inval(mni, range, cur_seq, false);
}

static bool vhca_odp_kid_invalidate(struct mmu_interval_notifier *mni,
				    const struct mmu_notifier_range *range,
				    unsigned long cur_seq)
{
	return vhca_odp_inval(mni, range, cur_seq, true);
}

static const struct mmu_interval_notifier_ops vhca_odp_mni_ops = {
	.invalidate = vhca_odp_invalidate,
};

static const struct mmu_interval_notifier_ops vhca_odp_kid_ops = {
	.invalidate = vhca_odp_kid_invalidate,
};

/* Whether @start, @len is the whole address space: an implicit MR. */
static bool vhca_odp_implicit(u64 start, u64 len)
{
	return !start && len == U64_MAX;
}

/*
 * vhca_odp_reap() - free an implicit MR's children whose pages are gone
 * @work: the tree's reap
 *
 * A child is taken out of the tree while no fault runs (the tree's sem),
 * and freed a grace period later: a reader in the engine that found it
 * under RCU is done with it then.  A fault after finds no child there and
 * adds a new one.
 */
static void vhca_odp_reap(struct work_struct *work)
{
	struct vhca_odp_tree *t = container_of(work, struct vhca_odp_tree,
					       reap);
	struct vhca_odp_kid *kid, *gone = NULL;
	unsigned long i;
	bool idle;

	down_write(&t->sem);
	/* dying is set under the sem: vhca_odp_release_implicit() frees them */
	xa_for_each(&t->kids, i, kid) {
		if (t->dying)
			break;
		mutex_lock(&kid->odp->umem_mutex);
		idle = !kid->mapped;
		mutex_unlock(&kid->odp->umem_mutex);
		if (!idle)
			continue;
		xa_erase(&t->kids, i);
		t->nr--;
		kid->next = gone;
		gone = kid;
	}
	up_write(&t->sem);
	if (!gone)
		return;
	synchronize_rcu();
	while (gone) {
		kid = gone;
		gone = kid->next;
		ib_umem_odp_release(kid->odp);
		kvfree(kid);
	}
}

/* Set up an implicit MR: its root umem, and no child yet. */
static int vhca_odp_init_implicit(struct vhca_mr *mr)
{
	struct ib_umem_odp *odp;

	if (mr->iova)
		return -EINVAL;
	mr->odp_tree = kzalloc(sizeof(*mr->odp_tree), GFP_KERNEL_ACCOUNT);
	if (!mr->odp_tree)
		return -ENOMEM;
	odp = ib_umem_odp_alloc_implicit(mr->pd->device, mr->access);
	if (IS_ERR(odp)) {
		kfree(mr->odp_tree);
		mr->odp_tree = NULL;
		return PTR_ERR(odp);
	}
	xa_init(&mr->odp_tree->kids);
	mutex_init(&mr->odp_tree->lock);
	init_rwsem(&mr->odp_tree->sem);
	INIT_WORK(&mr->odp_tree->reap, vhca_odp_reap);
	mr->umem = &odp->umem;
	return 0;
}

/*
 * Tear down an implicit MR's children, then its root; no fault runs any
 * more.  A reap under way finishes first; one that a child's notifier
 * queues until its umem is released finds the tree dying and frees
 * nothing.
 */
static void vhca_odp_release_implicit(struct vhca_mr *mr)
{
	struct vhca_odp_tree *t = mr->odp_tree;
	struct vhca_odp_kid *kid;
	unsigned long i;

	down_write(&t->sem);
	t->dying = true;
	up_write(&t->sem);
	cancel_work_sync(&t->reap);
	xa_for_each(&t->kids, i, kid) {
		ib_umem_odp_release(kid->odp);
		kvfree(kid);
	}
	cancel_work_sync(&t->reap);
	xa_destroy(&t->kids);
	mutex_destroy(&t->lock);
	kfree(t);
	ib_umem_odp_release(to_ib_umem_odp(mr->umem));
}

/*
 * The child of implicit MR @mr over @va, added if there is none.  Process
 * context.  Returns an ERR_PTR: -ENOSPC past VHCA_ODP_MAX_KIDS, or the
 * core's error (-EFAULT once the process is exiting).
 */
static struct vhca_odp_kid *vhca_odp_kid_get(struct vhca_mr *mr, u64 va)
{
	struct vhca_odp_tree *t = mr->odp_tree;
	unsigned long idx = va >> VHCA_ODP_KID_SHIFT;
	struct vhca_odp_kid *kid;
	struct ib_umem_odp *odp;
	int err;

	kid = xa_load(&t->kids, idx);
	if (kid)
		return kid;
	mutex_lock(&t->lock);
	kid = xa_load(&t->kids, idx);
	if (kid)
		goto out;
	kid = ERR_PTR(-ENOSPC);
	if (t->nr >= VHCA_ODP_MAX_KIDS)
		goto out;
	kid = kvzalloc(struct_size(kid, map, VHCA_ODP_KID_PAGES),
		       GFP_KERNEL_ACCOUNT);
	if (!kid) {
		kid = ERR_PTR(-ENOMEM);
		goto out;
	}
	odp = ib_umem_odp_alloc_child(to_ib_umem_odp(mr->umem),
				      idx << VHCA_ODP_KID_SHIFT,
				      1UL << VHCA_ODP_KID_SHIFT,
				      &vhca_odp_kid_ops);
	if (IS_ERR(odp)) {
		kvfree(kid);
		kid = ERR_CAST(odp);
		goto out;
	}
	kid->odp = odp;
	kid->mr = mr;
	mutex_lock(&odp->umem_mutex);
	odp->private = kid;
	mutex_unlock(&odp->umem_mutex);
	/* the map is set up before a reader can find it */
	err = xa_insert(&t->kids, idx, kid, GFP_KERNEL_ACCOUNT);
	if (err) {
		ib_umem_odp_release(odp);
		kvfree(kid);
		kid = ERR_PTR(err);
		goto out;
	}
	t->nr++;
out:
	mutex_unlock(&t->lock);
	return kid;
}

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
	int err;

	if (vhca_odp_implicit(start, len)) {
		err = vhca_odp_init_implicit(mr);
		if (err)
			return err;
		goto done;
	}
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
	mutex_lock(&odp->umem_mutex);
	odp->private = mr;
	mutex_unlock(&odp->umem_mutex);
done:
	atomic_set(&mr->odp_users, 1);
	atomic_inc(&to_vpd(mr->pd)->nr_odp_mrs);
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
	if (mr->odp_tree)
		vhca_odp_release_implicit(mr);
	else
		ib_umem_odp_release(to_ib_umem_odp(mr->umem));
	kvfree(mr->odp_map);
	atomic_dec(&to_vpd(mr->pd)->nr_odp_mrs);
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

/*
 * Fault in @len bytes at user address @uva of @odp, and put the pages in
 * @map, the engine's map of that umem; @mapped (a child's, or NULL)
 * counts the entries that hold one.  Returns 0 or a negative errno.
 */
static int vhca_odp_fill(struct ib_umem_odp *odp, unsigned long *map,
			 unsigned long *mapped, u64 uva, u64 len, bool write,
			 bool fault)
{
	u64 first, last, i;
	unsigned long *pfns;
	int ret;

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
		if (mapped && !map[i])
			(*mapped)++;
		WRITE_ONCE(map[i],
			   (unsigned long)hmm_pfn_to_page(pfn) |
			   (pfn & HMM_PFN_WRITE ? VHCA_ODP_WRITABLE : 0));
	}
	mutex_unlock(&odp->umem_mutex);
	return 0;
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
 * Process context; sleeps (page faults, and I/O for a file or swap).  An
 * implicit MR's range is faulted in child by child, each added as needed.
 *
 * Return: 0, or a negative errno: -EFAULT if the range is not within the
 * MR or a page cannot be had (no mapping there any more, or one that may
 * not be written; an implicit MR at its VHCA_ODP_MAX_KIDS), -EPERM if the
 * MR does not grant writes.
 */
int vhca_odp_fault(struct vhca_mr *mr, u64 va, u64 len, bool write,
		   bool fault)
{
	struct vhca_odp_kid *kid;
	u64 uva, n;
	int err;

	if (write && !mr->umem->writable)
		return -EPERM;
	if (va < mr->iova || va + len < va || va + len > mr->iova + mr->length)
		return -EFAULT;
	uva = va - mr->iova + mr->umem->address;
	if (!mr->odp_tree)
		return vhca_odp_fill(to_ib_umem_odp(mr->umem), mr->odp_map,
				     NULL, uva, len, write, fault);
	err = 0;
	down_read(&mr->odp_tree->sem);
	for (; len && !err; uva += n, len -= n) {
		n = min_t(u64, len, round_up(uva + 1, 1UL << VHCA_ODP_KID_SHIFT) -
				    uva);
		kid = vhca_odp_kid_get(mr, uva);
		err = IS_ERR(kid) ? -EFAULT :
		      vhca_odp_fill(kid->odp, kid->map, &kid->mapped, uva, n,
				    write, fault);
	}
	up_read(&mr->odp_tree->sem);
	return err;
}

/**
 * vhca_odp_children() - how many children an implicit ODP MR has
 * @mr: the MR, held
 *
 * Return: the count (as the last change left it), or 0 for any other MR.
 */
unsigned int vhca_odp_children(const struct vhca_mr *mr)
{
	return mr->odp_tree ? READ_ONCE(mr->odp_tree->nr) : 0;
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
	u64 i, last;
	unsigned long e;

	atomic_inc(&mr->readers);
	smp_mb__after_atomic();	/* the count, then the invalidation's flag */
	if (atomic_read(&mr->odp_inval))
		goto miss;
	/* an implicit MR's index is the address space's: no bound */
	i = vhca_odp_index(mr, va);
	last = vhca_odp_index(mr, va + len - 1);
	if (!mr->odp_tree && last >= mr->max_pages)
		goto miss;
	for (; i <= last; i++) {
		e = vhca_odp_entry(mr, i);
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
	u64 idx = mr->odp_tree ? off >> PAGE_SHIFT :
		  min_t(u64, off >> PAGE_SHIFT, mr->max_pages - 1);
	unsigned long e = vhca_odp_entry(mr, idx);
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
