// SPDX-License-Identifier: GPL-2.0

//! Typed slab caches with the bulk allocation API.
//!
//! C header: [`include/linux/slab.h`](srctree/include/linux/slab.h)
//!
//! The slab allocator hands out fixed-size objects from per-type caches (`struct kmem_cache`).
//! Besides one object at a time, it can allocate and free many objects in one call
//! (`kmem_cache_alloc_bulk` / `kmem_cache_free_bulk`, SLUB since 4.3/4.4): the per-call costs
//! (disabling IRQs, the per-CPU `cmpxchg`, for frees the lookup of each object's slab) are then
//! paid once per batch, which is what high packet-rate code needs.
//!
//! This module makes that API typed and safe, at no cost over calling it from C:
//!
//! - [`KmemCache<T>`] owns a cache for objects of type `T` (size and alignment from `T`); it
//!   dereferences to [`Cache<T>`], the C cache itself, which objects and batches borrow: a cache
//!   cannot be destroyed while any of its objects is alive.
//! - [`Obj<'c, T>`] is one object, freed to its own cache when dropped. `Obj<'c, MaybeUninit<T>>`
//!   is an uninitialised one: it can be written or freed, never read.
//! - [`ObjArray<'c, T, N>`] holds up to `N` objects in the pointer array the C bulk functions
//!   take, filled by one bulk allocation and freed by one bulk free (also when dropped).
//! - [`SlotObjs<'a, T>`] is the objects of one bulk allocation into an array the caller lends
//!   ([`Cache::alloc_bulk_in`]), freed in bulk when dropped: the C API's shape, and its cost.
//!   Both it and [`ObjArray`] dereference to [`ObjSlice<T>`], references to their objects.
//! - [`FreeBatch<'c, T, N>`] gathers objects one at a time and frees them in bulk, the pattern
//!   of a NIC's TX completion.
//! - [`static_cache!`] declares a cache for the life of a module, named by a zero-sized type
//!   `C` that is the kernel's [`Allocator`] over the cache: `Box<T, C>` is an object of it that
//!   borrows nothing, for a module's long-lived structures. [`CacheRegistration<C>`] creates the
//!   cache and dereferences to its [`Cache`], for the bulk API.
//!
//! # Which to use
//!
//! A driver declares its cache with [`static_cache!`], registers it in its init and keeps the
//! registration in its state, dropped at exit. Objects it keeps are `Box<T, C>`
//! (`kernel::alloc::Box`, allocated with `Box::new`); objects of a bulk round are the
//! registration's [`Obj`]s, [`ObjArray`]s and [`SlotObjs`], and [`CacheRegistration::keep`] and
//! [`CacheRegistration::to_obj`] move an object between the two. [`KmemCache`] is for a cache
//! that lives shorter than its module (a test, a benchmark), whose objects the borrow checker
//! then keeps from outliving it.
//!
//! `C` serves the layouts that fit in one object (size and alignment at most `T`'s) and fails
//! every other (`AllocError`, never a smaller object); `realloc` within the object is in place,
//! beyond it fails; a size of 0 frees. A `Box<T, C>` is counted in `C`'s cell (an atomic add
//! and subtract per object; its cost beside the plain path is in `docs/benchmarks.md`), so a
//! registration dropped under live boxes leaks its cache with a warning instead of
//! destroying it under them; where that cost matters, allocate in bulk on the registration,
//! which is not counted. The reasons are in `static_cache.rs`.
//!
//! ```
//! # use kernel::prelude::*;
//! use kernel::slab_bulk::{CacheFlags, StaticCache};
//!
//! kernel::static_cache! {
//!     struct Packets([u8; 256]) = c"doc_which_packets", CacheFlags::HWCACHE_ALIGN;
//! }
//!
//! let reg = Packets::register()?;
//! let kept: Box<[u8; 256], Packets> = Box::new([0xab; 256], GFP_KERNEL)?; // from the cache
//! let batch = reg.alloc_bulk_with::<16>(GFP_KERNEL, |_| [0; 256])?; // one bulk call
//! assert_eq!((kept[255], batch.len()), (0xab, 16));
//! drop((kept, batch));
//! drop(reg);
//! # Ok::<(), Error>(())
//! ```
//!
//! [`static_cache!`]: crate::static_cache
//! [`Allocator`]: crate::alloc::Allocator
//!
//! # Contexts
//!
//! - [`KmemCache::new`], dropping a [`KmemCache`]: process, may sleep.
//! - [`CacheRegistration::new`], dropping a [`CacheRegistration`]: process, may sleep.
//! - Single allocation ([`Cache::alloc`], [`Cache::alloc_uninit`], [`Cache::alloc_node`]), and
//!   allocating a `Box<T, C>`: whatever the GFP flags allow (`GFP_KERNEL` may sleep,
//!   `GFP_ATOMIC`/`GFP_NOWAIT` do not).
//! - Dropping an [`Obj`] or a `Box<T, C>` of a [`StaticCache`]: any but NMI
//!   (`kmem_cache_free` is not NMI-safe).
//! - Bulk allocation ([`Cache::alloc_bulk`], [`Cache::alloc_bulk_in`], [`ObjArray::alloc`],
//!   ...): as the GFP flags allow, and IRQs enabled.
//! - Bulk free ([`ObjArray::free`], [`FreeBatch`], dropping an [`ObjArray`] or an
//!   [`SlotObjs`]): IRQs enabled.
//!
//! The IRQ rule of the bulk functions is the C API's ("interrupts must be enabled when calling
//! this function"). The types cannot prove it; lockdep checks it when `CONFIG_PROVE_LOCKING` is
//! set, and it costs nothing otherwise.
//!
//! # Zeroing and NUMA nodes
//!
//! `__GFP_ZERO` in the flags of any allocation (single, [`Cache::alloc_node`], bulk, through a
//! [`StaticCache`]'s `Box`) gives zeroed objects: C zeroes every object of a single and of a
//! bulk allocation (its allocation hook does both, on 6.12 and 7.x), and a static cache's
//! in-place `realloc` zeroes what it grows. [`Cache::alloc_node`] allocates on a NUMA node
//! (`kmem_cache_alloc_node`), or on any with [`NUMA_NO_NODE`]; bulk allocation has no node in C.
//!
//! # Errors
//!
//! Allocation failures are `ENOMEM` and lose nothing: a bulk allocation is all or nothing (the
//! C function frees what it got before failing). Bad sizes are `EINVAL` (a bulk of 0 objects or
//! of more than a batch's room; a zero-sized or oversized `T`); so are a bad cache name and a
//! node that is neither a node id below `MAX_NUMNODES` nor [`NUMA_NO_NODE`].

