// SPDX-License-Identifier: GPL-2.0

//! Every call of `qmempool` into C, and the C types and constants it uses.
//!
//! C headers: [`include/linux/bottom_half.h`](srctree/include/linux/bottom_half.h),
//! [`include/linux/percpu.h`](srctree/include/linux/percpu.h),
//! [`include/linux/cpuhotplug.h`](srctree/include/linux/cpuhotplug.h),
//! [`include/linux/shrinker.h`](srctree/include/linux/shrinker.h),
//! [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h)
//!
//! One thin wrapper per C function, each `#[inline(always)]`, so that the code above compiles
//! to the C call it would make without the wrapper. What C has as macros (the guard's context
//! tests, `per_cpu_ptr()`, `this_cpu_ptr()`, `for_each_possible_cpu()`) is reached through the
//! helpers in `rust/helpers/qmempool.c`. The other files of the module call C only through this
//! one. The twin (`twin/bindings.rs`, `twin/cpu.rs`) stands in for the `bindings` items of the
//! guard, the per-CPU memory and the tests in userspace; it has neither CPU hotplug nor
//! shrinkers, whose wrappers are built in the kernel only (`CONFIG_RUST`).

use crate::alloc::Flags;
use crate::bindings;
use core::ffi::{c_int, c_void};

// The guard (`BhGuard`).

/// What [`bh_enter`] found, and did.
pub(super) enum BhEnter {
    /// IRQs are disabled: no guard can be had, and nothing was done.
    IrqsDisabled,
    /// A softirq is being served: bottom halves are disabled already, and nothing was done.
    InSoftirq,
    /// Bottom halves were enabled, and are now disabled (`local_bh_disable()`).
    Disabled,
}

/// Enters a section in which this CPU's pool state may be used, if the context allows one
/// (`rust_helper_qmempool_bh_enter`): decides the context and disables bottom halves where they
/// are not disabled already, in one call.
///
/// Not for NMI context, where the slab allocator may not be used either.
///
/// # Safety
///
/// After [`BhEnter::Disabled`], the caller re-enables bottom halves with
/// [`bh_exit`] once, in the same task (which cannot migrate meanwhile).
#[inline(always)]
pub(super) unsafe fn bh_enter() -> BhEnter {
    // SAFETY: The helper reads the IRQ flag and the softirq count, and disables bottom halves
    // only where IRQs are enabled and no softirq is being served (returning 1 then); the caller
    // pairs that with `bh_exit`.
    match unsafe { bindings::qmempool_bh_enter() } {
        1 => BhEnter::Disabled,
        0 => BhEnter::InSoftirq,
        _ => BhEnter::IrqsDisabled,
    }
}

/// Re-enables bottom halves that [`bh_enter`] disabled (`rust_helper_qmempool_bh_exit`):
/// `local_bh_enable()`, or, should IRQs have been disabled since, `_local_bh_enable()`, which
/// runs no softirq, and the softirqs raised meanwhile handed to `ksoftirqd`.
///
/// # Safety
///
/// [`bh_enter`] returned [`BhEnter::Disabled`] in this task, and this is the one call that
/// pairs with it.
#[inline(always)]
pub(super) unsafe fn bh_exit() {
    // SAFETY: Bottom halves were disabled by this task (the caller's guarantee) and are
    // re-enabled once: by the helper where IRQs are enabled, or else by `bh_exit_irqs_off`.
    if !unsafe { bindings::qmempool_bh_exit() } {
        // SAFETY: As above; IRQs are disabled, which the helper found.
        unsafe { bh_exit_irqs_off() };
    }
}

/// [`bh_exit`] with IRQs disabled (`rust_helper_qmempool_bh_exit_irqs_off`): `_local_bh_enable()`
/// and the softirqs raised meanwhile handed to `ksoftirqd`. Out of line, so that it stays in the
/// built-in `kernel` crate: with `CONFIG_RUST_INLINE_HELPERS` the helper is inlined into its
/// caller, and what it uses is not exported to modules.
///
/// # Safety
///
/// As for [`bh_exit`], with IRQs disabled.
#[cold]
#[inline(never)]
pub(super) unsafe fn bh_exit_irqs_off() {
    // SAFETY: The caller's guarantee.
    unsafe { bindings::qmempool_bh_exit_irqs_off() };
}

