// SPDX-License-Identifier: GPL-2.0

//! [`Batch`], the fixed-capacity owned buffer that bulk operations move items through.

use core::fmt;
use core::mem::MaybeUninit;
use core::ptr;
use core::slice;

/// A fixed-capacity array of up to `K` owned items, the unit of bulk enqueue and dequeue.
///
/// Like an `ArrayVec`: the items are `[0, len)` of an inline `[T; K]`, in order. It needs no
/// allocation and is meant to be reused: dequeue into it, use or forward the items, enqueue it
/// elsewhere, and do it again. Dropping a batch drops the items it still holds.
///
/// Besides the safe methods, [`Batch::as_mut_ptr`] and [`Batch::set_len`] let a caller hand
/// the array to C (for instance `kmem_cache_free_bulk(s, len, p)`) or have C fill it (for
/// instance `kmem_cache_alloc_bulk(s, gfp, n, p)`) without copying.
///
/// # Invariants
///
/// `len <= K`, and `items[0..len]` are initialised items owned by the batch; `items[len..K]`
/// hold nothing (whatever bytes they contain are not owned items).
///
/// # Examples
///
/// ```
/// use kernel::alf_queue::Batch;
///
/// let mut batch = Batch::<u32, 4>::new();
/// assert!(batch.is_empty());
/// for i in 0..4 {
///     assert_eq!(batch.push(i), Ok(()));
/// }
/// assert_eq!(batch.push(9), Err(9)); // Full: the item comes back.
/// assert_eq!(batch.as_slice(), &[0, 1, 2, 3]);
/// assert_eq!(batch.pop(), Some(3));
/// assert_eq!(batch.iter().sum::<u32>(), 3);
/// let mut drained = batch.drain();
/// assert_eq!(drained.next(), Some(0));
/// drop(drained); // Drops (here: forgets) the rest.
/// assert_eq!(batch.len(), 0);
/// ```
pub struct Batch<T, const K: usize> {
    len: usize,
    items: [MaybeUninit<T>; K],
}

impl<T, const K: usize> Batch<T, K> {
    /// Creates an empty batch.
    #[inline]
    pub const fn new() -> Self {
        // INVARIANT: `len == 0`: no slot holds an item.
        Self {
            len: 0,
            // SAFETY: An array of `MaybeUninit<T>` needs no initialisation.
            items: unsafe { MaybeUninit::<[MaybeUninit<T>; K]>::uninit().assume_init() },
        }
    }

    /// Makes an empty batch in place, writing one word and leaving the array uninitialised.
    ///
    /// For a large batch in memory that is already allocated (a box, say), without building it
    /// on the stack first.
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// use kernel::alf_queue::Batch;
    ///
    /// let mut slot = MaybeUninit::<Batch<u64, 1024>>::uninit();
    /// let batch = Batch::init_in_place(&mut slot);
    /// assert!(batch.is_empty());
    /// assert_eq!(batch.push(1), Ok(()));
    /// // The batch in `slot` is not dropped with `slot`: drop it, and the items it holds.
    /// // SAFETY: `init_in_place` initialised `slot`, and it is dropped once, here.
    /// unsafe { slot.assume_init_drop() };
    /// ```
    #[inline]
    pub fn init_in_place(slot: &mut MaybeUninit<Self>) -> &mut Self {
        let this = slot.as_mut_ptr();
        // SAFETY: `this` points to writable memory for a `Self`; the length is written
        // through a raw pointer, without a reference to uninitialised memory.
        unsafe { ptr::addr_of_mut!((*this).len).write(0) };
        // SAFETY: `len` is initialised and `items` is an array of `MaybeUninit`, valid
        // uninitialised. INVARIANT: `len == 0`: no slot holds an item.
        unsafe { slot.assume_init_mut() }
    }

    /// Returns `K`, the most items the batch can hold.
    #[inline]
    pub const fn capacity(&self) -> usize {
        K
    }

    /// Returns the number of items in the batch.
    #[inline]
    pub const fn len(&self) -> usize {
        // SAFETY: `len <= K` is a type invariant. Telling the compiler lets it drop the
        // zero-length and range checks that the bulk operations would otherwise repeat after
        // converting the length to a `u32` index count.
        unsafe { assume(self.len <= K) };
        self.len
    }

    /// Returns `true` if the batch holds no item.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Returns `true` if the batch holds `K` items.
    #[inline]
    pub const fn is_full(&self) -> bool {
        self.len == K
    }

    /// Returns how many more items fit: `K - len()`.
    #[inline]
    pub const fn remaining(&self) -> usize {
        K - self.len
    }

    /// Appends `item`, or hands it back if the batch is full.
    #[inline]
    pub fn push(&mut self, item: T) -> Result<(), T> {
        // `>=` rather than `==` (the invariant makes them equal) lets the compiler see that the
        // index below is in bounds and drop its check.
        if self.len >= K {
            return Err(item);
        }
        self.items[self.len].write(item);
        // INVARIANT: The item at `len` was just initialised and `len < K` before.
        self.len += 1;
        Ok(())
    }

