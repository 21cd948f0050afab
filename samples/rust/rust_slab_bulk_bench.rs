// SPDX-License-Identifier: GPL-2.0

//! Benchmark of the slab bulk API, after prototype-kernel's `slab_bulk_test01`.
//!
//! For each bulk size `n`, the cost per object of allocating `n` objects of 256 bytes (the skb
//! size of prototype-kernel's test) and freeing them again, in each of the ways below,
//! interleaved within each repetition, in an order that rotates from one repetition to the next:
//!
//! - `raw_single`: `kmem_cache_alloc` `n` times, then `kmem_cache_free` `n` times (C API);
//! - `raw_bulk`: one `kmem_cache_alloc_bulk` and one `kmem_cache_free_bulk` (C API), into and
//!   from an array of `n` pointers;
//! - `ours_single`: [`Cache::alloc_uninit`] `n` times into an array of `Option<Obj>`, then each
//!   taken out and dropped (`kernel::slab_bulk`, one object at a time: the objects are kept the
//!   way `raw_single` keeps its pointers, so that the two differ in the single path only);
//! - `ours_bulk`: [`Cache::alloc_bulk_in`] into an array of `n` slots, the `SlotObjs` it
//!   returns dropped (`kernel::slab_bulk` in the C API's shape: the caller's array);
//! - `ours_batch`: [`ObjArray::alloc`] and [`ObjArray::free`] (`kernel::slab_bulk`, objects in an
//!   array of their own, as a pool or a driver's ring keeps one);
//! - `box_single`: `ours_single` through a module-lifetime cache's allocator type,
//!   `Box::<Object, BoxCache>::new_uninit` `n` times into an array of `Option<Box>`, then each
//!   taken out and dropped: the cost of the live-object count that keeps such a cache from
//!   being destroyed under its boxes (an atomic add and subtract per object), beside
//!   `ours_single`. Its cache is the module's one registration, created at load time with
//!   `SLAB_HWCACHE_ALIGN | SLAB_NO_MERGE` whatever `nomerge` and `fresh` say, and emptied after
//!   every run as the others are.
//!
//! Where code and data sit moves the figures by a few percent, more than the targets' margins:
//! the same machine code can cost more at one address than at another, and the same loop more
//! on one array than on another. So each variant's loop is compiled [`CODE_PLACEMENTS`] times,
//! each copy a function of its own at its own address (`bench_placement.rs`), and the arrays
//! the loops keep their objects in start at one of [`DATA_PLACEMENTS`] places in their
//! allocations, [`PLACEMENT_STRIDE`] bytes apart, with the timed loop called from a frame 16
//! bytes deeper in the stack at each place (`placement::deeper`: SLUB's state on the stack
//! meets the boot's addresses at another offset); repetition `r` runs every variant in the copy
//! and on the place that [`placement_of`] gives, and a cell's median is taken over all of them.
//! `raw_single`, `raw_bulk` and `ours_bulk` use one array of pointers, allocated once for the
//! module; `ours_single`'s array of `Option<Obj>` is allocated for each run (its `Obj`s borrow the
//! run's cache); `ours_batch`'s array is inside its batch and does not move. After the table, the
//! module times the bulk and the single pair from every 16-byte offset of a stack page
//! ([`stack_sweep`]), which tells whether a boot's figures depend on where the frames sit.
//!
//! Its parameters (`insmod rust_slab_bulk_bench.ko bulk=1,8,16 objs=1000000 runs=5`), their
//! bounds and defaults are the `bench::module_params!` block below; a value out of its bounds
//! fails the load with `EINVAL` and a line saying what the parameter takes.
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
use kernel::slab_bulk::{
    Cache, CacheFlags, CacheRegistration, Obj, ObjArray, ObjSlot, OwnedCache, StaticCache,
};

#[path = "bench_common.rs"]
mod bench;
#[path = "bench_placement.rs"]
mod placement;

use bench::{MAX_OBJS, MAX_RUNS};
use placement::{at_depth, deeper, descend, in_copy, placed, CODE_PLACEMENTS};

