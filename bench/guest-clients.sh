#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in the guest (bench/run.sh --clients boots it).  The clients of
# tests/guest/lib/clients.sh on vhca0 and then on rxe0, one device loaded
# at a time (both want UDP 4791), server and client on the one device;
# prints "RESULT <dev> <metric> <value>" lines, "n/a" where a run failed.
. tests/guest/lib/lib.sh
FI_CHECK=	# fi_pingpong's byte-by-byte check would be what is measured
. tests/guest/lib/clients.sh

ip link set eth0 up
ip addr add "$A/24" dev eth0

result() { echo "RESULT $1 $2 ${3:-n/a}"; }

# mbps MIB MS: MiB moved in MS milliseconds, as MB/s (10^6 bytes)
mbps() {
	[ -n "$2" ] && [ "$2" -gt 0 ] &&
		awk -v m="$1" -v t="$2" 'BEGIN { printf "%.1f", m * 1048576 / t / 1000 }'
}

measure_clients() {
	local d=$1 out w r
	fi_pp "$d" -S 64 -I 5000 && result "$d" fi_pingpong_64B_usec "$(fi_figure 64 | cut -d' ' -f1)"
	fi_pp "$d" -S 1048576 -I 50 && result "$d" fi_pingpong_1MiB_MBps "$(fi_figure 1m | cut -d' ' -f2)"
	ucx_pt "$d" rc_verbs,ud_verbs tag_lat -n 10000 &&
		result "$d" ucx_tag_lat_rc_usec "$(ucx_figure | cut -d' ' -f1)"
	ucx_pt "$d" ud_verbs tag_lat -n 10000 &&
		result "$d" ucx_tag_lat_ud_usec "$(ucx_figure | cut -d' ' -f1)"
	ucx_pt "$d" rc_verbs,ud_verbs ucp_put_bw -s 65536 -n 2000 &&
		result "$d" ucx_put_bw_64KiB_MBps "$(ucx_figure | cut -d' ' -f2)"
	ucx_pt "$d" ud_verbs ucp_put_bw -s 65536 -n 500 &&
		result "$d" ucx_put_bw_ud_64KiB_MBps "$(ucx_figure | cut -d' ' -f2)"
	nfs_server_up
	for v in 4.2 3; do
		out=$(nfs_roundtrip $v) || out=
		w=$(sed -n 's/.*write \([0-9]*\) ms.*/\1/p' <<<"$out")
		r=$(sed -n 's/.*read \([0-9]*\) ms.*/\1/p' <<<"$out")
		result "$d" "nfs_v${v}_write_64MiB_MBps" "$(mbps 64 "$w")"
		result "$d" "nfs_v${v}_read_64MiB_MBps" "$(mbps 64 "$r")"
	done
	nfs_server_down
	out=
	srp_target_up "$d" && srp_login "$d" && out=$(srp_roundtrip)
	w=$(sed -n 's/.*write \([0-9]*\) ms.*/\1/p' <<<"$out")
	r=$(sed -n 's/.*read \([0-9]*\) ms.*/\1/p' <<<"$out")
	result "$d" srp_write_16MiB_MBps "$(mbps 16 "$w")"
	result "$d" srp_read_16MiB_MBps "$(mbps 16 "$r")"
	srp_logout
	srp_target_down
}

rdma link add vhca0 type vhca netdev eth0 && wait_gid vhca0 && measure_clients vhca0
rdma link del vhca0 2>/dev/null
modprobe -r vhca
modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0 && wait_gid rxe0 &&
	measure_clients rxe0
rdma link del rxe0 2>/dev/null
