#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# FLUSH (IBA 1.5) with rdma-core 56's ibv_wr_flush(), build/tests/flush:
# through the same-host engine, then on a wire between vhca and rxe, each
# one the requester in turn.  vhca0 is on veth1 in network namespace c1
# and rxe0 on its peer veth0, as in steer.sh: each binds UDP 4791 in its
# own namespace.  The devices are shared between namespaces, so the test
# opens both from here.
. tests/guest/lib/lib.sh
tap_plan 62

in_c1() { ip netns exec c1 "$@"; }
ip netns add c1
ip link add veth0 type veth peer name veth1 netns c1
ip addr add 10.77.0.1/24 dev veth0
ip link set veth0 up
in_c1 ip link set lo up
in_c1 ip addr add 10.77.0.2/24 dev veth1
in_c1 ip link set veth1 up
check "rdma link add vhca0 on veth1, in c1" \
	in_c1 rdma link add vhca0 type vhca netdev veth1
check "rdma link add rxe0 on veth0" \
	bash -c 'modprobe rdma_rxe && rdma link add rxe0 type rxe netdev veth0'
gids() { [ -n "$(gid_of vhca0 10.77.0.2)" ] && [ -n "$(gid_of rxe0 10.77.0.1)" ]; }
check "both have their IPv4 GID" wait_for 20 gids
gv=$(gid_of vhca0 10.77.0.2)
gr=$(gid_of rxe0 10.77.0.1)
# FLUSH is in the kernel's verbs from 6.2 on (drivers/compat/flush.c)
want=$(kernel_at_least 6.2 && echo yes || echo no)
tap_run "engine" build/tests/flush vhca0 "$gv" vhca0 "$gv" "$want"
tap_run "vhca0 to rxe0" build/tests/flush vhca0 "$gv" rxe0 "$gr" "$want"
tap_run "rxe0 to vhca0" build/tests/flush rxe0 "$gr" vhca0 "$gv" "$want"
check "rdma link del rxe0" rdma link del rxe0
check "rdma link del vhca0" in_c1 rdma link del vhca0
tap_done
