#!/usr/bin/env bash
# make bench: provision, build the bench kernels of every kernel of KERNELS (6.12 and 7.3 by
# default; where UML has SMP, also um-bench-smp), boot them with the benchmark sample modules,
# collect what they print into results/<bench>-<where>-<version>.{json,md,png}, print the
# markdown tables, and compare the kernels (results/slab_bulk-kernels.md).  Nothing in
# results/ is replaced unless every run loaded its modules and produced a complete, timeable
# table.
#
# Its parameters, all checked before anything is provisioned, built or booted: a value refused
# fails make bench at once, with nothing built, booted or written to results/, and what it
# prints first is the refusal, for a module's parameter in the module's own words, with what the
# parameter takes (scripts/bench-params.sh).  The modules' parameters are set at run time,
# without a rebuild; their names, bounds and defaults are each module's bench::module_params!
# block (samples/rust/), and a name the module does not have is refused too:
#   SLAB_BULK_ARGS       for rust_slab_bulk_bench in UML  (e.g. "bulk=1,8,16 runs=9")
#   SLAB_BULK_QEMU_ARGS  the same in QEMU (TCG is ~10x slower: fewer objects, no stack sweep)
#   ALF_QUEUE_ARGS       for rust_alf_queue_bench in UML  (e.g. "bulk=8,16 elems=1000000 runs=21")
#   ALF_QUEUE_QEMU_ARGS  the same in QEMU
#   QMEMPOOL_ARGS        for rust_qmempool_bench in UML  (e.g. "outstanding=1,256 runs=11")
#   SKB_FREE_ARGS        for rust_skb_free_bench in UML  (e.g. "bulk=1,32,256 runs=11")
# and make bench's own:
#   KERNELS              the kernels to benchmark ("6.12 7.3"; each must have patches/<version>)
#   BENCH_WHERE          "uml" (default), "qemu" or "uml qemu": QEMU's x86-smp is the test
#                        kernel (KASAN) under TCG, for the shape of the figures only
#   BENCH_CPU            the host CPU UML is pinned to, one this process may run on; "auto"
#                        (default) probes each
#   BENCH_BOOTS          boots of each UML benchmark kernel (3; 1-9): where a boot's
#                        allocations land moves some cells more than their targets' margins,
#                        so medians are taken over the runs of every boot
#   FWD_PACKETS          frames per free path and repetition of the forwarding benchmark
#                        (8000000; 1000000-100000000), shared among the cells of a boot: a
#                        sixth to each tx_coalesce x min_partial cell on one CPU, a third to
#                        each condition of the two-CPU kernel (fwd_kernel below)
#   FWD_ROUNDS           twice the interleaved bursts of each cell (16; 1-64; FWD_PACKETS /
#                        FWD_ROUNDS at least 100000)
#   FWD_RUNS             its repetitions per condition (5; 3-99)
#   FWD_STATS_RUNS       its repetitions in the boots that count slab events (2; 1-99)
#   BENCH_FWD            1 (default) runs the forwarding benchmark, 0 leaves it out, "only"
#                        runs nothing else (the kernels' comparison is then left out, and
#                        results/ gets the forwarding tables only)
#   BENCH_NOINLINE       1 boots, where um-bench inlines Rust's C helpers
#                        (CONFIG_RUST_INLINE_HELPERS, 7.3), a second kernel without them
#                        (um-bench-noinline) with the slab_bulk, qmempool and skb_free modules,
#                        into results/<bench>-uml-noinline-<version>, and a forwarding boot of
#                        it (the "noinline" rows of results/fwd-uml-<version>): what the
#                        option changes, in one run; 0 (default) leaves it out
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=bench-params.sh
. "$PROJECT/scripts/bench-params.sh"

