// SPDX-License-Identifier: GPL-2.0

//! The ring's item storage: `N` slots, each either empty or holding one `T`.
//!
//! The storage does not know which slots are full: the indices in [`Ring`] say that, and every
//! method here is `unsafe`, with the caller vouching for the slots it touches. Slots are
//! addressed by free-running `u32` index; since `N` is a power of two dividing 2^32, the slot of
//! index `i` is `i & (N - 1)` whether or not `i` has wrapped past `u32::MAX`.
//!
//! There are two implementations. The normal one is one `UnsafeCell<[MaybeUninit<T>; N]>`, so
//! that a bulk move is one straight copy (or, when it reaches the end of the array, a loop
//! through the index mask). The `cfg(loom)` one gives every slot its own
//! `loom::cell::UnsafeCell`, so that the model checker tracks the accesses to each slot and
//! reports any that the index protocol fails to order. The two differ in how a slot is accessed
//! and in the bulk copy; the rest is written once, over their slot accesses.
//!
//! [`Ring`]: super::ring::Ring

use core::mem::MaybeUninit;
#[cfg(not(loom))]
use core::{cell::UnsafeCell, ptr};

/// Copies `n` items from `src` to `dst`, inline: four at a time, then two and one.
///
/// A plain loop, or `ptr::copy_nonoverlapping` with a run-time length, becomes a call to
/// `memcpy` (LLVM recognises the loop idiom), and for the bulks this queue moves (a few to a
/// few dozen pointers) the call and its size dispatch cost more than the copy; the kernel's
/// `memcpy` is out of line too. The [`chunk_barrier`] after each chunk of four is what stops
/// the loop from being turned back into a `memcpy`, or unrolled; it emits no instruction. The
/// fewer than four items left over are copied by two tests of `n`'s low bits, as the C
/// original's `switch (n & 3)` does: a loop there would be unrolled by LLVM behind a set-up
/// that costs a small bulk more than its copy. A bulk of four to seven takes its four without
/// the loop.
///
/// Chunks of four, as the C original copies, and not eight: with a loop of eight the compiler
/// keeps the batch's length and the index on the stack, stored and reloaded on every round,
/// and the small bulks and the bulk of 16 cost more than the C original's (docs/benchmarks.md,
/// "The copy of a bulk, and why it is written as it is").
///
/// # Safety
///
/// `src` is valid for reading and `dst` for writing `n` items, and the two do not overlap.
#[cfg(not(loom))]
#[inline(always)]
unsafe fn copy_items<T>(src: *const T, dst: *mut T, n: usize) {
    let mut i = 0;
    if n < 8 {
        if n & 4 != 0 {
            // SAFETY: `4 <= n`: inside both ranges, which do not overlap (caller).
            unsafe { ptr::copy_nonoverlapping(src, dst, 4) };
            i = 4;
        }
    } else {
        while i + 4 <= n {
            // SAFETY: `i + 4 <= n`: inside both ranges, which do not overlap (caller).
            unsafe { ptr::copy_nonoverlapping(src.add(i), dst.add(i), 4) };
            chunk_barrier();
            i += 4;
        }
    }
    if n & 2 != 0 {
        // SAFETY: `i + 2 <= n`, as above.
        unsafe { ptr::copy_nonoverlapping(src.add(i), dst.add(i), 2) };
        i += 2;
    }
    if n & 1 != 0 {
        // SAFETY: `i + 1 == n`, as above.
        unsafe { ptr::copy_nonoverlapping(src.add(i), dst.add(i), 1) };
    }
}

