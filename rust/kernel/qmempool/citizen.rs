// SPDX-License-Identifier: GPL-2.0

//! [`Citizen`]: what a pool gives back, to a CPU that goes offline and to memory pressure.
//!
//! C headers: [`include/linux/cpuhotplug.h`](srctree/include/linux/cpuhotplug.h),
//! [`include/linux/shrinker.h`](srctree/include/linux/shrinker.h)
//!
//! A [`Citizen`] belongs to one pool and lives on the heap, where the kernel can hold its
//! address while the pool itself moves: an instance of the CPU hotplug state that all pools
//! share (its teardown runs on a surviving CPU once a CPU is dead, and frees that CPU's local
//! queue to the cache), a shrinker (under memory pressure it frees the shared queue to the cache
//! and queues one work item on each online CPU, which frees that CPU's local queue there), and
//! those per-CPU work items. None of it is on the allocation and free paths. What runs where,
//! and why each access to a queue is its only user's, is in the project's `docs/design.md`
//! ("`kernel::qmempool`", "Giving objects back").
//!
//! The userspace twin has neither CPU hotplug nor reclaim: there a pool has no `Citizen`.

#[cfg(CONFIG_RUST)]
pub(super) use self::kernel::Citizen;

/// The twin's stand-in: no hotplug, no reclaim, nothing registered.
#[cfg(not(CONFIG_RUST))]
pub(super) struct Citizen<T, const L: usize, const S: usize, const B: usize>(
    core::marker::PhantomData<T>,
);

#[cfg(not(CONFIG_RUST))]
impl<T, const L: usize, const S: usize, const B: usize> Citizen<T, L, S, B> {
    /// Registers nothing.
    pub(super) fn register(
        _cache: &crate::slab_bulk::Cache<core::mem::MaybeUninit<T>>,
        _shared: &crate::alf_queue::MpmcQueue<super::pool::Raw<T>, S>,
        _local: &super::percpu::PerCpu<super::pool::Local<T, L>>,
    ) -> crate::error::Result<Option<crate::alloc::KBox<Self>>> {
        Ok(None)
    }
}

#[cfg(CONFIG_RUST)]
mod kernel {
    use super::super::context::BhGuard;
    use super::super::ffi::{self, cpuhp_state, hlist_node, shrink_control, shrinker, work_struct};
    use super::super::percpu::{possible_cpus, PerCpu};
    use super::super::pool::{Local, Raw};
    use crate::alf_queue::MpmcQueue;
    use crate::alloc::{flags::GFP_KERNEL, KBox};
    use crate::error::{code::*, to_result, Result};
    use crate::ffi::{c_int, c_uint, c_ulong, c_void};
    use crate::slab_bulk::{Cache, ObjArray};
    use crate::types::Opaque;
    use core::mem::{self, MaybeUninit};
    use core::ptr::{self, NonNull};
    use core::sync::atomic::{AtomicI32, Ordering};

    /// The dynamic CPU hotplug state of every pool (0 until the first pool sets it up). It is
    /// never removed: the `kernel` crate is built in, and so is the callback.
    static STATE: AtomicI32 = AtomicI32::new(0);

    /// Returns the pools' CPU hotplug state, setting it up on first use. Process context.
    fn hotplug_state() -> Result<cpuhp_state> {
        let state = STATE.load(Ordering::Acquire);
        if state > 0 {
            return Ok(state);
        }
        let new = ffi::cpuhp_setup_dead_multi(c"rust/qmempool:dead", cpu_dead);
        to_result(new)?;
        match STATE.compare_exchange(0, new, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Ok(new),
            Err(other) => {
                // Another pool set one up meanwhile: give this one back (it has no instance).
                // SAFETY: `new` was set up above, has no instance, and nothing else knows of it;
                // process context.
                unsafe { ffi::cpuhp_remove_state(new) };
                Ok(other)
            }
        }
    }

    /// The part of a [`Citizen`] the hotplug callback knows: its state instance and how to
    /// empty a dead CPU's queue.
    ///
    /// # Invariants
    ///
    /// `header` is the first field of a `Citizen<T, L, S, B>`, and `dead` is that type's
    /// `drain_dead`.
    #[repr(C)]
    struct Header {
        node: Opaque<hlist_node>,
        dead: unsafe fn(*const Header, u32),
    }

