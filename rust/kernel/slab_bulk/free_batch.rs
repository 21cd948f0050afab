// SPDX-License-Identifier: GPL-2.0

//! [`FreeBatch`]: collects objects one at a time and frees them in bulk.

use super::cache::Cache;
use super::obj_array::ObjArray;
use super::object::Obj;
use core::ptr;

/// Collects objects one at a time and frees them with one `kmem_cache_free_bulk` once `N` are
/// gathered, when told ([`FreeBatch::flush`]) or when dropped.
///
/// This is the pattern of a NIC driver's TX completion (in the ixgbe bulk-free RFC of 2015,
/// ixgbe frees up to 32 skbs per cleanup in bulk): objects finish one by one, and freeing them
/// together lets the allocator rebuild per-slab freelists in one go instead of one `cmpxchg`
/// per object.
///
/// The batch serves one cache. An object of another cache is freed on its own at once, to its
/// own cache, so nothing ever goes back to the wrong cache.
///
/// Context: [`FreeBatch::add`], [`FreeBatch::flush`] and drop may free in bulk, which needs IRQs
/// enabled.
///
/// Should a `T::drop` panic while the batch frees (in userspace; the kernel aborts), every
/// gathered object is still dropped and freed once, and the batch is empty afterwards (see
/// [`ObjArray::free`]).
///
/// # Invariants
///
/// `batch` is never full between calls: a full batch is flushed before `add` returns.
///
/// # Examples
///
/// ```
/// # use kernel::prelude::*;
/// use kernel::alloc::flags::GFP_KERNEL;
/// use kernel::slab_bulk::{CacheFlags, FreeBatch, OwnedCache};
///
/// let cache = OwnedCache::<u64>::new(c"doc_tx_done", CacheFlags::NONE)?;
/// let mut done = FreeBatch::<'_, u64, 32>::new(&cache);
/// for i in 0..100 {
///     let obj = cache.alloc(i, GFP_KERNEL)?; // A packet that was just sent.
///     done.add(obj); // Freed in bulk with 31 others when the batch fills.
/// }
/// assert_eq!(done.len(), 100 % 32);
/// done.flush();
/// assert_eq!(done.len(), 0);
/// # Ok::<(), Error>(())
/// ```
pub struct FreeBatch<'c, T, const N: usize> {
    batch: ObjArray<'c, T, N>,
}

impl<'c, T, const N: usize> FreeBatch<'c, T, N> {
    /// Creates an empty batch for objects of `cache`.
    #[inline]
    pub const fn new(cache: &'c Cache<T>) -> Self {
        const { assert!(N > 0, "a free batch needs room for at least one object") };
        // INVARIANT: empty, so not full.
        Self {
            batch: ObjArray::new(cache),
        }
    }

    /// Returns the number of objects waiting to be freed.
    #[inline]
    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// Returns `true` if no object is waiting.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// Adds `obj` to the objects to free; frees all of them in bulk when `N` are gathered.
    ///
    /// An object of another cache than the batch's is freed at once, on its own.
    #[inline]
    pub fn add(&mut self, obj: Obj<'c, T>) {
        if !ptr::eq(obj.cache(), self.batch.cache()) {
            drop(obj);
            return;
        }
        // The batch is not full (type invariant) and `obj` is of its cache: `push` succeeds.
        if let Err(obj) = self.batch.push(obj) {
            drop(obj);
        }
        if self.batch.is_full() {
            // INVARIANT: flushed, so not full.
            self.batch.free();
        }
    }

    /// Frees the gathered objects now, in bulk.
    #[inline]
    pub fn flush(&mut self) {
        self.batch.free();
    }
}
