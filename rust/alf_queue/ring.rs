// SPDX-License-Identifier: GPL-2.0

//! The ring shared by both queue flavours: the two index pairs, the slots, and the four
//! operations (one item or a batch, in or out) built on the index protocol of `headtail.rs`.
//!
//! [`MpmcQueue`] and [`SpscQueue`] choose which protocol (multi or single) each side runs.
//!
//! [`MpmcQueue`]: super::MpmcQueue
//! [`SpscQueue`]: super::SpscQueue

use super::batch::Batch;
#[cfg(not(loom))]
use super::chunk::{ReadChunk, WriteChunk};
use super::headtail::HeadTail;
use super::slots::Slots;
use super::sync::Ordering;
use super::Error;

/// A ring of `N` slots with a producer and a consumer index pair.
///
/// # Invariants
///
/// All four indices are free-running: they only ever grow, modulo 2^32, and the slot of index
/// `i` is `i & (N - 1)`. Measured in wrapping arithmetic from `cons.tail`:
///
/// `cons.tail <= cons.head <= prod.tail <= prod.head <= cons.tail + N`,
///
/// and the slots (by index) are:
///
/// - `cons.tail .. cons.head`: reserved by consumers, which are moving the items out or have
///   done so and wait to commit; no one else touches them;
/// - `cons.head .. prod.tail`: full, the items the queue owns;
/// - `prod.tail .. prod.head`: reserved by producers, which are moving items in or have done so
///   and wait to commit; no one else touches them;
/// - `prod.head .. cons.tail + N`: empty.
///
/// On a side run by the single-producer (single-consumer) protocol, read `head` as that side's
/// `tail` in the above: such a side does not publish its reservation and does not use its
/// `head` field (which keeps its initial value). Its one operation at a time reserves
/// `tail .. tail + k` privately and stores `tail` at its commit; until then those slots count
/// as empty (full) above, and only that operation touches them.
///
/// On each side `other_tail` is a value the other side's `tail` has had (see [`HeadTail`]); on
/// a side run by the single-producer (single-consumer) protocol it is also no older than the
/// one that justified that side's `tail`: `prod.tail <= prod.other_tail + N` and
/// `cons.tail <= cons.other_tail`.
///
/// When no operation is in progress (in particular whenever we hold `&mut Ring`), a multi
/// side's `head` equals its `tail`, so the queue holds exactly the items in
/// `cons.tail .. prod.tail`. `N` is a power of two with `2 <= N <= 2^31` ([`Ring::CAP`]).
#[repr(C)]
pub(crate) struct Ring<T, const N: usize> {
    /// Producer indices: `head` reserves, `tail` commits.
    pub(crate) prod: HeadTail,
    /// Consumer indices: `head` reserves, `tail` commits.
    pub(crate) cons: HeadTail,
    /// The `N` slots.
    pub(crate) slots: Slots<T, N>,
}

impl<T, const N: usize> Ring<T, N> {
    /// `N` as a `u32`; evaluating it rejects, at compile time, an `N` that is not a power of two
    /// in `2 ..= 2^31`.
    ///
    /// Every constructor evaluates it, so no `Ring` with a bad `N` can exist. 2^31 is the
    /// largest power of two for which `prod.head - cons.tail`, which may equal `N`, fits a `u32`.
    pub(crate) const CAP: u32 = {
        assert!(
            N.is_power_of_two() && N >= 2 && N <= 1 << 31,
            "alf_queue: the capacity N must be a power of two between 2 and 2^31"
        );
        N as u32
    };

    /// Creates an empty ring whose four indices all start at `start`.
    #[cfg(not(loom))]
    #[inline]
    pub(crate) const fn new(start: u32) -> Self {
        let _ = Self::CAP;
        // INVARIANT: All indices are equal: no reservation, no item; every slot is empty.
        Self {
            prod: HeadTail::new(start),
            cons: HeadTail::new(start),
            slots: Slots::new(),
        }
    }

