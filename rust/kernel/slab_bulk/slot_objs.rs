// SPDX-License-Identifier: GPL-2.0

//! [`SlotObjs`]: objects of one cache, allocated in bulk into an array the caller lends.

use super::bulk::{alloc_objects, free_objects, init_objects};
use super::cache::Cache;
use super::obj_slice::ObjSlice;
use crate::alloc::Flags;
use crate::error::{code::*, Result};
use core::marker::PhantomData;
use core::mem::{ManuallyDrop, MaybeUninit};
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;
use core::slice;

/// One entry of the array that [`Cache::alloc_bulk_in`] fills: room for an object pointer,
/// meaningless before the allocation and after the [`SlotObjs`] is gone.
pub type ObjSlot<T> = MaybeUninit<NonNull<T>>;

/// Objects of the cache `'a`, allocated with one `kmem_cache_alloc_bulk` into an array of
/// pointers the caller lends ([`Cache::alloc_bulk_in`]) and freed with one
/// `kmem_cache_free_bulk` when dropped.
///
/// This is the C API's own shape: a caller's array, filled by the bulk allocation and handed
/// to the bulk free. The `SlotObjs` itself holds the cache, the array's address and the number
/// of objects, apart from the array. As a local variable, which is what it is meant to be, it
/// keeps all three in registers across the C calls (which can write only the array), so that
/// allocating and freeing in bulk compiles to the two C calls and the test of the first one's
/// result, as the same code in C does. It dereferences to [`ObjSlice`], for access to the objects.
/// An [`ObjArray`] holds its array itself, with its length and cache beside it, so the compiler
/// must read those back after every call that was handed the array; it can grow, shrink and
/// move objects in and out, which a `SlotObjs` cannot.
///
/// [`ObjArray`]: super::ObjArray
///
/// Context: bulk allocation and bulk free must be called with IRQs enabled (checked by lockdep
/// when `CONFIG_PROVE_LOCKING` is set); allocation may sleep if `flags` allow it.
///
/// # Invariants
///
/// `objs[..len]` are distinct live objects of `cache`, owned by the `SlotObjs`, each holding a
/// valid `T`; the array is borrowed mutably for `'a` and `len` is its length.
///
/// # Examples
///
/// ```
/// # use kernel::prelude::*;
/// use core::mem::MaybeUninit;
/// use kernel::alloc::flags::GFP_KERNEL;
/// use kernel::slab_bulk::{CacheFlags, OwnedCache};
///
/// let cache = OwnedCache::<[u64; 4]>::new(c"doc_slice", CacheFlags::NO_MERGE)?;
/// // The array the bulk calls fill and empty, reused round after round.
/// let mut slots = [MaybeUninit::uninit(); 16];
/// for round in 0..3u64 {
///     // Eight objects in one call, each initialised from its index and the round.
///     let mut objs = cache
///         .alloc_bulk_in(&mut slots[..8], GFP_KERNEL)?
///         .init_with(|i| [round * 100 + i as u64; 4]);
///     assert_eq!(objs.len(), 8);
///     if let Some(obj) = objs.get_mut(7) {
///         obj[3] = 0;
///     }
///     assert!(objs.iter().enumerate().all(|(i, obj)| obj[0] == round * 100 + i as u64));
///     // Dropped here: eight objects, one `kmem_cache_free_bulk`.
/// }
/// assert_eq!(cache.alloc_bulk_in(&mut slots[..0], GFP_KERNEL).err(), Some(EINVAL));
/// # Ok::<(), Error>(())
/// ```
pub struct SlotObjs<'a, T> {
    cache: &'a Cache<T>,
    objs: NonNull<NonNull<T>>,
    len: usize,
    _slots: PhantomData<&'a mut [NonNull<T>]>,
}

// SAFETY: The `SlotObjs` owns its `T`s (see `Obj`'s `Send`) and borrows its array uniquely.
unsafe impl<T: Send> Send for SlotObjs<'_, T> {}
// SAFETY: `&SlotObjs` only gives `&T`.
unsafe impl<T: Sync> Sync for SlotObjs<'_, T> {}

