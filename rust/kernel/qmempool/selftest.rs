// SPDX-License-Identifier: GPL-2.0

//! Tests of [`super`] that run in both worlds: as the KUnit suite `rust_qmempool` in the kernel
//! (registered by `slab_bulk/kunit.rs`), and as `cargo test` in the userspace twin, over its
//! userspace slab and CPUs (`twin/cpu.rs`).
//!
//! Leaks are checked through the cache's own object count ([`in_use`]) against
//! what the pool holds: every object of the test's cache is either out (a [`PoolObj`]) or in one
//! of the pool's queues, and none is left once the pool is dropped.
//!
//! The tests move between CPUs and contexts through three functions with one implementation per
//! world: [`on_cpu`] (the kernel: `work_on_cpu()`, a kworker bound to the CPU), [`in_softirq`]
//! (the kernel: a work item on `system_bh_wq`, which runs in softirq context on that CPU) and
//! [`irqs_off`] (`local_irq_disable()`, the context every hard-IRQ handler runs in); they count
//! the CPUs with [`ffi::online_cpus`]. On a kernel with one CPU the cross-CPU steps run on CPU 0.

use super::ffi;
use super::{BhGuard, PoolObj, QMemPool};
use crate::alloc::flags::GFP_ATOMIC;
#[cfg(CONFIG_FAILSLAB)]
use crate::error::code::ENOMEM;
use crate::slab_bulk::{CacheFlags, OwnedCache};
use core::sync::atomic::{AtomicUsize, Ordering};

/// Asserts in both worlds: KUnit's assertion in the kernel, `assert!` in the twin. (The file
/// name, below `rust/kernel/` as checkpatch wants a file not to name itself in full, is a C
/// string literal from 7.0 on (`kunit_assert_c_file`), a plain one before.)
///
/// A failure is also counted ([`failed`]): KUnit fails the case only for assertions in the
/// test's own task, and the steps run on another CPU or in a softirq assert elsewhere.
macro_rules! check {
    ($cond:expr) => {{
        #[cfg(not(kunit_assert_c_file))]
        $crate::kunit_assert!("rust_qmempool", "qmempool/selftest.rs", 0, failed($cond));
        #[cfg(kunit_assert_c_file)]
        $crate::kunit_assert!("rust_qmempool", c"qmempool/selftest.rs", 0, failed($cond));
    }};
}

/// Failed checks so far, in any context.
static FAILED: AtomicUsize = AtomicUsize::new(0);

/// Counts `ok` in [`FAILED`] if false; returns it.
fn failed(ok: bool) -> bool {
    if !ok {
        FAILED.fetch_add(1, Ordering::Relaxed);
    }
    ok
}

/// Fails the case (in the test's task) if a check failed in another context meanwhile.
#[cfg(not(test))]
fn check_elsewhere(before: usize) {
    check!(FAILED.load(Ordering::Relaxed) == before);
}

/// Expands `$m! { suite; test, ... }` with the KUnit suite's name and every test of this file,
/// so that the KUnit suite and the twin's `#[test]`s are generated from one list.
macro_rules! selftests {
    ($m:ident) => {
        $m! {
            rust_qmempool;
            fast_path_reuse,
            refill_and_spill,
            freed_on_other_cpu,
            softirq_and_task,
            irqs_off_fall_back,
            guard_ends_with_irqs_off,
            foreign_pool_object,
            every_drop_path,
            drop_returns_everything,
            zeroed_objects,
            #[cfg(CONFIG_FAILSLAB)]
            refill_enomem,
            #[cfg(CONFIG_RUST)]
            shrinker_frees_what_is_free,
            #[cfg(CONFIG_HOTPLUG_CPU)]
            offline_cpu_hands_back,
            #[cfg(test)]
            panic_safety,
            #[cfg(test)]
            cpus_in_parallel,
        }
    };
}
pub(crate) use selftests;

/// A small pool: 16 per CPU, 32 shared, 8 at a time, so that every path is reached quickly.
type Small<'c, T> = QMemPool<'c, T, 16, 32, 8>;
type SmallObj<'p, T> = PoolObj<'p, T, 16, 32, 8>;

