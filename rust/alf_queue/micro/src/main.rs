// SPDX-License-Identifier: GPL-2.0

//! The one-thread loops of `samples/rust/rust_alf_queue_bench.rs` (their file,
//! `rust_alf_queue_bench_loops.rs`, is mounted here) in userspace, against the C
//! reference queue of `samples/rust/rust_alf_queue_ref.h` (`cq.c`, built by `build.rs` with gcc),
//! for reading the generated code and counting instructions without a kernel build.
//!
//! ```text
//! cd rust/alf_queue/micro && cargo build --release
//! ./target/release/alf_queue_micro [elems] [runs]     # a table of ns per operation
//! ONLY=variant,k ./target/release/alf_queue_micro      # one variant and k, for perf/valgrind
//! ./run.sh ir | ./run.sh time                          # instructions (valgrind), CPU time
//! ./target/release/alf_queue_micro alias               # the elements' page offset (alias.rs)
//! ./target/release/alf_queue_micro heels               # one element per call, 2 threads (heels.rs)
//! ./target/release/alf_queue_micro toy                 # what decides heels' gap (toy.rs)
//! ./target/release/alf_queue_micro pause               # a trailing consumer's wait (heels.rs)
//! ```
//!
//! Variants: 0 mpmc_single, 1 mpmc_bulk, 2 c_mpmc_bulk, 3 spsc_single, 4 spsc_bulk,
//! 5 c_spsc_bulk, 6 spsc_slice, 7 mpmc_slice. The `asm_*` functions are small wrappers to read
//! with `objdump -d`.

use alf_queue::{Batch, MpmcQueue, SpscQueue};
use std::ffi::{c_int, c_ulong, c_void};
use std::hint::black_box;
use std::time::Instant;

const RING: usize = 1024;
const MAX_BULK: usize = 256;
type Item = *mut c_void;

// The kernel sample's loops and its declarations of the C side, the same source; the loops in
// their copy 0 (`spsc_with` has no variant here).
#[allow(dead_code, unused_macros, unused_imports)]
#[path = "../../../../samples/rust/rust_alf_queue_bench_loops.rs"]
mod loops;
#[allow(dead_code, unused_macros, unused_imports)]
#[path = "../../../../samples/rust/bench_placement.rs"]
mod placement;
use loops::{
    c_loop, mpmc_bulk, mpmc_single, mpmc_slice, rust_alf_queue_bench_cq_mpmc_check,
    rust_alf_queue_bench_cq_mpmc_run, rust_alf_queue_bench_cq_new,
    rust_alf_queue_bench_cq_spsc_check, rust_alf_queue_bench_cq_spsc_run, spsc_bulk, spsc_single,
    spsc_slice,
};

mod alias;
mod heels;
mod toy;