    /// Creates an empty ring whose four indices all start at `start`.
    #[cfg(loom)]
    pub(crate) fn new(start: u32) -> Self {
        let _ = Self::CAP;
        // INVARIANT: As in the non-loom `new`.
        Self {
            prod: HeadTail::new(start),
            cons: HeadTail::new(start),
            slots: Slots::new(),
        }
    }

    /// Initialises an empty ring at `ptr`, writing only its index words.
    ///
    /// The slots are left as they are: an empty slot is uninitialised memory anyway.
    ///
    /// # Safety
    ///
    /// `ptr` is valid for writes of a `Ring<T, N>` and suitably aligned. Whatever it held is
    /// overwritten without being dropped.
    #[inline]
    pub(crate) unsafe fn init_raw(ptr: *mut Self, start: u32) {
        let _ = Self::CAP;
        // INVARIANT: As in `new`: all indices equal, every slot empty.
        #[cfg(not(loom))]
        {
            // SAFETY: `ptr` is valid for writes and aligned (caller), so are its fields. After
            // these two writes every field is initialised (padding needs no initialisation):
            // `slots` is an `UnsafeCell<[MaybeUninit<T>; N]>`, for which any bytes are a valid
            // value.
            unsafe {
                core::ptr::addr_of_mut!((*ptr).prod).write(HeadTail::new(start));
                core::ptr::addr_of_mut!((*ptr).cons).write(HeadTail::new(start));
            }
        }
        // Loom's cells carry model state and must be constructed.
        #[cfg(loom)]
        {
            // SAFETY: `ptr` is valid for writes and aligned (caller).
            unsafe { ptr.write(Self::new(start)) };
        }
    }

    /// Returns how many items the queue holds, as a snapshot that may be stale at once;
    /// `MULTI` is the consumer side's protocol (a single consumer's position is its `tail`).
    ///
    /// The two indices are read at different times; the result is clamped to `0 ..= N`.
    #[inline]
    pub(crate) fn len<const MULTI: bool>(&self) -> usize {
        let cons_head = if MULTI {
            &self.cons.head
        } else {
            &*self.cons.tail
        };
        // Relaxed: a statistic, nothing is accessed on the strength of it.
        let cons_head = cons_head.load(Ordering::Relaxed);
        let prod_tail = self.prod.tail.load(Ordering::Relaxed);
        let n = prod_tail.wrapping_sub(cons_head);
        // A "negative" distance means `cons.head` was read after it overtook our (older)
        // `prod.tail` reading.
        if n > 1 << 31 {
            0
        } else if n > Self::CAP {
            N
        } else {
            n as usize
        }
    }

    /// Moves `item` into the queue, or hands it back if the queue is full.
    ///
    /// # Safety
    ///
    /// If `!MULTI`, the caller orders this call with every other producer-side call on this
    /// ring by happens-before (see [`HeadTail::move_head`]).
    #[inline(always)]
    pub(crate) unsafe fn enqueue_one<const MULTI: bool>(&self, item: T) -> Result<(), T> {
        // SAFETY: The caller's guarantee is the one `move_head` requires; `1 <= N`.
        let (head, k, settled) = unsafe {
            self.prod
                .move_head::<MULTI, true>(&self.cons.tail, Self::CAP, Self::CAP, 1)
        };
        if k == 0 {
            return Err(item);
        }
        // SAFETY: `move_head` reserved the empty slot `head` to us, and A1 (or C0) ordered
        // the consumer's read of its last item before this write.
        unsafe { self.slots.write_one(head, item) };
        self.prod
            .update_tail::<MULTI>(head, head.wrapping_add(1), settled);
        Ok(())
    }

