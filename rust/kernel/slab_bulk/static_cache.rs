// SPDX-License-Identifier: GPL-2.0

//! Module-lifetime caches: a cache type declared once ([`static_cache!`]), created and destroyed
//! by a [`CacheRegistration`], and the kernel's [`Allocator`] over that cache.
//!
//! An [`Obj<'c, T>`] borrows its cache, so a module cannot keep one in its own long-lived
//! structures. Here a zero-sized type `C` names the cache: `Box<T, C>` allocates from it and
//! frees to it with no borrow, and the registration dereferences to the [`Cache`], for the bulk
//! API. Unlike a C cache:
//! 1. `C` serves every [`Layout`] that fits in one object and fails every other (`AllocError`,
//!    never a smaller object); `realloc` within the object is in place, beyond it fails.
//! 2. `C`'s cell counts its objects (atomics on each): a registration dropped while any is alive
//!    warns and leaks the cache instead of destroying it under them. Borrowed objects and batches
//!    are not counted.
//! 3. Allocating through `C` fails before its registration and after it; `C` is registered once
//!    per boot.
//! 4. `C` frees only what it counted: its own allocations and [`CacheRegistration::keep`]'s boxes.
//!
//! The design, and why: `docs/design.md`, section "Module-lifetime caches (`static_cache.rs`): a
//! cache that is an `Allocator`".
//!
//! [`static_cache!`]: crate::static_cache
//! [`Allocator`]: crate::alloc::Allocator

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
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicU8, Ordering};

/// A cache declared once, for the whole life of a module: the type names the cache.
///
/// Implemented by [`static_cache!`](crate::static_cache), which declares the type and its cell;
/// write it by hand only as that macro does.
///
/// The type is the kernel's [`Allocator`] over its cache, so `Box<T, C>` (`kernel::alloc::Box`,
/// the `KBox` of the cache) allocates from the cache and frees to it, with no borrow:
///
/// ```
/// # use kernel::prelude::*;
/// use kernel::slab_bulk::{CacheFlags, StaticCache};
///
/// struct Request {
///     id: u32,
/// }
///
/// kernel::static_cache! {
///     /// The driver's requests.
///     struct RequestCache(Request) = c"doc_alloc_request", CacheFlags::HWCACHE_ALIGN;
/// }
///
/// let reg = RequestCache::register()?; // In the module's init, kept in its state.
/// let req = Box::<Request, RequestCache>::new(Request { id: 7 }, GFP_KERNEL)?;
/// let mut inflight = KVec::<Box<Request, RequestCache>>::new();
/// inflight.push(req, GFP_KERNEL)?; // No borrow: it lives in the driver's structures.
/// assert_eq!(inflight[0].id, 7);
/// drop(inflight); // Each request back to the cache.
/// drop(reg); // At module exit.
/// # Ok::<(), Error>(())
/// ```
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
    /// The cache's name (see [`OwnedCache::new`] for what is accepted).
    ///
    /// [`OwnedCache::new`]: super::OwnedCache::new
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

// The fields of a cell's count word, `StaticCacheCell::count`. The count of objects is the
// highest field, so that a subtract from it at 0 (the uncounted free that `uncount` catches)
// wraps that field alone and an add takes it back, the fields below untouched; the flags are
// the lowest bits, so that setting or flipping them commutes with the adds to the fields above.
// 64 bits on every architecture: a 32-bit word would not hold the three.

/// The cell is open: its registration is alive, and allocations through its type may use the
/// cache. Set by the registration once the cache is in the cell, cleared by its drop.
const OPEN: u64 = 1 << 0;
/// The cell was closed: its registration was dropped. Set by the drop, with `OPEN` cleared, in
/// one atomic operation.
const CLOSED: u64 = 1 << 1;
/// One allocation in flight: entered the count, its slab call not yet returned (or refused, and
/// not yet out). 24 bits: more than the tasks and interrupt contexts that can be in an
/// allocation at once (`PID_MAX_LIMIT` is 2^22).
const IN_FLIGHT_ONE: u64 = 1 << 2;
/// One object of the type's allocator: 38 bits, more objects than memory holds.
const LIVE_ONE: u64 = 1 << 26;
/// The field of the allocations in flight.
const IN_FLIGHT_MASK: u64 = LIVE_ONE - IN_FLIGHT_ONE;

