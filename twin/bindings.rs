// SPDX-License-Identifier: GPL-2.0

//! Stand-in for `kernel::bindings`: the C functions the shared code calls, implemented in
//! userspace.
//!
//! The slab functions are a real slab allocator with SLUB's semantics, not a mock:
//! - objects are carved from "slabs" of `PAGE_SIZE << order` bytes, naturally aligned as the
//!   buddy allocator's pages are, the order and the objects per slab chosen as SLUB's
//!   `calculate_order` does (`slub_max_order` 3, 8 objects wanted);
//! - `kmem_cache_alloc_bulk` is all or nothing: on a failure at object `i` it frees the `i`
//!   objects it got and returns 0;
//! - `kmem_cache_free_bulk` walks the array from the end (as `build_detached_freelist` does),
//!   rejects NULL entries and clobbers every entry it processed with a poison pointer, so a
//!   caller that reuses the array after the call reads garbage;
//! - every cache tracks its live objects: freeing an object twice, or to a cache it does not
//!   belong to, panics; destroying a cache with live objects reports them and keeps (leaks) the
//!   cache, as the kernel does, so that they may still be freed to it; freed objects are
//!   poisoned (`0x6b`);
//! - fault injection follows the kernel's `current->fail_nth`: the Nth fault point reached by
//!   the thread fails. The fault points are where 6.12 has them: one `failslab` check per
//!   allocation request (single or bulk), and one `fail_page_alloc` check per new slab of
//!   order >= 1 (with SLUB's fallback to the minimum order); both skip requests that may reclaim
//!   (`ignore-gfp-wait`) or must not fail (`__GFP_NOFAIL`).
#![allow(non_camel_case_types, non_upper_case_globals, missing_docs)]
#![allow(clippy::missing_safety_doc)]

use core::ffi::{c_int, c_uint, c_ulong, c_void, CStr};
use std::alloc::Layout;
use std::cell::{Cell, UnsafeCell};
use std::collections::HashSet;
use std::ffi::CString;
use std::sync::Mutex;

// The CPU, context and per-CPU functions (`twin/cpu.rs`).
pub use crate::cpu::{
    free_percpu, in_serving_softirq, irqs_disabled, local_bh_disable, local_bh_enable,
    next_possible_cpu, num_online_cpus, pcpu_alloc_noprof, per_cpu_ptr, qmempool_bh_enter,
    qmempool_bh_exit, qmempool_bh_exit_irqs_off, raw_smp_processor_id, this_cpu_ptr,
};

pub type gfp_t = c_uint;
pub type slab_flags_t = c_uint;

// GFP bits (their meaning, not the kernel's values, is what matters here).
pub const __GFP_HIGH: gfp_t = 1 << 0;
pub const __GFP_IO: gfp_t = 1 << 1;
pub const __GFP_FS: gfp_t = 1 << 2;
pub const __GFP_DIRECT_RECLAIM: gfp_t = 1 << 4;
pub const __GFP_KSWAPD_RECLAIM: gfp_t = 1 << 5;
pub const __GFP_NOWARN: gfp_t = 1 << 6;
pub const __GFP_NOFAIL: gfp_t = 1 << 7;
pub const __GFP_ZERO: gfp_t = 1 << 8;
pub const GFP_KERNEL: gfp_t = __GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM | __GFP_IO | __GFP_FS;
pub const GFP_ATOMIC: gfp_t = __GFP_HIGH | __GFP_KSWAPD_RECLAIM;
pub const GFP_NOWAIT: gfp_t = __GFP_KSWAPD_RECLAIM | __GFP_NOWARN;

// SLAB_* flags, in the order of the kernel's `enum _slab_flag_bits`.
pub const SLAB_RED_ZONE: slab_flags_t = 1 << 1;
pub const SLAB_POISON: slab_flags_t = 1 << 2;
pub const SLAB_HWCACHE_ALIGN: slab_flags_t = 1 << 4;
pub const SLAB_NO_MERGE: slab_flags_t = 1 << 12;
pub const SLAB_FAILSLAB: slab_flags_t = 1 << 13;
pub const SLAB_ACCOUNT: slab_flags_t = 1 << 14;
pub const SLAB_RECLAIM_ACCOUNT: slab_flags_t = 1 << 16;

