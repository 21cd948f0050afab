#!/usr/bin/env bash
# What a kernel build on the other host CPUs does to the figures of a UML benchmark boot: the
# question to answer before make bench may build one kernel while it boots another.
#
# Boots the bench kernel ROUNDS times quiet and ROUNDS times with a kernel build running beside
# it, interleaved (quiet, loaded, quiet, ...), UML pinned to host CPU BENCH_CPU as make bench
# pins it, the build (a copy of the same um-bench build directory, cleaned and built again for
# as long as the boots last, niced) pinned to every other CPU this process may run on, and
# stopped (SIGSTOP) during the quiet boots.  Each boot loads the alf_queue and slab_bulk
# benchmark modules with the parameters below; then scripts/build_beside.py prints, per
# benchmark, how far the cells' medians moved with the build beside and how wide the runs'
# spread was each way (the interquartile range over the median, per cell).
#
# usage: build-beside.sh VERSION [ROUNDS]      (ROUNDS: 3 by default)
#   BENCH_CPU        the host CPU for UML (0)
#   ALF_QUEUE_ARGS   for rust_alf_queue_bench (bulk=1,2,3,4,8,16,32)
#   SLAB_BULK_ARGS   for rust_slab_bulk_bench (bulk=1,16,64 runs=9 stack_sweep=0)
# The boots' logs stay in $CACHE_DIR/run/beside-{quiet,loaded}-VERSION-N.log.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
use_kernel "${1:?usage: build-beside.sh VERSION [ROUNDS]}"
rounds=${2:-3}
cpu=${BENCH_CPU:-0}
alf_args=${ALF_QUEUE_ARGS:-bulk=1,2,3,4,8,16,32}
slab_args=${SLAB_BULK_ARGS:-bulk=1,16,64 runs=9 stack_sweep=0}
[[ $rounds =~ ^[1-9]$ ]] || die "ROUNDS: 1 to 9"
[ -x "$BUILD/um-bench/linux" ] || die "no um-bench kernel for $KVER: run make bench (or scripts/kernel.sh $KVER um-bench)"
others=$(allowed_cpus | grep -vx -- "$cpu" | paste -sd,)
[ -n "$others" ] || die "a build beside needs a host CPU besides $cpu"
jobs=$(($(tr -cd , <<<"$others" | wc -c) + 1))

runs=$CACHE_DIR/run
load_dir=$BUILD/beside-load
mkdir -p "$runs"
plan=$runs/beside-plan-$KVER.sh
cat >"$plan" <<EOF
load $G_BUILD/um-bench/samples/rust/rust_alf_queue_bench.ko $alf_args
unload rust_alf_queue_bench
load $G_BUILD/um-bench/samples/rust/rust_slab_bulk_bench.ko $slab_args
unload rust_slab_bulk_bench
EOF

# The load: the bench kernel's build again, from clean, over and over, in its own process group.
rm -rf "$load_dir" && cp -a "$BUILD/um-bench" "$load_dir"
mk="make -C $G_TREE O=$G_BUILD/beside-load ARCH=um LLVM=$LLVM -j$jobs"
setsid taskset -c "$others" nice -n 10 bash -c "
	. '$PROJECT/scripts/lib.sh'; use_kernel $KVER
	while :; do krun sh -c '$mk -s clean && $mk linux modules' >/dev/null 2>&1 || exit 1; done" &
load_pid=$!
# setsid makes the group once it runs: until then the group cannot be stopped.
until [ "$(ps -o pgid= -p "$load_pid" | tr -d ' ')" = "$load_pid" ]; do
	kill -0 "$load_pid" 2>/dev/null || die "the build beside did not start"
	sleep 0.1
done
stop_load() {
	# A TERM sent to a stopped group waits for its CONT.
	kill -TERM -- "-$load_pid" 2>/dev/null || true
	kill -CONT -- "-$load_pid" 2>/dev/null || true
	wait "$load_pid" 2>/dev/null || true
	rm -rf "$load_dir"
}
trap stop_load EXIT
kill -STOP -- "-$load_pid"
log "$KVER: $rounds quiet and $rounds loaded boots, UML on host CPU $cpu, the build on $others"

logs_quiet=() logs_loaded=()
for r in $(seq "$rounds"); do
	for how in quiet loaded; do
		logf=$runs/beside-$how-$KVER-$r.log
		[ "$how" = quiet ] || kill -CONT -- "-$load_pid"
		RFL_TASKSET="taskset -c $cpu" "$PROJECT/scripts/uml-run.sh" "$KVER" um-bench "$plan" "$logf"
		[ "$how" = quiet ] || kill -STOP -- "-$load_pid"
		kill -0 "$load_pid" 2>/dev/null || die "the build beside stopped (it failed: try scripts/kernel.sh $KVER um-bench)"
		log "$KVER: boot $r $how done"
		if [ "$how" = quiet ]; then logs_quiet+=("$logf"); else logs_loaded+=("$logf"); fi
	done
done
python3 "$PROJECT/scripts/build_beside.py" --quiet "${logs_quiet[@]}" --loaded "${logs_loaded[@]}"
