// SPDX-License-Identifier: GPL-2.0

//! Typed slab caches: [`OwnedCache`] owns one, [`Cache`] is what its objects refer to.

use super::ffi;
use crate::error::{code::*, Result};
use crate::types::Opaque;
use core::ffi::CStr;
use core::marker::PhantomData;
use core::mem::{self, MaybeUninit};
use core::ops::{BitOr, Deref};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicUsize, Ordering};

/// Flags for [`OwnedCache::new`], the `SLAB_*` flags of the C API.
///
/// The bit values depend on the kernel configuration; they come from bindgen, never from
/// constants written here. Flags whose semantics safe Rust could not uphold are not offered:
/// `SLAB_TYPESAFE_BY_RCU` lets an object be reused while readers still see it, and
/// `SLAB_PANIC` turns the error that [`OwnedCache::new`] returns into a panic.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CacheFlags(ffi::slab_flags_t);

impl CacheFlags {
    /// No flags.
    pub const NONE: Self = Self(0);
    /// Align objects on hardware cache lines (`SLAB_HWCACHE_ALIGN`).
    pub const HWCACHE_ALIGN: Self = Self(ffi::SLAB_HWCACHE_ALIGN);
    /// Never merge this cache with another cache of compatible size (`SLAB_NO_MERGE`).
    ///
    /// A cache of its own keeps its objects on its own slab pages, which gives bulk free more
    /// objects of the same page to free at once.
    pub const NO_MERGE: Self = Self(ffi::SLAB_NO_MERGE);
    /// Charge the objects to the allocating task's memory cgroup (`SLAB_ACCOUNT`).
    pub const ACCOUNT: Self = Self(ffi::SLAB_ACCOUNT);
    /// Objects are reclaimable, e.g. by a shrinker (`SLAB_RECLAIM_ACCOUNT`).
    pub const RECLAIM_ACCOUNT: Self = Self(ffi::SLAB_RECLAIM_ACCOUNT);
    /// Let fault injection with `failslab`'s `cache-filter` target this cache (`SLAB_FAILSLAB`).
    pub const FAILSLAB: Self = Self(ffi::SLAB_FAILSLAB);
    /// Poison objects on free and check the poison on allocation (`SLAB_POISON`, debug).
    pub const POISON: Self = Self(ffi::SLAB_POISON);
    /// Surround objects with red zones (`SLAB_RED_ZONE`, debug).
    pub const RED_ZONE: Self = Self(ffi::SLAB_RED_ZONE);

    /// Returns the raw `slab_flags_t` value.
    #[inline]
    pub const fn as_raw(self) -> ffi::slab_flags_t {
        self.0
    }

    /// Returns the flags of `self` and of `other`: the `|` of constant contexts (such as a
    /// [`StaticCache::FLAGS`]), where the operator, a trait method, cannot be called.
    ///
    /// [`StaticCache::FLAGS`]: super::StaticCache::FLAGS
    #[inline]
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl BitOr for CacheFlags {
    type Output = Self;

    #[inline]
    fn bitor(self, rhs: Self) -> Self {
        self.union(rhs)
    }
}

/// A slab cache of objects of type `T`, as its objects and batches refer to it.
///
/// A `&Cache<T>` is a pointer to the C `struct kmem_cache` itself, so an [`Obj`] costs one word
/// for its cache, and passing the cache to C costs nothing. Caches are owned by an [`OwnedCache`]
/// (which dereferences to `Cache`), or by C code, see [`Cache::from_raw`].
///
/// Objects are allocated with [`Cache::alloc`] and [`Cache::alloc_uninit`] (in `object.rs`,
/// beside [`Obj`]), [`ObjArray`]s of them with [`Cache::alloc_bulk`] and
/// [`Cache::alloc_bulk_with`] (in `obj_array.rs`).
///
/// [`Obj`]: super::Obj
/// [`ObjArray`]: super::ObjArray
///
/// # Invariants
///
/// `raw` is a live `struct kmem_cache` whose objects are at least as large and as aligned as `T`.
#[repr(transparent)]
pub struct Cache<T> {
    raw: Opaque<ffi::kmem_cache>,
    _type: PhantomData<fn(T) -> T>,
}

// SAFETY: A `struct kmem_cache` may be used from any thread: the slab allocator synchronises
// itself. A `Cache<T>` holds no `T`; objects that do are `Send` or `Sync` only when `T` is.
unsafe impl<T> Send for Cache<T> {}
// SAFETY: As above; all methods taking `&self` may be called concurrently.
unsafe impl<T> Sync for Cache<T> {}

impl<T> Cache<T> {
    /// Creates a reference to a cache that somebody else owns.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a live `struct kmem_cache` whose objects are at least `size_of::<T>()`
    /// bytes large and aligned to `align_of::<T>()`, and the cache must outlive `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *mut ffi::kmem_cache) -> &'a Self {
        // SAFETY: `Cache<T>` is `repr(transparent)` over the C struct (`Opaque` and the
        // zero-sized marker add nothing), and the caller guarantees that the cache is live and
        // suitable for `T` for `'a`, which is the type invariant.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// Returns the C `struct kmem_cache` pointer.
    #[inline]
    pub fn as_raw(&self) -> *mut ffi::kmem_cache {
        self.raw.get()
    }

