# Guest plan snippet (QEMU x86-smp, 2 vCPUs, -device igb): the ixgbe_bulk_shim run-time proof.
# Append it to a plan after skb_heads.sh; init.sh sources the plan, so say() and load() are at
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
# After each phase, the skb head count must be back to the baseline taken before the first
# (skb_heads.sh says what may keep heads meanwhile); the host greps the log for "BUG: KASAN" and
# "WARNING:".
#
# Result lines (one per phase, then done):
#   rfl_test: shim_pktgen full PASS sent=2000000 pps=410000 before=300 after=420 slack=128
#   rfl_test: shim_pktgen down PASS sent=812345 pps=405000 before=300 after=390 slack=128
#   rfl_test: shim_pktgen done
# A phase FAILs when the count grew by more than the slack, when pktgen sent nothing, or when a
# step failed (the line then says which).
#
# The pktgen helpers below set pg_dev (the igb interface, empty if none) and pg_cpus (the CPUs'
# numbers).

pg_dir=/proc/net/pktgen

# pg_cmd FILE CMD: one pktgen command, pg_refused if refused.
pg_cmd() {
	echo "$2" >$pg_dir/"$1" || pg_refused "pktgen '$2' > $1 refused: $(grep Result: $pg_dir/"$1")"
}

# pg_link up|down: set the igb interface up or down; up waits for the carrier (pktgen sends
# nothing without it).
pg_link() {
	busybox ip link set "$pg_dev" "$1" || pg_refused "ip link set $pg_dev $1 failed"
	[ "$1" = up ] || return 0
	n=0
	while [ "$(cat /sys/class/net/"$pg_dev"/carrier 2>/dev/null)" != 1 ] && [ $n -lt 10 ]; do
		sleep 1
		n=$((n + 1))
	done
}

# pg_setup COUNT: one pktgen device per CPU (dev@cpu), each on the TX queue of its number: 60-byte
# packets, every skb allocated ("clone_skb 0") and freed by the driver ("flag !SHARED").
pg_setup() {
	for c in $pg_cpus; do
		pg_cmd kpktgend_"$c" rem_device_all
		pg_cmd kpktgend_"$c" "add_device $pg_dev@$c"
		for cmd in "count $1" "clone_skb 0" "flag !SHARED" "pkt_size 60" "delay 0" \
			"dst 10.0.2.99" "dst_mac 52:54:00:12:34:99" \
			"queue_map_min $c" "queue_map_max $c"; do
			pg_cmd "$pg_dev@$c" "$cmd"
		done
	done
}

# pg_sent: sets pg_total to the packets sent by all pktgen devices and pg_rate to their summed
# rate (each thread's own pps).
pg_sent() {
	pg_total=0 pg_rate=0
	for c in $pg_cpus; do
		s=$(sed -n 's/.*pkts-sofar: \([0-9]*\).*/\1/p' $pg_dir/"$pg_dev"@"$c")
		p=$(sed -n 's/^ *\([0-9]*\)pps .*/\1/p' $pg_dir/"$pg_dev"@"$c")
		pg_total=$((pg_total + ${s:-0}))
		pg_rate=$((pg_rate + ${p:-0}))
	done
}

pg_dev=
for d in /sys/class/net/*; do
	grep -q '^DRIVER=igb$' "$d/device/uevent" 2>/dev/null && pg_dev=${d##*/} && break
done
pg_cpus=$(sed -n 's/^processor[^0-9]*\([0-9]*\)$/\1/p' /proc/cpuinfo)

SHIM_COUNT=${SHIM_COUNT:-1000000}
SHIM_DOWN_AFTER=${SHIM_DOWN_AFTER:-3}

pg_refused() { say "shim_pktgen: $*"; }

# shim_verdict PHASE: count the packets, compare the heads with the baseline, print the line.
shim_verdict() {
	pg_sent
	after=$(skb_heads)
	why=
	[ "$pg_total" -gt 0 ] || why=" nothing sent"
	[ $((after - shim_base)) -le "$shim_slack" ] || why="$why heads leaked"
	if [ -z "$why" ]; then
		v=PASS
	else
		v="FAIL$why"
	fi
	say "shim_pktgen phase $1 done"
	echo "rfl_test: shim_pktgen $1 $v sent=$pg_total pps=$pg_rate before=$shim_base after=$after slack=$shim_slack" >/dev/console
}

if [ -z "$pg_dev" ]; then
	echo "rfl_test: shim_pktgen full FAIL no igb interface" >/dev/console
elif [ ! -d $pg_dir ]; then
	echo "rfl_test: shim_pktgen full FAIL no pktgen (CONFIG_NET_PKTGEN)" >/dev/console
elif [ ! -f "$skb_head_slab"/objects ]; then
	echo "rfl_test: shim_pktgen full FAIL no $skb_head_slab/objects (CONFIG_SLUB_DEBUG, SYSFS)" >/dev/console
else
	# A merged cache (a symlink to a :0000256-like directory) counts other users too.
	[ -L "$skb_head_slab" ] && say "shim_pktgen: skbuff_head_cache is merged; boot with slab_nomerge"
	grep -q ' __ixgbe_bulk_shim_add$' /proc/kallsyms 2>/dev/null && say "shim_pktgen: shim present"
	# shellcheck disable=SC2086,SC2116 # the CPUs' numbers on one line
	say "shim_pktgen: $pg_dev, cpus $(echo $pg_cpus)"
	shim_base=$(skb_heads)
	shim_slack=$(skb_slack)

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
