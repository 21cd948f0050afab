// SPDX-License-Identifier: GPL-2.0

//! Every call of `slab_bulk` into C, and the C types and constants it uses.
//!
//! C header: [`include/linux/slab.h`](srctree/include/linux/slab.h)
//!
//! One thin wrapper per C function, each `#[inline(always)]`, so that the code above compiles
//! to the C call it would make without the wrapper. What differs between the kernels (the
//! return type of `kmem_cache_alloc_bulk`) is settled here. The other files of the module call
//! C only through this one; the twin (`twin/bindings.rs`) stands in for the same `bindings`
//! items in userspace.

use crate::alloc::Flags;
use crate::bindings;
use core::ffi::{c_int, c_void, CStr};

pub(super) use bindings::{kmem_cache, slab_flags_t};
pub(super) use bindings::{
    SLAB_ACCOUNT, SLAB_FAILSLAB, SLAB_HWCACHE_ALIGN, SLAB_NO_MERGE, SLAB_POISON,
    SLAB_RECLAIM_ACCOUNT, SLAB_RED_ZONE,
};

/// The largest object a slab cache can hold (`KMALLOC_MAX_SIZE`).
pub(super) const MAX_OBJECT_SIZE: usize = bindings::KMALLOC_MAX_SIZE as usize;

/// A NUMA node id as C takes it: a node, or [`NUMA_NO_NODE`].
pub(super) type Node = c_int;

/// No node preference (`NUMA_NO_NODE`).
pub(super) const NUMA_NO_NODE: Node = bindings::NUMA_NO_NODE;

/// One more than the largest node id (`MAX_NUMNODES`).
pub(super) const MAX_NUMNODES: Node = bindings::MAX_NUMNODES as Node;

/// Whether C takes `node` as a node argument: [`NUMA_NO_NODE`] or an id below
/// [`MAX_NUMNODES`] (the rule of the kernel's `NumaNode::new`; SLUB falls back to any node for
/// an id without memory).
#[inline(always)]
pub(super) fn is_node(node: Node) -> bool {
    node == NUMA_NO_NODE || (0..MAX_NUMNODES).contains(&node)
}

/// Creates a cache of objects of `size` bytes aligned to `align` (`__kmem_cache_create_args`).
///
/// Returns the new cache, or NULL if C could not create it. The name is copied.
///
/// # Safety
///
/// `size` must be at most [`MAX_OBJECT_SIZE`] and `align` a power of two; the call may sleep.
#[inline(always)]
pub(super) unsafe fn create(
    name: &CStr,
    size: u32,
    align: u32,
    flags: slab_flags_t,
) -> *mut kmem_cache {
    let mut args = bindings::kmem_cache_args {
        align,
        ..Default::default()
    };
    // The name's bytes with their NUL, as C `char`s: the kernel's `char` is unsigned, which
    // `u8` is on every architecture and `core::ffi::c_char` is not.
    let name = name.to_bytes_with_nul().as_ptr().cast();
    // SAFETY: `name` is NUL-terminated and copied by the callee (`kstrdup_const`); `args` is
    // valid for the duration of the call; the size and alignment are the caller's guarantee.
    unsafe { bindings::__kmem_cache_create_args(name, size, &mut args, flags) }
}

/// Destroys `cache` (`kmem_cache_destroy`).
///
/// # Safety
///
/// `cache` must be a live cache that nothing uses afterwards (objects of it left alive are
/// leaked, with a warning where SLUB finds them); the call may sleep.
#[inline(always)]
pub(super) unsafe fn destroy(cache: *mut kmem_cache) {
    // SAFETY: The caller's guarantee.
    unsafe { bindings::kmem_cache_destroy(cache) }
}

/// Sleeps for about a millisecond (`msleep(1)`; the twin yields the thread instead): a wait
/// for other tasks that may themselves sleep, such as allocations in the slab.
///
/// Process context only.
#[inline(always)]
pub(super) fn sleep_briefly() {
    #[cfg(CONFIG_RUST)]
    // SAFETY: `msleep` may be called from any process context, which is the caller's.
    unsafe {
        bindings::msleep(1)
    };
    #[cfg(not(CONFIG_RUST))]
    std::thread::yield_now();
}

/// Allocates one object of `cache` (`kmem_cache_alloc`); NULL if none could be had.
///
/// # Safety
///
/// `cache` must be a live cache, and the caller in a context that `flags` allow.
#[inline(always)]
pub(super) unsafe fn alloc(cache: *mut kmem_cache, flags: Flags) -> *mut c_void {
    // SAFETY: The caller's guarantee.
    unsafe { bindings::kmem_cache_alloc_noprof(cache, flags.as_raw()) }
}

