// SPDX-License-Identifier: GPL-2.0

//! `alf_queue_micro heels`: one element per call across two threads, ours (`SpscQueue`'s
//! handles) against rtrb, with `work` dependent multiply-adds done by the consumer on each
//! element it takes. `make bench-userspace`'s single-item cell is the case `work` = 0.
//!
//! ```text
//! cd rust/alf_queue/micro && cargo run --release -- heels [elems] [runs] [works]
//! ```
//!
//! `works` is a comma-separated list (default `0,2,4,8,16`). With `HEELS_LEAD=n` in the
//! environment the consumer starts only once the producer has moved `n` elements, has found
//! the ring full or is done (a head start, to see whether a consumer well behind stays behind);
//! with `HEELS_TRAILING=1` our consumer is `Consumer::dequeue_trailing`.
//! The producer runs on CPU 0, the consumer on CPU 1; each run moves `elems` elements through a
//! fresh 4096-slot ring; the two queues run in turns, the order swapped from one run to the
//! next. Printed per `work`: each queue's median ns per element over the runs with the range,
//! the median over the runs of ours/rtrb within each pair, and how often a dequeue found the
//! queue empty and an enqueue found it full (per element moved). A consumer that finds the
//! queue empty runs at the producer's heels: each element then costs both sides a trip of the
//! producer's tail line and of the slot's line.

use crate::{median, range};
use alf_queue::SpscQueue;
use std::hint::black_box;
use std::time::Instant;

pub(crate) const CAP: usize = 4096;

/// A job's state in a pair of cache lines of its own (as the bench harness's `OwnLines`).
#[repr(align(128))]
struct OwnLines<F>(F);