/// Ends a chunk of [`copy_items`]' loop: a compiler barrier that emits no instruction.
///
/// It has two jobs. Like a compiler fence, it keeps LLVM from turning the loop back into a
/// call to `memcpy`. Being an inline assembly statement, which LLVM counts as a call, it also
/// keeps LLVM from unrolling the loop (it does not runtime-unroll a loop that makes a call).
/// Unrolled, the loop's set-up values (the trip counts of the unrolled body and of its
/// remainder) take registers across the whole inlined enqueue or dequeue and push the
/// caller's loop counters to the stack, which costs a bulk of one to three more than its copy
/// (docs/benchmarks.md, "The copy of a bulk, and why it is written as it is").
///
/// Under Miri, which does not run inline assembly, it is a compiler fence.
#[cfg(not(loom))]
#[inline(always)]
fn chunk_barrier() {
    #[cfg(not(miri))]
    {
        // SAFETY: An empty template: no instruction, and no register, flag or stack use.
        // Without `nomem` the compiler assumes that it reads and writes memory, which is the
        // barrier.
        unsafe { core::arch::asm!("", options(nostack, preserves_flags)) };
    }
    #[cfg(miri)]
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// Runs `step(i)` for `i` from `*done` up to `end`, in order, and counts each step in `*done`:
/// before it runs if `COUNT_FIRST`, after it returns otherwise (so after a panic in a step,
/// `*done` says whether that step counts).
///
/// The steps go eight at a time with a compiler fence after each eight, and one at a time with
/// a fence after each for the rest: as in `copy_items`, the fence stops LLVM from turning a
/// step that copies from (or to) an array into a call to `memcpy`, which for a small bulk costs
/// more than the copy, and the runs of eight still let it combine their loads and stores.
/// Both slot storages use it, so the loom models check the same counting.
#[inline(always)]
fn count_steps<const COUNT_FIRST: bool>(end: usize, done: &mut usize, mut step: impl FnMut(usize)) {
    use core::sync::atomic::{compiler_fence, Ordering};
    let mut one = |done: &mut usize| {
        let i = *done;
        if COUNT_FIRST {
            *done = i + 1;
            step(i);
        } else {
            step(i);
            *done = i + 1;
        }
    };
    while *done + 8 <= end {
        for _ in 0..8 {
            one(done);
        }
        compiler_fence(Ordering::SeqCst);
    }
    while *done < end {
        one(done);
        compiler_fence(Ordering::SeqCst);
    }
}

/// The storage of a ring of `N` slots.
#[cfg(not(loom))]
pub(crate) struct Slots<T, const N: usize> {
    cells: UnsafeCell<[MaybeUninit<T>; N]>,
}

#[cfg(not(loom))]
impl<T, const N: usize> Slots<T, N> {
    /// Creates `N` empty slots.
    #[inline(always)]
    pub(crate) const fn new() -> Self {
        Self {
            // SAFETY: An array of `MaybeUninit<T>` needs no initialisation, so an uninitialised
            // one is a valid value.
            cells: UnsafeCell::new(unsafe {
                MaybeUninit::<[MaybeUninit<T>; N]>::uninit().assume_init()
            }),
        }
    }

    /// Returns a pointer to slot 0; slot `i` is at `base().add(i)` for `i < N`.
    ///
    /// The code that both storages share accesses the slots through it (`add`, `read`,
    /// `write`), as it would through a pointer; under loom, `Base` stands in for it.
    #[inline(always)]
    fn base(&self) -> *mut T {
        // `MaybeUninit<T>` has the layout of `T`, and the array is inside an `UnsafeCell`, so
        // the pointer may be written through while `&self` is shared.
        self.cells.get().cast::<T>()
    }

    /// Returns the slots of indices `idx .. idx + n`, for `n <= N`, as the two straight runs
    /// of [`Slots::runs`], pointers into the array. The runs do not overlap; the pointers may
    /// be written through while `&self` is shared.
    #[inline(always)]
    pub(crate) fn run_ptrs(&self, idx: u32, n: usize) -> Runs<T> {
        let (start, first) = Self::runs(idx, n);
        let base = self.base();
        Runs {
            // SAFETY: `start` is masked, so `start < N`: inside the array.
            first: unsafe { base.add(start) },
            first_len: first,
            second: base,
            second_len: n - first,
        }
    }

    /// Moves `n` items between `buf` and the `n` slots starting at index `idx`, the way `W`
    /// says: into the slots for [`In`] (an enqueue), out of them for [`Out`] (a dequeue). With
    /// `RUN`, a bulk of three or four short of the array's end is one straight copy rather than
    /// slot by slot.
    ///
    /// # Safety
    ///
    /// - `1 <= n <= N`.
    /// - The caller has reserved slots `idx .. idx + n` (indices modulo 2^32), for writing for
    ///   [`In`] and for reading for [`Out`], as for [`Slots::write_one`] and
    ///   [`Slots::read_one`].
    /// - `buf` does not overlap the ring and is valid for reading `n` items for [`In`], for
    ///   writing them for [`Out`]. The items' ownership passes to the ring for [`In`], to the
    ///   caller for [`Out`]: the caller must neither use nor drop the items it gave, and must
    ///   treat the slots it emptied as empty.
    #[inline(always)]
    pub(crate) unsafe fn copy<W: Way, const RUN: bool>(&self, idx: u32, buf: *mut T, n: usize) {
        // A bulk of one to four, the smallest and common ones, costs what as many single
        // operations do: each item to or from its slot through the index mask, with no test
        // for the end of the array and no copy loop. One is tested first, so that a bulk of one
        // takes a single test more than a single operation.
        if n == 1 {
            // SAFETY: Slot `idx` is reserved to us (caller), and `buf` has room for `n == 1`.
            unsafe { W::one(self, idx, buf) };
            return;
        }
        // With `RUN`, a bulk of three or four that stays short of the array's end is one straight
        // copy instead: fewer instructions than the mask's two per item, for a single side's
        // slice forms (see `Ring::transfer`).
        let start = idx as usize & Self::MASK;
        if RUN && (3..=4).contains(&n) && start + 4 <= N {
            // SAFETY: `start + 4 <= N` and `n <= 4`: one straight run of the reserved slots,
            // inside the array; `buf` holds (has room for) `n` items outside the ring.
            unsafe { W::run(self.base().add(start), buf, n) };
            return;
        }
        if n <= 4 {
            // SAFETY: Slots `idx` and `idx + 1` are reserved to us (caller), and `buf` holds
            // (has room for) their items (`n >= 2`).
            unsafe { W::one(self, idx, buf) };
            // SAFETY: As above.
            unsafe { W::one(self, idx.wrapping_add(1), buf.add(1)) };
            if n >= 3 {
                // SAFETY: As above, for the third slot and item.
                unsafe { W::one(self, idx.wrapping_add(2), buf.add(2)) };
                if n == 4 {
                    // SAFETY: As above, for the fourth slot and item.
                    unsafe { W::one(self, idx.wrapping_add(3), buf.add(3)) };
                }
            }
            return;
        }
        let (start, first) = Self::runs(idx, n);
        let base = self.base();
        if first == n {
            // SAFETY: One straight run, `start + n <= N` (`Slots::runs`): the reserved slots,
            // exclusive to us; `buf` holds (has room for) `n` items outside the ring.
            unsafe { W::run(base.add(start), buf, n) };
        } else {
            // SAFETY: Forwarded from the caller.
            unsafe { self.copy_each::<W>(idx, buf, n) };
        }
    }

    /// Drops the `n` items in the slots starting at index `idx`.
    ///
    /// If an item's `drop` panics, the others are still dropped while unwinding (as
    /// `drop_in_place` does for a slice), in both runs.
    ///
    /// # Safety
    ///
    /// `n <= N`, and those slots hold initialised items that nothing else will read or drop.
    pub(crate) unsafe fn drop_range(&mut self, idx: u32, n: usize) {
        if !core::mem::needs_drop::<T>() {
            return;
        }
        // SAFETY: The runs of `Slots::run_ptrs` are in bounds and disjoint, and hold
        // initialised items owned by nobody else (caller). The slots count as empty afterwards.
        unsafe { self.run_ptrs(idx, n).drop_items() };
    }
}

/// A stretch of ring slots as the two straight runs of the array it occupies: `first_len`
/// slots from `first` up to the end of the array, then `second_len` from its start (none
/// unless the stretch wraps). Pointers only: what the slots hold, and who may touch them, is
/// for the holder to know.
#[cfg(not(loom))]
pub(crate) struct Runs<T> {
    first: *mut T,
    first_len: usize,
    second: *mut T,
    second_len: usize,
}

#[cfg(not(loom))]
impl<T> Runs<T> {
    /// Returns the number of slots in both runs.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.first_len + self.second_len
    }

    /// Returns the two runs as slice pointers.
    #[inline(always)]
    pub(crate) fn slices(&self) -> (*mut [T], *mut [T]) {
        (
            ptr::slice_from_raw_parts_mut(self.first, self.first_len),
            ptr::slice_from_raw_parts_mut(self.second, self.second_len),
        )
    }

    /// Drops the items of the first run, then those of the second, also if a drop in the first
    /// panics (as `drop_in_place` does for the rest of a slice).
    ///
    /// # Safety
    ///
    /// Both runs are valid and hold initialised items that nothing uses afterwards.
    #[inline]
    pub(crate) unsafe fn drop_items(&self) {
        /// Drops a run of items when dropped: during unwinding too.
        struct DropRun<T>(*mut [T]);
        impl<T> Drop for DropRun<T> {
            fn drop(&mut self) {
                // SAFETY: The run holds initialised items owned by nobody else
                // (`drop_items`' contract), dropped exactly once, here.
                unsafe { ptr::drop_in_place(self.0) };
            }
        }

        let (first, second) = self.slices();
        // Each guard drops its run exactly once, the second even if a drop in the first panics.
        let _second = DropRun(second);
        drop(DropRun(first));
    }
}

