# shellcheck shell=sh
# Guest plan snippet (UML um-bench, or um-stats for the slab counters): IPv4 forwarding
# through fwdnic with each TX-completion free path, in the conditions of 2015.  Append it to a
# plan after skb_heads.sh and fwd_lib.sh; scripts/bench.sh writes the FWD_* settings above
# them, runs it (make bench) and scripts/collect_fwd.py turns its lines into
# results/fwd-uml-<version>.{json,md}.
#
# The arms (FWD_PATHS, "shim napi napi-nodefer any slab-bulk"): fwdnic's tx_free paths, and
# napi-nodefer, tx_free=napi with /proc/sys/net/core/skb_defer_max 0 for its bursts (restored
# after each), which stops 7.x's napi_consume_skb() from handing skbs back to the CPU that
# allocated them.  Where napi_consume_skb() does not defer (6.x; FWD_DEFERS=0, which the host
# finds in the tree), napi-nodefer would be napi again: it is left out, and the setup line says
# so (absent=napi-nodefer:napi_consume_skb-does-not-defer).
#
# Settings (from the host):
#   FWD_MODULE   fwdnic.ko, FWD_ARGS its parameters (none by default)
#   FWD_PACKETS  frames per cell and repetition, a cell being one arm at one tx_coalesce and
#                one min_partial; FWD_RUNS repetitions per condition
#   FWD_ROUNDS   the bursts a cell's frames are cut into (1 where FWD_STATS is 1: the
#                counters are read around each burst)
#   FWD_COALESCE fwdnic's tx_coalesce values, paired within a round ("32 128 256"; default
#                "128"), written to /sys/module/fwdnic/parameters/tx_coalesce before a burst
#   FWD_MIN_PARTIAL  skbuff_head_cache's min_partial values, paired within a round
#                ("default 9"; default "default": what the condition left, read after it is set
#                up); a value the kernel refuses leaves the dimension out, and the knob line
#                says so
#   FWD_CONDS    the conditions, of fwd_tune below: "default" (or "default tuned") on one CPU;
#                "1cpu 2cpu cross" on two
#   FWD_STATS    1: around each burst, the SLUB counters of every cache whose counters moved
#                by one per 100 frames or more (CONFIG_SLUB_STATS)
#   FWD_QLEN     both ports' qdisc length, if not the default 1000
#   FWD_DEFERS   1 if napi_consume_skb() defers to the allocating CPU, 0 if not, "auto" (the
#                default) for 7.x and later
#   FWD_CROSS_DST  the reverse flow's destination, given a permanent neighbour on fwdnic0 in
#                the cross condition (198.18.0.1: fwdnic's flow 2 is 172.16.0.66 -> 198.18.0.1)
#
# How the bursts multiply.  A round runs every cell once, nested: for each min_partial (in an
# order rotating by one from round to round), for each tx_coalesce (rotating likewise), every
# arm back to back (rotating by one from one group of arms to the next, so that no arm keeps a
# place): arms x coalesce values x min_partial values bursts, 5 x 3 x 2 = 30 with the main
# boot's settings.  A repetition is FWD_ROUNDS rounds; a condition FWD_RUNS repetitions.  So a
# condition forwards arms x cells x FWD_PACKETS x FWD_RUNS frames, in
# arms x cells x FWD_ROUNDS x FWD_RUNS bursts, each FWD_PACKETS / FWD_ROUNDS frames (the host
# sizes FWD_PACKETS per cell: scripts/bench.sh, fwd_kernel).  The arms of one group are
# adjacent in time, which is what the paired differences between arms need; the coalesce and
# min_partial cells of one arm are within one round of each other.
# One untimed burst of FWD_PACKETS frames through each arm warms up first.
#
# Lines:
#   rfl_fwd: setup kernel=6.12.107 cpus=1 packets=1333328 runs=5 rounds=8 conds=default
#            stats=0 paths=shim,napi,any,slab-bulk absent=napi-nodefer:napi_consume_skb-does-not-defer
#            coal=32,128,256 mp=default,9 merged=0 cache=skbuff_head_cache object_size=208
#            objs_per_slab=16 order=0 min_partial=5 cpu_partial=0 sheaf_capacity=- args=-
#            qlen=1000 skb_defer_max=128 shim=1
#   rfl_fwd: knob name=cpu_partial value=256 taken=0 was=0
#   rfl_fwd: knob cond=default name=min_partial values=5,9 asked=default,9 taken=1 was=5
#   rfl_fwd: tune cond=cross flows=2 rx_cpu=0 tx_cpu=1 neigh=198.18.0.1
#   rfl_fwd: run cond=default rep=1 round=0 path=shim coal=128 mp=5 packets=166666
#            forwarded=166666 ns=22912345 flows=1 free=shim complete=1
#   rfl_fwd: count cond=default rep=1 round=0 path=shim coal=128 mp=5 forw=166666
#            rx0=166666 tx0=0 rxdrop0=0 txdrop0=0 rx1=0 tx1=166666 rxdrop1=0 txdrop1=0
#            pgalloc=3336 calls=5209 skbs=166666
#   rfl_fwd: slab cond=default rep=1 path=shim coal=128 mp=5 cache=skbuff_head_cache alloc_fastpath=123 ...
#   rfl_fwd: error <what>        (the host fails the run)
#   rfl_fwd: done
# (each on one line).  The count line is the run's independent counts, each the difference
# over the burst: forw ForwDatagrams (/proc/net/snmp), rxN/txN/rxdropN/txdropN fwdnicN's
# rx_packets, tx_packets, rx_dropped, tx_dropped (/sys/class/net/fwdnicN/statistics), pgalloc
# the pages the page allocator handed out (the sum of /proc/vmstat's pgalloc_*, in base pages:
# an order-3 page counts 8), calls/skbs the shim's bulk frees and the skbs they freed
# (/sys/module/ixgbe_bulk_shim/parameters/batches; "-" without the shim).  The collector checks
# them against forwarded and fails the run on a mismatch.
FWD_PATHS=${FWD_PATHS:-shim napi napi-nodefer any slab-bulk}
FWD_COALESCE=${FWD_COALESCE:-128}
FWD_MIN_PARTIAL=${FWD_MIN_PARTIAL:-default}
FWD_DEFERS=${FWD_DEFERS:-auto}
FWD_CROSS_DST=${FWD_CROSS_DST:-198.18.0.1}
# Every counter of both kernels' SLUB (6.12's per-CPU slabs, 7.x's sheaves): a kernel has some.
FWD_SLAB_STATS="alloc_fastpath alloc_slowpath free_fastpath free_slowpath free_frozen
	free_add_partial free_remove_partial alloc_from_partial alloc_slab alloc_refill free_slab
	cpuslab_flush deactivate_full deactivate_empty deactivate_to_head deactivate_to_tail
	deactivate_remote_frees deactivate_bypass cmpxchg_double_cpu_fail cmpxchg_double_fail
	cpu_partial_alloc cpu_partial_free cpu_partial_node cpu_partial_drain alloc_node_mismatch
	order_fallback free_rcu_sheaf free_rcu_sheaf_fail sheaf_flush sheaf_refill sheaf_alloc
	sheaf_free barn_get barn_get_fail barn_put barn_put_fail sheaf_prefill_fast
	sheaf_prefill_slow sheaf_prefill_oversize sheaf_return_fast sheaf_return_slow"
