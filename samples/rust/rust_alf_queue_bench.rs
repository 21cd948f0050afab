// SPDX-License-Identifier: GPL-2.0

//! Benchmark of [`kernel::alf_queue`] against the kernel's `ptr_ring` and against a C reference
//! of the C original, after prototype-kernel's `kernel/lib/alf_queue_bench01.c`.
//!
//! One thread, enqueue then dequeue: for each bulk size `n`, `n` elements go into a queue of
//! [`RING`] slots and come out again, in a loop, each of the ways below, interleaved within each
//! repetition. Repetition `r` starts at variant `r mod N` of the `N` in [`Variant::ALL`] and goes
//! round from there, so that no variant always runs first or right after the same one. The data the
//! loops work on (the queues, the C rings, the arrays and the batch) is allocated [`PLACEMENTS`]
//! times, and repetition `r` uses set `r mod PLACEMENTS`: with one set, a cell's figure depended on
//! where that boot's allocations happened to land (the same module in another boot moved single
//! cells, each variant its own way: docs/benchmarks.md, "Placement"), so the medians are taken over
//! several placements of the data instead of one. The code is placed the same way: every timed
//! loop, ours and the C's, is compiled [`CODE_PLACEMENTS`] times, each copy at its own address (see
//! `rust_alf_queue_bench_loops.rs`), and repetition `r` runs every variant in the copy that
//! [`placement_of`] gives, so that a loop that happens to sit well or badly in one build cannot make a
//! cell on its own. The variants:
//!
//! - `mpmc_single`, `spsc_single`: [`MpmcQueue`] or [`SpscQueue`], `n` single `enqueue` calls
//!   then `n` single `dequeue` calls (the C original's "ALF-multi" loop);
//! - `mpmc_bulk`, `spsc_bulk`: one `enqueue_bulk` of `n` elements then one `dequeue_bulk` of
//!   `n`, through a [`Batch`];
//! - `mpmc_slice`, `spsc_slice`: one `enqueue_bulk_from` copying the `n` elements of an array,
//!   then one `dequeue_bulk_into` of `n` back into it: the bulk calls for `Copy` items, with
//!   the C reference's interface (an array in, an array out);
//! - `spsc_with`: one in-place `enqueue_bulk_with` of the `n` elements of an array, then one
//!   `dequeue_bulk_with` of `n` back into it, through the handles of an [`SpscQueue`]: the C
//!   reference's interface (an array in, an array out), with no [`Batch`] in between;
//! - `c_mpmc_bulk`, `c_spsc_bulk`: the same loop over the C reference, a re-implementation in
//!   C (in `rust_alf_queue_ref.h`, timed loop included) of the C original's
//!   multi-producer/multi-consumer and single-producer/single-consumer bulk enqueue and dequeue
//!   (prototype-kernel's `include/linux/alf_queue.h`), over a ring of [`RING`] pointers with
//!   the kernel's `cmpxchg()`, `smp_load_acquire()` and `smp_store_release()`. What differs
//!   from ours is the original's: its SPSC side reads the other side's tail on every call
//!   (ours caches it), one slot stays free, and a bulk that reaches the end of the ring is
//!   copied slot by slot through the index mask (ours copies it as two straight runs).
//!   Its timed loop checks, like ours, only the count that every call returns. Before the
//!   timed runs of each bulk size, one untimed run of each C reference checks the rest: in
//!   every round one element comes back as it went in, and at the end the whole buffer is
//!   intact and the four indices have advanced by the elements moved;
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
//! and the C reference's `cmpxchg()` is a plain one, as in the C original's UP build. Rust's
//! `core::sync::atomic` read-modify-writes keep the `LOCK` prefix, so `mpmc_*` pays two locked
//! compare-and-swaps per call (one per side) that `c_mpmc_bulk` does not on UML: the ratio
//! `mpmc_bulk / c_mpmc_bulk` there includes that cost. The `spsc_*` variants use no
//! read-modify-write at all (plain loads and stores, as on an SMP kernel), nor does
//! `c_spsc_bulk`. Under QEMU x86_64 (SMP) every variant pays its real locks, the C reference's
//! `cmpxchg()` included, but TCG timings are for shape only.
//!
//! Its parameters (`insmod rust_alf_queue_bench.ko bulk=1,8,16 elems=1000000 runs=5`), their
//! bounds and defaults are the `bench::module_params!` block below; a value out of its bounds
//! fails the load with `EINVAL` and a line saying what the parameter takes.
//!
//! It prints one `rfl_bench:` line per run, and one per repetition saying which copy and set it
//! used, and stays loaded; unload it with `rmmod`.

use core::ffi::{c_int, c_ulong, c_void};
use core::mem::size_of;
use core::ops::{Deref, DerefMut};
use core::ptr;
use kernel::alf_queue::{Batch, MpmcQueue, SpscQueue};
use kernel::prelude::*;

