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

awk '
$1 == "RESULT" { v[$2 "," $3] = $4; if (!($3 in seen)) { seen[$3] = 1; order[n++] = $3 } }
END {
	printf "%-28s %12s %12s %14s\n", "metric", "vhca0", "rxe0", "vhca/rxe"
	for (i = 0; i < n; i++) {
		m = order[i]
		if (m ~ /^memcpy/) continue
		a = v["vhca0," m]; b = v["rxe0," m]
		if (a == "") a = "n/a"; if (b == "") b = "n/a"
		r = (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "n/a"
		printf "%-28s %12s %12s %14s\n", m, a, b, r
	}
	printf "%-28s %12s  (ceiling: cache-resident buffers)\n", "guest memcpy 64KiB MBps", v["guest,memcpy_64KiB_MBps"]
	printf "%-28s %12s  (ceiling: buffers larger than any cache)\n", "guest memcpy 64MiB MBps", v["guest,memcpy_64MiB_MBps"]
	print "usec/ns figures: lower is better (target vhca/rxe <= 0.20); MBps/Mpps: higher (target >= 5)"
}' "$out"
