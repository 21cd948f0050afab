// SPDX-License-Identifier: GPL-2.0

//! [`ObjArray`]: up to `N` objects of one cache, allocated and freed in bulk.

use super::bulk::{alloc_objects, free_objects, init_objects};
use super::cache::Cache;
use super::obj_slice::ObjSlice;
use super::object::Obj;
use crate::alf_queue::Batch;
use crate::alloc::Flags;
use crate::error::{code::*, Result};
use core::mem::{ManuallyDrop, MaybeUninit};
use core::ops::{Deref, DerefMut};
use core::ptr::{self, NonNull};

/// Up to `N` objects of the cache `'c`, owned together, allocated with one
/// `kmem_cache_alloc_bulk` and freed with one `kmem_cache_free_bulk`.
///
/// The objects' pointers sit in an inline array of `N` (an [`alf_queue::Batch`]), which is the
/// array the C bulk functions take: the safe path makes the C call and nothing else (plus
/// dropping the `T`s, for types that need it). Dropping the array frees every object in it, in
/// bulk. It dereferences to [`ObjSlice`], for access to the objects. [`ObjArray::raw_objs`] lends
/// that array to code that keeps objects of one cache in other containers, such as a pool's
/// [`alf_queue`] queues, to move them in bulk.
///
/// [`alf_queue`]: crate::alf_queue
/// [`alf_queue::Batch`]: crate::alf_queue::Batch
///
/// `N` is the capacity, fixed at compile time. An `ObjArray` is large (`N` words): one for
/// thousands of objects belongs on the heap, see [`ObjArray::init_in_place`].
///
/// Context: bulk allocation and bulk free must be called with IRQs enabled (checked by lockdep
/// when `CONFIG_PROVE_LOCKING` is set); allocation may sleep if `flags` allow it.
///
/// # Invariants
///
/// The pointers in `objs` are distinct live objects of `cache`, owned by the array, each
/// holding a valid `T`.
///
/// # Examples
///
/// ```
/// # use kernel::prelude::*;
/// use kernel::alloc::flags::GFP_KERNEL;
/// use kernel::slab_bulk::{CacheFlags, OwnedCache};
///
/// let cache = OwnedCache::<[u64; 4]>::new(c"doc_batch", CacheFlags::NO_MERGE)?;
/// // Sixteen objects in one call, each initialised from its index.
/// let mut batch = cache.alloc_bulk_with::<16>(GFP_KERNEL, |i| [i as u64; 4])?;
/// assert_eq!(batch.len(), 16);
/// assert!(batch.iter().enumerate().all(|(i, obj)| obj[3] == i as u64));
/// // Take one out: it lives on alone and frees itself.
/// let last = batch.pop().unwrap();
/// assert_eq!(last[0], 15);
/// drop(batch); // 15 objects, one `kmem_cache_free_bulk`.
/// # drop(last);
/// # Ok::<(), Error>(())
/// ```
pub struct ObjArray<'c, T, const N: usize> {
    cache: &'c Cache<T>,
    objs: Batch<NonNull<T>, N>,
}

// SAFETY: The `ObjArray` owns its `T`s (see `Obj`'s `Send`).
unsafe impl<T: Send, const N: usize> Send for ObjArray<'_, T, N> {}
// SAFETY: `&ObjArray` only gives `&T`.
unsafe impl<T: Sync, const N: usize> Sync for ObjArray<'_, T, N> {}

/// The constructors of full [`ObjArray`]s: bulk allocations from a cache.
impl<T> Cache<T> {
    /// Allocates exactly `N` uninitialised objects in one bulk call.
    ///
    /// All or nothing: on failure nothing is kept and the error is `ENOMEM`. `N` must be at
    /// least 1, which is checked when the function is compiled. IRQs must be enabled.
    #[inline]
    pub fn alloc_bulk<const N: usize>(
        &self,
        flags: Flags,
    ) -> Result<ObjArray<'_, MaybeUninit<T>, N>> {
        const { assert!(N > 0, "a bulk allocation needs at least one object") };
        let mut batch = ObjArray::new(self.uninit());
        batch.alloc(N, flags)?;
        Ok(batch)
    }

    /// Allocates exactly `N` objects in one bulk call, initialising object `i` to `init(i)`.
    ///
    /// All or nothing, as [`Cache::alloc_bulk`].
    #[inline]
    pub fn alloc_bulk_with<const N: usize>(
        &self,
        flags: Flags,
        init: impl FnMut(usize) -> T,
    ) -> Result<ObjArray<'_, T, N>> {
        Ok(self.alloc_bulk::<N>(flags)?.init_with(init))
    }
}

