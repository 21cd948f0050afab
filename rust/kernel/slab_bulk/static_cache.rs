// SPDX-License-Identifier: GPL-2.0

//! Module-lifetime caches: a cache type declared once ([`static_cache!`]), created and
//! destroyed by a [`CacheRegistration`], whose objects ([`StaticObj`]) borrow nothing.
//!
//! An [`Obj<'c, T>`] borrows its cache, which keeps a cache from being destroyed under its
//! objects, but a module that owns the cache cannot then keep objects in its own long-lived
//! structures (a `KVec`, a list, an `Arc`ed device state) without a self-referential type. Here
//! the cache is named by a type instead of a borrow: [`static_cache!`] declares a zero-sized
//! type `C` with a static slot, one [`CacheRegistration<C>`] per boot creates the cache into
//! that slot, and a [`StaticObj<C>`] (one pointer, no lifetime) frees itself to the cache in
//! `C`'s slot. As for upstream's allocator types, the type is the cache: an object can only go
//! back to its own cache, and code that gives an object back to a batch says which registration
//! it belongs to by its type, checked at compile time.
//!
//! What the lifetime did, the slot's states and the registration's borrow do now:
//!
//! - allocating needs `&CacheRegistration<C>`, so the cache cannot be destroyed during an
//!   allocation, and every bulk API ([`ObjBatch`], [`FreeBatch`]) works as before on the
//!   registration's [`Cache`], with borrowed objects;
//! - a [`StaticObj`] uses the slot's pointer only to free itself, that is only while it is a
//!   live object of the cache. The slot counts the live ones, and a registration dropped while
//!   some are alive does not destroy the cache: it warns and leaks it, so the pointer stays
//!   valid for them (a leak and a warning, never a use after free). `kmem_cache_destroy`'s own
//!   check ("Slab cache still has objects") cannot be relied on for this: without
//!   `CONFIG_SLUB_DEBUG` SLUB counts only partial slabs, not full ones, and KFENCE's objects
//!   are in no slab, so the destroy can succeed with objects alive and free the `struct
//!   kmem_cache` they would be freed to;
//! - a slot is registered once per boot: a second registration, also after the first was
//!   dropped, is `EBUSY`, as objects that outlived the first would otherwise be freed
//!   to the new cache, or be given back to its batches.
//!
//! No `&'static Cache<T>` is ever handed out: with one, an empty [`ObjBatch`] or a copied
//! reference could allocate after a successful destroy, which is a use after free.
//!
//! [`ObjBatch`]: super::ObjBatch
//! [`FreeBatch`]: super::FreeBatch
//!
//! A [`StaticObj`] leaves the count only once its `kmem_cache_free` has returned (which may
//! still touch the cache after the object counts as free in the slab), so a registration
//! dropped on one CPU while a [`StaticObj`] is dropped on another either sees it and keeps the
//! cache, or destroys it after that free. The count costs two atomic operations on the slot's
//! shared line per [`StaticObj`] (one when made, one when freed or turned back into an
//! [`Obj`]); objects that stay borrowed ([`Obj`], batches) do not pay it.
//!
//! The rule left is the one every module already follows for its code: a [`StaticObj`] must be
//! dropped before the module's code goes (its drop is that code). Keep the registration in the
//! module's state, dropped at module exit, after the work that holds objects has stopped.

use super::cache::{self, Cache, CacheFlags};
use super::object::{drop_and_free, Obj};
use crate::alloc::Flags;
use crate::bindings;
use crate::error::{code::*, Result};
use core::ffi::CStr;
use core::fmt;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ops::{Deref, DerefMut};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicPtr, AtomicU8, AtomicUsize, Ordering};

/// A cache declared once, for the whole life of a module: the type names the cache.
///
/// Implemented by [`static_cache!`](crate::static_cache), which declares the type and its slot;
/// write it by hand only as that macro does.
///
/// # Safety
///
/// [`StaticCache::slot`] must always return the same static, used by this type alone (and by no
/// other `StaticCache`): the slot's pointer is where [`StaticObj<Self>`] frees its objects.
pub unsafe trait StaticCache: 'static {
    /// The type of the objects.
    type Item;
    /// The cache's name (see [`KmemCache::new`] for what is accepted).
    ///
    /// [`KmemCache::new`]: super::KmemCache::new
    const NAME: &'static CStr;
    /// The cache's flags.
    const FLAGS: CacheFlags;

    /// Returns this type's slot.
    fn slot() -> &'static CacheSlot;

    /// Creates the cache: [`CacheRegistration::new`].
    #[inline]
    fn register() -> Result<CacheRegistration<Self>>
    where
        Self: Sized,
    {
        CacheRegistration::new()
    }
}

