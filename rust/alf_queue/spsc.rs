// SPDX-License-Identifier: GPL-2.0

//! [`SpscQueue`], the single-producer single-consumer queue, and its [`Producer`] and
//! [`Consumer`] handles.

use core::cell::Cell;
use core::fmt;
use core::marker::PhantomData;

use super::batch::Batch;
#[cfg(not(loom))]
use super::chunk::{ReadChunk, WriteChunk};
use super::headtail::{OwnTail, Position, TRAIL_SPINS};
use super::queue::queue_common;
use super::ring::Ring;
#[cfg(not(loom))]
use super::ring::{Cons, Prod};
use super::Error;

/// A bounded lock-free queue of `N` slots for one producer and one consumer at a time.
///
/// The same ring as [`MpmcQueue`](super::MpmcQueue), but each side reserves privately, from
/// its own position, instead of with a compare-and-swap, and never waits for anyone: an acquire
/// load of the other side's tail when its copy of it shows too little room, the copy, and a
/// release store of its tail. A [`Producer`] or [`Consumer`] keeps its position in the handle;
/// the `&self` methods read it from the side's tail (a relaxed load).
///
/// There are two ways to use it:
///
/// - [`SpscQueue::split`] hands out a [`Producer`] and a [`Consumer`], unique handles that can
///   be sent to other threads; their methods are safe.
/// - The `unsafe` `&self` methods ([`SpscQueue::enqueue`], [`SpscQueue::dequeue`] and their
///   bulk forms) put the "single" on the caller: any two producer-side (or two consumer-side)
///   calls must be ordered by happens-before, not merely not overlap in time. This is for a
///   structure such as a per-CPU cache whose producer and consumer are "whoever runs on this
///   CPU with preemption (or bottom halves) disabled".
///
/// `N` must be a power of two in `2 ..= 2^31`; all `N` slots are usable; items left in the
/// queue are dropped with it.
///
/// # Examples
///
/// ```
/// use kernel::alf_queue::{Batch, SpscQueue};
///
/// let mut q = SpscQueue::<u32, 4>::new();
/// let (mut tx, mut rx) = q.split();
/// assert_eq!(tx.enqueue(1), Ok(()));
/// let mut batch = Batch::<u32, 4>::new();
/// for i in 2..6 {
///     assert!(batch.push(i).is_ok());
/// }
/// assert_eq!(tx.enqueue_burst(&mut batch), Ok(3)); // Room for 3 only.
/// assert_eq!(batch.as_slice(), &[5]);
/// assert_eq!(tx.enqueue(6), Err(6));
/// assert_eq!(rx.dequeue(), Some(1));
/// assert_eq!(rx.dequeue_burst(&mut batch, 3), Ok(3));
/// assert_eq!(batch.as_slice(), &[5, 2, 3, 4]);
/// assert_eq!(rx.dequeue(), None);
/// ```
///
/// The per-CPU style, through `&self`:
///
/// ```
/// use kernel::alf_queue::{Batch, Error, SpscQueue};
///
/// let q = SpscQueue::<u32, 8>::new();
/// let mut batch = Batch::<u32, 8>::new();
/// for i in 0..8 {
///     assert!(batch.push(i).is_ok());
/// }
/// // SAFETY: This thread is the only one using `q`.
/// unsafe {
///     assert_eq!(q.enqueue_bulk(&mut batch), Ok(()));
///     assert_eq!(q.enqueue(8), Err(8));
///     assert_eq!(q.dequeue_bulk(&mut batch, 8), Ok(()));
///     assert_eq!(q.dequeue_bulk(&mut batch, 0), Ok(()));
///     assert_eq!(q.dequeue(), None);
///     assert_eq!(q.dequeue_bulk(&mut batch, 9), Err(Error::TooLarge));
/// }
/// assert_eq!(batch.as_slice(), &[0, 1, 2, 3, 4, 5, 6, 7]);
/// ```
pub struct SpscQueue<T, const N: usize> {
    ring: Ring<T, N>,
}

// SAFETY: The queue owns its items (it is `Send` exactly when they are); sending it sends them.
unsafe impl<T: Send, const N: usize> Send for SpscQueue<T, N> {}

// SAFETY: Through `&SpscQueue` items are only moved in and out, never shared, so `T: Send`
// suffices. The safe `&self` methods only read indices. The methods that touch slots are
// either `unsafe`, with callers promising that the calls of each side are ordered by
// happens-before, or reached through the unique `Producer`/`Consumer` handles (whose `&mut`
// calls are so ordered); under that condition the single-producer/single-consumer protocol
// gives each slot to one thread at a time, each handover ordered by an acquire/release pair.
unsafe impl<T: Send, const N: usize> Sync for SpscQueue<T, N> {}

