// SPDX-License-Identifier: GPL-2.0

//! Module-lifetime caches: a cache type declared once ([`static_cache!`]), created and
//! destroyed by a [`CacheRegistration`], which is also an [`Allocator`]: `Box<T, C>` is an object
//! of the cache that borrows nothing.
//!
//! An [`Obj<'c, T>`] borrows its cache, which keeps a cache from being destroyed under its
//! objects, but a module that owns the cache cannot then keep objects in its own long-lived
//! structures (a `KVec`, a list, an `Arc`ed device state) without a self-referential type. Here
//! the cache is named by a type instead of a borrow, the shape upstream's review of a Rust slab
//! module settled on: [`static_cache!`] declares a zero-sized type `C` with a static cell, one
//! [`CacheRegistration<C>`] per boot creates the cache into that cell, and `C` implements the
//! kernel's [`Allocator`] over it, so `Box<T, C>` (`kernel::alloc::Box`, the `KBox` of the cache)
//! allocates from the cache and frees to it:
//!
//! ```
//! # use kernel::prelude::*;
//! use kernel::slab_bulk::{CacheFlags, StaticCache};
//!
//! struct Request {
//!     id: u32,
//! }
//!
//! kernel::static_cache! {
//!     /// The driver's requests.
//!     struct RequestCache(Request) = c"doc_alloc_request", CacheFlags::HWCACHE_ALIGN;
//! }
//!
//! let reg = RequestCache::register()?; // In the module's init, kept in its state.
//! let req = Box::<Request, RequestCache>::new(Request { id: 7 }, GFP_KERNEL)?;
//! let mut inflight = KVec::<Box<Request, RequestCache>>::new();
//! inflight.push(req, GFP_KERNEL)?; // No borrow: it lives in the driver's structures.
//! assert_eq!(inflight[0].id, 7);
//! drop(inflight); // Each request back to the cache.
//! drop(reg); // At module exit.
//! # Ok::<(), Error>(())
//! ```
//!
//! # Which to use
//!
//! A driver uses `Box<T, C>` for objects it keeps (`Box::new`, `Box::pin`, `ForeignOwnable`,
//! whatever takes an allocator), and the registration's [`Cache`] for the bulk API: batches
//! ([`ObjArray`], [`FreeBatch`], [`Cache::alloc_bulk_in`]) of borrowed [`Obj`]s.
//! [`CacheRegistration::keep`] turns an object of a bulk allocation into a `Box<T, C>`, and
//! [`CacheRegistration::to_obj`] a `Box<T, C>` back into an [`Obj`], to be freed in bulk.
//!
//! # Layouts
//!
//! The [`Allocator`] trait takes a [`Layout`] on every call; a cache has one object size and
//! alignment. The allocator serves every layout that fits in one object: size at most
//! `size_of::<C::Item>()` and alignment at most `align_of::<C::Item>()` (the cache was created
//! with both). Any other layout fails with `AllocError` (`ENOMEM` through `?`; the trait has no
//! other error): never a smaller object. A size of 0 allocates nothing and returns a dangling,
//! aligned pointer, as `Kmalloc` does, so a `Box` of a zero-sized type works and uses no object.
//!
//! `realloc` of an object to a layout that fits is done in place: every object of the cache has
//! the same size, so the object already has room for any layout that fits, and the pointer and
//! contents stay (with `__GFP_ZERO`, the bytes a grow adds are zeroed, as `krealloc` does). A
//! layout that does not fit fails and leaves the object as it was: no object of the cache is
//! larger, so moving could never help, and `realloc` never copies. Refusing the in-place case
//! would make a `Vec<u8, C>` fail to grow within an object it already has, for nothing. A size of
//! 0 frees the object.
//!
//! # Destroy with objects alive
//!
//! A `Box<T, C>` frees itself through `C` with no borrow of the registration, so nothing in the
//! types keeps the registration alive until the last box is gone: a driver may drop the
//! registration first (by the order of its fields, or by `drop(reg)`), and `C::alloc` may be
//! called before the registration or after it. Relying on module lifetime (the box's drop code
//! lives in the module, the registration is dropped at module exit) does not close this: the
//! registration is a value safe code can drop at any time while boxes still exist, and
//! `kmem_cache_destroy` cannot be relied on to refuse: without `CONFIG_SLUB_DEBUG` SLUB counts
//! only partial slabs, not full ones, and KFENCE's objects are in no slab, so the destroy can
//! succeed with objects alive and free the `struct kmem_cache` they would be freed to.
//!
//! So the cell counts its live objects, one atomic add when an object is handed out through
//! `C` (or [`CacheRegistration::keep`]) and one subtract once its `kmem_cache_free` has returned
//! (or it went back to an [`Obj`] with [`CacheRegistration::to_obj`]); objects that stay borrowed
//! ([`Obj`], batches) do not pay it. A registration dropped while the count is not 0 does not
//! destroy the cache: it warns and leaks it, so every object stays valid and can still be freed
//! to it (a leak and a warning, never a use after free). The allocation adds to the count
//! *before* it checks that the cell is live, and the registration marks the cell retired
//! *before* it reads the count (all four sequentially consistent): either the allocation sees
//! the cell retired and fails, or the registration sees it counted and keeps the cache, so an
//! allocation racing with the destroy on another CPU is no use after free either. The count
//! costs what review feared: two `LOCK`ed operations per object, which the slab benchmark's
//! `box_single` measures beside `ours_single` (the figures: `docs/benchmarks.md`, "The cost of
//! `Box<T, C>`"). Bulk rounds on the registration do not pay it; a per-CPU count would make it
//! two unlocked instructions (see `docs/design.md`).
//!
//! - Allocating through `C` fails (`AllocError`) before [`CacheRegistration::new`] and after the
//!   registration was dropped.
//! - A cell is registered once per boot: a second registration, also after the first was
//!   dropped, is `EBUSY`, as objects that outlived the first would otherwise be freed to the new
//!   cache, or be given back to its batches.
//! - No `&'static Cache<T>` is ever handed out: with one, an empty [`ObjArray`] or a copied
//!   reference could allocate after a successful destroy.
//!
//! The rule left is the one every module already follows for its code: a `Box<T, C>` must be
//! dropped before the module's code goes (its drop is that code). Keep the registration in the
//! module's state, dropped at module exit, after the work that holds objects has stopped.
//!
//! [`ObjArray`]: super::ObjArray
//! [`FreeBatch`]: super::FreeBatch
//! [`Allocator`]: crate::alloc::Allocator
//! [`static_cache!`]: crate::static_cache