/// The state of a [`CacheSlot`] that no registration has claimed yet.
const UNINIT: u8 = 0;
/// A registration is creating the cache.
const CREATING: u8 = 1;
/// The registration is alive; the slot's pointer is its cache.
const LIVE: u8 = 2;
/// The registration was dropped; the pointer is kept for the objects that outlived it.
const RETIRED: u8 = 3;

/// Where a [`StaticCache`] keeps its C cache: a `static`, made by [`CacheSlot::new`].
///
/// # Invariants
///
/// `state` moves only forward, `UNINIT -> CREATING -> LIVE -> RETIRED`, except `CREATING ->
/// UNINIT` when creating the cache failed. In `LIVE` and `RETIRED`, `cache` is the cache that
/// the slot's one registration created, suitable for the type's `Item`, never changed again;
/// in `RETIRED` it was destroyed if no [`StaticObj`] was alive, and is valid for ever if some
/// were. `live` is the number of [`StaticObj`]s of the slot whose drop has not finished freeing
/// the object, give or take the one being made or turned back into an [`Obj`] (while the
/// registration is borrowed, so cannot be dropped).
pub struct CacheSlot {
    cache: AtomicPtr<bindings::kmem_cache>,
    state: AtomicU8,
    live: AtomicUsize,
}

impl CacheSlot {
    /// Creates an unregistered slot.
    #[expect(clippy::new_without_default)]
    pub const fn new() -> Self {
        // INVARIANT: `UNINIT`, no object.
        Self {
            cache: AtomicPtr::new(ptr::null_mut()),
            state: AtomicU8::new(UNINIT),
            live: AtomicUsize::new(0),
        }
    }

    /// Returns `true` if a registration was made and dropped: the slot cannot be registered
    /// again in this boot.
    #[inline]
    pub fn is_retired(&self) -> bool {
        self.state.load(Ordering::Relaxed) == RETIRED
    }
}

impl fmt::Debug for CacheSlot {
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
///     struct RequestCache(Request) = c"rfl_request", CacheFlags::HWCACHE_ALIGN | CacheFlags::NO_MERGE;
/// }
///
/// assert_eq!(RequestCache::NAME, c"rfl_request");
/// assert!(RequestCache::FLAGS == CacheFlags::HWCACHE_ALIGN | CacheFlags::NO_MERGE);
/// ```
///
/// declares `struct RequestCache;` (with the visibility written) and its `StaticCache`
/// implementation with a static slot of its own. The flags are one or more `CacheFlags`
/// constants joined by `|`. The cache is created by [`CacheRegistration::new`]
/// (`RequestCache::register()`), in the module's init.
#[macro_export]
macro_rules! static_cache {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident($item:ty) = $cname:expr, $($flag:path)|+ $(;)?
    ) => {
        $(#[$attr])*
        $vis struct $name;

        // SAFETY: `slot` returns the static declared in it, which nothing else can name.
        unsafe impl $crate::slab_bulk::StaticCache for $name {
            type Item = $item;
            const NAME: &'static ::core::ffi::CStr = $cname;
            const FLAGS: $crate::slab_bulk::CacheFlags =
                $crate::slab_bulk::CacheFlags::NONE$(.union($flag))+;

            #[inline]
            fn slot() -> &'static $crate::slab_bulk::CacheSlot {
                static SLOT: $crate::slab_bulk::CacheSlot = $crate::slab_bulk::CacheSlot::new();
                &SLOT
            }
        }
    };
}

