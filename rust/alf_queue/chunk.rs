// SPDX-License-Identifier: GPL-2.0

//! Reserved slots of an [`SpscQueue`] lent to the caller as slices: [`WriteChunk`] for the
//! producer, [`ReadChunk`] for the consumer.
//!
//! The reservation and its commit are the single side's own (`Ring::lend`, `SingleCommit`), as
//! in the in-place `_with` forms; what differs is that the caller's code runs on the slots as
//! plain slices, so that its loops can be vectorised (or become a `memcpy`) as the caller's
//! compiler sees fit. A chunk is at most two slices: the reserved slots up to the end of the
//! array, then from its start.
//!
//! Not in the loom build: loom tracks each slot through its own cell, which a slice cannot
//! borrow. The reservation and the commit that a chunk runs are the ones the loom models
//! check through the `_with` forms.
//!
//! [`SpscQueue`]: super::SpscQueue

use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;

use super::ring::SingleCommit;
use super::slots::Runs;

/// Implements `len` and `is_empty` of `$Chunk`, the size of its reservation (its `runs`), with
/// the docs given.
macro_rules! chunk_len {
    (
        $Chunk:ident,
        $(#[$len_doc:meta])* fn len;
        $(#[$is_empty_doc:meta])* fn is_empty;
    ) => {
        impl<T> $Chunk<'_, T> {
            $(#[$len_doc])*
            #[inline]
            pub fn len(&self) -> usize {
                self.runs.len()
            }

            $(#[$is_empty_doc])*
            #[inline]
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
        }
    };
}

/// Empty slots reserved by an [`SpscQueue`]'s producer, to be filled through slices and then
/// committed: [`Producer::write_chunk`] and [`Producer::write_chunk_burst`] make one.
///
/// Nothing reaches the queue until [`WriteChunk::commit`], [`WriteChunk::fill_with`] or
/// [`WriteChunk::fill_from_iter`]; a chunk dropped without them leaves the queue as it was.
/// Slots written and not committed are not dropped: their items leak (safely).
///
/// # Invariants
///
/// `runs` are the `len()` empty slots that `commit`'s owner reserved on the producer side,
/// from its `head`; nothing else touches them until `commit` is dropped, and `commit.done` is
/// 0.
///
/// [`SpscQueue`]: super::SpscQueue
/// [`Producer::write_chunk`]: super::Producer::write_chunk
/// [`Producer::write_chunk_burst`]: super::Producer::write_chunk_burst
pub struct WriteChunk<'a, T> {
    runs: Runs<T>,
    commit: SingleCommit<'a>,
    _slots: PhantomData<&'a mut [MaybeUninit<T>]>,
}

chunk_len! {
    WriteChunk,
    /// Returns the number of slots reserved.
    fn len;
    /// Returns `true` if no slot is reserved (a burst that found the queue full).
    fn is_empty;
}

impl<'a, T> WriteChunk<'a, T> {
    /// Lends the runs of slots of a producer reservation, which `commit` will publish.
    ///
    /// # Safety
    ///
    /// The runs are as the type invariant says, for `commit`'s reservation.
    #[inline(always)]
    pub(crate) unsafe fn new(runs: Runs<T>, commit: SingleCommit<'a>) -> Self {
        // INVARIANT: Guaranteed by the caller; `SingleCommit::new` starts at 0 done.
        Self {
            runs,
            commit,
            _slots: PhantomData,
        }
    }

    /// Returns the reserved slots: those up to the end of the ring's array, then those from its
    /// start (empty unless the reservation wraps). Slot `i` of the chunk is the `i`-th of the
    /// two taken in order.
    #[inline]
    pub fn as_mut_slices(&mut self) -> (&mut [MaybeUninit<T>], &mut [MaybeUninit<T>]) {
        let (first, second) = self.runs.slices();
        // SAFETY: Two disjoint runs of slots reserved to us alone (type invariant), for as long
        // as `self` is borrowed; `MaybeUninit<T>` has the layout of `T` and accepts any content.
        unsafe {
            (
                &mut *(first as *mut [MaybeUninit<T>]),
                &mut *(second as *mut [MaybeUninit<T>]),
            )
        }
    }

    /// Publishes the first `k` slots of the chunk to the consumer; the rest of the reservation
    /// is given back.
    ///
    /// # Safety
    ///
    /// `k <= self.len()`, and the first `k` slots (in the order of [`WriteChunk::as_mut_slices`])
    /// hold initialised items, which the queue owns from now on.
    #[inline]
    pub unsafe fn commit(mut self, k: usize) {
        debug_assert!(k <= self.len());
        // INVARIANT: The caller guarantees that the first `k` of the reserved slots are
        // filled; dropping `self` drops `commit`, which publishes them.
        self.commit.done = k;
    }

    /// Moves items from `items` into the chunk's slots, in order, until either runs out, and
    /// publishes them. Returns how many were moved.
    ///
    /// If `items` panics, nothing of this chunk is published and the items it gave are leaked.
    #[inline]
    pub fn fill_from_iter(mut self, items: impl IntoIterator<Item = T>) -> usize {
        let mut items = items.into_iter();
        let mut k = 0;
        let (first, second) = self.as_mut_slices();
        'fill: for run in [first, second] {
            for slot in run {
                match items.next() {
                    Some(item) => {
                        slot.write(item);
                        k += 1;
                    }
                    None => break 'fill,
                }
            }
        }
        // SAFETY: `k <= len()` slots, the first `k` in order, were written above.
        unsafe { self.commit(k) };
        k
    }

    /// Fills every slot of the chunk with `make(i)`, `i` counting from 0 in order, and
    /// publishes them all.
    ///
    /// A plain loop over the two slices: with no check between the items, the compiler can
    /// vectorise it. If `make` panics, nothing of this chunk is published and the items it
    /// made are leaked.
    #[inline]
    pub fn fill_with(mut self, mut make: impl FnMut(usize) -> T) {
        let (first, second) = self.as_mut_slices();
        let skip = first.len();
        for (i, slot) in first.iter_mut().enumerate() {
            slot.write(make(i));
        }
        for (i, slot) in second.iter_mut().enumerate() {
            slot.write(make(skip + i));
        }
        let k = self.len();
        // SAFETY: Every slot was written above.
        unsafe { self.commit(k) };
    }
}

impl<T> fmt::Debug for WriteChunk<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteChunk")
            .field("len", &self.len())
            .finish()
    }
}

