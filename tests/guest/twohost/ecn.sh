# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# tests/guest/twohost.sh, congestion: 4 QPs of WRITEs through an 80 Mbit/s
# shaper with fq_codel under it, which marks their packets (ECN) instead
# of dropping them; a sends CNPs and b's QPs cut their windows.  Then one
# CNP at a time to an idle RC QP of b's, its window read before and
# after each.
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

	# b's requester on an idle QP: a CNP from a, as a sends them, when
	# b says so, twice; then datacheck's data
	dc vhca0 >/tmp/cnp-dc.log 2>&1 &
	local srv=$! q k
	q=$(hear_word)
	check "guest a: b's idle RC QP is $q" test -n "$q"
	for k in 1 2; do
		python3 tests/guest/pktfuzz.py blast --victim 10.76.1.2 \
			--peer 10.76.1.1 --src 10.76.1.1 --qpn "$q" --op 0x81 \
			--psns 1 --rounds 1 >/tmp/cnp.log 2>&1
		check "guest a: CNP $k to b's QP $q sent ($(tail -n 1 /tmp/cnp.log))" \
			tell 10.76.1.2 "cnp-$k"
		hear "read-$k"
	done
	wait "$srv"
	check_eq "guest a: datacheck's server after the cuts (its exit status)" "$?" 0
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

	# A CNP halves the window of the RC QP it names (RoCEv2 congestion
	# control: DCQCN cuts a rate, vhca the packets in flight); one within
	# VHCA_REQ_CUT_GAP of the last does nothing, so the second comes
	# later.  The QP is idle: no ACK grows the window back between the
	# readings.
	local pid q w k
	rm -f /tmp/hold
	bg_dc
	pid=$!
	q=$(wait_for_qpn)
	w[0]=$(window_of "$q")
	tell 10.76.1.1 "$q"
	for k in 1 2; do
		hear "cnp-$k"
		w[k]=$(wait_window_below "$q" "${w[k - 1]}")
		sleep 0.2	# past the gap between two cuts (100 ms)
		tell 10.76.1.1 "read-$k"
	done
	check_eq "guest b: an idle RC QP's window: the most packets in flight (rdma res show qp -dd)" \
		"${w[0]}" 512
	check_eq "guest b: one CNP halved it" "${w[1]}" 256
	check_eq "guest b: the next one halved it again" "${w[2]}" 128
	check "guest b: counted: rcvd_cnps and window_cuts grew by 2" \
		test "$(($(stat rcvd_cnps) - cnps1))" = 2 -a "$(($(stat window_cuts) - cuts1))" = 2
	touch /tmp/hold
	wait "$pid"
	check_eq "guest b: datacheck's client on that QP after the cuts: every byte (exit status)" "$?" 0
	tail -n 3 /tmp/cnp-dc.log | sed 's/^/#   /'
}

# bg_dc: b's datacheck client, holding its QP idle (-H /tmp/hold),
# in the background; its counters before, in cnps1 and cuts1
bg_dc() {
	cnps1=$(stat rcvd_cnps) cuts1=$(stat window_cuts)
	dc vhca0 -t rc -o send,write -s 4096 -n 64 -H /tmp/hold 10.76.1.1 \
		>/tmp/cnp-dc.log 2>&1 &
}
# wait_for_qpn: the QPN datacheck holds (60 s at most)
wait_for_qpn() {
	wait_for 60 grep -q '^datacheck: holding QPN' /tmp/cnp-dc.log &&
		sed -n 's/^datacheck: holding QPN \([0-9]*\) .*/\1/p' /tmp/cnp-dc.log
}
# window_of QPN: its requester's window, as rdma res show qp -dd says
window_of() {
	rdma res show qp link vhca0/1 lqpn "$1" -dd | tr -s ' \n' '  ' |
		sed -n 's/.* drv_window \([0-9]*\).*/\1/p'
}
# wait_window_below QPN W: the window, once it is below W (the cut is the
# QP's work's, after the CNP), or as it is after 10 s
wait_window_below() {
	local i w
	for i in $(seq 100); do
		w=$(window_of "$1")
		[ -n "$w" ] && [ "$w" -lt "$2" ] && break
		sleep 0.1
	done
	echo "$w"
}
