// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Rings: how many slots of which stride a ring gets for the sizes a verb
 * asks for and what is reported back, and the memory of rings shared with
 * userspace.  Shared by QPs, SRQs and CQs.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "vhca.h"

static u32 stride_log2(size_t bytes)
{
	return order_base_2(max_t(size_t, bytes, VHCA_WQE_MIN_STRIDE));
}

/**
 * vhca_rq_geometry() - size a receive ring (RQ or SRQ)
 * @max_wr: outstanding receive WRs asked for; 0 is refused
 * @max_sge: SGEs per WR asked for; 0 is taken as 1
 * @max_wr_limit: the object's own max_wr limit (a power of two)
 * @g: filled in on success
 *
 * Slots are max_wr rounded up to a power of two; the WQE stride is the
 * header plus max_sge SGEs rounded up to a power of two.  Because the
 * rounding leaves room, the reported max_sge is what fits in the stride
 * (capped at VHCA_MAX_SGE), and the reported max_wr is the slot count, so
 * both are >= what was asked, as ibv_create_srq(3) promises.
 *
 * Return: 0, or -EINVAL when a size is out of range.
 */
int vhca_rq_geometry(u32 max_wr, u32 max_sge, u32 max_wr_limit,
		     struct vhca_qgeom *g)
{
	size_t hdr = sizeof(struct vhca_rwqe);
	size_t sge = sizeof(struct vhca_sge);
	u32 fit;

	if (!max_wr || max_wr > max_wr_limit || max_sge > VHCA_MAX_SGE)
		return -EINVAL;
	max_sge = max(max_sge, 1U);

	g->log2_slots = order_base_2(max_wr);
	g->log2_stride = stride_log2(hdr + max_sge * sge);
	g->max_wr = 1U << g->log2_slots;
	fit = ((1U << g->log2_stride) - hdr) / sge;
	g->max_sge = min_t(u32, fit, VHCA_MAX_SGE);
	return 0;
}

/**
 * vhca_sq_geometry() - size a send ring
 * @max_wr: outstanding send WRs asked for; 0 gets one slot
 * @max_sge: SGEs per WR asked for
 * @max_inline: inline bytes per WR asked for
 * @max_wr_limit: the QP's max_wr limit (a power of two)
 * @g: filled in on success
 * @inline_cap: filled in with the inline bytes a WQE can carry
 *
 * A send WQE is a VHCA_SWQE_HDR_SIZE header, then either the SGEs or the
 * inline data, so the stride covers the larger of the two and whatever the
 * rounding leaves is reported back as extra SGEs and inline room.
 *
 * Return: 0, or -EINVAL when a size is out of range.
 */
int vhca_sq_geometry(u32 max_wr, u32 max_sge, u32 max_inline,
		     u32 max_wr_limit, struct vhca_qgeom *g, u32 *inline_cap)
{
	size_t sge = sizeof(struct vhca_sge);
	u32 room;

	if (max_wr > max_wr_limit || max_sge > VHCA_MAX_SGE ||
	    max_inline > VHCA_MAX_INLINE)
		return -EINVAL;
	max_wr = max(max_wr, 1U);
	max_sge = max(max_sge, 1U);

	g->log2_slots = order_base_2(max_wr);
	g->log2_stride = stride_log2(VHCA_SWQE_HDR_SIZE +
				     max_t(size_t, max_sge * sge, max_inline));
	g->max_wr = 1U << g->log2_slots;
	room = (1U << g->log2_stride) - VHCA_SWQE_HDR_SIZE;
	g->max_sge = min_t(u32, room / sge, VHCA_MAX_SGE);
	*inline_cap = min_t(u32, room, VHCA_MAX_INLINE);
	return 0;
}

/**
 * vhca_cq_geometry() - size a completion ring
 * @cqe: completions asked for; 0 is refused
 * @g: filled in on success; max_wr is the CQE count to report
 *
 * Return: 0, or -EINVAL when @cqe is out of range.
 */
int vhca_cq_geometry(u32 cqe, struct vhca_qgeom *g)
{
	if (!cqe || cqe > VHCA_MAX_CQE)
		return -EINVAL;
	g->log2_slots = order_base_2(cqe);
	g->log2_stride = ilog2(VHCA_CQE_STRIDE);
	g->max_wr = 1U << g->log2_slots;
	g->max_sge = 0;
	return 0;
}

/* Bytes to allocate and map for a ring: header plus slots, whole pages. */
size_t vhca_ring_bytes(const struct vhca_qgeom *g)
{
	return PAGE_ALIGN(VHCA_RING_HDR_SIZE +
			  ((size_t)1 << (g->log2_slots + g->log2_stride)));
}

/*
 * Rings whose entry is gone while a process still maps their pages: it
 * kept a mapping past destroy (nothing makes it unmap), or the device
 * went away under it.  Their pages stay charged to that process's
 * pinned_vm until the last mapping goes, or it could pin without bound
 * by creating, mapping and destroying rings in a loop.  A driver is not
 * told when a page it inserted is unmapped, so a work looks again.
 */
