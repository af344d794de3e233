#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Two vhca devices on one host, vhca0 on veth0 and vhca1 on veth1: traffic
# between them stays in the engine (the AV's DGID names the device), for
# rdma-core's examples, perftest and the RDMA CM.  Then each device goes
# away with a connection to the other open.
. tests/guest/lib/lib.sh
tap_plan 29

ip link add veth0 type veth peer name veth1
ip link set veth0 up
ip link set veth1 up
ip addr add 10.77.0.1/24 dev veth0
ip addr add 10.77.0.2/24 dev veth1
check "rdma link add vhca0 on veth0" rdma link add vhca0 type vhca netdev veth0
check "rdma link add vhca1 on veth1" rdma link add vhca1 type vhca netdev veth1
wait_gid vhca0
wait_gid vhca1

# srv_cli SERVER_DEV CLIENT_DEV GIDFLAG PROG ARGS...: PROG on SERVER_DEV,
# its client on CLIENT_DEV; each uses its device's GID 0 (IPv6 link-local,
# from its own veth's MAC), so the DGIDs name the other device.  A pair
# that failed only on perftest's clock estimate runs once more.
srv_cli() { clock_retry srv_cli_once "$@"; }
srv_cli_once() {
	local sd=$1 cd=$2 g=$3 prog=$4 srv cli p c s
	shift 4
	"$prog" -d "$sd" "$g" 0 "$@" >/tmp/server.log 2>&1 &
	srv=$!
	wait_listen 18515
	"$prog" -d "$cd" "$g" 0 "$@" 127.0.0.1 >/tmp/client.log 2>&1 &
	cli=$!
	for _ in $(seq 120); do kill -0 $cli 2>/dev/null || break; sleep 1; done
	if ! kill -0 $cli 2>/dev/null; then
		wait $cli
		c=$?
		wait $srv
		s=$?
		[ $c = 0 ] && [ $s = 0 ] &&
			spot_ok /tmp/server.log /tmp/client.log && return 0
		# stdout is buffered and stderr is not: the errors are the
		# lines that are neither the banner nor the figures
		echo "server exit $s, client exit $c"
		cat /tmp/server.log /tmp/client.log | perftest_errors
		return 1
	fi
	# a hang: where both ends wait, while they still do
	for p in $srv $cli; do
		echo "pid $p $(cat /proc/$p/wchan 2>/dev/null)"
		cat /proc/$p/task/*/stack 2>/dev/null
	done
	kill $srv $cli 2>/dev/null
	wait $srv $cli 2>/dev/null
	tail -n 5 /tmp/server.log /tmp/client.log
	return 1
}

check_ne() { [ "$1" != "$2" ]; }
check "the two devices have different GIDs at index 0" check_ne \
	"$(cat /sys/class/infiniband/vhca0/ports/1/gids/0)" \
	"$(cat /sys/class/infiniband/vhca1/ports/1/gids/0)"

for args in "ibv_rc_pingpong -n 500 -c" "ibv_uc_pingpong -n 500 -c" \
	    "ibv_ud_pingpong -n 500" "ibv_srq_pingpong -n 500"; do
	check "vhca0 <- vhca1: $args" srv_cli vhca0 vhca1 -g $args
	check "vhca1 <- vhca0: $args" srv_cli vhca1 vhca0 -g $args
done
for args in "ib_write_bw -D 2 -s 65536" "ib_read_bw -D 2 -s 65536" \
	    "ib_send_bw -D 2 -s 4096" "ib_atomic_bw -D 2"; do
	check "vhca0 <- vhca1: $args" srv_cli vhca0 vhca1 -x $args
done

# wire_pkts: the packets both devices counted on the wire, sent and
# received; veth_pkts: what the two veths carried
wire_pkts() {
	rdma statistic show | awk '$2 ~ /^vhca[01]\// {
		for (i = 3; i < NF; i++) if ($i == "sent_pkts" || $i == "rcvd_pkts") n += $(i + 1) }
		END { print n + 0 }'
}
veth_pkts() {
	cat /sys/class/net/veth[01]/statistics/{tx,rx}_packets | awk '{ n += $1 } END { print n }'
}
wire0=$(wire_pkts) veth0=$(veth_pkts)
for t in "rc -s 65536 -n 300" "uc -s 65536 -n 300" "ud -s 1024 -n 500"; do
	check "vhca0 <- vhca1: datacheck -t $t, every byte" \
		datacheck vhca0 vhca1 -t $t
	check "vhca1 <- vhca0: datacheck -t $t, every byte" \
		datacheck vhca1 vhca0 -t $t
done
# those runs moved 2 x 2 x 300 messages of up to 64 KiB and 2 x 500
# datagrams: tens of thousands of packets, had they gone on the wire
check_eq "the engine carried them: neither device counted a wire packet (sent_pkts, rcvd_pkts)" \
	"$(($(wire_pkts) - wire0))" 0
check "and the veths carried fewer than 100 frames meanwhile ($(($(veth_pkts) - veth0)): neighbour discovery and the like; datacheck talks TCP on lo)" \
	test "$(($(veth_pkts) - veth0))" -lt 100

# (rping between the two addresses is not here: both are local, so the
# route between them is lo and rdma_cm binds both ends to one device.)

# a peer that goes away: vhca1 is deleted while traffic to vhca0 runs.
# The server says when the client's SENDs have all landed; the WRITEs and
# READs that follow are under way when the device goes.
timeout 300 build/tests/datacheck -d vhca0 -g 0 -p 18541 >/tmp/server.log 2>&1 &
srv=$!
wait_listen 18541
timeout 300 build/tests/datacheck -d vhca1 -g 0 -p 18541 -t rc \
	-o send,write,read -s 4096 -n 20000 127.0.0.1 >/tmp/client.log 2>&1 &
cli=$!
check "traffic flows from vhca1 to vhca0: 20000 SENDs landed intact" \
	wait_for 120 grep -q 'rc send: 20000 messages' /tmp/server.log
check "rdma link del vhca1 with WRITEs to vhca0 running" timeout 60 rdma link del vhca1
check_eq "vhca1 is gone" "$(rdma link show | grep -c vhca1)" 0
# the client's device went under it: it fails (its completions flushed,
# or its QP gone), the server with it or on its peer's silence
wait $cli
rc=$?
# 1..123: it failed by itself; not 0, not 124 (timeout: it hung), not
# 128 and up (a signal killed it: a crash is not an error return)
check "the client on vhca1 failed (exit status $rc): not by a signal, not hung (124)" \
	test "$rc" -ge 1 -a "$rc" -le 123 -a "$rc" != 124
kill $srv 2>/dev/null
wait $srv 2>/dev/null
check "vhca0 is unharmed: datacheck -t rc on it, every byte" \
	datacheck vhca0 vhca0 -t rc -s 65536 -n 200
check "rdma link del vhca0" rdma link del vhca0
ip link del veth0
tap_done
