// SPDX-License-Identifier: GPL-2.0

//! The index protocol, written once for both sides: move a head (reserve), update a tail
//! (commit).
//!
//! Like DPDK's `__rte_ring_headtail_move_head` and `__rte_ring_update_tail`, the same two
//! functions serve the producer and the consumer: the producer moves `prod.head` against
//! `cons.tail` with a capacity of `N` (it counts free slots, `N + cons.tail - prod.head`), the
//! consumer moves `cons.head` against `prod.tail` with a capacity of 0 (it counts items,
//! `prod.tail - cons.head`). `MULTI` selects the multi-producer (multi-consumer) protocol,
//! `FIXED` the all-or-nothing clamp.
//!
//! The orderings are labelled like DPDK's `rte_ring_c11_pvt.h`: `A*` are acquires, `R*`
//! releases (`C*` for the cached copy of the other side's tail), and each comment names its
//! partner. "This side" is the side whose [`HeadTail`] the method runs on, "the other side" the
//! one whose tail it reads.

#[cfg(loom)]
use super::sync::check_settled;
#[cfg(all(feature = "std", not(loom)))]
use super::sync::wait_for_in_flight;
use super::sync::{read_own_tail, spin_loop, wait_for, AtomicU32, Ordering};

/// How many pause hints ([`spin_loop`]) a trailing side spins when it has caught up with the
/// other (see [`HeadTail::move_head`]); one under loom, where a hint is a yield to the model's
/// scheduler.
///
/// What it takes, on one host, for the consumer to fall far enough behind: with 4 to 16, in
/// scratch builds of the `1p1c_single` benchmark, the consumer ran at the producer's heels again
/// between waits (see rust/alf_queue/README.md, "A consumer that trails").
#[cfg(not(loom))]
pub(crate) const TRAIL_SPINS: u32 = 32;
/// See the `not(loom)` constant.
#[cfg(loom)]
pub(crate) const TRAIL_SPINS: u32 = 1;

/// One side's pair of free-running indices: `head` and the cached `other_tail` in one 128-byte
/// block, `tail` alone in the next.
///
/// `head` is where the next reservation on this side starts; `tail` is where the committed
/// (finished) operations on this side end. See [`Ring`] for what they mean together. A side run
/// by the single protocol does not use `head`: its one operation at a time reserves privately
/// from its [`Position`] and publishes the new one in `tail`.
///
/// The other side reads only `tail` (to see what this side has committed); `head` and
/// `other_tail` are this side's own. Keeping them on separate lines means that the other side
/// polling `tail` never takes away the line that this side reserves on: a multi side's
/// compare-and-swap of `head` finds its line in its own cache instead of waiting for it to come
/// back from the other side's. Only `tail`'s line travels between the sides. (The C original
/// keeps each side's `head` and `tail` together on one line per side.)
///
/// The block size, 128 bytes, is two x86 cache lines: Intel's adjacent-line prefetcher fetches
/// lines in 128-byte-aligned pairs (and AMD's L2 prefetcher may fetch a line's neighbour), so
/// with 64-byte blocks a side that polls the other side's `tail` may also pull in the other
/// side's `head` line, which that side's next store must then take back; crossbeam's
/// `CachePadded` and rtrb use 128 bytes on x86-64 for the same reason. The two blocks of each
/// side and the slots each start a pair of lines of their own.
///
/// # Invariants
///
/// `other_tail` is a value the other side's `tail` has had (so it is at most the current one),
/// and the other side's operations up to it happen before any operation of this side that
/// read it. On a single side it is also at least the value that justified this side's `tail`
/// (its position); on a multi side it may be older than the one that justified `head`, because
/// producers (consumers) store it in whatever order they run (see [`HeadTail::move_head`]).
///
/// [`Ring`]: super::ring::Ring
#[repr(C, align(128))]
pub(crate) struct HeadTail {
    /// End of the reservations made on this side (multi protocol only; a single side leaves it
    /// at its initial value).
    pub(crate) head: AtomicU32,
    /// The other side's `tail` as this side last read it.
    ///
    /// It saves reading the other side's `tail` line while the value last read still shows
    /// enough room (items): an older tail only understates what is available, and the slots
    /// it covers were handed over by the acquire that read it.
    pub(crate) other_tail: AtomicU32,
    /// End of the operations completed and published on this side, in a block of its own.
    pub(crate) tail: OwnLine<AtomicU32>,
}

