# shellcheck shell=sh
# Guest plan snippet (UML um-bench, or um-stats for the slab counters): IPv4 forwarding
# through fwdnic with each TX-completion free path, in the conditions of 2015.  Append it to a
# plan after skb_heads.sh and fwd_lib.sh; scripts/bench.sh writes the FWD_* settings above
# them, runs it (make bench) and scripts/collect_fwd.py turns its lines into
# results/fwd-uml-<version>.{json,md}.
#
# Settings (from the host):
#   FWD_MODULE   fwdnic.ko, FWD_ARGS its parameters (none by default)
#   FWD_PACKETS  frames per path and repetition; FWD_RUNS repetitions per condition
#   FWD_ROUNDS   the bursts a repetition is cut into: each round runs every path for
#                FWD_PACKETS / FWD_ROUNDS frames, in an order that rotates by one from round to
#                round (1 where FWD_STATS is 1: the counters are read around each burst)
#   FWD_CONDS    the conditions, of fwd_tune below: "default tuned" or "default" on one CPU;
#                "1cpu 2cpu" on two (7.x has no per-CPU partial slabs: cpu_partial reads 0
#                and refuses anything else; sheaf_capacity, what replaced it, is read-only)
#   FWD_STATS    1: after each repetition, the SLUB counters of every cache whose counters
#                moved by one per 100 frames or more (CONFIG_SLUB_STATS)
#   FWD_QLEN     fwdnic1's qdisc length, if not the default 1000
# One untimed burst of FWD_PACKETS frames through each path warms up first.
#
# Lines:
#   rfl_fwd: setup kernel=6.12.107 cpus=1 packets=8000000 runs=5 rounds=16 conds=default,tuned
#            stats=0 merged=0 cache=skbuff_head_cache object_size=208 objs_per_slab=16 order=0
#            min_partial=5 cpu_partial=0 sheaf_capacity=- args=-
#   rfl_fwd: tune cond=tuned cpu_partial=0->refused min_partial=5->9
#   rfl_fwd: run cond=default rep=1 round=0 path=shim packets=500000 forwarded=500000 ns=68812345
#            free=shim complete=1
#   rfl_fwd: slab cond=default rep=1 path=shim cache=skbuff_head_cache alloc_fastpath=123 ...
#   rfl_fwd: error <what>        (the host fails the run)
#   rfl_fwd: done
FWD_PATHS="shim napi any"
FWD_SLAB_STATS="alloc_fastpath alloc_slowpath free_fastpath free_slowpath free_frozen
	free_add_partial free_remove_partial alloc_from_partial alloc_slab alloc_refill free_slab
	cpuslab_flush deactivate_full deactivate_empty deactivate_to_head deactivate_to_tail
	deactivate_remote_frees deactivate_bypass cmpxchg_double_cpu_fail cmpxchg_double_fail
	cpu_partial_alloc cpu_partial_free cpu_partial_node cpu_partial_drain sheaf_flush
	sheaf_refill sheaf_alloc sheaf_free barn_get barn_get_fail barn_put barn_put_fail"

fwd_out() { echo "rfl_fwd: $*" >/dev/console; }

# fwd_attr NAME: skbuff_head_cache's sysfs attribute NAME, or "-" where the kernel has none.
fwd_attr() {
	if [ -r "$skb_head_slab"/"$1" ]; then cut -d' ' -f1 "$skb_head_slab"/"$1"; else echo -; fi
}

# fwd_slab_snapshot FILE: "cache counter value" for every cache (not its aliases) and counter.
fwd_slab_snapshot() {
	for c in /sys/kernel/slab/*; do
		if [ -L "$c" ] || [ ! -e "$c/alloc_fastpath" ]; then
			continue
		fi
		for s in $FWD_SLAB_STATS; do
			[ -e "$c/$s" ] && read -r v _ <"$c/$s" && echo "${c##*/} $s $v"
		done
	done >"$1"
}

# fwd_slab_delta BEFORE AFTER TAG: one line per cache whose counters moved by at least one per
# 100 frames of the run (reading the counters itself allocates a few thousand objects of other
# caches, which stay below that).
fwd_slab_delta() {
	awk -v tag="$3" -v min=$((FWD_PACKETS / 100)) '
		NR == FNR { before[$1 " " $2] = $3; next }
		{ d = $3 - before[$1 " " $2]; if (d > 0) { moved[$1] += d; line[$1] = line[$1] " " $2 "=" d } }
		END { for (c in moved) if (moved[c] >= min) print "rfl_fwd: slab " tag " cache=" c line[c] }
	' "$1" "$2" >/dev/console
}

# fwd_burst COND REP ROUND PATH FRAMES: one burst of FRAMES through PATH, and its line; around
# it, the counters when FWD_STATS is 1 (then the repetition has one round: its line is the
# repetition's).
fwd_burst() {
	echo "$4" >"$fwd_params"/tx_free || { fwd_out "error tx_free=$4 refused"; return 1; }
	[ "$FWD_STATS" != 1 ] || fwd_slab_snapshot /tmp/fwd-slab-before
	fwd_run "$5" || { fwd_out "error path=$4: run $fwd_result"; return 1; }
	if [ "$FWD_STATS" = 1 ]; then
		fwd_slab_snapshot /tmp/fwd-slab-after
		fwd_slab_delta /tmp/fwd-slab-before /tmp/fwd-slab-after "cond=$1 rep=$2 path=$4"
	fi
	fwd_out "run cond=$1 rep=$2 round=$3 path=$4 $fwd_result"
}