/// The cache of a [`StaticCache`] `C`, created in `C`'s slot, destroyed when dropped.
///
/// It dereferences to [`Cache<C::Item>`], so every API of borrowed objects and batches works on
/// it ([`Cache::alloc`], [`Cache::alloc_bulk_with`], [`ObjBatch`], [`FreeBatch`]); objects to
/// keep beyond a borrow become [`StaticObj`]s ([`CacheRegistration::alloc_static`],
/// [`CacheRegistration::keep`]), and go back to borrowed ones with [`StaticObj::into_obj`].
///
/// There is one per `C` per boot: see [`CacheRegistration::new`].
///
/// Context: creating and dropping a registration may sleep (process context only).
///
/// [`ObjBatch`]: super::ObjBatch
/// [`FreeBatch`]: super::FreeBatch
///
/// # Invariants
///
/// `cache` is the cache in `C`'s slot, which is `LIVE`: created for objects of `C::Item` by
/// this registration, destroyed exactly once, when it is dropped.
///
/// # Examples
///
/// ```
/// # use kernel::prelude::*;
/// use kernel::alloc::flags::GFP_KERNEL;
/// use kernel::slab_bulk::{CacheFlags, CacheRegistration, FreeBatch, StaticCache, StaticObj};
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
///     requests: KVec<StaticObj<RequestCache>>,
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
///     done.add(req.into_obj(&reg)); // The eighth fills the batch: one bulk free.
/// }
/// assert!(done.is_empty());
/// // Only now may the registration go; a second one of the same type is `EBUSY`.
/// drop(done);
/// drop(reg);
/// assert!(RequestCache::register().err() == Some(EBUSY));
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
    /// Errors as [`KmemCache::new`] (`EINVAL`, `ENOMEM`; the slot can then be registered
    /// again), and `EBUSY` if `C` has been registered before in this boot, also if that
    /// registration was dropped: objects that outlived it would otherwise go back to the new
    /// cache.
    ///
    /// [`KmemCache::new`]: super::KmemCache::new
    pub fn new() -> Result<Self> {
        let slot = C::slot();
        if slot
            .state
            .compare_exchange(UNINIT, CREATING, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return Err(EBUSY);
        }
        match cache::create::<C::Item>(C::NAME, C::FLAGS) {
            Ok(cache) => {
                // Every `StaticObj<C>` is made after this store by this registration, and
                // handed to other threads with synchronisation of its own: its drop sees it.
                slot.cache.store(cache.as_ptr().cast(), Ordering::Relaxed);
                // INVARIANT: the slot holds the new cache, for `C::Item`, and is `LIVE`.
                slot.state.store(LIVE, Ordering::Relaxed);
                Ok(Self {
                    cache,
                    _type: PhantomData,
                })
            }
            Err(e) => {
                // INVARIANT: no cache, so no object: the slot may be registered again.
                slot.state.store(UNINIT, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// Allocates one object, moves `value` into it and keeps it beyond any borrow.
    ///
    /// Returns `ENOMEM` if the allocator has no memory for `flags`; `value` is dropped then.
    #[inline]
    pub fn alloc_static(&self, value: C::Item, flags: Flags) -> Result<StaticObj<C>> {
        let obj = self.alloc(value, flags)?;
        // SAFETY: `obj` was allocated from this registration's cache just above.
        Ok(unsafe { StaticObj::from_obj(obj) })
    }

    /// Keeps `obj` beyond the borrow of its cache, if it is an object of this registration's
    /// cache (one compare); hands it back otherwise.
    ///
    /// This is how objects from bulk allocations ([`ObjBatch::pop`], say) are kept.
    ///
    /// [`ObjBatch::pop`]: super::ObjBatch::pop
    #[inline]
    pub fn keep<'a>(&self, obj: Obj<'a, C::Item>) -> Result<StaticObj<C>, Obj<'a, C::Item>> {
        if !ptr::eq(obj.cache(), &**self) {
            return Err(obj);
        }
        // SAFETY: `obj` is an object of this registration's cache, checked above.
        Ok(unsafe { StaticObj::from_obj(obj) })
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
        let slot = C::slot();
        // Acquire: pairs with the Release of each `StaticObj`'s drop, so that its
        // `kmem_cache_free` has returned before the cache is destroyed. No `StaticObj` can be
        // made from now on: that takes `&self`.
        let live = slot.live.load(Ordering::Acquire);
        if live == 0 {
            // SAFETY: The cache is live and destroyed only here (type invariant). No allocation
            // is running and no borrowed object or batch is left: they borrow `self`. No
            // `StaticObj` is left, and the frees of those that were have returned.
            unsafe { bindings::kmem_cache_destroy(self.cache.as_ptr().cast()) };
        } else {
            crate::pr_warn!(
                "slab_bulk: {:?}: registration dropped with {} objects alive; cache leaked\n",
                C::NAME,
                live
            );
        }
        // INVARIANT: `LIVE -> RETIRED`; the pointer stays, valid if objects were left.
        slot.state.store(RETIRED, Ordering::Relaxed);
    }
}

impl<C: StaticCache> fmt::Debug for CacheRegistration<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CacheRegistration")
            .field("name", &C::NAME)
            .finish()
    }
}

/// An object of the [`StaticCache`] `C`, owned, holding a `C::Item`, with no lifetime: it can
/// live in a module's own structures for as long as the module likes.
///
/// It is one pointer. Dropping it drops the value and frees the object to `C`'s cache; the type
/// names the cache, so an object can only go back to its own. It is made only through the one
/// [`CacheRegistration<C>`] ([`CacheRegistration::alloc_static`], [`CacheRegistration::keep`]),
/// and goes back to a borrowed [`Obj`] with [`StaticObj::into_obj`] (to be freed in bulk, say).
///
/// Context: dropping it is dropping an [`Obj`]: any but NMI. It must be dropped before the
/// module's code goes (its drop is that code); if its registration goes first, the cache is
/// kept for it (a warning and a leak, see [`CacheRegistration`]).
///
/// # Invariants
///
/// `ptr` is a live object of the cache in `C`'s slot, owned by this value, holding a valid
/// `C::Item`; the slot was `LIVE` when the object was made, so it is `LIVE` or `RETIRED` with
/// that cache's pointer for as long as this value lives, and the value is counted in the slot's
/// `live`, which keeps the cache from being destroyed.
pub struct StaticObj<C: StaticCache> {
    ptr: NonNull<C::Item>,
    _owns: PhantomData<C::Item>,
}

