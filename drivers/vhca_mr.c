// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Memory regions: pinned user memory, the kernel's DMA MR and fast-register
 * MRs, and how the engine reaches a byte of each.
 *
 * vhca's DMA addresses are kernel virtual addresses (the core's virtual DMA
 * mapping: the device has no dma_device), so a DMA MR and a fast-register
 * page list name kernel memory directly.  Only kernel users can create
 * either, and a key works only in its own PD, so no user QP can name one.
 */
#include <linux/highmem.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "vhca.h"

/*
 * What a vhca MR can grant; the core has already checked the combination.
 * MW_BIND lets windows be bound to it (pinned user MRs only: see
 * vhca_mw.c).  ON_DEMAND: its pages are faulted in as the engine needs
 * them (vhca_odp.c).
 */
#define VHCA_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			IB_ACCESS_RELAXED_ORDERING | IB_ACCESS_MW_BIND | \
			VHCA_ACCESS_FLUSH_GLOBAL | IB_ACCESS_ON_DEMAND)

/*
 * A key's entry if @key is valid and it grants @access in @pd; an ODP MR
 * only if @access has VHCA_FIND_ODP.
 */
static struct vhca_mr *vhca_key_get(struct vhca_dev *vdev, u32 key,
				    struct ib_pd *pd, int access, u64 va,
				    u32 len)
{
	struct vhca_mr *mr = xa_load(&vdev->mr_xa, key >> 8);
	bool odp = access & VHCA_FIND_ODP;

	access &= ~VHCA_FIND_ODP;

	/*
	 * Acquire pairs with the release of REG_MR and of a window's bind:
	 * the fields, then the key.
	 */
	if (!mr || smp_load_acquire(&mr->key) != key ||
	    READ_ONCE(mr->pd) != pd ||
	    (READ_ONCE(mr->access) & access) != access || va + len < va ||
	    (mr->type == VHCA_MR_ODP && !odp))
		return NULL;
	return mr;
}

/* Whether [va, va + len) lies within what @mr covers. */
static bool vhca_key_covers(const struct vhca_mr *mr, u64 va, u32 len)
{
	u64 iova;

	if (mr->type == VHCA_MR_DMA)
		return true;
	iova = READ_ONCE(mr->iova);
	return va >= iova && va + len <= iova + READ_ONCE(mr->length);
}

/**
 * vhca_mr_find() - the MR an lkey names, if it may be used so
 * @vdev: the device
 * @key: an lkey
 * @pd: the PD of the QP using it
 * @access: IB_ACCESS_* the use needs, and VHCA_FIND_ODP if an ODP MR will do
 * @va: the first byte used
 * @len: bytes used
 *
 * A window's rkey is no lkey: windows are for remote access only.
 * Caller holds rcu_read_lock().
 *
 * Return: the MR, or NULL unless @key is a valid key of an MR in @pd that
 * grants @access over [va, va + len).
 */
struct vhca_mr *vhca_mr_find(struct vhca_dev *vdev, u32 key, struct ib_pd *pd,
			     int access, u64 va, u32 len)
{
	struct vhca_mr *mr = vhca_key_get(vdev, key, pd, access, va, len);

	if (!mr || mr->type == VHCA_MR_MW || !vhca_key_covers(mr, va, len))
		return NULL;
	return mr;
}

/**
 * vhca_mr_find_remote() - the MR or window an rkey names for a remote peer
 * @vdev: the device
 * @key: the rkey a request carried
 * @qp: the QP the request arrived on
 * @access: IB_ACCESS_REMOTE_* the request needs
 * @va: the first byte it touches
 * @len: bytes it touches
 *
 * As vhca_mr_find(), but a bound window works too: in its QP's PD, and
 * a type 2 window only for requests arriving on the QP that bound it.
 * Caller holds rcu_read_lock().
 *
 * Return: the entry to copy through (vhca_mr_map() maps a window onto its
 * MR), or NULL.
 */
