#!/usr/bin/env bash
# make bench: provision, build the bench kernels, boot them with the benchmark sample modules,
# collect what they print into results/*.json, print the markdown tables, draw the plots.
#
# Module parameters are set at run time, without a rebuild:
#   SLAB_BULK_ARGS       for rust_slab_bulk_bench in UML  (e.g. "bulk=1,8,16 runs=9")
#   SLAB_BULK_QEMU_ARGS  the same in QEMU (TCG is ~10x slower: fewer objects by default)
#   ALF_QUEUE_ARGS       for rust_alf_queue_bench in UML  (e.g. "bulk=8,16 elems=1000000 runs=21")
#   ALF_QUEUE_QEMU_ARGS  the same in QEMU
#   BENCH_WHERE          "uml qemu" (default), or just one of them
#   BENCH_CPU            the host CPU UML is pinned to; "auto" (default) probes each
. "$(dirname "$0")/lib.sh"

SLAB_BULK_ARGS=${SLAB_BULK_ARGS:-}
SLAB_BULK_QEMU_ARGS=${SLAB_BULK_QEMU_ARGS:-objs=65536 runs=5}
ALF_QUEUE_ARGS=${ALF_QUEUE_ARGS:-}
ALF_QUEUE_QEMU_ARGS=${ALF_QUEUE_QEMU_ARGS:-elems=262144 runs=5}
BENCH_WHERE=${BENCH_WHERE:-uml qemu}
runs=$CACHE_DIR/run
mkdir -p "$runs" "$PROJECT/results"

[ -n "${KDIR:-}" ] || "$PROJECT/scripts/toolchain.sh"
"$PROJECT/scripts/tree.sh"

host_cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
collect() { # collect WHERE LOG KIND CPU
	krun python3 "$G_PROJECT/scripts/collect.py" "$G_CACHE/run/$(basename "$2")" --where "$1" \
		--config "$G_BUILD/$3/.config" --cpu "$4" --out "$G_PROJECT/results"
}

# pick_cpu: the host CPU for UML.  On a shared virtual machine one vCPU can run this kernel
# code 1.5 times slower than another (a busy neighbour) with the same clock and the same
# userspace memory latency, and an unpinned UML wanders between them.  So each CPU runs a short
# probe of the C bulk path, and the fastest is kept; all probes are printed and recorded.
pick_cpu() {
	local cpu best="" best_cost="" plan=$runs/probe-plan.sh probes=""
	cat >"$plan" <<-EOF
		load $G_BUILD/um-bench/samples/rust/rust_slab_bulk_bench.ko bulk=16 objs=262144 runs=3
		unload rust_slab_bulk_bench
	EOF
	for cpu in $(taskset -pc $$ | sed 's/.*: //; s/,/ /g' | tr ' ' '\n' |
		awk -F- '{ if (NF == 2) for (i = $1; i <= $2; i++) print i; else print $1 }'); do
		RFL_TASKSET="taskset -c $cpu" "$PROJECT/scripts/uml-run.sh" um-bench "$plan" \
			"$runs/probe-$cpu.log" || continue
		cost=$(sed -n 's/.*variant=raw_bulk bulk=16 run=[0-9]* objs=\([0-9]*\) tsc=\([0-9]*\).*/\2 \1/p' \
			"$runs/probe-$cpu.log" | awk '{ print $1 / $2 }' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
		log "host CPU $cpu: C bulk-16 alloc+free $cost cycles per object"
		probes="$probes cpu$cpu=$cost"
		if [ -z "$best" ] || awk -v a="$cost" -v b="$best_cost" 'BEGIN { exit !(a < b) }'; then
			best=$cpu best_cost=$cost
		fi
	done
	[ -n "$best" ] || die "no host CPU could run the probe"
	echo "$best$probes"
}

for where in $BENCH_WHERE; do
	case $where in
	uml)
		"$PROJECT/scripts/kernel.sh" um-bench
		cpu=${BENCH_CPU:-auto}
		if [ "$cpu" = auto ]; then
			read -r cpu probes < <(pick_cpu)
			log "UML pinned to host CPU $cpu (probes:$probes)"
		fi
		export RFL_TASKSET="taskset -c $cpu"
		plan=$runs/bench-uml-plan.sh
		cat >"$plan" <<-EOF
			load $G_BUILD/um-bench/samples/rust/rust_slab_bulk_bench.ko $SLAB_BULK_ARGS
			unload rust_slab_bulk_bench
			load $G_BUILD/um-bench/samples/rust/rust_alf_queue_bench.ko $ALF_QUEUE_ARGS
			unload rust_alf_queue_bench
		EOF
		log "benchmarks in UML (this takes a few minutes)"
		"$PROJECT/scripts/uml-run.sh" um-bench "$plan" "$runs/bench-uml.log"
		collect uml "$runs/bench-uml.log" um-bench "$host_cpu (UML), pinned to host CPU $cpu${probes:+ (probes:$probes)}"
		unset RFL_TASKSET probes
		;;
	qemu)
		"$PROJECT/scripts/kernel.sh" x86-smp
		plan=$runs/bench-qemu-plan.sh
		cat >"$plan" <<-EOF
			load /modules/rust_slab_bulk_bench.ko $SLAB_BULK_QEMU_ARGS
			unload rust_slab_bulk_bench
			load /modules/rust_alf_queue_bench.ko $ALF_QUEUE_QEMU_ARGS
			unload rust_alf_queue_bench
		EOF
		log "benchmarks in QEMU x86_64 (TCG: for shape, not for absolute figures)"
		"$PROJECT/scripts/qemu-run.sh" "$plan" "$runs/bench-qemu.log"
		collect qemu "$runs/bench-qemu.log" x86-smp "QEMU TCG, 2 vCPUs, on $host_cpu"
		;;
	*) die "BENCH_WHERE: unknown '$where'" ;;
	esac
done
