// SPDX-License-Identifier: GPL-2.0

//! Stand-in for `kernel::alloc`: GFP flags, the `Allocator` trait, `Box` (`KBox`) and `KVec`.

use crate::bindings;
use core::alloc::Layout;
use core::fmt;
use core::marker::PhantomData;
use core::mem::{ManuallyDrop, MaybeUninit};
use core::ops::{BitAnd, BitOr, Deref, DerefMut, Not};
use core::ptr::NonNull;

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
    /// Zero the allocated memory.
    pub const __GFP_ZERO: Flags = Flags(bindings::__GFP_ZERO);
}

/// The kernel's `Allocator` trait, as 6.12 has it (6.18 adds a NUMA node argument to `alloc`
/// and `realloc` and a `MIN_ALIGN` constant; the shared code implements both, by `cfg`).
///
/// # Safety
///
/// As the kernel's: an allocation stays valid until it is freed, and any pointer to one may be
/// passed to any function of the same allocator.
pub unsafe trait Allocator {
    /// Allocates memory for `layout`: `realloc` with `None`.
    fn alloc(layout: Layout, flags: Flags) -> Result<NonNull<[u8]>, AllocError> {
        // SAFETY: `None` asks for a new allocation; `old_layout` is then ignored.
        unsafe { Self::realloc(None, layout, Layout::new::<()>(), flags) }
    }

    /// Reallocates `ptr` (or allocates, for `None`) for `layout`; a size of 0 frees.
    ///
    /// # Safety
    ///
    /// `ptr`, if `Some`, is an allocation of this allocator made with `old_layout` (or any
    /// pointer if `old_layout` is zero-sized).
    unsafe fn realloc(
        ptr: Option<NonNull<u8>>,
        layout: Layout,
        old_layout: Layout,
        flags: Flags,
    ) -> Result<NonNull<[u8]>, AllocError>;

    /// Frees `ptr`, allocated with `layout`.
    ///
    /// # Safety
    ///
    /// As `realloc`'s, and the memory is not used again.
    unsafe fn free(ptr: NonNull<u8>, layout: Layout) {
        // SAFETY: Forwarded from the caller; a size of 0 frees.
        let _ = unsafe { Self::realloc(Some(ptr), Layout::new::<()>(), layout, Flags(0)) };
    }
}

/// `kmalloc`, from the process's heap here.
pub struct Kmalloc;

// SAFETY: Allocations of `std::alloc` stay valid until freed with their layout.
unsafe impl Allocator for Kmalloc {
    unsafe fn realloc(
        ptr: Option<NonNull<u8>>,
        layout: Layout,
        old_layout: Layout,
        flags: Flags,
    ) -> Result<NonNull<[u8]>, AllocError> {
        let old = ptr.filter(|_| old_layout.size() != 0);
        let new = if layout.size() == 0 {
            // SAFETY: An alignment is never 0.
            unsafe {
                NonNull::new_unchecked(core::ptr::null_mut::<u8>().wrapping_add(layout.align()))
            }
        } else {
            // SAFETY: `layout` has a non-zero size.
            let p = unsafe {
                if flags.contains(flags::__GFP_ZERO) {
                    std::alloc::alloc_zeroed(layout)
                } else {
                    std::alloc::alloc(layout)
                }
            };
            let p = NonNull::new(p).ok_or(AllocError)?;
            if let Some(old) = old {
                let n = layout.size().min(old_layout.size());
                // SAFETY: Both are valid for `n` bytes and distinct allocations.
                unsafe { core::ptr::copy_nonoverlapping(old.as_ptr(), p.as_ptr(), n) };
            }
            p
        };
        if let Some(old) = old {
            // SAFETY: `old` was allocated with `old_layout` (the caller's contract).
            unsafe { std::alloc::dealloc(old.as_ptr(), old_layout) };
        }
        Ok(NonNull::slice_from_raw_parts(new, layout.size()))
    }
}

