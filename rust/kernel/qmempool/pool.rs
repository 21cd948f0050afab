// SPDX-License-Identifier: GPL-2.0

//! [`QMemPool`]: per-CPU queues of free objects in front of a slab cache.

use super::context::BhGuard;
use super::hooks::Hooks;
use super::percpu::{self, PerCpu};
use super::queue::{Local, Raw};
use crate::alf_queue::{MpmcQueue, SpscQueue};
use crate::alloc::{
    flags::{GFP_KERNEL, GFP_NOWAIT},
    Flags, KBox,
};
use crate::error::{code::*, Result};
use crate::slab_bulk::{Cache, CachePin, Obj, ObjArray, OwnedCache};
use core::mem::{self, MaybeUninit};

/// The default size of each CPU's local queue (the C qmempool's `QMEMPOOL_LOCALQ` for skbs).
pub const LOCAL_DEFAULT: usize = 32;
/// The default size of the shared queue (the C qmempool's `QMEMPOOL_SHAREDQ` cap).
pub const SHARED_DEFAULT: usize = 1024;
/// The default number of objects moved at a time (the C qmempool's `QMEMPOOL_BULK`).
pub const BULK_DEFAULT: usize = 16;

/// A pool of objects of type `T` in front of a slab cache: per-CPU queues of free objects
/// refilled from a shared queue and from the cache, and drained to them, in bulk.
///
/// The design is the C qmempool's (prototype-kernel `kernel/mm/qmempool.c`): each CPU has a
/// single-producer single-consumer queue of up to `LOCAL` free objects ([`SpscQueue`], no atomic
/// read-modify-write), all CPUs share a multi-producer multi-consumer queue of up to `SHARED`
/// ([`MpmcQueue`], one compare-and-swap per side per bulk), and objects move between them and
/// the cache `BULK` at a time:
///
/// - allocation takes from this CPU's queue; when it is empty, `BULK` objects come from the
///   shared queue (or, when that is empty too, from one `kmem_cache_alloc_bulk`), one is
///   returned and the rest refill the local queue;
/// - freeing puts the object in this CPU's queue; when it is full, `BULK` objects go from it to
///   the shared queue in one bulk enqueue (or, when that is full too, back to the cache in one
///   `kmem_cache_free_bulk`).
///
/// The objects move between the cache and the queues through an [`ObjArray`], whose pointer
/// array is the one the queue operations read and write ([`ObjArray::raw_objs`]): nothing is
/// copied in between.
///
/// Objects come out as [`PoolObj`]s, owned and typed (the allocations are in `object.rs`, beside
/// that type), and go back to this pool when dropped, whichever CPU drops them: into that CPU's
/// queue, as in the C original. An object is not tied to the CPU it came from; what is tied is
/// that it belongs to this pool's cache, and the pool hands it only back to the cache it came
/// from. When the pool is dropped, every object it holds goes back to the cache; objects still
/// out borrow the pool, so there are none.
///
/// The knobs are const parameters: `LOCAL` and `SHARED` are powers of two, `BULK` is at least 1
/// and at most `LOCAL` and `SHARED` (checked at compile time). The defaults are the C
/// original's for skbs: 32, 1024 and 16.
///
/// Contexts: see the [module documentation](super). Operations go through a [`BhGuard`]; the
/// convenience methods ([`QMemPool::alloc`], dropping a [`PoolObj`]) make one each time, or go
/// to the slab allocator directly where no guard can be made (hard IRQ, IRQs disabled).
///
/// [`PoolObj`]: super::PoolObj
///
/// # Invariants
///
/// - Every pointer in `shared` and in each CPU's queue in `local` is a live object of `cache`,
///   distinct from all others, owned by the pool, its contents uninitialised (no `T` in it).
/// - Each CPU's local queue is used, on either side, only by code holding a [`BhGuard`] on that
///   CPU, through `&mut self`, or, once the CPU is dead, by `hooks`' hotplug teardown.
/// - `hooks`, when there are any, are registered for this pool's cache and queues (the twin has
///   none).
/// - `_pin` pins `cache` ([`OwnedCache::pin_for`]): the C cache stays alive while the pool does,
///   and for ever if the pool is leaked.
///
/// # Examples
///
/// ```
/// # use kernel::prelude::*;
/// use kernel::alloc::flags::GFP_ATOMIC;
/// use kernel::qmempool::{BhGuard, QMemPool};
/// use kernel::slab_bulk::{CacheFlags, OwnedCache};
///
/// struct Packet {
///     len: u32,
///     data: [u8; 60],
/// }
///
/// let cache = OwnedCache::<Packet>::new(c"doc_qmempool", CacheFlags::HWCACHE_ALIGN)?;
/// let pool = QMemPool::<Packet>::new(&cache)?;
/// // One object at a time: each call disables bottom halves for its own duration.
/// let mut pkt = pool.alloc(Packet { len: 0, data: [0; 60] }, GFP_ATOMIC)?;
/// pkt.len = 60;
/// drop(pkt); // Back to this CPU's queue of `pool`.
/// // Many under one guard, as a NAPI poll loop would (in softirq the guard costs nothing).
/// if let Some(guard) = BhGuard::new() {
///     for i in 0..100u32 {
///         let pkt = pool.alloc_in(&guard, Packet { len: i, data: [0; 60] }, GFP_ATOMIC)?;
///         assert_eq!(pkt.len, i);
///         pool.free_in(&guard, pkt);
///     }
/// }
/// drop(pool); // Every object goes back to `cache`.
/// # Ok::<(), Error>(())
/// ```
pub struct QMemPool<
    'c,
    T,
    const LOCAL: usize = LOCAL_DEFAULT,
    const SHARED: usize = SHARED_DEFAULT,
    const BULK: usize = BULK_DEFAULT,
