#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The Debian systems vhca supports, each built as its users build it:
#
#   name              userspace                      kernel
#   bookworm          Debian 12, rdma-core 44, gcc-12   6.12 (+deb12, bookworm-security)
#   bookworm-6.1      Debian 12, rdma-core 44, gcc-12   6.1 (Debian 12's default)
#   bookworm-rt       Debian 12, rdma-core 44, gcc-12   6.12 PREEMPT_RT (+deb12-rt)
#   trixie            Debian 13, rdma-core 56, gcc-14   6.12 (+deb13)
#   trixie-backports  Debian 13, rdma-core 56, gcc-14   trixie-backports' (7.x +deb13)
#
# bookworm is this machine, and what tools/setup.sh and `make` give.  The
# bookworm ones use this machine's userspace; the trixie ones a trixie root
# (tools/trixie-root.sh) in which they are built with trixie's compiler and
# rdma-core, and which their guests boot as their userspace.
#
#   tools/system.sh setup NAME   headers and kernel image of NAME's newest ABI
#                                that has both (a no-op when done); prints
#                                the file describing it
#   tools/system.sh build NAME   vhca.ko and the kernel test modules (W=1
#                                -Werror, sparse-clean), the provider, the
#                                tests and the packages, in build/sys/NAME
#   tools/system.sh run NAME CMD...  CMD in NAME's build root (chroot for
#                                trixie), in this clone
#   tools/system.sh list         the names
#
# tools/guest.sh --system NAME boots NAME's kernel with NAME's userspace and
# NAME's build mounted on /vhca/build.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

SYSTEMS=(bookworm bookworm-6.1 bookworm-rt trixie trixie-backports)

# sys_info NAME: root (empty for this machine's), the apt pattern of the
# kernel's ABI names and the suite to take it from
sys_info() {
	case $1 in
	bookworm) root= abi='6\.12\.[0-9]+\+deb12-amd64' suite= ;;
	bookworm-6.1) root= abi='6\.1\.0-[0-9]+-amd64' suite= ;;
	bookworm-rt) root= abi='6\.12\.[0-9]+\+deb12-rt-amd64' suite= ;;
	trixie) root=trixie abi='6\.12\.[0-9]+\+deb13-amd64' suite= ;;
	# the newest kernel backports has, whichever release it is
	trixie-backports) root=trixie abi='[0-9]+\.[0-9]+\.[0-9]+\+deb13-amd64' suite=trixie-backports ;;
	*) die "no system $1 (tools/system.sh list)" ;;
	esac
}

root_dir() {
	[ -z "$1" ] || echo "$VHCA_CACHE/roots/$1"
}

# newest_abi ROOT PATTERN SUITE: the newest ABI whose image and headers
# are both in the archive (old ABIs leave it as updates land).  This
# machine unpacks the unsigned image; a root installs the one its users do.
newest_abi() {
	local r=$1 pat=$2 suite=$3 img=-unsigned
	[ -z "$r" ] || img=
	in_root "$r" apt-cache search --names-only "^linux-image-($pat)$img\$" |
		sed -En "s/^linux-image-($pat)$img .*/\\1/p" | sort -V -r |
		while read -r k; do
			# (</dev/null: the loop's input is the list)
			[ -z "$suite" ] ||
				in_root "$r" apt-cache madison "linux-image-$k$img" </dev/null |
				grep -q " $suite/" || continue
			if in_root "$r" apt-cache show "linux-headers-$k" </dev/null >/dev/null 2>&1; then
				echo "$k"
				break
			fi
		done
}

# setup NAME: writes $VHCA_CACHE/systems/NAME: kver, root, vmlinuz, moddir
do_setup() {
	local name=$1 root abi suite r kver conf kdir vmlinuz moddir rootstamp
	sys_info "$name"
	conf="$VHCA_CACHE/systems/$name"
	rootstamp=
	# a root whose package list changed is made again first (and the
	# stamp below then says the kernels must be installed in it again)
	[ -z "$root" ] || bash "$here/trixie-root.sh" >/dev/null
	if [ -f "$conf" ]; then
		# shellcheck disable=SC1090
		. "$conf"
		if [ -f "$vmlinuz" ] && [ -d "$moddir" ] && [ -d "$r/usr/src/linux-headers-$kver" ] &&
		   [ -z "$root" -o "$(cat "$(root_dir "$root").stamp" 2>/dev/null)" = "$rootstamp" ]; then
			echo "$conf"
			return
		fi
	fi
	if [ "$name" = bookworm ]; then
		# what tools/setup.sh made
		bash "$here/setup.sh" >&2
		kver=$(vhca_kver)
		r=
		kdir="$VHCA_CACHE/kernel/$kver"
	elif [ -z "$root" ]; then
		bash "$here/setup.sh" >&2
		r=
		kver=$(newest_abi "" "$abi" "$suite")
		[ -n "$kver" ] || die "$name: no kernel ABI matching $abi with both image and headers"
		log "$name: kernel $kver"
		apt-get install -y -qq --no-install-recommends "linux-headers-$kver" >/dev/null
		kdir="$VHCA_CACHE/kernel/$kver"
		unpack_kernel "$kver"
	else
		r=$(bash "$here/trixie-root.sh")
		in_root "$r" apt-get update -qq
		kver=$(newest_abi "$r" "$abi" "$suite")
		[ -n "$kver" ] || die "$name: no kernel ABI matching $abi with both image and headers"
		log "$name: kernel $kver, installed in $r as a trixie user installs it"
		# the image as a user installs it: its modules are the guest's
		in_root "$r" apt-get install -y -qq --no-install-recommends \
			${suite:+-t "$suite"} "linux-image-$kver" "linux-headers-$kver" >/dev/null
		kdir="$r"
		cp "$r/boot/vmlinuz-$kver" "$r/vmlinuz-$kver"
	fi
	mkdir -p "$VHCA_CACHE/systems"
	{
		echo "kver=$kver"
		echo "r=$r"
		if [ -n "$r" ]; then
			echo "vmlinuz=$r/boot/vmlinuz-$kver"
			echo "rootstamp=$(cat "$r.stamp")"
		else
			echo "vmlinuz=$kdir/vmlinuz"
		fi
		echo "moddir=$kdir/lib/modules/$kver"
	} >"$conf"
	echo "$conf"
}

