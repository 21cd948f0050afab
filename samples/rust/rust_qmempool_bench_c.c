// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of rust_qmempool_bench: a C reference of prototype-kernel's
 * qmempool (kernel/mm/qmempool.c and include/linux/qmempool.h, Jesper Dangaard
 * Brouer, 2014), written again with the kernel's current primitives, and its
 * timed loop, linked into the Rust module.
 *
 * What it keeps from the original: a per-CPU single-producer single-consumer
 * localq in front of a multi-producer multi-consumer sharedq, both the
 * original's alf_queue (the C reference of rust_alf_queue_ref.h, a cmpxchg()
 * per reservation on the multi sides, one slot always free, each bulk copied
 * slot by slot); 16 elements moved at a time; allocation from the localq,
 * else 16 from the sharedq (one returned, the rest to the localq), else from
 * the slab, which refills the sharedq with twice 16; a free into the localq,
 * else 16 from the localq to the sharedq, else to the slab (and 32 more out
 * of the sharedq to make room); local_bh_disable() around each call unless
 * the caller serves a softirq.
 *
 * What differs: the slab refill and drain use kmem_cache_alloc_bulk() and
 * kmem_cache_free_bulk() where the original, which predates them, looped
 * over kmem_cache_alloc() and kmem_cache_free() (its comments ask for a bulk
 * interface); the queues are cache-line aligned in every build, as the Rust
 * ones are; and a failed refill returns NULL instead of BUG().
 */

#include <linux/array_size.h>
#include <linux/atomic.h>
#include <linux/bottom_half.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/cpumask.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/objpool.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/processor.h>
#include <linux/slab.h>
#include <asm/barrier.h>

#include "rust_alf_queue_ref.h"
#include "rust_qmempool_bench_c.h"

#define CPOOL_BULK 16
#define CPOOL_REFILL_MULTIPLIER 2

struct cpool_percpu {
	struct alf_ref_queue *localq;
};

struct rust_qmempool_bench_cpool {
	struct alf_ref_queue *sharedq;
	struct cpool_percpu __percpu *percpu;
	struct kmem_cache *kmem;
};

static struct alf_ref_queue *cpool_queue_new(u32 size)
{
	return alf_ref_new(size, 0);
}

/* The queue operations of the pool: each bulk copied slot by slot. */
#define cq_mp_enqueue(q, objs, n) alf_ref_mp_enqueue(q, objs, n, false)
#define cq_mc_dequeue(q, objs, n) alf_ref_mc_dequeue(q, objs, n, false)
#define cq_sp_enqueue(q, objs, n) alf_ref_sp_enqueue(q, objs, n, false)
#define cq_sc_dequeue(q, objs, n) alf_ref_sc_dequeue(q, objs, n, false)

/* Every element of every queue goes back to the slab. */
void rust_qmempool_bench_cpool_free(struct rust_qmempool_bench_cpool *pool)
{
	void *elem;
	int cpu;

	if (pool->percpu) {
		for_each_possible_cpu(cpu) {
			struct alf_ref_queue *q = per_cpu_ptr(pool->percpu, cpu)->localq;

			if (!q)
				continue;
			while (cq_mc_dequeue(q, &elem, 1))
				kmem_cache_free(pool->kmem, elem);
			kfree(q);
		}
		free_percpu(pool->percpu);
	}
	if (pool->sharedq) {
		while (cq_mc_dequeue(pool->sharedq, &elem, 1))
			kmem_cache_free(pool->kmem, elem);
		kfree(pool->sharedq);
	}
	kfree(pool);
}

struct rust_qmempool_bench_cpool *
rust_qmempool_bench_cpool_new(struct kmem_cache *kmem, u32 localq_sz,
			      u32 sharedq_sz)
{
	struct rust_qmempool_bench_cpool *pool = kzalloc(sizeof(*pool), GFP_KERNEL);
	int cpu;

	if (!pool)
		return NULL;
	if (localq_sz < CPOOL_BULK ||
	    sharedq_sz < CPOOL_BULK * CPOOL_REFILL_MULTIPLIER)
		goto fail;
	pool->kmem = kmem;
	pool->sharedq = cpool_queue_new(sharedq_sz);
	pool->percpu = alloc_percpu(struct cpool_percpu);
	if (!pool->sharedq || !pool->percpu)
		goto fail;
	for_each_possible_cpu(cpu) {
		struct cpool_percpu *c = per_cpu_ptr(pool->percpu, cpu);

		c->localq = cpool_queue_new(localq_sz);
		if (!c->localq)
			goto fail;
	}
	return pool;
fail:
	rust_qmempool_bench_cpool_free(pool);
	return NULL;
}

/* The sharedq is empty: refill it from the slab, and return one more. */
static noinline void *cpool_alloc_from_slab(struct rust_qmempool_bench_cpool *pool)
{
	void *elems[CPOOL_BULK * CPOOL_REFILL_MULTIPLIER + 1];
	u32 n = ARRAY_SIZE(elems);

	if (!kmem_cache_alloc_bulk(pool->kmem, GFP_ATOMIC, n, elems))
		return NULL;
	if (cq_mp_enqueue(pool->sharedq, &elems[1], n - 1) != n - 1)
		kmem_cache_free_bulk(pool->kmem, n - 1, &elems[1]);
	return elems[0];
}

/* The localq is empty: refill it from the sharedq, and return one more. */
static noinline void *cpool_alloc_from_sharedq(struct rust_qmempool_bench_cpool *pool,
					       struct alf_ref_queue *localq)
{
	void *elems[CPOOL_BULK];
	u32 num;