use super::cache::{self, Cache, CacheFlags};
use super::ffi::{self, Node, NUMA_NO_NODE};
use super::object::Obj;
use crate::alloc::{flags::__GFP_ZERO, AllocError, Allocator, Box, Flags};
use crate::error::{code::*, Result};
use core::alloc::Layout;
use core::ffi::CStr;
use core::fmt;
use core::marker::PhantomData;
use core::mem;
use core::ops::Deref;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, AtomicU8, AtomicUsize, Ordering};

/// A cache declared once, for the whole life of a module: the type names the cache.
///
/// Implemented by [`static_cache!`](crate::static_cache), which declares the type and its cell;
/// write it by hand only as that macro does.
///
/// # Safety
///
/// [`StaticCache::cell`] must always return the same static, used by this type alone (and by no
/// other `StaticCache`): the cell's pointer is where the type, as an [`Allocator`], frees its
/// objects.
///
/// [`Allocator`]: crate::alloc::Allocator
pub unsafe trait StaticCache: 'static {
    /// The type of the objects.
    type Item;
    /// The cache's name (see [`KmemCache::new`] for what is accepted).
    ///
    /// [`KmemCache::new`]: super::KmemCache::new
    const NAME: &'static CStr;
    /// The cache's flags.
    const FLAGS: CacheFlags;

    /// Returns this type's cell.
    fn cell() -> &'static StaticCacheCell;

    /// Creates the cache: [`CacheRegistration::new`].
    #[inline]
    fn register() -> Result<CacheRegistration<Self>>
    where
        Self: Sized,
    {
        CacheRegistration::new()
    }
}

