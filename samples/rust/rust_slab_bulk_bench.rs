// SPDX-License-Identifier: GPL-2.0

//! Benchmark of the slab bulk API, after prototype-kernel's `slab_bulk_test01`.
//!
//! For each bulk size `n`, the cost per object of allocating `n` objects of 256 bytes (the skb
//! size of prototype-kernel's test) and freeing them again, four ways, interleaved within each
//! repetition, in an order that rotates from one repetition to the next:
//!
//! - `raw_single`: `kmem_cache_alloc` `n` times, then `kmem_cache_free` `n` times (C API);
//! - `raw_bulk`: one `kmem_cache_alloc_bulk` and one `kmem_cache_free_bulk` (C API);
//! - `ours_single`: [`Cache::alloc_uninit`] `n` times into an array of `Option<Obj>`, then each
//!   taken out and dropped (`kernel::slab_bulk`, one object at a time: the objects are kept the
//!   way `raw_single` keeps its pointers, so that the two differ in the single path only);
//! - `ours_bulk`: [`ObjBatch::alloc`] and [`ObjBatch::free`] (`kernel::slab_bulk`, in bulk).
//!
//! Parameters (`insmod rust_slab_bulk_bench.ko bulk=1,8,16 objs=1000000 runs=5`):
//! - `bulk`: the bulk sizes, a comma-separated list (at most 4096 each);
//! - `objs`: objects per timed run (the loop count is `objs / n`);
//! - `runs`: timed repetitions per bulk size and variant (after one untimed warm-up; 21 by
//!   default: on a shared machine the median of 11 still moved by a few percent between runs);
//! - `nomerge`: 1 (default) to create the cache with `SLAB_NO_MERGE`, 0 to let SLUB merge it
//!   into a compatible cache (on UML, `:0000256`, whose slabs hold another user's objects too;
//!   the case for a cache of one's own in the `slab_nomerge` thread of 2015);
//! - `atomic`: 1 (default) to allocate with `GFP_ATOMIC` as the C original and the networking
//!   code it models do, 0 for `GFP_KERNEL`;
//! - `fresh`: 1 (default) to create the cache anew for every timed run and destroy it after, as
//!   the C original does, 0 to keep one cache for the whole sweep.
//!
//! It prints one `rfl_bench:` line per run (see `bench_common.rs`) and stays loaded; unload it
//! with `rmmod`. An allocation that fails is counted, not skipped (a skipped free would lower
//! the cost per object): a run with any failure prints a `FAIL` line and fails the load with
//! `ENOMEM`.

use core::ffi::c_void;
use core::mem::{self, MaybeUninit};
use core::ptr;
use kernel::bindings;
use kernel::prelude::*;
use kernel::slab_bulk::{Cache, CacheFlags, KmemCache, Obj, ObjBatch};

#[path = "bench_common.rs"]
mod bench;

use bench::{module_param_string, module_param_uint};

bench::sample_module! {
    type: SlabBulkBench,
    name: "rust_slab_bulk_bench",
    description: "Benchmark: slab bulk alloc/free, C API vs kernel::slab_bulk",
}

/// The largest bulk size, as in `slab_bulk_test01`'s table.
const MAX_BULK: usize = 4096;

/// The object: 256 bytes, the skb size of `slab_bulk_test01`.
type Object = [u8; 256];
type Batch<'c> = ObjBatch<'c, MaybeUninit<Object>, MAX_BULK>;
type Single<'c> = Option<Obj<'c, MaybeUninit<Object>>>;

module_param_string!(
    BULK,
    "bulk",
    256,
    "1,2,3,4,8,16,30,32,34,48,64,128,158,250,512,768,1024,2048,4096"
);
module_param_uint!(OBJS, "objs", 1 << 21);
module_param_uint!(RUNS, "runs", 21);
module_param_uint!(NOMERGE, "nomerge", 1);
module_param_uint!(ATOMIC, "atomic", 1);
module_param_uint!(FRESH, "fresh", 1);

/// The four ways to allocate and free.
#[derive(Clone, Copy)]
enum Variant {
    RawSingle,
    RawBulk,
    OursSingle,
    OursBulk,
}

impl Variant {
    /// Every variant, in the order the first repetition runs them.
    const ALL: [Self; 4] = [
        Self::RawSingle,
        Self::RawBulk,
        Self::OursSingle,
        Self::OursBulk,
    ];