queue_common! {
    SpscQueue, multi: false,
    with_start_index: {
        /// # Examples
        ///
        /// ```
        /// use kernel::alf_queue::{Batch, SpscQueue};
        ///
        /// let mut q = SpscQueue::<u8, 2>::with_start_index(u32::MAX);
        /// let (mut tx, mut rx) = q.split();
        /// let mut batch = Batch::<u8, 2>::new();
        /// for i in 0..10u8 {
        ///     assert!(batch.push(i).is_ok());
        ///     assert_eq!(tx.enqueue_bulk(&mut batch), Ok(()));
        ///     assert_eq!(rx.dequeue_bulk(&mut batch, 1), Ok(()));
        ///     assert_eq!(batch.pop(), Some(i));
        /// }
        /// ```
    },
    init_in_place: {
        /// # Examples
        ///
        /// ```
        /// use core::mem::MaybeUninit;
        /// use kernel::alf_queue::SpscQueue;
        ///
        /// let mut slot = MaybeUninit::<SpscQueue<u64, 16>>::uninit();
        /// assert!(SpscQueue::init_in_place(&mut slot).is_empty());
        /// // SAFETY: `init_in_place` initialised `slot`.
        /// let mut q = unsafe { slot.assume_init() };
        /// let (mut tx, mut rx) = q.split();
        /// assert_eq!(tx.enqueue(7), Ok(()));
        /// assert_eq!(rx.dequeue(), Some(7));
        /// ```
    },
}

impl<T, const N: usize> SpscQueue<T, N> {
    /// Splits the queue into its producer and its consumer handle.
    ///
    /// The handles borrow the queue mutably, so while they exist they are its only users.
    #[inline]
    pub fn split(&mut self) -> (Producer<'_, T, N>, Consumer<'_, T, N>) {
        let queue: &Self = self;
        // Each side's position as the `&self` methods find it: `&mut self` orders every earlier
        // operation before this, so none is in progress.
        let prod = OwnTail.get(&queue.ring.prod);
        let cons = OwnTail.get(&queue.ring.cons);
        // INVARIANT: We hold the only reference to the queue for `'_` and hand out exactly
        // one producer and one consumer, each with its side's position.
        (
            Producer {
                queue,
                pos: prod,
                _not_sync: PhantomData,
            },
            Consumer {
                queue,
                pos: cons,
                _not_sync: PhantomData,
            },
        )
    }

    /// Moves `item` into the queue, or hands it back if the queue is full.
    ///
    /// # Safety
    ///
    /// Every other producer-side call (`enqueue*`) on this queue *happens before* this one
    /// starts or *happens after* it returns, in the sense of the memory model: calls on one
    /// thread are ordered by program order (but an interrupt handler running the same side on
    /// this CPU is not: disable interrupts or bottom halves around the call accordingly), and
    /// calls on different threads must be ordered by a synchronisation between them, such as a
    /// lock, a release store read by an acquire load, or spawning or joining the thread. For a
    /// per-CPU queue used with preemption or bottom halves disabled, the scheduler's migration
    /// of a task between CPUs provides that ordering. Calls that merely do not overlap in time,
    /// for instance handed over through a `Relaxed` flag, race on the slots.
    #[inline]
    pub unsafe fn enqueue(&self, item: T) -> Result<(), T> {
        // SAFETY: Producer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.enqueue_one::<false>(OwnTail, item) }
    }

