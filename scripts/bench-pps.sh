#!/usr/bin/env bash
# make bench-pps: packets per second through igb's TX cleanup with the ixgbe_bulk_shim's bulk
# free on and off, in the shape of Jesper Brouer's measurements of 2015 (the ixgbe bulk-free
# RFC; slab_nomerge and the SLUB tuning of skbuff_head_cache).  Per kernel of KERNELS, the
# x86-smp kernel (QEMU TCG, 2 vCPUs, emulated igb, KASAN) boots twice:
#   default       as it is: conditions "default" and "tuned" (cpu_partial/min_partial);
#   slab_nomerge  with slab_nomerge on the command line: condition "slab_nomerge";
# each running scripts/guest/shim_pps.sh (the shim switched on and off at run time, the order
# rotating, SHIM_PPS_RUNS repetitions of SHIM_PPS_COUNT packets per pktgen thread).  The lines
# are collected (scripts/collect.py --pps) into results/skb_pps-qemu-<version>.{json,md}; nothing
# in results/ is replaced unless every boot of every kernel ran to its end, sent every packet,
# kept its log free of KASAN reports, warnings and oopses, and passed the skb head count check.
#
#   SHIM_PPS_RUNS   repetitions per condition and mode (5)
#   SHIM_PPS_COUNT  packets per pktgen thread per run (50000)
#   SHIM_PPS_BOOTS  the boots ("default slab_nomerge")
# Under TCG these figures show large relative differences and the shim's correctness under
# load, not the nanoseconds of the original (docs/benchmarks.md).
. "$(dirname "$0")/lib.sh"

SHIM_PPS_RUNS=${SHIM_PPS_RUNS:-5}
SHIM_PPS_COUNT=${SHIM_PPS_COUNT:-50000}
SHIM_PPS_BOOTS=${SHIM_PPS_BOOTS:-default slab_nomerge}
# A directory of its own: make bench stages its tables in run/results.
runs=$CACHE_DIR/run/pps G_runs=$G_CACHE/run/pps
stage=$runs/results
rm -rf "$runs" && mkdir -p "$stage" "$PROJECT/results"

[ -n "${KDIR:-}" ] || "$PROJECT/scripts/toolchain.sh"

host_cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')

pps_kernel() {
	use_kernel "$1"
	"$PROJECT/scripts/tree.sh" "$KVER"
	"$PROJECT/scripts/kernel.sh" "$KVER" x86-smp
	local boot plan logs=() conds args t0
	for boot in $SHIM_PPS_BOOTS; do
		case $boot in
		default) conds="default tuned" args= ;;
		slab_nomerge) conds="default" args=slab_nomerge ;;
		*) die "SHIM_PPS_BOOTS: unknown boot '$boot' (default, slab_nomerge)" ;;
		esac
		plan=$runs/plan-$KVER-$boot.sh
		{
			echo "SHIM_PPS_RUNS=$SHIM_PPS_RUNS"
			echo "SHIM_PPS_COUNT=$SHIM_PPS_COUNT"
			echo "SHIM_PPS_CONDS='$conds'"
			cat "$PROJECT/scripts/guest/pktgen_lib.sh" "$PROJECT/scripts/guest/shim_pps.sh"
		} >"$plan"
		log "$KVER: shim pps, boot '$boot' ($SHIM_PPS_RUNS x on/off x $conds, $SHIM_PPS_COUNT packets per thread; QEMU TCG)"
		t0=$SECONDS
		# shellcheck disable=SC2086 # $args: no argument or one
		"$PROJECT/scripts/qemu-run.sh" "$KVER" "$plan" "$runs/pps-$KVER-$boot.log" $args
		log "$KVER: boot '$boot' done in $((SECONDS - t0)) s"
		logs+=(--pps "$boot=$G_runs/pps-$KVER-$boot.log")
	done
	krun python3 "$G_PROJECT/scripts/collect.py" "${logs[@]}" --kernel "$KVER" \
		--config "$G_BUILD/x86-smp/.config" --cpu "$host_cpu" --out "$G_runs/results"
}

for k in $KERNELS; do
	pps_kernel "$k"
done
cp "$stage"/* "$PROJECT/results/"
log "results/: $(cd "$stage" && ls | tr '\n' ' ')"
