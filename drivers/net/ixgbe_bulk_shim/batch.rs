// SPDX-License-Identifier: GPL-2.0

//! [`SkbFreeBatch`]: completed TX skbs gathered one at a time and freed in bulk.

use crate::skb::DoneSkb;
use core::ffi::{c_int, c_uint};
use core::mem::MaybeUninit;
use core::ptr::addr_of_mut;
use kernel::bindings;

/// Completed TX skbs, gathered one at a time and freed together, up to `N` at a time.
///
/// A NIC driver's TX cleanup adds each skb the hardware has sent ([`SkbFreeBatch::add`]); the batch
/// frees what it holds with one `napi_consume_skb_bulk()` when `N` are gathered and when the
/// cleanup loop ends ([`SkbFreeBatch::flush`], also on drop). That call releases each skb's data as
/// `napi_consume_skb()` does and puts the heads into the per-CPU NAPI skb cache in one go (see
/// `net/core/skbuff.c`). With a NAPI budget of 0 (netpoll), each skb is freed at once instead,
/// as `napi_consume_skb()` does: that context may be a hard IRQ or have IRQs off, where the bulk
/// path is not allowed.
///
/// A batch started with `bulk == false` ([`SkbFreeBatch::init`]) gathers nothing either: each skb
/// is freed as it is added, with `napi_consume_skb(skb, budget)`, which is what the drivers do
/// without the shim (the shim's run-time switch, `ixgbe_bulk_shim.enable`). The choice is made
/// once per batch, so one cleanup never mixes the two ways.
///
/// The type is `repr(C)` with the layout of the C `struct ixgbe_bulk_shim`
/// ([`include/net/ixgbe_bulk_shim.h`](srctree/include/net/ixgbe_bulk_shim.h)) for
/// `N == IXGBE_BULK_SHIM_SIZE`, checked when this file is compiled, so that a C driver can keep
/// a batch on its stack. The header's inline `ixgbe_bulk_shim_add()` does the common case of
/// [`SkbFreeBatch::add`] itself, on the C struct, and keeps the invariants below as `add` does: it
/// writes `skbs[count]` and increments `count` only while `count < N - 1`, with a non-NULL skb
/// whose reference it passes to the batch.
///
/// Contexts: with a non-zero budget, only in the NAPI poll that was given that budget (softirq,
/// IRQs enabled); with a budget of 0, any.
///
/// # Invariants
///
/// - Either `count == AT_ONCE` (the batch frees each skb as it is added and holds none), or
///   `count < N` between calls: a full batch is flushed before [`SkbFreeBatch::add`] returns.
/// - If `count != AT_ONCE`, `skbs[..count]` are initialised; the batch owns them.
/// - If `budget != 0`, the batch is used only within a NAPI poll that was given `budget`;
///   if `budget == 0`, `count == AT_ONCE`.
#[repr(C)]
pub(crate) struct SkbFreeBatch<const N: usize> {
    count: c_uint,
    budget: c_int,
    skbs: [MaybeUninit<DoneSkb>; N],
}

/// The `count` of a batch that frees each skb as it is added (a NAPI budget of 0, or the shim
/// switched off); never a count, as `N < AT_ONCE` (checked in [`SkbFreeBatch::init`]).
const AT_ONCE: c_uint = c_uint::MAX;

impl<const N: usize> SkbFreeBatch<N> {
    /// Makes the memory at `slot` an empty batch for a cleanup with the NAPI budget `budget`:
    /// one that gathers skbs and frees them in bulk if `bulk` is true and `budget != 0`, one that
    /// frees each skb as it is added otherwise.
    ///
    /// Only the two counters are written: the skb slots are left as they are, so a batch on a
    /// C stack costs two stores to start.
    ///
    /// # Safety
    ///
    /// - `slot` is valid for writes of a `Self` and aligned for it; whatever it held is
    ///   forgotten (not dropped).
    /// - If `budget != 0`, it is the budget the NAPI core gave the poll function that uses the
    ///   batch, and the batch is used (added to, flushed, dropped) only within that poll.
    #[inline]
    pub(crate) unsafe fn init(slot: *mut Self, budget: c_int, bulk: bool) {
        const { assert!(N > 0, "a batch needs room for at least one skb") };
        const {
            assert!(
                N < AT_ONCE as usize,
                "the count is a C unsigned int, AT_ONCE excluded"
            )
        };
        let count = if bulk && budget != 0 { 0 } else { AT_ONCE };
        // SAFETY: `slot` is valid for writes and aligned (the caller's contract); the fields are
        // written through raw pointers, without reading or dropping what was there.
        // INVARIANT: `count` is 0 (so `count < N` and no slot is initialised) or `AT_ONCE`, which
        // it is when `budget == 0`; the budget rule is the caller's contract.
        unsafe {
            addr_of_mut!((*slot).count).write(count);
            addr_of_mut!((*slot).budget).write(budget);
        }
    }

