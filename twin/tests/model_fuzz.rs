// SPDX-License-Identifier: GPL-2.0

//! Model-based fuzzing of `kernel::slab_bulk` and `kernel::alf_queue` over the userspace twin.
//!
//! Each execution is a random program (proptest generates it, and shrinks a failing one to a
//! small one): a few epochs, each with fresh caches or a fresh queue and up to 48 operations,
//! decoded from bytes. Every operation runs against the real code and a plain model, and after
//! every one the two must agree:
//!
//! - slab: which objects are live and in which container, in order (`Obj`s, two `ObjArray`s of
//!   two caches, uninitialised objects, a `FreeBatch`, objects parked in an `MpmcQueue` through
//!   `raw_objs`); every value dropped exactly once when it dies (a `Box` field makes a double
//!   drop a double free too), none while it lives; each cache's live-object count; nothing left
//!   behind when the caches are destroyed at the end of an epoch. Injected allocation failures
//!   (`fail_nth`, `fail_page_alloc` for the task) may fail a request that may fail (not
//!   `GFP_KERNEL`), all or nothing; a `T::drop` or an init closure that panics must panic out of
//!   the operation that runs it and leave everything else as the model says.
//! - queue: `MpmcQueue`, `SpscQueue` through `split` and through its `unsafe` methods (one
//!   thread), with free-running indices starting anywhere (near `u32::MAX` most of the time);
//!   single, bulk and burst operations on both sides; contents in FIFO order, lengths, errors
//!   (`Full`, `Empty`, `TooLarge`) exactly when due; items dropped once, also when the queue or a
//!   batch is dropped with items in it, one of which may panic.
//!
//! Size: `FUZZ_CASES` executions per test (default 256, 4 under Miri); `FUZZ_SEED` (a number,
//! printed by every run) fixes the programs; `FUZZ_PRINT=1` prints each program before it runs,
//! for a failure that kills the process (a double free that glibc catches) rather than
//! panicking (which proptest shrinks and prints). `make fuzz` runs 10^7 executions in all; see
//! `docs/fuzzing.md`.

use core::cell::{Cell, RefCell};
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use kernel::alf_queue::{Batch, Error as QError, MpmcQueue, SpscQueue};
use kernel::alloc::flags::{GFP_ATOMIC, GFP_KERNEL, GFP_NOWAIT};
use kernel::alloc::Flags;
use kernel::error::code::{EINVAL, ENOMEM};
use kernel::slab_bulk::{Cache, CacheFlags, FreeBatch, Obj, ObjArray, OwnedCache};
use proptest::prelude::*;
use proptest::test_runner::{
    Config, FileFailurePersistence, RngAlgorithm, TestError, TestRng, TestRunner,
};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

// ---------------------------------------------------------------------------------------------
// Values that count their drops and panic on demand.

/// What happened to every value made so far, by id.
#[derive(Default)]
struct Ledger {
    drops: RefCell<Vec<u8>>,
    /// The ids whose drop panics.
    armed: RefCell<Vec<bool>>,
}

impl Ledger {
    /// Makes the value with the next id.
    fn make<const P: usize>(&self) -> Val<'_, P> {
        let id = self.drops.borrow().len() as u32;
        self.drops.borrow_mut().push(0);
        self.armed.borrow_mut().push(false);
        Val {
            id,
            ledger: self,
            heap: Box::new(id),
            _pad: [0; P],
        }
    }

    fn next_id(&self) -> u32 {
        self.drops.borrow().len() as u32
    }

    fn arm(&self, id: u32) {
        self.armed.borrow_mut()[id as usize] = true;
    }

    /// Checks that exactly the ids in `live` (and no others) are undropped, and that no value
    /// was dropped twice.
    fn check(&self, live: &[u32]) {
        let drops = self.drops.borrow();
        let mut expect = vec![1u8; drops.len()];
        for &id in live {
            assert_eq!(
                expect[id as usize], 1,
                "value {id} is in two places in the model"
            );
            expect[id as usize] = 0;
        }
        if *drops != expect {
            let bad: Vec<_> = (0..drops.len())
                .filter(|&i| drops[i] != expect[i])
                .map(|i| (i, drops[i], expect[i]))
                .take(8)
                .collect();
            panic!("drops (id, dropped, expected): {bad:?}");
        }
    }
}

/// A value in a cache object or a queue slot; `P` bytes of padding set the object's size.
struct Val<'l, const P: usize> {
    id: u32,
    ledger: &'l Ledger,
    heap: Box<u32>,
    _pad: [u8; P],
}

impl<const P: usize> Drop for Val<'_, P> {
    fn drop(&mut self) {
        assert_eq!(*self.heap, self.id, "a dropped value's heap field");
        self.ledger.drops.borrow_mut()[self.id as usize] += 1;
        // One panic at a time: a second one while unwinding would abort, which no code can avoid.
        if self.ledger.armed.borrow()[self.id as usize] && !std::thread::panicking() {
            std::panic::panic_any(Injected);
        }
    }
}