    /// The name in the result lines.
    fn name(self) -> &'static str {
        match self {
            Self::RawSingle => "raw_single",
            Self::RawBulk => "raw_bulk",
            Self::OursSingle => "ours_single",
            Self::OursBulk => "ours_bulk",
        }
    }
}

struct SlabBulkBench;

/// Whether `kmem_cache_alloc_bulk` allocated what it was asked for, from what it returns: the
/// number of objects (`int`) up to 6.x, a `bool` from 7.0 on; all or nothing either way.
#[cfg(kernel_ge_7_0)]
#[inline(always)]
fn bulk_allocated(result: bool) -> bool {
    result
}

/// Whether `kmem_cache_alloc_bulk` allocated what it was asked for, from what it returns: the
/// number of objects (`int`) up to 6.x, a `bool` from 7.0 on; all or nothing either way.
#[cfg(not(kernel_ge_7_0))]
#[inline(always)]
fn bulk_allocated(result: core::ffi::c_int) -> bool {
    result != 0
}

/// One timed run's setting: the cache, the arrays, the GFP flags in both forms.
struct Run<'c, 'b> {
    cache: &'c Cache<Object>,
    raw: &'b mut [*mut c_void; MAX_BULK],
    /// `MAX_BULK` slots for `ours_single`, all `None` between rounds.
    objs: &'b mut [Single<'c>],
    batch: &'b mut Batch<'c>,
    flags: kernel::alloc::Flags,
    gfp: bindings::gfp_t,
}

impl Run<'_, '_> {
    // Each loop returns the number of allocations that failed. A failed allocation skips its
    // free, so it would lower the cost per object of the run it happens in: the caller fails
    // the run instead. Counting costs nothing on the path that succeeds (the test for failure
    // is there anyway).

    /// C API, one object at a time.
    fn raw_single(&mut self, n: usize, loops: usize) -> usize {
        let s = self.cache.as_raw();
        let p = &mut self.raw[..n];
        let mut failed = 0;
        for _ in 0..loops {
            for slot in p.iter_mut() {
                // SAFETY: `s` is a live cache; the flags suit process context.
                *slot = unsafe { bindings::kmem_cache_alloc_noprof(s, self.gfp) };
            }
            for obj in p.iter() {
                if obj.is_null() {
                    failed += 1;
                } else {
                    // SAFETY: `obj` was just allocated from `s` and is freed once.
                    unsafe { bindings::kmem_cache_free(s, *obj) };
                }
            }
        }
        failed
    }

    /// C API, in bulk.
    fn raw_bulk(&mut self, n: usize, loops: usize) -> usize {
        let s = self.cache.as_raw();
        let p = self.raw.as_mut_ptr();
        let mut failed = 0;
        for _ in 0..loops {
            // SAFETY: `p` has room for `n <= MAX_BULK` pointers; IRQs are on (process context).
            let result = unsafe { bindings::kmem_cache_alloc_bulk_noprof(s, self.gfp, n, p) };
            if !bulk_allocated(result) {
                // All or nothing: none of the `n` was allocated.
                failed += n;
                continue;
            }
            // SAFETY: The `n` objects were just allocated from `s`, none is NULL.
            unsafe { bindings::kmem_cache_free_bulk(s, n, p) };
        }
        failed
    }

    /// `kernel::slab_bulk`, one object at a time.
    fn ours_single(&mut self, n: usize, loops: usize) -> usize {
        let objs = &mut self.objs[..n];
        let mut failed = 0;
        for _ in 0..loops {
            for slot in objs.iter_mut() {
                // Every slot is `None` here (the loop below takes them all): nothing to drop,
                // which `*slot = ...` would test for, as the C variant's plain store does not.
                mem::forget(mem::replace(slot, self.cache.alloc_uninit(self.flags).ok()));
            }
            for slot in objs.iter_mut() {
                match slot.take() {
                    Some(obj) => drop(obj),
                    None => failed += 1,
                }
            }
        }
        failed
    }

    /// `kernel::slab_bulk`, in bulk.
    fn ours_bulk(&mut self, n: usize, loops: usize) -> usize {
        let mut failed = 0;
        for _ in 0..loops {
            if self.batch.alloc(n, self.flags).is_ok() {
                self.batch.free();
            } else {
                // All or nothing, as `kmem_cache_alloc_bulk`.
                failed += n;
            }
        }
        failed
    }
}

/// The module's parameters, read once.
struct Params {
    sizes: &'static [core::ffi::c_char],
    objs: usize,
    runs: u32,
    nomerge: bool,
    atomic: bool,
    fresh: bool,
}

