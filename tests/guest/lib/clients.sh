# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
# The libraries and kernel clients real users run over RDMA, driven on one
# host against one RDMA device whose netdev has address $A: libfabric's
# verbs provider, UCX, NFS over RDMA and SRP.  Sourced by
# tests/guest/clients.sh (does each work) and bench/guest-clients.sh (how
# fast, beside rxe).  Each function takes the device's name; server and
# client run on it, so the RDMA CM loops the connection back through it.
# Their programs' output goes to /tmp/<name>.log and .srv.log.

A=${A:-10.76.0.1}

# srv_cli NAME 'SERVER CMD' 'CLIENT CMD': the server in the background,
# then (once its listener is up) the client; both must exit 0
srv_cli() {
	local name=$1 srv s c
	(eval "$2") >"/tmp/$name.srv.log" 2>&1 &
	srv=$!
	sleep 2	# neither tool has a listening socket ss could show
	(eval "$3") >"/tmp/$name.log" 2>&1
	c=$?
	wait $srv
	s=$?
	[ $s = 0 ] && [ $c = 0 ] && return 0
	echo "server exit $s, client exit $c"
	tail -n 8 "/tmp/$name.srv.log" "/tmp/$name.log"
	return 1
}

# fi_srv DEV [ARGS], fi_cli DEV SERVER [ARGS]: libfabric's fi_pingpong
# over the verbs provider's msg endpoint (RDMA CM, RC), every message
# checked (-c, unless FI_CHECK is empty: the check fills and compares
# each buffer byte by byte, which costs an emulated CPU more than the
# transfer); the server serves one client.  Each of these runs up to 300 s
# whatever T twohost.sh's retry sets: 8 MiB messages to rxe on the wire
# took more than its 30 s once.
FI_CHECK=${FI_CHECK--c}
fi_srv() {
	local d=$1
	shift
	# shellcheck disable=SC2086
	timeout 300 fi_pingpong -p verbs -e msg -d "$d" $FI_CHECK "$@"
}
fi_cli() {
	local d=$1 s=$2
	shift 2
	# shellcheck disable=SC2086
	timeout 300 fi_pingpong -p verbs -e msg -d "$d" $FI_CHECK "$@" "$s"
}

# fi_pp DEV [ARGS]: both ends on DEV
fi_pp() {
	srv_cli fi_pingpong "fi_srv $*" "fi_cli $1 $A ${*:2}"
}

# fi_rdm DEV: fi_pingpong over libfabric's ofi_rxm on the verbs
# provider's msg endpoints (what MPI and other RDM users run), with its
# defaults: rxm sizes its verbs CQ for a universe of 256 peers, 196608
# CQEs, every message checked
fi_rdm() {
	local p="fi_pingpong -p 'verbs;ofi_rxm' -e rdm -d $1 -c -S 65536 -I 100"
	srv_cli fi_rdm "timeout 120 $p" "timeout 120 $p $A"
}

# fi_rdm_xrc DEV: fi_rdm over XRC: the verbs provider's XRC domain
# (DEV-xrc, which FI_VERBS_PREFER_XRC offers first) under rxm with a
# shared receive context (FI_OFI_RXM_USE_SRX), 1000 round trips, every
# message checked; meanwhile fi_pingpong's XRC_SEND QPs and XRC_RECV QPs
# must be seen on DEV (rdma res, five times a second)
fi_rdm_xrc() {
	local d=$1 sampler rc
	local p="env FI_VERBS_PREFER_XRC=1 FI_OFI_RXM_USE_SRX=1 fi_pingpong -p 'verbs;ofi_rxm' -e rdm -d $d-xrc -c -S 65536 -I 1000"
	: >/tmp/fi_xrc.qps
	while :; do
		rdma res show qp link "$d/1" >>/tmp/fi_xrc.qps
		sleep 0.2
	done &
	sampler=$!
	srv_cli fi_rdm_xrc "timeout 120 $p" "timeout 120 $p $A"
	rc=$?
	kill "$sampler"
	wait "$sampler" 2>/dev/null
	echo "QPs seen: $(grep -o 'type [A-Z_]*' /tmp/fi_xrc.qps | sort | uniq -c | tr -s ' \n' ' ')"
	[ $rc = 0 ] && grep -q "type XRC_INI .*comm fi_pingpong" /tmp/fi_xrc.qps &&
		grep -q "type XRC_TGT " /tmp/fi_xrc.qps
}

