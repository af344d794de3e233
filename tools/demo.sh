#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Set up, build, boot a guest that loads vhca, add vhca0 on the guest's NIC
# and show it with rdma link show and ibv_devinfo.  VHCA_SYSTEM=NAME does it
# on another supported Debian system (tools/system.sh list), built as that
# system's users build it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
cd "$VHCA_ROOT"

bash tools/setup.sh
make -s all
sys=()
if [ -n "${VHCA_SYSTEM:-}" ] && [ "$VHCA_SYSTEM" != bookworm ]; then
	bash tools/system.sh build "$VHCA_SYSTEM"
	sys=(--system "$VHCA_SYSTEM")
	log "booting $VHCA_SYSTEM under qemu (TCG)"
else
	log "booting Debian's $(vhca_kver) under qemu (TCG)"
fi
tools/guest.sh "${sys[@]}" '
set -e
run() { echo "guest# $*"; "$@"; }
run cat /etc/debian_version
run uname -r
run modprobe vhca
run ip link set eth0 up
run ip addr add 10.76.0.1/24 dev eth0
run rdma link add vhca0 type vhca netdev eth0
run rdma link show
run ibv_devices
sleep 1	# the core fills the GID table from the address in the background
run ibv_devinfo -d vhca0
echo "guest# ibv_devinfo -v -d vhca0 | grep GID"
ibv_devinfo -v -d vhca0 | grep GID
'