/// The state of a [`StaticCacheCell`] that no registration has claimed yet.
const UNINIT: u8 = 0;
/// A registration is creating the cache.
const CREATING: u8 = 1;
/// The registration is alive; the cell's pointer is its cache.
const LIVE: u8 = 2;
/// The registration was dropped; the pointer is kept for the objects that outlived it.
const RETIRED: u8 = 3;

/// Where a [`StaticCache`] keeps its C cache, the cache's registration state and its count of
/// live objects: a `static`, made by [`StaticCacheCell::new`].
///
/// # Invariants
///
/// `state` moves only forward, `UNINIT -> CREATING -> LIVE -> RETIRED`, except `CREATING ->
/// UNINIT` when creating the cache failed. In `LIVE` and `RETIRED`, `cache` is the cache that
/// the cell's one registration created, suitable for the type's `Item`, never changed again;
/// in `RETIRED` it was destroyed if the registration found `live` at 0, and is valid for ever
/// otherwise. `live` counts the objects handed out through the type's [`Allocator`] (or kept by
/// [`CacheRegistration::keep`]) whose free has not returned, plus allocations in progress, which
/// count themselves before they check that the cell is `LIVE`.
///
/// [`Allocator`]: crate::alloc::Allocator
pub struct StaticCacheCell {
    cache: AtomicPtr<ffi::kmem_cache>,
    state: AtomicU8,
    live: AtomicUsize,
}

impl StaticCacheCell {
    /// Creates an unregistered cell.
    #[expect(clippy::new_without_default)]
    pub const fn new() -> Self {
        // INVARIANT: `UNINIT`, no object.
        Self {
            cache: AtomicPtr::new(ptr::null_mut()),
            state: AtomicU8::new(UNINIT),
            live: AtomicUsize::new(0),
        }
    }

    /// Returns `true` if a registration was made and dropped: the cell cannot be registered
    /// again in this boot.
    #[inline]
    pub fn is_retired(&self) -> bool {
        self.state.load(Ordering::Relaxed) == RETIRED
    }
}

impl fmt::Debug for StaticCacheCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state.load(Ordering::Relaxed) {
            UNINIT => "unregistered",
            CREATING => "creating",
            LIVE => "live",
            _ => "retired",
        };
        f.write_str(state)
    }
}

/// Declares a [`StaticCache`]: a zero-sized type naming a cache for the life of a module.
///
/// ```
/// use kernel::slab_bulk::{CacheFlags, StaticCache};
///
/// struct Request;
///
/// kernel::static_cache! {
///     /// Requests in flight.
///     struct RequestCache(Request) =
///         c"rfl_request", CacheFlags::HWCACHE_ALIGN | CacheFlags::NO_MERGE;
/// }
///
/// assert_eq!(RequestCache::NAME, c"rfl_request");
/// assert!(RequestCache::FLAGS == CacheFlags::HWCACHE_ALIGN | CacheFlags::NO_MERGE);
/// ```
///
/// declares `struct RequestCache;` (with the visibility written) and its `StaticCache`
/// implementation with a static cell of its own; every `StaticCache` is an [`Allocator`] over
/// its cache, so `Box<Request, RequestCache>` is an object of it (see the [module
/// documentation](crate::slab_bulk)). The flags are one or more `CacheFlags`
/// constants joined by `|`. The cache is created by [`CacheRegistration::new`]
/// (`RequestCache::register()`), in the module's init.
///
/// [`Allocator`]: crate::alloc::Allocator
#[macro_export]
macro_rules! static_cache {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident($item:ty) = $cname:expr, $($flag:path)|+ $(;)?
    ) => {
        $(#[$attr])*
        $vis struct $name;

        // SAFETY: `cell` returns the static declared in it, which nothing else can name.
        unsafe impl $crate::slab_bulk::StaticCache for $name {
            type Item = $item;
            const NAME: &'static ::core::ffi::CStr = $cname;
            const FLAGS: $crate::slab_bulk::CacheFlags =
                $crate::slab_bulk::CacheFlags::NONE$(.union($flag))+;

            #[inline]
            fn cell() -> &'static $crate::slab_bulk::StaticCacheCell {
                static CELL: $crate::slab_bulk::StaticCacheCell =
                    $crate::slab_bulk::StaticCacheCell::new();
                &CELL
            }
        }
    };
}

