// SPDX-License-Identifier: GPL-2.0

//! [`MpmcQueue`], the multi-producer multi-consumer queue.

use super::batch::Batch;
// A multi side keeps its position in its `head`; it passes `OwnTail`, which it never reads.
use super::headtail::OwnTail;
use super::queue::queue_common;
use super::ring::Ring;
use super::Error;

/// A bounded lock-free queue of `N` slots for any number of producers and consumers.
///
/// `N` must be a power of two in `2 ..= 2^31` (checked at compile time); all `N` slots are
/// usable. Items move in and out by value; whatever the queue still holds when it is dropped
/// is dropped with it. The queue is stored inline (`N` slots of `T` plus two cache lines of
/// indices): build a large one in place with [`MpmcQueue::init_in_place`] rather than on a
/// kernel stack.
///
/// Every operation may be called concurrently from any number of threads, but the commit step
/// waits for earlier reservations: see the "Contexts" section of the [module
/// documentation](super) for where that is safe.
///
/// # Examples
///
/// ```
/// use kernel::alf_queue::{Batch, Error, MpmcQueue};
///
/// let q = MpmcQueue::<u32, 8>::new();
/// assert_eq!(q.capacity(), 8);
/// assert_eq!(q.enqueue(1), Ok(()));
///
/// // Bulk: all or nothing.
/// let mut batch = Batch::<u32, 16>::new();
/// for i in 2..=8 {
///     assert_eq!(batch.push(i), Ok(()));
/// }
/// assert_eq!(q.enqueue_bulk(&mut batch), Ok(()));
/// assert!(batch.is_empty());
/// assert_eq!(q.len(), 8);
///
/// // Full: a single item comes back, a bulk is refused whole.
/// assert_eq!(q.enqueue(9), Err(9));
/// assert_eq!(batch.push(9), Ok(()));
/// assert_eq!(q.enqueue_bulk(&mut batch), Err(Error::Full));
/// assert_eq!(batch.as_slice(), &[9]);
/// batch.clear();
///
/// // FIFO out, in bulk and one by one.
/// assert_eq!(q.dequeue_bulk(&mut batch, 3), Ok(()));
/// assert_eq!(batch.as_slice(), &[1, 2, 3]);
/// assert_eq!(q.dequeue(), Some(4));
/// assert_eq!(q.dequeue_burst(&mut batch, 8), Ok(4)); // Up to 8: 4 were there.
/// assert_eq!(batch.as_slice(), &[1, 2, 3, 5, 6, 7, 8]);
/// assert!(q.is_empty());
/// assert_eq!(q.dequeue(), None);
/// ```
///
/// Items are owned: what is still queued when the queue goes away is dropped with it, once.
///
/// ```
/// use core::cell::Cell;
/// use kernel::alf_queue::{Batch, MpmcQueue};
///
/// struct Counted<'a>(&'a Cell<u32>);
/// impl Drop for Counted<'_> {
///     fn drop(&mut self) {
///         self.0.set(self.0.get() + 1);
///     }
/// }
///
/// let drops = Cell::new(0);
/// {
///     // The indices cross u32::MAX while the items are in the queue.
///     let q = MpmcQueue::<Counted<'_>, 4>::with_start_index(u32::MAX - 1);
///     let mut batch = Batch::<Counted<'_>, 4>::new();
///     for _ in 0..4 {
///         assert!(batch.push(Counted(&drops)).is_ok());
///     }
///     assert!(q.enqueue_bulk(&mut batch).is_ok());
///     assert!(q.enqueue(Counted(&drops)).is_err()); // Full: handed back and dropped here.
///     assert_eq!(drops.get(), 1);
///     assert!(q.dequeue_bulk(&mut batch, 3).is_ok());
///     drop(batch.pop());
///     assert_eq!(drops.get(), 2);
///     // The batch (2 items) and the queue (1 item) are dropped here.
/// }
/// assert_eq!(drops.get(), 5);
/// ```
pub struct MpmcQueue<T, const N: usize> {
    ring: Ring<T, N>,
}

// SAFETY: The queue owns its items (it is `Send` exactly when they are); sending it sends them.
unsafe impl<T: Send, const N: usize> Send for MpmcQueue<T, N> {}

