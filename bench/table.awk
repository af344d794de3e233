# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The benchmarks' table: "RESULT <vhca0|rxe0|guest> <metric> <value>"
# lines in, one row per metric with the vhca/rxe ratio out; -v target=...
# replaces the line that states the targets.  A metric measured in more
# than one round shows the mean of the rounds that gave a figure, and
# "(dev: k of n)" when some did not.
$1 == "RESULT" {
	key = $2 "," $3
	rounds[key]++
	if ($4 ~ /^[0-9.]+$/) { sum[key] += $4; got[key]++ }
	if (!($3 in seen)) { seen[$3] = 1; order[n++] = $3 }
}
END {
	for (key in rounds) {
		if (!got[key]) continue
		v[key] = sprintf("%.6g", sum[key] / got[key])
		if (got[key] < rounds[key])
			short[key] = sprintf(" (%s: %d of %d)", substr(key, 1, index(key, ",") - 1), got[key], rounds[key])
	}
	printf "%-36s %12s %12s %14s\n", "metric", "vhca0", "rxe0", "vhca/rxe"
	# the wire benchmark's kernel time per packet comes after the figures
	for (i = 0; i < n; i++)
		if (order[i] ~ /kernel_/) later[k++] = order[i]
		else now[j++] = order[i]
	for (i = 0; i < j + k; i++) {
		m = i < j ? now[i] : later[i - j]
		if (m ~ /^memcpy/ || m ~ /^link_tcp/) continue
		a = v["vhca0," m]; b = v["rxe0," m]
		if (a == "") a = "n/a"; if (b == "") b = "n/a"
		r = (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "n/a"
		printf "%-36s %12s %12s %14s%s%s\n", m, a, b, r, short["vhca0," m], short["rxe0," m]
	}
	if (("guest,memcpy_64KiB_MBps") in v) {
		printf "%-36s %12s  (ceiling: cache-resident buffers)\n", "guest memcpy 64KiB MBps", v["guest,memcpy_64KiB_MBps"]
		printf "%-36s %12s  (ceiling: buffers larger than any cache)\n", "guest memcpy 64MiB MBps", v["guest,memcpy_64MiB_MBps"]
	}
	if (("guest,link_tcp_MBps") in v)
		printf "%-36s %12s  (ceiling: the kernel's TCP over the same link)\n", "link TCP MB/s", v["guest,link_tcp_MBps"]
	if (target == "")
		target = "usec/ns figures: lower is better (target vhca/rxe <= 0.20); MBps/Mpps: higher (target >= 5)"
	print target
}
