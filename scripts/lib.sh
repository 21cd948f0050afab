# Shared settings and helpers for the project's scripts.  Sourced, not run: its variables are
# for the scripts that source it.
# shellcheck shell=bash disable=SC2034

set -euo pipefail

PROJECT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Everything large lives outside the checkout so that warm runs reuse it and
# a fresh clone stays small.  Override with CACHE_DIR=...
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rfl-bulk}
ROOT=$CACHE_DIR/root                 # Debian 13 toolchain root

# Pinned Debian 13 (trixie) packages: the toolchain is defined by this list.
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SUITE=trixie
# shellcheck source=scripts/pins.sh
. "$PROJECT/scripts/pins.sh"

# The kernels the project builds: each linux-source-<version> that scripts/pins.sh pins, with
# its patch series patches/<version>/ (docs/kernels.md, "Adding a kernel version").  KERNELS=
# selects some of them (make test KERNELS=7.3).
ALL_KERNELS=$(printf '%s\n' "${ROOT_PACKAGES[@]}" | sed -n 's/^linux-source-\([0-9.]*\)=.*/\1/p' |
	sort -V | paste -sd' ')
KERNELS=${KERNELS:-$ALL_KERNELS}

# host_cpu_id: the host CPU, precisely enough to tell hosts apart: vendor, family, model,
# stepping, microcode, the model name, and the flags that change how the measured code runs
# (vector width, the string instructions memcpy and memset use, a hypervisor underneath).
host_cpu_id() {
	local f=/proc/cpuinfo flags=
	field() { grep -m1 "^$1[[:space:]]*:" "$f" | cut -d: -f2- | sed 's/^ *//'; }
	for x in avx2 avx512f avx512vl avx512_vp2intersect erms fsrm fzrm fsrs hypervisor; do
		grep -m1 '^flags' "$f" | grep -qw "$x" && flags="$flags $x"
	done
	echo "$(field vendor_id) family $(field 'cpu family') model $(field model) stepping" \
		"$(field stepping) microcode $(field microcode), '$(field 'model name')', flags:${flags:- none}"
}

# allowed_cpus: the host CPUs this process may run on, one a line.
allowed_cpus() {
	taskset -pc $$ | sed 's/.*: //; s/,/ /g' | tr ' ' '\n' |
		awk -F- '{ if (NF == 2) for (i = $1; i <= $2; i++) print i; else print $1 }'
}

