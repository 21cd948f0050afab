// SPDX-License-Identifier: GPL-2.0

//! [`DoneSkb`]: an skb whose transmission is complete, with the driver's reference to it.

use core::ffi::c_int;
use core::mem::ManuallyDrop;
use core::ptr::NonNull;
use kernel::bindings;

/// An skb the device has finished sending, with the one reference the driver held for it.
///
/// It is the thin unsafe layer between the driver's raw `struct sk_buff *` and
/// [`SkbFreeBatch`](crate::batch::SkbFreeBatch): made from a raw pointer once, in `unsafe` code
/// that vouches for the reference, and then only moved. Dropping it gives the reference up as
/// `dev_consume_skb_any()` does, which is allowed in any context; a batch instead hands many at
/// once to `napi_consume_skb_bulk()`.
///
/// It has the layout of a `struct sk_buff *` that is never NULL, so an array of them is the
/// `struct sk_buff **` array the C bulk functions take.
///
/// # Invariants
///
/// `self.0` points to a live `struct sk_buff` on which this value owns one reference, which
/// nobody else gives up.
#[repr(transparent)]
pub(crate) struct DoneSkb(NonNull<bindings::sk_buff>);

impl DoneSkb {
    /// Takes over the reference the caller holds on the skb `ptr` points to; `None` for NULL.
    ///
    /// # Safety
    ///
    /// `ptr` is NULL or points to a live `struct sk_buff` on which the caller owns one
    /// reference, which it passes on and does not use again.
    #[inline]
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::sk_buff) -> Option<Self> {
        // INVARIANT: The caller passes its reference on a live skb.
        NonNull::new(ptr).map(Self)
    }

    /// Gives the reference up with `napi_consume_skb(skb, budget)`, as a driver's TX cleanup
    /// does for each skb without the shim.
    ///
    /// # Safety
    ///
    /// If `budget != 0`, this runs in the NAPI poll that was given `budget` (softirq, IRQs
    /// enabled). With a budget of 0 any context is fine (dropping the value does the same).
    #[inline]
    pub(crate) unsafe fn napi_consume(self, budget: c_int) {
        // Given up below, not on drop.
        let this = ManuallyDrop::new(self);
        // SAFETY:
        // - `this.0` is a live skb on which `this` owns a reference (type invariant); it is given
        //   up once, here, and `this` is never dropped.
        // - A non-zero `budget` comes from the NAPI poll this runs in (the caller's contract), the
        //   context `napi_consume_skb()` then requires; with 0 it is allowed in any context.
        unsafe { bindings::napi_consume_skb(this.0.as_ptr(), budget) };
    }
}

impl Drop for DoneSkb {
    #[inline]
    fn drop(&mut self) {
        // SAFETY:
        // - `self.0` is a live skb on which `self` owns a reference (type invariant); it is given
        //   up once, here, and `self` is gone after.
        // - A budget of 0 makes `napi_consume_skb()` do what `dev_consume_skb_any()` does, which
        //   is allowed in any context (hard IRQ, IRQs off, netpoll).
        unsafe { bindings::napi_consume_skb(self.0.as_ptr(), 0) };
    }
}
