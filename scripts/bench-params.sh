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
# refusal, with what the parameter takes: a value out of the module's bounds, and as well a
# value the kernel's own parser would refuse before the module reads it (a uint that is no
# number below 2^32 as kstrtouint reads one, a list longer than the module's buffer, a name
# with no "="; below, "What the kernel does").  A value the kernel takes and the module reads is
# taken or refused here as the module takes or refuses it (runs=0x10 is 16 runs, in both).
# scripts/bench-params-test.sh tries both sides.
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

# What the kernel does with a parameter before the module sees it (kernel/params.c,
# lib/kstrtox.c and lib/cmdline.c, the same in 6.12 and 7.3).  parse_args finds each word's NAME
# among the module's (a dash and an underscore are one character there) and fails the load for
# a NAME with no "=".  A uint's value goes through param_ops_uint, kstrtouint(VALUE, 0): one
# optional "+", then "0x" or "0X" and hex digits, "0" and octal digits, or decimal digits, the
# number less than 2^32, a newline at most after it (-EINVAL or -ERANGE otherwise).  A list's
# goes through param_ops_string, which copies at most LIST_LEN - 1 bytes (-ENOSPC otherwise).
# A value the kernel refuses fails insmod in the kernel's words ("`abc' invalid for parameter
# `runs'") before the module's Params::read runs, so the module never says what it takes:
# check_module_args refuses those values in the words the module uses for a value it refuses.
# What the kernel stores is what the module reads: the last value given for a NAME, a uint as
# the number kstrtouint made of it, which the module's refusal prints in decimal ("runs=0x400"
# is refused as "runs=1024 refused: ...", as the module refuses it).  Where this differs, it
# refuses what the kernel would take, in the module's words: a value with a newline or any
# other blank (no such word reaches insmod whole: the guest's shell, which evaluates the plan's
# load line, splits it) and a value in quotes or with anything else that shell would read as
# its own syntax (it is refused as given; insmod would get it unquoted).  Nothing let through
# has a character that shell reads as anything but itself: digits, letters, "+", ",", "-", "_".

# param_same WORD_NAME NAME: whether the kernel takes WORD_NAME for the parameter NAME.
param_same() {
	[ "${1//-/_}" = "${2//-/_}" ]
}

# param_kernel_uint VALUE: the number (decimal) param_ops_uint stores for VALUE, or failure where
# it refuses VALUE (kstrtouint(VALUE, 0), above).
param_kernel_uint() {
	local s=${1#+} base=10 max=10 d='[0123456789]+'
	s=${s%$'\n'}
	if [[ $s =~ ^0[xX][0123456789abcdefABCDEF] ]]; then
		s=${s:2} base=16 max=8 d='[0123456789abcdefABCDEF]+'
	elif [ "${s:0:1}" = 0 ]; then
		base=8 max=11 d='[01234567]+'
	fi
	[[ $s =~ ^$d$ ]] || return 1
	s=${s#"${s%%[!0]*}"}
	[ "${#s}" -le "$max" ] || return 1
	s=$((${base}#${s:-0}))
	[ "$s" -le 4294967295 ] || return 1
	echo "$s"
}

# param_bytes VALUE: VALUE's length in bytes (what the kernel's strnlen counts).
param_bytes() {
	local LC_ALL=C
	echo "${#1}"
}

# param_kernel_ok KIND VALUE: whether the kernel stores VALUE (the text after "=") for a
# parameter of KIND, for the module to read.
param_kernel_ok() {
	case $1 in
	uint) param_kernel_uint "$2" >/dev/null ;;
	list) [ "$(param_bytes "$2")" -lt "$(param_bound LIST_LEN bench_common)" ] ;;
	*) return 1 ;;
	esac
}

# param_module_ok KIND LO HI VALUE: whether the module takes VALUE, as the kernel stored it (a
# uint in decimal), for a parameter of KIND and bounds LO to HI (bench_common.rs's read_uint
# and read_list).
param_module_ok() {
	local v=$4 e
	case $1 in
	uint) param_in "$v" "$2" "$3" ;;
	list)
		[ -n "$v" ] || return 1
		v=$v,
		while [ -n "$v" ]; do
			e=${v%%,*} v=${v#*,}
			[[ $e =~ ^[0123456789]+$ ]] && param_in "$e" "$2" "$3" || return 1
		done
		;;
	*) return 1 ;;
	esac
}

# param_utf8 VALUE: whether VALUE is UTF-8 as Rust's str::from_utf8 takes it (no surrogate, no
# overlong form, nothing past U+10FFFF).
param_utf8() {
	local LC_ALL=C t=$'[\x80-\xbf]' re
	re="^([^"$'\x80-\xff'"]|["$'\xc2-\xdf'"]$t|"$'\xe0'"["$'\xa0-\xbf'"]$t|["$'\xe1-\xec\xee\xef'"]$t$t"
	re+="|"$'\xed'"["$'\x80-\x9f'"]$t|"$'\xf0'"["$'\x90-\xbf'"]$t$t|["$'\xf1-\xf3'"]$t$t$t"
	re+="|"$'\xf4'"["$'\x80-\x8f'"]$t$t)*\$"
	[[ $1 =~ $re ]]
}

# param_shown KIND VALUE: VALUE, as the kernel stored it, as the module's refusal prints it: a
# uint as the number, a list as it is or, not UTF-8, "(not UTF-8)".
param_shown() {
	if [ "$1" = uint ]; then
		param_kernel_uint "$2"
	elif param_utf8 "$2"; then
		printf '%s\n' "$2"
	else
		echo "(not UTF-8)"
	fi
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
# NAME=VALUE).  On stderr, the line the module prints when it refuses a value, for each value
# the kernel would refuse before the module reads it, and for the value the module would read
# (the last one given) if the module refuses it, parameter by parameter in its block's order;
# then one line for each name it does not have.  Returns 1 if anything was refused, 2 if
# MODULE's block could not be read.
check_module_args() {
	local m=$1 table w name kind lo hi value stored known bad=0 names=
	shift
	table=$(module_params "$m") || return 2
	while read -r name kind lo hi; do
		names+="${names:+, }$name"
		stored=
		for w in "$@"; do
			param_same "${w%%=*}" "$name" || continue
			value=
			[[ $w != *=* ]] || value=${w#*=}
			if [[ $w == *=* && $value != *[[:space:]]* ]] && param_kernel_ok "$kind" "$value"; then
				stored=$w
			else
				echo "$m: $name=$value refused: $(param_takes "$kind" "$lo" "$hi")" >&2
				bad=1
			fi
		done
		[ -n "$stored" ] || continue
		value=${stored#*=}
		[ "$kind" != uint ] || value=$(param_kernel_uint "$value")
		if ! param_module_ok "$kind" "$lo" "$hi" "$value"; then
			echo "$m: $name=$(param_shown "$kind" "$value") refused: $(param_takes "$kind" "$lo" "$hi")" >&2
			bad=1
		fi
	done <<<"$table"
	for w in "$@"; do
		known=0
		while read -r name _; do
			! param_same "${w%%=*}" "$name" || known=1
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