    /// Moves all the items of `batch` into the queue, or none; see
    /// [`MpmcQueue::enqueue_bulk`](super::MpmcQueue::enqueue_bulk).
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::enqueue`].
    #[inline]
    pub unsafe fn enqueue_bulk<const K: usize>(
        &self,
        batch: &mut Batch<T, K>,
    ) -> Result<(), Error> {
        // SAFETY: Producer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.enqueue_batch::<false, true, K>(OwnTail, batch) }.map(|_| ())
    }

    /// Moves as many of the first items of `batch` into the queue as fit; see
    /// [`MpmcQueue::enqueue_burst`](super::MpmcQueue::enqueue_burst).
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::enqueue`].
    #[inline]
    pub unsafe fn enqueue_burst<const K: usize>(
        &self,
        batch: &mut Batch<T, K>,
    ) -> Result<usize, Error> {
        // SAFETY: Producer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.enqueue_batch::<false, false, K>(OwnTail, batch) }
    }

    /// Moves the oldest item out of the queue, if there is one.
    ///
    /// # Safety
    ///
    /// Every other consumer-side call (`dequeue*`) on this queue happens before this one starts
    /// or happens after it returns, as for the producer side in [`SpscQueue::enqueue`].
    #[inline]
    pub unsafe fn dequeue(&self) -> Option<T> {
        // SAFETY: Consumer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.dequeue_one::<false>(OwnTail) }
    }

    /// Appends exactly `n` of the oldest items to `batch`, or none; see
    /// [`MpmcQueue::dequeue_bulk`](super::MpmcQueue::dequeue_bulk).
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::dequeue`].
    #[inline]
    pub unsafe fn dequeue_bulk<const K: usize>(
        &self,
        batch: &mut Batch<T, K>,
        n: usize,
    ) -> Result<(), Error> {
        // SAFETY: Consumer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.dequeue_batch::<false, true, K>(OwnTail, batch, n) }.map(|_| ())
    }

    /// Appends up to `n` of the oldest items to `batch`; see
    /// [`MpmcQueue::dequeue_burst`](super::MpmcQueue::dequeue_burst).
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::dequeue`].
    #[inline]
    pub unsafe fn dequeue_burst<const K: usize>(
        &self,
        batch: &mut Batch<T, K>,
        n: usize,
    ) -> Result<usize, Error> {
        // SAFETY: Consumer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe {
            self.ring
                .dequeue_batch::<false, false, K>(OwnTail, batch, n)
        }
    }

    /// Copies all of `items` into the queue, or none; see
    /// [`MpmcQueue::enqueue_bulk_from`](super::MpmcQueue::enqueue_bulk_from).
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::enqueue`].
    #[inline]
    pub unsafe fn enqueue_bulk_from(&self, items: &[T]) -> Result<(), Error>
    where
        T: Copy,
    {
        // SAFETY: Producer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.enqueue_slice::<false, true>(OwnTail, items) }.map(|_| ())
    }

    /// Copies as many of the first of `items` into the queue as fit; see
    /// [`MpmcQueue::enqueue_burst_from`](super::MpmcQueue::enqueue_burst_from).
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::enqueue`].
    #[inline]
    pub unsafe fn enqueue_burst_from(&self, items: &[T]) -> Result<usize, Error>
    where
        T: Copy,
    {
        // SAFETY: Producer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.enqueue_slice::<false, false>(OwnTail, items) }
    }

    /// Fills `out` with the `out.len()` oldest items, or moves none; see
    /// [`MpmcQueue::dequeue_bulk_into`](super::MpmcQueue::dequeue_bulk_into).
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::dequeue`].
    #[inline]
    pub unsafe fn dequeue_bulk_into(&self, out: &mut [T]) -> Result<(), Error>
    where
        T: Copy,
    {
        // SAFETY: Consumer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.dequeue_slice::<false, true>(OwnTail, out) }.map(|_| ())
    }

    /// Moves up to `out.len()` of the oldest items into the start of `out`; see
    /// [`MpmcQueue::dequeue_burst_into`](super::MpmcQueue::dequeue_burst_into).
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::dequeue`].
    #[inline]
    pub unsafe fn dequeue_burst_into(&self, out: &mut [T]) -> Result<usize, Error>
    where
        T: Copy,
    {
        // SAFETY: Consumer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.dequeue_slice::<false, false>(OwnTail, out) }
    }

    /// Moves `n` items into the queue, or none, writing each straight into its slot; see
    /// [`Producer::enqueue_bulk_with`].
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::enqueue`].
    #[inline]
    pub unsafe fn enqueue_bulk_with(
        &self,
        n: usize,
        make: impl FnMut(usize) -> T,
    ) -> Result<(), Error> {
        // SAFETY: Producer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.enqueue_with::<true>(OwnTail, n, make) }.map(|_| ())
    }

    /// Moves up to `n` items into the queue, as many as fit, writing each straight into its
    /// slot; see [`Producer::enqueue_burst_with`].
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::enqueue`].
    #[inline]
    pub unsafe fn enqueue_burst_with(
        &self,
        n: usize,
        make: impl FnMut(usize) -> T,
    ) -> Result<usize, Error> {
        // SAFETY: Producer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.enqueue_with::<false>(OwnTail, n, make) }
    }

    /// Moves exactly `n` of the oldest items out of the queue, or none, passing each to `take`;
    /// see [`Consumer::dequeue_bulk_with`].
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::dequeue`].
    #[inline]
    pub unsafe fn dequeue_bulk_with(&self, n: usize, take: impl FnMut(T)) -> Result<(), Error> {
        // SAFETY: Consumer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.dequeue_with::<true>(OwnTail, n, 0, take) }.map(|_| ())
    }

    /// Moves up to `n` of the oldest items out of the queue, passing each to `take`; see
    /// [`Consumer::dequeue_burst_with`].
    ///
    /// # Safety
    ///
    /// As for [`SpscQueue::dequeue`].
    #[inline]
    pub unsafe fn dequeue_burst_with(&self, n: usize, take: impl FnMut(T)) -> Result<usize, Error> {
        // SAFETY: Consumer-side calls are ordered by happens-before, by our caller's guarantee.
        unsafe { self.ring.dequeue_with::<false>(OwnTail, n, 0, take) }
    }
}

/// Implements what [`Producer`] and [`Consumer`] have alike: the queries (`capacity`, `len`,
/// `is_empty`), `Debug`, and the two methods that lend the reserved slots of the handle's side
/// (`$Side` of the ring) as a `$Chunk` (`$chunk` all or nothing, `$chunk_burst` as many as
/// there are), each with the docs given. `$other` names the other side, in the docs.
macro_rules! handle_common {
    (
        $Handle:ident, side: $Side:ident, other: $other:literal,
        $(#[$chunk_doc:meta])* fn $chunk:ident;
        $(#[$burst_doc:meta])* fn $chunk_burst:ident -> $Chunk:ident;
    ) => {
        impl<T, const N: usize> $Handle<'_, T, N> {
            /// Returns `N`, the number of slots.
            #[inline]
            pub const fn capacity(&self) -> usize {
                N
            }

            #[doc = concat!(
                "Returns the number of items in the queue (a snapshot: the ", $other,
                " may be running)."
            )]
            #[inline]
            pub fn len(&self) -> usize {
                self.queue.len()
            }

            /// Returns `true` if the queue held no item when looked at.
            #[inline]
            pub fn is_empty(&self) -> bool {
                self.queue.is_empty()
            }

            $(#[$chunk_doc])*
            #[cfg(not(loom))]
            #[inline]
            pub fn $chunk(&mut self, n: usize) -> Result<$Chunk<'_, T>, Error> {
                let queue = self.queue;
                // SAFETY: By the type invariant we are the only handle of our side, `pos` is its
                // position, and `&mut self` orders our own calls by happens-before (moving the
                // handle to another thread synchronises); the chunk borrows `self` (and `pos`)
                // until it commits, and is the one of our side.
                unsafe { queue.ring.lend::<$Side, true, _>(&mut self.pos, n, $Chunk::new) }
            }

            $(#[$burst_doc])*
            #[cfg(not(loom))]
            #[inline]
            pub fn $chunk_burst(&mut self, n: usize) -> Result<$Chunk<'_, T>, Error> {
                let queue = self.queue;
                // SAFETY: As in the all-or-nothing form above.
                unsafe { queue.ring.lend::<$Side, false, _>(&mut self.pos, n, $Chunk::new) }
            }
        }

        impl<T, const N: usize> fmt::Debug for $Handle<'_, T, N> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($Handle))
                    .field("queue", self.queue)
                    .finish()
            }
        }
    };
}

/// The producer handle of a split [`SpscQueue`].
///
/// It can be sent to another thread (if `T` can) but not shared: it is `Send`, not `Sync`.
///
/// # Invariants
///
/// While it exists it is the only producer of `queue`: [`SpscQueue::split`] borrowed the queue
/// mutably for `'a` and created one `Producer`. `pos` is the producer side's position: the ring's
/// `prod.tail` whenever no operation of this handle is in progress.
pub struct Producer<'a, T, const N: usize> {
    queue: &'a SpscQueue<T, N>,
    /// The producer side's position, where its next operation starts.
    pos: u32,
    _not_sync: PhantomData<Cell<()>>,
}

