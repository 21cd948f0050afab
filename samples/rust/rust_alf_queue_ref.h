/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C reference queue: the bulk paths of the C original of kernel::alf_queue,
 * prototype-kernel's include/linux/alf_queue.h (Jesper Dangaard Brouer and
 * Hannes Frederic Sowa, 2014), written again with the kernel's current
 * primitives, all static inline.  Included by rust_alf_queue_bench_ptr_ring.c
 * (the yardstick of rust_alf_queue_bench), by rust_qmempool_bench_c.c (the
 * queues of the C qmempool) and by the userspace harness in
 * rust/alf_queue/micro, which defines the primitives below (READ_ONCE(),
 * smp_load_acquire(), cmpxchg(), kzalloc()...) before including it.
 *
 * Each side has a head (the end of its reservations) and a tail (the end of
 * its committed operations), free-running u32 indices; slot i of the ring is
 * i & mask, and one slot always stays free.  The kernel's cmpxchg() has no
 * LOCK prefix on a uniprocessor kernel (UML), as in the C original's UP build,
 * and is a LOCK CMPXCHG on an SMP kernel, like the Rust queue's
 * compare-and-swap everywhere.
 *
 * The original aligns the sides with ____cacheline_aligned_in_smp, which on a
 * UP build puts both in one cache line.  Here they are ____cacheline_aligned
 * in every build, like the Rust queue's, so that the two differ in their
 * atomics and not in their layout.
 *
 * @unroll, a constant at every call site, picks how a bulk is copied: as the
 * original's __helper_alf_enqueue_store_unroll() (the alf_queue benchmark) or
 * slot by slot through the mask (the C qmempool).
 */
#ifndef RUST_ALF_QUEUE_REF_H
#define RUST_ALF_QUEUE_REF_H

#ifdef __KERNEL__
#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/processor.h>
#include <linux/slab.h>
#include <linux/types.h>
#include <asm/barrier.h>
#endif

struct alf_ref_side {
	u32 head;
	u32 tail;
};

struct alf_ref_queue {
	u32 size;
	u32 mask;
	struct alf_ref_side prod ____cacheline_aligned;
	struct alf_ref_side cons ____cacheline_aligned;
	void *ring[] ____cacheline_aligned;
};

/*
 * Returns an empty queue of @size slots (a power of two) whose four indices
 * start at @start, or NULL.  @start is a constant at every call site: with 0,
 * kzalloc() has set the indices.
 */
static inline struct alf_ref_queue *alf_ref_new(u32 size, u32 start)
{
	struct alf_ref_queue *q;

	if (!is_power_of_2(size))
		return NULL;
	q = kzalloc(struct_size(q, ring, size), GFP_KERNEL);
	if (!q)
		return NULL;
	q->size = size;
	q->mask = size - 1;
	if (start) {
		q->prod.head = start;
		q->prod.tail = start;
		q->cons.head = start;
		q->cons.tail = start;
	}
	return q;
}

/*
 * Copies @n pointers from @objs into the slots from index @head.  With
 * @unroll, as the original's __helper_alf_enqueue_store_unroll(): a bulk that
 * stays clear of the last slot is copied without masking, four at a time,
 * then the one to three left over; any other goes slot by slot through the
 * mask.  Without, every bulk goes slot by slot.
 */
static __always_inline void alf_ref_store(struct alf_ref_queue *q, u32 head,
					  void **objs, u32 n, bool unroll)
{
	u32 idx = head & q->mask;
	u32 i;

	if (unroll && likely(idx + n <= q->mask)) {
		for (i = 0; i + 4 <= n; i += 4, idx += 4) {
			q->ring[idx] = objs[i];
			q->ring[idx + 1] = objs[i + 1];
			q->ring[idx + 2] = objs[i + 2];
			q->ring[idx + 3] = objs[i + 3];
		}
		switch (n & 3) {
		case 3:
			q->ring[idx + 2] = objs[i + 2];
			fallthrough;
		case 2:
			q->ring[idx + 1] = objs[i + 1];
			fallthrough;
		case 1:
			q->ring[idx] = objs[i];
		}
	} else {
		for (i = 0; i < n; i++)
			q->ring[(head + i) & q->mask] = objs[i];
	}
}