    /// Moves the oldest item out of the queue, if there is one.
    ///
    /// # Safety
    ///
    /// If `!MULTI`, the caller orders this call with every other consumer-side call on this
    /// ring by happens-before (see [`HeadTail::move_head`]).
    #[inline(always)]
    pub(crate) unsafe fn dequeue_one<const MULTI: bool>(&self) -> Option<T> {
        // SAFETY: The caller's guarantee is the one `move_head` requires; `1 <= N`.
        let (head, k, settled) = unsafe {
            self.cons
                .move_head::<MULTI, true>(&self.prod.tail, 0, Self::CAP, 1)
        };
        if k == 0 {
            return None;
        }
        // SAFETY: `move_head` reserved the full slot `head` to us, and A1 (or C0) made its
        // write visible; we treat it as empty from now on.
        let item = unsafe { self.slots.read_one(head) };
        self.cons
            .update_tail::<MULTI>(head, head.wrapping_add(1), settled);
        Some(item)
    }

    /// Moves the first items of `batch` into the queue: all or none if `FIXED`, as many as
    /// fit otherwise; the items left in the batch keep their order.
    ///
    /// Returns how many were moved; `Err(TooLarge)` if the batch holds more than `N` items,
    /// `Err(Full)` if `FIXED` and they do not all fit.
    ///
    /// # Safety
    ///
    /// As for [`Ring::enqueue_one`].
    #[inline(always)]
    pub(crate) unsafe fn enqueue_batch<const MULTI: bool, const FIXED: bool, const K: usize>(
        &self,
        batch: &mut Batch<T, K>,
    ) -> Result<usize, Error> {
        let len = batch.len();
        // A batch holds at most `K` items: with `K <= N` (the usual case) this check is
        // compiled out.
        if K > N && len > N {
            return Err(Error::TooLarge);
        }
        // A raw pointer, so that `moved` borrows the batch only when it runs, after the copy
        // from `src` (a borrow taken when the closure is made would invalidate `src`).
        let batch: *mut Batch<T, K> = batch;
        // SAFETY: `batch` comes from the caller's `&mut`; nothing else uses the batch meanwhile.
        let src = unsafe { (*batch).as_ptr() };
        let moved = |k| {
            if FIXED {
                // SAFETY: As above; all or nothing: the `k == len` items belong to the ring
                // now.
                unsafe { (*batch).set_len(0) };
            } else {
                // SAFETY: As above; the first `k <= len` items now belong to the ring.
                unsafe { (*batch).forget_front(k) };
            }
        };
        // SAFETY: The caller's guarantee is the one `enqueue_from` requires; the batch holds
        // `len <= N` initialised items at `src`, outside the ring, and `moved` gives up the
        // ones moved; it cannot panic.
        unsafe { self.enqueue_from::<MULTI, FIXED>(src, len, moved) }
    }

    /// Copies `items` into the queue: all or none if `FIXED`, as many of the first ones as fit
    /// otherwise.
    ///
    /// Returns how many were copied; `Err(TooLarge)` if `items` holds more than `N`,
    /// `Err(Full)` if `FIXED` and they do not all fit.
    ///
    /// # Safety
    ///
    /// As for [`Ring::enqueue_one`].
    #[inline(always)]
    pub(crate) unsafe fn enqueue_slice<const MULTI: bool, const FIXED: bool>(
        &self,
        items: &[T],
    ) -> Result<usize, Error>
    where
        T: Copy,
    {
        if items.len() > N {
            return Err(Error::TooLarge);
        }
        // SAFETY: The caller's guarantee is the one `enqueue_from` requires; `items` are
        // `len <= N` initialised items outside the ring. `T: Copy`: the copies in the ring are
        // items of their own, and the slice keeps its.
        unsafe { self.enqueue_from::<MULTI, FIXED>(items.as_ptr(), items.len(), |_| ()) }
    }

