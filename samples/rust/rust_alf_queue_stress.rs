// SPDX-License-Identifier: GPL-2.0

//! Stress test of [`kernel::alf_queue`] with kernel threads on several CPUs.
//!
//! The in-kernel twin of `rust/alf_queue/tests/stress.rs`, for a real SMP kernel (QEMU x86_64
//! with 2 CPUs in the project's pipeline). Three scenarios run one after the other:
//!
//! - `mpmc_2p2c`: an [`MpmcQueue`] of 1024 slots, 2 producer and 2 consumer threads;
//! - `mpmc_2p2c_small`: the same with 64 slots, as small as the largest bulk, so that the
//!   queue is constantly full or empty and the slot array wraps often;
//! - `spsc_1p1c`: an [`SpscQueue`] of 256 slots, 1 producer and 1 consumer thread.
//!
//! Every queue starts with its indices a little below `u32::MAX`, so they wrap during the run.
//! An item encodes its producer and a sequence number (`producer << 40 | seq`). For every call
//! each thread picks an operation (single, bulk or burst) and a bulk size (`1..=maxbulk`) with
//! a small PRNG. Each consumer checks that every item is well formed, that the sequence numbers
//! of each producer increase (FIFO per producer), and marks the item in a bitmap of its own;
//! at the end the bitmaps of all consumers together must hold every item of every producer
//! exactly once (no loss, no duplicate), and the queue must be empty.
//!
//! # Threads and preemption
//!
//! The threads are made with `kthread_create_on_node()`, bound to the online CPUs (producer `i` to
//! CPU `i`, consumer `i` to CPU `i + 1`, modulo the number of CPUs: with 2 CPUs each side contends
//! across CPUs, and the SPSC pair runs on different CPUs), and started together. Every
//! [`MpmcQueue`] operation runs with preemption disabled: between its reservation (the
//! compare-and-swap on `head`) and its commit (the `tail` store) an operation holds up every later
//! operation on its side, which spin in their commit step. A thread preempted inside that window
//! would make them spin until it runs again, and a spinner on the same CPU as the preempted thread
//! could spin for ever (see "Contexts" in `rust/alf_queue/lib.rs`). [`SpscQueue`] operations never
//! wait for another thread and need no such protection. Waiting for room or for items (queue full
//! or empty) happens outside those sections: a thread spins a little, then yields its CPU.
//!
//! # Output
//!
//! One line per scenario, then a closing line, which `scripts/test.sh` counts:
//!
//! ```text
//! rfl_test: alf_queue_stress mpmc_2p2c PASS items=10000000 ns=... cpus=0x3 ...
//! rfl_test: alf_queue_stress spsc_1p1c FAIL <reason>
//! rfl_test: alf_queue_stress done
//! ```
//!
//! `cpus` is the mask of the CPUs the scenario's threads were seen running on.
//!
//! Parameters (`insmod rust_alf_queue_stress.ko items=1000000 seed=42`):
//! - `scenarios`: the scenarios to run, a comma-separated list (default: all three);
//! - `items`: items per scenario, shared equally by its producers (default 10^7);
//! - `seed`: the PRNG seed, 0 (default) for one taken from the clock (printed either way);
//! - `maxbulk`: the largest bulk size, `1..=64` (default 64);
//! - `bind`: 1 (default) to bind the threads to CPUs as above, 0 to let the scheduler place
//!   them.

use core::ffi::{c_int, c_uint, c_void};
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use kernel::alf_queue::{Batch, Error as QueueError, MpmcQueue, SpscQueue};
use kernel::bindings;
use kernel::error::from_err_ptr;
use kernel::prelude::*;

#[path = "bench_common.rs"]
mod bench;

use bench::{module_param_string, module_param_uint};

bench::sample_module! {
    type: AlfQueueStress,
    name: "rust_alf_queue_stress",
    description: "Stress test: kernel::alf_queue with kthreads on several CPUs",
}

module_param_string!(
    SCENARIOS,
    "scenarios",
    128,
    "mpmc_2p2c,mpmc_2p2c_small,spsc_1p1c"
);
module_param_uint!(ITEMS, "items", 10_000_000);
module_param_uint!(SEED, "seed", 0);
module_param_uint!(MAXBULK, "maxbulk", 64);
module_param_uint!(BIND, "bind", 1);

