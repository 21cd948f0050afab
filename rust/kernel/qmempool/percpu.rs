// SPDX-License-Identifier: GPL-2.0

//! [`PerCpu`]: one value per possible CPU, in the kernel's per-CPU areas.
//!
//! C header: [`include/linux/percpu.h`](srctree/include/linux/percpu.h)
//!
//! Neither 6.12 nor 7.3 has a per-CPU abstraction in the `kernel` crate, so this is the thin
//! layer of `unsafe` the pool stands on: `alloc_percpu` (`pcpu_alloc_noprof`), `free_percpu`,
//! and `per_cpu_ptr` / `this_cpu_ptr` through C helpers (they are macros), all called through
//! the module's `ffi`.
//!
//! Why the per-CPU allocator and not a vector indexed by `raw_smp_processor_id()`: both are
//! correct with bottom halves disabled (the task cannot migrate), but the per-CPU allocator puts
//! each CPU's value in that CPU's own area (node-local memory, no false sharing between
//! neighbours' values), and `this_cpu_ptr` is one addition to the CPU's offset, where a vector
//! costs the CPU number, a bounds check and a load of the element's pointer. The value is
//! stored inline, not behind a pointer as the C qmempool's `localq`: one load fewer on the fast
//! path.

use super::context::BhGuard;
use super::ffi;
use crate::alloc::flags::GFP_KERNEL;
use crate::error::{code::*, Result};
use core::ffi::{c_int, c_void};
use core::marker::PhantomData;
use core::mem::{self, MaybeUninit};
use core::ptr::NonNull;

/// The largest per-CPU allocation the kernel accepts (`PCPU_MIN_UNIT_SIZE`, 32 KiB).
pub(super) const MAX_SIZE: usize = 32 << 10;

/// Iterates over the possible CPUs (`for_each_possible_cpu`).
pub(super) fn possible_cpus() -> impl Iterator<Item = u32> {
    let mut cpu: c_int = -1;
    core::iter::from_fn(move || {
        cpu = ffi::next_possible_cpu(cpu);
        u32::try_from(cpu).ok()
    })
}

/// One `Q` per possible CPU, in memory from the per-CPU allocator.
///
/// # Invariants
///
/// - `ptr` was returned by `ffi::alloc_percpu` for `size_of::<Q>()` bytes (at least one) aligned
///   to `align_of::<Q>()`, and is freed only when this value is dropped.
/// - The instance of every possible CPU holds a valid `Q`, owned by this value.
pub(super) struct PerCpu<Q> {
    ptr: NonNull<c_void>,
    _owns: PhantomData<Q>,
}

// SAFETY: A `PerCpu` owns its `Q`s: sending it sends them.
unsafe impl<Q: Send> Send for PerCpu<Q> {}
// SAFETY: `&PerCpu` hands out `&Q`s, to several CPUs at once.
unsafe impl<Q: Sync> Sync for PerCpu<Q> {}

impl<Q> PerCpu<Q> {
    /// Allocates one `Q` per possible CPU and initialises each one in place with `init`.
    ///
    /// Errors: `EINVAL` if `Q` is larger than the per-CPU allocator's limit ([`MAX_SIZE`]) or
    /// aligned to more than a page, `ENOMEM` if there is no per-CPU memory. Process context: it
    /// may sleep. Should `init` panic, the allocation leaks (safely).
    pub(super) fn new(mut init: impl FnMut(&mut MaybeUninit<Q>)) -> Result<Self> {
        let (size, align) = (mem::size_of::<Q>().max(1), mem::align_of::<Q>());
        if size > MAX_SIZE || align > ffi::PERCPU_MAX_ALIGN {
            return Err(EINVAL);
        }
        // SAFETY: `size` (at least 1) and `align` (a power of two, as every alignment) are
        // within the allocator's limits (checked above); the caller is in process context,
        // where `GFP_KERNEL` may sleep.
        let raw = unsafe { ffi::alloc_percpu(size, align, GFP_KERNEL) };
        let ptr = NonNull::new(raw).ok_or(ENOMEM)?;
        for cpu in possible_cpus() {
            // SAFETY: `ptr` is a live per-CPU allocation and `cpu` a possible CPU, so the
            // result is that CPU's instance: valid for `size` bytes, aligned, and referenced by
            // nobody else yet.
            let slot = unsafe { &mut *ffi::per_cpu_ptr(ptr.as_ptr(), cpu).cast() };
            init(slot);
        }
        // INVARIANT: allocated as said, and every possible CPU's instance was initialised.
        Ok(Self {
            ptr,
            _owns: PhantomData,
        })
    }

    /// Returns the instance of the CPU `guard` runs on, for as long as the guard lives.
    #[inline]
    pub(super) fn this_cpu<'a>(&'a self, _guard: &'a BhGuard) -> &'a Q {
        // SAFETY: `ptr` is a live per-CPU allocation whose instances hold valid `Q`s (type
        // invariants). While `guard` lives the task cannot migrate (bottom halves disabled, or
        // it is the softirq), so the returned instance stays the current CPU's; the shared
        // borrow of `self` keeps the allocation alive.
        unsafe { &*ffi::this_cpu_ptr(self.ptr.as_ptr()).cast::<Q>() }
    }

    /// Returns the per-CPU pointer of the instances, for `per_cpu_ptr`.
    #[cfg_attr(not(CONFIG_RUST), allow(dead_code))]
    pub(super) fn as_ptr(&self) -> NonNull<c_void> {
        self.ptr
    }

    /// Returns the instance of CPU `cpu`, if it is a possible CPU.
    #[cfg(any(CONFIG_RUST, test))]
    pub(super) fn get(&self, cpu: u32) -> Option<&Q> {
        if !possible_cpus().any(|c| c == cpu) {
            return None;
        }
        // SAFETY: As in `this_cpu`, for the possible CPU `cpu`.
        Some(unsafe { &*ffi::per_cpu_ptr(self.ptr.as_ptr(), cpu).cast::<Q>() })
    }

    /// Iterates over every possible CPU's instance, with exclusive access.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Q> + '_ {
        let ptr = self.ptr;
        possible_cpus().map(move |cpu| {
            // SAFETY: As in `get`; `&mut self` makes the access exclusive, and each CPU's
            // instance is distinct, so the returned references do not overlap.
            unsafe { &mut *ffi::per_cpu_ptr(ptr.as_ptr(), cpu).cast::<Q>() }
        })
    }
}

impl<Q> Drop for PerCpu<Q> {
    fn drop(&mut self) {
        for q in self.iter_mut() {
            // SAFETY: Every instance holds a valid `Q` owned by `self` (type invariant), dropped
            // once, here; nothing reads it afterwards.
            unsafe { core::ptr::drop_in_place(q) };
        }
        // SAFETY: `ptr` came from `alloc_percpu` and is freed once, here; the instances were
        // dropped above and nothing uses them afterwards.
        unsafe { ffi::free_percpu(self.ptr.as_ptr()) };
    }
}