> {
    cache: &'c Cache<MaybeUninit<T>>,
    shared: KBox<MpmcQueue<Raw<T>, SHARED>>,
    local: PerCpu<Local<T, LOCAL>>,
    hooks: Option<KBox<Hooks<T, LOCAL, SHARED, BULK>>>,
    /// Declared last, so dropped last: the cache is pinned until every queue is empty and the
    /// hooks are gone.
    _pin: CachePin<'c, MaybeUninit<T>>,
}

// SAFETY: The pool holds no `T`, only free memory of its cache (type invariant), which may be
// handed out and taken back on any CPU; its queues are made for concurrent use, the local ones
// under the `BhGuard` discipline (type invariant). An object that holds a `T` is a `PoolObj`,
// which is `Send` or `Sync` only when `T` is.
unsafe impl<T, const L: usize, const S: usize, const B: usize> Send for QMemPool<'_, T, L, S, B> {}
// SAFETY: As above.
unsafe impl<T, const L: usize, const S: usize, const B: usize> Sync for QMemPool<'_, T, L, S, B> {}

/// The flags the pool allocates with: those of `flags` that never sleep, without `__GFP_ZERO`.
///
/// The pool refills with bottom halves disabled, where the allocator must not sleep: direct
/// reclaim is dropped, and with it I/O and FS, which only matter to it (`GFP_KERNEL` becomes
/// `GFP_NOWAIT`'s kswapd wake-up, `GFP_ATOMIC` stays as it is). An object is zeroed when it is
/// handed out ([`QMemPool::alloc_uninit`]), not when the slab gives it to the pool.
#[inline]
fn nosleep(flags: Flags) -> Flags {
    flags & !(GFP_KERNEL & !GFP_NOWAIT) & !crate::alloc::flags::__GFP_ZERO
}

