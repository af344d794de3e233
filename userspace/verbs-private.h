/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The part of rdma-core's private provider ABI (IBVERBS_PRIVATE_34) that
 * vhca uses, as rdma-core 44 (Debian 12) and 56.1 (Debian 13) have it.
 * rdma-core does not ship its driver headers, so these are vhca's own
 * declarations of that ABI: struct layouts checked by the static
 * assertions below against the offsets each release's libibverbs was
 * compiled with, and prototypes of the exported functions.  PABI 34 alone
 * does not pin the layouts (verbs_context_ops grew between v34 and v36,
 * and verbs_qp between 44 and 56, without a PABI change), so the provider
 * is built for one release: the Makefile reads it from the installed
 * libibverbs into VHCA_RDMA_CORE, and a release not listed here is refused
 * at build time rather than guessed at.
 */
#ifndef VHCA_VERBS_PRIVATE_H
#define VHCA_VERBS_PRIVATE_H

#if VHCA_RDMA_CORE == 44
/* struct ibv_qp_ex ends with wr_atomic_write */
#define VHCA_IBV_QP_EX_SIZE	352
#elif VHCA_RDMA_CORE == 56
/* ibv_qp_ex gained wr_flush (rdma-core 45): verbs_qp's tail moved by 8 */
#define VHCA_IBV_QP_EX_SIZE	360
#define VHCA_HAVE_WR_FLUSH	1
#else
#error "the provider declares the private ABI of rdma-core 44 and 56 only (VHCA_RDMA_CORE)"
#endif

#include <infiniband/verbs.h>	/* before rdma/: shared include guard */
#include <rdma/ib_user_verbs.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct vhca_list_node {
	void *next, *prev;
};

/* One entry of a provider's match table (unused by vhca: it has none). */
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/* What libibverbs learnt about a device from sysfs and netlink. */
struct verbs_sysfs_dev {
	struct vhca_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[64];
	dev_t sysfs_cdev;
	char ibdev_name[64];
	char ibdev_path[256];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

/* libibverbs' private MR wrapper: providers allocate it around ibv_mr. */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	int mr_type;		/* enum ibv_mr_type, private too */
	int access;
};

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct vhca_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/*
 * The provider's operation table, in rdma-core 44's order (alphabetical).
 * verbs_set_ops() copies every non-NULL member by name at libibverbs' own
 * offsets, so the layout must match to the byte; members vhca does not
 * implement are plain pointers left NULL, which keeps libibverbs' dummy
 * operations (they fail with EOPNOTSUPP).
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	void *alloc_dm;
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	void *alloc_null_mr;
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
				struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	void *alloc_td, *async_event, *attach_counters_point_flow;
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void *cq_event;
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	void *create_counters;
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	void *create_cq_ex, *create_flow;
	void *create_flow_action_esp;
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	void *create_rwq_ind_table;
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	void *create_wq;
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	void *dealloc_td;
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	void *destroy_counters;
	int (*destroy_cq)(struct ibv_cq *cq);
	void *destroy_flow, *destroy_flow_action;
	int (*destroy_qp)(struct ibv_qp *qp);
	void *destroy_rwq_ind_table;
	int (*destroy_srq)(struct ibv_srq *srq);
	void *destroy_wq;
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	void *free_dm;
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	void *import_dm, *import_mr, *import_pd;
	void *modify_cq, *modify_flow_action_esp;
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	void *modify_qp_rate_limit;
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	void *modify_wq;
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	void *query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	void *query_qp_data_in_order, *query_rt_values;
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	void *read_counters, *reg_dm_mr, *reg_dmabuf_mr;
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	void *set_ece, *unimport_dm;
	void *unimport_mr, *unimport_pd;
};

/* Command buffers: the uverbs header, then the core uapi payload. */
struct vhca_cmd_get_context {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct vhca_cmd_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct vhca_cmd_query_port {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u8 port_num;
	__u8 reserved[7];
};

struct vhca_cmd_create_cq {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 user_handle;
	__u32 cqe;
	__u32 comp_vector;
	__s32 comp_channel;
	__u32 reserved;
};

/* rdma-core's struct ibv_create_cq_ex: the extended command's layout */
struct vhca_cmd_create_cq_ex {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
	struct ib_uverbs_ex_create_cq core;
};

struct vhca_cmd_create_srq {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 user_handle;
	__u32 pd_handle;
	__u32 max_wr;
	__u32 max_sge;
	__u32 srq_limit;
};

struct vhca_cmd_modify_srq {
	struct ib_uverbs_cmd_hdr hdr;
	__u32 srq_handle;
	__u32 attr_mask;
	__u32 max_wr;
	__u32 srq_limit;
};

struct vhca_cmd_resize_cq {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 cq_handle;
	__u32 cqe;
};

struct vhca_cmd_query_srq {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 srq_handle;
	__u32 reserved;
};

struct vhca_cmd_reg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 start;
	__aligned_u64 length;
	__aligned_u64 hca_va;
	__u32 pd_handle;
	__u32 access_flags;
};