/// The cache of a [`StaticCache`] `C`, created in `C`'s cell, destroyed when dropped.
///
/// It dereferences to [`Cache<C::Item>`], so every API of borrowed objects and batches works on
/// it ([`Cache::alloc`], [`Cache::alloc_bulk_with`], [`ObjArray`], [`FreeBatch`]); objects to
/// keep beyond a borrow are `Box<C::Item, C>`s (`Box::new`, or [`CacheRegistration::keep`] of a
/// borrowed one), and go back to borrowed ones with [`CacheRegistration::to_obj`].
///
/// There is one per `C` per boot: see [`CacheRegistration::new`].
///
/// Context: creating and dropping a registration may sleep (process context only).
///
/// [`ObjArray`]: super::ObjArray
/// [`FreeBatch`]: super::FreeBatch
///
/// # Invariants
///
/// `cache` is the cache in `C`'s cell, which is `LIVE`: created for objects of `C::Item` by
/// this registration, destroyed exactly once, when it is dropped.
///
/// # Examples
///
/// ```
/// # use kernel::prelude::*;
/// use kernel::alloc::flags::GFP_KERNEL;
/// use kernel::slab_bulk::{CacheFlags, CacheRegistration, FreeBatch, StaticCache};
///
/// struct Request {
///     id: u32,
///     len: u32,
/// }
///
/// kernel::static_cache! {
///     /// The requests of the example.
///     struct RequestCache(Request) = c"doc_request", CacheFlags::HWCACHE_ALIGN;
/// }
///
/// /// What a driver keeps across calls: no borrow of the cache in the type.
/// struct InFlight {
///     requests: KVec<Box<Request, RequestCache>>,
/// }
///
/// let reg: CacheRegistration<RequestCache> = RequestCache::register()?;
/// let mut state = InFlight { requests: KVec::new() };
/// // Submit: eight requests in one bulk allocation, kept beyond the batch.
/// let mut batch = reg.alloc_bulk_with::<8>(GFP_KERNEL, |i| Request { id: i as u32, len: 0 })?;
/// while let Some(obj) = batch.pop() {
///     let kept = reg.keep(obj).map_err(|_| EINVAL)?;
///     state.requests.push(kept, GFP_KERNEL)?;
/// }
/// drop(batch);
/// state.requests[0].len = 64;
/// assert_eq!(state.requests.iter().map(|r| r.id + r.len).sum::<u32>(), 28 + 64);
/// // Complete: back to borrowed objects, freed to the cache together.
/// let mut done = FreeBatch::<'_, Request, 8>::new(&reg);
/// for req in core::mem::take(&mut state.requests) {
///     done.add(reg.to_obj(req)); // The eighth fills the batch: one bulk free.
/// }
/// assert!(done.is_empty());
/// // Only now may the registration go; a second one of the same type is `EBUSY`.
/// drop(done);
/// drop(reg);
/// assert!(RequestCache::register().err() == Some(EBUSY));
/// // And the allocator refuses, as it did before the registration.
/// assert!(Box::<Request, RequestCache>::new(Request { id: 0, len: 0 }, GFP_KERNEL).is_err());
/// # Ok::<(), Error>(())
/// ```
pub struct CacheRegistration<C: StaticCache> {
    cache: NonNull<Cache<C::Item>>,
    _type: PhantomData<C>,
}

// SAFETY: The cache may be used and destroyed from any thread (see `Cache`); `C` is a
// zero-sized name, no value of which is held.
unsafe impl<C: StaticCache> Send for CacheRegistration<C> {}
// SAFETY: Only `&Cache<C::Item>`, which is `Sync`, is reachable through a shared reference.
unsafe impl<C: StaticCache> Sync for CacheRegistration<C> {}

