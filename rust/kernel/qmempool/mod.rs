// SPDX-License-Identifier: GPL-2.0

//! A typed per-CPU object pool in front of a slab cache, refilled and drained in bulk.
//!
//! C header: [`include/linux/bottom_half.h`](srctree/include/linux/bottom_half.h)
//!
//! [`QMemPool<T>`] is prototype-kernel's qmempool ("a quick queue based mempool", RFC 2014) on
//! [`kernel::slab_bulk`] and [`kernel::alf_queue`]: each CPU keeps a small single-producer
//! single-consumer queue of free objects, all CPUs share a multi-producer multi-consumer queue,
//! and objects move between those and the slab cache in bulk (`kmem_cache_alloc_bulk`,
//! `kmem_cache_free_bulk`), so that the common case, an object freed and allocated again on the
//! same CPU, touches one per-CPU queue with no atomic read-modify-write.
//!
//! - [`QMemPool`] owns the queues and borrows a [`Cache`](crate::slab_bulk::Cache): objects go
//!   back to that cache only, and the cache outlives the pool.
//! - [`PoolObj`] is one object, typed and owned, given back to its pool when dropped.
//! - [`BhGuard`] is the context the per-CPU queues need: bottom halves disabled, or the softirq
//!   itself. It is `!Send`.
//!
//! # Contexts
//!
//! | operation | context |
//! |---|---|
//! | [`QMemPool::new`], dropping a [`QMemPool`] | process, may sleep |
//! | [`BhGuard::new`] | any but NMI; [`None`] with IRQs disabled (every hard-IRQ handler) |
//! | [`QMemPool::alloc_in`], [`QMemPool::free_in`] | under a [`BhGuard`]: task or softirq, IRQs enabled |
//! | [`QMemPool::alloc`], dropping a [`PoolObj`] | any but NMI: under a [`BhGuard`] made for the call, or else the slab allocator directly |
//!
//! - **Softirq** (NAPI, timers, tasklets): the guard costs two reads (the C original's
//!   `in_serving_softirq()` test); this is the context the pool is made for.
//! - **Task**: the guard disables bottom halves (`local_bh_disable()`, which also disables
//!   preemption), as the C original does outside softirq; hold one guard across many
//!   operations to pay for it once.
//! - **Hard IRQ and IRQs disabled**: the per-CPU queues are not used; [`QMemPool::alloc`] takes
//!   an object from the cache (`kmem_cache_alloc`) and dropping a [`PoolObj`] frees it there
//!   (`kmem_cache_free`), both of which are allowed there. Such an object is an object of the
//!   same cache like any other: it may later be freed into the pool, and vice versa. (The C
//!   original `BUG()`s in hard IRQ instead.) Reasons: a hard-IRQ handler may interrupt a guarded
//!   section of the same CPU in the middle of a queue operation, `local_bh_enable()` with IRQs
//!   disabled is a bug, and the bulk slab calls need IRQs enabled.
//! - **NMI**: not allowed, as for the slab allocator.
//! - **`PREEMPT_RT`**: the module is not built. The per-CPU queues rely on a CPU's
//!   bottom-half-disabled sections being exclusive and not preemptible, and the shared queue on
//!   its reservations being committed without preemption; on `PREEMPT_RT` those sections are
//!   preemptible (and on 7.x, without `PREEMPT_RT_NEEDS_BH_LOCK`, not serialised per CPU either),
//!   so two tasks of one CPU could run the same single-consumer queue at once.
//!
//! The types enforce what they can: the per-CPU operations take a `&BhGuard`, which only
//! [`BhGuard::new`] makes, and which cannot be sent to another CPU. They cannot stop code from
//! disabling IRQs while it holds a guard (then refills and drains would call the bulk slab
//! functions with IRQs disabled; lockdep reports it, as for [`kernel::slab_bulk`]); dropping
//! the guard there is allowed (bottom halves are re-enabled without running softirqs).
//!
//! The pool never sleeps: its refills run with bottom halves disabled, so the GFP flags of an
//! allocation are reduced to their non-sleeping part (no direct reclaim), and `GFP_ATOMIC` or
//! `GFP_NOWAIT` is what callers normally pass.
//!
//! # Where freed objects go
//!
//! An object freed on another CPU than the one it came from goes into the freeing CPU's queue,
//! as in the C original: the pool's objects are interchangeable, and what must hold, and does,
//! is that it goes back to this pool and from there to this pool's cache only. A producer CPU
//! that allocates and a consumer CPU that frees thus move objects through the shared queue,
//! `BULK` at a time. (On NUMA machines an object may so end up cached on another node than its
//! memory's, as in the C original.)
//!
//! # Errors
//!
//! `ENOMEM` when the pool is empty on this CPU and in the shared queue and the cache cannot give
//! a bulk of objects: all or nothing, nothing leaks. `EINVAL` from [`QMemPool::new`] for a local
//! queue larger than the per-CPU allocator's limit.
//!
//! [`kernel::slab_bulk`]: crate::slab_bulk
//! [`kernel::alf_queue`]: crate::alf_queue

mod context;
mod object;
mod percpu;
mod pool;

// slab_bulk's KUnit glue, mounted here a second time on purpose: its `super::selftest` is then
// this module's, so the one file registers both suites.
#[cfg(all(CONFIG_RUST_QMEMPOOL_KUNIT_TEST, kernel_ge_7_0))]
#[path = "../slab_bulk/kunit.rs"]
#[allow(clippy::duplicate_mod)]
mod kunit;
#[cfg(all(CONFIG_RUST_QMEMPOOL_KUNIT_TEST, not(kernel_ge_7_0)))]
#[path = "../slab_bulk/kunit_6_12.rs"]
#[allow(clippy::duplicate_mod)]
mod kunit;
#[cfg(any(test, CONFIG_RUST_QMEMPOOL_KUNIT_TEST))]
pub(crate) mod selftest;

pub use self::context::BhGuard;
pub use self::object::PoolObj;
pub use self::pool::{QMemPool, BULK_DEFAULT, LOCAL_DEFAULT, SHARED_DEFAULT};