FWD_PACKETS=${FWD_PACKETS:-8000000}
FWD_ROUNDS=${FWD_ROUNDS:-16}
FWD_RUNS=${FWD_RUNS:-5}
FWD_STATS_RUNS=${FWD_STATS_RUNS:-2}
BENCH_FWD=${BENCH_FWD:-1}
BENCH_BOOTS=${BENCH_BOOTS:-3}
BENCH_NOINLINE=${BENCH_NOINLINE:-0}
SLAB_BULK_ARGS=${SLAB_BULK_ARGS:-}
SLAB_BULK_QEMU_ARGS=${SLAB_BULK_QEMU_ARGS:-objs=65536 runs=5 stack_sweep=0}
ALF_QUEUE_ARGS=${ALF_QUEUE_ARGS:-}
ALF_QUEUE_QEMU_ARGS=${ALF_QUEUE_QEMU_ARGS:-elems=262144 runs=5}
QMEMPOOL_ARGS=${QMEMPOOL_ARGS:-}
SKB_FREE_ARGS=${SKB_FREE_ARGS:-}
BENCH_WHERE=${BENCH_WHERE:-uml}
BENCH_CPU=${BENCH_CPU:-auto}

### Every parameter, before anything else.  What is refused goes to `refused`; the modules'
### own refusals are printed as they are found, so they come first.
refused=()
for va in $BENCH_ARGS_VARS; do
	var=${va%%:*} m=${va#*:}
	# The value goes into the guest's plan as one line: a line break would start a command of
	# its own there, which no check below would see.
	if [[ ${!var} == *$'\n'* || ${!var} == *$'\r'* ]]; then
		refused+=("$var: a line break; the parameters go on one line")
		continue
	fi
	# The words insmod gets (split as the guest's shell splits the plan's line, unglobbed).
	read -ra words <<<"${!var}"
	rc=0
	check_module_args "$m" ${words[@]+"${words[@]}"} || rc=$?
	[ "$rc" != 2 ] || die "cannot read $m's parameters (above)"
	[ "$rc" = 0 ] || refused+=("$var=\"${!var}\": refused by $m, in its words above")
done
# check_range NAME MIN MAX: NAME's value must be an integer from MIN to MAX.
check_range() {
	local v=${!1}
	if ! [[ $v =~ ^[0-9]+$ ]] || ! param_in "$v" "$2" "$3"; then
		refused+=("$1=$v: an integer from $2 to $3")
		return 1
	fi
}
check_range BENCH_BOOTS 1 9 || true
if check_range FWD_PACKETS 1000000 100000000 && check_range FWD_ROUNDS 1 64; then
	[ $((FWD_PACKETS / FWD_ROUNDS)) -ge 100000 ] || refused+=(
		"FWD_PACKETS=$FWD_PACKETS in FWD_ROUNDS=$FWD_ROUNDS bursts: under 100000 frames a burst")
fi
check_range FWD_RUNS 3 99 || true
check_range FWD_STATS_RUNS 1 99 || true
check_range BENCH_NOINLINE 0 1 || true
[ "$BENCH_FWD" = only ] || check_range BENCH_FWD 0 1 || refused[-1]+=', or only'
for k in $KERNELS; do
	[ -d "$PROJECT/patches/$k" ] ||
		refused+=("KERNELS: '$k' has no patch series patches/$k (known: $ALL_KERNELS)")
done
[ -n "${KERNELS// /}" ] || refused+=("KERNELS is empty (known: $ALL_KERNELS)")
for where in $BENCH_WHERE; do
	case $where in
	uml | qemu) ;;
	*) refused+=("BENCH_WHERE: '$where' is neither uml nor qemu") ;;
	esac
done
[ -n "${BENCH_WHERE// /}" ] || refused+=("BENCH_WHERE is empty: uml, qemu or \"uml qemu\"")
if [ "$BENCH_CPU" != auto ] && ! allowed_cpus | grep -qx -- "$BENCH_CPU"; then
	cpus=$(allowed_cpus | paste -sd,)
	refused+=("BENCH_CPU=$BENCH_CPU: auto or a CPU this process may run on ($cpus)")
