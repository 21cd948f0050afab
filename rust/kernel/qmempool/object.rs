// SPDX-License-Identifier: GPL-2.0

//! [`PoolObj`]: an object of a [`QMemPool`], owned, back to its pool when dropped.

use super::context::BhGuard;
use super::pool::QMemPool;
use super::queue::Raw;
use crate::alloc::Flags;
use crate::error::Result;
use core::fmt;
use core::mem::{ManuallyDrop, MaybeUninit};
use core::ops::{Deref, DerefMut};
use core::ptr::{self, NonNull};

/// An object of the pool `'p`, holding a `T`, like an [`Obj`] whose memory comes from a
/// [`QMemPool`] rather than straight from the cache.
///
/// Dropping it drops the `T` and gives the memory back to the pool it came from, on whatever
/// CPU it is dropped (see [`QMemPool`]): there is no way to name another pool or cache, and the
/// borrow of `'p` keeps the pool alive while the object is. Under a [`BhGuard`] already held,
/// [`QMemPool::free_in`] saves the guard that dropping makes.
///
/// [`Obj`]: crate::slab_bulk::Obj
///
/// # Invariants
///
/// `ptr` is an object of `pool`'s cache, owned by this value, holding a valid `T`.
pub struct PoolObj<'p, T, const L: usize, const S: usize, const B: usize> {
    ptr: NonNull<T>,
    pool: &'p QMemPool<'p, T, L, S, B>,
}

// SAFETY: A `PoolObj` owns its `T`, so it may move to another thread when `T` may; the pool
// takes objects back on any CPU (`QMemPool` is `Sync`).
unsafe impl<T: Send, const L: usize, const S: usize, const B: usize> Send
    for PoolObj<'_, T, L, S, B>
{
}
// SAFETY: `&PoolObj` only gives `&T`.
unsafe impl<T: Sync, const L: usize, const S: usize, const B: usize> Sync
    for PoolObj<'_, T, L, S, B>
{
}

/// The allocations and frees of [`PoolObj`]s, one object at a time.
impl<'c, T, const LOCAL: usize, const SHARED: usize, const BULK: usize>
    QMemPool<'c, T, LOCAL, SHARED, BULK>
{
    /// Allocates an object on `guard`'s CPU and moves `value` into it.
    ///
    /// Errors: `ENOMEM` if this CPU's queue and the shared queue are empty and the cache could
    /// not give `BULK` objects (all or nothing: nothing is kept, nothing leaks); `value` is
    /// dropped then. The allocation never sleeps, whatever `flags` say (see the module
    /// documentation).
    #[inline]
    pub fn alloc_in(
        &self,
        guard: &BhGuard,
        value: T,
        flags: Flags,
    ) -> Result<PoolObj<'_, T, LOCAL, SHARED, BULK>> {
        let raw = self.take(guard, flags)?;
        // SAFETY: `raw` is a free object of the pool's cache, now owned by the caller.
        Ok(unsafe { PoolObj::new(self, raw, value) })
    }

    /// Allocates an object and moves `value` into it, in whatever context the caller is in.
    ///
    /// Makes a [`BhGuard`] for the duration of the call; where none can be made (hard IRQ,
    /// IRQs disabled), allocates from the cache directly with `kmem_cache_alloc`. Errors as
    /// [`QMemPool::alloc_in`].
    #[inline]
    pub fn alloc(&self, value: T, flags: Flags) -> Result<PoolObj<'_, T, LOCAL, SHARED, BULK>> {
        let raw = self.take_anywhere(flags)?;
        // SAFETY: `raw` is a free object of the pool's cache, owned by the caller.
        Ok(unsafe { PoolObj::new(self, raw, value) })
    }

    /// Drops `obj`'s value and puts the object in `guard`'s CPU's queue.
    #[inline]
    pub fn free_in(&self, guard: &BhGuard, obj: PoolObj<'_, T, LOCAL, SHARED, BULK>) {
        if let Some(raw) = obj.into_free(self) {
            self.put(guard, raw);
        }
    }
}