pub const PAGE_SIZE: usize = 4096;
/// One NUMA node, as a kernel without `CONFIG_NUMA`.
pub const MAX_NUMNODES: u32 = 1;
pub const NUMA_NO_NODE: core::ffi::c_int = -1;
/// `PAGE_SIZE << MAX_PAGE_ORDER` (order 10).
pub const KMALLOC_MAX_SIZE: u32 = (PAGE_SIZE as u32) << 10;
const ARCH_SLAB_MINALIGN: usize = 8;
const CACHE_LINE: usize = 64;
const SLUB_MAX_ORDER: u32 = 3;
/// `4 * (fls(nr_cpus) + 1)` for one CPU, as in UML.
const SLUB_MIN_OBJECTS: usize = 8;
/// `fail_page_alloc`'s default `min-order`.
const FAIL_PAGE_ALLOC_MIN_ORDER: u32 = 1;
const POISON_FREE: u8 = 0x6b;
/// What a bulk call leaves in the caller's array where a pointer is no longer the caller's: a
/// processed `kmem_cache_free_bulk` entry, or an object that a failed bulk allocation freed
/// again. Every byte is `POISON_FREE`.
pub const BULK_FREE_POISON: *mut c_void =
    usize::from_ne_bytes([POISON_FREE; core::mem::size_of::<usize>()]) as *mut c_void;

