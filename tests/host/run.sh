#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Host-side tests: the ABI header in userspace, and the provider binary's
# contract with libibverbs.  Prints TAP.
set -u
cd "$(dirname "$0")/../.."
. tests/guest/lib.sh	# the TAP helpers are not guest specific

build/tests/abi_test >/tmp/vhca-abi.tap 2>&1
rc=$?
tap_import abi </tmp/vhca-abi.tap
check_eq "abi_test exit status" "$rc" 0

so=build/libvhca-rdmav34.so
check "the provider is named for private ABI 34" test -f "$so"
check_eq "the provider exports no symbols" \
	"$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBR]$/ {print $3}')" ""
check_eq "every libibverbs symbol it uses is at IBVERBS_PRIVATE_34 or IBVERBS_1.x" \
	"$(objdump -T "$so" | awk '/\*UND\*/ && /ibv|verbs/ && !/IBVERBS_PRIVATE_34|IBVERBS_1\./')" ""
check "it registers itself from a constructor" \
	bash -c "objdump -T $so | grep -q verbs_register_driver_34 && readelf -S $so | grep -q init_array"
check "libibverbs loads it (dlopen resolves every symbol)" \
	python3 -c "import ctypes; ctypes.CDLL('libibverbs.so.1', mode=ctypes.RTLD_GLOBAL); ctypes.CDLL('$so')"
inst=$(mktemp -d)
installed() {
	make -s install DESTDIR="$inst" INSTALL_MOD_PATH="$inst" &&
	ls "$inst"/lib/modules/*/updates/vhca.ko* &&
	test -f "$inst/usr/lib/$(gcc -print-multiarch)/libibverbs/libvhca-rdmav34.so" &&
	grep -qx "driver vhca" "$inst/etc/libibverbs.d/vhca.driver"
}
check "make install places module, provider and driver file" installed
rm -rf "$inst"
tap_done
