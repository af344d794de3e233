# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# tests/guest/twohost.sh, what real users run over RDMA on the wire (see
# tests/guest/lib/clients.sh): libfabric's fi_pingpong, UCX
# (build/tests/ucxcheck: rc_verbs with ud_verbs for wire-up, and ud_verbs
# alone)
# and NFS over RDMA (NFSv4.2 and NFSv3), vhca to vhca, then vhca with rxe
# in both roles.
#
# Sourced by twohost.sh, which runs clients_PHASE_a in guest a and
# clients_PHASE_b in guest b, in step; PHASE is vhca (b on vhca0) or rxe
# (b on rxe0).  Servers serve one client and exit; clients retry until
# their server is up.
. tests/guest/lib/clients.sh

# servers DEV WHAT: fi_pingpong's, ucx_perftest's and nfsd, on DEV, for
# one visit of the peer's clients
servers() {
	check "$2: fi_pingpong server" fi_srv "$1" -S all -I 5
	check "$2: ucxcheck server, rc_verbs with ud_verbs: every byte" \
		ucx_ck_srv "$1" rc_verbs,ud_verbs
	check "$2: ucxcheck server, ud_verbs alone: every byte" \
		ucx_ck_srv "$1" ud_verbs
	check "$2: nfsd listening for RDMA on port 20049" nfs_server_up
	check "$2: the NFS client reports done" hear nfs-done
	check "$2: nfsd stopped" nfs_server_down
}

# clients DEV SERVER WHAT: the clients of servers(), on DEV
clients() {
	check "$3: fi_pingpong client, 1 B to 8 MiB, data checked" \
		retry fi_cli "$1" "$2" -S all -I 5
	# ucxcheck tries to reach its server for a minute itself: a try
	# again could not hide a bad byte, which fails the server too
	check "$3: ucxcheck client, rc_verbs with ud_verbs: tagged messages of 1 B to 4 MiB, PUTs, GETs, every byte" \
		ucx_ck_cli "$1" "$2" rc_verbs,ud_verbs
	check "$3: ucxcheck client, ud_verbs alone: the same, every byte" \
		ucx_ck_cli "$1" "$2" ud_verbs
	# 16 MiB (nfs_roundtrip's NFS_MIB): two versions of 64 MiB each made
	# the step with rxe the slowest of twohost's; 16 MiB is still 4096
	# pages of RDMA READs and WRITEs each way
	local NFS_MIB=16 v
	for v in 4.2 3; do
		check "$3: NFSv$v over RDMA mounted (tried until nfsd is up)" \
			retry nfs_mount $v "$2"
		check "$3: NFSv$v: 16 MiB written, remounted, read back the same (once)" \
			nfs_roundtrip $v "$2"
	done
	check "$3: tell the server NFS is done" tell "$2" nfs-done
}

clients_vhca_a() {
	servers vhca0 "guest a: on vhca0, clients vhca0 in b"
}

clients_vhca_b() {
	clients vhca0 10.76.1.1 "guest b: on vhca0, servers vhca0 in a"
}

clients_rxe_a() {
	servers vhca0 "guest a: on vhca0, clients rxe0 in b"
	clients vhca0 10.76.1.2 "guest a: on vhca0, servers rxe0 in b"
}

clients_rxe_b() {
	clients rxe0 10.76.1.1 "guest b: on rxe0, servers vhca0 in a"
	servers rxe0 "guest b: on rxe0, clients vhca0 in a"
}