struct vhca_cmd_rereg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_rereg_mr core;
};

struct vhca_cmd_alloc_mw {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_mw core;
};

struct vhca_cmd_create_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_qp core;	/* ends in driver_data[] */
};

struct vhca_cmd_modify_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_qp core;
};

struct vhca_cmd_query_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_qp core;
};

/* rdma-core's struct ibv_open_xrcd */
struct vhca_cmd_open_xrcd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_open_xrcd core;
};

/* rdma-core's struct ibv_create_xsrq: any SRQ type, the XRC ones too */
struct vhca_cmd_create_xsrq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_xsrq core;	/* then the driver's (none) */
};

/* rdma-core's struct ibv_open_qp */
struct vhca_cmd_open_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_open_qp core;
};

/* verbs_qp.comp_mask: VERBS_QP_EX makes ibv_qp_to_qp_ex() return qp_ex */
enum {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

/*
 * libibverbs' private XRC domain wrapper: providers allocate it around
 * ibv_xrcd, and ibv_cmd_open_xrcd() stores the kernel's handle only if
 * the size it is given covers handle.
 */
struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;	/* VERBS_XRCD_HANDLE */
	uint32_t handle;
};

/* libibverbs' private QP wrapper: providers allocate it around ibv_qp. */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;	/* with VERBS_QP_XRCD */
};

/*
 * libibverbs' private SRQ wrapper: providers allocate it around ibv_srq.
 * ibv_cmd_create_srq_ex() fills in the rest; ibv_cmd_create_srq() none.
 */
struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;	/* XRC */
	struct ibv_cq *cq;
	uint32_t srq_num;		/* XRC: what a sender names */
};

