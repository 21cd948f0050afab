#!/usr/bin/env bash
# The patch series a maintainer applies: patches/<version>/ with the project's own files (the
# overlay that scripts/tree.sh copies in) added by the patches that introduce them.
#
#   scripts/series.sh write VERSION     a git repository of pristine linux-source-<version>
#                                       with one commit per patch (the patch, plus its files
#                                       from the table below), written out with
#                                       git format-patch --cover-letter; checkpatch.pl --strict
#                                       and get_maintainer.pl run on it
#   scripts/series.sh check VERSION     git am of that series onto a fresh pristine tree, and
#                                       the kernel (KIND=, default x86-smp; um-bench; none to
#                                       build nothing) built before the first patch and after
#                                       each one, with the time of each
#   scripts/series.sh identity VERSION  the tree check made against the overlay tree that
#                                       make test builds ($CACHE_DIR/linux-<version>, or
#                                       OVERLAY_TREE=): every file the same, and what only the
#                                       overlay has is not read by check's build
#
# Everything goes to $CACHE_DIR/series/<version>/: out/ (the series: 0000-cover-letter.patch,
# the patches, checkpatch.txt, get_maintainer.txt), repo/ (write's repository), check/ and
# build/ (check's tree and build), check-times.txt.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

usage="usage: $0 write|check|identity VERSION"
cmd=${1:-} ver=${2:-}
[ -n "$ver" ] || die "$usage"
[ -z "${KDIR:-}" ] || die "the series is made against the root's pristine linux-source; KDIR= is not for $0"
use_kernel "$ver"