impl<T, const N: usize> Producer<'_, T, N> {
    /// Moves `item` into the queue, or hands it back if the queue is full.
    #[inline]
    pub fn enqueue(&mut self, item: T) -> Result<(), T> {
        // SAFETY: By the type invariant we are the only producer and `pos` is our position;
        // `&mut self` orders our own calls by happens-before (moving the handle to another
        // thread synchronises).
        unsafe { self.queue.ring.enqueue_one::<false>(&mut self.pos, item) }
    }

    /// Moves all the items of `batch` into the queue, or none; see
    /// [`MpmcQueue::enqueue_bulk`](super::MpmcQueue::enqueue_bulk).
    #[inline]
    pub fn enqueue_bulk<const K: usize>(&mut self, batch: &mut Batch<T, K>) -> Result<(), Error> {
        // SAFETY: As in `enqueue`.
        unsafe {
            self.queue
                .ring
                .enqueue_batch::<false, true, K>(&mut self.pos, batch)
        }
        .map(|_| ())
    }

    /// Moves as many of the first items of `batch` into the queue as fit; see
    /// [`MpmcQueue::enqueue_burst`](super::MpmcQueue::enqueue_burst).
    #[inline]
    pub fn enqueue_burst<const K: usize>(
        &mut self,
        batch: &mut Batch<T, K>,
    ) -> Result<usize, Error> {
        // SAFETY: As in `enqueue`.
        unsafe {
            self.queue
                .ring
                .enqueue_batch::<false, false, K>(&mut self.pos, batch)
        }
    }

    /// Copies all of `items` into the queue, or none; see
    /// [`MpmcQueue::enqueue_bulk_from`](super::MpmcQueue::enqueue_bulk_from).
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::{Error, SpscQueue};
    ///
    /// let mut q = SpscQueue::<u32, 4>::new();
    /// let (mut tx, mut rx) = q.split();
    /// assert_eq!(tx.enqueue_bulk_from(&[1, 2, 3]), Ok(()));
    /// assert_eq!(tx.enqueue_bulk_from(&[4, 5]), Err(Error::Full));
    /// assert_eq!(tx.enqueue_burst_from(&[4, 5]), Ok(1));
    /// let mut out = [0; 3];
    /// assert_eq!(rx.dequeue_bulk_into(&mut out), Ok(()));
    /// assert_eq!(out, [1, 2, 3]);
    /// assert_eq!(rx.dequeue_bulk_into(&mut out[..2]), Err(Error::Empty));
    /// assert_eq!(rx.dequeue_burst_into(&mut out), Ok(1));
    /// assert_eq!(out, [4, 2, 3]);
    /// ```
    #[inline]
    pub fn enqueue_bulk_from(&mut self, items: &[T]) -> Result<(), Error>
    where
        T: Copy,
    {
        // SAFETY: As in `enqueue`.
        unsafe {
            self.queue
                .ring
                .enqueue_slice::<false, true>(&mut self.pos, items)
        }
        .map(|_| ())
    }

    /// Copies as many of the first of `items` into the queue as fit; see
    /// [`MpmcQueue::enqueue_burst_from`](super::MpmcQueue::enqueue_burst_from).
    #[inline]
    pub fn enqueue_burst_from(&mut self, items: &[T]) -> Result<usize, Error>
    where
        T: Copy,
    {
        // SAFETY: As in `enqueue`.
        unsafe {
            self.queue
                .ring
                .enqueue_slice::<false, false>(&mut self.pos, items)
        }
    }

    /// Moves `n` items into the queue, or none, writing each straight into its slot: the
    /// item of index `i` is `make(i)`, for `i` in `0..n`.
    ///
    /// This is [`Producer::enqueue_bulk`] without a [`Batch`]: no item is copied through a
    /// buffer. `make` runs only once the `n` slots are reserved, `n` times, in order. Returns
    /// `Err(Full)` without calling it if fewer than `n` slots are free, `Err(TooLarge)` if `n`
    /// exceeds `N`. If `make` panics, the items it made before are in the queue and the panic
    /// continues.
    ///
    /// Only the single-producer queue has this form: on a multi side, every later operation
    /// of the side would wait for the caller's code to finish.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::{Error, SpscQueue};
    ///
    /// let mut q = SpscQueue::<u32, 4>::new();
    /// let (mut tx, mut rx) = q.split();
    /// assert_eq!(tx.enqueue_bulk_with(3, |i| 10 * i as u32), Ok(()));
    /// assert_eq!(tx.enqueue_bulk_with(2, |_| 0), Err(Error::Full));
    /// assert_eq!(tx.enqueue_burst_with(2, |i| 30 + i as u32), Ok(1)); // Room for 1 only.
    /// assert_eq!(tx.enqueue_bulk_with(5, |_| 0), Err(Error::TooLarge));
    ///
    /// let mut seen = [0; 4];
    /// let mut next = 0;
    /// assert_eq!(rx.dequeue_bulk_with(5, |_| ()), Err(Error::TooLarge));
    /// assert_eq!(rx.dequeue_bulk_with(3, |x| { seen[next] = x; next += 1; }), Ok(()));
    /// assert_eq!(rx.dequeue_bulk_with(2, |_| ()), Err(Error::Empty));
    /// assert_eq!(rx.dequeue_burst_with(4, |x| { seen[next] = x; next += 1; }), Ok(1));
    /// assert_eq!(seen, [0, 10, 20, 30]);
    /// ```
    #[inline]
    pub fn enqueue_bulk_with(
        &mut self,
        n: usize,
        make: impl FnMut(usize) -> T,
    ) -> Result<(), Error> {
        // SAFETY: As in `enqueue`.
        unsafe { self.queue.ring.enqueue_with::<true>(&mut self.pos, n, make) }.map(|_| ())
    }

    /// Moves up to `n` items into the queue, as many as fit, writing each straight into its
    /// slot: the item of index `i` is `make(i)`.
    ///
    /// Returns how many were moved (`make` ran that many times, in order); `Err(TooLarge)` if
    /// `n` exceeds `N`. A panic in `make` is handled as in [`Producer::enqueue_bulk_with`],
    /// which has an example.
    #[inline]
    pub fn enqueue_burst_with(
        &mut self,
        n: usize,
        make: impl FnMut(usize) -> T,
    ) -> Result<usize, Error> {
        // SAFETY: As in `enqueue`.
        unsafe {
            self.queue
                .ring
                .enqueue_with::<false>(&mut self.pos, n, make)
        }
    }
}

