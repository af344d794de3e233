#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The benchmark (not a test): one guest boot measures the same programs on
# vhca0 and on rxe0 and prints one table with vhca/rxe ratios and the
# guest's memcpy bandwidth as the ceiling.  Figures from TCG are only
# comparable within one run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tools/lib.sh"
cd "$VHCA_ROOT"

bash tools/setup.sh
make -s all
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tools/guest.sh --timeout 1800 'bash bench/guest-bench.sh' | tee "$out" | grep -v '^RESULT' || true

awk -f bench/table.awk "$out"
