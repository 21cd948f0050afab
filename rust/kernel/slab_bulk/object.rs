// SPDX-License-Identifier: GPL-2.0

//! [`Obj`]: one object of a slab cache, owned, freed to its own cache when dropped.

use super::cache::Cache;
use super::ffi;
use crate::alloc::Flags;
use crate::error::{code::*, Result};
use core::ffi::c_void;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{self, ManuallyDrop, MaybeUninit};
use core::ops::{Deref, DerefMut};
use core::ptr::{self, NonNull};

/// An object of the slab cache `'c`, holding a `T`, like a [`KBox`] whose memory comes from a
/// [`Cache`].
///
/// Dropping it drops the `T` and frees the memory with `kmem_cache_free` to the cache it came
/// from: there is no way to name another cache, so an object cannot go back to the wrong one,
/// and the borrow of `'c` keeps the cache alive while the object is.
///
/// `Obj<'c, MaybeUninit<T>>` is an uninitialised object: it can be written ([`Obj::write`]) or
/// freed, never read.
///
/// [`KBox`]: crate::alloc::KBox
///
/// # Invariants
///
/// `ptr` is a live object of `cache`, owned by this value, holding a valid `T`.
pub struct Obj<'c, T> {
    ptr: NonNull<T>,
    cache: &'c Cache<T>,
    _owns: PhantomData<T>,
}

// SAFETY: An `Obj` owns its `T`, so it may move to another thread when `T` may; the slab
// allocator accepts frees from any CPU; `&Cache<T>` is `Send` because `Cache<T>` is `Sync`.
unsafe impl<T: Send> Send for Obj<'_, T> {}
// SAFETY: `&Obj` only gives `&T`.
unsafe impl<T: Sync> Sync for Obj<'_, T> {}

/// The constructors of [`Obj`]: single allocations from a cache.
impl<T> Cache<T> {
    /// Allocates one object and moves `value` into it.
    ///
    /// Returns `ENOMEM` if the allocator has no memory for `flags`; `value` is dropped then.
    #[inline]
    pub fn alloc(&self, value: T, flags: Flags) -> Result<Obj<'_, T>> {
        Ok(self.alloc_uninit(flags)?.write(value))
    }

    /// Allocates one uninitialised object; [`Obj::write`] initialises it.
    #[inline]
    pub fn alloc_uninit(&self, flags: Flags) -> Result<Obj<'_, MaybeUninit<T>>> {
        let cache = self.uninit();
        // SAFETY: `as_raw` is a live cache (type invariant); `kmem_cache_alloc` may be called in
        // any context that `flags` allows, which is the caller's contract.
        let ptr = unsafe { ffi::alloc(cache.as_raw(), flags) };
        let ptr = NonNull::new(ptr.cast::<MaybeUninit<T>>()).ok_or(ENOMEM)?;
        // SAFETY: `ptr` is a new object of `cache`, owned by nobody else.
        Ok(unsafe { Obj::from_raw(cache, ptr) })
    }

    /// Allocates one object, preferably on NUMA node `node`, and moves `value` into it
    /// (`kmem_cache_alloc_node`).
    ///
    /// `node` is a node id or [`NUMA_NO_NODE`] (no preference). Errors: `EINVAL` if `node` is
    /// neither (negative, or not below `MAX_NUMNODES`); `ENOMEM` as [`Cache::alloc`]. `value` is
    /// dropped on error.
    ///
    /// [`NUMA_NO_NODE`]: super::NUMA_NO_NODE
    #[inline]
    pub fn alloc_node(&self, value: T, flags: Flags, node: i32) -> Result<Obj<'_, T>> {
        Ok(self.alloc_uninit_node(flags, node)?.write(value))
    }

    /// Allocates one uninitialised object, preferably on NUMA node `node`; errors as
    /// [`Cache::alloc_node`].
    #[inline]
    pub fn alloc_uninit_node(&self, flags: Flags, node: i32) -> Result<Obj<'_, MaybeUninit<T>>> {
        if !ffi::is_node(node) {
            return Err(EINVAL);
        }
        let cache = self.uninit();
        // SAFETY: `as_raw` is a live cache (type invariant), `node` is one C takes (checked
        // above); the context is the caller's contract, as in `alloc_uninit`.
        let ptr = unsafe { ffi::alloc_node(cache.as_raw(), flags, node) };
        let ptr = NonNull::new(ptr.cast::<MaybeUninit<T>>()).ok_or(ENOMEM)?;
        // SAFETY: `ptr` is a new object of `cache`, owned by nobody else.
        Ok(unsafe { Obj::from_raw(cache, ptr) })
    }
}

impl<'c, T> Obj<'c, T> {
    /// Takes ownership of a raw object.
    ///
    /// # Safety
    ///
    /// `ptr` must be a live object of `cache` holding a valid `T` (for `T = MaybeUninit<U>` any
    /// content is valid), owned by nobody else: typically a pointer from [`Obj::into_raw`].
    #[inline]
    pub unsafe fn from_raw(cache: &'c Cache<T>, ptr: NonNull<T>) -> Self {
        // INVARIANT: guaranteed by the caller.
        Self {
            ptr,
            cache,
            _owns: PhantomData,
        }
    }