/// The oldest items of an [`SpscQueue`], reserved by its consumer and lent as slices:
/// [`Consumer::read_chunk`] and [`Consumer::read_chunk_burst`] make one.
///
/// The items leave the queue when the chunk is dropped: they are dropped in place and their
/// slots given back to the producer. Should an item's `drop` panic (in userspace), the other
/// items are still dropped and the slots given back all the same.
///
/// # Invariants
///
/// `runs` are the `len()` full slots that `_commit`'s owner reserved on the consumer side,
/// from its `head`, each holding an item that nothing else reads, drops or overwrites until
/// `_commit` is dropped; `_commit.done` is `len()`.
///
/// [`SpscQueue`]: super::SpscQueue
/// [`Consumer::read_chunk`]: super::Consumer::read_chunk
/// [`Consumer::read_chunk_burst`]: super::Consumer::read_chunk_burst
pub struct ReadChunk<'a, T> {
    runs: Runs<T>,
    /// Gives the slots back when the chunk is dropped (after its `drop` has run).
    _commit: SingleCommit<'a>,
    _items: PhantomData<&'a mut [T]>,
}

chunk_len! {
    ReadChunk,
    /// Returns the number of items in the chunk.
    fn len;
    /// Returns `true` if the chunk holds no item (a burst that found the queue empty).
    fn is_empty;
}

impl<'a, T> ReadChunk<'a, T> {
    /// Lends the runs of items of a consumer reservation, which `commit` will give back.
    ///
    /// # Safety
    ///
    /// The runs are as the type invariant says, for `commit`'s reservation.
    #[inline(always)]
    pub(crate) unsafe fn new(runs: Runs<T>, mut commit: SingleCommit<'a>) -> Self {
        // INVARIANT: Guaranteed by the caller; every reserved item leaves the queue when the
        // chunk is dropped, so the commit counts them all.
        commit.done = runs.len();
        Self {
            runs,
            _commit: commit,
            _items: PhantomData,
        }
    }

    /// Returns the items, oldest first: those up to the end of the ring's array, then those
    /// from its start (empty unless the reservation wraps).
    #[inline]
    pub fn as_slices(&self) -> (&[T], &[T]) {
        let (first, second) = self.runs.slices();
        // SAFETY: Two disjoint runs of initialised items reserved to us (type invariant).
        unsafe { (&*first, &*second) }
    }

    /// Returns the items as [`ReadChunk::as_slices`] does, for changing them in place.
    #[inline]
    pub fn as_mut_slices(&mut self) -> (&mut [T], &mut [T]) {
        let (first, second) = self.runs.slices();
        // SAFETY: As in `as_slices`, and `&mut self` makes the access unique.
        unsafe { (&mut *first, &mut *second) }
    }
}

impl<T> Drop for ReadChunk<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // `_commit`, a field, is dropped after this body, also if a drop below panics: the
        // slots are given back either way.
        // SAFETY: Two disjoint runs of items that are ours (type invariant) and not used after
        // this: the slots are empty once `_commit` publishes them.
        unsafe { self.runs.drop_items() };
    }
}

impl<T: fmt::Debug> fmt::Debug for ReadChunk<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (first, second) = self.as_slices();
        f.debug_list().entries(first.iter().chain(second)).finish()
    }
}