impl<'c, T, const LOCAL: usize, const SHARED: usize, const BULK: usize>
    QMemPool<'c, T, LOCAL, SHARED, BULK>
{
    /// Creates an empty pool in front of `cache`.
    ///
    /// Objects come from the cache when the pool needs them, not before. The pool registers
    /// with CPU hotplug and as a shrinker, so that a CPU that goes offline and memory pressure
    /// get its objects back (see the module documentation). It pins the cache (see
    /// [`OwnedCache`]): a pool leaked with `mem::forget` stays registered, and a cache dropped
    /// after that is leaked, not destroyed, so the leaked pool's callbacks still find it. Errors: `ENOMEM` if the queues or
    /// the registrations cannot be allocated, `EINVAL` if a CPU's queue is larger than the
    /// per-CPU allocator's limit (32 KiB: about 4000 objects), and the CPU hotplug core's
    /// errors. Process context: it may sleep; not from a CPU hotplug callback (it takes the
    /// hotplug lock), and neither is dropping the pool.
    pub fn new(cache: &'c OwnedCache<T>) -> Result<Self> {
        const {
            assert!(BULK >= 1, "BULK must be at least 1");
            assert!(BULK <= LOCAL, "BULK must not exceed LOCAL");
            assert!(BULK <= SHARED, "BULK must not exceed SHARED");
        };
        if mem::size_of::<Local<T, LOCAL>>() > percpu::MAX_SIZE {
            return Err(EINVAL);
        }
        let mut shared = KBox::<MpmcQueue<Raw<T>, SHARED>>::new_uninit(GFP_KERNEL)?;
        MpmcQueue::init_in_place(&mut shared);
        // SAFETY: `init_in_place` initialised the queue.
        let shared = unsafe { shared.assume_init() };
        let local = PerCpu::new(|slot| {
            SpscQueue::init_in_place(slot);
        })?;
        // Pinned first: the hooks' callbacks reach the cache for as long as they are
        // registered, which is for ever if the pool is leaked.
        let pin = cache.uninit().pin_for();
        let hooks = Hooks::register(pin.cache(), &shared, &local)?;
        // INVARIANT: every queue is empty, no guard uses them yet, `hooks` are registered for
        // them, and the cache is pinned.
        Ok(Self {
            cache: pin.cache(),
            shared,
            local,
            hooks,
            _pin: pin,
        })
    }

    /// Returns the cache the pool's objects belong to.
    #[inline]
    pub fn cache(&self) -> &'c Cache<T> {
        // SAFETY: `Cache<MaybeUninit<T>>` and `Cache<T>` are the same C cache, suitable for `T`
        // (same size and alignment), alive for `'c`.
        unsafe { Cache::from_raw(self.cache.as_raw()) }
    }

    /// Puts the free object `raw` back, in whatever context the caller is in: in this CPU's
    /// queue under a [`BhGuard`] made for the call or, where none can be made (hard IRQ, IRQs
    /// disabled), straight back to the cache with `kmem_cache_free`.
    ///
    /// `raw` must be a free object of the pool's cache, owned by the caller, which gives it up.
    #[inline]
    pub(super) fn put_anywhere(&self, raw: Raw<T>) {
        match BhGuard::new() {
            Some(guard) => self.put(&guard, raw),
            // SAFETY: `raw` is a free object of `cache`, owned by nobody else (the caller's
            // contract); `kmem_cache_free` may be called in any context but NMI.
            None => drop(unsafe { Obj::from_raw(self.cache, raw) }),
        }
    }

    /// Takes a free object in whatever context the caller is in: under a [`BhGuard`] made for
    /// the call or, where none can be made, from the cache directly.
    #[inline]
    pub(super) fn take_anywhere(&self, flags: Flags) -> Result<Raw<T>> {
        match BhGuard::new() {
            Some(guard) => self.take(&guard, flags),
            None => Ok(self.cache().alloc_uninit(nosleep(flags))?.into_raw()),
        }
    }

    /// Takes a free object on `guard`'s CPU.
    #[inline]
    pub(super) fn take(&self, guard: &BhGuard, flags: Flags) -> Result<Raw<T>> {
        let local = self.local.this_cpu(guard);
        // SAFETY: The guard makes this code the only user of this CPU's queue (type invariant).
        match unsafe { local.dequeue() } {
            Some(raw) => Ok(raw),
            None => self.refill(local, flags),
        }
    }

    /// Refills the empty `local` queue with `BULK` objects, from the shared queue or else from
    /// the cache, and returns one more.
    ///
    /// Called with a [`BhGuard`] on the CPU that `local` belongs to.
    #[inline(never)]
    fn refill(&self, local: &Local<T, LOCAL>, flags: Flags) -> Result<Raw<T>> {
        let mut batch = ObjArray::<'_, MaybeUninit<T>, BULK>::new(self.cache);
        // SAFETY: The shared queue holds free objects of `cache` only (type invariant), so what
        // lands in the batch is what it may hold; the batch owns them from here.
        let got = unsafe { self.shared.dequeue_burst(batch.raw_objs(), BULK) };
        if got.unwrap_or(0) == 0 {
            // All or nothing: on failure the batch is still empty. IRQs were enabled when the
            // guard was made (its invariant) and the bulk call needs them so; code that
            // disables them while it holds a guard breaks that rule (see the module
            // documentation: lockdep reports it).
            batch.alloc(BULK, nosleep(flags))?;
        }
        let Some(obj) = batch.pop() else {
            return Err(ENOMEM);
        };
        // SAFETY: The local queue takes free objects of `cache` only; whatever it does not take
        // stays in the batch, which frees it. The guard makes this code the only producer of
        // this CPU's queue (type invariant), which is empty (the caller found it so and nobody
        // else fills it) and at least `BULK` large.
        let _ = unsafe { local.enqueue_bulk(batch.raw_objs()) };
        // Anything left (never, by the above) goes back to the cache with the batch.
        Ok(obj.into_raw())
    }

    /// Puts the free object `raw` in `guard`'s CPU's queue, making room when it is full.
    #[inline]
    pub(super) fn put(&self, guard: &BhGuard, raw: Raw<T>) {
        let local = self.local.this_cpu(guard);
        // SAFETY: `raw` is a free object of the pool's cache (the caller's contract); the guard
        // makes this code the only producer of this CPU's queue (type invariant).
        if let Err(raw) = unsafe { local.enqueue(raw) } {
            self.spill(local, raw);
        }
    }

    /// Moves `BULK` objects from the full `local` queue to the shared queue (or, when that is
    /// full, to the cache), then puts `raw` in the local queue: it is the most recently used.
    ///
    /// Called with a [`BhGuard`] on the CPU that `local` belongs to.
    #[inline(never)]
    fn spill(&self, local: &Local<T, LOCAL>, raw: Raw<T>) {
        let mut batch = ObjArray::<'_, MaybeUninit<T>, BULK>::new(self.cache);
        // SAFETY: The local queue holds free objects of `cache` only (type invariant); the
        // batch owns those it takes. The guard makes this code the only consumer.
        let _ = unsafe { local.dequeue_bulk(batch.raw_objs(), BULK) };
        // SAFETY: As in `put`: the only producer, a free object of `cache`.
        if let Err(raw) = unsafe { local.enqueue(raw) } {
            // Still full (the dequeue above cannot fail on a full queue, so never): give the
            // object back to the cache.
            // SAFETY: `raw` is a free object of `cache`, owned by nobody else.
            drop(unsafe { Obj::from_raw(self.cache, raw) });
        }
        // SAFETY: The shared queue takes free objects of `cache` only; on `Full` it takes none
        // and they stay in the batch, which frees them to the cache in one bulk call (with
        // IRQs enabled, as in `refill`).
        let _ = unsafe { self.shared.enqueue_bulk(batch.raw_objs()) };
    }

    /// Runs the pool's shrinker as reclaim does and waits for what it queued; returns what its
    /// count found.
    #[cfg(CONFIG_RUST_QMEMPOOL_KUNIT_TEST)]
    pub(crate) fn shrink(&self) -> usize {
        self.hooks.as_ref().map_or(0, |h| h.shrink())
    }

    /// Returns how many free objects the pool holds: in the shared queue, and in each CPU's.
    #[cfg(any(test, CONFIG_RUST_QMEMPOOL_KUNIT_TEST))]
    pub(crate) fn held(&self) -> (usize, impl Iterator<Item = (u32, usize)> + '_) {
        let locals =
            percpu::possible_cpus().filter_map(move |cpu| Some((cpu, self.local.get(cpu)?.len())));
        (self.shared.len(), locals)
    }
}

impl<T, const LOCAL: usize, const SHARED: usize, const BULK: usize> Drop
    for QMemPool<'_, T, LOCAL, SHARED, BULK>
{
    fn drop(&mut self) {
        // First nothing of the pool's registrations may run any more (the shrinker, its work
        // items, the hotplug teardown): dropping the hooks waits for them.
        drop(self.hooks.take());
        // `&mut self`: no object is out (they borrow the pool) and no guard is using a queue,
        // so every queue can be emptied from here, `BULK` objects per `kmem_cache_free_bulk`.
        let mut batch = ObjArray::<'_, MaybeUninit<T>, BULK>::new(self.cache);
        for local in self.local.iter_mut() {
            let (_, mut consumer) = local.split();
            // SAFETY: The queue holds free objects of `cache` only (type invariant).
            while unsafe { consumer.dequeue_burst(batch.raw_objs(), BULK) }.unwrap_or(0) > 0 {
                batch.free();
            }
        }
        // SAFETY: As above, for the shared queue.
        while unsafe { self.shared.dequeue_burst(batch.raw_objs(), BULK) }.unwrap_or(0) > 0 {
            batch.free();
        }
    }
}