impl<'c, T, const N: usize> ObjArray<'c, T, N> {
    /// Creates an empty `ObjArray` for objects of `cache`.
    #[inline]
    pub const fn new(cache: &'c Cache<T>) -> Self {
        // INVARIANT: no object.
        Self {
            cache,
            objs: Batch::new(),
        }
    }

    /// Makes an empty `ObjArray` in place, writing two words and leaving its pointer array
    /// uninitialised.
    ///
    /// Use it to put a large one on the heap without building it on the stack first:
    ///
    /// ```
    /// # use kernel::prelude::*;
    /// use kernel::alloc::{flags::GFP_KERNEL, KBox};
    /// use kernel::slab_bulk::{CacheFlags, OwnedCache, ObjArray};
    ///
    /// let cache = OwnedCache::<[u8; 256]>::new(c"doc_big_batch", CacheFlags::NONE)?;
    /// let mut slot = KBox::<ObjArray<'_, _, 4096>>::new_uninit(GFP_KERNEL)?;
    /// let batch = ObjArray::init_in_place(&mut slot, cache.uninit());
    /// batch.alloc(4096, GFP_KERNEL)?;
    /// assert!(batch.is_full());
    /// batch.free();
    /// assert!(batch.is_empty());
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// The `ObjArray` in `slot` is never dropped by the box: call [`ObjArray::free`] before the
    /// box goes, or the objects leak (safely; the cache then warns when destroyed).
    #[inline]
    pub fn init_in_place<'s>(slot: &'s mut MaybeUninit<Self>, cache: &'c Cache<T>) -> &'s mut Self {
        let this = slot.as_mut_ptr();
        // SAFETY: `this` points to writable memory for a `Self`; the fields are reached through
        // raw pointers, without references to uninitialised data, and `objs`, being
        // `MaybeUninit` here, is initialised in place by `Batch::init_in_place`.
        unsafe {
            ptr::addr_of_mut!((*this).cache).write(cache);
            let objs = ptr::addr_of_mut!((*this).objs).cast::<MaybeUninit<Batch<NonNull<T>, N>>>();
            Batch::init_in_place(&mut *objs);
        }
        // SAFETY: Both fields are initialised. INVARIANT: no object.
        unsafe { slot.assume_init_mut() }
    }

