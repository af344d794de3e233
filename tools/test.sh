#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The whole test suite: set-up, build, lint (W=1, sparse, checkpatch), host
# tests, KUnit under UML, the guest harness's self-test, the device tests in
# a guest, two vhca devices on one host, the RDMA CM and kernel ULP
# (kernel verbs, NVMe-oF, iSER) tests, rdma-core's pyverbs
# suite, the two-guest link test and a packet fuzzer from one guest at
# the other.  With VHCA_DEBUG_KERNEL=1, then the device and kernel ULP
# tests again on the debug kernel (tools/debug-kernel.sh: KASAN, lockdep,
# UBSAN, kmemleak).  Ends with "N passed, N failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
cd "$VHCA_ROOT"

bash tools/setup.sh || die "set-up failed"
make -s all || die "build failed"
# The debug kernel: built from a fresh cache (long), a no-op afterwards.
# A failure fails its suites below, not the whole run.  Not yet by
# default: no build of it has finished on this machine kind, and its cold
# build would take the run past CI's budget (Documentation/testing.md).
debug=${VHCA_DEBUG_KERNEL:-0}
debug_ok=0
if [ "$debug" = 1 ] && bash tools/debug-kernel.sh && make -s debug; then
	debug_ok=1
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/vhca-test.XXXXXX")
passed=0
failed=0

# check NAME CMD...: one test that passes when CMD succeeds
check() {
	local name=$1
	shift
	if "$@" >"$logs/$name.log" 2>&1; then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name"
		sed 's/^/#   /' "$logs/$name.log" | tail -n 40
		failed=$((failed + 1))
	fi
}

# tap NAME CMD...: a suite printing TAP; each "ok"/"not ok" line counts,
# and a non-zero status with no failing line counts as one failure.
tap() {
	local name=$1 rc p f t0=$SECONDS
	shift
	echo "# $name"
	"$@" 2>&1 | tee "$logs/$name.log"
	rc=${PIPESTATUS[0]}
	echo "# $name took $((SECONDS - t0))s"
	p=$(grep -cE '^ok ' "$logs/$name.log")
	f=$(grep -cE '^not ok ' "$logs/$name.log")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name exited with status $rc"
		f=1
	fi
	if [ "$p" = 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name ran no test"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

echo "# lint"
check "W=1 -Werror build" make -s lint-build
check "sparse C=2" make -s lint-sparse
check "checkpatch --strict" make -s lint-checkpatch
check "kernel-doc -Wall" make -s lint-kerneldoc

tap host bash tests/host/run.sh

echo "# kunit"
bash kunit/run.sh 2>&1 | tee "$logs/kunit.log"
kp=$(sed -n 's/^kunit: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$logs/kunit.log")
kf=$(sed -n 's/^kunit: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$logs/kunit.log")
passed=$((passed + ${kp:-0}))
failed=$((failed + ${kf:-1}))

tap harness bash tests/harness.sh
tap guest-device tools/guest.sh 'bash tests/guest/device.sh'
tap guest-steer tools/guest.sh 'bash tests/guest/steer.sh'
tap guest-examples tools/guest.sh 'bash tests/guest/examples.sh'
tap guest-twodev tools/guest.sh 'bash tests/guest/twodev.sh'
tap guest-rdmacm tools/guest.sh 'bash tests/guest/rdmacm.sh'
tap guest-kulp tools/guest.sh 'bash tests/guest/kulp.sh'
tap guest-iser tools/guest.sh 'bash tests/guest/iser.sh'
tap guest-pyverbs tools/guest.sh 'bash tests/guest/pyverbs.sh'
tap guest-fuzz-rings tools/guest.sh 'bash tests/guest/fuzz-rings.sh'
tap guest-twohost tools/guest.sh --timeout 1500 \
	--peer 'bash tests/guest/twohost.sh' \
	'bash tests/guest/twohost.sh'
tap guest-fuzz-wire tools/guest.sh --timeout 1500 --peer 'bash tests/guest/fuzz-wire.sh' 'bash tests/guest/fuzz-wire.sh'

if [ "$debug" != 1 ]; then
	echo "# debug kernel: not run (VHCA_DEBUG_KERNEL=1 runs it)"
elif [ "$debug_ok" = 1 ]; then
	tap guest-device-debug tools/guest.sh --debug 'bash tests/guest/device.sh'
	tap guest-kulp-debug tools/guest.sh --debug --timeout 1200 'bash tests/guest/kulp.sh'
else
	echo "not ok - debug kernel: tools/debug-kernel.sh or make debug failed"
	failed=$((failed + 1))
fi

rm -rf "$logs"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