    /// Returns the same cache typed for uninitialised objects.
    #[inline]
    pub fn uninit(&self) -> &Cache<MaybeUninit<T>> {
        // SAFETY: `MaybeUninit<T>` has the size and alignment of `T`, so the invariant holds for
        // the same C cache; both types are `repr(transparent)` over the same C struct.
        unsafe { Cache::from_raw(self.as_raw()) }
    }
}

/// An owned slab cache of objects of type `T` (`kmem_cache_create` / `kmem_cache_destroy`).
///
/// It dereferences to [`Cache`], through which objects are allocated. Objects and batches
/// borrow the cache, so it cannot be destroyed while any of them is alive.
///
/// Something that keeps using the cache from callbacks the kernel calls, as a
/// [`QMemPool`]'s shrinker and CPU hotplug teardown do, must not outlive the cache either, but a
/// borrow cannot promise that: leaking the borrower with `mem::forget` is safe and ends the
/// borrow while its callbacks stay registered. Such a user pins the cache
/// ([`OwnedCache::pin_for`]) for as long as it lives and unpins it when dropped; a cache dropped
/// while pinned is not destroyed but leaked, with a warning, so the callbacks of a leaked
/// borrower find it alive. An object leaked with `mem::forget` needs no pin: nothing uses it
/// again.
///
/// Context: creating and destroying a cache may sleep (process context only).
///
/// [`QMemPool`]: crate::qmempool::QMemPool
///
/// # Invariants
///
/// - `cache` was returned by `__kmem_cache_create_args` for objects of the size and alignment of
///   `T`, and is destroyed at most once, when this value is dropped, and only if `pins` is 0
///   then.
/// - `pins` counts the pins taken with [`OwnedCache::pin_for`] and not yet given back.
/// - The layout does not depend on `T` (`repr(C)`, a pointer and a counter), so a
///   `OwnedCache<T>` may be viewed as an `OwnedCache<MaybeUninit<T>>` ([`OwnedCache::uninit`]).
///
/// # Examples
///
/// ```
/// # use kernel::prelude::*;
/// use kernel::alloc::flags::GFP_KERNEL;
/// use kernel::slab_bulk::{CacheFlags, OwnedCache};
///
/// struct Packet {
///     len: u32,
///     data: [u8; 60],
/// }
///
/// let cache = OwnedCache::<Packet>::new(c"doc_packet", CacheFlags::HWCACHE_ALIGN)?;
/// let mut pkt = cache.alloc(Packet { len: 0, data: [0; 60] }, GFP_KERNEL)?;
/// pkt.len = 60;
/// pkt.data[59] = 0xff;
/// assert_eq!((pkt.len, pkt.data[59]), (60, 0xff));
/// drop(pkt); // Back to `cache`; only now may the cache be dropped.
/// # Ok::<(), Error>(())
/// ```
#[repr(C)]
pub struct OwnedCache<T> {
    cache: NonNull<Cache<T>>,
    pins: AtomicUsize,
}

// SAFETY: The cache pointer may be used and destroyed from any thread (see `Cache`).
unsafe impl<T> Send for OwnedCache<T> {}
// SAFETY: Only `&Cache<T>`, which is `Sync`, is reachable through `&OwnedCache<T>`.
unsafe impl<T> Sync for OwnedCache<T> {}

/// The longest cache name accepted (the C API has no limit; names show in `/proc/slabinfo`).
pub const MAX_NAME_LEN: usize = 64;

impl<T> OwnedCache<T> {
    /// Creates a cache for objects of type `T`, named `name`.
    ///
    /// Size and alignment are those of `T`. The name is copied by the kernel. Errors:
    /// - `EINVAL`: `name` is empty, longer than [`MAX_NAME_LEN`] or has a character that is not
    ///   printable ASCII or is a space or `/` (it names a sysfs directory and a `/proc/slabinfo`
    ///   column); `T` is zero-sized or larger than the largest slab object (`KMALLOC_MAX_SIZE`).
    /// - `ENOMEM`: the kernel could not create the cache.
    pub fn new(name: &CStr, flags: CacheFlags) -> Result<Self> {
        // INVARIANT: `create` returns a new cache for `T`, destroyed only by `drop`.
        Ok(Self {
            cache: create(name, flags)?,
            pins: AtomicUsize::new(0),
        })
    }

