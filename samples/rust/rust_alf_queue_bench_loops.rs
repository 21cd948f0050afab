// SPDX-License-Identifier: GPL-2.0

//! The one-thread timed loops of `rust_alf_queue_bench`, one function per variant, and the
//! declarations of the C side's (`rust_alf_queue_bench_ptr_ring.c`, `rust_alf_queue_ref.h`).
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

use core::ffi::{c_int, c_ulong, c_void};

use super::placement::placed;
use super::{Batch, Item, MpmcQueue, SpscQueue, MAX_BULK, RING};

/// Declares the C functions named, all with the parameters and result given.
macro_rules! extern_c_alike {
    ($($name:ident),+ $(,)? => fn $params:tt -> $ret:ty) => {
        extern "C" {
            $(pub(crate) fn $name $params -> $ret;)+
        }
    };
}

// The C side: the C reference's queues (one per kind of run, each run with only the
// multi-producer/multi-consumer or only the single-producer/single-consumer functions) and
// `ptr_ring`; `rust_alf_queue_bench_ptr_ring.h` has their prototypes.
extern "C" {
    pub(crate) fn rust_alf_queue_bench_cq_new(size: u32) -> *mut c_void;
    pub(crate) fn rust_alf_queue_bench_cq_free(q: *mut c_void);
    pub(crate) fn rust_alf_queue_bench_ptr_ring_new(size: c_int) -> *mut c_void;
    pub(crate) fn rust_alf_queue_bench_ptr_ring_free(r: *mut c_void);
}

// The C reference's untimed checks (`alf_ref_check()`): the number of checks that failed.
extern_c_alike!(
    rust_alf_queue_bench_cq_mpmc_check,
    rust_alf_queue_bench_cq_spsc_check,
    => fn(q: *mut c_void, objs: *mut Item, n: c_int, loops: c_ulong) -> c_ulong
);

// The C timed loops, each a `CLoop`: run them with `c_loop`.
extern_c_alike!(
    rust_alf_queue_bench_cq_mpmc_run,
    rust_alf_queue_bench_cq_spsc_run,
    rust_alf_queue_bench_ptr_ring_run,
    => fn(ring: *mut c_void, objs: *mut Item, n: c_int, loops: c_ulong, copy: c_int) -> c_ulong
);

/// A C timed loop: `loops` round trips of the `n` elements of `objs` through `ring`, in copy
/// `copy` of its code; it returns the elements moved.
pub(crate) type CLoop = unsafe extern "C" fn(
    ring: *mut c_void,
    objs: *mut Item,
    n: c_int,
    loops: c_ulong,
    copy: c_int,
) -> c_ulong;

/// Runs the C timed loop `run` on `ring` for `loops` round trips of the elements of `items`,
/// in copy `copy` (below `CODE_PLACEMENTS`) of its code; returns the elements moved.
///
/// # Safety
///
/// `ring` is a live ring of the kind `run` works on, empty and used by this thread alone, with
/// more slots than `items` has elements; for `ptr_ring` the elements are not NULL.
#[inline(always)]
pub(crate) unsafe fn c_loop(
    run: CLoop,
    ring: *mut c_void,
    items: &mut [Item],
    loops: usize,
    copy: usize,
) -> usize {
    // SAFETY: The caller's guarantee; `objs` is `items`, valid for its `n` elements.
    unsafe {
        run(
            ring,
            items.as_mut_ptr(),
            items.len() as c_int,
            loops as c_ulong,
            copy as c_int,
        ) as usize
    }
}

/// Defines a variant's timed loop, a function of its own, generic over its copy `P`, which it
/// starts with [`placed`] (see the module docs); it returns the elements moved.
macro_rules! timed_loop {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$doc])*
        #[inline(never)]
        pub(crate) fn $name<const P: usize>($($arg: $ty),*) -> usize {
            placed::<P>();
            $body
        }
    };
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

timed_loop! {
    /// `mpmc_single`: [`single_rounds`] through [`MpmcQueue`].
    fn mpmc_single(q: &MpmcQueue<Item, RING>, items: &mut [Item], loops: usize) {
        single_rounds(items, loops, |x| q.enqueue(x), || q.dequeue())
    }
}

timed_loop! {
    /// `mpmc_bulk`: [`bulk_rounds`] through [`MpmcQueue`].
    fn mpmc_bulk(
        q: &MpmcQueue<Item, RING>,
        b: &mut Batch<Item, MAX_BULK>,
        n: usize,
        loops: usize,
    ) {
        bulk_rounds(b, n, loops, |b| q.enqueue_bulk(b).is_ok(), |b, n| {
            q.dequeue_bulk(b, n).is_ok()
        })
    }
}

timed_loop! {
    /// `mpmc_slice`: [`slice_rounds`] through [`MpmcQueue`].
    fn mpmc_slice(q: &MpmcQueue<Item, RING>, items: &mut [Item], loops: usize) {
        slice_rounds(items, loops, |s| q.enqueue_bulk_from(s).is_ok(), |s| {
            q.dequeue_bulk_into(s).is_ok()
        })
    }
}

timed_loop! {
    /// `spsc_single`: [`single_rounds`] through the handles of an [`SpscQueue`].
    fn spsc_single(q: &mut SpscQueue<Item, RING>, items: &mut [Item], loops: usize) {
        let (mut tx, mut rx) = q.split();
        single_rounds(items, loops, |x| tx.enqueue(x), || rx.dequeue())
    }
}

timed_loop! {
    /// `spsc_bulk`: [`bulk_rounds`] through the handles of an [`SpscQueue`].
    fn spsc_bulk(
        q: &mut SpscQueue<Item, RING>,
        b: &mut Batch<Item, MAX_BULK>,
        n: usize,
        loops: usize,
    ) {
        let (mut tx, mut rx) = q.split();
        bulk_rounds(b, n, loops, |b| tx.enqueue_bulk(b).is_ok(), |b, n| {
            rx.dequeue_bulk(b, n).is_ok()
        })
    }
}

timed_loop! {
    /// `spsc_slice`: [`slice_rounds`] through the handles of an [`SpscQueue`].
    fn spsc_slice(q: &mut SpscQueue<Item, RING>, items: &mut [Item], loops: usize) {
        let (mut tx, mut rx) = q.split();
        slice_rounds(items, loops, |s| tx.enqueue_bulk_from(s).is_ok(), |s| {
            rx.dequeue_bulk_into(s).is_ok()
        })
    }
}

timed_loop! {
    /// `spsc_with`: one in-place bulk enqueue of `items` then one in-place bulk dequeue of as
    /// many back into it, `loops` times, through the handles of an [`SpscQueue`].
    fn spsc_with(q: &mut SpscQueue<Item, RING>, items: &mut [Item], loops: usize) {
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
}
