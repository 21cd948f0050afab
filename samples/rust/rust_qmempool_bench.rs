// SPDX-License-Identifier: GPL-2.0

//! Benchmark of [`kernel::qmempool`] against the slab allocator and a C reference of the C
//! qmempool, after prototype-kernel's `qmempool_bench`.
//!
//! The cost per object of an allocation and a free, for objects of 256 bytes (the C original's
//! skb-sized element), in two patterns, `n` objects outstanding: `n = 1` is the C original's
//! "fastpath reuse" (allocate, free, again), `n = 256` its "N-pattern" (256 allocated, then
//! 256 freed, as a NIC ring's refill and cleanup do). The ways, interleaved within each
//! repetition in an order that rotates from one repetition to the next:
//!
//! - `pool`: [`QMemPool::alloc_uninit`] and dropping the [`PoolObj`](kernel::qmempool::PoolObj),
//!   each making its own [`BhGuard`] (`local_bh_disable()`/`local_bh_enable()` per call, as the C
//!   original's `qmempool_alloc()`/`qmempool_free()` outside softirq);
//! - `pool_bh`: [`QMemPool::alloc_uninit_in`] and [`QMemPool::free_in`] under one [`BhGuard`] for
//!   the whole run: the cost of the pool itself, as in softirq context;
//! - `pool_batch`: the same calls under a [`BhGuard`] made for every [`GUARD_BATCH`] of them
//!   (allocations and frees counted together, across rounds): process context that decides
//!   its context once per batch, as a driver handling its objects in batches would;
//! - `c_qmempool`, `c_qmempool_bh`: the same two ways through the C reference (in
//!   `rust_qmempool_bench_c.c`, timed loop included): the C original's algorithm, same queue
//!   sizes and bulk, on the same cache;
//! - `objpool`: the kernel's own per-CPU pool (`lib/objpool.c`): `objpool_pop()` and
//!   `objpool_push()`, which save and restore IRQs around each call (in C, timed loop included).
//!   objpool preallocates its objects and never grows, so each timed run creates one holding
//!   `max(n, 32)` objects per possible CPU (32: the pool's local queue), of the same 256 bytes;
//! - `cache_single`: [`Cache::alloc_uninit`] and dropping the `Obj` (`kmem_cache_alloc` and
//!   `kmem_cache_free`);
//! - `cache_bulk`: [`ObjArray::alloc`] and [`ObjArray::free`] of `n` objects (one
//!   `kmem_cache_alloc_bulk` and one `kmem_cache_free_bulk`);
//! - `sheaf_single` (6.18 on): as `cache_single`, on a cache created with
//!   `kmem_cache_args.sheaf_capacity` equal to the pool's local queue size (32): SLUB's own
//!   per-CPU arrays, sized like the pool's;
//! - `sheaf_prefill` (6.18 on): on that cache, SLUB's prefilled-sheaf API: each round refills a
//!   sheaf of its own to hold `n` objects (`kmem_cache_refill_sheaf`), takes them from it
//!   (`kmem_cache_alloc_from_sheaf`) and frees them (`kmem_cache_free`). The API is not
//!   exported to modules, so this loop is C built into the kernel with the benchmark
//!   (`rust_qmempool_bench_sheaf.c`), exporting the loop alone.
//!
//! The pool's objects are `MaybeUninit`, so that an allocation writes nothing into the object,
//! as with the C API. The pools are the defaults (32 per CPU, 1024 shared, 16 at a time) and
//! are created for each timed run, outside the timing.
//!
//! Its parameters (`insmod rust_qmempool_bench.ko outstanding=1,256 objs=1000000 runs=5`),
//! their bounds and defaults are the `bench::module_params!` block below; a value out of its
//! bounds fails the load with `EINVAL` and a line saying what the parameter takes.
//!
//! It prints one `rfl_bench:` line per run (see `bench_common.rs`; `bulk` is `n`) and stays
//! loaded; unload it with `rmmod`.

use core::ffi::{c_int, c_ulong, c_void};
use core::mem::{self, MaybeUninit};
use core::ptr;
use kernel::bindings;
use kernel::prelude::*;
use kernel::qmempool::{BhGuard, QMemPool, LOCAL_DEFAULT, SHARED_DEFAULT};
use kernel::slab_bulk::{Cache, CacheFlags, Obj, ObjArray, OwnedCache};

#[path = "bench_common.rs"]
mod bench;

use bench::{MAX_OBJS, MAX_RUNS};

