// SPDX-License-Identifier: GPL-2.0

//! Bulk free of completed TX skbs for NIC drivers written in C (ixgbe, igb).
//!
//! C header: [`include/net/ixgbe_bulk_shim.h`](srctree/include/net/ixgbe_bulk_shim.h)
//!
//! A driver's TX cleanup keeps a `struct ixgbe_bulk_shim` on its stack, starts it with the NAPI
//! budget it was given ([`ixgbe_bulk_shim_init`]), adds each skb the hardware has sent
//! (`ixgbe_bulk_shim_add()`, instead of `napi_consume_skb()`), and flushes it when the cleanup loop
//! ends ([`ixgbe_bulk_shim_flush`]). `ixgbe_bulk_shim_add()` is inline in the C header for its
//! common case, storing the skb in a free slot other than the last, so that a cleanup pays no call
//! per skb; it calls [`__ixgbe_bulk_shim_add`] for everything else. The batch
//! ([`batch::SkbFreeBatch`]) frees `IXGBE_BULK_SHIM_SIZE` skbs at a time with one
//! `napi_consume_skb_bulk()`; with a budget of 0 (netpoll) it frees each skb at once, as
//! `napi_consume_skb()` does.
//!
//! A run-time switch, `ixgbe_bulk_shim.enable` (a boolean parameter, `Y` by default, at
//! `/sys/module/ixgbe_bulk_shim/parameters/enable`, defined in `ixgbe_bulk_shim_syms.c`), turns
//! the bulk free off: a cleanup started while it is `N` frees each skb as it is added, with
//! `napi_consume_skb()` and the cleanup's budget, as the drivers do without the shim. It is read
//! once per cleanup, in [`ixgbe_bulk_shim_init`], so a cleanup never mixes the two; with it,
//! both ways run in the same boot of the same kernel.
//!
//! This is the TX-completion bulk free of the ixgbe bulk-free RFC ("net: bulk free of SKBs
//! during ixgbe TX completion", 2015, which bulk-freed up to 32 skbs per cleanup), on top of
//! the per-CPU NAPI skb cache that the RFC's idea became.
//!
//! # Contexts
//!
//! - [`ixgbe_bulk_shim_init`]: any.
//! - [`__ixgbe_bulk_shim_add`], [`ixgbe_bulk_shim_flush`], budget != 0: the NAPI poll that was
//!   given the budget: softirq, IRQs enabled.
//! - [`__ixgbe_bulk_shim_add`], [`ixgbe_bulk_shim_flush`], budget 0: any (each skb is freed as
//!   by `dev_consume_skb_any()`).
//!
//! The switch changes nothing here: switched off, a non-zero budget still means the NAPI poll
//! (`napi_consume_skb()` with that budget needs it too).
//!
//! The batch holds skbs only between calls of one cleanup; it must be flushed before the
//! cleanup returns, so nothing is left behind when the device goes down.

mod batch;
mod skb;

use batch::IxgbeBulkShim;
use core::ffi::c_int;
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::bindings;
use skb::DoneSkb;

extern "C" {
    /// The run-time switch, `ixgbe_bulk_shim.enable`: a C `bool` in `ixgbe_bulk_shim_syms.c`,
    /// which sysfs writes at any time, so interior-mutable here (`AtomicBool` has `bool`'s size,
    /// alignment and valid values).
    static ixgbe_bulk_shim_enable: AtomicBool;
}

/// Counts a bulk free of `skbs` skbs in this CPU's counters (`ixgbe_bulk_shim_syms.c`, read
/// at `/sys/module/ixgbe_bulk_shim/parameters/batches`).
#[inline]
pub(crate) fn count_batch(skbs: core::ffi::c_uint) {
    // SAFETY: The function only adds to this CPU's counters (`this_cpu_add()`), which is sound
    // in any context.
    unsafe { bindings::ixgbe_bulk_shim_count_batch(skbs) };
}

/// Whether a cleanup starting now frees in bulk: `ixgbe_bulk_shim.enable`, read once.
#[inline]
fn bulk_enabled() -> bool {
    // SAFETY: `ixgbe_bulk_shim_enable` is a C `bool` defined in `ixgbe_bulk_shim_syms.c`, valid
    // and aligned for the kernel's lifetime, holding 0 or 1 (only `param_set_bool()` writes it,
    // with a `bool` store, the only access besides this load).
    let switch = unsafe { &ixgbe_bulk_shim_enable };
    // A relaxed load is C's `READ_ONCE()`; the value read is used for the whole cleanup.
    switch.load(Ordering::Relaxed)
}

/// Starts an empty batch in `b` for a TX cleanup given the NAPI budget `budget`.
///
/// The batch frees in bulk if `ixgbe_bulk_shim.enable` is set now, each skb as it is added
/// otherwise (and with a budget of 0), for the whole cleanup.
///
/// # Safety
///
/// - `b` points to a `struct ixgbe_bulk_shim` that the caller uses for nothing else until its
///   last [`ixgbe_bulk_shim_flush`].
/// - If `budget != 0`, it is the budget the NAPI core gave the poll function that calls this,
///   and the batch is added to and flushed only within that poll.
#[no_mangle]
pub unsafe extern "C" fn ixgbe_bulk_shim_init(b: *mut bindings::ixgbe_bulk_shim, budget: c_int) {
    // SAFETY: `IxgbeBulkShim` has the layout of `struct ixgbe_bulk_shim` (checked in `batch.rs`),
    // so `b` is valid and aligned for it; the budget rule is this function's own contract.
    unsafe { IxgbeBulkShim::init(b.cast(), budget, bulk_enabled()) };
}

/// Adds the completed skb `skb` to the batch `b`, which now owns the caller's reference.
///
/// Frees the skb at once if the batch frees each skb as it is added (a budget of 0, or the shim
/// switched off), and the whole batch if it is full. A NULL `skb` is ignored.
///
/// This is the whole add; the C header's inline `ixgbe_bulk_shim_add()` does its common case
/// itself (a non-NULL `skb` and a free slot other than the last: the store and the count) and
/// calls this for the rest.
///
/// # Safety
///
/// - `b` was started by [`ixgbe_bulk_shim_init`], and this is called in the context its budget
///   allows (see the module documentation).
/// - `skb` is NULL or an skb on which the caller owns one reference, which it gives up (as it
///   would with `napi_consume_skb()`).
#[no_mangle]
pub unsafe extern "C" fn __ixgbe_bulk_shim_add(
    b: *mut bindings::ixgbe_bulk_shim,
    skb: *mut bindings::sk_buff,
) {
    // SAFETY: `b` holds a batch started by `ixgbe_bulk_shim_init` (the caller's contract), of
    // the layout of `IxgbeBulkShim`, and nobody else uses it during this call.
    let batch = unsafe { &mut *b.cast::<IxgbeBulkShim>() };
    // SAFETY: The caller gives its reference on `skb` up (or `skb` is NULL).
    if let Some(skb) = unsafe { DoneSkb::from_raw(skb) } {
        batch.add(skb);
    }
}

/// Frees the skbs gathered in the batch `b`, in bulk; `b` is empty after.
///
/// # Safety
///
/// `b` was started by [`ixgbe_bulk_shim_init`], and this is called in the context its budget
/// allows (see the module documentation).
#[no_mangle]
pub unsafe extern "C" fn ixgbe_bulk_shim_flush(b: *mut bindings::ixgbe_bulk_shim) {
    // SAFETY: As in `__ixgbe_bulk_shim_add`.
    let batch = unsafe { &mut *b.cast::<IxgbeBulkShim>() };
    batch.flush();
}
