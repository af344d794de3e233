#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build the Debian packages (vhca-dkms, vhca-ibverbs-provider) with
# dpkg-buildpackage from this clone's tracked files as they are now, in
# build/deb (or OUT), and check them with lintian: any error or warning
# fails.
# dpkg-buildpackage writes next to the source folder, so the source is
# copied to OUT/vhca-VERSION first, which also keeps the developer's
# objects out of the package.
#
#   tools/mkdeb.sh [OUT]   the packages' paths, one a line, on stdout
#
# OUT, a folder of this clone, is for another system's packages
# (tests/packages.sh builds trixie's in its root).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

cd "$VHCA_ROOT"
version=$(make -s --no-print-directory version)
out=${1:-build/deb}
src=$out/vhca-$version
rm -rf "$out"
mkdir -p "$src"
git ls-files -z | xargs -0 cp -a --parents -t "$src"
log "dpkg-buildpackage in $src"
(cd "$src" && dpkg-buildpackage -us -uc --build=binary,source) >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log" >&2; die "dpkg-buildpackage failed ($out/build.log)"; }
changes=$(ls "$out"/vhca_"$version"_*.changes)
# the tags lintian finds, every level, go to the log; errors and
# warnings fail the build
lintian --info --display-info --pedantic "$changes" >"$out/lintian.log" 2>&1 || true
lintian --fail-on error,warning "$changes" >&2 ||
	die "lintian: errors or warnings ($out/lintian.log has every tag)"
ls "$out"/*.deb
