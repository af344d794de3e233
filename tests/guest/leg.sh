#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# The data path of one supported system (tools/system.sh), beside its
# device suite and pyverbs (tools/test.sh): every byte of SENDs, WRITEs and
# READs on each QP type, posted by ibv_post_send and by ibv_wr_*, then the
# kernel's own verbs (tests/kmod) and NVMe over Fabrics with and without
# SRQs, data checked, on vhca0 in one guest; UCX with implicit ODP, the
# system's UCX; with rdma-core 56, FLUSH through the engine and on a wire
# with rxe (flush.sh).  The full versions of these run on the primary
# system (examples.sh, kulp.sh, clients.sh).
. tests/guest/lib/lib.sh
. tests/guest/nvme.sh
. tests/guest/lib/clients.sh
tap_plan 131

A=10.76.0.1
vhca0_up $A
echo "# $(. /etc/os-release && echo "$PRETTY_NAME"), Linux $(uname -r)," \
	"rdma-core $(dpkg-query -W -f '${Version}' libibverbs1)"

for t in "rc -s 65536 -n 200" "uc -s 65536 -n 200" "ud -s 1024 -n 500"; do
	check "datacheck -t $t on vhca0, both ends" datacheck vhca0 vhca0 -t $t
	check "datacheck -w -t $t on vhca0: ibv_wr_* sends" \
		datacheck vhca0 vhca0 -w -t $t
done

kverbs_run
rmmod vhca_kverbs_test

# UCX 1.15 dropped implicit ODP; its ODP on a verbs device is an MR of
# what it maps non-blocking
ucx=$(dpkg-query -W -f '${Version}' libucx0)
if dpkg --compare-versions "$ucx" lt 1.15; then
	check "UCX $ucx with implicit ODP (UCX_IB_REG_METHODS=odp), both ends on vhca0: every byte (ucxcheck)" \
		ucx_ck_odp vhca0 rc_verbs,ud_verbs
else
	check "UCX $ucx, its regions mapped non-blocking: ODP MRs at both ends on vhca0, every byte (ucxcheck)" \
		ucx_ck_nonblock vhca0 rc_verbs,ud_verbs
fi

for srq in 0 1; do
	check "nvmet-rdma target on vhca0 (use_srq=$srq)" nvme_target_up $A $srq
	check "nvme connect -t rdma over vhca0 (use_srq=$srq)" \
		nvme_connect $A --ctrl-loss-tmo=30
	check "8 MiB written and read back byte for byte (use_srq=$srq)" nvme_roundtrip
	check "fio randwrite + crc32c verify (use_srq=$srq)" nvme_fio 16M
	check "nvme disconnect (use_srq=$srq)" nvme disconnect -n $NQN
	check "the controller is gone (use_srq=$srq)" wait_for 60 test ! -b /dev/nvme0n1
	check "target removed (use_srq=$srq)" nvme_target_down
done
check "rdma link del vhca0" rdma link del vhca0

# FLUSH, which rdma-core's verbs have from 45 on
release=$(dpkg-query -W -f '${Version}' libibverbs1 | cut -d. -f1)
if [ "$release" -ge 56 ]; then
	tap_run flush bash tests/guest/flush.sh
else
	# flush.sh's plan, and tap_run's check of its status
	skip $(($(sed -n 's/^tap_plan //p' tests/guest/flush.sh) + 1)) \
		"FLUSH: rdma-core $release has no ibv_wr_flush()"
fi
check "rmmod vhca" rmmod vhca
tap_done