    /// Appends items taken from `iter` until the batch is full or `iter` ends, and returns how
    /// many were appended.
    ///
    /// No more items are taken from `iter` than fit, so none is lost. Filling a batch this
    /// way is cheaper than calling [`Batch::push`] in a loop: the length is kept in a register
    /// and stored once, where each `push` stores it and the next one must read it back.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::Batch;
    ///
    /// let mut batch = Batch::<u32, 4>::new();
    /// assert_eq!(batch.push(7), Ok(()));
    /// let mut source = 0..10;
    /// assert_eq!(batch.fill_from(&mut source), 3);
    /// assert_eq!(batch.as_slice(), &[7, 0, 1, 2]);
    /// assert_eq!(source.next(), Some(3)); // Nothing was taken that did not fit.
    /// assert_eq!(batch.fill_from(4..), 0);
    /// ```
    #[inline]
    pub fn fill_from<I: IntoIterator<Item = T>>(&mut self, iter: I) -> usize {
        /// Stores the length when dropped, even if the iterator panics.
        struct SetLenOnDrop<'a> {
            len: &'a mut usize,
            local: usize,
        }
        impl Drop for SetLenOnDrop<'_> {
            #[inline]
            fn drop(&mut self) {
                *self.len = self.local;
            }
        }

        let start = self.len;
        let base = self.as_mut_ptr();
        let mut guard = SetLenOnDrop {
            len: &mut self.len,
            local: start,
        };
        for item in iter.into_iter().take(K - start) {
            // SAFETY: `take` stops at `K - start` items, so `guard.local < K`: the entry is
            // inside the storage, and it is beyond the current length, so it holds no item.
            unsafe { base.add(guard.local).write(item) };
            // INVARIANT: The entry at `local` is now initialised; the length stored on drop
            // covers exactly the entries written.
            guard.local += 1;
        }
        guard.local - start
    }

    /// Removes and returns the last item, if any.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        // INVARIANT: The item at the new `len` is moved out below and no longer owned.
        self.len -= 1;
        // SAFETY: By the type invariant the item at (old `len` - 1) is initialised; lowering
        // `len` first means it is read out exactly once.
        Some(unsafe { self.items[self.len].assume_init_read() })
    }

    /// Returns the items as a slice, in order.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: By the type invariant the first `len` items are initialised and owned by
        // `self`, so they may be borrowed for `self`'s lifetime.
        unsafe { slice::from_raw_parts(self.as_ptr(), self.len) }
    }

    /// Returns the items as a mutable slice, in order.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: As in `as_slice`, with the unique borrow of `self`.
        unsafe { slice::from_raw_parts_mut(self.as_mut_ptr(), self.len) }
    }

    /// Returns an iterator over the items, in order.
    #[inline]
    pub fn iter(&self) -> slice::Iter<'_, T> {
        self.as_slice().iter()
    }

    /// Returns an iterator that moves the items out, in order.
    ///
    /// The batch is empty as soon as this returns; the items the iterator has not yielded when
    /// it is dropped are dropped with it.
    #[inline]
    pub fn drain(&mut self) -> Drain<'_, T, K> {
        let end = self.len;
        // INVARIANT: The items `0..end` now belong to the `Drain`, and the batch owns none.
        self.len = 0;
        Drain {
            batch: self,
            pos: 0,
            end,
        }
    }

    /// Drops all items, leaving the batch empty.
    #[inline]
    pub fn clear(&mut self) {
        let items: *mut [T] = self.as_mut_slice();
        // INVARIANT: The items are dropped below and no longer owned.
        self.len = 0;
        // SAFETY: `items` are the initialised items the batch owned; `len` is already 0, so
        // they are dropped exactly once even if one of the drops panics.
        unsafe { ptr::drop_in_place(items) };
    }

    /// Returns the unused part of the storage, `items[len..K]`.
    ///
    /// Write items there and then call [`Batch::set_len`] to take them into the batch.
    #[inline]
    pub fn spare_capacity_mut(&mut self) -> &mut [MaybeUninit<T>] {
        &mut self.items[self.len..]
    }

    /// Returns a pointer to the storage: item `i` is at `as_ptr().add(i)` for `i < K`.
    ///
    /// The storage is a contiguous `[T; K]` (`MaybeUninit<T>` has the layout of `T`); the
    /// first [`Batch::len`] entries are the items. For `T` a pointer-like type with the
    /// representation of a C pointer (for instance `KBox<U>` or `NonNull<U>`), this is the
    /// `void **` array of a C bulk API.
    #[inline]
    pub fn as_ptr(&self) -> *const T {
        self.items.as_ptr().cast::<T>()
    }

    /// Returns a mutable pointer to the storage, laid out as for [`Batch::as_ptr`].
    ///
    /// Writing through it is allowed (it is derived from `&mut self`), but what the batch
    /// owns only changes with [`Batch::set_len`], whose contract says what must hold.
    #[inline]
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.items.as_mut_ptr().cast::<T>()
    }

    /// Sets the number of items to `len`, without dropping or initialising anything.
    ///
    /// # Safety
    ///
    /// - `len <= K`.
    /// - If `len` is larger than the current length, the entries `[old len, len)` hold
    ///   initialised items, which the batch now owns.
    /// - If `len` is smaller, the entries `[len, old len)` are no longer owned by the batch:
    ///   the caller has moved them out (for instance handed them to a C free function) or
    ///   takes responsibility for them; the batch will not drop them.
    #[inline]
    pub unsafe fn set_len(&mut self, len: usize) {
        debug_assert!(len <= K);
        // INVARIANT: Guaranteed by the caller.
        self.len = len;
    }

    /// Forgets the first `k` items, which the caller has moved out, and moves the remaining
    /// ones to the front, keeping their order.
    ///
    /// # Safety
    ///
    /// `k <= len()`, and the caller has taken ownership of the first `k` items (it must not let
    /// the batch drop them).
    #[inline(always)]
    pub(crate) unsafe fn forget_front(&mut self, k: usize) {
        let rest = self.len - k;
        if rest != 0 {
            let base = self.as_mut_ptr();
            // SAFETY: Both ranges are inside the storage (`k + rest == len <= K`); `ptr::copy`
            // allows them to overlap. The items at `k..len` move to `0..rest`; the vacated
            // entries are then beyond the new length.
            unsafe { ptr::copy(base.add(k), base, rest) };
        }
        // INVARIANT: `0..rest` now hold the items that were at `k..len`, owned by the batch;
        // the first `k` belong to the caller.
        self.len = rest;
    }
}