/// A value alone in a 128-byte block, a pair of cache lines (see [`HeadTail`]); it
/// dereferences to the value.
#[repr(C, align(128))]
pub(crate) struct OwnLine<T>(T);

impl<T> OwnLine<T> {
    /// Puts `value` in a block of its own.
    #[inline(always)]
    pub(crate) const fn new(value: T) -> Self {
        Self(value)
    }
}

impl<T> core::ops::Deref for OwnLine<T> {
    type Target = T;

    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Where a side run by the single protocol starts its next operation: its position, which
/// equals its `tail` whenever no operation of the side is in progress.
///
/// The position is private to the side (its reservation is), so it can live where the side's
/// code finds it cheapest:
///
/// - in a handle that is the side's only user (`&mut u32`, the [`Producer`] and [`Consumer`] of
///   an `SpscQueue`, as rtrb keeps it): of the ring's indices an operation then loads only its
///   cached copy of the other side's tail (and that tail when the copy shows too little), and
///   stores only its `tail`;
/// - nowhere but in `tail` itself ([`OwnTail`]), for the `&self` methods, whose callers share
///   no handle: a relaxed load of the word that the other side polls, at the start of every
///   operation.
///
/// Across threads that load is on the critical path of every operation (the position comes
/// from it), and its line may have to come back from the other core, which has just read it;
/// one element per call, the handles avoid it. A copy shared by both ways in the side's `head`
/// would avoid it too, for a store more per operation.
///
/// A multi side's position is its `head`, read and moved by [`HeadTail::move_head`]; it takes
/// [`OwnTail`] and never reads it.
///
/// [`Producer`]: super::Producer
/// [`Consumer`]: super::Consumer
pub(crate) trait Position {
    /// Returns the position of the single side `side`.
    fn get(&self, side: &HeadTail) -> u32;

    /// Records `next` as the position, after the side's commit has published it in `tail`.
    fn set(&mut self, next: u32);
}

/// The position of a single side that keeps no copy of it: its own `tail`.
pub(crate) struct OwnTail;

impl Position for OwnTail {
    #[inline(always)]
    fn get(&self, side: &HeadTail) -> u32 {
        // Relaxed: only this side writes its `tail`, and the caller orders this side's calls.
        side.tail.load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn set(&mut self, _next: u32) {}
}

/// A handle's copy of its side's position, kept by a handle that is the side's only user (its
/// type invariant), so that the copy equals the side's `tail` whenever no operation of the side
/// is in progress.
impl Position for &mut u32 {
    #[inline(always)]
    fn get(&self, _side: &HeadTail) -> u32 {
        **self
    }

    #[inline(always)]
    fn set(&mut self, next: u32) {
        **self = next;
    }
}

impl HeadTail {
    /// Creates a pair (and cache) at `start`.
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) const fn new(start: u32) -> Self {
        Self {
            head: AtomicU32::new(start),
            other_tail: AtomicU32::new(start),
            tail: OwnLine(AtomicU32::new(start)),
        }
    }

    /// Creates a pair (and cache) at `start`.
    #[cfg(loom)]
    pub(crate) fn new(start: u32) -> Self {
        Self {
            head: AtomicU32::new(start),
            other_tail: AtomicU32::new(start),
            tail: OwnLine(AtomicU32::new(start)),
        }
    }

