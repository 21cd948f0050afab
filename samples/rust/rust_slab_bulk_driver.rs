// SPDX-License-Identifier: GPL-2.0

//! A driver's use of a module-lifetime slab cache: requests kept across calls.
//!
//! The module declares a cache of its request type once ([`kernel::static_cache!`]), registers
//! it at load time and keeps the registration in its state, beside a `Mutex<KVec<...>>` of the
//! requests in flight: `Box<Request, RequestCache>`s (the cache type is the kernel's
//! `Allocator` over the cache), which borrow nothing, so the state is a plain struct behind an
//! `Arc`, as a device's would be. Each round is two calls a driver would get:
//!
//! - submit: 32 requests in one bulk allocation ([`Cache::alloc_bulk_with`] on the
//!   registration), each kept as a box with [`CacheRegistration::keep`] and parked in the
//!   vector, and one more allocated on its own from the cache (`Box::new`);
//! - complete: the 24 oldest requests taken out of the vector, checked (first in, first out)
//!   and freed in bulk, 16 at a time: back to borrowed objects with
//!   [`CacheRegistration::to_obj`], into a [`FreeBatch`].
//!
//! Eight rounds run at load time; what is still in flight then (72 requests) stays in the
//! module's state until it is unloaded, when it is completed the same way and the cache goes.
//! After every call the number kept is checked, and so is the cache's own count of objects in
//! use where the project's test-only helper is built (`CONFIG_KUNIT` and `CONFIG_SLUB_DEBUG`).
//!
//! # Output
//!
//! A line at load time and the verdict at unload time, which `scripts/test.sh` checks:
//!
//! ```text
//! rfl_test: slab_bulk_driver loaded rounds=8 submitted=264 completed=192 in_flight=72
//! rfl_test: slab_bulk_driver PASS rounds=8 submitted=264 completed=264 in_use=0
//! rfl_test: slab_bulk_driver FAIL <why>
//! ```
//!
//! `in_use` is `-1` when the object count is not built. A failure at load time prints the
//! FAIL line then and fails the load.
//!
//! [`Cache::alloc_bulk_with`]: kernel::slab_bulk::Cache::alloc_bulk_with

use core::mem;
use kernel::new_mutex;
use kernel::prelude::*;
use kernel::slab_bulk::{CacheFlags, CacheRegistration, FreeBatch, StaticCache};
use kernel::sync::{Arc, Mutex};

#[path = "bench_common.rs"]
mod bench;

bench::sample_module! {
    type: SlabBulkDriver,
    name: "rust_slab_bulk_driver",
    description: "Sample: a driver keeping slab objects across calls with a module-lifetime cache",
}

/// Requests allocated per submit call in one bulk allocation (one more comes on its own).
const SUBMIT_BULK: usize = 32;
/// Requests completed per complete call.
const COMPLETE: usize = 24;
/// Requests freed per bulk free.
const FREE_BULK: usize = 16;
/// Rounds (a submit and a complete) at load time.
const ROUNDS: usize = 8;

/// A request in flight, as a driver might keep one.
struct Request {
    /// Its place in submission order.
    seq: u64,
    /// A payload the device would fill.
    data: [u64; 7],
}

impl Request {
    fn new(seq: u64) -> Self {
        Self {
            seq,
            data: [seq ^ 0x5a5a; 7],
        }
    }

    /// Whether the request is intact: its payload still matches its sequence number.
    fn intact(&self) -> bool {
        self.data.iter().all(|d| *d == self.seq ^ 0x5a5a)
    }
}

kernel::static_cache! {
    /// The module's requests, for as long as the module is loaded.
    struct RequestCache(Request) = c"rust_slab_bulk_driver_req",
        CacheFlags::HWCACHE_ALIGN | CacheFlags::NO_MERGE;
}

/// The requests in flight and the counters, under the state's mutex.
struct InFlight {
    /// Oldest first.
    requests: KVec<Box<Request, RequestCache>>,
    submitted: u64,
    completed: u64,
}

/// The module's state, shared as a device's would be.
#[pin_data]
struct DriverState {
    /// Dropped before `reg`: whatever is still in flight goes before the cache.
    #[pin]
    inflight: Mutex<InFlight>,
    reg: CacheRegistration<RequestCache>,
}

/// The objects of the cache in use now, through the test-only helper of the project's KUnit
/// suites (`rust/helpers/slab_bulk.c`), if it is built.
fn in_use(reg: &CacheRegistration<RequestCache>) -> Option<usize> {
    #[cfg(all(CONFIG_KUNIT, CONFIG_SLUB_DEBUG))]
    {
        // SAFETY: The registration's cache is live; the helper only shrinks it and reads its
        // counters (process context).
        Some(unsafe { kernel::bindings::kmem_cache_objects_in_use(reg.as_raw()) } as usize)
    }
    #[cfg(not(all(CONFIG_KUNIT, CONFIG_SLUB_DEBUG)))]
    {
        let _ = reg;
        None
    }
}

