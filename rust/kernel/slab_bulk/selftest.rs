// SPDX-License-Identifier: GPL-2.0

//! Tests of [`super`] that run in both worlds: as the KUnit suite `rust_slab_bulk` in the kernel
//! (registered by `kunit.rs`), and as `cargo test` in the userspace twin, over its userspace slab.
//!
//! Leaks are checked through the cache's own object count ([`in_use`]), which the kernel computes
//! from SLUB's slab counters and the twin from its live-object set; `make test` also asks
//! kmemleak after the suite ran.
//!
//! Allocation failures are injected two ways. `current->fail_nth` fails the Nth fault point the
//! task reaches: in 6.12 a request has one `failslab` point (before it allocates anything) and,
//! for slabs of order >= 1, a `fail_page_alloc` point per slab page attempt; SLUB retries a
//! failed slab at its minimum order, so a single injected page failure is absorbed. A failure in
//! the middle of a bulk request therefore needs `fail_page_alloc` to refuse every page: for the
//! test's own task only, through `task-filter` and `make_it_fail` ([`bulk_fault_positions`]).

use super::{Cache, CacheFlags, FreeBatch, Obj, ObjArray, OwnedCache, StaticCache, NUMA_NO_NODE};
use crate::alloc::flags::GFP_KERNEL;
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
use crate::alloc::flags::GFP_NOWAIT;
use crate::alloc::KVec;
use crate::alloc::{AllocError, Allocator, Box, Flags};
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
use crate::error::code::ENOMEM;
use crate::error::code::{EBUSY, EINVAL};
use core::alloc::Layout;
use core::mem::{self, MaybeUninit};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Asserts in both worlds: KUnit's assertion in the kernel, `assert!` in the twin. (The file
/// name, below `rust/kernel/` as checkpatch wants a file not to name itself in full, is a C
/// string literal from 7.0 on (`kunit_assert_c_file`), a plain one before.)
macro_rules! check {
    ($cond:expr) => {{
        #[cfg(not(kunit_assert_c_file))]
        $crate::kunit_assert!("rust_slab_bulk", "slab_bulk/selftest.rs", 0, $cond);
        #[cfg(kunit_assert_c_file)]
        $crate::kunit_assert!("rust_slab_bulk", c"slab_bulk/selftest.rs", 0, $cond);
    }};
}

/// Expands `$m! { suite; test, ... }` with the KUnit suite's name and every test of this file,
/// so that the KUnit suite and the twin's `#[test]`s are generated from one list.
macro_rules! selftests {
    ($m:ident) => {
        $m! {
            rust_slab_bulk;
            cache_create_errors,
            cache_size_boundaries,
            single_alloc_free,
            bulk_every_size,
            bulk_in_every_size,
            bulk_size_errors,
            every_drop_path,
            foreign_objects,
            large_alignment,
            static_cache_objects,
            static_cache_rules,
            static_cache_allocator,
            static_cache_failed_alloc,
            #[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
            bulk_fault_nth,
            #[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
            bulk_fault_every_point,
            #[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
            bulk_fault_positions,
            zeroed_allocations,
            node_allocations,
        }
    };
}
pub(crate) use selftests;

/// The capacity of the batches under test: bulk sizes 1..=CAP are exercised.
const CAP: usize = 64;

/// The skb-sized object of prototype-kernel's `slab_bulk_test01` (256 bytes).
type Obj256 = [u64; 32];

/// An object that counts its drops.
struct Counted<'a> {
    drops: &'a AtomicUsize,
    value: usize,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

/// Returns how many objects of `cache` are allocated right now.
///
/// The count comes from a test-only C helper (`rust/helpers/slab_bulk.c`, built with this
/// suite), which flushes the per-CPU slabs and releases empty slabs first (`kmem_cache_shrink`)
/// to make SLUB's count exact; the twin keeps its own. The slab allocator may merge a cache with
/// other caches of compatible size and then counts their objects too: the test caches are
/// created with [`CacheFlags::NO_MERGE`] for counts of their own. It needs `CONFIG_SLUB_DEBUG`
/// (the check fails without it), and process context: it may sleep. `qmempool`'s suite uses it
/// too.
pub(crate) fn in_use<T>(cache: &Cache<T>) -> usize {
    #[cfg(CONFIG_SLUB_DEBUG)]
    {
        // SAFETY: `cache` is a live cache.
        unsafe { super::ffi::objects_in_use(cache.as_raw()) }
    }
    #[cfg(not(CONFIG_SLUB_DEBUG))]
    {
        let _ = cache;
        check!(false);
        0
    }
}

/// Cache names: what is accepted, what is `EINVAL`; sizes `EINVAL`.
pub(crate) fn cache_create_errors() {
    check!(OwnedCache::<u64>::new(c"rust_slab_bulk_ok", CacheFlags::NONE).is_ok());
    let flags = CacheFlags::HWCACHE_ALIGN | CacheFlags::NO_MERGE;
    check!(OwnedCache::<Obj256>::new(c"rust_slab_bulk-ok.2", flags).is_ok());
    for bad in [c"", c"has space", c"has/slash", c"tab\there", c"\x7f"] {
        check!(OwnedCache::<u64>::new(bad, CacheFlags::NONE).err() == Some(EINVAL));
    }
    let long = c"an_overly_long_cache_name_that_goes_on_and_on_past_sixty_four_bytes";
    check!(long.to_bytes().len() > super::MAX_NAME_LEN);
    check!(OwnedCache::<u64>::new(long, CacheFlags::NONE).err() == Some(EINVAL));
    check!(OwnedCache::<()>::new(c"rust_slab_bulk_zst", CacheFlags::NONE).err() == Some(EINVAL));
}

/// One object: allocation, contents, alignment, raw round trip, uninitialised objects.
pub(crate) fn single_alloc_free() {
    #[repr(align(64))]
    struct Aligned([u8; 100]);

    let Ok(cache) = OwnedCache::<Aligned>::new(c"rust_slab_bulk_single", CacheFlags::NO_MERGE)
    else {
        check!(false);
        return;
    };
    let Ok(mut obj) = cache.alloc(Aligned([7; 100]), GFP_KERNEL) else {
        check!(false);
        return;
    };
    check!(obj.0.iter().all(|b| *b == 7));
    obj.0[99] = 9;
    check!((core::ptr::from_ref::<Aligned>(&*obj) as usize) % 64 == 0);
    check!(in_use(&cache) == 1);

    let raw = obj.into_raw();
    check!(in_use(&cache) == 1);
    // SAFETY: `raw` came from `into_raw` of an object of `cache` and is owned by nobody.
    let obj = unsafe { Obj::from_raw(&cache, raw) };
    check!(obj.0[99] == 9);
    let empty = obj.drop_contents();
    check!(in_use(&cache) == 1);
    let obj = empty.write(Aligned([1; 100]));
    check!(obj.0[0] == 1);
    drop(obj);
    check!(in_use(&cache) == 0);

    let uninit = cache.alloc_uninit(GFP_KERNEL);
    check!(uninit.is_ok());
    drop(uninit);
    check!(in_use(&cache) == 0);
}