    /// Reserves up to `n` entries for this side; `n <= size`, but for a single side's
    /// all-or-nothing request (`!MULTI && FIXED`), which reserves nothing if `n` is larger.
    ///
    /// `other` is the other side's tail and `capacity` is `size` (the ring's `N`) for the
    /// producer and 0 for the consumer, so that `capacity + other - head` is the number of
    /// free slots (items) available to this side. Returns the first reserved index, the
    /// number reserved, which is the one place where the two kinds of request differ: `n` or
    /// 0 if `FIXED` (all or nothing), `min(n, available)` otherwise (as many as fit), and
    /// whether the reservation is *settled*: every earlier reservation of this side had been
    /// committed when this one was made, so that its commit need not wait (always on a single
    /// side; pass it to [`HeadTail::update_tail`]).
    ///
    /// The other side's tail is first taken from this side's cached copy, `other_tail`, and
    /// read from the other side's cache line only when the copy shows fewer than `n` entries
    /// (or, on a multi side, an impossible number, because the copy is older than the tail
    /// that justified the current head).
    ///
    /// With `MULTI` the reservation is a compare-and-swap on `head`; without, it starts at this
    /// side's position, `pos` (which equals its `tail` at rest), and nothing is written: it
    /// stays private until [`HeadTail::update_tail`] publishes it.
    ///
    /// `trail` is 0 but for a single side that trails the other ([`Consumer::dequeue_trailing`]
    /// tells why, and [`Consumer::dequeue_burst_trailing_with`] trails in bursts): when the
    /// tail it reads shows fewer than `trail` entries but some, it spins [`TRAIL_SPINS`] pause
    /// hints first, and then takes (up to `n` of) what that tail showed without reading it
    /// again. A read after the wait would take the other side's line from it again, which
    /// is the cost the wait avoids; so the side reads the other's tail once per trailing step
    /// and falls behind by what the other side did during the wait.
    ///
    /// A multi side reads its own `tail` before it reserves; the reservation is settled if that
    /// tail was where the reservation starts. The commit would otherwise read `tail` again,
    /// after the compare-and-swap, to wait for it: a read that, coming after a locked
    /// instruction, cannot start early, and whose line is the one the other side polls.
    ///
    /// # Safety
    ///
    /// If `!MULTI`, every other call of this side on this ring (of `move_head` and the
    /// matching `update_tail`) happens before this one or after the matching `update_tail`, and
    /// `pos` is the side's position (see [`Position`]).
    ///
    /// [`Consumer::dequeue_trailing`]: super::Consumer::dequeue_trailing
    /// [`Consumer::dequeue_burst_trailing_with`]: super::Consumer::dequeue_burst_trailing_with
    #[inline(always)]
    pub(crate) unsafe fn move_head<const MULTI: bool, const FIXED: bool>(
        &self,
        pos: &impl Position,
        other: &AtomicU32,
        capacity: u32,
        size: u32,
        n: usize,
        trail: u32,
    ) -> (u32, usize, bool) {
        // A0: on a multi side, pairs with R1 (the successful head CAS) of the operation that
        // moved `head` to the value we read: the other-side tail it saw (through C0/C1 or A1)
        // happens before our A1 load, which therefore reads that value or a newer one. Without
        // it, `available` could be computed from a tail older than the one that justified the
        // current head, and wrap around. A single side's reservation is private until the
        // commit, so it starts where the last commit ended: its position.
        let mut head = if MULTI {
            self.head.load(Ordering::Acquire)
        } else {
            pos.get(self)
        };
        // A4: on a multi side, pairs with R0 of the operation of this side that stored the
        // tail we read. If that tail is where our reservation starts (settled), every
        // reservation before ours has committed, their slot accesses happen before this load
        // and so before our R0, and tails cannot move again until we commit: what A3 would
        // give our commit, which therefore skips it (see `update_tail`). A single side reads
        // nothing here (its position is its tail) and is always settled.
        let seen = if MULTI {
            read_own_tail(&self.tail, head, Ordering::Acquire)
        } else {
            head
        };
        // In userspace, a multi side with operations in flight first lets them commit, and
        // then reads `head` again (as A0) and its `tail` (as A4): a scheduling aid, not part
        // of the protocol (see `wait_for_in_flight`).
        #[cfg(all(feature = "std", not(loom)))]
        let seen = if MULTI && seen != head {
            wait_for_in_flight(&self.tail, head);
            head = self.head.load(Ordering::Acquire);
            self.tail.load(Ordering::Acquire)
        } else {
            seen
        };
        loop {
            // C0: on a multi side, pairs with C1 of whichever operation of this side stored
            // the copy: the other side's operations up to that tail, which happen before its
            // A1, happen before our use of the slots. Relaxed on a single side: we stored it.
            let cached = self.other_tail.load(if MULTI {
                Ordering::Acquire
            } else {
                Ordering::Relaxed
            });
            let available = capacity.wrapping_add(cached).wrapping_sub(head);
            // On a multi side a copy older than the tail behind the current head gives a
            // "negative" (wrapped, larger than `size`) count: treat it as too few. `available`
            // is in `n ..= size` exactly when `available - n`, wrapping, is at most `size - n`:
            // one comparison instead of two. On a single side, `n - 1 >= available`, wrapping,
            // is `available < n` for `n >= 1` and holds for an empty request too, which thus
            // leaves the common path: there `k = n >= 1`, and the callers' test for an empty
            // reservation is compiled out of it. Counted in `usize`, a request larger than
            // `size` leaves it as well, so a single side's all-or-nothing request needs no test
            // of its size on the common path.
            let short = if MULTI {
                // `n <= size` (caller): no truncation.
                let n = n as u32;
                available.wrapping_sub(n) > size - n
            } else {
                n.wrapping_sub(1) >= available as usize
            };
            // The copy shows room (items) for all `n`: the common case, without the clamp.
            let mut k = n;
            if short {
                // An empty request on a single side reserves nothing, and reads nothing.
                if !MULTI && n == 0 {
                    return (head, 0, true);
                }
                // A1: pairs with R0 of the other side's commit (its tail store in
                // `update_tail`): the other side's accesses to the slots up to that tail
                // happen before ours.
                let tail = other.load(Ordering::Acquire);
                if !MULTI || tail != cached {
                    // C1: on a multi side, pairs with C0 of the next operation of this side
                    // (it inherits what our A1 acquired). Relaxed on a single side: only we
                    // read it. INVARIANT: A value the other tail has had, acquired by A1.
                    self.other_tail.store(
                        tail,
                        if MULTI {
                            Ordering::Release
                        } else {
                            Ordering::Relaxed
                        },
                    );
                }
                // INVARIANT-USE: `head` is at most `capacity` ahead of the other tail that
                // justified it, and A0 makes that tail no newer than `tail`: this is in
                // `0 ..= size`.
                let available = capacity.wrapping_add(tail).wrapping_sub(head);
                // A single side that trails, and finds only a few entries, waits for the other
                // side to move on before it takes them.
                if !MULTI && available != 0 && available < trail {
                    for _ in 0..TRAIL_SPINS {
                        spin_loop();
                    }
                }
                // The clamp: all or nothing, or as many as fit.
                // On a multi side `n <= size` (caller), which a `u32` holds.
                let fits = if MULTI {
                    n as u32 <= available
                } else {
                    n <= available as usize
                };
                k = if fits {
                    n
                } else if FIXED {
                    0
                } else {
                    available as usize
                };
            }
            if !MULTI || k == 0 {
                return (head, k, true);
            }
            // R1: pairs with A0/A2 of the next operation of this side to read `head`: it sees
            // our other-side tail (see A0).
            // A2: on failure, pairs with R1 of the operation that moved the head, as A0.
            // INVARIANT: `k <= available`, so the order of the indices still holds; the
            // entries `head .. head + k` pass to us. `k <= size` fits a `u32`.
            match self.head.compare_exchange_weak(
                head,
                head.wrapping_add(k as u32),
                Ordering::Release,
                Ordering::Acquire,
            ) {
                // Settled if A4 saw our first index as the tail (whichever attempt this is).
                Ok(_) => return (head, k, seen == head),
                Err(current) => head = current,
            }
        }
    }

