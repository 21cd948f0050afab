// SPDX-License-Identifier: GPL-2.0

//! The ring shared by both queue flavours: the two index pairs, the slots, and the four
//! operations (one item or a batch, in or out) built on the index protocol of `headtail.rs`.
//!
//! [`MpmcQueue`] and [`SpscQueue`] choose which protocol (multi or single) each side runs.
//!
//! [`MpmcQueue`]: super::MpmcQueue
//! [`SpscQueue`]: super::SpscQueue

use super::batch::Batch;
use super::headtail::{HeadTail, Position};
#[cfg(not(loom))]
use super::slots::Runs;
use super::slots::{In, Out, Slots, Way};
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
/// `tail` in the above: such a side does not publish its reservation, and leaves its `head`
/// field at its initial value. Its one operation at a time reserves `tail .. tail + k`
/// privately, starting from its [`Position`] (which equals `tail` whenever no operation of the
/// side is in progress), and publishes the new `tail` at its commit; until then those slots
/// count as empty (full) above, and only that operation touches them.
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
    /// `MULTI` is the consumer side's protocol (a single consumer publishes its position in its
    /// `tail` alone).
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
    /// ring by happens-before, and `pos` is the producer side's position (see
    /// [`HeadTail::move_head`]).
    #[inline(always)]
    pub(crate) unsafe fn enqueue_one<const MULTI: bool>(
        &self,
        mut pos: impl Position,
        item: T,
    ) -> Result<(), T> {
        // SAFETY: The caller's guarantee is the one `reserve` requires; `1 <= N`.
        let (head, k, settled) = unsafe { Prod::reserve::<MULTI, true>(self, &pos, 1) };
        if k == 0 {
            return Err(item);
        }
        // SAFETY: `reserve` reserved the empty slot `head` to us, and A1 (or C0) ordered the
        // consumer's read of its last item before this write.
        unsafe { self.slots.write_one(head, item) };
        Prod::own(self).update_tail::<MULTI>(&mut pos, head, head.wrapping_add(1), settled);
        Ok(())
    }

    /// Moves the oldest item out of the queue, if there is one.
    ///
    /// # Safety
    ///
    /// If `!MULTI`, the caller orders this call with every other consumer-side call on this
    /// ring by happens-before, and `pos` is the consumer side's position (see
    /// [`HeadTail::move_head`]).
    #[inline(always)]
    pub(crate) unsafe fn dequeue_one<const MULTI: bool>(&self, pos: impl Position) -> Option<T> {
        // SAFETY: Our caller's guarantee; a trail of 0 never waits.
        unsafe { self.dequeue_one_trailing::<MULTI>(pos, 0) }
    }

    /// Moves the oldest item out of the queue, if there is one, as a consumer that trails the
    /// producer by about `trail` items (see [`HeadTail::move_head`]), or as one that does not
    /// if `trail` is 0, as it must be with `MULTI`.
    ///
    /// # Safety
    ///
    /// As for [`Ring::dequeue_one`].
    #[inline(always)]
    pub(crate) unsafe fn dequeue_one_trailing<const MULTI: bool>(
        &self,
        mut pos: impl Position,
        trail: u32,
    ) -> Option<T> {
        // SAFETY: The caller's guarantee is the one `reserve_trailing` requires; `1 <= N`.
        let (head, k, settled) =
            unsafe { Cons::reserve_trailing::<MULTI, true>(self, &pos, 1, trail) };
        if k == 0 {
            return None;
        }
        // SAFETY: `reserve` reserved the full slot `head` to us, and A1 (or C0) made its write
        // visible; we treat it as empty from now on.
        let item = unsafe { self.slots.read_one(head) };
        Cons::own(self).update_tail::<MULTI>(&mut pos, head, head.wrapping_add(1), settled);
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
        pos: impl Position,
        batch: &mut Batch<T, K>,
    ) -> Result<usize, Error> {
        let len = batch.len();
        // A batch holds at most `K` items: with `K <= N` (the usual case) this check is
        // compiled out. Written out rather than as `Self::too_large` (whose `TooLarge` it
        // returns, for a single side's all-or-nothing request before it reserves rather than
        // after): with the call, rustc 1.85 no longer inlined the batch forms' public methods
        // into a caller's loop, which doubled a small bulk's cost in the kernel benchmark.
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
        // SAFETY: The caller's guarantee is the one `transfer` requires (`len <= N`, tested
        // above); the batch holds `len` initialised items at `src`, outside the ring, only read
        // from here, and `moved` gives up the ones moved; it cannot panic.
        unsafe {
            self.transfer::<Prod, MULTI, FIXED, false, false>(pos, src.cast_mut(), len, moved)
        }
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
        pos: impl Position,
        batch: &mut Batch<T, K>,
        n: usize,
    ) -> Result<usize, Error> {
        let len = batch.len();
        // `remaining() <= K`: with `K <= N` the first test implies `n <= N`, and the second
        // is compiled out (written out as in `enqueue_batch`).
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
        // SAFETY: The caller's guarantee is the one `transfer` requires (`n <= N`, tested
        // above), and the batch has room for `n <= K - len` items at `dst`, outside the ring,
        // which `moved` takes; it cannot panic.
        unsafe { self.transfer::<Cons, MULTI, FIXED, false, false>(pos, dst, n, moved) }
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
        pos: impl Position,
        items: &[T],
    ) -> Result<usize, Error>
    where
        T: Copy,
    {
        if Self::too_large::<MULTI, FIXED>(items.len()) {
            return Err(Error::TooLarge);
        }
        // SAFETY: The caller's guarantee is the one `transfer` requires; `items` are
        // initialised items outside the ring, only read from. `T: Copy`: the copies in the
        // ring are items of their own, and the slice keeps its.
        unsafe {
            self.transfer::<Prod, MULTI, FIXED, false, true>(
                pos,
                items.as_ptr().cast_mut(),
                items.len(),
                |_| (),
            )
        }
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
        pos: impl Position,
        out: &mut [T],
    ) -> Result<usize, Error>
    where
        T: Copy,
    {
        if Self::too_large::<MULTI, FIXED>(out.len()) {
            return Err(Error::TooLarge);
        }
        // SAFETY: The caller's guarantee is the one `transfer` requires; `out` has room for
        // its `len` items, outside the ring. `T: Copy`: the values overwritten need no drop.
        unsafe {
            self.transfer::<Cons, MULTI, FIXED, true, true>(
                pos,
                out.as_mut_ptr(),
                out.len(),
                |_| (),
            )
        }
    }

    /// A bulk or burst of up to `n` entries between `buf` and the ring, on side `S`: reserves
    /// them, moves the items (from `buf` into their slots on the producer's side, out of them
    /// into `buf` on the consumer's), calls `moved(k)` and commits.
    ///
    /// Returns how many were moved, the first `k` of `buf`: `n` or an error if `FIXED`
    /// (`Err(TooLarge)` if `n > N`, else `Err(Full)` or `Err(Empty)`, nothing moved, unless `n`
    /// is 0), as many as fit (are present) otherwise. `moved` runs only when `k > 0`, after
    /// the move: the owner of `buf` gives up (takes) the `k` items there.
    ///
    /// `moved` runs before the commit, not after this returns, because that is where the batch
    /// forms' bookkeeping compiles best: after the commit, a small bulk through a `Batch` does
    /// more work per operation (docs/benchmarks.md, "The copy of a bulk, and why it is written
    /// as it is").
    ///
    /// With `ONE`, a single side's request of one reserves as the single operation does, with
    /// the request's size the constant 1 rather than a run-time `n`. The consumer's slice form
    /// asks for it: a consumer that takes one item per call empties the ring on every call, so
    /// it finds its copy of the producer's tail stale on every call and the copy's refresh in
    /// [`HeadTail::move_head`] is its common path, where a constant 1 leaves the single
    /// dequeue's test (the tail against the position) and a run-time `n` counts the items
    /// against `n` and tests for an empty request. A producer's copy is stale about once per lap
    /// of the ring, so a producer's bulk of one would gain nothing and every other bulk would
    /// pay the test of `n`; the `Batch` forms' small bulks lose more than their bulk of one
    /// gains (docs/benchmarks.md, "alf_queue in the kernel").
    ///
    /// With `RUN`, a single side's bulk of three or four short of the array's end is one
    /// straight copy ([`Slots::copy`]). Both slice forms ask for it: on a single side it makes
    /// them cheaper at three and four, where the multi sides' and the `Batch` forms' figures
    /// moved the other way (docs/benchmarks.md, "alf_queue in the kernel").
    ///
    /// # Safety
    ///
    /// As for [`Side::reserve`]; besides, `buf` does not overlap the ring and is valid for `n`
    /// items: on the producer's side for reads of initialised items (it is not written), the
    /// first `k` of which pass to the ring when `moved(k)` is called; on the consumer's for
    /// writes, the first `k` of which are overwritten without being dropped, and are the
    /// caller's from the call of `moved(k)`. `moved` must not panic.
    #[inline(always)]
    unsafe fn transfer<
        S: Side<T, N>,
        const MULTI: bool,
        const FIXED: bool,
        const ONE: bool,
        const RUN: bool,
    >(
        &self,
        mut pos: impl Position,
        buf: *mut T,
        n: usize,
        moved: impl FnOnce(usize),
    ) -> Result<usize, Error> {
        // SAFETY: Forwarded from the caller (both arms reserve `n` entries).
        let (head, k, settled) = unsafe {
            if MULTI || !ONE || n != 1 {
                S::reserve::<MULTI, FIXED>(self, &pos, n)
            } else {
                S::reserve::<MULTI, FIXED>(self, &pos, 1)
            }
        };
        if k == 0 {
            return none_moved::<FIXED>(n, N, S::SHORT);
        }
        // SAFETY: `reserve` reserved the `k <= min(n, N)` entries from `head` to us: on the
        // producer's side empty slots, for which A1 (or C0) ordered the consumers' reads of
        // their last items before our writes, and `buf` holds `k` initialised items whose
        // ownership passes to the ring here; on the consumer's full slots, whose writes A1 (or
        // C0) made visible, which `buf` has room for and which we treat as empty from now on.
        // (`RUN` on a single side only.)
        unsafe {
            if MULTI {
                self.slots.copy::<S::Way, false>(head, buf, k)
            } else {
                self.slots.copy::<S::Way, RUN>(head, buf, k)
            }
        };
        moved(k);
        S::own(self).update_tail::<MULTI>(&mut pos, head, head.wrapping_add(k as u32), settled);
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
        pos: impl Position,
        n: usize,
        make: impl FnMut(usize) -> T,
    ) -> Result<usize, Error> {
        // SAFETY: Forwarded from the caller.
        let (head, k) = unsafe { self.reserve_single::<Prod, FIXED>(&pos, n, 0) }?;
        if k == 0 {
            return Ok(0);
        }
        let mut commit = SingleCommit::new(Prod::own(self), pos, head);
        // SAFETY: `reserve_single` reserved the `k <= min(n, N)` empty slots from `head` to us,
        // and A1 (or C0) ordered the consumer's reads of their last items before these writes.
        unsafe { self.slots.fill_with(head, k, &mut commit.done, make) };
        Ok(k)
    }

    /// Moves up to `n` of the oldest items out of the queue, passing each to `take` in order:
    /// `n` or none if `FIXED`, as many as are present otherwise. For a single consumer only,
    /// which trails the producer by about `trail` items (see [`HeadTail::move_head`]), or does
    /// not if `trail` is 0.
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
        pos: impl Position,
        n: usize,
        trail: u32,
        take: impl FnMut(T),
    ) -> Result<usize, Error> {
        // SAFETY: Forwarded from the caller.
        let (head, k) = unsafe { self.reserve_single::<Cons, FIXED>(&pos, n, trail) }?;
        if k == 0 {
            return Ok(0);
        }
        let mut commit = SingleCommit::new(Cons::own(self), pos, head);
        // SAFETY: `reserve_single` reserved the `k <= min(n, N)` full slots from `head` to us,
        // and A1 (or C0) made the producer's writes to them visible.
        unsafe { self.slots.drain_with(head, k, &mut commit.done, take) };
        Ok(k)
    }

    /// Reserves up to `n` entries of the single side `S` as [`Ring::reserve_single`] does (`n`
    /// or none if `FIXED`), and lends them as the chunk that `chunk` makes of the runs of slots
    /// they occupy and of the commit that publishes them.
    ///
    /// # Safety
    ///
    /// As for [`Ring::reserve_single`], until the chunk is dropped; `chunk` is
    /// [`WriteChunk::new`](super::WriteChunk::new) if `S` is [`Prod`],
    /// [`ReadChunk::new`](super::ReadChunk::new) if it is [`Cons`].
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) unsafe fn lend<'a, S: Side<T, N>, const FIXED: bool, C>(
        &'a self,
        pos: &'a mut u32,
        n: usize,
        chunk: unsafe fn(Runs<T>, SingleCommit<'a>) -> C,
    ) -> Result<C, Error> {
        // SAFETY: Forwarded from the caller.
        let (head, k) = unsafe { self.reserve_single::<S, FIXED>(&pos, n, 0) }?;
        let runs = self.slots.run_ptrs(head, k);
        // SAFETY: `reserve_single` reserved the `k <= N` entries of `runs` to us until the
        // commit: for a producer (`WriteChunk`), empty slots, and A1 (or C0) ordered the
        // consumer's reads of their last items before whatever the caller writes; for a
        // consumer (`ReadChunk`), full slots, whose writes A1 (or C0) made visible.
        Ok(unsafe { chunk(runs, SingleCommit::new(S::own(self), pos, head)) })
    }

    /// Reserves up to `n` entries for a single side `S`: empty slots for the producer, items
    /// for the consumer; `n` or none if `FIXED`, as many as there are otherwise; trailing the
    /// other side by about `trail` entries, or not if it is 0 ([`Side::reserve_trailing`]).
    /// Returns the index of the first and how many (0 for an empty request or a burst that
    /// found none): the entries are the caller's to fill (to empty), and a [`SingleCommit`] on
    /// that side from that index publishes what it counts as done.
    ///
    /// `Err(TooLarge)` if `n` exceeds `N`, `Err(Full)` (`Err(Empty)`) if `FIXED` and there are
    /// fewer than `n`.
    ///
    /// # Safety
    ///
    /// As for [`Side::reserve`] with `!MULTI`; the caller commits (or drops a
    /// [`SingleCommit`]) before the side's next operation.
    #[inline(always)]
    unsafe fn reserve_single<S: Side<T, N>, const FIXED: bool>(
        &self,
        pos: &impl Position,
        n: usize,
        trail: u32,
    ) -> Result<(u32, usize), Error> {
        if Self::too_large::<false, FIXED>(n) {
            return Err(Error::TooLarge);
        }
        // SAFETY: Forwarded from the caller; `n <= N` unless `FIXED`.
        let (head, k, _) = unsafe { S::reserve_trailing::<false, FIXED>(self, pos, n, trail) };
        if k == 0 {
            return none_moved::<FIXED>(n, N, S::SHORT).map(|_| (head, 0));
        }
        Ok((head, k))
    }

    /// Whether a request of `n` entries is refused as larger than the ring before it
    /// reserves: a single side's all-or-nothing request is not tested here, because its
    /// reservation fails for any `n > N` and [`none_moved`] returns `TooLarge` then, off the
    /// common path (see [`HeadTail::move_head`]).
    #[inline(always)]
    fn too_large<const MULTI: bool, const FIXED: bool>(n: usize) -> bool {
        (MULTI || !FIXED) && n > N
    }
}