/// Bulk allocation and bulk free at every size from 1 to the capacity.
pub(crate) fn bulk_every_size() {
    let Ok(cache) = OwnedCache::<Obj256>::new(c"rust_slab_bulk_sizes", CacheFlags::NO_MERGE) else {
        check!(false);
        return;
    };
    // Every size; under Miri (the twin's `make miri`), which is slow, every seventh.
    for n in (1..=CAP).step_by(if cfg!(miri) { 7 } else { 1 }) {
        let mut batch = ObjArray::<'_, Obj256, CAP>::new(&cache);
        check!(batch.alloc_with(n, GFP_KERNEL, |i| [i as u64; 32]).is_ok());
        check!(batch.len() == n);
        check!(in_use(&cache) == n);
        // Distinct objects: write each one's index, then read every index back.
        for (i, obj) in batch.iter_mut().enumerate() {
            obj[31] = (n * 1000 + i) as u64;
        }
        check!(batch.iter().enumerate().all(|(i, o)| o[0] == i as u64));
        check!(batch
            .iter()
            .enumerate()
            .all(|(i, o)| o[31] == (n * 1000 + i) as u64));
        batch.free();
        check!(batch.is_empty());
        check!(in_use(&cache) == 0);
    }
    // The const-generic form allocates exactly `N`.
    let Ok(one) = cache.alloc_bulk::<1>(GFP_KERNEL) else {
        check!(false);
        return;
    };
    let Ok(full) = cache.alloc_bulk_with::<CAP>(GFP_KERNEL, |i| [i as u64; 32]) else {
        check!(false);
        return;
    };
    check!(one.len() == 1 && full.is_full());
    check!(in_use(&cache) == CAP + 1);
    drop((one, full));
    check!(in_use(&cache) == 0);
}

/// Bulk allocation into a lent array ([`Cache::alloc_bulk_in`]) at every size from 1 to `CAP`,
/// the objects initialised and read back and freed with the [`super::SlotObjs`]; an empty array
/// is `EINVAL` and allocates nothing.
pub(crate) fn bulk_in_every_size() {
    let Ok(cache) = OwnedCache::<Obj256>::new(c"rust_slab_bulk_in", CacheFlags::NO_MERGE) else {
        check!(false);
        return;
    };
    let mut slots = [MaybeUninit::uninit(); CAP];
    check!(cache.alloc_bulk_in(&mut slots[..0], GFP_KERNEL).err() == Some(EINVAL));
    check!(in_use(&cache) == 0);
    // Every size; under Miri every seventh, as in `bulk_every_size`.
    for n in (1..=CAP).step_by(if cfg!(miri) { 7 } else { 1 }) {
        let Ok(objs) = cache.alloc_bulk_in(&mut slots[..n], GFP_KERNEL) else {
            check!(false);
            return;
        };
        check!(objs.len() == n && in_use(&cache) == n);
        let mut objs = objs.init_with(|i| [i as u64; 32]);
        // Distinct objects: write each one's index, then read every index back.
        for (i, obj) in objs.iter_mut().enumerate() {
            obj[31] = (n * 1000 + i) as u64;
        }
        check!(objs
            .iter()
            .enumerate()
            .all(|(i, o)| o[0] == i as u64 && o[31] == (n * 1000 + i) as u64));
        check!(objs.get(n).is_none() && objs.get(n - 1).map(|o| o[0]) == Some(n as u64 - 1));
        drop(objs);
        check!(in_use(&cache) == 0);
    }
}

/// Sizes outside `1..=room` are `EINVAL` and change nothing.
pub(crate) fn bulk_size_errors() {
    let Ok(cache) = OwnedCache::<u64>::new(c"rust_slab_bulk_einval", CacheFlags::NO_MERGE) else {
        check!(false);
        return;
    };
    let mut batch = ObjArray::<'_, MaybeUninit<u64>, 8>::new(cache.uninit());
    check!(batch.alloc(0, GFP_KERNEL) == Err(EINVAL));
    check!(batch.alloc(9, GFP_KERNEL) == Err(EINVAL));
    check!(batch.alloc(5, GFP_KERNEL).is_ok());
    check!(batch.alloc(4, GFP_KERNEL) == Err(EINVAL));
    check!(batch.len() == 5);
    check!(batch.alloc(3, GFP_KERNEL).is_ok());
    check!(batch.is_full() && in_use(&cache) == 8);
    drop(batch);
    check!(in_use(&cache) == 0);
}

/// Every path that ends an object's life drops its `T` exactly once and frees it.
pub(crate) fn every_drop_path() {
    let drops = AtomicUsize::new(0);
    let Ok(cache) = OwnedCache::<Counted<'_>>::new(c"rust_slab_bulk_drops", CacheFlags::NO_MERGE)
    else {
        check!(false);
        return;
    };
    let new = |value| Counted {
        drops: &drops,
        value,
    };
    let dropped = || drops.load(Ordering::Relaxed);

    // `Obj` dropped; `Obj::drop_contents` then the uninitialised object dropped.
    let Ok(a) = cache.alloc(new(1), GFP_KERNEL) else {
        check!(false);
        return;
    };
    drop(a);
    check!(dropped() == 1 && in_use(&cache) == 0);
    if let Ok(b) = cache.alloc(new(2), GFP_KERNEL) {
        let empty = b.drop_contents();
        check!(dropped() == 2 && in_use(&cache) == 1);
        drop(empty);
    }
    check!(dropped() == 2 && in_use(&cache) == 0);

    // `ObjArray::free`, the batch dropped, `pop` then the object dropped.
    let mut batch = ObjArray::<'_, Counted<'_>, 16>::new(&cache);
    check!(batch.alloc_with(16, GFP_KERNEL, new).is_ok());
    check!(batch.get(15).map(|c| c.value) == Some(15));
    batch.free();
    check!(dropped() == 18 && in_use(&cache) == 0);
    check!(batch.alloc_with(10, GFP_KERNEL, new).is_ok());
    let popped = batch.pop();
    check!(popped.as_ref().map(|c| c.value) == Some(9));
    drop(batch);
    check!(dropped() == 27 && in_use(&cache) == 1);
    drop(popped);
    check!(dropped() == 28 && in_use(&cache) == 0);

    // An uninitialised batch initialised with `init_with`, then dropped.
    if let Ok(raw) = cache.alloc_bulk::<4>(GFP_KERNEL) {
        let batch = raw.init_with(new);
        check!(dropped() == 28 && in_use(&cache) == 4);
        drop(batch);
    }
    check!(dropped() == 32 && in_use(&cache) == 0);

    // `FreeBatch`: freed when full, when flushed, when dropped.
    let mut done = FreeBatch::<'_, Counted<'_>, 8>::new(&cache);
    for i in 0..20 {
        if let Ok(obj) = cache.alloc(new(i), GFP_KERNEL) {
            done.add(obj);
        }
    }
    check!(done.len() == 4 && dropped() == 48 && in_use(&cache) == 4);
    done.flush();
    check!(done.is_empty() && dropped() == 52 && in_use(&cache) == 0);
    if let Ok(obj) = cache.alloc(new(0), GFP_KERNEL) {
        done.add(obj);
    }
    drop(done);
    check!(dropped() == 53 && in_use(&cache) == 0);

    // A `SlotObjs`, initialised, then dropped.
    let mut slots = [MaybeUninit::uninit(); 8];
    if let Ok(objs) = cache.alloc_bulk_in(&mut slots, GFP_KERNEL) {
        let objs = objs.init_with(new);
        check!(dropped() == 53 && in_use(&cache) == 8);
        drop(objs);
    }
    check!(dropped() == 61 && in_use(&cache) == 0);
}