impl<C: StaticCache> CacheRegistration<C> {
    /// Creates `C`'s cache, named [`StaticCache::NAME`], with [`StaticCache::FLAGS`].
    ///
    /// Errors as [`KmemCache::new`] (`EINVAL`, `ENOMEM`; the cell can then be registered
    /// again), and `EBUSY` if `C` has been registered before in this boot, also if that
    /// registration was dropped: objects that outlived it would otherwise go back to the new
    /// cache.
    ///
    /// [`KmemCache::new`]: super::KmemCache::new
    pub fn new() -> Result<Self> {
        let cell = C::cell();
        if cell
            .state
            .compare_exchange(UNINIT, CREATING, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return Err(EBUSY);
        }
        match cache::create::<C::Item>(C::NAME, C::FLAGS) {
            Ok(cache) => {
                // An allocation that sees `LIVE` (SeqCst, so acquiring) sees this store; an
                // object handed to another thread is handed with synchronisation of its own.
                cell.cache.store(cache.as_ptr().cast(), Ordering::Relaxed);
                // INVARIANT: the cell holds the new cache, for `C::Item`, and is `LIVE`.
                cell.state.store(LIVE, Ordering::SeqCst);
                Ok(Self {
                    cache,
                    _type: PhantomData,
                })
            }
            Err(e) => {
                // INVARIANT: no cache, so no object: the cell may be registered again.
                cell.state.store(UNINIT, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// Keeps `obj` beyond the borrow of its cache as a `Box<C::Item, C>`, if it is an object
    /// of this registration's cache (one compare); hands it back otherwise.
    ///
    /// This is how objects from bulk allocations ([`ObjArray::pop`], say) are kept.
    ///
    /// [`ObjArray::pop`]: super::ObjArray::pop
    #[inline]
    pub fn keep<'a>(&self, obj: Obj<'a, C::Item>) -> Result<Box<C::Item, C>, Obj<'a, C::Item>> {
        if !ptr::eq(obj.cache(), &**self) {
            return Err(obj);
        }
        // Relaxed: the registration, borrowed by `self`, is dropped only after that borrow
        // ends, which orders this increment before its check.
        C::cell().live.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `obj` is a live object of the cache in `C`'s cell holding a valid `C::Item`,
        // now counted: what `C`'s allocator hands out for `Layout::new::<C::Item>()`, and what
        // it frees. Its ownership moves to the box.
        Ok(unsafe { Box::from_raw(obj.into_raw().as_ptr()) })
    }

    /// Turns a `Box<C::Item, C>` back into an object that borrows the registration, to be
    /// pushed into a batch or freed in bulk with a [`FreeBatch`].
    ///
    /// No check is needed: `C` has one registration per boot, so `self` is the one whose cache
    /// the object is of.
    ///
    /// [`FreeBatch`]: super::FreeBatch
    #[inline]
    pub fn to_obj(&self, boxed: Box<C::Item, C>) -> Obj<'_, C::Item> {
        let raw = Box::into_raw(boxed);
        // The object is the returned `Obj`'s now, which borrows `self`: it no longer needs the
        // count to keep the cache (Relaxed, as in `keep`).
        C::cell().live.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: `C::Item` is not zero-sized (a cache of it exists), so the box's memory came
        // from `C`'s allocator for `Layout::new::<C::Item>()`, or from `keep`: a live, counted
        // object of the cache in `C`'s cell, which is `self`'s (a cell is registered once, and
        // `self` is alive), holding a valid `C::Item`, owned by nobody else since `into_raw`.
        unsafe { Obj::from_raw(self, NonNull::new_unchecked(raw)) }
    }
}

impl<C: StaticCache> Deref for CacheRegistration<C> {
    type Target = Cache<C::Item>;

