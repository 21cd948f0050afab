// SPDX-License-Identifier: GPL-2.0

//! `alf_queue_micro alias`: where the elements sit against the queues' indices. The kernel
//! benchmark's MPMC loops (`mpmc_slice`, `mpmc_single`) and the C reference's, with both queues
//! page-aligned (as `kmalloc` places them in the kernel) and the elements' array moved through
//! one page.
//!
//! ```text
//! cd rust/alf_queue/micro && cargo run --release -- alias [elems] [runs] [offsets]
//! ```
//!
//! `offsets` are hexadecimal page offsets of the array (default `0,40,400,800,c00`; `0x` may
//! lead). A store to the array followed by a load whose address has the same bits 0-11 (4K
//! aliasing) is replayed on Intel cores; the table shows which loop pays for it at which
//! offset. docs/benchmarks.md, "alf_queue in the kernel", says what the kernel benchmark does
//! with it.

use crate::loops::{mpmc_single, mpmc_slice};
use crate::{
    median, rust_alf_queue_bench_cq_mpmc_run, rust_alf_queue_bench_cq_new, Item, MAX_BULK, RING,
};
use alf_queue::MpmcQueue;
use std::alloc::{alloc_zeroed, Layout};
use std::time::Instant;

/// Runs the table; the arguments after `alias` are `[elems] [runs] [offsets]`.
pub(crate) fn run() {
    let arg = |i: usize| std::env::args().nth(i + 1);
    let elems: usize = arg(1).map_or(1 << 22, |s| s.parse().expect("elems: a number"));
    let runs: usize = arg(2).map_or(5, |s| s.parse().expect("runs: a number"));
    let offsets: Vec<usize> = arg(3)
        .unwrap_or_else(|| "0,40,400,800,c00".into())
        .split(',')
        .map(|s| {
            usize::from_str_radix(s.trim_start_matches("0x"), 16)
                .ok()
                .filter(|&o| o < 1 << 12)
                .expect("offsets: comma-separated hexadecimal page offsets below 1000")
        })
        .collect();
    let page = Layout::from_size_align(2 << 12, 1 << 12).unwrap();
    let qlayout = Layout::new::<MpmcQueue<Item, RING>>()
        .align_to(1 << 12)
        .unwrap();
    // SAFETY: Both layouts have a non-zero size; the queue is written before it is used and
    // lives (leaked) for the whole program.
    let (q, buf) = unsafe {
        let q = alloc_zeroed(qlayout).cast::<MpmcQueue<Item, RING>>();
        q.write(MpmcQueue::new());
        (&*q, alloc_zeroed(page))
    };
    // SAFETY: FFI constructor; the C queue lives (leaked) for the whole program.
    let cq = unsafe { rust_alf_queue_bench_cq_new(RING as u32) };
    assert!(!buf.is_null() && !cq.is_null());
    println!(
        "page offsets: ours' queue {:#05x}, the C queue {:#05x}; ns per operation, median of {runs}",
        q as *const _ as usize & 0xfff,
        cq as usize & 0xfff
    );
    println!("offset  k   ours_slice   c_mpmc  ours_single  slice/c  slice/single");
    for &off in &offsets {
        assert!(off + MAX_BULK * 8 <= 2 << 12);
        // SAFETY: The array lies inside `buf` (checked above), which nothing else uses.
        let items =
            unsafe { std::slice::from_raw_parts_mut(buf.add(off).cast::<Item>(), MAX_BULK) };
        for (i, it) in items.iter_mut().enumerate() {
            *it = (0x1000 + 8 * i) as Item;
        }
        for n in [1usize, 2, 4, 8] {
            let loops = (elems / n).max(1);
            let mut ns = [Vec::new(), Vec::new(), Vec::new()];
            // Run 0 warms up; the variants take turns within each run.
            for run in 0..=runs {
                for (v, out) in ns.iter_mut().enumerate() {
                    let t = Instant::now();
                    let moved = match v {
                        0 => mpmc_slice::<0>(q, &mut items[..n], loops),
                        // SAFETY: `cq` is a C queue of RING slots, `items` has `n` elements.
                        1 => unsafe {
                            rust_alf_queue_bench_cq_mpmc_run(
                                cq,
                                items.as_mut_ptr(),
                                n as i32,
                                loops as u64,
                                0,
                            ) as usize
                        },
                        _ => mpmc_single::<0>(q, &mut items[..n], loops),
                    };
                    assert_eq!(moved, n * loops);
                    if run > 0 {
                        out.push(t.elapsed().as_nanos() as f64 / (2 * n * loops) as f64);
                    }
                }
            }
            let [s, c, one] = ns.map(median);
            println!(
                "{off:#05x} {n:3} {s:11.2} {c:8.2} {one:12.2} {:8.3} {:12.3}",
                s / c,
                s / one
            );
        }
    }
}