fi
if [ ${#refused[@]} -gt 0 ]; then
	printf 'error: %s\n' "${refused[@]}" >&2
	die "make bench refused its parameters: nothing was built or booted"
fi

runs=$CACHE_DIR/run
# Tables are written here first and moved into results/ once every run succeeded.
stage=$runs/results
rm -rf "$stage" && mkdir -p "$stage" "$PROJECT/results"

### Progress.  Each phase (provisioning, a tree, a kernel build, a boot) says when it starts what
### it is and how long it took the last time make bench ran it on this cache, where that is
### known, and when it ends how long it took; the times are kept in $timings, one
### "KEY SECONDS" line per phase.  A build is keyed cold or incremental by whether its build
### directory has a .config, a boot by its kernel and its sizes.
###
### The whole run is timed too: a run that finishes keeps, in $progress, how long it took and
### when each of its phases started, under its parameters (the kernels, what it runs, the boots).
### A later run with the same parameters prints at the start of each phase that the last one
### had how long left from there, the closest thing to an estimate of the rest that is known
### (a phase that was incremental then may be cold now, or the reverse).
timings=$CACHE_DIR/bench-timings
progress=$CACHE_DIR/bench-progress
touch "$timings"
t_start=$SECONDS
run_key="$KERNELS|$BENCH_WHERE|fwd=$BENCH_FWD|boots=$BENCH_BOOTS|noinline=$BENCH_NOINLINE"
# The phases of this run so far, "OFFSET<TAB>KEY#N" (N: the how-many-th run of KEY), for $progress.
started=$runs/progress.now
: >"$started"
declare -A seen=()
# took SECONDS: "N min S s".
took() { printf '%d min %d s' $(($1 / 60)) $(($1 % 60)); }
# left KEY: how long the last finished run with these parameters took from the start of KEY's
# phase to its end, if it had such a phase.
left() {
	[ -f "$progress" ] || return 0
	awk -F'\t' -v r="$run_key" -v k="$1" '
		NR == 1 { if ($1 != r) exit; total = $2; next }
		$2 == k { print total - $1; exit }' "$progress"
}
# phase KEY WHAT CMD...: run CMD as the phase WHAT, timed under KEY.
phase() {
	local key=$1 what=$2 last rest t0=$SECONDS
	shift 2
	last=$(awk -v k="$key" '{ t = $NF; $NF = "" } $0 == k " " { s = t } END { print s }' "$timings")
	seen[$key]=$((${seen[$key]:-0} + 1))
	printf '%s\t%s\n' $((SECONDS - t_start)) "$key#${seen[$key]}" >>"$started"
	rest=$(left "$key#${seen[$key]}")
	log "$what: starting${last:+ (about $(took "$last") the last time)}${rest:+; the last run with these parameters had $(took "$rest") left from here}"
	"$@" || return
	log "$what: done in $(took $((SECONDS - t0)))"
	{ grep -vF -x -e "$key $last" "$timings"; echo "$key $((SECONDS - t0))"; } >"$timings.tmp" &&
		mv "$timings.tmp" "$timings"
}
# build_kernel KIND: scripts/kernel.sh for this kernel, as a phase.
build_kernel() {
	local how=incremental
	[ -f "$BUILD/$1/.config" ] || how=cold
	phase "build $how $KVER $1" "$KVER: kernel $1 ($how build)" "$PROJECT/scripts/kernel.sh" "$KVER" "$1"
}
# What an interrupted or failed run kept: results/ is written only at the very end.
finished=0
report_exit() {
	local staged
	[ "$finished" = 0 ] || return 0
	staged=$(find "$stage" -mindepth 1 -printf '%f ' 2>/dev/null)
	log "make bench stopped after $(took $((SECONDS - t_start))), before its end: results/ is unchanged"
	log "kept: the toolchain root, trees and kernels in $CACHE_DIR, the boot logs in $runs${staged:+,
    and the tables finished so far in $stage: $staged}"
}
trap report_exit EXIT

if [ -z "${KDIR:-}" ]; then
	phase toolchain "toolchain root" "$PROJECT/scripts/toolchain.sh"
fi

host_cpu=$(host_cpu_id)
# collect WHERE KIND CPU LOGS MODULE...: the tables of the boots whose logs are LOGS (one
# word, the paths separated by spaces); fails when a module did not load or ran short in one.
collect() {
	local where=$1 kind=$2 cpu=$3 logs=$4 m logf glogs=()
	shift 4
	for logf in $logs; do
		for m in "$@"; do
			grep -q "rfl_guest: insmod ok $m.ko" "$logf" && continue
			grep -E "rfl_guest: insmod failed $m|$m: " "$logf" | head -5 >&2
			die "$KVER $where: $m did not run (its own message above)"
		done
		glogs+=("$G_CACHE/run/$(basename "$logf")")
	done
	krun python3 "$G_PROJECT/scripts/collect.py" "${glogs[@]}" --where "$where" \
		--kernel "$KVER" --config "$G_BUILD/$kind/.config" --cpu "$cpu" --out "$G_CACHE/run/results"
}

# pick_cpu: the host CPU for UML.  On a shared virtual machine one vCPU can run this kernel
# code 1.5 times slower than another (a busy neighbour) with the same clock and the same
# userspace memory latency, and an unpinned UML wanders between them.  So each CPU runs a short
# probe of the C bulk path, and the fastest is kept; all probes are printed and recorded.
pick_cpu() {
	local cpu best="" best_cost="" plan=$runs/probe-plan.sh probes=""
	cat >"$plan" <<-EOF
		load $G_BUILD/um-bench/samples/rust/rust_slab_bulk_bench.ko bulk=16 objs=262144 runs=3 stack_sweep=0
		unload rust_slab_bulk_bench
	EOF
	for cpu in $(allowed_cpus); do
		RFL_TASKSET="taskset -c $cpu" "$PROJECT/scripts/uml-run.sh" "$KVER" um-bench "$plan" \
			"$runs/probe-$KVER-$cpu.log" || continue
		cost=$(sed -n 's/.*variant=raw_bulk bulk=16 run=[0-9]* objs=\([0-9]*\) tsc=\([0-9]*\).*/\2 \1/p' \
			"$runs/probe-$KVER-$cpu.log" | awk '{ print $1 / $2 }' | sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }')
		if [ -z "$cost" ]; then
			grep -a 'rfl_guest: insmod failed' "$runs/probe-$KVER-$cpu.log" >&2 || true
			log "host CPU $cpu: the probe printed no figure, CPU left out (log: $runs/probe-$KVER-$cpu.log)"
			continue
		fi
		log "host CPU $cpu: C bulk-16 alloc+free $cost cycles per object"
		probes="$probes cpu$cpu=$cost"
		if [ -z "$best" ] || awk -v a="$cost" -v b="$best_cost" 'BEGIN { exit !(a < b) }'; then
			best=$cpu best_cost=$cost
		fi
	done
	[ -n "$best" ] || die "no host CPU could run the probe"
	echo "$best$probes"
}

# The parameters of each sample module in UML.
uml_module_args() {
	case $1 in
	rust_slab_bulk_bench) echo "$SLAB_BULK_ARGS" ;;
	rust_alf_queue_bench) echo "$ALF_QUEUE_ARGS" ;;
	rust_qmempool_bench) echo "$QMEMPOOL_ARGS" ;;
	rust_skb_free_bench) echo "$SKB_FREE_ARGS" ;;
	*) die "no parameters known for $1" ;;
	esac
}

