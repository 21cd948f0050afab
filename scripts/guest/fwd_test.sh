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
#           freed by its bulk frees, at least FWD_MIN_BATCH per call on average;
#   down    an endless burst through the shim, fwdnic1 taken down mid-traffic, then fwdnic0
#           (frames must have been forwarded before, and the burst cut short);
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
# 32767 frames (the most 7.x takes) holds a whole run of up to 31000 frames and makes "every
# frame forwarded and completed" exact; on one CPU the ring never fills.
elif ! busybox ip link set fwdnic1 qlen 32767; then
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
	fwd_links down || why="$why link down"
	fwd_verdict full "$why" "forwarded=$total $batches"

	why=''
	fwd_links up || why=" link up"
	echo shim >"$fwd_params"/tx_free
	fwd_run 1000000000 &
	sleep 2
	busybox ip link set fwdnic1 down || why="$why fwdnic1 down"
	sleep 1
	busybox ip link set fwdnic0 down || why="$why fwdnic0 down"
	wait
	result=$(cat "$fwd_dir"/run)
	say "fwdnic down: $result"
	case $result in
	*" forwarded=0 "*) why="$why nothing forwarded before the ports went down" ;;
	*"complete=0") ;;
	*) why="$why the burst was not cut short" ;;
	esac
	fwd_verdict down "$why"

	why=''
	busybox rmmod fwdnic || why=" rmmod failed"
	fwd_verdict unload "$why"
fi
echo "rfl_test: fwdnic done" >/dev/console