struct vhca_mr *vhca_mr_find_remote(struct vhca_dev *vdev, u32 key,
				    const struct vhca_qp *qp, int access,
				    u64 va, u32 len)
{
	struct vhca_mr *mr;

	if (va + len < va)
		return NULL;
	mr = vhca_mr_find_remote_whole(vdev, key, qp, access);
	return mr && vhca_key_covers(mr, va, len) ? mr : NULL;
}

/**
 * vhca_mr_find_remote_whole() - the MR or window a request names as a whole
 * @vdev: the device
 * @key: the rkey a request carried
 * @qp: the QP the request arrived on
 * @access: what the request needs of it
 *
 * As vhca_mr_find_remote(), for a request that names no range in it: a
 * FLUSH of selectivity level IB_FLUSH_MR.  Caller holds rcu_read_lock().
 *
 * Return: the entry, or NULL.
 */
struct vhca_mr *vhca_mr_find_remote_whole(struct vhca_dev *vdev, u32 key,
					  const struct vhca_qp *qp, int access)
{
	struct vhca_mr *mr = vhca_key_get(vdev, key, vhca_qp_pd(qp), access,
					  0, 0);

	if (!mr)
		return NULL;
	if (mr->type == VHCA_MR_MW && mr->mw_type == IB_MW_TYPE_2 &&
	    READ_ONCE(mr->qp_uid) != qp->uid)
		return NULL;
	return mr;
}

/**
 * vhca_mr_map() - reach the byte at @va of @mr
 * @mr: an MR or window vhca_mr_find() or vhca_mr_find_remote() accepted
 *	for @va
 * @va: the byte
 * @room: set to the bytes that follow it contiguously (at least 1)
 *
 * A window maps through its MR: it has the MR's addresses.
 *
 * Return: its kernel address; give it back with vhca_mr_unmap().
 */
void *vhca_mr_map(struct vhca_mr *mr, u64 va, u32 *room)
{
	u64 off, size, idx;
	u32 shift;

	if (mr->type == VHCA_MR_MW)
		mr = READ_ONCE(mr->parent);
	switch (mr->type) {
	case VHCA_MR_DMA:
		*room = PAGE_SIZE - offset_in_page(va);
		return (void *)(uintptr_t)va;
	case VHCA_MR_ODP:
		return vhca_odp_map(mr, va, room);
	case VHCA_MR_FAST:
		shift = READ_ONCE(mr->page_shift);
		size = 1ULL << shift;
		off = va - READ_ONCE(mr->iova) + READ_ONCE(mr->offset);
		/*
		 * In range unless its user re-registers it under a transfer;
		 * even then, never past the page list.
		 */
		idx = min_t(u64, off >> shift, mr->max_pages - 1);
		*room = min_t(u64, size - (off & (size - 1)), PAGE_SIZE);
		return (void *)(uintptr_t)(READ_ONCE(mr->fpages[idx]) +
					   (off & (size - 1)));
	default:
		off = va - mr->iova + mr->offset;
		/*
		 * In range, unless a window's user bound it again, with the
		 * same key, under a transfer that found it before: even then,
		 * never past the MR's own pages.
		 */
		idx = min_t(u64, off >> PAGE_SHIFT, mr->max_pages - 1);
		*room = PAGE_SIZE - offset_in_page(off);
		return kmap_local_page(mr->pages[idx]) + offset_in_page(off);
	}
}

void vhca_mr_unmap(struct vhca_mr *mr, void *p)
{
	/* a window's MR is a user MR */
	if (mr->type == VHCA_MR_USER || mr->type == VHCA_MR_MW ||
	    mr->type == VHCA_MR_ODP)
		kunmap_local(p);
}

/* MRs and windows of user processes, as against the kernel's. */
static bool vhca_mr_user(const struct vhca_mr *mr)
{
	return mr->type == VHCA_MR_USER || mr->type == VHCA_MR_MW ||
	       mr->type == VHCA_MR_ODP;
}