fn pin(cpu: usize) {
    // SAFETY: `set` is a valid, zeroed `cpu_set_t`, and `sched_setaffinity` only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// `work` dependent multiply-adds, which the compiler cannot fold.
#[inline(always)]
fn consume(work: u32) {
    let mut x = black_box(1u64);
    for _ in 0..work {
        x = black_box(x.wrapping_mul(3).wrapping_add(1));
    }
    black_box(x);
}

/// Moves `elems` elements from a producer on CPU 0 through `push` to a consumer on CPU 1
/// through `pop` (the consumer held back for `HEELS_LEAD`, see the module docs); returns ns per
/// element, the consumer's empty dequeues and the producer's full enqueues per element.
pub(crate) fn run(
    elems: u64,
    work: u32,
    push: impl FnMut(usize) -> bool + Send,
    pop: impl FnMut() -> Option<usize> + Send,
) -> (f64, f64, f64) {
    let lead: u64 = std::env::var("HEELS_LEAD").map_or(0, |v| v.parse().unwrap());
    let go = std::sync::atomic::AtomicBool::new(lead == 0);
    let go = &go;
    let t = Instant::now();
    let empty = std::thread::scope(|s| {
        let producer = s.spawn(move || {
            pin(0);
            let mut push = OwnLines(push);
            let (mut sent, mut full) = (0, 0u64);
            while sent < elems {
                if (push.0)(1) {
                    sent += 1;
                    if sent == lead {
                        go.store(true, std::sync::atomic::Ordering::Release);
                    }
                } else {
                    // A lead larger than the ring: the head start is all it can be.
                    go.store(true, std::sync::atomic::Ordering::Release);
                    full += 1;
                    std::hint::spin_loop();
                }
            }
            // A lead larger than the run.
            go.store(true, std::sync::atomic::Ordering::Release);
            full
        });
        let consumer = s.spawn(move || {
            pin(1);
            while !go.load(std::sync::atomic::Ordering::Acquire) {
                std::hint::spin_loop();
            }
            let mut pop = OwnLines(pop);
            let (mut got, mut empty, mut sum) = (0, 0u64, 0usize);
            while got < elems {
                match (pop.0)() {
                    Some(x) => {
                        sum += x;
                        got += 1;
                        consume(work);
                    }
                    None => {
                        empty += 1;
                        std::hint::spin_loop();
                    }
                }
            }
            black_box(sum);
            empty
        });
        (consumer.join().unwrap(), producer.join().unwrap())
    });
    let ns = t.elapsed().as_secs_f64() * 1e9 / elems as f64;
    let per = |n: u64| n as f64 / elems as f64;
    (ns, per(empty.0), per(empty.1))
}

pub(crate) fn ours(elems: u64, work: u32) -> (f64, f64, f64) {
    let mut q = Box::<SpscQueue<usize, CAP>>::new_uninit();
    SpscQueue::init_in_place(&mut q);
    // SAFETY: `init_in_place` initialised the queue.
    let mut q = unsafe { q.assume_init() };
    let (mut tx, mut rx) = q.split();
    let push = move |x| tx.enqueue(x).is_ok();
    // Two instances of `run`, so that the plain consumer's loop has no test of the choice in
    // it: which regime a plain pair lands in follows such details (rust/alf_queue/README.md,
    // "A consumer that trails").
    if std::env::var_os("HEELS_TRAILING").is_some() {
        run(elems, work, push, move || rx.dequeue_trailing())
    } else {
        run(elems, work, push, move || rx.dequeue())
    }
}

pub(crate) fn rtrb(elems: u64, work: u32) -> (f64, f64, f64) {
    let (mut p, mut c) = rtrb::RingBuffer::<usize>::new(CAP);
    run(
        elems,
        work,
        move |x| p.push(x).is_ok(),
        move || c.pop().ok(),
    )
}

/// Prints what a trailing consumer's wait (`Consumer::TRAIL_SPINS` pause hints) takes on this
/// CPU: the median and range over 10^5 waits, each timed on its own, with other work between
/// them. A long unbroken run of hints would measure something else in a virtual machine,
/// whose host may stop a vCPU that executes many of them in a short window (AMD's pause
/// filter, Intel's pause-loop exiting).
pub(crate) fn pause() {
    const WAITS: usize = 100_000;
    let spins = alf_queue::Consumer::<usize, CAP>::TRAIL_SPINS;
    let ns: Vec<f64> = (0..WAITS)
        .map(|_| {
            consume(1000);
            let t = Instant::now();
            for _ in 0..black_box(spins) {
                std::hint::spin_loop();
            }
            t.elapsed().as_secs_f64() * 1e9
        })
        .collect();
    println!(
        "a trailing consumer's wait, {spins} pause hints: {:.0} ns (median of {WAITS}, {})",
        median(ns.clone()),
        range(&ns)
    );
}

/// Runs the table; the arguments after `heels` are `[elems] [runs] [works]`.
pub(crate) fn run_table() {
    let arg = |i: usize| std::env::args().nth(i);
    let elems: u64 = arg(2).map_or(10_000_000, |s| s.parse().unwrap());
    let runs: usize = arg(3).map_or(9, |s| s.parse().unwrap());
    let works: Vec<u32> = arg(4)
        .unwrap_or_else(|| "0,2,4,8,16".into())
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    println!("{elems} elements per run, {runs} runs of each queue in turns, ns per element");
    println!(
        "| work | ours | rtrb | ours/rtrb | empty/element ours | rtrb | full/element ours | rtrb |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for &work in &works {
        let (mut a, mut b, mut r) = (vec![], vec![], vec![]);
        let (mut ea, mut eb, mut fa, mut fb) = (vec![], vec![], vec![], vec![]);
        for i in 0..runs {
            let (x, y) = if i % 2 == 0 {
                let x = ours(elems, work);
                (x, rtrb(elems, work))
            } else {
                let y = rtrb(elems, work);
                (ours(elems, work), y)
            };
            a.push(x.0);
            b.push(y.0);
            r.push(x.0 / y.0);
            ea.push(x.1);
            eb.push(y.1);
            fa.push(x.2);
            fb.push(y.2);
        }
        let (ra, rb) = (range(&a), range(&b));
        println!(
            "| {work} | {:.2} ({ra}) | {:.2} ({rb}) | {:.2} | {:.3} | {:.3} | {:.3} | {:.3} |",
            median(a),
            median(b),
            median(r),
            median(ea),
            median(eb),
            median(fa),
            median(fb)
        );
    }
}
