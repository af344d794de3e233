# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# tests/guest/twohost.sh, the kernel's ULPs on the wire: NVMe-oF
# (nvmet-rdma with SRQs, nvme-rdma) and iSER (ib_isert, ib_iser), vhca to
# vhca and with rxe both ways.
#
# Sourced by twohost.sh, which runs ulp_PHASE_a in guest a and
# ulp_PHASE_b in guest b, in step; PHASE is vhca (b on vhca0) or rxe
# (b on rxe0).

# nvme_host ADDR WHAT: the NVMe-oF host's whole visit to the target at ADDR
nvme_host() {
	check "$2: nvme connect" wait_for 120 nvme_connect "$1"
	check "$2: 8 MiB written and read back" nvme_roundtrip
	check "$2: fio randwrite + crc32c verify, 2 jobs, QD16" nvme_fio 4M
	check "$2: nvme disconnect (ib_drain_qp on each queue)" \
		nvme disconnect -n "$NQN"
	check "$2: the namespace is gone" wait_for 120 test ! -b /dev/nvme0n1
}
# nvme_target ADDR USE_SRQ WHAT: a target at ADDR for one visit of a host
nvme_target() {
	check "$3: nvmet-rdma target up (use_srq=$2)" nvme_target_up "$1" "$2"
	check "$3: the host reports done" hear nvme-done
	check "$3: target removed" nvme_target_down
}
# iser_target ADDR WHAT: a LIO iSER target at ADDR for one initiator's visit
iser_target() {
	check "$2: LIO iSER target up" iser_target_up "$1"
	check "$2: the initiator reports done" hear iser-done
	check "$2: target removed, ib_isert unloaded" iser_target_down "$1"
}
# iser_initiator ADDR WHAT: the ib_iser initiator's whole visit to ADDR
iser_initiator() {
	check "$2: discovery and login over iSER" wait_for 120 iser_login "$1"
	check "$2: the session's transport is iSER" iser_transport_is_iser
	check "$2: 8 MiB written and read back" iser_roundtrip
	check "$2: logout" iser_logout "$1"
	check "$2: no session or disk left" wait_for 20 iser_no_session
	check "$2: ib_iser unloads" modprobe -r ib_iser
}

ulp_vhca_a() {
	nvme_target 10.76.1.1 1 \
		"guest a: NVMe-oF target on vhca0, host vhca0 in b"
	iser_target 10.76.1.1 "guest a: iSER target on vhca0, initiator vhca0 in b"
}

ulp_vhca_b() {
	nvme_host 10.76.1.1 "guest b: NVMe-oF host on vhca0, target vhca0 in a"
	check "guest b: tell a the NVMe host is done" tell 10.76.1.1 nvme-done
	iser_initiator 10.76.1.1 \
		"guest b: iSER initiator on vhca0, target vhca0 in a"
	check "guest b: tell a the iSER initiator is done" \
		tell 10.76.1.1 iser-done
}

ulp_rxe_a() {
	nvme_target 10.76.1.1 0 \
		"guest a: NVMe-oF target on vhca0, host rxe0 in b"
	iser_target 10.76.1.1 "guest a: iSER target on vhca0, initiator rxe0 in b"
	nvme_host 10.76.1.2 "guest a: NVMe-oF host on vhca0, target rxe0 in b"
	check "guest a: tell b the NVMe host is done" tell 10.76.1.2 nvme-done
	iser_initiator 10.76.1.2 \
		"guest a: iSER initiator on vhca0, target rxe0 in b"
	check "guest a: tell b the iSER initiator is done" \
		tell 10.76.1.2 iser-done
}

ulp_rxe_b() {
	nvme_host 10.76.1.1 "guest b: NVMe-oF host on rxe0, target vhca0 in a"
	check "guest b: tell a the NVMe host is done" tell 10.76.1.1 nvme-done
	iser_initiator 10.76.1.1 \
		"guest b: iSER initiator on rxe0, target vhca0 in a"
	check "guest b: tell a the iSER initiator is done" \
		tell 10.76.1.1 iser-done
	nvme_target 10.76.1.2 0 \
		"guest b: NVMe-oF target on rxe0, host vhca0 in a"
	iser_target 10.76.1.2 "guest b: iSER target on rxe0, initiator vhca0 in a"
}
