#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# iSER on vhca0: LIO's ib_isert target (a 64 MiB file, set up
# through configfs) and open-iscsi's ib_iser initiator in one guest.  The
# initiator logs in over iSER, data goes both ways and is read back, and it
# logs out: RDMA CM, fast registration, SEND_WITH_INV and the target's
# RDMA READ/WRITE, from a second kernel ULP.
. tests/guest/lib/lib.sh
tap_plan 10
. tests/guest/iscsi.sh

A=10.76.0.1
vhca0_up $A

check "LIO target with an iSER portal on vhca0's address" iser_target_up $A
check "iscsiadm discovery and login over iSER" iser_login $A
check "the session's transport is iSER" iser_transport_is_iser
# both_rc_qps: the initiator's and the target's RC QPs, on vhca0; if not,
# the QPs there are (once in CI the count was short, and the rest passed)
both_rc_qps() {
	local qps
	qps=$(rdma res show qp)
	[ "$(grep -c 'link vhca0/1 .*type RC .*comm \[rdma_cm\]' <<<"$qps")" -ge 2 ] &&
		return
	printf '%s\n' "$qps"
	return 1
}
check "both ends' RC QPs are on vhca0" both_rc_qps
check "8 MiB written and read back byte for byte over iSER" iser_roundtrip
check "logout" iser_logout $A
check "no session or disk left" wait_for 20 iser_no_session
check "target removed, ib_isert unloaded" iser_target_down $A
check "ib_iser unloads" modprobe -r ib_iser
check "rdma link del vhca0" rdma link del vhca0
tap_done
