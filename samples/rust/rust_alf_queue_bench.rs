// SPDX-License-Identifier: GPL-2.0

//! Benchmark of [`kernel::alf_queue`] against the kernel's `ptr_ring`, after prototype-kernel's
//! `alf_queue_bench` (seed 002).
//!
//! One thread, enqueue then dequeue: for each bulk size `n`, `n` elements go into a queue of
//! [`RING`] slots and come out again, in a loop, five ways, interleaved within each repetition:
//!
//! - `mpmc_single`, `spsc_single`: [`MpmcQueue`] or [`SpscQueue`], `n` single `enqueue` calls
//!   then `n` single `dequeue` calls (the C original's "ALF-multi" loop);
//! - `mpmc_bulk`, `spsc_bulk`: one `enqueue_bulk` of `n` elements then one `dequeue_bulk` of
//!   `n`, through a [`Batch`];
//! - `ptr_ring`: `n` `ptr_ring_produce()` calls then one `ptr_ring_consume_batched()` of `n`
//!   (ptr_ring has no bulk produce). Its timed loop is C (`rust_alf_queue_bench_ptr_ring.c`,
//!   linked into this module), because ptr_ring is all static inline functions: through a Rust
//!   helper per operation it would pay a function call per element that C users do not.
//!
//! The elements are pointers (`*mut c_void`) for every variant. The result lines (see
//! `bench_common.rs`) count operations: `objs` is the number of enqueue plus dequeue
//! operations of one element, twice the number of elements moved, so the per-object figures
//! are per enqueue or per dequeue of one element, as the C original reports them.
//!
//! Nobody else uses the queues, so the MPMC commit wait never spins and preemption stays
//! enabled, as in the C original (the MPMC "Contexts" rule is about concurrent users).
//!
//! # Comparing like with like
//!
//! On UML (uniprocessor) the kernel's C atomics and spinlocks lose their `LOCK` prefix or
//! compile away: `ptr_ring_produce()` and `ptr_ring_consume_batched()` take no real lock there,
//! and the C `alf_queue`'s `cmpxchg()` is a plain one. Rust's `core::sync::atomic`
//! read-modify-writes keep the `LOCK` prefix, so `mpmc_*` pays two locked compare-and-swaps per
//! call (one per side) that its C twin does not on UML. The `spsc_*` variants use no
//! read-modify-write at all (plain loads and stores, as on an SMP kernel). Under QEMU x86_64
//! (SMP) every variant pays its real locks, but TCG timings are for shape only.
//!
//! Parameters (`insmod rust_alf_queue_bench.ko bulk=1,8,16 elems=1000000 runs=5`):
//! - `bulk`: the bulk sizes, a comma-separated list (at most [`MAX_BULK`] each);
//! - `elems`: elements per timed run (the loop count is `elems / n`);
//! - `runs`: timed repetitions per bulk size and variant (after one untimed warm-up).
//!
//! It prints one `rfl_bench:` line per run and stays loaded; unload it with `rmmod`.

use core::ffi::{c_int, c_ulong, c_void};
use core::ptr;
use kernel::alf_queue::{Batch, MpmcQueue, SpscQueue};
use kernel::prelude::*;

#[path = "bench_common.rs"]
mod bench;

use bench::{module_param_string, module_param_uint};

module! {
    type: AlfQueueBench,
    name: "rust_alf_queue_bench",
    author: "rfl-bulk developers",
    description: "Benchmark: kernel::alf_queue (MPMC, SPSC) vs ptr_ring",
    license: "GPL",
}

/// Slots in every queue (ours and the `ptr_ring`).
const RING: usize = 1024;

/// The largest bulk size (a quarter of the ring).
const MAX_BULK: usize = 256;

/// What the queues carry: a pointer, like the C original's `void *`.
type Item = *mut c_void;

module_param_string!(BULK, "bulk", 256, "1,2,4,8,16,32,64");
module_param_uint!(ELEMS, "elems", 1 << 23);
module_param_uint!(RUNS, "runs", 11);

/// The five ways, in the order each repetition runs them.
const VARIANTS: [&str; 5] = [
    "mpmc_single",
    "mpmc_bulk",
    "spsc_single",
    "spsc_bulk",
    "ptr_ring",
];

