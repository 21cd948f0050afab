// SPDX-License-Identifier: GPL-2.0

//! [`BhGuard`]: the context in which a CPU's part of a pool may be used.
//!
//! C header: [`include/linux/bottom_half.h`](srctree/include/linux/bottom_half.h)

use super::ffi::{self, BhEnter};
use core::marker::PhantomData;

/// Proof that the current code is the only code on its CPU that may use per-CPU pool state:
/// bottom halves are disabled, or this is the softirq itself.
///
/// This is the C qmempool's protection: in a softirq (`in_serving_softirq()`) nothing is done,
/// since no other softirq runs on this CPU until it returns and task code on this CPU is not
/// running; anywhere else `local_bh_disable()`, which also disables preemption, so the task
/// neither migrates nor lets another task or softirq of this CPU in. (Not so on `PREEMPT_RT`,
/// where the pool is not built: see the module documentation.) Hard-IRQ handlers are
/// kept out by [`BhGuard::new`] itself: it refuses to make a guard there, and the pool's callers
/// then go to the slab allocator (see the module documentation).
///
/// The guard is `!Send` (it must be dropped on the CPU and in the context that made it) and
/// ends the section when dropped.
///
/// # Invariants
///
/// - IRQs were enabled when the guard was made, and it was not made in hard-IRQ context.
/// - While the guard lives, bottom halves are disabled on this CPU, by the guard (`bh` is true)
///   or because the guard was made while serving a softirq (`bh` is false).
pub struct BhGuard {
    bh: bool,
    _not_send: PhantomData<*mut ()>,
}

impl BhGuard {
    /// Enters a section in which this CPU's pool state may be used.
    ///
    /// Returns [`None`] where that is not allowed: with IRQs disabled, which includes every
    /// hard-IRQ handler (the kernel runs them with IRQs disabled) and code under
    /// `spin_lock_irqsave()` (where `local_bh_enable()` would be a bug, and the bulk slab calls
    /// that refill and drain a pool are not allowed). Not for NMI context, where the slab
    /// allocator may not be used either.
    ///
    /// One call into C, which decides the context: in a softirq it costs two reads; elsewhere it
    /// is `local_bh_disable()`, and on drop `local_bh_enable()` (which runs the softirqs raised
    /// meanwhile).
    ///
    /// # Examples
    ///
    /// ```
    /// use kernel::qmempool::BhGuard;
    ///
    /// // KUnit runs tests in task context with IRQs enabled.
    /// let guard = BhGuard::new();
    /// assert!(guard.is_some());
    /// ```
    #[inline]
    pub fn new() -> Option<Self> {
        // SAFETY: Where bottom halves are disabled here (`Disabled`), the guard records it and
        // the matching enable is in `drop`, in the same task (the guard is `!Send` and the task
        // cannot migrate meanwhile).
        match unsafe { ffi::bh_enter() } {
            // INVARIANT: IRQs are enabled, and bottom halves are now disabled by the guard.
            BhEnter::Disabled => Some(Self {
                bh: true,
                _not_send: PhantomData,
            }),
            // INVARIANT: IRQs are enabled, and a softirq runs with bottom halves disabled.
            BhEnter::InSoftirq => Some(Self {
                bh: false,
                _not_send: PhantomData,
            }),
            BhEnter::IrqsDisabled => None,
        }
    }

    /// Returns the CPU the guard's section runs on.
    #[inline]
    pub fn cpu(&self) -> u32 {
        // With bottom halves disabled (type invariant) the task cannot migrate while the guard
        // lives.
        ffi::cpu_id()
    }
}

/// Ends the section: re-enables bottom halves if the guard disabled them.
///
/// A guard may be dropped inside a section that disabled IRQs after it was made (nothing in
/// the types prevents it); `local_bh_enable()` must not run there, so bottom halves are then
/// re-enabled without running the softirqs raised meanwhile (`_local_bh_enable()`), and those
/// are handed to `ksoftirqd`, as `raise_softirq_irqoff()` does outside interrupt context: they
/// run once the task lets it in, not at some later interrupt's exit. What `local_bh_enable()`
/// would also have done, a reschedule if one is due, waits for the next preemption point, as
/// for any code that enables IRQs.
impl Drop for BhGuard {
    #[inline]
    fn drop(&mut self) {
        if self.bh {
            // SAFETY: The guard disabled bottom halves (`bh` is true: type invariant) and
            // re-enables them once, here, in the same task.
            unsafe { ffi::bh_exit() };
        }
    }
}
