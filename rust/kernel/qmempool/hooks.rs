// SPDX-License-Identifier: GPL-2.0

//! [`Hooks`]: what a pool registers with the kernel to give objects back, to a CPU that goes
//! offline and to memory pressure: a CPU hotplug instance, a shrinker and per-CPU work items.
//!
//! C headers: [`include/linux/cpuhotplug.h`](srctree/include/linux/cpuhotplug.h),
//! [`include/linux/shrinker.h`](srctree/include/linux/shrinker.h)
//!
//! A pool's [`Hooks`] live on the heap, where the kernel can hold their address while the pool
//! itself moves: an instance of the CPU hotplug state that all pools share (its teardown runs
//! on a surviving CPU once a CPU is dead, and frees that CPU's local queue to the cache), a
//! shrinker (under memory pressure it frees the shared queue to the cache and queues one work
//! item on each online CPU, which frees that CPU's local queue there), and those per-CPU work
//! items. None of it is on the allocation and free paths. What runs where, and why each access
//! to a queue is its only user's, is in the project's `docs/design.md` ("`kernel::qmempool`",
//! "Giving objects back").
//!
//! The callbacks are generic, so their code is in the crate that names the pool's type: a
//! module, usually. A pool leaked with `mem::forget` stays registered, and once that module is
//! unloaded the kernel would call freed code. So the registrations are kept in a part of the
//! hooks that does not depend on the pool's type (their `Header`), which code of the built-in
//! `kernel` crate can undo: the hooks' drop, and, for hooks whose callbacks are a module's
//! code, a module notifier that undoes them when that module goes, before its memory is
//! freed. A pool that was dropped has unregistered the notifier first.
//!
//! The userspace twin has neither CPU hotplug nor reclaim: there a pool has no `Hooks`.

#[cfg(CONFIG_RUST)]
pub(super) use self::registered::Hooks;

/// The twin's stand-in: no hotplug, no reclaim, nothing registered.
#[cfg(not(CONFIG_RUST))]
pub(super) struct Hooks<T, const L: usize, const S: usize, const B: usize>(
    core::marker::PhantomData<T>,
);

#[cfg(not(CONFIG_RUST))]
impl<T, const L: usize, const S: usize, const B: usize> Hooks<T, L, S, B> {
    /// Registers nothing.
    pub(super) fn register(
        _cache: &crate::slab_bulk::Cache<core::mem::MaybeUninit<T>>,
        _shared: &crate::alf_queue::MpmcQueue<super::queue::Raw<T>, S>,
        _local: &super::percpu::PerCpu<super::queue::Local<T, L>>,
    ) -> crate::error::Result<Option<crate::alloc::KBox<Self>>> {
        Ok(None)
    }
}

