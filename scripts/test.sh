#!/usr/bin/env bash
# make test: every test of the project, userspace and kernel, then one closing line
# "N passed, N failed" and a non-zero exit status if anything failed.
#
#   1. cargo (USERSPACE=0 skips it): the userspace twin and alf_queue (unit tests, doctests,
#      compile-fail doctests, stress tests), the compile-fail doctests again under nightly
#      rustdoc (which checks their error codes), then the loom model tests, the same tests under Miri (scripts/miri.sh),
#      and a short run of the model-based fuzzer (make fuzz runs 10^7 executions); and, with
#      USERSPACE=0 too, with no build or boot, make bench given a bad value of each parameter
#      of each benchmark module, which must refuse it first thing, in the module's words;
#   2. KUnit on UML through kunit.py (the test kernel: KASAN, kmemleak, lockdep, failslab):
#      the Rust doctests of the `kernel` crate, ours included, and the project's suites;
#   3. the same UML kernel booted again: rust_slab_bulk and rust_qmempool re-run through debugfs with
#      fail_page_alloc set up for the fault-injection tests' tasks, then a kmemleak scan;
#   4. QEMU x86_64 under TCG with 2 CPUs and an igb NIC (KASAN): the project's suites built in,
#      then the sample modules loaded and what they report checked (the benchmark modules first
#      with every parameter out of bounds, refused in make bench's words; each scenario of the
#      alf_queue stress test counts as one test, the slab_bulk driver sample's verdict one
#      more), the skb free self-check, and pktgen through
#      igb's TX cleanup and the shim, with the skb head cache's count checked after each phase.
# Steps 2-4 run for each kernel of KERNELS (6.12 and 7.3 by default), each line of the summary
# tagged with its kernel.  Each step's log is under $CACHE_DIR/test-logs (<version>/ for a
# kernel's).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=bench-params.sh
. "$PROJECT/scripts/bench-params.sh"
# The orchestrator must reach its summary whatever a step finds: every failure is counted
# explicitly below, none may end the script.
set +e

logs=$CACHE_DIR/test-logs
rm -rf "$logs" && mkdir -p "$logs"
passed=0 failed=0
tag= # the kernel a step ran on, in the summary
group=0 # the summary's block for the step: 0 for userspace, then one per kernel
summary=()

# count STEP PASSED FAILED: add a step's counts to the totals.
count() {
	passed=$((passed + $2)) failed=$((failed + $3))
	summary+=("$group$(printf '\t%-62s %5d passed, %d failed' "$tag$1" "$2" "$3")")
	log "$tag$1: $2 passed, $3 failed"
}

# step NAME CMD...: run a step whose own failure (a build error, a crash) counts as one failure.
step() {
	local name=$1
	shift
	if ! "$@"; then
		count "$name (did not complete)" 0 1
		return 1
	fi
}

# bench_smoke BENCH MODULE: a benchmark sample loaded in QEMU passes if it loaded, printed its
# variants line (bench::header: names=, bulk=, runs=), one result line for each of its variants,
# bulk sizes and runs, none other, and its done line.
bench_smoke() {
	local bench=$1 module=$2 got
	# "lines expected" from the variants line, then the result lines that match a variant, size
	# and run of it, each counted once, and the result lines in all.
	got=$(awk -v bench="$bench" '
		{ sub(/\r$/, "") }
		$0 ~ "rfl_bench: variants bench=" bench " " {
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^names=/) nv = split(substr($i, 7), names, ",")
				if ($i ~ /^bulk=/) nb = split(substr($i, 6), sizes, ",")
				if ($i ~ /^runs=/) runs = substr($i, 6) + 0
			}
			for (v = 1; v <= nv; v++)
				for (b = 1; b <= nb; b++)
					for (r = 1; r <= runs; r++)
						want["variant=" names[v] " bulk=" sizes[b] " run=" r]
			header = 1
		}
		$0 ~ "rfl_bench: bench=" bench " " {
			all++
			key = $0
			sub(/.* variant=/, "variant=", key)
			sub(/ objs=.*/, "", key)
			if ((key in want) && !(key in seen)) { seen[key]; ok++ }
		}
		END { n = 0; for (k in want) n++; print (header ? n : -1), ok + 0, all + 0 }
	' "$klogs/qemu.log")
	read -r want ok all <<<"$got"
	if grep -q "rfl_guest: insmod ok $module.ko" "$klogs/qemu.log" &&
		grep -q "rfl_bench: done bench=$bench" "$klogs/qemu.log" && [ "$want" -gt 0 ] &&
		[ "$ok" = "$want" ] && [ "$all" = "$want" ]; then
		count "sample $module (QEMU)" 1 0
	else
		grep "rfl_\\|$module: FAIL" "$klogs/qemu.log" | tail -20 >&2
		if [ "$want" -lt 0 ]; then
			count "sample $module (QEMU): no variants line" 0 1
		else
			count "sample $module (QEMU): $ok of $want result lines ($all in all)" 0 1
		fi
	fi
}