/* The other way, as __helper_alf_dequeue_load_unroll() with @unroll. */
static __always_inline void alf_ref_load(struct alf_ref_queue *q, u32 head,
					 void **objs, u32 n, bool unroll)
{
	u32 idx = head & q->mask;
	u32 i;

	if (unroll && likely(idx + n <= q->mask)) {
		for (i = 0; i + 4 <= n; i += 4, idx += 4) {
			objs[i] = q->ring[idx];
			objs[i + 1] = q->ring[idx + 1];
			objs[i + 2] = q->ring[idx + 2];
			objs[i + 3] = q->ring[idx + 3];
		}
		switch (n & 3) {
		case 3:
			objs[i + 2] = q->ring[idx + 2];
			fallthrough;
		case 2:
			objs[i + 1] = q->ring[idx + 1];
			fallthrough;
		case 1:
			objs[i] = q->ring[idx];
		}
	} else {
		for (i = 0; i < n; i++)
			objs[i] = q->ring[(head + i) & q->mask];
	}
}

/*
 * alf_mp_enqueue(): reserve @n slots with a cmpxchg() on prod.head (all or
 * nothing: 0 if they do not fit), copy, wait until the producers that
 * reserved earlier have committed, then publish prod.tail.  Returns the
 * number enqueued.
 */
static __always_inline u32 alf_ref_mp_enqueue(struct alf_ref_queue *q,
					      void **objs, u32 n, bool unroll)
{
	u32 head, next;

	do {
		head = READ_ONCE(q->prod.head);
		/*
		 * Pairs with the release of cons.tail in the dequeues: the
		 * consumers are done reading the slots they committed.
		 */
		if (n > q->mask + smp_load_acquire(&q->cons.tail) - head)
			return 0;
		next = head + n;
	} while (unlikely(cmpxchg(&q->prod.head, head, next) != head));

	alf_ref_store(q, head, objs, n, unroll);
	while (unlikely(READ_ONCE(q->prod.tail) != head))
		cpu_relax();
	/*
	 * Pairs with the acquire of prod.tail in the dequeues: the slot
	 * stores above are visible to whoever sees the new tail.
	 */
	smp_store_release(&q->prod.tail, next);
	return n;
}

/*
 * alf_mc_dequeue(): reserve up to @n full slots with a cmpxchg() on
 * cons.head, copy them out, wait for the earlier consumers, publish
 * cons.tail.  Returns the number dequeued (0 if empty).
 */
static __always_inline u32 alf_ref_mc_dequeue(struct alf_ref_queue *q,
					      void **objs, u32 n, bool unroll)
{
	u32 head, next, elems;

	do {
		head = READ_ONCE(q->cons.head);
		/* Pairs with the release of prod.tail in the enqueues. */
		elems = smp_load_acquire(&q->prod.tail) - head;
		if (!elems)
			return 0;
		elems = min(elems, n);
		next = head + elems;
	} while (unlikely(cmpxchg(&q->cons.head, head, next) != head));

	alf_ref_load(q, head, objs, elems, unroll);
	while (unlikely(READ_ONCE(q->cons.tail) != head))
		cpu_relax();
	/* Pairs with the acquire of cons.tail in the enqueues. */
	smp_store_release(&q->cons.tail, next);
	return elems;
}

/*
 * alf_sp_enqueue(): the same with a single producer, which owns prod.head:
 * plain loads and stores, no cmpxchg(), no wait.
 */
static __always_inline u32 alf_ref_sp_enqueue(struct alf_ref_queue *q,
					      void **objs, u32 n, bool unroll)
{
	u32 head = q->prod.head;

	/* Pairs with the release of cons.tail in the dequeues. */
	if (n > q->mask + smp_load_acquire(&q->cons.tail) - head)
		return 0;
	q->prod.head = head + n;
	alf_ref_store(q, head, objs, n, unroll);
	/* Pairs with the acquire of prod.tail in the dequeues. */
	smp_store_release(&q->prod.tail, head + n);
	return n;
}