/// One side of a ring: [`Prod`], the producers', or [`Cons`], the consumers'.
///
/// What the two sides do differently, for the operations written once for both: which index
/// pair moves, against which tail and counting from which capacity ([`HeadTail::move_head`]:
/// the producer counts free slots from `N`, the consumer items from 0), what an all-or-nothing
/// request that finds too few entries gets, and which way the items go. A type rather than a
/// flag, as [`Way`] is, so that the operations have no branch on the side in them, not even one
/// the compiler removes.
pub(crate) trait Side<T, const N: usize> {
    /// What an all-or-nothing request gets when there are too few entries: `Full` or `Empty`.
    const SHORT: Error;

    /// The way this side's items go: [`In`] for the producer, [`Out`] for the consumer.
    type Way: Way;

    /// Returns this side's index pair.
    fn own(ring: &Ring<T, N>) -> &HeadTail;

    /// Reserves up to `n` entries on this side of `ring`, by the multi or single protocol:
    /// [`HeadTail::move_head`], whose `(head, k, settled)` it returns.
    ///
    /// # Safety
    ///
    /// `n <= N`, but for a single side's all-or-nothing request (`!MULTI && FIXED`), which
    /// reserves nothing if `n` is larger. If `!MULTI`, the caller orders this call with every
    /// other call of this side on `ring` by happens-before, and `pos` is this side's position
    /// (see [`HeadTail::move_head`]).
    #[inline(always)]
    unsafe fn reserve<const MULTI: bool, const FIXED: bool>(
        ring: &Ring<T, N>,
        pos: &impl Position,
        n: usize,
    ) -> (u32, usize, bool) {
        // SAFETY: The caller's guarantee; a trail of 0 never waits.
        unsafe { Self::reserve_trailing::<MULTI, FIXED>(ring, pos, n, 0) }
    }

