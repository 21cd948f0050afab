# Guest plan snippet (QEMU x86-smp, 2 vCPUs, -device igb): packets per second through igb's TX
# cleanup with the ixgbe_bulk_shim's bulk free on and off, in the same boot of the same kernel.
# Append it to a plan after pktgen_lib.sh; init.sh sources the plan, so say() is at hand.  scripts/bench-pps.sh
# runs it (make bench-pps) and turns its lines into results/skb_pps-qemu-<version>.{md,json}.
#
# The shape of Jesper Brouer's measurements of 2015 (the ixgbe bulk-free RFC and the
# slab_nomerge thread on linux-mm): the same traffic with and without the bulk free, with
# skbuff_head_cache's SLUB per-CPU room tuned as he tuned it, and (in a second boot, the host's
# business) with slab_nomerge.  The traffic is pktgen's, as in shim_pktgen.sh: 60-byte packets,
# "clone_skb 0" and "flag !SHARED" (every skb is allocated, and the driver's TX cleanup does its
# final free), one thread per CPU, each on its own TX queue.
#
# Per condition of SHIM_PPS_CONDS ("default tuned" by default):
#   default  the cache as the kernel set it up;
#   tuned    cpu_partial and min_partial of /sys/kernel/slab/skbuff_head_cache set to Brouer's
#            values (SHIM_PPS_CPU_PARTIAL=256, SHIM_PPS_MIN_PARTIAL=9) where the kernel takes
#            them, and restored afterwards.  6.12 takes both.  7.x took the per-CPU partial
#            slabs (and per-CPU slabs) out for per-CPU sheaves: its cpu_partial file reads 0 and
#            refuses any other value, and the sheaves' capacity (sheaf_capacity, read-only) is
#            fixed when the cache is created, so only min_partial is tuned there; the tune line
#            says which values were taken.
# SHIM_PPS_RUNS repetitions (5 by default), each one run with the shim on and one with it off
# (ixgbe_bulk_shim.enable, switched between runs), in an order that rotates: on,off in odd
# repetitions, off,on in even ones, so that a place in the sequence cannot pass for a cost.
# A run is SHIM_PPS_COUNT packets per thread; one short untimed run (on) warms up first.
#
# Lines (pps: the sum of the pktgen threads' own rates, as pktgen reports them):
#   rfl_bench: shim_pps setup dev=eth0 cpus=2 count=50000 runs=5 conds=default,tuned merged=0 kernel=7.3.4
#   rfl_bench: shim_pps tune cond=tuned cpu_partial=0->refused min_partial=5->9 sheaf_capacity=30
#   rfl_bench: shim_pps cond=tuned mode=on run=1 sent=100000 pps=12480
#   rfl_bench: shim_pps check PASS sent=2000000 before=32 after=209 slack=512
#   rfl_bench: shim_pps done
# "check" is shim_pktgen's: after all runs and the device down, skbuff_head_cache's objects in
# use are back to the baseline, give or take the per-CPU caches the shim does not own.  A step
# that fails prints "rfl_bench: shim_pps error <what>" and the host fails the run.

SHIM_PPS_RUNS=${SHIM_PPS_RUNS:-5}
SHIM_PPS_COUNT=${SHIM_PPS_COUNT:-50000}
SHIM_PPS_CONDS=${SHIM_PPS_CONDS:-default tuned}
SHIM_PPS_CPU_PARTIAL=${SHIM_PPS_CPU_PARTIAL:-256}
SHIM_PPS_MIN_PARTIAL=${SHIM_PPS_MIN_PARTIAL:-9}
pps_switch=/sys/module/ixgbe_bulk_shim/parameters/enable

pps_out() { echo "rfl_bench: shim_pps $*" >/dev/console; }
pps_error() {
	pps_out "error $*"
	pps_failed=1
}

pg_refused() { pps_error "$*"; }

# pps_traffic COUNT: one pktgen run of COUNT packets per thread, to its end; sets pps_sent to
# the packets sent by all threads and pps_rate to the sum of their rates.
pps_traffic() {
	pg_setup "$1"
	pg_cmd pgctrl start
	pg_sent
	pps_sent=$pg_total pps_rate=$pg_rate
}