/// The largest bulk size, and the capacity of every thread's batch.
const MAX_BULK: usize = 64;

/// The most producers a scenario has.
const MAX_PRODUCERS: usize = 2;

/// Items are `producer << SEQ_BITS | seq`.
const SEQ_BITS: u32 = 40;

/// A scenario fails if its threads make no progress for this long (milliseconds).
const STALL_MS: u64 = 30_000;

type Item = u64;
type ItemBatch = Batch<Item, MAX_BULK>;

/// Disables preemption for as long as it lives.
///
/// # Invariants
///
/// Preemption is disabled on the current CPU from `new` until `drop`, which runs on the same
/// thread: the guard is `!Send` (as the kernel's lock guards are) and is never held across a
/// sleep.
struct NoPreempt {
    _not_send: PhantomData<*mut ()>,
}

// `NoPreempt` must not be `Send`: this is ambiguous, so fails to compile, if it is.
const _: fn() = || {
    trait AmbiguousIfSend<A> {
        fn some_item() {}
    }
    impl<T: ?Sized> AmbiguousIfSend<()> for T {}
    impl<T: ?Sized + Send> AmbiguousIfSend<u8> for T {}
    let _ = <NoPreempt as AmbiguousIfSend<_>>::some_item;
};

impl NoPreempt {
    #[inline]
    fn new() -> Self {
        // SAFETY: Always allowed; the matching `preempt_enable()` is in `drop`.
        unsafe { bindings::preempt_disable() };
        // INVARIANT: preemption was just disabled, on this thread.
        NoPreempt {
            _not_send: PhantomData,
        }
    }
}

impl Drop for NoPreempt {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: Matches the `preempt_disable()` of `new`, on the same thread (type invariant:
        // the guard is `!Send` and not kept across a sleep).
        unsafe { bindings::preempt_enable() };
    }
}

/// A small PRNG (xorshift64*), one per thread.
struct Rng(u64);

impl Rng {
    /// Seeds a generator from `seed` and the thread's number `stream` (splitmix64).
    fn new(seed: u64, stream: u64) -> Self {
        let mut z = seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        Rng(z | 1)
    }

    #[inline]
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Returns a number in `0..n`.
    #[inline]
    fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
}

/// The queue operations the threads use, for both flavours.
///
/// The SPSC implementation relies on its callers keeping to its flavour's rule: at most one
/// thread calls the producer-side methods and at most one the consumer-side ones.
trait Side: Sync {
    fn enq(&self, item: Item) -> Result<(), Item>;
    fn enq_bulk(&self, b: &mut ItemBatch) -> Result<(), QueueError>;
    fn enq_burst(&self, b: &mut ItemBatch) -> Result<usize, QueueError>;
    fn deq(&self) -> Option<Item>;
    fn deq_bulk(&self, b: &mut ItemBatch, n: usize) -> Result<(), QueueError>;
    fn deq_burst(&self, b: &mut ItemBatch, n: usize) -> Result<usize, QueueError>;
    fn is_empty(&self) -> bool;
}

/// An [`MpmcQueue`] whose every operation runs with preemption disabled.
struct Mpmc<const N: usize>(KBox<MpmcQueue<Item, N>>);

