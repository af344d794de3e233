#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A Debian 13 (trixie) root filesystem, made with mmdebstrap from Debian's
# archive, in which vhca is built as a trixie user builds it (gcc-14, the
# trixie and trixie-backports kernel headers, rdma-core 56) and which
# trixie guests boot as their userspace (tools/guest.sh --system).  It is
# cached outside the clone like the kernel images; a second run with the
# same package list is a no-op.  The host's own apt sources stay as they
# are: the root's sources name the same archive (read from the host's apt)
# with trixie's suites.
#
#   tools/trixie-root.sh     prints the root's path
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

PKGS=(
	# building the module, the provider, the tests and the packages
	build-essential bc bison flex libelf-dev libssl-dev kmod sparse
	pkg-config libibverbs-dev librdmacm-dev
	dpkg-dev debhelper dh-dkms dkms fakeroot lintian git
	# what the guests' suites run
	busybox iproute2 iputils-ping ethtool procps python3 util-linux
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
	python3-pyverbs nvme-cli fio
	# ucxcheck, built and run against trixie's UCX (tests/guest/leg.sh)
	libucx-dev
)

root="$VHCA_CACHE/roots/trixie"
want=$(printf '%s\n' "${PKGS[@]}" | sha256sum | cut -c1-16)
if [ "$(cat "$root.stamp" 2>/dev/null)" = "$want" ] && [ -x "$root/usr/bin/gcc" ]; then
	echo "$root"
	exit 0
fi

# the archive this host's apt uses, for the main suite and for security
mirror=$(apt-get indextargets --format '$(SITE) $(RELEASE)' |
	awk '$2 == "bookworm" { print $1; exit }')
security=$(apt-get indextargets --format '$(SITE) $(RELEASE)' |
	awk '$2 == "bookworm-security" { print $1; exit }')
[ -n "$mirror" ] && [ -n "$security" ] ||
	die "the host's apt names no bookworm and bookworm-security archive to take trixie from"

command -v mmdebstrap >/dev/null ||
	die "mmdebstrap is missing (tools/setup.sh installs it)"
log "making a trixie root in $root (mmdebstrap)"
rm -rf "$root.tmp" "$root.stamp"
mkdir -p "$(dirname "$root")"
mmdebstrap --quiet --mode=root --variant=apt --components=main \
	--include="$(IFS=,; echo "${PKGS[*]}")" \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	trixie "$root.tmp" \
	"deb $mirror trixie main" \
	"deb $mirror trixie-updates main" \
	"deb $security trixie-security main" \
	"deb $mirror trixie-backports main" >&2
rm -rf "$root"
mv "$root.tmp" "$root"
echo "$want" >"$root.stamp"
echo "$root"