    /// The teardown of the pools' hotplug state: runs for each pool on a surviving CPU (the
    /// control CPU, in process context) once CPU `cpu` is dead.
    ///
    /// # Safety
    ///
    /// Called by the CPU hotplug core only, with the `node` of a registered [`Header`].
    unsafe extern "C" fn cpu_dead(cpu: c_uint, node: *mut hlist_node) -> c_int {
        let header = node.cast::<Header>().cast_const();
        // SAFETY: `node` is the first field of a `repr(C)` `Header`, registered until its
        // `Citizen` is dropped, which waits for this callback (the hotplug lock); `dead` is its
        // type's drain (type invariant) and `cpu` is dead.
        unsafe { ((*header).dead)(header, cpu) };
        0
    }

    /// One CPU's work item, which frees that CPU's local queue to the cache.
    ///
    /// # Invariants
    ///
    /// `work` is the first field; once initialised, its function is `drain_work::<T, L, S, B>`
    /// of the `Citizen<T, L, S, B>` at `owner`.
    #[repr(C)]
    struct Work {
        work: Opaque<work_struct>,
        owner: *const c_void,
    }

    /// What a pool registers to give objects back. See the [module documentation](super).
    ///
    /// # Invariants
    ///
    /// - `cache`, `shared` and `local` are the pool's: they outlive this value, and the queues
    ///   hold free objects of `cache` only.
    /// - `header.node` is an instance of the state `state` (unless `state` is 0, after a failed
    ///   registration), and `shrinker` an allocated shrinker, registered with this value as its
    ///   private data once `register` has succeeded, until this value is dropped.
    /// - Each online CPU's instance of `works` is an initialised work item of this value.
    #[repr(C)]
    pub(in super::super) struct Citizen<T, const L: usize, const S: usize, const B: usize> {
        header: Header,
        state: cpuhp_state,
        cache: NonNull<Cache<MaybeUninit<T>>>,
        shared: NonNull<MpmcQueue<Raw<T>, S>>,
        local: NonNull<c_void>,
        shrinker: NonNull<shrinker>,
        works: PerCpu<Work>,
    }

    /// The work items' lockdep class (a static object, as `INIT_WORK` makes).
    static mut KEY: ffi::lock_class_key =
        // SAFETY: All-zero is what a C `static struct lock_class_key` starts as.
        unsafe { mem::zeroed() };

    /// Iterates over the online CPUs (`for_each_online_cpu`).
    #[inline(always)]
    fn online_cpus() -> impl Iterator<Item = u32> {
        possible_cpus().filter(|&cpu| {
            // SAFETY: A possible CPU.
            unsafe { ffi::cpu_online(cpu) }
        })
    }

    impl<T, const L: usize, const S: usize, const B: usize> Citizen<T, L, S, B> {
        /// Registers the pool whose cache and queues these are with CPU hotplug and the
        /// shrinkers. Process context: it may sleep.
        ///
        /// The queues must be the pool's, and the pool must drop the returned value before
        /// them and before it uses a queue through `&mut` (it does: `QMemPool::drop`).
        pub(in super::super) fn register(
            cache: &Cache<MaybeUninit<T>>,
            shared: &MpmcQueue<Raw<T>, S>,
            local: &PerCpu<Local<T, L>>,
        ) -> Result<Option<KBox<Self>>> {
            let state = hotplug_state()?;
            let works = PerCpu::new(|slot| {
                slot.write(Work {
                    work: Opaque::uninit(),
                    owner: ptr::null(),
                });
            })?;
            // SAFETY: The name has no conversion; process context.
            let shrinker = unsafe { ffi::shrinker_alloc(c"rust-qmempool") };
            let shrinker = NonNull::new(shrinker).ok_or(ENOMEM)?;
            let mut this = match KBox::new(
                Self {
                    header: Header {
                        node: Opaque::uninit(),
                        dead: Self::drain_dead,
                    },
                    state,
                    cache: NonNull::from(cache),
                    shared: NonNull::from(shared),
                    local: local.as_ptr(),
                    shrinker,
                    works,
                },
                GFP_KERNEL,
            ) {
                Ok(this) => this,
                Err(e) => {
                    // SAFETY: Allocated above, never registered, freed once, here.
                    unsafe { ffi::shrinker_free(shrinker.as_ptr()) };
                    return Err(e.into());
                }
            };
            let owner = ptr::addr_of!(*this).cast::<c_void>();
            for w in this.works.iter_mut() {
                w.owner = owner;
                // SAFETY: The work item is not queued; `drain_work` matches it (its owner is set
                // above, and the citizen cancels it before it goes); `KEY` is a static object.
                unsafe {
                    ffi::init_work(
                        w.work.get(),
                        Self::drain_work,
                        c"rust_qmempool_drain",
                        ptr::addr_of_mut!(KEY),
                    )
                };
            }
            let node = this.header.node.get();
            // SAFETY: `state` was set up by `hotplug_state`; `node` lives on the heap until
            // `drop` removes it, and the teardown (`cpu_dead`) finds its `Header` through it.
            // Process context.
            let ret = unsafe { ffi::cpuhp_add_instance(state, node) };
            if let Err(e) = to_result(ret) {
                // Not an instance: `drop` frees the unregistered shrinker and removes nothing.
                this.state = 0;
                return Err(e);
            }
            // SAFETY: Allocated above and not yet registered; `count` and `scan` take its
            // private data for the boxed `Citizen`, which frees the shrinker on drop.
            unsafe {
                ffi::shrinker_register(shrinker.as_ptr(), Self::count, Self::scan, owner.cast_mut())
            };
            // INVARIANT: registered with the state and as a shrinker, work items initialised.
            Ok(Some(this))
        }