# missing_options CONFIG FRAGMENT...: the lines of the fragments (paths from the project's top)
# that CONFIG does not have as asked (an option set to n must be absent): a dropped option is a
# broken dependency, which would silently test or measure the wrong kernel.  Where fragments
# set an option twice, the later one counts, as for merge_config.sh.
missing_options() {
	local config=$1
	shift
	(cd "$PROJECT" && cat "$@") | grep -E '^CONFIG_' |
		awk -F= '!($1 in v) { k[++n] = $1 } { v[$1] = $0 } END { for (i = 1; i <= n; i++) print v[k[i]] }' |
		while read -r line; do
			opt=${line%%=*} val=${line#*=}
			if [ "$val" = n ]; then
				grep -qE "^$opt=" "$config" && echo "$line"
			else
				grep -qxF "$line" "$config" || echo "$line"
			fi
		done || true
}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# in_root CMD...: run CMD inside the toolchain root (under $RFL_TASKSET, e.g. "taskset -c 0",
# when that is set).  The mounts (proc, a few
# device nodes, /dev/shm for UML's memory file, the checkout and the cache)
# are made in a private mount namespace and vanish when CMD exits, so the
# root never holds host mounts that an rm -rf could walk into.
in_root() {
	[ -f "$ROOT/.complete" ] || die "no toolchain root at $ROOT: run 'make toolchain'"
	unshare --mount --propagation private -- /bin/bash -c '
		set -e
		r=$1; shift; proj=$1; shift; cache=$1; shift
		mount -t proc proc "$r/proc"
		for d in null zero full random urandom tty; do
			[ -e "$r/dev/$d" ] || touch "$r/dev/$d"
			mount --bind "/dev/$d" "$r/dev/$d"
		done
		mkdir -p "$r/dev/shm" "$r/project" "$r/cache"
		mount -t tmpfs -o size=8g shm "$r/dev/shm"
		mount --bind "$proj" "$r/project"
		mount --bind "$cache" "$r/cache"
		exec ${RFL_TASKSET:-} chroot "$r" /usr/bin/env -i HOME=/root TERM=dumb \
			PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
			LANG=C.UTF-8 TMPDIR=/dev/shm "$@"
	' in_root "$ROOT" "$PROJECT" "$CACHE_DIR" "$@"
}

# The project's directories that belong at the same paths in the kernel tree: scripts/tree.sh
# copies them in, scripts/series.sh puts their files into the patches that add them.  Each holds
# only the project's own files (rust/helpers/ the C helpers the project adds, include/net/ the
# shim's header), never a copy of a file the kernel has.
OVERLAY_DIRS=(rust/kernel/slab_bulk rust/kernel/qmempool rust/alf_queue rust/helpers include/net
	drivers/net/ixgbe_bulk_shim drivers/net/fwdnic samples/rust)

# overlay_files: the files of OVERLAY_DIRS (paths from the project's top, one a line), without
# Cargo's build outputs and lock files or Python's bytecode (the alf_queue scripts leave some).
overlay_files() {
	local d
	for d in "${OVERLAY_DIRS[@]}"; do
		[ -d "$PROJECT/$d" ] || continue
		(cd "$PROJECT" && find "$d" -type f ! -path '*/target/*' ! -path '*/__pycache__/*' ! -name Cargo.lock)
	done
}

# Where the kernel work happens.  By default in the toolchain root, where the checkout is
# /project and the cache /cache.  With KDIR=<a Rust-enabled 6.12 or 7.3 tree>, on the host with
# the user's own toolchain (LLVM= as for the kernel's make): no root is provisioned, the
# project's series is applied to KDIR, and the builds go to $CACHE_DIR/build.
LLVM=${LLVM:-1}
if [ -n "${KDIR:-}" ]; then
	KDIR=$(cd "$KDIR" && pwd)
	# KDIR is one kernel: its version picks the series.
	KERNELS=$(sed -n 's/^VERSION = //p; s/^PATCHLEVEL = //p' "$KDIR/Makefile" | paste -sd.)
	G_PROJECT=$PROJECT G_CACHE=$CACHE_DIR
	# shellcheck disable=SC2086 # RFL_TASKSET: a command and its arguments, or nothing
	krun() { env TMPDIR="${TMPDIR:-/tmp}" ${RFL_TASKSET:-} "$@"; }
else
	G_PROJECT=/project G_CACHE=/cache
	krun() { in_root "$@"; }
fi

# series_diffs PATCH...: what the patches change, each from its first "diff --git" line on,
# without the commit message: a tree and a kernel's config depend on this alone, so that a
# reworded message does not throw away every build.
series_diffs() {
	local p
	for p; do sed -n '/^diff --git /,$p' "$p"; done
}

# series_paths PATCH...: the files the patches touch (both names of a rename), one a line.
series_paths() {
	sed -n 's|^diff --git a/\([^ ]*\) b/\([^ ]*\)$|\1\n\2|p' "$@" | sort -u
}

# use_kernel VERSION: point TREE and BUILD (host paths) and G_TREE and G_BUILD (the same, as
# the commands run by krun see them) at that kernel's tree and build directories.
use_kernel() {
	KVER=$1
	[ -d "$PROJECT/patches/$KVER" ] || die "kernel '$KVER': no patch series patches/$KVER (known: $ALL_KERNELS)"
	BUILD=$CACHE_DIR/build/$KVER G_BUILD=$G_CACHE/build/$KVER
	if [ -n "${KDIR:-}" ]; then
		TREE=$KDIR G_TREE=$KDIR
	else
		TREE=$CACHE_DIR/linux-$KVER G_TREE=$G_CACHE/linux-$KVER
	fi
}