/// The CPU the caller runs on (`raw_smp_processor_id()`): the answer stays true while the caller
/// cannot migrate (bottom halves or preemption disabled).
#[inline(always)]
pub(super) fn cpu_id() -> u32 {
    // SAFETY: Reads the current CPU's number, in any context.
    unsafe { bindings::raw_smp_processor_id() }
}

// Per-CPU memory (`PerCpu`).

/// The largest alignment the per-CPU allocator takes (`PAGE_SIZE`).
pub(super) const PERCPU_MAX_ALIGN: usize = bindings::PAGE_SIZE;

/// The possible CPU after `cpu` (-1: the first), or -1 after the last
/// (`rust_helper_next_possible_cpu`, the step of `for_each_possible_cpu()`).
#[inline(always)]
pub(super) fn next_possible_cpu(cpu: c_int) -> c_int {
    // SAFETY: The helper only reads `cpu_possible_mask`, which is fixed after boot, and
    // `cpumask_next` takes any CPU number (one past the last gives the end).
    unsafe { bindings::next_possible_cpu(cpu) }
}

/// Allocates `size` zeroed bytes aligned to `align` for each possible CPU (`alloc_percpu()`,
/// `pcpu_alloc_noprof`); returns the per-CPU pointer, or NULL if there is no memory.
///
/// # Safety
///
/// `size` is from 1 to `PCPU_MIN_UNIT_SIZE` (32 KiB), `align` a power of two at most
/// [`PERCPU_MAX_ALIGN`]; the caller is in a context that `flags` allow.
#[inline(always)]
pub(super) unsafe fn alloc_percpu(size: usize, align: usize, flags: Flags) -> *mut c_void {
    // SAFETY: The caller's guarantee; not from the reserved chunk.
    unsafe { bindings::pcpu_alloc_noprof(size, align, false, flags.as_raw()) }
}

/// Frees the per-CPU memory at `ptr` (`free_percpu()`).
///
/// # Safety
///
/// `ptr` came from [`alloc_percpu`], is freed once, here, and none of its instances is used
/// afterwards.
#[inline(always)]
pub(super) unsafe fn free_percpu(ptr: *mut c_void) {
    // SAFETY: The caller's guarantee.
    unsafe { bindings::free_percpu(ptr) };
}

/// CPU `cpu`'s instance of the per-CPU memory at `ptr` (`per_cpu_ptr()`).
///
/// # Safety
///
/// `ptr` is live per-CPU memory from [`alloc_percpu`] and `cpu` a possible CPU.
#[inline(always)]
pub(super) unsafe fn per_cpu_ptr(ptr: *mut c_void, cpu: u32) -> *mut c_void {
    // SAFETY: The caller's guarantee.
    unsafe { bindings::per_cpu_ptr(ptr, cpu) }
}

/// The current CPU's instance of the per-CPU memory at `ptr` (`this_cpu_ptr()`).
///
/// On SMP, the kernel's helper (an out-of-line call from Rust). On a uniprocessor kernel
/// (UML among them) there is one instance and the kernel's `per_cpu_ptr()` is the pointer
/// itself (`include/linux/percpu-defs.h`), so it costs nothing here either.
///
/// # Safety
///
/// `ptr` is live per-CPU memory from [`alloc_percpu`], and the caller cannot move to another
/// CPU while it uses the result (preemption or bottom halves disabled).
#[inline(always)]
pub(super) unsafe fn this_cpu_ptr(ptr: *mut c_void) -> *mut c_void {
    #[cfg(CONFIG_SMP)]
    // SAFETY: The caller passes per-CPU memory and cannot migrate meanwhile.
    return unsafe { bindings::this_cpu_ptr(ptr) };
    #[cfg(not(CONFIG_SMP))]
    return ptr;
}

// CPU hotplug, the shrinker and the work items (`Hooks`): the kernel only.