/// The median of `v` (the upper one of an even count), for the subcommands' tables.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The range of `v` as the subcommands' tables print it, `lo-hi`.
fn range(v: &[f64]) -> String {
    let (lo, hi) = v
        .iter()
        .fold((f64::MAX, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
    format!("{lo:.2}-{hi:.2}")
}

// For reading the generated code.
#[no_mangle]
#[inline(never)]
pub fn asm_spsc_enqueue_bulk(q: &SpscQueue<Item, RING>, b: &mut Batch<Item, MAX_BULK>) -> bool {
    // SAFETY: These wrappers exist for reading the generated code and nothing calls them; a
    // caller would have to be the queue's only producer (consumer), as the method requires.
    unsafe { q.enqueue_bulk(b).is_ok() }
}
#[no_mangle]
#[inline(never)]
pub fn asm_spsc_dequeue_bulk(
    q: &SpscQueue<Item, RING>,
    b: &mut Batch<Item, MAX_BULK>,
    n: usize,
) -> bool {
    // SAFETY: These wrappers exist for reading the generated code and nothing calls them; a
    // caller would have to be the queue's only producer (consumer), as the method requires.
    unsafe { q.dequeue_bulk(b, n).is_ok() }
}
#[no_mangle]
#[inline(never)]
pub fn asm_mpmc_enqueue_bulk(q: &MpmcQueue<Item, RING>, b: &mut Batch<Item, MAX_BULK>) -> bool {
    q.enqueue_bulk(b).is_ok()
}
#[no_mangle]
#[inline(never)]
pub fn asm_spsc_enqueue(q: &SpscQueue<Item, RING>, x: Item) -> bool {
    // SAFETY: These wrappers exist for reading the generated code and nothing calls them; a
    // caller would have to be the queue's only producer (consumer), as the method requires.
    unsafe { q.enqueue(x).is_ok() }
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("alias") => return alias::run(),
        Some("heels") => return heels::run_table(),
        Some("toy") => return toy::run_table(),
        Some("pause") => return heels::pause(),
        _ => {}
    }
    let elems: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1 << 23);
    let runs: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(5);
    let mut mpmc = Box::new(MpmcQueue::<Item, RING>::new());
    let mut spsc = Box::new(SpscQueue::<Item, RING>::new());
    // SAFETY: `RING` is a power of two, as the C queue requires; the queues live until exit.
    let cm = unsafe { rust_alf_queue_bench_cq_new(RING as u32) };
    // SAFETY: As above.
    let cs = unsafe { rust_alf_queue_bench_cq_new(RING as u32) };
    let mut items: Vec<Item> = (0..MAX_BULK).map(|i| (0x1000 + 8 * i) as Item).collect();
    let mut b = Box::new(Batch::<Item, MAX_BULK>::new());
    let only: Option<(usize, usize)> = std::env::var("ONLY").ok().map(|s| {
        let (v, k) = s.split_once(',').unwrap();
        (v.parse().unwrap(), k.parse().unwrap())
    });
    // Runs variant `vi` (the index into `names` below) for `loops` round trips of `n` elements,
    // `b` filled with the first `n` items beforehand, and returns the elements moved.
    let mut run_variant =
        |vi: usize, n: usize, loops: usize, b: &mut Batch<Item, MAX_BULK>, items: &mut [Item]| {
            b.clear();
            b.fill_from(items[..n].iter().copied());
            match vi {
                0 => mpmc_single::<0>(&mpmc, &mut items[..n], loops),
                1 => mpmc_bulk::<0>(&mpmc, b, n, loops),
                // SAFETY: `cm` is a live C queue of `RING` slots used by this thread alone, empty
                // after every complete run; `items` holds `n <= MAX_BULK < RING` pointers.
                2 => unsafe {
                    c_loop(
                        rust_alf_queue_bench_cq_mpmc_run,
                        cm,
                        &mut items[..n],
                        loops,
                        0,
                    )
                },
                3 => spsc_single::<0>(&mut spsc, &mut items[..n], loops),
                4 => spsc_bulk::<0>(&mut spsc, b, n, loops),
                6 => spsc_slice::<0>(&mut spsc, &mut items[..n], loops),
                7 => mpmc_slice::<0>(&mpmc, &mut items[..n], loops),
                // SAFETY: As for variant 2, with `cs`.
                _ => unsafe {
                    c_loop(
                        rust_alf_queue_bench_cq_spsc_run,
                        cs,
                        &mut items[..n],
                        loops,
                        0,
                    )
                },
            }
        };
    if let Some((vi, n)) = only {
        let loops = (elems / n).max(1);
        b.clear();
        b.fill_from(items[..n].iter().copied());
        assert_eq!(run_variant(vi, n, loops, &mut b, &mut items), n * loops);
        return;
    }
    for n in [1usize, 2, 3, 4, 8, 16, 64] {
        let loops = (elems / n).max(1);
        let (objs, n, loops) = (items.as_mut_ptr(), n as c_int, loops as c_ulong);
        // SAFETY: `cm` and `cs` are live C queues used by this thread alone; `items` holds
        // `n <= MAX_BULK < RING` pointers.
        let bad = unsafe {
            rust_alf_queue_bench_cq_mpmc_check(cm, objs, n, loops)
                + rust_alf_queue_bench_cq_spsc_check(cs, objs, n, loops)
        };
        assert_eq!(bad, 0, "check n={n}");
    }
    let names = [
        "mpmc_single",
        "mpmc_bulk",
        "c_mpmc_bulk",
        "spsc_single",
        "spsc_bulk",
        "c_spsc_bulk",
        "spsc_slice",
        "mpmc_slice",
    ];
    println!("ns per enqueue or dequeue of one element, median of {runs} runs");
    println!(
        "{:>4} {}",
        "k",
        names.iter().map(|n| format!("{n:>12}")).collect::<String>()
    );
    for n in [1usize, 2, 3, 4, 8, 16, 32, 64] {
        let loops = (elems / n).max(1);
        let mut res = vec![Vec::new(); names.len()];
        for run in 0..=runs {
            for v in 0..names.len() {
                let vi = (v + run) % names.len();
                b.clear();
                b.fill_from(items[..n].iter().copied());
                let t = Instant::now();
                let moved = run_variant(vi, n, loops, &mut b, &mut items);
                let ns = t.elapsed().as_nanos() as f64 / (2 * n * loops) as f64;
                assert_eq!(moved, n * loops, "{}", names[vi]);
                if run > 0 {
                    res[vi].push(ns);
                }
            }
        }
        let med: Vec<f64> = res
            .iter_mut()
            .map(|r| {
                r.sort_by(|a, b| a.partial_cmp(b).unwrap());
                r[r.len() / 2]
            })
            .collect();
        println!(
            "{:>4} {}   spsc bulk/C {:.2} slice/C {:.2} slice/single {:.2}; \
             mpmc bulk/C {:.2} slice/C {:.2} slice/single {:.2}",
            n,
            med.iter().map(|m| format!("{m:>12.2}")).collect::<String>(),
            med[4] / med[5],
            med[6] / med[5],
            med[6] / med[3],
            med[1] / med[2],
            med[7] / med[2],
            med[7] / med[0]
        );
    }
    black_box((&mut mpmc, &mut spsc));
}