/// What the programs did, over all executions of a test: operations run, panics injected and
/// caught, allocations failed by injection. Printed at the end, to show the coverage.
#[derive(Default)]
struct Stats {
    ops: Cell<u64>,
    panics: Cell<u64>,
    enomem: Cell<u64>,
}

thread_local! {
    /// Each test runs on a thread of its own.
    static STATS: Stats = Stats::default();
}

fn count(what: fn(&Stats) -> &Cell<u64>) {
    STATS.with(|s| what(s).set(what(s).get() + 1));
}

/// The payload of the panics the fuzzer injects.
struct Injected;

/// Silences the injected panics (thousands per second otherwise), once per process.
fn quiet_injected_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<Injected>() {
                default(info);
            }
        }));
    });
}

/// Runs `f`; returns whether it panicked, which must be with an injected panic.
fn run(f: impl FnOnce()) -> bool {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => false,
        Err(e) if e.is::<Injected>() => true,
        Err(e) => std::panic::resume_unwind(e),
    }
}

// ---------------------------------------------------------------------------------------------
// The slab program.

/// The capacity of the two batches, and of the parking queue.
const BATCH: usize = 16;
/// The capacity of the free batch.
const FREE: usize = 8;

/// Fault injection, as the kernel's `current->fail_nth` and `make_it_fail` with
/// `fail_page_alloc` set up for marked tasks (as `make test` does for `bulk_fault_positions`).
fn set_faults(nth: u32, make_it_fail: bool) {
    kernel::bindings::setup_for_test(if make_it_fail {
        "bulk_fault_positions"
    } else {
        ""
    });
    // SAFETY: The running thread's own task.
    unsafe {
        let current = kernel::bindings::get_current();
        (*current).fail_nth = nth;
        (*current).make_it_fail = make_it_fail as i32;
    }
}

fn faults_armed() -> bool {
    // SAFETY: The running thread's own task.
    unsafe {
        let current = kernel::bindings::get_current();
        (*current).fail_nth > 0 || (*current).make_it_fail != 0
    }
}

fn in_use<T>(cache: &Cache<T>) -> usize {
    // SAFETY: A live cache of the userspace slab.
    unsafe { kernel::bindings::kmem_cache_objects_in_use(cache.as_raw()) as usize }
}

fn gfp(b: u8) -> Flags {
    match b % 3 {
        0 => GFP_KERNEL,
        1 => GFP_NOWAIT,
        _ => GFP_ATOMIC,
    }
}

/// The model of one epoch: the ids in each container, in order.
#[derive(Default)]
struct SlabModel {
    /// `(cache, id)` of each `Obj`.
    singles: Vec<(usize, u32)>,
    /// The cache of each uninitialised `Obj`.
    uninit: Vec<usize>,
    batches: [Vec<u32>; 2],
    /// Waiting in the free batch (of cache 0).
    pending: Vec<u32>,
    /// Parked in the queue (objects of cache 0).
    parked: VecDeque<u32>,
}

impl SlabModel {
    fn live(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.singles.iter().map(|s| s.1).collect();
        v.extend(self.batches.iter().flatten());
        v.extend(&self.pending);
        v.extend(&self.parked);
        v
    }

    fn objects(&self, cache: usize) -> usize {
        self.singles.iter().filter(|s| s.0 == cache).count()
            + self.uninit.iter().filter(|&&c| c == cache).count()
            + self.batches[cache].len()
            + if cache == 0 {
                self.pending.len() + self.parked.len()
            } else {
                0
            }
    }
}