// The objects of a cache in use (the test caches are `NO_MERGE`: the count is theirs alone).
use crate::slab_bulk::selftest::in_use;

/// The free objects `pool` holds, in all its queues.
fn held<T, const L: usize, const S: usize, const B: usize>(
    pool: &QMemPool<'_, T, L, S, B>,
) -> usize {
    let (shared, locals) = pool.held();
    shared + locals.map(|(_, n)| n).sum::<usize>()
}

/// The free objects in `pool`'s shared queue and in CPU `cpu`'s.
fn held_at<T, const L: usize, const S: usize, const B: usize>(
    pool: &QMemPool<'_, T, L, S, B>,
    cpu: u32,
) -> (usize, usize) {
    let (shared, mut locals) = pool.held();
    let local = locals.find(|(c, _)| *c == cpu).map_or(0, |(_, n)| n);
    (shared, local)
}

/// A fresh `NO_MERGE` cache of `T`.
fn cache<T>() -> Option<OwnedCache<T>> {
    let cache = OwnedCache::<T>::new(c"rust_qmempool_test", CacheFlags::NO_MERGE);
    check!(cache.is_ok());
    cache.ok()
}

/// Runs `test` with a fresh cache ([`cache`]) and a pool in front of it ([`pool_of`]).
fn with_pool<T, const L: usize, const S: usize, const B: usize>(
    test: impl FnOnce(&OwnedCache<T>, &QMemPool<'_, T, L, S, B>),
) {
    if let Some(cache) = cache::<T>() {
        pool_of(&cache, |pool| test(&cache, pool));
    }
}

/// Runs `test` with a new pool in front of `cache`; then drops the pool and checks that every
/// object of the cache went back to it.
fn pool_of<T, const L: usize, const S: usize, const B: usize>(
    cache: &OwnedCache<T>,
    test: impl FnOnce(&QMemPool<'_, T, L, S, B>),
) {
    let Ok(pool) = QMemPool::new(cache) else {
        check!(false);
        return;
    };
    test(&pool);
    drop(pool);
    check!(in_use(cache) == 0);
}

/// The CPU the cross-CPU steps move to: 1, or 0 on a kernel with one CPU.
fn other_cpu() -> u32 {
    if ffi::online_cpus() > 1 {
        1
    } else {
        0
    }
}

/// Alloc and free on one CPU: one bulk from the cache, then reuse without touching it.
pub(crate) fn fast_path_reuse() {
    with_pool(|cache, pool: &QMemPool<'_, [u64; 8]>| {
        check!(in_use(cache) == 0);
        on_cpu(0, &mut || {
            for i in 0..1000u64 {
                let obj = pool.alloc([i; 8], GFP_ATOMIC);
                check!(obj.as_ref().map(|o| o[7]).ok() == Some(i));
                drop(obj);
            }
            // One bulk of 16 came from the cache; the object is back in CPU 0's queue.
            check!(held_at(pool, 0) == (0, 16));
            if let Some(guard) = BhGuard::new() {
                for i in 0..1000u64 {
                    if let Ok(obj) = pool.alloc_in(&guard, [i; 8], GFP_ATOMIC) {
                        check!(obj[0] == i);
                        pool.free_in(&guard, obj);
                    }
                }
            } else {
                check!(false);
            }
        });
        check!(in_use(cache) == 16 && held(pool) == 16);
    });
}

/// `__GFP_ZERO` zeroes objects that come dirty from the pool's queues, with and without a guard
/// of the caller's: a round holds `N` objects at once, dirties and frees them, then allocates
/// `N` zeroed ones, which the queues give back first.
pub(crate) fn zeroed_objects() {
    type Bytes = core::mem::MaybeUninit<[u8; 64]>;
    const N: usize = 8;
    with_pool(|_, pool: &Small<'_, Bytes>| {
        // SAFETY: Every byte of the object was written, by the pool (zeroed) or by the test.
        let zeroed = |obj: &Bytes| unsafe { obj.assume_init_ref() }.iter().all(|&b| b == 0);
        on_cpu(0, &mut || {
            for round in 0..4 {
                let flags = |zero: bool| {
                    if zero {
                        GFP_ATOMIC | crate::alloc::flags::__GFP_ZERO
                    } else {
                        GFP_ATOMIC
                    }
                };
                let guard = if round % 2 == 0 { None } else { BhGuard::new() };
                let alloc = |zero: bool| match &guard {
                    Some(guard) => pool.alloc_uninit_in(guard, flags(zero)).ok(),
                    None => pool.alloc_uninit(flags(zero)).ok(),
                };
                let mut held: [Option<SmallObj<'_, Bytes>>; N] = Default::default();
                for slot in &mut held {
                    *slot = alloc(false);
                    match slot {
                        Some(obj) => {
                            obj.write([0xa5; 64]);
                        }
                        None => check!(false),
                    }
                }
                drop(held);
                let mut held: [Option<SmallObj<'_, Bytes>>; N] = Default::default();
                for slot in &mut held {
                    *slot = alloc(true);
                    check!(slot.as_deref().is_some_and(zeroed));
                }
            }
        });
    });
}

/// Local queue empty: refill from the cache in bulks; full: spill to the shared queue, and from
/// there, when it is full too, to the cache.
pub(crate) fn refill_and_spill() {
    with_pool(|cache, pool: &Small<'_, u64>| {
        on_cpu(0, &mut || {
            let mut objs: [Option<SmallObj<'_, u64>>; 64] = core::array::from_fn(|_| None);
            for (i, slot) in objs.iter_mut().enumerate() {
                *slot = pool.alloc(i as u64, GFP_ATOMIC).ok();
                check!(slot.is_some());
                // Bulks of 8 from the cache: never more than 7 ahead.
                check!(in_use(cache) == (i + 1).next_multiple_of(8));
            }
            check!(held(pool) == 0);
            check!(objs
                .iter()
                .enumerate()
                .all(|(i, o)| o.as_deref() == Some(&(i as u64))));
            // Free them: 16 fill the local queue; then every 8th spills 8 to the shared queue,
            // until it holds 32; the next spill goes to the cache.
            for (i, slot) in objs.iter_mut().enumerate() {
                drop(slot.take());
                let freed = i + 1;
                let spills = if freed > 16 { (freed - 17) / 8 + 1 } else { 0 };
                let shared = (spills * 8).min(32);
                let to_cache = spills * 8 - shared;
                check!(held_at(pool, 0) == (shared, freed - spills * 8));
                check!(in_use(cache) == 64 - to_cache);
            }
            check!(held_at(pool, 0) == (32, 16) && in_use(cache) == 48);
            // And back: the local queue first, then the shared queue, 8 at a time, no new object.
            for (i, slot) in objs.iter_mut().take(48).enumerate() {
                *slot = pool.alloc(0, GFP_ATOMIC).ok();
                check!(slot.is_some() && in_use(cache) == 48 && held(pool) == 47 - i);
            }
            check!(held(pool) == 0);
        });
        check!(held(pool) == 48 && in_use(cache) == 48);
    });
}

/// Objects allocated on one CPU and freed on another go to the freeing CPU's queue, from
/// there to the shared queue, and are allocated again on the first CPU from there.
pub(crate) fn freed_on_other_cpu() {
    with_pool(|cache, pool: &Small<'_, u64>| {
        let other = other_cpu();
        let mut objs: [Option<SmallObj<'_, u64>>; 24] = core::array::from_fn(|_| None);
        on_cpu(0, &mut || {
            for (i, slot) in objs.iter_mut().enumerate() {
                *slot = pool.alloc(i as u64, GFP_ATOMIC).ok();
            }
        });
        check!(objs.iter().all(Option::is_some));
        check!(in_use(cache) == 24 && held(pool) == 0);
        on_cpu(other, &mut || {
            for slot in objs.iter_mut() {
                drop(slot.take());
            }
        });
        // 16 filled the other CPU's queue, the 17th spilled 8 to the shared queue.
        check!(held_at(pool, other) == (8, 16));
        check!(in_use(cache) == 24);
        if other != 0 {
            check!(held_at(pool, 0) == (8, 0));
        }
        on_cpu(0, &mut || {
            // CPU 0's queue is empty: the next allocation takes the shared queue's 8, which came
            // from the other CPU, and the cache gives nothing new.
            for slot in objs.iter_mut().take(if other == 0 { 24 } else { 8 }) {
                *slot = pool.alloc(1, GFP_ATOMIC).ok();
                check!(slot.is_some());
            }
            check!(in_use(cache) == 24 && pool.held().0 == 0);
        });
        drop(objs);
        check!(in_use(cache) == held(pool));
    });
}

/// A softirq uses the pool without disabling bottom halves; objects pass between it and task
/// context in both directions.
pub(crate) fn softirq_and_task() {
    with_pool(|cache, pool: &Small<'_, u64>| {
        let cpu = other_cpu();
        let mut from_task: [Option<SmallObj<'_, u64>>; 20] = core::array::from_fn(|_| None);
        let mut from_softirq: [Option<SmallObj<'_, u64>>; 20] = core::array::from_fn(|_| None);
        on_cpu(cpu, &mut || {
            for (i, slot) in from_task.iter_mut().enumerate() {
                *slot = pool.alloc(i as u64, GFP_ATOMIC).ok();
            }
        });
        let ran = in_softirq(cpu, &mut || {
            let guard = BhGuard::new();
            check!(guard.is_some());
            let Some(guard) = guard else {
                return;
            };
            check!(guard.cpu() == cpu);
            for slot in from_task.iter_mut() {
                if let Some(obj) = slot.take() {
                    pool.free_in(&guard, obj);
                }
            }
            for (i, slot) in from_softirq.iter_mut().enumerate() {
                *slot = pool.alloc_in(&guard, 100 + i as u64, GFP_ATOMIC).ok();
            }
        });
        if ran {
            check!(from_task.iter().all(Option::is_none));
            check!(from_softirq.iter().all(Option::is_some));
            // 20 allocated in task context (3 bulks of 8), freed in the softirq and taken again.
            check!(in_use(cache) == 24);
        }
        on_cpu(cpu, &mut || {
            for slot in from_softirq.iter_mut() {
                drop(slot.take());
            }
        });
        check!(in_use(cache) == held(pool));
        drop((from_task, from_softirq));
    });
}

/// A guard made with IRQs enabled may be dropped after IRQs were disabled: bottom halves are
/// enabled again all the same (a guard can be made afterwards, and the pool used under it), and
/// a softirq raised while the guard held them disabled is handed to `ksoftirqd` rather than left
/// for the next interrupt.
pub(crate) fn guard_ends_with_irqs_off() {
    with_pool(|_, pool: &Small<'_, u64>| {
        on_cpu(0, &mut || {
            let mut guard = BhGuard::new();
            check!(guard.is_some());
            irqs_off(&mut || {
                raise_softirq();
                drop(guard.take());
                check!(softirqs_handed_over());
            });
            // Bottom halves are enabled again: another task-context guard nests nothing.
            let Some(guard) = BhGuard::new() else {
                check!(false);
                return;
            };
            match pool.alloc_in(&guard, 7, GFP_ATOMIC) {
                Ok(obj) => pool.free_in(&guard, obj),
                Err(_) => check!(false),
            }
        });
    });
}

/// With IRQs disabled (every hard-IRQ handler) no guard can be had, and the pool goes to the
/// cache directly; such objects and the pool's are interchangeable.
pub(crate) fn irqs_off_fall_back() {
    with_pool(|cache, pool: &Small<'_, u64>| {
        let mut a = None;
        let mut b = None;
        on_cpu(0, &mut || {
            b = pool.alloc(2, GFP_ATOMIC).ok();
            irqs_off(&mut || {
                check!(BhGuard::new().is_none());
                // From the cache, not from the pool's queue (which holds 7).
                a = pool.alloc(1, GFP_ATOMIC).ok();
                check!(a.is_some() && held(pool) == 7);
                // Back to the cache, not to the queue.
                drop(b.take());
                check!(held(pool) == 7);
            });
            // (Counted here: counting may sleep.) 7 in the queue and `a`.
            check!(in_use(cache) == 8);
            // Freed with IRQs on: into the queue like any other object.
            drop(a.take());
            check!(held(pool) == 8 && in_use(cache) == 8);
        });
        drop((a, b));
    });
}

/// `free_in` with another pool's object sends it to its own pool.
pub(crate) fn foreign_pool_object() {
    with_pool(|_, pa: &Small<'_, u64>| {
        with_pool(|_, pb: &Small<'_, u64>| {
            on_cpu(0, &mut || {
                let Some(guard) = BhGuard::new() else {
                    check!(false);
                    return;
                };
                if let (Ok(a), Ok(b)) = (
                    pa.alloc_in(&guard, 1, GFP_ATOMIC),
                    pb.alloc_in(&guard, 2, GFP_ATOMIC),
                ) {
                    check!(held(pa) == 7 && held(pb) == 7);
                    pa.free_in(&guard, b);
                    check!(held(pa) == 7 && held(pb) == 8);
                    pa.free_in(&guard, a);
                    check!(held(pa) == 8);
                } else {
                    check!(false);
                }
            });
        });
    });
}

