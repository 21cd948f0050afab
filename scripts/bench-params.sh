#!/usr/bin/env bash
# The benchmark modules' parameters, checked on the host before anything is built or booted.
# Sourced by bench.sh (and test.sh); run alone, it checks a module's parameters as make bench
# would, or lists them:
#   scripts/bench-params.sh rust_slab_bulk_bench bulk=1,8,16 runs=9
#   scripts/bench-params.sh --list rust_slab_bulk_bench     (NAME KIND LO HI, one a line)
#
# Each module states its parameters once, in the bench::module_params! block of its source
# (samples/rust/bench_common.rs says why there): one a line, "name: kind lo..=hi = default;",
# each bound an integer literal or the name of a const set to one in the module's file or in
# bench_common.rs.  This file reads that block; a line of it that it cannot read, or a bound it
# cannot resolve, is an error of its own (status 2), never a parameter let through.  A value
# refused here is refused in the words the module prints when it refuses it at load time
# (bench_common.rs, read_uint and read_list), so what the user reads first is the module's
# refusal, with what the parameter takes.
# shellcheck shell=bash

# Each variable of make bench that holds a benchmark module's parameters, and that module.
# shellcheck disable=SC2034 # for the scripts that source this one
BENCH_ARGS_VARS="SLAB_BULK_ARGS:rust_slab_bulk_bench SLAB_BULK_QEMU_ARGS:rust_slab_bulk_bench
ALF_QUEUE_ARGS:rust_alf_queue_bench ALF_QUEUE_QEMU_ARGS:rust_alf_queue_bench
QMEMPOOL_ARGS:rust_qmempool_bench SKB_FREE_ARGS:rust_skb_free_bench"

BENCH_PARAMS_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../samples/rust" && pwd)

# param_bound MODULE TOKEN: the integer a bound of MODULE's block stands for: TOKEN itself
# (digits, "_" allowed) or the const TOKEN of the module's file or of bench_common.rs.
param_bound() {
	local tok=$1 v
	if [[ $tok =~ ^[0-9][0-9_]*$ ]]; then
		echo "${tok//_/}"
		return
	fi
	v=$(sed -nE "s/^(pub\(crate\) )?const $tok: [A-Za-z0-9_]+ = ([0-9][0-9_]*);\$/\2/p" \
		"$BENCH_PARAMS_SRC/$2.rs" "$BENCH_PARAMS_SRC/bench_common.rs" | head -1)
	if [ -z "$v" ]; then
		echo "error: $2: bound '$tok' of its bench::module_params! is no integer literal, nor a" \
			"const set to one in $2.rs or bench_common.rs" >&2
		return 2
	fi
	echo "${v//_/}"
}

# module_params MODULE: "NAME KIND LO HI", one line per parameter of MODULE, in its block's order.
module_params() {
	local m=$1 src=$BENCH_PARAMS_SRC/$1.rs line in=0 n=0 lo hi
	local re='^ *([a-z_][a-z0-9_]*): (uint|list) ([A-Za-z0-9_]+)\.\.=([A-Za-z0-9_]+) = .*;$'
	[ -f "$src" ] || { echo "error: no benchmark module $m (no $src)" >&2; return 2; }
	while IFS= read -r line; do
		if [ "$in" = 0 ]; then
			[ "$line" != 'bench::module_params! {' ] || in=1
			continue
		fi
		[ "$line" != '}' ] || { in=2 && break; }
		[[ ! $line =~ ^\ *(//.*)?$ ]] || continue
		if ! [[ $line =~ $re ]]; then
			echo "error: $src: cannot read this line of its bench::module_params! block" \
				"(one parameter a line: name: kind lo..=hi = default;):" >&2
			echo "$line" >&2
			return 2
		fi
		lo=$(param_bound "${BASH_REMATCH[3]}" "$m") && hi=$(param_bound "${BASH_REMATCH[4]}" "$m") ||
			return 2
		echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} $lo $hi"
		n=$((n + 1))
	done < <(sed -n '/^bench::module_params! {$/,/^}$/p' "$src")
	if [ "$in" != 2 ] || [ "$n" = 0 ]; then
		echo "error: $src: no bench::module_params! block (a line 'bench::module_params! {'," \
			"its parameters, a line '}')" >&2
		return 2
	fi
}

# param_in NUMBER LO HI: whether NUMBER (decimal digits) is from LO to HI.
param_in() {
	local v=${1#"${1%%[!0]*}"}
	v=${v:-0}
	[ "${#v}" -le 18 ] && [ "$v" -ge "$2" ] && [ "$v" -le "$3" ]
}

# param_ok KIND LO HI VALUE: whether the module takes VALUE for a parameter of KIND and bounds
# LO to HI (as bench_common.rs's read_uint and read_list, and the kernel's param_ops_uint,
# which reads "010" as octal: no leading zero here).
param_ok() {
	local v=$4 e
	case $1 in
	uint) [[ $v =~ ^(0|[1-9][0-9]*)$ ]] && param_in "$v" "$2" "$3" ;;
	list)
		[ -n "$v" ] && [ "${#v}" -lt "$(param_bound LIST_LEN bench_common)" ] || return 1
		v=$v,
		while [ -n "$v" ]; do
			e=${v%%,*} v=${v#*,}
			[[ $e =~ ^[0-9]+$ ]] && param_in "$e" "$2" "$3" || return 1
		done
		;;
	*) return 1 ;;
	esac
}

# param_takes KIND LO HI: what a parameter takes, in the module's words.
param_takes() {
	case $1 in
	uint) echo "an integer from $2 to $3" ;;
	list) echo "a comma-separated list of integers from $2 to $3" \
		"($(($(param_bound LIST_LEN bench_common) - 1)) characters at most)" ;;
	esac
}

# check_module_args MODULE [WORD...]: MODULE's parameters as insmod would get them (each WORD
# NAME=VALUE).  For each value MODULE refuses, the line it prints when it refuses it, in its
# block's order, then one line for each name it does not have; on stderr.  Returns 1 if anything
# was refused, 2 if MODULE's block could not be read.
check_module_args() {
	local m=$1 table w name kind lo hi value known bad=0 names=
	shift
	table=$(module_params "$m") || return 2
	while read -r name kind lo hi; do
		names+="${names:+, }$name"
		for w in "$@"; do
			[ "${w%%=*}" = "$name" ] || continue
			value=${w#*=}
			[ "$w" != "$name" ] || value=
			if ! param_ok "$kind" "$lo" "$hi" "$value"; then
				echo "$m: $name=$value refused: $(param_takes "$kind" "$lo" "$hi")" >&2
				bad=1
			fi
		done
	done <<<"$table"
	for w in "$@"; do
		known=0
		while read -r name _; do
			[ "${w%%=*}" != "$name" ] || known=1
		done <<<"$table"
		if [ "$known" = 0 ]; then
			echo "$m: unknown parameter '${w%%=*}': it takes $names" >&2
			bad=1
		fi
	done
	return "$bad"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	case ${1:-} in
	--list) module_params "${2:?usage: $0 --list MODULE}" ;;
	'' | -*)
		echo "usage: $0 MODULE [NAME=VALUE...] | --list MODULE" >&2
		exit 2
		;;
	*) check_module_args "$@" ;;
	esac
fi
