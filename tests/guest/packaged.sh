#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A system on which the Debian packages were installed (tests/packages.sh),
# booted as it is (tools/guest.sh --root): nothing of this clone's build is
# in it.  The module modprobe finds is the one DKMS built for this kernel
# and signed with its key; the provider is the package's, built for the
# rdma-core release this system has; the demo's steps and an RC ping-pong
# run through both.
. tests/guest/lib/lib.sh
tap_plan 13

kver=$(uname -r)
libdir=/usr/lib/x86_64-linux-gnu/libibverbs
dkms_dir=/lib/modules/$kver/updates/dkms

check "modprobe finds DKMS's module for $kver" \
	bash -c "modinfo -n vhca | grep -q '^$dkms_dir/vhca.ko'"
check_eq "its vermagic is this kernel's" "$(modinfo -F vermagic vhca | cut -d' ' -f1)" "$kver"
# Secure Boot: DKMS signs what it builds with its own key, whose
# certificate the administrator enrolls (mokutil --import)
check_eq "DKMS signed it" "$(modinfo -F signer vhca)" "DKMS module signing key"
signed_by_mok() {
	local key cert
	key=$(modinfo -F sig_key vhca | tr -d ':' | tr A-F a-f)
	cert=$(openssl x509 -inform DER -in /var/lib/dkms/mok.pub -noout -serial |
		sed 's/^serial=//' | tr A-F a-f)
	echo "signature's key: $key; /var/lib/dkms/mok.pub's serial: $cert"
	[ -n "$key" ] && [ "$key" = "$cert" ]
}
check "with the key whose certificate is /var/lib/dkms/mok.pub, to enroll" \
	signed_by_mok

# (dpkg -L of the one package, not dpkg -S, which reads every package's
# list: 17 s of the guest's minute)
check_eq "the provider is the package's" \
	"$(dpkg-query -L vhca-ibverbs-provider | grep -Fx -e "$libdir/libvhca-rdmav34.so" -e /etc/libibverbs.d/vhca.driver | sort)" \
	"$(printf '%s\n' /etc/libibverbs.d/vhca.driver "$libdir/libvhca-rdmav34.so")"
# the private ABI the provider was built for is this rdma-core release's
# only: the package says so with a range one release wide
release=$(dpkg-query -W -f='${Version}' libibverbs1 | sed -E 's/^([0-9]+:)?([0-9]+)\..*/\2/')
check "the provider depends on libibverbs1 $release and nothing newer" \
	bash -c "dpkg-query -W -f='\${Depends}' vhca-ibverbs-provider | tr -d ' ' |
		grep -Eq 'libibverbs1\(>=$release\),libibverbs1\(<<$((release + 1))~\)|libibverbs1\(<<$((release + 1))~\),libibverbs1\(>=$release\)'"

# the demo's steps (tools/demo.sh), then a ping-pong through the provider
ip link set eth0 up
ip addr add 10.76.0.1/24 dev eth0
check "rdma link add vhca0 loads the module" \
	rdma link add vhca0 type vhca netdev eth0
check_eq "rdma link show" \
	"$(rdma link show vhca0/1 | sed 's/[[:space:]]*$//')" \
	"link vhca0/1 state ACTIVE physical_state LINK_UP netdev eth0"
# without a provider libibverbs lists no vhca device: the package's is used
check_eq "ibv_devices lists vhca0, with no warning" \
	"$(ibv_devices 2>&1 | awk 'NR > 2 { print $1 }')" vhca0
check_eq "ibv_devinfo: PORT_ACTIVE" "$(field vhca0 state)" "PORT_ACTIVE (4)"
gid=$(grep -slx 0000:0000:0000:0000:0000:ffff:0a4c:0001 \
	/sys/class/infiniband/vhca0/ports/1/gids/* | head -n 1 | xargs -r basename)
pingpong() {
	ibv_rc_pingpong -d vhca0 -g "$gid" -n 100 -s 4096 -c >/tmp/srv.log 2>&1 &
	local srv=$!
	wait_listen 18515
	timeout 60 ibv_rc_pingpong -d vhca0 -g "$gid" -n 100 -s 4096 -c 127.0.0.1 \
		>/tmp/cli.log 2>&1 && wait $srv && spot_ok /tmp/srv.log /tmp/cli.log
}
check "ibv_rc_pingpong on vhca0 (and -c's spot check of the data)" pingpong
check "rdma link del vhca0" rdma link del vhca0
check "modprobe -r vhca" modprobe -r vhca
tap_done
