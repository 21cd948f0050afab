// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of rust_alf_queue_bench: the timed loops of ptr_ring and of a C
 * reference of the original alf_queue, linked into the Rust module.  The Rust
 * side calls a loop once per timed run and times the call like its own loops.
 *
 * ptr_ring (include/linux/ptr_ring.h) is all static inline functions.  Called
 * through one Rust helper per operation it would pay a function call per
 * element that its C users do not, hence its loop here.
 *
 * The C reference ("cq" below) reproduces the bulk paths of the C original of
 * kernel::alf_queue: prototype-kernel's include/linux/alf_queue.h (Jesper
 * Dangaard Brouer and Hannes Frederic Sowa, 2014), written again here with
 * the kernel's current primitives.  It is the like-for-like yardstick for the
 * Rust queue: same algorithm, same ring, but the kernel's cmpxchg(), which on
 * a uniprocessor kernel (UML) has no LOCK prefix, as in the C original's UP
 * build, while on an SMP kernel (QEMU x86_64) it is a LOCK CMPXCHG like the
 * Rust queue's compare-and-swap everywhere.
 */

#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/ptr_ring.h>
#include <linux/slab.h>

#include "rust_alf_queue_bench_ptr_ring.h"

/* A timed loop: @loops round trips of @n elements of @objs through @ring. */
typedef unsigned long (*bench_loop_fn)(void *ring, void **objs, int n,
				       unsigned long loops);

/*
 * Runs @loop in copy @copy (0 to 3) of the code.  Each timed loop below exists
 * in four copies, one per arm of the switch: @loop is a constant
 * __always_inline function at every call site, so each arm inlines its own
 * copy.  Copy @p starts with 16 * @p bytes of NOPs, run once per call, which
 * also keeps the arms from being merged.  A loop's cost on the benchmark's CPU
 * moves with the address of its code, so the Rust side runs its repetitions on
 * the copies in turn, its own loops' copies too (placed() in
 * rust_alf_queue_bench_loops.rs).
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

/*
 * The C reference queue: the original's struct alf_queue.  Each side has a
 * head (the end of its reservations) and a tail (the end of its committed
 * operations), free-running u32 indices; slot i of the ring is i & mask.
 *
 * The original aligns the sides with ____cacheline_aligned_in_smp, which on a
 * UP build puts both in one cache line.  Here they are ____cacheline_aligned
 * in every build, like the Rust queue's, so that the two differ in their
 * atomics and not in their layout.
 */
struct rust_alf_queue_bench_cq_side {
	u32 head;
	u32 tail;
};

struct rust_alf_queue_bench_cq {
	u32 size;
	u32 mask;
	struct rust_alf_queue_bench_cq_side prod ____cacheline_aligned;
	struct rust_alf_queue_bench_cq_side cons ____cacheline_aligned;
	void *ring[] ____cacheline_aligned;
};

/*
 * The indices start this far below 2^32, so the first (warm-up) run of every
 * bulk size crosses the u32 wrap-around, and the checks below cover it.  The
 * original starts at 0; only the index values differ.
 */
#define CQ_START_BELOW_WRAP 4096U

/* Returns an empty queue of @size slots (a power of two), or NULL. */
struct rust_alf_queue_bench_cq *rust_alf_queue_bench_cq_new(u32 size)
{
	struct rust_alf_queue_bench_cq *q;
	u32 start = 0U - CQ_START_BELOW_WRAP;

	if (!is_power_of_2(size))
		return NULL;
	q = kzalloc(struct_size(q, ring, size), GFP_KERNEL);
	if (!q)
		return NULL;
	q->size = size;
	q->mask = size - 1;
	q->prod.head = start;
	q->prod.tail = start;
	q->cons.head = start;
	q->cons.tail = start;
	return q;
}

void rust_alf_queue_bench_cq_free(struct rust_alf_queue_bench_cq *q)
{
	kfree(q);
}

/*
 * Copies @n pointers from @objs into the slots from index @head, as the
 * original's __helper_alf_enqueue_store_unroll(): a bulk that stays clear of
 * the last slot is copied without masking, four at a time, then the one to
 * three left over; any other goes slot by slot through the mask.
 */
