// SPDX-License-Identifier: GPL-2.0

//! What a static cache's count promises at the registration's drop, in userspace only: the
//! kernel would warn (the misuse below), and `make test` fails on any warning in its logs; the
//! races need threads.
//!
//! - A failed allocation never keeps the cache alive: with every allocation through the cache
//!   type failing, on several threads, while the registration is dropped, the registration
//!   destroys the cache, every time.
//! - An allocation that succeeds while the registration goes holds a counted object, which keeps
//!   the cache: the objects stay valid and free into it.
//! - An object that reaches the allocator uncounted (a bulk round's object made a box with
//!   `Box::from_raw`, which breaks `from_raw`'s contract) does not make the count wrap: the
//!   cache is not destroyed under a box that is still alive.
//!
//! Each test makes the twin's `kmem_cache_destroy` miss live objects, as SLUB does without
//! `CONFIG_SLUB_DEBUG`: a cache destroyed under an object is then released, and the object's
//! free a use after free, which Miri reports.

use kernel::alloc::flags::{GFP_ATOMIC, GFP_KERNEL};
use kernel::alloc::Box;
use kernel::bindings::{
    get_current, kmem_cache, kmem_cache_destroy, kmem_cache_destroy_misses_live,
    kmem_cache_objects_in_use, CACHES_RELEASED,
};
use kernel::slab_bulk::{CacheFlags, CacheRegistration, StaticCache};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads allocating through the cache type while the registration goes.
const THREADS: usize = if cfg!(miri) { 3 } else { 8 };

/// Makes the calling thread's next fault point fail: its next allocation request, made with
/// flags that may fail (no direct reclaim).
fn fail_next() {
    // SAFETY: `get_current()` is this thread's task; only this thread writes it.
    unsafe { (*get_current()).fail_nth = 1 };
}

/// Registers `C`, its cache made to miss live objects when destroyed (SLUB without
/// `CONFIG_SLUB_DEBUG`): a destroy under a live object frees the cache, which Miri reports at the
/// object's free. Returns the registration and its C cache.
fn register_missing_live<C: StaticCache>() -> (CacheRegistration<C>, *mut kmem_cache) {
    let reg = C::register().expect("register");
    let raw = reg.as_raw();
    // SAFETY: `raw` is the registration's live cache.
    unsafe { kmem_cache_destroy_misses_live(raw) };
    (reg, raw)
}

/// The caches `kmem_cache_destroy` released on this test's thread.
fn released() -> usize {
    CACHES_RELEASED.with(|n| n.get())
}

/// Disarms `fail_next`.
fn fail_none() {
    // SAFETY: As in `fail_next`.
    unsafe { (*get_current()).fail_nth = 0 };
}

/// Registers `C`, starts [`THREADS`] threads allocating through `C` with every allocation
/// failing, drops the registration while they do, and returns whether the drop destroyed the
/// cache (it leaks it otherwise, which the test then destroys itself).
fn failing_allocations_race_the_drop<C: StaticCache<Item = u64>>() -> bool {
    let (reg, raw) = register_missing_live::<C>();
    let attempts = AtomicUsize::new(0);
    let released_before = released();
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                // Until the registration is gone, and a few times after it.
                let mut after = 0;
                while after < 2 {
                    if C::cell().is_retired() {
                        after += 1;
                    }
                    fail_next();
                    let b = Box::<u64, C>::new(1, GFP_ATOMIC);
                    assert!(b.is_err(), "an allocation was to fail");
                    attempts.fetch_add(1, Ordering::Relaxed);
                }
                fail_none();
            });
        }
        while attempts.load(Ordering::Relaxed) < 2 * THREADS {
            std::thread::yield_now();
        }
        drop(reg);
    });
    assert!(C::cell().is_retired());
    let destroyed = released() == released_before + 1;
    if !destroyed {
        // SAFETY: The cache was leaked; no object of it was ever allocated, nothing uses it.
        unsafe {
            assert_eq!(kmem_cache_objects_in_use(raw), 0);
            kmem_cache_destroy(raw);
        }
    }
    destroyed
}

