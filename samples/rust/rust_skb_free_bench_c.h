/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C side of rust_skb_free_bench (rust_skb_free_bench_c.c), called from
 * rust_skb_free_bench.rs (which declares this function again in Rust).
 */
#ifndef RUST_SKB_FREE_BENCH_C_H
#define RUST_SKB_FREE_BENCH_C_H

struct sk_buff;

void rust_skb_free_bench_shim(struct sk_buff *const *skbs, unsigned int n,
			      int budget);

#endif
