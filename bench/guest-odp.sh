#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in the guest (bench/run.sh --odp boots Debian 13 with trixie-
# backports' Linux 7.3, whose rxe has ODP).  bench/odp on vhca0, then on
# rxe0, one device at a time (both want UDP 4791), as "RESULT <dev>
# <metric> <value>" lines.
ip link set eth0 up
ip addr add 10.76.0.1/24 dev eth0
for dev in vhca0 rxe0; do
	if [ $dev = vhca0 ]; then
		rdma link add vhca0 type vhca netdev eth0
	else
		rdma link del vhca0
		modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0
	fi
	sleep 1
	echo "# bench/odp on $dev"
	build/bench/odp $dev | while read -r k v; do echo "RESULT $dev $k $v"; done
done