    /// Publishes the entries `head .. next`, which this side reserved with
    /// [`HeadTail::move_head`] and has finished with; on a single side, `next` is also its new
    /// position, recorded in `pos`.
    ///
    /// With `MULTI`, first waits until every earlier reservation on this side has been
    /// committed, unless `settled` (from [`HeadTail::move_head`]) says they had been when this
    /// one was made.
    #[inline(always)]
    pub(crate) fn update_tail<const MULTI: bool>(
        &self,
        pos: &mut impl Position,
        head: u32,
        next: u32,
        settled: bool,
    ) {
        if MULTI && !settled {
            // A3: pairs with R0 of the operation of this side that reserved just before us,
            // when it publishes `tail == head`: its slot accesses happen before our R0 below,
            // so the other side, acquiring our tail, also sees them. This wait is where a
            // preempted operation stalls the ones behind it (see "Contexts" in the module
            // docs).
            wait_for(&self.tail, head, Ordering::Acquire);
        }
        #[cfg(loom)]
        if MULTI && settled {
            check_settled(&self.tail, head);
        }
        // R0: pairs with A1 of the other side (its load of our tail in `move_head`): our
        // accesses to the slots `head .. next` happen before its accesses to them.
        // INVARIANT: The slots `head .. next` pass to the other side.
        self.tail.store(next, Ordering::Release);
        if !MULTI {
            // INVARIANT: The position equals `tail` again.
            pos.set(next);
        }
    }
}