#[path = "bench_common.rs"]
mod bench;
#[path = "rust_alf_queue_bench_loops.rs"]
mod loops;
#[path = "bench_placement.rs"]
mod placement;

use bench::{MAX_OBJS, MAX_RUNS};
use loops::{
    c_loop, mpmc_bulk, mpmc_single, mpmc_slice, rust_alf_queue_bench_cq_free,
    rust_alf_queue_bench_cq_mpmc_check, rust_alf_queue_bench_cq_mpmc_run,
    rust_alf_queue_bench_cq_new, rust_alf_queue_bench_cq_spsc_check,
    rust_alf_queue_bench_cq_spsc_run, rust_alf_queue_bench_ptr_ring_free,
    rust_alf_queue_bench_ptr_ring_new, rust_alf_queue_bench_ptr_ring_run, spsc_bulk, spsc_single,
    spsc_slice, spsc_with,
};
use placement::{in_copy, CODE_PLACEMENTS};

bench::sample_module! {
    type: AlfQueueBench,
    name: "rust_alf_queue_bench",
    description: "Benchmark: kernel::alf_queue (MPMC, SPSC) vs ptr_ring",
}

/// Slots in every queue (ours, the C reference and the `ptr_ring`).
const RING: usize = 1024;

/// The largest bulk size (a quarter of the ring).
const MAX_BULK: usize = 256;

/// What the queues carry: a pointer, like the C original's `void *`.
type Item = *mut c_void;

bench::module_params! {
    /// The bulk sizes.
    bulk: list 1..=MAX_BULK = "1,2,3,4,8,16,32,64";
    /// Elements per timed run (the loop count is `elems / n`).
    elems: uint 1..=MAX_OBJS = 1 << 23;
    /// Timed repetitions per bulk size and variant, after one untimed warm-up of every set of
    /// data and copy of the code; the default runs every copy on every set once.
    runs: uint 1..=MAX_RUNS = (PLACEMENTS * CODE_PLACEMENTS) as u32;
}

bench::variants! {
    /// The ways to move elements through a queue, in the order each repetition runs them
    /// (from its own starting point); each one's timed loop is called from [`Setting::measure`].
    enum Variant {
        MpmcSingle => "mpmc_single",
        MpmcBulk => "mpmc_bulk",
        MpmcSlice => "mpmc_slice",
        CMpmcBulk => "c_mpmc_bulk",
        SpscSingle => "spsc_single",
        SpscBulk => "spsc_bulk",
        SpscSlice => "spsc_slice",
        SpscWith => "spsc_with",
        CSpscBulk => "c_spsc_bulk",
        PtrRing => "ptr_ring",
    }
}

/// A ring of the C side (a `ptr_ring` or a C reference queue), freed on drop.
///
/// # Invariants
///
/// `ptr` was made by the C constructor that pairs with `free`, and is not freed yet.
struct CRing {
    ptr: *mut c_void,
    free: unsafe extern "C" fn(*mut c_void),
}

impl CRing {
    /// Takes `ptr`, a ring or NULL (for `ENOMEM`), to be freed with `free`.
    ///
    /// # Safety
    ///
    /// A non-NULL `ptr` is a new ring made by the constructor that pairs with `free`.
    unsafe fn new(ptr: *mut c_void, free: unsafe extern "C" fn(*mut c_void)) -> Result<Self> {
        if ptr.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: The caller's contract.
        Ok(Self { ptr, free })
    }
}

impl Drop for CRing {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `ptr` is live and `free` is its destructor; it is freed
        // once, here.
        unsafe { (self.free)(self.ptr) };
    }
}

/// How many sets of data ([`Setting`]) the repetitions go round; see the module docs.
const PLACEMENTS: usize = 4;

/// The set of data and the copy of the code that repetition `run` (from 1) uses.
///
/// Sets go round one per repetition; the copy goes round too, but one further on after each
/// full round of the sets, so that over [`PLACEMENTS`] rounds every set meets every copy.
fn placement_of(run: usize) -> (usize, usize) {
    (run % PLACEMENTS, (run + run / PLACEMENTS) % CODE_PLACEMENTS)
}

// The rotation of `placement_of` pairs every set with every copy only if there are as many of each.
const _: () = assert!(PLACEMENTS == CODE_PLACEMENTS);

/// Everything the timed loops work on, allocated once per placement.
struct Setting {
    mpmc: KBox<MpmcQueue<Item, RING>>,
    spsc: KBox<SpscQueue<Item, RING>>,
    /// The C reference, run with the multi-producer/multi-consumer functions only.
    c_mpmc: CRing,
    /// The C reference, run with the single-producer/single-consumer functions only.
    c_spsc: CRing,
    ptr_ring: CRing,
    /// The elements, for the single-operation loops and for `ptr_ring`.
    items: KBox<MidPage<[Item; MAX_BULK]>>,
    /// The elements, for the bulk loops.
    batch: KBox<MidPage<Batch<Item, MAX_BULK>>>,
}