/// The kernel's `Box<T, A>`: one `T` in memory from the allocator `A`, freed to it on drop.
///
/// The part of 6.12's API (and 7.x's, which has the same) that the shared code and doctests
/// use. As the kernel's, a panic in `T::drop` leaves the memory unfreed.
pub struct Box<T: ?Sized, A: Allocator>(NonNull<T>, PhantomData<(A, T)>);

/// `Box` with `Kmalloc`.
pub type KBox<T> = Box<T, Kmalloc>;

// SAFETY: A `Box` owns its `T`.
unsafe impl<T: Send + ?Sized, A: Allocator> Send for Box<T, A> {}
// SAFETY: `&Box` only gives `&T`.
unsafe impl<T: Sync + ?Sized, A: Allocator> Sync for Box<T, A> {}

impl<T, A: Allocator> Box<T, A> {
    /// Allocates and moves `x` in.
    pub fn new(x: T, flags: Flags) -> Result<Self, AllocError> {
        Ok(Self::new_uninit(flags)?.write(x))
    }

    /// Allocates uninitialised memory for a `T`.
    pub fn new_uninit(flags: Flags) -> Result<Box<MaybeUninit<T>, A>, AllocError> {
        let ptr = A::alloc(Layout::new::<MaybeUninit<T>>(), flags)?;
        Ok(Box(ptr.cast(), PhantomData))
    }

    /// Takes ownership of a pointer from [`Box::into_raw`].
    ///
    /// # Safety
    ///
    /// `raw` must come from `Box::<T, A>::into_raw` (or be memory of `A` for a `T`, holding a
    /// valid one), owned by nobody else.
    pub const unsafe fn from_raw(raw: *mut T) -> Self {
        // SAFETY: Not null, by the caller's contract.
        Self(unsafe { NonNull::new_unchecked(raw) }, PhantomData)
    }

    /// Gives up ownership without freeing.
    pub fn into_raw(b: Self) -> *mut T {
        ManuallyDrop::new(b).0.as_ptr()
    }

    /// Moves the value out and frees the memory.
    pub fn into_inner(b: Self) -> T {
        let b = ManuallyDrop::new(b);
        // SAFETY: The box holds a valid `T`, read once, its memory freed just after.
        let value = unsafe { b.0.as_ptr().read() };
        // SAFETY: The memory was allocated by `A` for a `T`.
        unsafe { A::free(b.0.cast(), Layout::new::<T>()) };
        value
    }
}

impl<T, A: Allocator> Box<MaybeUninit<T>, A> {
    /// Writes `value` and returns the initialised box.
    pub fn write(self, value: T) -> Box<T, A> {
        let this = ManuallyDrop::new(self);
        // SAFETY: The memory is valid for a `T`.
        unsafe { this.0.as_ptr().cast::<T>().write(value) };
        Box(this.0.cast(), PhantomData)
    }

    /// Declares the contents initialised.
    ///
    /// # Safety
    ///
    /// The contents must be a valid `T`.
    pub unsafe fn assume_init(self) -> Box<T, A> {
        let this = ManuallyDrop::new(self);
        Box(this.0.cast(), PhantomData)
    }
}

impl<T: ?Sized, A: Allocator> Deref for Box<T, A> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: The box holds a valid `T`.
        unsafe { self.0.as_ref() }
    }
}

impl<T: ?Sized, A: Allocator> DerefMut for Box<T, A> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: As in `deref`, and `&mut self` is unique.
        unsafe { self.0.as_mut() }
    }
}

impl<T: ?Sized + fmt::Debug, A: Allocator> fmt::Debug for Box<T, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized, A: Allocator> Drop for Box<T, A> {
    fn drop(&mut self) {
        // SAFETY: The box holds a valid `T`.
        let layout = Layout::for_value::<T>(unsafe { self.0.as_ref() });
        // SAFETY: As above; dropped once.
        unsafe { core::ptr::drop_in_place(self.0.as_ptr()) };
        // SAFETY: Allocated by `A` with `layout`.
        unsafe { A::free(self.0.cast(), layout) };
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
