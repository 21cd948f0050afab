# Guest plan snippet (QEMU x86-smp, 2 vCPUs, -device igb): the ixgbe_bulk_shim run-time proof.
# Append it to a plan after pktgen_lib.sh; init.sh sources the plan, so say() and load() are at
# hand.
#
# pktgen sends 60-byte packets (clone_skb 0, "flag !SHARED": the driver does every final free)
# from one thread per CPU, each on its own TX queue of the igb interface, and igb's TX cleanup
# frees them through the shim (CONFIG_IXGBE_BULK_SHIM=y).  Two phases, each from the device down
# to the device down again (igb_down() frees what is left in the TX rings, so nothing but the
# caches below can hold a head):
#
#   full: SHIM_COUNT packets per thread, then the device goes down;
#   down: endless traffic, and the device goes down mid-traffic.
#
# After each phase, skbuff_head_cache's objects in use (shrunk first, so SLUB's per-CPU slabs
# and sheaves are flushed) must be back to the baseline taken before the first phase, give or
# take what per-CPU caches the shim does not own may keep: the NAPI skb cache (64 heads per CPU
# in 6.12, 128 in 7.x) and, in 7.x, the deferred-free list napi_consume_skb() feeds for skbs
# allocated on another CPU (skb_defer_max, 128 per CPU).  A head lost per cleanup, or one per
# thousand packets, is far above that.  KASAN (in the test kernel) reports any double free;
# the host greps the log for "BUG: KASAN" and "WARNING:".
#
# Result lines (one per phase, then done):
#   rfl_test: shim_pktgen full PASS sent=2000000 pps=410000 before=300 after=420 slack=128
#   rfl_test: shim_pktgen down PASS sent=812345 pps=405000 before=300 after=390 slack=128
#   rfl_test: shim_pktgen done
# A phase FAILs when the count grew by more than the slack, when pktgen sent nothing, or when a
# step failed (the line then says which).

SHIM_COUNT=${SHIM_COUNT:-1000000}
SHIM_DOWN_AFTER=${SHIM_DOWN_AFTER:-3}

pg_refused() { say "shim_pktgen: $*"; }

# shim_verdict PHASE: count the packets, compare the heads with the baseline, print the line.
shim_verdict() {
	pg_sent
	after=$(pg_heads)
	why=
	[ "$pg_total" -gt 0 ] || why=" nothing sent"
	[ $((after - shim_base)) -le "$pg_slack" ] || why="$why heads leaked"
	if [ -z "$why" ]; then
		v=PASS
	else
		v="FAIL$why"
	fi
	say "shim_pktgen phase $1 done"
	echo "rfl_test: shim_pktgen $1 $v sent=$pg_total pps=$pg_rate before=$shim_base after=$after slack=$pg_slack" >/dev/console
}

if [ -z "$pg_dev" ]; then
	echo "rfl_test: shim_pktgen full FAIL no igb interface" >/dev/console
elif [ ! -d $pg_dir ]; then
	echo "rfl_test: shim_pktgen full FAIL no pktgen (CONFIG_NET_PKTGEN)" >/dev/console
elif [ ! -f $pg_slab/objects ]; then
	echo "rfl_test: shim_pktgen full FAIL no $pg_slab/objects (CONFIG_SLUB_DEBUG, SYSFS)" >/dev/console
else
	# A merged cache (a symlink to a :0000256-like directory) counts other users too.
	[ -L $pg_slab ] && say "shim_pktgen: skbuff_head_cache is merged; boot with slab_nomerge"
	grep -q ' __ixgbe_bulk_shim_add$' /proc/kallsyms 2>/dev/null && say "shim_pktgen: shim present"
	say "shim_pktgen: $pg_dev, cpus $(echo $pg_cpus)"
	shim_base=$(pg_heads)

	pg_link up
	pg_setup "$SHIM_COUNT"
	pg_cmd pgctrl start
	pg_link down
	shim_verdict full

	pg_link up
	pg_setup 0
	pg_cmd pgctrl start &
	sleep "$SHIM_DOWN_AFTER"
	pg_link down
	wait
	shim_verdict down
fi
echo "rfl_test: shim_pktgen done" >/dev/console