/// An object that counts its drops.
struct Counted<'a> {
    drops: &'a AtomicUsize,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

/// Every path that ends an object's life drops its value exactly once; the pool holds no
/// value.
pub(crate) fn every_drop_path() {
    let drops = AtomicUsize::new(0);
    let new = || Counted { drops: &drops };
    let dropped = || drops.load(Ordering::Relaxed);
    with_pool(|cache, pool: &Small<'_, Counted<'_>>| {
        on_cpu(0, &mut || {
            drop(pool.alloc(new(), GFP_ATOMIC));
            check!(dropped() == 1);
            if let Some(guard) = BhGuard::new() {
                if let Ok(obj) = pool.alloc_in(&guard, new(), GFP_ATOMIC) {
                    pool.free_in(&guard, obj);
                }
            }
            check!(dropped() == 2);
            let mut kept: [Option<SmallObj<'_, Counted<'_>>>; 40] = core::array::from_fn(|_| None);
            for slot in kept.iter_mut() {
                *slot = pool.alloc(new(), GFP_ATOMIC).ok();
            }
            check!(dropped() == 2);
            drop(kept);
            // Spilled to the shared queue and to the cache: no value is dropped twice.
            check!(dropped() == 42);
        });
        check!(in_use(cache) == held(pool));
    });
    check!(dropped() == 42);
}