fn params() -> Params {
    // SAFETY: The parameters are written by the module loader before `init` runs, and never
    // again (they have no sysfs file).
    unsafe {
        Params {
            sizes: &*ptr::addr_of!(BULK),
            objs: *ptr::addr_of!(OBJS) as usize,
            runs: *ptr::addr_of!(RUNS),
            nomerge: *ptr::addr_of!(NOMERGE) != 0,
            atomic: *ptr::addr_of!(ATOMIC) != 0,
            fresh: *ptr::addr_of!(FRESH) != 0,
        }
    }
}

/// Times `loops` rounds of `n` objects the way `variant` says, in `cache`.
fn measure(
    p: &Params,
    cache: &Cache<Object>,
    raw: &mut [*mut c_void; MAX_BULK],
    variant: Variant,
    n: usize,
    loops: usize,
) -> Result<bench::Run> {
    let mut slot = KBox::<Batch<'_>>::new_uninit(GFP_KERNEL)?;
    let mut objs = KVec::<Single<'_>>::with_capacity(MAX_BULK, GFP_KERNEL)?;
    for _ in 0..MAX_BULK {
        objs.push(None, GFP_KERNEL)?;
    }
    let (flags, gfp) = if p.atomic {
        (GFP_ATOMIC, bindings::GFP_ATOMIC)
    } else {
        (GFP_KERNEL, bindings::GFP_KERNEL)
    };
    let mut run = Run {
        cache,
        raw,
        objs: &mut objs,
        batch: ObjBatch::init_in_place(&mut slot, cache.uninit()),
        flags,
        gfp,
    };
    let mut failed = 0;
    bench::pause();
    let r = bench::time((loops * n) as u64, || {
        failed = match variant {
            Variant::RawSingle => run.raw_single(n, loops),
            Variant::RawBulk => run.raw_bulk(n, loops),
            Variant::OursSingle => run.ours_single(n, loops),
            Variant::OursBulk => run.ours_bulk(n, loops),
        }
    });
    // The batch lives in `slot`, which does not drop it: it is empty after every variant.
    if failed != 0 {
        pr_err!(
            "rust_slab_bulk_bench: FAIL {} bulk={}: {} of {} allocations failed\n",
            variant.name(),
            n,
            failed,
            loops * n
        );
        return Err(ENOMEM);
    }
    Ok(r)
}

impl kernel::Module for SlabBulkBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let p = params();
        let mut flags = CacheFlags::HWCACHE_ALIGN;
        if p.nomerge {
            flags = flags | CacheFlags::NO_MERGE;
        }
        let new_cache = || KmemCache::<Object>::new(c"rust_slab_bulk_bench", flags);
        // One cache for the whole sweep, unless every run gets a fresh one.
        let shared = if p.fresh { None } else { Some(new_cache()?) };
        let mut raw = KBox::new([ptr::null_mut(); MAX_BULK], GFP_KERNEL)?;
        pr_info!(
            "rfl_bench: start bench=slab_bulk objs={} runs={} nomerge={} atomic={} fresh={}\n",
            p.objs,
            p.runs,
            u32::from(p.nomerge),
            u32::from(p.atomic),
            u32::from(p.fresh)
        );
        for n in bench::parse_list(bench::c_buf(p.sizes)) {
            if n == 0 || n > MAX_BULK {
                pr_warn!(
                    "rust_slab_bulk_bench: bulk size {} skipped (1..={})\n",
                    n,
                    MAX_BULK
                );
                continue;
            }
            let loops = (p.objs / n).max(1);
            for run in 0..=p.runs {
                // The order rotates from one repetition to the next, so that a variant's place
                // in the sequence (after a cache was created, after another variant's frees)
                // cannot pass for its cost.
                for i in 0..Variant::ALL.len() {
                    let variant = Variant::ALL[(i + run as usize) % Variant::ALL.len()];
                    let fresh;
                    let cache = match &shared {
                        Some(cache) => cache,
                        None => {
                            fresh = new_cache()?;
                            &fresh
                        }
                    };
                    let r = measure(&p, cache, &mut raw, variant, n, loops)?;
                    // Run 0 warms the caches up and is not reported.
                    if run > 0 {
                        bench::report("slab_bulk", variant.name(), n, run, &r);
                    }
                }
            }
        }
        bench::done("slab_bulk");
        Ok(SlabBulkBench)
    }
}