# fi_figure SIZE: from the last fi_pp, the line for SIZE bytes:
# "usec/xfer MB/sec"
fi_figure() {
	awk -v s="$1" '$1 == s && NF == 8 { print $7, $6; exit }' /tmp/fi_pingpong.log
}

# ucx_env DEV TLS: UCX pinned to DEV's port 1 and to transports TLS.
# UCX's ud_verbs finds the GRH's destination address by the L3 header type
# that ConnectX reports in a completion's SL (vhca does the same); rxe
# reports 0 there, and every IPv4 datagram would be dropped: for rxe the
# check of that address is turned off.
ucx_env() {
	local e="UCX_NET_DEVICES=$1:1 UCX_TLS=$2"

	[ "${1#rxe}" != "$1" ] && e="$e UCX_UD_VERBS_ETH_DGID_CHECK=n"
	echo "$e"
}

# ucx_srv DEV TLS TEST [ARGS], ucx_cli DEV SERVER TLS TEST [ARGS]:
# ucx_perftest's TEST (tag_lat, ucp_put_bw, ...) over transports TLS on
# DEV; the server serves one client
ucx_srv() {
	# shellcheck disable=SC2046
	env $(ucx_env "$1" "$2") timeout 300 ucx_perftest -t "$3" "${@:4}"
}
ucx_cli() {
	# shellcheck disable=SC2046
	env $(ucx_env "$1" "$3") timeout 300 ucx_perftest "$2" -t "$4" "${@:5}"
}

# ucx_ck_srv DEV TLS, ucx_ck_cli DEV SERVER TLS: build/tests/ucxcheck over
# transports TLS on DEV, every byte of its tagged messages, PUTs and GETs
# checked (ucx_perftest's are not: it measures); the server serves one
# client, which tries to reach it for 60 s
ucx_ck_srv() {
	# shellcheck disable=SC2046
	env $(ucx_env "$1" "$2") timeout 300 build/tests/ucxcheck
}
ucx_ck_cli() {
	# shellcheck disable=SC2046
	env $(ucx_env "$1" "$3") timeout 300 build/tests/ucxcheck "$2"
}
# ucx_ck DEV TLS: both ends on DEV
ucx_ck() {
	srv_cli ucxcheck "ucx_ck_srv $*" "ucx_ck_cli $1 $A $2"
}

# ucx_ck_nonblock DEV TLS: ucx_ck with its region mapped
# UCP_MEM_MAP_NONBLOCK, which UCX registers as an ODP MR where the device
# has ODP: the ODP UCX 1.15 and later use on a verbs device (they dropped
# implicit ODP and UCX_IB_REG_METHODS).  True only if both ends' 4 MiB
# regions are ODP MRs (drv_kind odp in rdma res): each end lists the MRs
# once its region is mapped, before it uses it (a sampler beside the run,
# every 0.2 s, could miss regions that lived less long).
ucx_ck_nonblock() {
	local mrs=/tmp/ucx-nb.mrs rc pids
	rm -f $mrs.*
	# shellcheck disable=SC2016 # each end's shell expands its $$
	(export UCXCHECK_NONBLOCK=1 UCXCHECK_ON_MAP='rdma res show mr -dd >'$mrs'.$$'
	 ucx_ck "$@")
	rc=$?
	# -dd puts the driver's attributes on a line of their own
	pids=$(awk '/^dev / { if (l) print l; l = $0; next } { l = l " " $0 }
		END { if (l) print l }' $mrs.* |
		grep "mrlen 4194304 .*comm ucxcheck.*drv_kind odp" |
		grep -o "pid [0-9]*" | sort -u)
	echo "ODP MRs of 4 MiB seen: $(paste -sd ' ' <<<"$pids")"
	[ $rc = 0 ] && [ "$(grep -c pid <<<"$pids")" -ge 2 ]
}

