# shellcheck shell=sh
# Guest plan snippet: the skb head count that the exactly-once checks of shim_pktgen.sh and
# fwd_test.sh compare before and after traffic.  Put it in the plan before them.
#
# The count is skbuff_head_cache's objects in use, shrunk first so that SLUB's per-CPU slabs and
# sheaves are flushed.  After traffic it must be back to its baseline, give or take what per-CPU
# caches no free path owns may keep (skb_slack): the NAPI skb cache (64 heads per CPU in 6.12,
# 128 in 7.x) and, in 7.x, the deferred-free list napi_consume_skb() feeds for skbs allocated on
# another CPU (skb_defer_max, 128 per CPU).  A head lost per cleanup, or one per thousand
# packets, is far above that; KASAN (in the test kernels) reports a double free.

skb_head_slab=/sys/kernel/slab/skbuff_head_cache

# skb_heads: skbuff_head_cache's objects in use, per-CPU slabs and sheaves flushed first.
skb_heads() {
	echo 1 >$skb_head_slab/shrink
	cut -d' ' -f1 $skb_head_slab/objects
}

# skb_slack: the heads the per-CPU caches above may keep, for this kernel and its CPUs.
skb_slack() {
	n=$(grep -c '^processor' /proc/cpuinfo)
	if [ "$(uname -r | cut -d. -f1)" -ge 7 ]; then
		echo $((n * (128 + 128)))
	else
		echo $((n * 64))
	fi
}
