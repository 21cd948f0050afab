// SPDX-License-Identifier: GPL-2.0

//! The one-thread timed loops of `rust_alf_queue_bench`, one function per variant.
//!
//! Mounted by the kernel sample (`#[path = "rust_alf_queue_bench_loops.rs"] mod loops;`) and by
//! the userspace harness in `rust/alf_queue/micro`, which reads the same loops' generated code
//! and counts their instructions without a kernel build. Each includer provides `Batch`,
//! `MpmcQueue` and `SpscQueue` (from `kernel::alf_queue` or the `alf_queue` crate), `Item`,
//! `RING` and `MAX_BULK` at its root, and `bench_placement.rs` mounted there as `placement`.
//!
//! Each variant's function is generic over `P`, its copy: the module holds `CODE_PLACEMENTS`
//! copies of every timed loop, each at its own address, and the benchmark runs its repetitions
//! on them in turn (see `bench_placement.rs`). The userspace harness uses copy 0.

use super::placement::placed;
use super::{Batch, Item, MpmcQueue, SpscQueue, MAX_BULK, RING};

/// `items.len()` single enqueues then as many single dequeues, `loops` times, through
/// `enqueue` and `dequeue`; returns the elements moved. Each variant's entry point below is a
/// function of its own, so that each timed loop is compiled on its own.
#[inline(always)]
pub(crate) fn single_rounds(
    items: &mut [Item],
    loops: usize,
    mut enqueue: impl FnMut(Item) -> Result<(), Item>,
    mut dequeue: impl FnMut() -> Option<Item>,
) -> usize {
    let mut moved = 0;
    for _ in 0..loops {
        for item in items.iter() {
            if enqueue(*item).is_err() {
                return moved;
            }
        }
        for item in items.iter_mut() {
            match dequeue() {
                Some(x) => *item = x,
                None => return moved,
            }
        }
        moved += items.len();
    }
    moved
}

/// One bulk enqueue of the batch then one bulk dequeue of `n` back into it, `loops` times;
/// returns the elements moved.
#[inline(always)]
pub(crate) fn bulk_rounds(
    b: &mut Batch<Item, MAX_BULK>,
    n: usize,
    loops: usize,
    mut enqueue: impl FnMut(&mut Batch<Item, MAX_BULK>) -> bool,
    mut dequeue: impl FnMut(&mut Batch<Item, MAX_BULK>, usize) -> bool,
) -> usize {
    let mut moved = 0;
    for _ in 0..loops {
        if !enqueue(b) || !dequeue(b, n) {
            return moved;
        }
        moved += n;
    }
    moved
}

/// One bulk enqueue copying `items` then one bulk dequeue of as many back into them, `loops`
/// times, through `enqueue` and `dequeue`; returns the elements moved.
#[inline(always)]
pub(crate) fn slice_rounds(
    items: &mut [Item],
    loops: usize,
    mut enqueue: impl FnMut(&[Item]) -> bool,
    mut dequeue: impl FnMut(&mut [Item]) -> bool,
) -> usize {
    let mut moved = 0;
    for _ in 0..loops {
        if !enqueue(items) || !dequeue(items) {
            return moved;
        }
        moved += items.len();
    }
    moved
}

/// `mpmc_single`: [`single_rounds`] through [`MpmcQueue`].
#[inline(never)]
pub(crate) fn mpmc_single<const P: usize>(
    q: &MpmcQueue<Item, RING>,
    items: &mut [Item],
    loops: usize,
) -> usize {
    placed::<P>();
    single_rounds(items, loops, |x| q.enqueue(x), || q.dequeue())
}

/// `mpmc_bulk`: [`bulk_rounds`] through [`MpmcQueue`].
#[inline(never)]
pub(crate) fn mpmc_bulk<const P: usize>(
    q: &MpmcQueue<Item, RING>,
    b: &mut Batch<Item, MAX_BULK>,
    n: usize,
    loops: usize,
) -> usize {
    placed::<P>();
    bulk_rounds(
        b,
        n,
        loops,
        |b| q.enqueue_bulk(b).is_ok(),
        |b, n| q.dequeue_bulk(b, n).is_ok(),
    )
}

/// `mpmc_slice`: [`slice_rounds`] through [`MpmcQueue`].
#[inline(never)]
pub(crate) fn mpmc_slice<const P: usize>(
    q: &MpmcQueue<Item, RING>,
    items: &mut [Item],
    loops: usize,
) -> usize {
    placed::<P>();
    slice_rounds(
        items,
        loops,
        |s| q.enqueue_bulk_from(s).is_ok(),
        |s| q.dequeue_bulk_into(s).is_ok(),
    )
}

/// `spsc_single`: [`single_rounds`] through the handles of an [`SpscQueue`].
#[inline(never)]
pub(crate) fn spsc_single<const P: usize>(
    q: &mut SpscQueue<Item, RING>,
    items: &mut [Item],
    loops: usize,
) -> usize {
    placed::<P>();
    let (mut tx, mut rx) = q.split();
    single_rounds(items, loops, |x| tx.enqueue(x), || rx.dequeue())
}

/// `spsc_bulk`: [`bulk_rounds`] through the handles of an [`SpscQueue`].
#[inline(never)]
pub(crate) fn spsc_bulk<const P: usize>(
    q: &mut SpscQueue<Item, RING>,
    b: &mut Batch<Item, MAX_BULK>,
    n: usize,
    loops: usize,
) -> usize {
    placed::<P>();
    let (mut tx, mut rx) = q.split();
    bulk_rounds(
        b,
        n,
        loops,
        |b| tx.enqueue_bulk(b).is_ok(),
        |b, n| rx.dequeue_bulk(b, n).is_ok(),
    )
}

/// `spsc_slice`: [`slice_rounds`] through the handles of an [`SpscQueue`].
#[inline(never)]
pub(crate) fn spsc_slice<const P: usize>(
    q: &mut SpscQueue<Item, RING>,
    items: &mut [Item],
    loops: usize,
) -> usize {
    placed::<P>();
    let (mut tx, mut rx) = q.split();
    slice_rounds(
        items,
        loops,
        |s| tx.enqueue_bulk_from(s).is_ok(),
        |s| rx.dequeue_bulk_into(s).is_ok(),
    )
}

/// `spsc_with`: one in-place bulk enqueue of `items` then one in-place bulk dequeue of as many
/// back into it, `loops` times, through the handles of an [`SpscQueue`]; returns the elements
/// moved.
#[inline(never)]
pub(crate) fn spsc_with<const P: usize>(
    q: &mut SpscQueue<Item, RING>,
    items: &mut [Item],
    loops: usize,
) -> usize {
    placed::<P>();
    let (mut tx, mut rx) = q.split();
    let n = items.len();
    let mut moved = 0;
    for _ in 0..loops {
        if tx.enqueue_bulk_with(n, |i| items[i]).is_err() {
            return moved;
        }
        let mut out = items.iter_mut();
        let back = rx.dequeue_bulk_with(n, |x| {
            if let Some(slot) = out.next() {
                *slot = x;
            }
        });
        if back.is_err() {
            return moved;
        }
        moved += n;
    }
    moved
}
