# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The block-storage benchmark's table (bench/guest-nvme.sh): "RESULT
# <loop|vhca0|rxe0> <metric> <value>" lines in; one row per metric with
# the mean of the rounds that gave a figure on each transport, vhca/rxe
# and vhca/loop.  Latency rows (usec) are better lower: their ratios are
# printed as they are, and the targets say which way each must go.
$1 == "RESULT" {
	key = $2 "," $3
	rounds[key]++
	if ($4 ~ /^[0-9.]+$/) { sum[key] += $4; got[key]++ }
	if (!($3 in seen)) { seen[$3] = 1; order[n++] = $3 }
	if ($2 ~ /^vhca0-/ && !($2 in isbuild)) { isbuild[$2] = 1; build[nb++] = $2 }
}
function val(k) { return got[k] ? sprintf("%.6g", sum[k] / got[k]) : "n/a" }
function ratio(a, b) { return (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "n/a" }
END {
	printf "%-30s %10s %10s %10s %10s %10s\n", "metric", "loop", "rxe0", "vhca0", "vhca/rxe", "vhca/loop"
	for (i = 0; i < n; i++) {
		m = order[i]
		l = val("loop," m); x = val("rxe0," m); v = val("vhca0," m)
		printf "%-30s %10s %10s %10s %10s %10s", m, l, x, v, ratio(v, x), ratio(v, l)
		for (w in rounds)
			if (index(w, "," m) && got[w] < rounds[w])
				printf " (%s: %d of %d)", substr(w, 1, index(w, ",") - 1), got[w], rounds[w]
		printf "\n"
	}
	# AB=...: each build's figure, then each one's ratio to the first's
	for (i = 0; nb && i < n; i++) {
		m = order[i]
		if (!i) {
			printf "%-30s %10s %10s", "builds (AB): metric", "loop", "rxe0"
			for (j = 0; j < nb; j++) printf " %10s", build[j]
			for (j = 1; j < nb; j++) printf " %10s", substr(build[j], 7) "/" substr(build[0], 7)
			printf "\n"
		}
		printf "%-30s %10s %10s", m, val("loop," m), val("rxe0," m)
		for (j = 0; j < nb; j++) printf " %10s", val(build[j] "," m)
		for (j = 1; j < nb; j++) printf " %10s", ratio(val(build[j] "," m), val(build[0] "," m))
		printf "\n"
	}
	print "targets: 4k QD32 IOPS vhca/rxe >= 3 and vhca/loop >= 0.8; 128k write vhca/loop >= 0.5; QD1 usec vhca/loop <= 1.3"
	print "loop: nvme-loop, the same nvmet and block layers with no transport (NVMe rows only)"
}