bench::sample_module! {
    type: QMemPoolBench,
    name: "rust_qmempool_bench",
    description: "Benchmark: kernel::qmempool vs the slab allocator and the C qmempool",
}

/// The most objects outstanding.
const MAX_OUT: usize = 256;

/// The calls (allocations and frees) `pool_batch` makes under one guard.
const GUARD_BATCH: usize = 16;

/// The object: 256 bytes, like the C original's skbs.
type Object = [u8; 256];
type Raw = MaybeUninit<Object>;
type Pool<'c> = QMemPool<'c, Raw>;
type PoolObj<'p> = kernel::qmempool::PoolObj<
    'p,
    Raw,
    LOCAL_DEFAULT,
    SHARED_DEFAULT,
    { kernel::qmempool::BULK_DEFAULT },
>;

bench::module_params! {
    /// The values of `n`.
    outstanding: list 1..=MAX_OUT = "1,256";
    /// Objects per timed run (the loop count is `objs / n`).
    objs: uint 1..=MAX_OBJS = 1 << 21;
    /// Timed repetitions per `n` and variant, after one untimed warm-up.
    runs: uint 1..=MAX_RUNS = 11;
}

bench::variants! {
    /// The ways, in the order the first repetition runs them; each one's timed loop is called
    /// from [`Setting::measure`].
    enum Variant {
        Pool => "pool",
        PoolBh => "pool_bh",
        PoolBatch => "pool_batch",
        CQmempool => "c_qmempool",
        CQmempoolBh => "c_qmempool_bh",
        Objpool => "objpool",
        CacheSingle => "cache_single",
        CacheBulk => "cache_bulk",
        #[cfg(slab_sheaf_api)]
        SheafSingle => "sheaf_single",
        #[cfg(slab_sheaf_api)]
        SheafPrefill => "sheaf_prefill",
    }
}

// The C reference, in `rust_qmempool_bench_c.c`.
extern "C" {
    fn rust_qmempool_bench_cpool_new(
        kmem: *mut bindings::kmem_cache,
        localq_sz: u32,
        sharedq_sz: u32,
    ) -> *mut c_void;
    fn rust_qmempool_bench_cpool_run(
        pool: *mut c_void,
        objs: *mut *mut c_void,
        n: c_int,
        loops: c_ulong,
        bh_held: bool,
    ) -> c_ulong;
    fn rust_qmempool_bench_cpool_free(pool: *mut c_void);
    fn rust_qmempool_bench_objpool_new(objs_per_cpu: c_int, object_size: c_int) -> *mut c_void;
    fn rust_qmempool_bench_objpool_run(
        head: *mut c_void,
        objs: *mut *mut c_void,
        n: c_int,
        loops: c_ulong,
    ) -> c_ulong;
    fn rust_qmempool_bench_objpool_free(head: *mut c_void);
    #[cfg(slab_sheaf_api)]
    fn rust_qmempool_bench_sheaf_run(
        s: *mut bindings::kmem_cache,
        objs: *mut *mut c_void,
        n: c_int,
        loops: c_ulong,
    ) -> c_ulong;
}

/// What a constructor of the C side returned, or `ENOMEM` if that is NULL (it failed).
#[inline(always)]
fn made(ptr: *mut c_void) -> Result<*mut c_void> {
    if ptr.is_null() {
        Err(ENOMEM)
    } else {
        Ok(ptr)
    }
}

/// A C reference pool, freed (with its objects) on drop.
///
/// # Invariants
///
/// `ptr` was made by `rust_qmempool_bench_cpool_new` and is not freed yet.
struct CPool(*mut c_void);

impl CPool {
    /// A C pool in front of `cache`.
    fn new(cache: &Cache<Object>) -> Result<Self> {
        // SAFETY: `cache` is live for the pool's life (the pool is dropped first); process
        // context, where the constructor may allocate with `GFP_KERNEL`.
        let ptr = made(unsafe {
            rust_qmempool_bench_cpool_new(
                cache.as_raw(),
                LOCAL_DEFAULT as u32,
                SHARED_DEFAULT as u32,
            )
        })?;
        // INVARIANT: a new pool.
        Ok(Self(ptr))
    }
}

impl Drop for CPool {
    fn drop(&mut self) {
        // SAFETY: Live by the type invariant, freed once, here, in process context.
        unsafe { rust_qmempool_bench_cpool_free(self.0) };
    }
}