/* Exported by libibverbs.so.1 at IBVERBS_PRIVATE_34. */
void verbs_register_driver_34(const struct verbs_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
int ibv_cmd_get_context(struct verbs_context *context,
			struct vhca_cmd_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct vhca_cmd_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct vhca_cmd_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct vhca_cmd_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct vhca_cmd_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct vhca_cmd_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct vhca_cmd_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
/* driver.h's, for the provider's CQ: its first member is this union */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct vhca_cmd_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe,
		      struct vhca_cmd_resize_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct vhca_cmd_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		       int attr_mask, struct vhca_cmd_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		      struct vhca_cmd_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct vhca_cmd_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct vhca_cmd_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct vhca_cmd_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
/* with the command of ibv_cmd_create_qp(), not the extended one */
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct vhca_cmd_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct vhca_cmd_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct vhca_cmd_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr,
		     struct vhca_cmd_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Offsets libibverbs was built with (x86-64), see the note at the top: the
 * same in 44 and 56 but for struct ibv_qp_ex, and so verbs_qp.
 */
#if defined(__x86_64__)
_Static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent");
_Static_assert(offsetof(struct verbs_sysfs_dev, sysfs_name) == 36, "sysfs_name");
_Static_assert(offsetof(struct verbs_sysfs_dev, ibdev_name) == 112, "ibdev_name");
_Static_assert(offsetof(struct verbs_sysfs_dev, modalias) == 432, "modalias");
_Static_assert(offsetof(struct verbs_sysfs_dev, node_guid) == 944, "node_guid");
_Static_assert(offsetof(struct verbs_sysfs_dev, driver_id) == 952, "driver_id");
_Static_assert(offsetof(struct verbs_sysfs_dev, abi_ver) == 968, "abi_ver");
_Static_assert(sizeof(struct verbs_sysfs_dev) == 992, "verbs_sysfs_dev");
_Static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops");
_Static_assert(sizeof(struct ibv_device) == 664, "ibv_device");
_Static_assert(offsetof(struct verbs_device, ops) == 664, "verbs_device.ops");
_Static_assert(offsetof(struct verbs_device, sysfs) == 696, "verbs_device.sysfs");
_Static_assert(sizeof(struct verbs_device) == 712, "verbs_device");
_Static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void *), "ops");
_Static_assert(offsetof(struct verbs_context_ops, poll_cq) == 424, "poll_cq");
_Static_assert(offsetof(struct verbs_context_ops, post_recv) == 432, "post_recv");
_Static_assert(offsetof(struct verbs_context_ops, post_send) == 440, "post_send");
_Static_assert(offsetof(struct verbs_context_ops, post_srq_recv) == 456, "post_srq_recv");
_Static_assert(offsetof(struct verbs_context_ops, advise_mr) == 0, "advise_mr");
_Static_assert(offsetof(struct verbs_context_ops, alloc_pd) == 5 * 8, "alloc_pd");
_Static_assert(offsetof(struct verbs_context_ops, dealloc_pd) == 26 * 8, "dealloc_pd");
_Static_assert(offsetof(struct verbs_context_ops, free_context) == 39 * 8, "free_context");
_Static_assert(offsetof(struct verbs_context_ops, query_device_ex) == 58 * 8, "query_device_ex");
_Static_assert(offsetof(struct verbs_context_ops, query_port) == 60 * 8, "query_port");
_Static_assert(offsetof(struct verbs_context_ops, unimport_pd) == 75 * 8, "unimport_pd");
_Static_assert(offsetof(struct verbs_context_ops, create_cq) == 15 * 8, "create_cq");
_Static_assert(offsetof(struct verbs_context_ops, create_srq) == 22 * 8, "create_srq");
_Static_assert(offsetof(struct verbs_context_ops, destroy_cq) == 31 * 8, "destroy_cq");
_Static_assert(offsetof(struct verbs_context_ops, destroy_srq) == 36 * 8, "destroy_srq");
_Static_assert(offsetof(struct verbs_context_ops, modify_srq) == 49 * 8, "modify_srq");
_Static_assert(offsetof(struct verbs_context_ops, query_srq) == 64 * 8, "query_srq");
_Static_assert(sizeof(struct ibv_srq) == 128, "ibv_srq");
_Static_assert(offsetof(struct verbs_context_ops, dereg_mr) == 28 * 8, "dereg_mr");
_Static_assert(sizeof(struct verbs_mr) == sizeof(struct ibv_mr) + 8, "verbs_mr");
_Static_assert(offsetof(struct verbs_context_ops, reg_mr) == 68 * 8, "reg_mr");
_Static_assert(offsetof(struct verbs_context_ops, rereg_mr) == 70 * 8, "rereg_mr");
_Static_assert(offsetof(struct verbs_context_ops, alloc_mw) == 2 * 8, "alloc_mw");
_Static_assert(offsetof(struct verbs_context_ops, bind_mw) == 10 * 8, "bind_mw");
_Static_assert(offsetof(struct verbs_context_ops, dealloc_mw) == 25 * 8, "dealloc_mw");
_Static_assert(offsetof(struct verbs_context_ops, attach_mcast) == 9 * 8, "attach_mcast");
_Static_assert(offsetof(struct verbs_context_ops, detach_mcast) == 38 * 8, "detach_mcast");
_Static_assert(offsetof(struct verbs_context_ops, create_qp) == 19 * 8, "create_qp");
_Static_assert(offsetof(struct verbs_context_ops, create_ah) == 13 * 8, "create_ah");
_Static_assert(offsetof(struct verbs_context_ops, destroy_ah) == 29 * 8, "destroy_ah");
_Static_assert(offsetof(struct verbs_context_ops, req_notify_cq) == 69 * 8, "req_notify_cq");
_Static_assert(offsetof(struct verbs_context_ops, destroy_qp) == 34 * 8, "destroy_qp");
_Static_assert(offsetof(struct verbs_context_ops, modify_qp) == 47 * 8, "modify_qp");
_Static_assert(offsetof(struct verbs_context_ops, query_qp) == 61 * 8, "query_qp");
_Static_assert(sizeof(struct ibv_qp) == 160 &&
	       sizeof(struct ibv_qp_ex) == VHCA_IBV_QP_EX_SIZE, "ibv_qp");
