#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# The guest harness must report what goes wrong in a guest: a failing
# command, and a kernel warning in dmesg even when the command succeeds.
set -u
cd "$(dirname "$0")/.."
. tests/guest/lib.sh

tools/guest.sh --timeout 300 'exit 3' >/tmp/vhca-h1.log 2>&1
check_eq "a failing guest command fails the run (status 1)" "$?" 1
tools/guest.sh --timeout 300 'echo "WARNING: CPU: 0 PID: 1 at vhca harness self-test" >/dev/kmsg' \
	>/tmp/vhca-h2.log 2>&1
check_eq "a WARNING in the guest's dmesg fails the run (status 2)" "$?" 2
tap_done
