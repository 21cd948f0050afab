// SPDX-License-Identifier: GPL-2.0

//! The synchronisation primitives the queue is built from, from `core` or from `loom`.
//!
//! Normally these are the `core` atomics and spin hint, at no cost. Under `cfg(loom)` they are
//! the model checker's instrumented versions, so that `tests/loom.rs` explores every
//! interleaving and every weak-memory outcome the orderings allow. The slot storage has its own
//! two implementations in `slots.rs`, because loom must see each slot as a separate cell.

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicU32, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, Ordering};

/// Tells the CPU that this thread is busy-waiting for another one.
///
/// This is `cpu_relax()` (`PAUSE` on x86) normally; under loom it yields to the scheduler, so a
/// spin loop does not exhaust the model's branch budget.
#[inline(always)]
pub(crate) fn spin_loop() {
    #[cfg(not(loom))]
    core::hint::spin_loop();
    #[cfg(loom)]
    loom::hint::spin_loop();
}

/// Spins until `tail` holds `expected`, reading it with `order`.
///
/// This is the commit step's wait for earlier reservations: a load in a loop. In the kernel
/// (and in `no_std` userspace builds) the loop spins with the CPU's pause hint: the MPMC queue
/// is used with preemption disabled there, so the operation waited for is running on another
/// CPU and finishes in a few hundred cycles (see "Contexts" in the module docs). In userspace
/// with the `std` feature the loop is `wait_slow`, which yields after a bounded spin.
///
/// Under loom the read is a compare-and-swap of `expected` for itself instead. Loom's
/// partial-order reduction remembers only the last access to each atomic, so with a plain
/// load here the committing thread's own wait load would be the access its tail store is
/// checked against, hiding every earlier load of that tail by the other side: loom would
/// never try running a consumer's read of `prod.tail` before a producer's commit. A successful
/// compare-and-swap is a read-modify-write, which loom checks against any earlier access. For
/// the protocol it is equivalent: it reads the tail with `order`, and only ever writes back the
/// value that is already there (extending, harmlessly, the release sequence of the store it
/// read from). `tests/loom.rs` counts how often each test reaches the interleaving it is about,
/// which is how the blind spot showed up.
#[inline(always)]
pub(crate) fn wait_for(tail: &AtomicU32, expected: u32, order: Ordering) {
    #[cfg(all(not(loom), not(feature = "std")))]
    while tail.load(order) != expected {
        spin_loop();
    }
    #[cfg(all(not(loom), feature = "std"))]
    if tail.load(order) != expected {
        wait_slow(tail, order, |t| t == expected);
    }
    #[cfg(loom)]
    while tail
        .compare_exchange(expected, expected, order, order)
        .is_err()
    {
        spin_loop();
    }
}

/// Reads a multi side's own `tail` with `order` before it reserves (A4 in `headtail.rs`);
/// `head` is the side's `head` as just read.
///
/// A load normally. Under loom, for the reason given at [`wait_for`], a compare-and-swap that
/// cannot succeed (it expects a tail `2^31` ahead of `head`, which the few operations of a
/// model never reach), so that it only reads, with `order`, but counts for loom's search as a
/// read-modify-write. As a plain load it hid the other side's earlier reads of the tail: four
/// models explored a few hundred executions and never reached their interleaving. As a
/// read-modify-write that writes (`fetch_add(0)`), its write, made before the reservation, is
/// concurrent with other operations' commits, and loom, whose modification order is only as
/// total as its clocks, let a later read take the stale value from it and spin for ever.
#[inline(always)]
pub(crate) fn read_own_tail(tail: &AtomicU32, head: u32, order: Ordering) -> u32 {
    #[cfg(not(loom))]
    {
        let _ = head;
        tail.load(order)
    }
    #[cfg(loom)]
    {
        let never = head.wrapping_add(1 << 31);
        match tail.compare_exchange(never, never, order, order) {
            Ok(_) => panic!("the tail ran 2^31 ahead of the head"),
            Err(t) => t,
        }
    }
}

