// SPDX-License-Identifier: GPL-2.0

//! A registration dropped while `StaticObj`s live, which only userspace tests: the kernel then
//! warns ("Slab cache still has objects"), and `make test` fails on any warning in its logs.
//!
//! The kernel keeps such a cache (`kmem_cache_destroy` does not release a cache whose shutdown
//! failed), so the objects stay valid and may still be freed to it: a leak and a warning, never
//! a use after free. The twin's slab does the same; under Miri a freed cache would be a use
//! after free here.

use kernel::alloc::flags::GFP_KERNEL;
use kernel::bindings::LEAKED_OBJECTS;
use kernel::slab_bulk::{Cache, CacheFlags, StaticCache};
use std::sync::atomic::Ordering;

/// The objects of `cache` allocated right now (the twin's count, not a `slab_bulk` API).
fn in_use<T>(cache: &Cache<T>) -> usize {
    // SAFETY: `cache` is a live cache of the userspace slab.
    unsafe { kernel::bindings::kmem_cache_objects_in_use(cache.as_raw()) as usize }
}

kernel::static_cache! {
    /// Survivors of their registration.
    struct Survivors([u64; 8]) = c"static_survivors", CacheFlags::NO_MERGE | CacheFlags::HWCACHE_ALIGN;
}

#[test]
fn objects_outlive_their_registration() {
    let reg = Survivors::register().expect("register");
    let mut kept = reg.alloc_static([1; 8], GFP_KERNEL).expect("alloc");
    let mut batch = reg
        .alloc_bulk_with::<4>(GFP_KERNEL, |i| [i as u64; 8])
        .expect("bulk");
    let other = reg.keep(batch.pop().expect("pop")).expect("keep");
    drop(batch);
    assert_eq!(in_use(&reg), 2);
    let leaked = LEAKED_OBJECTS.load(Ordering::Relaxed);

    // The cache is destroyed with two objects alive: reported, and kept.
    drop(reg);
    assert_eq!(LEAKED_OBJECTS.load(Ordering::Relaxed), leaked + 2);
    assert!(Survivors::slot().is_retired());
    assert!(Survivors::register().is_err());

    // The objects are still valid, and still go back to their own cache.
    kept[7] = 7;
    assert_eq!((kept[0], kept[7], other[0]), (1, 7, 3));
    drop(kept);
    drop(other);
}
