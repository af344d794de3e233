#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# The RDMA CM on vhca0, server and client in one guest: the kernel's MAD
# layer, ib_cm and rdma_cm talk through vhca's GSI QP (QPN 1, a kernel QP on
# the same rings as everyone's), then the programs' own QPs carry the data.
# Both address families, since RoCEv2 GIDs are IPv4-mapped or IPv6.
. tests/guest/lib/lib.sh
tap_plan 39

A4=10.76.0.1 A6=fd00:76::1
ip link set eth0 up
ip addr add $A4/24 dev eth0
ip -6 addr add $A6/64 dev eth0 nodad
rdma link add vhca0 type vhca netdev eth0 || { fail "rdma link add"; tap_done; exit; }
wait_gid vhca0

check_eq "the GSI QP exists: QPN 1, in RTS" \
	"$(rdma res show qp link vhca0/1 | grep -c 'lqpn 1 type GSI state RTS')" 1
check_eq "the MAD layer opened the port (no \"Couldn't open port\")" \
	"$(dmesg | grep -c "Couldn't open port")" 0

# pair 'SERVER' 'CLIENT': the server in the background, then the client;
# both must succeed
pair() {
	local srv
	bash -c "$1" >/tmp/server.log 2>&1 &
	srv=$!
	cm_listening
	if timeout 60 bash -c "$2" >/tmp/client.log 2>&1 && wait $srv; then
		return 0
	fi
	kill $srv 2>/dev/null
	echo "server:"; tail -n 5 /tmp/server.log
	echo "client:"; tail -n 5 /tmp/client.log
	return 1
}

for a in $A4 $A6; do
	check "rping -V over $a (RDMA READ/WRITE, data verified)" \
		pair "rping -s -a $a -C 20 -V -S 1024" "rping -c -a $a -C 20 -V -S 1024"
done
check "rdma_server/rdma_client" pair "rdma_server" "rdma_client -s $A4"
check "ucmatose, 4 connections" pair "ucmatose -c 4" "ucmatose -s $A4 -c 4"
check "udaddy (UD through the CM's SIDR)" pair "udaddy" "udaddy -s $A4"
# XRC through the CM: an XRC_RECV QP and an XRC SRQ on the server, whose
# number the accept's private data carries to the client's XRC_SEND QP
check "rdma_xserver/rdma_xclient -c x (XRC)" \
	pair "rdma_xserver -c x" "rdma_xclient -c x -s $A4"

# rdma_post_recvv(3): the server side prints TAP
for mode in small unreg; do
	build/tests/post_recvv -s $A4 $mode >/tmp/recvv.tap 2>&1 &
	srv=$!
	cm_listening
	timeout 60 build/tests/post_recvv -c $A4 >/tmp/recvv-client.log 2>&1
	check_eq "post_recvv client ($mode) exit status" $? 0
	wait $srv
	check_eq "post_recvv server ($mode) exit status" $? 0
	tap_import "post_recvv $mode" </tmp/recvv.tap
done

rdma link del vhca0
check_eq "link del with the CM done: no vhca device left" \
	"$(rdma link show | grep -c vhca0)" 0
tap_done
