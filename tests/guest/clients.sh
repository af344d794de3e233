#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# What real users run over RDMA, on vhca0 in one guest, then on rxe0 in the
# same boot as the reference: libfabric's verbs provider (fi_pingpong,
# each message checked; also over ofi_rxm on RC and, on vhca0, on XRC),
# UCX (build/tests/ucxcheck: tagged messages, PUTs and GETs, every byte,
# over rc_verbs with ud_verbs for wire-up, and over
# ud_verbs alone; on vhca0 also with UCX's implicit ODP), NFS over
# RDMA (nfsd's RDMA listener, NFSv4.2 and NFSv3 mounts with proto=rdma,
# 64 MiB written, read back after a remount and compared) and SRP (LIO's
# ib_srpt, the ib_srp initiator through the RDMA CM, 16 MiB written and
# read back with direct I/O).
# Server and client share the device: the RDMA CM loops them back.
. tests/guest/lib/lib.sh
. tests/guest/lib/clients.sh
tap_plan 33

ip link set eth0 up
ip addr add "$A/24" dev eth0

# users DEV: every client on DEV
users() {
	local d=$1 v
	check "$d: fi_pingpong, libfabric verbs msg endpoint, 1 B to 8 MiB, data checked" \
		fi_pp "$d" -S all -I 10
	# rxe's max_cqe (32767) is below what rxm asks for by default
	[ "$d" = rxe0 ] ||
		check "$d: fi_pingpong over ofi_rxm (rdm) with rxm's default sizes, data checked" \
			fi_rdm "$d"
	# rxe has no XRC
	[ "$d" = rxe0 ] ||
		check "$d: fi_pingpong over ofi_rxm (rdm) on XRC (FI_VERBS_PREFER_XRC, FI_OFI_RXM_USE_SRX), data checked" \
			fi_rdm_xrc "$d"
	check "$d: UCX over rc_verbs with ud_verbs: tagged messages of 1 B to 4 MiB, PUTs, GETs, every byte (ucxcheck)" \
		ucx_ck "$d" rc_verbs,ud_verbs
	check "$d: UCX over ud_verbs alone: the same, every byte (ucxcheck)" \
		ucx_ck "$d" ud_verbs
	check "$d: nfsd listening for RDMA on port 20049" nfs_server_up
	for v in 4.2 3; do
		check "$d: NFSv$v over RDMA: 64 MiB written, remounted, read back the same" \
			nfs_roundtrip $v
	done
	check "$d: a mount's RC QPs, the client's and the server's, are on $d" \
		nfs_on "$d"
	check "$d: nfsd stopped" nfs_server_down
	check "$d: LIO's ib_srpt target, RDMA CM port $SRP_PORT" srp_target_up "$d"
	check "$d: ib_srp logs in through the RDMA CM, the LUN is a disk" \
		srp_login "$d"
	check "$d: SRP: 16 MiB written and read back the same (direct I/O)" \
		srp_roundtrip
	check "$d: ib_srp logs out, the disk goes" srp_logout
	check "$d: the target removed, ib_srpt unloaded" srp_target_down
}

if rdma link add vhca0 type vhca netdev eth0 && wait_gid vhca0; then
	pass "rdma link add vhca0"
	users vhca0
	# rxe (6.12) has no ODP: this is vhca's alone
	check "vhca0: UCX with implicit ODP (UCX_IB_REG_METHODS=odp), both ends: every byte (ucxcheck)" \
		ucx_ck_odp vhca0 rc_verbs,ud_verbs
else
	fail "rdma link add vhca0"
fi
check "vhca0 removed (rxe0 goes on its netdev), vhca unloaded" \
	bash -c "rdma link del vhca0 && modprobe -r vhca"
if modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0 &&
	wait_gid rxe0; then
	pass "rdma link add rxe0 (the reference)"
	users rxe0
else
	fail "rdma link add rxe0 (the reference)"
fi
check "rdma link del rxe0" rdma link del rxe0
tap_done
