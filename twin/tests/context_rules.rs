// SPDX-License-Identifier: GPL-2.0

//! The twin's slab enforces what the kernel's checks with debugging on: no write to an object
//! after it was freed (SLUB's poisoning), no allocation that may sleep where sleeping is not
//! allowed (`might_alloc()`), no bulk call with IRQs disabled. Each check is shown to fire,
//! and `kernel::qmempool` is shown to reduce `GFP_KERNEL` to a non-sleeping allocation where
//! it refills under a guard or in a softirq.

use kernel::alloc::flags::{GFP_ATOMIC, GFP_KERNEL};
use kernel::bindings;
use kernel::cpu::{in_hardirq, in_softirq, on_cpu, MACHINE};
use kernel::qmempool::{BhGuard, QMemPool};
use kernel::slab_bulk::{CacheFlags, ObjArray, OwnedCache};

#[test]
#[cfg_attr(miri, ignore = "the twin checks poison natively only")]
#[should_panic(expected = "written after it was freed")]
fn write_after_free_is_caught() {
    let cache = OwnedCache::<[u64; 4]>::new(c"rules_uaf", CacheFlags::NO_MERGE).expect("cache");
    let raw = cache.as_raw();
    // SAFETY: `raw` is a live cache; the object is freed once, then (the bug being shown)
    // written through a stale pointer, which stays inside the twin's live slab.
    unsafe {
        let obj = bindings::kmem_cache_alloc_noprof(raw, bindings::GFP_KERNEL);
        assert!(!obj.is_null());
        bindings::kmem_cache_free(raw, obj);
        obj.cast::<u8>().add(5).write(0);
        // The object is the next one handed out: its poison is checked there.
        let again = bindings::kmem_cache_alloc_noprof(raw, bindings::GFP_KERNEL);
        bindings::kmem_cache_free(raw, again);
    }
}

#[test]
#[should_panic(expected = "sleeping allocation")]
fn sleeping_allocation_in_atomic_context_is_caught() {
    let _machine = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = OwnedCache::<u64>::new(c"rules_sleep", CacheFlags::NO_MERGE).expect("cache");
    on_cpu(0, || {
        let _guard = BhGuard::new().expect("guard");
        drop(cache.alloc(1, GFP_KERNEL));
    });
}

#[test]
#[should_panic(expected = "with IRQs disabled")]
fn bulk_call_with_irqs_disabled_is_caught() {
    let _machine = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = OwnedCache::<u64>::new(c"rules_irq", CacheFlags::NO_MERGE).expect("cache");
    let mut batch = ObjArray::<'_, _, 4>::new(cache.uninit());
    on_cpu(0, || in_hardirq(|| batch.alloc(4, GFP_ATOMIC)))
        .expect("not reached: the twin panics first");
}

#[test]
fn qmempool_refills_without_sleeping() {
    let _machine = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = OwnedCache::<u64>::new(c"rules_pool", CacheFlags::NO_MERGE).expect("cache");
    let pool = QMemPool::<u64>::new(&cache).expect("pool");
    on_cpu(0, || {
        // The local queue is empty: each call refills it in bulk from the cache.
        let guard = BhGuard::new().expect("guard");
        let a = pool.alloc_in(&guard, 1, GFP_KERNEL).expect("alloc_in");
        drop(guard);
        drop(a);
    });
    on_cpu(1, || {
        in_softirq(|| {
            let b = pool.alloc(2, GFP_KERNEL).expect("alloc in softirq");
            assert_eq!(*b, 2);
        })
    });
}