/// The storage of a ring of `N` slots, one loom cell per slot.
#[cfg(loom)]
pub(crate) struct Slots<T, const N: usize> {
    cells: [loom::cell::UnsafeCell<MaybeUninit<T>>; N],
}

#[cfg(loom)]
impl<T, const N: usize> Slots<T, N> {
    /// Creates `N` empty slots.
    pub(crate) fn new() -> Self {
        Self {
            cells: core::array::from_fn(|_| loom::cell::UnsafeCell::new(MaybeUninit::uninit())),
        }
    }

    /// Returns a stand-in for a pointer to slot 0: see [`Base`].
    fn base(&self) -> Base<'_, T, N> {
        Base {
            cells: &self.cells,
            slot: 0,
        }
    }

    /// Moves `n` items between `buf` and the slots starting at index `idx`, slot by slot.
    ///
    /// # Safety
    ///
    /// As for the non-loom `Slots::copy`.
    pub(crate) unsafe fn copy<W: Way, const RUN: bool>(&self, idx: u32, buf: *mut T, n: usize) {
        // SAFETY: Forwarded from the caller.
        unsafe { self.copy_each::<W>(idx, buf, n) };
    }

    /// Drops the `n` items in the slots starting at index `idx`.
    ///
    /// # Safety
    ///
    /// As for the non-loom `Slots::drop_range`.
    pub(crate) unsafe fn drop_range(&mut self, idx: u32, n: usize) {
        for i in 0..n {
            self.cells[idx.wrapping_add(i as u32) as usize & Self::MASK].with_mut(|p| {
                // SAFETY: The caller guarantees that this slot holds an item nobody else owns.
                unsafe { (*p).assume_init_drop() };
            });
        }
    }
}

