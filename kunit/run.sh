#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build a UML kernel from linux-source-6.12 with vhca in its tree and run the
# KUnit suites.  The unpacked tree and the build folder are cached outside
# the clone, so a second run rebuilds only what changed.
#
# Prints kunit.py's KTAP, then "kunit: N passed, N failed".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tools/lib.sh"

base="$VHCA_CACHE/kunit"
ksrc="$base/linux-source-6.12"
build="$base/build"
[ -f "$ksrc/.vhca-unpacked" ] || die "$ksrc missing: run tools/setup.sh"

# vhca's sources go into the tree as a copy (a symlink would let the
# out-of-tree objects in the clone leak into the UML link through VPATH).
# cp -p keeps mtimes, so unchanged files do not rebuild.
dst="$ksrc/drivers/infiniband/sw/vhca"
rm -rf "$dst"
mkdir -p "$dst"
(cd "$VHCA_ROOT" && cp -p --parents Kbuild Kconfig uapi/*.h drivers/*.[ch] kunit/*.c "$dst/")
# The compatibility probes want a configured tree: they run against
# Debian's 6.12 headers, the release linux-source-6.12 is.
rm -f "$dst/drivers/vhca_probed.h"
bash "$VHCA_ROOT/drivers/compat/probe.sh" "/usr/src/linux-headers-$(vhca_kver)" \
	"$dst/drivers/vhca_probed.h"

grep -q 'sw/vhca/Kconfig' "$ksrc/drivers/infiniband/Kconfig" ||
	sed -i 's|^source "drivers/infiniband/sw/rxe/Kconfig"|&\nsource "drivers/infiniband/sw/vhca/Kconfig"|' \
		"$ksrc/drivers/infiniband/Kconfig"
grep -q 'sw/vhca/Kconfig' "$ksrc/drivers/infiniband/Kconfig" ||
	die "could not hook vhca's Kconfig into the tree"
grep -q 'CONFIG_INFINIBAND_VHCA' "$ksrc/drivers/infiniband/sw/Makefile" ||
	echo 'obj-$(CONFIG_INFINIBAND_VHCA) += vhca/' >>"$ksrc/drivers/infiniband/sw/Makefile"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
set +e
(cd "$ksrc" && python3 tools/testing/kunit/kunit.py run \
	--kunitconfig="$VHCA_ROOT/kunit/.kunitconfig" \
	--build_dir="$build" --jobs="$(nproc)" --raw_output=all) >"$out" 2>&1
rc=$?
set -e

# Keep the KTAP and what a failure needs; drop the build chatter.
sed -n '/^KTAP version\|^TAP version/,$p' "$out" | grep -v '^\[' || true
if ! grep -q '^KTAP version\|^TAP version' "$out"; then
	tail -40 "$out"
fi

# Count the test cases: KTAP indents a suite's cases by 4 spaces.
passed=$(grep -E '^    ok [0-9]+ ' "$out" | grep -vc '# SKIP' || true)
skipped=$(grep -E '^    ok [0-9]+ ' "$out" | grep -c '# SKIP' || true)
failed=$(grep -cE '^    not ok [0-9]+ ' "$out" || true)
# the plan: every case kunit/*.c declares reports, none lost with a suite
# that did not run
ncases=$(sh "$VHCA_ROOT/kunit/cases.sh")
if [ $((passed + skipped + failed)) != "$ncases" ]; then
	echo "kunit: kunit/*.c declares $ncases cases, $((passed + skipped + failed)) reported"
	failed=$((failed + 1))
fi
[ "$rc" = 0 ] || [ "$failed" != 0 ] || failed=1
echo "kunit: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