    /// [`Side::reserve`] for a side that trails the other by about `trail` entries, or does
    /// not if `trail` is 0, as it must be with `MULTI` (see [`HeadTail::move_head`]).
    ///
    /// # Safety
    ///
    /// As for [`Side::reserve`].
    unsafe fn reserve_trailing<const MULTI: bool, const FIXED: bool>(
        ring: &Ring<T, N>,
        pos: &impl Position,
        n: usize,
        trail: u32,
    ) -> (u32, usize, bool);
}

/// Defines `$Side`, a side of the ring, and implements [`Side`] for it: its index pair is the
/// ring's `$own`, whose head moves against the tail of `$other` counting from `$capacity`; an
/// all-or-nothing request that finds too few entries gets `Error::$short`; its items go the way
/// `$Way` says.
macro_rules! side {
    (
        $(#[$doc:meta])*
        $Side:ident: $own:ident against $other:ident, capacity $capacity:expr,
        short $short:ident, way $Way:ident;
    ) => {
        $(#[$doc])*
        pub(crate) struct $Side;

        impl<T, const N: usize> Side<T, N> for $Side {
            const SHORT: Error = Error::$short;
            type Way = $Way;

            #[inline(always)]
            fn own(ring: &Ring<T, N>) -> &HeadTail {
                &ring.$own
            }

            #[inline(always)]
            unsafe fn reserve_trailing<const MULTI: bool, const FIXED: bool>(
                ring: &Ring<T, N>,
                pos: &impl Position,
                n: usize,
                trail: u32,
            ) -> (u32, usize, bool) {
                // SAFETY: The caller's guarantee is the one `move_head` requires, with `N` as
                // `size` (`Ring::CAP`).
                unsafe {
                    ring.$own.move_head::<MULTI, FIXED>(
                        pos,
                        &ring.$other.tail,
                        $capacity,
                        Ring::<T, N>::CAP,
                        n,
                        trail,
                    )
                }
            }
        }
    };
}

side! {
    /// The producers' side of a ring: it counts free slots, from `N`, and its items go in.
    Prod: prod against cons, capacity Ring::<T, N>::CAP,
    short Full, way In;
}

side! {
    /// The consumers' side of a ring: it counts items, from 0, and its items go out.
    Cons: cons against prod, capacity 0,
    short Empty, way Out;
}

/// What a request that reserved nothing returns: `Ok(0)` for an empty request or a burst;
/// for an all-or-nothing request of `n > 0` entries, `TooLarge` if `n` exceeds the ring's
/// `size`, `short` (`Full` or `Empty`) otherwise.
///
/// The tests of `n` are here, off the path of a request that moved something.
#[inline(always)]
fn none_moved<const FIXED: bool>(n: usize, size: usize, short: Error) -> Result<usize, Error> {
    if FIXED && n > size {
        Err(Error::TooLarge)
    } else if FIXED && n != 0 {
        Err(short)
    } else {
        Ok(0)
    }
}

/// The commit of a reservation on a single side (producer or consumer), run when dropped: it
/// publishes the first `done` entries from `head`, and records the side's new position in
/// `pos`, also when the caller's code panics partway.
///
/// `P` is where the side keeps its position (see [`Position`]): a handle's copy, for the chunks
/// that a handle lends, by default.
///
/// # Invariants
///
/// The side runs the single protocol, `pos` is its position, this guard's owner reserved
/// `head .. head + k` on it with `move_head` from that position, `done <= k`, and the entries
/// `head .. head + done` are finished (filled by a producer, emptied by a consumer).
pub(crate) struct SingleCommit<'a, P: Position = &'a mut u32> {
    side: &'a HeadTail,
    pos: P,
    head: u32,
    pub(crate) done: usize,
}

impl<'a, P: Position> SingleCommit<'a, P> {
    #[inline(always)]
    pub(crate) fn new(side: &'a HeadTail, pos: P, head: u32) -> Self {
        // INVARIANT: Nothing is finished yet.
        Self {
            side,
            pos,
            head,
            done: 0,
        }
    }
}

impl<P: Position> Drop for SingleCommit<'_, P> {
    #[inline(always)]
    fn drop(&mut self) {
        // A single side may commit fewer entries than it reserved: it never published the
        // reservation, and where its commit ends is also where its next one starts.
        let next = self.head.wrapping_add(self.done as u32);
        self.side
            .update_tail::<false>(&mut self.pos, self.head, next, true);
    }
}

impl<T, const N: usize> Drop for Ring<T, N> {
    fn drop(&mut self) {
        // Relaxed: `&mut self` means every operation has completed and its effects are visible
        // to us (whatever handed us `&mut` synchronised with the threads that used the ring).
        // The consumers' `tail`: at rest, a multi side's `head` equals it and a single side's
        // position is it.
        let cons_tail = self.cons.tail.load(Ordering::Relaxed);
        let prod_tail = self.prod.tail.load(Ordering::Relaxed);
        let n = prod_tail.wrapping_sub(cons_tail) as usize;
        // SAFETY: With no operation in progress, by the type invariants the slots
        // `cons.tail .. prod.tail` are exactly the full ones (`n <= N`), owned by the queue
        // alone; the ring is being destroyed, so nothing reads them afterwards.
        unsafe { self.slots.drop_range(cons_tail, n) };
    }
}
