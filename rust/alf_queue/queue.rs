// SPDX-License-Identifier: GPL-2.0

//! What the queues have alike, written once: `queue_basics!` gives [`MpmcQueue`],
//! [`SpscQueue`] and [`StampQueue`] `new`, `capacity`, `is_empty`, `Default` and `Debug`;
//! `queue_common!` gives the first two, one ring ([`Ring`]) each, the rest of their
//! constructors and their `len`.
//!
//! [`MpmcQueue`] and [`SpscQueue`] are one ring run by different protocols; apart from the
//! protocol of their operations and what is safe to call, they are built, sized and inspected
//! alike.
//!
//! [`MpmcQueue`]: super::MpmcQueue
//! [`SpscQueue`]: super::SpscQueue
//! [`StampQueue`]: super::StampQueue
//! [`Ring`]: super::ring::Ring

/// Implements `new`, `capacity`, `is_empty`, `Default` and `Debug` of `$Queue`, a
/// `struct $Queue<T, const N: usize>` with a `with_start_index(start: u32)` constructor
/// (`const` but under loom) and a `len` method, whose `N` must be a power of two in
/// `2 ..= $max`.
macro_rules! queue_basics {
    ($Queue:ident, max: $max:literal) => {
        impl<T, const N: usize> $Queue<T, N> {
            /// Creates an empty queue.
            ///
            #[doc = concat!("Fails to compile unless `N` is a power of two in `2 ..= ", $max, "`.")]
            #[cfg(not(loom))]
            #[inline]
            pub const fn new() -> Self {
                Self::with_start_index(0)
            }

            /// Creates an empty queue (loom build: not `const`).
            #[cfg(loom)]
            pub fn new() -> Self {
                Self::with_start_index(0)
            }

            /// Returns `N`, the number of slots.
            #[inline]
            pub const fn capacity(&self) -> usize {
                N
            }

            /// Returns `true` if the queue held no item when looked at; see
            /// [`len`](Self::len).
            #[inline]
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
        }

        impl<T, const N: usize> Default for $Queue<T, N> {
            #[inline]
            fn default() -> Self {
                Self::new()
            }
        }

        impl<T, const N: usize> core::fmt::Debug for $Queue<T, N> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($Queue))
                    .field("capacity", &N)
                    .field("len", &self.len())
                    .finish()
            }
        }
    };
}
pub(crate) use queue_basics;

/// Implements the constructors and `len` of `$Queue`, and through [`queue_basics!`] its `new`,
/// `capacity`, `is_empty`, `Default` and `Debug`: `$Queue` is a
/// `struct $Queue<T, const N: usize> { ring: Ring<T, N> }` whose consumer side runs the
/// multi-consumer protocol if `$multi` (which [`Ring::len`] must know). `Ring` is the caller's
/// name for it, and `super::queue` the path of this module.
///
/// The `# Examples` sections given after `with_start_index:` and `init_in_place:` end the docs
/// of those methods: each type shows its own use.
///
/// [`Ring::len`]: super::ring::Ring::len
macro_rules! queue_common {
    (
        $Queue:ident, multi: $multi:literal,
        with_start_index: { $(#[$with_start_index:meta])* },
        init_in_place: { $(#[$init_in_place:meta])* } $(,)?
    ) => {
        super::queue::queue_basics!($Queue, max: "2^31");

        impl<T, const N: usize> $Queue<T, N> {
            /// Creates an empty queue whose free-running indices start at `start`.
            ///
            /// The queue behaves exactly like a new one; only the index values differ. This is
            /// for tests that must cross the `u32` wrap-around of the indices quickly and for
            /// reproducing an index state seen elsewhere; normal users want
            /// [`new`](Self::new).
            ///
            $(#[$with_start_index])*
            #[cfg(not(loom))]
            #[inline]
            pub const fn with_start_index(start: u32) -> Self {
                Self {
                    ring: Ring::new(start),
                }
            }

            /// Creates an empty queue whose indices start at `start` (loom build: not `const`).
            #[cfg(loom)]
            pub fn with_start_index(start: u32) -> Self {
                Self {
                    ring: Ring::new(start),
                }
            }

            /// Initialises an empty queue in `slot`, writing only its index words.
            ///
            /// This is how to build a queue too large for the stack: allocate uninitialised
            #[doc = concat!(
                " memory (for instance `KBox::<", stringify!($Queue),
                "<_, 1024>>::new_uninit(GFP_KERNEL)`),"
            )]
            /// initialise it here, then `assume_init` it. The `N` slots are not touched (an
            /// empty slot is uninitialised memory), so this costs the same for any `N`.
            ///
            /// When this returns, `slot` holds an initialised queue and `slot.assume_init()`
            /// and its relatives are sound. Whatever `slot` held before is overwritten without
            /// being dropped. If `slot` is then dropped as a `MaybeUninit` the queue's
            /// destructor does not run, and the items it holds at that point are leaked (not
            /// dropped).
            ///
            $(#[$init_in_place])*
            #[inline]
            pub fn init_in_place(slot: &mut core::mem::MaybeUninit<Self>) -> &mut Self {
                Self::init_in_place_with_start_index(slot, 0)
            }

            /// Initialises an empty queue in `slot` with its indices at `start`.
            ///
            /// [`init_in_place`](Self::init_in_place) combined with
            /// [`with_start_index`](Self::with_start_index), for the same testing purposes.
            #[inline]
            pub fn init_in_place_with_start_index(
                slot: &mut core::mem::MaybeUninit<Self>,
                start: u32,
            ) -> &mut Self {
                let ptr = slot.as_mut_ptr();
                // SAFETY: `ptr` comes from a `&mut MaybeUninit<Self>`, so it is valid for
                // writes and aligned, and so is the pointer to its only field.
                unsafe { Ring::init_raw(core::ptr::addr_of_mut!((*ptr).ring), start) };
                // SAFETY: `init_raw` initialised `ring`, the only field.
                unsafe { slot.assume_init_mut() }
            }

            /// Returns the number of items in the queue.
            ///
            /// Under concurrency this is a snapshot that may be stale at once, and is clamped
            /// to `0 ..= N`.
            #[inline]
            pub fn len(&self) -> usize {
                self.ring.len::<$multi>()
            }
        }
    };
}
pub(crate) use queue_common;