        /// Frees the free objects of `queue` to the cache, `B` at a time; returns how many.
        ///
        /// # Safety
        ///
        /// The caller is the only consumer of `queue` for the call; `queue` holds free objects
        /// of `cache` only.
        unsafe fn free_local(cache: &Cache<MaybeUninit<T>>, queue: &Local<T, L>) -> usize {
            let mut batch = ObjArray::<'_, MaybeUninit<T>, B>::new(cache);
            let mut freed = 0;
            loop {
                // SAFETY: The only consumer, free objects of `cache` (the caller's contract);
                // the batch owns what it takes.
                let got = unsafe { queue.dequeue_burst(batch.raw_objs(), B) }.unwrap_or(0);
                if got == 0 {
                    return freed;
                }
                freed += got;
                batch.free();
            }
        }

        /// The pool's queue of CPU `cpu`.
        fn local(&self, cpu: u32) -> &Local<T, L> {
            // SAFETY: `local` is the pool's live per-CPU allocation of `Local<T, L>`s (type
            // invariant) and `cpu` a possible CPU (the callers take it from the kernel).
            unsafe { &*ffi::per_cpu_ptr(self.local.as_ptr(), cpu).cast() }
        }

        /// Frees the local queue of the dead CPU `cpu` to the cache (the hotplug teardown).
        ///
        /// # Safety
        ///
        /// `header` is the header of a live `Citizen<T, L, S, B>`, and CPU `cpu` is dead.
        unsafe fn drain_dead(header: *const Header, cpu: u32) {
            // SAFETY: `header` is the first field of a `repr(C)` `Citizen<T, L, S, B>`
            // (caller's contract, `Header`'s invariant).
            let this = unsafe { &*header.cast::<Self>() };
            // SAFETY: The queue's users are code holding a guard on CPU `cpu` (the pool's
            // invariant), and nothing runs there: the CPU is dead, and its last guarded
            // section ended before it stopped (guards disable preemption, so the stopper did
            // not run inside one); the hotplug core's synchronisation orders its writes before
            // this. The pool's other paths (shrinker work items) drain online CPUs only.
            unsafe { Self::free_local(this.cache(), this.local(cpu)) };
        }

        /// The pool's cache.
        fn cache(&self) -> &Cache<MaybeUninit<T>> {
            // SAFETY: The pool's cache, which outlives this value (type invariant).
            unsafe { self.cache.as_ref() }
        }

        /// The work function: frees the local queue of the CPU it runs on.
        ///
        /// # Safety
        ///
        /// `work` is the work item of a live `Citizen<T, L, S, B>`.
        unsafe extern "C" fn drain_work(work: *mut work_struct) {
            // SAFETY: `work` is the first field of a `repr(C)` `Work` whose owner is a live
            // `Citizen<T, L, S, B>` (type invariant of `Work`; the citizen cancels its work
            // items before it goes).
            let this = unsafe { &*(*work.cast::<Work>()).owner.cast::<Self>() };
            // Normally the CPU the item was queued on; another one if that CPU went offline
            // meanwhile (whose queue the hotplug teardown frees). Either way, this CPU's.
            let Some(guard) = BhGuard::new() else {
                return;
            };
            // SAFETY: The guard makes this code the only user of this CPU's queue (the pool's
            // invariant), which holds free objects of the pool's cache.
            unsafe { Self::free_local(this.cache(), this.local(guard.cpu())) };
        }

