// SPDX-License-Identifier: GPL-2.0

//! Benchmark of the slab bulk API, after prototype-kernel's `slab_bulk_test01` (seed 003).
//!
//! For each bulk size `n`, the cost per object of allocating `n` objects of 256 bytes (the skb
//! size of the seed) and freeing them again, four ways, interleaved within each repetition:
//!
//! - `raw_single`: `kmem_cache_alloc` `n` times, then `kmem_cache_free` `n` times (C API);
//! - `raw_bulk`: one `kmem_cache_alloc_bulk` and one `kmem_cache_free_bulk` (C API);
//! - `ours_single`: [`Cache::alloc_uninit`] `n` times into an [`ObjBatch`] with `push`, then
//!   `pop` and drop each object (`kernel::slab_bulk`, one object at a time);
//! - `ours_bulk`: [`ObjBatch::alloc`] and [`ObjBatch::free`] (`kernel::slab_bulk`, in bulk).
//!
//! Parameters (`insmod rust_slab_bulk_bench.ko bulk=1,8,16 objs=1000000 runs=5`):
//! - `bulk`: the bulk sizes, a comma-separated list (at most 4096 each);
//! - `objs`: objects per timed run (the loop count is `objs / n`);
//! - `runs`: timed repetitions per bulk size and variant (after one untimed warm-up);
//! - `nomerge`: 1 to create the cache with `SLAB_NO_MERGE`.
//!
//! It prints one `rfl_bench:` line per run (see `bench_common.rs`) and stays loaded; unload it
//! with `rmmod`.

use core::ffi::c_void;
use core::mem::MaybeUninit;
use core::ptr;
use kernel::bindings;
use kernel::prelude::*;
use kernel::slab_bulk::{Cache, CacheFlags, KmemCache, ObjBatch};

#[path = "bench_common.rs"]
mod bench;

use bench::{module_param_string, module_param_uint};

module! {
    type: SlabBulkBench,
    name: "rust_slab_bulk_bench",
    author: "rfl-bulk developers",
    description: "Benchmark: slab bulk alloc/free, C API vs kernel::slab_bulk",
    license: "GPL",
}

/// The largest bulk size, as in the seed's table.
const MAX_BULK: usize = 4096;

/// The object: 256 bytes, like the seed's skbs.
type Object = [u8; 256];
type Batch<'c> = ObjBatch<'c, MaybeUninit<Object>, MAX_BULK>;

module_param_string!(
    BULK,
    "bulk",
    256,
    "1,2,3,4,8,16,30,32,34,48,64,128,158,250,512,768,1024,2048,4096"
);
module_param_uint!(OBJS, "objs", 1 << 20);
module_param_uint!(RUNS, "runs", 5);
module_param_uint!(NOMERGE, "nomerge", 0);

/// The four ways, in the order each repetition runs them.
const VARIANTS: [&str; 4] = ["raw_single", "raw_bulk", "ours_single", "ours_bulk"];

struct SlabBulkBench;

/// The state of the timed loops: the cache and the object arrays, on the heap.
struct Bench<'c, 'b> {
    cache: &'c Cache<Object>,
    raw: KBox<[*mut c_void; MAX_BULK]>,
    batch: &'b mut Batch<'c>,
}

impl Bench<'_, '_> {
    /// C API, one object at a time.
    fn raw_single(&mut self, n: usize, loops: usize) {
        let s = self.cache.as_raw();
        let p = &mut self.raw[..n];
        for _ in 0..loops {
            for slot in p.iter_mut() {
                // SAFETY: `s` is a live cache; GFP_KERNEL in process context.
                *slot = unsafe { bindings::kmem_cache_alloc_noprof(s, bindings::GFP_KERNEL) };
            }
            for obj in p.iter() {
                if !obj.is_null() {
                    // SAFETY: `obj` was just allocated from `s` and is freed once.
                    unsafe { bindings::kmem_cache_free(s, *obj) };
                }
            }
        }
    }

    /// C API, in bulk.
    fn raw_bulk(&mut self, n: usize, loops: usize) {
        let s = self.cache.as_raw();
        let p = self.raw.as_mut_ptr();
        for _ in 0..loops {
            // SAFETY: `p` has room for `n <= MAX_BULK` pointers; IRQs are on (process context).
            if unsafe { bindings::kmem_cache_alloc_bulk_noprof(s, bindings::GFP_KERNEL, n, p) } == 0 {
                continue;
            }
            // SAFETY: The `n` objects were just allocated from `s`, none is NULL.
            unsafe { bindings::kmem_cache_free_bulk(s, n, p) };
        }
    }

    /// `kernel::slab_bulk`, one object at a time.
    fn ours_single(&mut self, n: usize, loops: usize) {
        for _ in 0..loops {
            for _ in 0..n {
                if let Ok(obj) = self.cache.alloc_uninit(GFP_KERNEL) {
                    // The batch has room for `n <= MAX_BULK` objects of its own cache.
                    let _ = self.batch.push(obj);
                }
            }
            while let Some(obj) = self.batch.pop() {
                drop(obj);
            }
        }
    }

    /// `kernel::slab_bulk`, in bulk.
    fn ours_bulk(&mut self, n: usize, loops: usize) {
        for _ in 0..loops {
            if self.batch.alloc(n, GFP_KERNEL).is_ok() {
                self.batch.free();
            }
        }
    }
}

impl kernel::Module for SlabBulkBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // SAFETY: The parameters are written by the module loader before `init` runs, and never
        // again (they have no sysfs file).
        let (objs, runs, nomerge, sizes) = unsafe {
            (
                *ptr::addr_of!(OBJS) as usize,
                *ptr::addr_of!(RUNS),
                *ptr::addr_of!(NOMERGE) != 0,
                &*ptr::addr_of!(BULK),
            )
        };
        let mut flags = CacheFlags::HWCACHE_ALIGN;
        if nomerge {
            flags = flags | CacheFlags::NO_MERGE;
        }
        let cache = KmemCache::<Object>::new(c"rust_slab_bulk_bench", flags)?;
        let mut slot = KBox::<Batch<'_>>::new_uninit(GFP_KERNEL)?;
        let batch = ObjBatch::init_in_place(&mut slot, cache.uninit());
        let mut b = Bench {
            cache: &cache,
            raw: KBox::new([ptr::null_mut(); MAX_BULK], GFP_KERNEL)?,
            batch,
        };
        pr_info!(
            "rfl_bench: start bench=slab_bulk objs={} runs={} nomerge={}\n",
            objs,
            runs,
            nomerge as u32
        );
        for n in bench::parse_list(bench::c_buf(sizes)) {
            if n == 0 || n > MAX_BULK {
                pr_warn!("rust_slab_bulk_bench: bulk size {} skipped (1..={})\n", n, MAX_BULK);
                continue;
            }
            let loops = (objs / n).max(1);
            for run in 0..=runs {
                for name in VARIANTS {
                    bench::pause();
                    let r = bench::time((loops * n) as u64, || match name {
                        "raw_single" => b.raw_single(n, loops),
                        "raw_bulk" => b.raw_bulk(n, loops),
                        "ours_single" => b.ours_single(n, loops),
                        _ => b.ours_bulk(n, loops),
                    });
                    // Run 0 warms the caches up and is not reported.
                    if run > 0 {
                        bench::report("slab_bulk", name, n, run, &r);
                    }
                }
            }
        }
        bench::done("slab_bulk");
        // The batch lives in `slot`, which does not drop it: it is empty after every variant.
        drop(b);
        drop(slot);
        Ok(SlabBulkBench)
    }
}
