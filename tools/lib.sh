# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Shared by the tools/ scripts: where the cache lives and how to report.

VHCA_CACHE=${VHCA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vhca}
VHCA_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export VHCA_CACHE VHCA_ROOT

log() { printf 'vhca: %s\n' "$*" >&2; }
die() { printf 'vhca: error: %s\n' "$*" >&2; exit 1; }

# The kernel ABI setup.sh picked.
vhca_kver() {
	cat "$VHCA_CACHE/kver" 2>/dev/null || die "run tools/setup.sh first"
}

# unpack_kernel KVER: linux-image-KVER-unsigned from the archive, unpacked
# (never installed) into $VHCA_CACHE/kernel/KVER with its modules.dep; a
# no-op when it is there
unpack_kernel() {
	local kver=$1 kdir="$VHCA_CACHE/kernel/$1" tmp
	[ ! -f "$kdir/vmlinuz" ] || return 0
	log "unpacking linux-image-$kver-unsigned into $kdir"
	tmp=$(mktemp -d)
	# apt downloads as its _apt user when it can write the folder
	chown _apt "$tmp" 2>/dev/null || true
	(cd "$tmp" && apt-get download -qq "linux-image-$kver-unsigned")
	rm -rf "$kdir.tmp"
	mkdir -p "$kdir.tmp"
	dpkg-deb -x "$tmp"/linux-image-*.deb "$kdir.tmp"
	rm -rf "$tmp"
	# Debian ships the modules without modules.dep; modprobe needs it.
	depmod -b "$kdir.tmp" "$kver"
	cp "$kdir.tmp/boot/vmlinuz-$kver" "$kdir.tmp/vmlinuz"
	rm -rf "$kdir"
	mv "$kdir.tmp" "$kdir"
}

# in_root ROOT CMD...: CMD as root in ROOT (a root filesystem: the trixie
# root, or an installed system tests/packages.sh made) with /proc, /dev and
# this clone (at /vhca) mounted, in a mount namespace of its own; ROOT
# empty is this machine, in this clone
in_root() {
	local r=$1
	shift
	if [ -z "$r" ]; then
		(cd "$VHCA_ROOT" && "$@")
		return
	fi
	mkdir -p "$r/vhca"
	unshare -m -- sh -c '
		r=$1 src=$2; shift 2
		mount -t proc proc "$r/proc" &&
		mount --rbind /dev "$r/dev" &&
		mount --bind "$src" "$r/vhca" &&
		cd / && exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
			sh -c "cd /vhca && exec \"\$@\"" sh "$@"' sh "$r" "$VHCA_ROOT" "$@"
}

# A port number of 127.0.0.1 that is free at the moment (asked of TCP).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