macro_rules! caches {
    ($($name:ident = $cname:literal),* $(,)?) => {
        $(
            kernel::static_cache! {
                struct $name(u64) = $cname, CacheFlags::NO_MERGE;
            }
        )*
        /// Runs the race once per cache declared here; returns how many leaked.
        fn race_every_cache() -> usize {
            [$(failing_allocations_race_the_drop::<$name>()),*]
                .into_iter()
                .filter(|&destroyed| !destroyed)
                .count()
        }
    };
}

caches! {
    Failing0 = c"contract_failing0", Failing1 = c"contract_failing1",
    Failing2 = c"contract_failing2", Failing3 = c"contract_failing3",
    Failing4 = c"contract_failing4", Failing5 = c"contract_failing5",
    Failing6 = c"contract_failing6", Failing7 = c"contract_failing7",
    Failing8 = c"contract_failing8", Failing9 = c"contract_failing9",
    Failing10 = c"contract_failing10", Failing11 = c"contract_failing11",
    Failing12 = c"contract_failing12", Failing13 = c"contract_failing13",
    Failing14 = c"contract_failing14", Failing15 = c"contract_failing15",
}

/// Sixteen registrations, each dropped while [`THREADS`] threads allocate through its type and
/// every allocation fails (in the slab while the cell is live, refused once it is retired): no
/// object was ever alive, so every registration destroys its cache. (Before the fix, an
/// allocation counted itself before its check and a drop that read the count then leaked the
/// cache: 4 of 16 natively, 8 of 16 under Miri.)
#[test]
fn failed_allocations_never_keep_the_cache() {
    let leaked = race_every_cache();
    assert_eq!(leaked, 0, "caches leaked by failed allocations");
}

kernel::static_cache! {
    /// Allocated, and kept, by several threads while the registration goes.
    struct Kept(u64) = c"contract_kept", CacheFlags::NO_MERGE;
}

/// [`THREADS`] threads allocate through the cache type and keep every box while the
/// registration is dropped, each having made one before it: the registration leaks the cache
/// for them, and every box stays valid and frees into it afterwards.
#[test]
fn succeeding_allocations_keep_the_cache() {
    let (reg, raw) = register_missing_live::<Kept>();
    let made = AtomicUsize::new(0);
    let released_before = released();
    let kept: Vec<Vec<Box<u64, Kept>>> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..THREADS as u64)
            .map(|t| {
                let made = &made;
                s.spawn(move || {
                    let mut kept = Vec::new();
                    for n in 0u64.. {
                        match Box::<u64, Kept>::new(t << 32 | n, GFP_KERNEL) {
                            Ok(b) => kept.push(b),
                            Err(_) => break,
                        }
                        if n == 0 {
                            made.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    kept
                })
            })
            .collect();
        while made.load(Ordering::Relaxed) < THREADS {
            std::thread::yield_now();
        }
        drop(reg);
        threads
            .into_iter()
            .map(|t| t.join().expect("allocator thread"))
            .collect()
    });
    // Leaked for the boxes, which are intact and still free into the cache.
    assert_eq!(released(), released_before);
    let boxes: usize = kept.iter().map(Vec::len).sum();
    // SAFETY: The cache was leaked, not destroyed: it is live.
    assert_eq!(unsafe { kmem_cache_objects_in_use(raw) }, boxes as u64);
    for (t, boxes) in kept.iter().enumerate() {
        assert!(!boxes.is_empty());
        for (n, b) in boxes.iter().enumerate() {
            assert_eq!(**b, (t as u64) << 32 | n as u64);
        }
    }
    drop(kept);
    // SAFETY: As above; empty now, and unused after this.
    unsafe {
        assert_eq!(kmem_cache_objects_in_use(raw), 0);
        kmem_cache_destroy(raw);
    }
}

