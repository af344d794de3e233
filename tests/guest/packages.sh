#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The Debian packages as an administrator installs them, on a guest whose
# vhca module and provider (those guest-init put in place) are removed
# first: dpkg -i of vhca-dkms and vhca-ibverbs-provider from build/deb
# (tools/mkdeb.sh) has DKMS build vhca for the running kernel and sign it
# with its key (Secure Boot); modprobe picks that module; the demo's steps
# and an RC ping-pong run through the packaged provider.  The hook
# Debian's kernel packages run (/etc/kernel/postinst.d/dkms) installs it
# again.  Removing the packages leaves no module, no provider and no DKMS
# tree.
. tests/guest/lib.sh

kver=$(uname -r)
libdir=/usr/lib/x86_64-linux-gnu/libibverbs
version=$(make -s --no-print-directory version)
dkms_dir=/lib/modules/$kver/updates/dkms
# the module DKMS installed, compressed as the kernel's own (.ko.xz)
dkms_ko() { compgen -G "$dkms_dir/vhca.ko*"; }

export DEBIAN_FRONTEND=noninteractive
# dkms reads process substitutions through /dev/fd, which udev links on a
# host; the guest has no udev
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
# The module tree is the host's, read-only: an overlay on a tmpfs lets
# DKMS and depmod write to it, with the headers' build link a kernel
# package installs beside them.
mkdir -p /mnt/mods
mount -t tmpfs tmpfs /mnt/mods
mkdir -p /mnt/mods/upper /mnt/mods/work
mount -t overlay -o lowerdir=/usr/lib/modules,upperdir=/mnt/mods/upper,workdir=/mnt/mods/work \
	overlay /usr/lib/modules
ln -sfn "/usr/src/linux-headers-$kver" "/lib/modules/$kver/build"
rm -f "/lib/modules/$kver/updates/vhca.ko" "$libdir/libvhca-rdmav34.so" \
	/etc/libibverbs.d/vhca.driver
depmod -a "$kver"
check "without the packages there is no vhca module" bash -c '! modinfo vhca'

t0=$SECONDS
check "dpkg -i vhca-dkms vhca-ibverbs-provider: DKMS builds vhca for $kver" \
	dpkg -i build/deb/vhca-dkms_"${version}"_all.deb \
	build/deb/vhca-ibverbs-provider_"${version}"_amd64.deb
echo "# DKMS built and installed the module in $((SECONDS - t0)) s"
check "dkms status says vhca/$version is installed for $kver" \
	bash -c "dkms status vhca | grep -q '^vhca/$version, $kver, x86_64: installed'"
check_eq "modprobe picks the DKMS module" "$(modinfo -n vhca)" "$(dkms_ko)"
check "which is in DKMS's place" bash -c "modinfo -n vhca | grep -q '^$dkms_dir/vhca.ko'"
# Secure Boot: DKMS signs what it builds with its own key, whose
# certificate the administrator enrolls (mokutil --import)
check_eq "DKMS signed the module" "$(modinfo -F signer vhca)" "DKMS module signing key"
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
check_eq "the provider is the package's" \
	"$(dpkg -S "$libdir/libvhca-rdmav34.so" /etc/libibverbs.d/vhca.driver | cut -d: -f1 | sort -u)" \
	vhca-ibverbs-provider

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
	timeout 60 ibv_rc_pingpong -d vhca0 -g "$gid" -n 100 -s 4096 -c 127.0.0.1 &&
		wait $srv
}
check "ibv_rc_pingpong on vhca0, data checked" pingpong
rdma link del vhca0
check "modprobe -r vhca" modprobe -r vhca

# A kernel upgrade: the new kernel's package runs this hook, which has
# DKMS build and install every module marked AUTOINSTALL for it.  Played
# here on the running kernel, after DKMS uninstalled the module from it:
# the hook must install it again.  (Building costs 7 minutes under TCG,
# the first install's build shows it works.)
dkms uninstall "vhca/$version" -k "$kver" >/dev/null
check "dkms uninstall for $kver takes the module away" bash -c '! modinfo vhca'
check "/etc/kernel/postinst.d/dkms $kver installs it again" \
	bash -c "/etc/kernel/postinst.d/dkms '$kver' && compgen -G '$dkms_dir/vhca.ko*'"
check "and modprobe loads it" bash -c 'modprobe vhca && modprobe -r vhca'

check "dpkg --purge of both packages" \
	dpkg --purge vhca-ibverbs-provider vhca-dkms
check "no module is left" bash -c "! modinfo vhca && ! compgen -G '$dkms_dir/vhca.ko*'"
check "no provider is left" \
	test ! -e "$libdir/libvhca-rdmav34.so" -a ! -e /etc/libibverbs.d/vhca.driver
check "no DKMS tree nor source is left" \
	bash -c "test ! -e /var/lib/dkms/vhca -a ! -e '/usr/src/vhca-$version'"
check_eq "ibv_devices runs clean without them" "$(ibv_devices 2>&1 >/dev/null)" ""
tap_done
