// SPDX-License-Identifier: GPL-2.0

//! Objects of one bulk allocation or free, between the C call and the container that owns
//! them: what [`ObjArray`] and [`SlotObjs`] share.
//!
//! [`ObjArray`]: super::ObjArray
//! [`SlotObjs`]: super::SlotObjs

use super::cache::Cache;
use super::ffi;
use crate::alloc::Flags;
use crate::error::{code::*, Result};
use core::ffi::c_void;
use core::mem;
use core::ops::Range;
use core::ptr::{self, NonNull};

/// Allocates `n` objects of `cache` with one `kmem_cache_alloc_bulk` into `objs[..n]`, all or
/// nothing: on `ENOMEM` nothing is left allocated (the callee frees what it got). On success
/// they are live objects with uninitialised contents, owned by nobody: the caller takes them.
///
/// # Safety
///
/// `n > 0`, and `objs` must be valid for writes of `n` pointers that nothing else uses
/// meanwhile.
#[inline]
pub(super) unsafe fn alloc_objects<T>(
    cache: &Cache<T>,
    flags: Flags,
    n: usize,
    objs: *mut NonNull<T>,
) -> Result {
    ffi::assert_irqs_enabled();
    // SAFETY: `cache` is live (type invariant of `Cache`); the rest is the caller's guarantee.
    // The callee fills all `n` and says so, or fills none that stays allocated and says that.
    let got = unsafe { ffi::alloc_bulk(cache.as_raw(), flags, n, objs.cast::<*mut c_void>()) };
    if got {
        Ok(())
    } else {
        Err(ENOMEM)
    }
}

/// Drops the `T`s in the `len` objects at `objs`, in order, then frees all `len` with one
/// `kmem_cache_free_bulk`.
///
/// Should a `T::drop` panic (in userspace; the kernel aborts), the other `T`s are still dropped
/// and every object is freed, once, through the guard that owns them meanwhile.
///
/// # Safety
///
/// `objs[..len]` must be distinct live objects of `cache`, each holding a valid `T`, which the
/// caller gives up.
#[inline]
pub(super) unsafe fn free_objects<T>(
    cache: *mut ffi::kmem_cache,
    objs: *mut NonNull<T>,
    len: usize,
) {
    // INVARIANT: the caller's objects, each holding a valid `T`, now owned by the guard alone.
    let mut guard = FreeGuard {
        cache,
        objs,
        len,
        valid: 0..len,
    };
    // A panicking `T::drop` unwinds through `guard`, which drops the rest and frees all.
    guard.drop_values();
    drop(guard);
}

/// Writes `init(i)` into the `i`-th of the `n` objects at `objs`.
///
/// Should `init` panic, the values written so far are dropped and the `n` objects freed in
/// bulk: nothing leaks, nothing is left to the caller.
///
/// # Safety
///
/// `objs[..n]` must be distinct live objects of `cache`, large enough for a `T` and owned by
/// the caller, who owns them with a valid `T` in each when this returns and has given them up
/// if it unwinds.
#[inline]
pub(super) unsafe fn init_objects<T>(
    cache: *mut ffi::kmem_cache,
    objs: *mut NonNull<T>,
    n: usize,
    mut init: impl FnMut(usize) -> T,
) {
    // INVARIANT: the caller's objects, none holding a `T` yet.
    let mut guard = FreeGuard {
        cache,
        objs,
        len: n,
        valid: 0..0,
    };
    for i in 0..n {
        let value = init(i);
        // SAFETY: `objs[i]` is in bounds and a live object owned by the guard, valid for a write
        // of `T`; it holds no value yet, so nothing is overwritten.
        unsafe { (*objs.add(i)).as_ptr().write(value) };
        // INVARIANT: objects `..=i` hold a valid `T`.
        guard.valid.end = i + 1;
    }
    // The objects, initialised, go back to the caller.
    mem::forget(guard);
}

/// The drop guard of the paths that drop `T`s or run init closures over objects that no batch
/// owns meanwhile: dropping it drops the `T`s still held in `valid`, then frees all `len`
/// objects with one `kmem_cache_free_bulk`.
///
/// A `T::drop` or an init closure that panics (which only userspace builds can unwind through)
/// thus leaves every `T` dropped once and every object freed once, as the drop glue of a slice
/// does for its elements; a second panic while unwinding aborts, there as here.
///
/// # Invariants
///
/// `objs[..len]` are distinct live objects of `cache`, owned by the guard; those in `valid`
/// hold a valid `T`, the others none.
struct FreeGuard<T> {
    cache: *mut ffi::kmem_cache,
    objs: *mut NonNull<T>,
    len: usize,
    valid: Range<usize>,
}

impl<T> FreeGuard<T> {
    /// Drops the `T`s still held, in order.
    #[inline]
    fn drop_values(&mut self) {
        if !mem::needs_drop::<T>() {
            return;
        }
        for i in self.valid.by_ref() {
            // SAFETY: `objs[i]` is in bounds and held a valid `T`, which the guard no longer
            // counts (`valid` moved past `i`) and which is dropped exactly once, here: should
            // its drop panic, the guard's own drop goes on with the next one.
            unsafe { ptr::drop_in_place((*self.objs.add(i)).as_ptr()) };
        }
    }
}

impl<T> Drop for FreeGuard<T> {
    #[inline]
    fn drop(&mut self) {
        self.drop_values();
        ffi::assert_irqs_enabled();
        // SAFETY: `objs[..len]` are distinct live objects of `cache`, none NULL, owned by the
        // guard and holding no `T` any more (type invariant, `valid` is empty). The callee may
        // reorder and overwrite the array; the guard's owner no longer reads those entries.
        unsafe { ffi::free_bulk(self.cache, self.len, self.objs.cast()) };
    }
}