bench::sample_module! {
    type: SlabBulkBench,
    name: "rust_slab_bulk_bench",
    description: "Benchmark: slab bulk alloc/free, C API vs kernel::slab_bulk",
}

/// The largest bulk size, as in `slab_bulk_test01`'s table.
const MAX_BULK: usize = 4096;

/// How many places the arrays of the timed loops start at, each with its depth of the stack
/// (`at_depth!` has as many); see the module docs.
const DATA_PLACEMENTS: usize = 4;

/// How far apart the places are: 17 cache lines, so that each starts at another offset in its
/// page and in other cache sets.
const PLACEMENT_STRIDE: usize = 17 * 64;

/// The entries of an array of pointers with room for `MAX_BULK` at every place.
const PTR_ARRAY: usize = MAX_BULK + (DATA_PLACEMENTS - 1) * PLACEMENT_STRIDE / 8;

/// The entries of `ours_single`'s array (16-byte entries) with room for `MAX_BULK` at every
/// place.
const SINGLE_ARRAY: usize = MAX_BULK + (DATA_PLACEMENTS - 1) * PLACEMENT_STRIDE / 16;

/// The place of the data and the copy of the code that repetition `run` (from 1) uses.
///
/// Places go round one per repetition; the copy goes round too, but one further on after each
/// full round of the places, so that over [`DATA_PLACEMENTS`] rounds every place meets every
/// copy.
fn placement_of(run: usize) -> Placement {
    Placement {
        data: run % DATA_PLACEMENTS,
        code: (run + run / DATA_PLACEMENTS) % CODE_PLACEMENTS,
    }
}

// The rotation of `placement_of` pairs every place with every copy only if there are as many of
// each.
const _: () = assert!(DATA_PLACEMENTS == CODE_PLACEMENTS);

/// The object: 256 bytes, the skb size of `slab_bulk_test01`.
type Object = [u8; 256];
type BulkObjs<'c> = ObjArray<'c, MaybeUninit<Object>, MAX_BULK>;
type Single<'c> = Option<Obj<'c, MaybeUninit<Object>>>;
type Boxed = Option<Box<MaybeUninit<Object>, BoxCache>>;

kernel::static_cache! {
    /// The cache of `box_single`, for the life of the module.
    struct BoxCache(Object) = c"rust_slab_bulk_bench_box",
        CacheFlags::HWCACHE_ALIGN | CacheFlags::NO_MERGE;
}

bench::module_params! {
    /// The bulk sizes.
    bulk: list 1..=MAX_BULK = "1,2,3,4,8,16,30,32,34,48,64,128,158,250,512,768,1024,2048,4096";
    /// Objects per timed run (the loop count is `objs / n`).
    objs: uint 1..=MAX_OBJS = 1 << 21;
    /// Timed repetitions per bulk size and variant, after one untimed warm-up in every copy of
    /// the code and on every place of the data; the default runs every copy on every place once.
    runs: uint 1..=MAX_RUNS = (DATA_PLACEMENTS * CODE_PLACEMENTS) as u32;
    /// 1 to create the cache with `SLAB_NO_MERGE`, 0 to let SLUB merge it into a compatible
    /// cache (on UML, `:0000256`, whose slabs hold another user's objects too; the case for a
    /// cache of one's own in the `slab_nomerge` thread of 2015).
    nomerge: uint 0..=1 = 1;
    /// 1 to allocate with `GFP_ATOMIC` as the C original and the networking code it models do,
    /// 0 for `GFP_KERNEL`.
    atomic: uint 0..=1 = 1;
    /// 1 to create the cache anew for every timed run and destroy it after, as the C original
    /// does, 0 to keep one cache for the whole sweep.
    fresh: uint 0..=1 = 1;
    /// Objects per timed run of the stack sweep, which times the bulk and the single pair
    /// (`raw_bulk` and `ours_bulk`, `raw_single` and `ours_single`) after the table, at 8 and
    /// 16 objects, from a frame at every 16-byte offset of a page ([`stack_sweep`]); 0 leaves
    /// the sweep out.
    stack_sweep: uint 0..=MAX_OBJS = 1 << 18;
}

