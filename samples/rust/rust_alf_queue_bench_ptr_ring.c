// SPDX-License-Identifier: GPL-2.0
/*
 * The C side of rust_alf_queue_bench: the timed loops of ptr_ring and of the
 * C reference of the original alf_queue (rust_alf_queue_ref.h), linked into
 * the Rust module.  The Rust side calls a loop once per timed run and times
 * the call like its own loops.
 *
 * ptr_ring (include/linux/ptr_ring.h) is all static inline functions.  Called
 * through one Rust helper per operation it would pay a function call per
 * element that its C users do not, hence its loop here.
 *
 * The C reference is the like-for-like yardstick for the Rust queue: same
 * algorithm, same ring, but the kernel's cmpxchg() (see its header).
 */

#include <linux/compiler.h>
#include <linux/ptr_ring.h>
#include <linux/slab.h>

#include "rust_alf_queue_bench_ptr_ring.h"
/* With the C reference's entry points (see the header). */
#define ALF_REF_BENCH_ENTRY_POINTS
#include "rust_alf_queue_ref.h"

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