/// A `T` 1 KiB into a page.
///
/// `kmalloc` serves 2-4 KiB from its 4 KiB size class, whose objects start on a page in the
/// benchmark kernel (no slab debugging), as the queues do (larger powers of two, naturally
/// aligned), whose indices all sit in their first 512 bytes (ours, two 128-byte blocks a side;
/// the C's in their first 256). Elements stored at the page offset of an index that the next
/// call loads are 4K aliasing on Intel cores: the load waits as if it depended on the store, in
/// every call. Elements in the middle of a page are at the same distance from the indices of
/// every queue, ours and the C's, in every set of data (docs/benchmarks.md, "alf_queue in the
/// kernel").
#[repr(C)]
struct MidPage<T> {
    _below: [u8; 1024],
    value: T,
}

impl<T> MidPage<T> {
    fn new(value: T) -> Self {
        Self {
            _below: [0; 1024],
            value,
        }
    }
}

// Both uses fall in `kmalloc`'s 4 KiB size class.
const _: () = assert!(size_of::<MidPage<Batch<Item, MAX_BULK>>>() <= 4096);
const _: () = assert!(size_of::<MidPage<[Item; MAX_BULK]>>() > 2048);

impl<T> Deref for MidPage<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for MidPage<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
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
        let mut items = KBox::new(MidPage::new([ptr::null_mut(); MAX_BULK]), GFP_KERNEL)?;
        // The elements point into their own array: real, distinct, non-NULL pointers (ptr_ring
        // takes NULL for an empty entry), never dereferenced.
        let base: *mut Item = items.as_mut_ptr();
        for (i, item) in items.iter_mut().enumerate() {
            *item = base.wrapping_add(i).cast();
        }
        let batch = KBox::new(MidPage::new(Batch::new()), GFP_KERNEL)?;
        // SAFETY: Process context (module init), where the C constructors may allocate with
        // `GFP_KERNEL`; each ring gets its constructor's destructor.
        let c_ref = || unsafe {
            CRing::new(
                rust_alf_queue_bench_cq_new(RING as u32),
                rust_alf_queue_bench_cq_free,
            )
        };
        let (c_mpmc, c_spsc) = (c_ref()?, c_ref()?);
        // SAFETY: As above.
        let ptr_ring = unsafe {
            CRing::new(
                rust_alf_queue_bench_ptr_ring_new(RING as c_int),
                rust_alf_queue_bench_ptr_ring_free,
            )
        }?;
        Ok(Self {
            mpmc,
            spsc,
            c_mpmc,
            c_spsc,
            ptr_ring,
            items,
            batch,
        })
    }

    /// Times `loops` round trips of `n` elements the way `variant` says, in copy `copy` of its
    /// code (below [`CODE_PLACEMENTS`]).
    fn measure(
        &mut self,
        variant: Variant,
        copy: usize,
        n: usize,
        loops: usize,
    ) -> Result<bench::Run> {
        // Element `i` is a pointer to its own entry of `items` (see `Setting::new`).
        let base: *mut Item = self.items.as_mut_ptr();
        let b = &mut *self.batch;
        b.clear();
        b.fill_from(self.items[..n].iter().copied());
        let items = &mut self.items[..n];
        let mpmc = &*self.mpmc;
        let spsc = &mut *self.spsc;
        let ring = self.ptr_ring.ptr;
        let (c_mpmc, c_spsc) = (self.c_mpmc.ptr, self.c_spsc.ptr);
        let mut moved = 0;
        bench::pause();
        // Two operations per element: one enqueue, one dequeue.
        let r = bench::time((2 * n * loops) as u64, || {
            moved = match variant {
                Variant::MpmcSingle => in_copy!(copy, mpmc_single(mpmc, items, loops)),
                Variant::MpmcBulk => in_copy!(copy, mpmc_bulk(mpmc, b, n, loops)),
                Variant::MpmcSlice => in_copy!(copy, mpmc_slice(mpmc, items, loops)),
                // SAFETY: `c_mpmc` is live (type invariant of `CRing`), used by this thread
                // alone, and empty after every complete run; `items` holds `n <= MAX_BULK < RING`
                // pointers.
                Variant::CMpmcBulk => unsafe {
                    c_loop(rust_alf_queue_bench_cq_mpmc_run, c_mpmc, items, loops, copy)
                },
                Variant::SpscSingle => in_copy!(copy, spsc_single(spsc, items, loops)),
                Variant::SpscBulk => in_copy!(copy, spsc_bulk(spsc, b, n, loops)),
                Variant::SpscSlice => in_copy!(copy, spsc_slice(spsc, items, loops)),
                Variant::SpscWith => in_copy!(copy, spsc_with(spsc, items, loops)),
                // SAFETY: As for `c_mpmc_bulk`; `c_spsc` has one producer and one consumer,
                // this thread.
                Variant::CSpscBulk => unsafe {
                    c_loop(rust_alf_queue_bench_cq_spsc_run, c_spsc, items, loops, copy)
                },
                // SAFETY: `ring` is live (type invariant of `CRing`) and empty after every
                // complete run; `items` holds `n <= MAX_BULK < RING` non-NULL pointers.
                Variant::PtrRing => unsafe {
                    c_loop(rust_alf_queue_bench_ptr_ring_run, ring, items, loops, copy)
                },
            };
        });
        // Untimed, the same for every variant: the elements came back in order.
        let out = if matches!(variant, Variant::MpmcBulk | Variant::SpscBulk) {
            b.as_slice()
        } else {
            &*items
        };
        let intact = out.len() == n
            && out
                .iter()
                .enumerate()
                .all(|(i, &x)| x == base.wrapping_add(i).cast::<c_void>());
        if moved != n * loops || !intact {
            pr_err!(
                "rust_alf_queue_bench: FAIL {} bulk={}: {} of {} elements moved, elements {}\n",
                variant.name(),
                n,
                moved,
                n * loops,
                if intact {
                    "intact"
                } else {
                    "lost or out of order"
                }
            );
            return Err(EINVAL);
        }
        Ok(r)
    }

    /// Runs the C reference's checks (`cq_check`), untimed, for `loops` rounds of `n`.
    fn check_c_reference(&mut self, n: usize, loops: usize) -> Result {
        let objs = self.items.as_mut_ptr();
        // SAFETY: Both rings are live (type invariant of `CRing`), used by this thread alone,
        // and empty (every run before left them so); `objs` holds `n <= MAX_BULK < RING`
        // pointers.
        let (mpmc, spsc) = unsafe {
            (
                rust_alf_queue_bench_cq_mpmc_check(
                    self.c_mpmc.ptr,
                    objs,
                    n as c_int,
                    loops as c_ulong,
                ),
                rust_alf_queue_bench_cq_spsc_check(
                    self.c_spsc.ptr,
                    objs,
                    n as c_int,
                    loops as c_ulong,
                ),
            )
        };
        if mpmc != 0 || spsc != 0 {
            pr_err!(
                "rust_alf_queue_bench: FAIL C reference bulk={}: {} failed checks (mpmc), {} (spsc)\n",
                n,
                mpmc,
                spsc
            );
            return Err(EINVAL);
        }
        Ok(())
    }
}

