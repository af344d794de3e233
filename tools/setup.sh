#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Bring a fresh Debian 12 machine to the point where vhca builds, boots in a
# guest and runs its tests: Debian packages, the newest Linux 6.12 ABI that has
# both an unsigned image and headers in the archive, and that image unpacked
# (never installed) into the cache.  A second run with nothing to do is a
# no-op that returns in well under a second.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

PKGS=(
	build-essential bc bison flex libelf-dev libssl-dev kmod cpio xz-utils
	sparse perl python3 git
	qemu-system-x86 busybox-static iproute2 iputils-ping ethtool procps
	rdma-core ibverbs-providers libibverbs-dev librdmacm-dev
	ibverbs-utils rdmacm-utils perftest python3-pyverbs nvme-cli fio
	open-iscsi nftables pkg-config mmdebstrap tcpdump
	ucx-utils libucx-dev libfabric-bin nfs-kernel-server
	dpkg-dev debhelper dh-dkms dkms fakeroot lintian
	linux-source-6.12
)

stamp="$VHCA_CACHE/setup.stamp"
want=$(printf '%s\n' "${PKGS[@]}" | sha256sum | cut -c1-16)

# linux-source-6.12 unpacked: the KUnit build and checkpatch/kernel-doc use it.
ksrc="$VHCA_CACHE/kunit/linux-source-6.12"
src_tar=/usr/src/linux-source-6.12.tar.xz
src_ok() {
	[ -f "$ksrc/.vhca-unpacked" ] && [ ! "$src_tar" -nt "$ksrc/.vhca-unpacked" ]
}

kver_ok() {
	local k
	k=$(cat "$VHCA_CACHE/kver" 2>/dev/null) || return 1
	[ -d "/usr/src/linux-headers-$k" ] &&
		[ -f "$VHCA_CACHE/kernel/$k/vmlinuz" ] &&
		[ -d "$VHCA_CACHE/kernel/$k/lib/modules/$k" ]
}

if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && kver_ok && src_ok; then
	exit 0
fi

mkdir -p "$VHCA_CACHE"
export DEBIAN_FRONTEND=noninteractive
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

log "updating the package lists"
as_root apt-get update -qq

# The 6.12 ABI: newest <ver> for which both the unsigned image and the headers
# exist.  Old ABIs drop out of the archive as security updates land, so this is
# looked up every time setup has work to do, never written down in the tree.
kver=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' |
	sed -n 's/^linux-image-\(6\.12\.[0-9]*+deb12-amd64\)-unsigned .*/\1/p' |
	sort -V -r | while read -r k; do
		if apt-cache show "linux-headers-$k" >/dev/null 2>&1; then
			echo "$k"
			break
		fi
	done)
[ -n "$kver" ] || die "no Linux 6.12 ABI with both linux-image-*-unsigned and linux-headers-* in the archive"
log "kernel ABI: $kver"

log "installing packages"
as_root apt-get install -y -qq --no-install-recommends "${PKGS[@]}" "linux-headers-$kver" >/dev/null

unpack_kernel "$kver"

if ! src_ok; then
	log "unpacking $src_tar"
	# A new source tree invalidates the UML build made from the old one.
	rm -rf "$ksrc" "$VHCA_CACHE/kunit/build"
	mkdir -p "$VHCA_CACHE/kunit"
	tar -C "$VHCA_CACHE/kunit" -xf "$src_tar"
	touch "$ksrc/.vhca-unpacked"
fi

echo "$kver" >"$VHCA_CACHE/kver"
echo "$want" >"$stamp"
log "setup done: kernel $kver, cache $VHCA_CACHE"
