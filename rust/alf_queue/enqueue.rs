// SPDX-License-Identifier: GPL-2.0

//! The producer side of the ring: reserve slots, move items in, commit.
//!
//! The orderings are labelled like DPDK's `rte_ring_c11_pvt.h`: `A*` are acquires, `R*`
//! releases, and each comment names its partner. The same labels are used on the consumer
//! side (`dequeue.rs`), with the roles of the two index pairs swapped.

use super::batch::Batch;
use super::ring::Ring;
use super::sync::{wait_for, Ordering};
use super::Error;

impl<T, const N: usize> Ring<T, N> {
    /// Reserves up to `n` empty slots for this producer.
    ///
    /// Returns the first reserved index and the number reserved: `n` or 0 if `FIXED`,
    /// `min(n, free)` otherwise. With `MULTI` the reservation is a compare-and-swap on
    /// `prod.head`; without, a plain store.
    ///
    /// # Safety
    ///
    /// If `!MULTI`, no other producer-side operation runs concurrently on this ring.
    #[inline(always)]
    unsafe fn prod_reserve<const MULTI: bool, const FIXED: bool>(&self, n: u32) -> (u32, u32) {
        if MULTI {
            // A0: pairs with R1 (the successful head CAS) of the producer that moved
            // `prod.head` to the value we read, so the `cons.tail` it saw happens before our
            // A1 load, which therefore reads that value or a newer one. Without it our `free`
            // could be computed from a `cons.tail` older than the one that justified the
            // current `prod.head`, and underflow.
            let mut head = self.prod.head.load(Ordering::Acquire);
            loop {
                // A1: pairs with R0 of the consumer commit (`cons.tail` store in `dequeue.rs`):
                // the consumers' reads of the slots up to `cons.tail` happen before we
                // overwrite them.
                let cons_tail = self.cons.tail.load(Ordering::Acquire);
                // INVARIANT-USE: `prod.head <= cons.tail + N`, so this is in `0 ..= N`.
                let free = Self::CAP.wrapping_add(cons_tail).wrapping_sub(head);
                let k = if n <= free {
                    n
                } else if FIXED {
                    0
                } else {
                    free
                };
                if k == 0 {
                    return (head, 0);
                }
                // R1: pairs with A0/A2 of the next producer to read `prod.head`: it sees our
                // `cons.tail` (see A0).
                // A2: on failure, pairs with R1 of the producer that moved the head, as A0.
                // INVARIANT: `k <= free`, so `prod.head <= cons.tail + N` still holds; the
                // slots `head .. head + k` pass from empty to reserved by us.
                match self.prod.head.compare_exchange_weak(
                    head,
                    head.wrapping_add(k),
                    Ordering::Release,
                    Ordering::Acquire,
                ) {
                    Ok(_) => return (head, k),
                    Err(current) => head = current,
                }
            }
        } else {
            // Relaxed: only this producer (caller's guarantee) writes `prod.head` and
            // `prod.other_tail`.
            let head = self.prod.head.load(Ordering::Relaxed);
            let mut cons_tail = self.prod.other_tail.load(Ordering::Relaxed);
            // INVARIANT-USE: `prod.head <= prod.other_tail + N`, so this is in `0 ..= N`.
            let mut free = Self::CAP.wrapping_add(cons_tail).wrapping_sub(head);
            if free < n {
                // Only read the consumer's line when the tail we saw last is not enough.
                // A1: as in the multi-producer case.
                cons_tail = self.cons.tail.load(Ordering::Acquire);
                // INVARIANT: A value `cons.tail` has had, newer than the old one.
                self.prod.other_tail.store(cons_tail, Ordering::Relaxed);
                free = Self::CAP.wrapping_add(cons_tail).wrapping_sub(head);
            }
            let k = if n <= free {
                n
            } else if FIXED {
                0
            } else {
                free
            };
            (head, k)
        }
    }