/// The hooks as the kernel has them: registered with CPU hotplug, the shrinkers and the module
/// notifiers.
#[cfg(CONFIG_RUST)]
mod registered {
    use super::super::context::BhGuard;
    use super::super::ffi::{
        self, cpuhp_state, hlist_node, module, notifier_block, shrink_control, shrinker,
        work_struct,
    };
    use super::super::percpu::{possible_cpus, PerCpu};
    use super::super::queue::{Local, Raw};
    use crate::alf_queue::MpmcQueue;
    use crate::alloc::{flags::GFP_KERNEL, KBox};
    use crate::error::{code::*, to_result, Result};
    use crate::ffi::{c_int, c_uint, c_ulong, c_void};
    use crate::slab_bulk::{Cache, ObjArray};
    use crate::types::Opaque;
    use core::mem::{self, MaybeUninit};
    use core::ptr::{self, NonNull};
    use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};

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

    /// The part of [`Hooks`] that does not depend on the pool's type: what the hotplug
    /// callback knows (its state instance and how to empty a dead CPU's queue), and everything
    /// the hooks registered, so that built-in code can undo it ([`Header::undo`]).
    ///
    /// # Invariants
    ///
    /// - `header` is the first field of a `Hooks<T, L, S, B>`, and `dead` is that type's
    ///   `drain_dead`.
    /// - `node` is an instance of the state `state` (unless `state` is 0, after a failed
    ///   registration), and `shrinker` an allocated shrinker, registered with the `Hooks` as
    ///   its private data once `register` has succeeded, until they are undone, once: when
    ///   `undone` is set.
    /// - Each online CPU's instance of `works` is an initialised work item of the `Hooks`.
    /// - `owner` is the module whose code the hooks' callbacks are, or null for built-in
    ///   code; if it is not null, `watch` is registered as a module notifier ([`module_going`])
    ///   from the end of `register` until the `Hooks` is dropped.
    #[repr(C)]
    struct Header {
        node: Opaque<hlist_node>,
        dead: unsafe fn(*const Header, u32),
        state: cpuhp_state,
        shrinker: NonNull<shrinker>,
        works: PerCpu<Work>,
        owner: *mut module,
        watch: Opaque<notifier_block>,
        undone: AtomicBool,
    }

    impl Header {
        /// Undoes the registrations: after it returns, none of the hooks' callbacks runs or
        /// will be called.
        ///
        /// # Safety
        ///
        /// Called once per `Hooks` (`undone` was false, and is set by the caller), in process
        /// context, not from a CPU hotplug callback; the registrations are those `register`
        /// made (type invariant), complete.
        unsafe fn undo(&self) {
            // SAFETY: Allocated in `register`; `shrinker_free` unregisters it if it was
            // registered, waiting for its running callbacks, after which none is called.
            unsafe { ffi::shrinker_free(self.shrinker.as_ptr()) };
            for w in possible_cpus().filter_map(|cpu| self.works.get(cpu)) {
                // SAFETY: Initialised in `register`; nothing queues it any more (the shrinker
                // is gone). Process context.
                unsafe { ffi::cancel_work_sync(w.work.get()) };
            }
            if self.state > 0 {
                // SAFETY: Added in `register` (`state` is 0 otherwise), removed once (the
                // caller's guarantee); removing it takes the hotplug lock, so it waits for a
                // running teardown, after which none is called for this instance.
                unsafe { ffi::cpuhp_remove_instance(self.state, self.node.get()) };
            }
        }
    }

    /// The module notifier of hooks whose callbacks are a module's code: when that module
    /// goes (after its exit function, or after its init failed, and before its memory is
    /// freed), hooks still registered belong to a pool the module leaked, and their
    /// registrations are undone here. The pool's memory, queues and cache stay leaked.
    ///
    /// # Safety
    ///
    /// Called by the module notifier chain only, with the `watch` of a registered [`Header`].
    unsafe extern "C" fn module_going(
        nb: *mut notifier_block,
        action: c_ulong,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `nb` is the `watch` field of a `repr(C)` `Header`, which stays registered,
        // and so alive, until the drop of its `Hooks` unregisters it (type invariant); the
        // notifier chain's lock orders that unregistration with this call.
        let header = unsafe { &*nb.byte_sub(mem::offset_of!(Header, watch)).cast::<Header>() };
        if action != ffi::MODULE_STATE_GOING || data.cast::<module>() != header.owner {
            return ffi::NOTIFY_DONE;
        }
        if !header.undone.swap(true, Ordering::Relaxed) {
            crate::pr_warn!(
                "qmempool: a module leaked a pool; its shrinker and CPU hotplug instance are \
                 undone as the module goes, its objects stay leaked\n"
            );
            // SAFETY: Not undone before (`undone` was false), and the hooks' drop will not
            // undo it (it finds `undone` set). A module notifier runs in process context,
            // outside CPU hotplug. The registrations are complete: `watch` is registered last.
            unsafe { header.undo() };
        }
        ffi::NOTIFY_DONE
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
        // `Hooks` is dropped, which waits for this callback (the hotplug lock); `dead` is its
        // type's drain (type invariant) and `cpu` is dead.
        unsafe { ((*header).dead)(header, cpu) };
        0
    }

    /// One CPU's work item, which frees that CPU's local queue to the cache.
    ///
    /// # Invariants
    ///
    /// `work` is the first field; once initialised, its function is `drain_work::<T, L, S, B>`
    /// of the `Hooks<T, L, S, B>` at `owner`.
    #[repr(C)]
    struct Work {
        work: Opaque<work_struct>,
        owner: *const c_void,
    }

    /// What a pool registers to give objects back. See the [module documentation](super).
    ///
    /// # Invariants
    ///
    /// - `cache`, `shared` and `local` are the pool's: they outlive this value (the pool pins
    ///   its cache, and a leaked pool leaks its queues), and the queues hold free objects of
    ///   `cache` only.
    /// - `header` holds what this value registered (see [`Header`]).
    #[repr(C)]
    pub(in super::super) struct Hooks<T, const L: usize, const S: usize, const B: usize> {
        header: Header,
        cache: NonNull<Cache<MaybeUninit<T>>>,
        shared: NonNull<MpmcQueue<Raw<T>, S>>,
        local: NonNull<c_void>,
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

    impl<T, const L: usize, const S: usize, const B: usize> Hooks<T, L, S, B> {
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
                        state,
                        shrinker,
                        works,
                        owner: ptr::null_mut(),
                        watch: Opaque::uninit(),
                        undone: AtomicBool::new(false),
                    },
                    cache: NonNull::from(cache),
                    shared: NonNull::from(shared),
                    local: local.as_ptr(),
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
            let hooks = ptr::addr_of!(*this).cast::<c_void>();
            for w in this.header.works.iter_mut() {
                w.owner = hooks;
                // SAFETY: The work item is not queued; `drain_work` matches it (its owner is set
                // above, and the hooks cancel it before they go); `KEY` is a static object.
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
                this.header.state = 0;
                return Err(e);
            }
            // SAFETY: Allocated above and not yet registered; `count` and `scan` take its
            // private data for the boxed `Hooks`, which frees the shrinker on drop.
            unsafe {
                ffi::shrinker_register(shrinker.as_ptr(), Self::count, Self::scan, hooks.cast_mut())
            };
            // The module whose code the callbacks are, monomorphised with this function (null
            // if built in).
            let owner = ffi::code_module(Self::count as *const c_void);
            if !owner.is_null() {
                this.header.owner = owner;
                // SAFETY: `watch` lives on the heap with the hooks, whose drop unregisters it
                // (`owner` is set); `module_going` is built-in code that takes it for its
                // `Header`. Process context.
                unsafe { ffi::watch_modules(this.header.watch.get(), module_going) };
            }
            // INVARIANT: registered with the state and as a shrinker, work items initialised,
            // and watched for its module's going if its callbacks are a module's code.
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
        /// `header` is the header of a live `Hooks<T, L, S, B>`, and CPU `cpu` is dead.
        unsafe fn drain_dead(header: *const Header, cpu: u32) {
            // SAFETY: `header` is the first field of a `repr(C)` `Hooks<T, L, S, B>`
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
        /// `work` is the work item of a live `Hooks<T, L, S, B>`.
        unsafe extern "C" fn drain_work(work: *mut work_struct) {
            // SAFETY: `work` is the first field of a `repr(C)` `Work` whose owner is a live
            // `Hooks<T, L, S, B>` (type invariant of `Work`; the hooks cancel their work
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
            // `Hooks<T, L, S, B>`: `shrinker_free` in `drop` waits for running callbacks.
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
                if let Some(w) = self.header.works.get(cpu) {
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
            let sh = self.header.shrinker.as_ptr();
            let mut sc = ffi::shrink_control(GFP_KERNEL, 0);
            // SAFETY: `sh` is this value's registered shrinker, whose callbacks are `count` and
            // `scan`; the caller is in process context, as reclaim.
            let n = unsafe { Self::count(sh, &mut sc) };
            let mut sc = ffi::shrink_control(GFP_KERNEL, n);
            // SAFETY: As above.
            unsafe { Self::scan(sh, &mut sc) };
            for cpu in online_cpus() {
                if let Some(w) = self.header.works.get(cpu) {
                    // SAFETY: An initialised work item of this value; process context.
                    unsafe { ffi::flush_work(w.work.get()) };
                }
            }
            n
        }
    }

    impl<T, const L: usize, const S: usize, const B: usize> Drop for Hooks<T, L, S, B> {
        fn drop(&mut self) {
            let header = &self.header;
            if !header.owner.is_null() {
                // SAFETY: `owner` is set only where `register` registers `watch`, as its last
                // step. Unregistering waits for a running notifier, so `undone` is final after
                // it. Process context.
                unsafe { ffi::unwatch_modules(header.watch.get()) };
            }
            if !header.undone.swap(true, Ordering::Relaxed) {
                // SAFETY: Not undone before (`undone` was false), and not by the module
                // notifier afterwards (it is unregistered). Process context, outside hotplug
                // (the pool's drop's rule).
                unsafe { header.undo() };
            }
        }
    }
}
