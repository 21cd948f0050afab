// SPDX-License-Identifier: GPL-2.0

#include <linux/lockdep.h>
#include <linux/slab.h>

__rust_helper void rust_helper_lockdep_assert_irqs_enabled(void)
{
	lockdep_assert_irqs_enabled();
}

/*
 * For the KUnit suites of kernel::slab_bulk and kernel::qmempool only: object
 * counts read through mm's internal header, which no other user of the Rust
 * API may depend on.
 */
#if defined(CONFIG_KUNIT) && defined(CONFIG_SLUB_DEBUG)
#include "../../mm/slab.h"

/*
 * The number of objects of @s allocated right now.  Flushing the per-CPU
 * slabs and releasing empty slabs first makes /proc/slabinfo's active_objs
 * exact.
 */
__rust_helper unsigned long rust_helper_kmem_cache_objects_in_use(struct kmem_cache *s)
{
	struct slabinfo info = {};

	kmem_cache_shrink(s);
	get_slabinfo(s, &info);
	return info.active_objs;
}

/* The number of objects in one slab of @s. */
__rust_helper unsigned int rust_helper_kmem_cache_objects_per_slab(struct kmem_cache *s)
{
	struct slabinfo info = {};

	get_slabinfo(s, &info);
	return info.objects_per_slab;
}
#endif
