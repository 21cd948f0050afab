#!/usr/bin/env bash
# make bench: provision, build the bench kernels, boot them with the benchmark sample modules,
# collect what they print into results/*.json, print the markdown tables, draw the plots.
#
# Module parameters are set at run time, without a rebuild:
#   SLAB_BULK_ARGS       for rust_slab_bulk_bench in UML  (e.g. "bulk=1,8,16 runs=9")
#   SLAB_BULK_QEMU_ARGS  the same in QEMU (TCG is ~10x slower: fewer objects by default)
#   BENCH_WHERE          "uml qemu" (default), or just one of them
. "$(dirname "$0")/lib.sh"

SLAB_BULK_ARGS=${SLAB_BULK_ARGS:-}
SLAB_BULK_QEMU_ARGS=${SLAB_BULK_QEMU_ARGS:-objs=65536 runs=5}
BENCH_WHERE=${BENCH_WHERE:-uml qemu}
runs=$CACHE_DIR/run
mkdir -p "$runs" "$PROJECT/results"

[ -n "${KDIR:-}" ] || "$PROJECT/scripts/toolchain.sh"
"$PROJECT/scripts/tree.sh"

collect() { # collect WHERE LOG KIND
	krun python3 "$G_PROJECT/scripts/collect.py" "$G_CACHE/run/$(basename "$2")" --where "$1" \
		--config "$G_BUILD/$3/.config" --out "$G_PROJECT/results"
}

for where in $BENCH_WHERE; do
	case $where in
	uml)
		"$PROJECT/scripts/kernel.sh" um-bench
		plan=$runs/bench-uml-plan.sh
		cat >"$plan" <<-EOF
			load $G_BUILD/um-bench/samples/rust/rust_slab_bulk_bench.ko $SLAB_BULK_ARGS
			unload rust_slab_bulk_bench
		EOF
		log "benchmarks in UML (this takes a few minutes)"
		"$PROJECT/scripts/uml-run.sh" um-bench "$plan" "$runs/bench-uml.log"
		collect uml "$runs/bench-uml.log" um-bench
		;;
	qemu)
		"$PROJECT/scripts/kernel.sh" x86-smp
		plan=$runs/bench-qemu-plan.sh
		cat >"$plan" <<-EOF
			load /modules/rust_slab_bulk_bench.ko $SLAB_BULK_QEMU_ARGS
			unload rust_slab_bulk_bench
		EOF
		log "benchmarks in QEMU x86_64 (TCG: for shape, not for absolute figures)"
		"$PROJECT/scripts/qemu-run.sh" "$plan" "$runs/bench-qemu.log"
		collect qemu "$runs/bench-qemu.log" x86-smp
		;;
	*) die "BENCH_WHERE: unknown '$where'" ;;
	esac
done