// SAFETY: Through `&MpmcQueue` items are only moved in and out, never shared, so `T: Send`
// suffices. Every `&self` method runs the multi-producer and multi-consumer protocol, under
// which each slot is accessed by one thread at a time, each handover ordered by an
// acquire/release pair (see the `Ring` invariants and the ordering comments).
unsafe impl<T: Send, const N: usize> Sync for MpmcQueue<T, N> {}

queue_common! {
    MpmcQueue, multi: true,
    with_start_index: {
        /// # Examples
        ///
        /// Crossing `u32::MAX` with mixed single and bulk operations:
        ///
        /// ```
        /// use kernel::alf_queue::{Batch, MpmcQueue};
        ///
        /// let q = MpmcQueue::<u32, 4>::with_start_index(u32::MAX - 5);
        /// let mut batch = Batch::<u32, 4>::new();
        /// let mut next_in = 0;
        /// let mut next_out = 0;
        /// for round in 0..6 {
        ///     // Fill the ring completely, in bulks of 1 to 3 and single items.
        ///     while q.len() < 4 {
        ///         let n = core::cmp::min(1 + round % 3, 4 - q.len());
        ///         for _ in 0..n {
        ///             assert!(batch.push(next_in).is_ok());
        ///             next_in += 1;
        ///         }
        ///         assert_eq!(q.enqueue_bulk(&mut batch), Ok(()));
        ///     }
        ///     assert_eq!(q.enqueue(99), Err(99));
        ///     // Empty it again, checking FIFO order across the wrap.
        ///     assert_eq!(q.dequeue(), Some(next_out));
        ///     next_out += 1;
        ///     assert_eq!(q.dequeue_bulk(&mut batch, 3), Ok(()));
        ///     for item in batch.drain() {
        ///         assert_eq!(item, next_out);
        ///         next_out += 1;
        ///     }
        ///     assert_eq!(q.dequeue(), None);
        /// }
        /// assert_eq!(next_out, 24);
        /// ```
    },
    init_in_place: {
        /// # Examples
        ///
        /// ```
        /// use core::mem::MaybeUninit;
        /// use kernel::alf_queue::MpmcQueue;
        ///
        /// let mut slot = MaybeUninit::<MpmcQueue<u64, 16>>::uninit();
        /// let q = MpmcQueue::init_in_place(&mut slot);
        /// assert!(q.is_empty());
        /// assert_eq!(q.enqueue(7), Ok(()));
        /// // SAFETY: `init_in_place` initialised `slot`.
        /// let q = unsafe { slot.assume_init() };
        /// assert_eq!(q.dequeue(), Some(7));
        /// ```
    },
}

impl<T, const N: usize> MpmcQueue<T, N> {
    /// Moves `item` into the queue, or hands it back if the queue is full.
    ///
    /// For a queue used one item at a time across threads, see
    /// [`StampQueue`](super::StampQueue); this queue is built for bulks.
    #[inline]
    pub fn enqueue(&self, item: T) -> Result<(), T> {
        // SAFETY: The multi-producer protocol needs no exclusivity.
        unsafe { self.ring.enqueue_one::<true>(OwnTail, item) }
    }

    /// Moves the oldest item out of the queue, if there is one.
    ///
    /// One item at a time across threads, see [`StampQueue`](super::StampQueue).
    #[inline]
    pub fn dequeue(&self) -> Option<T> {
        // SAFETY: The multi-consumer protocol needs no exclusivity.
        unsafe { self.ring.dequeue_one::<true>(OwnTail) }
    }