#[cfg(CONFIG_RUST)]
pub(super) use self::kernel_only::*;

#[cfg(CONFIG_RUST)]
mod kernel_only {
    use crate::bindings;
    use crate::ffi::{c_int, c_uint, c_ulong, c_void};
    use core::ffi::CStr;
    use core::mem;
    use core::ptr;
    use core::sync::atomic::{AtomicUsize, Ordering};

    pub(in super::super) use bindings::{
        cpuhp_state, hlist_node, lock_class_key, module, notifier_block, shrink_control, shrinker,
        work_struct,
    };

    /// The teardown of a multi-instance CPU hotplug state: called with the dead CPU and the
    /// node of one instance; returns 0 (a teardown cannot fail).
    pub(in super::super) type Teardown = unsafe extern "C" fn(c_uint, *mut hlist_node) -> c_int;

    /// A shrinker's `count_objects` or `scan_objects`.
    pub(in super::super) type ShrinkFn =
        unsafe extern "C" fn(*mut shrinker, *mut shrink_control) -> c_ulong;

    /// A work item's function.
    pub(in super::super) type WorkFn = unsafe extern "C" fn(*mut work_struct);

    /// A notifier's function (`notifier_fn_t`).
    pub(in super::super) type NotifierFn =
        unsafe extern "C" fn(*mut notifier_block, c_ulong, *mut c_void) -> c_int;

    /// The module notifiers' event for a module that goes: after its exit function returned, or
    /// after its init function failed, before its memory is freed.
    pub(in super::super) const MODULE_STATE_GOING: c_ulong =
        bindings::module_state_MODULE_STATE_GOING as c_ulong;

    /// What a notifier returns when it has nothing to say about the event (`NOTIFY_DONE`).
    pub(in super::super) const NOTIFY_DONE: c_int = bindings::NOTIFY_DONE as c_int;

    /// The module whose code `code` is in, or null for built-in code
    /// (`__module_text_address()`, under the RCU read lock it needs).
    ///
    /// The pointer is only compared, never used: the module may go at any time. Out of line, so
    /// that it stays in the built-in `kernel` crate: with `CONFIG_RUST_INLINE_HELPERS` the helper
    /// is inlined into its caller, and `__module_text_address()` is not exported to modules.
    #[inline(never)]
    pub(in super::super) fn code_module(code: *const c_void) -> *mut module {
        // SAFETY: The helper only looks the address up.
        unsafe { bindings::qmempool_code_module(code) }
    }

    /// Registers `nb` as a module notifier calling `call` (`register_module_notifier()`).
    ///
    /// # Safety
    ///
    /// `nb` is valid, not registered, and stays valid until [`unwatch_modules`] unregisters it;
    /// `call` is sound to call with it until then. Process context.
    #[inline(always)]
    pub(in super::super) unsafe fn watch_modules(nb: *mut notifier_block, call: NotifierFn) {
        // SAFETY: The caller's guarantee; the fields are the caller's until the registration.
        unsafe {
            nb.write(notifier_block {
                notifier_call: Some(call),
                next: ptr::null_mut(),
                priority: 0,
            });
            bindings::register_module_notifier(nb);
        }
    }

    /// Unregisters the module notifier `nb` (`unregister_module_notifier()`): it waits for a
    /// call of it in progress, and none happens afterwards.
    ///
    /// # Safety
    ///
    /// `nb` was registered by [`watch_modules`]. Process context.
    #[inline(always)]
    pub(in super::super) unsafe fn unwatch_modules(nb: *mut notifier_block) {
        // SAFETY: The caller's guarantee.
        unsafe { bindings::unregister_module_notifier(nb) };
    }

    /// What a scan returns when it freed nothing: reclaim stops asking (`SHRINK_STOP`).
    pub(in super::super) const SHRINK_STOP: c_ulong = bindings::SHRINK_STOP as c_ulong;

