// SPDX-License-Identifier: GPL-2.0
/*
 * The ptr_ring side of rust_alf_queue_bench.
 *
 * ptr_ring (include/linux/ptr_ring.h) is all static inline functions.  Called
 * through one Rust helper per operation it would pay a function call per
 * element that its C users do not, so its whole timed loop is here, in C,
 * linked into the Rust module: the Rust side calls it once per timed run and
 * times the call like its own loops.
 */

#include <linux/ptr_ring.h>
#include <linux/slab.h>

#include "rust_alf_queue_bench_ptr_ring.h"

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
unsigned long rust_alf_queue_bench_ptr_ring_run(struct ptr_ring *r, void **objs,
						int n, unsigned long loops)
{
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