static __always_inline void cq_store(struct rust_alf_queue_bench_cq *q,
				     u32 head, void **objs, u32 n)
{
	u32 idx = head & q->mask;
	u32 i;

	if (likely(idx + n <= q->mask)) {
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

/* The other way, as __helper_alf_dequeue_load_unroll(). */
static __always_inline void cq_load(struct rust_alf_queue_bench_cq *q,
				    u32 head, void **objs, u32 n)
{
	u32 idx = head & q->mask;
	u32 i;

	if (likely(idx + n <= q->mask)) {
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
 * nothing: 0 if they do not fit; one slot always stays free, as in the
 * original), copy, wait until the producers that reserved earlier have
 * committed, then publish prod.tail.  Returns the number enqueued.
 */
static __always_inline u32 cq_mp_enqueue(struct rust_alf_queue_bench_cq *q,
					 void **objs, u32 n)
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

	cq_store(q, head, objs, n);
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
static __always_inline u32 cq_mc_dequeue(struct rust_alf_queue_bench_cq *q,
					 void **objs, u32 n)
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

	cq_load(q, head, objs, elems);
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
static __always_inline u32 cq_sp_enqueue(struct rust_alf_queue_bench_cq *q,
					 void **objs, u32 n)
{
	u32 head = q->prod.head;

	/* Pairs with the release of cons.tail in the dequeues. */
	if (n > q->mask + smp_load_acquire(&q->cons.tail) - head)
		return 0;
	q->prod.head = head + n;
	cq_store(q, head, objs, n);
	/* Pairs with the acquire of prod.tail in the dequeues. */
	smp_store_release(&q->prod.tail, head + n);
	return n;
}

/* alf_sc_dequeue(): the same with a single consumer, which owns cons.head. */
static __always_inline u32 cq_sc_dequeue(struct rust_alf_queue_bench_cq *q,
					 void **objs, u32 n)
{
	u32 head = q->cons.head;
	u32 elems;

	/* Pairs with the release of prod.tail in the enqueues. */
	elems = smp_load_acquire(&q->prod.tail) - head;
	if (!elems)
		return 0;
	elems = min(elems, n);
	q->cons.head = head + elems;
	cq_load(q, head, objs, elems);
	/* Pairs with the acquire of cons.tail in the enqueues. */
	smp_store_release(&q->cons.tail, head + elems);
	return elems;
}

/* An order-sensitive hash of @objs[0..@n). */
static unsigned long cq_fingerprint(void **objs, u32 n)
{
	unsigned long h = 0;
	u32 i;

	for (i = 0; i < n; i++)
		h = h * 31 + (unsigned long)objs[i];
	return h;
}

/* One round of the timed loop: @n in, @n out.  Returns false if fewer moved. */
static __always_inline bool cq_round(struct rust_alf_queue_bench_cq *q,
				     void **objs, u32 n, bool multi)
{
	if ((multi ? cq_mp_enqueue(q, objs, n) : cq_sp_enqueue(q, objs, n)) != n)
		return false;
	return (multi ? cq_mc_dequeue(q, objs, n) : cq_sc_dequeue(q, objs, n)) == n;
}

/*
 * The timed loop: @loops times, enqueue the @n pointers of @objs in one bulk,
 * then dequeue @n in one bulk back into @objs (multi-producer/consumer
 * functions if @multi, single ones otherwise).  Returns the number of elements
 * that made the round trip, @n * @loops unless an operation moved fewer.
 *
 * The count each call returns is its only check, as in the Rust loops it is
 * compared with; the rest is in cq_check(), which is not timed.
 */
static __always_inline unsigned long cq_run(struct rust_alf_queue_bench_cq *q,
					    void **objs, u32 n,
					    unsigned long loops, bool multi)
{
	unsigned long moved = 0;
	unsigned long l;

	for (l = 0; l < loops; l++) {
		if (!cq_round(q, objs, n, multi))
			break;
		moved += n;
	}
	return moved;
}

/*
 * The checks of the C reference, run before the timed runs and not timed:
 * the loop of cq_run(), @loops rounds, but in every round one slot of @objs
 * (the next one each time) is cleared between the enqueue and the dequeue and
 * must come back holding what was enqueued from it; at the end, @objs must
 * hold what it held at the start, in the same order, and the four indices
 * must all have advanced by the number of elements moved, @n * @loops.
 * Returns the number of failed checks.
 */
static unsigned long cq_check(struct rust_alf_queue_bench_cq *q, void **objs,
			      u32 n, unsigned long loops, bool multi)
{
	unsigned long before = cq_fingerprint(objs, n);
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
		if ((multi ? cq_mp_enqueue(q, objs, n) :
			     cq_sp_enqueue(q, objs, n)) != n)
			break;
		sent = objs[j];
		objs[j] = NULL;
		if ((multi ? cq_mc_dequeue(q, objs, n) :
			     cq_sc_dequeue(q, objs, n)) != n) {
			objs[j] = sent;
			break;
		}
		bad += objs[j] != sent;
		j = j + 1 == n ? 0 : j + 1;
		moved += n;
	}
	end = start + (u32)moved;
	bad += moved != (unsigned long)n * loops;
	bad += cq_fingerprint(objs, n) != before;
	bad += q->prod.head != end || q->prod.tail != end ||
	       q->cons.head != end || q->cons.tail != end;
	return bad;
}

/* cq_run() with alf_mp_enqueue() and alf_mc_dequeue(). */
static __always_inline unsigned long cq_mpmc_loop(void *q, void **objs, int n,
						  unsigned long loops)
{
	return cq_run(q, objs, n, loops, true);
}

/* cq_run() with alf_sp_enqueue() and alf_sc_dequeue(). */
static __always_inline unsigned long cq_spsc_loop(void *q, void **objs, int n,
						  unsigned long loops)
{
	return cq_run(q, objs, n, loops, false);
}

/* cq_mpmc_loop() in copy @copy of its code (0 to 3). */
unsigned long rust_alf_queue_bench_cq_mpmc_run(struct rust_alf_queue_bench_cq *q,
					       void **objs, int n,
					       unsigned long loops, int copy)
{
	return bench_in_copy(cq_mpmc_loop, q, objs, n, loops, copy);
}

/* cq_spsc_loop() in copy @copy of its code (0 to 3). */
unsigned long rust_alf_queue_bench_cq_spsc_run(struct rust_alf_queue_bench_cq *q,
					       void **objs, int n,
					       unsigned long loops, int copy)
{
	return bench_in_copy(cq_spsc_loop, q, objs, n, loops, copy);
}

/* cq_check() with the multi-producer/consumer functions. */
unsigned long rust_alf_queue_bench_cq_mpmc_check(struct rust_alf_queue_bench_cq *q,
						 void **objs, int n,
						 unsigned long loops)
{
	return cq_check(q, objs, n, loops, true);
}

/* cq_check() with the single-producer/consumer functions. */
unsigned long rust_alf_queue_bench_cq_spsc_check(struct rust_alf_queue_bench_cq *q,
						 void **objs, int n,
						 unsigned long loops)
{
	return cq_check(q, objs, n, loops, false);
}

/* Returns an empty ring of @size entries, or NULL. */
struct ptr_ring *rust_alf_queue_bench_ptr_ring_new(int size)
{
	struct ptr_ring *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (r && ptr_ring_init(r, size, GFP_KERNEL)) {
		kfree(r);
		r = NULL;
	}
	return r;
}

/* Frees @r (the pointers it may still hold are not objects of ours). */
void rust_alf_queue_bench_ptr_ring_free(struct ptr_ring *r)
{
	ptr_ring_cleanup(r, NULL);
	kfree(r);
}

/*
 * @loops times: ptr_ring_produce() the @n non-NULL pointers of @objs one by
 * one, then ptr_ring_consume_batched() them back into @objs.  Returns the
 * number of elements that made the round trip: @n * @loops unless the ring
 * was too small (or not empty).
 */
static __always_inline unsigned long ptr_ring_loop(void *ring, void **objs,
						   int n, unsigned long loops)
{
	struct ptr_ring *r = ring;
	unsigned long moved = 0;
	unsigned long l;
	int i;

	for (l = 0; l < loops; l++) {
		for (i = 0; i < n; i++)
			if (ptr_ring_produce(r, objs[i]))
				return moved;
		if (ptr_ring_consume_batched(r, objs, n) != n)
			return moved;
		moved += n;
	}
	return moved;
}

/* ptr_ring_loop() in copy @copy of its code (0 to 3). */
unsigned long rust_alf_queue_bench_ptr_ring_run(struct ptr_ring *r, void **objs,
						int n, unsigned long loops,
						int copy)
{
	return bench_in_copy(ptr_ring_loop, r, objs, n, loops, copy);
}