# Which patch adds which of the project's files: a patch's file name without its number, then
# patterns (bash [[ == ]] patterns from the project's top: * matches /; V:pattern applies to
# kernel V only).  Every file of the overlay matches PROJECT_ONLY or exactly one patch's line
# (checked).  PROJECT_ONLY: the userspace harness, which the kernel build does not read.
SERIES_FILES=(
	"rust-add-kernel-slab_bulk-and-kernel-alf_queue rust/kernel/slab_bulk/* rust/alf_queue/*.rs rust/helpers/slab_bulk.c rust/helpers/preempt.c"
	"samples-rust-add-slab-bulk-and-alf_queue-samples samples/rust/bench_common.rs samples/rust/bench_placement.rs samples/rust/rust_slab_bulk_* samples/rust/rust_alf_queue_*"
	"rust-add-kernel-qmempool rust/kernel/qmempool/* rust/helpers/qmempool.c rust/helpers/bottom_half.c"
	"samples-rust-add-a-qmempool-benchmark samples/rust/rust_qmempool_bench.rs samples/rust/rust_qmempool_leak.rs samples/rust/rust_qmempool_bench_c.[ch] 7.3:samples/rust/rust_qmempool_bench_sheaf.c"
	"net-add-ixgbe_bulk_shim-bulk-free-of-completed-TX-sk drivers/net/ixgbe_bulk_shim/* include/net/ixgbe_bulk_shim.h"
	"samples-rust-add-a-benchmark-of-freeing-skbs samples/rust/rust_skb_free_bench*"
	"net-add-fwdnic-a-software-NIC-pair-for-forwarding-be drivers/net/fwdnic/*"
)
PROJECT_ONLY="rust/alf_queue/Cargo.toml rust/alf_queue/README.md rust/alf_queue/check.sh
	rust/alf_queue/loom_mutants.py rust/alf_queue/benches/* rust/alf_queue/micro/*
	rust/alf_queue/tests/* 6.12:samples/rust/rust_qmempool_bench_sheaf.c"

# matches FILE PATTERN...: FILE matches one of the patterns that apply to this kernel.
matches() {
	local f=$1 p
	shift
	for p in "$@"; do
		case $p in *:*) [ "${p%%:*}" = "$KVER" ] || continue; p=${p#*:} ;; esac
		# shellcheck disable=SC2053 # a pattern on purpose
		[[ $f == $p ]] && return 0
	done
	return 1
}

# spdx_python: Debian's python3 with the modules checkpatch's scripts/spdxcheck.py imports
# (installed on the host if missing, as toolchain.sh installs debootstrap).
spdx_python() {
	/usr/bin/python3 -c 'import ply, git' 2>/dev/null && return
	log "installing python3-ply and python3-git on the host, for checkpatch's SPDX check"
	apt-get install -y python3-ply python3-git >/dev/null ||
		die "apt-get install python3-ply python3-git failed: checkpatch could not check SPDX tags"
}

# owner FILE: the patch (name without number) that adds FILE, or "-" for a project-only file.
owner() {
	local line found="" -
	set -f # the patterns below are split but not expanded
	# shellcheck disable=SC2086 # the list of patterns, unquoted on purpose
	if matches "$1" $PROJECT_ONLY; then echo -; return; fi
	for line in "${SERIES_FILES[@]}"; do
		# shellcheck disable=SC2086
		if matches "$1" ${line#* }; then
			[ -z "$found" ] || die "$1 matches the lines of both $found and ${line%% *} in SERIES_FILES"
			found=${line%% *}
		fi
	done
	[ -n "$found" ] || die "$1: no patch adds it; add it to SERIES_FILES or PROJECT_ONLY in scripts/series.sh"
	echo "$found"
}

dir=$CACHE_DIR/series/$KVER g_dir=$G_CACHE/series/$KVER
out=$dir/out
tarball=$ROOT/usr/src/linux-source-$KVER.tar.xz
series=("$PROJECT/patches/$KVER"/*.patch)
# Who commits (and so signs the cover letter): the author of the series' first patch.
ident_name=$(sed -n '/^From: /{s/^From: //;s/ *<.*//;p;q}' "${series[0]}")
ident_email=$(sed -n '/^From: /,/^Date: /{s/.*<\(.*\)>.*/\1/p}' "${series[0]}" | head -1)
[ -n "$ident_email" ] || ident_email=series@localhost
git_() {
	local d=$1
	shift
	GIT_COMMITTER_NAME=$ident_name GIT_COMMITTER_EMAIL=$ident_email \
		git -C "$d" -c core.excludesFile=/dev/null -c user.name="$ident_name" \
		-c user.email="$ident_email" "$@"
}

# pristine DIR: linux-source-<version> as a git repository in DIR, tagged pristine.
pristine() {
	[ -f "$tarball" ] || die "no linux-source-$KVER in the toolchain root: run 'make toolchain'"
	rm -rf "$1" && mkdir -p "$1"
	tar -xJf "$tarball" -C "$1" --strip-components=1
	git_ "$1" init -q && git_ "$1" config gc.auto 0
	# Debian's source package ignores everything at the top level in its .gitignore.
	git_ "$1" add -A -f && git_ "$1" commit -q -m "linux-source-$KVER (pristine)"
	git_ "$1" tag pristine
}

# stamp: what the series is made of (the tarball, the patches, the overlay, this script).
stamp() {
	(sha256sum <"$tarball" | cut -c1-16; cat "${series[@]}" "$0"
		cd "$PROJECT" && overlay_files | sort | while read -r f; do echo "$f"; cat "$f"; done) |
		sha256sum | cut -c1-16
}

