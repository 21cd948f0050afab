#!/usr/bin/env bash
# make check: the style and lint gates a kernel developer expects.
#   - rustfmt: the kernel's 'make rustfmtcheck' (our files are in the tree), cargo fmt --check;
#   - clippy: cargo clippy on the userspace workspace, and the kernel's Rust (the `kernel`
#     crate with slab_bulk, alf_queue and the selftests, and the samples) with CLIPPY=1;
#   - rustdoc: cargo doc on the userspace workspace and the kernel's 'make rustdoc', without a
#     warning in the project's docs;
#   - checkpatch.pl --strict on each kernel's patch series (patches/<version>/) and on the
#     project's C files (the samples', the helpers', the shim's header);
#   - shellcheck (Debian's) on every script, and on every guest plan as the host assembles it
#     from scripts/guest/ (the fragments that share functions and variables, in one file).
# The kernel gates run on each kernel of KERNELS.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

fail=0
gate() {
	local name=$1
	shift
	log "$name"
	if "$@"; then log "$name: ok"; else log "$name: FAILED"; fail=1; fi
}

# The guest plans the host assembles, each a list of fragments of scripts/guest/ in plan order.
GUEST_PLANS=("skb_heads shim_pktgen" "skb_heads fwd_lib fwd_test" "skb_heads fwd_lib fwd_bench")
# shellcheck disable=SC2317 # called through gate
shellcheck_all() {
	local ok=0 plan f
	command -v shellcheck >/dev/null || {
		log "installing shellcheck on the host"
		apt-get install -y shellcheck >/dev/null || true
	}
	command -v shellcheck >/dev/null || { echo "no shellcheck: apt-get install shellcheck" >&2; return 1; }
	(cd "$PROJECT" && shellcheck -x scripts/*.sh scripts/guest/init.sh .ci/run rust/alf_queue/check.sh) || ok=1
	for plan in "${GUEST_PLANS[@]}"; do
		for f in $plan; do cat "$PROJECT/scripts/guest/$f.sh"; done | shellcheck -s sh - || {
			echo "  (in the plan: $plan)" >&2
			ok=1
		}
	done
	return "$ok"
}

gate "shellcheck" shellcheck_all
gate "cargo fmt --check" cargo fmt --manifest-path "$PROJECT/Cargo.toml" --all --check
gate "cargo clippy" cargo clippy --manifest-path "$PROJECT/Cargo.toml" --workspace --all-targets \
	--release -- -D warnings
# With the private items: a broken intra-doc link in a private module (a selftest list, a
# kernel-only helper compiled into the twin) fails here too, which the kernel's `make rustdoc`,
# public items only, would not see.
gate "cargo doc" env RUSTDOCFLAGS="-D warnings" cargo doc --manifest-path "$PROJECT/Cargo.toml" \
	--workspace --no-deps -q --document-private-items
# CLIPPY=1 rebuilds the Rust objects through clippy-driver; a warning in the project's code is
# a failure here, one in the kernel's own code is listed (clippy_ours.py tells them apart).
# shellcheck disable=SC2317 # called through gate
clippy_kernel() {
	local kind=$1 arch=$2 out
	# A warning is printed when its crate is compiled: the project's crates are compiled
	# every time, not only when they changed since the last check.
	rm -f "$BUILD/$kind"/rust/{kernel,doctests_kernel_generated}.o "$BUILD/$kind"/samples/rust/*.o
	out=$(krun make -C "$G_TREE" O="$G_BUILD/$kind" ARCH="$arch" LLVM="$LLVM" CLIPPY=1 \
		-j"$(nproc)" rust/ samples/rust/ 2>&1) || { echo "$out" | tail -30; return 1; }
	echo "$out" | python3 "$PROJECT/scripts/clippy_ours.py" "$BUILD/$kind"
}
# rustdoc: the kernel crate's documentation, as upstream's `make rustdoc` builds it (the
# target always reruns rustdoc); a warning in the project's docs, such as a broken intra-doc
# link, is a failure, as for clippy.
# shellcheck disable=SC2317 # called through gate
rustdoc_kernel() {
	local out
	out=$(krun make -C "$G_TREE" O="$G_BUILD/x86-smp" ARCH=x86_64 LLVM="$LLVM" -j"$(nproc)" \
		rustdoc 2>&1) || { echo "$out" | tail -30; return 1; }
	echo "$out" | python3 "$PROJECT/scripts/clippy_ours.py" "$BUILD/x86-smp"
}
# The kernel gates compile in the builds `make test` makes (x86-smp, um-test): a check run
# before any make test, or after a change, builds them first, incrementally where they exist.
# shellcheck disable=SC2317 # called through gate
build_kernels() {
	"$PROJECT/scripts/kernel.sh" "$KVER" x86-smp && "$PROJECT/scripts/kernel.sh" "$KVER" um-test
}
for k in $KERNELS; do
	use_kernel "$k"
	"$PROJECT/scripts/tree.sh" "$KVER"
	gate "$KVER kernels x86-smp and um-test, built" build_kernels
	gate "$KVER kernel rustfmtcheck" krun make -s -C "$G_TREE" O="$G_BUILD/x86-smp" LLVM="$LLVM" rustfmtcheck
	gate "$KVER kernel clippy (x86_64: samples, slab_bulk, alf_queue)" clippy_kernel x86-smp x86_64
	gate "$KVER kernel clippy (UML test: the fault-injection selftests)" clippy_kernel um-test um
	gate "$KVER kernel rustdoc (the kernel crate's documentation)" rustdoc_kernel
	series=()
	for p in "$PROJECT/patches/$KVER"/*.patch; do series+=("$G_PROJECT/patches/$KVER/${p##*/}"); done
	gate "$KVER checkpatch.pl --strict patches/$KVER" krun perl "$G_TREE/scripts/checkpatch.pl" \
		--no-tree --strict "${series[@]}"
done
for f in "$PROJECT"/samples/rust/*.[ch] "$PROJECT"/rust/helpers/*.c "$PROJECT"/include/net/*.h; do
	f=${f#"$PROJECT"/}
	gate "checkpatch.pl $f" krun perl "$G_TREE/scripts/checkpatch.pl" \
		--no-tree --strict --file "$G_PROJECT/$f"
done
exit $fail
