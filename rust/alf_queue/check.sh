#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Checks alf_queue the ways it is built: as the kernel mounts it, as a Cargo crate, under loom.
#
#   rust/alf_queue/check.sh          # kernel-mount, MSRV, clippy, tests, compile-fail
#   rust/alf_queue/check.sh loom     # ... and the loom models (release build)
#
# Environment: KERNEL_RUST (default 1.85.1) names the rustup toolchain matching the kernel's
# rustc; LOOM_MAX_PREEMPTIONS is passed through to the loom tests.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
krust=${KERNEL_RUST:-1.85.1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The flags the 6.12 kernel passes when it compiles the `kernel` crate (rust_common_flags in
# the top Makefile, plus -Wclippy::float_arithmetic from rust/Makefile), and a few that later
# kernels add; warnings are errors here.
kernel_lints="-Dunsafe_op_in_unsafe_fn -Dnon_ascii_idents -Wmissing_docs -Wrust_2018_idioms
	-Wunreachable_pub -Wclippy::all -Wclippy::ignored_unit_patterns -Wclippy::mut_mut
	-Wclippy::needless_bitwise_bool -Aclippy::needless_lifetimes
	-Wclippy::no_mangle_with_rust_abi -Wclippy::undocumented_unsafe_blocks
	-Wclippy::unnecessary_safety_comment -Wclippy::unnecessary_safety_doc
	-Wclippy::float_arithmetic -Wclippy::ptr_as_ptr -Wclippy::ptr_cast_constness
	-Wclippy::ref_as_ptr -Wclippy::as_ptr_cast_mut -Dwarnings"

step() { printf '\n== %s\n' "$*"; }

if rustup run "$krust" rustc --version >/dev/null 2>&1; then
	step "kernel mount: module of a no_std crate named kernel, --cfg CONFIG_RUST, rustc $krust"
	cat >"$tmp/lib.rs" <<EOF
//! Stand-in for the kernel crate, mounting alf_queue the way rust/kernel/lib.rs does.
#![no_std]
#[path = "$here/lib.rs"]
pub mod alf_queue;
EOF
	# shellcheck disable=SC2086
	rustup run "$krust" clippy-driver --edition=2021 --crate-type=rlib --crate-name=kernel \
		--cfg CONFIG_RUST -O $kernel_lints --out-dir "$tmp" "$tmp/lib.rs"

	step "compile-time capacity check: N = 3 must not compile"
	cat >"$tmp/bad.rs" <<'EOF'
fn main() {
    let q = kernel::alf_queue::MpmcQueue::<u8, 3>::new();
    let _ = q.enqueue(1);
}
EOF
	for queue in MpmcQueue StampQueue; do
		sed -i "s/alf_queue::[A-Za-z]*::</alf_queue::$queue::</" "$tmp/bad.rs"
		if rustup run "$krust" rustc --edition=2021 --extern kernel="$tmp/libkernel.rlib" \
			-o "$tmp/bad" "$tmp/bad.rs" 2>"$tmp/bad.err"; then
			echo "error: $queue<u8, 3> compiled" >&2
			exit 1
		fi
		grep -q "power of two" "$tmp/bad.err"
		echo "ok: $queue rejected ($(grep -m1 -o 'the capacity N [^"]*' "$tmp/bad.err"))"
	done

	step "MSRV: cargo +$krust build -p alf_queue --lib"
	(cd "$root" && cargo "+$krust" build -q -p alf_queue --lib)
else
	echo "warning: toolchain $krust not installed, kernel-mount and MSRV checks skipped" >&2
fi

cd "$root"
step "clippy, all targets"
cargo clippy -q -p alf_queue --all-targets -- -Dwarnings

step "cargo test -p alf_queue"
cargo test -q -p alf_queue

if [ "${1:-}" = loom ]; then
	step "loom (LOOM_MAX_PREEMPTIONS=${LOOM_MAX_PREEMPTIONS:-default of tests/loom.rs})"
	RUSTFLAGS="--cfg loom" cargo test -q -p alf_queue --release --test loom
fi
echo "all checks passed"
