#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs in both guests of a two-guest boot (VHCA_GUEST is a or b): eth1 of
# each shares one link.  Each guest puts vhca on eth1 and reaches the other
# over that link; guest a stays up until b says it is done.
. tests/guest/lib.sh

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

if [ "$VHCA_GUEST" = a ]; then
	check "guest a: b reports done" \
		bash -c 'busybox nc -l -p 7000 -w 60 | grep -q done'
else
	check "guest b: tell a we are done" \
		wait_for 60 bash -c 'echo done >/dev/tcp/10.76.1.1/7000'
fi
rdma link del vhca0
tap_done