    /// Adds `skb`: frees it at once if the batch frees each skb as it comes (a budget of 0, or
    /// started with `bulk == false`), else gathers it and frees the whole batch if it is full.
    #[inline]
    pub(crate) fn add(&mut self, skb: DoneSkb) {
        let count = self.count as usize;
        // `AT_ONCE` is no index of `skbs` either (`N < AT_ONCE`), so one comparison tells both
        // cases apart.
        let Some(slot) = self.skbs.get_mut(count) else {
            // `count == AT_ONCE`: `count < N` otherwise (type invariant).
            // SAFETY: If `budget != 0`, this is the NAPI poll that was given `budget` (type
            // invariant); a budget of 0 allows any context.
            unsafe { skb.napi_consume(self.budget) };
            return;
        };
        slot.write(skb);
        // INVARIANT: `skbs[count]` was just written; the batch owns one more skb. `count < N`,
        // so the sum fits in a `c_uint` and is not `AT_ONCE`.
        self.count += 1;
        if count + 1 == N {
            // INVARIANT: flushed, so `count == 0 < N` again.
            self.flush();
        }
    }

    /// Frees the gathered skbs now, with one `napi_consume_skb_bulk()`.
    #[inline]
    pub(crate) fn flush(&mut self) {
        let count = self.count;
        if count == 0 || count == AT_ONCE {
            return;
        }
        // INVARIANT: The skbs are handed over to the kernel below; the batch owns none after.
        self.count = 0;
        // SAFETY:
        // - `skbs[..count]` are initialised `DoneSkb`s (type invariant): live skbs on each of
        //   which the batch owns a reference. `DoneSkb` is `repr(transparent)` over a non-null
        //   pointer, so the slots are a `struct sk_buff **` array of `count` entries. The function
        //   gives every reference up; the slots are not read again before they are written
        //   (`count` is 0 now).
        // - `0 < count <= N` (`N` when `add` fills the batch), so `count != AT_ONCE`, hence
        //   `budget != 0` and this is the NAPI poll that was given `budget` (type invariant):
        //   softirq context with IRQs enabled, as the function requires.
        unsafe {
            bindings::napi_consume_skb_bulk(self.skbs.as_mut_ptr().cast(), count, self.budget)
        };
        crate::count_batch(count);
    }
}

impl<const N: usize> Drop for SkbFreeBatch<N> {
    #[inline]
    fn drop(&mut self) {
        self.flush();
    }
}

/// C's `struct ixgbe_bulk_shim`, the batch the C drivers keep on their stacks, as Rust sees it.
pub(crate) type IxgbeBulkShim = SkbFreeBatch<{ bindings::IXGBE_BULK_SHIM_SIZE as usize }>;

// `IxgbeBulkShim` is `struct ixgbe_bulk_shim` as C sees it: same size, alignment and field offsets.
const _: () = {
    use core::mem::{align_of, offset_of, size_of};
    type C = bindings::ixgbe_bulk_shim;
    assert!(size_of::<IxgbeBulkShim>() == size_of::<C>());
    assert!(align_of::<IxgbeBulkShim>() == align_of::<C>());
    assert!(offset_of!(IxgbeBulkShim, count) == offset_of!(C, count));
    assert!(offset_of!(IxgbeBulkShim, budget) == offset_of!(C, budget));
    assert!(offset_of!(IxgbeBulkShim, skbs) == offset_of!(C, skbs));
    assert!(size_of::<DoneSkb>() == size_of::<*mut bindings::sk_buff>());
};