    /// Returns the same cache typed for uninitialised objects.
    #[inline]
    pub fn uninit(&self) -> &OwnedCache<MaybeUninit<T>> {
        // SAFETY: `OwnedCache` is `repr(C)` with a layout that does not depend on `T` (type
        // invariant), and the C cache suits `MaybeUninit<T>`, of `T`'s size and alignment.
        unsafe { &*ptr::from_ref(self).cast::<OwnedCache<MaybeUninit<T>>>() }
    }

    /// Pins the cache for a user that reaches it from kernel callbacks: until the returned
    /// [`CachePin`] is dropped, dropping the cache leaks it (with a warning) instead of
    /// destroying it. See the type's documentation.
    ///
    /// Leaking the pin (with the user that holds it) leaks the cache: it stays valid for ever.
    #[inline]
    pub fn pin_for(&self) -> CachePin<'_, T> {
        // Relaxed: the pin is taken while `self` is borrowed, so the drop that reads the count
        // comes after this borrow has ended, ordered with it by whatever ended it.
        self.pins.fetch_add(1, Ordering::Relaxed);
        // INVARIANT: counted once, given back once, when the pin is dropped.
        CachePin { owner: self }
    }
}

/// A pin on an [`OwnedCache`]: while it exists, or for ever if it is leaked, the C cache is not
/// destroyed (see [`OwnedCache::pin_for`]).
///
/// # Invariants
///
/// `owner.pins` counts this value.
pub struct CachePin<'a, T> {
    owner: &'a OwnedCache<T>,
}

impl<'a, T> CachePin<'a, T> {
    /// Returns the pinned cache.
    #[inline]
    pub fn cache(&self) -> &'a Cache<T> {
        self.owner
    }
}

impl<T> Drop for CachePin<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // The destroy reads the count through `&mut`, once this borrow of the cache has ended:
        // the end of the borrow orders this before it.
        self.owner.pins.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Creates a C cache for objects of type `T`, named `name`: [`OwnedCache::new`]'s checks and
/// call, shared with the module-lifetime caches of `static_cache.rs`.
///
/// On success the cache is new and owned by the caller, who destroys it with
/// `kmem_cache_destroy`. Errors as [`OwnedCache::new`].
pub(super) fn create<T>(name: &CStr, flags: CacheFlags) -> Result<NonNull<Cache<T>>> {
    validate_name(name)?;
    let size = mem::size_of::<T>();
    if size == 0 || size > ffi::MAX_OBJECT_SIZE {
        return Err(EINVAL);
    }
    // SAFETY: `size` is at most `MAX_OBJECT_SIZE`, so it fits in `u32`, and the alignment of a
    // type is a power of two (and fits in `u32`, as no type is aligned beyond its size).
    let raw = unsafe { ffi::create(name, size as u32, mem::align_of::<T>() as u32, flags.0) };
    // A non-NULL return is a new cache for objects of `T`'s size and alignment.
    NonNull::new(raw.cast::<Cache<T>>()).ok_or(ENOMEM)
}

impl<T> Deref for OwnedCache<T> {
    type Target = Cache<T>;

    #[inline]
    fn deref(&self) -> &Cache<T> {
        // SAFETY: `cache` is live until `self` is dropped (type invariant), and it is suitable
        // for `T` by construction.
        unsafe { self.cache.as_ref() }
    }
}

impl<T> Drop for OwnedCache<T> {
    fn drop(&mut self) {
        // `&mut self`: every borrow has ended, so a pin still counted belongs to a user that was
        // leaked, whose callbacks may still reach the cache.
        let pins = *self.pins.get_mut();
        if pins != 0 {
            crate::pr_warn!(
                "slab_bulk: cache dropped while {} leaked user(s) still pin it; cache leaked\n",
                pins
            );
            return;
        }
        // SAFETY: The cache is live and destroyed only here (type invariant), and nothing pins
        // it. No object or batch borrows it any more: they hold `&Cache<T>` borrowed from
        // `self`. An object that was leaked with `mem::forget` is never used again, so it does
        // not matter whether the C side finds it (and warns and keeps the cache) or not (and
        // leaks its slab).
        unsafe { ffi::destroy(self.cache.as_ptr().cast()) };
    }
}

/// Checks a cache name: 1 to [`MAX_NAME_LEN`] printable ASCII characters, no space, no `/`.
fn validate_name(name: &CStr) -> Result {
    let bytes = name.to_bytes();
    let printable = |b: &u8| b.is_ascii_graphic() && *b != b'/';
    if bytes.is_empty() || bytes.len() > MAX_NAME_LEN || !bytes.iter().all(printable) {
        return Err(EINVAL);
    }
    Ok(())
}
