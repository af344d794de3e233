#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The Debian packages as administrators install them, on each supported
# system (tools/system.sh), then each of its kernels booted with what was
# installed (tests/guest/packaged.sh).  Two steps, so that the first, which
# builds natively, can run while other suites' guests do (tools/test.sh):
#
#   tests/packages.sh install GROUP   the packages installed in GROUP's root
#   tests/packages.sh boot GROUP      each kernel of GROUP boots that root;
#                                     the packages purged; the root removed
#
#   bookworm   `make deb` on this machine's Debian 12 (gcc-12, rdma-core
#              44), installed there: DKMS builds vhca for every kernel
#              whose headers are there (6.12, 6.1, 6.12-rt); each boots
#   trixie     `make deb` in the trixie root (gcc-14, rdma-core 56,
#              trixie's lintian), installed there: DKMS builds for trixie's
#              6.12.  Then trixie-backports' kernel is installed, as its
#              users upgrade, and the kernel's hook has DKMS build for it.
#              Both boot.
#
# GROUP's root is an overlay of this machine's / or of the trixie root,
# whose upper layer is a tmpfs at $VHCA_CACHE/packages/GROUP: each step
# mounts the overlay in a mount namespace of its own.  The builds run
# natively (DKMS built for one kernel in about a minute here, and in 7
# under TCG); the guests boot the result as it is, with no module or
# provider of this clone's.  The packages are purged at the end, and must
# leave nothing behind.
set -u
cd "$(dirname "$0")/.." || exit 1
. tools/lib.sh
. tests/guest/lib/lib.sh

step=${1:-} group=${2:-}
case $group in
bookworm) systems=(bookworm bookworm-6.1 bookworm-rt) ;;
trixie) systems=(trixie trixie-backports) ;;
*) step= ;;
esac
case $step in
install | boot) ;;
*) die "usage: tests/packages.sh install|boot bookworm|trixie" ;;
esac
st=$VHCA_CACHE/packages/$group

# The tmpfs is mounted here, where both steps see it; the overlay in a
# namespace of the step's own.
if [ -z "${VHCA_PACKAGES_NS:-}" ]; then
	if [ "$step" = install ]; then
		# an upper layer cannot be on the lower one's file system
		! mountpoint -q "$st" || umount -R "$st" || die "$st is busy"
		mkdir -p "$st"
		mount -t tmpfs -o size=8g tmpfs "$st" || die "no tmpfs at $st"
		mkdir -p "$st/upper" "$st/work" "$st/root"
	elif [ ! -e "$st/installed" ]; then
		echo "not ok 1 - tests/packages.sh install $group installed the packages in $st"
		! mountpoint -q "$st" || umount -R "$st"
		exit 1
	fi
	unshare -m --propagation private env VHCA_PACKAGES_NS=1 bash "$0" "$@"
	rc=$?
	[ "$step" = install ] || { umount -R "$st" && rmdir "$st"; } ||
		{ echo "not ok - $st removed"; rc=1; }
	exit "$rc"
fi

version=$(make -s --no-print-directory version)
libdir=/usr/lib/x86_64-linux-gnu/libibverbs
declare -A kver_of
for s in "${systems[@]}"; do
	conf=$(bash tools/system.sh setup "$s") || die "tools/system.sh setup $s failed"
	kver_of[$s]=$(sed -n 's/^kver=//p' "$conf")
	lower=$(sed -n 's/^r=//p' "$conf")
done
lower=${lower:-/}

mount -t overlay overlay \
	-o "lowerdir=$lower,upperdir=$st/upper,workdir=$st/work" "$st/root" ||
	die "no overlay of $lower"
root=$st/root

# in_inst CMD...: CMD in the installed root
in_inst() {
	in_root "$root" "$@"
}
dkms_has() {
	in_inst dkms status vhca -k "$1" | grep -q "^vhca/$version, $1, x86_64: installed"
}
dkms_install() {
	in_inst make -s dkms-install DKMS_KVER="$1" && dkms_has "$1"
}
dkms_uninstall() {
	in_inst make -s dkms-uninstall &&
		! compgen -G "$root/lib/modules/*/updates/dkms/vhca.ko*" &&
		test ! -e "$root/var/lib/dkms/vhca" -a ! -e "$root/usr/src/vhca-$version" \
			-a ! -e "$root$libdir/libvhca-rdmav34.so"
}

