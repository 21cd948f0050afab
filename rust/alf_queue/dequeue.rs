// SPDX-License-Identifier: GPL-2.0

//! The consumer side of the ring: reserve full slots, move items out, commit.
//!
//! Labels as in `enqueue.rs`, with the roles of the index pairs swapped: here A0/R1/A2 are on
//! `cons.head`, A1 reads `prod.tail`, and R0 publishes `cons.tail`.

use super::batch::Batch;
use super::ring::Ring;
use super::sync::{wait_for, Ordering};
use super::Error;

impl<T, const N: usize> Ring<T, N> {
    /// Reserves up to `n` full slots for this consumer.
    ///
    /// Returns the first reserved index and the number reserved: `n` or 0 if `FIXED`,
    /// `min(n, available)` otherwise.
    ///
    /// # Safety
    ///
    /// If `!MULTI`, no other consumer-side operation runs concurrently on this ring.
    #[inline(always)]
    unsafe fn cons_reserve<const MULTI: bool, const FIXED: bool>(&self, n: u32) -> (u32, u32) {
        if MULTI {
            // A0: pairs with R1 of the consumer that moved `cons.head` to the value we read,
            // so the `prod.tail` it saw happens before our A1 load (which then cannot read an
            // older one and compute a negative, wrapped, `avail`).
            let mut head = self.cons.head.load(Ordering::Acquire);
            loop {
                // A1: pairs with R0 of the producer commit (`prod.tail` store in
                // `enqueue.rs`): the producers' writes of the slots up to `prod.tail` happen
                // before we read them.
                let prod_tail = self.prod.tail.load(Ordering::Acquire);
                // INVARIANT-USE: `cons.head <= prod.tail`, and `prod.tail - cons.head <= N`.
                let avail = prod_tail.wrapping_sub(head);
                let k = if n <= avail {
                    n
                } else if FIXED {
                    0
                } else {
                    avail
                };
                if k == 0 {
                    return (head, 0);
                }
                // R1: pairs with A0/A2 of the next consumer to read `cons.head`.
                // A2: on failure, pairs with R1 of the consumer that moved the head, as A0.
                // INVARIANT: `k <= avail`, so `cons.head <= prod.tail` still holds; the slots
                // `head .. head + k` pass from full to reserved by us.
                match self.cons.head.compare_exchange_weak(
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
            // Relaxed: only this consumer (caller's guarantee) writes `cons.head` and
            // `cons.other_tail`.
            let head = self.cons.head.load(Ordering::Relaxed);
            let mut prod_tail = self.cons.other_tail.load(Ordering::Relaxed);
            // INVARIANT-USE: `cons.head <= cons.other_tail`, so this is in `0 ..= N`.
            let mut avail = prod_tail.wrapping_sub(head);
            if avail < n {
                // Only read the producer's line when the tail we saw last is not enough.
                // A1: as in the multi-consumer case.
                prod_tail = self.prod.tail.load(Ordering::Acquire);
                // INVARIANT: A value `prod.tail` has had, newer than the old one.
                self.cons.other_tail.store(prod_tail, Ordering::Relaxed);
                avail = prod_tail.wrapping_sub(head);
            }
            let k = if n <= avail {
                n
            } else if FIXED {
                0
            } else {
                avail
            };
            (head, k)
        }
    }

    /// Releases the slots `head .. next`, which this consumer reserved and emptied.
    ///
    /// With `MULTI`, first waits until every earlier reservation has been committed.
    #[inline(always)]
    fn cons_commit<const MULTI: bool>(&self, head: u32, next: u32) {
        if MULTI {
            // A3: pairs with R0 of the consumer that reserved just before us: its reads of
            // its slots happen before our R0, so a producer that acquires our tail cannot
            // overwrite them early.
            wait_for(&self.cons.tail, head, Ordering::Acquire);
        } else {
            // Relaxed: only this consumer acts on `cons.head`. A single consumer publishes its
            // reservation here, next to the tail, rather than when it reserves: `cons.head`
            // shares the line the producer polls, and one write to it per operation instead of
            // two halves the times the line must be taken back from the producer.
            // INVARIANT: `cons.head == cons.tail` again once the tail is stored.
            self.cons.head.store(next, Ordering::Relaxed);
        }
        // R0: pairs with A1 of the producers (their `cons.tail` load in `enqueue.rs`): our
        // reads of the slots `head .. next` happen before they are overwritten.
        // INVARIANT: The slots `head .. next` pass from reserved to empty.
        self.cons.tail.store(next, Ordering::Release);
    }

    /// Moves the oldest item out of the queue, if there is one.
    ///
    /// # Safety
    ///
    /// If `!MULTI`, no other consumer-side operation runs concurrently on this ring.
    #[inline(always)]
    pub(crate) unsafe fn dequeue_one<const MULTI: bool>(&self) -> Option<T> {
        // SAFETY: The caller's guarantee is the one `cons_reserve` requires.
        let (head, k) = unsafe { self.cons_reserve::<MULTI, true>(1) };
        if k == 0 {
            return None;
        }
        // SAFETY: `cons_reserve` reserved the full slot `head` to us, and A1 made its write
        // visible; we treat it as empty from now on.
        let item = unsafe { self.slots.read_one(head) };
        self.cons_commit::<MULTI>(head, head.wrapping_add(1));
        Some(item)
    }

    /// Appends up to `n` of the oldest items to `batch`: exactly `n` or none if `FIXED`, as
    /// many as are present otherwise.
    ///
    /// Returns how many were moved; `Err(TooLarge)` if `n` exceeds `N` or the batch's free
    /// space, `Err(Empty)` if `FIXED` and fewer than `n` are present.
    ///
    /// # Safety
    ///
    /// If `!MULTI`, no other consumer-side operation runs concurrently on this ring.
    #[inline(always)]
    pub(crate) unsafe fn dequeue_batch<const MULTI: bool, const FIXED: bool, const K: usize>(
        &self,
        batch: &mut Batch<T, K>,
        n: usize,
    ) -> Result<usize, Error> {
        if n > N || n > batch.remaining() {
            return Err(Error::TooLarge);
        }
        if n == 0 {
            return Ok(0);
        }
        // SAFETY: The caller's guarantee is the one `cons_reserve` requires; `n <= N` fits a
        // `u32`.
        let (head, k) = unsafe { self.cons_reserve::<MULTI, FIXED>(n as u32) };
        if k == 0 {
            return if FIXED { Err(Error::Empty) } else { Ok(0) };
        }
        let k = k as usize;
        let len = batch.len();
        // SAFETY: `cons_reserve` reserved the `k <= n <= N` full slots from `head` to us; the
        // batch has room for `k <= remaining()` items after its `len` items, outside the ring.
        unsafe { self.slots.read(head, batch.as_mut_ptr().add(len), k) };
        // SAFETY: The entries `len .. len + k <= K` now hold the items just moved out of the
        // ring, which the batch takes.
        unsafe { batch.set_len(len + k) };
        self.cons_commit::<MULTI>(head, head.wrapping_add(k as u32));
        Ok(k)
    }
}