/// Runs one epoch of slab operations on two fresh caches of `Val<P>`.
fn slab_epoch<const P: usize>(ledger: &Ledger, flags: u8, ops: &[[u8; 4]]) {
    let flags = match flags % 3 {
        0 => CacheFlags::NONE,
        1 => CacheFlags::NO_MERGE,
        _ => CacheFlags::HWCACHE_ALIGN,
    };
    let leaked = kernel::bindings::LEAKED_OBJECTS.load(Ordering::Relaxed);
    let caches = [
        OwnedCache::<Val<'_, P>>::new(c"fuzz_a", flags).expect("cache a"),
        OwnedCache::<Val<'_, P>>::new(c"fuzz_b", flags).expect("cache b"),
    ];
    {
        let mut m = SlabModel::default();
        let mut singles: Vec<Obj<'_, Val<'_, P>>> = Vec::new();
        let mut uninit: Vec<Obj<'_, MaybeUninit<Val<'_, P>>>> = Vec::new();
        let mut batches = [
            ObjArray::<'_, Val<'_, P>, BATCH>::new(&caches[0]),
            ObjArray::<'_, Val<'_, P>, BATCH>::new(&caches[1]),
        ];
        let mut done = FreeBatch::<'_, Val<'_, P>, FREE>::new(&caches[0]);
        let parking = MpmcQueue::<NonNull<Val<'_, P>>, BATCH>::new();

        for &[op, a, b, c] in ops {
            let next = ledger.next_id();
            let ci = (a & 1) as usize;
            let bi = ci;
            let panicked;
            let mut expect_panic = false;
            match op % 20 {
                // One object, initialised.
                0 | 1 => {
                    let may_fail = b % 3 != 0 && faults_armed();
                    let mut res = None;
                    panicked = run(|| res = Some(caches[ci].alloc(ledger.make(), gfp(b))));
                    match res.expect("alloc returned") {
                        Ok(obj) => {
                            assert_eq!(obj.id, next);
                            singles.push(obj);
                            m.singles.push((ci, next));
                        }
                        Err(e) => {
                            assert!(e == ENOMEM && may_fail, "alloc: {e:?}");
                            count(|s| &s.enomem);
                        }
                    }
                }
                // One object, uninitialised.
                2 => {
                    let may_fail = b % 3 != 0 && faults_armed();
                    match caches[ci].alloc_uninit(gfp(b)) {
                        Ok(obj) => {
                            uninit.push(obj);
                            m.uninit.push(ci);
                        }
                        Err(e) => {
                            assert!(e == ENOMEM && may_fail, "alloc_uninit: {e:?}");
                            count(|s| &s.enomem);
                        }
                    }
                    panicked = false;
                }
                // Initialise an uninitialised object.
                3 if !uninit.is_empty() => {
                    let i = a as usize % uninit.len();
                    let obj = uninit.swap_remove(i);
                    let cache = m.uninit.swap_remove(i);
                    singles.push(obj.write(ledger.make()));
                    m.singles.push((cache, next));
                    panicked = false;
                }
                // Drop an object, or its contents only.
                4 | 5 if !singles.is_empty() => {
                    let i = a as usize % singles.len();
                    let obj = singles.swap_remove(i);
                    let (cache, id) = m.singles.swap_remove(i);
                    expect_panic = ledger.armed.borrow()[id as usize];
                    if op % 20 == 4 {
                        panicked = run(|| drop(obj));
                    } else {
                        let mut empty = None;
                        panicked = run(|| empty = Some(obj.drop_contents()));
                        if let Some(empty) = empty {
                            uninit.push(empty);
                            m.uninit.push(cache);
                        }
                    }
                }
                // Drop an uninitialised object.
                6 if !uninit.is_empty() => {
                    let i = a as usize % uninit.len();
                    drop(uninit.swap_remove(i));
                    m.uninit.swap_remove(i);
                    panicked = false;
                }
                // Bulk allocation with an init closure that may panic at `c % 32`.
                7 | 8 => {
                    let n = b as usize % (BATCH + 3);
                    let panic_at = c as usize % 32;
                    let room = BATCH - m.batches[bi].len();
                    let may_fail = (c >> 6) % 3 != 0 && faults_armed();
                    let mut res = None;
                    panicked = run(|| {
                        res = Some(batches[bi].alloc_with(n, gfp(c >> 6), |i| {
                            if i == panic_at {
                                std::panic::panic_any(Injected);
                            }
                            ledger.make()
                        }))
                    });
                    expect_panic = panicked;
                    match res {
                        _ if n == 0 || n > room => {
                            assert!(!panicked);
                            assert_eq!(res, Some(Err(EINVAL)));
                        }
                        None => {
                            // Made `panic_at` values, dropped them, freed the objects.
                            assert!(panicked && panic_at < n);
                        }
                        Some(Ok(())) => {
                            assert!(panic_at >= n);
                            m.batches[bi].extend(next..next + n as u32);
                        }
                        Some(Err(e)) => {
                            assert!(e == ENOMEM && may_fail, "alloc_with: {e:?}");
                            count(|s| &s.enomem);
                        }
                    }
                }
                // The const-generic bulk allocations: 4 objects, into single objects.
                9 => {
                    let panic_at = c as usize % 8;
                    let may_fail = b % 3 != 0 && faults_armed();
                    let mut res = None;
                    panicked = run(|| {
                        let init = |i| {
                            if i == panic_at {
                                std::panic::panic_any(Injected);
                            }
                            ledger.make()
                        };
                        res = Some(if a & 2 == 0 {
                            caches[ci].alloc_bulk_with::<4>(gfp(b), init)
                        } else {
                            caches[ci]
                                .alloc_bulk::<4>(gfp(b))
                                .map(|u| u.init_with(init))
                        });
                    });
                    expect_panic = panicked;
                    match res {
                        None => assert!(panicked && panic_at < 4),
                        Some(Ok(mut batch)) => {
                            assert!(panic_at >= 4);
                            assert_eq!(batch.len(), 4);
                            while let Some(obj) = batch.pop() {
                                m.singles.push((ci, obj.id));
                                singles.push(obj);
                            }
                            let got: Vec<u32> = m.singles[m.singles.len() - 4..]
                                .iter()
                                .map(|s| s.1)
                                .collect();
                            assert_eq!(got, [next + 3, next + 2, next + 1, next]);
                        }
                        Some(Err(e)) => {
                            assert!(e == ENOMEM && may_fail, "alloc_bulk: {e:?}");
                            count(|s| &s.enomem);
                        }
                    }
                }
                // Push an object into a batch: handed back if full or of the other cache.
                10 if !singles.is_empty() => {
                    let i = b as usize % singles.len();
                    let obj = singles.swap_remove(i);
                    let (cache, id) = m.singles.swap_remove(i);
                    match batches[bi].push(obj) {
                        Ok(()) => {
                            assert!(cache == bi && m.batches[bi].len() < BATCH);
                            m.batches[bi].push(id);
                        }
                        Err(obj) => {
                            assert!(cache != bi || m.batches[bi].len() == BATCH);
                            assert_eq!(obj.id, id);
                            singles.push(obj);
                            m.singles.push((cache, id));
                        }
                    }
                    panicked = false;
                }
                // Pop an object out of a batch.
                11 => {
                    let obj = batches[bi].pop();
                    assert_eq!(obj.as_ref().map(|o| o.id), m.batches[bi].pop());
                    if let Some(obj) = obj {
                        m.singles.push((bi, obj.id));
                        singles.push(obj);
                    }
                    panicked = false;
                }
                // Free a batch, or drop it.
                12 | 13 => {
                    expect_panic = m.batches[bi]
                        .iter()
                        .any(|&id| ledger.armed.borrow()[id as usize]);
                    if op % 20 == 12 {
                        panicked = run(|| batches[bi].free());
                    } else {
                        let old = core::mem::replace(&mut batches[bi], ObjArray::new(&caches[bi]));
                        panicked = run(|| drop(old));
                    }
                    assert!(batches[bi].is_empty());
                    m.batches[bi].clear();
                }
                // Add an object to the free batch: freed at once if of the other cache, all
                // freed in bulk when the batch fills.
                14 if !singles.is_empty() => {
                    let i = b as usize % singles.len();
                    let obj = singles.swap_remove(i);
                    let (cache, id) = m.singles.swap_remove(i);
                    if cache != 0 {
                        expect_panic = ledger.armed.borrow()[id as usize];
                    } else {
                        m.pending.push(id);
                        if m.pending.len() == FREE {
                            expect_panic = m
                                .pending
                                .iter()
                                .any(|&id| ledger.armed.borrow()[id as usize]);
                            m.pending.clear();
                        }
                    }
                    panicked = run(|| done.add(obj));
                }
                // Flush the free batch, or drop it.
                15 => {
                    expect_panic = m
                        .pending
                        .iter()
                        .any(|&id| ledger.armed.borrow()[id as usize]);
                    if a & 2 == 0 {
                        panicked = run(|| done.flush());
                    } else {
                        let old = core::mem::replace(&mut done, FreeBatch::new(&caches[0]));
                        panicked = run(|| drop(old));
                    }
                    m.pending.clear();
                }
                // Arm a value: its drop will panic.
                16 => {
                    let live = m.live();
                    if !live.is_empty() {
                        ledger.arm(live[b as usize % live.len()]);
                    }
                    panicked = false;
                }
                // Fault injection: fail the `a % 5`-th fault point (0: none), mark the task.
                17 => {
                    set_faults((a % 5) as u32, b & 1 != 0);
                    panicked = false;
                }
                // Round trip through a raw pointer.
                18 if !singles.is_empty() => {
                    let i = a as usize % singles.len();
                    let obj = singles.remove(i);
                    let cache = obj.cache();
                    let raw = obj.into_raw();
                    // SAFETY: `raw` came from `into_raw` of an object of `cache`.
                    singles.insert(i, unsafe { Obj::from_raw(cache, raw) });
                    panicked = false;
                }
                // Park cache 0's batch in the queue in bulk or burst, or take objects back.
                19 => {
                    // SAFETY: The queue holds objects of cache 0 only, all owned by it, and
                    // gives every one back before the epoch ends.
                    let batch = unsafe { batches[0].raw_objs() };
                    if a & 2 == 0 {
                        let len = batch.len();
                        if b & 1 == 0 {
                            let r = parking.enqueue_bulk(batch);
                            let fits = len <= BATCH - m.parked.len();
                            assert_eq!(r, if fits { Ok(()) } else { Err(QError::Full) });
                            if fits {
                                m.parked.extend(m.batches[0].drain(..));
                            }
                        } else {
                            let moved = parking.enqueue_burst(batch).expect("burst");
                            assert_eq!(moved, len.min(BATCH - m.parked.len()));
                            m.parked.extend(m.batches[0].drain(..moved));
                        }
                    } else {
                        let n = (c as usize % BATCH).min(batch.remaining());
                        let moved = parking.dequeue_burst(batch, n).expect("burst");
                        assert_eq!(moved, n.min(m.parked.len()));
                        m.batches[0].extend(m.parked.drain(..moved));
                    }
                    panicked = false;
                }
                _ => panicked = false,
            }
            assert_eq!(panicked, expect_panic, "slab op {op} panicked: {panicked}");
            count(|s| &s.ops);
            if panicked {
                count(|s| &s.panics);
            }

            // The real state against the model's.
            assert_eq!(
                singles.iter().map(|o| (o.id, *o.heap)).collect::<Vec<_>>(),
                m.singles.iter().map(|s| (s.1, s.1)).collect::<Vec<_>>()
            );
            for (i, obj) in singles.iter().enumerate() {
                assert!(core::ptr::eq(obj.cache(), &*caches[m.singles[i].0]));
            }
            for (batch, model) in batches.iter().zip(&m.batches) {
                assert_eq!(&batch.iter().map(|o| o.id).collect::<Vec<_>>(), model);
                assert!(batch.iter().all(|o| *o.heap == o.id));
            }
            assert_eq!(done.len(), m.pending.len());
            assert_eq!(parking.len(), m.parked.len());
            for (i, cache) in caches.iter().enumerate() {
                assert_eq!(in_use(cache), m.objects(i), "objects of cache {i}");
            }
            ledger.check(&m.live());
        }
        set_faults(0, false);
        ledger.armed.borrow_mut().fill(false);
        // Take the parked objects back, then let everything go.
        while !m.parked.is_empty() {
            if batches[0].is_full() {
                batches[0].free();
                m.batches[0].clear();
            }
            // SAFETY: As above.
            let batch = unsafe { batches[0].raw_objs() };
            let k = batch.remaining().min(m.parked.len());
            assert_eq!(parking.dequeue_bulk(batch, k), Ok(()));
            m.batches[0].extend(m.parked.drain(..k));
        }
        drop((singles, uninit, batches, done));
    }
    for cache in &caches {
        assert_eq!(in_use(cache), 0);
    }
    drop(caches);
    assert_eq!(
        kernel::bindings::LEAKED_OBJECTS.load(Ordering::Relaxed),
        leaked
    );
}