    /// The enqueue of a bulk or burst from `len` items at `src`: reserves their slots, copies
    /// the items in, calls `moved(k)` and commits them.
    ///
    /// Returns how many were moved, the first `k` of `src`: `len` or an error if `FIXED`
    /// (`Err(Full)`, nothing moved, unless `len` is 0), as many as fit otherwise. `moved` runs
    /// only when `k > 0`, after the copy: the owner of `src` gives up the `k` items there.
    ///
    /// `moved` runs before the commit, not after this returns, because that is where the batch
    /// forms' bookkeeping compiles best: after the commit, a small bulk through a `Batch` does
    /// more work per operation (docs/benchmarks.md, "The copy of a bulk, and why it is written
    /// as it is").
    ///
    /// # Safety
    ///
    /// As for [`Ring::enqueue_one`]; besides, `len <= N` and `src` is valid for reads of `len`
    /// initialised items outside the ring, the first `k` of which pass to the ring when
    /// `moved(k)` is called. `moved` must not panic.
    #[inline(always)]
    unsafe fn enqueue_from<const MULTI: bool, const FIXED: bool>(
        &self,
        src: *const T,
        len: usize,
        moved: impl FnOnce(usize),
    ) -> Result<usize, Error> {
        // SAFETY: The caller's guarantee is the one `move_head` requires; `len <= N` fits a
        // `u32` because `N` does (`Ring::CAP`).
        let (head, k, settled) = unsafe {
            self.prod
                .move_head::<MULTI, FIXED>(&self.cons.tail, Self::CAP, Self::CAP, len as u32)
        };
        if k == 0 {
            return none_moved::<FIXED>(len, Error::Full);
        }
        let k = k as usize;
        // SAFETY: `move_head` reserved the `k <= len <= N` empty slots from `head` to us, and
        // A1 (or C0) ordered the consumers' reads of their last items before these writes;
        // `src` holds at least `k` initialised items, outside the ring, whose ownership passes
        // to the ring here.
        unsafe { self.slots.write(head, src, k) };
        moved(k);
        self.prod
            .update_tail::<MULTI>(head, head.wrapping_add(k as u32), settled);
        Ok(k)
    }

    /// Appends up to `n` of the oldest items to `batch`: exactly `n` or none if `FIXED`, as
    /// many as are present otherwise.
    ///
    /// Returns how many were moved; `Err(TooLarge)` if `n` exceeds `N` or the batch's free
    /// space, `Err(Empty)` if `FIXED` and fewer than `n` are present.
    ///
    /// # Safety
    ///
    /// As for [`Ring::dequeue_one`].
    #[inline(always)]
    pub(crate) unsafe fn dequeue_batch<const MULTI: bool, const FIXED: bool, const K: usize>(
        &self,
        batch: &mut Batch<T, K>,
        n: usize,
    ) -> Result<usize, Error> {
        let len = batch.len();
        // `remaining() <= K`: with `K <= N` the first test implies `n <= N`, and the second
        // is compiled out.
        if n > K - len || (K > N && n > N) {
            return Err(Error::TooLarge);
        }
        // A raw pointer, so that `moved` borrows the batch only when it runs, after the move
        // into `dst` (as in `enqueue_batch`).
        let batch: *mut Batch<T, K> = batch;
        // SAFETY: `batch` comes from the caller's `&mut`; nothing else uses the batch meanwhile.
        // `len <= K`: the entry after the batch's items, or its end.
        let dst = unsafe { (*batch).as_mut_ptr().add(len) };
        let moved = |k| {
            // SAFETY: As above; the entries `len .. len + k <= K` now hold the items just moved
            // out of the ring, which the batch takes.
            unsafe { (*batch).set_len(len + k) };
        };
        // SAFETY: The caller's guarantee is the one `dequeue_into` requires; `n <= N`, and the
        // batch has room for `n <= K - len` items at `dst`, outside the ring, which `moved`
        // takes; it cannot panic.
        unsafe { self.dequeue_into::<MULTI, FIXED>(dst, n, moved) }
    }

