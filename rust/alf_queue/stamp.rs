// SPDX-License-Identifier: GPL-2.0

//! [`StampQueue`], the multi-producer multi-consumer queue for one item at a time: a stamp in
//! every slot, after Vyukov's bounded MPMC queue (as crossbeam's `ArrayQueue` is built).
//!
//! The orderings are labelled as in `headtail.rs`: `S*` are the slots' stamps (acquire loads,
//! release stores), `I*` the two indices (all relaxed), and each comment names its partner.

use core::mem::MaybeUninit;

use super::headtail::OwnLine;
use super::queue::queue_basics;
use super::sync::{read_stamp, spin_loop, AtomicU32, Ordering};

#[cfg(not(loom))]
use core::cell::UnsafeCell;
#[cfg(loom)]
use loom::cell::UnsafeCell;

/// A bounded lock-free queue of `N` slots for any number of producers and consumers, one item
/// per call.
///
/// [`MpmcQueue`](super::MpmcQueue) moves a bulk of `k` items with one compare-and-swap, and
/// its consumers learn what the producers committed from the producers' tail, one word for the
/// whole ring. One item per call, that costs it a cache line more than it needs: the
/// consumer reads the producers' tail line and then, after its compare-and-swap, the slot's
/// line, two misses one after the other. Here each slot carries a stamp that says which index
/// it waits for, on the item's cache line, and an operation reads only its own side's index
/// and the slot: one compare-and-swap and one line shared with the other side per item, as in
/// `ArrayQueue`. There is no bulk operation: for bulks, [`MpmcQueue`](super::MpmcQueue).
///
/// No operation waits for another one: an enqueue (a dequeue) that finds its slot still held
/// by an operation of the other side in progress reports the queue full (empty), as
/// `MpmcQueue` does while the other side has not committed. So it may be used from any
/// context, NMI included.
///
/// `N` must be a power of two in `2 ..= 2^30` (checked at compile time); all `N` slots are
/// usable. Each slot holds a `u32` stamp besides the item (so a slot of a `usize` takes 16
/// bytes on 64-bit machines), and the queue is stored inline, like `MpmcQueue`: build a large
/// one in place with [`StampQueue::init_in_place`], which writes the `N` stamps.
///
/// # Invariants
///
/// `tail` and `head` are free-running indices (modulo 2^32); the slot of index `i` is
/// `i & (N - 1)`. Measured in wrapping arithmetic from `head`,
/// `head <= tail <= head + N`. The stamp of the slot of index `i`, for `head <= i < head + N`,
/// is one of:
///
/// - `i`: the slot is empty and waits for the producer of index `i`; if `i < tail`, that
///   producer has reserved it and is writing the item;
/// - `i + 1`: the slot holds the item of index `i` (`i < tail`), or, if `i < head`, the
///   consumer that reserved it is reading it;
/// - `i - N + 1` (for `i >= tail`): the consumer of index `i - N` has reserved the slot and is
///   reading its item; `i - N` (likewise): the producer of index `i - N` is writing it.
///
/// A slot is accessed only by the producer of index `i` between its reservation of `i` (the
/// compare-and-swap of `tail` from `i`, after it read the stamp `i`) and its store of the stamp
/// `i + 1`, and by the consumer of index `i` between its reservation (of `head`, after it read
/// `i + 1`) and its store of `i + N`. When no operation is in progress, the slots of
/// `head .. tail` hold items and the others are empty.
///
/// # Examples
///
/// ```
/// use kernel::alf_queue::StampQueue;
///
/// let q = StampQueue::<u32, 4>::new();
/// assert_eq!(q.capacity(), 4);
/// for i in 0..4 {
///     assert_eq!(q.enqueue(i), Ok(()));
/// }
/// assert_eq!(q.enqueue(4), Err(4)); // Full: the item comes back.
/// assert_eq!(q.len(), 4);
/// assert_eq!(q.dequeue(), Some(0));
/// assert_eq!(q.enqueue(4), Ok(()));
/// for i in 1..5 {
///     assert_eq!(q.dequeue(), Some(i));
/// }
/// assert_eq!(q.dequeue(), None);
/// assert!(q.is_empty());
/// ```
///
#[repr(C)]
pub struct StampQueue<T, const N: usize> {
    /// The producers' index: the next index to fill, on a line of its own.
    tail: OwnLine<AtomicU32>,
    /// The consumers' index: the next index to empty, on a line of its own.
    head: OwnLine<AtomicU32>,
    /// The `N` slots, each a stamp and room for an item.
    slots: [Slot<T>; N],
}

