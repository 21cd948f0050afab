# shellcheck shell=sh
# Guest plan snippet (UML um-test: KASAN and kmemleak; QEMU x86-smp: two CPUs): fwdnic and
# the TX-completion free paths under it are correct.  Append it to a plan after skb_heads.sh
# and fwd_lib.sh;
# scripts/test.sh writes FWD_MODULE and FWD_ARGS (rx_cpu=0 tx_cpu=1 on two CPUs) above both.
#
# Three phases, each ending with both ports down (fwdnic_stop() frees what its TX ring still
# holds), after which the skb head count must be back to the baseline taken before the first
# (skb_heads.sh):
#   full    FWD_TEST_PACKETS frames through each free path (shim, napi, any, slab-bulk), each
#           forwarded and completed; after each path the head count is back within the slack
#           (so with 300000 frames, UML's default, one skb lost in a thousand fails a path), and
#           the shim's own count (ixgbe_bulk_shim.batches) must show every frame of its run
#           freed by its bulk frees, at least FWD_MIN_BATCH per call on average; on two CPUs
#           then each path but any again with a flow into each port (flows=2), every skb freed
#           by the CPU that did not allocate it, and the shim and napi once more with
#           skb_defer_max 1, so that 7.x's defer lists are full;
#   down    a burst through the shim, fwdnic1 taken down once FWD_DOWN_FRAMES are forwarded,
#           the rest of the burst (FWD_DROP_FRAMES) dropped for want of a route, then fwdnic0
#           (frames must have been forwarded before, and the burst cut short); the heads
#           allocated in skbuff_head_cache, sampled while the frames are forwarded and read
#           once the drops are over, must stay within the rings, the qdisc, the per-CPU caches
#           and KASAN's quarantine (fwd_bound);
#   unload  the module unloaded.
# A double free is KASAN's to report (the host greps the log); a lost head shows in the count
# and, in UML, in kmemleak's report, which the host compares before and after.
#
# Lines:
#   rfl_test: fwdnic full PASS forwarded=900000 calls=28125 skbs=300000 before=300 after=330 slack=64
#   rfl_test: fwdnic down PASS before=300 after=320 slack=64
#   rfl_test: fwdnic unload PASS before=300 after=300 slack=64
#   rfl_test: fwdnic done
# A phase FAILs when the count grew by more than the slack or a step failed (the line says which).

FWD_TEST_PACKETS=${FWD_TEST_PACKETS:-300000}

# fwd_cross_run PATH LABEL: a run of FWD_TEST_PACKETS frames into each port (flows=2) freed by
# PATH; adds to total, or says why to why, as the full phase does.
fwd_cross_run() {
	echo "$1" >"$fwd_params"/tx_free || why="$why tx_free=$1 refused"
	fwd_run "$FWD_TEST_PACKETS" || why="$why $2 $1: run $fwd_result"
	heads=$(skb_heads)
	say "fwdnic $2 $1: $fwd_result heads=$heads"
	case $fwd_result in
	*"forwarded=$((2 * FWD_TEST_PACKETS)) "*"flows=2 free=$1 complete=1")
		total=$((total + 2 * FWD_TEST_PACKETS)) ;;
	*) why="$why $2 $1: $fwd_result" ;;
	esac
	[ $((heads - fwd_base)) -le "$fwd_slack" ] || why="$why $2 $1: heads=$heads"
}

FWD_DOWN_FRAMES=${FWD_DOWN_FRAMES:-100000}
# The longest the down phase waits for its frames to be forwarded, in seconds.
fwd_wait_limit=${FWD_WAIT_LIMIT:-300}

# What may be allocated in skbuff_head_cache at once while fwdnic's traffic is dropped: both
# TX rings, the qdisc (1000 frames), the per-CPU caches' slack, and KASAN's quarantine, which
# holds freed objects of every cache up to 1/32 of memory (twice that, for the batch being
# trimmed and the routes it also holds, counted here as if they were heads).
fwd_bound=$((2 * 512 + 1000 + $(skb_slack) +
	2 * $(sed -n 's/^MemTotal: *\([0-9]*\) kB$/\1/p' /proc/meminfo) * 1024 / 32 /
	$(cat /sys/kernel/slab/skbuff_head_cache/slab_size)))
fwd_most=0
# Frames dropped in the down phase: three times the bound, so that a quarantine that nothing
# trims would exceed it, yet hold under a fifth of memory.
FWD_DROP_FRAMES=${FWD_DROP_FRAMES:-$((3 * fwd_bound))}

