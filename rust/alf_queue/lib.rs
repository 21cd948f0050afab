// SPDX-License-Identifier: GPL-2.0
#![cfg_attr(not(CONFIG_RUST), no_std)]

//! Array-based lock-free queue (ALF) with bulk enqueue and dequeue.
//!
//! A Rust version of the `alf_queue` of Jesper Dangaard Brouer and Hannes Frederic Sowa
//! (prototype-kernel `include/linux/alf_queue.h`, posted as "[RFC PATCH 0/3] Faster than SLAB
//! caching of SKBs with qmempool (backed by alf_queue)", 2014), whose point is that moving
//! `n` items costs one compare-and-swap, not `n`. The memory ordering follows DPDK's
//! `rte_ring` (`lib/ring/rte_ring_c11_pvt.h`). Two flavours share one ring:
//!
//! - [`MpmcQueue`]: any number of producers and consumers.
//! - [`SpscQueue`]: one producer and one consumer, either through the unique [`Producer`] and
//!   [`Consumer`] handles of [`SpscQueue::split`] or through `unsafe` `&self` methods whose
//!   callers guarantee it (for example a per-CPU cache used with preemption disabled).
//!
//! Each side has a single-item operation (`enqueue(item) -> Result<(), T>`,
//! `dequeue() -> Option<T>`), a *bulk* one (all `n` items or none) and a *burst* one (as many
//! as fit, or as many as are present). Bulk and burst operations move items through a
//! [`Batch`], a fixed-capacity inline array that needs no allocation and can be handed to C,
//! or, for items that are `Copy` (object pointers, say), straight from and into the caller's
//! slice (`enqueue_bulk_from(&[T])`, `dequeue_bulk_into(&mut [T])`, as the C original takes
//! an array of pointers): no length to keep, which is what a bulk of a few items costs most.
//!
//! This module depends on nothing but `core`: it is both a `no_std` crate in userspace and,
//! mounted as `kernel::alf_queue`, a module of the kernel crate.
//!
//! # The algorithm
//!
//! The queue is an array of `N` slots (`N` a power of two) and two pairs of `u32` indices: the
//! producers' `prod.head` and `prod.tail`, the consumers' `cons.head` and `cons.tail`, each
//! on a cache line of its own (a side's `head` is its own; its `tail` is what the other side
//! reads). The indices are *free-running*: they count items since
//! creation, wrapping past `u32::MAX`, and index `i` lives in slot `i & (N - 1)` (which is why
//! `N` must divide 2^32). Differences are taken in wrapping arithmetic, so the queue holds
//! `prod.tail - cons.head` items and has `N - (prod.head - cons.tail)` free slots: all `N`
//! slots are usable, and full and empty need no spare slot to tell apart.
//!
//! On each side `head` marks the end of the slots that operations have *reserved* and `tail`
//! the end of those whose operations have *committed*. Between `tail` and `head` are the slots
//! that operations in progress are filling (producers) or emptying (consumers). An enqueue of
//! `n` items goes:
//!
//! 1. **Reserve.** Read `prod.head` and `cons.tail`; if `n` slots are free, move `prod.head`
//!    forward by `n` with one compare-and-swap (retrying if another producer moved it first).
//!    The slots `old head .. old head + n` are now this producer's alone.
//! 2. **Copy** the items into those slots. This is a plain memory copy, inline, and no slot
//!    carries a per-item flag or sequence number: one straight run, or, for the rare bulk that
//!    reaches the end of the array, slot by slot through the index mask.
//! 3. **Commit.** Wait until `prod.tail` equals the old head, that is until every producer
//!    that reserved before us has committed, then store `prod.tail = old head + n`. Tails
//!    therefore advance in reservation order and a consumer may read every slot below
//!    `prod.tail`.
//!
//! A dequeue is the same protocol on the other pair: reserve on `cons.head` against
//! `prod.tail`, copy the items out, wait for `cons.tail` to reach the old head and store the
//! new `cons.tail`, which hands the slots back to the producers. The protocol is written once
//! (`headtail.rs`, after DPDK's `__rte_ring_headtail_move_head`): the reserve counts
//! `capacity + other tail - head` entries, with a capacity of `N` for the producer (free
//! slots) and 0 for the consumer (items). The single-producer (single-consumer) side skips the
//! compare-and-swap and the wait (there is no earlier reservation to wait for): it stores
//! `head` with a plain store, next to `tail` at its commit.
//!
//! Each side keeps the other side's tail as it last read it next to its own `head`, and reads
//! the other side's `tail` line again only when that old value shows too little room (too few
//! items): an old tail only understates what is available. On a multi side the copy is
//! shared by the operations of that side, which store it in whatever order they run, so it
//! may even be older than the tail that justified the current `head`; the count then comes
//! out "negative" (wrapped, above `N`), which counts as too little room and makes the
//! operation read the real tail.
//!
//! The ordering argument, in short (each atomic access in `headtail.rs` has a comment naming
//! the access it pairs with):
//!
//! - A *commit* stores the tail with `Release`, and the other side reads that tail with
//!   `Acquire` before touching slots: the writer's copy into a slot happens before the
//!   reader's copy out of it, and the reader's copy out happens before the next overwrite.
//! - The wait in the commit loads the tail with `Acquire`, so the copies of earlier,
//!   concurrently committing operations on the same side are also ordered before our
//!   `Release` (a plain store does not extend another thread's release sequence).
//! - A multi-side *reserve* reads `head` with `Acquire` and publishes the new `head` with a
//!   `Release` compare-and-swap: whoever sees a head value also sees an other-side tail at
//!   least as new as the one that justified it, so the count of entries computed from a tail
//!   read after it can never wrap around to a huge number.
//! - On a multi side the cached copy of the other side's tail is stored with `Release` after
//!   the `Acquire` load that read the tail, and loaded with `Acquire`: whoever uses the copy
//!   inherits what that load acquired.
//!
//! A reader of a slot may thus assume that it holds an item written by a producer whose
//! writes happen before the read, that no other thread reads it concurrently, and that no
//! producer writes it until the reader's commit.
//!
//! # Contexts
//!
//! - **MPMC commit waits.** A producer (consumer) that has reserved but not yet committed
//!   holds up every later producer (consumer) in its commit loop. The loop is short (the copy
//!   of the earlier operation), as long as the earlier one keeps running. In the kernel,
//!   [`MpmcQueue`] must therefore be used with preemption disabled (for example under
//!   `local_bh_disable()`, `preempt_disable()` or a spinlock) or from softirq or hard-IRQ
//!   context: a task preempted between its reserve and its commit would make the others on
//!   its side spin until it runs again, and a waiter that the preempted task needs to run
//!   (same CPU) would spin forever. An interrupt handler may use the same queue as the code
//!   it interrupted only if that code had interrupts disabled around its operation, for the
//!   same reason.
//! - **SPSC.** [`SpscQueue`] operations never wait for another thread. They are safe in any
//!   context (task, softirq, hard IRQ, NMI) as long as the single-producer and
//!   single-consumer condition holds. With the `unsafe` `&self` methods that condition is
//!   "any two calls of one side are ordered by happens-before": calls from different threads
//!   need a synchronisation between them (on a per-CPU queue with preemption or bottom halves
//!   disabled, the scheduler's migration of a task provides it), calls that only do not
//!   overlap in time are not enough, and no interrupt handler on this CPU may run the same side
//!   of the same queue while a call is in progress (disable bottom halves or interrupts
//!   accordingly).
//! - **Userspace.** Under OS preemption correctness is unaffected: a descheduled thread that
//!   has reserved only delays the others on its side until it is scheduled again, so MPMC
//!   progress is not lock-free in the strict sense. It is no worse than the C original or
//!   `rte_ring`. With the `std` feature (the default) the waiters spin a bounded number of
//!   times and then yield the CPU between reads, so that with more threads than CPUs they do
//!   not take the CPU the descheduled thread needs, and an operation that finds others in
//!   flight on its side waits for them before it reserves, holding nothing, so that a waiter
//!   that yields is not itself waited for; without `std` they spin with the pause hint. The
//!   SPSC flavour stays wait-free.
//! - **Index wrap-around.** A reservation is a compare-and-swap on a 32-bit index. A thread
//!   stopped between reading the indices and its compare-and-swap for exactly 2^32 items'
//!   worth of other operations on its side would see the CAS succeed against stale indices
//!   (the ABA problem of `rte_ring` and of the C `alf_queue`). With preemption disabled that
//!   window is a few instructions; a userspace thread would have to stay descheduled inside it
//!   for billions of operations.
//! - **Cost of atomics.** Rust's `core::sync::atomic` read-modify-write operations always emit
//!   `LOCK`-prefixed instructions on x86, even in a uniprocessor kernel such as UML, where the
//!   C original's `cmpxchg()` drops the prefix. Compare the two only on like terms.
//! - **Memory.** The queue and [`Batch`] never allocate. A queue is `N` slots of `T` plus two
//!   cache lines, stored inline: put large ones in allocated memory with `init_in_place`.
//!
//! # Errors
//!
//! Bulk and burst operations return [`Error`]: `TooLarge` for a request that can never be
//! satisfied (more than `N` items, or more than the batch can take), `Full` or `Empty` when
//! an all-or-nothing request cannot be satisfied now. Kernel callers typically map them to
//! `EINVAL`, `ENOBUFS` and `ENOENT`. Nothing panics on bad input.