static LIST_HEAD(vhca_lingering);
static DEFINE_SPINLOCK(vhca_lingering_lock);
static void vhca_lingering_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(vhca_lingering_work, vhca_lingering_reap);
/*
 * How long a lingering ring waits to be looked at again: a process that
 * unmaps gets its RLIMIT_MEMLOCK back within a second, and a scan of
 * every lingering page costs little once a second.
 */
#define VHCA_LINGER_SCAN	HZ

static bool vhca_umap_mapped(const struct vhca_umap *m)
{
	unsigned int i;

	for (i = 0; i < m->npages; i++)
		if (folio_mapped(page_folio(m->pages[i])))
			return true;
	return false;
}

static void vhca_umap_release(struct vhca_umap *m)
{
	unsigned int i;

	for (i = 0; i < m->npages; i++)
		__free_page(m->pages[i]);
	kvfree(m->pages);
	if (m->mm) {
		atomic64_sub(m->npages, &m->mm->pinned_vm);
		mmdrop(m->mm);
	}
	kfree(m);
}

/* Release the lingering rings nobody maps any more; true if some remain. */
static bool vhca_lingering_collect(void)
{
	struct vhca_umap *m, *next;
	LIST_HEAD(done);
	bool more;

	spin_lock(&vhca_lingering_lock);
	list_for_each_entry_safe(m, next, &vhca_lingering, linger)
		if (!vhca_umap_mapped(m))
			list_move(&m->linger, &done);
	more = !list_empty(&vhca_lingering);
	spin_unlock(&vhca_lingering_lock);
	list_for_each_entry_safe(m, next, &done, linger)
		vhca_umap_release(m);
	return more;
}

static void vhca_lingering_reap(struct work_struct *work)
{
	if (vhca_lingering_collect())
		schedule_delayed_work(&vhca_lingering_work, VHCA_LINGER_SCAN);
}

/*
 * Charge @npages to the current process's pinned_vm.  The provider
 * unmaps a ring just after its object is destroyed, so its charge
 * lingers until the next scan: over the limit, collect first, so that a
 * process creating and destroying rings in turn never fails for the
 * charge of a ring it no longer maps.
 */
static bool vhca_umap_charge(unsigned int npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	atomic64_t *pinned = &current->mm->pinned_vm;

	if (atomic64_add_return(npages, pinned) <= limit ||
	    capable(CAP_IPC_LOCK))
		return true;
	atomic64_sub(npages, pinned);
	vhca_lingering_collect();
	if (atomic64_add_return(npages, pinned) <= limit)
		return true;
	atomic64_sub(npages, pinned);
	return false;
}

/*
 * The memory of a user's ring, @npages pages: charged to the caller's
 * memory cgroup page by page, and to its mm's pinned_vm against
 * RLIMIT_MEMLOCK (CAP_IPC_LOCK lifts that), so that no process can tie
 * up more of the kernel's memory in rings than it could pin in MRs.
 */
static struct vhca_umap *vhca_umap_alloc(unsigned int npages)
{
	struct vhca_umap *m;
	unsigned int i;

	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->pages = kvcalloc(npages, sizeof(*m->pages), GFP_KERNEL_ACCOUNT);
	if (!m->pages)
		goto err;
	for (i = 0; i < npages; i++) {
		m->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!m->pages[i])
			goto err;
		m->npages++;
	}
	if (!vhca_umap_charge(npages))
		goto err;
	m->mm = current->mm;	/* charged: uncharged when freed */
	mmgrab(m->mm);
	m->buf = vmap(m->pages, npages, VM_MAP, PAGE_KERNEL);
	if (m->buf)
		return m;
err:
	vhca_mmap_free(&m->rdma);
	return ERR_PTR(-ENOMEM);
}

/**
 * vhca_uring_create() - allocate a ring and offer it to a user context
 * @r: the ring to fill in
 * @uctx: the context that may map it, or NULL for a kernel object's ring
 * @g: its geometry
 *
 * The memory is zeroed, so both indices start at 0.  Userspace maps it
 * with the key vhca_uring_key() returns.  A kernel object's ring has the
 * same layout; only the kernel ever sees it.
 *
 * Return: 0 or a negative errno.
 */
