// SPDX-License-Identifier: GPL-2.0

//! A registration dropped while boxes of its cache (`Box<T, C>`) live, which only userspace
//! tests: the kernel then warns, and `make test` fails on any warning in its logs.
//!
//! The cell counts the objects of its allocator and does not destroy a cache that has some: it
//! leaks it, so they stay valid and may still be freed to it. That must not rest on
//! `kmem_cache_destroy` keeping a cache whose shutdown found objects: without
//! `CONFIG_SLUB_DEBUG`, or for KFENCE's objects, it does not find them and releases the cache.
//! The twin's slab is told to behave so here; had the registration destroyed the cache, the
//! frees below would be a use after free, which Miri reports.

use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::Box;
use kernel::bindings::{
    kmem_cache_destroy, kmem_cache_destroy_misses_live, kmem_cache_objects_in_use, CACHES_RELEASED,
};
use kernel::slab_bulk::{CacheFlags, StaticCache};

kernel::static_cache! {
    /// Survivors of their registration.
    struct Survivors([u64; 8]) = c"static_survivors", CacheFlags::NO_MERGE | CacheFlags::HWCACHE_ALIGN;
}

#[test]
fn objects_outlive_their_registration() {
    let reg = Survivors::register().expect("register");
    let raw = reg.as_raw();
    // SAFETY: `raw` is the registration's live cache.
    unsafe { kmem_cache_destroy_misses_live(raw) };
    let mut kept = Box::<_, Survivors>::new([1; 8], GFP_KERNEL).expect("alloc");
    let mut batch = reg
        .alloc_bulk_with::<4>(GFP_KERNEL, |i| [i as u64; 8])
        .expect("bulk");
    let other = reg.keep(batch.pop().expect("pop")).expect("keep");
    // Turned back into a borrowed object: no longer counted, freed with the batch.
    let back = reg.to_obj(reg.keep(batch.pop().expect("pop")).expect("keep"));
    batch.push(back).map_err(|_| ()).expect("push");
    drop(batch);
    // SAFETY: The cache is live.
    assert_eq!(unsafe { kmem_cache_objects_in_use(raw) }, 2);

    // Dropped with two objects alive: the cache is leaked, not destroyed.
    let released = CACHES_RELEASED.with(|n| n.get());
    drop(reg);
    assert_eq!(CACHES_RELEASED.with(|n| n.get()), released);
    assert!(Survivors::cell().is_retired());
    assert!(Survivors::register().is_err());
    // The allocator refuses once the registration is gone.
    assert!(Box::<_, Survivors>::new([0; 8], GFP_KERNEL).is_err());
    // SAFETY: The cache was leaked for the two objects: it is still live.
    assert_eq!(unsafe { kmem_cache_objects_in_use(raw) }, 2);

    // The objects are still valid, and still go back to their own cache.
    kept[7] = 7;
    assert_eq!((kept[0], kept[7], other[0]), (1, 7, 3));
    drop(kept);
    drop(other);
    // SAFETY: As above.
    assert_eq!(unsafe { kmem_cache_objects_in_use(raw) }, 0);
    // The leaked cache stays for the rest of the kernel's life; the test, which knows it is
    // empty and unused, gives the twin's memory back (else Miri reports its slab as a leak).
    // SAFETY: The cache is live, no object is left, and nothing uses it after this.
    unsafe { kmem_cache_destroy(raw) };
}

kernel::static_cache! {
    /// Objects all gone before their registration.
    struct Settled(u64) = c"static_settled", CacheFlags::NO_MERGE;
}

#[test]
fn registration_destroys_a_cache_without_boxes() {
    let reg = Settled::register().expect("register");
    let raw = reg.as_raw();
    // SAFETY: `raw` is the registration's live cache.
    unsafe { kmem_cache_destroy_misses_live(raw) };
    let a = Box::<_, Settled>::new(1, GFP_KERNEL).expect("alloc");
    let b = Box::<_, Settled>::new(2, GFP_KERNEL).expect("alloc");
    drop(a);
    let b = reg.to_obj(b);
    assert_eq!(*b, 2);
    drop(b);
    // No box left: the registration destroys the cache.
    let released = CACHES_RELEASED.with(|n| n.get());
    drop(reg);
    assert_eq!(CACHES_RELEASED.with(|n| n.get()), released + 1);
    assert!(Settled::cell().is_retired());
}

kernel::static_cache! {
    /// Allocated from another thread while the registration goes.
    struct Racing(u64) = c"static_racing", CacheFlags::NO_MERGE;
}

/// Allocations through the cache type on one thread while the registration is dropped on
/// another: each allocation either sees the cell retired and fails, or is counted before the
/// registration reads the count, which then keeps the cache. The boxes that were made stay
/// valid and free into the cache after the registration is gone; under Miri, a destroy that
/// raced with an allocation would be a use after free.
#[test]
fn allocations_race_with_the_registration_drop() {
    use std::sync::atomic::{AtomicUsize, Ordering};

    let reg = Racing::register().expect("register");
    let raw = reg.as_raw();
    // SAFETY: `raw` is the registration's live cache.
    unsafe { kmem_cache_destroy_misses_live(raw) };
    let made = AtomicUsize::new(0);
    let released = CACHES_RELEASED.with(|n| n.get());
    let kept = std::thread::scope(|s| {
        let allocator = s.spawn(|| {
            let mut kept = Vec::new();
            for n in 0u64.. {
                let Ok(b) = Box::<u64, Racing>::new(n, GFP_KERNEL) else {
                    break;
                };
                made.fetch_add(1, Ordering::Relaxed);
                if n % 4 == 0 {
                    kept.push(b);
                }
            }
            kept
        });
        while made.load(Ordering::Relaxed) < 8 {
            std::thread::yield_now();
        }
        drop(reg);
        allocator.join().expect("allocator thread")
    });
    // Boxes were kept when the registration went: it leaked the cache for them.
    assert!(!kept.is_empty());
    assert_eq!(CACHES_RELEASED.with(|n| n.get()), released);
    assert!(kept.iter().enumerate().all(|(i, b)| **b == 4 * i as u64));
    drop(kept);
    // SAFETY: The cache was leaked, not destroyed; it is empty now and unused after this.
    unsafe {
        assert_eq!(kmem_cache_objects_in_use(raw), 0);
        kmem_cache_destroy(raw);
    }
}