// Userspace builds with the `std` feature (the default) use `std::thread::yield_now` in the
// MPMC commit wait; the kernel build never sets Cargo features.
#[cfg(all(feature = "std", not(CONFIG_RUST)))]
extern crate std;

mod batch;
#[cfg(not(loom))]
mod chunk;
mod headtail;
mod mpmc;
mod ring;
mod slots;
mod spsc;
mod sync;

pub use self::batch::{Batch, Drain};
#[cfg(not(loom))]
pub use self::chunk::{ReadChunk, WriteChunk};
pub use self::mpmc::MpmcQueue;
pub use self::spsc::{Consumer, Producer, SpscQueue};

use core::fmt;

/// Why a bulk or burst operation did not (fully) happen.
///
/// # Examples
///
/// ```
/// use kernel::alf_queue::{Batch, Error, MpmcQueue};
///
/// let q = MpmcQueue::<u8, 2>::new();
/// let mut batch = Batch::<u8, 4>::new();
/// assert_eq!(q.dequeue_bulk(&mut batch, 1), Err(Error::Empty));
/// assert_eq!(q.dequeue_burst(&mut batch, 3), Err(Error::TooLarge));
/// assert_eq!(q.dequeue_burst(&mut batch, 2), Ok(0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The request can never be satisfied: more items than the queue's capacity, or more
    /// than the batch has room for.
    TooLarge,
    /// An all-or-nothing enqueue found too few free slots.
    Full,
    /// An all-or-nothing dequeue found too few items.
    Empty,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::TooLarge => "request larger than the queue or the batch",
            Self::Full => "not enough free slots in the queue",
            Self::Empty => "not enough items in the queue",
        })
    }
}