/// Under loom, what the code that both storages share uses as a pointer to a slot: `add` moves
/// it on by `i` slots, `read` and `write` access its slot through the slot's loom cell, which
/// checks that the index protocol orders the access.
#[cfg(loom)]
struct Base<'a, T, const N: usize> {
    cells: &'a [loom::cell::UnsafeCell<MaybeUninit<T>>; N],
    slot: usize,
}

#[cfg(loom)]
impl<T, const N: usize> Clone for Base<'_, T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

#[cfg(loom)]
impl<T, const N: usize> Copy for Base<'_, T, N> {}

#[cfg(loom)]
impl<T, const N: usize> Base<'_, T, N> {
    /// The stand-in for the slot `i` slots further on.
    ///
    /// # Safety
    ///
    /// As for a pointer: the slot is in the array (indexing checks it here).
    unsafe fn add(self, i: usize) -> Self {
        Self {
            slot: self.slot + i,
            ..self
        }
    }

    /// Moves `item` into the slot.
    ///
    /// # Safety
    ///
    /// The slot is empty and reserved to the caller for writing.
    unsafe fn write(self, item: T) {
        self.cells[self.slot].with_mut(|p| {
            // SAFETY: The caller's reservation makes this the only access to the empty slot.
            unsafe { (*p).write(item) };
        });
    }

    /// Moves the item out of the slot.
    ///
    /// # Safety
    ///
    /// The slot is full and reserved to the caller for reading; it counts as empty afterwards.
    unsafe fn read(self) -> T {
        self.cells[self.slot].with(|p| {
            // SAFETY: The caller's reservation gives it the initialised item in this slot.
            unsafe { (*p).assume_init_read() }
        })
    }
}