/// Dropping the pool returns what every CPU's queue and the shared queue hold.
pub(crate) fn drop_returns_everything() {
    with_pool(|cache, pool: &Small<'_, [u8; 200]>| {
        for cpu in 0..ffi::online_cpus().min(4) {
            on_cpu(cpu, &mut || {
                let mut objs: [Option<SmallObj<'_, [u8; 200]>>; 30] =
                    core::array::from_fn(|_| None);
                for slot in objs.iter_mut() {
                    *slot = pool.alloc([cpu as u8; 200], GFP_ATOMIC).ok();
                }
                check!(objs
                    .iter()
                    .all(|o| o.as_ref().map(|o| o[199]) == Some(cpu as u8)));
            });
            let (_, local) = held_at(pool, cpu);
            check!(local == 16);
        }
        check!(pool.held().0 > 0);
        check!(in_use(cache) == held(pool));
    });
}

/// Memory pressure: the pool's shrinker (run as reclaim runs it) frees every free object it
/// holds, on every CPU and in the shared queue, to the cache; what is out stays out.
#[cfg(CONFIG_RUST)]
pub(crate) fn shrinker_frees_what_is_free() {
    with_pool(|cache, pool: &Small<'_, [u8; 200]>| {
        let mut kept: [Option<SmallObj<'_, [u8; 200]>>; 4] = core::array::from_fn(|_| None);
        for cpu in [0, other_cpu()] {
            on_cpu(cpu, &mut || {
                let mut objs: [Option<SmallObj<'_, [u8; 200]>>; 40] =
                    core::array::from_fn(|_| None);
                for slot in objs.iter_mut() {
                    *slot = pool.alloc([cpu as u8; 200], GFP_ATOMIC).ok();
                    check!(slot.is_some());
                }
                // Two of each CPU's stay out; the rest fill its queue and spill to the shared one.
                for (slot, keep) in objs
                    .iter_mut()
                    .zip(kept.iter_mut().skip(cpu.min(1) as usize * 2).take(2))
                {
                    *keep = slot.take();
                }
            });
            check!(held_at(pool, cpu).1 > 0);
        }
        let out = kept.iter().filter(|o| o.is_some()).count();
        check!(out == 4 || (other_cpu() == 0 && out == 2));
        let free = held(pool);
        check!(free > 0 && in_use(cache) == out + free);
        // The count is what the pool holds free; after the scan and its work items, nothing is.
        check!(pool.shrink() == free);
        check!(held(pool) == 0);
        check!(in_use(cache) == out);
        // The pool works on afterwards, from the cache again.
        on_cpu(0, &mut || {
            let obj = pool.alloc([7; 200], GFP_ATOMIC);
            check!(obj.as_ref().map(|o| o[0]).ok() == Some(7));
        });
        check!(in_use(cache) == out + held(pool));
        drop(kept);
    });
}

/// A CPU that goes offline hands its local queue back to the cache: CPU 1's queue is filled,
/// CPU 1 is taken offline (`remove_cpu()`, what writing 0 to
/// `/sys/devices/system/cpu/cpu1/online` calls) and brought back (`add_cpu()`).
#[cfg(CONFIG_HOTPLUG_CPU)]
pub(crate) fn offline_cpu_hands_back() {
    if ffi::online_cpus() < 2 {
        return;
    }
    with_pool(|cache, pool: &Small<'_, u64>| {
        let mut kept = None;
        on_cpu(1, &mut || {
            let mut objs: [Option<SmallObj<'_, u64>>; 12] = core::array::from_fn(|_| None);
            for (i, slot) in objs.iter_mut().enumerate() {
                *slot = pool.alloc(i as u64, GFP_ATOMIC).ok();
            }
            kept = objs[0].take();
        });
        // 16 came from the cache in two bulks; one is out, 15 are in CPU 1's queue.
        check!(kept.is_some() && held_at(pool, 1) == (0, 15) && in_use(cache) == 16);
        let down = ffi::remove_cpu(1);
        check!(down == 0);
        if down == 0 {
            check!(held_at(pool, 1) == (0, 0));
            check!(in_use(cache) == 1);
            check!(ffi::add_cpu(1) == 0);
            check!(ffi::online_cpus() >= 2);
        }
        on_cpu(1, &mut || {
            let obj = pool.alloc(5, GFP_ATOMIC);
            check!(obj.as_deref().ok() == Some(&5));
        });
        check!(in_use(cache) == 1 + held(pool));
        drop(kept);
    });
}

/// Every fault point of a sequence of allocations that refills from the cache: a failed refill
/// is `ENOMEM`, takes nothing from the cache and loses nothing; the pool works on afterwards.
#[cfg(CONFIG_FAILSLAB)]
pub(crate) fn refill_enomem() {
    let Some(cache) = cache::<u64>() else {
        return;
    };
    let mut failed_once = false;
    for nth in 1..=1000 {
        let mut fired = false;
        pool_of(&cache, |pool: &Small<'_, u64>| {
            let mut objs: [Option<SmallObj<'_, u64>>; 20] = core::array::from_fn(|_| None);
            let (mut failures, mut out) = (0, 0);
            // The test runs in task context, where the refill runs with bottom halves
            // disabled: the slab's `failslab` point is reached by this task.
            ffi::set_fail_nth(nth);
            for slot in objs.iter_mut() {
                let before = (in_use(&cache), held(pool));
                match pool.alloc(7, GFP_ATOMIC) {
                    Ok(obj) => {
                        *slot = Some(obj);
                        out += 1;
                    }
                    Err(e) => {
                        check!(e == ENOMEM);
                        // Only a refill fails: the queues were empty, and stay so; the cache
                        // gave nothing.
                        check!(before.1 == 0 && held(pool) == 0 && in_use(&cache) == before.0);
                        failures += 1;
                        failed_once = true;
                    }
                }
                check!(in_use(&cache) == out + held(pool));
            }
            fired = ffi::fail_nth() == 0;
            ffi::set_fail_nth(0);
            check!(failures <= 1 && (failures == 0 || fired));
            // The pool works after a failure.
            let again = pool.alloc(8, GFP_ATOMIC);
            check!(again.is_ok());
        });
        if !fired {
            break;
        }
    }
    check!(failed_once);
}

/// A panicking `T::drop` loses no memory and leaves no context behind (twin only: the kernel
/// does not unwind).
#[cfg(test)]
pub(crate) fn panic_safety() {
    struct Bomb(#[expect(dead_code)] u64);
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("bomb");
        }
    }
    with_pool(|cache, pool: &Small<'_, Bomb>| {
        let obj = pool.alloc(Bomb(1), GFP_ATOMIC);
        check!(obj.is_ok() && held(pool) == 7);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(obj)));
        check!(r.is_err());
        // The memory went back to the pool, and bottom halves are enabled again.
        check!(held(pool) == 8 && in_use(cache) == 8);
        if let Some(guard) = BhGuard::new() {
            if let Ok(obj) = pool.alloc_in(&guard, Bomb(2), GFP_ATOMIC) {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    pool.free_in(&guard, obj)
                }));
                check!(r.is_err() && held(pool) == 8);
            }
        }
        // A panic while a guard is held ends the guard's section.
        let r = std::panic::catch_unwind(|| {
            let _guard = BhGuard::new();
            panic!("inside");
        });
        check!(r.is_err());
        std::thread::scope(|s| {
            // Another "thread" on CPU 0 can take it: the first one let go.
            s.spawn(|| check!(BhGuard::new().is_some()));
        });
    });
}