/* alf_sc_dequeue(): the same with a single consumer, which owns cons.head. */
static __always_inline u32 alf_ref_sc_dequeue(struct alf_ref_queue *q,
					      void **objs, u32 n, bool unroll)
{
	u32 head = q->cons.head;
	u32 elems;

	/* Pairs with the release of prod.tail in the enqueues. */
	elems = smp_load_acquire(&q->prod.tail) - head;
	if (!elems)
		return 0;
	elems = min(elems, n);
	q->cons.head = head + elems;
	alf_ref_load(q, head, objs, elems, unroll);
	/* Pairs with the acquire of cons.tail in the enqueues. */
	smp_store_release(&q->cons.tail, head + elems);
	return elems;
}

/*
 * The round trip of rust_alf_queue_bench (and of the micro harness), with the
 * unrolled copies: @n in, @n out, through the multi-producer/consumer
 * functions if @multi, the single ones otherwise; and the copies of the
 * benchmark's timed loops.
 */

/*
 * The benchmark's queues start this far below 2^32, so the first (warm-up)
 * run of every bulk size crosses the u32 wrap-around, and alf_ref_check()
 * covers it.  The original starts at 0; only the index values differ.
 */
#define ALF_REF_START_BELOW_WRAP 4096U

/* A timed loop: @loops round trips of @n elements of @objs through @ring. */
typedef unsigned long (*bench_loop_fn)(void *ring, void **objs, int n,
				       unsigned long loops);

/*
 * Runs @loop in copy @copy (0 to 3) of the code.  Each timed loop of the
 * benchmark (alf_ref_run() and ptr_ring's) exists in four copies, one per arm
 * of the switch: @loop is a constant __always_inline function at every call
 * site, so each arm inlines its own copy.  Copy @p starts with 16 * @p bytes
 * of NOPs, run once per call, which also keeps the arms from being merged.  A
 * loop's cost on the benchmark's CPU moves with the address of its code, so
 * the Rust side runs its repetitions on the copies in turn, its own loops'
 * copies too (placed() in bench_placement.rs).
 */
static __always_inline unsigned long bench_in_copy(bench_loop_fn loop,
						   void *ring, void **objs,
						   int n, unsigned long loops,
						   int copy)
{
	switch (copy) {
	case 1:
		asm volatile(".skip 16, 0x90");
		return loop(ring, objs, n, loops);
	case 2:
		asm volatile(".skip 32, 0x90");
		return loop(ring, objs, n, loops);
	case 3:
		asm volatile(".skip 48, 0x90");
		return loop(ring, objs, n, loops);
	default:
		return loop(ring, objs, n, loops);
	}
}

/* An order-sensitive hash of @objs[0..@n). */
static inline unsigned long alf_ref_fingerprint(void **objs, u32 n)
{
	unsigned long h = 0;
	u32 i;

	for (i = 0; i < n; i++)
		h = h * 31 + (unsigned long)objs[i];
	return h;
}

/* One round of the timed loop: @n in, @n out.  Returns false if fewer moved. */
static __always_inline bool alf_ref_round(struct alf_ref_queue *q, void **objs,
					  u32 n, bool multi)
{
	if ((multi ? alf_ref_mp_enqueue(q, objs, n, true) :
		     alf_ref_sp_enqueue(q, objs, n, true)) != n)
		return false;
	return (multi ? alf_ref_mc_dequeue(q, objs, n, true) :
			alf_ref_sc_dequeue(q, objs, n, true)) == n;
}

/*
 * The timed loop: @loops times, enqueue the @n pointers of @objs in one bulk,
 * then dequeue @n in one bulk back into @objs.  Returns the number of
 * elements that made the round trip, @n * @loops unless an operation moved
 * fewer.
 *
 * The count each call returns is its only check, as in the Rust loops it is
 * compared with; the rest is in alf_ref_check(), which is not timed.
 */
static __always_inline unsigned long alf_ref_run(struct alf_ref_queue *q,
						 void **objs, u32 n,
						 unsigned long loops,
						 bool multi)
{
	unsigned long moved = 0;
	unsigned long l;

	for (l = 0; l < loops; l++) {
		if (!alf_ref_round(q, objs, n, multi))
			break;
		moved += n;
	}
	return moved;
}

/* alf_ref_run() with alf_mp_enqueue() and alf_mc_dequeue(). */
static __always_inline unsigned long alf_ref_mpmc_loop(void *q, void **objs,
						       int n,
						       unsigned long loops)
{
	return alf_ref_run(q, objs, n, loops, true);
}