/// Objects go back to their own cache only; `push` hands back what does not fit.
pub(crate) fn foreign_objects() {
    let (Ok(a), Ok(b)) = (
        OwnedCache::<u64>::new(c"rust_slab_bulk_a", CacheFlags::NO_MERGE),
        OwnedCache::<u64>::new(c"rust_slab_bulk_b", CacheFlags::NO_MERGE),
    ) else {
        check!(false);
        return;
    };
    let mut batch = ObjArray::<'_, u64, 2>::new(&a);
    let (Ok(from_a), Ok(from_b)) = (a.alloc(1, GFP_KERNEL), b.alloc(2, GFP_KERNEL)) else {
        check!(false);
        return;
    };
    let back = batch.push(from_b);
    check!(back.as_ref().err().map(|o| **o) == Some(2));
    check!(batch.push(from_a).is_ok());
    if let Ok(obj) = a.alloc(3, GFP_KERNEL) {
        check!(batch.push(obj).is_ok());
    }
    if let Ok(obj) = a.alloc(4, GFP_KERNEL) {
        // Full: handed back.
        check!(batch.push(obj).is_err());
    }
    check!(batch.is_full() && in_use(&a) == 2 && in_use(&b) == 1);
    drop(back);
    check!(in_use(&b) == 0);

    // A free batch frees another cache's object at once, to that cache.
    let mut done = FreeBatch::<'_, u64, 4>::new(&b);
    if let Some(obj) = batch.pop() {
        done.add(obj);
    }
    check!(done.is_empty() && in_use(&a) == 1);
    drop(batch);
    check!(in_use(&a) == 0);
}

/// Objects are aligned to their type's alignment, also beyond a page: SLUB's slabs are
/// naturally aligned (and the twin's must be, to hide no alignment bug and make none up).
pub(crate) fn large_alignment() {
    /// Two pages, aligned to two pages; only its layout matters here.
    #[expect(dead_code)]
    #[repr(align(8192))]
    struct TwoPages([u8; 8192]);

    let Ok(cache) = OwnedCache::<TwoPages>::new(c"rust_slab_bulk_align", CacheFlags::NO_MERGE)
    else {
        check!(false);
        return;
    };
    let aligned = |obj: &MaybeUninit<TwoPages>| obj.as_ptr() as usize % 8192 == 0;
    let Ok(batch) = cache.alloc_bulk::<32>(GFP_KERNEL) else {
        check!(false);
        return;
    };
    check!(batch.iter().all(aligned));
    let Ok(single) = cache.alloc_uninit(GFP_KERNEL) else {
        check!(false);
        return;
    };
    check!(aligned(&single));
    check!(in_use(&cache) == 33);
    drop((batch, single));
    check!(in_use(&cache) == 0);
}

/// An object that shows whether it was zeroed: dirtied with [`DIRTY`] before it is freed.
type Bytes = [u8; 200];

/// What the zeroing tests write into every object before they free it.
const DIRTY: Bytes = [0xa5; 200];

/// Whether `obj`, allocated with `__GFP_ZERO`, is all zeroes.
fn zeroed(obj: &MaybeUninit<Bytes>) -> bool {
    // SAFETY: Any byte is a valid `u8`, and every byte of the object was written: by the
    // allocator, which the flags asked to zero it, or before it was freed (`DIRTY`).
    unsafe { obj.assume_init_ref() }.iter().all(|&b| b == 0)
}

/// `__GFP_ZERO` on every allocation path of a cache: single, on a node, bulk into a batch
/// (whole and appended) and into the caller's array. Each round first dirties and frees objects
/// of the cache, so that the zeroed allocation reuses them.
pub(crate) fn zeroed_allocations() {
    /// The objects dirtied and freed before each zeroed allocation, and allocated zeroed.
    const N: usize = 16;
    let Ok(cache) = OwnedCache::<Bytes>::new(c"rust_slab_bulk_zero", CacheFlags::NO_MERGE) else {
        check!(false);
        return;
    };
    let dirty = |cache: &OwnedCache<Bytes>| match cache.alloc_bulk_with::<N>(GFP_KERNEL, |_| DIRTY)
    {
        Ok(batch) => check!(batch.iter().all(|obj| *obj == DIRTY)),
        Err(_) => check!(false),
    };
    let zero = GFP_KERNEL | crate::alloc::flags::__GFP_ZERO;

    // Single, and single on a node.
    dirty(&cache);
    let mut singles = KVec::new();
    for i in 0..N {
        let obj = if i % 2 == 0 {
            cache.alloc_uninit(zero)
        } else {
            cache.alloc_uninit_node(zero, 0)
        };
        match obj {
            Ok(obj) => {
                check!(zeroed(&obj));
                check!(singles.push(obj, GFP_KERNEL).is_ok());
            }
            Err(_) => check!(false),
        }
    }
    drop(singles);

    // Bulk into a batch, whole.
    dirty(&cache);
    match cache.alloc_bulk::<N>(zero) {
        Ok(batch) => check!(batch.iter().all(zeroed)),
        Err(_) => check!(false),
    }

    // Bulk appended to a batch that holds dirty objects.
    dirty(&cache);
    let mut batch = ObjArray::<'_, MaybeUninit<Bytes>, { 2 * N }>::new(cache.uninit());
    check!(batch.alloc(N, GFP_KERNEL).is_ok());
    for obj in batch.iter_mut() {
        obj.write(DIRTY);
    }
    batch.free();
    check!(batch.alloc(N / 2, GFP_KERNEL).is_ok());
    check!(batch.alloc(N, zero).is_ok());
    check!(batch.iter().skip(N / 2).all(zeroed));
    drop(batch);

    // Bulk into the caller's array.
    dirty(&cache);
    let mut slots = [MaybeUninit::uninit(); N];
    match cache.alloc_bulk_in(&mut slots, zero) {
        Ok(objs) => check!(objs.len() == N && objs.iter().all(zeroed)),
        Err(_) => check!(false),
    }
    check!(in_use(&cache) == 0);
}