# The slab benchmark's stack sweep: for each of its sizes, a covered= line saying that it reached
# every 16-byte offset of a page (256), and a line per offset and pair of loops (2) for each.
stack_sweep_smoke() {
	local b covered lines bad=
	for b in 8 16; do
		covered=$(tr -d '\r' <"$klogs/qemu.log" |
			sed -n "s/.*rfl_bench: stack bench=slab_bulk bulk=$b covered=\([0-9]*\).*/\1/p" | head -1)
		lines=$(tr -d '\r' <"$klogs/qemu.log" |
			sed -n "s/.*rfl_bench: stack bench=slab_bulk bulk=$b \(frame=0x[0-9a-f]*\) objs=[0-9]* \([a-z_]*\)=.*/\1 \2/p" |
			sort -u | wc -l)
		[ "${covered:-0}" = 256 ] && [ "$lines" = 512 ] || bad="$bad bulk=$b: covered=${covered:-none}, $lines lines;"
	done
	if [ -z "$bad" ]; then
		count "slab_bulk stack sweep, every offset of a page (QEMU)" 1 0
	else
		count "slab_bulk stack sweep (QEMU):$bad want covered=256 and 512 lines" 0 1
	fi
}

# verdict_line NAME PATTERN LOG: one test, passed if LOG's first line matching PATTERN says PASS.
verdict_line() {
	local line
	line=$(grep -o "$2" "$3" | head -1 || true)
	if [[ $line == *" PASS"* ]]; then
		count "$1" 1 0
	else
		echo "  ${line:-no line matching '$2'}" >&2
		count "$1: ${line:+FAIL}${line:-no result}" 0 1
	fi
}

# fwd_verdicts WHERE LOG: the phases of scripts/guest/fwd_test.sh, each a test.
fwd_verdicts() {
	local phase
	for phase in full down unload; do
		verdict_line "fwdnic forwarding, $phase $1" "rfl_test: fwdnic $phase [A-Z].*" "$2"
	done
}

# cargo_counts LOG: sum the "test result:" lines of cargo's output.
cargo_counts() {
	awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1) } }
	     END { print p + 0, f + 0 }' "$1"
}

cargo_step() {
	local name=$1 logf=$2
	shift 2
	log "$name"
	local rc=0
	(cd "$PROJECT" && "$@") >"$logf" 2>&1 || rc=$?
	read -r p f < <(cargo_counts "$logf")
	# A compile error or a crash fails the step even if no test reported a failure.
	[ "$rc" = 0 ] || [ "$f" -gt 0 ] || f=1
	[ "$rc" = 0 ] || grep -E '^error|panicked|FAILED|failed' "$logf" | head -20 >&2
	count "$name" "$p" "$f"
}

# kunit_counts JSON [SUITE...]: pass/fail counts of kunit.py's JSON; a missing SUITE fails.
kunit_counts() {
	python3 - "$@" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
p = f = 0
seen = set()
def walk(group):
    global p, f
    seen.add(group.get("name"))
    for case in group.get("test_cases", []):
        if case.get("status") == "PASS":
            p += 1
        elif case.get("status") != "SKIP":
            f += 1
            print("  failed:", group.get("name"), case.get("name"), file=sys.stderr)
    for sub in group.get("sub_groups", []):
        walk(sub)
walk(doc)
for suite in sys.argv[2:]:
    if suite not in seen:
        print(f"  suite {suite} did not run", file=sys.stderr)
        f += 1
print(p, f)
EOF
}

# kunit_parse LOG JSON: kunit.py's parser over a console log that holds KTAP output.
kunit_parse() {
	krun sh -c "cd $G_TREE && python3 tools/testing/kunit/kunit.py parse --json=$2 $1" >/dev/null 2>&1 || true
}