    /// Copies the oldest items out of the queue into `out`, from its start: `out.len()` of
    /// them or none if `FIXED`, as many as are present otherwise.
    ///
    /// Returns how many were copied; `Err(TooLarge)` if `out` is longer than `N`,
    /// `Err(Empty)` if `FIXED` and fewer than `out.len()` are present.
    ///
    /// # Safety
    ///
    /// As for [`Ring::dequeue_one`].
    #[inline(always)]
    pub(crate) unsafe fn dequeue_slice<const MULTI: bool, const FIXED: bool>(
        &self,
        out: &mut [T],
    ) -> Result<usize, Error>
    where
        T: Copy,
    {
        if out.len() > N {
            return Err(Error::TooLarge);
        }
        // SAFETY: The caller's guarantee is the one `dequeue_into` requires; `out` has room
        // for `len <= N` items, outside the ring. `T: Copy`: the values overwritten need no
        // drop.
        unsafe { self.dequeue_into::<MULTI, FIXED>(out.as_mut_ptr(), out.len(), |_| ()) }
    }

    /// The dequeue of a bulk or burst of up to `n` items into `dst`: reserves their slots,
    /// moves the items out, calls `moved(k)` and commits the slots as empty.
    ///
    /// Returns how many were moved, to the first `k` entries of `dst`: `n` or an error if
    /// `FIXED` (`Err(Empty)`, nothing moved, unless `n` is 0), as many as are present
    /// otherwise. `moved` runs only when `k > 0`, after the move and before the commit (see
    /// `enqueue_from`).
    ///
    /// # Safety
    ///
    /// As for [`Ring::dequeue_one`]; besides, `n <= N` and `dst` is valid for writes of `n`
    /// items, outside the ring; the first `k` are overwritten without being dropped, and the
    /// items written there are the caller's from the call of `moved(k)`. `moved` must not
    /// panic.
    #[inline(always)]
    unsafe fn dequeue_into<const MULTI: bool, const FIXED: bool>(
        &self,
        dst: *mut T,
        n: usize,
        moved: impl FnOnce(usize),
    ) -> Result<usize, Error> {
        // SAFETY: The caller's guarantee is the one `move_head` requires; `n <= N` fits a
        // `u32`.
        let (head, k, settled) = unsafe {
            self.cons
                .move_head::<MULTI, FIXED>(&self.prod.tail, 0, Self::CAP, n as u32)
        };
        if k == 0 {
            return none_moved::<FIXED>(n, Error::Empty);
        }
        let k = k as usize;
        // SAFETY: `move_head` reserved the `k <= n <= N` full slots from `head` to us, and
        // A1 (or C0) made their writes visible; `dst` has room for `k` items outside the ring.
        // We treat the slots as empty from now on.
        unsafe { self.slots.read(head, dst, k) };
        moved(k);
        self.cons
            .update_tail::<MULTI>(head, head.wrapping_add(k as u32), settled);
        Ok(k)
    }

    /// Moves up to `n` items made by `make(0)`, `make(1)`, ... into the queue, each written
    /// straight into its slot: `n` or none if `FIXED`, as many as fit otherwise. For a single
    /// producer only.
    ///
    /// Returns how many were moved (`make` was called that many times); `Err(TooLarge)` if
    /// `n` exceeds `N`, `Err(Full)` if `FIXED` and they do not all fit. If `make` panics, the
    /// items it made before are committed to the queue and the panic continues.
    ///
    /// There is no multi-producer form: the caller's code would run between the reservation
    /// and its commit, and on a multi side every later operation waits for that commit.
    ///
    /// # Safety
    ///
    /// As for [`Ring::enqueue_one`] with `!MULTI`: the producer side runs the single-producer
    /// protocol and this call is ordered with its other calls by happens-before.
    #[inline(always)]
    pub(crate) unsafe fn enqueue_with<const FIXED: bool>(
        &self,
        n: usize,
        make: impl FnMut(usize) -> T,
    ) -> Result<usize, Error> {
        // SAFETY: Forwarded from the caller.
        let (head, k) = unsafe { self.reserve_single_prod::<FIXED>(n) }?;
        if k == 0 {
            return Ok(0);
        }
        let mut commit = SingleCommit::new(&self.prod, head);
        // SAFETY: `reserve_single_prod` reserved the `k <= n <= N` empty slots from `head` to
        // us, and A1 (or C0) ordered the consumer's reads of their last items before these
        // writes.
        unsafe { self.slots.fill_with(head, k, &mut commit.done, make) };
        Ok(k)
    }