/// `kmem_cache_alloc_node` through [`Cache::alloc_node`]: no preference and node 0 (there is
/// always one) give an object; an id C does not take is refused with `EINVAL`, nothing
/// allocated.
pub(crate) fn node_allocations() {
    let Ok(cache) = OwnedCache::<u64>::new(c"rust_slab_bulk_node", CacheFlags::NO_MERGE) else {
        check!(false);
        return;
    };
    for (i, node) in [NUMA_NO_NODE, 0].into_iter().enumerate() {
        match cache.alloc_node(i as u64 + 1, GFP_KERNEL, node) {
            Ok(obj) => check!(*obj == i as u64 + 1 && in_use(&cache) == 1),
            Err(_) => check!(false),
        }
        check!(cache.alloc_uninit_node(GFP_KERNEL, node).is_ok());
    }
    let max = super::ffi::MAX_NUMNODES;
    for node in [max, max + 1, -2, i32::MIN, i32::MAX] {
        check!(cache.alloc_node(7, GFP_KERNEL, node).err() == Some(EINVAL));
        check!(cache.alloc_uninit_node(GFP_KERNEL, node).err() == Some(EINVAL));
    }
    check!(in_use(&cache) == 0);
}

/// Ends the running test as skipped, with `reason` (at most 255 bytes shown): what KUnit's
/// `kunit_mark_skipped()` does, which Rust has no wrapper for on 6.12 or 7.x. The test returns
/// right after. The twin never skips: it prints the reason.
fn skip(reason: &str) {
    #[cfg(CONFIG_KUNIT)]
    {
        // SAFETY: `kunit_get_current_test()` may be called from any context.
        let test = unsafe { crate::bindings::kunit_get_current_test() };
        if !test.is_null() {
            let n = reason.len().min(255);
            // SAFETY: `test` is the running test of this task, alive while its case runs; the
            // case's own task sets its status and comment, as `kunit_mark_skipped()` does (a
            // `WRITE_ONCE` of the status, then the NUL-terminated comment, which fits in
            // `KUNIT_STATUS_COMMENT_SIZE`, 256 bytes).
            unsafe {
                core::ptr::addr_of_mut!((*test).status)
                    .write_volatile(crate::bindings::kunit_status_KUNIT_SKIPPED);
                let comment = core::ptr::addr_of_mut!((*test).status_comment).cast::<u8>();
                core::ptr::copy_nonoverlapping(reason.as_ptr(), comment, n);
                comment.add(n).write(0);
            }
        }
    }
    #[cfg(not(CONFIG_KUNIT))]
    std::eprintln!("skipped: {reason}");
}

/// A request of the module-lifetime cache tests.
struct Request {
    id: usize,
    len: usize,
}

/// A driver's life with a [`StaticCache`]: requests allocated in bulk and kept in the driver's
/// own vector across calls, completed a few at a time and freed in bulk, the rest freed one by
/// one at the end; the cache's count follows each step and is back to zero before the
/// registration goes, after which the cell can never be registered again.
///
/// A cell is registered once per boot, so when KUnit runs the suite again (from debugfs, in
/// `make test`'s fault-injection boot) this case skips.
pub(crate) fn static_cache_objects() {
    crate::static_cache! {
        /// The requests of this test.
        struct Requests(Request) = c"rust_slab_bulk_static", CacheFlags::NO_MERGE;
    }

    if Requests::cell().is_retired() {
        skip("registered once per boot: the suite ran before");
        return;
    }
    let Ok(reg) = Requests::register() else {
        check!(false);
        return;
    };
    check!(in_use(&reg) == 0);
    // The driver's state, kept between calls: owned objects, no borrow of `reg`.
    let mut inflight = KVec::<Box<Request, Requests>>::new();
    let (mut submitted, mut completed) = (0, 0);
    for _call in 0..3 {
        // Submit: 16 requests in one bulk allocation and one on its own, all kept.
        let first = submitted;
        let Ok(mut batch) = reg.alloc_bulk_with::<16>(GFP_KERNEL, |i| Request {
            id: first + i,
            len: 0,
        }) else {
            check!(false);
            return;
        };
        while let Some(obj) = batch.pop() {
            match reg.keep(obj) {
                Ok(kept) => check!(inflight.push(kept, GFP_KERNEL).is_ok()),
                Err(_) => check!(false),
            }
        }
        drop(batch);
        match Box::<_, Requests>::new(
            Request {
                id: first + 16,
                len: 0,
            },
            GFP_KERNEL,
        ) {
            Ok(kept) => check!(inflight.push(kept, GFP_KERNEL).is_ok()),
            Err(_) => check!(false),
        }
        submitted += 17;
        for req in inflight.iter_mut() {
            req.len += 1;
        }
        check!(inflight.len() == submitted - completed);
        check!(in_use(&reg) == submitted - completed);

        // Complete every other request: back to borrowed objects, freed 8 at a time.
        let mut done = FreeBatch::<'_, Request, 8>::new(&reg);
        let Ok(mut still) = KVec::with_capacity(inflight.len(), GFP_KERNEL) else {
            check!(false);
            return;
        };
        for (i, req) in mem::take(&mut inflight).into_iter().enumerate() {
            if i % 2 == 0 {
                done.add(reg.to_obj(req));
                completed += 1;
            } else {
                check!(still.push(req, GFP_KERNEL).is_ok());
            }
        }
        done.flush();
        inflight = still;
        check!(in_use(&reg) == submitted - completed);
    }
    // Every request is one of those submitted, each once.
    let ids = inflight
        .iter()
        .map(|r| r.id)
        .fold(0u64, |m, id| m | (1 << id));
    check!(ids.count_ones() as usize == inflight.len() && submitted <= 64);
    check!(inflight.iter().all(|r| r.len >= 1));
    // The driver goes: the rest freed one by one, then the cache.
    drop(inflight);
    check!(in_use(&reg) == 0);
    drop(reg);
    check!(Requests::cell().is_retired());
    check!(Requests::register().err() == Some(EBUSY));
}

