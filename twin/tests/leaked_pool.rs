// SPDX-License-Identifier: GPL-2.0

//! Leaking is safe: a `QMemPool` leaked with `mem::forget` keeps its registrations (in the kernel,
//! a shrinker and a CPU hotplug instance that reach the cache), so the cache it pins must not be
//! destroyed when its `OwnedCache` is dropped after it: the drop leaks the cache instead.

use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::alloc::flags::GFP_ATOMIC;
use kernel::bindings::{self, CACHES_RELEASED};
use kernel::cpu::{on_cpu, MACHINE};
use kernel::qmempool::QMemPool;
use kernel::slab_bulk::{CacheFlags, OwnedCache};

/// Where the leaked pool is left: leaked as `mem::forget` leaks it (never dropped, its borrow of
/// the cache over), but reachable from a static, so that Miri's leak check, which would report
/// the very leak this test makes on purpose, does not fail the run.
static FORGOTTEN: AtomicPtr<u8> = AtomicPtr::new(core::ptr::null_mut());

/// The caches `kmem_cache_destroy` released on this test's thread.
fn released() -> usize {
    CACHES_RELEASED.with(|n| n.get())
}

#[test]
fn forgotten_pool_keeps_its_cache() {
    let _machine = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = OwnedCache::<u64>::new(c"leak_pool", CacheFlags::NO_MERGE).expect("cache");
    // Without the pool's pin, SLUB without debugging would release the cache with the pool's
    // objects in it (the twin does too, when told to).
    // SAFETY: `cache` is live.
    unsafe { bindings::kmem_cache_destroy_misses_live(cache.as_raw()) };
    let pool = QMemPool::<u64>::new(&cache).expect("pool");
    on_cpu(0, || drop(pool.alloc(7, GFP_ATOMIC).expect("alloc")));
    // Never dropped: its registrations (in the kernel) stay, and its borrow of `cache` is over.
    FORGOTTEN.store(Box::into_raw(Box::new(pool)).cast(), Ordering::Relaxed);
    let before = released();
    drop(cache);
    assert_eq!(
        released(),
        before,
        "a cache pinned by a leaked pool was destroyed"
    );
}

#[test]
fn dropped_pool_unpins_its_cache() {
    let _machine = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = OwnedCache::<u64>::new(c"unpin_pool", CacheFlags::NO_MERGE).expect("cache");
    let pool = QMemPool::<u64>::new(&cache).expect("pool");
    on_cpu(0, || drop(pool.alloc(7, GFP_ATOMIC).expect("alloc")));
    drop(pool);
    let before = released();
    drop(cache);
    assert_eq!(
        released(),
        before + 1,
        "the cache of a dropped pool was not destroyed"
    );
}
