#!/usr/bin/env bash
# Build one of the project's kernels, in $CACHE_DIR/build/<version>/<kind>, from the tree
# that scripts/tree.sh made.  The config is configs/<kind>.config, then
# configs/<version>/<kind>.config where that exists (what only one kernel has).  Kinds:
#   um-test   UML, configs/kunit.config, through kunit.py (KUnit, doctests, KASAN, kmemleak,
#             lockdep, failslab): the kernel `make test` runs.
#   um-bench  UML defconfig + configs/um-bench.config (-O2, no debug options): every figure.
#   um-bench-smp  um-bench + configs/um-bench-smp.config (2 CPUs; kernels whose UML has SMP).
#   um-stats, um-stats-smp  um-bench and um-bench-smp + configs/um-stats.config (SLUB's event
#             counters, for the forwarding benchmark's slab counts; never timed).
#   um-bench-noinline  um-bench + configs/um-noinline.config: Rust's calls into the kernel's C
#             helpers out of line, for make bench's comparison where um-bench inlines them
#             (CONFIG_RUST_INLINE_HELPERS, docs/kernels.md).
#             These three start their first build from a copy of the kernel they extend, so
#             that only what their options touch is compiled again.
#   x86-smp   x86_64 tinyconfig + configs/x86-smp.config: bzImage and modules for QEMU.
# The .config is regenerated only when its inputs change, so a changed .rs file rebuilds
# incrementally.
# usage: kernel.sh VERSION KIND
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
use_kernel "${1:?usage: kernel.sh VERSION um-test|um-bench|um-bench-smp|um-stats|um-stats-smp|um-bench-noinline|x86-smp}"
kind=${2:?usage: kernel.sh VERSION um-test|um-bench|um-bench-smp|um-stats|um-stats-smp|um-bench-noinline|x86-smp}
out=$G_BUILD/$kind
mkdir -p "$BUILD/$kind"
# A shared lock on the tree: scripts/tree.sh (exclusive) cannot change it under a build.
exec 9>"$CACHE_DIR/.tree-$KVER.lock"
flock -s 9
jobs=$(nproc)

case $kind in
um-test) fragment=configs/kunit.config ;;
um-bench | um-bench-smp | um-stats | um-stats-smp | um-bench-noinline) arch=um base=defconfig fragment=configs/um-bench.config targets="linux modules" ;;
x86-smp) arch=x86_64 base=tinyconfig fragment=configs/x86-smp.config targets="bzImage modules" ;;
*) die "unknown kernel kind '$kind'" ;;
esac
fragments=("$fragment")
# What only this kernel version has comes next, so that a kind's own fragment below overrides it.
[ ! -f "$PROJECT/configs/$KVER/${fragment#configs/}" ] || fragments+=("configs/$KVER/${fragment#configs/}")
case $kind in *-smp) [ "$kind" = x86-smp ] || fragments+=(configs/um-bench-smp.config) ;; esac
case $kind in um-stats*) fragments+=(configs/um-stats.config) ;; esac
case $kind in um-bench-noinline) fragments+=(configs/um-noinline.config) ;; esac
# A kernel that extends another starts its first build from a copy of it (same tree, same
# compiler).
case $kind in
um-stats*) seed=${kind/um-stats/um-bench} ;;
um-bench-noinline) seed=um-bench ;;
*) seed=$kind ;;
esac
if [ "$seed" != "$kind" ] && [ ! -f "$BUILD/$kind/.config" ] && [ -f "$BUILD/$seed/.config" ]; then
	log "$KVER $kind: starting from a copy of $seed"
	cp -a "$BUILD/$seed/." "$BUILD/$kind/"
	rm -f "$BUILD/$kind/.config-stamp"
fi

if [ "$kind" = um-test ]; then
	krun sh -c "cd $G_TREE && python3 tools/testing/kunit/kunit.py build \
		--arch=um --build_dir=$out --jobs $jobs --make_options LLVM=$LLVM \
		$(printf -- "--kunitconfig $G_PROJECT/%s " "${fragments[@]}")" >"$BUILD/$kind/build.log" 2>&1 ||
		{ grep -E 'error|Error|ERROR' -A5 "$BUILD/$kind/build.log" | head -60; die "$KVER um-test: build failed (log: $BUILD/$kind/build.log)"; }
	log "$KVER $kind: built"
	exit 0
fi

mk="make -C $G_TREE O=$out ARCH=$arch LLVM=$LLVM -j$jobs"
stamp=$( (cd "$PROJECT" && cat "${fragments[@]}" && series_diffs "patches/$KVER"/*.patch) | sha256sum | cut -c1-16)
if [ "$(cat "$BUILD/$kind/.config-stamp" 2>/dev/null)" != "$stamp" ] || [ ! -f "$BUILD/$kind/.config" ]; then
	log "$KVER $kind: configuring ($base + ${fragments[*]})"
	krun sh -c "$mk -s $base >/dev/null &&
		cd $G_TREE && scripts/kconfig/merge_config.sh -m -O $out $out/.config \
			$(printf "$G_PROJECT/%s " "${fragments[@]}") >/dev/null &&
		$mk -s olddefconfig >/dev/null"
	missing=$(missing_options "$BUILD/$kind/.config" "${fragments[@]}")
	[ -z "$missing" ] || die "$KVER $kind: options not set as asked (dependencies?):
$missing"
	echo "$stamp" >"$BUILD/$kind/.config-stamp"
fi
log "$KVER $kind: building $targets"
krun sh -c "$mk $targets" >"$BUILD/$kind/build.log" 2>&1 ||
	{ grep -E 'error|Error' -A5 "$BUILD/$kind/build.log" | head -60; die "$KVER $kind: build failed (log: $BUILD/$kind/build.log)"; }
log "$KVER $kind: built"