# ucx_ck_odp DEV TLS: ucx_ck with UCX's implicit ODP registration
# (UCX_IB_REG_METHODS=odp); true only if the MRs of both ends included
# an implicit one (the whole address space: mrlen 2^64 - 1) as it ran
ucx_ck_odp() {
	local mrs=/tmp/ucx-odp.mrs sampler rc
	(while :; do rdma res show mr; sleep 0.2; done) >$mrs 2>&1 &
	sampler=$!
	(export UCX_IB_REG_METHODS=odp; ucx_ck "$@")
	rc=$?
	kill $sampler
	wait $sampler 2>/dev/null
	echo "implicit MRs seen: $(grep "mrlen 18446744073709551615 .*comm ucxcheck" $mrs |
		grep -o "pid [0-9]*" | sort -u | paste -sd ' ')"
	[ $rc = 0 ] &&
		[ "$(grep "mrlen 18446744073709551615 .*comm ucxcheck" $mrs |
			grep -o "pid [0-9]*" | sort -u | wc -l)" -ge 2 ]
}

# ucx_pt DEV TLS TEST [ARGS]: both ends on DEV (for bench/)
ucx_pt() {
	srv_cli ucx_perftest "ucx_srv $*" "ucx_cli $1 $A ${*:2}"
}

# ucx_figure: from the last ucx_pt, the "Final:" line's average latency
# (us) and average bandwidth (MB/s)
ucx_figure() {
	awk '$1 == "Final:" { print $4, $6; exit }' /tmp/ucx_perftest.log
}

NFS_EXPORT=/srv/nfs
NFS_MNT=/mnt/nfs

# nfs_server_up: nfsd exporting a tmpfs, listening for RDMA on port 20049
# beside TCP, with rpcbind and rpc.mountd (for NFSv3's mount protocol)
nfs_server_up() {
	modprobe rpcrdma && modprobe nfsd &&
		{ mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd; } &&
		mkdir -p $NFS_EXPORT $NFS_MNT &&
		{ mountpoint -q $NFS_EXPORT || mount -t tmpfs tmpfs $NFS_EXPORT; } &&
		{ pgrep -x rpcbind >/dev/null || rpcbind -w; } &&
		echo "$NFS_EXPORT *(rw,no_root_squash,insecure,fsid=0,no_subtree_check)" >/etc/exports &&
		exportfs -ra &&
		{ pgrep -x rpc.mountd >/dev/null || rpc.mountd; } &&
		rpc.nfsd 4 &&
		echo "rdma 20049" >/proc/fs/nfsd/portlist &&
		grep -qx "rdma 20049" /proc/fs/nfsd/portlist
}

nfs_server_down() {
	rpc.nfsd 0 && exportfs -ua
}

# nfs_mount VERS [SERVER]: mount the export of SERVER ($A) over RDMA with
# NFS version VERS.  NFSv3 mounts with nolock: its locks (NLM) would need
# rpc.statd on the client, which a host that is only a client does not
# run, and locking is not what these tests are about
nfs_mount() {
	local src=${2:-$A}:/ opts="vers=$1,proto=rdma,port=20049"
	[ "$1" = 3 ] && src=${2:-$A}:$NFS_EXPORT opts=$opts,nolock
	modprobe rpcrdma && mkdir -p $NFS_MNT &&
		mount -t nfs -o "$opts" "$src" $NFS_MNT &&
		grep " $NFS_MNT nfs" /proc/mounts | grep -q "proto=rdma"
}

# nfs_on DEV: while NFSv4.2 is mounted, the client's and the server's RC
# QPs are on DEV
nfs_on() {
	local r=0
	nfs_mount 4.2 || return 1
	[ "$(rdma res show qp link "$1"/1 | grep -c 'type RC')" -ge 2 ] ||
		{ rdma res show qp; r=1; }
	umount $NFS_MNT
	return $r
}

# nfs_roundtrip VERS [SERVER]: NFS_MIB (64) MiB of random bytes written through a
# mount of version VERS (the one there, or a new one), unmounted, mounted
# again and read back; the same bytes.  A caller whose server may not be
# up yet retries nfs_mount first, never this: a try must not hide a
# comparison that failed.
# Prints the write and read times in ms.
nfs_roundtrip() {
	local t0 t1 t2 f=/tmp/nfs-${NFS_MIB:-64}.data
	[ -f "$f" ] ||
		dd if=/dev/urandom of="$f" bs=1M count="${NFS_MIB:-64}" status=none
	mountpoint -q $NFS_MNT || nfs_mount "$@" || return 1
	rm -f $NFS_MNT/data
	t0=$(date +%s%N)
	cp "$f" $NFS_MNT/data && sync $NFS_MNT/data || return 1
	t1=$(date +%s%N)
	umount $NFS_MNT && nfs_mount "$@" || return 1
	t2=$(date +%s%N)
	cmp "$f" $NFS_MNT/data || return 1
	echo "nfs v$1: write $(((t1 - t0) / 1000000)) ms, read $((($(date +%s%N) - t2) / 1000000)) ms"
	umount $NFS_MNT
}