bench::variants! {
    /// The ways to allocate and free, in the order the first repetition runs them; each
    /// one's timed loop is the function of its name, called from [`measure`].
    enum Variant {
        RawSingle => "raw_single",
        RawBulk => "raw_bulk",
        OursSingle => "ours_single",
        OursBulk => "ours_bulk",
        OursBatch => "ours_batch",
        BoxSingle => "box_single",
    }
}

struct SlabBulkBench {
    /// `box_single`'s cache, destroyed when the module goes.
    _boxes: CacheRegistration<BoxCache>,
}

/// Whether `kmem_cache_alloc_bulk` allocated what it was asked for, from what it returns: the
/// number of objects (`int`) before 7.2, a `bool` from 7.2 on (`slab_bulk_alloc_bool`); all or
/// nothing either way.
#[cfg(slab_bulk_alloc_bool)]
#[inline(always)]
fn bulk_allocated(result: bool) -> bool {
    result
}

/// Whether `kmem_cache_alloc_bulk` allocated what it was asked for, from what it returns: the
/// number of objects (`int`) before 7.2, a `bool` from 7.2 on (`slab_bulk_alloc_bool`); all or
/// nothing either way.
#[cfg(not(slab_bulk_alloc_bool))]
#[inline(always)]
fn bulk_allocated(result: core::ffi::c_int) -> bool {
    result != 0
}

/// One timed run's setting: the cache, the arrays of `n` entries (`n`, the bulk size), the GFP
/// flags in both forms.
struct Setting<'c, 'b> {
    cache: &'c Cache<Object>,
    /// The array of pointers of `raw_single`, `raw_bulk` and `ours_bulk` (which lends it to
    /// [`Cache::alloc_bulk_in`]): one and the same memory, so that the three differ in their code
    /// only.
    ptrs: &'b mut [*mut c_void],
    /// `ours_single`'s objects, all `None` between rounds.
    objs: &'b mut [Single<'c>],
    /// `box_single`'s objects, all `None` between rounds.
    boxes: &'b mut [Boxed],
    batch: &'b mut BulkObjs<'c>,
    flags: kernel::alloc::Flags,
    gfp: bindings::gfp_t,
}

// Each loop returns the number of allocations that failed. A failed allocation skips its free,
// so it would lower the cost per object of the run it happens in: the caller fails the run
// instead. Counting costs nothing on the path that succeeds (the test for failure is there
// anyway). Each loop is a function of its own in each of its `CODE_PLACEMENTS` copies (see
// `bench_placement.rs`), ours and the C API's alike.

