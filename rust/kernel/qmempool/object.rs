// SPDX-License-Identifier: GPL-2.0

//! [`PoolObj`]: an object of a [`QMemPool`], owned, back to its pool when dropped.

use super::pool::{QMemPool, Raw};
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
/// [`BhGuard`]: super::BhGuard
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