    #[inline]
    fn deref(&self) -> &Cache<C::Item> {
        // SAFETY: `cache` is live until `self` is dropped and suitable for `C::Item` (type
        // invariant).
        unsafe { self.cache.as_ref() }
    }
}

impl<C: StaticCache> Drop for CacheRegistration<C> {
    fn drop(&mut self) {
        let cell = C::cell();
        // INVARIANT: `LIVE -> RETIRED`; the pointer stays, valid if objects are left. From here
        // on an allocation through `C` fails. SeqCst, with the load below and an allocation's
        // count and check: either the allocation sees `RETIRED` or the load sees it counted.
        cell.state.store(RETIRED, Ordering::SeqCst);
        // Acquiring: pairs with the Release of each free, so that its `kmem_cache_free` has
        // returned before the cache is destroyed.
        let live = cell.live.load(Ordering::SeqCst);
        if live == 0 {
            // SAFETY: The cache is live and destroyed only here (type invariant). No borrowed
            // object or batch is left: they borrow `self`. No object of `C`'s allocator is left,
            // the frees of those that were have returned, and no allocation is in progress or
            // can start (it would be counted, or see `RETIRED`).
            unsafe { ffi::destroy(self.cache.as_ptr().cast()) };
        } else {
            crate::pr_warn!(
                "slab_bulk: {:?}: registration dropped with {} objects alive; cache leaked\n",
                C::NAME,
                live
            );
        }
    }
}

impl<C: StaticCache> fmt::Debug for CacheRegistration<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheRegistration")
            .field("name", &C::NAME)
            .finish()
    }
}

/// Whether one object of `C`'s cache can hold `layout`: the cache was created with the size and
/// alignment of `C::Item`.
#[inline]
fn fits<C: StaticCache>(layout: Layout) -> bool {
    layout.size() <= mem::size_of::<C::Item>() && layout.align() <= mem::align_of::<C::Item>()
}

/// The allocation of a size of 0: no object, a dangling pointer aligned to `align` (and to the
/// item's alignment, 7.x's `Allocator::MIN_ALIGN`).
#[inline]
fn dangling<C: StaticCache>(align: usize) -> NonNull<[u8]> {
    let align = align.max(mem::align_of::<C::Item>());
    // SAFETY: An alignment is never 0, so neither is the address.
    let ptr = unsafe { NonNull::new_unchecked(ptr::null_mut::<u8>().wrapping_add(align)) };
    NonNull::slice_from_raw_parts(ptr, 0)
}

/// Allocates one object of `C`'s cache, counted in its cell, if the cell is `LIVE`.
#[inline]
fn alloc_object<C: StaticCache>(flags: Flags, node: Node) -> Result<NonNull<u8>, AllocError> {
    let cell = C::cell();
    // Counted first, then checked (both SeqCst, against the registration's `RETIRED` store and
    // count load): a registration dropped meanwhile sees this count and keeps the cache.
    cell.live.fetch_add(1, Ordering::SeqCst);
    let uncount = Uncount(&cell.live);
    if cell.state.load(Ordering::SeqCst) != LIVE {
        return Err(AllocError);
    }
    // Stored before `LIVE`, which the load above acquired.
    let cache = cell.cache.load(Ordering::Relaxed);
    // SAFETY: `cache` is live: the cell was `LIVE` after this allocation was counted, so the
    // registration, if dropped since, found it counted and kept the cache. The call may be made
    // in any context `flags` allows, which is the caller's contract.
    let obj = unsafe {
        if node == NUMA_NO_NODE {
            ffi::alloc(cache, flags)
        } else {
            ffi::alloc_node(cache, flags, node)
        }
    };
    let obj = NonNull::new(obj.cast::<u8>()).ok_or(AllocError)?;
    // Counted for as long as the object lives: `free_object` takes it out.
    mem::forget(uncount);
    Ok(obj)
}

/// Frees `obj` to `C`'s cache and takes it out of the cell's count.
///
/// # Safety
///
/// `obj` must be a live object of `C`'s cache counted in its cell (from [`alloc_object`] or
/// [`CacheRegistration::keep`]), holding no value that needs a drop, not used afterwards.
#[inline]
unsafe fn free_object<C: StaticCache>(obj: NonNull<u8>) {
    let cell = C::cell();
    // Leaves the count once the object is freed.
    let _uncount = Uncount(&cell.live);
    // The pointer was stored before this object was counted, and is never changed again.
    let cache = cell.cache.load(Ordering::Relaxed);
    // SAFETY: `obj` is a live object of `cache`, handed over by the caller. `cache` is valid
    // until `_uncount` is dropped: the object is counted, so the registration has not destroyed
    // the cache, and will not until the count drops.
    unsafe { ffi::free(cache, obj.as_ptr().cast()) };
}