fn slab_program<const P: usize>(epochs: &[(u8, Vec<[u8; 4]>)]) {
    let ledger = Ledger::default();
    for (flags, ops) in epochs {
        slab_epoch::<P>(&ledger, *flags, ops);
        ledger.check(&[]);
    }
}

// ---------------------------------------------------------------------------------------------
// The queue program.

/// The queue's capacity.
const QN: usize = 8;
/// The batches' capacity: more than the queue's, for `TooLarge`.
const QK: usize = 12;

type QVal<'l> = Val<'l, 0>;

/// One queue flavour, both sides.
trait Queue<'l> {
    fn len(&self) -> usize;
    fn enq(&mut self, v: QVal<'l>) -> Result<(), QVal<'l>>;
    fn deq(&mut self) -> Option<QVal<'l>>;
    fn enq_bulk(&mut self, b: &mut Batch<QVal<'l>, QK>) -> Result<(), QError>;
    fn enq_burst(&mut self, b: &mut Batch<QVal<'l>, QK>) -> Result<usize, QError>;
    fn deq_bulk(&mut self, b: &mut Batch<QVal<'l>, QK>, n: usize) -> Result<(), QError>;
    fn deq_burst(&mut self, b: &mut Batch<QVal<'l>, QK>, n: usize) -> Result<usize, QError>;
}

impl<'l> Queue<'l> for MpmcQueue<QVal<'l>, QN> {
    fn len(&self) -> usize {
        MpmcQueue::len(self)
    }
    fn enq(&mut self, v: QVal<'l>) -> Result<(), QVal<'l>> {
        self.enqueue(v)
    }
    fn deq(&mut self) -> Option<QVal<'l>> {
        self.dequeue()
    }
    fn enq_bulk(&mut self, b: &mut Batch<QVal<'l>, QK>) -> Result<(), QError> {
        self.enqueue_bulk(b)
    }
    fn enq_burst(&mut self, b: &mut Batch<QVal<'l>, QK>) -> Result<usize, QError> {
        self.enqueue_burst(b)
    }
    fn deq_bulk(&mut self, b: &mut Batch<QVal<'l>, QK>, n: usize) -> Result<(), QError> {
        self.dequeue_bulk(b, n)
    }
    fn deq_burst(&mut self, b: &mut Batch<QVal<'l>, QK>, n: usize) -> Result<usize, QError> {
        self.dequeue_burst(b, n)
    }
}

/// `SpscQueue` through its `unsafe` `&self` methods, all from this thread.
struct SpscShared<'l>(SpscQueue<QVal<'l>, QN>);

// SAFETY (all methods): One thread makes every call, so calls of one side are ordered by
// program order (happens-before), as the single-producer, single-consumer contract requires.
impl<'l> Queue<'l> for SpscShared<'l> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn enq(&mut self, v: QVal<'l>) -> Result<(), QVal<'l>> {
        // SAFETY: See above.
        unsafe { self.0.enqueue(v) }
    }
    fn deq(&mut self) -> Option<QVal<'l>> {
        // SAFETY: See above.
        unsafe { self.0.dequeue() }
    }
    fn enq_bulk(&mut self, b: &mut Batch<QVal<'l>, QK>) -> Result<(), QError> {
        // SAFETY: See above.
        unsafe { self.0.enqueue_bulk(b) }
    }
    fn enq_burst(&mut self, b: &mut Batch<QVal<'l>, QK>) -> Result<usize, QError> {
        // SAFETY: See above.
        unsafe { self.0.enqueue_burst(b) }
    }
    fn deq_bulk(&mut self, b: &mut Batch<QVal<'l>, QK>, n: usize) -> Result<(), QError> {
        // SAFETY: See above.
        unsafe { self.0.dequeue_bulk(b, n) }
    }
    fn deq_burst(&mut self, b: &mut Batch<QVal<'l>, QK>, n: usize) -> Result<usize, QError> {
        // SAFETY: See above.
        unsafe { self.0.dequeue_burst(b, n) }
    }
}

