# Guest plan snippet: pktgen through igb's TX cleanup, the pieces shim_pktgen.sh (make test) and
# shim_pps.sh (make bench-pps) share.  Put it in the plan before either; init.sh sources the
# plan, so say() is at hand.  Each user defines pg_refused MSG, called when a step fails.
#
# Sets pg_dev (the igb interface, empty if none), pg_cpus (the CPUs' numbers), pg_ncpu and
# pg_slack: how many skb heads the per-CPU caches the shim does not own may keep, the NAPI skb
# cache (64 per CPU in 6.12, 128 in 7.x) and, in 7.x, the deferred-free list
# napi_consume_skb() feeds for skbs allocated on another CPU (skb_defer_max, 128 per CPU).

pg_slab=/sys/kernel/slab/skbuff_head_cache
pg_dir=/proc/net/pktgen

# pg_heads: skbuff_head_cache's objects in use, per-CPU slabs and sheaves flushed first.
pg_heads() {
	echo 1 >$pg_slab/shrink
	cut -d' ' -f1 $pg_slab/objects
}

# pg_cmd FILE CMD: one pktgen command, pg_refused if refused.
pg_cmd() {
	echo "$2" >$pg_dir/$1 || pg_refused "pktgen '$2' > $1 refused: $(grep Result: $pg_dir/$1)"
}

# pg_link up|down: set the igb interface up or down; up waits for the carrier (pktgen sends
# nothing without it).
pg_link() {
	busybox ip link set "$pg_dev" "$1" || pg_refused "ip link set $pg_dev $1 failed"
	[ "$1" = up ] || return 0
	n=0
	while [ "$(cat /sys/class/net/$pg_dev/carrier 2>/dev/null)" != 1 ] && [ $n -lt 10 ]; do
		sleep 1
		n=$((n + 1))
	done
}

# pg_setup COUNT: one pktgen device per CPU (dev@cpu), each on the TX queue of its number: 60-byte
# packets, every skb allocated ("clone_skb 0") and freed by the driver ("flag !SHARED").
pg_setup() {
	for c in $pg_cpus; do
		pg_cmd kpktgend_$c rem_device_all
		pg_cmd kpktgend_$c "add_device $pg_dev@$c"
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
		s=$(sed -n 's/.*pkts-sofar: \([0-9]*\).*/\1/p' $pg_dir/$pg_dev@$c)
		p=$(sed -n 's/^ *\([0-9]*\)pps .*/\1/p' $pg_dir/$pg_dev@$c)
		pg_total=$((pg_total + ${s:-0}))
		pg_rate=$((pg_rate + ${p:-0}))
	done
}

pg_dev=
for d in /sys/class/net/*; do
	grep -q '^DRIVER=igb$' "$d/device/uevent" 2>/dev/null && pg_dev=${d##*/} && break
done
pg_cpus=$(sed -n 's/^processor[^0-9]*\([0-9]*\)$/\1/p' /proc/cpuinfo)
pg_ncpu=0
for c in $pg_cpus; do pg_ncpu=$((pg_ncpu + 1)); done
if [ "$(uname -r | cut -d. -f1)" -ge 7 ]; then
	pg_slack=$((pg_ncpu * (128 + 128)))
else
	pg_slack=$((pg_ncpu * 64))
fi