# fwd_sample: note the heads allocated in skbuff_head_cache now (not shrunk: what the slab
# holds, quarantined objects included), the most seen in fwd_most.
fwd_sample() {
	fwd_now=$(cut -d' ' -f1 "$skb_head_slab"/objects)
	[ "$fwd_now" -le "$fwd_most" ] || fwd_most=$fwd_now
}

# fwd_wait_frames DEV COUNTER N [POLL]: wait until DEV's statistics COUNTER has grown by N,
# running POLL at each look (10 a second); fails after fwd_wait_limit seconds.
fwd_wait_frames() {
	fwd_stat=/sys/class/net/$1/statistics/$2
	fwd_start=$(cat "$fwd_stat") fwd_tries=$((fwd_wait_limit * 10))
	while [ $(($(cat "$fwd_stat") - fwd_start)) -lt "$3" ]; do
		[ -z "${4:-}" ] || "$4"
		fwd_tries=$((fwd_tries - 1))
		[ "$fwd_tries" -gt 0 ] || return 1
		sleep 0.1
	done
}
FWD_MIN_BATCH=${FWD_MIN_BATCH:-8}
shim_batches=/sys/module/ixgbe_bulk_shim/parameters/batches

# shim_counts: "CALLS SKBS", the shim's bulk frees so far.
shim_counts() {
	sed -n 's/^calls=\([0-9]*\) skbs=\([0-9]*\)$/\1 \2/p' "$shim_batches"
}

# fwd_verdict PHASE WHY [KEY=VALUE...]: PHASE's line; PASS when WHY is empty and the heads
# are back to the baseline.
fwd_verdict() {
	phase=$1 why=$2
	shift 2
	after=$(skb_heads)
	[ $((after - fwd_base)) -le "$fwd_slack" ] || why="$why heads leaked"
	if [ -z "$why" ]; then v=PASS; else v="FAIL$why"; fi
	echo "rfl_test: fwdnic $phase $v $* before=$fwd_base after=$after slack=$fwd_slack" >/dev/console
}

fwd_slack=$(skb_slack)
fwd_base=$(skb_heads)
# Set up here, or before by the plan (fwd_prime), with the ports left down.
# shellcheck disable=SC2086 # FWD_ARGS: zero or more parameters
if ! { [ -d "$fwd_dir" ] && fwd_links up; } && ! fwd_setup "$FWD_MODULE" $FWD_ARGS; then
	echo "rfl_test: fwdnic full FAIL setup" >/dev/console
# Under QEMU the CPU that completes TX can fall far behind the one that receives (its vCPU is
# descheduled), the TX ring fills and the qdisc, 1000 frames long, drops the rest.  A queue of
# 32767 frames (the most 7.x takes) holds a whole run of up to 31000 frames a port and makes
# "every frame forwarded and completed" exact; on one CPU the ring never fills.  Both ports:
# with two flows (the cross runs below) fwdnic0 transmits too.
elif ! { busybox ip link set fwdnic1 qlen 32767 && busybox ip link set fwdnic0 qlen 32767; }; then
	echo "rfl_test: fwdnic full FAIL qlen refused" >/dev/console