    /// Sets up a dynamic multi-instance CPU hotplug state named `name` whose one callback is
    /// `teardown` (`cpuhp_setup_state_multi(CPUHP_BP_PREPARE_DYN, name, NULL, teardown)`): it
    /// runs for each instance on a surviving CPU once a CPU is dead. Returns the state, or a
    /// negative error code.
    ///
    /// Process context; not from a CPU hotplug callback (it takes the hotplug lock). No callback
    /// runs before an instance is added ([`cpuhp_add_instance`]).
    #[inline(always)]
    pub(in super::super) fn cpuhp_setup_dead_multi(
        name: &'static CStr,
        teardown: Teardown,
    ) -> c_int {
        type Single = unsafe extern "C" fn(c_uint) -> c_int;
        // SAFETY: As `cpuhp_setup_state_multi()` does in C: a multi-instance state keeps its
        // callbacks as the single-instance type and calls them as the multi-instance one, which
        // is `Teardown`; both are function pointers of one size.
        let teardown = unsafe { mem::transmute::<Teardown, Single>(teardown) };
        // SAFETY: The name is a static C string (kept by the state); the state is dynamic and
        // multi-instance, so nothing is called now (`invoke` false, and no instance yet).
        unsafe {
            bindings::__cpuhp_setup_state(
                bindings::cpuhp_state_CPUHP_BP_PREPARE_DYN,
                name.to_bytes_with_nul().as_ptr().cast(),
                false,
                None,
                Some(teardown),
                true,
            )
        }
    }

    /// Removes the CPU hotplug state `state` (`cpuhp_remove_multi_state()`).
    ///
    /// # Safety
    ///
    /// `state` was set up by [`cpuhp_setup_dead_multi`] and has no instance; process context.
    #[inline(always)]
    pub(in super::super) unsafe fn cpuhp_remove_state(state: cpuhp_state) {
        // SAFETY: The caller's guarantee; no callback is invoked (`invoke` false).
        unsafe { bindings::__cpuhp_remove_state(state, false) };
    }

    /// Adds the instance `node` to the state `state`, without running its teardown now
    /// (`cpuhp_state_add_instance_nocalls()`); returns 0 or a negative error code.
    ///
    /// # Safety
    ///
    /// `state` was set up by [`cpuhp_setup_dead_multi`]; `node` stays valid, and the teardown
    /// sound to call with it, until [`cpuhp_remove_instance`] removes it; process context.
    #[inline(always)]
    pub(in super::super) unsafe fn cpuhp_add_instance(
        state: cpuhp_state,
        node: *mut hlist_node,
    ) -> c_int {
        // SAFETY: The caller's guarantee.
        unsafe { bindings::__cpuhp_state_add_instance(state, node, false) }
    }

    /// Removes the instance `node` from the state `state`, without running its teardown
    /// (`cpuhp_state_remove_instance_nocalls()`). It takes the hotplug lock, so a teardown
    /// running for the instance has returned when it returns, and none runs afterwards.
    ///
    /// # Safety
    ///
    /// `node` was added to `state` by [`cpuhp_add_instance`] and not removed; process context.
    #[inline(always)]
    pub(in super::super) unsafe fn cpuhp_remove_instance(
        state: cpuhp_state,
        node: *mut hlist_node,
    ) {
        // SAFETY: The caller's guarantee.
        unsafe { bindings::__cpuhp_state_remove_instance(state, node, false) };
    }

    /// Whether CPU `cpu` is online (`cpu_online()`, a read of the online mask).
    ///
    /// # Safety
    ///
    /// `cpu` is a possible CPU (the mask has a bit for it).
    #[inline(always)]
    pub(in super::super) unsafe fn cpu_online(cpu: u32) -> bool {
        const BITS: usize = usize::BITS as usize;
        let cpu = cpu as usize;
        // SAFETY: The online mask is a static array of `c_ulong` (`usize` on the kernel's
        // targets) with a bit for each possible CPU, `cpu` among them (the caller's guarantee);
        // hotplug writes it atomically, so it is read with an atomic load.
        let word = unsafe {
            let bits = ptr::addr_of_mut!(bindings::__cpu_online_mask.bits).cast::<usize>();
            AtomicUsize::from_ptr(bits.add(cpu / BITS)).load(Ordering::Relaxed)
        };
        word & (1 << (cpu % BITS)) != 0
    }