    /// Moves up to `n` of the oldest items out of the queue, passing each to `take` in order:
    /// `n` or none if `FIXED`, as many as are present otherwise. For a single consumer only.
    ///
    /// Returns how many were moved; `Err(TooLarge)` if `n` exceeds `N`, `Err(Empty)` if
    /// `FIXED` and fewer than `n` are present. If `take` panics, the items it was given are
    /// out of the queue, the others are still in it, and the panic continues.
    ///
    /// # Safety
    ///
    /// As for [`Ring::dequeue_one`] with `!MULTI`.
    #[inline(always)]
    pub(crate) unsafe fn dequeue_with<const FIXED: bool>(
        &self,
        n: usize,
        take: impl FnMut(T),
    ) -> Result<usize, Error> {
        // SAFETY: Forwarded from the caller.
        let (head, k) = unsafe { self.reserve_single_cons::<FIXED>(n) }?;
        if k == 0 {
            return Ok(0);
        }
        let mut commit = SingleCommit::new(&self.cons, head);
        // SAFETY: `reserve_single_cons` reserved the `k <= n <= N` full slots from `head` to
        // us, and A1 (or C0) made the producer's writes to them visible.
        unsafe { self.slots.drain_with(head, k, &mut commit.done, take) };
        Ok(k)
    }

    /// Reserves up to `n` empty slots for a single producer, as [`Ring::enqueue_with`] does,
    /// and lends them as a [`WriteChunk`].
    ///
    /// # Safety
    ///
    /// As for [`Ring::enqueue_with`], until the chunk is dropped.
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) unsafe fn write_chunk<const FIXED: bool>(
        &self,
        n: usize,
    ) -> Result<WriteChunk<'_, T>, Error> {
        // SAFETY: Forwarded from the caller.
        let (head, k) = unsafe { self.reserve_single_prod::<FIXED>(n) }?;
        // SAFETY: `reserve_single_prod` reserved the `k <= N` empty slots from `head` to us
        // until the commit, and A1 (or C0) ordered the consumer's reads of their last items
        // before whatever the caller writes.
        Ok(unsafe {
            WriteChunk::new(
                self.slots.run_ptrs(head, k),
                SingleCommit::new(&self.prod, head),
            )
        })
    }

    /// Reserves up to `n` of the oldest items for a single consumer, as [`Ring::dequeue_with`]
    /// does, and lends them as a [`ReadChunk`].
    ///
    /// # Safety
    ///
    /// As for [`Ring::dequeue_with`], until the chunk is dropped.
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) unsafe fn read_chunk<const FIXED: bool>(
        &self,
        n: usize,
    ) -> Result<ReadChunk<'_, T>, Error> {
        // SAFETY: Forwarded from the caller.
        let (head, k) = unsafe { self.reserve_single_cons::<FIXED>(n) }?;
        // SAFETY: `reserve_single_cons` reserved the `k <= N` full slots from `head` to us
        // until the commit, and A1 (or C0) made the producer's writes to them visible.
        Ok(unsafe {
            ReadChunk::new(
                self.slots.run_ptrs(head, k),
                SingleCommit::new(&self.cons, head),
            )
        })
    }

    /// Reserves up to `n` empty slots for a single producer: `n` or none if `FIXED`, as many
    /// as are free otherwise. Returns the index of the first and how many (0 for an empty
    /// request or a burst that found no room): the slots are the caller's to fill, and a
    /// [`SingleCommit`] on `prod` from that index publishes what it counts as done.
    ///
    /// `Err(TooLarge)` if `n` exceeds `N`, `Err(Full)` if `FIXED` and they are not all free.
    ///
    /// # Safety
    ///
    /// As for [`Ring::enqueue_one`] with `!MULTI`; the caller commits (or drops a
    /// [`SingleCommit`]) before the side's next operation.
    #[inline(always)]
    pub(crate) unsafe fn reserve_single_prod<const FIXED: bool>(
        &self,
        n: usize,
    ) -> Result<(u32, usize), Error> {
        if n > N {
            return Err(Error::TooLarge);
        }
        // SAFETY: The caller's guarantee is the one `move_head` requires; `n <= N` fits a
        // `u32` because `N` does (`Ring::CAP`).
        let (head, k, _) = unsafe {
            self.prod
                .move_head::<false, FIXED>(&self.cons.tail, Self::CAP, Self::CAP, n as u32)
        };
        if k == 0 {
            return none_moved::<FIXED>(n, Error::Full).map(|_| (head, 0));
        }
        Ok((head, k as usize))
    }

    /// Reserves up to `n` of the oldest items for a single consumer, as
    /// [`Ring::reserve_single_prod`] reserves empty slots: `Err(Empty)` if `FIXED` and fewer
    /// than `n` are present.
    ///
    /// # Safety
    ///
    /// As for [`Ring::dequeue_one`] with `!MULTI`; the caller commits (or drops a
    /// [`SingleCommit`]) before the side's next operation.
    #[inline(always)]
    pub(crate) unsafe fn reserve_single_cons<const FIXED: bool>(
        &self,
        n: usize,
    ) -> Result<(u32, usize), Error> {
        if n > N {
            return Err(Error::TooLarge);
        }
        // SAFETY: As in `reserve_single_prod`.
        let (head, k, _) = unsafe {
            self.cons
                .move_head::<false, FIXED>(&self.prod.tail, 0, Self::CAP, n as u32)
        };
        if k == 0 {
            return none_moved::<FIXED>(n, Error::Empty).map(|_| (head, 0));
        }
        Ok((head, k as usize))
    }
}