/// `SpscQueue` through its `split` handles.
struct SpscSplit<'q, 'l>(
    kernel::alf_queue::Producer<'q, QVal<'l>, QN>,
    kernel::alf_queue::Consumer<'q, QVal<'l>, QN>,
);

impl<'l> Queue<'l> for SpscSplit<'_, 'l> {
    fn len(&self) -> usize {
        assert_eq!(self.0.len(), self.1.len());
        self.0.len()
    }
    fn enq(&mut self, v: QVal<'l>) -> Result<(), QVal<'l>> {
        self.0.enqueue(v)
    }
    fn deq(&mut self) -> Option<QVal<'l>> {
        self.1.dequeue()
    }
    fn enq_bulk(&mut self, b: &mut Batch<QVal<'l>, QK>) -> Result<(), QError> {
        self.0.enqueue_bulk(b)
    }
    fn enq_burst(&mut self, b: &mut Batch<QVal<'l>, QK>) -> Result<usize, QError> {
        self.0.enqueue_burst(b)
    }
    fn deq_bulk(&mut self, b: &mut Batch<QVal<'l>, QK>, n: usize) -> Result<(), QError> {
        self.1.dequeue_bulk(b, n)
    }
    fn deq_burst(&mut self, b: &mut Batch<QVal<'l>, QK>, n: usize) -> Result<usize, QError> {
        self.1.dequeue_burst(b, n)
    }
}