    /// Allocates a shrinker named `name`, neither memcg nor NUMA aware, not registered
    /// (`shrinker_alloc(0, name)`); NULL if there is no memory.
    ///
    /// # Safety
    ///
    /// `name` has no conversion specification (it is a `printf` format); process context.
    #[inline(always)]
    pub(in super::super) unsafe fn shrinker_alloc(name: &'static CStr) -> *mut shrinker {
        // SAFETY: The flags are valid, the format is the caller's guarantee.
        unsafe { bindings::shrinker_alloc(0, name.to_bytes_with_nul().as_ptr().cast()) }
    }

    /// Registers the shrinker `sh` with its callbacks `count` and `scan` and its private data
    /// `private`, at the default cost of recreating an object (`DEFAULT_SEEKS`), so that
    /// reclaim calls them from now on (`shrinker_register()`).
    ///
    /// # Safety
    ///
    /// `sh` came from [`shrinker_alloc`] and is not registered yet; `count` and `scan` are sound
    /// to call with `sh` until [`shrinker_free`] frees it.
    #[inline(always)]
    pub(in super::super) unsafe fn shrinker_register(
        sh: *mut shrinker,
        count: ShrinkFn,
        scan: ShrinkFn,
        private: *mut c_void,
    ) {
        // SAFETY: `sh` is allocated and not registered, so its fields are the caller's to set;
        // from the registration on, the callbacks are the caller's guarantee.
        unsafe {
            (*sh).count_objects = Some(count);
            (*sh).scan_objects = Some(scan);
            (*sh).seeks = bindings::DEFAULT_SEEKS as c_int;
            (*sh).private_data = private;
            bindings::shrinker_register(sh);
        }
    }

    /// The private data of the shrinker `sh`, as [`shrinker_register`] set it.
    ///
    /// # Safety
    ///
    /// `sh` is a registered shrinker (its callbacks run with it).
    #[inline(always)]
    pub(in super::super) unsafe fn shrinker_private(sh: *mut shrinker) -> *mut c_void {
        // SAFETY: The caller's guarantee; the field is written before the registration only.
        unsafe { (*sh).private_data }
    }

    /// Unregisters the shrinker `sh` if it was registered, waiting for its running callbacks
    /// (none is called afterwards), and frees it (`shrinker_free()`).
    ///
    /// # Safety
    ///
    /// `sh` came from [`shrinker_alloc`] and is freed once, here; process context.
    #[inline(always)]
    pub(in super::super) unsafe fn shrinker_free(sh: *mut shrinker) {
        // SAFETY: The caller's guarantee.
        unsafe { bindings::shrinker_free(sh) };
    }

    /// A `shrink_control` as reclaim passes it: `flags`, `nr_to_scan` objects, no memcg, node 0.
    #[cfg(CONFIG_RUST_QMEMPOOL_KUNIT_TEST)]
    #[inline(always)]
    pub(in super::super) fn shrink_control(
        flags: crate::alloc::Flags,
        nr_to_scan: c_ulong,
    ) -> shrink_control {
        // SAFETY: All-zero is a valid `shrink_control` (integers, a null memcg).
        let mut sc: shrink_control = unsafe { mem::zeroed() };
        sc.gfp_mask = flags.as_raw();
        sc.nr_to_scan = nr_to_scan;
        sc
    }

    /// Initialises the work item at `work` to run `func` (`INIT_WORK()`), with the lockdep class
    /// `key` named `name`.
    ///
    /// # Safety
    ///
    /// `work` is valid for writes and not queued; `key` is a static object (one per kind of
    /// work item, as each `INIT_WORK()` makes); `func` is sound to call with `work` whenever
    /// the item runs.
    #[inline(always)]
    pub(in super::super) unsafe fn init_work(
        work: *mut work_struct,
        func: WorkFn,
        name: &'static CStr,
        key: *mut lock_class_key,
    ) {
        // SAFETY: The caller's guarantee; the name is a static C string.
        unsafe {
            bindings::init_work_with_key(
                work,
                Some(func),
                false,
                name.to_bytes_with_nul().as_ptr().cast(),
                key,
            )
        };
    }