_Static_assert(offsetof(struct verbs_qp, comp_mask) == VHCA_IBV_QP_EX_SIZE &&
	       offsetof(struct verbs_qp, xrcd) == VHCA_IBV_QP_EX_SIZE + 8 &&
	       sizeof(struct verbs_qp) == VHCA_IBV_QP_EX_SIZE + 16, "verbs_qp");
_Static_assert(offsetof(struct verbs_xrcd, handle) == 12 &&
	       sizeof(struct verbs_xrcd) == 16, "verbs_xrcd");
_Static_assert(offsetof(struct verbs_srq, srq_type) == 128 &&
	       offsetof(struct verbs_srq, xrcd) == 136 &&
	       offsetof(struct verbs_srq, cq) == 144 &&
	       offsetof(struct verbs_srq, srq_num) == 152 &&
	       sizeof(struct verbs_srq) == 160, "verbs_srq");
_Static_assert(offsetof(struct verbs_context_ops, close_xrcd) == 11 * 8 &&
	       offsetof(struct verbs_context_ops, create_qp_ex) == 20 * 8 &&
	       offsetof(struct verbs_context_ops, create_srq_ex) == 23 * 8 &&
	       offsetof(struct verbs_context_ops, get_srq_num) == 41 * 8 &&
	       offsetof(struct verbs_context_ops, open_qp) == 51 * 8 &&
	       offsetof(struct verbs_context_ops, open_xrcd) == 52 * 8,
	       "the XRC operations");
_Static_assert(sizeof(struct verbs_context) == 648, "verbs_context");
_Static_assert(offsetof(struct verbs_context, context) == 320, "verbs_context.context");
#endif

_Static_assert(sizeof(struct vhca_cmd_get_context) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_get_context),
	       "get_context command");
_Static_assert(sizeof(struct vhca_cmd_alloc_pd) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_alloc_pd),
	       "alloc_pd command");
_Static_assert(sizeof(struct vhca_cmd_reg_mr) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_reg_mr),
	       "reg_mr command");
_Static_assert(sizeof(struct vhca_cmd_create_cq) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_create_cq),
	       "create_cq command");
_Static_assert(sizeof(struct vhca_cmd_create_cq_ex) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       sizeof(struct ib_uverbs_ex_cmd_hdr) +
	       sizeof(struct ib_uverbs_ex_create_cq),
	       "create_cq_ex command");
_Static_assert(sizeof(struct vhca_cmd_create_srq) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_create_srq),
	       "create_srq command");
_Static_assert(sizeof(struct vhca_cmd_modify_srq) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_modify_srq),
	       "modify_srq command");
_Static_assert(sizeof(struct vhca_cmd_rereg_mr) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_rereg_mr),
	       "rereg_mr command");
_Static_assert(sizeof(struct vhca_cmd_alloc_mw) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_alloc_mw),
	       "alloc_mw command");
_Static_assert(sizeof(struct vhca_cmd_resize_cq) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_resize_cq),
	       "resize_cq command");
_Static_assert(offsetof(struct verbs_context_ops, resize_cq) == 71 * 8,
	       "resize_cq");
_Static_assert(sizeof(struct vhca_cmd_query_srq) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_query_srq),
	       "query_srq command");
_Static_assert(sizeof(struct vhca_cmd_query_port) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_query_port),
	       "query_port command");
_Static_assert(sizeof(struct vhca_cmd_create_qp) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_create_qp),
	       "create_qp command");
_Static_assert(sizeof(struct vhca_cmd_open_xrcd) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_open_xrcd),
	       "open_xrcd command");
_Static_assert(sizeof(struct vhca_cmd_create_xsrq) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_create_xsrq),
	       "create_xsrq command");
_Static_assert(sizeof(struct vhca_cmd_open_qp) ==
	       sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct ib_uverbs_open_qp),
	       "open_qp command");

#endif /* VHCA_VERBS_PRIVATE_H */