/*
 * Keys are an xarray index shifted left by 8 with a variant byte below.
 * Indexes are handed out cyclically, so a freed key's index comes back
 * only after every other one has been used; the variant is random, so a
 * key is not guessed from one's own fresh key, and one that outlived its
 * region misses instead of finding the next one.  User MRs and windows
 * leave VHCA_KERNEL_KEYS of the table to the kernel's.  The MR becomes
 * visible to the engine here: everything else is set.
 */
int vhca_mr_key_alloc(struct vhca_dev *vdev, struct vhca_mr *mr, bool valid)
{
	u32 index;
	int err;

	mr->ibmr.lkey = 0;
	if (vhca_mr_user(mr) &&
	    atomic_inc_return(&vdev->nr_user_keys) > VHCA_MAX_MR - VHCA_KERNEL_KEYS) {
		atomic_dec(&vdev->nr_user_keys);
		return -ENOMEM;
	}
	err = xa_alloc_cyclic(&vdev->mr_xa, &index, mr,
			      XA_LIMIT(1, VHCA_MAX_MR), &vdev->mr_next,
			      GFP_KERNEL);
	if (err < 0) {
		if (vhca_mr_user(mr))
			atomic_dec(&vdev->nr_user_keys);
		return err == -EBUSY ? -ENOMEM : err;
	}
	mr->ibmr.lkey = index << 8 | get_random_u8();
	mr->ibmr.rkey = mr->ibmr.lkey;
	if (!valid)
		return 0;
	/* Release: the MR is set up before its key works. */
	smp_store_release(&mr->key, mr->ibmr.lkey);
	return 0;
}

/* The key goes from the table; the engine may see it for a grace period. */
void vhca_mr_key_free(struct vhca_dev *vdev, struct vhca_mr *mr)
{
	xa_erase(&vdev->mr_xa, mr->ibmr.lkey >> 8);
	if (vhca_mr_user(mr))
		atomic_dec(&vdev->nr_user_keys);
}

static struct ib_mr *vhca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct vhca_mr *mr;
	int err;

	if (access & ~VHCA_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = VHCA_MR_DMA;
	mr->access = access;
	mr->pd = ibpd;
	err = vhca_mr_key_alloc(to_vdev(ibpd->device), mr, true);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/* The pinned pages in order, so the engine can reach any byte directly. */
static int vhca_mr_pages(struct vhca_mr *mr)
{
	size_t n = ib_umem_num_pages(mr->umem), i = 0;
	struct sg_page_iter it;

	mr->pages = kvmalloc_array(n, sizeof(*mr->pages), GFP_KERNEL_ACCOUNT);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &it, 0) {
		if (i == n)
			break;
		mr->pages[i++] = sg_page_iter_page(&it);
	}
	if (i != n) {
		kvfree(mr->pages);
		return -EFAULT;
	}
	mr->max_pages = n;
	mr->offset = ib_umem_offset(mr->umem);
	return 0;
}

/*
 * An ODP MR: nothing pinned; pages come in as the engine needs them.
 * Windows cannot be bound to one: a window's copies would have to fault
 * through its MR.
 */
static struct ib_mr *vhca_mr_reg_odp(struct ib_pd *ibpd, u64 start, u64 len,
				     u64 iova, int access)
{
	struct vhca_mr *mr;
	int err;

	if (access & IB_ACCESS_MW_BIND)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = VHCA_MR_ODP;
	mr->iova = iova;
	mr->length = len;
	mr->access = access;
	mr->pd = ibpd;
	err = vhca_odp_init_mr(mr, start, len);
	if (err)
		goto err_free;
	err = vhca_mr_key_alloc(to_vdev(ibpd->device), mr, true);
	if (err)
		goto err_odp;
	return &mr->ibmr;

err_odp:
	vhca_odp_release(mr);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static struct ib_mr *vhca_mr_reg_user(struct ib_pd *ibpd, u64 start, u64 len,
				      u64 iova, int access)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);
	struct vhca_mr *mr;
	int err;

	/*
	 * HUGETLB says the range is of huge pages: a hint, which would have
	 * an ODP umem map them whole.  vhca maps every MR page by page.
	 */
	access &= ~IB_ACCESS_HUGETLB;
	if (access & ~VHCA_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);	/* ZERO_BASED, ... */
	if (!len || iova + len < iova)
		return ERR_PTR(-EINVAL);
	if (access & IB_ACCESS_ON_DEMAND)
		return vhca_mr_reg_odp(ibpd, start, len, iova, access);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->type = VHCA_MR_USER;
	mr->umem = vhca_umem_get(ibpd->device, start, len, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_free;
	}
	mr->iova = iova;
	mr->length = len;
	mr->access = access;
	mr->pd = ibpd;
	err = vhca_mr_pages(mr);
	if (err)
		goto err_umem;
	err = vhca_mr_key_alloc(vdev, mr, true);
	if (err)
		goto err_pages;
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_umem:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static struct ib_mr *vhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				      u64 iova, int access,
				      VHCA_REG_USER_MR_DMAH_PARAM
				      struct ib_udata *udata)
{
	return vhca_mr_reg_user(ibpd, start, len, iova, access);
}