    /// Queues `work` on CPU `cpu` of the kernel's workqueue (`queue_work_on(cpu, system_wq,
    /// work)`); false if it was queued already.
    ///
    /// # Safety
    ///
    /// `work` was initialised by [`init_work`] and stays valid until it has run or is
    /// cancelled ([`cancel_work_sync`]).
    #[inline(always)]
    pub(in super::super) unsafe fn queue_work_on(cpu: u32, work: *mut work_struct) -> bool {
        // SAFETY: The caller's guarantee; `system_wq` is the kernel's, set up at boot.
        unsafe { bindings::queue_work_on(cpu as c_int, bindings::system_wq, work) }
    }

    /// Waits until `work` has run, if it is queued or running (`flush_work()`); returns whether
    /// it waited.
    ///
    /// # Safety
    ///
    /// `work` was initialised by [`init_work`] and is valid; process context.
    ///
    /// Called by the KUnit suite only (through `Hooks::shrink`).
    #[cfg_attr(not(CONFIG_RUST_QMEMPOOL_KUNIT_TEST), allow(dead_code))]
    #[inline(always)]
    pub(in super::super) unsafe fn flush_work(work: *mut work_struct) -> bool {
        // SAFETY: The caller's guarantee.
        unsafe { bindings::flush_work(work) }
    }

    /// Cancels `work` and waits for it if it is running (`cancel_work_sync()`); returns whether
    /// it was pending.
    ///
    /// # Safety
    ///
    /// `work` was initialised by [`init_work`] and is valid; process context.
    #[inline(always)]
    pub(in super::super) unsafe fn cancel_work_sync(work: *mut work_struct) -> bool {
        // SAFETY: The caller's guarantee.
        unsafe { bindings::cancel_work_sync(work) }
    }

    // What the KUnit suite alone uses.

    /// Queues `work` on CPU `cpu` of the kernel's bottom-half workqueue, which runs it in
    /// softirq context there (`queue_work_on(cpu, system_bh_wq, work)`); false if it was queued
    /// already.
    ///
    /// # Safety
    ///
    /// As [`queue_work_on`].
    #[cfg(CONFIG_RUST_QMEMPOOL_KUNIT_TEST)]
    #[inline(always)]
    pub(in super::super) unsafe fn queue_bh_work_on(cpu: u32, work: *mut work_struct) -> bool {
        // SAFETY: The caller's guarantee; `system_bh_wq` is the kernel's, set up at boot.
        unsafe { bindings::queue_work_on(cpu as c_int, bindings::system_bh_wq, work) }
    }

    /// Runs `func(arg)` in task context on CPU `cpu` (a kworker bound to it) and waits for it
    /// (`work_on_cpu()`); returns what `func` returned.
    ///
    /// # Safety
    ///
    /// `func` is sound to call with `arg`; `cpu` is online; process context.
    #[cfg(CONFIG_RUST_QMEMPOOL_KUNIT_TEST)]
    #[inline(always)]
    pub(in super::super) unsafe fn work_on_cpu(
        cpu: u32,
        func: unsafe extern "C" fn(*mut c_void) -> crate::ffi::c_long,
        arg: *mut c_void,
    ) -> crate::ffi::c_long {
        // SAFETY: The caller's guarantee; the call waits for `func`, so `arg` outlives it.
        unsafe { bindings::work_on_cpu(cpu as c_int, Some(func), arg) }
    }

    /// Disables IRQs on this CPU (`local_irq_disable()`).
    ///
    /// # Safety
    ///
    /// IRQs are enabled, and the caller enables them again ([`local_irq_enable`]) without
    /// sleeping meanwhile.
    #[cfg(CONFIG_RUST_QMEMPOOL_KUNIT_TEST)]
    #[inline(always)]
    pub(in super::super) unsafe fn local_irq_disable() {
        // SAFETY: The caller's guarantee.
        unsafe { bindings::local_irq_disable() };
    }