struct AlfQueueBench;

impl kernel::Module for AlfQueueBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let p = Params::read()?;
        let mut settings = KVec::with_capacity(PLACEMENTS, GFP_KERNEL)?;
        for _ in 0..PLACEMENTS {
            settings.push(Setting::new()?, GFP_KERNEL)?;
        }
        pr_info!(
            "rfl_bench: start bench=alf_queue elems={} runs={} ring={}\n",
            p.elems,
            p.runs,
            RING
        );
        bench::header("alf_queue", Variant::NAMES, &p.bulk, p.runs);
        for n in p.bulk.iter() {
            let loops = (p.elems as usize / n).max(1);
            for s in settings.iter_mut() {
                s.check_c_reference(n, loops)?;
            }
            for run in 0..=p.runs as usize {
                // Run 0 warms every set of data and every copy of the code up and is not
                // reported; run `r` uses the set and the copy that `placement_of` gives.
                let (sets, code) = if run == 0 {
                    (&mut settings[..], None)
                } else {
                    let (i, c) = placement_of(run);
                    // For the report's placement table (`scripts/collect.py`).
                    pr_info!(
                        "rfl_bench: placement bench=alf_queue bulk={} run={} data={} code={}\n",
                        n,
                        run,
                        i,
                        c
                    );
                    (&mut settings[i..=i], Some(c))
                };
                for (k, s) in sets.iter_mut().enumerate() {
                    let copy = code.unwrap_or(k % CODE_PLACEMENTS);
                    // Each repetition starts one variant further on (see the module docs).
                    let first = run % Variant::ALL.len();
                    for j in 0..Variant::ALL.len() {
                        let variant = Variant::ALL[(first + j) % Variant::ALL.len()];
                        let r = s.measure(variant, copy, n, loops)?;
                        if run > 0 {
                            bench::report("alf_queue", variant.name(), n, run as u32, &r);
                        }
                    }
                }
            }
        }
        bench::done("alf_queue");
        Ok(AlfQueueBench)
    }
}