/// What a registration refuses: a second registration of the same type while it lives
/// (`EBUSY`), an object of another cache ([`CacheRegistration::keep`] hands it back); a
/// registration that failed (a bad name, `EINVAL`) leaves the cell free.
///
/// [`CacheRegistration::keep`]: super::CacheRegistration::keep
pub(crate) fn static_cache_rules() {
    crate::static_cache! {
        struct Values(u64) = c"rust_slab_bulk_static_rules", CacheFlags::NO_MERGE;
    }
    crate::static_cache! {
        struct BadName(u64) = c"has space", CacheFlags::NONE;
    }

    // Failed twice the same way: the first failure did not claim the cell.
    check!(BadName::register().err() == Some(EINVAL));
    check!(BadName::register().err() == Some(EINVAL));
    check!(!BadName::cell().is_retired());

    if Values::cell().is_retired() {
        skip("registered once per boot: the suite ran before");
        return;
    }
    let (Ok(reg), Ok(other)) = (
        Values::register(),
        OwnedCache::<u64>::new(c"rust_slab_bulk_static_other", CacheFlags::NO_MERGE),
    ) else {
        check!(false);
        return;
    };
    check!(Values::register().err() == Some(EBUSY));
    let Ok(foreign) = other.alloc(7, GFP_KERNEL) else {
        check!(false);
        return;
    };
    let back = reg.keep(foreign);
    check!(back.as_ref().err().map(|o| **o) == Some(7));
    check!(in_use(&other) == 1 && in_use(&reg) == 0);
    drop(back);
    check!(in_use(&other) == 0);

    // A kept object goes back into a batch of its registration, and the batch frees it.
    let Ok(kept) = Box::<_, Values>::new(9, GFP_KERNEL) else {
        check!(false);
        return;
    };
    check!(*kept == 9 && in_use(&reg) == 1);
    let mut batch = ObjArray::<'_, u64, 4>::new(&reg);
    check!(batch.push(reg.to_obj(kept)).is_ok());
    check!(batch.get(0) == Some(&9));
    batch.free();
    check!(in_use(&reg) == 0);
}

/// Sizes and alignments at the edges of what C takes: `EINVAL` for a size of 0 or above
/// `KMALLOC_MAX_SIZE` (and so for an alignment above it: a type's size is a multiple of its
/// alignment); at `KMALLOC_MAX_SIZE` itself the request goes to C, which decides (a cache, or
/// `ENOMEM` when its debug metadata push a slab past the largest order), never `EINVAL`.
pub(crate) fn cache_size_boundaries() {
    const MAX: usize = super::ffi::MAX_OBJECT_SIZE;
    /// One byte less than the largest, and the largest, object C takes.
    type JustUnder = [u8; MAX - 1];
    type Largest = [u8; MAX];
    /// One byte more.
    type TooLarge = [u8; MAX + 1];
    /// Aligned to 4 MiB: its size is its alignment.
    #[expect(dead_code)]
    #[repr(align(4194304))]
    struct AlignedMax(u8);
    /// Aligned to 8 MiB: its size, 8 MiB, is too large.
    #[expect(dead_code)]
    #[repr(align(8388608))]
    struct AlignedTwiceMax(u8);

    check!(OwnedCache::<u8>::new(c"rust_slab_bulk_size1", CacheFlags::NO_MERGE).is_ok());
    check!(OwnedCache::<()>::new(c"rust_slab_bulk_size0", CacheFlags::NONE).err() == Some(EINVAL));
    let near = |r: Result<(), crate::error::Error>| r != Err(EINVAL);
    check!(near(
        OwnedCache::<JustUnder>::new(c"rust_slab_bulk_under_max", CacheFlags::NO_MERGE).map(drop)
    ));
    check!(near(
        OwnedCache::<Largest>::new(c"rust_slab_bulk_max", CacheFlags::NO_MERGE).map(drop)
    ));
    check!(
        OwnedCache::<TooLarge>::new(c"rust_slab_bulk_over_max", CacheFlags::NONE).err()
            == Some(EINVAL)
    );
    if MAX != 1 << 22 {
        // The aligned types above are written for the 4 MiB of 4 KiB pages and order 10.
        return;
    }
    check!(mem::size_of::<AlignedMax>() == MAX && mem::size_of::<AlignedTwiceMax>() == 2 * MAX);
    check!(near(
        OwnedCache::<AlignedMax>::new(c"rust_slab_bulk_align_max", CacheFlags::NO_MERGE).map(drop)
    ));
    check!(
        OwnedCache::<AlignedTwiceMax>::new(c"rust_slab_bulk_align_over", CacheFlags::NONE).err()
            == Some(EINVAL)
    );
}

/// `C::realloc` with no NUMA node asked for (the trait takes one from 6.18 on).
///
/// # Safety
///
/// As `Allocator::realloc`'s.
unsafe fn realloc_in<C: Allocator>(
    ptr: Option<NonNull<u8>>,
    layout: Layout,
    old_layout: Layout,
    flags: Flags,
) -> Result<NonNull<[u8]>, AllocError> {
    // SAFETY: Forwarded from the caller.
    #[cfg(alloc_numa_node)]
    let ret = unsafe {
        C::realloc(
            ptr,
            layout,
            old_layout,
            flags,
            crate::alloc::NumaNode::NO_NODE,
        )
    };
    // SAFETY: Forwarded from the caller.
    #[cfg(not(alloc_numa_node))]
    let ret = unsafe { C::realloc(ptr, layout, old_layout, flags) };
    ret
}