/// Where a [`StaticCache`] keeps its C cache, the cache's registration state and its count of
/// live objects: a `static`, made by [`StaticCacheCell::new`].
///
/// # Invariants
///
/// `state` moves only forward, `UNINIT -> CREATING -> LIVE -> RETIRED`, except `CREATING ->
/// UNINIT` when creating the cache failed. In `LIVE` and `RETIRED`, `cache` is the cache that
/// the cell's one registration created, suitable for the type's `Item`, never changed again;
/// in `RETIRED` it was destroyed if the registration found no object counted, and is valid for
/// ever otherwise.
///
/// `count` holds, from its highest bits down: the objects handed out through the type's
/// [`Allocator`] (or made boxes by [`CacheRegistration::keep`]) whose free has not returned
/// (`LIVE_ONE` each); the allocations in flight (`IN_FLIGHT_ONE` each); `CLOSED`, set once the
/// registration's drop has closed the cell; `OPEN`, set while the registration is alive (from
/// after the cache is in the cell until the drop closes it). It changes only by atomic
/// read-modify-writes. `draining` counts down the allocations that were in flight when the
/// drop closed the cell and have not left yet (it may wrap below 0 before the drop adds them).
///
/// [`Allocator`]: crate::alloc::Allocator
pub struct StaticCacheCell {
    cache: AtomicPtr<ffi::kmem_cache>,
    state: AtomicU8,
    count: AtomicU64,
    draining: AtomicU64,
    /// An uncounted free was warned about.
    warned: AtomicBool,
}

impl StaticCacheCell {
    /// Creates an unregistered cell.
    #[expect(clippy::new_without_default)]
    pub const fn new() -> Self {
        // INVARIANT: `UNINIT`, not open, nothing counted.
        Self {
            cache: AtomicPtr::new(ptr::null_mut()),
            state: AtomicU8::new(UNINIT),
            count: AtomicU64::new(0),
            draining: AtomicU64::new(0),
            warned: AtomicBool::new(false),
        }
    }

    /// Returns `true` if a registration was made and dropped: the cell cannot be registered
    /// again in this boot.
    #[inline]
    pub fn is_retired(&self) -> bool {
        self.state.load(Ordering::Relaxed) == RETIRED
    }

    /// Returns how many objects of the type's allocator are alive: handed out through it (or
    /// made boxes by [`CacheRegistration::keep`]) and not freed (or given back with
    /// [`CacheRegistration::to_obj`]). A snapshot: other CPUs may allocate and free meanwhile.
    #[inline]
    pub fn live_objects(&self) -> usize {
        (self.count.load(Ordering::Relaxed) / LIVE_ONE) as usize
    }

    /// Takes an allocation that entered the count when it read `entered` out of flight, adding
    /// `delta`: minus one in flight, plus one object if it got one.
    #[inline]
    fn leave(&self, entered: u64, delta: u64) {
        // Release: the allocation's slab call happens before a destroy that the drop decides on
        // once it has acquired this (directly, or through `draining`).
        let left = self.count.fetch_add(delta, Ordering::Release);
        // In flight when the drop closed the cell (entered before the close, leaving after it):
        // one of those the drop waits for. One compare on a value the add returns.
        if entered & CLOSED == 0 && left & CLOSED != 0 {
            self.drained();
        }
    }