    /// Moves all the items of `batch` into the queue, or none.
    ///
    /// On success the batch is empty. On error it is left untouched: `Error::Full` if there
    /// is not room for all of them now, `Error::TooLarge` if it holds more than `N` (there
    /// never will be). An empty batch is `Ok` and does nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::{Batch, Error, MpmcQueue};
    ///
    /// let q = MpmcQueue::<u32, 4>::new();
    /// let mut batch = Batch::<u32, 8>::new();
    /// // Zero-length bulk: defined, a no-op.
    /// assert_eq!(q.enqueue_bulk(&mut batch), Ok(()));
    /// assert!(q.is_empty());
    /// // More than the capacity: an error, nothing moves.
    /// for i in 0..5 {
    ///     assert!(batch.push(i).is_ok());
    /// }
    /// assert_eq!(q.enqueue_bulk(&mut batch), Err(Error::TooLarge));
    /// assert_eq!(batch.len(), 5);
    /// assert!(q.is_empty());
    /// ```
    // Always inlined: the body is the whole bulk path (reservation, copy, commit), which the
    // compiler's estimate can leave out of line at a caller with several call sites, and a
    // bulk of a few items then pays more for the call than for its work.
    #[inline(always)]
    pub fn enqueue_bulk<const K: usize>(&self, batch: &mut Batch<T, K>) -> Result<(), Error> {
        // SAFETY: The multi-producer protocol needs no exclusivity.
        unsafe { self.ring.enqueue_batch::<true, true, K>(OwnTail, batch) }.map(|_| ())
    }

    /// Moves as many of the first items of `batch` into the queue as fit now.
    ///
    /// Returns how many moved (0 if the queue is full or the batch empty); the rest stay in
    /// the batch, in order, at its front. `Error::TooLarge` if the batch holds more than `N`
    /// items (nothing moves).
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::{Batch, MpmcQueue};
    ///
    /// let q = MpmcQueue::<u32, 4>::new();
    /// assert_eq!(q.enqueue(0), Ok(()));
    /// let mut batch = Batch::<u32, 4>::new();
    /// for i in 1..5 {
    ///     assert!(batch.push(i).is_ok());
    /// }
    /// assert_eq!(q.enqueue_burst(&mut batch), Ok(3));
    /// assert_eq!(batch.as_slice(), &[4]);
    /// assert_eq!(q.enqueue_burst(&mut batch), Ok(0)); // Full.
    /// ```
    #[inline]
    pub fn enqueue_burst<const K: usize>(&self, batch: &mut Batch<T, K>) -> Result<usize, Error> {
        // SAFETY: The multi-producer protocol needs no exclusivity.
        unsafe { self.ring.enqueue_batch::<true, false, K>(OwnTail, batch) }
    }

    /// Appends exactly `n` of the oldest items to `batch`, or none.
    ///
    /// `Error::Empty` if fewer than `n` are present now (nothing moves); `Error::TooLarge` if
    /// `n` exceeds `N` or `batch.remaining()`. `n == 0` is `Ok` and does nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::{Batch, Error, MpmcQueue};
    ///
    /// let q = MpmcQueue::<u32, 4>::new();
    /// let mut batch = Batch::<u32, 8>::new();
    /// assert_eq!(q.dequeue_bulk(&mut batch, 0), Ok(()));
    /// assert_eq!(q.dequeue_bulk(&mut batch, 1), Err(Error::Empty));
    /// assert_eq!(q.dequeue_bulk(&mut batch, 5), Err(Error::TooLarge));
    /// assert_eq!(q.enqueue(1), Ok(()));
    /// assert_eq!(q.enqueue(2), Ok(()));
    /// assert_eq!(q.dequeue_bulk(&mut batch, 3), Err(Error::Empty));
    /// assert_eq!(q.dequeue_bulk(&mut batch, 2), Ok(()));
    /// assert_eq!(batch.as_slice(), &[1, 2]);
    /// ```
    // Always inlined, as `enqueue_bulk`.
    #[inline(always)]
    pub fn dequeue_bulk<const K: usize>(
        &self,
        batch: &mut Batch<T, K>,
        n: usize,
    ) -> Result<(), Error> {
        // SAFETY: The multi-consumer protocol needs no exclusivity.
        unsafe { self.ring.dequeue_batch::<true, true, K>(OwnTail, batch, n) }.map(|_| ())
    }

    /// Appends up to `n` of the oldest items to `batch`, as many as are present.
    ///
    /// Returns how many moved (0 if the queue is empty). `Error::TooLarge` if `n` exceeds `N`
    /// or `batch.remaining()`.
    #[inline]
    pub fn dequeue_burst<const K: usize>(
        &self,
        batch: &mut Batch<T, K>,
        n: usize,
    ) -> Result<usize, Error> {
        // SAFETY: The multi-consumer protocol needs no exclusivity.
        unsafe { self.ring.dequeue_batch::<true, false, K>(OwnTail, batch, n) }
    }

