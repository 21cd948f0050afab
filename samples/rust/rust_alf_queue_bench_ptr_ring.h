/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C side of rust_alf_queue_bench: ptr_ring's timed loop, called from
 * rust_alf_queue_bench.rs (which declares these functions again in Rust).
 */
#ifndef RUST_ALF_QUEUE_BENCH_PTR_RING_H
#define RUST_ALF_QUEUE_BENCH_PTR_RING_H

struct ptr_ring;

struct ptr_ring *rust_alf_queue_bench_ptr_ring_new(int size);
void rust_alf_queue_bench_ptr_ring_free(struct ptr_ring *r);
unsigned long rust_alf_queue_bench_ptr_ring_run(struct ptr_ring *r, void **objs,
						int n, unsigned long loops);

#endif
