#!/usr/bin/env bash
# Where a forwarded packet's time goes in UML: one boot of a bench kernel running the
# forwarding benchmark's plan (scripts/guest/fwd_bench.sh) in one condition and one arm, under
# the host's `perf record -e cpu-clock` of every CPU, then the share of the samples per host
# thread and per binary (the UML kernel, the host kernel, the rest) and the functions that take
# the most.  The UML kernel is an ordinary host executable, so its symbols are resolved from
# the build's `linux`; the host kernel's time is what UML asks of it (signals, system calls,
# page faults, the SECCOMP traps of SMP UML's userspace).  It compares kernels and conditions
# (um-bench against um-bench-smp, 1cpu against cross), not figures: cpu-clock sampling slows a
# run, and the boot and warm-up are in the profile too.  Only the UML's own host processes are
# reported, so other work on the host changes the shares little.
#
# usage: fwd-profile.sh VERSION KIND COND [PATH]
#   KIND   um-bench or um-bench-smp (built by make bench)
#   COND   default (um-bench), or 1cpu, 2cpu, cross (um-bench-smp)
#   PATH   the arm: shim, napi (default), napi-nodefer, any, slab-bulk
# FWD_PACKETS (default 2000000) frames are forwarded; FWD_PROFILE_TOP (25) functions listed.
# FWD_PROFILE_IRQOFF=1 records the call chain of each of those rt_sigprocmask calls (the UML
# kernel has frame pointers) and lists the kernel functions that disabled or enabled
# interrupts (the first caller outside UML's own interrupt-flag code, and its caller), each
# with its share of the calls recorded.  Shares, not calls per frame: the recording starts once
# the plan has set up and misses however much of the run went by before perf attached.  Every
# call is recorded, some 300 bytes each, so this mode forwards 200000 frames unless
# FWD_PACKETS says otherwise.
# The perf data stays in $CACHE_DIR/run/fwd-profile-VERSION-KIND-COND-PATH.data.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
use_kernel "${1:?usage: fwd-profile.sh VERSION KIND COND [PATH]}"
kind=${2:?usage: fwd-profile.sh VERSION KIND COND [PATH]}
cond=${3:?usage: fwd-profile.sh VERSION KIND COND [PATH]}
arm=${4:-napi}
irqoff=${FWD_PROFILE_IRQOFF:-0}
if [ "$irqoff" = 1 ]; then packets=${FWD_PACKETS:-200000}; else packets=${FWD_PACKETS:-2000000}; fi
top=${FWD_PROFILE_TOP:-25}
command -v perf >/dev/null || die "fwd-profile.sh needs the host's perf (linux-perf)"
[ -x "$BUILD/$kind/linux" ] || die "no $kind kernel for $KVER: run make bench (or scripts/kernel.sh $KVER $kind)"
case $kind:$cond in
um-bench:default | um-bench-smp:1cpu | um-bench-smp:2cpu | um-bench-smp:cross) ;;
*) die "condition '$cond' is not one of $kind's (default on um-bench; 1cpu, 2cpu, cross on um-bench-smp)" ;;
esac
args=() qlen=
if [ "$kind" = um-bench-smp ]; then
	args=(seccomp=on ncpus=2)
	qlen=32767 # as make bench's smp boot: a descheduled host thread delays, it does not drop
fi
defers=0
awk '/^void napi_consume_skb\(/ { f = 1 } f && /skb_attempt_defer_free/ { d = 1 } f && /^}/ { f = 0 }
	END { exit !d }' "$TREE/net/core/skbuff.c" && defers=1

# The UML process maps its kernel from the path it has inside the toolchain root, which perf
# records as the root's directory on the host plus that path; a symbol directory maps it back.
symfs=$CACHE_DIR/run/fwd-profile-symfs
mkdir -p "$symfs$ROOT"
ln -sfn "$CACHE_DIR" "$symfs$ROOT$G_CACHE"