    /// Returns the cache the objects belong to.
    #[inline]
    pub fn cache(&self) -> &'c Cache<T> {
        self.cache
    }

    /// Returns the number of objects in the array.
    #[inline]
    pub fn len(&self) -> usize {
        self.objs.len()
    }

    /// Returns `true` if the array holds no object.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.objs.is_empty()
    }

    /// Returns `true` if the array holds `N` objects.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.objs.is_full()
    }

    /// Returns the capacity `N`.
    #[inline]
    pub const fn capacity(&self) -> usize {
        N
    }

    /// Returns the object pointers.
    #[inline]
    fn ptrs(&self) -> &[NonNull<T>] {
        self.objs.as_slice()
    }

    /// Lends out the array of object pointers, for moving objects in bulk between this `ObjArray`
    /// and other containers of the same cache's objects (a per-CPU pool's queues, say) without
    /// wrapping each one in an [`Obj`].
    ///
    /// # Safety
    ///
    /// When the borrow ends, every pointer in the array must be a distinct live object of
    /// [`ObjArray::cache`] holding a valid `T`, owned by nobody else; pointers the caller takes
    /// out, it owns (and must free, or put into an `ObjArray` or [`Obj`] of that cache).
    ///
    /// # Examples
    ///
    /// A pool parks objects in a queue and takes them back, in bulk, one copy each way:
    ///
    /// ```
    /// # use kernel::prelude::*;
    /// use core::ptr::NonNull;
    /// use kernel::alf_queue::SpscQueue;
    /// use kernel::alloc::flags::GFP_KERNEL;
    /// use kernel::slab_bulk::{CacheFlags, OwnedCache};
    ///
    /// let cache = OwnedCache::<u64>::new(c"doc_pool", CacheFlags::NO_MERGE)?;
    /// let mut parked = SpscQueue::<NonNull<u64>, 32>::new();
    /// let (mut producer, mut consumer) = parked.split();
    /// let mut batch = cache.alloc_bulk_with::<16>(GFP_KERNEL, |i| i as u64)?;
    /// // SAFETY: The queue holds objects of `cache` only, and gives them all back below.
    /// unsafe {
    ///     assert!(producer.enqueue_bulk(batch.raw_objs()).is_ok());
    ///     assert!(batch.is_empty());
    ///     assert!(consumer.dequeue_bulk(batch.raw_objs(), 16).is_ok());
    /// }
    /// assert_eq!(batch.len(), 16);
    /// assert!(batch.iter().enumerate().all(|(i, obj)| *obj == i as u64));
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    pub unsafe fn raw_objs(&mut self) -> &mut Batch<NonNull<T>, N> {
        &mut self.objs
    }

    /// Adds `obj` to the array.
    ///
    /// Hands `obj` back if the array is full or if `obj` belongs to another cache.
    #[inline]
    pub fn push(&mut self, obj: Obj<'c, T>) -> Result<(), Obj<'c, T>> {
        if !ptr::eq(obj.cache(), self.cache) {
            return Err(obj);
        }
        // INVARIANT: the object is a live, owned object of `cache`, distinct from the others
        // (it was owned by `obj`).
        self.objs.push(obj.into_raw()).map_err(|ptr| {
            // SAFETY: `ptr` came from `obj` just above: a live object of `cache` holding a
            // valid `T`, owned by nobody but the `Obj` made again here.
            unsafe { Obj::from_raw(self.cache, ptr) }
        })
    }

    /// Takes the last object out of the array.
    #[inline]
    pub fn pop(&mut self) -> Option<Obj<'c, T>> {
        // INVARIANT: the object leaves the array.
        let ptr = self.objs.pop()?;
        // SAFETY: `ptr` is a live object of `cache` holding a valid `T`, now owned by nobody
        // but the returned `Obj`.
        Some(unsafe { Obj::from_raw(self.cache, ptr) })
    }

    /// Frees every object of the array with one `kmem_cache_free_bulk`, leaving it empty.
    ///
    /// Should a `T::drop` panic (in userspace; the kernel aborts), the other `T`s are still
    /// dropped and every object is freed, once: the array gives its objects up before it drops
    /// any of them. Must be called with IRQs enabled.
    #[inline]
    pub fn free(&mut self) {
        let len = self.objs.len();
        if len == 0 {
            return;
        }
        // SAFETY: The array gives up its objects before any `T` is dropped. INVARIANT: no
        // object.
        unsafe { self.objs.set_len(0) };
        // SAFETY: The first `len` entries are the array's objects, distinct, live, of `cache`,
        // each holding a valid `T`, given up just above.
        unsafe { free_objects(self.cache.as_raw(), self.objs.as_mut_ptr(), len) };
    }

    /// Reinterprets the array for another object type of the same layout.
    ///
    /// # Safety
    ///
    /// Every object must hold a valid `U`, and `Cache<U>` must be the same C cache as `cache`.
    #[inline]
    unsafe fn cast<U>(self) -> ObjArray<'c, U, N> {
        let this = ManuallyDrop::new(self);
        let mut out = ObjArray::new(
            // SAFETY: Forwarded from the caller: the same cache, suitable for `U`.
            unsafe { Cache::from_raw(this.cache.as_raw()) },
        );
        // INVARIANT: the same objects, now owned by `out`, valid for `U` (caller's contract);
        // they fit, as both hold `N`.
        out.objs
            .fill_from(this.ptrs().iter().map(|p| p.cast::<U>()));
        out
    }
}

impl<'c, T, const N: usize> ObjArray<'c, T, N> {
    /// Bulk-allocates `n` objects into `objs[len..len + n]`, not yet counted in `len`, and
    /// returns `len` (so that the caller need not read it back from memory the callee could
    /// have written, as far as the compiler knows).
    ///
    /// On success the new entries are live objects of `cache` with uninitialised contents,
    /// owned by nobody: the caller initialises them and counts them in, or leaks them.
    #[inline]
    fn alloc_uncounted(&mut self, n: usize, flags: Flags) -> Result<usize> {
        // `n == 0 || n > remaining` in one compare: `n - 1` wraps to `usize::MAX` for 0.
        if n.wrapping_sub(1) >= self.objs.remaining() {
            return Err(EINVAL);
        }
        let len = self.objs.len();
        // SAFETY: entries `len..len + n` are in bounds (checked above) and unused.
        unsafe { alloc_objects(self.cache, flags, n, self.objs.as_mut_ptr().add(len)) }?;
        Ok(len)
    }

