#!/usr/bin/env bash
# make bench's check of the benchmark modules' parameters (scripts/bench-params.sh), tried with
# generated values, for every uint and list parameter of every benchmark module: each bad value
# must be refused with exactly the line the module prints when it refuses a value (its pr_err!
# format in samples/rust/bench_common.rs, filled with the module's name, the parameter, the
# value as the module would print it and the bounds of its bench::module_params! block), and
# nothing else; each good value must pass with nothing printed.  The bad values are of two sorts:
#   - values the kernel's parser refuses before the module reads them (a uint that is negative,
#     2^32 or more, 2^64 or more, a long string of digits, empty, blank, not a number, with
#     trailing garbage, in a base kstrtouint does not read; a list longer than the module's
#     buffer; a name with no "="), which the module never sees: the line shows the value as
#     given;
#   - values the kernel stores and the module refuses (out of bounds, however kstrtouint spells
#     them: "+1000", "0x3e8", "01750"; a list with an empty item, a sign, a hex or a non-digit
#     item, an item out of bounds): the line shows the value as the module prints it, a uint in
#     decimal and a list as it is or "(not UTF-8)".
# And the kernel's ways that make bench must follow: the last value given for a name is the one
# the module reads, a dash in a name is an underscore.  No make, no build, no boot: a few
# seconds per module; part of make test's step "make bench refuses each bad module parameter,
# nothing built" (test.sh, bench_refusals), and runs alone.  Prints a line per failure on
# stderr, then "N passed, M failed"; exit status 1 if any failed.  VERBOSE=1 prints every case.
# shellcheck source=bench-params.sh
. "$(dirname "$0")/bench-params.sh"
set -uo pipefail

common=$BENCH_PARAMS_SRC/bench_common.rs
passed=0 failed=0

# module_format KIND: the format string of the module's refusal of a KIND parameter, as
# bench_common.rs's read_uint or read_list has it in its pr_err!.
module_format() {
	local f
	case $1 in
	uint) f=$(grep -o '"{}={} refused: an integer [^"]*"' "$common") ;;
	list) f=$(grep -o '"{}={} refused: a comma-separated list [^"]*"' "$common") ;;
	esac
	[ "$(wc -l <<<"$f")" = 1 ] && [ -n "$f" ] || return 1
	f=${f#\"} && f=${f%\"} && f=${f%\\n}
	printf '%s\n' "$f"
}