// The `ptr_ring` side, in `rust_alf_queue_bench_ptr_ring.c`.
extern "C" {
    fn rust_alf_queue_bench_ptr_ring_new(size: c_int) -> *mut c_void;
    fn rust_alf_queue_bench_ptr_ring_free(r: *mut c_void);
    fn rust_alf_queue_bench_ptr_ring_run(
        r: *mut c_void,
        objs: *mut Item,
        n: c_int,
        loops: c_ulong,
    ) -> c_ulong;
}

/// A `ptr_ring` of [`RING`] entries, freed on drop.
///
/// # Invariants
///
/// `ring` is a ring made by `rust_alf_queue_bench_ptr_ring_new` and not freed yet.
struct PtrRing {
    ring: *mut c_void,
}

impl PtrRing {
    fn new() -> Result<Self> {
        // SAFETY: Process context (module init); the function allocates with `GFP_KERNEL`.
        let ring = unsafe { rust_alf_queue_bench_ptr_ring_new(RING as c_int) };
        if ring.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: A ring just made.
        Ok(Self { ring })
    }
}

impl Drop for PtrRing {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the ring is live; it is freed once, here.
        unsafe { rust_alf_queue_bench_ptr_ring_free(self.ring) };
    }
}

/// Everything the timed loops work on, allocated once.
struct Setting {
    mpmc: KBox<MpmcQueue<Item, RING>>,
    spsc: KBox<SpscQueue<Item, RING>>,
    ptr_ring: PtrRing,
    /// The elements, for the single-operation loops and for `ptr_ring`.
    items: KBox<[Item; MAX_BULK]>,
    /// The elements, for the bulk loops.
    batch: KBox<Batch<Item, MAX_BULK>>,
}

/// `n` single enqueues then `n` single dequeues, `loops` times; returns the elements moved.
#[inline(never)]
fn mpmc_single(q: &MpmcQueue<Item, RING>, items: &mut [Item], loops: usize) -> usize {
    let mut moved = 0;
    for _ in 0..loops {
        for item in items.iter() {
            if q.enqueue(*item).is_err() {
                return moved;
            }
        }
        for item in items.iter_mut() {
            match q.dequeue() {
                Some(x) => *item = x,
                None => return moved,
            }
        }
        moved += items.len();
    }
    moved
}

/// One bulk enqueue then one bulk dequeue of `n`, `loops` times; returns the elements moved.
#[inline(never)]
fn mpmc_bulk(
    q: &MpmcQueue<Item, RING>,
    b: &mut Batch<Item, MAX_BULK>,
    n: usize,
    loops: usize,
) -> usize {
    let mut moved = 0;
    for _ in 0..loops {
        if q.enqueue_bulk(b).is_err() || q.dequeue_bulk(b, n).is_err() {
            return moved;
        }
        moved += n;
    }
    moved
}

/// As [`mpmc_single`], with the single-producer single-consumer queue.
#[inline(never)]
fn spsc_single(q: &mut SpscQueue<Item, RING>, items: &mut [Item], loops: usize) -> usize {
    let (mut tx, mut rx) = q.split();
    let mut moved = 0;
    for _ in 0..loops {
        for item in items.iter() {
            if tx.enqueue(*item).is_err() {
                return moved;
            }
        }
        for item in items.iter_mut() {
            match rx.dequeue() {
                Some(x) => *item = x,
                None => return moved,
            }
        }
        moved += items.len();
    }
    moved
}

/// As [`mpmc_bulk`], with the single-producer single-consumer queue.
#[inline(never)]
fn spsc_bulk(
    q: &mut SpscQueue<Item, RING>,
    b: &mut Batch<Item, MAX_BULK>,
    n: usize,
    loops: usize,
) -> usize {
    let (mut tx, mut rx) = q.split();
    let mut moved = 0;
    for _ in 0..loops {
        if tx.enqueue_bulk(b).is_err() || rx.dequeue_bulk(b, n).is_err() {
            return moved;
        }
        moved += n;
    }
    moved
}