/// What both storages share, written over `base()` (a pointer to slot 0, or under loom its
/// stand-in): the same code in both builds, so that the loom models check the slot-by-slot
/// copy, the in-place steps and their counting as the kernel runs them.
impl<T, const N: usize> Slots<T, N> {
    const MASK: usize = N - 1;

    /// Returns the two straight runs of slots that indices `idx .. idx + n` occupy, for
    /// `n <= N`: `(start, first)` for slots `start .. start + first` (up to the end of the
    /// array), then slots `0 .. n - first` (from its start; empty unless the run wraps).
    ///
    /// `start + first <= N`, and `n - first <= start`, so the two runs do not overlap.
    #[inline(always)]
    fn runs(idx: u32, n: usize) -> (usize, usize) {
        let start = idx as usize & Self::MASK;
        let first = if n < N - start { n } else { N - start };
        (start, first)
    }

    /// Moves `item` into the slot of index `idx`.
    ///
    /// # Safety
    ///
    /// The caller has reserved slot `idx` for writing: it is empty, and no other thread
    /// accesses it until the caller publishes it.
    #[inline(always)]
    pub(crate) unsafe fn write_one(&self, idx: u32, item: T) {
        // SAFETY: `idx & MASK < N`, so the slot is in bounds; the caller's reservation makes
        // this the only access to it, and it holds no item that the write could leak.
        unsafe { self.base().add(idx as usize & Self::MASK).write(item) }
    }

    /// Moves the item out of the slot of index `idx`, leaving the slot empty.
    ///
    /// # Safety
    ///
    /// The caller has reserved slot `idx` for reading: it holds an item whose write happens
    /// before this call, and no other thread accesses the slot until the caller releases it.
    #[inline(always)]
    pub(crate) unsafe fn read_one(&self, idx: u32) -> T {
        // SAFETY: In bounds as in `write_one`; the slot holds an initialised item that the
        // caller's reservation gives to this thread alone, and the caller treats the slot as
        // empty afterwards, so the item is not duplicated.
        unsafe { self.base().add(idx as usize & Self::MASK).read() }
    }

    /// [`Slots::copy`] slot by slot through the mask, as the C original copies: the whole of
    /// it under loom, and, in the kernel and userspace builds, a bulk that reaches the end of
    /// the array. That happens once per `N / n` bulks, so it is kept out of line: inline, its
    /// loop would take registers from the common path around it.
    ///
    /// # Safety
    ///
    /// As for [`Slots::copy`].
    #[cold]
    #[inline(never)]
    unsafe fn copy_each<W: Way>(&self, idx: u32, buf: *mut T, n: usize) {
        for i in 0..n {
            // SAFETY: Slot `(idx + i) & MASK` is one of the reserved slots (`i < n <= N`), and
            // `buf.add(i)` is inside the `n` items of `buf`.
            unsafe { W::one(self, idx.wrapping_add(i as u32), buf.add(i)) };
        }
    }

    /// Writes `make(i)` into the slot of index `idx + i`, for `i` from `*done` up to `n`, and
    /// counts each item written in `*done`.
    ///
    /// Each item goes straight into its slot, with no copy through a buffer, a straight run to
    /// the end of the array and then one from its start. If `make` panics, `*done` counts the
    /// slots filled so far, and the slot it was making an item for stays empty.
    ///
    /// # Safety
    ///
    /// `*done <= n <= N`, and the caller has reserved the slots `idx .. idx + n` for writing, as
    /// for [`Slots::write_one`]; the slots it counts in `*done` hold items afterwards.
    #[inline(always)]
    pub(crate) unsafe fn fill_with(
        &self,
        idx: u32,
        n: usize,
        done: &mut usize,
        mut make: impl FnMut(usize) -> T,
    ) {
        let (start, first) = Self::runs(idx, n);
        let base = self.base();
        // Item `i < first` goes to slot `start + i < start + first <= N`, item
        // `first <= i < n` to slot `i - first < n - first <= start` (`Slots::runs`). A slot is
        // counted in `*done` once its item is written.
        count_steps::<false>(first, done, |i| {
            let item = make(i);
            // SAFETY: In bounds (above), reserved and empty (caller).
            unsafe { base.add(start + i).write(item) };
        });
        count_steps::<false>(n, done, |i| {
            let item = make(i);
            // SAFETY: In bounds (above), reserved and empty (caller).
            unsafe { base.add(i - first).write(item) };
        });
    }