impl<const N: usize> Side for Mpmc<N> {
    fn enq(&self, item: Item) -> Result<(), Item> {
        let _guard = NoPreempt::new();
        self.0.enqueue(item)
    }
    fn enq_bulk(&self, b: &mut ItemBatch) -> Result<(), QueueError> {
        let _guard = NoPreempt::new();
        self.0.enqueue_bulk(b)
    }
    fn enq_burst(&self, b: &mut ItemBatch) -> Result<usize, QueueError> {
        let _guard = NoPreempt::new();
        self.0.enqueue_burst(b)
    }
    fn deq(&self) -> Option<Item> {
        let _guard = NoPreempt::new();
        self.0.dequeue()
    }
    fn deq_bulk(&self, b: &mut ItemBatch, n: usize) -> Result<(), QueueError> {
        let _guard = NoPreempt::new();
        self.0.dequeue_bulk(b, n)
    }
    fn deq_burst(&self, b: &mut ItemBatch, n: usize) -> Result<usize, QueueError> {
        let _guard = NoPreempt::new();
        self.0.dequeue_burst(b, n)
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// An [`SpscQueue`] used through its `unsafe` `&self` methods by exactly one producer thread
/// and one consumer thread (the `spsc_1p1c` scenario starts no more).
struct Spsc<const N: usize>(KBox<SpscQueue<Item, N>>);

impl<const N: usize> Side for Spsc<N> {
    fn enq(&self, item: Item) -> Result<(), Item> {
        // SAFETY: Only the scenario's one producer thread calls producer-side methods.
        unsafe { self.0.enqueue(item) }
    }
    fn enq_bulk(&self, b: &mut ItemBatch) -> Result<(), QueueError> {
        // SAFETY: As in `enq`.
        unsafe { self.0.enqueue_bulk(b) }
    }
    fn enq_burst(&self, b: &mut ItemBatch) -> Result<usize, QueueError> {
        // SAFETY: As in `enq`.
        unsafe { self.0.enqueue_burst(b) }
    }
    fn deq(&self) -> Option<Item> {
        // SAFETY: Only the scenario's one consumer thread calls consumer-side methods.
        unsafe { self.0.dequeue() }
    }
    fn deq_bulk(&self, b: &mut ItemBatch, n: usize) -> Result<(), QueueError> {
        // SAFETY: As in `deq`.
        unsafe { self.0.dequeue_bulk(b, n) }
    }
    fn deq_burst(&self, b: &mut ItemBatch, n: usize) -> Result<usize, QueueError> {
        // SAFETY: As in `deq`.
        unsafe { self.0.dequeue_burst(b, n) }
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What went wrong, as a consumer or the final check saw it.
#[derive(Clone, Copy)]
enum Failure {
    /// An item with a producer or sequence number out of range.
    Garbage(Item),
    /// Producer `.0`'s item `.1` came after its item `.2` at the same consumer.
    Order(u32, u64, u64),
    /// Producer `.0`'s item `.1` was received twice.
    Duplicate(u32, u64),
    /// Producer `.0`'s item `.1` was never received.
    Lost(u32, u64),
    /// A bulk operation returned an error it cannot return here.
    Queue(QueueError),
    /// No progress for [`STALL_MS`]; the threads were told to give up.
    Stalled,
    /// The consumers' counts add up to `.0` items instead of `.1`.
    Count(u64, u64),
    /// The queue still holds items at the end.
    NotEmpty,
}

impl Failure {
    fn print(&self, name: &str) {
        let p = "rfl_test: alf_queue_stress";
        match *self {
            Failure::Garbage(item) => pr_info!("{} {} FAIL garbage item {:#x}\n", p, name, item),
            Failure::Order(prod, seq, last) => pr_info!(
                "{} {} FAIL order: producer {} item {} after item {}\n",
                p,
                name,
                prod,
                seq,
                last
            ),
            Failure::Duplicate(prod, seq) => {
                pr_info!(
                    "{} {} FAIL duplicate: producer {} item {}\n",
                    p,
                    name,
                    prod,
                    seq
                )
            }
            Failure::Lost(prod, seq) => {
                pr_info!("{} {} FAIL lost: producer {} item {}\n", p, name, prod, seq)
            }
            Failure::Queue(e) => pr_info!("{} {} FAIL queue error: {:?}\n", p, name, e),
            Failure::Stalled => pr_info!(
                "{} {} FAIL stalled: no progress for {} ms\n",
                p,
                name,
                STALL_MS
            ),
            Failure::Count(got, total) => pr_info!(
                "{} {} FAIL count: {} items received of {}\n",
                p,
                name,
                got,
                total
            ),
            Failure::NotEmpty => pr_info!("{} {} FAIL queue not empty at the end\n", p, name),
        }
    }
}

/// What the threads of a scenario share.
struct Shared<Q> {
    queue: Q,
    producers: u32,
    /// Items per producer.
    per_producer: u64,
    /// Items in all.
    total: u64,
    max_bulk: usize,
    seed: u64,
    /// Items received by all consumers so far.
    consumed: AtomicU64,
    /// Items sent by all producers so far.
    produced: AtomicU64,
    /// Set when a thread found a failure or the scenario stalled: everyone stops.
    abort: AtomicBool,
    /// Threads that have returned.
    finished: AtomicU32,
    /// `ktime_get()` when the last thread finished.
    end_ns: AtomicU64,
}

/// One thread's own state; only that thread touches it until it has been stopped.
struct Worker<'a, Q> {
    shared: &'a Shared<Q>,
    /// Producer or consumer number.
    id: u32,
    producer: bool,
    /// The CPUs the thread was seen on (bit `n` for CPU `n < 64`).
    cpus: u64,
    /// Consumers: one bit per item of each producer (`producers` runs of `words` words).
    seen: VVec<u64>,
    /// Consumers: items received.
    received: u64,
    failure: Option<Failure>,
}

/// The number of 64-bit words of a bitmap of `bits` bits.
fn words(bits: u64) -> usize {
    bits.div_ceil(64) as usize
}

impl<Q: Side> Worker<'_, Q> {
    /// Notes the CPU the thread runs on.
    #[inline]
    fn note_cpu(&mut self) {
        // SAFETY: Reading the current CPU number is always allowed; it may be stale at once,
        // which is fine for a statistic.
        let cpu = unsafe { bindings::raw_smp_processor_id() };
        if cpu < 64 {
            self.cpus |= 1 << cpu;
        }
    }

    /// Waits a little, for room or for items: spins first, then lets other threads run.
    fn backoff(&mut self, spins: &mut u32) {
        *spins += 1;
        if *spins < 64 {
            core::hint::spin_loop();
        } else {
            // SAFETY: Kernel thread context, preemption enabled: `yield()` may schedule.
            unsafe { bindings::yield_() };
            self.note_cpu();
        }
    }

    fn aborted(&self) -> bool {
        self.shared.abort.load(Ordering::Relaxed)
    }

    /// Sends items `id << SEQ_BITS | 0..per_producer`, in order, with random operations.
    fn produce(&mut self) {
        let s = self.shared;
        let mut rng = Rng::new(s.seed, u64::from(self.id));
        let mut b = ItemBatch::new();
        let base = u64::from(self.id) << SEQ_BITS;
        let mut seq = 0;
        while (seq < s.per_producer || !b.is_empty()) && !self.aborted() {
            // Top the batch up to a new random size (a burst may have left some behind).
            let want = 1 + rng.below(s.max_bulk);
            while b.len() < want && seq < s.per_producer {
                if b.push(base | seq).is_err() {
                    break;
                }
                seq += 1;
            }
            self.note_cpu();
            let before = b.len();
            let mut spins = 0;
            match rng.below(3) {
                0 => {
                    // One at a time, in order.
                    for mut item in b.drain() {
                        loop {
                            match s.queue.enq(item) {
                                Ok(()) => break,
                                Err(back) => item = back,
                            }
                            if self.aborted() {
                                return;
                            }
                            self.backoff(&mut spins);
                        }
                    }
                }
                1 => loop {
                    match s.queue.enq_bulk(&mut b) {
                        Ok(()) => break,
                        Err(QueueError::Full) => {}
                        Err(e) => return self.fail(Failure::Queue(e)),
                    }
                    if self.aborted() {
                        return;
                    }
                    self.backoff(&mut spins);
                },
                _ => match s.queue.enq_burst(&mut b) {
                    Ok(0) => self.backoff(&mut spins),
                    Ok(_) => {}
                    Err(e) => return self.fail(Failure::Queue(e)),
                },
            }
            s.produced
                .fetch_add((before - b.len()) as u64, Ordering::Relaxed);
        }
    }

    /// Receives until all items have been received, checking each.
    fn consume(&mut self) {
        let s = self.shared;
        let mut rng = Rng::new(s.seed, 1000 + u64::from(self.id));
        let mut b = ItemBatch::new();
        let per_word = words(s.per_producer);
        let mut next = [0u64; MAX_PRODUCERS];
        let mut spins = 0;
        while s.consumed.load(Ordering::Relaxed) < s.total && !self.aborted() {
            let n = 1 + rng.below(s.max_bulk);
            self.note_cpu();
            let got = match rng.below(3) {
                0 => match s.queue.deq() {
                    Some(item) => usize::from(b.push(item).is_ok()),
                    None => 0,
                },
                1 => match s.queue.deq_bulk(&mut b, n) {
                    Ok(()) => n,
                    Err(QueueError::Empty) => 0,
                    Err(e) => return self.fail(Failure::Queue(e)),
                },
                _ => match s.queue.deq_burst(&mut b, n) {
                    Ok(k) => k,
                    Err(e) => return self.fail(Failure::Queue(e)),
                },
            };
            if got == 0 {
                self.backoff(&mut spins);
                continue;
            }
            spins = 0;
            for item in b.drain() {
                let prod = (item >> SEQ_BITS) as u32;
                let seq = item & ((1 << SEQ_BITS) - 1);
                if prod >= s.producers || seq >= s.per_producer {
                    return self.fail(Failure::Garbage(item));
                }
                let last = &mut next[prod as usize];
                if seq < *last {
                    return self.fail(Failure::Order(prod, seq, *last - 1));
                }
                *last = seq + 1;
                let word = &mut self.seen[prod as usize * per_word + (seq / 64) as usize];
                let bit = 1 << (seq % 64);
                if *word & bit != 0 {
                    return self.fail(Failure::Duplicate(prod, seq));
                }
                *word |= bit;
            }
            self.received += got as u64;
            s.consumed.fetch_add(got as u64, Ordering::Relaxed);
        }
    }

    /// Records the first failure and tells every thread to stop.
    fn fail(&mut self, f: Failure) {
        self.failure.get_or_insert(f);
        self.shared.abort.store(true, Ordering::Relaxed);
    }
}

/// The body of every thread: `data` is its [`Worker`].
///
/// # Safety
///
/// `data` points to a `Worker<'_, Q>` that no one else accesses until this thread has been
/// stopped, and whose `Shared` outlives the thread.
unsafe extern "C" fn thread_main<Q: Side>(data: *mut c_void) -> c_int {
    // SAFETY: By the function's safety requirements.
    let w = unsafe { &mut *data.cast::<Worker<'_, Q>>() };
    w.note_cpu();
    if w.producer {
        w.produce();
    } else {
        w.consume();
    }
    w.shared
        .end_ns
        .fetch_max(bench::now_ns(), Ordering::Relaxed);
    // Release: the main thread reads `finished` before stopping the threads (the stop itself
    // orders the rest of our writes).
    w.shared.finished.fetch_add(1, Ordering::Release);
    0
}

/// The module's parameters, read once.
struct Params {
    items: u64,
    seed: u64,
    max_bulk: usize,
    bind: bool,
}

/// The number of online CPUs.
fn online_cpus() -> u32 {
    // SAFETY: Reading the count has no preconditions.
    unsafe { bindings::num_online_cpus() }
}

/// Stops threads that were made but never woken up, and drops our references to them.
fn stop_unstarted(tasks: &[*mut bindings::task_struct]) {
    for t in tasks {
        // SAFETY: A thread made by `scenario` and never woken up: it exits without running
        // `thread_main`; we hold the reference that this drops.
        unsafe { bindings::kthread_stop_put(*t) };
    }
}

/// Runs `producers` x `consumers` threads over `queue` and prints the outcome.
///
/// An error is returned only if the scenario could not be set up.
fn scenario<Q: Side>(name: &str, queue: Q, producers: u32, consumers: u32, p: &Params) -> Result {
    let per_producer = p.items / u64::from(producers);
    let shared = Shared {
        queue,
        producers,
        per_producer,
        total: per_producer * u64::from(producers),
        max_bulk: p.max_bulk,
        seed: p.seed,
        consumed: AtomicU64::new(0),
        produced: AtomicU64::new(0),
        abort: AtomicBool::new(false),
        finished: AtomicU32::new(0),
        end_ns: AtomicU64::new(0),
    };
    let threads = (producers + consumers) as usize;
    let mut workers = KVec::with_capacity(threads, GFP_KERNEL)?;
    for i in 0..producers + consumers {
        let producer = i < producers;
        let seen = if producer {
            VVec::new()
        } else {
            VVec::from_elem(0u64, producers as usize * words(per_producer), GFP_KERNEL)?
        };
        workers.push(
            Worker {
                shared: &shared,
                id: if producer { i } else { i - producers },
                producer,
                cpus: 0,
                seen,
                received: 0,
                failure: None,
            },
            GFP_KERNEL,
        )?;
    }
    let mut tasks = KVec::<*mut bindings::task_struct>::with_capacity(threads, GFP_KERNEL)?;
    // From here on the workers are reached through this pointer only, until the threads stop.
    let wp = workers.as_mut_ptr();
    let cpus = online_cpus().max(1);
    for i in 0..threads {
        // SAFETY: `i < threads == workers.len()`.
        let w = unsafe { &*wp.add(i) };
        let role = if w.producer { c"p" } else { c"c" };
        // SAFETY:
        // - `thread_main::<Q>` gets `wp.add(i)`, a worker that nothing else touches until the
        //   thread is stopped below; `shared` lives until this function returns, after that.
        // - The name format takes a string and an unsigned int, which are passed.
        // - -1 is `NUMA_NO_NODE`.
        let task = unsafe {
            bindings::kthread_create_on_node(
                Some(thread_main::<Q>),
                wp.add(i).cast(),
                -1,
                c"alfq_%s%u".to_bytes_with_nul().as_ptr().cast(),
                role.to_bytes_with_nul().as_ptr(),
                w.id as c_uint,
            )
        };
        match from_err_ptr(task) {
            Ok(task) => {
                // SAFETY: `task` is a new kernel thread, not yet woken up: binding it is
                // allowed, and the reference taken here keeps it alive for `kthread_stop_put`
                // even once it has exited.
                unsafe {
                    bindings::get_task_struct(task);
                    if p.bind {
                        let cpu = if w.producer { w.id } else { w.id + 1 };
                        bindings::kthread_bind(task, cpu % cpus);
                    }
                }
                // `tasks` has room for every thread: this does not allocate, and cannot fail.
                if let Err(e) = tasks.push(task, GFP_KERNEL) {
                    // SAFETY: As below, for the thread just made.
                    unsafe { bindings::kthread_stop_put(task) };
                    stop_unstarted(&tasks);
                    return Err(e.into());
                }
            }
            Err(e) => {
                stop_unstarted(&tasks);
                return Err(e);
            }
        }
    }

    let start = bench::now_ns();
    for t in tasks.iter() {
        // SAFETY: A live thread (we hold a reference).
        unsafe { bindings::wake_up_process(*t) };
    }
    // Wait for all threads to return, watching for progress.
    let mut last = (0, 0);
    let mut still_ms = 0;
    let mut stalled = false;
    while (shared.finished.load(Ordering::Acquire) as usize) < threads {
        // SAFETY: Process context (module init): sleeping is allowed.
        unsafe { bindings::msleep(50) };
        let now = (
            shared.produced.load(Ordering::Relaxed),
            shared.consumed.load(Ordering::Relaxed),
        );
        if now != last {
            last = now;
            still_ms = 0;
        } else {
            still_ms += 50;
            if still_ms >= STALL_MS && !stalled {
                stalled = true;
                shared.abort.store(true, Ordering::Relaxed);
            }
        }
    }
    for t in tasks.iter() {
        // SAFETY: `thread_main` ran on this thread and has returned (`finished`); we hold the
        // reference that this drops. The stop waits for the thread's exit, after which its
        // worker is ours again.
        unsafe { bindings::kthread_stop_put(*t) };
    }
    let ns = shared.end_ns.load(Ordering::Relaxed).saturating_sub(start);

    // The verdict: the first failure any thread saw, else the final checks.
    let mut failure = workers.iter().find_map(|w| w.failure);
    if failure.is_none() && stalled {
        failure = Some(Failure::Stalled);
    }
    let consumers_of = || workers.iter().filter(|w| !w.producer);
    let received: u64 = consumers_of().map(|w| w.received).sum();
    if failure.is_none() && received != shared.total {
        failure = Some(Failure::Count(received, shared.total));
    }
    if failure.is_none() {
        failure = check_bitmaps(&shared, &workers);
    }
    if failure.is_none() && !shared.queue.is_empty() {
        failure = Some(Failure::NotEmpty);
    }
    let cpu_mask = workers.iter().fold(0, |m, w| m | w.cpus);
    match failure {
        Some(f) => f.print(name),
        None => {
            let mut split = [0u64; 2];
            for (slot, w) in split.iter_mut().zip(consumers_of()) {
                *slot = w.received;
            }
            pr_info!(
                "rfl_test: alf_queue_stress {} PASS items={} ns={} cpus={:#x} threads={}p{}c received={},{}\n",
                name,
                shared.total,
                ns,
                cpu_mask,
                producers,
                consumers,
                split[0],
                split[1]
            );
        }
    }
    Ok(())
}

/// Checks that the consumers' bitmaps together hold every item of every producer once.
fn check_bitmaps<Q>(shared: &Shared<Q>, workers: &[Worker<'_, Q>]) -> Option<Failure> {
    let per_word = words(shared.per_producer);
    for prod in 0..shared.producers {
        for word in 0..per_word {
            let idx = prod as usize * per_word + word;
            let mut union = 0u64;
            for c in workers.iter().filter(|w| !w.producer) {
                let bits = c.seen[idx];
                if union & bits != 0 {
                    let seq = word as u64 * 64 + u64::from((union & bits).trailing_zeros());
                    return Some(Failure::Duplicate(prod, seq));
                }
                union |= bits;
            }
            // Every bit of an item that exists: all 64, or fewer in the last word.
            let left = shared.per_producer - word as u64 * 64;
            let want = if left >= 64 {
                u64::MAX
            } else {
                (1 << left) - 1
            };
            if union != want {
                let seq = word as u64 * 64 + u64::from((!union & want).trailing_zeros());
                return Some(Failure::Lost(prod, seq));
            }
        }
    }
    None
}

/// Allocates an [`MpmcQueue`] whose indices start at `start`.
fn mpmc<const N: usize>(start: u32) -> Result<Mpmc<N>> {
    let mut q = KBox::<MpmcQueue<Item, N>>::new_uninit(GFP_KERNEL)?;
    MpmcQueue::init_in_place_with_start_index(&mut q, start);
    // SAFETY: `init_in_place_with_start_index` initialised the queue.
    Ok(Mpmc(unsafe { q.assume_init() }))
}

/// Allocates an [`SpscQueue`] whose indices start at `start`.
fn spsc<const N: usize>(start: u32) -> Result<Spsc<N>> {
    let mut q = KBox::<SpscQueue<Item, N>>::new_uninit(GFP_KERNEL)?;
    SpscQueue::init_in_place_with_start_index(&mut q, start);
    // SAFETY: `init_in_place_with_start_index` initialised the queue.
    Ok(Spsc(unsafe { q.assume_init() }))
}

struct AlfQueueStress;

impl kernel::Module for AlfQueueStress {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // SAFETY: The parameters are written by the module loader before `init` runs, and never
        // again (they have no sysfs file).
        let (scenarios, items, seed, max_bulk, bind) = unsafe {
            (
                &*ptr::addr_of!(SCENARIOS),
                *ptr::addr_of!(ITEMS),
                *ptr::addr_of!(SEED),
                *ptr::addr_of!(MAXBULK),
                *ptr::addr_of!(BIND),
            )
        };
        let p = Params {
            items: u64::from(items),
            seed: if seed != 0 {
                u64::from(seed)
            } else {
                bench::now_ns()
            },
            max_bulk: (max_bulk as usize).clamp(1, MAX_BULK),
            bind: bind != 0,
        };
        pr_info!(
            "rfl_test: alf_queue_stress start items={} seed={} maxbulk={} bind={} cpus={}\n",
            p.items,
            p.seed,
            p.max_bulk,
            u32::from(p.bind),
            online_cpus()
        );
        for name in bench::c_buf(scenarios).split(|b| *b == b',') {
            match name {
                b"mpmc_2p2c" => scenario("mpmc_2p2c", mpmc::<1024>(u32::MAX - 5000)?, 2, 2, &p)?,
                b"mpmc_2p2c_small" => {
                    scenario("mpmc_2p2c_small", mpmc::<64>(u32::MAX - 100)?, 2, 2, &p)?
                }
                b"spsc_1p1c" => scenario("spsc_1p1c", spsc::<256>(u32::MAX - 300)?, 1, 1, &p)?,
                _ => pr_warn!(
                    "rust_alf_queue_stress: unknown scenario {:?} skipped\n",
                    kernel::str::BStr::from_bytes(name)
                ),
            }
        }
        pr_info!("rfl_test: alf_queue_stress done\n");
        Ok(AlfQueueStress)
    }
}