    /// Allocates `n` objects in one bulk call, initialises the `i`-th new one to `init(i)` and
    /// appends them. Errors as [`ObjArray::alloc`].
    ///
    /// All or nothing also if `init` panics (in userspace): the values made so far are dropped,
    /// the `n` new objects freed, and the array is left as it was.
    #[inline]
    pub fn alloc_with(&mut self, n: usize, flags: Flags, init: impl FnMut(usize) -> T) -> Result {
        let len = self.alloc_uncounted(n, flags)?;
        // SAFETY: `len < N`: `alloc_uncounted` checked that `n > 0` entries are free.
        let new = unsafe { self.objs.as_mut_ptr().add(len) };
        // SAFETY: `alloc_uncounted` made entries `len..len + n` distinct live objects of `cache`
        // with uninitialised contents, owned by nobody.
        unsafe { init_objects(self.cache.as_raw(), new, n, init) };
        // SAFETY: `n` new distinct live objects of `cache`, each holding a valid `T`, and
        // `len + n <= N`, so the sum does not overflow.
        unsafe { self.objs.set_len(add_in_bounds(len, n)) };
        Ok(())
    }
}

impl<'c, T, const N: usize> ObjArray<'c, MaybeUninit<T>, N> {
    /// Allocates `n` uninitialised objects in one bulk call and appends them.
    ///
    /// All or nothing. Errors: `EINVAL` if `n` is 0 or more than the free room (`N - len`),
    /// `ENOMEM` if the allocator failed, in which case the array is unchanged and nothing
    /// leaked (the C function frees what it got before failing). IRQs must be enabled.
    #[inline]
    pub fn alloc(&mut self, n: usize, flags: Flags) -> Result {
        let len = self.alloc_uncounted(n, flags)?;
        // SAFETY: `n` new distinct live objects of `cache`; `MaybeUninit<T>` accepts any
        // content; `len + n <= N`, so the sum does not overflow (as in `alloc_with`).
        unsafe { self.objs.set_len(add_in_bounds(len, n)) };
        Ok(())
    }

    /// Initialises every object, object `i` to `init(i)`, and returns the initialised objects.
    ///
    /// Should `init` panic (in userspace), the values made so far are dropped and every object
    /// is freed.
    #[inline]
    pub fn init_with(self, init: impl FnMut(usize) -> T) -> ObjArray<'c, T, N> {
        // The array is not dropped: `init_objects` owns its objects until they are initialised,
        // and frees them should `init` panic.
        let mut this = ManuallyDrop::new(self);
        let len = this.len();
        // SAFETY: The array's `len` objects are distinct live objects of `cache`, large enough
        // for a `T` (the same layout as `MaybeUninit<T>`), handed over (`this` is not dropped).
        unsafe {
            init_objects(
                this.cache.as_raw(),
                this.objs.as_mut_ptr().cast(),
                len,
                init,
            )
        };
        // SAFETY: Every object now holds a valid `T`; `Cache<T>` and `Cache<MaybeUninit<T>>`
        // are the same C cache.
        unsafe { ManuallyDrop::into_inner(this).cast() }
    }
}

impl<T, const N: usize> Deref for ObjArray<'_, T, N> {
    type Target = ObjSlice<T>;

    #[inline]
    fn deref(&self) -> &ObjSlice<T> {
        // SAFETY: The array's pointers are distinct live objects holding a valid `T`, owned by
        // the array (type invariant), which the shared borrow keeps from changing them.
        unsafe { ObjSlice::from_ptrs(self.ptrs()) }
    }
}

impl<T, const N: usize> DerefMut for ObjArray<'_, T, N> {
    #[inline]
    fn deref_mut(&mut self) -> &mut ObjSlice<T> {
        // SAFETY: As in `deref`; the borrow is unique.
        unsafe { ObjSlice::from_ptrs_mut(self.objs.as_mut_slice()) }
    }
}

impl<T, const N: usize> Drop for ObjArray<'_, T, N> {
    #[inline]
    fn drop(&mut self) {
        self.free();
    }
}

/// Returns `len + n`, telling the compiler that the sum does not overflow, so that it knows
/// the new length is not 0 when `n` is not (a later `free` needs no empty check):
/// `usize::unchecked_add` in a form that 6.12's minimum rustc, 1.78, has.
///
/// # Safety
///
/// `len + n` must not overflow.
#[inline(always)]
unsafe fn add_in_bounds(len: usize, n: usize) -> usize {
    match len.checked_add(n) {
        Some(sum) => sum,
        // SAFETY: The caller guarantees that the sum does not overflow.
        None => unsafe { core::hint::unreachable_unchecked() },
    }
}
