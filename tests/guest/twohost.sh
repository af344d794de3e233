#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in both guests of a two-guest boot (VHCA_GUEST is a or b): eth1 of
# each shares one link.  Each guest puts vhca on eth1 and reaches the other
# over that link.  Then RoCEv2 on the wire, vhca to vhca: UD, UC and RC
# pingpongs (RC's also on an SRQ), perftest's WRITE (also on 8 QPs, with
# next to no packet sent again, in 1 KiB packets and, on jumbo frames, in
# 4 KiB ones), READ and atomic bandwidth, a stream of
# small SENDs that must not draw an ACK each, rping and
# rdma_server/rdma_client (RDMA CM), rdma_post_recvv into several SGEs,
# NVMe-oF (nvmet-rdma with SRQs in a, nvme-rdma in b) and iSER (ib_isert
# in a, ib_iser in b); 4 QPs of WRITEs through a shaper with fq_codel
# under it, which marks their packets (ECN) instead of dropping them, so
# that a sends CNPs and b's QPs halve their windows; then RC again on a
# link with netem's loss, delay and reordering (rping's data checked).  b swaps vhca0 for
# rxe0, and the same run vhca to rxe in both roles, then udaddy,
# rdma_post_recvv, NVMe-oF and iSER both ways.  Garbage sent to vhca's
# port is dropped and counted in `rdma statistic`.  Last, a deletes vhca0
# under a WRITE server that b's rxe0 is writing to, then moves eth1 into
# a network namespace, as a container would have it, and puts vhca0 on it
# there: rping and ib_write_bw with b's rxe0, then the namespace is
# deleted under the device.  Guest a stays up until b says it is done.
# vhca0 takes its packets before the IP stack (UDP never sees them),
# except on a netdev whose rx_handler is taken (a macvlan's, in c1): there
# its UDP socket receives them.  Servers start in order; clients retry
# until their server is up, and a step that needs both ends to finish
# together ends with tell/hear.
. tests/guest/lib.sh
. tests/guest/nvme.sh
. tests/guest/iscsi.sh

case ${VHCA_GUEST:-} in
a) me=1 peer=2 ;;
b) me=2 peer=1 ;;
*) echo "VHCA_GUEST must be a or b"; exit 2 ;;
esac

ip link set eth1 up
ip addr add 10.76.1.$me/24 dev eth1
check "guest $VHCA_GUEST: eth1 has carrier" \
	wait_for 10 grep -q 1 /sys/class/net/eth1/carrier
check "guest $VHCA_GUEST: rdma link add vhca0 on eth1" \
	rdma link add vhca0 type vhca netdev eth1
check_eq "guest $VHCA_GUEST: rdma link show" \
	"$(rdma link show vhca0/1 | sed 's/[[:space:]]*$//')" \
	"link vhca0/1 state ACTIVE physical_state LINK_UP netdev eth1"
check "guest $VHCA_GUEST: its IPv4 address is a GID" wait_for 10 \
	grep -sqx "0000:0000:0000:0000:0000:ffff:0a4c:010$me" \
	/sys/class/infiniband/vhca0/ports/1/gids/0 \
	/sys/class/infiniband/vhca0/ports/1/gids/1 \
	/sys/class/infiniband/vhca0/ports/1/gids/2
check "guest $VHCA_GUEST: the peer answers over the shared link" \
	wait_for 90 ping -c 1 -W 1 10.76.1.$peer

