// SPDX-License-Identifier: GPL-2.0

//! Stand-ins for the kernel's CPUs and contexts: the current CPU, bottom halves, softirq and
//! hard-IRQ context, and per-CPU memory.
//!
//! The twin has [`NR_CPUS`] possible CPUs. A thread runs on one CPU at a time: CPU 0, unless a
//! test moves it with [`on_cpu`]. Contexts are per thread: [`in_softirq`] runs a closure as a
//! softirq of the thread's CPU, [`in_hardirq`] as a hard-IRQ handler (IRQs disabled).
//!
//! Bottom halves disabled, or a softirq running, *claims* the CPU for the thread: in the kernel
//! no other context of that CPU then runs bottom-half-protected code. A second thread that
//! claims a CPU another thread holds panics, which catches code that would let two contexts
//! into one CPU's per-CPU state.
//!
//! Per-CPU memory (`pcpu_alloc_noprof`) is one zeroed block with one unit per CPU.
#![allow(missing_docs)]
#![allow(clippy::missing_safety_doc)]

use core::ffi::{c_int, c_uint, c_void};
use std::alloc::Layout;
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::bindings::gfp_t;

/// Held by a test that uses the CPUs, so that tests running in parallel threads do not meet
/// on one CPU.
pub static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The possible CPUs: 0 to `NR_CPUS - 1`, all online.
pub const NR_CPUS: u32 = 4;

thread_local! {
    static CPU: Cell<u32> = const { Cell::new(0) };
    /// `local_bh_disable()` nesting.
    static BH: Cell<u32> = const { Cell::new(0) };
    static SOFTIRQ: Cell<bool> = const { Cell::new(false) };
    static HARDIRQ: Cell<bool> = const { Cell::new(false) };
    /// A nonzero token naming the thread (the address of this thread-local).
    static TOKEN: u8 = const { 0 };
}

/// The thread holding each CPU's bottom-half-protected state (0: none).
static OWNER: [AtomicUsize; NR_CPUS as usize] = [const { AtomicUsize::new(0) }; NR_CPUS as usize];

fn token() -> usize {
    TOKEN.with(|t| t as *const u8 as usize)
}

fn claim(cpu: u32) {
    let me = token();
    let owner = &OWNER[cpu as usize];
    if let Err(other) = owner.compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed) {
        assert_eq!(
            other, me,
            "two threads in bottom-half-protected code on CPU {cpu}"
        );
    }
}

fn release(cpu: u32) {
    OWNER[cpu as usize].store(0, Ordering::Release);
}

/// Whether the thread holds its CPU (bottom halves disabled or softirq).
fn holds() -> bool {
    BH.with(Cell::get) > 0 || SOFTIRQ.with(Cell::get)
}

/// Whether the calling thread may not sleep: bottom halves disabled, a softirq, or hard IRQ
/// (`might_sleep()`'s test, as far as the twin knows the context).
pub fn in_atomic() -> bool {
    holds() || HARDIRQ.with(Cell::get)
}

pub unsafe fn raw_smp_processor_id() -> c_uint {
    CPU.with(Cell::get)
}

pub unsafe fn num_online_cpus() -> c_uint {
    NR_CPUS
}

/// The kernel helper: the next possible CPU after `cpu` (-1 to start), or -1.
pub unsafe fn next_possible_cpu(cpu: c_int) -> c_int {
    if cpu + 1 < NR_CPUS as c_int {
        cpu + 1
    } else {
        -1
    }
}

pub unsafe fn irqs_disabled() -> bool {
    HARDIRQ.with(Cell::get)
}

pub unsafe fn in_serving_softirq() -> bool {
    SOFTIRQ.with(Cell::get)
}

pub unsafe fn local_bh_disable() {
    assert!(
        !HARDIRQ.with(Cell::get),
        "local_bh_disable() with IRQs disabled"
    );
    if !holds() {
        claim(CPU.with(Cell::get));
    }
    BH.with(|b| b.set(b.get() + 1));
}

pub unsafe fn local_bh_enable() {
    assert!(
        !HARDIRQ.with(Cell::get),
        "local_bh_enable() with IRQs disabled"
    );
    let n = BH.with(Cell::get);
    assert!(n > 0, "local_bh_enable() without local_bh_disable()");
    BH.with(|b| b.set(n - 1));
    if !holds() {
        release(CPU.with(Cell::get));
    }
}

/// `_local_bh_enable()`: re-enables bottom halves with IRQs disabled, running no softirq.
pub unsafe fn _local_bh_enable() {
    assert!(
        HARDIRQ.with(Cell::get),
        "_local_bh_enable() with IRQs enabled"
    );
    let n = BH.with(Cell::get);
    assert!(n > 0, "_local_bh_enable() without local_bh_disable()");
    BH.with(|b| b.set(n - 1));
    if !holds() {
        release(CPU.with(Cell::get));
    }
}

/// The kernel helper that makes a qmempool guard: -1 with IRQs disabled, 0 in a softirq, 1
/// after disabling bottom halves (`rust/helpers/qmempool.c`).
pub unsafe fn qmempool_bh_enter() -> c_int {
    // SAFETY: Stand-ins with no precondition but the ones checked inside.
    unsafe {
        if irqs_disabled() {
            -1
        } else if in_serving_softirq() {
            0
        } else {
            local_bh_disable();
            1
        }
    }
}