/// The batches' contents and the queue's, in the real world and in the model.
struct QueueRun<'l> {
    ledger: &'l Ledger,
    /// Items to enqueue.
    inb: Batch<QVal<'l>, QK>,
    /// Items dequeued.
    outb: Batch<QVal<'l>, QK>,
    m_in: Vec<u32>,
    m_out: Vec<u32>,
    m_queue: VecDeque<u32>,
}

impl<'l> QueueRun<'l> {
    fn armed(&self, ids: impl IntoIterator<Item = u32>) -> bool {
        let armed = self.ledger.armed.borrow();
        ids.into_iter().any(|id| armed[id as usize])
    }

    fn op(&mut self, q: &mut impl Queue<'l>, [op, a, b]: [u8; 3]) {
        let ledger = self.ledger;
        let n = b as usize % (QK + 2);
        let next = ledger.next_id();
        let mut expect_panic = false;
        let panicked = match op % 12 {
            // One item in; handed back (and dropped) when full.
            0 | 1 => {
                let v = ledger.make();
                if a & 0x80 != 0 {
                    ledger.arm(next);
                }
                let full = self.m_queue.len() == QN;
                expect_panic = full && a & 0x80 != 0;
                let r = q.enq(v);
                assert_eq!(r.is_err(), full);
                if !full {
                    self.m_queue.push_back(next);
                }
                run(|| drop(r))
            }
            // One item out, dropped.
            2 | 3 => {
                let v = q.deq();
                assert_eq!(v.as_ref().map(|v| v.id), self.m_queue.pop_front());
                expect_panic = v.as_ref().is_some_and(|v| self.armed([v.id]));
                run(|| drop(v))
            }
            // Stage items in the input batch.
            4 => {
                for _ in 0..n.min(self.inb.remaining()) {
                    let id = ledger.next_id();
                    assert!(self.inb.push(ledger.make()).is_ok());
                    if a & 0x80 != 0 && id % 3 == 0 {
                        ledger.arm(id);
                    }
                    self.m_in.push(id);
                }
                false
            }
            // Enqueue the input batch, all or nothing.
            5 => {
                let len = self.m_in.len();
                let r = q.enq_bulk(&mut self.inb);
                if len > QN {
                    assert_eq!(r, Err(QError::TooLarge));
                } else if len > QN - self.m_queue.len() {
                    assert_eq!(r, Err(QError::Full));
                } else {
                    assert_eq!(r, Ok(()));
                    self.m_queue.extend(self.m_in.drain(..));
                }
                false
            }
            // Enqueue as much of the input batch as fits.
            6 => {
                let len = self.m_in.len();
                let r = q.enq_burst(&mut self.inb);
                if len > QN {
                    assert_eq!(r, Err(QError::TooLarge));
                } else {
                    let fit = len.min(QN - self.m_queue.len());
                    assert_eq!(r, Ok(fit));
                    self.m_queue.extend(self.m_in.drain(..fit));
                }
                false
            }
            // Dequeue exactly `n`, or as many as there are up to `n`.
            7 | 8 => {
                let bulk = op % 12 == 7;
                let too_large = n > QN || n > self.outb.remaining();
                if bulk {
                    let r = q.deq_bulk(&mut self.outb, n);
                    if too_large {
                        assert_eq!(r, Err(QError::TooLarge));
                    } else if n > self.m_queue.len() {
                        assert_eq!(r, Err(QError::Empty));
                    } else {
                        assert_eq!(r, Ok(()));
                        self.m_out.extend(self.m_queue.drain(..n));
                    }
                } else {
                    let r = q.deq_burst(&mut self.outb, n);
                    if too_large {
                        assert_eq!(r, Err(QError::TooLarge));
                    } else {
                        let got = n.min(self.m_queue.len());
                        assert_eq!(r, Ok(got));
                        self.m_out.extend(self.m_queue.drain(..got));
                    }
                }
                false
            }
            // Let the output batch go: cleared, drained or popped.
            9 => {
                expect_panic = self.armed(self.m_out.iter().copied());
                let out = &mut self.outb;
                let p = match a % 3 {
                    0 => run(|| out.clear()),
                    1 => run(|| out.drain().for_each(drop)),
                    _ => {
                        let mut p = false;
                        while let Some(v) = out.pop() {
                            p |= run(|| drop(v));
                        }
                        p
                    }
                };
                assert!(self.outb.is_empty());
                self.m_out.clear();
                p
            }
            // Move the output batch back to the input batch, by `fill_from` over a drain: what
            // does not fit is dropped with the drain.
            10 => {
                let want = self.inb.remaining().min(self.m_out.len());
                let rest = self.m_out.split_off(want);
                expect_panic = self.armed(rest.iter().copied());
                let (inb, outb) = (&mut self.inb, &mut self.outb);
                let p = run(|| assert_eq!(inb.fill_from(outb.drain()), want));
                self.m_in.append(&mut self.m_out);
                assert!(self.outb.is_empty());
                p
            }
            _ => false,
        };
        assert_eq!(panicked, expect_panic, "queue op {op} panicked: {panicked}");
        count(|s| &s.ops);
        if panicked {
            count(|s| &s.panics);
        }
        assert_eq!(q.len(), self.m_queue.len());
        assert_eq!(self.inb.iter().map(|v| v.id).collect::<Vec<_>>(), self.m_in);
        assert_eq!(
            self.outb.iter().map(|v| v.id).collect::<Vec<_>>(),
            self.m_out
        );
        let mut live: Vec<u32> = self.m_queue.iter().copied().collect();
        live.extend(&self.m_in);
        live.extend(&self.m_out);
        ledger.check(&live);
    }
}