handle_common! {
    Producer, side: Prod, other: "consumer",
    /// Reserves `n` empty slots, or none, and lends them as a [`WriteChunk`] of up to two
    /// slices, to be filled in place and committed.
    ///
    /// The caller's own loops run on the slots, which the compiler can vectorise; nothing
    /// reaches the consumer before [`WriteChunk::commit`], [`WriteChunk::fill_with`] or
    /// [`WriteChunk::fill_from_iter`].
    /// `Err(Full)` if fewer than `n` slots are free, `Err(TooLarge)` if `n` exceeds `N`.
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::{Error, SpscQueue};
    ///
    /// let mut q = SpscQueue::<u32, 4>::new();
    /// let (mut tx, mut rx) = q.split();
    /// assert_eq!(tx.write_chunk(3).map(|w| w.fill_from_iter(0..)), Ok(3));
    /// assert_eq!(tx.write_chunk(2).err(), Some(Error::Full));
    /// let mut w = tx.write_chunk_burst(4).unwrap(); // Room for 1 only.
    /// let (first, second) = w.as_mut_slices();
    /// assert_eq!(first.len() + second.len(), 1);
    /// first[0].write(30);
    /// // SAFETY: The chunk's one slot was written just above.
    /// unsafe { w.commit(1) };
    ///
    /// let r = rx.read_chunk(3).unwrap();
    /// let (first, second) = r.as_slices();
    /// assert_eq!(first.iter().sum::<u32>() + second.iter().sum::<u32>(), 3); // 0 + 1 + 2
    /// drop(r); // The three leave the queue.
    /// assert_eq!(rx.read_chunk(2).err(), Some(Error::Empty));
    /// let r = rx.read_chunk_burst(4).unwrap();
    /// assert_eq!(r.as_slices(), (&[30][..], &[][..]));
    /// ```
    fn write_chunk;
    /// Reserves up to `n` empty slots, as many as are free, and lends them as a
    /// [`WriteChunk`] (empty if the queue is full). `Err(TooLarge)` if `n` exceeds `N`.
    /// [`Producer::write_chunk`] has an example.
    fn write_chunk_burst -> WriteChunk;
}