    /// Tells the drop waiting in [`CacheRegistration::drop`] that one more of the allocations
    /// it waits for has left.
    #[cold]
    fn drained(&self) {
        // Release: as in `leave`; the drop acquires it.
        self.draining.fetch_sub(1, Ordering::Release);
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
/// its cache, so `Box<Request, RequestCache>` is an object of it (see [`StaticCache`]). The
/// flags are one or more `CacheFlags` constants joined by `|`. The cache is created by
/// [`CacheRegistration::new`] (`RequestCache::register()`), in the module's init.
///
/// A driver keeps its objects as `Box<T, C>`s and allocates in bulk on the registration:
///
/// ```
/// # use kernel::prelude::*;
/// use kernel::slab_bulk::{CacheFlags, StaticCache};
///
/// kernel::static_cache! {
///     struct Packets([u8; 256]) = c"doc_which_packets", CacheFlags::HWCACHE_ALIGN;
/// }
///
/// let reg = Packets::register()?;
/// let kept: Box<[u8; 256], Packets> = Box::new([0xab; 256], GFP_KERNEL)?; // from the cache
/// let batch = reg.alloc_bulk_with::<16>(GFP_KERNEL, |_| [0; 256])?; // one bulk call
/// assert_eq!((kept[255], batch.len()), (0xab, 16));
/// drop((kept, batch));
/// drop(reg);
/// # Ok::<(), Error>(())
/// ```
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
/// Context: creating and dropping a registration may sleep (process context only). The drop
/// also waits, sleeping, for the allocations through `C` that are in the slab when it goes.
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
    /// Errors as [`OwnedCache::new`] (`EINVAL`, `ENOMEM`; the cell can then be registered
    /// again), and `EBUSY` if `C` has been registered before in this boot, also if that
    /// registration was dropped: objects that outlived it would otherwise go back to the new
    /// cache.
    ///
    /// [`OwnedCache::new`]: super::OwnedCache::new
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
                // Published by the `OPEN` below: an allocation that sees the cell open (its
                // acquiring add reads from this release or a later add of the word, all in its
                // release sequence) sees this store; an object handed to another thread is
                // handed with synchronisation of its own.
                cell.cache.store(cache.as_ptr().cast(), Ordering::Relaxed);
                // INVARIANT: the cell holds the new cache, for `C::Item`, is `LIVE`, and open
                // (it was not: nothing but this registration sets `OPEN`, once per cell).
                cell.state.store(LIVE, Ordering::Relaxed);
                cell.count.fetch_or(OPEN, Ordering::Release);
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
        // ends, which orders this increment before the drop reads the count.
        C::cell().count.fetch_add(LIVE_ONE, Ordering::Relaxed);
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
        // count to keep the cache.
        uncount::<C>();
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
        // INVARIANT: `LIVE -> RETIRED`; the pointer stays, valid if objects are left.
        cell.state.store(RETIRED, Ordering::Relaxed);
        // INVARIANT: closes the cell, open until now (type invariant): `OPEN` off and `CLOSED`
        // on in one operation. From here on an allocation through `C` is refused: its entry
        // reads the word after this. The allocations in flight in the word read here entered
        // before it, so saw the cell open (or saw it not yet open and are being refused), and
        // may be using the cache. Relaxed: nothing is published, and what must happen before a
        // destroy is acquired below.
        let closed = cell.count.fetch_xor(OPEN | CLOSED, Ordering::Relaxed);
        let in_flight = (closed & IN_FLIGHT_MASK) / IN_FLIGHT_ONE;
        if in_flight != 0 {
            // Each of them, leaving, sees `CLOSED` (it leaves after this) where its entry did
            // not, and counts `draining` down once; some may have done so already, which the
            // add brings back above 0. The value is then the number still in flight, never
            // below 0, and falls to 0 once they have all left. Allocations refused after the
            // close do not count in it: however many keep coming, the wait ends.
            cell.draining.fetch_add(in_flight, Ordering::Relaxed);
            // Acquiring: pairs with the Release of each count-down (all the changes of
            // `draining` are read-modify-writes, so the 0 read here is in the release sequence of
            // every one of them), which follows its allocation's last use of the cache and its
            // move to an object, if it got one.
            //
            // Context: this sleeps between checks (`relax`); it waits for slab calls that
            // entered before the close, which return in the time of one allocation, even one
            // that sleeps in reclaim on a task that can run only on this CPU.
            while cell.draining.load(Ordering::Acquire) != 0 {
                relax();
            }
        }
        // Acquiring: pairs with the Release of every free, and of every allocation's leaving
        // (the word changes only by read-modify-writes, so this read is in the release sequence
        // of each of them): what they did to the cache happens before a destroy decided here.
        // The value read is at least as late as the close (this thread's own operation) and as
        // every leaving of the allocations waited for above (they happen before the wait's
        // end): every object handed out before the close or by an allocation in flight at it
        // is in it, unless its free has returned.
        let live = cell.count.load(Ordering::Acquire) / LIVE_ONE;
        if live == 0 {
            // SAFETY: The cache is live and destroyed only here (type invariant). No borrowed
            // object or batch is left: they borrow `self`. No object of `C`'s allocator is left,
            // and the frees of those that were have returned; every allocation that entered
            // before the close has left the slab (waited for above), and every one after it is
            // refused without touching the cache.
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

/// One step of the registration's wait for allocations in flight: a short sleep, not a spin, as
/// an allocation in flight may sleep in the slab (direct reclaim) and, on a kernel without
/// preemption, on no other CPU than this one.
#[inline]
fn relax() {
    ffi::sleep_briefly();
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
/// item's alignment, `Allocator::MIN_ALIGN` from 6.18 on).
#[inline]
fn dangling<C: StaticCache>(align: usize) -> NonNull<[u8]> {
    let align = align.max(mem::align_of::<C::Item>());
    // SAFETY: An alignment is never 0, so neither is the address.
    let ptr = unsafe { NonNull::new_unchecked(ptr::null_mut::<u8>().wrapping_add(align)) };
    NonNull::slice_from_raw_parts(ptr, 0)
}

/// Allocates one object of `C`'s cache, counted in its cell, if the cell is open.
#[inline]
fn alloc_object<C: StaticCache>(flags: Flags, node: Node) -> Result<NonNull<u8>, AllocError> {
    let cell = C::cell();
    // Enters the count, and learns in the same add whether the cell is open: the registration's
    // drop closes it with one operation on the same word, so this add is either before the
    // close (the drop then sees this allocation in flight and waits for it to leave) or after it
    // (and sees the cell closed). Acquire: if the cell is open, this reads from the
    // registration's `OPEN` or from a later change of the word (each a read-modify-write, so in
    // the `OPEN`'s release sequence), and sees the cache stored before it.
    let entered = cell.count.fetch_add(IN_FLIGHT_ONE, Ordering::Acquire);
    // Out of flight again, with nothing, if this returns before `disarm`: refused, failed, or
    // (in userspace) unwinding from a panic in the slab.
    let leave = Leave { cell, entered };
    if entered & OPEN == 0 {
        // Before the registration, or after its drop: refused, the cache is not touched.
        return Err(AllocError);
    }
    // Stored before `OPEN`, which the add above acquired.
    let cache = cell.cache.load(Ordering::Relaxed);
    // SAFETY: `cache` is live: the cell was open when this allocation entered the count, so a
    // registration dropped since waits for it to leave before it reads the count. The call may
    // be made in any context `flags` allows, which is the caller's contract.
    let obj = unsafe {
        if node == NUMA_NO_NODE {
            ffi::alloc(cache, flags)
        } else {
            ffi::alloc_node(cache, flags, node)
        }
    };
    let obj = NonNull::new(obj.cast::<u8>()).ok_or(AllocError)?;
    // From in flight to an object, in one add: counted for as long as it lives, which keeps the
    // cache; `free_object` takes it out.
    leave.disarm();
    cell.leave(entered, LIVE_ONE.wrapping_sub(IN_FLIGHT_ONE));
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
    // Out of the count once the object is freed (also if the free panics, in userspace).
    let _uncount = Uncount::<C>(PhantomData);
    // The pointer was stored before this object was counted, and is never changed again.
    let cache = cell.cache.load(Ordering::Relaxed);
    // SAFETY: `obj` is a live object of `cache`, handed over by the caller. `cache` is valid
    // until `_uncount` is dropped: the object is counted, so the registration has not destroyed
    // the cache, and will not until the count drops.
    unsafe { ffi::free(cache, obj.as_ptr().cast()) };
}

/// Takes one object out of `C`'s count.
#[inline]
fn uncount<C: StaticCache>() {
    let cell = C::cell();
    // Release: pairs with the registration's count load, so that the free (and every use of the
    // cache by it) happens before a destroy that finds no object counted.
    let before = cell.count.fetch_sub(LIVE_ONE, Ordering::Release);
    // The count of objects is the word's highest field: below `LIVE_ONE`, it was 0.
    if before < LIVE_ONE {
        uncounted::<C>(cell);
    }
}

/// An object that was never counted left the count (the caller broke [`free_object`]'s or
/// `Box::from_raw`'s contract, see "What may reach the allocator" in `docs/design.md`): the
/// subtract wrapped the count of objects, and only it, as it is the highest field; takes it
/// back, and warns once per cell.
#[cold]
#[inline(never)]
fn uncounted<C: StaticCache>(cell: &StaticCacheCell) {
    cell.count.fetch_add(LIVE_ONE, Ordering::Relaxed);
    if !cell.warned.swap(true, Ordering::Relaxed) {
        crate::pr_warn!(
            "slab_bulk: {:?}: an object its allocator never counted was given back to it\n",
            C::NAME
        );
    }
}

/// `Allocator::realloc` for every kernel: one object per layout that fits (see "The `Layout`
/// question" in `docs/design.md`).
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
// pointer), valid until it is freed: the cell counts it from before the slab hands it out (in
// flight, then as an object) until its free has returned, and a registration dropped while it
// is counted keeps the cache. `realloc` is given, by its contract, only memory that this
// allocator returned (with its layout): here, also an object that `CacheRegistration::keep`
// made a box of, counted as an allocation is. No other object of the cache reaches it: one
// from an `Obj`, `ObjArray`, `SlotObjs` or `FreeBatch` of the registration was not returned by
// this allocator, and only `unsafe` code (`Box::from_raw`), breaking its own contract, could
// pass one (what then happens: "What may reach the allocator" in `docs/design.md`).
// From 6.18 the trait also asks for `MIN_ALIGN` (`alloc_min_align`): every object is aligned to
// `C::Item` (the cache's alignment), and a zero-sized allocation's dangling pointer too.
unsafe impl<C: StaticCache> Allocator for C {
    #[cfg(alloc_min_align)]
    const MIN_ALIGN: usize = mem::align_of::<C::Item>();

    #[inline]
    unsafe fn realloc(
        ptr: Option<NonNull<u8>>,
        layout: Layout,
        old_layout: Layout,
        flags: Flags,
        #[cfg(alloc_numa_node)] nid: crate::alloc::NumaNode,
    ) -> Result<NonNull<[u8]>, AllocError> {
        // From 6.18 the caller names a NUMA node; before, the allocator picks one.
        #[cfg(alloc_numa_node)]
        let node = node_id(nid);
        #[cfg(not(alloc_numa_node))]
        let node = NUMA_NO_NODE;
        // SAFETY: Forwarded from the caller.
        unsafe { realloc::<C>(ptr, layout, old_layout, flags, node) }
    }
}

/// The raw id of `nid`. `NumaNode` keeps it private to `kernel::alloc`; it is the one valid id
/// `NumaNode::new` accepts and compares equal to (a search only when a node was asked for).
#[cfg(alloc_numa_node)]
fn node_id(nid: crate::alloc::NumaNode) -> Node {
    if nid == crate::alloc::NumaNode::NO_NODE {
        return NUMA_NO_NODE;
    }
    (0..ffi::MAX_NUMNODES)
        .find(|&id| crate::alloc::NumaNode::new(id).is_ok_and(|n| n == nid))
        .unwrap_or(NUMA_NO_NODE)
}

/// Takes an allocation out of flight, with nothing, when dropped: one that was refused or
/// failed.
struct Leave<'a> {
    cell: &'a StaticCacheCell,
    /// The word the allocation's entry read.
    entered: u64,
}

impl Leave<'_> {
    /// The allocation got an object: it leaves by another add.
    #[inline]
    fn disarm(self) {
        mem::forget(self);
    }
}

impl Drop for Leave<'_> {
    #[inline]
    fn drop(&mut self) {
        self.cell.leave(self.entered, IN_FLIGHT_ONE.wrapping_neg());
    }
}

/// Takes one object out of `C`'s count when dropped.
struct Uncount<C: StaticCache>(PhantomData<C>);

impl<C: StaticCache> Drop for Uncount<C> {
    #[inline]
    fn drop(&mut self) {
        uncount::<C>();
    }
}