int vhca_uring_create(struct vhca_uring *r, struct ib_ucontext *uctx,
		      const struct vhca_qgeom *g)
{
	size_t bytes = vhca_ring_bytes(g);
	struct vhca_umap *m;
	int err;

	if (!uctx) {
		/*
		 * Accounted, as a user's XRC_RECV QP has a kernel ring; a
		 * failure is the caller's -ENOMEM, not a warning.
		 */
		r->hdr = __vmalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
				   __GFP_NOWARN);
		if (!r->hdr)
			return -ENOMEM;
		r->g = *g;
		r->bytes = bytes;
		r->umap = NULL;
		return 0;
	}
	m = vhca_umap_alloc(bytes >> PAGE_SHIFT);
	if (IS_ERR(m))
		return PTR_ERR(m);
	err = rdma_user_mmap_entry_insert(uctx, &m->rdma, bytes);
	if (err) {
		vhca_mmap_free(&m->rdma);
		return err;
	}
	r->g = *g;
	r->hdr = m->buf;
	r->bytes = bytes;
	r->umap = m;
	return 0;
}

/*
 * Withdraw the ring from its context.  The memory goes when the last
 * reference to the entry does; pages a process still has mapped stay
 * alive until it unmaps them, but nothing of the kernel's uses them.
 */
void vhca_uring_destroy(struct vhca_uring *r)
{
	if (r->umap)
		rdma_user_mmap_entry_remove(&r->umap->rdma);
	else
		vfree(r->hdr);
	r->umap = NULL;
	r->hdr = NULL;
}

/**
 * vhca_ring_move() - move a ring's entries into a new, larger ring
 * @to: the new ring, empty, of the same stride
 * @from: the old ring
 * @cons: @from's consumer index (a user's index is checked here)
 * @prod: @from's producer index (likewise)
 *
 * Entries [cons, prod) of @from become [0, n) of @to, in order, and @to's
 * indices are set to show them.  Used by resize, under the locks of both
 * sides of the ring.
 *
 * Return: n, or -EINVAL when the indices are impossible or the entries do
 * not fit (a resize never drops what was posted or produced).
 */
int vhca_ring_move(struct vhca_uring *to, const struct vhca_uring *from,
		   u32 cons, u32 prod)
{
	u32 n = vhca_ring_used(prod, cons), i;

	if (!vhca_ring_sane(prod, cons, from->g.log2_slots) ||
	    n > (1U << to->g.log2_slots) ||
	    to->g.log2_stride != from->g.log2_stride)
		return -EINVAL;
	for (i = 0; i < n; i++)
		memcpy(vhca_uring_slot(to, i), vhca_uring_slot(from, cons + i),
		       1U << from->g.log2_stride);
	WRITE_ONCE(to->hdr->consumer, 0);
	/* Release: the entries are in place before the index shows them. */
	smp_store_release(&to->hdr->producer, n);
	return n;
}

u64 vhca_uring_key(const struct vhca_uring *r)
{
	return rdma_user_mmap_get_offset(&r->umap->rdma);
}

/**
 * vhca_mmap() - map a ring for userspace
 * @uctx: the context
 * @vma: the mapping; its offset must be a key of this context and its
 *	size the ring's, MAP_SHARED (rdma_user_mmap_entry_get checks both)
 *
 * Return: 0, or -EINVAL for an unknown key or a wrong size or sharing,
 * -EPERM for an executable mapping.
 */
int vhca_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *e;
	struct vhca_umap *m;
	int err;

	e = rdma_user_mmap_entry_get(uctx, vma);
	if (!e)
		return -EINVAL;
	m = container_of(e, struct vhca_umap, rdma);
	if (vma->vm_flags & VM_EXEC) {
		err = -EPERM;
	} else {
		unsigned long n = m->npages;

		vhca_vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP, VM_MAYEXEC);
		err = vm_insert_pages(vma, vma->vm_start, m->pages, &n);
	}
	rdma_user_mmap_entry_put(e);
	return err;
}

/*
 * The last reference to a ring's entry is gone (or a ring was never
 * made whole): the kernel's mapping goes at once; its pages and their
 * charge go now, or once no process maps them.  No new mapping can
 * start: the entry is gone.  Any context a mapping is closed from,
 * mmap_lock included: only a spinlock is taken.
 */
void vhca_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct vhca_umap *m = container_of(entry, struct vhca_umap, rdma);

	if (m->buf)
		vunmap(m->buf);
	m->buf = NULL;
	if (!m->mm || !vhca_umap_mapped(m)) {
		vhca_umap_release(m);
		return;
	}
	spin_lock(&vhca_lingering_lock);
	list_add_tail(&m->linger, &vhca_lingering);
	spin_unlock(&vhca_lingering_lock);
	schedule_delayed_work(&vhca_lingering_work, VHCA_LINGER_SCAN);
}

/**
 * vhca_ring_exit() - give back what lingering rings hold, at module exit
 *
 * Their pages stay alive for as long as a process maps them (each
 * mapping holds a reference to its page); only the charge goes early.
 */
void vhca_ring_exit(void)
{
	struct vhca_umap *m, *next;

	cancel_delayed_work_sync(&vhca_lingering_work);
	list_for_each_entry_safe(m, next, &vhca_lingering, linger) {
		list_del(&m->linger);
		vhca_umap_release(m);
	}
}
