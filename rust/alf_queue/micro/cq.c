// SPDX-License-Identifier: GPL-2.0
/*
 * The C reference queue of rust_alf_queue_bench in userspace, built by build.rs
 * with gcc -O2: the kernel primitives its header uses, mapped to GCC builtins,
 * and the sample's entry points around the header's loops (the harness runs
 * copy 0 of their code).
 */
#include <stdbool.h>
#include <stdlib.h>

typedef unsigned int u32;
#define ____cacheline_aligned __attribute__((aligned(64)))
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#define smp_load_acquire(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)
#define cmpxchg(p, o, n) __sync_val_compare_and_swap(p, o, n)
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define cpu_relax() __builtin_ia32_pause()
#define fallthrough __attribute__((fallthrough))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define __always_inline inline __attribute__((always_inline))
#define GFP_KERNEL 0
/* Page-aligned, as kmalloc() places the queue (a power-of-two size) in the kernel. */
#define kzalloc(sz, f) aligned_alloc(4096, ((sz) + 4095) & ~4095UL)
#define kfree free
#define struct_size(q, f, n) (sizeof(*(q)) + (n) * sizeof(void *))
#define is_power_of_2(n) ((n) && !((n) & ((n) - 1)))

#include "../../../samples/rust/rust_alf_queue_ref.h"

struct alf_ref_queue *rust_alf_queue_bench_cq_new(u32 size)
{
	return alf_ref_new(size, 0U - ALF_REF_START_BELOW_WRAP);
}

unsigned long rust_alf_queue_bench_cq_mpmc_run(struct alf_ref_queue *q,
					       void **objs, int n,
					       unsigned long loops, int copy)
{
	return bench_in_copy(alf_ref_mpmc_loop, q, objs, n, loops, copy);
}

unsigned long rust_alf_queue_bench_cq_spsc_run(struct alf_ref_queue *q,
					       void **objs, int n,
					       unsigned long loops, int copy)
{
	return bench_in_copy(alf_ref_spsc_loop, q, objs, n, loops, copy);
}

unsigned long rust_alf_queue_bench_cq_mpmc_check(struct alf_ref_queue *q,
						 void **objs, int n,
						 unsigned long loops)
{
	return alf_ref_check(q, objs, n, loops, true);
}

unsigned long rust_alf_queue_bench_cq_spsc_check(struct alf_ref_queue *q,
						 void **objs, int n,
						 unsigned long loops)
{
	return alf_ref_check(q, objs, n, loops, false);
}