    /// Publishes the slots `head .. next`, which this producer reserved and filled.
    ///
    /// With `MULTI`, first waits until every earlier reservation has been committed.
    #[inline(always)]
    fn prod_commit<const MULTI: bool>(&self, head: u32, next: u32) {
        if MULTI {
            // A3: pairs with R0 of the producer that reserved just before us, when it
            // publishes `prod.tail == head`: its slot writes happen before our R0 below, so a
            // consumer that acquires our tail also sees them. This wait is where a preempted
            // producer stalls the ones behind it (see "Contexts" in the module docs).
            wait_for(&self.prod.tail, head, Ordering::Acquire);
        } else {
            // Relaxed: only this producer acts on `prod.head`. A single producer publishes its
            // reservation here, next to the tail, rather than when it reserves: `prod.head`
            // shares the line the consumer polls, and one write to it per operation instead of
            // two halves the times the line must be taken back from the consumer.
            // INVARIANT: `prod.head == prod.tail` again once the tail is stored.
            self.prod.head.store(next, Ordering::Relaxed);
        }
        // R0: pairs with A1 of the consumers (their `prod.tail` load in `dequeue.rs`): our
        // writes of the slots `head .. next` happen before any read of them.
        // INVARIANT: The slots `head .. next` pass from reserved to full.
        self.prod.tail.store(next, Ordering::Release);
    }

    /// Moves `item` into the queue, or hands it back if the queue is full.
    ///
    /// # Safety
    ///
    /// If `!MULTI`, no other producer-side operation runs concurrently on this ring.
    #[inline(always)]
    pub(crate) unsafe fn enqueue_one<const MULTI: bool>(&self, item: T) -> Result<(), T> {
        // SAFETY: The caller's guarantee is the one `prod_reserve` requires.
        let (head, k) = unsafe { self.prod_reserve::<MULTI, true>(1) };
        if k == 0 {
            return Err(item);
        }
        // SAFETY: `prod_reserve` reserved slot `head` to us: it is empty and nobody else
        // touches it until we commit.
        unsafe { self.slots.write_one(head, item) };
        self.prod_commit::<MULTI>(head, head.wrapping_add(1));
        Ok(())
    }

    /// Moves the first items of `batch` into the queue: all or none if `FIXED`, as many as
    /// fit otherwise; the items left in the batch keep their order.
    ///
    /// Returns how many were moved; `Err(TooLarge)` if the batch holds more than `N` items,
    /// `Err(Full)` if `FIXED` and they do not all fit.
    ///
    /// # Safety
    ///
    /// If `!MULTI`, no other producer-side operation runs concurrently on this ring.
    #[inline(always)]
    pub(crate) unsafe fn enqueue_batch<const MULTI: bool, const FIXED: bool, const K: usize>(
        &self,
        batch: &mut Batch<T, K>,
    ) -> Result<usize, Error> {
        let len = batch.len();
        if len > N {
            return Err(Error::TooLarge);
        }
        if len == 0 {
            return Ok(0);
        }
        // SAFETY: The caller's guarantee is the one `prod_reserve` requires; `len <= N`
        // fits a `u32` because `N` does (`Ring::CAP`).
        let (head, k) = unsafe { self.prod_reserve::<MULTI, FIXED>(len as u32) };
        if k == 0 {
            return if FIXED { Err(Error::Full) } else { Ok(0) };
        }
        let k = k as usize;
        // SAFETY: `prod_reserve` reserved the `k <= len <= N` slots from `head` to us, and the
        // batch holds at least `k` initialised items at `as_ptr()`, outside the ring; their
        // ownership passes to the ring here.
        unsafe { self.slots.write(head, batch.as_ptr(), k) };
        if FIXED {
            // SAFETY: All-or-nothing reserved all `k == len` items: they belong to the ring now.
            unsafe { batch.set_len(0) };
        } else {
            // SAFETY: The first `k <= len` items now belong to the ring.
            unsafe { batch.forget_front(k) };
        }
        self.prod_commit::<MULTI>(head, head.wrapping_add(k as u32));
        Ok(k)
    }
}
