// SPDX-License-Identifier: GPL-2.0
/*
 * The C reference queue of rust_alf_queue_bench in userspace, built by build.rs
 * with gcc -O2: the kernel primitives its header uses, mapped to GCC builtins,
 * and the header with the sample's entry points around its loops (the harness
 * runs copy 0 of their code).
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

#define ALF_REF_BENCH_ENTRY_POINTS
#include "../../../samples/rust/rust_alf_queue_ref.h"
