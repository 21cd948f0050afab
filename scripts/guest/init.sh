#!/bin/sh
# PID 1 of every guest the project boots: UML (root = the toolchain root over hostfs) and QEMU
# (root = an initramfs).  It mounts the basics, runs the plan the host wrote (the file named by
# rfl_plan= on the kernel command line, a shell snippet using the helpers below) and powers off.
# Everything it reports goes to the console with an "rfl_" prefix, which the host parses.

PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH

mount -t proc proc /proc 2>/dev/null
mount -t sysfs sysfs /sys 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t devtmpfs devtmpfs /dev 2>/dev/null

say() { echo "rfl_guest: $*" >/dev/console; }

# load MODULE.ko [PARAMS...]: insmod, reporting success or the error.  Busybox's insmod, also in
# the Debian root: kmod's takes an uncompressed module for a compressed one here (EINVAL).
load() {
	if out=$(busybox insmod "$@" 2>&1); then
		say "insmod ok $(basename "$1")"
	else
		say "insmod failed $(basename "$1"): $out"
	fi
}

# unload NAME: rmmod, reporting the error if any.
unload() {
	busybox rmmod "$1" 2>/dev/null || say "rmmod failed $1"
}

# fault_tasks_setup: make fail_page_alloc fail every page allocation it may, for the tasks that
# set make_it_fail (the project's fault-injection tests mark themselves).
fault_tasks_setup() {
	d=/sys/kernel/debug/fail_page_alloc
	if echo Y >$d/task-filter && echo 100 >$d/probability && echo 1 >$d/interval &&
		echo -1 >$d/times && echo 0 >$d/space && echo 0 >$d/verbose; then
		say "fail_page_alloc: task-filter set up"
	else
		say "fail_page_alloc: setup failed"
	fi
}

# kunit_rerun SUITE: run a built-in KUnit suite again (debugfs) and print its KTAP results.
kunit_rerun() {
	if echo 1 >/sys/kernel/debug/kunit/"$1"/run; then
		say "kunit results begin $1"
		cat /sys/kernel/debug/kunit/"$1"/results >/dev/console
		say "kunit results end $1"
	else
		say "kunit rerun failed $1"
	fi
}

# kmemleak_report LABEL: scan twice (kmemleak reports only objects older than 5 s and seen in
# two scans) and print the suspects between markers, after the uptime at which the report
# began.  UML has boot-time suspects of its own, so a test compares two reports, before and
# after the code under test ran, and counts the suspects allocated after the first began.
kmemleak_report() {
	if [ ! -e /sys/kernel/debug/kmemleak ]; then
		say "kmemleak unavailable"
		return
	fi
	say "kmemleak uptime $1 $(cut -d' ' -f1 /proc/uptime)"
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	echo scan >/sys/kernel/debug/kmemleak
	say "kmemleak begin $1"
	cat /sys/kernel/debug/kmemleak >/dev/console
	say "kmemleak end $1"
}

say "init up: $(uname -r) $(grep -c ^processor /proc/cpuinfo) cpu(s)"
say "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
if [ -n "$rfl_plan" ] && [ -f "$rfl_plan" ]; then
	# The plan the host wrote: scripts/guest/*.sh and its own lines. Read whole with cat, not
	# sourced with `.`: 6.12's UML, sourcing a one-line plan here, has run it without its
	# module's path for some lines (`load bulk=16 ...`, seen with set -x), which cat reads whole.
	eval "$(cat "$rfl_plan")"
else
	say "no plan (rfl_plan=$rfl_plan)"
fi
say "plan done"
sync
if grep -q UML /proc/cpuinfo; then
	# UML exits on power-off.  Debian's minimal root has no poweroff of its own: busybox's.
	poweroff -f 2>/dev/null || busybox poweroff -f
else
	# QEMU runs with -no-reboot: a reboot ends it (powering off would need ACPI).
	reboot -f
fi
