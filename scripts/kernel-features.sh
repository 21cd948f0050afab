#!/usr/bin/env bash
# The kernel feature cfgs that rust/kernel/slab_bulk/kernel_features.mk gives a kernel version,
# one a line: what the project's Rust code is built against on that kernel, whether or not the
# project has its tree (docs/kernels.md, "Where the source tells the kernels apart").
# usage: kernel-features.sh VERSION      (e.g. 6.12, 7.3, 7.4)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

ver=${1:?usage: kernel-features.sh VERSION}
[[ $ver =~ ^([0-9]+)\.([0-9]+)$ ]] || die "kernel-features.sh: '$ver' is not VERSION.PATCHLEVEL"
printf 'include %s\nall: ; @printf "%%s\\n" $(patsubst --cfg,,$(rfl_feature_cfgs))\n' \
	"$PROJECT/rust/kernel/slab_bulk/kernel_features.mk" |
	make -s -f - VERSION="${BASH_REMATCH[1]}" PATCHLEVEL="${BASH_REMATCH[2]}"