/**
 * vhca_rereg_user_mr() - change a user MR's translation, PD or access
 * @ibmr: the MR
 * @flags: IB_MR_REREG_*
 * @start: the new translation's address (IB_MR_REREG_TRANS)
 * @length: its length
 * @iova: the address its users will name it by
 * @access: the new IB_ACCESS_* (IB_MR_REREG_ACCESS)
 * @pd: the new PD (IB_MR_REREG_PD)
 * @udata: the caller's
 *
 * A new translation, or write access over pages pinned without it, makes
 * a new MR with new keys, which the core puts in the old one's place
 * before deregistering that.  A new PD or access otherwise takes effect in
 * place, keeping the keys; a request the engine looked the key up for
 * before sees the old one.  Not while windows are bound to the MR.
 *
 * Return: NULL (done in place), the new MR, or an ERR_PTR.
 */
static struct ib_mr *vhca_rereg_user_mr(struct ib_mr *ibmr, int flags,
					u64 start, u64 length, u64 iova,
					int access, struct ib_pd *pd,
					struct ib_udata *udata)
{
	struct vhca_mr *mr = to_vmr(ibmr);
	struct ib_pd *new_pd = flags & IB_MR_REREG_PD ? pd : ibmr->pd;
	/* HUGETLB: a hint, as for vhca_mr_reg_user() */
	int new_access = flags & IB_MR_REREG_ACCESS ?
			 access & ~IB_ACCESS_HUGETLB : mr->access;
	struct ib_mr *new = NULL;

	if (mr->type != VHCA_MR_USER && mr->type != VHCA_MR_ODP)
		return ERR_PTR(-EINVAL);
	if (new_access & ~VHCA_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	/* no window binds meanwhile: a bind takes the count above 0 */
	if (atomic_cmpxchg(&mr->nr_mw, 0, -1))
		return ERR_PTR(-EBUSY);
	if (flags & IB_MR_REREG_TRANS)
		new = vhca_mr_reg_user(new_pd, start, length, iova, new_access);
	else if ((ib_access_writable(new_access) && !mr->umem->writable) ||
		 ((new_access ^ mr->access) & IB_ACCESS_ON_DEMAND))
		new = vhca_mr_reg_user(new_pd, mr->umem->address, mr->length,
				       mr->iova, new_access);
	if (new) {
		/* the old MR is deregistered next, or stays as it was */
		if (IS_ERR(new))
			atomic_set(&mr->nr_mw, 0);
		return new;
	}
	WRITE_ONCE(mr->pd, new_pd);
	WRITE_ONCE(mr->access, new_access);
	atomic_set(&mr->nr_mw, 0);
	return NULL;
}

/*
 * A fast-register MR starts without a valid key: its user fills the page
 * list with ib_map_mr_sg() and posts IB_WR_REG_MR, which the engine runs
 * in order with the QP's other WQEs (vhca_mr_fast_reg()).
 */
static struct ib_mr *vhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				   u32 max_num_sg)
{
	struct vhca_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > VHCA_MAX_FAST_PAGES)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->fpages = kvcalloc(max_num_sg, sizeof(*mr->fpages), GFP_KERNEL);
	if (!mr->fpages) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->type = VHCA_MR_FAST;
	mr->max_pages = max_num_sg;
	mr->pd = ibpd;
	err = vhca_mr_key_alloc(to_vdev(ibpd->device), mr, false);
	if (err) {
		kvfree(mr->fpages);
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static int vhca_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct vhca_mr *mr = to_vmr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->fpages[mr->npages++] = addr;
	return 0;
}