# the plan: installing, 8 checks (trixie's backports kernel takes three,
# bookworm's make dkms-install and dkms-uninstall as many); booting, each
# kernel runs packaged.sh and tap_run's check of its status, then four
# checks of the purge
if [ "$step" = install ]; then
	tap_plan 8
else
	tap_plan $((($(sed -n 's/^tap_plan //p' tests/guest/packaged.sh) + 1) * ${#systems[@]} + 4))
fi

if [ "$step" = install ]; then
	if [ "$group" = trixie ]; then
		bp=${kver_of[trixie-backports]}
		# trixie as its users first have it: without the backports kernel,
		# which tools/system.sh installed in the root
		purge_bp() {
			in_inst sh -c "dpkg-query -W -f '\${Package}\n' | grep -F '${bp%-amd64}' |
				xargs -r dpkg --purge"
		}
		check "trixie without trixie-backports' $bp to start with" purge_bp
		check "no headers of $bp left" test ! -e "$root/lib/modules/$bp/build"
	fi
	if [ "$group" = bookworm ]; then
		# DKMS from the clone, as the admin guide's table has it, then
		# gone, before the packages of the same version
		k=${kver_of[bookworm]}
		check "make dkms-install DKMS_KVER=$k: DKMS built and installed vhca" \
			dkms_install "$k"
		check "the provider is installed beside it" \
			test -e "$root$libdir/libvhca-rdmav34.so" -a -e "$root/etc/libibverbs.d/vhca.driver"
		check "make dkms-uninstall: no module, DKMS tree, source nor provider is left" \
			dkms_uninstall
	fi
	debs=build/sys/$group/deb
	check "make deb on $group: dpkg-buildpackage and lintian $(in_inst dpkg-query -W -f '${Version}' lintian), no error or warning" \
		in_inst make -s deb DEB_OUT="$debs"

	t0=$SECONDS
	check "dpkg -i vhca-dkms vhca-ibverbs-provider: DKMS builds vhca" \
		in_inst dpkg -i "$debs/vhca-dkms_${version}_all.deb" \
		"$debs/vhca-ibverbs-provider_${version}_amd64.deb"
	echo "# dpkg -i took $((SECONDS - t0)) s"
	if [ "$group" = trixie ]; then
		check "DKMS built and installed vhca for ${kver_of[trixie]}" dkms_has "${kver_of[trixie]}"
		check "not for $bp, which is not installed" bash -c "! compgen -G '$root/lib/modules/$bp/updates/dkms/vhca.ko*'"
		# the real upgrade path: a newer kernel, whose packages run
		# /etc/kernel/postinst.d/dkms (and header_postinst.d) for it
		t0=$SECONDS
		check "apt-get install -t trixie-backports linux-image-$bp linux-headers-$bp" \
			in_inst apt-get install -y -qq --no-install-recommends -t trixie-backports \
			"linux-image-$bp" "linux-headers-$bp"
		echo "# the upgrade took $((SECONDS - t0)) s"
		check "the kernel's hook had DKMS build and install vhca for $bp" dkms_has "$bp"
	else
		for s in "${systems[@]}"; do
			check "DKMS built and installed vhca for ${kver_of[$s]}" dkms_has "${kver_of[$s]}"
		done
	fi
	# the boot step boots a root whose install passed
	[ "$tap_failed" != 0 ] || : >"$st/installed"
else
	# each kernel boots the system as installed
	for s in "${systems[@]}"; do
		t0=$SECONDS
		tap_run "$s" tools/guest.sh --system "$s" --root "$root" 'bash tests/guest/packaged.sh'
		echo "# $s's guest took $((SECONDS - t0)) s"
	done

	check "dpkg --purge of both packages" \
		in_inst dpkg --purge vhca-ibverbs-provider vhca-dkms
	check "no module is left" bash -c "! compgen -G '$root/lib/modules/*/updates/dkms/vhca.ko*'"
	check "no provider is left" \
		test ! -e "$root$libdir/libvhca-rdmav34.so" -a ! -e "$root/etc/libibverbs.d/vhca.driver"
	check "no DKMS tree nor source is left" \
		test ! -e "$root/var/lib/dkms/vhca" -a ! -e "$root/usr/src/vhca-$version"
fi
tap_done