#[derive(Default, Clone, Copy, Debug)]
pub struct kmem_cache_args {
    pub align: c_uint,
    pub useroffset: c_uint,
    pub usersize: c_uint,
    pub freeptr_offset: c_uint,
    pub use_freeptr_offset: bool,
    pub ctor: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// A userspace slab cache.
pub struct kmem_cache {
    name: CString,
    /// Distance between objects: the object size rounded up to the alignment.
    stride: usize,
    order: u32,
    min_order: u32,
    state: Mutex<SlabState>,
}

#[derive(Default)]
struct SlabState {
    free: Vec<usize>,
    live: HashSet<usize>,
    slabs: Vec<(SlabBase, Layout)>,
    /// `kmem_cache_destroy` found live objects and kept the cache for them.
    kept_by_destroy: bool,
    /// `kmem_cache_destroy` releases the cache even with live objects, leaking their slabs:
    /// what SLUB does without `CONFIG_SLUB_DEBUG` (full slabs are on no list, so its shutdown
    /// sees none) and for objects KFENCE handed out (they are in no slab).
    destroy_misses_live: bool,
}

/// The start of a slab, as the heap returned it: a pointer, not an address, so that a slab of a
/// cache that is leaked on purpose (a leaked pool pins its cache) stays reachable from the
/// cache, which Miri's leak check follows.
struct SlabBase(*mut u8);

// SAFETY: The slab's memory is the cache's, used under the state's lock.
unsafe impl Send for SlabBase {}

impl SlabState {
    /// Gives every slab back to the heap; no object may be live.
    fn release_slabs(&mut self) {
        debug_assert!(self.live.is_empty());
        self.free.clear();
        for (base, layout) in self.slabs.drain(..) {
            // SAFETY: Each slab was allocated with this layout and holds no live object.
            unsafe { std::alloc::dealloc(base.0, layout) };
        }
    }
}

fn get_order(bytes: usize) -> u32 {
    bytes
        .div_ceil(PAGE_SIZE)
        .next_power_of_two()
        .trailing_zeros()
}

/// SLUB's `calculate_order` for one CPU, without the fraction-of-waste refinement.
fn calculate_order(stride: usize) -> u32 {
    let max_objects = ((PAGE_SIZE << SLUB_MAX_ORDER) / stride).max(1);
    let min_objects = SLUB_MIN_OBJECTS.min(max_objects);
    get_order(min_objects * stride)
}

/// SLUB's `calculate_alignment`.
fn calculate_alignment(flags: slab_flags_t, align: usize, size: usize) -> usize {
    let mut align = align;
    if flags & SLAB_HWCACHE_ALIGN != 0 {
        let mut ralign = CACHE_LINE;
        while size <= ralign / 2 {
            ralign /= 2;
        }
        align = align.max(ralign);
    }
    align.max(ARCH_SLAB_MINALIGN).next_power_of_two()
}

/// `name` is `*const u8`, as in the kernel, whose `char` is unsigned (`-funsigned-char`).
pub unsafe fn __kmem_cache_create_args(
    name: *const u8,
    object_size: c_uint,
    args: *mut kmem_cache_args,
    flags: slab_flags_t,
) -> *mut kmem_cache {
    let size = object_size as usize;
    if name.is_null() || size == 0 || size > KMALLOC_MAX_SIZE as usize {
        return core::ptr::null_mut();
    }
    // SAFETY: The caller passes a valid `args` and a NUL-terminated name (copied, as the
    // kernel's `kstrdup_const` does).
    let (args, name) = unsafe { (*args, CStr::from_ptr(name.cast()).to_owned()) };
    let align = calculate_alignment(flags, args.align as usize, size);
    let stride = size.max(ARCH_SLAB_MINALIGN).next_multiple_of(align);
    let min_order = get_order(stride);
    let order = calculate_order(stride).max(min_order);
    Box::into_raw(Box::new(kmem_cache {
        name,
        stride,
        order,
        min_order,
        state: Mutex::new(SlabState::default()),
    }))
}

pub unsafe fn kmem_cache_destroy(s: *mut kmem_cache) {
    if s.is_null() {
        return;
    }
    // SAFETY: `s` came from `__kmem_cache_create_args` and is destroyed once.
    let cache = unsafe { &*s };
    let mut st = cache.lock();
    if st.live.is_empty() {
        st.release_slabs();
    } else if st.destroy_misses_live {
        // The shutdown saw no object: the slabs that hold the live ones are leaked, and the
        // struct is released under them; freeing one of those objects to `s` is then a use
        // after free.
        st.slabs.clear();
    } else {
        // The kernel says "Slab cache still has objects" and keeps the whole cache (on
        // `shutdown_cache()` failure the `struct kmem_cache` is not released): the live
        // objects stay valid and may still be freed to it, so leak the cache and its slabs.
        eprintln!(
            "kmem_cache_destroy {:?}: Slab cache still has {} objects",
            cache.name,
            st.live.len()
        );
        LEAKED_OBJECTS.fetch_add(st.live.len(), std::sync::atomic::Ordering::Relaxed);
        st.kept_by_destroy = true;
        return;
    }
    drop(st);
    // SAFETY: The caller uses `s` no more: the cache is released.
    drop(unsafe { Box::from_raw(s) });
    CACHES_RELEASED.with(|n| n.set(n.get() + 1));
}

thread_local! {
    /// The caches that `kmem_cache_destroy` released on this thread (the tests' own count:
    /// each test runs on a thread of its own).
    pub static CACHES_RELEASED: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// Objects left alive in destroyed caches, over the whole process.
pub static LEAKED_OBJECTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl kmem_cache {
    fn lock(&self) -> std::sync::MutexGuard<'_, SlabState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a free object, making a new slab when there is none (SLUB's slow path).
    ///
    /// Every free object holds `POISON_FREE` (new slabs are filled with it, freed objects
    /// overwritten), and it is checked here, as SLUB's `check_object()` does with poisoning
    /// on: a write to an object after it was freed panics at its next allocation. Not under
    /// Miri, where the byte checks of the fault-injection tests would take many minutes.
    fn take_object(&self, st: &mut SlabState, flags: gfp_t) -> Option<usize> {
        if st.free.is_empty() {
            self.new_slab(st, flags)?;
        }
        let obj = st.free.pop()?;
        #[cfg(not(miri))]
        {
            // SAFETY: `obj` is a whole free object inside a live slab, all of it written.
            let bytes = unsafe { core::slice::from_raw_parts(obj as *const u8, self.stride) };
            if let Some(at) = bytes.iter().position(|&b| b != POISON_FREE) {
                panic!(
                    "{:?}: object {obj:#x} was written after it was freed (byte {at} is {:#x})",
                    self.name, bytes[at]
                );
            }
        }
        st.live.insert(obj);
        if flags & __GFP_ZERO != 0 {
            // SAFETY: `obj` is a whole object inside a live slab, now owned by the caller.
            unsafe { core::ptr::write_bytes(obj as *mut u8, 0, self.stride) };
        }
        Some(obj)
    }

    /// SLUB's `allocate_slab`: the preferred order first, then, after a failure, the minimum
    /// order (also when it is the same order).
    fn new_slab(&self, st: &mut SlabState, flags: gfp_t) -> Option<()> {
        let order = if !page_alloc_fails(flags, self.order) {
            self.order
        } else if !page_alloc_fails(flags, self.min_order) {
            self.min_order
        } else {
            return None;
        };
        // Naturally aligned, as the buddy allocator's pages of an order are: objects of an
        // alignment up to the slab's size are then aligned (`stride` is a multiple of it).
        let bytes = PAGE_SIZE << order;
        let layout = Layout::from_size_align(bytes, bytes).ok()?;
        // SAFETY: `layout` has a non-zero size.
        let slab = unsafe { std::alloc::alloc(layout) };
        if slab.is_null() {
            return None;
        }
        // SAFETY: The slab was just allocated with `bytes` bytes.
        #[cfg(not(miri))]
        unsafe {
            core::ptr::write_bytes(slab, POISON_FREE, bytes)
        };
        let base = slab as usize;
        st.slabs.push((SlabBase(slab), layout));
        let objects = layout.size() / self.stride;
        // Pushed in reverse so that objects are handed out in address order.
        st.free
            .extend((0..objects).rev().map(|i| base + i * self.stride));
        Some(())
    }

    /// Returns `obj` to the free list; panics unless it is a live object of this cache.
    fn release(&self, st: &mut SlabState, obj: usize) {
        assert!(
            st.live.remove(&obj),
            "{:?}: freeing {obj:#x}, which is not an allocated object of this cache",
            self.name
        );
        // SAFETY: `obj` is a whole object inside a live slab, no longer in use.
        unsafe { core::ptr::write_bytes(obj as *mut u8, POISON_FREE, self.stride) };
        st.free.push(obj);
        if st.kept_by_destroy && st.live.is_empty() {
            // The last object of a cache that a failed destroy kept: its slabs are empty and
            // go back (as SLUB discards empty slabs); the struct stays, as in the kernel.
            st.release_slabs();
        }
    }
}

/// The calling thread's `task_struct`: only what fault injection needs.
pub struct task_struct {
    pub make_it_fail: c_int,
    pub fail_nth: c_uint,
}

thread_local! {
    static CURRENT: UnsafeCell<task_struct> =
        const { UnsafeCell::new(task_struct { make_it_fail: 0, fail_nth: 0 }) };
}

/// `get_current()`: the calling thread's task, valid for the thread's lifetime.
pub unsafe fn get_current() -> *mut task_struct {
    CURRENT.with(|t| t.get())
}

/// `should_fail_ex()`'s `fail_nth` part: the Nth call in a task fails.
fn should_fail() -> bool {
    CURRENT.with(|t| {
        // SAFETY: Only this thread touches its own task.
        let t = unsafe { &mut *t.get() };
        if t.fail_nth == 0 {
            return false;
        }
        t.fail_nth -= 1;
        t.fail_nth == 0
    })
}

fn may_inject(flags: gfp_t) -> bool {
    flags & (__GFP_NOFAIL | __GFP_DIRECT_RECLAIM) == 0
}

fn should_failslab(flags: gfp_t) -> bool {
    may_inject(flags) && should_fail()
}

fn page_alloc_fails(flags: gfp_t, order: u32) -> bool {
    order >= FAIL_PAGE_ALLOC_MIN_ORDER
        && may_inject(flags)
        && (should_fail() || (FAIL_PAGE_ALLOC_TASKS.with(Cell::get) && current_make_it_fail()))
}

thread_local! {
    /// `fail_page_alloc` set up in debugfs to fail every page allocation it may for the tasks
    /// marked with `make_it_fail` (`task-filter` Y, `probability` 100, `times` -1).
    static FAIL_PAGE_ALLOC_TASKS: Cell<bool> = const { Cell::new(false) };
}

fn current_make_it_fail() -> bool {
    // SAFETY: Only this thread touches its own task.
    CURRENT.with(|t| unsafe { (*t.get()).make_it_fail != 0 })
}

/// What the kernel test run sets up before a test: `make test` configures `fail_page_alloc`
/// in debugfs and runs the suite again for `bulk_fault_positions`, so the twin does the same.
pub fn setup_for_test(test: &str) {
    FAIL_PAGE_ALLOC_TASKS.with(|a| a.set(test == "bulk_fault_positions"));
}

/// `might_alloc()`: an allocation that may sleep (direct reclaim) is a bug where sleeping is
/// not allowed.
fn might_alloc(flags: gfp_t) {
    assert!(
        flags & __GFP_DIRECT_RECLAIM == 0 || !crate::cpu::in_atomic(),
        "sleeping allocation (flags {flags:#x}) in atomic context"
    );
}

/// The bulk functions' rule: "Interrupts must be enabled when calling this function".
fn assert_irqs_enabled(what: &str) {
    // SAFETY: Reads the twin's context only.
    assert!(
        !unsafe { crate::cpu::irqs_disabled() },
        "{what} with IRQs disabled"
    );
}

pub unsafe fn kmem_cache_alloc_noprof(s: *mut kmem_cache, flags: gfp_t) -> *mut c_void {
    might_alloc(flags);
    // SAFETY: The caller passes a live cache.
    let s = unsafe { &*s };
    if should_failslab(flags) {
        return core::ptr::null_mut();
    }
    let mut st = s.lock();
    s.take_object(&mut st, flags)
        .map_or(core::ptr::null_mut(), |o| o as *mut c_void)
}

/// `kmem_cache_alloc_node_noprof`: the twin has one node, so `node` only has to be valid.
pub unsafe fn kmem_cache_alloc_node_noprof(
    s: *mut kmem_cache,
    flags: gfp_t,
    node: core::ffi::c_int,
) -> *mut c_void {
    assert!(node == NUMA_NO_NODE || (0..MAX_NUMNODES as core::ffi::c_int).contains(&node));
    // SAFETY: Forwarded from the caller.
    unsafe { kmem_cache_alloc_noprof(s, flags) }
}

pub unsafe fn kmem_cache_free(s: *mut kmem_cache, objp: *mut c_void) {
    // SAFETY: The caller passes a live cache.
    let s = unsafe { &*s };
    let mut st = s.lock();
    s.release(&mut st, objp as usize);
}

pub unsafe fn kmem_cache_alloc_bulk_noprof(
    s: *mut kmem_cache,
    flags: gfp_t,
    size: usize,
    p: *mut *mut c_void,
) -> c_int {
    might_alloc(flags);
    assert_irqs_enabled("kmem_cache_alloc_bulk");
    // SAFETY: The caller passes a live cache.
    let s = unsafe { &*s };
    if size == 0 || should_failslab(flags) {
        return 0;
    }
    let mut st = s.lock();
    for i in 0..size {
        match s.take_object(&mut st, flags) {
            // SAFETY: The caller passes an array of at least `size` entries.
            Some(obj) => unsafe { p.add(i).write(obj as *mut c_void) },
            None => {
                for j in 0..i {
                    // SAFETY: Entries `..i` were written above.
                    let obj = unsafe { p.add(j).read() } as usize;
                    s.release(&mut st, obj);
                    // The kernel leaves the freed pointers in the array (reordered): the
                    // caller must not use them, which a poisoned pointer makes sure of.
                    // SAFETY: As above.
                    unsafe { p.add(j).write(BULK_FREE_POISON) };
                }
                return 0;
            }
        }
    }
    size as c_int
}

pub unsafe fn kmem_cache_free_bulk(s: *mut kmem_cache, size: usize, p: *mut *mut c_void) {
    assert_irqs_enabled("kmem_cache_free_bulk");
    // SAFETY: The caller passes a live cache.
    let s = unsafe { &*s };
    let mut st = s.lock();
    for i in (0..size).rev() {
        // SAFETY: The caller passes an array of at least `size` entries.
        let entry = unsafe { p.add(i) };
        // SAFETY: As above.
        let obj = unsafe { entry.read() };
        assert!(!obj.is_null(), "kmem_cache_free_bulk: NULL entry {i}");
        s.release(&mut st, obj as usize);
        // SAFETY: As above.
        unsafe { entry.write(BULK_FREE_POISON) };
    }
}

/// Twin only: makes `kmem_cache_destroy` of `s` miss its live objects, as SLUB does without
/// `CONFIG_SLUB_DEBUG` or for KFENCE's objects (see `SlabState::destroy_misses_live`).
pub unsafe fn kmem_cache_destroy_misses_live(s: *mut kmem_cache) {
    // SAFETY: The caller passes a live cache.
    let s = unsafe { &*s };
    s.lock().destroy_misses_live = true;
}

/// The project's C helper: objects of `s` allocated right now.
pub unsafe fn kmem_cache_objects_in_use(s: *mut kmem_cache) -> c_ulong {
    // SAFETY: The caller passes a live cache.
    let s = unsafe { &*s };
    s.lock().live.len() as c_ulong
}

/// The project's C helper: objects per slab of `s` (`oo_objects(s->oo)`).
pub unsafe fn kmem_cache_objects_per_slab(s: *mut kmem_cache) -> c_uint {
    // SAFETY: The caller passes a live cache.
    let s = unsafe { &*s };
    ((PAGE_SIZE << s.order) / s.stride) as c_uint
}