fwd_shim_batches=/sys/module/ixgbe_bulk_shim/parameters/batches

fwd_out() { echo "rfl_fwd: $*" >/dev/console; }

# fwd_attr NAME: skbuff_head_cache's sysfs attribute NAME, or "-" where the kernel has none.
fwd_attr() {
	if [ -r "$skb_head_slab"/"$1" ]; then cut -d' ' -f1 "$skb_head_slab"/"$1"; else echo -; fi
}

# fwd_count_words: the names of fwd_counters' values, in its order.
fwd_count_words="forw rx0 tx0 rxdrop0 txdrop0 rx1 tx1 rxdrop1 txdrop1 pgalloc calls skbs"

# fwd_counters [BEFORE]: the independent counts, in one process (a fork costs milliseconds in
# UML): without BEFORE their values, in fwd_count_words' order; with BEFORE (an earlier output)
# "name=difference" for each.  "-" for a counter the kernel does not have.
fwd_counters() {
	awk -v before="${1:-}" -v names="$fwd_count_words" -v shim="$fwd_shim_batches" '
		function val(f,   l, a) {
			l = "-"
			if ((getline l <f) > 0) { split(l, a, " "); l = a[1] } else l = "-"
			close(f)
			return l
		}
		BEGIN {
			forw = "-"
			while ((getline l <"/proc/net/snmp") > 0) {
				n = split(l, a, " ")
				if (a[1] != "Ip:")
					continue
				if (!col) {
					for (i = 2; i <= n; i++)
						if (a[i] == "ForwDatagrams")
							col = i
					if (!col)
						break
					continue
				}
				forw = a[col]
				break
			}
			close("/proc/net/snmp")
			pg = "-"
			while ((getline l <"/proc/vmstat") > 0) {
				split(l, a, " ")
				if (a[1] ~ /^pgalloc_/)
					pg += a[2]
			}
			close("/proc/vmstat")
			v[1] = forw
			k = 2
			for (p = 0; p < 2; p++) {
				d = "/sys/class/net/fwdnic" p "/statistics/"
				v[k++] = val(d "rx_packets")
				v[k++] = val(d "tx_packets")
				v[k++] = val(d "rx_dropped")
				v[k++] = val(d "tx_dropped")
			}
			v[k++] = pg == "-" ? pg : sprintf("%.0f", pg)
			calls = skbs = "-"
			if ((getline l <shim) > 0 && l ~ /^calls=[0-9]+ skbs=[0-9]+/) {
				gsub(/[a-z]+=/, "", l)
				split(l, a, " ")
				calls = a[1]
				skbs = a[2]
			}
			close(shim)
			v[k++] = calls
			v[k++] = skbs
			nn = split(names, nm, " ")
			nb = split(before, b, " ")
			out = ""
			for (i = 1; i <= nn; i++) {
				if (before == "")
					w = v[i]
				else if (v[i] == "-" || b[i] == "-" || nb != nn)
					w = nm[i] "=-"
				else
					w = nm[i] "=" sprintf("%.0f", v[i] - b[i])
				out = out (i > 1 ? " " : "") w
			}
			print out
		}'
}