// SAFETY: A `StaticObj` owns its value, so it may move to another thread when the value may;
// the slab allocator accepts frees from any CPU, and the slot is a static of atomics.
unsafe impl<C: StaticCache> Send for StaticObj<C> where C::Item: Send {}
// SAFETY: `&StaticObj` only gives `&C::Item`.
unsafe impl<C: StaticCache> Sync for StaticObj<C> where C::Item: Sync {}

impl<C: StaticCache> StaticObj<C> {
    /// Takes the object of `obj` out of its borrow.
    ///
    /// # Safety
    ///
    /// `obj` must be an object of the cache of `C`'s (live) registration.
    #[inline]
    unsafe fn from_obj(obj: Obj<'_, C::Item>) -> Self {
        // Relaxed: the registration, borrowed by `obj`, is dropped only after that borrow
        // ends, which orders this increment before its check.
        C::slot().live.fetch_add(1, Ordering::Relaxed);
        // INVARIANT: `obj` owned a live object of that cache holding a valid `C::Item`; the
        // registration it was borrowed from made the slot `LIVE` with its cache; counted.
        Self {
            ptr: obj.into_raw(),
            _owns: PhantomData,
        }
    }

    /// Turns the object back into one that borrows `reg`, to be pushed into a batch or freed
    /// in bulk with a [`FreeBatch`].
    ///
    /// No check is needed: `C` has one registration per boot, so `reg` is the one this object
    /// was made by.
    ///
    /// [`FreeBatch`]: super::FreeBatch
    #[inline]
    pub fn into_obj<'r>(self, reg: &'r CacheRegistration<C>) -> Obj<'r, C::Item> {
        let this = ManuallyDrop::new(self);
        // The object is the returned `Obj`'s now, which borrows `reg`: it no longer needs the
        // count to keep the cache (Relaxed, as in `from_obj`).
        C::slot().live.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: `ptr` is a live object of the cache in `C`'s slot holding a valid `C::Item`,
        // owned by `this`, which is not dropped (type invariant). That cache is `reg`'s: a slot
        // is registered once, and `reg` is alive, so it is the registration that made the
        // object.
        unsafe { Obj::from_raw(reg, this.ptr) }
    }
}

impl<C: StaticCache> Deref for StaticObj<C> {
    type Target = C::Item;

    #[inline]
    fn deref(&self) -> &C::Item {
        // SAFETY: `ptr` holds a valid `C::Item` owned by `self` (type invariant).
        unsafe { self.ptr.as_ref() }
    }
}

impl<C: StaticCache> DerefMut for StaticObj<C> {
    #[inline]
    fn deref_mut(&mut self) -> &mut C::Item {
        // SAFETY: As in `deref`, and `&mut self` makes the access unique.
        unsafe { self.ptr.as_mut() }
    }
}

impl<C: StaticCache> fmt::Debug for StaticObj<C>
where
    C::Item: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<C: StaticCache> Drop for StaticObj<C> {
    #[inline]
    fn drop(&mut self) {
        let slot = C::slot();
        // Leaves the count once the object is freed, also should `C::Item::drop` panic (the
        // free then runs while unwinding, before this guard's drop).
        let _uncount = Uncount(&slot.live);
        // The pointer was stored before this object was made (see `CacheRegistration::new`),
        // and is never changed again.
        let cache = slot.cache.load(Ordering::Relaxed);
        // SAFETY: `ptr` is a live object of `cache` holding a valid `C::Item`, owned by `self`
        // (type invariant) and not used after this. `cache` is valid until `_uncount` is
        // dropped: this object is counted, so the registration has not destroyed it, and will
        // not until the count drops.
        unsafe { drop_and_free(cache, self.ptr) };
    }
}

/// Takes one [`StaticObj`] out of its slot's count when dropped, after its object was freed.
struct Uncount<'a>(&'a AtomicUsize);

impl Drop for Uncount<'_> {
    #[inline]
    fn drop(&mut self) {
        // Release: pairs with the Acquire of the registration's drop, so that the free (and
        // every use of the cache by it) happens before a destroy that finds the count at 0.
        self.0.fetch_sub(1, Ordering::Release);
    }
}