    /// Moves the item out of the slot of index `idx + i` and passes it to `take`, for `i` from
    /// `*done` up to `n`, counting each item moved out in `*done` (before `take` runs).
    ///
    /// If `take` panics, `*done` counts the slots emptied so far, the one whose item it was
    /// given included.
    ///
    /// # Safety
    ///
    /// `*done <= n <= N`, and the caller has reserved the full slots `idx .. idx + n` for
    /// reading, as for [`Slots::read_one`]; the slots it counts in `*done` are empty afterwards.
    #[inline(always)]
    pub(crate) unsafe fn drain_with(
        &self,
        idx: u32,
        n: usize,
        done: &mut usize,
        mut take: impl FnMut(T),
    ) {
        let (start, first) = Self::runs(idx, n);
        let base = self.base();
        // The slots as in `fill_with`. A slot is counted in `*done`, as empty, before its item
        // reaches `take`, so a panic in `take` cannot leave it counted as full.
        count_steps::<true>(first, done, |i| {
            // SAFETY: In bounds, reserved and full (caller).
            take(unsafe { base.add(start + i).read() });
        });
        count_steps::<true>(n, done, |i| {
            // SAFETY: In bounds, reserved and full (caller).
            take(unsafe { base.add(i - first).read() });
        });
    }
}

/// Which way [`Slots::copy`] moves items: [`In`] or [`Out`].
///
/// A type rather than a flag, so that the copy written once for both ways has no branch on the
/// way in it, not even one the compiler removes.
pub(crate) trait Way {
    /// Moves the item between `*buf` and the slot of index `idx`.
    ///
    /// # Safety
    ///
    /// As for [`Slots::copy`] with `n == 1`.
    unsafe fn one<T, const N: usize>(slots: &Slots<T, N>, idx: u32, buf: *mut T);

    /// Copies `n` items between `buf` and the straight run of slots at `run`.
    ///
    /// # Safety
    ///
    /// `run` and `buf` are as for [`Slots::copy`], for `n` items in one straight run.
    #[cfg(not(loom))]
    unsafe fn run<T>(run: *mut T, buf: *mut T, n: usize);
}

/// Into the slots, from the caller's buffer: an enqueue.
pub(crate) struct In;

/// Out of the slots, into the caller's buffer: a dequeue.
pub(crate) struct Out;

impl Way for In {
    #[inline(always)]
    unsafe fn one<T, const N: usize>(slots: &Slots<T, N>, idx: u32, buf: *mut T) {
        // SAFETY: `buf` holds an item that passes to the reserved, empty slot (caller).
        unsafe { slots.write_one(idx, buf.read()) };
    }

    #[cfg(not(loom))]
    #[inline(always)]
    unsafe fn run<T>(run: *mut T, buf: *mut T, n: usize) {
        // SAFETY: `buf` holds `n` items, which pass to the `n` reserved slots at `run` (caller).
        unsafe { copy_items(buf, run, n) };
    }
}

impl Way for Out {
    #[inline(always)]
    unsafe fn one<T, const N: usize>(slots: &Slots<T, N>, idx: u32, buf: *mut T) {
        // SAFETY: The reserved, full slot's item passes to `buf`, which has room (caller).
        unsafe { buf.write(slots.read_one(idx)) };
    }

    #[cfg(not(loom))]
    #[inline(always)]
    unsafe fn run<T>(run: *mut T, buf: *mut T, n: usize) {
        // SAFETY: The `n` items of the reserved slots at `run` pass to `buf`, which has room
        // (caller).
        unsafe { copy_items(run, buf, n) };
    }
}