# fwd_slab_snapshot FILE: "cache counter value" for every cache (not its aliases) and counter,
# read by one process (a shell loop reading each of some 4000 files costs seconds in UML).
fwd_slab_snapshot() {
	for c in /sys/kernel/slab/*; do
		[ -L "$c" ] || [ ! -e "$c/alloc_fastpath" ] || echo "$c"
	done | awk -v stats="$FWD_SLAB_STATS" '
		BEGIN { ns = split(stats, s, /[ \t\n]+/) }
		{
			n = split($0, p, "/")
			for (i = 1; i <= ns; i++) {
				if (s[i] == "")
					continue
				f = $0 "/" s[i]
				if ((getline l <f) > 0) {
					split(l, a, " ")
					print p[n], s[i], a[1]
				}
				close(f)
			}
		}' >"$1"
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

# fwd_burst COND REP ROUND ARM COAL MP FRAMES: one burst of FRAMES through ARM (tx_coalesce
# and min_partial already set), its run line and its count line.  Around it, in this order so
# that neither reading lands in the other's figures: the slab counters when FWD_STATS is 1
# (then the repetition has one round: its line is the repetition's), and the independent
# counts.  napi-nodefer's skb_defer_max 0 is restored after the counts are read.
fwd_burst() {
	free=$4
	[ "$4" != napi-nodefer ] || free=napi
	echo "$free" >"$fwd_params"/tx_free || { fwd_out "error tx_free=$free refused"; return 1; }
	if [ "$4" = napi-nodefer ] && ! echo 0 >$fwd_defer_max; then
		fwd_out "error path=$4: skb_defer_max 0 refused"
		return 1
	fi
	[ "$FWD_STATS" != 1 ] || fwd_slab_snapshot /tmp/fwd-slab-before
	counts=$(fwd_counters)
	fwd_run "$7"
	status=$?
	counts=$(fwd_counters "$counts")
	if [ "$4" = napi-nodefer ] && ! echo "$fwd_defer_saved" >$fwd_defer_max; then
		fwd_out "error path=$4: skb_defer_max $fwd_defer_saved not restored"
		return 1
	fi
	[ $status = 0 ] || { fwd_out "error path=$4: run $fwd_result"; return 1; }
	if [ "$FWD_STATS" = 1 ]; then
		fwd_slab_snapshot /tmp/fwd-slab-after
		fwd_slab_delta /tmp/fwd-slab-before /tmp/fwd-slab-after \
			"cond=$1 rep=$2 path=$4 coal=$5 mp=$6"
	fi
	fwd_out "run cond=$1 rep=$2 round=$3 path=$4 coal=$5 mp=$6 $fwd_result"
	fwd_out "count cond=$1 rep=$2 round=$3 path=$4 coal=$5 mp=$6 $counts"
}

# fwd_set_mp VALUE: skbuff_head_cache's min_partial, where the dimension has more than one.
fwd_set_mp() {
	[ "$fwd_nmp" -gt 1 ] || return 0
	echo "$1" >"$skb_head_slab"/min_partial || { fwd_out "error min_partial=$1 refused"; return 1; }
}

# fwd_repetition COND REP: FWD_ROUNDS rounds, each a burst of FWD_PACKETS / FWD_ROUNDS frames
# of every cell, nested as the header says (the collector adds a repetition's bursts up per
# cell).  Short bursts interleaved cancel the host's slow drift from the paired differences,
# which whole runs one after the other do not.
fwd_repetition() {
	round=0
	while [ $round -lt "$FWD_ROUNDS" ]; do
		g=$((($2 - 1) * FWD_ROUNDS + round)) k=0
		# shellcheck disable=SC2086 # lists of words
		for mp in $(fwd_rotate $((g % fwd_nmp)) $fwd_mps); do
			fwd_set_mp "$mp" || return
			for coal in $(fwd_rotate $((g % fwd_ncoal)) $FWD_COALESCE); do
				if ! echo "$coal" >"$fwd_params"/tx_coalesce; then
					fwd_out "error tx_coalesce=$coal refused"
					return 1
				fi
				for path in $(fwd_rotate $(((g * fwd_ncells + k) % fwd_npaths)) $fwd_paths); do
					fwd_burst "$1" "$2" $round "$path" "$coal" "$mp" $((FWD_PACKETS / FWD_ROUNDS)) ||
						return
				done
				k=$((k + 1))
			done
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

# fwd_words LIST: the number of words in LIST.
fwd_words() {
	# shellcheck disable=SC2086 # a list of words
	set -- $1
	echo $#
}

# fwd_cpus RX TX COND: both ports' interrupts on CPUs RX and TX, or an error line.
fwd_cpus() {
	if echo "$1" >"$fwd_params"/rx_cpu && echo "$2" >"$fwd_params"/tx_cpu; then
		return 0
	fi
	fwd_out "error cond=$3: rx_cpu=$1 tx_cpu=$2 refused"
	return 1
}

# fwd_tune COND: set COND up (saving what it changes), and say what was taken:
#   default  nothing;
#   tuned    skbuff_head_cache's cpu_partial 256 and min_partial 9, where the kernel takes them
#            (the min_partial dimension's "default" is then 9);
#   1cpu     both ports' interrupts on CPU 0;
#   2cpu     fwdnic0's (RX) on CPU 0, fwdnic1's (TX completion) on CPU 1;
#   cross    two flows in opposite directions (fwdnic's flows=2: fwdnic1 receives
#            172.16.0.66 -> FWD_CROSS_DST, forwarded out of fwdnic0, which needs a permanent
#            neighbour for FWD_CROSS_DST there), fwdnic0's interrupt on CPU 0 and fwdnic1's on
#            CPU 1: each CPU receives one flow and completes the other's TX.
# Status 1 (after an error line) if the condition could not be set up: it is not run.
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
		fwd_cpus 0 $tx "$1" && fwd_out "tune cond=$1 rx_cpu=0 tx_cpu=$tx"
		;;
	cross)
		if [ ! -w "$fwd_params"/flows ]; then
			fwd_out "error cond=cross: fwdnic has no writable flows parameter"
			return 1
		elif ! echo 2 >"$fwd_params"/flows; then
			fwd_out "error cond=cross: flows=2 refused"
			return 1
		elif ! busybox arp -i fwdnic0 -s "$FWD_CROSS_DST" 02:00:00:00:00:01; then
			fwd_out "error cond=cross: neighbour $FWD_CROSS_DST on fwdnic0 refused"
			return 1
		fi
		fwd_cpus 0 1 "$1" && fwd_out "tune cond=$1 flows=2 rx_cpu=0 tx_cpu=1 neigh=$FWD_CROSS_DST"
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
	cross)
		[ ! -w "$fwd_params"/flows ] || echo 1 >"$fwd_params"/flows
		busybox arp -i fwdnic0 -d "$FWD_CROSS_DST" 2>/dev/null
		echo -1 >"$fwd_params"/rx_cpu && echo -1 >"$fwd_params"/tx_cpu
		;;
	esac
}

# fwd_mp_values COND: the min_partial dimension's values for the condition just set up ("default"
# is what skbuff_head_cache has now), into fwd_mps and fwd_nmp; each other value is tried once
# and the default written back (fwd_mp_was): one the kernel refuses leaves the dimension out.
fwd_mp_values() {
	fwd_mp_was=$(fwd_attr min_partial) fwd_mps='' taken=1
	for v in $FWD_MIN_PARTIAL; do
		[ "$v" != default ] || v=$fwd_mp_was
		case " $fwd_mps " in *" $v "*) continue ;; esac
		if [ "$v" != "$fwd_mp_was" ]; then
			if [ "$fwd_mp_was" = - ] || ! echo "$v" >"$skb_head_slab"/min_partial 2>/dev/null; then
				taken=0
				continue
			fi
			echo "$fwd_mp_was" >"$skb_head_slab"/min_partial
		fi
		fwd_mps="$fwd_mps $v"
	done
	fwd_mps=${fwd_mps# }
	[ -n "$fwd_mps" ] || fwd_mps=$fwd_mp_was
	fwd_nmp=$(fwd_words "$fwd_mps") fwd_ncells=$((fwd_ncoal * fwd_nmp))
	fwd_out "knob cond=$1 name=min_partial values=$(echo "$fwd_mps" | tr ' ' ,)" \
		"asked=$(echo "$FWD_MIN_PARTIAL" | tr ' ' ,) taken=$taken was=$fwd_mp_was"
}

# The arms this kernel has: napi-nodefer only where napi_consume_skb() defers.
if [ "$FWD_DEFERS" = auto ]; then
	FWD_DEFERS=0
	[ "$(uname -r | cut -d. -f1)" -lt 7 ] || FWD_DEFERS=1
fi
fwd_paths='' fwd_absent=''
for path in $FWD_PATHS; do
	if [ "$path" = napi-nodefer ] && [ "$FWD_DEFERS" != 1 ]; then
		fwd_absent="$fwd_absent,napi-nodefer:napi_consume_skb-does-not-defer"
	elif [ "$path" = napi-nodefer ] && [ ! -w $fwd_defer_max ]; then
		fwd_absent="$fwd_absent,napi-nodefer:no-skb_defer_max"
	else
		fwd_paths="$fwd_paths $path"
	fi
done
fwd_paths=${fwd_paths# } fwd_absent=${fwd_absent#,}
fwd_npaths=$(fwd_words "$fwd_paths") fwd_ncoal=$(fwd_words "$FWD_COALESCE")
fwd_defer_saved=-
[ ! -r $fwd_defer_max ] || fwd_defer_saved=$(cat $fwd_defer_max)

# shellcheck disable=SC2086 # FWD_ARGS: zero or more parameters
if [ "$FWD_STATS" = 1 ] && [ "$FWD_ROUNDS" != 1 ]; then
	fwd_out "error FWD_STATS=1 needs FWD_ROUNDS=1"
elif [ "$fwd_npaths" = 0 ] || [ "$fwd_ncoal" = 0 ]; then
	fwd_out "error no arms ($FWD_PATHS) or no tx_coalesce values ($FWD_COALESCE)"
elif fwd_setup "$FWD_MODULE" $FWD_ARGS; then
	merged=0 cache=skbuff_head_cache
	if [ -L "$skb_head_slab" ]; then
		merged=1 cache=$(basename "$(readlink "$skb_head_slab")")
	fi
	shim=0
	[ ! -r $fwd_shim_batches ] || shim=1
	fwd_coal_saved=$(cat "$fwd_params"/tx_coalesce)
	fwd_out "setup kernel=$(uname -r) cpus=$(grep -c '^processor' /proc/cpuinfo)" \
		"packets=$((FWD_PACKETS / FWD_ROUNDS * FWD_ROUNDS)) runs=$FWD_RUNS rounds=$FWD_ROUNDS conds=$(echo $FWD_CONDS | tr ' ' ,)" \
		"stats=$FWD_STATS paths=$(echo $fwd_paths | tr ' ' ,) absent=${fwd_absent:--}" \
		"coal=$(echo $FWD_COALESCE | tr ' ' ,) mp=$(echo $FWD_MIN_PARTIAL | tr ' ' ,)" \
		"merged=$merged cache=$cache object_size=$(fwd_attr object_size)" \
		"objs_per_slab=$(fwd_attr objs_per_slab) order=$(fwd_attr order)" \
		"min_partial=$(fwd_attr min_partial) cpu_partial=$(fwd_attr cpu_partial)" \
		"sheaf_capacity=$(fwd_attr sheaf_capacity) args=$(echo "${FWD_ARGS:--}" | tr ' ' ,)" \
		"qlen=${FWD_QLEN:-1000} skb_defer_max=$fwd_defer_saved shim=$shim coal_was=$fwd_coal_saved"
	# cpu_partial, 2015's other knob: 6.12's uniprocessor UML refuses all but 0, 7.x has none.
	was=$(fwd_attr cpu_partial) taken=0
	if echo 256 >"$skb_head_slab"/cpu_partial 2>/dev/null; then
		taken=1
		echo "$was" >"$skb_head_slab"/cpu_partial
	fi
	fwd_out "knob name=cpu_partial value=256 taken=$taken was=$was"
	# Both ports transmit in cross; on one CPU fwdnic0 never does.
	if [ -n "${FWD_QLEN:-}" ] && ! { busybox ip link set fwdnic0 qlen "$FWD_QLEN" &&
		busybox ip link set fwdnic1 qlen "$FWD_QLEN"; }; then
		fwd_out "error qlen $FWD_QLEN refused"
	fi
	for path in $fwd_paths; do
		[ "$path" != napi-nodefer ] || continue
		if ! { echo "$path" >"$fwd_params"/tx_free && fwd_run "$FWD_PACKETS"; }; then
			fwd_out "error warm-up $path: $fwd_result"
		fi
	done
	for cond in $FWD_CONDS; do
		if fwd_tune "$cond"; then
			fwd_mp_values "$cond"
			rep=1
			while [ $rep -le "$FWD_RUNS" ] && fwd_repetition "$cond" $rep; do
				rep=$((rep + 1))
			done
			[ "$fwd_nmp" -le 1 ] || echo "$fwd_mp_was" >"$skb_head_slab"/min_partial
		fi
		fwd_untune "$cond"
	done
	echo "$fwd_coal_saved" >"$fwd_params"/tx_coalesce
	fwd_links down
else
	fwd_out "error setup failed"
fi
fwd_out "done"
