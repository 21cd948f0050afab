// SPDX-License-Identifier: GPL-2.0
/*
 * The prefilled-sheaf way of rust_qmempool_bench (7.x): its timed loop over
 * kmem_cache_prefill_sheaf() and its companions.  Those are not exported to
 * modules, so this file is built into the kernel whenever the benchmark is
 * enabled, and exports the loop alone, to the benchmark module.
 */

#include <linux/export.h>
#include <linux/gfp.h>
#include <linux/slab.h>
#include "rust_qmempool_bench_c.h"

/*
 * @loops rounds, each: refill @sheaf so that it holds at least @n objects
 * (kmem_cache_refill_sheaf(); SLUB tops a sheaf of the cache's own capacity
 * up to full, and replaces it with one of @n if @n is larger), take @n
 * objects from it (kmem_cache_alloc_from_sheaf(), which cannot fail for the
 * objects the sheaf holds) into @objs, and free them (kmem_cache_free(),
 * into the CPU's own sheaf).  This is how a caller that must not fail later
 * uses the API, as the maple tree does.  Process context (GFP_KERNEL).
 *
 * Returns how many objects were allocated and freed: @n * @loops unless a
 * refill failed.
 */
unsigned long rust_qmempool_bench_sheaf_run(struct kmem_cache *s, void **objs,
					    int n, unsigned long loops)
{
	struct slab_sheaf *sheaf;
	unsigned long done = 0, l;
	int i, got;

	sheaf = kmem_cache_prefill_sheaf(s, GFP_KERNEL, n);
	if (!sheaf)
		return 0;

	for (l = 0; l < loops; l++) {
		if (kmem_cache_refill_sheaf(s, GFP_KERNEL, &sheaf, n))
			break;
		for (got = 0; got < n; got++) {
			objs[got] = kmem_cache_alloc_from_sheaf(s, GFP_KERNEL,
								sheaf);
			if (!objs[got])
				break;
		}
		for (i = 0; i < got; i++)
			kmem_cache_free(s, objs[i]);
		if (got < n)
			break;
		done += n;
	}

	kmem_cache_return_sheaf(s, GFP_KERNEL, sheaf);
	return done;
}
EXPORT_SYMBOL_GPL(rust_qmempool_bench_sheaf_run);