/// The kernel helper that ends a guard that disabled bottom halves where IRQs are enabled
/// (true); false, with nothing done, where they are disabled.
pub unsafe fn qmempool_bh_exit() -> bool {
    // SAFETY: As above.
    unsafe {
        if irqs_disabled() {
            return false;
        }
        local_bh_enable();
    }
    true
}

/// The kernel helper that ends such a guard with IRQs disabled: bottom halves enabled without
/// running softirqs (in the kernel, those raised meanwhile go to `ksoftirqd`).
pub unsafe fn qmempool_bh_exit_irqs_off() {
    // SAFETY: As above.
    unsafe { _local_bh_enable() };
}

/// Runs `f` on CPU `cpu` (task context), then moves back.
pub fn on_cpu<R>(cpu: u32, f: impl FnOnce() -> R) -> R {
    assert!(cpu < NR_CPUS);
    assert!(!holds(), "migrating with bottom halves disabled");
    let old = CPU.with(|c| c.replace(cpu));
    let r = f();
    CPU.with(|c| c.set(old));
    r
}

/// Runs `f` as a softirq of the current CPU (which it claims).
pub fn in_softirq<R>(f: impl FnOnce() -> R) -> R {
    assert!(
        !holds(),
        "a softirq cannot start with bottom halves disabled"
    );
    claim(CPU.with(Cell::get));
    SOFTIRQ.with(|s| s.set(true));
    struct End;
    impl Drop for End {
        fn drop(&mut self) {
            SOFTIRQ.with(|s| s.set(false));
            release(CPU.with(Cell::get));
        }
    }
    let _end = End;
    f()
}

/// Runs `f` as a hard-IRQ handler of the current CPU (IRQs disabled).
pub fn in_hardirq<R>(f: impl FnOnce() -> R) -> R {
    let old = HARDIRQ.with(|h| h.replace(true));
    struct End(bool);
    impl Drop for End {
        fn drop(&mut self) {
            HARDIRQ.with(|h| h.set(self.0));
        }
    }
    let _end = End(old);
    f()
}

/// The bytes before a per-CPU block's first unit, which hold the unit size.
const HEADER: usize = 64;

fn percpu_layout(unit: usize, align: usize) -> Layout {
    let align = align.max(HEADER);
    Layout::from_size_align(HEADER.max(align) + unit * NR_CPUS as usize, align).unwrap()
}

pub unsafe fn pcpu_alloc_noprof(
    size: usize,
    align: usize,
    _reserved: bool,
    _gfp: gfp_t,
) -> *mut c_void {
    assert!(size > 0 && align.is_power_of_two());
    let unit = size.next_multiple_of(align);
    let layout = percpu_layout(unit, align);
    // SAFETY: `layout` has a non-zero size.
    let base = unsafe { std::alloc::alloc_zeroed(layout) };
    if base.is_null() {
        return core::ptr::null_mut();
    }
    let offset = HEADER.max(layout.align());
    // SAFETY: `base + offset - 16` is inside the block and 8-aligned; two words: unit, align.
    unsafe {
        let first = base.add(offset);
        first.cast::<usize>().sub(2).write(unit);
        first.cast::<usize>().sub(1).write(align);
        first.cast()
    }
}

/// The unit size and layout of a block from `pcpu_alloc_noprof`.
unsafe fn percpu_block(p: *mut c_void) -> (usize, Layout) {
    // SAFETY: The caller passes a block from `pcpu_alloc_noprof`, with its header.
    let (unit, align) = unsafe {
        (
            p.cast::<usize>().sub(2).read(),
            p.cast::<usize>().sub(1).read(),
        )
    };
    (unit, percpu_layout(unit, align))
}

pub unsafe fn free_percpu(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: The caller passes a block from `pcpu_alloc_noprof`.
    let (_, layout) = unsafe { percpu_block(p) };
    let offset = HEADER.max(layout.align());
    // SAFETY: `p - offset` is the block's base, allocated with `layout`.
    unsafe { std::alloc::dealloc(p.cast::<u8>().sub(offset), layout) };
}

/// The kernel helper for `per_cpu_ptr()`.
pub unsafe fn per_cpu_ptr(p: *mut c_void, cpu: c_uint) -> *mut c_void {
    assert!(cpu < NR_CPUS);
    // SAFETY: The caller passes a block from `pcpu_alloc_noprof`.
    let (unit, _) = unsafe { percpu_block(p) };
    p.cast::<u8>().wrapping_add(unit * cpu as usize).cast()
}

/// The kernel helper for `this_cpu_ptr()`: only with the CPU held, as the kernel's
/// `CONFIG_DEBUG_PREEMPT` checks.
pub unsafe fn this_cpu_ptr(p: *mut c_void) -> *mut c_void {
    assert!(holds(), "this_cpu_ptr() in preemptible code");
    // SAFETY: Forwarded.
    unsafe { per_cpu_ptr(p, CPU.with(Cell::get)) }
}