mod bulk;
mod cache;
mod ffi;
mod free_batch;
mod obj_array;
mod obj_slice;
mod object;
mod slot_objs;
mod static_cache;

// The KUnit glue of this module's and `qmempool`'s `selftest` lists.
#[cfg(all(
    any(CONFIG_RUST_SLAB_BULK_KUNIT_TEST, CONFIG_RUST_QMEMPOOL_KUNIT_TEST),
    kernel_ge_7_0
))]
pub(crate) mod kunit;
#[cfg(all(
    any(CONFIG_RUST_SLAB_BULK_KUNIT_TEST, CONFIG_RUST_QMEMPOOL_KUNIT_TEST),
    not(kernel_ge_7_0)
))]
#[path = "kunit_6_12.rs"]
pub(crate) mod kunit;
#[cfg(CONFIG_RUST_SLAB_BULK_KUNIT_TEST)]
mod kunit_suite {
    use super::kunit::kunit_suite;
    super::selftest::selftests!(kunit_suite);
}
#[cfg(any(
    test,
    CONFIG_RUST_SLAB_BULK_KUNIT_TEST,
    CONFIG_RUST_QMEMPOOL_KUNIT_TEST
))]
pub(crate) mod selftest;

pub use self::obj_array::ObjArray;

/// No NUMA node preference, for [`Cache::alloc_node`] (C's `NUMA_NO_NODE`).
pub const NUMA_NO_NODE: i32 = ffi::NUMA_NO_NODE;
pub use self::cache::{Cache, CacheFlags, CachePin, KmemCache, MAX_NAME_LEN};
pub use self::free_batch::FreeBatch;
pub use self::obj_slice::ObjSlice;
pub use self::object::Obj;
pub use self::slot_objs::{ObjSlot, SlotObjs};
pub use self::static_cache::{CacheRegistration, StaticCache, StaticCacheCell};