/// A static cache is an [`Allocator`]: `Box<T, C>` comes from the cache and goes back to it;
/// what it serves and refuses, at each boundary of size and alignment; `realloc` in place within
/// the object, refused beyond it with the object left as it was, a size of 0 freeing;
/// `__GFP_ZERO`; nothing before the registration or after it.
pub(crate) fn static_cache_allocator() {
    /// 48 bytes, aligned to 16.
    #[repr(C, align(16))]
    struct Item([u64; 6]);
    crate::static_cache! {
        struct Items(Item) = c"rust_slab_bulk_alloc", CacheFlags::NO_MERGE;
    }
    const SIZE: usize = mem::size_of::<Item>();
    const ALIGN: usize = mem::align_of::<Item>();

    if Items::cell().is_retired() {
        skip("registered once per boot: the suite ran before");
        return;
    }
    // Before the registration: nothing to allocate from.
    check!(Box::<Item, Items>::new(Item([1; 6]), GFP_KERNEL).is_err());
    let Ok(reg) = Items::register() else {
        check!(false);
        return;
    };

    // `Box` of the item, and of smaller types: one object each, freed on drop.
    let Ok(a) = Box::<Item, Items>::new(Item([7; 6]), GFP_KERNEL) else {
        check!(false);
        return;
    };
    let Ok(b) = Box::<u8, Items>::new(3, GFP_KERNEL) else {
        check!(false);
        return;
    };
    check!(a.0 == [7; 6] && *b == 3 && in_use(&reg) == 2);
    check!(core::ptr::from_ref::<Item>(&a) as usize % ALIGN == 0);
    // Zero-sized: no object.
    let Ok(z) = Box::<(), Items>::new((), GFP_KERNEL) else {
        check!(false);
        return;
    };
    check!(in_use(&reg) == 2);
    drop((a, b, z));
    check!(in_use(&reg) == 0);

    // Each boundary: the object's size and alignment are served, one more byte or a larger
    // alignment are not, and nothing is allocated for them.
    let fits = |size, align| {
        let Ok(layout) = Layout::from_size_align(size, align) else {
            return false;
        };
        // SAFETY: `None` asks for a new allocation.
        match unsafe { realloc_in::<Items>(None, layout, Layout::new::<()>(), GFP_KERNEL) } {
            Ok(p) => {
                let obj = p.cast::<u8>();
                let ok = p.len() == size && obj.as_ptr() as usize % align == 0;
                // SAFETY: `obj` was allocated just above with `layout`.
                unsafe { <Items as Allocator>::free(obj, layout) };
                ok
            }
            Err(_) => false,
        }
    };
    check!(fits(SIZE, ALIGN) && fits(1, 1) && fits(SIZE - 1, 8));
    check!(!fits(SIZE + 1, 1) && !fits(SIZE, 2 * ALIGN) && !fits(8, 4096));
    check!(Box::<[u8; SIZE], Items>::new([0; SIZE], GFP_KERNEL).is_ok());
    check!(Box::<[u8; SIZE + 1], Items>::new([0; SIZE + 1], GFP_KERNEL).is_err());
    check!(in_use(&reg) == 0);

    // `realloc` within the object: in place, contents kept; beyond it: refused, object kept.
    let l8 = Layout::new::<[u8; 8]>();
    let l40 = Layout::new::<[u8; 40]>();
    let l49 = Layout::new::<[u8; 49]>();
    // The KUnit assertion has `unsafe` blocks of its own: each `unsafe` below stays outside it.
    // SAFETY: A new allocation of 8 bytes.
    let Ok(p) = (unsafe { realloc_in::<Items>(None, l8, Layout::new::<()>(), GFP_KERNEL) }) else {
        check!(false);
        return;
    };
    let obj = p.cast::<u8>();
    // SAFETY: `obj` is the 8 bytes just allocated.
    unsafe { obj.as_ptr().write_bytes(0xa5, 8) };
    // Grown with `__GFP_ZERO`: same object, the new bytes zeroed.
    // SAFETY: `obj` was allocated with `l8`.
    let grown = unsafe {
        realloc_in::<Items>(
            Some(obj),
            l40,
            l8,
            GFP_KERNEL | crate::alloc::flags::__GFP_ZERO,
        )
    };
    let grown = grown.is_ok_and(|g| g.cast::<u8>() == obj && g.len() == 40);
    check!(grown);
    if !grown {
        return;
    }
    // SAFETY: `obj` has 40 bytes now, all initialised.
    let bytes = unsafe { core::slice::from_raw_parts(obj.as_ptr(), 40) };
    check!(bytes[..8].iter().all(|&x| x == 0xa5) && bytes[8..].iter().all(|&x| x == 0));
    // Too large: refused, the object unchanged and still allocated.
    // SAFETY: `obj` has the layout `l40`.
    let refused = unsafe { realloc_in::<Items>(Some(obj), l49, l40, GFP_KERNEL) };
    check!(refused.is_err());
    // SAFETY: `obj` is still allocated (the reallocation was refused).
    let first = unsafe { *obj.as_ptr() };
    check!(first == 0xa5 && in_use(&reg) == 1);
    // Shrunk: in place.
    // SAFETY: `obj` has the layout `l40`.
    let shrunk = unsafe { realloc_in::<Items>(Some(obj), l8, l40, GFP_KERNEL) };
    let in_place = shrunk.is_ok_and(|s| s.cast::<u8>() == obj);
    check!(in_place);
    if !in_place {
        return;
    }
    // SAFETY: `obj` has 8 bytes, as written above.
    let last = unsafe { *obj.as_ptr().add(7) };
    check!(last == 0xa5);
    // A size of 0 frees.
    // SAFETY: `obj` has the layout `l8`.
    let freed = unsafe { realloc_in::<Items>(Some(obj), Layout::new::<()>(), l8, GFP_KERNEL) };
    check!(freed.is_ok());
    check!(in_use(&reg) == 0);
    // `__GFP_ZERO` on a new allocation.
    let Ok(dirty) = Box::<Item, Items>::new(Item([u64::MAX; 6]), GFP_KERNEL) else {
        check!(false);
        return;
    };
    drop(dirty);
    match Box::<[u64; 6], Items>::new_uninit(GFP_KERNEL | crate::alloc::flags::__GFP_ZERO) {
        // SAFETY: `__GFP_ZERO` zeroed the object, and zero is a valid `[u64; 6]`.
        Ok(zeroed) => check!(*unsafe { zeroed.assume_init() } == [0; 6]),
        Err(_) => check!(false),
    }

    // The node argument (`alloc_numa_node`): node 0 (there is always one) through
    // `kmem_cache_alloc_node`.
    #[cfg(alloc_numa_node)]
    {
        let layout = Layout::new::<Item>();
        match crate::alloc::NumaNode::new(0)
            .ok()
            .and_then(|node| <Items as Allocator>::alloc(layout, GFP_KERNEL, node).ok())
        {
            Some(p) => {
                check!(in_use(&reg) == 1);
                // SAFETY: `p` was allocated just above with `layout`.
                unsafe { <Items as Allocator>::free(p.cast(), layout) };
            }
            None => check!(false),
        }
    }

    // After the registration: refused again.
    check!(in_use(&reg) == 0);
    drop(reg);
    check!(Box::<Item, Items>::new(Item([1; 6]), GFP_KERNEL).is_err());
}

/// A failed allocation through a static cache keeps nothing: refused before the registration,
/// failed in the slab while it lives (`failslab`, through `fail_nth`), or refused after its drop,
/// it leaves the cell's count as it was, so the registration dropped after it finds no object
/// and destroys the cache (had the count kept it, the drop would warn that it leaked the cache,
/// which `make test` fails on). An allocation that succeeds is counted until its free.
///
/// A cell is registered once per boot, so when KUnit runs the suite again this case skips.
pub(crate) fn static_cache_failed_alloc() {
    crate::static_cache! {
        struct Refused(u64) = c"rust_slab_bulk_static_refused", CacheFlags::NO_MERGE;
    }

    if Refused::cell().is_retired() {
        skip("registered once per boot: the suite ran before");
        return;
    }
    // Before the registration: refused, nothing counted.
    check!(Box::<u64, Refused>::new(1, GFP_KERNEL).is_err());
    check!(Refused::cell().live_objects() == 0);
    let Ok(reg) = Refused::register() else {
        check!(false);
        return;
    };
    // Failed in the slab: nothing counted. `GFP_NOWAIT`: `failslab` ignores requests that may
    // reclaim.
    #[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
    {
        set_fail_nth(1);
        let failed = Box::<u64, Refused>::new(2, GFP_NOWAIT).is_err();
        let fired = fail_nth() == 0;
        set_fail_nth(0);
        check!(failed && fired);
        check!(Refused::cell().live_objects() == 0 && in_use(&reg) == 0);
    }
    // One that succeeds is counted until it is freed.
    let Ok(kept) = Box::<u64, Refused>::new(3, GFP_KERNEL) else {
        check!(false);
        return;
    };
    check!(*kept == 3 && Refused::cell().live_objects() == 1 && in_use(&reg) == 1);
    drop(kept);
    check!(Refused::cell().live_objects() == 0 && in_use(&reg) == 0);
    // No object: the drop destroys the cache (it would warn otherwise).
    drop(reg);
    check!(Refused::cell().is_retired());
    // After it: refused, nothing counted.
    check!(Box::<u64, Refused>::new(4, GFP_KERNEL).is_err());
    check!(Refused::cell().live_objects() == 0);
}

