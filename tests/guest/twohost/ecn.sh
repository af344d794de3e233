# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# tests/guest/twohost.sh, congestion: 4 QPs of WRITEs through an 80 Mbit/s
# shaper with fq_codel under it, which marks their packets (ECN) instead
# of dropping them; a sends CNPs and b's QPs cut their windows.
#
# Sourced by twohost.sh, which runs ecn_PHASE_a in guest a and
# ecn_PHASE_b in guest b, in step; PHASE is vhca (b on vhca0) or rxe
# (b on rxe0).

# shaped on|off: eth1's egress at 80 Mbit/s (tbf), queued in fq_codel
# under it, which marks ECN-capable packets where it drops others
shaped() {
	if [ "$1" = on ]; then
		modprobe sch_tbf && modprobe sch_fq_codel &&
			tc qdisc add dev eth1 root handle 1: tbf rate 80mbit \
				burst 20k latency 200ms &&
			tc qdisc add dev eth1 parent 1:1 fq_codel ecn
	else
		tc qdisc del dev eth1 root
	fi
}

ecn_vhca_a() {
	cnps0=$(stat sent_cnps)
	check "guest a: ib_write_bw server with 4 QPs on vhca0, b's client behind a shaper" \
		pt ib_write_bw vhca0 -q 4
	check "guest a: the CE-marked requests drew CNPs (sent_cnps)" \
		grew sent_cnps "$cnps0"
}

ecn_vhca_b() {
	# Through 80 Mbit/s, fq_codel dropped what queued too long, and
	# go-back-N sent up to a window again for each drop: 0.27 MB/s, and
	# one run never finished.  RC packets are ECN-capable: fq_codel marks
	# them instead, a sends CNPs, and the QPs' windows halve.
	check "guest b: eth1 shaped to 80 Mbit/s, fq_codel with ECN under it" \
		shaped on
	sent0=$(stat sent_pkts) resent0=$(stat retrans_pkts)
	cnps0=$(stat rcvd_cnps) cuts0=$(stat window_cuts)
	to0=$(stat retrans_timeouts)
	# A 1 s transport timeout (-u 18), not perftest's 67 ms: with the
	# host busy building the debug kernel, 2,144 of 53,344 packets (4%,
	# 67 windows of 32) went again though fq_codel dropped none, resent
	# on timeouts of late ACKs.  What this measures is what drops cost.
	check "guest b: ib_write_bw client with 4 QPs on vhca0 through the shaper" \
		retry pt ib_write_bw vhca0 -q 4 -u 18 10.76.1.1
	echo "# retrans_timeouts grew by $(($(stat retrans_timeouts) - to0))"
	check "guest b: fq_codel marked packets (ecn_mark > 0)" \
		test "$(codel ecn_mark)" -gt 0
	check_eq "guest b: fq_codel dropped none" "$(codel dropped)" 0
	check "guest b: CNPs came and cut the windows (rcvd_cnps, window_cuts)" \
		test "$(stat rcvd_cnps)" -gt "$cnps0" -a \
		"$(stat window_cuts)" -gt "$cuts0"
	check "guest b: the 4 QPs sent again fewer than 2% of their packets" \
		few_resends "$sent0" "$resent0"
	check "guest b: shaper off" shaped off
}