write() {
	local repo=$dir/repo p name slug n f files added line
	local -A owned=()
	while read -r f; do
		slug=$(owner "$f")
		[ "$slug" = - ] || owned[$slug]+="$f "
	done < <(overlay_files | sort)
	for line in "${SERIES_FILES[@]}"; do
		slug=${line%% *}
		[ -z "${owned[$slug]:-}" ] || compgen -G "$PROJECT/patches/$KVER/[0-9][0-9][0-9][0-9]-$slug.patch" >/dev/null ||
			die "SERIES_FILES: no patch patches/$KVER/NNNN-$slug.patch for ${owned[$slug]}"
	done
	log "$KVER: the pristine tree as a git repository ($repo)"
	pristine "$repo"
	for p in "${series[@]}"; do
		name=${p##*/} slug=${name#[0-9][0-9][0-9][0-9]-}
		slug=${slug%.patch}
		git_ "$repo" am -q "$p" || die "patches/$KVER/$name does not apply with git am"
		read -r -a files <<<"${owned[$slug]:-}"
		for f in "${files[@]}"; do
			mkdir -p "$(dirname "$repo/$f")"
			cp "$PROJECT/$f" "$repo/$f"
		done
		added=
		if [ ${#files[@]} -gt 0 ]; then
			git_ "$repo" add -f -- "${files[@]}"
			git_ "$repo" commit -q --amend --no-edit
			added=" + ${#files[@]} files of the project"
		fi
		log "$KVER: ${name%%-*} $(git_ "$repo" log -1 --format=%s)$added"
	done
	rm -rf "$out" && mkdir -p "$out"
	git_ "$repo" format-patch -q --cover-letter --no-signature -o "$out" pristine..
	cover "$repo"
	n=$(find "$out" -name '[0-9]*.patch' ! -name '0000-*' | wc -l)

	# checkpatch.pl --strict on each patch, run in the applied tree (as a maintainer would).
	# Its SPDX check runs scripts/spdxcheck.py with the python3 on PATH, which needs the ply and
	# git modules: Debian's python3 with them goes first.
	spdx_python
	local patches=()
	for p in "$out"/[0-9]*.patch; do case ${p##*/} in 0000-*) ;; *) patches+=("$p") ;; esac; done
	(cd "$repo" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict --show-types "${patches[@]}") \
		>"$out/checkpatch.txt" 2>&1 || true
	# get_maintainer.pl on each patch: whom to send it to.
	: >"$out/get_maintainer.txt"
	for p in "$out"/[0-9]*.patch; do
		case ${p##*/} in 0000-*) continue ;; esac
		{ echo "${p##*/}:"; (cd "$repo" && perl scripts/get_maintainer.pl --no-git-fallback "$p") | sed 's/^/  /'; echo; } >>"$out/get_maintainer.txt"
	done
	cc_cover "$repo"
	stamp >"$out/.stamp"
	echo "$KVER: $n patches and a cover letter in $out"
	grep -E '^(total|[^ ]+\.patch has)|^$' "$out/checkpatch.txt" | grep -v '^$' || true
	sed -n '/^[^ ]/p; /^  /p' "$out/get_maintainer.txt"
}

# cover REPO: the cover letter's subject and text, its figures from results/ (scripts/targets.py).
cover() {
	local c=("$out"/0000-*.patch) text version
	version=$(sed -n 's/^VERSION = //p; s/^PATCHLEVEL = //p; s/^SUBLEVEL = //p' "$1/Makefile" | paste -sd.)
	text=$(mktemp)
	{
		cat <<EOF
This series brings Jesper Dangaard Brouer's bulk-allocation work to Rust
for Linux: a typed kmem_cache with the bulk API (kernel::slab_bulk), the
array-based lock-free queue (kernel::alf_queue), a per-CPU object pool
built on both (kernel::qmempool), napi_consume_skb_bulk() and a Rust
batch that ixgbe's and igb's TX cleanup use to free completed skbs in
bulk, sample modules that benchmark each against its C counterpart, and
fwdnic, a software NIC pair for forwarding benchmarks. The first patches
make Rust modules load and run on UML, where the figures below are
measured.

It applies to $version (Debian's linux-source-$KVER) with git am.

The benchmark targets, from the project's latest results (UML, per
object or per packet, median ratios of paired runs):

EOF
		# targets.py's lines: "  VERSION WHERE STATE NAME: DETAIL", one per target.
		python3 "$PROJECT/scripts/targets.py" "$PROJECT/results" | python3 -c '
import re, sys, textwrap
for line in sys.stdin:
    m = re.match(r"  (\S+) +(\S+) +(met|MISSED|n/a) +(.*)", line)
    if m and m[1] == sys.argv[1]:
        item = f"{m[3].lower()} ({m[2]}): {m[4]}"
        print(textwrap.fill(item, 72, initial_indent=" - ", subsequent_indent="   "))
' "$KVER"
	} >"$text"
	python3 - "${c[0]}" "$text" <<'EOF'
import sys
path, text = sys.argv[1], open(sys.argv[2]).read().rstrip("\n")
s = open(path).read()
s = s.replace("*** SUBJECT HERE ***",
              "rust: bulk slab allocation, alf_queue, qmempool and bulk free of TX skbs")
s = s.replace("*** BLURB HERE ***", text)
open(path, "w").write(s)
EOF
	rm -f "$text"
}

# cc_cover REPO: Cc: lines for every address get_maintainer.pl gave for any patch, in the
# cover letter's header.
cc_cover() {
	local c=("$out"/0000-*.patch) cc
	cc=$(sed -n 's/^  \(.*<[^>]*>\).*/\1/p; s/^  \([^ <]*@[^ ]*\).*/\1/p' "$out/get_maintainer.txt" | sort -u |
		sed 's/^/Cc: /')
	[ -n "$cc" ] || return 0
	awk -v cc="$cc" '!done && /^$/ { print cc; done = 1 } { print }' "${c[0]}" >"${c[0]}.tmp"
	mv "${c[0]}.tmp" "${c[0]}"
}

# configure: merge the kind's fragments into check's .config (kept across patches, so that an
# option a later patch adds is set when its Kconfig arrives).
configure() {
	krun sh -c "cd $g_dir/check && scripts/kconfig/merge_config.sh -m -O $g_dir/build $g_dir/build/.config \
		$(printf "$G_PROJECT/%s " "${fragments[@]}") >/dev/null && $mk -s olddefconfig >/dev/null"
}

# build LABEL: build the kernel, log its time.
build() {
	local t0 t
	t0=$(date +%s)
	configure
	krun sh -c "$mk $targets" >"$dir/build.log" 2>&1 ||
		{ grep -E 'error|Error' -A5 "$dir/build.log" | head -60; die "$KVER: the build fails after $1 (log: $dir/build.log)"; }
	t=$(($(date +%s) - t0))
	printf '%5d s  %s\n' "$t" "$1" | tee -a "$dir/check-times.txt"
}

check() {
	local p patches=() kind=${KIND:-x86-smp} t0 missing
	if [ "$(cat "$out/.stamp" 2>/dev/null)" != "$(stamp)" ]; then
		log "$KVER: $out is missing or older than the project: writing the series first"
		write >/dev/null
	fi
	for p in "$out"/[0-9]*.patch; do case ${p##*/} in 0000-*) ;; *) patches+=("$p") ;; esac; done
	case $kind in
	x86-smp) arch=x86_64 base=tinyconfig targets="bzImage modules" ;;
	um-bench) arch=um base=defconfig targets="linux modules" ;;
	none) ;;
	*) die "KIND=$kind: check builds x86-smp or um-bench, or nothing (none)" ;;
	esac
	t0=$(date +%s)
	log "$KVER: git am of ${#patches[@]} patches onto a pristine tree, building $kind after each"
	pristine "$dir/check"
	rm -rf "$dir/build"
	: >"$dir/check-times.txt"
	if [ "$kind" = none ]; then
		for p in "${patches[@]}"; do
			git_ "$dir/check" am -q "$p" || die "${p##*/} does not apply with git am"
		done
		echo "$KVER: the series applies with git am (nothing built: KIND=none)"
		return
	fi
	fragments=("configs/$kind.config")
	[ ! -f "$PROJECT/configs/$KVER/$kind.config" ] || fragments+=("configs/$KVER/$kind.config")
	mk="make -C $g_dir/check O=$g_dir/build ARCH=$arch LLVM=$LLVM -j${JOBS:-$(nproc)}"
	mkdir -p "$dir/build"
	krun sh -c "$mk -s $base >/dev/null"
	build "pristine (cold)"
	for p in "${patches[@]}"; do
		git_ "$dir/check" am -q "$p" || die "${p##*/} does not apply with git am"
		build "${p##*/}"
	done
	# As scripts/kernel.sh: every option of the fragments took, so the build covered it all.
	missing=$(missing_options "$dir/build/.config" "${fragments[@]}")
	[ -z "$missing" ] || die "$KVER $kind: options not set after the last patch:
$missing"
	echo "$KVER: the series applies with git am and $kind builds after each of its" \
		"${#patches[@]} patches, in $(($(date +%s) - t0)) s ($dir/check-times.txt)"
}

identity() {
	local repo=$dir/check only_tree only_series differ used="" f pats=() TREE=${OVERLAY_TREE:-$TREE}
	[ -d "$repo/.git" ] || die "no $repo: run $0 check $KVER first"
	[ -d "$TREE" ] || die "no overlay tree $TREE: run scripts/tree.sh $KVER"
	local n applied
	n=$(find "$out" -name '[0-9]*.patch' ! -name '0000-*' | wc -l)
	applied=$(git_ "$repo" rev-list --count pristine..HEAD)
	[ "$applied" = "$n" ] || die "$repo has $applied of the $n patches of $out: run $0 check $KVER"
	# A shared lock on the tree, as scripts/kernel.sh takes: scripts/tree.sh cannot change it.
	exec 9>"$(dirname "$TREE")/.tree-$KVER.lock"
	flock -s 9
	# Python's bytecode caches (__pycache__/, written into the overlay tree when make test runs
	# kunit.py there) are not the tree's content, nor are scripts/tree.sh's bookkeeping files,
	# .project-* at the top of the tree.
	list() { (cd "$1" && find . -path ./.git -prune -o -name __pycache__ -prune -o ! -type d -print |
		sed 's|^\./||' | grep -vxE '\.project-[a-z]+' | sort); }
	only_tree=$(comm -23 <(list "$TREE") <(list "$repo"))
	only_series=$(comm -13 <(list "$TREE") <(list "$repo"))
	differ=$(diff -rq --no-dereference -x .git -x '.project-*' -x __pycache__ \
		"$TREE" "$repo" | grep -v '^Only in ' || true)
	[ -z "$only_series" ] || die "$KVER: only the series has:
$only_series"
	[ -z "$differ" ] || die "$KVER: the series and the overlay tree differ:
$differ"
	while read -r f; do
		[ -n "$f" ] || continue
		# shellcheck disable=SC2086 # the list of patterns, unquoted on purpose
		(set -f && matches "$f" $PROJECT_ONLY) || die "$KVER: only the overlay tree has $f, which is not in PROJECT_ONLY"
		pats+=("$f")
	done <<<"$only_tree"
	local read="not checked: no build of check's (KIND=none)"
	if [ -d "$dir/build" ]; then
		[ ${#pats[@]} -eq 0 ] ||
			used=$(find "$dir/build" -name '*.cmd' -print0 | xargs -0 grep -lF "$(printf '%s\n' "${pats[@]}")" || true)
		[ -z "$used" ] || die "$KVER: the build reads files the series lacks (in $used)"
		read="in no dependency list of check's build"
	fi
	echo "$KVER: the series applied in full is byte-identical to the overlay tree $TREE," \
		"but for ${#pats[@]} files of the project's userspace harness ($read)"
}

# In braces, so that bash has read all of it before running it: an edit of this file does not
# reach a run under way.
{
	case $cmd in
	write) write ;;
	check) check ;;
	identity) identity ;;
	*) die "$usage" ;;
	esac
	exit
}
