# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# tests/guest/twohost.sh, packets and peers that misbehave: a WRITE server
# killed mid-run (its client fails with RETRY_EXC_ERR, its packets are
# dropped and counted), forged ACKs for PSNs never sent, and garbage and a
# runt on UDP 4791.
#
# Sourced by twohost.sh, which runs hostile_PHASE_a in guest a and
# hostile_PHASE_b in guest b, in step; PHASE is vhca (b on vhca0) or rxe
# (b on rxe0).

# killed_server: a 30-second ib_write_bw server on vhca0 (port 18600)
# that is killed with SIGKILL once b's client is writing to it
killed_server() {
	local srv ok=0
	T=150 write_server 30 18600 120 || ok=1
	pkill -KILL -x ib_write_bw	# the program, not timeout(1) around it
	wait "$srv"
	return $ok
}
# forged_ack_server: a 16-second ib_write_bw server on vhca0 (port 18602)
# that, once b's client is writing to it, sends b's QP valid-looking ACKs
# for a PSN far beyond any it has sent (tests/guest/forge_ack.py).  Its
# QP says which: the remote QPN, and the PSN it expects next (rq-psn).
# The ACKs must come while b's QP exists: on a loaded host the 2000
# packets write_server waits for, and three starts of python, took most
# of the 8 s the two ran before, and in one full run b counted none
# (most likely because its QP was gone by then).
forged_ack_server() {
	local srv qpn psn ok=0
	T=90 write_server 16 18602 60 || ok=1
	read -r qpn psn <<<"$(rdma res show qp link vhca0/1 | awk '
		/type RC/ && /comm ib_write_bw/ {
			for (i = 1; i < NF; i++) {
				if ($i == "rqpn") q = $(i + 1)
				if ($i == "rq-psn") p = $(i + 1)
			}
		}
		END { print q, p }')"
	echo "b's QPN $qpn, next PSN $psn"
	for _ in 1 2 3; do
		python3 tests/guest/forge_ack.py 10.76.1.1 10.76.1.2 "$qpn" \
			$((psn + 0x400000)) || ok=1
	done
	wait "$srv" || ok=1
	return $ok
}
# forged_ack_client: b's side.  The ACK is dropped and counted
# (rcvd_unexpected); believed, it would have completed WRITEs a never got.
forged_ack_client() {
	local u0 u1 n0
	u0=$(stat rcvd_unexpected) n0=$(stat rcvd_no_qp)
	retry pt ib_write_bw vhca0 -D 16 -p 18602 10.76.1.1 || return 1
	u1=$(stat rcvd_unexpected)
	# an ACK that came after the QP went is counted there instead
	echo "rcvd_unexpected $u0 -> $u1, rcvd_no_qp $n0 -> $(stat rcvd_no_qp)"
	[ "$u1" -gt "$u0" ]
}
# killed_client: b's side of killed_server.  Its server's QP is gone, so
# nothing answers: its WRITEs must fail with RETRY_EXC_ERR (status 12)
# after retry_cnt timeouts, and the program end, well before its 30 s.
killed_client() {
	local out rc
	write_client vhca0 18600 || return 1
	echo "exit status $rc"
	grep "Failed status\|Completion with error" <<<"$out"
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] &&
		grep -q "Failed status 12:" <<<"$out"
}

hostile_vhca_a() {
	nopq0=$(stat rcvd_no_qp)
	check "guest a: SIGKILL to a WRITE server on vhca0 mid-run, client vhca0 in b" \
		killed_server
	check "guest a: the client's packets for the dead QP are dropped and counted (rcvd_no_qp)" \
		wait_for 30 grew rcvd_no_qp "$nopq0"
	check "guest a: WRITE server on vhca0 sends b's client a forged ACK" \
		forged_ack_server
	# 5 datagrams of garbage and one too short, from b, while nothing else
	# reaches vhca0: counted as deltas
	icrc0=$(stat rcvd_bad_icrc) hdr0=$(stat rcvd_bad_header)
	check "guest a: tell b to send garbage" tell 10.76.1.2 garbage
	check "guest a: b sent it" hear garbage-sent
	check "guest a: garbage is dropped and counted (rcvd_bad_icrc grew by 5)" \
		wait_for 10 grew rcvd_bad_icrc $((icrc0 + 4))
	check "guest a: a runt is dropped and counted (rcvd_bad_header grew)" \
		wait_for 10 grew rcvd_bad_header "$hdr0"
}

hostile_vhca_b() {
	check "guest b: a WRITE client whose server was killed fails with RETRY_EXC_ERR" \
		killed_client
	check "guest b: an ACK beyond any PSN sent is dropped and counted, the WRITEs go on" \
		forged_ack_client
	check "guest b: a is ready for garbage" hear garbage
	check "guest b: send a's vhca0 garbage and a runt on UDP 4791" \
		python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5):
    s.sendto(bytes(range(i, 40 + i)), ("10.76.1.1", 4791))
s.sendto(b"abc", ("10.76.1.1", 4791))'
	check "guest b: tell a it went" tell 10.76.1.1 garbage-sent
}
