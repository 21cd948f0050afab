// SPDX-License-Identifier: GPL-2.0

//! [`ObjSlice`]: the objects of an `ObjArray` or of a `SlotObjs`, seen as a slice.

use core::ptr::{self, NonNull};

/// The objects an [`ObjArray`] or a [`SlotObjs`] owns, reached through a borrow of their owner:
/// both dereference to it, as a `Vec<T>` does to `[T]`.
///
/// It gives references to the objects, never access to their pointers: a borrow of it cannot
/// put an object of another cache, or a freed one, in the owner's array.
///
/// [`ObjArray`]: super::ObjArray
/// [`SlotObjs`]: super::SlotObjs
///
/// # Invariants
///
/// Every pointer is a distinct live object holding a valid `T`, owned by the value this is
/// borrowed from, for as long as the borrow lasts.
#[repr(transparent)]
pub struct ObjSlice<T>([NonNull<T>]);

impl<T> ObjSlice<T> {
    /// Views `ptrs` as objects.
    ///
    /// # Safety
    ///
    /// Every pointer in `ptrs` must be a distinct live object holding a valid `T`, owned by the
    /// owner of the array, which neither frees nor changes them while the borrow lasts.
    #[inline]
    pub(super) unsafe fn from_ptrs(ptrs: &[NonNull<T>]) -> &Self {
        // SAFETY: `ObjSlice<T>` is `repr(transparent)` over `[NonNull<T>]`; the invariant is the
        // caller's guarantee.
        unsafe { &*(ptr::from_ref(ptrs) as *const Self) }
    }

    /// Views `ptrs` as objects, for unique access to them.
    ///
    /// # Safety
    ///
    /// As for [`ObjSlice::from_ptrs`].
    #[inline]
    pub(super) unsafe fn from_ptrs_mut(ptrs: &mut [NonNull<T>]) -> &mut Self {
        // SAFETY: As in `from_ptrs`; the borrow is unique.
        unsafe { &mut *(ptr::from_mut(ptrs) as *mut Self) }
    }

    /// Returns the number of objects.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Returns `true` if there is no object.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Returns a reference to object `i`, if `i < len`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        // SAFETY: Each pointer is a live object holding a valid `T`, owned by the owner this is
        // borrowed from (type invariant); the shared borrow covers it.
        self.0.get(i).map(|p| unsafe { p.as_ref() })
    }

    /// Returns a mutable reference to object `i`, if `i < len`.
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        // SAFETY: As in `get`; the objects are distinct, and `&mut self` makes access unique.
        self.0.get(i).map(|p| unsafe { &mut *p.as_ptr() })
    }

    /// Iterates over the objects.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        // SAFETY: As in `get`.
        self.0.iter().map(|p| unsafe { p.as_ref() })
    }

    /// Iterates mutably over the objects.
    #[inline]
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        // SAFETY: As in `get_mut`: distinct objects, unique access through `&mut self`.
        self.0.iter().map(|p| unsafe { &mut *p.as_ptr() })
    }
}
