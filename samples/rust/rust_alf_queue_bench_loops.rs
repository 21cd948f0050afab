// SPDX-License-Identifier: GPL-2.0

//! The one-thread timed loops of `rust_alf_queue_bench`, one function per variant.
//!
//! Mounted by the kernel sample (`#[path = "rust_alf_queue_bench_loops.rs"] mod loops;`) and by
//! the userspace harness in `rust/alf_queue/micro`, which reads the same loops' generated code
//! and counts their instructions without a kernel build. Each includer provides `Batch`,
//! `MpmcQueue` and `SpscQueue` (from `kernel::alf_queue` or the `alf_queue` crate), `Item`,
//! `RING` and `MAX_BULK` at its root.
//!
//! Each variant's function is generic over `P`, its copy: the module holds [`CODE_PLACEMENTS`]
//! copies of every timed loop, each at its own address, and the benchmark runs its repetitions
//! on them in turn (see [`placed`]). The userspace harness uses copy 0.

use super::{Batch, Item, MpmcQueue, SpscQueue, MAX_BULK, RING};

/// How many copies of each timed loop there are: the `P` of the variants' functions is below
/// this, and [`in_copy`] dispatches to every one of them.
pub(crate) const CODE_PLACEMENTS: usize = 4;

/// Calls copy `p` of a variant's function (`f::<p>`), for `p` below [`CODE_PLACEMENTS`].
macro_rules! in_copy {
    ($p:expr, $f:ident($($arg:expr),* $(,)?)) => {
        match $p {
            0 => $f::<0>($($arg),*),
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            _ => $f::<3>($($arg),*),
        }
    };
}
pub(crate) use in_copy;

/// Starts copy `P` of a timed loop with `16 * P` bytes of NOPs, run once per call.
///
/// A loop's cost on the benchmark's CPU can move with where its code sits: the same machine code
/// can cost markedly more at one address than at another (the placement table of the results
/// says how much, per variant). Every copy of a function is a function of its own, at
/// another address, and this padding also moves the loops of copy `P` by `16 * P` bytes within
/// their 64-byte lines. The C loops get the same treatment (`bench_in_copy()` in
/// `rust_alf_queue_bench_ptr_ring.c`).
#[inline(always)]
fn placed<const P: usize>() {
    // One literal template per copy: `P` is known when each copy is compiled, so only its arm
    // is left. (An `asm!` `const` operand would need rustc 1.82; 6.12 supports 1.78.)
    #[cfg(target_arch = "x86_64")]
    match P {
        // SAFETY: Each statement is 16, 32 or 48 one-byte NOPs: it touches no register,
        // memory, stack or flag, and falls through.
        1 => unsafe {
            core::arch::asm!(".skip 16, 0x90", options(nomem, nostack, preserves_flags))
        },
        // SAFETY: As above.
        2 => unsafe {
            core::arch::asm!(".skip 32, 0x90", options(nomem, nostack, preserves_flags))
        },
        // SAFETY: As above.
        3 => unsafe {
            core::arch::asm!(".skip 48, 0x90", options(nomem, nostack, preserves_flags))
        },
        _ => {}
    }
}

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
