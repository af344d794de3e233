#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# The guest harness must report what goes wrong in a guest: a failing
# command, and a kernel warning in dmesg even when the command succeeds.
#
#   bash tests/harness.sh [debug]
#
# debug: on the debug kernel, a real KASAN report and a real lockdep splat
# (tests/kmod/vhca_fault_test.c) each fail the run.
set -u
cd "$(dirname "$0")/.."
. tests/guest/lib/lib.sh

if [ "${1:-}" = debug ]; then
	tap_plan 4
	for f in kasan:"BUG: KASAN: slab-out-of-bounds" \
		lockdep:"WARNING: possible circular locking dependency detected"; do
		tools/guest.sh --debug --timeout 300 \
			"insmod \$VHCA_KMODS/vhca_fault_test.ko fault=${f%%:*}; true" \
			>/tmp/vhca-h-${f%%:*}.log 2>&1
		rc=$?
		check_eq "a ${f%%:*} report in the debug guest fails the run (status 2)" "$rc" 2
		check "the run names it: ${f#*:}" grep -qF "${f#*:}" /tmp/vhca-h-${f%%:*}.log
	done
	tap_done
	exit
fi
tap_plan 2
tools/guest.sh --timeout 300 'exit 3' >/tmp/vhca-h1.log 2>&1
check_eq "a failing guest command fails the run (status 1)" "$?" 1
tools/guest.sh --timeout 300 'echo "WARNING: CPU: 0 PID: 1 at vhca harness self-test" >/dev/kmsg' \
	>/tmp/vhca-h2.log 2>&1
check_eq "a WARNING in the guest's dmesg fails the run (status 2)" "$?" 2
tap_done