# build NAME: everything a guest of NAME needs, in build/sys/NAME
# forky_sparse ROOT: Debian forky's sparse (0.6.5~rc1), unpacked in ROOT's
# /opt/sparse-forky, for kernels whose headers trixie's sparse 0.6.4 cannot
# parse (7.x's __typeof_unqual__); prints its path in ROOT.  Only the
# sparse binary is used, which needs nothing trixie lacks.
forky_sparse() {
	local r=$1 dir=/opt/sparse-forky mirror tmp
	if [ ! -x "$r$dir/usr/bin/sparse" ]; then
		mirror=$(apt-get indextargets --format '$(SITE) $(RELEASE)' |
			awk '$2 == "bookworm" { print $1; exit }')
		[ -n "$mirror" ] || die "the host's apt names no archive to take forky's sparse from"
		log "sparse from Debian forky into $r$dir"
		tmp=$(mktemp -d)
		/usr/bin/python3 - "$mirror" "$tmp/sparse.deb" <<'PY' || { rm -rf "$tmp"; die "no sparse from forky"; }
import lzma, sys, urllib.request
mirror, out = sys.argv[1].rstrip('/'), sys.argv[2]
idx = urllib.request.urlopen(mirror + '/dists/forky/main/binary-amd64/Packages.xz', timeout=120).read()
pkg = None
for stanza in lzma.decompress(idx).decode().split('\n\n'):
    fields = dict(l.split(': ', 1) for l in stanza.splitlines() if ': ' in l and not l.startswith(' '))
    if fields.get('Package') == 'sparse':
        pkg = fields['Filename']
        break
if not pkg:
    sys.exit('forky has no sparse')
with open(out, 'wb') as f:
    f.write(urllib.request.urlopen(mirror + '/' + pkg, timeout=120).read())
PY
		rm -rf "$r$dir"
		mkdir -p "$r$dir"
		dpkg-deb -x "$tmp/sparse.deb" "$r$dir"
		rm -rf "$tmp"
	fi
	echo "$dir/usr/bin/sparse"
}

do_build() {
	local name=$1 root abi suite conf kver r vmlinuz moddir rootstamp b check=
	sys_info "$name"
	conf=$(do_setup "$name")
	# shellcheck disable=SC1090
	. "$conf"
	b=build/sys/$name
	mkdir -p "$VHCA_ROOT/$b"
	# Debian's 7.x headers lack scripts/checker-valid.sh, by which kbuild
	# would judge sparse, and trixie's sparse cannot parse them
	[ "$name" != trixie-backports ] || check=$(forky_sparse "$r")
	log "$name: vhca.ko for $kver${check:+, sparse: $check}"
	in_root "$r" make -s sysmodule B="$b" KDIR="/usr/src/linux-headers-$kver" \
		${check:+SPARSE_CHECK="$check"}
	if [ -n "$r" ]; then
		log "$name: provider and tests against $(in_root "$r" pkg-config --modversion libibverbs)"
		in_root "$r" make -s provider usertests "$b/tests/ucxcheck" B="$b"
	else
		# this machine's userspace: bookworm's provider and tests
		make -s -C "$VHCA_ROOT" provider usertests
		cp --remove-destination "$VHCA_ROOT"/build/libvhca-rdmav34.so "$VHCA_ROOT"/build/vhca.driver \
			"$VHCA_ROOT/$b/"
		find "$VHCA_ROOT/build/tests" -maxdepth 1 -type f ! -name '*.ko' \
			-exec cp --remove-destination -t "$VHCA_ROOT/$b/tests/" {} +
	fi
}

case ${1:-} in
setup) do_setup "$2" ;;
build) do_build "$2" ;;
run)
	name=$2
	shift 2
	sys_info "$name"
	in_root "$(root_dir "$root")" "$@"
	;;
list) printf '%s\n' "${SYSTEMS[@]}" ;;
*) die "usage: tools/system.sh setup|build|run|list [NAME]" ;;
esac
