// SPDX-License-Identifier: GPL-2.0

//! The ring shared by both queue flavours: the two index pairs and the slots.
//!
//! The producer side (`enqueue.rs`) and the consumer side (`dequeue.rs`) add their operations
//! to [`Ring`]; [`MpmcQueue`] and [`SpscQueue`] choose which protocol (multi or single) each
//! side runs.
//!
//! [`MpmcQueue`]: super::MpmcQueue
//! [`SpscQueue`]: super::SpscQueue

use super::slots::Slots;
use super::sync::{AtomicU32, Ordering};

/// One side's pair of free-running indices, alone on its cache line.
///
/// `head` is where the next reservation on this side starts; `tail` is where the committed
/// (finished) operations on this side end. See [`Ring`] for what they mean together.
///
/// The alignment, 64 bytes, is one x86 cache line, the kernel's `L1_CACHE_BYTES` and the C
/// original's `____cacheline_aligned_in_smp`: the producer pair, the consumer pair and the
/// slots each start a line of their own. Intel's adjacent-line prefetcher fetches lines in
/// 128-byte pairs, which argues for 128 (crossbeam's `CachePadded` uses it); 128 was tried in
/// the 1P1C benchmarks and made no difference that could be told from the noise of the loaded
/// machine they ran on, so the kernel's value stays until an idle-machine run says otherwise.
#[repr(C, align(64))]
pub(crate) struct HeadTail {
    /// End of the reservations made on this side.
    pub(crate) head: AtomicU32,
    /// End of the operations completed and published on this side.
    pub(crate) tail: AtomicU32,
    /// The other side's `tail` as this side last read it; used by the single-producer
    /// (single-consumer) protocol only, and only by that one producer (consumer).
    ///
    /// It saves reading the other side's cache line while the value last read still shows
    /// enough room (items): an older tail only understates what is available, and the slots
    /// it covers were handed over by the acquire that read it.
    pub(crate) other_tail: AtomicU32,
}

impl HeadTail {
    #[cfg(not(loom))]
    #[inline(always)]
    const fn new(start: u32) -> Self {
        Self {
            head: AtomicU32::new(start),
            tail: AtomicU32::new(start),
            other_tail: AtomicU32::new(start),
        }
    }

    #[cfg(loom)]
    fn new(start: u32) -> Self {
        Self {
            head: AtomicU32::new(start),
            tail: AtomicU32::new(start),
            other_tail: AtomicU32::new(start),
        }
    }
}

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
/// On a side run by the single-producer (single-consumer) protocol, `other_tail` is a value the
/// other side's `tail` has had, no newer than it is now: `prod.head <= prod.other_tail + N`
/// and `cons.head <= cons.other_tail`.
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