kernel::static_cache! {
    /// Allocations that succeed and fail in turn, freed at once, while the registration goes.
    struct Mixed(u64) = c"contract_mixed", CacheFlags::NO_MERGE;
}

/// Allocations that fail and allocations that succeed (each box freed at once), on
/// [`THREADS`] threads, while the registration is dropped: whichever the registration decides,
/// no object is freed to a destroyed cache (Miri would report it), and a leaked cache is left
/// without objects.
#[test]
fn mixed_allocations_race_the_drop() {
    let (reg, raw) = register_missing_live::<Mixed>();
    let attempts = AtomicUsize::new(0);
    let released_before = released();
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                let mut after = 0;
                for n in 0u64.. {
                    if Mixed::cell().is_retired() {
                        after += 1;
                        if after > 2 {
                            break;
                        }
                    }
                    if n % 2 == 0 {
                        fail_next();
                    }
                    let b = Box::<u64, Mixed>::new(n, GFP_ATOMIC);
                    fail_none();
                    if let Ok(b) = b {
                        assert_eq!(*b, n);
                    }
                    attempts.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        while attempts.load(Ordering::Relaxed) < 2 * THREADS {
            std::thread::yield_now();
        }
        drop(reg);
    });
    if released() == released_before {
        // Leaked: a box was alive when the registration went; all are gone now.
        // SAFETY: The cache was leaked; it is empty, and unused after this.
        unsafe {
            assert_eq!(kmem_cache_objects_in_use(raw), 0);
            kmem_cache_destroy(raw);
        }
    }
}

kernel::static_cache! {
    /// A bulk round's object made a box with `Box::from_raw`.
    struct Misused([u64; 2]) = c"contract_misused", CacheFlags::NO_MERGE;
}

/// The contract broken: an object of a bulk round on the registration (not counted) is made a
/// `Box<T, C>` with `Box::from_raw`, whose contract asks for memory that `C` allocated, and
/// freed through `C`. The count does not wrap (the free is warned about
/// and not taken out of it), so a box allocated afterwards is counted, and the registration
/// dropped while it lives leaks the cache instead of destroying it under the box.
#[test]
fn an_uncounted_free_does_not_wrap_the_count() {
    let (reg, raw) = register_missing_live::<Misused>();
    let mut batch = reg
        .alloc_bulk_with::<2>(GFP_KERNEL, |i| [i as u64; 2])
        .expect("bulk");
    let obj = batch.pop().expect("pop");
    drop(batch);
    let ptr = obj.into_raw();
    // SAFETY: None: this breaks `Box::from_raw`'s contract on purpose (the object is the
    // cache's, but `Misused` did not allocate it), which is what the test is about. The twin's
    // slab takes the object back, as SLUB would.
    let misused = unsafe { Box::<[u64; 2], Misused>::from_raw(ptr.as_ptr()) };
    assert_eq!(*misused, [1; 2]);
    assert_eq!(Misused::cell().live_objects(), 0);
    drop(misused);
    // The free was not counted out: the count is still 0, not `usize::MAX`.
    assert_eq!(Misused::cell().live_objects(), 0);
    // SAFETY: The cache is live.
    assert_eq!(unsafe { kmem_cache_objects_in_use(raw) }, 0);

    let alive = Box::<[u64; 2], Misused>::new([5; 2], GFP_KERNEL).expect("alloc");
    assert_eq!(Misused::cell().live_objects(), 1);
    let released_before = released();
    drop(reg);
    if released() != released_before {
        // Destroyed under the box: freeing it would be a use after free.
        std::mem::forget(alive);
        panic!("the registration destroyed the cache under a live box");
    }
    assert_eq!(*alive, [5; 2]);
    drop(alive);
    assert_eq!(Misused::cell().live_objects(), 0);
    // SAFETY: The cache was leaked for the box, which is gone: it is live, empty, and unused
    // after this.
    unsafe {
        assert_eq!(kmem_cache_objects_in_use(raw), 0);
        kmem_cache_destroy(raw);
    }
}
