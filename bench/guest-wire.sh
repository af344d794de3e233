#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in both guests of bench/wire.sh (VHCA_GUEST is a or b), whose eth1
# share one link: rxe0 to rxe0 and vhca0 to vhca0, the same programs
# each time, in the rounds rxe0, vhca0, vhca0, rxe0.  The emulated hosts'
# speed drifts within a run (in one boot the same module and programs
# moved 31 MB/s of 64 KiB WRITEs on vhca0, then 28 four minutes later),
# and with each stack measured on both sides of the middle, a steady
# drift falls out of the ratio.  A host that stalls for part of a run
# still shows: compare the rounds in build/bench-wire.results.  Guest a runs the servers; b runs the clients and prints
# "RESULT <dev> <metric> <value>" lines, which bench/table.awk averages.
. bench/link.sh
N=${VHCA_BENCH_ITERS:-1000}
D=${VHCA_BENCH_SECONDS:-3}

# The steady state, not the programs' setup: once device $dev's packets
# flow, this guest's kernel time (system, irq and softirq, in USER_HZ
# ticks) and the device's data packets over the next 1.5 s go to $cost.
# Data packets are the busier direction (sent by the side that moves the
# bytes, received by the other); the other direction is ACKs, which the
# stacks coalesce differently.  rxe counts packets too.  This runs beside
# the programs, so it forks nothing but sleep: on TCG a pipeline of
# processes costs more than the traffic it would watch.
cost=/tmp/bench-cost
cost_window() {
	local d=/sys/class/infiniband/$dev/ports/1/hw_counters
	local _c _u _n sys _i _w irq sirq s r s0 r0 k p q

	read -r s <"$d/sent_pkts" && read -r r <"$d/rcvd_pkts" || return
	p=$((s + r))
	for _ in {1..100}; do
		sleep 0.2
		read -r s <"$d/sent_pkts" && read -r r <"$d/rcvd_pkts"
		q=$((s + r))
		[ $((q - p)) -gt 200 ] && break
		p=$q
	done
	read -r _c _u _n sys _i _w irq sirq _ </proc/stat
	k=$((sys + irq + sirq)) s0=$s r0=$r t0=$EPOCHREALTIME
	sleep 1.5
	read -r _c _u _n sys _i _w irq sirq _ </proc/stat
	read -r s <"$d/sent_pkts" && read -r r <"$d/rcvd_pkts"
	s=$((s - s0)) r=$((r - r0))
	echo "$((sys + irq + sirq - k)) $((s > r ? s : r)) $t0 $EPOCHREALTIME" >"$cost"
}

# The host's clock less this guest's, for bench/host_cpu.py to place this
# guest's windows on the host's clock: its sampler writes the host's time
# to /out/host-clock five times a second.  The first value that changes
# was written just before it was read.
host_clock() {
	local f=/out/host-clock v w g
	read -r v 2>/dev/null <"$f" || return 0
	for _ in {1..500}; do
		read -r w 2>/dev/null <"$f" || continue
		g=$EPOCHREALTIME
		if [ "$w" != "$v" ]; then
			awk -v h="$w" -v g="$g" 'BEGIN { printf "HOSTCLOCK %.3f\n", h - g }'
			return
		fi
	done
}

# A failed perftest's last words (perftest_errors, the tests' filter).
# Its stderr comes before its buffered stdout, so a message can stand
# before the banner; and a failed estimate of the CPU clock, which a busy
# host causes in either stack, is said as such.
. tests/guest/lib/lib.sh
errors() {
	local log=/tmp/bench-failed msg
	cat >"$log"
	! clock_flake "$log" ||
		echo "perftest's estimate of the CPU clock failed (r^2 < 0.9): no figure, from either stack"
	msg=$(perftest_errors <"$log" | tail -n 5)
	echo "${msg:-(nothing but its banner)}"
}

