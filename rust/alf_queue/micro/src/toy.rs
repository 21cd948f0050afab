// SPDX-License-Identifier: GPL-2.0

//! `alf_queue_micro toy`: what decides the `heels` gap, with rtrb's algorithm rewritten in a
//! few lines (each side keeps its position and its copy of the other side's in registers,
//! reads the other side's index only when the copy shows no room or no item) and varied one
//! thing at a time:
//!
//! - `mask_split`: positions run freely and are masked, as ours are; indices and slots in
//!   separate allocations, as rtrb's are;
//! - `mask_inline`: the same, laid out as our `Ring` (indices, then the slots, one block);
//! - `wrap`: rtrb's own arithmetic (positions wrap at twice the capacity, the capacity and the
//!   slots' address read from the shared block after each atomic), split layout;
//! - `wrap_const`: rtrb's arithmetic with the capacity a constant and the slots' address in a
//!   register, as in `mask`; `wrap_load_cap` reads only the capacity after each atomic,
//!   `wrap_load_data` only the slots' address;
//! - `slow_cons`, `slow_prod`: `mask_split` with one cycle more in the consumer's (producer's)
//!   loop-carried position chain, an `add 0` the compiler cannot remove.
//!
//! ```text
//! cd rust/alf_queue/micro && cargo run --release -- toy [elems] [runs] [work]
//! ```
//!
//! Every variant and ours and rtrb run in one rotation per repetition (pinned as in `heels`);
//! printed: the median ns per element, the consumer's empty dequeues and the producer's full
//! enqueues per element, and for the toys how often the consumer read the producer's index (its
//! copy exhausted; the count's load and store sit on that path only).

use crate::heels::{ours, rtrb, run, CAP};
use crate::{median, range};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// How many times the current toy's consumer has read the producer's index (its copy showed
/// no item); only the consumer thread writes it, with a load and a store (no locked
/// instruction), on that path only.
static REFRESHES: AtomicU64 = AtomicU64::new(0);