# fwd_repetition COND REP: FWD_ROUNDS rounds, each a burst of FWD_PACKETS / FWD_ROUNDS frames
# through every path, in an order that rotates by one from one round to the next (the
# collector adds a repetition's bursts up per path).  Short bursts interleaved cancel the
# host's slow drift from the paired differences, which whole runs one after the other do not.
fwd_repetition() {
	round=0
	while [ $round -lt "$FWD_ROUNDS" ]; do
		# shellcheck disable=SC2086 # FWD_PATHS: a list of words
		for path in $(fwd_rotate $(((($2 - 1) * FWD_ROUNDS + round) % 3)) $FWD_PATHS); do
			fwd_burst "$1" "$2" $round "$path" $((FWD_PACKETS / FWD_ROUNDS)) || return
		done
		round=$((round + 1))
	done
}

# fwd_rotate N WORD...: the words, rotated left by N.
fwd_rotate() {
	n=$1
	shift
	while [ "$n" -gt 0 ]; do
		w=$1
		shift
		set -- "$@" "$w"
		n=$((n - 1))
	done
	echo "$@"
}

# fwd_tune COND: set COND up (saving what it changes), and say what was taken:
#   default  nothing;
#   tuned    skbuff_head_cache's cpu_partial 256 and min_partial 9, where the kernel takes them;
#   1cpu     both ports' interrupts on CPU 0;
#   2cpu     fwdnic0's (RX) on CPU 0, fwdnic1's (TX completion) on CPU 1.
fwd_tune() {
	case $1 in
	tuned)
		fwd_saved_cpu=$(fwd_attr cpu_partial) fwd_saved_min=$(fwd_attr min_partial)
		cpu="$fwd_saved_cpu->refused" min="$fwd_saved_min->refused"
		echo 256 >"$skb_head_slab"/cpu_partial 2>/dev/null && cpu="$fwd_saved_cpu->256"
		echo 9 >"$skb_head_slab"/min_partial 2>/dev/null && min="$fwd_saved_min->9"
		fwd_out "tune cond=$1 cpu_partial=$cpu min_partial=$min"
		;;
	1cpu | 2cpu)
		tx=0
		[ "$1" = 1cpu ] || tx=1
		if echo 0 >"$fwd_params"/rx_cpu && echo $tx >"$fwd_params"/tx_cpu; then
			fwd_out "tune cond=$1 rx_cpu=0 tx_cpu=$tx"
		else
			fwd_out "error cond=$1: rx_cpu=0 tx_cpu=$tx refused"
		fi
		;;
	esac
}

fwd_untune() {
	case $1 in
	tuned)
		echo "$fwd_saved_cpu" >"$skb_head_slab"/cpu_partial 2>/dev/null
		echo "$fwd_saved_min" >"$skb_head_slab"/min_partial 2>/dev/null
		;;
	1cpu | 2cpu) echo -1 >"$fwd_params"/rx_cpu && echo -1 >"$fwd_params"/tx_cpu ;;
	esac
}

# shellcheck disable=SC2086 # FWD_ARGS: zero or more parameters
if [ "$FWD_STATS" = 1 ] && [ "$FWD_ROUNDS" != 1 ]; then
	fwd_out "error FWD_STATS=1 needs FWD_ROUNDS=1"
elif fwd_setup "$FWD_MODULE" $FWD_ARGS; then
	merged=0 cache=skbuff_head_cache
	if [ -L "$skb_head_slab" ]; then
		merged=1 cache=$(basename "$(readlink "$skb_head_slab")")
	fi
	fwd_out "setup kernel=$(uname -r) cpus=$(grep -c '^processor' /proc/cpuinfo)" \
		"packets=$((FWD_PACKETS / FWD_ROUNDS * FWD_ROUNDS)) runs=$FWD_RUNS rounds=$FWD_ROUNDS conds=$(echo $FWD_CONDS | tr ' ' ,)" \
		"stats=$FWD_STATS" \
		"merged=$merged cache=$cache object_size=$(fwd_attr object_size)" \
		"objs_per_slab=$(fwd_attr objs_per_slab) order=$(fwd_attr order)" \
		"min_partial=$(fwd_attr min_partial) cpu_partial=$(fwd_attr cpu_partial)" \
		"sheaf_capacity=$(fwd_attr sheaf_capacity) args=$(echo "${FWD_ARGS:--}" | tr ' ' ,)" \
		"qlen=${FWD_QLEN:-1000}"
	if [ -n "${FWD_QLEN:-}" ] && ! busybox ip link set fwdnic1 qlen "$FWD_QLEN"; then
		fwd_out "error qlen $FWD_QLEN refused"
	fi
	for path in $FWD_PATHS; do
		if ! { echo "$path" >"$fwd_params"/tx_free && fwd_run "$FWD_PACKETS"; }; then
			fwd_out "error warm-up $path: $fwd_result"
		fi
	done
	for cond in $FWD_CONDS; do
		fwd_tune "$cond"
		rep=1
		while [ $rep -le "$FWD_RUNS" ]; do
			fwd_repetition "$cond" $rep
			rep=$((rep + 1))
		done
		fwd_untune "$cond"
	done
	fwd_links down
else
	fwd_out "error setup failed"
fi
fwd_out "done"
