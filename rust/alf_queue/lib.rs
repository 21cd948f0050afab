// SPDX-License-Identifier: GPL-2.0
#![cfg_attr(not(CONFIG_RUST), no_std)]

//! Array-based lock-free queue (ALF) with bulk enqueue and dequeue.
//!
//! A Rust version of prototype-kernel's `alf_queue` (`include/linux/alf_queue.h`) with the
//! memory ordering of DPDK's `rte_ring`: moving `n` items costs one compare-and-swap, not `n`.
//! It differs from the C original in a few ways:
//! 1. Items are typed and owned: they move by value, and the queue drops what it still holds.
//! 2. [`MpmcQueue`] and [`SpscQueue`] share one ring; an SPSC side is a [`Producer`] or
//!    [`Consumer`] of [`SpscQueue::split`], or the caller of an `unsafe` method. For one item
//!    at a time from any number of threads, [`StampQueue`] keeps a stamp in every slot instead
//!    (Vyukov's bounded queue): it has no bulk operations.
//! 3. Bulk (all or none) and burst (as many as fit) go through a [`Batch`], an inline array
//!    that can be handed to C, or, for `Copy` items, from and into the caller's slice.
//! 4. It depends on `core` only, so errors are an [`Error`], not kernel error codes: the same
//!    source is a `no_std` crate and, as `kernel::alf_queue`, a module of the kernel crate.
//!
//! The algorithm, its orderings and the contexts in full:
//! [`rust/alf_queue/README.md`](srctree/rust/alf_queue/README.md).
//!
//! # Contexts
//!
//! - [`MpmcQueue`]: with preemption disabled (bottom halves off, a spinlock, softirq, hard
//!   IRQ), since a commit waits for the side's earlier reservations; from an IRQ handler only if
//!   the code it interrupts disables IRQs around its operations.
//! - [`StampQueue`]: any context, NMI included: it never waits for another operation (one that
//!   finds its slot still held by the other side reports the queue full or empty).
//! - [`SpscQueue`]: any context, NMI included: it never waits; one operation per side at a time
//!   (`unsafe` methods: a side's calls ordered by happens-before, none from an interrupt
//!   mid-call).
//! - [`Batch`]: any context: it never allocates, nor does a queue.

// Userspace builds with the `std` feature (the default) use `std::thread::yield_now` in the
// MPMC commit wait; the kernel build never sets Cargo features.
#[cfg(all(feature = "std", not(CONFIG_RUST)))]
extern crate std;

mod batch;
#[cfg(not(loom))]
mod chunk;
mod headtail;
mod mpmc;
mod queue;
mod ring;
mod slots;
mod spsc;
mod stamp;
mod sync;

pub use self::batch::{Batch, Drain};
#[cfg(not(loom))]
pub use self::chunk::{ReadChunk, WriteChunk};
pub use self::mpmc::MpmcQueue;
pub use self::spsc::{Consumer, Producer, SpscQueue};
pub use self::stamp::StampQueue;

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