v4gid() {
	grep -slx "0000:0000:0000:0000:0000:ffff:0a4c:010$me" \
		/sys/class/infiniband/"$1"/ports/1/gids/* | head -n 1 |
		xargs -r basename
}
# has_v4gid DEV: DEV lists that address (the core adds GIDs from a work item)
has_v4gid() { [ -n "$(v4gid "$1")" ]; }
v6gid() {
	grep -sl "^fe80:" /sys/class/infiniband/"$1"/ports/1/gids/* |
		head -n 1 | xargs -r basename
}
# ud DEV [SERVER]: ibv_ud_pingpong over DEV's IPv4 GID (${GID:-v4gid})
ud() {
	local dev=$1
	shift
	timeout "${T:-150}" ibv_ud_pingpong -d "$dev" \
		-g "$("${GID:-v4gid}" "$dev")" -n 200 "$@"
}
ud6() { GID=v6gid ud "$@"; }
# pp PROG DEV [SERVER]: an ibv_*_pingpong, 10000-byte messages in
# 1024-byte packets, each received buffer checked
pp() {
	local prog=$1 dev=$2
	shift 2
	timeout "${T:-150}" "$prog" -d "$dev" -g "$(v4gid "$dev")" -n 100 \
		-s 10000 -m 1024 -c "$@"
}
uc() { pp ibv_uc_pingpong "$@"; }
rc() { pp ibv_rc_pingpong "$@"; }
# dc DEV [ARGS] [SERVER]: build/tests/datacheck over DEV's IPv4 GID: every
# byte of SENDs, WRITEs and READs (the client's -t says which QP type; UD's
# messages fit the 1024-byte MTU)
dc() {
	local dev=$1
	shift
	timeout "${T:-300}" build/tests/datacheck -d "$dev" \
		-g "$(v4gid "$dev")" -p 18530 "$@"
}
DC_TYPES="rc uc ud"
dc_args() { [ "$1" = ud ] && echo "-t ud -s 1024 -n 500" || echo "-t $1 -s 32768 -n 200"; }
# 16 MiB SENDs and WRITEs (16,384 packets) each alone on an idle QP: they
# leave in runs of the send ring's work, after ibv_post_send() returned
# (-b), and RC's in windows the ACKs open
BIG_TYPES="rc uc"
dc_big() { echo "-t $1 -o send,write -s 16777216 -n 2 -r 1 -b"; }
srq() { pp ibv_srq_pingpong "$@"; }
# pt PROG DEV [ARGS] [SERVER]: a perftest program over RC, 1024-byte MTU,
# 64 KiB messages (an atomic's are 8 bytes).  -F: a client whose estimate
# of the CPU clock misses perftest's r^2 >= 0.9 (a vCPU preempted while it
# samples) prints a figure of 0 instead of exit(1) before its last
# exchange with the server.  That exit failed the server too, in the
# other guest, where no retry can bring it back (seen in CI: r^2 0.71 on
# a UC WRITE client to rxe).  These tests check the transfers, not the
# figures; bench/ keeps perftest's check.
pt() {
	local prog=$1 dev=$2 size=(-s 65536)
	shift 2
	[ "$prog" = ib_atomic_bw ] && size=()
	timeout "${T:-150}" "$prog" -d "$dev" -x "$(v4gid "$dev")" -m 1024 \
		"${size[@]}" -n 200 -F "$@"
}
ucw() { local dev=$1; shift; pt ib_write_bw "$dev" -c UC "$@"; }
# rp [-s|-c] ADDR: rping, 20 rounds of 5000 bytes; the client checks them
rp() {
	if [ "$1" = -c ]; then
		timeout "${T:-120}" rping -c -a "$2" -C 20 -S 5000 -V
	else
		timeout "${T:-120}" rping -s -a "$2" -C 20 -S 5000
	fi
}
# jumbo on|off: eth1 at MTU 9000, and vhca0's active MTU 4096, or back at
# 1500 and 1024
active_mtu_is() { [ "$(field vhca0 active_mtu)" = "$1" ]; }
jumbo() {
	local mtu=1500 ib="1024 (3)"
	[ "$1" = on ] && mtu=9000 ib="4096 (5)"
	ip link set eth1 mtu $mtu && wait_for 10 active_mtu_is "$ib"
}
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
# qdisc_drops: what eth1's root qdisc has dropped since it was added
qdisc_drops() {
	tc -s qdisc show dev eth1 | sed -n 's/.*dropped \([0-9]*\).*/\1/p' |
		head -n 1
}
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
# stat NAME: a counter of vhca0 as `rdma statistic` shows it
stat() {
	rdma statistic show link vhca0/1 | tr -s ' ' '\n' |
		grep -A1 -x "$1" | tail -n 1
}
# small DEV [SERVER]: 5000 SENDs of 64 bytes, back to back (perftest takes
# the last -s and -n it is given)
small() { local dev=$1; shift; pt ib_send_bw "$dev" -s 64 -n 5000 "$@"; }
# fewer_acks SENT0 RCVD0: since the counters read SENT0 and RCVD0, vhca0
# sent fewer than one packet (an ACK) for every four it received
fewer_acks() {
	local sent=$(($(stat sent_pkts) - $1)) rcvd=$(($(stat rcvd_pkts) - $2))
	echo "sent $sent packets, received $rcvd"
	[ $((sent * 4)) -lt "$rcvd" ]
}
# few_resends SENT0 RESENT0 [PCT]: since sent_pkts and retrans_pkts read
# SENT0 and RESENT0, vhca0 sent fewer than PCT% (2) of its packets again
few_resends() {
	local sent=$(($(stat sent_pkts) - $1)) re=$(($(stat retrans_pkts) - $2))
	echo "sent $sent packets, $re of them again"
	[ "$sent" -gt 0 ] && [ $((re * 100)) -lt $((sent * ${3:-2})) ]
}
# grew NAME VALUE: counter NAME is above VALUE now
grew() { [ "$(stat "$1")" -gt "$2" ]; }
# clean_counters: the counters clean traffic must leave alone
clean_counters() {
	local c
	for c in rcvd_bad_icrc rcvd_bad_header rcvd_unexpected send_dropped; do
		printf '%s %s ' "$c" "$(stat $c)"
	done
}
# udp_in [NS]: the datagrams the IP stack's UDP has delivered in namespace
# NS (default: the initial one), vhca's and rxe's sockets' among them
udp_in() {
	${1:+ip netns exec "$1"} cat /proc/net/snmp |
		awk '/^Udp:/ { if (n++) print $2 }'
}
# rx_udp RCVD0 UDP0 [NS]: the caller's rcvd and udp become what vhca0
# received and what UDP delivered in NS since rcvd_pkts and udp_in NS
# read RCVD0 and UDP0
rx_udp() {
	rcvd=$(($(stat rcvd_pkts) - $1)) udp=$(($(udp_in "$3") - $2))
	echo "vhca0 received $rcvd packets, UDP $udp datagrams"
}
# steered RCVD0 UDP0 [NS]: since then vhca0 received its packets before
# the IP stack (UDP saw fewer than one in a hundred of them); unsteered:
# through its UDP socket
steered() {
	local rcvd udp
	rx_udp "$@"
	[ "$rcvd" -gt 1000 ] && [ $((udp * 100)) -lt "$rcvd" ]
}
unsteered() {
	local rcvd udp
	rx_udp "$@"
	[ "$rcvd" -gt 1000 ] && [ "$udp" -ge "$rcvd" ]
}
# write_server SECONDS PORT WAIT: an ib_write_bw server on vhca0 for
# SECONDS, in the background (its PID in the caller's $srv; T bounds it as
# for pt), returning once b's client is writing to it (2000 packets in,
# at most WAIT seconds)
write_server() {
	local rcvd0
	rcvd0=$(stat rcvd_pkts)
	pt ib_write_bw vhca0 -D "$1" -p "$2" >/dev/null 2>&1 &
	srv=$!
	wait_for "$3" grew rcvd_pkts $((rcvd0 + 2000))
}
# killed_server: a 30-second ib_write_bw server on vhca0 (port 18600)
# that is killed with SIGKILL once b's client is writing to it
killed_server() {
	local srv ok=0
	T=150 write_server 30 18600 120 || ok=1
	pkill -KILL -x ib_write_bw	# the program, not timeout(1) around it
	wait "$srv"
	return $ok
}
# deleted_server: the same, but the server's device is deleted under it
# (rdma link del) instead: the deletion returns, the server ends (told
# by its device's fatal event, or by its client's end) before its
# timeout and not by a signal, and vhca0 comes back for what follows
deleted_server() {
	local srv ok=0 rc
	T=150 write_server 30 18601 120 || ok=1
	timeout 60 rdma link del vhca0 || { echo "link del: $?"; ok=1; }
	wait "$srv"
	rc=$?
	echo "server exit status $rc"
	# 0 or perftest's 1, not a timeout (124) or a signal (128 + n)
	[ "$rc" -le 1 ] || ok=1
	rdma link add vhca0 type vhca netdev eth1 &&
		wait_for 10 has_v4gid vhca0 || ok=1
	return $ok
}
# forged_ack_server: an 8-second ib_write_bw server on vhca0 (port 18602)
# that, once b's client is writing to it, sends b's QP valid-looking ACKs
# for a PSN far beyond any it has sent (tests/guest/forge_ack.py).  Its
# QP says which: the remote QPN, and the PSN it expects next (rq-psn).
forged_ack_server() {
	local srv qpn psn ok=0
	T=90 write_server 8 18602 60 || ok=1
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
	local u0 u1
	u0=$(stat rcvd_unexpected)
	retry pt ib_write_bw vhca0 -D 8 -p 18602 10.76.1.1 || return 1
	u1=$(stat rcvd_unexpected)
	echo "rcvd_unexpected $u0 -> $u1"
	[ "$u1" -gt "$u0" ]
}
# write_client DEV PORT: a 30-second ib_write_bw client on DEV for a's
# server on PORT, tried until it meets the server; its output and exit
# status go to the caller's $out and $rc
write_client() {
	local end=$((SECONDS + 120))
	while :; do
		out=$(T=90 pt ib_write_bw "$1" -D 30 -p "$2" 10.76.1.1 2>&1)
		rc=$?
		grep -q "remote address" <<<"$out" && return 0
		[ $SECONDS -lt $end ] || { echo "never connected"; return 1; }
		sleep 0.5
	done
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
# deleted_client: b's side of deleted_server, on rxe0.  rxe takes a
# retry_cnt of 7, perftest's, as "retry for ever" (rxe_comp.c), where the
# IBA has 7 retries; so its WRITEs into the void do not fail, and it ends
# when its 30 s are up.  It must have met its server, and end on its own.
deleted_client() {
	local out rc
	write_client rxe0 18601 || return 1
	echo "exit status $rc"
	# 0 or perftest's 1, not a timeout (124) or a signal (128 + n)
	[ "$rc" -le 1 ]
}
# retry CMD...: a client, tried until it succeeds, since its server in
# the other guest may not be up yet (30 s a try, 120 s in all).  When
# none does, the output of the try that got furthest (the most lines: a
# server not up yet draws a line or two) says why, with its exit status
# (124: it timed out) and vhca0's counters right after it.
retry() {
	local end=$((SECONDS + 120)) out best='' n=-1 k rc
	until out=$(T=30 "$@" 2>&1); do
		rc=$?
		k=$(wc -l <<<"$out")
		if [ "$k" -gt "$n" ]; then
			best="$out
exit status $rc
$(rdma statistic show link vhca0/1 2>/dev/null)"
			n=$k
		fi
		if [ $SECONDS -ge $end ]; then
			printf '%s\n' "$best"
			return 1
		fi
		sleep 0.2
	done
}
# tell ADDR WORD, hear WORD: one guest says a step is over and the other
# waits for it; both go on whatever the step's result, so they stay in step
tell() { wait_for 120 bash -c "echo $2 >/dev/tcp/$1/7000"; }
hear() { timeout 600 busybox nc -l -p 7000 | grep -qx "$1"; }
# in_c1 CMD...: CMD in guest a's network namespace c1; ports4791 [NS]:
# UDP sockets bound to 4791 in namespace NS (default: the initial one)
in_c1() { ip netns exec c1 "$@"; }
ports4791() {
	${1:+ip netns exec "$1"} ss -Hlun 'sport = :4791' | wc -l
}
# vhca0_gone: no vhca0 (a netdev's departure unregisters it from a work item)
vhca0_gone() { wait_for 20 bash -c '! rdma link show vhca0/1'; }
c1_enter() { ip link set eth1 netns c1 && vhca0_gone; }
c1_link_del() { rdma link del vhca0 && [ "$(ports4791 c1)" = 0 ]; }
# c1_delete: c1 goes with vhca0 on its eth1; eth1 comes home, vhca0 goes,
# and nothing is left to keep vhca from unloading
c1_delete() {
	ip netns del c1 && wait_for 20 test -e /sys/class/net/eth1 &&
		vhca0_gone && modprobe -r vhca
}
# recvv -s|-c ADDR [MODE]: rdma_post_recvv(3) (the server prints TAP)
recvv() { timeout 60 build/tests/post_recvv "$@"; }
# nvme_host ADDR WHAT: the NVMe-oF host's whole visit to the target at ADDR
nvme_host() {
	check "$2: nvme connect" wait_for 120 nvme_connect "$1"
	check "$2: 8 MiB written and read back" nvme_roundtrip
	check "$2: fio randwrite + crc32c verify, 2 jobs, QD16" nvme_fio 4M
	check "$2: nvme disconnect (ib_drain_qp on each queue)" \
		nvme disconnect -n "$NQN"
	check "$2: the namespace is gone" wait_for 30 test ! -b /dev/nvme0n1
}
# nvme_target ADDR USE_SRQ WHAT: a target at ADDR for one visit of a host
nvme_target() {
	check "$3: nvmet-rdma target up (use_srq=$2)" nvme_target_up "$1" "$2"
	check "$3: the host reports done" hear nvme-done
	check "$3: target removed" nvme_target_down
}

# iser_target ADDR WHAT: a LIO iSER target at ADDR for one initiator's visit
iser_target() {
	check "$2: LIO iSER target up" iser_target_up "$1"
	check "$2: the initiator reports done" hear iser-done
	check "$2: target removed, ib_isert unloaded" iser_target_down "$1"
}
# iser_initiator ADDR WHAT: the ib_iser initiator's whole visit to ADDR
iser_initiator() {
	check "$2: discovery and login over iSER" wait_for 120 iser_login "$1"
	check "$2: the session's transport is iSER" iser_transport_is_iser
	check "$2: 8 MiB written and read back" iser_roundtrip
	check "$2: logout" iser_logout "$1"
	check "$2: no session or disk left" wait_for 20 iser_no_session
	check "$2: ib_iser unloads" modprobe -r ib_iser
}

if [ "$VHCA_GUEST" = a ]; then
	check "guest a: UD server on vhca0, client vhca0 in b (wire)" \
		ud vhca0
	check "guest a: the same over IPv6 link-local GIDs" ud6 vhca0
	check "guest a: UC server on vhca0, client vhca0 in b (wire)" \
		uc vhca0
	check "guest a: UC WRITE server on vhca0, client vhca0 in b" \
		ucw vhca0
	check "guest a: RC server on vhca0, client vhca0 in b" rc vhca0
	check "guest a: SRQ server on vhca0, client vhca0 in b" srq vhca0
	for t in $DC_TYPES $BIG_TYPES; do
		check "guest a: datacheck server ($t) on vhca0, client vhca0 in b" \
			dc vhca0
	done
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
	rcvd0=$(stat rcvd_pkts) udp0=$(udp_in)
	for prog in ib_write_bw ib_read_bw ib_atomic_bw; do
		check "guest a: $prog server on vhca0, client vhca0 in b" \
			pt $prog vhca0
	done
	check "guest a: vhca0 took its packets before the IP stack (steering)" \
		steered "$rcvd0" "$udp0"
	# 8192 response packets a READ: sent at once, fq_codel dropped most
	# of them, and b's retries met the same until they ran out
	check "guest a: ib_read_bw server of 8 MiB READs on vhca0, client vhca0 in b" \
		pt ib_read_bw vhca0 -s 8388608 -n 30
	check "guest a: ib_write_bw server with 8 QPs on vhca0, client vhca0 in b" \
		pt ib_write_bw vhca0 -q 8
	check "guest a: eth1 on jumbo frames, vhca0's active MTU 4096" jumbo on
	check "guest a: the same in 4 KiB packets" \
		pt ib_write_bw vhca0 -q 8 -m 4096
	check "guest a: eth1 back at MTU 1500, vhca0's at 1024" jumbo off
	sent0=$(stat sent_pkts) rcvd0=$(stat rcvd_pkts)
	check "guest a: 5000 64-byte SENDs to vhca0 from vhca0 in b" small vhca0
	# b asks for an ACK every 32 packets and at the end of a burst
	check "guest a: it ACKed fewer than one SEND in four" \
		fewer_acks "$sent0" "$rcvd0"
	check "guest a: rping server on vhca0, client vhca0 in b" \
		rp -s 10.76.1.1
	check "guest a: rdma_server on vhca0, rdma_client vhca0 in b" \
		timeout 120 rdma_server
	for mode in small unreg; do
		tap_run "guest a: post_recvv $mode on vhca0, client vhca0 in b" \
			recvv -s 10.76.1.1 $mode
	done
	nvme_target 10.76.1.1 1 \
		"guest a: NVMe-oF target on vhca0, host vhca0 in b"
	iser_target 10.76.1.1 "guest a: iSER target on vhca0, initiator vhca0 in b"
	nopq0=$(stat rcvd_no_qp)
	check "guest a: SIGKILL to a WRITE server on vhca0 mid-run, client vhca0 in b" \
		killed_server
	check "guest a: the client's packets for the dead QP are dropped and counted (rcvd_no_qp)" \
		wait_for 30 grew rcvd_no_qp "$nopq0"
	check "guest a: WRITE server on vhca0 sends b's client a forged ACK" \
		forged_ack_server
	cnps0=$(stat sent_cnps)
	check "guest a: ib_write_bw server with 4 QPs on vhca0, b's client behind a shaper" \
		pt ib_write_bw vhca0 -q 4
	check "guest a: the CE-marked requests drew CNPs (sent_cnps)" \
		grew sent_cnps "$cnps0"
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
	# clean traffic with rxe: nothing dropped, malformed or unexpected
	clean0=$(clean_counters)
	check "guest a: UD server on vhca0, client rxe0 in b" ud vhca0
	check "guest a: UD client on vhca0, server rxe0 in b" \
		retry ud vhca0 10.76.1.2
	check "guest a: UD server on vhca0 over IPv6, client rxe0 in b" \
		ud6 vhca0
	check "guest a: UC server on vhca0, client rxe0 in b" uc vhca0
	check "guest a: UC client on vhca0, server rxe0 in b" \
		retry uc vhca0 10.76.1.2
	check "guest a: UC WRITE server on vhca0, client rxe0 in b" \
		ucw vhca0
	check "guest a: UC WRITE client on vhca0, server rxe0 in b" \
		retry ucw vhca0 10.76.1.2
	check "guest a: RC server on vhca0, client rxe0 in b" rc vhca0
	check "guest a: RC client on vhca0, server rxe0 in b" \
		retry rc vhca0 10.76.1.2
	check "guest a: SRQ server on vhca0, client rxe0 in b" srq vhca0
	for t in $DC_TYPES; do
		check "guest a: datacheck server ($t) on vhca0, client rxe0 in b" \
			dc vhca0
		check "guest a: datacheck client -t $t on vhca0, server rxe0 in b: every byte" \
			dc vhca0 $(dc_args $t) 10.76.1.2
	done
	for t in $BIG_TYPES; do
		check "guest a: datacheck client -t $t on vhca0, server rxe0 in b: 16 MiB messages, posted without sending them" \
			dc vhca0 $(dc_big $t) 10.76.1.2
	done
	check_eq "guest a: that traffic with rxe0: no bad ICRC, header or unexpected packet, no send dropped" \
		"$(clean_counters)" "$clean0"
	for prog in ib_write_bw ib_read_bw ib_atomic_bw; do
		check "guest a: $prog server on vhca0, client rxe0 in b" \
			pt $prog vhca0
		check "guest a: $prog client on vhca0, server rxe0 in b" \
			retry pt $prog vhca0 10.76.1.2
	done
	check "guest a: ib_read_bw server of 8 MiB READs on vhca0, client rxe0 in b" \
		pt ib_read_bw vhca0 -s 8388608 -n 30
	# rxe bounds what it asks for only by each QP's max_rd_atomic: 16 QPs
	# of READs fill a's qdisc (ECN-capable responses are marked, not
	# dropped), and rxe, timing out behind them, asks again for some
	# (vhca_resp_read_again(): seen 250-670 in 8 s)
	drops0=$(qdisc_drops)
	check "guest a: ib_read_bw server with 16 QPs on vhca0, client rxe0 in b" \
		pt ib_read_bw vhca0 -q 16 -n 50
	check_eq "guest a: eth1's qdisc dropped none of their responses" \
		"$(qdisc_drops)" "$drops0"
	# and vhca0 asking on 16 QPs: they share 1024 packets, 64 each, and
	# one can wait behind the others at rxe's responder past its 67 ms
	# timeout (seen: 18 timeouts, 1.2% of the packets asked for again)
	check "guest a: ib_read_bw client with 16 QPs on vhca0, server rxe0 in b" \
		retry pt ib_read_bw vhca0 -q 16 -n 50 10.76.1.2
	# READs asked for again in part, then whole after a timeout: rxe
	# drops a request that starts before its latest one
	check "guest a: netem on, with rxe0 in b" lossy on
	reasks0=$(stat read_rest_requests)
	check "guest a: ib_read_bw client on vhca0 on a lossy link, server rxe0 in b" \
		retry pt ib_read_bw vhca0 -n 50 10.76.1.2
	check "guest a: it asked rxe0 for the rest of READs (read_rest_requests)" \
		grew read_rest_requests "$reasks0"
	check "guest a: netem off" lossy off
	check "guest a: rping server on vhca0, client rxe0 in b" \
		rp -s 10.76.1.1
	check "guest a: rping client on vhca0, server rxe0 in b" \
		retry rp -c 10.76.1.2
	check "guest a: udaddy server on vhca0, client rxe0 in b" \
		timeout 90 udaddy
	tap_run "guest a: post_recvv small on vhca0, client rxe0 in b" \
		recvv -s 10.76.1.1 small
	nvme_target 10.76.1.1 0 \
		"guest a: NVMe-oF target on vhca0, host rxe0 in b"
	iser_target 10.76.1.1 "guest a: iSER target on vhca0, initiator rxe0 in b"
	nvme_host 10.76.1.2 "guest a: NVMe-oF host on vhca0, target rxe0 in b"
	check "guest a: tell b the NVMe host is done" tell 10.76.1.2 nvme-done
	iser_initiator 10.76.1.2 \
		"guest a: iSER initiator on vhca0, target rxe0 in b"
	check "guest a: tell b the iSER initiator is done" \
		tell 10.76.1.2 iser-done
	# b sent 5 datagrams of garbage and one too short after its first test
	check "guest a: garbage is dropped and counted (rcvd_bad_icrc >= 5)" \
		test "$(stat rcvd_bad_icrc)" -ge 5
	check "guest a: a runt is dropped and counted (rcvd_bad_header >= 1)" \
		test "$(stat rcvd_bad_header)" -ge 1
	check "guest a: rdma statistic counts packets both ways" \
		test "$(stat sent_pkts)" -gt 0 -a "$(stat rcvd_pkts)" -gt 0
	check_eq "guest a: rdma statistic shows every wire counter, by name" \
		"$(rdma statistic show link vhca0/1 | tr -s ' ' '\n' |
			grep -x '[a-z_]*' | grep -vx link | tr '\n' ' ')" \
		"sent_pkts rcvd_pkts send_no_route send_dropped rcvd_bad_icrc rcvd_bad_header rcvd_unsupported_opcode rcvd_no_qp rcvd_no_recv_wqe rcvd_unexpected rcvd_queue_full rcvd_off_path rcvd_seq_naks rcvd_rnr_naks retrans_timeouts retrans_pkts read_rest_requests sent_seq_naks rcvd_duplicate_requests sent_cnps rcvd_cnps window_cuts "
	check "guest a: b reports done" hear all-done
	check "guest a: rdma link del vhca0 under a WRITE server, client rxe0 in b" \
		deleted_server

	# eth1 moves into namespace c1: vhca0 on it goes, as when a netdev
	# is removed, and comes back inside c1 with its port bound there
	ip netns add c1
	check "guest a: eth1 moved into namespace c1 takes vhca0 with it" \
		c1_enter
	in_c1 ip link set lo up
	in_c1 ip link set eth1 up
	in_c1 ip addr add 10.76.1.1/24 dev eth1
	# A macvlan holds eth1's rx_handler, so vhca0 cannot steer there: it
	# receives through the UDP sockets it binds in c1
	check "guest a: a macvlan on eth1 in c1 (eth1's rx_handler is taken)" \
		in_c1 ip link add mv0 link eth1 type macvlan mode bridge
	check "guest a: rdma link add vhca0 on eth1 inside c1" \
		in_c1 rdma link add vhca0 type vhca netdev eth1
	wait_for 10 has_v4gid vhca0
	check "guest a: vhca0 says RoCEv2 goes through the IP stack there" \
		bash -c 'dmesg | grep -q "eth1: vhca: the netdev has an rx_handler already"'
	check_eq "guest a: UDP 4791 is bound in c1 (IPv4, IPv6), not outside" \
		"$(ports4791 c1) $(ports4791)" "2 0"
	check "guest a: rping server on vhca0 in c1, client rxe0 in b" \
		in_c1 timeout 120 rping -s -a 10.76.1.1 -C 20 -S 5000
	rcvd0=$(stat rcvd_pkts) udp0=$(udp_in c1)
	check "guest a: ib_write_bw server on vhca0 in c1, client rxe0 in b" \
		in_c1 timeout 150 ib_write_bw -d vhca0 -x "$(v4gid vhca0)" \
		-m 1024 -s 65536 -n 200 -F
	check "guest a: they came through c1's UDP socket" \
		unsteered "$rcvd0" "$udp0" c1
	check "guest a: rdma link del vhca0 in c1 releases c1's port" \
		c1_link_del
	# and the namespace deleted under a device on its netdev
	in_c1 rdma link add vhca0 type vhca netdev eth1
	check "guest a: deleting c1 under vhca0 takes vhca0 and frees vhca" \
		c1_delete
