/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C side of rust_alf_queue_bench: the timed loops of ptr_ring and of the
 * C reference of the original alf_queue, and the C reference's untimed
 * checks, called from rust_alf_queue_bench.rs (which declares these functions
 * again in Rust).
 */
#ifndef RUST_ALF_QUEUE_BENCH_PTR_RING_H
#define RUST_ALF_QUEUE_BENCH_PTR_RING_H

#include <linux/types.h>

struct ptr_ring;
struct alf_ref_queue;

struct ptr_ring *rust_alf_queue_bench_ptr_ring_new(int size);
void rust_alf_queue_bench_ptr_ring_free(struct ptr_ring *r);
unsigned long rust_alf_queue_bench_ptr_ring_run(struct ptr_ring *r, void **objs,
						int n, unsigned long loops,
						int copy);

struct alf_ref_queue *rust_alf_queue_bench_cq_new(u32 size);
void rust_alf_queue_bench_cq_free(struct alf_ref_queue *q);
unsigned long rust_alf_queue_bench_cq_mpmc_run(struct alf_ref_queue *q,
					       void **objs, int n,
					       unsigned long loops, int copy);
unsigned long rust_alf_queue_bench_cq_spsc_run(struct alf_ref_queue *q,
					       void **objs, int n,
					       unsigned long loops, int copy);
unsigned long rust_alf_queue_bench_cq_mpmc_check(struct alf_ref_queue *q,
						 void **objs, int n,
						 unsigned long loops);
unsigned long rust_alf_queue_bench_cq_spsc_check(struct alf_ref_queue *q,
						 void **objs, int n,
						 unsigned long loops);

#endif
