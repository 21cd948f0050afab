// SPDX-License-Identifier: GPL-2.0

//! A typed per-CPU object pool in front of a slab cache, refilled and drained in bulk.
//!
//! C header: [`include/linux/bottom_half.h`](srctree/include/linux/bottom_half.h)
//!
//! [`QMemPool<T>`] is prototype-kernel's qmempool on [`kernel::slab_bulk`] and
//! [`kernel::alf_queue`]: each CPU keeps a small SPSC queue of free objects in front of a shared
//! MPMC queue, and objects move between those and the slab cache in bulk, so that an object
//! freed and allocated again on one CPU touches one per-CPU queue and no atomic read-modify-write.
//! It differs from the C original in a few ways:
//! 1. A [`PoolObj`] is typed and owned, and goes back to its own pool when dropped, on any CPU.
//! 2. The per-CPU operations take a [`BhGuard`], the proof of their context, which is `!Send`.
//! 3. With IRQs disabled, where the C original `BUG()`s, the pool uses the slab directly.
//! 4. It never sleeps: a refill's GFP flags are reduced to their non-sleeping part.
//! 5. `__GFP_ZERO` zeroes the object handed out, whichever queue it came from; refills do not
//!    zero (the objects they bring in are handed out later, zeroed then if asked).
//! 6. It gives objects back: a CPU that goes offline hands its local queue to the cache (a CPU
//!    hotplug state), and memory pressure drains every queue to the cache (a shrinker).
//!
//! The design in full, with what each context costs and from which CPU the queues are given back,
//! is in the project's `docs/design.md` ("`kernel::qmempool`"). Not built on `PREEMPT_RT`, where
//! bottom-half-disabled sections are neither exclusive on a CPU nor free of preemption.
//!
//! # Contexts
//!
//! - [`QMemPool::new`], dropping a [`QMemPool`]: process, may sleep; not in a CPU hotplug
//!   callback.
//! - [`BhGuard::new`]: any but NMI; [`None`] with IRQs disabled (every hard-IRQ handler).
//! - [`QMemPool::alloc_in`], [`QMemPool::free_in`]: under a [`BhGuard`]: task or softirq, IRQs
//!   enabled.
//! - [`QMemPool::alloc`], dropping a [`PoolObj`]: any but NMI: under a [`BhGuard`] made for the
//!   call, or else the slab allocator directly.
//!
//! [`kernel::slab_bulk`]: crate::slab_bulk
//! [`kernel::alf_queue`]: crate::alf_queue

mod context;
mod ffi;
mod hooks;
mod object;
mod percpu;
mod pool;
mod queue;

#[cfg(CONFIG_RUST_QMEMPOOL_KUNIT_TEST)]
mod kunit_suite {
    use crate::slab_bulk::kunit::kunit_suite;
    super::selftest::selftests!(kunit_suite);
}
#[cfg(any(test, CONFIG_RUST_QMEMPOOL_KUNIT_TEST))]
pub(crate) mod selftest;

pub use self::context::BhGuard;
pub use self::object::PoolObj;
pub use self::pool::{QMemPool, BULK_DEFAULT, LOCAL_DEFAULT, SHARED_DEFAULT};