/// Reads `current->fail_nth`.
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
fn fail_nth() -> u32 {
    // SAFETY: `get_current()` is the running task, alive while it runs this.
    unsafe { (*crate::bindings::get_current()).fail_nth }
}

/// Arms `current->fail_nth`: the `nth` fault point this task reaches will fail.
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
fn set_fail_nth(nth: u32) {
    // SAFETY: As in `fail_nth`; only the task itself writes its own `fail_nth` here (procfs
    // writers are not involved in a test).
    unsafe { (*crate::bindings::get_current()).fail_nth = nth };
}

/// Sets `current->make_it_fail` while alive: fault attributes with `task-filter` set then apply
/// to this task (and only to tasks marked so).
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
struct MakeItFail;

#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
impl MakeItFail {
    fn new() -> Self {
        // SAFETY: As in `fail_nth`: the running task writes its own field (procfs writers of
        // `/proc/<pid>/make-it-fail` are not involved in a test).
        unsafe { (*crate::bindings::get_current()).make_it_fail = 1 };
        Self
    }
}

#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
impl Drop for MakeItFail {
    fn drop(&mut self) {
        // SAFETY: As in `new`.
        unsafe { (*crate::bindings::get_current()).make_it_fail = 0 };
    }
}

/// The objects per slab of `cache` (SLUB's `oo_objects(s->oo)`).
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
fn objects_per_slab<T>(cache: &Cache<T>) -> usize {
    // SAFETY: `cache` is a live cache.
    unsafe { super::ffi::objects_per_slab(cache.as_raw()) }
}

/// A 40 KiB object: SLUB gives every object a slab of its own, of order 4.
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
type Big = [u64; 5120];

/// A 5000-byte object: slabs of order 3 with a few objects each, and a minimum order of 1, so
/// that `fail_page_alloc` can fail both SLUB's attempt and its fallback.
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
type Mid = [u8; 5000];

/// Allocates `n` uninitialised objects of `cache` into a new batch.
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
fn bulk<T, const N: usize>(
    cache: &Cache<T>,
    n: usize,
    flags: crate::alloc::Flags,
) -> (ObjArray<'_, MaybeUninit<T>, N>, crate::error::Result) {
    let mut batch = ObjArray::new(cache.uninit());
    let result = batch.alloc(n, flags);
    // A failure leaves the batch as it was: empty.
    check!(result.is_ok() || batch.is_empty());
    (batch, result)
}

/// `fail_page_alloc` fails every page allocation it may for tasks marked with `make_it_fail` if
/// this task, marked, cannot have a `GFP_NOWAIT` object of a fresh `Big` cache.
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
fn page_faults_armed() -> bool {
    let _marked = MakeItFail::new();
    match OwnedCache::<Big>::new(c"rust_slab_bulk_probe", CacheFlags::NO_MERGE) {
        Ok(cache) => cache.alloc_uninit(GFP_NOWAIT).is_err(),
        Err(_) => false,
    }
}

/// Every fault point of a sequence of single and bulk requests, one at a time: each fails at
/// most one request, with `ENOMEM`, all or nothing, and the others are unaffected; every request
/// of the sequence is failed by one of them; nothing leaks.
///
/// The objects are small, so their slabs are of order 0, which `fail_page_alloc` leaves alone:
/// a request's own fault point is `failslab`'s, before it allocates anything. Debug options add
/// points that do not fail a request (kmemleak's metadata falls back to its pool, KASAN's stack
/// depot does without).
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
pub(crate) fn bulk_fault_nth() {
    // Bulk sizes; 0 is a single-object request.
    const REQUESTS: [usize; 9] = [1, 2, 0, 3, 8, 16, 0, 64, 33];
    let mut failed_once = [false; REQUESTS.len()];
    // Consecutive `nth` past the sequence's fault points. With sheaves on every cache (7.0 on)
    // their number varies from one
    // pass to the next (a per-CPU sheaf refilled or not adds points that fail no request), so
    // one pass that did not reach `nth` does not prove that none will: stop after many. For the
    // same reason one sweep may step over a request's own point every time: sweep again (at
    // most `SWEEPS` times) until every request has failed once. On 7.3 four sweeps can leave
    // one unfailed; the loop ends at the first sweep that leaves none, so a high bound costs
    // nothing then.
    const SWEEPS: usize = 16;
    for _ in 0..SWEEPS {
        let mut past_end = 0;
        for nth in 1..=2_500 {
            let Ok(cache) = OwnedCache::<u64>::new(c"rust_slab_bulk_nth", CacheFlags::NO_MERGE)
            else {
                check!(false);
                return;
            };
            let mut batches = ObjArray::<'_, MaybeUninit<u64>, 128>::new(cache.uninit());
            let mut singles = ObjArray::<'_, MaybeUninit<u64>, 8>::new(cache.uninit());
            let (mut expected, mut failures) = (0, 0);
            // `GFP_NOWAIT`: `failslab` ignores requests that may reclaim.
            set_fail_nth(nth);
            for (i, &n) in REQUESTS.iter().enumerate() {
                let failed = if n == 0 {
                    match cache.alloc_uninit(GFP_NOWAIT) {
                        Ok(obj) => singles.push(obj).is_err(),
                        Err(e) => e == ENOMEM,
                    }
                } else {
                    let before = batches.len();
                    let result = batches.alloc(n, GFP_NOWAIT);
                    check!(result.is_ok() == (batches.len() == before + n));
                    result == Err(ENOMEM)
                };
                if failed {
                    failures += 1;
                    failed_once[i] = true;
                } else {
                    expected += n.max(1);
                }
            }
            // Still armed: the sequence reached fewer than `nth` fault points; all were tried.
            let fired = fail_nth() == 0;
            set_fail_nth(0);
            check!(failures <= 1 && (failures == 0 || fired));
            check!(in_use(&cache) == expected);
            drop((batches, singles));
            check!(in_use(&cache) == 0);
            past_end = if fired { 0 } else { past_end + 1 };
            if past_end == 64 {
                break;
            }
        }
        if failed_once.iter().all(|f| *f) {
            break;
        }
    }
    for (i, failed) in failed_once.iter().enumerate() {
        if !failed {
            crate::pr_warn!(
                "rfl_test: bulk_fault_nth: request {} (of {} objects, 0 for one) never failed\n",
                i,
                REQUESTS[i]
            );
        }
    }
    check!(failed_once.iter().all(|f| *f));
}