	num = cq_mc_dequeue(pool->sharedq, elems, CPOOL_BULK);
	if (likely(num > 0)) {
		if (num > 1 && !cq_sp_enqueue(localq, &elems[1], num - 1))
			kmem_cache_free_bulk(pool->kmem, num - 1, &elems[1]);
		return elems[0];
	}
	return cpool_alloc_from_slab(pool);
}

/* The sharedq is full: free @elems, and make room in the sharedq. */
static void cpool_free_to_slab(struct rust_qmempool_bench_cpool *pool,
			       void **elems, u32 n)
{
	void *more[CPOOL_BULK * CPOOL_REFILL_MULTIPLIER];
	u32 num;

	kmem_cache_free_bulk(pool->kmem, n, elems);
	num = cq_mc_dequeue(pool->sharedq, more, ARRAY_SIZE(more));
	if (num)
		kmem_cache_free_bulk(pool->kmem, num, more);
}

/* The localq is full: move @elem and 15 of the localq to the sharedq. */
static noinline void cpool_free_to_sharedq(struct rust_qmempool_bench_cpool *pool,
					   struct alf_ref_queue *localq, void *elem)
{
	void *elems[CPOOL_BULK];
	u32 num;

	elems[0] = elem;
	num = cq_sc_dequeue(localq, &elems[1], CPOOL_BULK - 1) + 1;
	if (cq_mp_enqueue(pool->sharedq, elems, num) != num)
		cpool_free_to_slab(pool, elems, num);
}

/* main_qmempool_alloc(): BH disabled or in softirq. */
static __always_inline void *cpool_alloc(struct rust_qmempool_bench_cpool *pool)
{
	struct alf_ref_queue *localq = this_cpu_ptr(pool->percpu)->localq;
	void *elem;

	if (likely(cq_sc_dequeue(localq, &elem, 1) == 1))
		return elem;
	return cpool_alloc_from_sharedq(pool, localq);
}

/* __qmempool_free(): BH disabled or in softirq. */
static __always_inline void cpool_free(struct rust_qmempool_bench_cpool *pool,
				       void *elem)
{
	struct alf_ref_queue *localq = this_cpu_ptr(pool->percpu)->localq;

	if (likely(cq_sp_enqueue(localq, &elem, 1) == 1))
		return;
	cpool_free_to_sharedq(pool, localq, elem);
}

/* __qmempool_preempt_disable(): nothing to do when serving a softirq. */
static __always_inline bool cpool_enter(void)
{
	bool softirq = in_serving_softirq();

	if (!softirq)
		local_bh_disable();
	return softirq;
}

static __always_inline void cpool_exit(bool softirq)
{
	if (!softirq)
		local_bh_enable();
}

/*
 * The timed loop: @loops times, allocate @n elements into @objs, then free
 * them.  With @bh_held, the caller has disabled bottom halves around the
 * whole loop and each call goes straight to the queues (the original's
 * softirq functions); otherwise each call protects itself as the original's
 * qmempool_alloc() and qmempool_free() do.  Returns the number of elements
 * allocated and freed.
 */
unsigned long
rust_qmempool_bench_cpool_run(struct rust_qmempool_bench_cpool *pool,
			      void **objs, int n, unsigned long loops,
			      bool bh_held)
{
	unsigned long done = 0;
	unsigned long l;
	bool state;
	int i;

	for (l = 0; l < loops; l++) {
		for (i = 0; i < n; i++) {
			if (bh_held) {
				objs[i] = cpool_alloc(pool);
			} else {
				state = cpool_enter();
				objs[i] = cpool_alloc(pool);
				cpool_exit(state);
			}
			if (unlikely(!objs[i]))
				goto out;
		}
		barrier();
		for (i = 0; i < n; i++) {
			if (bh_held) {
				cpool_free(pool, objs[i]);
			} else {
				state = cpool_enter();
				cpool_free(pool, objs[i]);
				cpool_exit(state);
			}
		}
		done += n;
	}
	return done;
out:
	state = cpool_enter();
	while (i--)
		cpool_free(pool, objs[i]);
	cpool_exit(state);
	return done;
}

/*
 * The kernel's own per-CPU object pool (lib/objpool.c, since 6.7): per-CPU
 * rings of objects preallocated with the pool, IRQs saved and restored around
 * each pop and push; a pop tries this CPU's ring, then the others'.  It never
 * allocates after objpool_init(): an empty pool returns NULL.
 */
struct objpool_head *rust_qmempool_bench_objpool_new(int objs_per_cpu,
						     int object_size)
{
	struct objpool_head *head = kzalloc(sizeof(*head), GFP_KERNEL);

	if (!head)
		return NULL;
	if (objpool_init(head, objs_per_cpu * num_possible_cpus(), object_size,
			 GFP_KERNEL, NULL, NULL, NULL)) {
		kfree(head);
		return NULL;
	}
	return head;
}

/* Every object must have been pushed back: objpool_fini() frees the pool. */
void rust_qmempool_bench_objpool_free(struct objpool_head *head)
{
	objpool_fini(head);
	kfree(head);
}

unsigned long rust_qmempool_bench_objpool_run(struct objpool_head *head,
					      void **objs, int n,
					      unsigned long loops)
{
	unsigned long done = 0;
	unsigned long l;
	int i;

	for (l = 0; l < loops; l++) {
		for (i = 0; i < n; i++) {
			objs[i] = objpool_pop(head);
			if (unlikely(!objs[i]))
				goto out;
		}
		barrier();
		for (i = 0; i < n; i++)
			objpool_push(objs[i], head);
		done += n;
	}
	return done;
out:
	while (i--)
		objpool_push(objs[i], head);
	return done;
}