/// The consumer handle of a split [`SpscQueue`].
///
/// It can be sent to another thread (if `T` can) but not shared: it is `Send`, not `Sync`.
///
/// # Invariants
///
/// While it exists it is the only consumer of `queue`: [`SpscQueue::split`] borrowed the queue
/// mutably for `'a` and created one `Consumer`. `pos` is the consumer side's position: the ring's
/// `cons.tail` whenever no operation of this handle is in progress.
pub struct Consumer<'a, T, const N: usize> {
    queue: &'a SpscQueue<T, N>,
    /// The consumer side's position, where its next operation starts.
    pos: u32,
    _not_sync: PhantomData<Cell<()>>,
}

impl<T, const N: usize> Consumer<'_, T, N> {
    /// How far, in items, [`Consumer::dequeue_trailing`] keeps behind the producer: the items
    /// of 2 KiB of slots (256 pointers), at least one and at most half the ring.
    pub const TRAIL: u32 = {
        let size = if core::mem::size_of::<T>() == 0 {
            1
        } else {
            core::mem::size_of::<T>()
        };
        let items = 2048 / size;
        let half = N / 2;
        (if items == 0 {
            1
        } else if items > half {
            half
        } else {
            items
        }) as u32
    };

    /// How many pause hints (`cpu_relax()`) [`Consumer::dequeue_trailing`] spins when it has
    /// caught up with the producer.
    pub const TRAIL_SPINS: u32 = TRAIL_SPINS;

    /// Moves the oldest item out of the queue, if there is one.
    #[inline]
    pub fn dequeue(&mut self) -> Option<T> {
        // SAFETY: By the type invariant we are the only consumer and `pos` is our position;
        // `&mut self` orders our own calls by happens-before (moving the handle to another
        // thread synchronises).
        unsafe { self.queue.ring.dequeue_one::<false>(&mut self.pos) }
    }

    /// Moves the oldest item out of the queue, if there is one, keeping this consumer behind a
    /// producer that streams items from another CPU.
    ///
    /// As [`Consumer::dequeue`], except when the items this consumer knows of have run out
    /// and the producer's tail shows fewer than [`Consumer::TRAIL`] more (but some): then it
    /// first spins [`Consumer::TRAIL_SPINS`] pause hints, and takes those items without reading
    /// the producer's tail again until they are gone. An empty queue returns `None` at once.
    ///
    /// A consumer that keeps up with its producer runs at its heels: it reads the producer's
    /// tail and slot lines while the producer is still writing them, and each such read makes
    /// the producer's next store fetch the line back. A producer slowed so keeps its consumer
    /// close, so the pair stays there, at several times the cost per item of a consumer that
    /// lags (and lets the producer fill whole lines before it reads them). Which of the two a
    /// pair of plain [`Consumer::dequeue`] and [`Producer::enqueue`] settles in depends on
    /// which side is faster when the other does not slow it, which shifts with the code and
    /// the CPUs; the wait here makes the consumer fall behind each time it catches up.
    /// rust/alf_queue/README.md ("A consumer that trails") tells the design, docs/benchmarks.md
    /// the measurements.
    ///
    /// The cost is latency: an item that finds the consumer caught up waits the spins (751 ns
    /// on the Zen 5 host of docs/benchmarks.md; the time of a pause hint differs between
    /// CPUs). Use it for a consumer that polls a busy stream; for one that must react to each
    /// item at once, use [`Consumer::dequeue`].
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::{Consumer, SpscQueue};
    ///
    /// let mut q = SpscQueue::<u64, 8>::new();
    /// let (mut tx, mut rx) = q.split();
    /// assert_eq!(rx.dequeue_trailing(), None);
    /// assert_eq!(Consumer::<u64, 8>::TRAIL, 4); // Half this small ring.
    /// for i in 0..3 {
    ///     assert_eq!(tx.enqueue(i), Ok(()));
    /// }
    /// // Fewer than `TRAIL` items: the first dequeue spins, then they come in order.
    /// for i in 0..3 {
    ///     assert_eq!(rx.dequeue_trailing(), Some(i));
    /// }
    /// assert_eq!(rx.dequeue_trailing(), None);
    /// ```
    #[inline]
    pub fn dequeue_trailing(&mut self) -> Option<T> {
        // SAFETY: As in `dequeue`.
        unsafe {
            self.queue
                .ring
                .dequeue_one_trailing::<false>(&mut self.pos, Self::TRAIL)
        }
    }

    /// Appends exactly `n` of the oldest items to `batch`, or none; see
    /// [`MpmcQueue::dequeue_bulk`](super::MpmcQueue::dequeue_bulk).
    #[inline]
    pub fn dequeue_bulk<const K: usize>(
        &mut self,
        batch: &mut Batch<T, K>,
        n: usize,
    ) -> Result<(), Error> {
        // SAFETY: As in `dequeue`.
        unsafe {
            self.queue
                .ring
                .dequeue_batch::<false, true, K>(&mut self.pos, batch, n)
        }
        .map(|_| ())
    }

    /// Appends up to `n` of the oldest items to `batch`; see
    /// [`MpmcQueue::dequeue_burst`](super::MpmcQueue::dequeue_burst).
    #[inline]
    pub fn dequeue_burst<const K: usize>(
        &mut self,
        batch: &mut Batch<T, K>,
        n: usize,
    ) -> Result<usize, Error> {
        // SAFETY: As in `dequeue`.
        unsafe {
            self.queue
                .ring
                .dequeue_batch::<false, false, K>(&mut self.pos, batch, n)
        }
    }

    /// Fills `out` with the `out.len()` oldest items, or moves none; see
    /// [`MpmcQueue::dequeue_bulk_into`](super::MpmcQueue::dequeue_bulk_into) and the example
    /// of [`Producer::enqueue_bulk_from`].
    #[inline]
    pub fn dequeue_bulk_into(&mut self, out: &mut [T]) -> Result<(), Error>
    where
        T: Copy,
    {
        // SAFETY: As in `dequeue`.
        unsafe {
            self.queue
                .ring
                .dequeue_slice::<false, true>(&mut self.pos, out)
        }
        .map(|_| ())
    }

    /// Moves up to `out.len()` of the oldest items into the start of `out`; see
    /// [`MpmcQueue::dequeue_burst_into`](super::MpmcQueue::dequeue_burst_into).
    #[inline]
    pub fn dequeue_burst_into(&mut self, out: &mut [T]) -> Result<usize, Error>
    where
        T: Copy,
    {
        // SAFETY: As in `dequeue`.
        unsafe {
            self.queue
                .ring
                .dequeue_slice::<false, false>(&mut self.pos, out)
        }
    }

    /// Moves exactly `n` of the oldest items out of the queue, or none, passing each to
    /// `take` in order straight from its slot.
    ///
    /// This is [`Consumer::dequeue_bulk`] without a [`Batch`]. Returns `Err(Empty)` without
    /// calling `take` if fewer than `n` items are present, `Err(TooLarge)` if `n` exceeds `N`.
    /// If `take` panics, the items it was given are out of the queue, the rest are still in
    /// it, and the panic continues. [`Producer::enqueue_bulk_with`] has an example.
    #[inline]
    pub fn dequeue_bulk_with(&mut self, n: usize, take: impl FnMut(T)) -> Result<(), Error> {
        // SAFETY: As in `dequeue`.
        unsafe {
            self.queue
                .ring
                .dequeue_with::<true>(&mut self.pos, n, 0, take)
        }
        .map(|_| ())
    }

    /// Moves up to `n` of the oldest items out of the queue, as many as are present, passing
    /// each to `take` in order straight from its slot.
    ///
    /// Returns how many were moved; `Err(TooLarge)` if `n` exceeds `N`. A panic in `take` is
    /// handled as in [`Consumer::dequeue_bulk_with`].
    #[inline]
    pub fn dequeue_burst_with(&mut self, n: usize, take: impl FnMut(T)) -> Result<usize, Error> {
        // SAFETY: As in `dequeue`.
        unsafe {
            self.queue
                .ring
                .dequeue_with::<false>(&mut self.pos, n, 0, take)
        }
    }

    /// Moves up to `n` of the oldest items out of the queue, as many as are present, passing
    /// each to `take` in order straight from its slot, keeping this consumer behind a producer
    /// that streams items from another CPU.
    ///
    /// As [`Consumer::dequeue_burst_with`], with [`Consumer::dequeue_trailing`]'s wait: when
    /// the items this consumer knows of are fewer than `n` and the producer's tail shows fewer
    /// than [`Consumer::TRAIL`] more (but some), it first spins [`Consumer::TRAIL_SPINS`]
    /// pause hints, and takes up to `n` of those items without reading the producer's tail
    /// again until fewer than `n` of them are left. An empty queue returns `Ok(0)` at once.
    /// A consumer taking a few items per call runs at its producer's heels as one taking one
    /// does, and the wait makes it fall behind in the same way ([`Consumer::dequeue_trailing`]
    /// says why that matters, and what it costs).
    ///
    /// Returns how many were moved; `Err(TooLarge)` if `n` exceeds `N`. A panic in `take` is
    /// handled as in [`Consumer::dequeue_bulk_with`].
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::{Consumer, Error, SpscQueue};
    ///
    /// let mut q = SpscQueue::<u64, 8>::new();
    /// let (mut tx, mut rx) = q.split();
    /// let mut out = [0; 8];
    /// let mut at = 0;
    /// let mut take = |x| {
    ///     out[at] = x;
    ///     at += 1;
    /// };
    /// assert_eq!(rx.dequeue_burst_trailing_with(2, &mut take), Ok(0));
    /// assert_eq!(Consumer::<u64, 8>::TRAIL, 4);
    /// assert_eq!(tx.enqueue_bulk_with(3, |i| i as u64), Ok(()));
    /// // Fewer than `TRAIL` items: the first call spins, then they come in order.
    /// assert_eq!(rx.dequeue_burst_trailing_with(2, &mut take), Ok(2));
    /// assert_eq!(rx.dequeue_burst_trailing_with(2, &mut take), Ok(1));
    /// assert_eq!(rx.dequeue_burst_trailing_with(2, &mut take), Ok(0));
    /// assert_eq!(rx.dequeue_burst_trailing_with(9, &mut take), Err(Error::TooLarge));
    /// assert_eq!(out[..3], [0, 1, 2]);
    /// ```
    #[inline]
    pub fn dequeue_burst_trailing_with(
        &mut self,
        n: usize,
        take: impl FnMut(T),
    ) -> Result<usize, Error> {
        // SAFETY: As in `dequeue`.
        unsafe {
            self.queue
                .ring
                .dequeue_with::<false>(&mut self.pos, n, Self::TRAIL, take)
        }
    }
}

handle_common! {
    Consumer, side: Cons, other: "producer",
    /// Reserves exactly `n` of the oldest items, or none, and lends them as a [`ReadChunk`] of
    /// up to two slices; they leave the queue (dropped in place) when the chunk is dropped.
    ///
    /// `Err(Empty)` if fewer than `n` items are present, `Err(TooLarge)` if `n` exceeds `N`.
    /// [`Producer::write_chunk`] has an example.
    fn read_chunk;
    /// Reserves up to `n` of the oldest items, as many as are present, and lends them as a
    /// [`ReadChunk`] (empty if the queue is). `Err(TooLarge)` if `n` exceeds `N`.
    fn read_chunk_burst -> ReadChunk;
}