# pps_mode on|off: switch the shim's bulk free for the cleanups that start from now on.
pps_mode() {
	case $1 in
	on) echo Y >$pps_switch ;;
	off) echo N >$pps_switch ;;
	esac || pps_error "cannot switch the shim $1"
	[ "$(cat $pps_switch)" = "$([ "$1" = on ] && echo Y || echo N)" ] ||
		pps_error "the shim's switch reads $(cat $pps_switch) after switching it $1"
}

# pps_set FILE VALUE: write a tunable of the cache; prints the new value, or "refused".
pps_set() {
	if echo "$2" 2>/dev/null >$pg_slab/$1 && [ "$(cat $pg_slab/$1)" = "$2" ]; then
		echo "$2"
	else
		echo refused
	fi
}

# pps_tune: Brouer's values where the kernel takes them; the old ones are kept for pps_restore.
pps_tune() {
	pps_old_cpu_partial=$(cat $pg_slab/cpu_partial 2>/dev/null || echo none)
	pps_old_min_partial=$(cat $pg_slab/min_partial 2>/dev/null || echo none)
	cp=none mp=none
	[ "$pps_old_cpu_partial" = none ] || cp=$(pps_set cpu_partial "$SHIM_PPS_CPU_PARTIAL")
	[ "$pps_old_min_partial" = none ] || mp=$(pps_set min_partial "$SHIM_PPS_MIN_PARTIAL")
	pps_out "tune cond=tuned cpu_partial=$pps_old_cpu_partial->$cp" \
		"min_partial=$pps_old_min_partial->$mp sheaf_capacity=$(cat $pg_slab/sheaf_capacity 2>/dev/null || echo none)"
}

pps_restore() {
	for f in cpu_partial min_partial; do
		eval old=\$pps_old_$f
		[ "$old" = none ] && continue
		[ "$(cat $pg_slab/$f)" = "$old" ] && continue
		echo "$old" >$pg_slab/$f || pps_error "cannot restore $f to $old"
	done
}

pps_failed=0
if [ -z "$pg_dev" ]; then
	pps_error "no igb interface"
elif [ ! -d $pg_dir ]; then
	pps_error "no pktgen (CONFIG_NET_PKTGEN)"
elif [ ! -f $pg_slab/objects ]; then
	pps_error "no $pg_slab/objects (CONFIG_SLUB_DEBUG, SYSFS)"
elif [ ! -f $pps_switch ]; then
	pps_error "no $pps_switch (a kernel without the shim's switch)"
else
	# A merged cache is a symlink (skbuff_head_cache is created with SLAB_NO_MERGE in both
	# kernels, so this should read 0 with and without slab_nomerge).
	merged=0
	[ -L $pg_slab ] && merged=1
	pps_out "setup dev=$pg_dev cpus=$pg_ncpu count=$SHIM_PPS_COUNT runs=$SHIM_PPS_RUNS" \
		"conds=$(echo $SHIM_PPS_CONDS | sed "s/ /,/g") merged=$merged kernel=$(uname -r)"
	pps_was=$(cat $pps_switch)
	pps_base=$(pg_heads)
	pps_total=0

	pg_link up
	pps_mode on
	pps_traffic $((SHIM_PPS_COUNT / 10 + 1))
	pps_total=$((pps_total + pps_sent))
	say "shim_pps: warm-up sent=$pps_sent pps=$pps_rate"
	for cond in $SHIM_PPS_CONDS; do
		case $cond in
		default) ;;
		tuned) pps_tune ;;
		*)
			pps_error "unknown condition $cond"
			continue
			;;
		esac
		i=1
		while [ $i -le "$SHIM_PPS_RUNS" ]; do
			if [ $((i % 2)) = 1 ]; then order="on off"; else order="off on"; fi
			for mode in $order; do
				pps_mode $mode
				pps_traffic "$SHIM_PPS_COUNT"
				pps_total=$((pps_total + pps_sent))
				pps_out "cond=$cond mode=$mode run=$i sent=$pps_sent pps=$pps_rate"
			done
			i=$((i + 1))
		done
		[ "$cond" = tuned ] && pps_restore
	done
	echo "$pps_was" >$pps_switch
	pg_link down

	after=$(pg_heads)
	why=
	[ "$pps_failed" = 0 ] || why=" a step failed"
	[ $((after - pps_base)) -le "$pg_slack" ] || why="$why heads leaked"
	v=PASS
	[ -z "$why" ] || v="FAIL$why"
	pps_out "check $v sent=$pps_total before=$pps_base after=$after slack=$pg_slack"
fi
pps_out done