mkdir -p "$CACHE_DIR/run"
name=fwd-profile-$KVER-$kind-$cond-$arm
plan=$CACHE_DIR/run/$name-plan.sh data=$CACHE_DIR/run/$name.data logf=$CACHE_DIR/run/$name.log
rm -f "$data.sigprocmask" "$data.irqoff"
{
	echo "FWD_MODULE=$G_BUILD/$kind/drivers/net/fwdnic/fwdnic.ko"
	echo "FWD_ARGS='' FWD_PACKETS=$packets FWD_RUNS=1 FWD_ROUNDS=1 FWD_PATHS='$arm'"
	echo "FWD_CONDS='$cond' FWD_STATS=0 FWD_QLEN=$qlen FWD_DEFERS=$defers"
	cat "$PROJECT/scripts/guest/skb_heads.sh" "$PROJECT/scripts/guest/fwd_lib.sh" \
		"$PROJECT/scripts/guest/fwd_bench.sh"
} >"$plan"
log "$KVER $kind: $cond, $arm, $packets frames under perf record -e cpu-clock (all CPUs)"
perf record -q -a -e cpu-clock -F 4000 -o "$data" &
perf_pid=$!
"$PROJECT/scripts/uml-run.sh" "$KVER" "$kind" "$plan" "$logf" "${args[@]}" >/dev/null &
uml=$!
# The UML's host processes (its kernel, with a thread per CPU, and its userspace), found by
# the plan on its command line and its children, so that other work on the host is left out.
# Beside the samples, the UML kernel's host system calls that mask its IPI signal (SMP UML's
# interrupt disabling, see docs/benchmarks.md), counted from the plan's setup line on.
pids=" " counter=
while kill -0 "$uml" 2>/dev/null; do
	# Once the plan has set up (every CPU's thread exists), on the kernel's process.
	if [ -z "$counter" ] && grep -q 'rfl_fwd: setup' "$logf" 2>/dev/null; then
		for p in $(pgrep -x linux); do
			grep -q "rfl_plan=$G_CACHE/run/plan-$KVER-$kind.sh" "/proc/$p/cmdline" 2>/dev/null || continue
			if [ "$irqoff" = 1 ]; then
				perf record -q -g -e syscalls:sys_enter_rt_sigprocmask -p "$p" -o "$data.irqoff" &
			else
				perf stat -x, -e syscalls:sys_enter_rt_sigprocmask -p "$p" -o "$data.sigprocmask" &
			fi
			counter=$!
			break
		done
	fi
	for p in $(pgrep -f "rfl_plan=$G_CACHE/run/plan-$KVER-$kind.sh"); do
		for q in $p $(pgrep -P "$p"); do
			[[ $pids == *" $q "* ]] || pids+="$q "
		done
	done
	sleep 0.5
done
wait "$uml" || { kill -INT "$perf_pid"; die "the boot failed (log: $logf)"; }
kill -INT "$perf_pid"
wait "$perf_pid" || true
[ -z "$counter" ] || wait "$counter" || true
grep -q 'rfl_fwd: run .*complete=1' "$logf" || die "the run did not complete (log: $logf)"
grep 'rfl_fwd: run ' "$logf" | sed 's/.*rfl_fwd: //'
frames=$(sed -n 's/.*rfl_fwd: run .* forwarded=\([0-9]*\) .*/\1/p' "$logf" | awk '{ n += $1 } END { print n }')
# The plan's untimed warm-up burst (FWD_PACKETS frames, one flow; none for napi-nodefer) is
# counted too.
[ "$arm" = napi-nodefer ] || frames=$((frames + packets))
calls=$(awk -F, '/sys_enter_rt_sigprocmask/ { print $1 }' "$data.sigprocmask" 2>/dev/null || true)
[ -z "$calls" ] || echo "rt_sigprocmask calls of the UML kernel: $calls, $(awk -v c="$calls" -v f="$frames" \
	'BEGIN { printf "%.2f", c / f }') per frame forwarded (warm-up included: $frames frames)"
if [ "$irqoff" = 1 ] && [ -f "$data.irqoff" ]; then
	# The frames UML's interrupt-flag code itself adds (libc's wrapper, the signal mask, the
	# irq-flag helpers) are skipped; the next one is the caller that turned interrupts off or on.
	echo "== rt_sigprocmask calls recorded, percent by the kernel function that made them"
	perf script -i "$data.irqoff" --symfs "$symfs" -F ip,sym,dso 2>/dev/null | awk '
		function skip(s) { return s ~ /^(\[unknown\] \(.*libc[^\/]*\)|sigprocmask|__sigprocmask|pthread_sigmask|__pthread_sigmask|__local_ipi_set|os_local_ipi_(en|dis)able|(__)?(un)?block_signals(_trace)?|um_set_signals(_trace)?|arch_local_irq_.*|_raw_spin_(un)?lock_irq.*|raw_local_irq_.*)$/ }
		NF == 0 { if (n) { c[who]++; all++; n = 0 }; who = ""; k = 0; next }
		$NF ~ /kernel\.kallsyms/ { next }
		{ n++; s = $2; for (i = 3; i < NF; i++) s = s " " $i; sub(/\+0x[0-9a-f]+$/, "", s)
		  if (s == "[unknown]") s = s " " $NF
		  if (k < 2 && (k || !skip(s))) { who = k ? who " < " s : s; k++ } }
		END { if (n) { c[who]++; all++ }
		      for (w in c) printf "%6.2f %%  %s\n", 100 * c[w] / all, (w == "" ? "(no caller found)" : w) }' |
		sort -rn | head -"$top"
fi
pids=${pids# }
pids=${pids% }
pids=${pids// /,}

report() { perf report -i "$data" --stdio --no-children -q --pid "$pids" --symfs "$symfs" --kallsyms /proc/kallsyms --percent-limit "$1" "${@:2}" 2>/dev/null; }
echo "== samples per host thread of the UML and binary (percent of all samples)"
report 0.5 --sort pid,dso
echo "== the $top functions with the most samples, UML kernel and host kernel"
report 0.2 --sort dso,sym | head -"$top"
log "perf data: $data (perf report -i it for more)"