    /// Gives up ownership without freeing; [`Obj::from_raw`] takes it back.
    #[inline]
    pub fn into_raw(self) -> NonNull<T> {
        ManuallyDrop::new(self).ptr
    }

    /// Returns the cache this object belongs to.
    #[inline]
    pub fn cache(&self) -> &'c Cache<T> {
        self.cache
    }

    /// Drops the value and returns the object's memory as an uninitialised object.
    ///
    /// Should `T::drop` panic (in userspace), the object is freed.
    #[inline]
    pub fn drop_contents(self) -> Obj<'c, MaybeUninit<T>> {
        let this = ManuallyDrop::new(self);
        let free = FreeOnDrop {
            cache: this.cache.as_raw(),
            obj: this.ptr.as_ptr().cast(),
        };
        // SAFETY: `ptr` holds a valid `T` (type invariant) that nobody uses after this.
        unsafe { ptr::drop_in_place(this.ptr.as_ptr()) };
        // The object lives on, uninitialised.
        mem::forget(free);
        // SAFETY: The object is still live and owned; `MaybeUninit<T>` accepts any content.
        unsafe { Obj::from_raw(this.cache.uninit(), this.ptr.cast()) }
    }
}

impl<'c, T> Obj<'c, MaybeUninit<T>> {
    /// Initialises the object with `value`.
    #[inline]
    pub fn write(self, value: T) -> Obj<'c, T> {
        let this = ManuallyDrop::new(self);
        // SAFETY: `ptr` is a live, owned object, valid for a write of `T` (same layout as
        // `MaybeUninit<T>`).
        unsafe { this.ptr.as_ptr().cast::<T>().write(value) };
        // SAFETY: The object now holds a valid `T`.
        unsafe { this.assume_init_ref() }
    }

    /// Declares the object initialised.
    ///
    /// # Safety
    ///
    /// The object must hold a valid `T`.
    #[inline]
    pub unsafe fn assume_init(self) -> Obj<'c, T> {
        let this = ManuallyDrop::new(self);
        // SAFETY: Forwarded from the caller.
        unsafe { this.assume_init_ref() }
    }

    /// Builds the initialised `Obj` for the same object, leaving `self` to be forgotten.
    ///
    /// # Safety
    ///
    /// The object must hold a valid `T`, and `self` must not be dropped afterwards.
    #[inline]
    unsafe fn assume_init_ref(&self) -> Obj<'c, T> {
        // SAFETY: The cache of `MaybeUninit<T>` objects is the cache of `T` objects
        // (`Cache::uninit` is a cast); the object holds a valid `T` and is handed over.
        unsafe { Obj::from_raw(Cache::from_raw(self.cache.as_raw()), self.ptr.cast()) }
    }
}

impl<T> Deref for Obj<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: `ptr` holds a valid `T` owned by `self` (type invariant).
        unsafe { self.ptr.as_ref() }
    }
}

impl<T> DerefMut for Obj<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: As in `deref`, and `&mut self` makes the access unique.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T: fmt::Debug> fmt::Debug for Obj<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T> Drop for Obj<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `ptr` is a live object of `cache` holding a valid `T`, owned by `self` (type
        // invariant) and not used after this.
        unsafe { drop_and_free(self.cache.as_raw(), self.ptr) };
    }
}

/// Drops the `T` in `obj`, then frees `obj` to `cache` with `kmem_cache_free`, also should
/// `T::drop` panic (in userspace): how an [`Obj`] ends an object's life.
///
/// # Safety
///
/// `obj` must be a live object of `cache` holding a valid `T`, owned by the caller, who gives
/// it up: neither the `T` nor the object may be used afterwards.
#[inline]
unsafe fn drop_and_free<T>(cache: *mut ffi::kmem_cache, obj: NonNull<T>) {
    // INVARIANT: `obj` is a live object of `cache` owned by the caller (safety contract),
    // handed to the guard, which frees it after the `T` is dropped, also should `T::drop`
    // panic.
    let _free = FreeOnDrop {
        cache,
        obj: obj.as_ptr().cast(),
    };
    // SAFETY: `obj` holds a valid `T` that the caller gives up, dropped exactly once, here.
    unsafe { ptr::drop_in_place(obj.as_ptr()) };
}

/// Frees one object with `kmem_cache_free` when dropped: the drop guard that still frees an
/// object whose `T::drop` panics, and the way [`Obj`]'s drop frees it otherwise.
///
/// # Invariants
///
/// `obj` is a live object of `cache`, owned by the guard and holding no value that needs a
/// drop any more once the guard is dropped.
struct FreeOnDrop {
    cache: *mut ffi::kmem_cache,
    obj: *mut c_void,
}

impl Drop for FreeOnDrop {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `obj` is a live object of `cache` owned by the guard (type invariant), not
        // used after this.
        unsafe { ffi::free(self.cache, self.obj) };
    }
}