/// Every fault point of a bulk request of large objects, one at a time: `failslab`'s fails the
/// request; a slab page's is absorbed by SLUB's retry at the minimum order (one injected
/// failure cannot fail a request there). Nothing leaks either way.
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
pub(crate) fn bulk_fault_every_point() {
    for n in [1, 2, 3, 8, 16] {
        // Through a batch, then through an array of the caller's (`Cache::alloc_bulk_in`).
        for lent in [false, true] {
            let mut failures = 0;
            for nth in 1.. {
                let Ok(cache) =
                    OwnedCache::<Big>::new(c"rust_slab_bulk_point", CacheFlags::NO_MERGE)
                else {
                    check!(false);
                    return;
                };
                let mut slots = [MaybeUninit::uninit(); 16];
                set_fail_nth(nth);
                let (batch, objs, result) = if lent {
                    match cache.alloc_bulk_in(&mut slots[..n], GFP_NOWAIT) {
                        Ok(objs) => (None, Some(objs), Ok(())),
                        Err(e) => (None, None, Err(e)),
                    }
                } else {
                    let (batch, result) = bulk::<_, 16>(&cache, n, GFP_NOWAIT);
                    (Some(batch), None, result)
                };
                // Still armed: the request reached fewer than `nth` fault points; all were
                // tried.
                let fired = fail_nth() == 0;
                set_fail_nth(0);
                let held =
                    batch.as_ref().map_or(0, |b| b.len()) + objs.as_ref().map_or(0, |o| o.len());
                match result {
                    Ok(()) => check!(held == n && in_use(&cache) == n),
                    Err(e) => {
                        check!(e == ENOMEM && fired && held == 0 && in_use(&cache) == 0);
                        failures += 1;
                    }
                }
                drop((batch, objs));
                check!(in_use(&cache) == 0);
                if !fired {
                    // `failslab`'s point and at least one page per object were reached.
                    check!(nth as usize > n + 1);
                    break;
                }
            }
            check!(failures == 1);
        }
    }
}

/// A bulk request that needs a new slab at every position `k` of the request: the per-CPU
/// freelist is left with exactly `k` objects, and `k + 1` are asked for.
///
/// When `fail_page_alloc` fails every page allocation it may for this task (debugfs:
/// `task-filter` Y, `probability` 100, `interval` 1, `times` -1, which `make test` sets up in a
/// dedicated boot before running the suite again), the request fails at position `k`: it is
/// `ENOMEM`, the `k` objects it had are freed, and nothing leaks. Otherwise the request gets its
/// new slab and all `k + 1` objects, and nothing leaks either. The kernel log says which of the
/// two ran (`rfl_test: slab_bulk positions armed=...`).
///
/// With sheaves on every cache (7.0 on, `slab_sheaves_everywhere`) the cache's per-CPU sheaf,
/// refilled in bulk, may already hold the objects a request asks for, so the failing position
/// cannot be forced there: the case checks all or nothing and no leak at each position instead.
///
/// KUnit does not run a case again that was skipped once, so this case never skips.
#[cfg(all(CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC))]
pub(crate) fn bulk_fault_positions() {
    let armed = page_faults_armed();
    let per_slab = match OwnedCache::<Mid>::new(c"rust_slab_bulk_pos", CacheFlags::NO_MERGE) {
        Ok(cache) => {
            let obj = cache.alloc_uninit(GFP_KERNEL);
            check!(obj.is_ok());
            objects_per_slab(&cache)
        }
        Err(_) => 0,
    };
    check!(per_slab > 1 && per_slab <= 64);
    let mut positions = 0;
    for k in 0..per_slab.min(64) {
        let Ok(cache) = OwnedCache::<Mid>::new(c"rust_slab_bulk_pos", CacheFlags::NO_MERGE) else {
            check!(false);
            return;
        };
        // Objects taken while the task is not marked make a slab of the preferred order (with
        // the task marked, SLUB's first try at an order above the minimum drops
        // `__GFP_DIRECT_RECLAIM`, fails, and falls back to one-object slabs) and leave `k`
        // objects of it on the per-CPU freelist.
        let mut singles = ObjArray::<'_, MaybeUninit<Mid>, 64>::new(cache.uninit());
        let taken = if k == 0 { 0 } else { per_slab - k };
        while singles.len() < taken {
            let Ok(obj) = cache.alloc_uninit(GFP_KERNEL) else {
                check!(false);
                return;
            };
            check!(singles.push(obj).is_ok());
        }
        check!(in_use(&cache) == taken);
        // `k + 1` objects: `k` from the freelist, then a new slab is needed.
        let marked = MakeItFail::new();
        let (batch, result) = bulk::<_, 64>(&cache, k + 1, GFP_NOWAIT);
        if armed && cfg!(not(slab_sheaves_everywhere)) {
            // Refused: the request fails at position `k`.
            check!(result == Err(ENOMEM) && batch.is_empty());
            check!(in_use(&cache) == taken);
            // The `k` objects it had went back to the freelist: `k` can be had without a slab.
            if k > 0 {
                let (batch, result) = bulk::<_, 64>(&cache, k, GFP_NOWAIT);
                check!(result.is_ok() && batch.len() == k);
                check!(in_use(&cache) == per_slab);
            }
        } else if armed {
            // Sheaves: the per-CPU sheaf of the cache was refilled in bulk while the singles were
            // taken, so it may hold the `k + 1` objects already and the request may need no new
            // slab: the failing position cannot be forced. What holds either way: all or
            // nothing, and nothing leaked.
            match result {
                Ok(()) => check!(batch.len() == k + 1 && in_use(&cache) == taken + k + 1),
                Err(e) => check!(e == ENOMEM && batch.is_empty() && in_use(&cache) == taken),
            }
            drop(batch);
            check!(in_use(&cache) == taken);
        } else {
            check!(result.is_ok() && batch.len() == k + 1);
            check!(in_use(&cache) == taken + k + 1);
            drop(batch);
            check!(in_use(&cache) == taken);
        }
        drop(marked);
        drop(singles);
        check!(in_use(&cache) == 0);
        positions += 1;
    }
    // Every position of a slab's worth of objects was tried.
    check!(positions == per_slab);
    #[cfg(CONFIG_KUNIT)]
    crate::pr_info!(
        "rfl_test: slab_bulk positions armed={} positions={}\n",
        u8::from(armed),
        positions
    );
}