        /// The objects the pool holds free (an estimate: the queues change meanwhile).
        fn held(&self) -> usize {
            // SAFETY: The pool's shared queue, alive while this value is (type invariant).
            let shared = unsafe { self.shared.as_ref() }.len();
            possible_cpus()
                .map(|cpu| self.local(cpu).len())
                .sum::<usize>()
                + shared
        }

        /// The shrinker's count: what the pool holds free.
        ///
        /// # Safety
        ///
        /// `shrinker` is this type's registered shrinker.
        unsafe extern "C" fn count(shrinker: *mut shrinker, _sc: *mut shrink_control) -> c_ulong {
            // SAFETY: A registered shrinker, whose private data is a live
            // `Citizen<T, L, S, B>`: `shrinker_free` in `drop` waits for running callbacks.
            let this = unsafe { &*ffi::shrinker_private(shrinker).cast::<Self>() };
            this.held()
        }

        /// The shrinker's scan: queues each online CPU's work item, which frees that CPU's
        /// local queue there, and frees the shared queue to the cache here. Returns what it
        /// freed here.
        ///
        /// # Safety
        ///
        /// `shrinker` is this type's registered shrinker.
        unsafe extern "C" fn scan(shrinker: *mut shrinker, _sc: *mut shrink_control) -> c_ulong {
            // SAFETY: As in `count`.
            let this = unsafe { &*ffi::shrinker_private(shrinker).cast::<Self>() };
            this.queue_drains();
            match this.drain_shared() {
                0 => ffi::SHRINK_STOP,
                freed => freed,
            }
        }

        /// Queues the work item of every online CPU (not waiting: reclaim must not wait for a
        /// work queue without a rescuer).
        fn queue_drains(&self) {
            for cpu in online_cpus() {
                if let Some(w) = self.works.get(cpu) {
                    // SAFETY: An initialised work item of this value (type invariant), which
                    // cancels it before it goes.
                    unsafe { ffi::queue_work_on(cpu, w.work.get()) };
                }
            }
        }

        /// Frees the shared queue to the cache, `B` at a time, under a guard (the queue's
        /// reservations are committed without preemption); returns how many.
        fn drain_shared(&self) -> usize {
            let Some(_guard) = BhGuard::new() else {
                return 0;
            };
            let mut batch = ObjArray::<'_, MaybeUninit<T>, B>::new(self.cache());
            let mut freed = 0;
            loop {
                // SAFETY: The shared queue holds free objects of the cache only (type
                // invariant) and takes any number of consumers; the batch owns what it takes.
                let got = unsafe { self.shared.as_ref().dequeue_burst(batch.raw_objs(), B) };
                match got.unwrap_or(0) {
                    0 => return freed,
                    got => freed += got,
                }
                batch.free();
            }
        }

        /// Runs the shrinker as reclaim does (count, then scan), and waits for the work items
        /// of the online CPUs; returns the count.
        #[cfg(CONFIG_RUST_QMEMPOOL_KUNIT_TEST)]
        pub(in super::super) fn shrink(&self) -> usize {
            let sh = self.shrinker.as_ptr();
            let mut sc = ffi::shrink_control(GFP_KERNEL, 0);
            // SAFETY: `sh` is this value's registered shrinker, whose callbacks are `count` and
            // `scan`; the caller is in process context, as reclaim.
            let n = unsafe { Self::count(sh, &mut sc) };
            let mut sc = ffi::shrink_control(GFP_KERNEL, n);
            // SAFETY: As above.
            unsafe { Self::scan(sh, &mut sc) };
            for cpu in online_cpus() {
                if let Some(w) = self.works.get(cpu) {
                    // SAFETY: An initialised work item of this value; process context.
                    unsafe { ffi::flush_work(w.work.get()) };
                }
            }
            n
        }
    }

    impl<T, const L: usize, const S: usize, const B: usize> Drop for Citizen<T, L, S, B> {
        fn drop(&mut self) {
            // SAFETY: Allocated in `register`; `shrinker_free` unregisters it if it was
            // registered, waiting for its running callbacks, after which none is called.
            unsafe { ffi::shrinker_free(self.shrinker.as_ptr()) };
            for w in self.works.iter_mut() {
                // SAFETY: Initialised in `register`; nothing queues it any more (the shrinker
                // is gone). Process context.
                unsafe { ffi::cancel_work_sync(w.work.get()) };
            }
            if self.state > 0 {
                // SAFETY: Added in `register` (`state` is 0 otherwise); removing it takes the
                // hotplug lock, so it waits for a running teardown, after which none is called
                // for this instance.
                unsafe { ffi::cpuhp_remove_instance(self.state, self.header.node.get()) };
            }
        }
    }
}
