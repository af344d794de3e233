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

# A port number of 127.0.0.1 that is free at the moment (asked of TCP).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