# uml_bench KIND WHERE CPU DESCRIPTION MODULE... [-- KERNEL_ARG...]: boots the UML kernel KIND
# BENCH_BOOTS times, pinned to host CPU CPU, each boot loading and unloading each MODULE in turn
# with its parameters, and collects the tables of all boots as WHERE
# (results/<bench>-WHERE-<version>).
uml_bench() {
	local kind=$1 where=$2 cpu=$3 desc=$4 m args mods=() b logf logs='' sig
	local plan=$runs/bench-$where-plan-$KVER.sh
	shift 4
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		mods+=("$1")
		shift
	done
	[ $# -eq 0 ] || shift
	: >"$plan"
	for m in "${mods[@]}"; do
		args=$(uml_module_args "$m")
		printf 'load %s %s\nunload %s\n' "$G_BUILD/$kind/samples/rust/$m.ko" "$args" "$m" >>"$plan"
	done
	sig=$(cksum <"$plan" | cut -d' ' -f1)
	for b in $(seq "$BENCH_BOOTS"); do
		logf=$runs/bench-$where-$KVER-boot$b.log
		phase "boot $KVER $kind $where $sig${*:+ $*}" "$KVER: benchmark boot $b of $BENCH_BOOTS ($where)" \
			env RFL_TASKSET="taskset -c $cpu" "$PROJECT/scripts/uml-run.sh" "$KVER" "$kind" "$plan" "$logf" "$@"
		logs="$logs $logf"
	done
	collect "$where" "$kind" "$desc" "$logs" "${mods[@]}"
}

# noinline_too: whether to boot um-bench-noinline beside um-bench (BENCH_NOINLINE=1 and this
# kernel's um-bench inlines Rust's C helpers).
noinline_too() {
	[ "$BENCH_NOINLINE" = 1 ] && grep -qx CONFIG_RUST_INLINE_HELPERS=y "$BUILD/um-bench/.config"
}

# fwd_boot KIND NAME CPUS CONDS STATS RUNS CELL ROUNDS COALESCE MIN_PARTIAL [KERNEL_ARG...]: one
# boot of the UML kernel KIND (um-bench, um-stats, or their -smp kernels) running the
# forwarding benchmark (scripts/guest/fwd_bench.sh) in conditions CONDS, RUNS repetitions of
# CELL frames per cell (an arm at one tx_coalesce of COALESCE and one min_partial of
# MIN_PARTIAL, both paired within each round) in ROUNDS bursts, slab counters if STATS is 1
# (then in one burst per cell and repetition), on host CPUs CPUS (a taskset list, or "all");
# its log is $runs/fwd-NAME-KIND-<version>.log.
fwd_boot() {
	local kind=$1 name=$2 cpus=$3 conds=$4 stats=$5 reps=$6 cell=$7 rounds=$8 coal=$9 mps=${10}
	local plan=$runs/fwd-plan.sh logf=$runs/fwd-$name-$kind-$KVER.log qlen=
	shift 10
	[ "$stats" = 0 ] || rounds=1
	# With TX completion on another CPU, that CPU can fall behind for a while (a descheduled
	# host thread): a qdisc of 32767 frames (the most 7.x takes) absorbs it instead of dropping.
	[ "$name" != smp ] || qlen=32767
	{
		echo "FWD_MODULE=$G_BUILD/$kind/drivers/net/fwdnic/fwdnic.ko"
		echo "FWD_ARGS='' FWD_PACKETS=$cell FWD_RUNS=$reps FWD_ROUNDS=$rounds"
		echo "FWD_CONDS='$conds' FWD_STATS=$stats FWD_QLEN=$qlen"
		echo "FWD_COALESCE='$coal' FWD_MIN_PARTIAL='$mps' FWD_DEFERS=$fwd_defers"
		cat "$PROJECT/scripts/guest/skb_heads.sh" "$PROJECT/scripts/guest/fwd_lib.sh" \
			"$PROJECT/scripts/guest/fwd_bench.sh"
	} >"$plan"
	local what="$KVER: forwarding, $kind, boot '$name' ($conds; tx_coalesce $coal, min_partial $mps; $reps runs of $cell frames per cell in $rounds bursts)"
	local taskset=
	[ "$cpus" = all ] || taskset="taskset -c $cpus"
	phase "fwd $KVER $kind $name $(cksum <"$plan" | cut -d' ' -f1)" "$what" \
		env RFL_TASKSET="$taskset" "$PROJECT/scripts/uml-run.sh" "$KVER" "$kind" "$plan" "$logf" "$@"
}

# fwd_kernel CPU: the forwarding benchmark of this kernel, UML pinned to host CPU CPU, into
# results/fwd-uml-<version>.{json,md}.  Five arms (shim, napi, napi-nodefer where
# napi_consume_skb() defers, any, slab-bulk) in every boot.  The one-CPU boot pairs
# tx_coalesce 32, 128 and 256 and min_partial (the cache's default and 9) within each round;
# slab_nomerge is a boot of its own, and so, with BENCH_NOINLINE=1, is um-bench-noinline at
# tx_coalesce 128 (the same arms without inlined C helpers).  Where UML has SMP, the
# um-bench-smp kernel (two CPUs, on every host CPU) runs it too, in 1cpu (both interrupts on
# CPU 0), 2cpu (TX completion on CPU 1) and cross (two flows the opposite way, each CPU
# receiving one and completing the other's TX): that kernel costs several times the
# uniprocessor one per frame, so its conditions are compared with each other, not with the
# others.
#
# Sizes: FWD_PACKETS frames per arm and repetition are shared among the one-CPU boot's six
# cells (FWD_PACKETS / 6; a cell of slab_nomerge's boot as large) and the SMP boot's three
# conditions (FWD_PACKETS / 3, twice that in cross, which sends a burst into each port), in half
# as many bursts as FWD_ROUNDS, as each burst reads the independent counts around it.  A cell
# thus averages fewer frames than a whole arm would, and its paired range may be wider;
# FWD_PACKETS raises every cell at once.  What the boots cost is in docs/benchmarks.md.
fwd_kernel() {
	local cpu=$1 smp=0 timed=() counted=() one=$((FWD_PACKETS / 6)) two=$((FWD_PACKETS / 3)) fwd_defers
	local rounds=$((FWD_ROUNDS / 2)) coal="32 128 256" mps="default 9"
	[ "$rounds" -ge 1 ] || rounds=1
	grep -q '^config SMP' "$TREE/arch/um/Kconfig" && smp=1
	# napi-nodefer only where napi_consume_skb() hands skbs back to their CPU (7.x).
	fwd_defers=0
	awk '/^void napi_consume_skb\(/ { f = 1 } f && /skb_attempt_defer_free/ { d = 1 } f && /^}/ { f = 0 }
		END { exit !d }' "$TREE/net/core/skbuff.c" && fwd_defers=1
	build_kernel um-stats
	fwd_boot um-bench default "$cpu" default 0 "$FWD_RUNS" "$one" "$rounds" "$coal" "$mps"
	fwd_boot um-bench slab_nomerge "$cpu" default 0 "$FWD_RUNS" "$one" "$rounds" 128 default slab_nomerge
	fwd_boot um-stats default "$cpu" default 1 "$FWD_STATS_RUNS" "$one" 1 "$coal" "$mps"
	fwd_boot um-stats slab_nomerge "$cpu" default 1 "$FWD_STATS_RUNS" "$one" 1 128 default slab_nomerge
	timed=(--boot "default=$G_CACHE/run/fwd-default-um-bench-$KVER.log"
		--boot "slab_nomerge=$G_CACHE/run/fwd-slab_nomerge-um-bench-$KVER.log")
	if noinline_too; then
		build_kernel um-bench-noinline
		fwd_boot um-bench-noinline noinline "$cpu" default 0 "$FWD_RUNS" "$one" "$rounds" 128 default
		timed+=(--boot "noinline=$G_CACHE/run/fwd-noinline-um-bench-noinline-$KVER.log")
	fi
	counted=(--stats "default=$G_CACHE/run/fwd-default-um-stats-$KVER.log"
		--stats "slab_nomerge=$G_CACHE/run/fwd-slab_nomerge-um-stats-$KVER.log")
	if [ "$smp" = 1 ]; then
		build_kernel um-bench-smp
		build_kernel um-stats-smp
		fwd_boot um-bench-smp smp all "1cpu 2cpu cross" 0 "$FWD_RUNS" "$two" "$rounds" 128 default \
			seccomp=on ncpus=2
		fwd_boot um-stats-smp smp all "1cpu 2cpu cross" 1 "$FWD_STATS_RUNS" "$two" 1 128 default \
			seccomp=on ncpus=2
		timed+=(--boot "smp=$G_CACHE/run/fwd-smp-um-bench-smp-$KVER.log")
		counted+=(--stats "smp=$G_CACHE/run/fwd-smp-um-stats-smp-$KVER.log")
	fi
	krun python3 "$G_PROJECT/scripts/collect_fwd.py" "${timed[@]}" "${counted[@]}" --kernel "$KVER" \
		--config "$G_BUILD/um-bench/.config" --cpu "$host_cpu (UML), pinned to host CPU $cpu" \
		--out "$G_CACHE/run/results"
}

bench_kernel() {
	use_kernel "$1"
	phase "tree $KVER" "$KVER: tree" "$PROJECT/scripts/tree.sh" "$KVER"
	local where cpu probes plan
	for where in $BENCH_WHERE; do
		case $where in
		uml)
			build_kernel um-bench
			cpu=$BENCH_CPU
			if [ "$cpu" = auto ]; then
				read -r cpu probes < <(pick_cpu)
				log "$KVER: UML pinned to host CPU $cpu (probes:$probes)"
			fi
			if [ "$BENCH_FWD" = only ]; then
				fwd_kernel "$cpu"
				continue
			fi
			log "$KVER: benchmarks in UML (this takes a few minutes)"
			uml_bench um-bench uml "$cpu" \
				"$host_cpu (UML), pinned to host CPU $cpu${probes:+ (probes:$probes)}" \
				rust_slab_bulk_bench rust_alf_queue_bench rust_qmempool_bench rust_skb_free_bench
			# The same modules without inlined C helpers, where um-bench has them.
			if noinline_too; then
				build_kernel um-bench-noinline
				log "$KVER: benchmarks in UML without inlined C helpers"
				uml_bench um-bench-noinline uml-noinline "$cpu" \
					"$host_cpu (UML), pinned to host CPU $cpu${probes:+ (probes:$probes)}" \
					rust_slab_bulk_bench rust_qmempool_bench rust_skb_free_bench
			fi
			[ "$BENCH_FWD" = 0 ] || fwd_kernel "$cpu"
			# Where UML has SMP (7.x), alf_queue again on two virtual CPUs: C's cmpxchg()
			# keeps its LOCK prefix there, so MPMC is compared like for like at native speed.
			# SMP UML runs its userspace in SECCOMP mode only.
			if grep -q '^config SMP' "$TREE/arch/um/Kconfig"; then
				build_kernel um-bench-smp
				log "$KVER: alf_queue in SMP UML (2 CPUs)"
				uml_bench um-bench-smp uml-smp "$cpu" \
					"$host_cpu (UML, 2 CPUs), pinned to host CPU $cpu" \
					rust_alf_queue_bench -- seccomp=on ncpus=2
			fi
			;;
		qemu)
			[ "$BENCH_FWD" != only ] || continue # the forwarding runs in UML only
			build_kernel x86-smp
			plan=$runs/bench-qemu-plan-$KVER.sh
			cat >"$plan" <<-EOF
				load /modules/rust_slab_bulk_bench.ko $SLAB_BULK_QEMU_ARGS
				unload rust_slab_bulk_bench
				load /modules/rust_alf_queue_bench.ko $ALF_QUEUE_QEMU_ARGS
				unload rust_alf_queue_bench
			EOF
			log "$KVER: benchmarks in QEMU x86_64 (TCG: for shape, not for absolute figures)"
			"$PROJECT/scripts/qemu-run.sh" "$KVER" "$plan" "$runs/bench-qemu-$KVER.log"
			collect qemu x86-smp "QEMU TCG, 2 vCPUs, on $host_cpu" "$runs/bench-qemu-$KVER.log" \
				rust_slab_bulk_bench rust_alf_queue_bench
			;;
		esac
	done
}

for k in $KERNELS; do
	bench_kernel "$k"
done
# The kernels side by side (from the staged tables), then everything into results/ at once.
[ "$BENCH_FWD" = only ] || krun python3 "$G_PROJECT/scripts/collect.py" --compare "$G_CACHE/run/results"
cp "$stage"/* "$PROJECT/results/"
log "results/: $(cd "$stage" && printf '%s ' *)"
# Last, every target of the benchmarks against the results just staged, with the host each records.
krun python3 "$G_PROJECT/scripts/targets.py" "$G_CACHE/run/results"
finished=1
log "make bench done in $(took $((SECONDS - t_start)))"
{ printf '%s\t%s\n' "$run_key" $((SECONDS - t_start)); cat "$started"; } >"$progress.tmp" &&
	mv "$progress.tmp" "$progress"