/// C API, one object at a time.
#[inline(never)]
fn raw_single<const P: usize>(run: &mut Setting<'_, '_>, loops: usize) -> usize {
    placed::<P>();
    let s = run.cache.as_raw();
    let p = &mut *run.ptrs;
    let mut failed = 0;
    for _ in 0..loops {
        for slot in p.iter_mut() {
            // SAFETY: `s` is a live cache; the flags suit process context.
            *slot = unsafe { bindings::kmem_cache_alloc_noprof(s, run.gfp) };
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
#[inline(never)]
fn raw_bulk<const P: usize>(run: &mut Setting<'_, '_>, loops: usize) -> usize {
    placed::<P>();
    let s = run.cache.as_raw();
    let n = run.ptrs.len();
    let p = run.ptrs.as_mut_ptr();
    let mut failed = 0;
    for _ in 0..loops {
        // SAFETY: `p` has room for `n` pointers; IRQs are on (process context).
        let result = unsafe { bindings::kmem_cache_alloc_bulk_noprof(s, run.gfp, n, p) };
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
#[inline(never)]
fn ours_single<const P: usize>(run: &mut Setting<'_, '_>, loops: usize) -> usize {
    placed::<P>();
    let cache = run.cache;
    let flags = run.flags;
    let objs = &mut *run.objs;
    let n = objs.len();
    let mut failed = 0;
    // Indexed loops: with `iter_mut()` here, LLVM keeps the flags and the array's end in
    // call-clobbered registers and copies them to and from callee-saved ones around every call
    // (docs/benchmarks.md, "The benchmark's loops, and why they are written as they are").
    #[allow(clippy::needless_range_loop)]
    for _ in 0..loops {
        for i in 0..n {
            // Every slot is `None` here (the loop below takes them all): nothing to drop,
            // which `objs[i] = ...` would test for, as the C variant's plain store does not.
            mem::forget(mem::replace(&mut objs[i], cache.alloc_uninit(flags).ok()));
        }
        for i in 0..n {
            match objs[i].take() {
                Some(obj) => drop(obj),
                None => failed += 1,
            }
        }
    }
    failed
}

/// `kernel::slab_bulk`, one object at a time, through a module-lifetime cache's allocator.
#[inline(never)]
fn box_single<const P: usize>(run: &mut Setting<'_, '_>, loops: usize) -> usize {
    placed::<P>();
    let flags = run.flags;
    let boxes = &mut *run.boxes;
    let n = boxes.len();
    let mut failed = 0;
    // Indexed loops, as in `ours_single`.
    #[allow(clippy::needless_range_loop)]
    for _ in 0..loops {
        for i in 0..n {
            // Every slot is `None` here, as in `ours_single`.
            mem::forget(mem::replace(
                &mut boxes[i],
                Box::<Object, BoxCache>::new_uninit(flags).ok(),
            ));
        }
        for i in 0..n {
            match boxes[i].take() {
                Some(obj) => drop(obj),
                None => failed += 1,
            }
        }
    }
    failed
}

/// `kernel::slab_bulk`, in bulk into an array of the caller's.
#[inline(never)]
fn ours_bulk<const P: usize>(run: &mut Setting<'_, '_>, loops: usize) -> usize {
    placed::<P>();
    let cache = run.cache;
    let flags = run.flags;
    let n = run.ptrs.len();
    let slots = ptr::from_mut::<[*mut c_void]>(&mut *run.ptrs) as *mut [ObjSlot<Object>];
    // SAFETY: `ObjSlot<Object>`, a `MaybeUninit<NonNull<Object>>`, has the layout of
    // `*mut c_void` and accepts any contents; the view borrows `run.ptrs` for this function
    // alone. What is stored through it is what `kmem_cache_alloc_bulk` writes: object pointers,
    // valid `*mut c_void`s for the C loops that use the array next.
    let slots = unsafe { &mut *slots };
    let mut failed = 0;
    for _ in 0..loops {
        match cache.alloc_bulk_in(slots, flags) {
            Ok(objs) => drop(objs),
            // All or nothing, as `kmem_cache_alloc_bulk`.
            Err(_) => failed += n,
        }
    }
    failed
}

/// `kernel::slab_bulk`, in bulk through a batch.
#[inline(never)]
fn ours_batch<const P: usize>(run: &mut Setting<'_, '_>, loops: usize) -> usize {
    placed::<P>();
    let n = run.ptrs.len();
    let flags = run.flags;
    let mut failed = 0;
    for _ in 0..loops {
        if run.batch.alloc(n, flags).is_ok() {
            run.batch.free();
        } else {
            // All or nothing, as `kmem_cache_alloc_bulk`.
            failed += n;
        }
    }
    failed
}

/// Runs copy `copy` of `variant`'s timed loop; returns the number of allocations that failed.
#[inline(always)]
fn run_loop(variant: Variant, copy: usize, run: &mut Setting<'_, '_>, loops: usize) -> usize {
    match variant {
        Variant::RawSingle => in_copy!(copy, raw_single(run, loops)),
        Variant::RawBulk => in_copy!(copy, raw_bulk(run, loops)),
        Variant::OursSingle => in_copy!(copy, ours_single(run, loops)),
        Variant::OursBulk => in_copy!(copy, ours_bulk(run, loops)),
        Variant::OursBatch => in_copy!(copy, ours_batch(run, loops)),
        Variant::BoxSingle => in_copy!(copy, box_single(run, loops)),
    }
}

/// The arrays of the timed loops, allocated once, with room for `MAX_BULK` entries at every
/// place.
struct Arrays {
    ptrs: KBox<[*mut c_void; PTR_ARRAY]>,
}

/// Where a repetition runs: the place of the data and the copy of the code.
#[derive(Clone, Copy)]
struct Placement {
    data: usize,
    code: usize,
}

/// Calls `body` with a timed run's setting: `cache`, the arrays at place `data` with `n`
/// entries each, a new empty batch and the GFP flags of `p`.
fn with_run<R>(
    p: &Params,
    cache: &Cache<Object>,
    arrays: &mut Arrays,
    data: usize,
    n: usize,
    body: impl FnOnce(&mut Setting<'_, '_>) -> Result<R>,
) -> Result<R> {
    let mut slot = KBox::<BulkObjs<'_>>::new_uninit(GFP_KERNEL)?;
    let mut objs = KVec::<Single<'_>>::with_capacity(SINGLE_ARRAY, GFP_KERNEL)?;
    for _ in 0..SINGLE_ARRAY {
        objs.push(None, GFP_KERNEL)?;
    }
    // 8-byte entries: half of its room goes unused, and its places are those of `objs`.
    let mut boxes = KVec::<Boxed>::with_capacity(SINGLE_ARRAY, GFP_KERNEL)?;
    for _ in 0..SINGLE_ARRAY {
        boxes.push(None, GFP_KERNEL)?;
    }
    // The first entry at place `data`, in the array of pointers and in `objs`.
    let (first, first_single) = (data * PLACEMENT_STRIDE / 8, data * PLACEMENT_STRIDE / 16);
    let (flags, gfp) = if p.atomic != 0 {
        (GFP_ATOMIC, bindings::GFP_ATOMIC)
    } else {
        (GFP_KERNEL, bindings::GFP_KERNEL)
    };
    // The batch lives in `slot`, which does not drop it: it is empty after every variant.
    body(&mut Setting {
        cache,
        ptrs: &mut arrays.ptrs[first..first + n],
        objs: &mut objs[first_single..first_single + n],
        boxes: &mut boxes[first_single..first_single + n],
        batch: ObjArray::init_in_place(&mut slot, cache.uninit()),
        flags,
        gfp,
    })
}

/// Fails a run in which `failed` of `objs` allocations of `variant` failed.
fn check_failed(variant: Variant, n: usize, failed: usize, objs: usize) -> Result {
    if failed != 0 {
        pr_err!(
            "rust_slab_bulk_bench: FAIL {} bulk={}: {} of {} allocations failed\n",
            variant.name(),
            n,
            failed,
            objs
        );
        return Err(ENOMEM);
    }
    Ok(())
}

/// Times `loops` rounds of `n` objects the way `variant` says, in `cache`, on the arrays at
/// place `at.data` and in copy `at.code` of the code.
fn measure(
    p: &Params,
    cache: &Cache<Object>,
    arrays: &mut Arrays,
    variant: Variant,
    at: Placement,
    n: usize,
    loops: usize,
) -> Result<bench::Run> {
    with_run(p, cache, arrays, at.data, n, |run| {
        let mut failed = 0;
        bench::pause();
        let r = bench::time((loops * n) as u64, || {
            failed = at_depth!(at.data, run_loop(variant, at.code, run, loops));
        });
        check_failed(variant, n, failed, loops * n)?;
        Ok(r)
    })
}

/// The bulk sizes of the stack sweep: the cells that some boots slowed (docs/benchmarks.md,
/// "Placement").
const STACK_SWEEP_BULKS: [usize; 2] = [8, 16];

/// The pairs the stack sweep times: the C loop, then ours.
const STACK_SWEEP_PAIRS: [(Variant, Variant); 2] = [
    (Variant::RawBulk, Variant::OursBulk),
    (Variant::RawSingle, Variant::OursSingle),
];

/// Repetitions of each loop at each offset of the sweep; a line gives their median.
const STACK_SWEEP_RUNS: usize = 3;

/// The span whose offsets the sweep visits: 4 KiB, the addresses' bits 0-11 that 4K aliasing
/// compares.
const STACK_SWEEP_SPAN: usize = 4096;

/// The offsets of the span that the sweep visits, 16 bytes apart (the stack's alignment at a
/// call).
const STACK_SWEEP_OFFSETS: usize = STACK_SWEEP_SPAN / 16;

/// How far below its first frame the sweep may go: a page and the largest step between two
/// frames that still reaches every offset (`descend`).
const STACK_SWEEP_DEPTH: usize = STACK_SWEEP_SPAN + 64;

/// The stack sweep: for each size of [`STACK_SWEEP_BULKS`], the loops of each pair of
/// [`STACK_SWEEP_PAIRS`] called from a frame at every 16-byte offset of a page, in one cache,
/// on place 0 of the data and in copy 0 of the code, parameter `stack_sweep`'s count of objects
/// per timed run.
///
/// A loop's cost can depend on where its stack frame sits against the addresses of a boot: on
/// x86 a load that matches an earlier store in bits 0-11 of its address waits for it (4K
/// aliasing), and SLUB keeps state on the stack while it loads and stores the objects, the
/// array and its per-CPU structure. The four depths of the table sample four offsets; this
/// tries all of them. It prints a line per size, pair and offset (one line, folded here):
///
/// ```text
/// rfl_bench: stack bench=slab_bulk bulk=8 frame=0x260 objs=262144
///     raw_bulk=3468602 ours_bulk=3291814
/// ```
///
/// `frame` is the page offset of the frame that calls the loops, and each loop's figure the
/// median of its [`STACK_SWEEP_RUNS`] timed runs in TSC cycles; and, per size, how many of the
/// [`STACK_SWEEP_OFFSETS`] offsets it reached (`covered=`).
fn stack_sweep(p: &Params, cache: &Cache<Object>, arrays: &mut Arrays) -> Result {
    for n in STACK_SWEEP_BULKS {
        let loops = (p.stack_sweep as usize / n).max(1);
        with_run(p, cache, arrays, 0, n, |run| {
            let mut seen = [false; STACK_SWEEP_OFFSETS];
            let mut first = None;
            let mut level = 0;
            'levels: loop {
                for depth in 0..DATA_PLACEMENTS {
                    let mut at_frame = || sweep_frame(run, n, loops, &mut first, &mut seen);
                    if !at_depth!(depth, descend(level, &mut at_frame))? {
                        break 'levels;
                    }
                }
                level += 1;
            }
            let covered = seen.iter().filter(|&&s| s).count();
            pr_info!(
                "rfl_bench: stack bench=slab_bulk bulk={} covered={}\n",
                n,
                covered
            );
            Ok(())
        })?;
    }
    Ok(())
}

/// The address of a local of the caller's frame (inlined into it).
#[inline(always)]
fn stack_address() -> usize {
    let here = 0u8;
    ptr::from_ref(core::hint::black_box(&here)) as usize
}

/// One offset of [`stack_sweep`]: times the pairs from this frame, unless its offset was seen
/// (`seen`) or it is more than [`STACK_SWEEP_DEPTH`] bytes below the sweep's first frame
/// (`first`, set by the first call). Returns whether the sweep goes deeper.
#[inline(never)]
fn sweep_frame(
    run: &mut Setting<'_, '_>,
    n: usize,
    loops: usize,
    first: &mut Option<usize>,
    seen: &mut [bool; STACK_SWEEP_OFFSETS],
) -> Result<bool> {
    let here = stack_address();
    if first.get_or_insert(here).wrapping_sub(here) > STACK_SWEEP_DEPTH {
        return Ok(false);
    }
    let offset = here % STACK_SWEEP_SPAN / 16;
    if mem::replace(&mut seen[offset], true) {
        return Ok(true);
    }
    for (c, ours) in STACK_SWEEP_PAIRS {
        let mut tsc = [[0u64; STACK_SWEEP_RUNS]; 2];
        for rep in 0..STACK_SWEEP_RUNS {
            // Each repetition starts with the other loop of the pair.
            for j in 0..2 {
                let side = (j + rep) % 2;
                let variant = if side == 0 { c } else { ours };
                let mut failed = 0;
                bench::pause();
                let r = bench::time((loops * n) as u64, || {
                    failed = run_loop(variant, 0, run, loops);
                });
                check_failed(variant, n, failed, loops * n)?;
                tsc[side][rep] = r.tsc;
            }
        }
        let [c_tsc, ours_tsc] = tsc.map(|mut t| {
            t.sort_unstable();
            t[STACK_SWEEP_RUNS / 2]
        });
        pr_info!(
            "rfl_bench: stack bench=slab_bulk bulk={} frame={:#05x} objs={} {}={} {}={}\n",
            n,
            offset * 16,
            loops * n,
            c.name(),
            c_tsc,
            ours.name(),
            ours_tsc
        );
    }
    Ok(true)
}

/// Calls `f` with the `shared` cache, or, if there is none, with a new one from `new_cache`
/// that is destroyed after it.
fn with_cache<R>(
    shared: &Option<OwnedCache<Object>>,
    new_cache: &impl Fn() -> Result<OwnedCache<Object>>,
    f: impl FnOnce(&Cache<Object>) -> Result<R>,
) -> Result<R> {
    match shared {
        Some(cache) => f(cache),
        None => {
            let fresh = new_cache()?;
            f(&fresh)
        }
    }
}

impl kernel::Module for SlabBulkBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let p = Params::read()?;
        let boxes = BoxCache::register()?;
        let mut flags = CacheFlags::HWCACHE_ALIGN;
        if p.nomerge != 0 {
            flags = flags | CacheFlags::NO_MERGE;
        }
        let new_cache = || OwnedCache::<Object>::new(c"rust_slab_bulk_bench", flags);
        // One cache for the whole sweep, unless every run gets a fresh one.
        let shared = if p.fresh != 0 {
            None
        } else {
            Some(new_cache()?)
        };
        let mut arrays = Arrays {
            ptrs: KBox::new([ptr::null_mut(); PTR_ARRAY], GFP_KERNEL)?,
        };
        pr_info!(
            "rfl_bench: start bench=slab_bulk objs={} runs={} nomerge={} atomic={} fresh={}\n",
            p.objs,
            p.runs,
            p.nomerge,
            p.atomic,
            p.fresh
        );
        bench::header("slab_bulk", Variant::NAMES, &p.bulk, p.runs);
        for n in p.bulk.iter() {
            let loops = (p.objs as usize / n).max(1);
            for run in 0..=p.runs {
                // Run 0 warms every copy of the code and every place of the data up (copy `i`
                // on place `i`) and is not reported; run `r` uses the place and the copy that
                // `placement_of` gives.
                let places = if run == 0 { DATA_PLACEMENTS } else { 1 };
                for i in 0..places {
                    let at = if run == 0 {
                        Placement { data: i, code: i }
                    } else {
                        placement_of(run as usize)
                    };
                    if run > 0 {
                        // For the report's placement table (`scripts/collect.py`).
                        pr_info!(
                            "rfl_bench: placement bench=slab_bulk bulk={} run={} data={} code={}\n",
                            n,
                            run,
                            at.data,
                            at.code
                        );
                    }
                    // The order rotates from one repetition to the next, so that a variant's
                    // place in the sequence (after a cache was created, after another
                    // variant's frees) cannot pass for its cost.
                    for j in 0..Variant::ALL.len() {
                        let variant = Variant::ALL[(j + run as usize) % Variant::ALL.len()];
                        let r = with_cache(&shared, &new_cache, |cache| {
                            measure(&p, cache, &mut arrays, variant, at, n, loops)
                        })?;
                        if run > 0 {
                            bench::report("slab_bulk", variant.name(), n, run, &r);
                        }
                    }
                }
            }
        }
        if p.stack_sweep != 0 {
            with_cache(&shared, &new_cache, |cache| {
                stack_sweep(&p, cache, &mut arrays)
            })?;
        }
        bench::done("slab_bulk");
        Ok(SlabBulkBench { _boxes: boxes })
    }
}