/// The constructor of [`SlotObjs`]: a bulk allocation into the caller's array.
impl<T> Cache<T> {
    /// Allocates `slots.len()` uninitialised objects in one bulk call, into `slots`.
    ///
    /// All or nothing. Errors: `EINVAL` if `slots` is empty, `ENOMEM` if the allocator failed, in
    /// which case nothing is kept (the C function frees what it got before failing). IRQs must be
    /// enabled.
    #[inline]
    pub fn alloc_bulk_in<'a>(
        &'a self,
        slots: &'a mut [ObjSlot<T>],
        flags: Flags,
    ) -> Result<SlotObjs<'a, MaybeUninit<T>>> {
        let len = slots.len();
        if len == 0 {
            return Err(EINVAL);
        }
        let objs = NonNull::from(slots).cast::<NonNull<MaybeUninit<T>>>();
        // SAFETY: `objs` has room for `len > 0` pointers, borrowed mutably.
        unsafe { alloc_objects(self.uninit(), flags, len, objs.as_ptr()) }?;
        // INVARIANT: `len` new distinct live objects of the cache in the borrowed array, owned by
        // nobody else; `MaybeUninit<T>` accepts any content.
        Ok(SlotObjs {
            cache: self.uninit(),
            objs,
            len,
            _slots: PhantomData,
        })
    }
}

impl<'a, T> SlotObjs<'a, T> {
    /// Returns the cache the objects belong to.
    #[inline]
    pub fn cache(&self) -> &'a Cache<T> {
        self.cache
    }

    /// Returns the object pointers.
    #[inline]
    fn ptrs(&self) -> &[NonNull<T>] {
        // SAFETY: `objs[..len]` is the borrowed array, initialised with object pointers (type
        // invariant), not written while `&self` lives.
        unsafe { slice::from_raw_parts(self.objs.as_ptr(), self.len) }
    }
}

impl<'a, T> SlotObjs<'a, MaybeUninit<T>> {
    /// Initialises every object, object `i` to `init(i)`, and returns the initialised objects.
    ///
    /// Should `init` panic (in userspace), the values made so far are dropped and every object
    /// is freed.
    #[inline]
    pub fn init_with(self, init: impl FnMut(usize) -> T) -> SlotObjs<'a, T> {
        // Not dropped: `init_objects` owns the objects until they are initialised, and frees
        // them should `init` panic.
        let this = ManuallyDrop::new(self);
        // SAFETY: `objs[..len]` are distinct live objects of the cache, large enough for a `T`
        // (the layout of `MaybeUninit<T>`), handed over (`this` is not dropped).
        unsafe {
            init_objects(
                this.cache.as_raw(),
                this.objs.as_ptr().cast(),
                this.len,
                init,
            )
        };
        // INVARIANT: the same objects in the same borrowed array, each now holding a valid `T`.
        SlotObjs {
            // SAFETY: `Cache<T>` and `Cache<MaybeUninit<T>>` are the same C cache, live for `'a`.
            cache: unsafe { Cache::from_raw(this.cache.as_raw()) },
            objs: this.objs.cast(),
            len: this.len,
            _slots: PhantomData,
        }
    }
}

impl<T> Deref for SlotObjs<'_, T> {
    type Target = ObjSlice<T>;

    #[inline]
    fn deref(&self) -> &ObjSlice<T> {
        // SAFETY: `objs[..len]` are distinct live objects holding a valid `T`, owned by `self`
        // (type invariant), which the shared borrow keeps from changing them.
        unsafe { ObjSlice::from_ptrs(self.ptrs()) }
    }
}

impl<T> DerefMut for SlotObjs<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut ObjSlice<T> {
        // SAFETY: `objs[..len]` is the borrowed array (type invariant), initialised with the
        // object pointers, and `&mut self` makes the access unique; the objects as in `deref`.
        unsafe { ObjSlice::from_ptrs_mut(slice::from_raw_parts_mut(self.objs.as_ptr(), self.len)) }
    }
}

impl<T> Drop for SlotObjs<'_, T> {
    /// Drops the `T`s, then frees every object with one `kmem_cache_free_bulk`.
    ///
    /// Should a `T::drop` panic (in userspace; the kernel aborts), the other `T`s are still
    /// dropped and every object is freed, once.
    #[inline]
    fn drop(&mut self) {
        // SAFETY: `objs[..len]` are distinct live objects of `cache`, each holding a valid `T`
        // (type invariant), given up: `self` is being dropped and reads them no more.
        unsafe { free_objects(self.cache.as_raw(), self.objs.as_ptr(), self.len) };
    }
}