/// The kernel's objpool with `per_cpu` preallocated `Object`s per possible CPU, freed on drop.
///
/// # Invariants
///
/// `ptr` was made by `rust_qmempool_bench_objpool_new` and is not freed yet; every object
/// popped from it has been pushed back whenever `&mut self` or `self` is available.
struct ObjPool(*mut c_void);

impl ObjPool {
    fn new(per_cpu: usize) -> Result<Self> {
        // SAFETY: Process context, where the constructor may allocate with `GFP_KERNEL`.
        let ptr = made(unsafe {
            rust_qmempool_bench_objpool_new(per_cpu as c_int, mem::size_of::<Object>() as c_int)
        })?;
        // INVARIANT: a new pool, nothing popped.
        Ok(Self(ptr))
    }
}

impl Drop for ObjPool {
    fn drop(&mut self) {
        // SAFETY: Live by the type invariant, with every object back; freed once, here.
        unsafe { rust_qmempool_bench_objpool_free(self.0) };
    }
}

/// A cache created with `sheaf_capacity` (6.18 on), destroyed on drop.
///
/// # Invariants
///
/// `ptr` is a live cache for `Object`s, destroyed only on drop.
#[cfg(slab_sheaf_api)]
struct SheafCache(*mut bindings::kmem_cache);

#[cfg(slab_sheaf_api)]
impl SheafCache {
    fn new(capacity: u32) -> Result<Self> {
        let mut args = bindings::kmem_cache_args {
            align: core::mem::align_of::<Object>() as u32,
            sheaf_capacity: capacity,
            ..Default::default()
        };
        let name = c"rust_qmempool_bench_sheaf".to_bytes_with_nul();
        // SAFETY: The name is a static C string; `args` is valid for the call; process context.
        let ptr = unsafe {
            bindings::__kmem_cache_create_args(
                name.as_ptr().cast(),
                core::mem::size_of::<Object>() as u32,
                &mut args,
                (CacheFlags::HWCACHE_ALIGN | CacheFlags::NO_MERGE).as_raw(),
            )
        };
        if ptr.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: a new cache of `Object`'s size and alignment.
        Ok(Self(ptr))
    }

    fn cache(&self) -> &Cache<Object> {
        // SAFETY: Live until `self` is dropped, sized and aligned for `Object` (invariant).
        unsafe { Cache::from_raw(self.0) }
    }
}

#[cfg(slab_sheaf_api)]
impl Drop for SheafCache {
    fn drop(&mut self) {
        // SAFETY: Destroyed once, here; the borrows of `cache()` have ended.
        unsafe { bindings::kmem_cache_destroy(self.0) };
    }
}

/// `loops` rounds of allocating an object into every slot of `objs` with `alloc`, then giving
/// each to `free`; returns the objects allocated and freed, short of `loops * objs.len()` if an
/// allocation failed. The timed loop of the single-object ways, inlined into each.
#[inline(always)]
fn rounds<O>(
    objs: &mut [Option<O>],
    loops: usize,
    mut alloc: impl FnMut() -> Option<O>,
    mut free: impl FnMut(O),
) -> usize {
    let mut done = 0;
    for _ in 0..loops {
        for slot in objs.iter_mut() {
            // Every slot is `None` here (the loop below takes them all): nothing to drop.
            mem::forget(mem::replace(slot, alloc()));
        }
        for slot in objs.iter_mut() {
            match slot.take() {
                Some(obj) => free(obj),
                None => return done,
            }
        }
        done += objs.len();
    }
    done
}

/// `pool`: a guard per call.
#[inline(never)]
fn pool<'p>(pool: &'p Pool<'_>, objs: &mut [Option<PoolObj<'p>>], loops: usize) -> usize {
    rounds(objs, loops, || pool.alloc_uninit(GFP_ATOMIC).ok(), drop)
}

/// `pool_bh`: one guard for the run.
#[inline(never)]
fn pool_bh<'p>(pool: &'p Pool<'_>, objs: &mut [Option<PoolObj<'p>>], loops: usize) -> usize {
    let Some(guard) = BhGuard::new() else {
        return 0;
    };
    rounds(
        objs,
        loops,
        || pool.alloc_uninit_in(&guard, GFP_ATOMIC).ok(),
        |obj| pool.free_in(&guard, obj),
    )
}