/// One slot of a [`StampQueue`]: the index it waits for, and room for an item.
#[repr(C)]
struct Slot<T> {
    /// See the invariants of [`StampQueue`].
    stamp: AtomicU32,
    value: UnsafeCell<MaybeUninit<T>>,
}

// SAFETY: The queue owns its items (it is `Send` exactly when they are); sending it sends them.
unsafe impl<T: Send, const N: usize> Send for StampQueue<T, N> {}

// SAFETY: Through `&StampQueue` items are only moved in and out, never shared, so `T: Send`
// suffices. Each slot is accessed by one operation at a time, and each handover is ordered by
// the release store and the acquire load of the slot's stamp (see the invariants).
unsafe impl<T: Send, const N: usize> Sync for StampQueue<T, N> {}

impl<T> Slot<T> {
    /// An empty slot that waits for the producer of index `stamp`.
    #[cfg(not(loom))]
    #[inline(always)]
    const fn new(stamp: u32) -> Self {
        Self {
            stamp: AtomicU32::new(stamp),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// An empty slot that waits for the producer of index `stamp`.
    #[cfg(loom)]
    fn new(stamp: u32) -> Self {
        Self {
            stamp: AtomicU32::new(stamp),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Moves `item` into the slot.
    ///
    /// # Safety
    ///
    /// The slot is empty, and the caller alone accesses it until it publishes the item.
    #[inline(always)]
    unsafe fn write(&self, item: T) {
        // SAFETY: The caller's reservation makes this the only access; the slot holds no item
        // that the write could leak.
        #[cfg(not(loom))]
        unsafe {
            (*self.value.get()).write(item);
        }
        #[cfg(loom)]
        self.value.with_mut(|p| {
            // SAFETY: As above.
            unsafe { (*p).write(item) };
        });
    }

    /// Moves the item out of the slot, which counts as empty afterwards.
    ///
    /// # Safety
    ///
    /// The slot holds an item whose write happens before this call, and the caller alone
    /// accesses it until it hands the slot back.
    #[inline(always)]
    unsafe fn read(&self) -> T {
        // SAFETY: The item is initialised and this is the only access (caller); the caller
        // treats the slot as empty afterwards, so the item is not duplicated.
        #[cfg(not(loom))]
        unsafe {
            (*self.value.get()).assume_init_read()
        }
        #[cfg(loom)]
        self.value.with(|p| {
            // SAFETY: As above.
            unsafe { (*p).assume_init_read() }
        })
    }

    /// Drops the item in the slot.
    ///
    /// # Safety
    ///
    /// The slot holds an initialised item that nothing else reads or drops.
    unsafe fn drop_item(&mut self) {
        // SAFETY: As the caller guarantees.
        #[cfg(not(loom))]
        unsafe {
            self.value.get_mut().assume_init_drop();
        }
        #[cfg(loom)]
        self.value.with_mut(|p| {
            // SAFETY: As above.
            unsafe { (*p).assume_init_drop() };
        });
    }
}

impl<T, const N: usize> StampQueue<T, N> {
    /// `N` as a `u32`; evaluating it rejects, at compile time, an `N` that is not a power of two
    /// in `2 ..= 2^30`.
    ///
    /// 2^30, not 2^31 as for [`MpmcQueue`](super::MpmcQueue): an operation tells a stamp
    /// behind the index it looks at from one ahead of it by the sign of their difference, and
    /// the stamps it can meet are within `N + 1` of that index.
    const CAP: u32 = {
        assert!(
            N.is_power_of_two() && N >= 2 && N <= 1 << 30,
            "alf_queue: the capacity N of a StampQueue must be a power of two between 2 and 2^30"
        );
        N as u32
    };

    /// The stamp that slot `s` starts with in a queue whose indices start at `start`: the first
    /// index from `start` on that lives in slot `s`, whose producer it waits for.
    #[inline(always)]
    const fn first_stamp(start: u32, s: usize) -> u32 {
        start.wrapping_add((s as u32).wrapping_sub(start) & (Self::CAP - 1))
    }

    /// Creates an empty queue whose free-running indices start at `start`.
    ///
    /// The queue behaves exactly like a new one; only the index values differ. This is for
    /// tests that must cross the `u32` wrap-around of the indices quickly; normal users want
    /// [`new`](Self::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::alf_queue::StampQueue;
    ///
    /// let q = StampQueue::<u32, 2>::with_start_index(u32::MAX - 2);
    /// for i in 0..10 {
    ///     assert_eq!(q.enqueue(i), Ok(()));
    ///     assert_eq!(q.enqueue(i + 100), Ok(()));
    ///     assert_eq!(q.enqueue(0), Err(0));
    ///     assert_eq!(q.dequeue(), Some(i));
    ///     assert_eq!(q.dequeue(), Some(i + 100));
    ///     assert_eq!(q.dequeue(), None);
    /// }
    /// ```
    #[cfg(not(loom))]
    #[inline]
    pub const fn with_start_index(start: u32) -> Self {
        let mut slots = MaybeUninit::<[Slot<T>; N]>::uninit();
        let first = slots.as_mut_ptr().cast::<Slot<T>>();
        let mut s = 0;
        while s < N {
            // SAFETY: `s < N`: a slot of the array, written once.
            unsafe { first.add(s).write(Slot::new(Self::first_stamp(start, s))) };
            s += 1;
        }
        // INVARIANT: `head == tail`; each slot waits for the first index from `start` on that
        // lives in it, one of `head .. head + N`.
        Self {
            tail: OwnLine::new(AtomicU32::new(start)),
            head: OwnLine::new(AtomicU32::new(start)),
            // SAFETY: The loop initialised all `N` slots.
            slots: unsafe { slots.assume_init() },
        }
    }

    /// Creates an empty queue whose indices start at `start` (loom build: not `const`).
    #[cfg(loom)]
    pub fn with_start_index(start: u32) -> Self {
        // INVARIANT: As in the non-loom `with_start_index`.
        Self {
            tail: OwnLine::new(AtomicU32::new(start)),
            head: OwnLine::new(AtomicU32::new(start)),
            slots: core::array::from_fn(|s| Slot::new(Self::first_stamp(start, s))),
        }
    }

    /// Initialises an empty queue in `slot`, writing its two indices and the `N` stamps.
    ///
    /// This is how to build a queue too large for the stack: allocate uninitialised memory
    /// (for instance `KBox::<StampQueue<_, 1024>>::new_uninit(GFP_KERNEL)`), initialise it
    /// here, then `assume_init` it. The items' room is not touched. Whatever `slot` held before
    /// is overwritten without being dropped; if `slot` is then dropped as a `MaybeUninit`, the
    /// items the queue holds at that point are leaked.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::mem::MaybeUninit;
    /// use kernel::alf_queue::StampQueue;
    ///
    /// let mut slot = MaybeUninit::<StampQueue<u64, 16>>::uninit();
    /// let q = StampQueue::init_in_place(&mut slot);
    /// assert_eq!(q.enqueue(7), Ok(()));
    /// // SAFETY: `init_in_place` initialised `slot`.
    /// let q = unsafe { slot.assume_init() };
    /// assert_eq!(q.dequeue(), Some(7));
    /// ```
    #[inline]
    pub fn init_in_place(slot: &mut MaybeUninit<Self>) -> &mut Self {
        Self::init_in_place_with_start_index(slot, 0)
    }

    /// Initialises an empty queue in `slot` with its indices at `start`: [`init_in_place`]
    /// combined with [`with_start_index`](Self::with_start_index).
    ///
    /// [`init_in_place`]: Self::init_in_place
    pub fn init_in_place_with_start_index(slot: &mut MaybeUninit<Self>, start: u32) -> &mut Self {
        let ptr = slot.as_mut_ptr();
        #[cfg(not(loom))]
        {
            let _ = Self::CAP;
            // SAFETY: `ptr` comes from a `&mut MaybeUninit<Self>`, so it is valid for writes
            // and aligned, and so are the pointers to its fields and to the slots' stamps,
            // each written once (`s < N`). After these writes every field is initialised but
            // the slots' `value`s, `UnsafeCell<MaybeUninit<T>>`s, for which any bytes are a
            // valid value. INVARIANT: As in `with_start_index`.
            unsafe {
                core::ptr::addr_of_mut!((*ptr).tail).write(OwnLine::new(AtomicU32::new(start)));
                core::ptr::addr_of_mut!((*ptr).head).write(OwnLine::new(AtomicU32::new(start)));
                let first = core::ptr::addr_of_mut!((*ptr).slots).cast::<Slot<T>>();
                for s in 0..N {
                    core::ptr::addr_of_mut!((*first.add(s)).stamp)
                        .write(AtomicU32::new(Self::first_stamp(start, s)));
                }
            }
        }
        // Loom's atomics and cells carry model state and must be constructed.
        #[cfg(loom)]
        {
            // SAFETY: `ptr` is valid for writes and aligned, as above.
            unsafe { ptr.write(Self::with_start_index(start)) };
        }
        // SAFETY: Initialised above.
        unsafe { slot.assume_init_mut() }
    }

    /// Returns the number of items in the queue, counting those being moved in or out.
    ///
    /// Under concurrency this is a snapshot that may be stale at once, and is clamped to
    /// `0 ..= N`.
    #[inline]
    pub fn len(&self) -> usize {
        // Relaxed: a statistic, nothing is accessed on the strength of it.
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Relaxed);
        let n = tail.wrapping_sub(head);
        // A "negative" distance: `head` was read before it overtook the `tail` we read.
        if n > 1 << 31 {
            0
        } else if n > Self::CAP {
            N
        } else {
            n as usize
        }
    }

    /// Returns the slot of index `idx`.
    #[inline(always)]
    fn slot(&self, idx: u32) -> &Slot<T> {
        &self.slots[idx as usize & (N - 1)]
    }

    /// Moves `item` into the queue, or hands it back if the queue is full.
    ///
    /// The queue counts as full when the slot at the tail has not been emptied yet: it holds
    /// the item `N` places ahead, or a dequeue of that item is still reading it.
    // The slot that is ours (`ahead == 0`) is the common case and is tested first; a `match`
    // on `cmp()` would order the branches by value instead.
    #[allow(clippy::comparison_chain)]
    #[inline]
    pub fn enqueue(&self, item: T) -> Result<(), T> {
        // I0: Relaxed: the index only says which slot to look at; the slot's stamp says
        // whether it is ours to fill, and S0 orders our access to it.
        let mut tail = self.tail.load(Ordering::Relaxed);
        loop {
            let slot = self.slot(tail);
            // S0: pairs with S3 of the dequeue that emptied this slot for index `tail`: its
            // read of the item before happens before our write. (The first lap's stamps need
            // no pairing: the slots were never used.)
            let stamp = read_stamp(&slot.stamp, tail, Ordering::Acquire);
            // Stamps within `N + 1` of `tail` on either side, `N <= 2^30`: the sign tells.
            let ahead = stamp.wrapping_sub(tail) as i32;
            if ahead == 0 {
                // I1: Relaxed: the compare-and-swap only decides which producer gets index
                // `tail`; nothing is handed over through the index (S0 did it, and S1 will).
                // INVARIANT: The slot waits for index `tail`, so `tail < head + N`: the
                // reservation keeps `tail <= head + N`.
                match self.tail.compare_exchange_weak(
                    tail,
                    tail.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: The stamp was `tail`: the slot is empty for index `tail`,
                        // which is ours now; S0 ordered the last read of it before this write.
                        unsafe { slot.write(item) };
                        // S1: pairs with S2 of the dequeue of index `tail`: our write of the
                        // item happens before its read. INVARIANT: The slot holds the item of
                        // index `tail`.
                        slot.stamp.store(tail.wrapping_add(1), Ordering::Release);
                        return Ok(());
                    }
                    Err(current) => tail = current,
                }
            } else if ahead < 0 {
                // The slot has not been emptied for index `tail`: full, unless the tail moved on
                // while we looked (then `tail` was stale and the slot someone else's).
                // I2: Relaxed, as I0.
                let current = self.tail.load(Ordering::Relaxed);
                if current == tail {
                    return Err(item);
                }
                tail = current;
            } else {
                // Another producer has taken index `tail` already: read the tail again.
                spin_loop();
                // I2: Relaxed, as I0.
                tail = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Moves the oldest item out of the queue, if there is one.
    ///
    /// The queue counts as empty when the slot at the head holds no item yet: an enqueue of
    /// that index may be writing it.
    // The slot that is ours (`ahead == 0`) is the common case and is tested first; a `match`
    // on `cmp()` would order the branches by value instead.
    #[allow(clippy::comparison_chain)]
    #[inline]
    pub fn dequeue(&self) -> Option<T> {
        // I0: Relaxed, as in `enqueue`.
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            let slot = self.slot(head);
            // S2: pairs with S1 of the enqueue of index `head`: its write of the item happens
            // before our read.
            let stamp = read_stamp(&slot.stamp, head, Ordering::Acquire);
            let ahead = stamp.wrapping_sub(head.wrapping_add(1)) as i32;
            if ahead == 0 {
                // I1: Relaxed, as in `enqueue`: it decides which consumer gets index `head`.
                // INVARIANT: The slot holds the item of index `head`, so `head < tail`: the
                // reservation keeps `head <= tail`.
                match self.head.compare_exchange_weak(
                    head,
                    head.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        // SAFETY: The stamp was `head + 1`: the slot holds the item of index
                        // `head`, which is ours now, and S2 made its write visible.
                        let item = unsafe { slot.read() };
                        // S3: pairs with S0 of the enqueue of index `head + N`: our read of the
                        // item happens before its write. INVARIANT: The slot is empty and waits
                        // for index `head + N`.
                        slot.stamp
                            .store(head.wrapping_add(Self::CAP), Ordering::Release);
                        return Some(item);
                    }
                    Err(current) => head = current,
                }
            } else if ahead < 0 {
                // No item in the slot for index `head` yet: empty, unless the head moved on
                // while we looked. I2: Relaxed, as I0.
                let current = self.head.load(Ordering::Relaxed);
                if current == head {
                    return None;
                }
                head = current;
            } else {
                // Another consumer has taken index `head` already: read the head again.
                spin_loop();
                // I2: Relaxed, as I0.
                head = self.head.load(Ordering::Relaxed);
            }
        }
    }
}

queue_basics!(StampQueue, max: "2^30");

impl<T, const N: usize> Drop for StampQueue<T, N> {
    fn drop(&mut self) {
        if !core::mem::needs_drop::<T>() {
            return;
        }
        // Relaxed: `&mut self` means every operation has completed and its effects are visible
        // to us.
        let head = self.head.load(Ordering::Relaxed);
        let n = self.tail.load(Ordering::Relaxed).wrapping_sub(head);
        for i in 0..n {
            let s = head.wrapping_add(i) as usize & (N - 1);
            // SAFETY: With no operation in progress, the slots of `head .. tail` (`n <= N` of
            // them) hold items owned by the queue alone (invariants); each is dropped once, and
            // nothing reads it afterwards.
            unsafe { self.slots[s].drop_item() };
        }
    }
}