/// Threads on four CPUs allocate, pass objects to the next CPU, which frees them, at once
/// (twin only; the kernel's counterpart is the 2-CPU QEMU run).
#[cfg(test)]
pub(crate) fn cpus_in_parallel() {
    use std::sync::mpsc;
    // Under Miri (`make miri`), a few rounds: its interpreter is some 10^4 times slower.
    const ROUNDS: u64 = if cfg!(miri) { 20 } else { 20_000 };
    with_pool(|cache, pool: &Small<'_, [u64; 4]>| {
        let cpus = ffi::online_cpus();
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..cpus)
            .map(|_| mpsc::channel::<SmallObj<'_, [u64; 4]>>())
            .unzip();
        std::thread::scope(|s| {
            for (cpu, rx) in rxs.into_iter().enumerate() {
                let tx = txs[(cpu + 1) % cpus as usize].clone();
                s.spawn(move || {
                    on_cpu(cpu as u32, &mut || {
                        for i in 0..ROUNDS {
                            match pool.alloc([cpu as u64, i, 0, 0], GFP_ATOMIC) {
                                Ok(obj) => {
                                    let _ = tx.send(obj);
                                }
                                Err(_) => check!(false),
                            }
                            while let Ok(obj) = rx.try_recv() {
                                check!(obj[0] == (cpu as u64 + cpus as u64 - 1) % cpus as u64);
                                drop(obj);
                            }
                        }
                    });
                    rx
                });
            }
            drop(txs);
        });
        check!(in_use(cache) == held(pool));
    });
}