/// What a request that reserved nothing returns: `Ok(0)` for an empty request or a burst,
/// `err` (`Full` or `Empty`) for an all-or-nothing request of `n > 0` entries.
///
/// The test of `n` is here, off the path of a request that moved something.
#[inline(always)]
fn none_moved<const FIXED: bool>(n: usize, err: Error) -> Result<usize, Error> {
    if FIXED && n != 0 {
        Err(err)
    } else {
        Ok(0)
    }
}

/// The commit of a reservation on a single side (producer or consumer), run when dropped: it
/// publishes the first `done` entries from `head`, also when the caller's code panics partway.
///
/// # Invariants
///
/// The side runs the single protocol, this guard's owner reserved `head .. head + k` on it with
/// `move_head`, `done <= k`, and the entries `head .. head + done` are finished (filled by a
/// producer, emptied by a consumer).
pub(crate) struct SingleCommit<'a> {
    side: &'a HeadTail,
    head: u32,
    pub(crate) done: usize,
}

impl<'a> SingleCommit<'a> {
    #[inline(always)]
    pub(crate) fn new(side: &'a HeadTail, head: u32) -> Self {
        // INVARIANT: Nothing is finished yet.
        Self {
            side,
            head,
            done: 0,
        }
    }
}

impl Drop for SingleCommit<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        // A single side may commit fewer entries than it reserved: it never published the
        // reservation, and its `tail` is also where its next one starts.
        self.side
            .update_tail::<false>(self.head, self.head.wrapping_add(self.done as u32), true);
    }
}

impl<T, const N: usize> Drop for Ring<T, N> {
    fn drop(&mut self) {
        // Relaxed: `&mut self` means every operation has completed and its effects are visible
        // to us (whatever handed us `&mut` synchronised with the threads that used the ring).
        // The consumers' `tail`, not `head`: a single consumer does not keep its `head`.
        let cons_tail = self.cons.tail.load(Ordering::Relaxed);
        let prod_tail = self.prod.tail.load(Ordering::Relaxed);
        let n = prod_tail.wrapping_sub(cons_tail) as usize;
        // SAFETY: With no operation in progress, by the type invariants the slots
        // `cons.tail .. prod.tail` are exactly the full ones (`n <= N`), owned by the queue
        // alone; the ring is being destroyed, so nothing reads them afterwards.
        unsafe { self.slots.drop_range(cons_tail, n) };
    }
}
