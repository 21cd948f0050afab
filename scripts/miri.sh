#!/usr/bin/env bash
# make miri: the userspace tests under Miri (cargo +nightly miri test), which checks every
# unsafe access against Rust's rules (use after free, double drop, aliasing, data races):
#
#   1. the twin: the shared slab_bulk selftests, the panic-path tests, a few fuzzer programs
#      (FUZZ_CASES, 4 by default), the doctests of slab_bulk (the compile_fail ones included)
#      but the one of ObjArray::init_in_place (4096 objects: minutes under Miri);
#      With MIRI_QUICK=1 (make test), also without bulk_fault_nth, which fails every allocation
#      point of every size in turn: three quarters of the twin's time under Miri, and run
#      natively by cargo test and as KUnit on both kernels;
#   2. alf_queue: the single-thread API tests (the model tests scaled down under cfg(miri)),
#      the doctests, and the multi-threaded stress tests with ALF_STRESS_ITEMS items each
#      (default 1000): small concurrent runs, which Miri explores with its own scheduler and
#      weak-memory emulation.
#
# Runs on the host (no kernel tree), with the nightly toolchain's miri and rust-src
# components, which it adds if they are missing. cargo's output is printed as is, so that
# scripts/test.sh can count its "test result:" lines; the last line is the time it took.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly miri --version >/dev/null 2>&1; then
	echo "miri: adding the miri and rust-src components to the nightly toolchain" >&2
	rustup component add --toolchain nightly miri rust-src >&2 || {
		echo "error: Miri needs the nightly toolchain with the miri and rust-src components" >&2
		exit 1
	}
fi
cargo +nightly miri setup >/dev/null 2>&1 || cargo +nightly miri setup

start=$SECONDS
# The twin's slab hands out objects by address (integer-to-pointer casts, as a C allocator
# does): permissive provenance. The sizes come from the environment, forwarded explicitly.
export MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-permissive-provenance -Zmiri-env-forward=ALF_STRESS_ITEMS -Zmiri-env-forward=FUZZ_CASES"
export ALF_STRESS_ITEMS=${ALF_STRESS_ITEMS:-1000}
export FUZZ_CASES=${FUZZ_CASES:-4}
rc=0
# Left out: the doctest of ObjArray::init_in_place, 4096 objects (minutes under Miri).
skip=(--skip "ObjArray<'c,T,N>::init_in_place")
[ "${MIRI_QUICK:-0}" = 0 ] || skip+=(--skip slab_bulk_selftest::bulk_fault_nth)
nice -n 10 cargo +nightly miri test -p kernel --no-fail-fast -- "${skip[@]}" || rc=1
nice -n 10 cargo +nightly miri test -p alf_queue --no-fail-fast --test api --test stress || rc=1
nice -n 10 cargo +nightly miri test -p alf_queue --no-fail-fast --doc || rc=1
echo "miri: $((SECONDS - start)) s"
exit $rc