impl DriverState {
    /// The submit call: a bulk of requests and one single, all kept in flight.
    fn submit(&self) -> Result<(), &'static str> {
        let mut guard = self.inflight.lock();
        let first = guard.submitted;
        // The batch gives its last object first: the last is made the oldest.
        let mut batch = self
            .reg
            .alloc_bulk_with::<SUBMIT_BULK>(GFP_KERNEL, |i| {
                Request::new(first + (SUBMIT_BULK - 1 - i) as u64)
            })
            .map_err(|_| "bulk allocation failed")?;
        while let Some(obj) = batch.pop() {
            let kept = self
                .reg
                .keep(obj)
                .map_err(|_| "keep refused an object of its cache")?;
            guard
                .requests
                .push(kept, GFP_KERNEL)
                .map_err(|_| "no memory")?;
        }
        // From the registration's cache, through its allocator type.
        let single =
            Box::<_, RequestCache>::new(Request::new(first + SUBMIT_BULK as u64), GFP_KERNEL)
                .map_err(|_| "single allocation failed")?;
        guard
            .requests
            .push(single, GFP_KERNEL)
            .map_err(|_| "no memory")?;
        guard.submitted += SUBMIT_BULK as u64 + 1;
        Ok(())
    }

    /// The complete call: the `n` oldest requests (all, if fewer) checked and freed in bulk.
    fn complete(&self, n: usize) -> Result<(), &'static str> {
        let mut guard = self.inflight.lock();
        // 6.12's `KVec` has no `pop` or `drain`: the vector is taken whole and the youngest
        // requests go back into a new one.
        let all = mem::take(&mut guard.requests);
        let n = n.min(all.len());
        let mut rest = KVec::with_capacity(all.len() - n, GFP_KERNEL).map_err(|_| "no memory")?;
        let mut done = FreeBatch::<'_, Request, FREE_BULK>::new(&self.reg);
        let mut fifo = true;
        let mut next = guard.completed;
        for (i, req) in all.into_iter().enumerate() {
            if i < n {
                fifo &= req.seq == next && req.intact();
                next += 1;
                // Back to an object that borrows the registration, freed with 15 others.
                done.add(self.reg.to_obj(req));
            } else {
                rest.push(req, GFP_KERNEL).map_err(|_| "no memory")?;
            }
        }
        done.flush();
        guard.completed = next;
        guard.requests = rest;
        if !fifo {
            return Err("a completed request was out of order or corrupted");
        }
        Ok(())
    }

    /// Checks the requests kept and the cache's count against the counters.
    fn check(&self) -> Result<(), &'static str> {
        let guard = self.inflight.lock();
        let kept = (guard.submitted - guard.completed) as usize;
        if guard.requests.len() != kept {
            return Err("requests kept do not match submitted minus completed");
        }
        if !guard.requests.iter().all(|r| r.intact()) {
            return Err("a request in flight was corrupted");
        }
        if in_use(&self.reg).is_some_and(|n| n != kept) {
            return Err("the cache's objects in use do not match the requests kept");
        }
        Ok(())
    }

    /// The load-time rounds.
    fn run(&self) -> Result<(), &'static str> {
        for _ in 0..ROUNDS {
            self.submit()?;
            self.check()?;
            self.complete(COMPLETE)?;
            self.check()?;
        }
        Ok(())
    }
}

struct SlabBulkDriver {
    state: Arc<DriverState>,
}

impl kernel::Module for SlabBulkDriver {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let reg = RequestCache::register().inspect_err(|e| {
            pr_info!("rfl_test: slab_bulk_driver FAIL register: {:?}\n", e);
        })?;
        let state = Arc::pin_init(
            pin_init!(DriverState {
                inflight <- new_mutex!(InFlight {
                    requests: KVec::new(),
                    submitted: 0,
                    completed: 0,
                }),
                reg,
            }),
            GFP_KERNEL,
        )?;
        if let Err(why) = state.run() {
            pr_info!("rfl_test: slab_bulk_driver FAIL {}\n", why);
            return Err(EINVAL);
        }
        let guard = state.inflight.lock();
        pr_info!(
            "rfl_test: slab_bulk_driver loaded rounds={} submitted={} completed={} in_flight={}\n",
            ROUNDS,
            guard.submitted,
            guard.completed,
            guard.requests.len()
        );
        drop(guard);
        Ok(Self { state })
    }
}

impl Drop for SlabBulkDriver {
    fn drop(&mut self) {
        // The last requests in flight, completed as any others.
        let in_flight = self.state.inflight.lock().requests.len();
        let result = self
            .state
            .complete(in_flight)
            .and_then(|()| self.state.check());
        let guard = self.state.inflight.lock();
        let (submitted, completed) = (guard.submitted, guard.completed);
        drop(guard);
        let count = in_use(&self.state.reg).map_or(-1, |n| n as i64);
        match result {
            Ok(()) if count <= 0 => pr_info!(
                "rfl_test: slab_bulk_driver PASS rounds={} submitted={} completed={} in_use={}\n",
                ROUNDS,
                submitted,
                completed,
                count
            ),
            Ok(()) => pr_info!(
                "rfl_test: slab_bulk_driver FAIL {} objects in use after the last completion\n",
                count
            ),
            Err(why) => pr_info!("rfl_test: slab_bulk_driver FAIL {}\n", why),
        }
        // The state, its last requests (none) and then the registration go with `self`.
    }
}
