# Guest plan snippet (QEMU x86-smp, 2 vCPUs, -device igb): the ixgbe_bulk_shim run-time proof.
# Append it to a plan; init.sh sources the plan, so say() and load() are at hand.
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
shim_slab=/sys/kernel/slab/skbuff_head_cache
shim_pg=/proc/net/pktgen

# shim_heads: skbuff_head_cache's objects in use, per-CPU slabs and sheaves flushed first.
shim_heads() {
	echo 1 >$shim_slab/shrink
	cut -d' ' -f1 $shim_slab/objects
}

# shim_pg FILE CMD: one pktgen command, reported if refused.
shim_pg() {
	echo "$2" >$shim_pg/$1 || say "shim_pktgen: '$2' > $1 refused: $(grep Result: $shim_pg/$1)"
}

# shim_link up|down: set the igb interface up or down; up waits for the carrier (pktgen
# sends nothing without it).
shim_link() {
	busybox ip link set "$shim_dev" "$1" || say "shim_pktgen: ip link set $shim_dev $1 failed"
	[ "$1" = up ] || return 0
	n=0
	while [ "$(cat /sys/class/net/$shim_dev/carrier 2>/dev/null)" != 1 ] && [ $n -lt 10 ]; do
		sleep 1
		n=$((n + 1))
	done
}

# shim_setup COUNT: one pktgen device per CPU (dev@cpu), each on the TX queue of its number.
shim_setup() {
	for c in $shim_cpus; do
		shim_pg kpktgend_$c rem_device_all
		shim_pg kpktgend_$c "add_device $shim_dev@$c"
		for cmd in "count $1" "clone_skb 0" "flag !SHARED" "pkt_size 60" "delay 0" \
			"dst 10.0.2.99" "dst_mac 52:54:00:12:34:99" \
			"queue_map_min $c" "queue_map_max $c"; do
			shim_pg "$shim_dev@$c" "$cmd"
		done
	done
}

# shim_sent: sets shim_total to the packets sent by all pktgen devices and shim_pps to their
# summed rate.
shim_sent() {
	shim_total=0 shim_pps=0
	for c in $shim_cpus; do
		s=$(sed -n 's/.*pkts-sofar: \([0-9]*\).*/\1/p' $shim_pg/$shim_dev@$c)
		p=$(sed -n 's/^ *\([0-9]*\)pps .*/\1/p' $shim_pg/$shim_dev@$c)
		shim_total=$((shim_total + ${s:-0}))
		shim_pps=$((shim_pps + ${p:-0}))
	done
}

# shim_verdict PHASE: count the packets, compare the heads with the baseline, print the line.
shim_verdict() {
	shim_sent
	after=$(shim_heads)
	why=
	[ "$shim_total" -gt 0 ] || why=" nothing sent"
	[ $((after - shim_base)) -le "$shim_slack" ] || why="$why heads leaked"
	if [ -z "$why" ]; then
		v=PASS
	else
		v="FAIL$why"
	fi
	say "shim_pktgen phase $1 done"
	echo "rfl_test: shim_pktgen $1 $v sent=$shim_total pps=$shim_pps before=$shim_base after=$after slack=$shim_slack" >/dev/console
}

shim_dev=
for d in /sys/class/net/*; do
	grep -q '^DRIVER=igb$' "$d/device/uevent" 2>/dev/null && shim_dev=${d##*/} && break
done
shim_cpus=$(sed -n 's/^processor[^0-9]*\([0-9]*\)$/\1/p' /proc/cpuinfo)
if [ -z "$shim_dev" ]; then
	echo "rfl_test: shim_pktgen full FAIL no igb interface" >/dev/console
elif [ ! -d $shim_pg ]; then
	echo "rfl_test: shim_pktgen full FAIL no pktgen (CONFIG_NET_PKTGEN)" >/dev/console
elif [ ! -f $shim_slab/objects ]; then
	echo "rfl_test: shim_pktgen full FAIL no $shim_slab/objects (CONFIG_SLUB_DEBUG, SYSFS)" >/dev/console
else
	# A merged cache (a symlink to a :0000256-like directory) counts other users too.
	[ -L $shim_slab ] && say "shim_pktgen: skbuff_head_cache is merged; boot with slab_nomerge"
	grep -q ' ixgbe_bulk_shim_add$' /proc/kallsyms 2>/dev/null && say "shim_pktgen: shim present"
	ncpu=0
	for c in $shim_cpus; do ncpu=$((ncpu + 1)); done
	if [ "$(uname -r | cut -d. -f1)" -ge 7 ]; then
		shim_slack=$((ncpu * (128 + 128)))
	else
		shim_slack=$((ncpu * 64))
	fi
	say "shim_pktgen: $shim_dev, cpus $(echo $shim_cpus)"
	shim_base=$(shim_heads)

	shim_link up
	shim_setup "$SHIM_COUNT"
	shim_pg pgctrl start
	shim_link down
	shim_verdict full

	shim_link up
	shim_setup 0
	shim_pg pgctrl start &
	sleep "$SHIM_DOWN_AFTER"
	shim_link down
	wait
	shim_verdict down
fi
echo "rfl_test: shim_pktgen done" >/dev/console