/// Counts one read of the producer's index by the consumer.
#[inline(always)]
fn count_refresh() {
    REFRESHES.store(REFRESHES.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

/// An index alone in a pair of cache lines.
#[repr(C, align(128))]
struct Pad(AtomicUsize);

/// The indices and slots in one block, as our `Ring` lays them out.
#[repr(C)]
struct Inline {
    prod_own: Pad,
    prod_tail: Pad,
    cons_own: Pad,
    cons_tail: Pad,
    slots: [usize; CAP],
}

/// Where a mask-arithmetic pair finds its two indices and its slots.
#[derive(Clone, Copy)]
struct Shared {
    head: *const AtomicUsize,
    tail: *const AtomicUsize,
    slots: *mut usize,
}

// SAFETY: The pointers stay valid while `run` runs the two sides (the owners outlive it), and
// the protocol hands each slot to one side at a time.
unsafe impl Send for Shared {}

/// Adds one cycle to `x`'s dependency chain, if `SLOW`.
#[inline(always)]
fn slow<const SLOW: bool>(mut x: usize) -> usize {
    if SLOW {
        // SAFETY: Adds zero to a register; touches no memory.
        unsafe { core::arch::asm!("add {0}, 0", inout(reg) x, options(nomem, nostack)) };
    }
    x
}

/// rtrb's algorithm with free-running, masked positions.
fn mask<const SLOW_PROD: bool, const SLOW_CONS: bool>(
    s: Shared,
    elems: u64,
    work: u32,
) -> (f64, f64, f64) {
    let (mut cached_head, mut tail) = (0usize, 0usize);
    let push = move |x: usize| {
        let s = s;
        // SAFETY: See `Shared`.
        let (head_idx, tail_idx) = unsafe { (&*s.head, &*s.tail) };
        if tail.wrapping_sub(cached_head) == CAP {
            cached_head = head_idx.load(Ordering::Acquire);
            if tail.wrapping_sub(cached_head) == CAP {
                return false;
            }
        }
        // SAFETY: The slot is empty and ours until the release below.
        unsafe { s.slots.add(tail & (CAP - 1)).write(x) };
        tail = slow::<SLOW_PROD>(tail.wrapping_add(1));
        tail_idx.store(tail, Ordering::Release);
        true
    };
    let (mut head, mut cached_tail) = (0usize, 0usize);
    let pop = move || {
        let s = s;
        // SAFETY: See `Shared`.
        let (head_idx, tail_idx) = unsafe { (&*s.head, &*s.tail) };
        if head == cached_tail {
            cached_tail = tail_idx.load(Ordering::Acquire);
            count_refresh();
            if head == cached_tail {
                return None;
            }
        }
        // SAFETY: The slot is full and ours until the release below.
        let x = unsafe { s.slots.add(head & (CAP - 1)).read() };
        head = slow::<SLOW_CONS>(head.wrapping_add(1));
        head_idx.store(head, Ordering::Release);
        Some(x)
    };
    run(elems, work, push, pop)
}

/// `mask` over indices and slots in separate allocations.
fn split<const SLOW_PROD: bool, const SLOW_CONS: bool>(elems: u64, work: u32) -> (f64, f64, f64) {
    let idx = Box::new([Pad(AtomicUsize::new(0)), Pad(AtomicUsize::new(0))]);
    let mut slots = vec![0usize; CAP];
    let s = Shared {
        head: &idx[0].0,
        tail: &idx[1].0,
        slots: slots.as_mut_ptr(),
    };
    mask::<SLOW_PROD, SLOW_CONS>(s, elems, work)
}

fn mask_split(elems: u64, work: u32) -> (f64, f64, f64) {
    split::<false, false>(elems, work)
}

fn slow_cons(elems: u64, work: u32) -> (f64, f64, f64) {
    split::<false, true>(elems, work)
}

fn slow_prod(elems: u64, work: u32) -> (f64, f64, f64) {
    split::<true, false>(elems, work)
}

fn mask_inline(elems: u64, work: u32) -> (f64, f64, f64) {
    // SAFETY: All-zero bytes are a valid `Inline` (atomics and integers).
    let mut b: Box<Inline> = unsafe { Box::new_zeroed().assume_init() };
    let s = Shared {
        head: &b.cons_tail.0,
        tail: &b.prod_tail.0,
        slots: b.slots.as_mut_ptr(),
    };
    let _ = (&b.prod_own, &b.cons_own);
    mask::<false, false>(s, elems, work)
}

/// rtrb's shared block: its indices, then the slots' address and the capacity, which its
/// code reads after each atomic.
#[repr(C)]
struct Meta {
    head: Pad,
    tail: Pad,
    data: *mut usize,
    cap: usize,
}

// SAFETY: As `Shared`.
unsafe impl Sync for Meta {}

/// A position (in `0 .. 2 * cap`) as a slot index.
#[inline(always)]
fn collapse(cap: usize, p: usize) -> usize {
    if p < cap {
        p
    } else {
        p - cap
    }
}

/// The position after `p`.
#[inline(always)]
fn inc1(cap: usize, p: usize) -> usize {
    if p < 2 * cap - 1 {
        p + 1
    } else {
        0
    }
}

/// How far `b` is ahead of `a`.
#[inline(always)]
fn distance(cap: usize, a: usize, b: usize) -> usize {
    if a <= b {
        b - a
    } else {
        2 * cap - a + b
    }
}

fn wrap(elems: u64, work: u32) -> (f64, f64, f64) {
    wrap_in::<false, false>(elems, work)
}

fn wrap_const(elems: u64, work: u32) -> (f64, f64, f64) {
    wrap_in::<true, true>(elems, work)
}

fn wrap_load_cap(elems: u64, work: u32) -> (f64, f64, f64) {
    wrap_in::<false, true>(elems, work)
}

fn wrap_load_data(elems: u64, work: u32) -> (f64, f64, f64) {
    wrap_in::<true, false>(elems, work)
}

/// rtrb's arithmetic; with `CONST`, the capacity is the constant and the slots' address is kept
/// in a register, as in `mask`.
fn wrap_in<const CONST_CAP: bool, const CONST_DATA: bool>(
    elems: u64,
    work: u32,
) -> (f64, f64, f64) {
    let mut slots = vec![0usize; CAP];
    let m = Box::new(Meta {
        head: Pad(AtomicUsize::new(0)),
        tail: Pad(AtomicUsize::new(0)),
        data: slots.as_mut_ptr(),
        cap: CAP,
    });
    let m: &Meta = &m;
    let s = Shared {
        head: &m.head.0,
        tail: &m.tail.0,
        slots: m.data,
    };
    let (mut cached_head, mut tail) = (0usize, 0usize);
    let push = move |x: usize| {
        let s = s;
        let cap = if CONST_CAP { CAP } else { m.cap };
        let data = if CONST_DATA { s.slots } else { m.data };
        if distance(cap, cached_head, tail) == cap {
            cached_head = m.head.0.load(Ordering::Acquire);
            if distance(cap, cached_head, tail) == cap {
                return false;
            }
        }
        // SAFETY: The slot is empty and ours until the release below.
        unsafe { data.add(collapse(cap, tail)).write(x) };
        tail = inc1(cap, tail);
        m.tail.0.store(tail, Ordering::Release);
        true
    };
    let (mut head, mut cached_tail) = (0usize, 0usize);
    let pop = move || {
        let s = s;
        let cap = if CONST_CAP { CAP } else { m.cap };
        let data = if CONST_DATA { s.slots } else { m.data };
        if head == cached_tail {
            cached_tail = m.tail.0.load(Ordering::Acquire);
            count_refresh();
            if head == cached_tail {
                return None;
            }
        }
        // SAFETY: The slot is full and ours until the release below.
        let x = unsafe { data.add(collapse(cap, head)).read() };
        head = inc1(cap, head);
        m.head.0.store(head, Ordering::Release);
        Some(x)
    };
    run(elems, work, push, pop)
}

/// Runs the table; the arguments after `toy` are `[elems] [runs] [work]`.
pub(crate) fn run_table() {
    let arg = |i: usize| std::env::args().nth(i);
    let elems: u64 = arg(2).map_or(10_000_000, |s| s.parse().unwrap());
    let runs: usize = arg(3).map_or(5, |s| s.parse().unwrap());
    let work: u32 = arg(4).map_or(0, |s| s.parse().unwrap());
    type Variant = (&'static str, fn(u64, u32) -> (f64, f64, f64));
    let vs: [Variant; 10] = [
        ("ours", ours),
        ("rtrb", rtrb),
        ("mask_split", mask_split),
        ("mask_inline", mask_inline),
        ("wrap", wrap),
        ("wrap_const", wrap_const),
        ("wrap_load_cap", wrap_load_cap),
        ("wrap_load_data", wrap_load_data),
        ("slow_cons", slow_cons),
        ("slow_prod", slow_prod),
    ];
    let mut t: Vec<Vec<(f64, f64, f64)>> = vec![vec![]; vs.len()];
    let mut refreshes: Vec<Vec<f64>> = vec![vec![]; vs.len()];
    for i in 0..runs {
        for j in 0..vs.len() {
            let v = (i + j) % vs.len();
            REFRESHES.store(0, Ordering::Relaxed);
            t[v].push((vs[v].1)(elems, work));
            refreshes[v].push(REFRESHES.load(Ordering::Relaxed) as f64 / elems as f64);
        }
    }
    println!("{elems} elements per run, {runs} rotations, work {work}");
    println!(
        "| variant | ns per element (range) | empty/element | full/element | refreshes/element |"
    );
    println!("|---|---|---|---|---|");
    for (v, (name, _)) in vs.iter().enumerate() {
        let col = |f: fn(&(f64, f64, f64)) -> f64| t[v].iter().map(f).collect::<Vec<_>>();
        let ns = col(|x| x.0);
        // Ours and rtrb are not instrumented.
        let r = match median(refreshes[v].clone()) {
            x if x > 0.0 => format!("{x:.3}"),
            _ => "-".into(),
        };
        println!(
            "| {name} | {:.2} ({}) | {:.3} | {:.3} | {r} |",
            median(ns.clone()),
            range(&ns),
            median(col(|x| x.1)),
            median(col(|x| x.2))
        );
    }
}
