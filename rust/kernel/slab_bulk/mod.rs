// SPDX-License-Identifier: GPL-2.0

//! Typed slab caches with the bulk allocation API.
//!
//! C header: [`include/linux/slab.h`](srctree/include/linux/slab.h)
//!
//! The slab allocator can allocate and free many objects of a cache in one call
//! (`kmem_cache_alloc_bulk` / `kmem_cache_free_bulk`), paying its per-call costs once per batch.
//! This module makes that API typed and safe, at no cost over calling it from C. Unlike C:
//! 1. A cache is typed ([`OwnedCache<T>`], a [`Cache<T>`]), and its objects ([`Obj`]) and batches
//!    ([`ObjArray`], [`SlotObjs`], [`FreeBatch`]) borrow it: it cannot be destroyed under them.
//! 2. An object or batch is freed to its own cache when dropped, a batch in one bulk call.
//! 3. A driver's cache, declared with [`static_cache!`], is a type that is the kernel's
//!    [`Allocator`]: `Box<T, C>` is an object of it that borrows nothing.
//!
//! Contexts:
//! - Creating or dropping an [`OwnedCache`] or a [`CacheRegistration`]: process, may sleep.
//! - Allocating (single, bulk, a `Box<T, C>`): as the GFP flags allow (`GFP_KERNEL` may sleep).
//! - Bulk allocation and free ([`Cache::alloc_bulk`], [`ObjArray`], [`SlotObjs`], [`FreeBatch`],
//!   their drop): IRQs enabled too (the C API's rule).
//! - Dropping an [`Obj`] or a `Box<T, C>`: any but NMI (`kmem_cache_free` is not NMI-safe).
//!
//! The design, and why: `docs/design.md`, sections "`kernel::slab_bulk`" and "Module-lifetime
//! caches (`static_cache.rs`)".
//!
//! [`static_cache!`]: crate::static_cache
//! [`Allocator`]: crate::alloc::Allocator

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
    kunit_tests_attr
))]
pub(crate) mod kunit;
#[cfg(all(
    any(CONFIG_RUST_SLAB_BULK_KUNIT_TEST, CONFIG_RUST_QMEMPOOL_KUNIT_TEST),
    not(kunit_tests_attr)
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
pub use self::cache::{Cache, CacheFlags, CachePin, OwnedCache, MAX_NAME_LEN};
pub use self::free_batch::FreeBatch;
pub use self::obj_slice::ObjSlice;
pub use self::object::Obj;
pub use self::slot_objs::{ObjSlot, SlotObjs};
pub use self::static_cache::{CacheRegistration, StaticCache, StaticCacheCell};
