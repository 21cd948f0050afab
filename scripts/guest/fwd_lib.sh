# shellcheck shell=sh
# Guest plan snippet: IPv4 forwarding through fwdnic (drivers/net/fwdnic), the pieces that
# fwd_bench.sh (make bench) and fwd_test.sh (make test) share.  Put it in the plan before
# either; init.sh sources the plan, so say() and load() are at hand.
#
# The forwarding set up as in the 2015 measurements (the slab_nomerge thread on dm-devel):
# ip_forward 1, rp_filter 0, ip_early_demux 0, IPv6 off, fwdnic0 198.18.0.254/24 (where the
# frames come from), fwdnic1 172.16.0.1/24 with a permanent neighbour for 172.16.0.66 (where
# they go).  fwdnic turns GRO off itself.
#
# Defined here for the users: fwd_dir (fwdnic's debugfs directory), fwd_params (its
# parameters), fwd_defer_max (the sysctl that bounds each defer list; read it with cat, not
# read: a shell's read takes a byte at a time, and a sysctl file read at an offset past 0 is
# empty, so read would get the first digit and fail), fwd_result (the last run's line), and the
# functions below.

fwd_dir=/sys/kernel/debug/fwdnic
fwd_params=/sys/module/fwdnic/parameters
fwd_defer_max=/proc/sys/net/core/skb_defer_max
fwd_result=

# fwd_setup MODULE.ko [ARG...]: load fwdnic with its arguments and set up the forwarding;
# fails (status 1) with a message on the console if a step does.
fwd_setup() {
	for f in /proc/sys/net/ipv6/conf/default/disable_ipv6 /proc/sys/net/ipv6/conf/all/disable_ipv6; do
		[ ! -e $f ] || echo 1 >$f
	done
	load "$@"
	[ -d "$fwd_dir" ] || { say "fwd: no $fwd_dir: fwdnic did not load"; return 1; }
	if ! { echo 1 >/proc/sys/net/ipv4/ip_forward &&
		echo 0 >/proc/sys/net/ipv4/conf/all/rp_filter &&
		echo 0 >/proc/sys/net/ipv4/conf/default/rp_filter &&
		echo 0 >/proc/sys/net/ipv4/ip_early_demux; }; then
		say "fwd: a sysctl was refused"
		return 1
	fi
	if ! { busybox ip addr add 198.18.0.254/24 dev fwdnic0 &&
		busybox ip addr add 172.16.0.1/24 dev fwdnic1; }; then
		say "fwd: addresses refused"
		return 1
	fi
	fwd_links up
}

# fwd_links up|down: both ports up or down.  The addresses stay and the routes follow the
# links; the neighbour goes with fwdnic1's link, so up adds it again.
fwd_links() {
	if ! { busybox ip link set fwdnic0 "$1" && busybox ip link set fwdnic1 "$1"; }; then
		say "fwd: ip link set $1 failed"
		return 1
	fi
	[ "$1" = up ] || return 0
	# Busybox's ip has no "neigh add"; its arp -s makes a permanent entry.
	if ! busybox arp -i fwdnic1 -s 172.16.0.66 00:aa:aa:aa:aa:aa; then
		say "fwd: neighbour refused"
		return 1
	fi
}

# fwd_run PACKETS: one burst through the NIC and the stack; sets fwd_result to fwdnic's line
# ("packets=N forwarded=N ns=T flows=1 free=shim complete=1"), status 1 if the write was refused.
fwd_run() {
	fwd_result=
	echo "$1" >"$fwd_dir"/run || { fwd_result="refused"; return 1; }
	fwd_result=$(cat "$fwd_dir"/run)
}

# fwd_prime MODULE.ko [ARG...]: set up, and leave the ports down, for a leak check that starts
# after it and a test that goes on with the module loaded.  The first IPv4 address added after
# boot makes the kernel allocate a few objects once, whatever the device (kmemleak in UML
# reports three of them as unreferenced, and no more after further cycles), which are not the
# test's to account for.  (Loading the module a second time instead is no way around it: in a
# kernel with KASAN but not KASAN_VMALLOC, as the UML test kernels are, a module loaded again
# is written over the poisoned shadow its predecessor left, which KASAN reports.)
fwd_prime() {
	fwd_setup "$@" && fwd_links down
}