/// Zeroes `raw` if `flags` ask for it: `__GFP_ZERO` for an object of the pool, which may come
/// from a queue, dirty from its last user.
///
/// # Safety
///
/// `raw` must be a free object of the pool's cache owned by the caller.
#[inline]
unsafe fn zero_if_asked<T>(raw: Raw<T>, flags: Flags) {
    if flags.contains(crate::alloc::flags::__GFP_ZERO) {
        // SAFETY: The caller owns the object, valid for a write of one `MaybeUninit<T>`.
        unsafe { raw.as_ptr().write_bytes(0, 1) };
    }
}

/// Pools of uninitialised objects: an allocation writes nothing into the object, as with the C
/// API (moving a `MaybeUninit::uninit()` in would copy its bytes).
impl<'c, U, const LOCAL: usize, const SHARED: usize, const BULK: usize>
    QMemPool<'c, MaybeUninit<U>, LOCAL, SHARED, BULK>
{
    /// Allocates an uninitialised object on `guard`'s CPU, zeroed with `__GFP_ZERO`. Errors as
    /// [`QMemPool::alloc_in`].
    ///
    /// # Examples
    ///
    /// ```
    /// # use kernel::prelude::*;
    /// use core::mem::MaybeUninit;
    /// use kernel::alloc::flags::GFP_ATOMIC;
    /// use kernel::qmempool::{BhGuard, QMemPool};
    /// use kernel::slab_bulk::{CacheFlags, OwnedCache};
    ///
    /// let cache =
    ///     OwnedCache::<MaybeUninit<[u8; 256]>>::new(c"doc_qmempool_raw", CacheFlags::NONE)?;
    /// let pool = QMemPool::<MaybeUninit<[u8; 256]>>::new(&cache)?;
    /// if let Some(guard) = BhGuard::new() {
    ///     let mut buf = pool.alloc_uninit_in(&guard, GFP_ATOMIC)?;
    ///     buf.write([0xa5; 256]);
    ///     pool.free_in(&guard, buf);
    /// }
    /// let buf = pool.alloc_uninit(GFP_ATOMIC)?;
    /// drop(buf);
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    pub fn alloc_uninit_in(
        &self,
        guard: &BhGuard,
        flags: Flags,
    ) -> Result<PoolObj<'_, MaybeUninit<U>, LOCAL, SHARED, BULK>> {
        let raw = self.take(guard, flags)?;
        // SAFETY: `raw` is a free object of the pool's cache, now owned by the caller.
        unsafe { zero_if_asked(raw, flags) };
        // SAFETY: As above.
        Ok(unsafe { PoolObj::new_uninit(self, raw) })
    }

    /// Allocates an uninitialised object in whatever context the caller is in, zeroed with
    /// `__GFP_ZERO`. Errors as [`QMemPool::alloc`].
    #[inline]
    pub fn alloc_uninit(
        &self,
        flags: Flags,
    ) -> Result<PoolObj<'_, MaybeUninit<U>, LOCAL, SHARED, BULK>> {
        let raw = self.take_anywhere(flags)?;
        // SAFETY: `raw` is a free object of the pool's cache, owned by the caller.
        unsafe { zero_if_asked(raw, flags) };
        // SAFETY: As above.
        Ok(unsafe { PoolObj::new_uninit(self, raw) })
    }
}

impl<'p, T, const L: usize, const S: usize, const B: usize> PoolObj<'p, T, L, S, B> {
    /// Moves `value` into the free object `raw` of `pool`.
    ///
    /// # Safety
    ///
    /// `raw` must be a free object of `pool`'s cache, owned by nobody else.
    #[inline]
    pub(super) unsafe fn new(pool: &'p QMemPool<'_, T, L, S, B>, raw: Raw<T>, value: T) -> Self {
        let ptr = raw.cast::<T>();
        // SAFETY: `raw` is an object of the cache, sized and aligned for `T`, owned by us.
        unsafe { ptr.as_ptr().write(value) };
        // INVARIANT: an object of `pool`'s cache, owned, holding a valid `T`.
        Self { ptr, pool }
    }

