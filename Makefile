# rfl-bulk: Jesper Dangaard Brouer's bulk allocation work, in Rust for Linux 6.12.
#
#   make bench   provision, build, boot, benchmark, print the tables (the main job)
#   make test    every test, kernel and userspace; ends with "N passed, N failed"
#
# Everything large (the Debian 13 toolchain root, the kernel tree, the builds) lives in
# CACHE_DIR, outside the checkout.  With KDIR=<a Rust-enabled 6.12+ tree> (and LLVM= as for
# the kernel's make), your own tree and toolchain are used and nothing is provisioned.

SHELL := /bin/bash
CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rfl-bulk
export CACHE_DIR KDIR LLVM

.PHONY: help toolchain tree kernel test bench bench-userspace check clean distclean

help:
	@sed -n '3,9p' Makefile | sed 's/^# \{0,1\}//'
	@echo "Other targets: toolchain tree kernel bench-userspace check clean distclean"

## The Debian 13 root with rustc 1.85, bindgen, LLVM 19, linux-source-6.12, QEMU 10.
toolchain:
	@if [ -n "$(KDIR)" ]; then echo "KDIR=$(KDIR): using your toolchain, nothing to provision"; \
	else scripts/toolchain.sh; fi

## linux-source-6.12 + Kconfig.patch + the project's directories.
tree: toolchain
	scripts/tree.sh

## The three kernels: UML test (KUnit, KASAN...), UML bench (-O2), x86_64 for QEMU.
kernel: tree
	scripts/kernel.sh um-test
	scripts/kernel.sh um-bench
	scripts/kernel.sh x86-smp

test:
	scripts/test.sh

bench:
	scripts/bench.sh

## alf_queue against its peers in userspace (criterion, about 16 minutes; wants an idle machine).
bench-userspace:
	cargo bench -p alf_queue --bench queues
	mkdir -p results
	python3 rust/alf_queue/benches/report.py --spread >results/alf_queue-userspace.md; \
		rc=$$?; cat results/alf_queue-userspace.md; exit $$rc

## rustfmt, clippy (userspace and the kernel build with CLIPPY=1), checkpatch on the C.
check: tree
	scripts/check.sh

clean:
	rm -rf target

## Removes CACHE_DIR (refuses while anything is mounted below it).
distclean: clean
	@if findmnt -rn -o TARGET | grep -q "^$(CACHE_DIR)"; then \
		echo "error: mounts below $(CACHE_DIR); unmount them first" >&2; exit 1; fi
	rm -rf "$(CACHE_DIR)"