/// Reads the stamp of a [`StampQueue`](super::StampQueue) slot with `order`, for an operation
/// on index `idx`.
///
/// A load normally. Under loom, for the reason given at [`wait_for`], a compare-and-swap that
/// cannot succeed (it expects a stamp `2^31` away from `idx`; the stamps an operation meets are
/// within `N + 1` of its index), as in [`read_own_tail`]: an operation that takes a slot reads
/// its stamp and then stores it, and with a plain load loom checks that store only against the
/// same thread's load, never trying the other side's earlier read of the stamp after it. As
/// plain loads, three of the four `StampQueue` models never reached their interleaving.
#[inline(always)]
pub(crate) fn read_stamp(stamp: &AtomicU32, idx: u32, order: Ordering) -> u32 {
    #[cfg(not(loom))]
    {
        let _ = idx;
        stamp.load(order)
    }
    #[cfg(loom)]
    {
        let never = idx.wrapping_add(1 << 31);
        match stamp.compare_exchange(never, never, order, order) {
            Ok(_) => panic!("a stamp 2^31 away from its index"),
            Err(s) => s,
        }
    }
}

/// Under loom, the commit of a settled reservation (one that skips [`wait_for`], see
/// `HeadTail::move_head`): checks that `tail` is at the reservation's first index, `head`,
/// as the reasoning that lets it skip the wait says, and panics otherwise.
///
/// The check is a compare-and-swap of `head` for itself, `Relaxed`: it orders nothing (the
/// reservation's acquire, A4, is what is being checked), and like the one in [`wait_for`] it is
/// a read-modify-write so that loom's search keeps seeing the other side's reads of the tail
/// before this thread's store. Its write is made by the owner of the reservation at `tail`,
/// the only thread that may store `tail` next.
#[cfg(loom)]
pub(crate) fn check_settled(tail: &AtomicU32, head: u32) {
    if let Err(t) = tail.compare_exchange(head, head, Ordering::Relaxed, Ordering::Relaxed) {
        panic!("settled reservation at {head}, but the tail is {t}");
    }
}

/// How many times [`wait_slow`] spins before it starts yielding, in userspace.
#[cfg(all(feature = "std", not(loom)))]
const SPINS_BEFORE_YIELD: u32 = 128;

/// Waits, in userspace, until the operations of this side that had reserved up to `head` have
/// committed: until `tail` has caught up with `head`. A multi side that finds `tail` behind
/// `head` calls it before it reserves.
///
/// It is not part of the protocol (it orders nothing and is compiled out of the kernel and
/// loom builds): it keeps a thread that will have to wait from waiting while it holds a
/// reservation. In the commit wait a thread holds one, so that when it yields (with more
/// spinning threads than CPUs) it becomes, descheduled, the predecessor that the next
/// operation of its side waits for, and that one in turn yields holding its own: a convoy in
/// which every operation costs a context switch, for as long as the threads keep arriving.
/// Waiting here first, holding nothing, a thread yields without stalling anyone, and its
/// commit wait is left with the operations that reserved in the meantime.
///
/// Only the operations in flight at the call are waited for, not those that start while it
/// waits, so a busy side cannot keep a thread here for ever; and they do not wait for it.
#[cfg(all(feature = "std", not(loom)))]
#[cold]
pub(crate) fn wait_for_in_flight(tail: &AtomicU32, head: u32) {
    // The indices run free: `tail` has reached `head` when their difference, taken as a signed
    // 32-bit number, is no longer positive.
    wait_slow(tail, Ordering::Relaxed, |t| {
        head.wrapping_sub(t) as i32 <= 0
    });
}

/// The loop of [`wait_for`] and [`wait_for_in_flight`] in userspace, out of line: it runs
/// only when an earlier operation of this side is still copying. It reads `tail` with
/// `order` until `done` accepts what it read.
///
/// The operation waited for may have been descheduled, and when there are more spinning
/// threads than CPUs, spinning takes the CPU it needs to finish. After [`SPINS_BEFORE_YIELD`]
/// pause hints the loop therefore yields the CPU (`std::thread::yield_now`) between reads.
#[cfg(all(feature = "std", not(loom)))]
#[cold]
#[inline(never)]
fn wait_slow(tail: &AtomicU32, order: Ordering, done: impl Fn(u32) -> bool) {
    let mut spins = 0u32;
    while !done(tail.load(order)) {
        if spins < SPINS_BEFORE_YIELD {
            spins += 1;
            spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}