/// `Allocator::realloc` for every kernel: one object per layout that fits (see "Layouts" in
/// the module documentation).
///
/// # Safety
///
/// As `Allocator::realloc`'s.
#[inline]
unsafe fn realloc<C: StaticCache>(
    ptr: Option<NonNull<u8>>,
    layout: Layout,
    old_layout: Layout,
    flags: Flags,
    node: Node,
) -> Result<NonNull<[u8]>, AllocError> {
    // A zero-sized allocation is no object (its pointer need not even be one of ours).
    let old = ptr.filter(|_| old_layout.size() != 0);
    if layout.size() == 0 {
        if let Some(obj) = old {
            // SAFETY: `obj` is an object of this allocator (the caller's contract), hence of
            // `C`'s cache and counted, given up by the caller.
            unsafe { free_object::<C>(obj) };
        }
        return Ok(dangling::<C>(layout.align()));
    }
    if !fits::<C>(layout) {
        // No object is larger: neither in place nor elsewhere. `old` stays valid.
        return Err(AllocError);
    }
    let Some(obj) = old else {
        let obj = alloc_object::<C>(flags, node)?;
        return Ok(NonNull::slice_from_raw_parts(obj, layout.size()));
    };
    // In place: the object is `size_of::<C::Item>()` bytes, aligned to `C::Item`, which fits
    // `layout` (checked above); its contents stay.
    if flags.contains(__GFP_ZERO) && layout.size() > old_layout.size() {
        // SAFETY: The object is valid for `size_of::<C::Item>()` bytes, at least `layout.size()`.
        unsafe {
            obj.as_ptr()
                .add(old_layout.size())
                .write_bytes(0, layout.size() - old_layout.size())
        };
    }
    Ok(NonNull::slice_from_raw_parts(obj, layout.size()))
}

// SAFETY: Every allocation is a live object of `C`'s cache (or, for a size of 0, a dangling
// pointer), valid until it is freed: the cell counts it, and a registration dropped while it is
// counted keeps the cache. Any object of the cache may be passed to any function here. From 7.0
// the trait also asks for `MIN_ALIGN`: every object is aligned to `C::Item` (the cache's
// alignment), and a zero-sized allocation's dangling pointer too.
unsafe impl<C: StaticCache> Allocator for C {
    #[cfg(kernel_ge_7_0)]
    const MIN_ALIGN: usize = mem::align_of::<C::Item>();

    #[inline]
    unsafe fn realloc(
        ptr: Option<NonNull<u8>>,
        layout: Layout,
        old_layout: Layout,
        flags: Flags,
        #[cfg(kernel_ge_7_0)] nid: crate::alloc::NumaNode,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // From 7.0 the caller names a NUMA node; before, the allocator picks one.
        #[cfg(kernel_ge_7_0)]
        let node = node_id(nid);
        #[cfg(not(kernel_ge_7_0))]
        let node = NUMA_NO_NODE;
        // SAFETY: Forwarded from the caller.
        unsafe { realloc::<C>(ptr, layout, old_layout, flags, node) }
    }
}

/// The raw id of `nid`. `NumaNode` keeps it private to `kernel::alloc`; it is the one valid id
/// `NumaNode::new` accepts and compares equal to (a search only when a node was asked for).
#[cfg(kernel_ge_7_0)]
fn node_id(nid: crate::alloc::NumaNode) -> Node {
    if nid == crate::alloc::NumaNode::NO_NODE {
        return NUMA_NO_NODE;
    }
    (0..ffi::MAX_NUMNODES)
        .find(|&id| crate::alloc::NumaNode::new(id).is_ok_and(|n| n == nid))
        .unwrap_or(NUMA_NO_NODE)
}

/// Takes one object out of its cell's count when dropped.
struct Uncount<'a>(&'a AtomicUsize);

impl Drop for Uncount<'_> {
    #[inline]
    fn drop(&mut self) {
        // Release: pairs with the registration's count load, so that the free (and every use
        // of the cache by it) happens before a destroy that finds the count at 0.
        self.0.fetch_sub(1, Ordering::Release);
    }
}