SRP_CFG=/sys/kernel/config/target
SRP_PORT=5000

# srp_target_up DEV: LIO's ib_srpt on DEV, listening through the RDMA CM
# on port $SRP_PORT, one 64 MiB file LUN for the initiator at $A
srp_target_up() {
	local g0 tpg disk=$SRP_CFG/core/fileio_0/srp0
	g0=$(cat "/sys/class/infiniband/$1/ports/1/gids/0")
	tpg=$SRP_CFG/srpt/${g0:20}/tpg_1
	modprobe ib_srpt && modprobe target_core_mod &&
		{ mountpoint -q /sys/kernel/config ||
			mount -t configfs none /sys/kernel/config; } &&
		mkdir -p $SRP_CFG/srpt &&
		echo $SRP_PORT >$SRP_CFG/srpt/discovery_auth/rdma_cm_port &&
		truncate -s 64M /tmp/srp.img &&
		mkdir -p $disk &&
		echo fd_dev_name=/tmp/srp.img,fd_dev_size=67108864 >$disk/control &&
		echo 1 >$disk/enable &&
		mkdir -p "$tpg/lun/lun_0" &&
		ln -s $disk "$tpg/lun/lun_0/disk" &&
		mkdir -p "$tpg/acls/$A/lun_0" &&
		ln -s "$tpg/lun/lun_0" "$tpg/acls/$A/lun_0/map" &&
		echo 1 >"$tpg/enable"
}

srp_target_down() {
	local t
	for t in "$SRP_CFG"/srpt/*/tpg_1; do
		[ -d "$t" ] || continue
		echo 0 >"$t/enable"
		rm -f "$t/acls/$A/lun_0/map" "$t/lun/lun_0/disk"
		rmdir "$t/acls/$A/lun_0" "$t/acls/$A" "$t/lun/lun_0" "$t" "${t%/tpg_1}"
	done
	rmdir $SRP_CFG/core/fileio_0/srp0 $SRP_CFG/core/fileio_0 2>/dev/null
	echo 0 >$SRP_CFG/srpt/discovery_auth/rdma_cm_port
	rmdir $SRP_CFG/srpt && modprobe -r ib_srpt
}

# srp_disk: the SCSI disk LIO exports, once the initiator found it
srp_disk() {
	grep -l "^LIO-ORG" /sys/block/sd*/device/vendor 2>/dev/null |
		head -n 1 | cut -d/ -f4
}

srp_has_disk() {
	[ -n "$(srp_disk)" ]
}

# srp_login DEV: ib_srp logs in to the target through the RDMA CM, and
# the LUN appears as a disk (sd_mod: no udev loads it here)
srp_login() {
	local guid
	guid=$(printf '%016x' "$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)")
	modprobe sd_mod && modprobe ib_srp &&
		echo "id_ext=$guid,ioc_guid=$guid,dest=$A:$SRP_PORT" \
			>"/sys/class/infiniband_srp/srp-$1-1/add_target" &&
		wait_for 30 srp_has_disk
}

# srp_roundtrip: 16 MiB written to the disk and read back, direct I/O;
# prints the times in ms
srp_roundtrip() {
	local d t0 t1
	d=/dev/$(srp_disk)
	[ -f /tmp/srp.data ] ||
		dd if=/dev/urandom of=/tmp/srp.data bs=1M count=16 status=none
	t0=$(date +%s%N)
	dd if=/tmp/srp.data of="$d" bs=1M oflag=direct status=none || return 1
	t1=$(date +%s%N)
	dd if="$d" of=/tmp/srp.back bs=1M count=16 iflag=direct status=none &&
		cmp /tmp/srp.data /tmp/srp.back || return 1
	echo "srp: write $(((t1 - t0) / 1000000)) ms, read $((($(date +%s%N) - t1) / 1000000)) ms"
}

# srp_logout: the initiator lets go of the target; the disk goes
srp_logout() {
	local p
	for p in /sys/class/srp_remote_ports/*/delete; do
		[ -e "$p" ] && echo 1 >"$p"
	done
	wait_for 30 eval '! srp_has_disk' && modprobe -r ib_srp
}
