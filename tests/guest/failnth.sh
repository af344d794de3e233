#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Fault injection on the debug kernel: tests/guest/failnth.c fails each
# allocation of each verb in turn (fail-nth), then checks the device still
# carries data; vhca's own fault point flips a byte the engine copies,
# which datacheck must catch; kmemleak's scan at the end of the run (guest-init) and
# guest.sh's report patterns find what leaked or was touched after a free.
# The kernel must have CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_ALLOC; on one
# without, the fault-injection checks fail, they are not skipped.
#
#   bash tests/guest/failnth.sh
. tests/guest/lib/lib.sh
# the plan: 2 fault attributes, the link and its GID, failnth's 28 checks
# and its status, 7 of the corrupt_copy fault point, the link's and the
# module's removal
tap_plan 42

dbg=/sys/kernel/debug
mountpoint -q $dbg || mount -t debugfs none $dbg
# Only fail-nth fails anything (probability 0), quietly (a verbose
# injection prints a stack, which would read as a report), and
# GFP_KERNEL allocations too: vhca's are nearly all that.
for f in failslab fail_page_alloc; do
	check "$f is in this kernel" test -d $dbg/$f
	[ -d $dbg/$f ] || continue
	echo 0 >$dbg/$f/probability
	echo 0 >$dbg/$f/verbose
	echo N >$dbg/$f/ignore-gfp-wait
done
[ ! -d $dbg/fail_page_alloc ] || echo N >$dbg/fail_page_alloc/ignore-gfp-highmem

ip link set eth0 up
wait_for 10 grep -q 1 /sys/class/net/eth0/carrier
check "rdma link add vhca0 type vhca netdev eth0" \
	rdma link add vhca0 type vhca netdev eth0
check "vhca0 has a GID" wait_for 20 \
	grep -qv '^0000:0000:0000:0000:0000:0000:0000:0000$' \
	/sys/class/infiniband/vhca0/ports/1/gids/0

tap_run failnth build/tests/failnth vhca0

# One byte flipped in what the engine copies: datacheck must say where.
# Its positive control, and what makes a passing datacheck mean something.
cc=$dbg/vhca/corrupt_copy
check "vhca's corrupt_copy fault point is in this build" test -d $cc
if [ -d $cc ]; then
	echo 0 >$cc/verbose
	echo 1 >$cc/interval
	for t in "rc -o send" "rc -o write" "rc -o read" "uc -o write_imm"; do
		echo 100 >$cc/probability
		echo 1 >$cc/times
		! datacheck vhca0 vhca0 -t $t -n 32 -s 4096 >/tmp/dc.out 2>&1
		r=$?
		echo 0 >$cc/probability
		check "datacheck -t $t fails on one flipped byte, and says where" \
			bash -c "[ $r = 0 ] && grep 'first bad byte at offset' /tmp/dc.out"
		grep -h "bad byte" /tmp/dc.out | sed 's/^/#   /'
	done
	check "datacheck -t rc passes with the fault point disarmed" \
		datacheck vhca0 vhca0 -t rc -n 32 -s 4096
	# and the kernel-verbs module's check of what its SENDs carried
	echo 100 >$cc/probability
	echo 1 >$cc/times
	dmesg -C
	insmod "${VHCA_KMODS:-build/tests}/vhca_kverbs_test.ko" dev=vhca0
	echo 0 >$cc/probability
	rmmod vhca_kverbs_test
	check "vhca_kverbs_test finds the flipped byte (its RC SENDs not intact)" \
		bash -c "dmesg | grep -q 'not ok .* RC on an RQ: 4 SENDs received intact'"
	dmesg | grep "first bad byte" | sed 's/^/#   /'
fi

check "rdma link del vhca0" rdma link del vhca0
check "rmmod vhca" rmmod vhca
tap_done