else
	check "guest b: UD client on vhca0, server vhca0 in a (wire)" \
		retry ud vhca0 10.76.1.1
	# after a client got through: a's vhca0 is up, its port bound
	check "guest b: send a's vhca0 garbage and a runt on UDP 4791" \
		python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5):
    s.sendto(bytes(range(i, 40 + i)), ("10.76.1.1", 4791))
s.sendto(b"abc", ("10.76.1.1", 4791))'
	check "guest b: the same over IPv6 link-local GIDs" \
		retry ud6 vhca0 10.76.1.1
	check "guest b: UC client on vhca0, server vhca0 in a (wire)" \
		retry uc vhca0 10.76.1.1
	check "guest b: UC WRITE client on vhca0, server vhca0 in a" \
		retry ucw vhca0 10.76.1.1
	check "guest b: RC client on vhca0, server vhca0 in a" \
		retry rc vhca0 10.76.1.1
	check "guest b: SRQ client on vhca0, server vhca0 in a" \
		retry srq vhca0 10.76.1.1
	for t in $DC_TYPES; do
		check "guest b: datacheck client -t $t on vhca0, server vhca0 in a: every byte" \
			dc vhca0 $(dc_args $t) 10.76.1.1
	done
	for t in $BIG_TYPES; do
		check "guest b: datacheck client -t $t on vhca0, server vhca0 in a: 16 MiB messages, posted without sending them" \
			dc vhca0 $(dc_big $t) 10.76.1.1
	done
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
	for prog in ib_write_bw ib_read_bw ib_atomic_bw; do
		check "guest b: $prog client on vhca0, server vhca0 in a" \
			retry pt $prog vhca0 10.76.1.1
	done
	check "guest b: ib_read_bw client of 8 MiB READs on vhca0, server vhca0 in a" \
		retry pt ib_read_bw vhca0 -s 8388608 -n 30 10.76.1.1
	sent0=$(stat sent_pkts) resent0=$(stat retrans_pkts)
	check "guest b: ib_write_bw client with 8 QPs on vhca0, server vhca0 in a" \
		retry pt ib_write_bw vhca0 -q 8 10.76.1.1
	# The QPs split one bound on the device's packets on the wire, so
	# they do not fill eth1's qdisc until fq_codel drops (4096 packets,
	# 512 a QP, lost four in ten to go-back-N)
	check "guest b: the 8 QPs sent again fewer than 2% of their packets" \
		few_resends "$sent0" "$resent0"
	# 512 packets of 4 KiB each for one QP lose nothing, but 1024 packets
	# of 4 KiB across the QPs filled the qdisc again (19-73% resent): the
	# bound is in bytes too.  What it spares is the qdisc's drops.  A
	# resend here is also up to a window (64 packets) sent again when an ACK
	# came later than the 67 ms timeout, which a stalled emulated host
	# makes happen without any loss (10 timeouts, 480 packets, and
	# nothing dropped, in one of 12 rounds): 25,600 packets make each
	# such timeout 0.25% of them.
	check "guest b: eth1 on jumbo frames, vhca0's active MTU 4096" jumbo on
	sent0=$(stat sent_pkts) resent0=$(stat retrans_pkts)
	drops0=$(qdisc_drops)
	check "guest b: the same in 4 KiB packets" \
		retry pt ib_write_bw vhca0 -q 8 -m 4096 10.76.1.1
	check_eq "guest b: eth1's qdisc dropped none of them" \
		"$(qdisc_drops)" "$drops0"
	check "guest b: they sent again fewer than 5% of their packets" \
		few_resends "$sent0" "$resent0" 5
	check "guest b: eth1 back at MTU 1500, vhca0's at 1024" jumbo off
	check "guest b: 5000 64-byte SENDs from vhca0 to vhca0 in a" \
		retry small vhca0 10.76.1.1
	check "guest b: rping client on vhca0 (data checked), server vhca0 in a" \
		retry rp -c 10.76.1.1
	check "guest b: rdma_client on vhca0, rdma_server vhca0 in a" \
		retry timeout 20 rdma_client -s 10.76.1.1
	for mode in small unreg; do
		check "guest b: post_recvv client on vhca0, server ($mode) vhca0 in a" \
			retry recvv -c 10.76.1.1
	done
	nvme_host 10.76.1.1 "guest b: NVMe-oF host on vhca0, target vhca0 in a"
	check "guest b: tell a the NVMe host is done" tell 10.76.1.1 nvme-done
	iser_initiator 10.76.1.1 \
		"guest b: iSER initiator on vhca0, target vhca0 in a"
	check "guest b: tell a the iSER initiator is done" \
		tell 10.76.1.1 iser-done
	check "guest b: a WRITE client whose server was killed fails with RETRY_EXC_ERR" \
		killed_client
	check "guest b: an ACK beyond any PSN sent is dropped and counted, the WRITEs go on" \
		forged_ack_client
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
	rdma link del vhca0
	check "guest b: rxe0 on eth1 (vhca released UDP 4791)" \
		bash -c 'modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth1'
	wait_for 10 has_v4gid rxe0
	check "guest b: UD client on rxe0, server vhca0 in a" \
		retry ud rxe0 10.76.1.1
	check "guest b: UD server on rxe0, client vhca0 in a" ud rxe0
	check "guest b: UD client on rxe0 over IPv6, server vhca0 in a" \
		retry ud6 rxe0 10.76.1.1
	check "guest b: UC client on rxe0, server vhca0 in a" \
		retry uc rxe0 10.76.1.1
	check "guest b: UC server on rxe0, client vhca0 in a" uc rxe0
	check "guest b: UC WRITE client on rxe0, server vhca0 in a" \
		retry ucw rxe0 10.76.1.1
	check "guest b: UC WRITE server on rxe0, client vhca0 in a" ucw rxe0
	check "guest b: RC client on rxe0, server vhca0 in a" \
		retry rc rxe0 10.76.1.1
	check "guest b: RC server on rxe0, client vhca0 in a" rc rxe0
	check "guest b: SRQ client on rxe0, server vhca0 in a" \
		retry srq rxe0 10.76.1.1
	for t in $DC_TYPES; do
		check "guest b: datacheck client -t $t on rxe0, server vhca0 in a: every byte" \
			dc rxe0 $(dc_args $t) 10.76.1.1
		check "guest b: datacheck server ($t) on rxe0, client vhca0 in a" \
			dc rxe0
	done
	for t in $BIG_TYPES; do
		check "guest b: datacheck server ($t, 16 MiB) on rxe0, client vhca0 in a" \
			dc rxe0
	done
	for prog in ib_write_bw ib_read_bw ib_atomic_bw; do
		check "guest b: $prog client on rxe0, server vhca0 in a" \
			retry pt $prog rxe0 10.76.1.1
		check "guest b: $prog server on rxe0, client vhca0 in a" \
			pt $prog rxe0
	done
	check "guest b: ib_read_bw client of 8 MiB READs on rxe0, server vhca0 in a" \
		retry pt ib_read_bw rxe0 -s 8388608 -n 30 10.76.1.1
	check "guest b: ib_read_bw client with 16 QPs on rxe0, server vhca0 in a" \
		retry pt ib_read_bw rxe0 -q 16 -n 50 10.76.1.1
	check "guest b: ib_read_bw server with 16 QPs on rxe0, client vhca0 in a" \
		pt ib_read_bw rxe0 -q 16 -n 50
	check "guest b: netem on, with vhca0 in a" lossy on
	check "guest b: ib_read_bw server on rxe0 on a lossy link, client vhca0 in a" \
		pt ib_read_bw rxe0 -n 50
	check "guest b: netem off" lossy off
	check "guest b: rping client on rxe0 (data checked), server vhca0 in a" \
		retry rp -c 10.76.1.1
	check "guest b: rping server on rxe0, client vhca0 in a" \
		rp -s 10.76.1.2
	check "guest b: udaddy client on rxe0, server vhca0 in a" \
		retry timeout 20 udaddy -s 10.76.1.1
	check "guest b: post_recvv client on rxe0, server vhca0 in a" \
		retry recvv -c 10.76.1.1
	nvme_host 10.76.1.1 "guest b: NVMe-oF host on rxe0, target vhca0 in a"
	check "guest b: tell a the NVMe host is done" tell 10.76.1.1 nvme-done
	iser_initiator 10.76.1.1 \
		"guest b: iSER initiator on rxe0, target vhca0 in a"
	check "guest b: tell a the iSER initiator is done" \
		tell 10.76.1.1 iser-done
	nvme_target 10.76.1.2 0 \
		"guest b: NVMe-oF target on rxe0, host vhca0 in a"
	iser_target 10.76.1.2 "guest b: iSER target on rxe0, initiator vhca0 in a"
	check "guest b: tell a we are done" tell 10.76.1.1 all-done
	check "guest b: a WRITE client on rxe0 whose server's vhca0 is deleted connects and ends" \
		deleted_client
	check "guest b: rping client on rxe0 (data checked), server vhca0 in a's namespace c1" \
		retry rp -c 10.76.1.1
	check "guest b: ib_write_bw client on rxe0, server vhca0 in a's namespace c1" \
		retry pt ib_write_bw rxe0 10.76.1.1
fi
rdma link del vhca0 2>/dev/null
rdma link del rxe0 2>/dev/null
tap_done
