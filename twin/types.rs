// SPDX-License-Identifier: GPL-2.0

//! Stand-in for `kernel::types::Opaque`.

use core::cell::UnsafeCell;
use core::marker::PhantomPinned;
use core::mem::MaybeUninit;

/// A C object that Rust never reads or writes directly, as `kernel::types::Opaque`.
#[repr(transparent)]
pub struct Opaque<T> {
    value: UnsafeCell<MaybeUninit<T>>,
    _pin: PhantomPinned,
}

impl<T> Opaque<T> {
    /// Returns a raw pointer to the wrapped C object.
    pub const fn get(&self) -> *mut T {
        UnsafeCell::raw_get(&self.value).cast::<T>()
    }
}