impl Setting {
    fn new() -> Result<Self> {
        let mut mpmc = KBox::<MpmcQueue<Item, RING>>::new_uninit(GFP_KERNEL)?;
        MpmcQueue::init_in_place(&mut mpmc);
        // SAFETY: `init_in_place` initialised the queue.
        let mpmc = unsafe { mpmc.assume_init() };
        let mut spsc = KBox::<SpscQueue<Item, RING>>::new_uninit(GFP_KERNEL)?;
        SpscQueue::init_in_place(&mut spsc);
        // SAFETY: `init_in_place` initialised the queue.
        let spsc = unsafe { spsc.assume_init() };
        let mut items = KBox::new([ptr::null_mut(); MAX_BULK], GFP_KERNEL)?;
        // The elements point into their own array: real, distinct, non-NULL pointers (ptr_ring
        // takes NULL for an empty entry), never dereferenced.
        let base: *mut Item = items.as_mut_ptr();
        for (i, item) in items.iter_mut().enumerate() {
            *item = base.wrapping_add(i).cast();
        }
        let batch = KBox::new(Batch::new(), GFP_KERNEL)?;
        Ok(Self {
            mpmc,
            spsc,
            ptr_ring: PtrRing::new()?,
            items,
            batch,
        })
    }

    /// Times `loops` round trips of `n` elements the way `variant` says.
    fn measure(&mut self, variant: &str, n: usize, loops: usize) -> Result<bench::Run> {
        let b = &mut *self.batch;
        b.clear();
        b.fill_from(self.items[..n].iter().copied());
        let items = &mut self.items[..n];
        let mpmc = &*self.mpmc;
        let spsc = &mut *self.spsc;
        let ring = self.ptr_ring.ring;
        let mut moved = 0;
        bench::pause();
        // Two operations per element: one enqueue, one dequeue.
        let r = bench::time((2 * n * loops) as u64, || {
            moved = match variant {
                "mpmc_single" => mpmc_single(mpmc, items, loops),
                "mpmc_bulk" => mpmc_bulk(mpmc, b, n, loops),
                "spsc_single" => spsc_single(spsc, items, loops),
                "spsc_bulk" => spsc_bulk(spsc, b, n, loops),
                // SAFETY: `ring` is live (type invariant of `PtrRing`) and empty after every
                // complete run; `items` holds `n <= MAX_BULK < RING` non-NULL pointers.
                _ => unsafe {
                    rust_alf_queue_bench_ptr_ring_run(
                        ring,
                        items.as_mut_ptr(),
                        n as c_int,
                        loops as c_ulong,
                    ) as usize
                },
            };
        });
        if moved != n * loops {
            pr_err!(
                "rust_alf_queue_bench: {} bulk={}: {} of {} elements moved\n",
                variant,
                n,
                moved,
                n * loops
            );
            return Err(EINVAL);
        }
        Ok(r)
    }
}

struct AlfQueueBench;

impl kernel::Module for AlfQueueBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // SAFETY: The parameters are written by the module loader before `init` runs, and never
        // again (they have no sysfs file).
        let (sizes, elems, runs) = unsafe {
            (
                &*ptr::addr_of!(BULK),
                *ptr::addr_of!(ELEMS) as usize,
                *ptr::addr_of!(RUNS),
            )
        };
        let mut s = Setting::new()?;
        pr_info!(
            "rfl_bench: start bench=alf_queue elems={} runs={} ring={}\n",
            elems,
            runs,
            RING
        );
        for n in bench::parse_list(bench::c_buf(sizes)) {
            if n == 0 || n > MAX_BULK {
                pr_warn!(
                    "rust_alf_queue_bench: bulk size {} skipped (1..={})\n",
                    n,
                    MAX_BULK
                );
                continue;
            }
            let loops = (elems / n).max(1);
            for run in 0..=runs {
                for variant in VARIANTS {
                    let r = s.measure(variant, n, loops)?;
                    // Run 0 warms the caches up and is not reported.
                    if run > 0 {
                        bench::report("alf_queue", variant, n, run, &r);
                    }
                }
            }
        }
        bench::done("alf_queue");
        Ok(AlfQueueBench)
    }
}
