// SPDX-License-Identifier: GPL-2.0

//! Stand-in for `kernel::alloc`: GFP flags, `KBox` and `KVec`.

use crate::bindings;
use core::ops::{BitAnd, BitOr, Deref, DerefMut, Not};

/// Allocation error, as `kernel::alloc::AllocError`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct AllocError;

/// GFP flags, as `kernel::alloc::Flags`.
#[derive(Clone, Copy, PartialEq)]
pub struct Flags(u32);

impl Flags {
    /// The raw `gfp_t` (private to the crate, as in the kernel).
    pub(crate) fn as_raw(self) -> u32 {
        self.0
    }

    /// Whether all bits of `flags` are set.
    pub fn contains(self, flags: Flags) -> bool {
        (self & flags) == flags
    }
}

impl BitOr for Flags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl BitAnd for Flags {
    type Output = Self;
    fn bitand(self, rhs: Self) -> Self {
        Self(self.0 & rhs.0)
    }
}

impl Not for Flags {
    type Output = Self;
    fn not(self) -> Self {
        Self(!self.0)
    }
}

/// The GFP flags of `kernel::alloc::flags`.
pub mod flags {
    use super::{bindings, Flags};

    /// Atomic allocation: does not sleep.
    pub const GFP_ATOMIC: Flags = Flags(bindings::GFP_ATOMIC);
    /// Normal allocation: may sleep and reclaim.
    pub const GFP_KERNEL: Flags = Flags(bindings::GFP_KERNEL);
    /// Does not sleep and does not warn.
    pub const GFP_NOWAIT: Flags = Flags(bindings::GFP_NOWAIT);
    /// Suppress allocation failure reports.
    pub const __GFP_NOWARN: Flags = Flags(bindings::__GFP_NOWARN);
}

/// A heap allocation with the `kernel::alloc::KBox` API used by the shared code and doctests.
pub struct KBox<T>(Box<T>);

impl<T> KBox<T> {
    /// Allocates and moves `x` in.
    pub fn new(x: T, _flags: Flags) -> Result<Self, AllocError> {
        Ok(Self(Box::new(x)))
    }

    /// Allocates uninitialised memory for a `T`.
    pub fn new_uninit(_flags: Flags) -> Result<KBox<core::mem::MaybeUninit<T>>, AllocError> {
        Ok(KBox(Box::new_uninit()))
    }
}

impl<T> KBox<core::mem::MaybeUninit<T>> {
    /// Declares the contents initialised.
    ///
    /// # Safety
    ///
    /// The contents must be a valid `T`.
    pub unsafe fn assume_init(self) -> KBox<T> {
        // SAFETY: Forwarded from the caller.
        KBox(unsafe { self.0.assume_init() })
    }
}

impl<T> Deref for KBox<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for KBox<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// A growable array with the part of `kernel::alloc::KVec`'s API that 6.12 and 7.x share (no
/// `pop`: 6.12 has none).
pub struct KVec<T>(Vec<T>);

impl<T> KVec<T> {
    /// Creates an empty vector, allocating nothing.
    pub const fn new() -> Self {
        Self(Vec::new())
    }

    /// Creates an empty vector with room for `capacity` elements.
    pub fn with_capacity(capacity: usize, _flags: Flags) -> Result<Self, AllocError> {
        Ok(Self(Vec::with_capacity(capacity)))
    }

    /// Appends `v`, growing the vector if needed.
    pub fn push(&mut self, v: T, _flags: Flags) -> Result<(), AllocError> {
        self.0.push(v);
        Ok(())
    }
}

impl<T> Default for KVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Deref for KVec<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> DerefMut for KVec<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<T> IntoIterator for KVec<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}