    /// Returns the pool this object goes back to.
    #[inline]
    pub fn pool(&self) -> &'p QMemPool<'p, T, L, S, B> {
        self.pool
    }

    /// Drops the value and returns the free object, if the object belongs to `pool`; otherwise
    /// drops it the usual way, back to its own pool, and returns [`None`].
    #[inline]
    pub(super) fn into_free(self, pool: &QMemPool<'_, T, L, S, B>) -> Option<Raw<T>> {
        if !ptr::addr_eq(self.pool, pool) {
            self.drop_elsewhere();
            return None;
        }
        let this = ManuallyDrop::new(self);
        let home = Home {
            pool: this.pool,
            raw: Some(this.ptr.cast()),
        };
        // SAFETY: `ptr` holds a valid `T` owned by `this` (type invariant), dropped once, here;
        // should its `drop` panic, `home` gives the memory back to the pool.
        unsafe { ptr::drop_in_place(this.ptr.as_ptr()) };
        home.defuse()
    }

    /// Drops an object that [`PoolObj::into_free`] was given for another pool, the usual way
    /// (back to its own pool, with a guard made for the call). Out of line and cold: freeing into
    /// the wrong pool is the caller's slip, and inlined, this path's calls take registers from
    /// the loop of every `free_in` caller.
    #[cold]
    #[inline(never)]
    fn drop_elsewhere(self) {
        drop(self);
    }
}

impl<'p, U, const L: usize, const S: usize, const B: usize> PoolObj<'p, MaybeUninit<U>, L, S, B> {
    /// Makes the free object `raw` of `pool`'s cache an object of `pool`, writing nothing: any
    /// contents are a valid `MaybeUninit<U>`.
    ///
    /// # Safety
    ///
    /// `raw` is a free object of `pool`'s cache, owned by the caller, who gives it up.
    #[inline]
    pub(super) unsafe fn new_uninit(
        pool: &'p QMemPool<'_, MaybeUninit<U>, L, S, B>,
        raw: Raw<MaybeUninit<U>>,
    ) -> Self {
        // INVARIANT: an object of `pool`'s cache, owned, holding a valid `MaybeUninit<U>`.
        Self {
            ptr: raw.cast(),
            pool,
        }
    }
}

/// Gives a free object back to its pool when dropped, so that a panicking `T::drop` loses no
/// memory.
struct Home<'p, T, const L: usize, const S: usize, const B: usize> {
    pool: &'p QMemPool<'p, T, L, S, B>,
    raw: Option<Raw<T>>,
}

impl<T, const L: usize, const S: usize, const B: usize> Home<'_, T, L, S, B> {
    /// Hands the object to the caller instead.
    #[inline]
    fn defuse(self) -> Option<Raw<T>> {
        // Not dropped: nothing is left for `drop` to give back (and no call to it is made).
        ManuallyDrop::new(self).raw
    }
}

impl<T, const L: usize, const S: usize, const B: usize> Drop for Home<'_, T, L, S, B> {
    #[inline]
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            self.pool.put_anywhere(raw);
        }
    }
}

impl<T, const L: usize, const S: usize, const B: usize> Deref for PoolObj<'_, T, L, S, B> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: `ptr` holds a valid `T` owned by `self` (type invariant).
        unsafe { self.ptr.as_ref() }
    }
}

impl<T, const L: usize, const S: usize, const B: usize> DerefMut for PoolObj<'_, T, L, S, B> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: As in `deref`, and `&mut self` makes the access unique.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T: fmt::Debug, const L: usize, const S: usize, const B: usize> fmt::Debug
    for PoolObj<'_, T, L, S, B>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T, const L: usize, const S: usize, const B: usize> Drop for PoolObj<'_, T, L, S, B> {
    #[inline]
    fn drop(&mut self) {
        let _home = Home {
            pool: self.pool,
            raw: Some(self.ptr.cast()),
        };
        // SAFETY: `ptr` holds a valid `T` owned by `self` (type invariant), dropped once, here;
        // then `_home` gives the memory back to the pool, also if the `drop` panics.
        unsafe { ptr::drop_in_place(self.ptr.as_ptr()) };
    }
}