/// `pool_batch`: a guard for every [`GUARD_BATCH`] calls, ended and made anew in between (so
/// that bottom halves raised meanwhile run there, as `local_bh_enable()` lets them).
#[inline(never)]
fn pool_batch<'p>(pool: &'p Pool<'_>, objs: &mut [Option<PoolObj<'p>>], loops: usize) -> usize {
    let mut guard = BhGuard::new();
    let mut calls = 0;
    // After each call: the guard ended and made anew every `GUARD_BATCH` calls.
    let mut next = |guard: &mut Option<BhGuard>| {
        calls += 1;
        if calls == GUARD_BATCH {
            calls = 0;
            *guard = None;
            *guard = BhGuard::new();
        }
    };
    let mut done = 0;
    for _ in 0..loops {
        for slot in objs.iter_mut() {
            let Some(g) = guard.as_ref() else {
                return done;
            };
            // Every slot is `None` here (the loop below takes them all): nothing to drop.
            mem::forget(mem::replace(slot, pool.alloc_uninit_in(g, GFP_ATOMIC).ok()));
            next(&mut guard);
        }
        for slot in objs.iter_mut() {
            // An object left without a guard (none could be made) is dropped with its own.
            let (Some(obj), Some(g)) = (slot.take(), guard.as_ref()) else {
                return done;
            };
            pool.free_in(g, obj);
            next(&mut guard);
        }
        done += objs.len();
    }
    done
}

/// `cache_single` and `sheaf_single`.
#[inline(never)]
fn single<'c>(cache: &'c Cache<Object>, objs: &mut [Option<Obj<'c, Raw>>], loops: usize) -> usize {
    rounds(objs, loops, || cache.alloc_uninit(GFP_ATOMIC).ok(), drop)
}

/// `cache_bulk`.
#[inline(never)]
fn bulk(batch: &mut ObjArray<'_, Raw, MAX_OUT>, n: usize, loops: usize) -> usize {
    let mut done = 0;
    for _ in 0..loops {
        if batch.alloc(n, GFP_ATOMIC).is_err() {
            return done;
        }
        batch.free();
        done += n;
    }
    done
}

/// The arguments of a C timed loop for `loops` rounds of `objs.len()` objects, in `objs`: the
/// array, its length and the rounds, as C takes them.
#[inline(always)]
fn c_args(objs: &mut [*mut c_void], loops: usize) -> (*mut *mut c_void, c_int, c_ulong) {
    (objs.as_mut_ptr(), objs.len() as c_int, loops as c_ulong)
}

/// `sheaf_prefill` (6.18 on).
#[cfg(slab_sheaf_api)]
#[inline(never)]
fn sheaf_prefill(cache: &SheafCache, objs: &mut [*mut c_void], loops: usize) -> usize {
    let (objs, n, loops) = c_args(objs, loops);
    // SAFETY: The cache is live and holds `Object`s (type invariant); `objs` has room for `n`
    // and holds nothing the call could leak (it frees every object it allocates before it
    // returns); process context, where the loop may allocate with `GFP_KERNEL`.
    let done = unsafe { rust_qmempool_bench_sheaf_run(cache.0, objs, n, loops) };
    done as usize
}

/// `c_qmempool` and `c_qmempool_bh`.
#[inline(never)]
fn c_pool(pool: &CPool, objs: &mut [*mut c_void], loops: usize, bh: bool) -> usize {
    let guard = if bh { BhGuard::new() } else { None };
    if bh && guard.is_none() {
        return 0;
    }
    let (objs, n, loops) = c_args(objs, loops);
    // SAFETY: The pool is live (type invariant); `objs` has room for `n`; with `bh`, bottom
    // halves are disabled around the call (`guard`).
    let done = unsafe { rust_qmempool_bench_cpool_run(pool.0, objs, n, loops, bh) };
    drop(guard);
    done as usize
}

/// `objpool`: the timed loop is C's, which pushes back every object it popped.
#[inline(never)]
fn objpool(pool: &mut ObjPool, objs: &mut [*mut c_void], loops: usize) -> usize {
    let (objs, n, loops) = c_args(objs, loops);
    // SAFETY: The pool is live (type invariant); `objs` has room for `n`; any context.
    let done = unsafe { rust_qmempool_bench_objpool_run(pool.0, objs, n, loops) };
    done as usize
}

/// Times `loops` rounds of `n` objects allocated and freed one at a time in `cache`, counting
/// them in `done`: `cache_single` and `sheaf_single`.
fn time_single(
    cache: &Cache<Object>,
    n: usize,
    loops: usize,
    done: &mut usize,
) -> Result<bench::Run> {
    let mut objs = KVec::<Option<Obj<'_, Raw>>>::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        objs.push(None, GFP_KERNEL)?;
    }
    bench::pause();
    Ok(bench::time((n * loops) as u64, || {
        *done = single(cache, &mut objs, loops)
    }))
}

