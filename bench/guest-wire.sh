#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in both guests of bench/wire.sh (VHCA_GUEST is a or b), whose eth1
# share one link: rxe0 to rxe0 first, then vhca0 to vhca0, the same
# programs each time.  Guest a runs the servers; b runs the clients and
# prints "RESULT <dev> <metric> <value>" lines.
case ${VHCA_GUEST:-} in
a) me=1 ;;
b) me=2 ;;
*) echo "VHCA_GUEST must be a or b"; exit 2 ;;
esac
ip link set eth1 up
ip addr add 10.76.1.$me/24 dev eth1
N=${VHCA_BENCH_ITERS:-1000}
D=${VHCA_BENCH_SECONDS:-3}
BENCH_GID=0000:0000:0000:0000:0000:ffff:0a4c:010$me
for _ in $(seq 90); do ping -c 1 -W 1 10.76.1.$((3 - me)) >/dev/null && break; done

# pair CMD...: a's server, or b's client (retried until the server is up)
pair() {
	local out
	if [ "$VHCA_GUEST" = a ]; then
		timeout 90 "$@" >/dev/null 2>&1
		return
	fi
	for _ in $(seq 30); do
		out=$(timeout 60 "$@" 10.76.1.1 2>&1) && { echo "$out"; return; }
		sleep 1
	done
}

# vhca's wire counters that are not zero, on one line
counters() {
	rdma statistic show link vhca0/1 | tr -s ' ' '\n' | paste -d= - - |
		grep -v '=0$' | sed -n '/^sent_pkts=/,$p' | tr '\n' ' '
	echo
}

# b's results; after each on vhca0, b's counters so far (they explain
# the bandwidth: retransmissions, NAKs, duplicates)
result() {
	[ "$VHCA_GUEST" = b ] || return 0
	echo "RESULT $1 $2 ${3:-n/a}"
	[ "$1" = vhca0 ] && echo "# $2: $(counters)"
	return 0
}

. bench/measure.sh

# The ceiling: the kernel's TCP through the same link, before either stack
if [ "$VHCA_GUEST" = a ]; then
	timeout 90 python3 bench/tcp_ceiling.py -s
else
	for _ in $(seq 30); do
		v=$(python3 bench/tcp_ceiling.py -c 10.76.1.1 "$D" 2>/dev/null) && break
		sleep 1
	done
	result guest link_tcp_MBps "$v"
fi

# Each guest switches when its last program of the phase is done; a
# client retries until the other guest's server of the next phase is up.
modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth1 && measure rxe0
rdma link del rxe0 2>/dev/null
rmmod rdma_rxe 2>/dev/null
sleep 2
rdma link add vhca0 type vhca netdev eth1 && measure vhca0
echo "# guest $VHCA_GUEST's vhca0 at the end: $(counters)"
rdma link del vhca0 2>/dev/null