impl<T, const K: usize> Default for Batch<T, K> {
    #[inline]
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const K: usize> Drop for Batch<T, K> {
    #[inline]
    fn drop(&mut self) {
        self.clear();
    }
}

impl<T: fmt::Debug, const K: usize> fmt::Debug for Batch<T, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, T, const K: usize> IntoIterator for &'a Batch<T, K> {
    type Item = &'a T;
    type IntoIter = slice::Iter<'a, T>;

    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// An iterator moving the items out of a [`Batch`], in order; see [`Batch::drain`].
///
/// # Invariants
///
/// `pos <= end <= K`; the entries `pos..end` of `batch`'s storage are initialised items owned
/// by this iterator (the batch's length is 0 while it exists).
pub struct Drain<'a, T, const K: usize> {
    batch: &'a mut Batch<T, K>,
    pos: usize,
    end: usize,
}

impl<T, const K: usize> Iterator for Drain<'_, T, K> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.pos == self.end {
            return None;
        }
        // SAFETY: By the type invariant the entry at `pos < end` is an initialised item owned
        // by us; advancing `pos` gives it away exactly once.
        let item = unsafe { self.batch.items[self.pos].assume_init_read() };
        // INVARIANT: The item at the old `pos` has been moved out.
        self.pos += 1;
        Some(item)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.pos;
        (n, Some(n))
    }
}

impl<T, const K: usize> ExactSizeIterator for Drain<'_, T, K> {}

impl<T, const K: usize> Drop for Drain<'_, T, K> {
    fn drop(&mut self) {
        let rest = ptr::slice_from_raw_parts_mut(
            // SAFETY: `pos <= K`, so the pointer stays inside (or one past) the storage.
            unsafe { self.batch.as_mut_ptr().add(self.pos) },
            self.end - self.pos,
        );
        // INVARIANT: Nothing is owned any more once the items are dropped.
        self.pos = self.end;
        // SAFETY: By the type invariant these are initialised items owned by us alone; `pos`
        // already says they are gone, so they are dropped once.
        unsafe { ptr::drop_in_place(rest) };
    }
}

/// Tells the compiler that `cond` holds, for the checks it can then drop.
///
/// It is `core::hint::assert_unchecked`, which rustc has from 1.81 on. 6.12 accepts rustc 1.78
/// and up: built by 1.78 to 1.80.1 (the kernel's `CONFIG_RUSTC_VERSION` tells), the hint is a
/// branch to `unreachable_unchecked`, which LLVM may fold away before using it, so that some
/// checks stay (the code is as safe, a little slower).
///
/// # Safety
///
/// `cond` must be true.
#[inline(always)]
const unsafe fn assume(cond: bool) {
    #[cfg(any(
        CONFIG_RUSTC_VERSION = "107800",
        CONFIG_RUSTC_VERSION = "107900",
        CONFIG_RUSTC_VERSION = "108000",
        CONFIG_RUSTC_VERSION = "108001"
    ))]
    if !cond {
        // SAFETY: `cond` is true (the caller's guarantee), so this is not reached.
        unsafe { core::hint::unreachable_unchecked() }
    }
    #[cfg(not(any(
        CONFIG_RUSTC_VERSION = "107800",
        CONFIG_RUSTC_VERSION = "107900",
        CONFIG_RUSTC_VERSION = "108000",
        CONFIG_RUSTC_VERSION = "108001"
    )))]
    // The cfg above keeps this from the rustc releases that lack it.
    #[allow(clippy::incompatible_msrv)]
    // SAFETY: `cond` is true (the caller's guarantee).
    unsafe {
        core::hint::assert_unchecked(cond)
    };
}
