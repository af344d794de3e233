# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# tests/guest/twohost.sh, losses and how they are recovered: RNR NAKs,
# resends on timeout and duplicate READs and atomics answered from memory
# (an nftables rule drops one chosen packet), then netem's loss, delay and
# reordering (sequence NAKs, and READs asked for again in part from rxe).
#
# Sourced by twohost.sh, which runs lossy_PHASE_a in guest a and
# lossy_PHASE_b in guest b, in step; PHASE is vhca (b on vhca0) or rxe
# (b on rxe0).

# lossy on|off: netem on eth1's egress: loss, delay and reordering
lossy() {
	if [ "$1" = on ]; then
		modprobe sch_netem &&
			tc qdisc add dev eth1 root netem delay 1ms loss 1% \
				reorder 5%
	else
		tc qdisc del dev eth1 root
	fi
}
# drop_first on [BYTES]|off|count: an nftables rule on eth1's egress that
# drops the first RoCEv2 packet out and passes the rest: its quota counts
# the bytes of the packets it meets, and drops while they stay under BYTES
# (200: more than one small packet, less than two); count says how many it
# dropped
drop_first() {
	case $1 in
	on)
		nft add table netdev vhcadrop &&
			nft add chain netdev vhcadrop out \
				'{ type filter hook egress device eth1 priority 0; }' &&
			nft add rule netdev vhcadrop out udp dport 4791 \
				quota until "${2:-200}" bytes counter drop
		;;
	off) nft delete table netdev vhcadrop ;;
	count)
		nft list table netdev vhcadrop |
			sed -n 's/.*counter packets \([0-9]*\) .*/\1/p'
		;;
	esac
}

lossy_vhca_a() {
	# b's RNR and timeout scenarios, then a READ whose response a drops
	check "guest a: datacheck server posting its receives late (RNR) on vhca0, client vhca0 in b" \
		dc vhca0
	check "guest a: datacheck server on vhca0, client vhca0 in b dropping its first packet" \
		dc vhca0
	dup0=$(stat rcvd_duplicate_requests)
	check "guest a: an nftables rule drops vhca0's first packet out" \
		drop_first on
	check "guest a: datacheck server (read) on vhca0, client vhca0 in b: the READ's response is dropped once" \
		dc vhca0
	check_eq "guest a: the rule dropped one packet" "$(drop_first count)" 1
	check "guest a: b asked for the READ again, and a answered from memory (rcvd_duplicate_requests grew)" \
		grew rcvd_duplicate_requests "$dup0"
	check "guest a: the rule removed" drop_first off
	# an atomic ACK is 70 bytes on the wire: 100 drops the first only
	dup0=$(stat rcvd_duplicate_requests)
	check "guest a: the rule again, for the first atomic ACK" \
		drop_first on 100
	check "guest a: ib_atomic_bw server on vhca0, client vhca0 in b: the first ACK dropped" \
		pt ib_atomic_bw vhca0
	check_eq "guest a: the rule dropped one packet" "$(drop_first count)" 1
	check "guest a: b sent the atomic again, and a answered it as a duplicate (rcvd_duplicate_requests grew)" \
		grew rcvd_duplicate_requests "$dup0"
	check "guest a: the rule removed" drop_first off
	# an ATOMIC WRITE's response is a 62-byte READ response of no bytes
	dup0=$(stat rcvd_duplicate_requests)
	check "guest a: the rule again, for the response to an ATOMIC WRITE" \
		drop_first on 100
	check "guest a: datacheck server (awrite) on vhca0, client vhca0 in b: the response dropped once" \
		dc vhca0
	check_eq "guest a: the rule dropped one packet" "$(drop_first count)" 1
	check "guest a: b sent the ATOMIC WRITE again, and a answered it from memory (rcvd_duplicate_requests grew)" \
		grew rcvd_duplicate_requests "$dup0"
	check "guest a: the rule removed" drop_first off
	naks0=$(stat sent_seq_naks)
	check "guest a: netem: 1% loss, 1 ms delay, 5% reordering" lossy on
	# Not ibv_rc_pingpong: it tears its QP down with nothing to say the
	# peer is done, so when the ACK of the other side's last SEND is lost,
	# that SEND's resends meet no QP and it ends in RETRY_EXC_ERR (seen
	# here once: b's client had passed), on any RC transport.  perftest
	# meets over TCP before it lets go; rping disconnects through the CM.
	check "guest a: ib_send_bw server on a lossy link" \
		pt ib_send_bw vhca0 -n 50
	check "guest a: rping server on a lossy link" rp -s 10.76.1.1
	check "guest a: ib_write_bw server on a lossy link" \
		pt ib_write_bw vhca0 -n 50
	check "guest a: ib_read_bw server on a lossy link" \
		pt ib_read_bw vhca0 -n 50
	check "guest a: netem dropped packets" test "$(qdisc_drops)" -gt 0
	check "guest a: gaps drew sequence NAKs (sent_seq_naks grew)" \
		grew sent_seq_naks "$naks0"
	check "guest a: netem off" lossy off
}

