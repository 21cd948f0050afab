/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C side of rust_qmempool_bench: a C reference of prototype-kernel's
 * qmempool and its timed loop and the timed loop of the kernel's objpool
 * (rust_qmempool_bench_c.c, in the module), and
 * on 7.x the prefilled-sheaf loop (rust_qmempool_bench_sheaf.c, built in),
 * called from rust_qmempool_bench.rs (which declares these functions again
 * in Rust).
 */
#ifndef RUST_QMEMPOOL_BENCH_C_H
#define RUST_QMEMPOOL_BENCH_C_H

#include <linux/types.h>

struct kmem_cache;
struct objpool_head;
struct rust_qmempool_bench_cpool;

struct rust_qmempool_bench_cpool *
rust_qmempool_bench_cpool_new(struct kmem_cache *kmem, u32 localq_sz,
			      u32 sharedq_sz);
void rust_qmempool_bench_cpool_free(struct rust_qmempool_bench_cpool *pool);
unsigned long
rust_qmempool_bench_cpool_run(struct rust_qmempool_bench_cpool *pool,
			      void **objs, int n, unsigned long loops,
			      bool bh_held);
struct objpool_head *rust_qmempool_bench_objpool_new(int objs_per_cpu,
						     int object_size);
void rust_qmempool_bench_objpool_free(struct objpool_head *head);
unsigned long rust_qmempool_bench_objpool_run(struct objpool_head *head,
					      void **objs, int n,
					      unsigned long loops);
unsigned long rust_qmempool_bench_sheaf_run(struct kmem_cache *s, void **objs,
					    int n, unsigned long loops);

#endif
