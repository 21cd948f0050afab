// SPDX-License-Identifier: GPL-2.0

//! The ring shared by both queue flavours: the two index pairs, the slots, and the four
//! operations (one item or a batch, in or out) built on the index protocol of `headtail.rs`.
//!
//! [`MpmcQueue`] and [`SpscQueue`] choose which protocol (multi or single) each side runs.
//!
//! [`MpmcQueue`]: super::MpmcQueue
//! [`SpscQueue`]: super::SpscQueue

use super::batch::Batch;
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
/// On each side `other_tail` is a value the other side's `tail` has had (see [`HeadTail`]); on
/// a side run by the single-producer (single-consumer) protocol it is also no older than the
/// one that justified `head`: `prod.head <= prod.other_tail + N` and
/// `cons.head <= cons.other_tail`.
///
/// A side run by the single-producer (single-consumer) protocol does not publish its
/// reservation: it reserves `head .. head + k` privately and stores `head` and then `tail` at
/// its commit, so on that side `head == tail` outside that store, and the reserved slots are
/// the ones from `tail` that the single operation in progress is filling (emptying).
///
/// When no operation is in progress (in particular whenever we hold `&mut Ring`),
/// `cons.head == cons.tail` and `prod.head == prod.tail`, so the queue holds exactly the items
/// in `cons.head .. prod.tail`. `N` is a power of two with `2 <= N <= 2^31` ([`Ring::CAP`]).
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
            // these two writes every field is initialised (padding needs no initialisation): `slots` is an
            // `UnsafeCell<[MaybeUninit<T>; N]>`, for which any bytes are a valid value.
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

    /// Returns how many items the queue holds, as a snapshot that may be stale at once.
    ///
    /// The two indices are read at different times; the result is clamped to `0 ..= N`.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        // Relaxed: a statistic, nothing is accessed on the strength of it.
        let cons_head = self.cons.head.load(Ordering::Relaxed);
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
        let (head, k) = unsafe {
            self.prod
                .move_head::<MULTI, true>(&self.cons.tail, Self::CAP, Self::CAP, 1)
        };
        if k == 0 {
            return Err(item);
        }
        // SAFETY: `move_head` reserved the empty slot `head` to us, and A1 (or C0) ordered
        // the consumer's read of its last item before this write.
        unsafe { self.slots.write_one(head, item) };
        self.prod.update_tail::<MULTI>(head, head.wrapping_add(1));
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
        let (head, k) = unsafe {
            self.cons
                .move_head::<MULTI, true>(&self.prod.tail, 0, Self::CAP, 1)
        };
        if k == 0 {
            return None;
        }
        // SAFETY: `move_head` reserved the full slot `head` to us, and A1 (or C0) made its
        // write visible; we treat it as empty from now on.
        let item = unsafe { self.slots.read_one(head) };
        self.cons.update_tail::<MULTI>(head, head.wrapping_add(1));
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
        // SAFETY: The caller's guarantee is the one `move_head` requires; `len <= N` fits a
        // `u32` because `N` does (`Ring::CAP`).
        let (head, k) = unsafe {
            self.prod
                .move_head::<MULTI, FIXED>(&self.cons.tail, Self::CAP, Self::CAP, len as u32)
        };
        if k == 0 {
            // An empty batch reserves nothing and writes nothing: it is tested here, off the
            // path of a successful bulk.
            return if FIXED && len != 0 {
                Err(Error::Full)
            } else {
                Ok(0)
            };
        }
        let k = k as usize;
        // SAFETY: `move_head` reserved the `k <= len <= N` empty slots from `head` to us, and
        // the batch holds at least `k` initialised items at `as_ptr()`, outside the ring; their
        // ownership passes to the ring here.
        unsafe { self.slots.write(head, batch.as_ptr(), k) };
        if FIXED {
            // SAFETY: All-or-nothing reserved all `k == len` items: they belong to the ring now.
            unsafe { batch.set_len(0) };
        } else {
            // SAFETY: The first `k <= len` items now belong to the ring.
            unsafe { batch.forget_front(k) };
        }
        self.prod
            .update_tail::<MULTI>(head, head.wrapping_add(k as u32));
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
        // SAFETY: The caller's guarantee is the one `move_head` requires; `n <= N` fits a
        // `u32`.
        let (head, k) = unsafe {
            self.cons
                .move_head::<MULTI, FIXED>(&self.prod.tail, 0, Self::CAP, n as u32)
        };
        if k == 0 {
            // `n == 0` is tested here, as in `enqueue_batch`.
            return if FIXED && n != 0 {
                Err(Error::Empty)
            } else {
                Ok(0)
            };
        }
        let k = k as usize;
        // SAFETY: `move_head` reserved the `k <= n <= N` full slots from `head` to us; the
        // batch has room for `k <= K - len` items after its `len` items, outside the ring.
        unsafe { self.slots.read(head, batch.as_mut_ptr().add(len), k) };
        // SAFETY: The entries `len .. len + k <= K` now hold the items just moved out of the
        // ring, which the batch takes.
        unsafe { batch.set_len(len + k) };
        self.cons
            .update_tail::<MULTI>(head, head.wrapping_add(k as u32));
        Ok(k)
    }
}

impl<T, const N: usize> Drop for Ring<T, N> {
    fn drop(&mut self) {
        // Relaxed: `&mut self` means every operation has completed and its effects are visible
        // to us (whatever handed us `&mut` synchronised with the threads that used the ring).
        let cons_head = self.cons.head.load(Ordering::Relaxed);
        let prod_tail = self.prod.tail.load(Ordering::Relaxed);
        let n = prod_tail.wrapping_sub(cons_head) as usize;
        // SAFETY: With no operation in progress, by the type invariants the slots
        // `cons.head .. prod.tail` are exactly the full ones (`n <= N`), owned by the queue
        // alone; the ring is being destroyed, so nothing reads them afterwards.
        unsafe { self.slots.drop_range(cons_head, n) };
    }
}