# fill FORMAT ARG...: FORMAT with each "{}" replaced by the next ARG, as Rust's format! does.
fill() {
	local f=$1 out=
	shift
	while [[ $f == *'{}'* ]]; do
		out+=${f%%'{}'*}${1-}
		f=${f#*'{}'}
		shift
	done
	printf '%s\n' "$out$f"
}

# case_ok DESCRIPTION WANT MODULE WORD...: one case: check_module_args MODULE WORD... must print
# exactly WANT on stderr (nothing on stdout) and fail, or, WANT empty, print nothing and pass.
case_ok() {
	local desc=$1 want=$2 m=$3 got rc=0 wantrc=1
	shift 3
	got=$(check_module_args "$m" "$@" 2>&1) || rc=$?
	[ -n "$want" ] || wantrc=0
	if [ "$rc" = "$wantrc" ] && [ "$got" = "$want" ]; then
		passed=$((passed + 1))
		[ -z "${VERBOSE:-}" ] || printf 'ok   %s: %s\n' "$m" "$desc"
	else
		failed=$((failed + 1))
		{
			printf 'FAIL %s: %s: words' "$m" "$desc"
			printf ' %q' "$@"
			printf '\n  exit %s, want %s\n  want: %q\n  got:  %q\n' "$rc" "$wantrc" "$want" "$got"
		} >&2
	fi
}

# reps N TEXT: TEXT N times.
reps() {
	local out='' i
	for ((i = 0; i < $1; i++)); do out+=$2; done
	printf '%s\n' "$out"
}

# list_of LEN ITEM: a comma-separated list of ITEM, with no empty item, exactly LEN bytes long
# (LEN at least ITEM's length; the last item padded with leading zeros).
list_of() {
	local len=$1 item=$2 out=
	while [ $((${#out} + ${#item} + 1 + ${#item})) -le "$len" ]; do out+=$item,; done
	out+=$(reps $((len - ${#out} - ${#item})) 0)$item
	printf '%s\n' "$out"
}

# try_uint MODULE NAME LO HI: the cases of a uint parameter.
try_uint() {
	local m=$1 name=$2 lo=$3 hi=$4 fmt v over
	fmt=$(module_format uint) || { failed=$((failed + 1)) && echo "FAIL no read_uint refusal in $common" >&2 && return; }
	over=$((hi + 1))
	# refused NAME_VALUE SHOWN [DESCRIPTION]: the word NAME=NAME_VALUE, refused showing SHOWN.
	refused() {
		case_ok "${3:-$name=$1}" "$m: $(fill "$fmt" "$name" "$2" "$lo" "$hi")" "$m" "$name=$1"
	}
	# Refused by the kernel (kstrtouint): shown as given.
	for v in -1 -0 "-$lo" "-$hi" -4294967296 4294967296 4294967297 8589934592 \
		18446744073709551615 18446744073709551616 36893488147419103232 \
		"$(reps 20 9)" "$(reps 30 9)" "1$(reps 99 0)" "$(reps 300 7)" \
		"" " " " $lo" "$lo " $'\t'"$lo" "$lo"$'\n'"$lo" "$lo,$hi" "$lo $hi" \
		abc x five NaN inf true "$lo"a "$lo"x "${lo}k" "${hi}M" 1e3 1.5 "$lo.0" 1_000 "$lo;" \
		"$lo=" "=$lo" "=" 0x 0X 0xg 0x1g 0x+1 0x-1 "0x $lo" 00x10 08 09 019 0o17 0b101 \
		++"$lo" +-"$lo" -+"$lo" + - "+ $lo" "\"$lo\"" "'$lo'" "\$((1))" '$x' '*' \
		0x100000000 0xFFFFFFFFF "0x$(reps 17 f)" 040000000000 "0$(reps 30 7)" \
		"１" "$lo"é $'\xff' $'\xc3'; do
		refused "$v" "$v"
	done
	# A newline after the number: kstrtouint takes it, make bench does not (no word that reaches
	# insmod has one: the guest's shell splits there), in the module's words.
	refused "$lo"$'\n' "$lo"$'\n' "$name=$lo followed by a newline"
	case_ok "$name with no \"=\"" "$m: $(fill "$fmt" "$name" "" "$lo" "$hi")" "$m" "$name"
	# Stored by the kernel, refused by the module: shown as the number, in decimal.
	refused "$over" "$over"
	refused "+$over" "$over"
	refused "$(printf '0x%x' "$over")" "$over"
	refused "$(printf '0X%X' "$over")" "$over"
	refused "$(printf '0x%016x' "$over")" "$over"
	refused "$(printf '0%o' "$over")" "$over"
	refused "$(printf '+0%o' "$over")" "$over"
	refused 4294967295 4294967295
	refused 0xffffffff 4294967295
	refused 037777777777 4294967295
	if [ "$lo" -gt 0 ]; then
		refused $((lo - 1)) $((lo - 1))
		for v in 0 00 +0 0x0 0X00 "$(reps 40 0)"; do refused "$v" 0; done
	fi
	# The last value is the one the module reads and refuses, once; a dash is an underscore.
	case_ok "$name=$lo then $name=$over" "$m: $(fill "$fmt" "$name" "$over" "$lo" "$hi")" \
		"$m" "$name=$lo" "$name=$over"
	case_ok "${name//_/-}=$over" "$m: $(fill "$fmt" "$name" "$over" "$lo" "$hi")" "$m" "${name//_/-}=$over"
	# Refused by the kernel once, whatever comes after.
	case_ok "$name=abc then $name=$lo" "$m: $(fill "$fmt" "$name" abc "$lo" "$hi")" \
		"$m" "$name=abc" "$name=$lo"
	# Good: taken, as the module takes what the kernel stores.
	for v in "$lo" "$hi" $(((lo + hi) / 2)) "+$lo" "+$hi" "$(printf '0x%x' "$hi")" \
		"$(printf '0X%X' "$lo")" "$(printf '0%o' "$hi")" "$(printf '+0x%08x' "$hi")" \
		"$(reps 30 0)$(printf '%o' "$hi")"; do
		case_ok "$name=$v taken" "" "$m" "$name=$v"
	done
	# 01000 is octal, 512: in the bounds of a parameter that takes 512, wherever 1000 is or not.
	if [ "$lo" -le 512 ] && [ "$hi" -ge 512 ]; then
		case_ok "$name=01000 taken (512)" "" "$m" "$name=01000"
	fi
	case_ok "$name=$over then $name=$lo taken" "" "$m" "$name=$over" "$name=$lo"
	case_ok "${name//_/-}=$hi taken" "" "$m" "${name//_/-}=$hi"
}

# try_list MODULE NAME LO HI: the cases of a list parameter.
try_list() {
	local m=$1 name=$2 lo=$3 hi=$4 fmt v len over max
	fmt=$(module_format list) || { failed=$((failed + 1)) && echo "FAIL no read_list refusal in $common" >&2 && return; }
	len=$(param_bound LIST_LEN bench_common)
	max=$((len - 1)) over=$((hi + 1))
	# refused NAME_VALUE SHOWN [DESCRIPTION]: the word NAME=NAME_VALUE, refused showing SHOWN.
	refused() {
		case_ok "${3:-$name=$1}" "$m: $(fill "$fmt" "$name" "$2" "$lo" "$hi" "$max")" "$m" "$name=$1"
	}
	# Refused by the kernel (longer than the buffer, or blank), whatever its items.
	for v in "$(list_of "$len" "$lo")" "$(list_of "$len" "$hi")" "$(list_of $((len + 1)) "$lo")" \
		"$(list_of 300 "$lo")" "$(list_of 1024 "$hi")" "$(list_of 4096 "$lo")" \
		"$(reps "$len" 1)" "$(reps 1000 ,)" "$(reps "$len" x)" "$(reps 200 é)" \
		" " " $lo" "$lo " "$lo, $hi" "$lo ,$hi" $'\t'"$lo" "$lo"$'\n'"$hi"; do
		refused "$v" "$v"
	done
	case_ok "$name with no \"=\"" "$m: $(fill "$fmt" "$name" "" "$lo" "$hi" "$max")" "$m" "$name"
	# Stored by the kernel, refused by the module: shown as given, or "(not UTF-8)".
	for v in "" "," ",," "$lo," ",$lo" "$lo,,$hi" "$lo,$hi," "$over" "$lo,$over" "$over,$lo" \
		"$lo,$hi,$over" -1 "-$lo" "+$lo" "$lo,+$hi" "0x$lo" 0x10 "$(printf '0x%x' "$hi")" \
		"$lo;$hi" "$lo.$hi" "$lo:$hi" "$lo/$hi" 1.5 a "${lo}a" "$lo,a" "a,$lo" "${lo}k" \
		"$(reps 30 9)" 4294967296 18446744073709551616 "$lo,$(reps 40 9)" \
		"１" "$lo,é" "\"$lo\"" "'$lo'" '$x' "*" \
		"$(list_of $((max - 1)) "$lo")a" "$(list_of $((max - 1 - ${#over})) "$lo"),$over" \
		"$(list_of $((max - 1)) "$lo"),"; do
		refused "$v" "$v"
	done
	if [ "$lo" -gt 0 ]; then
		refused 0 0
		refused "$hi,0" "$hi,0"
		refused "$(reps 10 0)" "$(reps 10 0)"
	fi
	refused $'\xff' "(not UTF-8)"
	refused "$lo,"$'\xc3' "(not UTF-8)"
	refused $'\xed\xa0\x80' "(not UTF-8)" "$name=(a UTF-16 surrogate in UTF-8 form)"
	refused $'\xc0\x80' "(not UTF-8)" "$name=(an overlong NUL)"
	refused $'\xf4\x90\x80\x80' "(not UTF-8)" "$name=(past U+10FFFF)"
	# The last value is the one the module reads and refuses, once; a dash is an underscore.
	case_ok "$name=$lo then $name=$over" "$m: $(fill "$fmt" "$name" "$over" "$lo" "$hi" "$max")" \
		"$m" "$name=$lo" "$name=$over"
	# Good.
	for v in "$lo" "$hi" "$lo,$hi" "$hi,$lo,$hi" "00$lo" "$(reps 20 0)$hi" "$(list_of "$max" "$lo")" \
		"$(list_of "$max" "$hi")"; do
		case_ok "$name=$v taken" "" "$m" "$name=$v"
	done
	case_ok "$name=$over then $name=$lo taken" "" "$m" "$name=$over" "$name=$lo"
	case_ok "${name//_/-}=$lo taken" "" "$m" "${name//_/-}=$lo"
}

# Each module's block is read once here, then served from memory to check_module_args (which
# reads it at each call, as make bench calls it once per variable): some 50 ms a case less.
declare -A tables=()
eval "$(declare -f module_params | sed '1s/^module_params /module_params_read /')"
module_params() {
	if [ -n "${tables[$1]+set}" ]; then
		printf '%s\n' "${tables[$1]}"
	else
		module_params_read "$1"
	fi
}

for m in $(for va in $BENCH_ARGS_VARS; do echo "${va#*:}"; done | sort -u); do
	if ! table=$(module_params "$m"); then
		failed=$((failed + 1))
		continue
	fi
	tables[$m]=$table
	while read -r name kind lo hi; do
		"try_$kind" "$m" "$name" "$lo" "$hi"
	done <<<"$table"
	# Several bad values at once: each refused, in the block's order, the unknown name last.
	first=$(head -1 <<<"$table") && last=$(tail -1 <<<"$table")
	read -r n1 k1 lo1 hi1 <<<"$first" && read -r n2 k2 lo2 hi2 <<<"$last"
	case_ok "two bad values and an unknown name" \
		"$m: $(fill "$(module_format "$k1")" "$n1" -1 "$lo1" "$hi1" $(($(param_bound LIST_LEN bench_common) - 1)))
$m: $(fill "$(module_format "$k2")" "$n2" x "$lo2" "$hi2" $(($(param_bound LIST_LEN bench_common) - 1)))
$m: unknown parameter 'no_such': it takes $(cut -d' ' -f1 <<<"$table" | paste -sd, | sed 's/,/, /g')" \
		"$m" no_such=1 "$n2=x" "$n1=-1"
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