    /// Copies all of `items` into the queue, or none.
    ///
    /// The bulk enqueue for items that are `Copy`, such as object pointers: the queue takes
    /// copies straight from the caller's array, as the C original does, and the array is left
    /// as it was. `Error::Full` if there is not room for all of them now, `Error::TooLarge` if
    /// there are more than `N` (there never will be). An empty slice is `Ok` and does nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::{Error, MpmcQueue};
    ///
    /// let q = MpmcQueue::<u32, 4>::new();
    /// assert_eq!(q.enqueue_bulk_from(&[1, 2, 3]), Ok(()));
    /// assert_eq!(q.enqueue_bulk_from(&[4, 5]), Err(Error::Full));
    /// assert_eq!(q.enqueue_bulk_from(&[0; 5]), Err(Error::TooLarge));
    /// let mut out = [0; 3];
    /// assert_eq!(q.dequeue_bulk_into(&mut out), Ok(()));
    /// assert_eq!(out, [1, 2, 3]);
    /// ```
    #[inline]
    pub fn enqueue_bulk_from(&self, items: &[T]) -> Result<(), Error>
    where
        T: Copy,
    {
        // SAFETY: The multi-producer protocol needs no exclusivity.
        unsafe { self.ring.enqueue_slice::<true, true>(OwnTail, items) }.map(|_| ())
    }

    /// Copies as many of the first of `items` into the queue as fit now.
    ///
    /// Returns how many were copied (0 if the queue is full or `items` empty).
    /// `Error::TooLarge` if there are more than `N` (nothing is copied).
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::MpmcQueue;
    ///
    /// let q = MpmcQueue::<u32, 4>::new();
    /// assert_eq!(q.enqueue_burst_from(&[1, 2, 3]), Ok(3));
    /// assert_eq!(q.enqueue_burst_from(&[4, 5]), Ok(1));
    /// let mut out = [0; 4];
    /// assert_eq!(q.dequeue_burst_into(&mut out[..2]), Ok(2));
    /// assert_eq!(q.dequeue_burst_into(&mut out[2..]), Ok(2));
    /// assert_eq!(out, [1, 2, 3, 4]);
    /// assert_eq!(q.dequeue_burst_into(&mut out), Ok(0)); // Empty.
    /// ```
    #[inline]
    pub fn enqueue_burst_from(&self, items: &[T]) -> Result<usize, Error>
    where
        T: Copy,
    {
        // SAFETY: The multi-producer protocol needs no exclusivity.
        unsafe { self.ring.enqueue_slice::<true, false>(OwnTail, items) }
    }

    /// Fills `out` with the `out.len()` oldest items, or moves none.
    ///
    /// The bulk dequeue for items that are `Copy`: the items are copied straight into the
    /// caller's array, whose old values are overwritten. `Error::Empty` if fewer than
    /// `out.len()` are present now (`out` is left as it was); `Error::TooLarge` if `out` is
    /// longer than `N`. An empty `out` is `Ok` and does nothing.
    #[inline]
    pub fn dequeue_bulk_into(&self, out: &mut [T]) -> Result<(), Error>
    where
        T: Copy,
    {
        // SAFETY: The multi-consumer protocol needs no exclusivity.
        unsafe { self.ring.dequeue_slice::<true, true>(OwnTail, out) }.map(|_| ())
    }

    /// Moves up to `out.len()` of the oldest items into the start of `out`, as many as are
    /// present.
    ///
    /// Returns how many moved (0 if the queue is empty); the rest of `out` is left as it was.
    /// `Error::TooLarge` if `out` is longer than `N`.
    #[inline]
    pub fn dequeue_burst_into(&self, out: &mut [T]) -> Result<usize, Error>
    where
        T: Copy,
    {
        // SAFETY: The multi-consumer protocol needs no exclusivity.
        unsafe { self.ring.dequeue_slice::<true, false>(OwnTail, out) }
    }
}