# pair CMD...: a's server, or b's client (retried until the server is up).
# It runs in a subshell of measure(), whose $dev it reads.
pair() {
	local out sampler
	rm -f "$cost"
	cost_window >/dev/null &
	sampler=$!
	if [ "$VHCA_GUEST" = a ]; then
		timeout 90 "$@" >/tmp/bench-server 2>&1 ||
			{ echo "$* (server):"; errors </tmp/bench-server; } >&2
	else
		for _ in $(seq 30); do
			out=$(timeout 60 "$@" 10.76.1.1 2>&1) && { echo "$out"; break; }
			# not just "the server is not up yet": say what it was
			grep -q "Couldn't connect\|Unable to init the socket" <<<"$out" ||
				{ echo "$*:"; errors <<<"$out"; } >&2
			out=
			sleep 1
		done
	fi
	kill "$sampler" 2>/dev/null
	wait "$sampler" 2>/dev/null
	[ "$VHCA_GUEST" = a ] || [ -n "$out" ]
}

# vhca's wire counters that are not zero, on one line
counters() {
	rdma statistic show link vhca0/1 | tr -s ' ' '\n' | paste -d= - - |
		grep -v '=0$' | sed -n '/^sent_pkts=/,$p' | tr '\n' ' '
	echo
}

# b's results; after each on vhca0, b's counters so far (they explain
# the bandwidth: retransmissions, NAKs, duplicates).  For a bandwidth
# figure each guest also reports its kernel time per data packet (see
# cost_window).  The host's two CPUs run both guests, the client's polling
# loop and both qemus' virtio and link, so the bandwidth is what is left
# of the host after all of them; the kernel time is the part either stack
# answers for.
result() {
	local k p t0 t1
	if [ "$1" != guest ] && [[ $2 == *_MBps || $2 == *_Mpps ]] &&
		read -r k p t0 t1 2>/dev/null <"$cost" &&
		[ "$p" -gt 0 ]; then
		echo "RESULT $1 ${2%_*}_kernel_usec/data_pkt_$VHCA_GUEST" \
			"$(awk -v k="$k" -v p="$p" -v hz="$(getconf CLK_TCK)" \
				'BEGIN { printf "%.1f", k * 1e6 / hz / p }')"
		# the same window, for the host's view of it (host_cpu.py)
		[ "$VHCA_GUEST" = a ] || echo "WINDOW $1 ${2%_*} $t0 $t1"
	fi
	[ "$VHCA_GUEST" = b ] || return 0
	echo "RESULT $1 $2 ${3:-n/a}"
	[ "$1" = vhca0 ] && echo "# $2: $(counters)"
	return 0
}

. bench/measure.sh

# The ceiling: the kernel's TCP through the same link, before the rounds
# and after them (the table shows the mean)
tcp_ceiling() {
	local v
	if [ "$VHCA_GUEST" = a ]; then
		timeout 90 python3 bench/tcp_ceiling.py -s
	else
		for _ in $(seq 30); do
			v=$(python3 bench/tcp_ceiling.py -c 10.76.1.1 "$D" 2>/dev/null) && break
			sleep 1
		done
		result guest link_tcp_MBps "$v"
	fi
}
[ "$VHCA_GUEST" = a ] || host_clock
tcp_ceiling

# Each guest switches when its last program of the round is done; a
# client retries until the other guest's server of the next round is up.
# Only one stack at a time can own UDP port 4791.
for dev in rxe0 vhca0 vhca0 rxe0; do
	if [ "$dev" = rxe0 ]; then
		modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth1 &&
			measure rxe0
		rdma link del rxe0 2>/dev/null
		rmmod rdma_rxe 2>/dev/null
	else
		rdma link add vhca0 type vhca netdev eth1 && measure vhca0
		echo "# guest $VHCA_GUEST's vhca0 at the end of its round: $(counters)"
		rdma link del vhca0 2>/dev/null
	fi
	# a stack's packets lost on this host: the link itself loses none
	read -r rxd </sys/class/net/eth1/statistics/rx_dropped
	read -r txd </sys/class/net/eth1/statistics/tx_dropped
	echo "# guest $VHCA_GUEST after its $dev round: eth1's qdisc has" \
		"dropped $(tc -s qdisc show dev eth1 |
			sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -n 1)" \
		"packets since boot; eth1 itself dropped $rxd received and $txd sent"
	sleep 2
done
tcp_ceiling