# rerun_counts SUITE NAME: "passed failed" of SUITE's debugfs re-run in the fault/kmemleak boot's
# log (its KTAP and JSON kept as NAME.ktap and NAME.json beside it); "0 1" if none was found.
rerun_counts() {
	sed -n "/rfl_guest: kunit results begin $1/,/rfl_guest: kunit results end/{/rfl_guest/!p}" \
		"$klogs/faults.log" >"$klogs/$2.ktap"
	kunit_parse "$G_klogs/$2.ktap" "$G_klogs/$2.json"
	kunit_counts "$klogs/$2.json" 2>/dev/null || echo "0 1"
}

# out_of_bounds KIND LO HI: a value one past the upper bound of a parameter of KIND and bounds
# LO to HI: the value itself (uint), or a list's second entry.
out_of_bounds() {
	if [ "$1" = uint ]; then echo $(($3 + 1)); else echo "$2,$(($3 + 1))"; fi
}

# bench_refusals: make bench with a bad value of each parameter of each benchmark module (the
# parameters and their bounds read from the modules' own bench::module_params! blocks), and a
# name no module has, one case each: each must fail at once with the module's refusal as its
# first line, with nothing provisioned, built or booted and results/ untouched.  CACHE_DIR is
# an empty file, under which nothing can be made: a value let through fails at the first
# step that would provision, build or boot, and the file is no longer alone and empty.  No
# boot: the QEMU step checks the modules' own words against these.  Then the same check with
# every shape of bad value of every parameter (negative, 2^32, 2^64, long digit strings, empty,
# blank, not a number, trailing garbage, other bases, lists with empty items or longer than the
# module's buffer, ...), the values the kernel's parser refuses before the module could say
# what it takes and the values it stores for the module to refuse, and good values in each
# spelling the kernel reads: scripts/bench-params-test.sh, without make (a case each).
bench_refusals() {
	local va var m table name kind lo hi arg want out rc cache before tp tf p=0 f=0
	local unset=(-u MAKEFLAGS -u MAKELEVEL) # a make of its own, whatever make test was given
	log "make bench refuses bad module parameters before it builds anything"
	cache=$(mktemp -d)
	: >"$cache/file"
	results_state() { find "$PROJECT/results" -printf '%p %s %T@\n' 2>/dev/null | sort | md5sum; }
	before=$(results_state)
	for va in $BENCH_ARGS_VARS; do unset+=(-u "${va%%:*}"); done
	# try VAR ARG WANT: one case, passed if make bench VAR=ARG fails with WANT first.
	try() {
		out=$(cd "$PROJECT" && env "${unset[@]}" CACHE_DIR="$cache/file" \
			timeout 120 make --no-print-directory bench "$1=$2" 2>&1)
		rc=$?
		if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$(head -1 <<<"$out")" = "$3" ] &&
			[ "$(find "$cache" -mindepth 1)" = "$cache/file" ] && [ ! -s "$cache/file" ]; then
			p=$((p + 1))
		else
			printf '  make bench %s=%s: exit %s, want first "%s", got:\n' "$1" "$2" "$rc" "$3" >&2
			head -5 <<<"$out" | sed 's/^/    /' >&2
			find "$cache" -mindepth 1 | head -5 | sed "s|^|    in $cache: |" >&2
			f=$((f + 1))
		fi
	}
	for va in $BENCH_ARGS_VARS; do
		var=${va%%:*} m=${va#*:}
		if ! table=$(module_params "$m"); then
			f=$((f + 1))
			continue
		fi
		while read -r name kind lo hi; do
			arg=$(out_of_bounds "$kind" "$lo" "$hi")
			want="$m: $name=$arg refused: "
			if [ "$kind" = uint ]; then
				want+="an integer from $lo to $hi"
			else
				want+="a comma-separated list of integers from $lo to $hi"
				want+=" ($(($(param_bound LIST_LEN bench_common) - 1)) characters at most)"
			fi
			try "$var" "$name=$arg" "$want"
		done <<<"$table"
		want="$m: unknown parameter 'no_such_param': it takes $(cut -d' ' -f1 <<<"$table" | paste -sd,)"
		try "$var" no_such_param=1 "${want//,/, }"
	done
	# A second line would run as a command of the guest's plan, unchecked.
	try SLAB_BULK_ARGS $'runs=5\nbusybox poweroff -f' \
		"error: SLAB_BULK_ARGS: a line break; the parameters go on one line"
	if [ "$(results_state)" != "$before" ]; then
		echo "  results/ changed" >&2
		f=$((f + 1))
	fi
	rm -rf "$cache"
	tp=0 tf=1
	read -r tp _ tf _ < <("$PROJECT/scripts/bench-params-test.sh" 2>"$logs/bench-params-test.log" |
		grep -E '^[0-9]+ passed, [0-9]+ failed$')
	if [ "$tf" != 0 ]; then
		echo "  scripts/bench-params-test.sh: ${tp:-0} passed, ${tf:-?} failed ($logs/bench-params-test.log):" >&2
		head -20 "$logs/bench-params-test.log" | sed 's/^/    /' >&2
	fi
	p=$((p + ${tp:-0})) f=$((f + ${tf:-1}))
	count "make bench refuses each bad module parameter, nothing built" "$p" "$f"
}

### The build lane, in the background: the toolchain root, then for each kernel, side by side,
### its tree, its UML test kernel and its x86 kernel.  A build leaves a CPU idle in its serial
### phases (Kconfig, the Rust crates, the links), which the other kernel's build fills.  The
### userspace tests and the UML steps run beside the lane, each waiting for the build it needs.
### The QEMU steps wait for the whole lane: a guest of 2 vCPUs sharing 2 CPUs with a build
### runs several times slower (a vCPU descheduled while its guest holds a lock or waits for
### the other CPU), and slows the build as much.
lane=$logs/lane
mkdir -p "$lane"
# lane_run NAME CMD...: run CMD in the lane, its output on the terminal, its status kept as NAME's.
lane_run() {
	local name=$1 rc=0
	shift
	"$@" || rc=$?
	echo "$rc" >"$lane/$name.rc"
	return "$rc"
}
# lane_ok NAME: whether NAME's job in the lane has run and succeeded.
lane_ok() { [ "$(cat "$lane/$1.rc" 2>/dev/null)" = 0 ]; }
build_lane() {
	if [ -z "${KDIR:-}" ]; then lane_run toolchain "$PROJECT/scripts/toolchain.sh" || return 0; fi
	local k
	for k in $KERNELS; do
		(
			lane_run "$k-tree" "$PROJECT/scripts/tree.sh" "$k" || exit 0
			lane_run "$k-um-test" "$PROJECT/scripts/kernel.sh" "$k" um-test || true
			lane_run "$k-x86-smp" "$PROJECT/scripts/kernel.sh" "$k" x86-smp || true
		) &
	done
	wait
}
build_lane &
lane_pid=$!
# wait_lane NAME: wait for NAME's build in the lane; its status (1 if the lane never ran it).
wait_lane() {
	while [ ! -f "$lane/$1.rc" ]; do
		if ! kill -0 "$lane_pid" 2>/dev/null; then
			[ -f "$lane/$1.rc" ] && break
			echo "  $1: not built (an earlier step of the build lane failed)" >&2
			return 1
		fi
		sleep 2
	done
	return "$(cat "$lane/$1.rc")"
}

### 1. userspace (USERSPACE=0 skips it, for a run of the kernel steps alone), in the background
### beside the build lane and the kernel steps, so that no kernel step waits for it.  Its
### counts and summary lines come back through files once it is done.
userspace_steps() {
	export CARGO_TERM_COLOR=never
	cargo_step "cargo test (twin, alf_queue)" "$logs/cargo.log" cargo test --workspace --release --no-fail-fast
	# Stable rustdoc runs a compile_fail doctest without checking its error code; nightly's
	# checks it, so that an example failing for another reason (a typo) does not pass.
	cargo_step "compile-fail doctests, error codes checked (nightly rustdoc)" "$logs/compile_fail.log" \
		env CARGO_TARGET_DIR="$PROJECT/target/nightly-doc" \
		cargo +nightly test --doc -p kernel --no-fail-fast -- compile_fail
	cargo_step "loom (alf_queue)" "$logs/loom.log" \
		env RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="$PROJECT/target/loom" \
		cargo test -p alf_queue --release --test loom --no-fail-fast
	cargo_step "Miri (twin, alf_queue API, doctests, small stress)" "$logs/miri.log" \
		env MIRI_QUICK=1 scripts/miri.sh
	# Three targets (slab with small objects, slab with order-3 slabs, queue), FUZZ_SHORT programs
	# each: its line counts the targets; the log has the executions, operations and seed.
	fuzz_short=${FUZZ_SHORT:-60000}
	cargo_step "model fuzzer, short run (3 x $fuzz_short programs)" "$logs/fuzz.log" \
		env FUZZ_CASES="$fuzz_short" cargo test --release -p kernel --test model_fuzz -- --nocapture
	printf '%s\n' "${summary[@]}" >"$logs/userspace.summary"
	echo "$passed $failed" >"$logs/userspace.counts"
}
userspace_pid=
if [ "${USERSPACE:-1}" != 0 ]; then
	userspace_steps &
	userspace_pid=$!
fi

### 2-4. each kernel
# on_kernel INDEX VERSION: the steps that follow are this kernel's.
on_kernel() {
	use_kernel "$2"
	group=$1 tag="$KVER  "
	klogs=$logs/$KVER G_klogs=$G_CACHE/test-logs/$KVER
	mkdir -p "$klogs"
}

# feature_cfgs: the kernel feature cfgs rustc got for the kernel crate in this kernel's build
# are those that scripts/kernel-features.sh gives its version, each is one the top Cargo.toml
# lists, and each lower-case cfg the Rust sources ask for is one that kernel_features.mk gives
# some version (a misspelt or unknown cfg would be silently false).
feature_cfgs() {
	local got want all asked unknown=
	got=$(grep -o -- '--cfg [a-z][a-z0-9_]*' "$BUILD/um-test/rust/.kernel.o.cmd" | cut -d' ' -f2 | sort -u)
	want=$("$PROJECT/scripts/kernel-features.sh" "$KVER" | sort -u)
	all=$("$PROJECT/scripts/kernel-features.sh" 999.0 | sort -u)
	asked=$(cd "$PROJECT" && overlay_files | grep '\.rs$' | xargs grep -ho 'cfg!\?(\(not(\|all(\|any(\)*[a-z][a-z0-9_]*' |
		grep -o '[a-z][a-z0-9_]*$' | grep -vxE 'not|all|any|loom|miri|test|doc|debug_assertions|feature|target_[a-z_]*' | sort -u)
	for c in $all; do grep -q "'cfg($c)'" "$PROJECT/Cargo.toml" || unknown="$unknown $c (not in Cargo.toml)"; done
	for c in $asked; do grep -qx "$c" <<<"$all" || unknown="$unknown $c (asked, given by no version)"; done
	if [ "$got" = "$want" ] && [ -z "$unknown" ]; then
		count "kernel feature cfgs: $(wc -w <<<"$want") for $KVER, as kernel-features.sh gives" 1 0
	else
		echo "  the build: $(paste -sd' ' <<<"$got"); kernel-features.sh $KVER: $(paste -sd' ' <<<"$want");$unknown" >&2
		count "kernel feature cfgs of the build as kernel-features.sh gives, all known" 0 1
	fi
}

# Steps 2 and 3, on UML.
kernel_uml_tests() {
	step "kernel tree" wait_lane "$KVER-tree" || return 0

	if step "build um-test" wait_lane "$KVER-um-test"; then
		feature_cfgs
		log "KUnit on UML (kunit.py)"
		krun sh -c "cd $G_TREE && python3 tools/testing/kunit/kunit.py exec --arch=um \
			--build_dir=$G_BUILD/um-test --json=$G_klogs/kunit.json" >"$klogs/kunit.log" 2>&1 || true
		if [ -s "$klogs/kunit.json" ]; then
			read -r p f < <(kunit_counts "$klogs/kunit.json" rust_doctests_kernel rust_slab_bulk rust_qmempool)
			count "KUnit on UML (kunit.py)" "$p" "$f"
		else
			tail -20 "$klogs/kunit.log" >&2
			count "KUnit on UML (kunit.py): no results" 0 1
		fi

		log "faults and leaks: rust_slab_bulk and rust_qmempool again, fwdnic (UML)"
		# fwd_prime first: the first IPv4 address of a boot allocates what no test should
		# answer for (scripts/guest/fwd_lib.sh).
		plan=$(mktemp)
		{
			echo "FWD_MODULE=$G_BUILD/um-test/drivers/net/fwdnic/fwdnic.ko FWD_ARGS=''"
			cat "$PROJECT/scripts/guest/skb_heads.sh" "$PROJECT/scripts/guest/fwd_lib.sh"
			printf '%s\n' 'fwd_prime "$FWD_MODULE"' "kmemleak_report before" fault_tasks_setup \
				"kunit_rerun rust_slab_bulk" "kunit_rerun rust_qmempool" "say 'fwdnic test begins'"
			cat "$PROJECT/scripts/guest/fwd_test.sh"
			echo "kmemleak_report after"
		} >"$plan"
		# The boot runs both suites once (the glob matches rust_qmempool and rust_slab_bulk), the
		# plan runs them again and kmemleak compares before and after.
		if step "fault/kmemleak boot (UML)" "$PROJECT/scripts/uml-run.sh" "$KVER" um-test "$plan" "$klogs/faults.log" \
			'kunit.filter_glob=rust_[qs][ml]*'; then
			# The suite's run in debugfs, with fail_page_alloc set up for marked tasks: this time
			# bulk_fault_positions must take its failure path.
			read -r p f < <(rerun_counts rust_slab_bulk faults-rerun)
			if ! grep -q 'rfl_test: slab_bulk positions armed=1' "$klogs/faults.log"; then
				echo "  bulk_fault_positions did not see fail_page_alloc set up" >&2
				f=$((f + 1))
			fi
			count "rust_slab_bulk with fail_page_alloc (UML)" "$p" "$f"
			read -r p f < <(rerun_counts rust_qmempool qmempool-rerun)
			count "rust_qmempool again, under kmemleak (UML)" "$p" "$f"
			fwd_verdicts "(UML)" "$klogs/faults.log"
			if sed -n '/fwdnic test begins/,/rfl_test: fwdnic done/p' "$klogs/faults.log" |
				grep -E 'BUG:|WARNING:|Oops|Kernel panic' | head -5 >&2; then
				count "fwdnic (UML): a KASAN report, warning or oops" 0 1
			else
				count "fwdnic (UML): no KASAN report, warning or oops" 1 0
			fi
			# What the suite leaked: the suspects of the second report that the first had not and
			# that were allocated after the first began. (A boot-time object can turn up in the
			# second report only, once a stale pointer to it somewhere has been overwritten; its
			# allocation time, in jiffies from INITIAL_JIFFIES = 2^32 - 300 HZ, tells it apart.)
			hz=$(sed -n 's/^CONFIG_HZ=//p' "$BUILD/um-test/.config")
			up=$(sed -n 's/.*rfl_guest: kmemleak uptime before \([0-9.]*\).*/\1/p' "$klogs/faults.log")
			# (%.0f: some awks clamp %d to 32 bits, which would make every boot-time object "new".)
			since=$(awk -v hz="${hz:-100}" -v up="${up:-0}" 'BEGIN { printf "%.0f", 4294967296 - 300 * hz + up * hz }')
			suspects() { # suspects LABEL [SINCE]: the addresses, of objects allocated at SINCE or later
				sed -n "/rfl_guest: kmemleak begin $1/,/rfl_guest: kmemleak end $1/p" "$klogs/faults.log" |
					awk -v since="${2:-0}" '/^unreferenced object 0x/ { a = $3 }
						/^ *comm .*jiffies [0-9]+/ { if (a != "" && $NF + 0 >= since + 0) print a; a = "" }' |
					sort -u
			}
			new_leaks=$(comm -13 <(suspects before) <(suspects after "$since"))
			if grep -q 'rfl_guest: kmemleak end after' "$klogs/faults.log" && [ -z "$new_leaks" ]; then
				count "kmemleak: no leak from rust_slab_bulk, rust_qmempool, fwdnic" 1 0
			else
				for a in $new_leaks; do grep -A12 "unreferenced object $a" "$klogs/faults.log"; done | head -60 >&2
				count "kmemleak: $(echo "$new_leaks" | grep -c .) leak(s) from rust_slab_bulk, rust_qmempool, fwdnic" 0 1
			fi
		fi
		rm -f "$plan"
	fi
}

# refusal_args MODULE: NAME=VALUE for each parameter of MODULE, each one past its upper bound.
refusal_args() {
	local name kind lo hi
	module_params "$1" | while read -r name kind lo hi; do
		printf '%s=%s ' "$name" "$(out_of_bounds "$kind" "$lo" "$hi")"
	done
}

# bench_modules: the benchmark modules whose parameters make bench takes, one a line.
bench_modules() {
	local va
	for va in $BENCH_ARGS_VARS; do echo "${va#*:}"; done | sort -u
}

# module_refusals LOG: each benchmark module, loaded in the boot of LOG with every parameter out
# of its bounds (refusal_args), must have failed to load after printing, parameter by parameter,
# the very lines make bench prints when it refuses those values (bench_refusals).  One test.
module_refusals() {
	local m want got bad=
	for m in $(bench_modules); do
		# shellcheck disable=SC2046 # the words, as the plan's load line has them
		want=$(check_module_args "$m" $(refusal_args "$m") 2>&1)
		# (Once each: UML's console prints every kernel line twice.)
		got=$(tr -d '\r' <"$1" | grep -o "$m: [a-z_]*=[^ ]* refused: .*" | awk '!seen[$0]++')
		if ! grep -q "rfl_guest: insmod failed $m.ko" "$1" || [ "$got" != "$want" ]; then
			printf '  %s: make bench says:\n%s\n  the module said:\n%s\n' "$m" "$want" "${got:-(nothing)}" >&2
			bad="$bad $m"
		fi
	done
	if [ -z "$bad" ]; then
		count "benchmark modules refuse bad parameters in make bench's words (QEMU)" 1 0
	else
		count "benchmark modules' refusals differ from make bench's:$bad (QEMU)" 0 1
	fi
}

# Step 4, on QEMU.
kernel_qemu_tests() {
	lane_ok "$KVER-tree" || return 0
	if step "build x86-smp" wait_lane "$KVER-x86-smp"; then
		log "QEMU x86_64, 2 CPUs (TCG)"
		plan=$(mktemp)
		for m in $(bench_modules); do echo "load /modules/$m.ko $(refusal_args "$m")"; done >"$plan"
		cat >>"$plan" <<-'EOF'
		load /modules/rust_slab_bulk_bench.ko bulk=1,16,64 objs=4096 runs=2 stack_sweep=16
		unload rust_slab_bulk_bench
		load /modules/rust_slab_bulk_driver.ko
		unload rust_slab_bulk_driver
		load /modules/rust_alf_queue_stress.ko
		unload rust_alf_queue_stress
		load /modules/rust_alf_queue_bench.ko bulk=1,16 elems=4096 runs=1
		unload rust_alf_queue_bench
		load /modules/rust_qmempool_bench.ko outstanding=1,256 objs=4096 runs=1
		unload rust_qmempool_bench
		load /modules/rust_qmempool_leak.ko
		unload rust_qmempool_leak
		if echo 2 >/proc/sys/vm/drop_caches && echo 0 >/sys/devices/system/cpu/cpu1/online &&
			echo 1 >/sys/devices/system/cpu/cpu1/online; then
			say "qmempool_leak: reclaim and CPU 1 offline and online after rmmod"
		else
			say "qmempool_leak: reclaim or CPU hotplug refused"
		fi
		load /modules/rust_skb_free_bench.ko check=1
		unload rust_skb_free_bench
		load /modules/rust_skb_free_bench.ko bulk=1,32 objs=4096 runs=2
		unload rust_skb_free_bench
		SHIM_COUNT=100000
		FWD_MODULE=/modules/fwdnic.ko FWD_ARGS='rx_cpu=0 tx_cpu=1' FWD_TEST_PACKETS=20000
		EOF
		cat "$PROJECT/scripts/guest/skb_heads.sh" "$PROJECT/scripts/guest/shim_pktgen.sh" \
			"$PROJECT/scripts/guest/fwd_lib.sh" "$PROJECT/scripts/guest/fwd_test.sh" >>"$plan"
		# slab_nomerge: skbuff_head_cache's object count must be its own (the shim's check).
		if step "QEMU boot" "$PROJECT/scripts/qemu-run.sh" "$KVER" "$plan" "$klogs/qemu.log" slab_nomerge; then
			kunit_parse "$G_klogs/qemu.log" "$G_klogs/qemu-kunit.json"
			read -r p f < <(kunit_counts "$klogs/qemu-kunit.json" rust_slab_bulk rust_qmempool 2>/dev/null || echo "0 1")
			count "KUnit on QEMU x86_64 (2 CPUs)" "$p" "$f"
			module_refusals "$klogs/qemu.log"
			# The benchmark samples as smoke tests: loaded, one line per variant, size and run, done.
			bench_smoke slab_bulk rust_slab_bulk_bench
			stack_sweep_smoke
			# A driver keeping objects of a module-lifetime cache across calls: its verdict,
			# printed at unload once the last requests are freed and the counts checked (a FAIL
			# line, at load or unload, or no line, fails).
			verdict_line "sample rust_slab_bulk_driver (QEMU)" "rfl_test: slab_bulk_driver [A-Z][A-Z]*" "$klogs/qemu.log"
			# The alf_queue stress test (kthreads on both CPUs, 10^7 items per scenario): each
			# scenario is a test, passed if its line says PASS and its threads ran on more than
			# one CPU; a FAIL line, a missing scenario or a missing done line fails.
			for s in mpmc_2p2c mpmc_2p2c_small spsc_1p1c; do
				line=$(grep -o "rfl_test: alf_queue_stress $s [A-Z].*" "$klogs/qemu.log" | head -1 || true)
				mask=$(echo "$line" | sed -n 's/.* cpus=\(0x[0-9a-f]*\).*/\1/p')
				why=
				if [ -z "$line" ]; then
					why="no result line"
				elif [[ $line != *" PASS "* ]]; then
					why="FAIL"
				elif [ -z "$mask" ] || (((mask & (mask - 1)) == 0)); then
					why="ran on one CPU only (cpus=$mask)"
				fi
				if [ -z "$why" ]; then
					count "alf_queue stress $s (QEMU, 2 CPUs)" 1 0
				else
					echo "  ${line:-no line for $s}" >&2
					count "alf_queue stress $s (QEMU): $why" 0 1
				fi
			done
			if ! grep -q 'rfl_test: alf_queue_stress done' "$klogs/qemu.log"; then
				grep 'rfl_' "$klogs/qemu.log" | tail -20 >&2
				count "alf_queue stress (QEMU): no done line" 0 1
			fi
			# (The C reference's self-checks fail the load with a FAIL line.)
			bench_smoke alf_queue rust_alf_queue_bench
		bench_smoke qmempool rust_qmempool_bench
		# A pool leaked by a module (rust_qmempool_leak.rs): after rmmod, reclaim and a CPU going
		# offline must call none of its callbacks (the module's going undid them: its line), and
		# its cache must have been kept for it (OwnedCache's line), not destroyed.
		why=
		for want in 'rfl_test: qmempool_leak loaded' 'qmempool: a module leaked a pool' \
			'slab_bulk: cache dropped while 1 leaked user' \
			'rfl_guest: qmempool_leak: reclaim and CPU 1 offline and online after rmmod'; do
			grep -q "$want" "$klogs/qemu.log" || why="$why; no line '$want'"
		done
		if [ -z "$why" ]; then
			count "a pool leaked by an unloaded module, then reclaim and CPU offline (QEMU)" 1 0
		else
			grep -E 'qmempool|rust_qmempool_leak' "$klogs/qemu.log" | tail -8 >&2
			count "a pool leaked by an unloaded module (QEMU)${why}" 0 1
		fi
		bench_smoke skb_free rust_skb_free_bench
		# The skb free paths, each skb released exactly once (a counting destructor), the skb
		# head cache back to its count; then igb's TX cleanup through the shim under pktgen,
		# to the end of the traffic and with the device taken down mid-traffic.
		verdict_line "skb free self-check (QEMU, 2 CPUs)" "rfl_test: skb_free [A-Z][A-Z]*" "$klogs/qemu.log"
		for phase in full down; do
			verdict_line "shim in igb TX cleanup, pktgen, $phase (QEMU)" \
				"rfl_test: shim_pktgen $phase [A-Z].*" "$klogs/qemu.log"
		done
		# fwdnic with RX on one CPU and TX completion on the other.
		fwd_verdicts "(QEMU, 2 CPUs)" "$klogs/qemu.log"
		if grep -E 'BUG: KASAN|WARNING:|Oops|Kernel panic' "$klogs/qemu.log" | head -5 >&2; then
			count "QEMU log: a KASAN report, warning or oops" 0 1
		else
			count "QEMU log: no KASAN report, warning or oops" 1 0
		fi
		fi
		rm -f "$plan"
	fi
}

bench_refusals
[ -n "${KDIR:-}" ] || step "toolchain" wait_lane toolchain
# each_kernel STEPS: run the function STEPS for each kernel, in KERNELS' order.
each_kernel() {
	local i=0 k
	for k in $KERNELS; do
		on_kernel $((i += 1)) "$k"
		"$1"
	done
}
each_kernel kernel_uml_tests
wait "$lane_pid"
each_kernel kernel_qemu_tests
tag='' group=0
if [ -n "$userspace_pid" ]; then
	wait "$userspace_pid"
	if read -r p f <"$logs/userspace.counts"; then
		passed=$((passed + p)) failed=$((failed + f))
		mapfile -t -O "${#summary[@]}" summary <"$logs/userspace.summary"
	else
		count "userspace steps (did not complete)" 0 1
	fi
fi

echo
# Each kernel's lines together, in the order they ran.
printf '%s\n' "${summary[@]}" | sort -s -t$'\t' -k1,1n | cut -f2-
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
