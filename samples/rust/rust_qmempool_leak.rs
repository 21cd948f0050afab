// SPDX-License-Identifier: GPL-2.0

//! A module that leaks a [`QMemPool`] with `mem::forget`, which safe Rust allows, for the test
//! that this stays harmless once the module is gone.
//!
//! A pool registers a shrinker and a CPU hotplug instance whose callbacks are this module's code
//! (the pool's type is named here), and they reach the pool's queues and its cache. At load time
//! the module makes a cache and a pool in front of it, puts objects in the pool's queues and
//! forgets the pool; the cache stays in the module's state. At unload time the cache is dropped:
//! the leaked pool still pins it, so it is leaked, not destroyed, with a warning. Then, as the
//! module goes, the pool's registrations are undone, before the module's code is freed. After
//! `rmmod`, reclaim (`drop_caches`) and taking a CPU offline call none of them:
//! `scripts/test.sh` does both and checks the log for a fault.
//!
//! # Output
//!
//! ```text
//! rfl_test: qmempool_leak loaded
//! rfl_test: qmempool_leak FAIL <why>
//! ```
//!
//! [`QMemPool`]: kernel::qmempool::QMemPool

use core::mem;
use kernel::alloc::flags::GFP_KERNEL;
use kernel::prelude::*;
use kernel::qmempool::QMemPool;
use kernel::slab_bulk::{CacheFlags, OwnedCache};

#[path = "bench_common.rs"]
mod bench;

bench::sample_module! {
    type: QMemPoolLeak,
    name: "rust_qmempool_leak",
    description: "Sample: a qmempool leaked with mem::forget, harmless after the module is gone",
}

/// An object of the pool.
struct Item {
    value: u64,
}

/// The module's state: the cache of the pool it leaked.
struct QMemPoolLeak {
    _cache: OwnedCache<Item>,
}

impl kernel::Module for QMemPoolLeak {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let cache = OwnedCache::<Item>::new(c"rust_qmempool_leak", CacheFlags::NO_MERGE)?;
        let pool = QMemPool::<Item>::new(&cache).inspect_err(|e| {
            pr_info!("rfl_test: qmempool_leak FAIL pool: {:?}\n", e);
        })?;
        // One object out and back: a bulk of 16 comes from the cache and stays in this CPU's
        // queue of the pool.
        let item = pool.alloc(Item { value: 7 }, GFP_KERNEL)?;
        if item.value != 7 {
            pr_info!("rfl_test: qmempool_leak FAIL value\n");
            return Err(EINVAL);
        }
        drop(item);
        mem::forget(pool);
        pr_info!("rfl_test: qmempool_leak loaded\n");
        Ok(Self { _cache: cache })
    }
}