else
	why='' total=0 batches=
	for path in shim napi any slab-bulk; do
		echo $path >"$fwd_params"/tx_free || why="$why tx_free=$path refused"
		# shellcheck disable=SC2046 # two numbers
		set -- $(shim_counts)
		calls0=${1:-0} skbs0=${2:-0}
		fwd_run "$FWD_TEST_PACKETS" || why="$why $path: run $fwd_result"
		# shellcheck disable=SC2046 # two numbers
		set -- $(shim_counts)
		calls=$((${1:-0} - calls0)) skbs=$((${2:-0} - skbs0))
		heads=$(skb_heads)
		say "fwdnic $path: $fwd_result heads=$heads"
		case $fwd_result in
		*"forwarded=$FWD_TEST_PACKETS "*"free=$path complete=1") total=$((total + FWD_TEST_PACKETS)) ;;
		*) why="$why $path: $fwd_result" ;;
		esac
		[ $((heads - fwd_base)) -le "$fwd_slack" ] || why="$why $path: heads=$heads after its run"
		if [ $path = shim ]; then
			batches="calls=$calls skbs=$skbs"
			[ "$skbs" = "$FWD_TEST_PACKETS" ] || why="$why shim: its bulk frees freed $skbs skbs"
			[ $((calls * FWD_MIN_BATCH)) -le "$skbs" ] && [ "$calls" -gt 0 ] ||
				why="$why shim: $calls bulk frees for $skbs skbs"
		elif [ "$calls" != 0 ]; then
			why="$why $path: the shim made $calls bulk frees"
		fi
	done
	# On two CPUs, each port also receives a flow and completes the other's TX (fwdnic's
	# flows=2, interrupts on different CPUs as FWD_ARGS set them): every skb is freed on the CPU
	# that did not allocate it, through 7.x's defer lists; each still exactly once.
	if [ "$(grep -c '^processor' /proc/cpuinfo)" -ge 2 ]; then
		if ! { busybox arp -i fwdnic0 -s 198.18.0.1 02:00:00:00:00:01 &&
			echo 2 >"$fwd_params"/flows; }; then
			why="$why cross: setup refused"
		fi
		for path in shim napi slab-bulk; do
			fwd_cross_run $path cross
		done
		# A full defer list: with skb_defer_max 1, an skb that goes back to the other CPU
		# finds its list full (7.x hands a batch over at once) and is freed here instead;
		# still each exactly once.
		if dmax=$(cat "$fwd_defer_max") && [ -n "$dmax" ] && echo 1 >"$fwd_defer_max"; then
			for path in shim napi; do
				fwd_cross_run $path cross-defer_max=1
			done
			echo "$dmax" >"$fwd_defer_max" || why="$why skb_defer_max $dmax not restored"
		else
			why="$why skb_defer_max 1 refused"
		fi
		echo 1 >"$fwd_params"/flows || why="$why flows=1 refused"
	fi
	fwd_links down || why="$why link down"
	fwd_verdict full "$why" "forwarded=$total $batches"

	why=''
	fwd_links up || why=" link up"
	# The qdisc as a NIC's: what the software NIC may hold is then its rings and this queue.
	busybox ip link set fwdnic1 qlen 1000 || why="$why qlen 1000 refused"
	echo shim >"$fwd_params"/tx_free
	rm -f /tmp/fwd-down-heads
	(
		echo $((FWD_DOWN_FRAMES + FWD_DROP_FRAMES)) >"$fwd_dir"/run
		# First thing once the burst is over, with a builtin: anything that execs, or any
		# allocation that may block, would trim the quarantine first.
		read -r fwd_now _ <"$skb_head_slab"/objects
		echo "$fwd_now" >/tmp/fwd-down-heads
	) &
	# fwdnic1 goes down once FWD_DOWN_FRAMES are forwarded (a wait for frames, not for a
	# time); the rest of the burst then arrives and is dropped (no route: each frame freed by
	# the stack, its head and the input route it shares with its GRO batch into KASAN's
	# quarantine in the test kernels) while this shell only waits for the run to end: no
	# allocation that may block, the only thing that trims the quarantine besides its own
	# work item, comes from here meanwhile. Then the heads allocated in skbuff_head_cache
	# (not shrunk, quarantined ones included), read as the run ends, must be within fwd_bound.
	fwd_wait_frames fwdnic1 tx_packets "$FWD_DOWN_FRAMES" fwd_sample ||
		why="$why fewer than $FWD_DOWN_FRAMES frames forwarded in $fwd_wait_limit s"
	busybox ip link set fwdnic1 down || why="$why fwdnic1 down"
	wait
	read -r fwd_now </tmp/fwd-down-heads || why="$why no head count after the burst"
	[ "${fwd_now:-0}" -le "$fwd_most" ] || fwd_most=$fwd_now
	busybox ip link set fwdnic0 down || why="$why fwdnic0 down"
	result=$(cat "$fwd_dir"/run)
	say "fwdnic down: $result most=$fwd_most bound=$fwd_bound"
	case $result in
	*" forwarded=0 "*) why="$why nothing forwarded before the ports went down" ;;
	*"complete=0") ;;
	*) why="$why the burst was not cut short" ;;
	esac
	[ "$fwd_most" -le "$fwd_bound" ] || why="$why $fwd_most heads allocated at once (bound $fwd_bound)"
	fwd_verdict down "$why" "most=$fwd_most bound=$fwd_bound"

	why=''
	busybox rmmod fwdnic || why=" rmmod failed"
	fwd_verdict unload "$why"
fi
echo "rfl_test: fwdnic done" >/dev/console
