#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# rdma-core's example programs and perftest on vhca0, server and client in
# one guest, XRC among them (ibv_xsrq_pingpong, perftest's -c XRC).  The examples' -c is a spot check (spot_ok in lib.sh); the
# data checks are datacheck's, at the end.  ib_send_bw's CQ moderation is what caught the engine
# completing a send before freeing its slot.
. tests/guest/lib/lib.sh
tap_plan 31

vhca0_up

# server_client GIDFLAG PROG ARGS...: PROG as server, then as its client;
# rdma-core's examples name the GID index -g, perftest -x.  A pair that
# failed only on perftest's clock estimate runs once more.
server_client() { clock_retry server_client_once "$@"; }
server_client_once() {
	local gid=$1 prog=$2 srv rc
	shift 2
	"$prog" -d vhca0 "$gid" 0 "$@" >/tmp/server.log 2>&1 &
	srv=$!
	wait_listen 18515
	timeout 120 "$prog" -d vhca0 "$gid" 0 "$@" 127.0.0.1 \
		>/tmp/client.log 2>&1 &
	wait $!
	rc=$?
	if [ "$rc" = 0 ]; then
		wait $srv && spot_ok /tmp/server.log /tmp/client.log
		return
	fi
	# say where it hung, and keep the server from spoiling the next test
	echo "client exit $rc:"
	tail -n 3 /tmp/client.log
	echo "server:"
	tail -n 3 /tmp/server.log
	for p in $(pgrep -f "$prog"); do
		echo "pid $p $(cat /proc/$p/wchan 2>/dev/null)"
		cat /proc/$p/stack 2>/dev/null
	done
	kill $srv 2>/dev/null
	wait $srv 2>/dev/null
	return 1
}
example() { server_client -g "$@"; }
perftest() { server_client -x "$@"; }

for args in "ibv_rc_pingpong -n 1000 -c" "ibv_uc_pingpong -n 1000 -c" \
	    "ibv_ud_pingpong -n 1000" \
	    "ibv_srq_pingpong -n 1000" "ibv_srq_pingpong -q 16 -n 500" \
	    "ibv_rc_pingpong -n 200 -s 65536 -c" "ibv_rc_pingpong -n 500 -e" \
	    "ibv_xsrq_pingpong -n 500"; do
	check "$args" example $args
	grep -h "usec/iter" /tmp/client.log | sed 's/^/#   /'
done
for args in "ib_send_bw -D 2 -s 65536" "ib_send_bw -D 2 -s 65536 --use-srq" \
	    "ib_send_bw -D 2 -s 64" "ib_send_lat -n 1000 -s 2" \
	    "ib_write_bw -D 2 -s 65536" "ib_read_bw -D 2 -s 65536" \
	    "ib_atomic_bw -D 2" "ib_write_lat -n 1000 -s 2" \
	    "ib_read_lat -n 1000 -s 2" \
	    "ib_send_bw -D 2 -s 65536 -c XRC" "ib_write_bw -D 2 -s 65536 -c XRC" \
	    "ib_read_bw -D 2 -s 65536 -c XRC" "ib_atomic_bw -D 2 -c XRC"; do
	check "$args" perftest $args
	grep -hA1 '#bytes' /tmp/client.log | tail -n 1 | sed 's/^/#   /'
done
# every byte of SENDs, WRITEs and READs, with and without immediates
for t in "rc -s 65536 -n 400" "uc -s 65536 -n 400" "ud -s 1024 -n 1000"; do
	check "datacheck -t $t on vhca0, both ends" datacheck vhca0 vhca0 -t $t
	grep -h "intact" /tmp/dc-client.log /tmp/dc-server.log | sed 's/^/#   /'
	# the same posted through ibv_wr_* (ibv_create_qp_ex, send_ops_flags)
	check "datacheck -w -t $t on vhca0: ibv_wr_* sends" \
		datacheck vhca0 vhca0 -w -t $t
done
# WRITEs and READs through type 2 memory windows, bound by IBV_WR_BIND_MW
# and by ibv_wr_bind_mw()
for t in "rc -s 65536 -n 200" "uc -o write,write_imm -s 65536 -n 200"; do
	check "datacheck -M -t $t on vhca0: through windows" \
		datacheck vhca0 vhca0 -M -t $t
	check "datacheck -M -w -t $t on vhca0: bound by ibv_wr_bind_mw" \
		datacheck vhca0 vhca0 -M -w -t $t
done
rdma link del vhca0
tap_done