    /// Enables IRQs on this CPU (`local_irq_enable()`).
    ///
    /// # Safety
    ///
    /// Pairs with the caller's [`local_irq_disable`].
    #[cfg(CONFIG_RUST_QMEMPOOL_KUNIT_TEST)]
    #[inline(always)]
    pub(in super::super) unsafe fn local_irq_enable() {
        // SAFETY: The caller's guarantee.
        unsafe { bindings::local_irq_enable() };
    }

    /// Raises a softirq that has nothing to do (`TASKLET_SOFTIRQ` with no tasklet of the suite
    /// scheduled), as an interrupt raises `NET_RX` while a guard holds bottom halves disabled.
    ///
    /// # Safety
    ///
    /// IRQs are disabled.
    #[cfg(CONFIG_RUST_QMEMPOOL_KUNIT_TEST)]
    #[inline(always)]
    pub(in super::super) unsafe fn raise_test_softirq() {
        // SAFETY: IRQs are disabled (the caller's guarantee), as `raise_softirq_irqoff()` needs.
        unsafe { bindings::qmempool_test_raise_softirq() };
    }

    /// Whether the softirqs pending on this CPU, if any, will run without waiting for an
    /// interrupt: `ksoftirqd` of this CPU is awake.
    ///
    /// # Safety
    ///
    /// IRQs are disabled (so that the CPU and what is pending on it stay as they are).
    #[cfg(CONFIG_RUST_QMEMPOOL_KUNIT_TEST)]
    #[inline(always)]
    pub(in super::super) unsafe fn softirqs_handed_over() -> bool {
        // SAFETY: IRQs are disabled (the caller's guarantee); the call only reads.
        unsafe { bindings::qmempool_test_softirqs_handed_over() }
    }

    /// Takes CPU `cpu` offline (`remove_cpu()`, what writing 0 to its `online` file in sysfs
    /// calls); returns 0 or a negative error code.
    #[cfg(all(CONFIG_RUST_QMEMPOOL_KUNIT_TEST, CONFIG_HOTPLUG_CPU))]
    #[inline(always)]
    pub(in super::super) fn remove_cpu(cpu: u32) -> c_int {
        // SAFETY: The CPU hotplug core checks `cpu` and serialises with every other hotplug
        // operation; the caller is in process context, as a write to sysfs is.
        unsafe { bindings::remove_cpu(cpu) }
    }

    /// Brings CPU `cpu` online (`add_cpu()`); returns 0 or a negative error code.
    #[cfg(all(CONFIG_RUST_QMEMPOOL_KUNIT_TEST, CONFIG_HOTPLUG_CPU))]
    #[inline(always)]
    pub(in super::super) fn add_cpu(cpu: u32) -> c_int {
        // SAFETY: As in `remove_cpu`.
        unsafe { bindings::add_cpu(cpu) }
    }
}

// What the tests use in both worlds.

/// The number of online CPUs (`num_online_cpus()`).
#[cfg(any(test, CONFIG_RUST_QMEMPOOL_KUNIT_TEST))]
#[inline(always)]
pub(super) fn online_cpus() -> u32 {
    // SAFETY: Reads the online mask's weight, in any context.
    unsafe { bindings::num_online_cpus() }
}

/// The current task's `fail_nth`: the fault point it will fail at, counting down (0: none).
#[cfg(all(any(test, CONFIG_RUST_QMEMPOOL_KUNIT_TEST), CONFIG_FAILSLAB))]
#[inline(always)]
pub(super) fn fail_nth() -> u32 {
    // SAFETY: `get_current()` is the running task, alive while it runs this.
    unsafe { (*bindings::get_current()).fail_nth }
}

/// Arms the current task's `fail_nth`: the `nth` fault point it reaches will fail (0 disarms).
#[cfg(all(any(test, CONFIG_RUST_QMEMPOOL_KUNIT_TEST), CONFIG_FAILSLAB))]
#[inline(always)]
pub(super) fn set_fail_nth(nth: u32) {
    // SAFETY: As in `fail_nth`; a task's `fail_nth` is written by the task itself (or through
    // its `/proc` file, which the tests do not use).
    unsafe { (*bindings::get_current()).fail_nth = nth };
}