/// Everything the timed loops work on.
struct Setting {
    cache: OwnedCache<Object>,
    #[cfg(slab_sheaf_api)]
    sheaf: SheafCache,
    raw: KBox<[*mut c_void; MAX_OUT]>,
}

impl Setting {
    /// Times `loops` rounds of `n` objects the way `variant` says.
    fn measure(&mut self, variant: Variant, n: usize, loops: usize) -> Result<bench::Run> {
        let cache = &*self.cache;
        let mut done = 0;
        let r = match variant {
            Variant::Pool | Variant::PoolBh | Variant::PoolBatch => {
                let p = Pool::new(self.cache.uninit())?;
                let mut objs = KVec::<Option<PoolObj<'_>>>::with_capacity(n, GFP_KERNEL)?;
                for _ in 0..n {
                    objs.push(None, GFP_KERNEL)?;
                }
                bench::pause();
                bench::time((n * loops) as u64, || {
                    done = match variant {
                        Variant::PoolBh => pool_bh(&p, &mut objs, loops),
                        Variant::PoolBatch => pool_batch(&p, &mut objs, loops),
                        _ => pool(&p, &mut objs, loops),
                    };
                })
            }
            Variant::CQmempool | Variant::CQmempoolBh => {
                let p = CPool::new(cache)?;
                let objs = &mut self.raw[..n];
                bench::pause();
                let bh = matches!(variant, Variant::CQmempoolBh);
                bench::time((n * loops) as u64, || done = c_pool(&p, objs, loops, bh))
            }
            Variant::Objpool => {
                // As many objects as the pool's local queue holds, or as are outstanding, on
                // every possible CPU.
                let mut p = ObjPool::new(n.max(LOCAL_DEFAULT))?;
                let objs = &mut self.raw[..n];
                bench::pause();
                bench::time((n * loops) as u64, || done = objpool(&mut p, objs, loops))
            }
            #[cfg(slab_sheaf_api)]
            Variant::SheafPrefill => {
                let objs = &mut self.raw[..n];
                bench::pause();
                let sheaf = &self.sheaf;
                bench::time((n * loops) as u64, || {
                    done = sheaf_prefill(sheaf, objs, loops)
                })
            }
            Variant::CacheBulk => {
                let mut slot = KBox::<ObjArray<'_, Raw, MAX_OUT>>::new_uninit(GFP_KERNEL)?;
                let batch = ObjArray::init_in_place(&mut slot, cache.uninit());
                bench::pause();
                bench::time((n * loops) as u64, || done = bulk(batch, n, loops))
            }
            Variant::CacheSingle => time_single(cache, n, loops, &mut done)?,
            #[cfg(slab_sheaf_api)]
            Variant::SheafSingle => time_single(self.sheaf.cache(), n, loops, &mut done)?,
        };
        if done != n * loops {
            pr_err!(
                "rust_qmempool_bench: FAIL {} n={}: {} of {} objects\n",
                variant.name(),
                n,
                done,
                n * loops
            );
            return Err(ENOMEM);
        }
        Ok(r)
    }
}

struct QMemPoolBench;

impl kernel::Module for QMemPoolBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let p = Params::read()?;
        let flags = CacheFlags::HWCACHE_ALIGN | CacheFlags::NO_MERGE;
        let mut s = Setting {
            cache: OwnedCache::new(c"rust_qmempool_bench", flags)?,
            #[cfg(slab_sheaf_api)]
            sheaf: SheafCache::new(LOCAL_DEFAULT as u32)?,
            raw: KBox::new([ptr::null_mut(); MAX_OUT], GFP_KERNEL)?,
        };
        pr_info!(
            "rfl_bench: start bench=qmempool objs={} runs={} local={} shared={}\n",
            p.objs,
            p.runs,
            LOCAL_DEFAULT,
            SHARED_DEFAULT
        );
        bench::header("qmempool", Variant::NAMES, &p.outstanding, p.runs);
        bench::sweep!(
            "qmempool",
            p.outstanding,
            p.objs,
            p.runs,
            |variant, n, loops| s.measure(variant, n, loops)?
        );
        bench::done("qmempool");
        Ok(QMemPoolBench)
    }
}