/// Runs `f` in task context on CPU `cpu`, and waits for it.
#[cfg(test)]
fn on_cpu(cpu: u32, f: &mut dyn FnMut()) {
    crate::cpu::on_cpu(cpu, f)
}

/// Runs `f` in softirq context on CPU `cpu`, and waits for it; returns `false` if it cannot.
#[cfg(test)]
fn in_softirq(cpu: u32, f: &mut dyn FnMut()) -> bool {
    crate::cpu::on_cpu(cpu, || crate::cpu::in_softirq(f));
    true
}

/// The twin has no softirq to raise.
#[cfg(test)]
fn raise_softirq() {}

/// The twin runs no softirq behind the caller's back: nothing is ever left pending.
#[cfg(test)]
fn softirqs_handed_over() -> bool {
    true
}

/// Runs `f` with IRQs disabled on the current CPU.
#[cfg(test)]
fn irqs_off(f: &mut dyn FnMut()) {
    crate::cpu::in_hardirq(f)
}

/// Runs `f` in task context on CPU `cpu`, and waits for it (`work_on_cpu()`); on CPU 0 if
/// `cpu` is not online.
#[cfg(not(test))]
fn on_cpu(cpu: u32, f: &mut dyn FnMut()) {
    /// Calls the closure `arg` points to.
    ///
    /// # Safety
    ///
    /// `arg` points to a live `&mut dyn FnMut()` that nothing else uses during the call.
    unsafe extern "C" fn call(arg: *mut crate::ffi::c_void) -> crate::ffi::c_long {
        // SAFETY: `arg` is the `&mut &mut dyn FnMut()` of `on_cpu`, which waits for this call.
        let f = unsafe { &mut *arg.cast::<&mut dyn FnMut()>() };
        f();
        0
    }
    let cpu = if cpu < ffi::online_cpus() { cpu } else { 0 };
    let before = FAILED.load(Ordering::Relaxed);
    let mut f = f;
    // SAFETY: `call` matches `arg`, which lives until `work_on_cpu` has returned, having waited
    // for the call; the test runs in process context, where `work_on_cpu` may sleep.
    unsafe { ffi::work_on_cpu(cpu, call, core::ptr::addr_of_mut!(f).cast()) };
    check_elsewhere(before);
}

