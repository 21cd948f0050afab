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
//! reports any that the index protocol fails to order.
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
    const MASK: usize = N - 1;

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
    #[inline(always)]
    fn base(&self) -> *mut T {
        // `MaybeUninit<T>` has the layout of `T`, and the array is inside an `UnsafeCell`, so
        // the pointer may be written through while `&self` is shared.
        self.cells.get().cast::<T>()
    }

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

    /// Moves `n` items from `src` into the `n` slots starting at index `idx`.
    ///
    /// # Safety
    ///
    /// - `1 <= n <= N`.
    /// - The caller has reserved slots `idx .. idx + n` (indices modulo 2^32) for writing, as
    ///   for [`Slots::write_one`].
    /// - `src` is valid for reading `n` items and does not overlap the ring. Their ownership
    ///   passes to the ring: the caller must neither use nor drop them afterwards.
    #[inline(always)]
    pub(crate) unsafe fn write(&self, idx: u32, src: *const T, n: usize) {
        if n < 4 {
            // A bulk of one to three, the smallest and common ones, costs what as many single
            // enqueues do: each item to its slot through the index mask, with no test for the
            // end of the array and no copy loop.
            // SAFETY: Slot `idx` is reserved to us (caller), and `src` holds `n >= 1` items.
            unsafe { self.write_one(idx, src.read()) };
            if n >= 2 {
                // SAFETY: As above, for the second item and slot.
                unsafe { self.write_one(idx.wrapping_add(1), src.add(1).read()) };
                if n == 3 {
                    // SAFETY: As above, for the third item and slot.
                    unsafe { self.write_one(idx.wrapping_add(2), src.add(2).read()) };
                }
            }
            return;
        }
        let (start, first) = Self::runs(idx, n);
        let base = self.base();
        if first == n {
            // SAFETY: One straight run, `start + n <= N` (`Slots::runs`): the reserved slots,
            // exclusive to us; `src` holds `n` readable items outside the ring.
            unsafe { copy_items(src, base.add(start), n) };
        } else {
            // SAFETY: Forwarded from the caller.
            unsafe { self.write_wrapping(idx, src, n) };
        }
    }

    /// [`Slots::write`] for a bulk that reaches the end of the array: slot by slot through
    /// the mask, as the C original does. It happens once per `N / n` bulks, so it is kept
    /// out of line: inline, its loop would take registers from the common path around it.
    ///
    /// # Safety
    ///
    /// As for [`Slots::write`].
    #[cold]
    #[inline(never)]
    unsafe fn write_wrapping(&self, idx: u32, src: *const T, n: usize) {
        for i in 0..n {
            // SAFETY: Slot `(idx + i) & MASK` is in bounds and one of the reserved slots
            // (`i < n <= N`); `src.add(i)` is one of the `n` readable items.
            unsafe { self.write_one(idx.wrapping_add(i as u32), src.add(i).read()) };
        }
    }

    /// Moves the `n` items in the slots starting at index `idx` to `dst`.
    ///
    /// # Safety
    ///
    /// - `1 <= n <= N`.
    /// - The caller has reserved slots `idx .. idx + n` (indices modulo 2^32) for reading, as
    ///   for [`Slots::read_one`].
    /// - `dst` is valid for writing `n` items and does not overlap the ring. The items'
    ///   ownership passes to the caller, who must treat the slots as empty afterwards.
    #[inline(always)]
    pub(crate) unsafe fn read(&self, idx: u32, dst: *mut T, n: usize) {
        if n < 4 {
            // As in `write`.
            // SAFETY: Slot `idx` is reserved to us and full (caller); `dst` has room for `n`.
            unsafe { dst.write(self.read_one(idx)) };
            if n >= 2 {
                // SAFETY: As above, for the second slot and item.
                unsafe { dst.add(1).write(self.read_one(idx.wrapping_add(1))) };
                if n == 3 {
                    // SAFETY: As above, for the third slot and item.
                    unsafe { dst.add(2).write(self.read_one(idx.wrapping_add(2))) };
                }
            }
            return;
        }
        let (start, first) = Self::runs(idx, n);
        let base = self.base();
        if first == n {
            // SAFETY: One straight run, `start + n <= N` (`Slots::runs`): the reserved,
            // initialised slots; `dst` has room for `n` items outside the ring.
            unsafe { copy_items(base.add(start), dst, n) };
        } else {
            // SAFETY: Forwarded from the caller.
            unsafe { self.read_wrapping(idx, dst, n) };
        }
    }

    /// [`Slots::read`] for a bulk that reaches the end of the array: slot by slot, out of
    /// line, as in [`Slots::write_wrapping`].
    ///
    /// # Safety
    ///
    /// As for [`Slots::read`].
    #[cold]
    #[inline(never)]
    unsafe fn read_wrapping(&self, idx: u32, dst: *mut T, n: usize) {
        for i in 0..n {
            // SAFETY: Slot `(idx + i) & MASK` is one of the reserved, full slots
            // (`i < n <= N`); `dst.add(i)` is inside the room for `n` items.
            unsafe { dst.add(i).write(self.read_one(idx.wrapping_add(i as u32))) };
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
    const MASK: usize = N - 1;

    /// Creates `N` empty slots.
    pub(crate) fn new() -> Self {
        Self {
            cells: core::array::from_fn(|_| loom::cell::UnsafeCell::new(MaybeUninit::uninit())),
        }
    }

    /// Moves `item` into the slot of index `idx`.
    ///
    /// # Safety
    ///
    /// As for the non-loom `Slots::write_one`.
    pub(crate) unsafe fn write_one(&self, idx: u32, item: T) {
        self.cells[idx as usize & Self::MASK].with_mut(|p| {
            // SAFETY: The caller's reservation makes this the only access to the empty slot.
            unsafe { (*p).write(item) };
        });
    }

    /// Moves the item out of the slot of index `idx`.
    ///
    /// # Safety
    ///
    /// As for the non-loom `Slots::read_one`.
    pub(crate) unsafe fn read_one(&self, idx: u32) -> T {
        self.cells[idx as usize & Self::MASK].with(|p| {
            // SAFETY: The caller's reservation gives it the initialised item in this slot.
            unsafe { (*p).assume_init_read() }
        })
    }

    /// Moves `n` items from `src` into the slots starting at index `idx`.
    ///
    /// # Safety
    ///
    /// As for the non-loom `Slots::write`.
    pub(crate) unsafe fn write(&self, idx: u32, src: *const T, n: usize) {
        for i in 0..n {
            // SAFETY: `src` holds `n` readable items whose ownership passes to the ring, and
            // slot `idx + i` is reserved to us.
            unsafe { self.write_one(idx.wrapping_add(i as u32), src.add(i).read()) };
        }
    }

    /// Moves the `n` items in the slots starting at index `idx` to `dst`.
    ///
    /// # Safety
    ///
    /// As for the non-loom `Slots::read`.
    pub(crate) unsafe fn read(&self, idx: u32, dst: *mut T, n: usize) {
        for i in 0..n {
            // SAFETY: Slot `idx + i` is reserved to us and full, and `dst` has room for `n`.
            unsafe { dst.add(i).write(self.read_one(idx.wrapping_add(i as u32))) };
        }
    }

    /// Writes `make(i)` into the slot of index `idx + i`, for `i` from `*done` up to `n`.
    ///
    /// # Safety
    ///
    /// As for the non-loom `Slots::fill_with`.
    pub(crate) unsafe fn fill_with(
        &self,
        idx: u32,
        n: usize,
        done: &mut usize,
        mut make: impl FnMut(usize) -> T,
    ) {
        count_steps::<false>(n, done, |i| {
            let item = make(i);
            // SAFETY: Slot `idx + i` is reserved to us and empty (caller).
            unsafe { self.write_one(idx.wrapping_add(i as u32), item) };
        });
    }

    /// Moves the item out of the slot of index `idx + i` into `take`, for `i` from `*done` up
    /// to `n`.
    ///
    /// # Safety
    ///
    /// As for the non-loom `Slots::drain_with`.
    pub(crate) unsafe fn drain_with(
        &self,
        idx: u32,
        n: usize,
        done: &mut usize,
        mut take: impl FnMut(T),
    ) {
        count_steps::<true>(n, done, |i| {
            // SAFETY: Slot `idx + i` is reserved to us and full (caller).
            take(unsafe { self.read_one(idx.wrapping_add(i as u32)) });
        });
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