/// Start indices: mostly near the `u32` wrap-around.
fn start_index(s: u32) -> u32 {
    match s % 4 {
        0 => 0,
        1 => u32::MAX - (s >> 2) % 24,
        2 => (u32::MAX - 2 * QN as u32).wrapping_add((s >> 2) % 8),
        _ => s,
    }
}

fn queue_epoch<'l>(ledger: &'l Ledger, q: &mut impl Queue<'l>, ops: &[[u8; 3]]) -> QueueRun<'l> {
    let mut r = QueueRun {
        ledger,
        inb: Batch::new(),
        outb: Batch::new(),
        m_in: Vec::new(),
        m_out: Vec::new(),
        m_queue: VecDeque::new(),
    };
    for &op in ops {
        r.op(q, op);
    }
    r
}

/// Whether a queue may be dropped holding an item whose drop panics.
///
/// On: the queue's drop must then still drop every other item, in both runs of a wrapped ring.
/// A drop that stops at the first run (the end of the slot array) when an item panics is found
/// by this fuzzer within a few thousand executions (minimal program: an MPMC queue from index
/// 0, one item in and out, eight in by bulk so that they wrap, the third of them panicking).
/// Off leaves that case out.
const QUEUE_DROP_PANICS: bool = true;

/// Drops the queue with what it holds (in up to two runs of its ring), maybe with one item
/// armed, and then the batches: every item must be dropped once.
fn queue_finish<'l, Q>(ledger: &'l Ledger, r: QueueRun<'l>, q: Q, arm_one: bool) {
    if !QUEUE_DROP_PANICS {
        ledger.armed.borrow_mut().fill(false);
    } else if arm_one {
        if let Some(&id) = r.m_queue.get(r.m_queue.len() / 2) {
            ledger.arm(id);
        }
    }
    let expect_panic = r.armed(r.m_queue.iter().copied());
    assert_eq!(run(|| drop(q)), expect_panic, "queue drop");
    ledger.check(&[r.m_in.clone(), r.m_out.clone()].concat());
    ledger.armed.borrow_mut().fill(false);
    drop(r);
    ledger.check(&[]);
}