/// A work item that runs a closure, for [`in_softirq`].
#[cfg(not(test))]
#[repr(C)]
struct BhWork<'a> {
    work: ffi::work_struct,
    f: &'a mut dyn FnMut(),
}

/// Runs `f` in softirq context on CPU `cpu` (a work item on `system_bh_wq`), and waits for it;
/// returns `false` if `cpu` is not online or there is no memory.
#[cfg(not(test))]
fn in_softirq(cpu: u32, f: &mut dyn FnMut()) -> bool {
    use crate::alloc::{flags::GFP_KERNEL, KBox};

    /// Runs the closure of the `BhWork` that `work` is the first field of.
    ///
    /// # Safety
    ///
    /// `work` is the first field of a live `BhWork` that nothing else uses during the call.
    unsafe extern "C" fn run(work: *mut ffi::work_struct) {
        // SAFETY: `work` is the first field of a `repr(C)` `BhWork`, which `in_softirq` keeps
        // alive and leaves alone until the work has run (`flush_work`).
        let w = unsafe { &mut *work.cast::<BhWork<'_>>() };
        (w.f)();
    }
    /// The work items' lockdep class (a static object, as `INIT_WORK` makes).
    static mut KEY: ffi::lock_class_key =
        // SAFETY: All-zero is what a C `static struct lock_class_key` starts as.
        unsafe { core::mem::zeroed() };

    if cpu >= ffi::online_cpus() {
        return false;
    }
    let Ok(mut w) = KBox::new(
        BhWork {
            // SAFETY: All-zero is a valid `work_struct` to initialise (integers, pointers).
            work: unsafe { core::mem::zeroed() },
            f,
        },
        GFP_KERNEL,
    ) else {
        return false;
    };
    let before = FAILED.load(Ordering::Relaxed);
    let work = core::ptr::addr_of_mut!(w.work);
    // SAFETY: `work` is valid and not queued; `run` matches it; `KEY` is a static object.
    // The work item lives until `flush_work` has waited for it to run; process context.
    unsafe {
        ffi::init_work(work, run, c"rust_qmempool_bh", core::ptr::addr_of_mut!(KEY));
        ffi::queue_bh_work_on(cpu, work);
        ffi::flush_work(work);
    }
    check_elsewhere(before);
    true
}

/// Raises a softirq with nothing to do; IRQs disabled ([`irqs_off`]).
#[cfg(not(test))]
fn raise_softirq() {
    // SAFETY: Called in `irqs_off`'s closure only.
    unsafe { ffi::raise_test_softirq() };
}

/// Whether the pending softirqs will run without waiting for an interrupt; IRQs disabled.
#[cfg(not(test))]
fn softirqs_handed_over() -> bool {
    // SAFETY: Called in `irqs_off`'s closure only.
    unsafe { ffi::softirqs_handed_over() }
}

/// Runs `f` with IRQs disabled on the current CPU, as a hard-IRQ handler runs.
#[cfg(not(test))]
fn irqs_off(f: &mut dyn FnMut()) {
    // SAFETY: Paired with `local_irq_enable` below; the test runs with IRQs enabled, and `f`
    // neither sleeps nor leaves IRQs in another state.
    unsafe { ffi::local_irq_disable() };
    f();
    // SAFETY: As above.
    unsafe { ffi::local_irq_enable() };
}