lossy_vhca_b() {
	rnr0=$(stat rcvd_rnr_naks)
	check "guest b: datacheck client on vhca0, SENDs to receives posted 500 ms late in a" \
		dc vhca0 -t rc -o send,send_imm -s 4096 -n 8 -R 10.76.1.1
	check "guest b: a's vhca0 answered with RNR NAKs, b's sent again (rcvd_rnr_naks grew)" \
		grew rcvd_rnr_naks "$rnr0"
	to0=$(stat retrans_timeouts)
	check "guest b: an nftables rule drops vhca0's first packet out" \
		drop_first on
	check "guest b: datacheck client on vhca0, server vhca0 in a: one SEND, its first packet dropped" \
		dc vhca0 -t rc -o send -s 64 -n 1 10.76.1.1
	check_eq "guest b: the rule dropped one packet" "$(drop_first count)" 1
	check "guest b: no NAK could come: sent again on timeout (retrans_timeouts grew)" \
		grew retrans_timeouts "$to0"
	check "guest b: the rule removed" drop_first off
	to0=$(stat retrans_timeouts)
	check "guest b: datacheck client (read) on vhca0, server vhca0 in a dropping its first packet" \
		dc vhca0 -t rc -o read -s 64 -n 1 10.76.1.1
	check "guest b: the READ went again on timeout (retrans_timeouts grew)" \
		grew retrans_timeouts "$to0"
	to0=$(stat retrans_timeouts)
	check "guest b: ib_atomic_bw client on vhca0, server vhca0 in a dropping its first ACK" \
		retry pt ib_atomic_bw vhca0 10.76.1.1
	check "guest b: the atomic went again on timeout (retrans_timeouts grew)" \
		grew retrans_timeouts "$to0"
	to0=$(stat retrans_timeouts)
	check "guest b: datacheck client (awrite) on vhca0, server vhca0 in a dropping its response" \
		dc vhca0 -w -t rc -o awrite -s 64 -n 1 10.76.1.1
	check "guest b: the ATOMIC WRITE went again on timeout (retrans_timeouts grew)" \
		grew retrans_timeouts "$to0"
	naks0=$(stat rcvd_seq_naks) resent0=$(stat retrans_pkts)
	check "guest b: netem: 1% loss, 1 ms delay, 5% reordering" lossy on
	check "guest b: ib_send_bw client on a lossy link" \
		retry pt ib_send_bw vhca0 -n 50 10.76.1.1
	check "guest b: rping client on a lossy link (data checked)" \
		retry rp -c 10.76.1.1
	check "guest b: ib_write_bw client on a lossy link" \
		retry pt ib_write_bw vhca0 -n 50 10.76.1.1
	check "guest b: ib_read_bw client on a lossy link" \
		retry pt ib_read_bw vhca0 -n 50 10.76.1.1
	check "guest b: netem dropped packets" test "$(qdisc_drops)" -gt 0
	check "guest b: NAKs came and packets were resent (rcvd_seq_naks, retrans_pkts grew)" \
		bash -c "[ $(stat rcvd_seq_naks) -gt $naks0 ] && [ $(stat retrans_pkts) -gt $resent0 ]"
	check "guest b: netem off" lossy off
}

lossy_rxe_a() {
	# READs asked for again in part, then whole after a timeout: rxe
	# drops a request that starts before its latest one
	check "guest a: netem on, with rxe0 in b" lossy on
	reasks0=$(stat read_rest_requests)
	check "guest a: ib_read_bw client on vhca0 on a lossy link, server rxe0 in b" \
		retry pt ib_read_bw vhca0 -n 50 10.76.1.2
	check "guest a: it asked rxe0 for the rest of READs (read_rest_requests)" \
		grew read_rest_requests "$reasks0"
	check "guest a: netem off" lossy off
}

lossy_rxe_b() {
	check "guest b: netem on, with vhca0 in a" lossy on
	check "guest b: ib_read_bw server on rxe0 on a lossy link, client vhca0 in a" \
		pt ib_read_bw rxe0 -n 50
	check "guest b: netem off" lossy off
}
