#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build the debug kernel the guest tests can boot (tools/guest.sh --debug):
# Linux 6.12 from the linux-source-6.12 that tools/setup.sh unpacked, with
# Debian's config trimmed by `make localmodconfig` to the modules in
# tools/debug-kernel.modules (and what they depend on), then
# tools/debug-kernel.config merged in: KASAN, lockdep, UBSAN, kmemleak and
# the hang detectors on; debug info, module signing and what a headless
# guest does not use off.
#
# Everything lives in $VHCA_CACHE/debug-kernel:
#   build/            the O= build folder (its .config; M= builds use it)
#   root/vmlinuz      the bzImage
#   root/lib/modules/ the stripped modules, depmod'ed
#   kver              the kernel release
#   stamp             a hash of the inputs: source tarball, Debian's config,
#                     the fragment, the module list and this script
# A run whose inputs match the stamp does nothing; otherwise it configures
# again and makes, which rebuilds what changed.  Prints how long it took.
#
#   tools/debug-kernel.sh [--force]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

force=0
[ "${1:-}" != --force ] || force=1

kver=$(vhca_kver)
ksrc="$VHCA_CACHE/kunit/linux-source-6.12"
src_tar=/usr/src/linux-source-6.12.tar.xz
debconf="$VHCA_CACHE/kernel/$kver/boot/config-$kver"
fragment="$here/debug-kernel.config"
modlist="$here/debug-kernel.modules"
base="$VHCA_CACHE/debug-kernel"
build="$base/build"
root="$base/root"
stamp="$base/stamp"

[ -f "$ksrc/.vhca-unpacked" ] || die "$ksrc missing: run tools/setup.sh"
[ -f "$debconf" ] || die "$debconf missing: run tools/setup.sh"

key=$({
	stat -c '%n %s %Y' "$src_tar"
	cat "$debconf" "$fragment" "$modlist" "$here/debug-kernel.sh"
} | sha256sum | cut -c1-16)

# The tree stays clean: every output goes to $build.
kmake() { nice -n 10 make -C "$ksrc" O="$build" "$@"; }

if [ "$force" = 0 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ] &&
	[ -f "$root/vmlinuz" ]; then
	# $build/Makefile and $build/source name the source folder by its
	# absolute path: a cache that was moved or copied (VHCA_CACHE set
	# elsewhere for the build) would leave M= builds a dangling include.
	# Rewriting them costs a tenth of a second.
	kmake -s outputmakefile || die "cannot point $build at $ksrc"
	exit 0
fi

start=$(date +%s)
mkdir -p "$build"
rm -f "$stamp"

# The list for localmodconfig, in lsmod's format (one name a line is
# enough): the modules asked for and those they depend on, from Debian's
# modules.dep.
log "debug kernel: configuring (Debian's config, localmodconfig, $(basename "$fragment"))"
mods=$(sed 's/#.*//' "$modlist" | awk NF)
# shellcheck disable=SC2086
modprobe -d "$VHCA_CACHE/kernel/$kver" -S "$kver" --show-depends -a $mods |
	awk '$1 == "insmod" { print $2 }' | xargs -n1 basename |
	sed 's/\.ko\(\.[a-z]*\)\?$//; s/-/_/g' | sort -u >"$build/lsmod"
[ -s "$build/lsmod" ] || die "no module from $modlist in Debian's modules.dep"

cp "$debconf" "$build/.config"
# localmodconfig asks about options Debian's config does not set: take
# their defaults.
{ yes '' || true; } | kmake -s LSMOD="$build/lsmod" localmodconfig >"$base/config.log" 2>&1 ||
	{ tail -n 30 "$base/config.log"; die "localmodconfig failed"; }
(cd "$build" && "$ksrc/scripts/kconfig/merge_config.sh" -m -O "$build" .config "$fragment") \
	>>"$base/config.log" 2>&1 || { tail -n 30 "$base/config.log"; die "merge_config failed"; }
kmake -s olddefconfig >>"$base/config.log" 2>&1 ||
	{ tail -n 30 "$base/config.log"; die "olddefconfig failed"; }

# Kconfig drops what a dependency rules out, silently: every line of the
# fragment must be in the result ("is not set" may also be absent).
bad=0
while IFS= read -r line; do
	case $line in
	"# CONFIG_"*" is not set")
		sym=${line#\# }
		sym=${sym%% *}
		if grep -q "^$sym=" "$build/.config"; then
			log "debug kernel: $sym stayed on: $(grep "^$sym=" "$build/.config")"
			bad=1
		fi
		;;
	CONFIG_*)
		if ! grep -qxF "$line" "$build/.config"; then
			sym=${line%%=*}
			log "debug kernel: wanted $line, got: $(grep -E "^(# )?${sym}[= ]" "$build/.config" || echo unset)"
			bad=1
		fi
		;;
	esac
done <"$fragment"
[ "$bad" = 0 ] || die "the .config does not have what $(basename "$fragment") asks for"

log "debug kernel: building in $build ($(grep -c '=y$' "$build/.config") options built in, $(grep -c '=m$' "$build/.config") modules), log in $base/build.log"
# Twice as many jobs as CPUs: at nice 10 the build yields to the guests
# of other runs, and waits on I/O too.
if ! kmake -j"$(($(nproc) * 2))" bzImage modules >"$base/build.log" 2>&1; then
	grep -E -m5 'error|Error' "$base/build.log" || true
	tail -n 30 "$base/build.log"
	die "debug kernel build failed"
fi

release=$(cat "$build/include/config/kernel.release")
rm -rf "$root.tmp"
mkdir -p "$root.tmp"
kmake -s INSTALL_MOD_PATH="$root.tmp" INSTALL_MOD_STRIP=1 modules_install \
	>>"$base/build.log" 2>&1 || { tail -n 30 "$base/build.log"; die "modules_install failed"; }
# the symlink to the build folder would be a dangling link in the guest
rm -f "$root.tmp/lib/modules/$release/build"
cp "$build/arch/x86/boot/bzImage" "$root.tmp/vmlinuz"
rm -rf "$root"
mv "$root.tmp" "$root"
echo "$release" >"$base/kver"
echo "$key" >"$stamp"

secs=$(($(date +%s) - start))
# The CPU time of this script's children, whatever else ran: what the
# build costs on idle CPUs.  From /proc (cutime + cstime): `times` in a
# pipe or $(...) runs in a subshell, which has no children.
cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($16 + $17) / hz }' "/proc/$$/stat")
log "debug kernel $release built in $((secs / 60))m$((secs % 60))s; CPU time $((cpu / 60))m, $((cpu / 60 / $(nproc)))m on $(nproc) idle CPUs"