fn queue_program(epochs: &[(u8, u32, Vec<[u8; 3]>)]) {
    let ledger = Ledger::default();
    for (flavour, start, ops) in epochs {
        let start = start_index(*start);
        let arm_one = flavour & 4 != 0;
        match flavour % 3 {
            0 => {
                let mut q = MpmcQueue::<QVal<'_>, QN>::with_start_index(start);
                let r = queue_epoch(&ledger, &mut q, ops);
                queue_finish(&ledger, r, q, arm_one);
            }
            1 => {
                let mut q = SpscShared(SpscQueue::with_start_index(start));
                let r = queue_epoch(&ledger, &mut q, ops);
                queue_finish(&ledger, r, q, arm_one);
            }
            _ => {
                let mut q = SpscQueue::<QVal<'_>, QN>::with_start_index(start);
                let r = {
                    let (p, c) = q.split();
                    queue_epoch(&ledger, &mut SpscSplit(p, c), ops)
                };
                queue_finish(&ledger, r, q, arm_one);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The runner.

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .map(|v| v.parse().expect("FUZZ_CASES"))
        .unwrap_or(if cfg!(miri) { 4 } else { 256 })
}

fn runner() -> TestRunner {
    quiet_injected_panics();
    let config = Config {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        max_shrink_iters: 100_000,
        ..Config::default()
    };
    let seed: u64 = match std::env::var("FUZZ_SEED") {
        Ok(seed) => seed.parse().expect("FUZZ_SEED"),
        Err(_) if cfg!(miri) => 1,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    };
    println!("FUZZ_SEED={seed}");
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// Runs `cases()` programs of `strategy` through `test`, and reports how many ran.
fn fuzz<S: Strategy>(name: &str, strategy: S, test: impl Fn(S::Value))
where
    S::Value: std::fmt::Debug,
{
    let start = std::time::Instant::now();
    let mut runner = runner();
    let print = std::env::var_os("FUZZ_PRINT").is_some();
    let result = runner.run(&strategy, |v| {
        if print {
            eprintln!("{v:?}");
        }
        test(v);
        Ok(())
    });
    let n = cases();
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, program)) => {
            panic!("{name}: {why}; minimal failing program: {program:?}")
        }
        Err(e) => panic!("{name}: {e}"),
    }
    println!(
        "fuzz {name}: {n} executions in {:.1} s, no failure ({} operations, {} injected panics, \
         {} injected allocation failures)",
        start.elapsed().as_secs_f64(),
        STATS.with(|s| s.ops.get()),
        STATS.with(|s| s.panics.get()),
        STATS.with(|s| s.enomem.get()),
    );
}

fn slab_epochs() -> impl Strategy<Value = Vec<(u8, Vec<[u8; 4]>)>> {
    prop::collection::vec(
        (any::<u8>(), prop::collection::vec(any::<[u8; 4]>(), 0..48)),
        1..4,
    )
}

/// Small objects: order-0 slabs, `failslab` faults only.
#[test]
fn fuzz_slab_small() {
    fuzz("slab_small", slab_epochs(), |p| slab_program::<0>(&p));
}

/// 5000-byte objects: order-3 slabs of a few objects, so that `fail_page_alloc` can fail a bulk
/// request in its middle.
#[test]
fn fuzz_slab_mid() {
    fuzz("slab_mid", slab_epochs(), |p| slab_program::<4960>(&p));
}

#[test]
fn fuzz_queue() {
    let epochs = prop::collection::vec(
        (
            any::<u8>(),
            any::<u32>(),
            prop::collection::vec(any::<[u8; 3]>(), 0..48),
        ),
        1..4,
    );
    fuzz("queue", epochs, |p| queue_program(&p));
}