/* alf_ref_run() with alf_sp_enqueue() and alf_sc_dequeue(). */
static __always_inline unsigned long alf_ref_spsc_loop(void *q, void **objs,
						       int n,
						       unsigned long loops)
{
	return alf_ref_run(q, objs, n, loops, false);
}

/*
 * The checks of the C reference, run before the timed runs and not timed:
 * the loop of alf_ref_run(), @loops rounds, but in every round one slot of
 * @objs (the next one each time) is cleared between the enqueue and the
 * dequeue and must come back holding what was enqueued from it; at the end,
 * @objs must hold what it held at the start, in the same order, and the four
 * indices must all have advanced by the number of elements moved,
 * @n * @loops.  Returns the number of failed checks.
 */
static inline unsigned long alf_ref_check(struct alf_ref_queue *q, void **objs,
					  u32 n, unsigned long loops,
					  bool multi)
{
	unsigned long before = alf_ref_fingerprint(objs, n);
	u32 start = q->prod.head;
	unsigned long moved = 0;
	unsigned long bad = 0;
	unsigned long l;
	void *sent;
	u32 j = 0;
	u32 end;

	if (!n)
		return 0;
	for (l = 0; l < loops; l++) {
		if ((multi ? alf_ref_mp_enqueue(q, objs, n, true) :
			     alf_ref_sp_enqueue(q, objs, n, true)) != n)
			break;
		sent = objs[j];
		objs[j] = NULL;
		if ((multi ? alf_ref_mc_dequeue(q, objs, n, true) :
			     alf_ref_sc_dequeue(q, objs, n, true)) != n) {
			objs[j] = sent;
			break;
		}
		bad += objs[j] != sent;
		j = j + 1 == n ? 0 : j + 1;
		moved += n;
	}
	end = start + (u32)moved;
	bad += moved != (unsigned long)n * loops;
	bad += alf_ref_fingerprint(objs, n) != before;
	bad += q->prod.head != end || q->prod.tail != end ||
	       q->cons.head != end || q->cons.tail != end;
	return bad;
}

/*
 * The entry points of rust_alf_queue_bench's C reference, which its Rust side
 * declares (with their prototypes in rust_alf_queue_bench_ptr_ring.h): written
 * once, here, for the kernel module (rust_alf_queue_bench_ptr_ring.c) and the
 * userspace harness (rust/alf_queue/micro/cq.c), each of which defines
 * ALF_REF_BENCH_ENTRY_POINTS before it includes this header.
 */
#ifdef ALF_REF_BENCH_ENTRY_POINTS

/* Returns an empty queue of @size slots (a power of two), or NULL. */
struct alf_ref_queue *rust_alf_queue_bench_cq_new(u32 size)
{
	return alf_ref_new(size, 0U - ALF_REF_START_BELOW_WRAP);
}

void rust_alf_queue_bench_cq_free(struct alf_ref_queue *q)
{
	kfree(q);
}

/* alf_ref_mpmc_loop() in copy @copy of its code (0 to 3). */
unsigned long rust_alf_queue_bench_cq_mpmc_run(struct alf_ref_queue *q,
					       void **objs, int n,
					       unsigned long loops, int copy)
{
	return bench_in_copy(alf_ref_mpmc_loop, q, objs, n, loops, copy);
}

/* alf_ref_spsc_loop() in copy @copy of its code (0 to 3). */
unsigned long rust_alf_queue_bench_cq_spsc_run(struct alf_ref_queue *q,
					       void **objs, int n,
					       unsigned long loops, int copy)
{
	return bench_in_copy(alf_ref_spsc_loop, q, objs, n, loops, copy);
}

/* alf_ref_check() with the multi-producer/consumer functions. */
unsigned long rust_alf_queue_bench_cq_mpmc_check(struct alf_ref_queue *q,
						 void **objs, int n,
						 unsigned long loops)
{
	return alf_ref_check(q, objs, n, loops, true);
}

/* alf_ref_check() with the single-producer/consumer functions. */
unsigned long rust_alf_queue_bench_cq_spsc_check(struct alf_ref_queue *q,
						 void **objs, int n,
						 unsigned long loops)
{
	return alf_ref_check(q, objs, n, loops, false);
}

#endif /* ALF_REF_BENCH_ENTRY_POINTS */

#endif