/// Allocates one object of `cache`, preferably on `node` (`kmem_cache_alloc_node`); NULL if none
/// could be had.
///
/// # Safety
///
/// As [`alloc`], and `node` must be one [`is_node`] accepts.
#[inline(always)]
pub(super) unsafe fn alloc_node(cache: *mut kmem_cache, flags: Flags, node: Node) -> *mut c_void {
    // SAFETY: The caller's guarantee.
    unsafe { bindings::kmem_cache_alloc_node_noprof(cache, flags.as_raw(), node) }
}

/// Frees `obj` to `cache` (`kmem_cache_free`).
///
/// # Safety
///
/// `obj` must be a live object of `cache`, given up by the caller; not in NMI context.
#[inline(always)]
pub(super) unsafe fn free(cache: *mut kmem_cache, obj: *mut c_void) {
    // SAFETY: The caller's guarantee.
    unsafe { bindings::kmem_cache_free(cache, obj) }
}

/// Allocates `n` objects of `cache` into `objs[..n]` (`kmem_cache_alloc_bulk`), all or
/// nothing: returns whether they were allocated. On failure none stays allocated (the callee
/// frees what it got) and the array's contents are meaningless.
///
/// # Safety
///
/// `cache` must be a live cache, `n > 0`, `objs` valid for writes of `n` pointers, IRQs
/// enabled, and the caller in a context that `flags` allow.
#[inline(always)]
pub(super) unsafe fn alloc_bulk(
    cache: *mut kmem_cache,
    flags: Flags,
    n: usize,
    objs: *mut *mut c_void,
) -> bool {
    // SAFETY: The caller's guarantee.
    let got = unsafe { bindings::kmem_cache_alloc_bulk_noprof(cache, flags.as_raw(), n, objs) };
    got.succeeded()
}

/// Frees the `n` objects at `objs` to `cache` (`kmem_cache_free_bulk`). The callee may reorder
/// and overwrite the array.
///
/// # Safety
///
/// `objs[..n]` must be distinct live objects of `cache`, none NULL, given up by the caller;
/// IRQs enabled.
#[inline(always)]
pub(super) unsafe fn free_bulk(cache: *mut kmem_cache, n: usize, objs: *mut *mut c_void) {
    // SAFETY: The caller's guarantee.
    unsafe { bindings::kmem_cache_free_bulk(cache, n, objs) }
}

/// Checks the bulk API's context rule (IRQs enabled) where lockdep can; free otherwise.
#[inline(always)]
pub(super) fn assert_irqs_enabled() {
    #[cfg(CONFIG_PROVE_LOCKING)]
    // SAFETY: `lockdep_assert_irqs_enabled` only reads per-CPU state and may warn.
    unsafe {
        bindings::lockdep_assert_irqs_enabled()
    };
}

/// The objects of `cache` allocated now (the series' `kmem_cache_objects_in_use`, counted
/// with `CONFIG_SLUB_DEBUG`): for the tests.
///
/// # Safety
///
/// `cache` must be a live cache.
#[cfg(all(
    any(
        test,
        CONFIG_RUST_SLAB_BULK_KUNIT_TEST,
        CONFIG_RUST_QMEMPOOL_KUNIT_TEST
    ),
    CONFIG_SLUB_DEBUG
))]
#[inline(always)]
pub(super) unsafe fn objects_in_use(cache: *mut kmem_cache) -> usize {
    // SAFETY: The caller's guarantee.
    unsafe { bindings::kmem_cache_objects_in_use(cache) as usize }
}

/// The objects of one slab of `cache` (the series' `kmem_cache_objects_per_slab`): for the
/// tests.
///
/// # Safety
///
/// `cache` must be a live cache.
#[cfg(all(
    any(
        test,
        CONFIG_RUST_SLAB_BULK_KUNIT_TEST,
        CONFIG_RUST_QMEMPOOL_KUNIT_TEST
    ),
    CONFIG_FAILSLAB,
    CONFIG_FAIL_PAGE_ALLOC
))]
#[inline(always)]
pub(super) unsafe fn objects_per_slab(cache: *mut kmem_cache) -> usize {
    // SAFETY: The caller's guarantee.
    unsafe { bindings::kmem_cache_objects_per_slab(cache) as usize }
}

/// What `kmem_cache_alloc_bulk` returns: the number of objects (`int`, before 7.2) or whether it
/// succeeded (`bool`, from 7.2 on). Either way a bulk allocation is all or nothing.
trait BulkAllocResult {
    /// Whether the requested objects were allocated.
    fn succeeded(self) -> bool;
}

impl BulkAllocResult for bool {
    #[inline(always)]
    fn succeeded(self) -> bool {
        self
    }
}

impl BulkAllocResult for c_int {
    #[inline(always)]
    fn succeeded(self) -> bool {
        self != 0
    }
}