static int vhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
			  int sg_nents, unsigned int *sg_offset)
{
	to_vmr(ibmr)->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, vhca_set_page);
}

/**
 * vhca_mr_fast_reg() - run a REG_MR WQE
 * @vdev: the device
 * @pd: the PD of the posting QP
 * @key: the key to make valid; its index names the MR
 * @iova: where the region starts
 * @length: its length
 * @access: IB_ACCESS_* it grants
 * @page_shift: log2 of the page size map_mr_sg used
 *
 * The MR must be a fast-register MR of @pd without a valid key (a region
 * is invalidated before it is registered again), and the region must lie
 * within the pages its page list holds.  Caller holds rcu_read_lock().
 *
 * Return: IB_WC_SUCCESS or the completion status of the WQE.
 */
int vhca_mr_fast_reg(struct vhca_dev *vdev, struct ib_pd *pd, u32 key,
		     u64 iova, u64 length, int access, u32 page_shift)
{
	struct vhca_mr *mr = xa_load(&vdev->mr_xa, key >> 8);
	u64 offset;

	if (!mr || mr->type != VHCA_MR_FAST || mr->pd != pd ||
	    READ_ONCE(mr->key) || (access & ~VHCA_MR_ACCESS))
		return IB_WC_LOC_PROT_ERR;
	if (page_shift < PAGE_SHIFT || page_shift > 30)
		return IB_WC_LOC_PROT_ERR;
	offset = iova & ((1ULL << page_shift) - 1);
	if (offset + length < length ||
	    offset + length > (u64)READ_ONCE(mr->npages) << page_shift)
		return IB_WC_LOC_LEN_ERR;
	WRITE_ONCE(mr->iova, iova);
	WRITE_ONCE(mr->offset, offset);
	WRITE_ONCE(mr->length, length);
	WRITE_ONCE(mr->access, access);
	WRITE_ONCE(mr->page_shift, page_shift);
	/* Release: the engine reads the key first, then the fields. */
	smp_store_release(&mr->key, key);
	return IB_WC_SUCCESS;
}

/**
 * vhca_mr_revoke() - take @key away from @mr, once no copy uses it
 * @mr: a fast-register MR or a window
 * @key: its key
 *
 * A READ response batch or a local engine's chunk that found the key
 * before it went may still be copying (vhca_mr_read_begin()): the key is
 * gone once it is done.  Both run with bottom halves off and copy 16
 * packets or 1 MiB at most, so this spins for that long at worst.
 *
 * Return: false if @key was not @mr's valid key.
 */
bool vhca_mr_revoke(struct vhca_mr *mr, u32 key)
{
	if (!key || cmpxchg(&mr->key, key, 0) != key)
		return false;
	smp_mb();	/* the key's store before the count's load */
	while (atomic_read(&mr->readers))
		cpu_relax();
	return true;
}

/**
 * vhca_mr_read_begin() - start a copy out of or into an MR
 * @mr: found by vhca_mr_find() under rcu_read_lock(), held since
 * @key: the key it was found by
 *
 * For the copies that outlive one packet, between which the MR could be
 * invalidated: vhca_mr_revoke() waits for those begun.
 *
 * Return: false if the key went meanwhile: nothing may be copied.
 */
bool vhca_mr_read_begin(struct vhca_mr *mr, u32 key)
{
	atomic_inc(&mr->readers);
	smp_mb__after_atomic();	/* the count's store before the key's load */
	if (READ_ONCE(mr->key) == key)
		return true;
	vhca_mr_read_end(mr);
	return false;
}

