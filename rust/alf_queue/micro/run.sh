#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Per enqueue or dequeue of one element, for each variant and k:
#   run.sh ir     instructions (valgrind --tool=callgrind; exact)
#   run.sh time   ns of CPU time (perf stat -e task-clock, best of R runs; excludes time
#                 descheduled, not the effects of a busy sibling)
# KS (default "1 2 3 4 8 16 32 64"), E (elements) and R (runs) are taken from the environment.
set -eu
cd "$(dirname "$0")"
bin=./target/release/alf_queue_micro
# Always through cargo: a binary left from older sources would count their instructions.
cargo build -q --release
mode=${1:-ir}
if [ "$mode" = ir ]; then E=${E:-200000}; else E=${E:-8388608}; fi
R=${R:-3}
printf "%4s %12s %12s %12s %12s %12s %12s\n" k mpmc_single mpmc_bulk c_mpmc spsc_single spsc_bulk c_spsc
for k in ${KS:-1 2 3 4 8 16 32 64}; do
	line=$(printf "%4s" "$k")
	for v in 0 1 2 3 4 5; do
		if [ "$mode" = ir ]; then
			a=$(ONLY=$v,$k valgrind --tool=callgrind --callgrind-out-file=/dev/null $bin "$E" 2>&1 | awk '/Collected/ { print $4 }')
			b=$(ONLY=$v,$k valgrind --tool=callgrind --callgrind-out-file=/dev/null $bin $((2 * E)) 2>&1 | awk '/Collected/ { print $4 }')
			val=$(python3 -c "print('%12.2f' % (($b - $a) / (2 * $E)))")
		else
			best=999999999
			for _ in $(seq "$R"); do
				c=$(ONLY=$v,$k perf stat -x, -e task-clock $bin "$E" 2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }')
				best=$(python3 -c "print(min($best, $c))")
			done
			z=$(ONLY=$v,$k perf stat -x, -e task-clock $bin 1 2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }')
			val=$(python3 -c "print('%12.2f' % (($best - $z) * 1e6 / (2 * $E)))")
		fi
		line="$line $val"
	done
	echo "$line"
done
