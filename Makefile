# rfl-bulk: Jesper Dangaard Brouer's bulk allocation work, in Rust for Linux 6.12 and 7.3.
#
#   make bench   provision, build, boot, benchmark, print the tables (the main job)
#   make test    every test, kernel and userspace; ends with "N passed, N failed"
#
# Both run on every kernel of KERNELS (by default each linux-source that scripts/pins.sh pins:
# 6.12 and 7.3; KERNELS=7.3 for one).  Everything large (the Debian 13 toolchain root, the
# kernel trees, the builds) lives in CACHE_DIR, outside the checkout.  With KDIR=<a
# Rust-enabled 6.12 or 7.3 tree> (and LLVM= as for the kernel's make), your own tree and
# toolchain are used and nothing is provisioned.

SHELL := /bin/bash
CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rfl-bulk
# Read once (a simple variable): scripts/lib.sh derives the list from scripts/pins.sh.
ifndef KERNELS
KERNELS := $(shell bash -c '. scripts/lib.sh && echo $$ALL_KERNELS')
endif
export CACHE_DIR KDIR LLVM KERNELS

.PHONY: help toolchain tree kernel test bench bench-userspace miri fuzz check series series-check clean distclean

help:
	@sed -n '3,10p' Makefile | sed 's/^# \{0,1\}//'
	@echo "Other targets: toolchain tree kernel bench-userspace miri fuzz check series series-check clean distclean"

## The Debian 13 root with rustc 1.85, bindgen, LLVM 19, linux-source-6.12 and -7.3, QEMU 10.
toolchain:
	@if [ -n "$(KDIR)" ]; then echo "KDIR=$(KDIR): using your toolchain, nothing to provision"; \
	else scripts/toolchain.sh; fi

## linux-source-<version> + patches/<version>/ + the project's directories, for each kernel.
tree: toolchain
	for k in $(KERNELS); do scripts/tree.sh $$k || exit; done

## Per kernel: UML test (KUnit, KASAN...), UML bench (-O2), x86_64 for QEMU.
kernel: tree
	for k in $(KERNELS); do \
		for kind in um-test um-bench x86-smp; do scripts/kernel.sh $$k $$kind || exit; done; \
	done

test:
	scripts/test.sh

bench:
	@scripts/bench.sh

## alf_queue against its peers in userspace (criterion, about 16 minutes; wants an idle machine).
bench-userspace:
	cargo bench -p alf_queue --bench queues
	bash -c '. scripts/lib.sh; host_cpu_id' >target/criterion/alf_host.txt
	mkdir -p results
	python3 rust/alf_queue/benches/report.py --spread >results/alf_queue-userspace.md; \
		rc=$$?; cat results/alf_queue-userspace.md; exit $$rc

## The userspace tests under Miri (nightly toolchain, host only; a few minutes).
miri:
	scripts/miri.sh

## The model-based fuzzer of the twin: FUZZ_CASES programs for each of its 3 targets, 10^7 in
## all by default (about 20 minutes on 2 cores). See docs/fuzzing.md.
FUZZ_CASES ?= 3400000
fuzz:
	FUZZ_CASES=$(FUZZ_CASES) nice -n 10 cargo test --release -p kernel --test model_fuzz -- \
		--nocapture --test-threads=2

## rustfmt, clippy (userspace and the kernel build with CLIPPY=1), rustdoc (cargo doc and the
## kernel's make rustdoc), checkpatch on the series and the C.
check: tree
	scripts/check.sh

## The series a maintainer applies, per kernel: patches/<version>/ with the project's files added
## by the patches that introduce them, as git format-patch output with a cover letter, checked
## with checkpatch.pl --strict and get_maintainer.pl, in CACHE_DIR/series/<version>/out.
series: toolchain
	for k in $(KERNELS); do scripts/series.sh write $$k || exit; done

## git am of that series onto a pristine tree, the x86-smp kernel built after each patch, then
## the tree compared with make test's overlay tree (about 45 minutes per kernel on 2 CPUs;
## KIND=none applies the series without building, about 4 minutes).
series-check: tree
	for k in $(KERNELS); do \
		scripts/series.sh check $$k && scripts/series.sh identity $$k || exit; \
	done

clean:
	rm -rf target

## Removes CACHE_DIR (refuses while anything is mounted below it).
distclean: clean
	@if findmnt -rn -o TARGET | grep -q "^$(CACHE_DIR)"; then \
		echo "error: mounts below $(CACHE_DIR); unmount them first" >&2; exit 1; fi
	rm -rf "$(CACHE_DIR)"