void vhca_mr_read_end(struct vhca_mr *mr)
{
	atomic_dec(&mr->readers);
}

static void vhca_mr_free_rcu(struct rcu_head *head)
{
	struct vhca_mr *mr = container_of(head, struct vhca_mr, rcu);

	kvfree(mr->fpages);
	kfree(mr);
}

/*
 * The engine finds MRs under RCU: gone from the xarray, then a grace
 * period.  A user MR's pages are unpinned after it (an ODP MR's notifier
 * goes), which can sleep; a kernel MR is freed by RCU, so that ULPs
 * freeing pools of them (every nvme-rdma queue has one) do not wait a
 * grace period per MR.
 */
static int vhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct vhca_mr *mr = to_vmr(ibmr);

	/*
	 * A bound window keeps its MR: deregistration fails until the
	 * windows are unbound, and none binds once it has begun.
	 */
	if (atomic_cmpxchg(&mr->nr_mw, 0, -1) > 0)
		return -EBUSY;
	vhca_mr_key_free(to_vdev(ibmr->device), mr);
	if (!mr->umem) {
		call_rcu(&mr->rcu, vhca_mr_free_rcu);
		return 0;
	}
	synchronize_rcu();
	if (mr->type == VHCA_MR_ODP) {
		vhca_odp_release(mr);
	} else {
		kvfree(mr->pages);
		ib_umem_release(mr->umem);
	}
	kfree(mr);
	return 0;
}

/**
 * vhca_advise_mr() - prefetch pages of ODP MRs (ibv_advise_mr())
 * @pd: the PD the lkeys must be of
 * @advice: PREFETCH (for reading), PREFETCH_WRITE, or PREFETCH_NO_FAULT
 *	(map what the process has, fault nothing in)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: done when this returns
 * @sg_list: the ranges, each by the lkey of an ODP MR
 * @num_sge: how many
 * @attrs: the uverbs call's
 *
 * Each range is faulted in before this returns, with or without FLUSH:
 * the hint is then taken earlier than asked, never later.
 *
 * Return: 0, -EOPNOTSUPP for an advice or flag vhca does not know,
 * -EFAULT for an lkey that is not an ODP MR of @pd (writable for
 * PREFETCH_WRITE), a range outside it or not in the process's memory.
 */
static int vhca_advise_mr(struct ib_pd *pd,
			  enum ib_uverbs_advise_mr_advice advice, u32 flags,
			  struct ib_sge *sg_list, u32 num_sge,
			  struct uverbs_attr_bundle *attrs)
{
	struct vhca_dev *vdev = to_vdev(pd->device);
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	u32 i;

	if (advice > IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT ||
	    (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH))
		return -EOPNOTSUPP;
	for (i = 0; i < num_sge; i++) {
		struct ib_sge *sge = &sg_list[i];
		struct vhca_mr *mr;
		int err;

		if (!sge->length)
			continue;
		rcu_read_lock();
		mr = vhca_mr_find(vdev, sge->lkey, pd,
				  VHCA_FIND_ODP |
				  (write ? IB_ACCESS_LOCAL_WRITE : 0),
				  sge->addr, sge->length);
		if (mr && (mr->type != VHCA_MR_ODP || !vhca_odp_get(mr)))
			mr = NULL;
		rcu_read_unlock();
		if (!mr)
			return -EFAULT;
		err = vhca_odp_fault(mr, sge->addr, sge->length, write, fault);
		vhca_odp_put(mr);
		if (err)
			return err == -EAGAIN ? err : -EFAULT;
	}
	return 0;
}

const struct ib_device_ops vhca_mr_ops = {
	.advise_mr = vhca_advise_mr,
	.alloc_mr = vhca_alloc_mr,
	.dereg_mr = vhca_dereg_mr,
	.get_dma_mr = vhca_get_dma_mr,
	.map_mr_sg = vhca_map_mr_sg,
	.reg_user_mr = vhca_reg_user_mr,
	.rereg_user_mr = vhca_rereg_user_mr,
};
