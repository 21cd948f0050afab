// SPDX-License-Identifier: GPL-2.0

//! Loom models of the queue: every interleaving (up to a preemption bound) and every weak-memory
//! outcome the orderings allow, for rings of 2 and 4 slots and 2 or 3 threads.
//!
//! Run with
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p alf_queue --release --test loom
//! ```
//!
//! The preemption bound is `LOOM_MAX_PREEMPTIONS` if set, else [`DEFAULT_PREEMPTIONS`].
//!
//! - Items are `loom::sync::Arc`s, so loom's leak check at the end of every execution proves
//!   that no item is leaked, and a double drop trips its reference count.
//! - Each slot is a loom cell, so a slot access not ordered by the index protocol is reported as
//!   a causality violation even when the values happen to come out right.
//! - Each test names the interleaving it is about and counts, over all executions, how often
//!   it happened; a test whose interesting case is never reached fails. This is how a blind
//!   spot of loom's search showed up (with a plain load in the commit wait, loom never ran a
//!   consumer's reserve between a producer's reserve and commit): see `wait_for` in `sync.rs`.
//! - In the tests with three threads only the queue's own commit loop ever waits: the test
//!   threads make a fixed number of attempts and the rest is drained after `join`. Loom treats
//!   a switch away from a yielding thread as free, so two threads spinning at once while the
//!   one they wait for is preempted give it an endless schedule to explore.
//!
//! `loom_mutants.py` next to this crate weakens one ordering at a time and checks that these
//! tests fail.
#![cfg(loom)]

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use alf_queue::{Batch, Error, MpmcQueue, SpscQueue, StampQueue};
use loom::sync::Arc;
use loom::thread;

/// The preemption bound used when `LOOM_MAX_PREEMPTIONS` is not set.
const DEFAULT_PREEMPTIONS: usize = 3;

type Item = Arc<u32>;

/// Checks `f` under loom; `f` returns whether this execution reached the interleaving `what`,
/// which must happen at least once.
fn model<F: Fn() -> bool + Sync + Send + 'static>(what: &'static str, f: F) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(DEFAULT_PREEMPTIONS);
    }
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let hits = std::sync::Arc::new(AtomicUsize::new(0));
    {
        let (runs, hits) = (runs.clone(), hits.clone());
        builder.check(move || {
            runs.fetch_add(1, Relaxed);
            if f() {
                hits.fetch_add(1, Relaxed);
            }
        });
    }
    let (runs, hits) = (runs.load(Relaxed), hits.load(Relaxed));
    eprintln!("{what}: {hits} of {runs} executions");
    assert!(hits > 0, "never explored: {what}");
}

/// Spawns a thread that runs `f` on `q`, through a clone of the `Arc`.
fn spawn_on<Q: Send + Sync + 'static, R: Send + 'static>(
    q: &Arc<Q>,
    f: impl FnOnce(&Q) -> R + Send + 'static,
) -> thread::JoinHandle<R> {
    let q = q.clone();
    thread::spawn(move || f(&q))
}

fn item(v: u32) -> Item {
    Arc::new(v)
}

fn batch_of<const K: usize>(values: &[u32]) -> Batch<Item, K> {
    let mut b = Batch::new();
    for &v in values {
        assert!(b.push(item(v)).is_ok());
    }
    b
}

/// Enqueues the items `0..n` in order through `enqueue`, yielding and trying again while the
/// ring is full; returns how many times it tried again.
fn enqueue_all(n: u32, mut enqueue: impl FnMut(Item) -> Result<(), Item>) -> usize {
    let mut retries = 0;
    for v in 0..n {
        let mut it = item(v);
        while let Err(back) = enqueue(it) {
            it = back;
            retries += 1;
            thread::yield_now();
        }
    }
    retries
}

/// Dequeues `n` items through `dequeue`, yielding while the ring is empty, and returns their
/// values in the order they came.
fn dequeue_count(n: usize, mut dequeue: impl FnMut() -> Option<Item>) -> Vec<u32> {
    let mut got = Vec::new();
    while got.len() < n {
        match dequeue() {
            Some(it) => got.push(*it),
            None => thread::yield_now(),
        }
    }
    got
}

/// The one-item operations of the two MPMC queues, `MpmcQueue` and `StampQueue`, so that the
/// models of one item at a time are written once for both.
trait SingleQueue: Send + Sync + Sized + 'static {
    /// An empty queue whose indices start at `start`.
    fn at(start: u32) -> Self;
    fn put(&self, it: Item) -> Result<(), Item>;
    fn take(&self) -> Option<Item>;
    fn count(&self) -> usize;
}

/// Implements [`SingleQueue`] for `$Queue<Item, N>` through its own methods.
macro_rules! single_queue {
    ($($Queue:ident),*) => {$(
        impl<const N: usize> SingleQueue for $Queue<Item, N> {
            fn at(start: u32) -> Self {
                Self::with_start_index(start)
            }
            fn put(&self, it: Item) -> Result<(), Item> {
                self.enqueue(it)
            }
            fn take(&self) -> Option<Item> {
                self.dequeue()
            }
            fn count(&self) -> usize {
                self.len()
            }
        }
    )*};
}
single_queue!(MpmcQueue, StampQueue);

/// Drains what is left after all threads have joined, in order.
fn drain<Q: SingleQueue>(q: &Q) -> Vec<u32> {
    let mut v = Vec::new();
    while let Some(it) = q.take() {
        v.push(*it);
    }
    v
}

/// Checks that `taken` (what the concurrent consumers got, in any order) and `left` (what was
/// drained afterwards, in order) together are exactly `0..n`, with `taken` a prefix: FIFO.
fn assert_fifo_split(mut taken: Vec<u32>, left: Vec<u32>, n: u32) {
    taken.sort_unstable();
    let expected: Vec<u32> = (0..n).collect();
    let mut all = taken.clone();
    all.extend(&left);
    assert_eq!(all, expected, "taken {taken:?}, left {left:?}");
}

/// One producer pushes three items through a 2-slot ring whose indices start at `start`, one
/// consumer takes two; the third stays in the queue and is dropped with it. The producer's third
/// item goes into a slot the consumer emptied.
fn single_1p1c<Q: SingleQueue>(start: u32) {
    model("the producer found the ring full and retried", move || {
        let q = Arc::new(Q::at(start));
        let p = spawn_on(&q, |q| enqueue_all(3, |it| q.put(it)));
        let got = dequeue_count(2, || q.take());
        let retries = p.join().unwrap();
        assert_eq!(got, [0, 1]);
        assert_eq!(q.count(), 1);
        retries > 0
    });
}

/// Two producers race for the tail while the consumer looks.
fn single_2p1c<Q: SingleQueue>() {
    model("the consumer got an item while the producers ran", || {
        let q = Arc::new(Q::at(0));
        let ps: Vec<_> = (0..2)
            .map(|p| spawn_on(&q, move |q| assert!(q.put(item(p)).is_ok())))
            .collect();
        let first = q.take().map(|it| *it);
        for p in ps {
            p.join().unwrap();
        }
        let mut got: Vec<u32> = first.into_iter().collect();
        got.extend(drain(&*q));
        got.sort_unstable();
        assert_eq!(got, [0, 1]);
        first.is_some()
    });
}

/// Two consumers race for the head while the producer fills the ring, across the `u32` wrap
/// of the indices.
fn single_1p2c_wrap<Q: SingleQueue>() {
    model("both consumers got an item while the producer ran", || {
        let q = Arc::new(Q::at(u32::MAX));
        let p = spawn_on(&q, move |q| {
            for v in 0..2 {
                assert!(q.put(item(v)).is_ok());
            }
        });
        let c = spawn_on(&q, move |q| q.take().map(|it| *it));
        let mine = q.take().map(|it| *it);
        let theirs = c.join().unwrap();
        p.join().unwrap();
        let taken: Vec<u32> = mine.into_iter().chain(theirs).collect();
        let both = taken.len() == 2;
        assert_fifo_split(taken, drain(&*q), 2);
        both
    });
}

#[test]
fn mpmc_1p1c_single() {
    single_1p1c::<MpmcQueue<Item, 2>>(0);
}

#[test]
fn mpmc_2p1c_single() {
    single_2p1c::<MpmcQueue<Item, 2>>();
}

#[test]
fn mpmc_1p2c_single_wrap() {
    single_1p2c_wrap::<MpmcQueue<Item, 2>>();
}

/// Two producers enqueue bulks of two into a 4-slot ring while the consumer takes a burst.
#[test]
fn mpmc_2p1c_bulk() {
    model(
        "the consumer's burst got items while the producers ran",
        || {
            let q = Arc::new(MpmcQueue::<Item, 4>::new());
            let ps: Vec<_> = (0..2u32)
                .map(|p| {
                    spawn_on(&q, move |q| {
                        let mut b = batch_of::<2>(&[10 * p, 10 * p + 1]);
                        assert_eq!(q.enqueue_bulk(&mut b), Ok(()));
                        assert!(b.is_empty());
                    })
                })
                .collect();
            let mut b = Batch::<Item, 4>::new();
            let n = q.dequeue_burst(&mut b, 4).unwrap();
            assert_eq!(n, b.len());
            let mut got: Vec<u32> = b.drain().map(|it| *it).collect();
            for p in ps {
                p.join().unwrap();
            }
            got.extend(drain(&*q));
            // Each producer's pair arrives whole and in order.
            assert_eq!(got.len(), 4, "{got:?}");
            let pos = |v: u32| got.iter().position(|&x| x == v).unwrap();
            assert_eq!(pos(1), pos(0) + 1, "{got:?}");
            assert_eq!(pos(11), pos(10) + 1, "{got:?}");
            n > 0
        },
    );
}

/// One producer enqueues two bulks of two into a 4-slot ring whose indices wrap; two
/// consumers each try to take an exact bulk of two.
#[test]
fn mpmc_1p2c_bulk_wrap() {
    model("both consumers got a bulk while the producer ran", || {
        let q = Arc::new(MpmcQueue::<Item, 4>::with_start_index(u32::MAX - 2));
        let take = |q: &MpmcQueue<Item, 4>| {
            let mut b = Batch::<Item, 2>::new();
            match q.dequeue_bulk(&mut b, 2) {
                Ok(()) => b.drain().map(|it| *it).collect(),
                Err(Error::Empty) => {
                    assert!(b.is_empty());
                    Vec::new()
                }
                Err(e) => panic!("{e:?}"),
            }
        };
        let p = spawn_on(&q, move |q| {
            for pair in [[0, 1], [2, 3]] {
                let mut b = batch_of::<2>(&pair);
                assert_eq!(q.enqueue_bulk(&mut b), Ok(()));
            }
        });
        let c = spawn_on(&q, move |q| take(q));
        let mine = take(&q);
        let theirs = c.join().unwrap();
        p.join().unwrap();
        let mut taken = Vec::new();
        for got in [&mine, &theirs] {
            // A bulk of two is two consecutive items.
            assert!(
                got.is_empty() || (got.len() == 2 && got[1] == got[0] + 1),
                "{got:?}"
            );
            taken.extend(got);
        }
        let both = taken.len() == 4;
        assert_fifo_split(taken, drain(&*q), 4);
        both
    });
}

/// Two producers race for the one slot of a full 2-slot ring that the consumer frees: a
/// producer that sees the other's new `prod.head` must also see the `cons.tail` that justified
/// it, or it computes a wrapped-around free count and overwrites a full slot.
#[test]
fn mpmc_2p1c_full() {
    model("a producer got into the slot freed concurrently", || {
        let q = Arc::new(MpmcQueue::<Item, 2>::new());
        for v in 0..2 {
            assert!(q.enqueue(item(v)).is_ok());
        }
        let ps: Vec<_> = (0..2)
            .map(|p| spawn_on(&q, move |q| q.enqueue(item(10 + p)).is_ok()))
            .collect();
        assert_eq!(q.dequeue().map(|it| *it), Some(0));
        let pushed: Vec<u32> = ps
            .into_iter()
            .zip(10..)
            .filter_map(|(p, v)| p.join().unwrap().then_some(v))
            .collect();
        // One slot was freed, so at most one producer got in.
        assert!(pushed.len() <= 1, "{pushed:?}");
        let left = drain(&*q);
        assert_eq!(left[0], 1, "{left:?}");
        assert_eq!(&left[1..], &pushed[..]);
        !pushed.is_empty()
    });
}

/// Two consumers empty a full 2-slot ring while a producer tries to refill it: the producer
/// may reuse a slot only once every consumer up to it has finished reading it (the consumer
/// commit wait, and its acquire).
#[test]
fn mpmc_1p2c_full() {
    model(
        "the producer reused a slot both consumers had just released",
        || {
            let q = Arc::new(MpmcQueue::<Item, 2>::new());
            for v in 0..2 {
                assert!(q.enqueue(item(v)).is_ok());
            }
            let c = spawn_on(&q, move |q| q.dequeue().map(|it| *it));
            // Two items: both fit only once both consumers have committed.
            let p = spawn_on(&q, move |q| {
                (2..4)
                    .filter(|&v| q.enqueue(item(v)).is_ok())
                    .collect::<Vec<u32>>()
            });
            let mine = q.dequeue().map(|it| *it);
            let theirs = c.join().unwrap();
            let pushed = p.join().unwrap();
            let mut taken: Vec<u32> = mine.into_iter().chain(theirs).collect();
            taken.sort_unstable();
            assert_eq!(taken, [0, 1]);
            assert_eq!(drain(&*q), pushed);
            pushed.len() == 2
        },
    );
}

/// A producer whose cached copy of `cons.tail` is older than the tail behind the current
/// `prod.head`: two producers reload the tail at different times and store their copies in
/// the wrong order, so the second one finds a copy from before the first one's reservation and
/// computes a "negative" (wrapped) free count. It must treat that as too little room and read
/// the real tail again, not reserve slots that hold items.
#[test]
fn mpmc_2p1c_stale_copy() {
    model("the bulk producer got in while the consumer ran", || {
        let q = Arc::new(MpmcQueue::<Item, 2>::new());
        // The producers' copy of `cons.tail` stays at 0 while the consumer moves on to 1:
        // one item (1) in the ring, at index 1, `prod.head` at 2.
        assert!(q.enqueue(item(0)).is_ok());
        assert_eq!(q.dequeue().map(|it| *it), Some(0));
        assert!(q.enqueue(item(1)).is_ok());
        let bulk = spawn_on(&q, move |q| {
            let mut b = batch_of::<2>(&[10, 11]);
            match q.enqueue_bulk(&mut b) {
                Ok(()) => true,
                Err(Error::Full) => false,
                Err(e) => panic!("{e:?}"),
            }
        });
        let single = spawn_on(&q, move |q| q.enqueue(item(20)).is_ok());
        assert_eq!(q.dequeue().map(|it| *it), Some(1));
        let bulk_in = bulk.join().unwrap();
        let single_in = single.join().unwrap();
        // The consumer freed one slot, so after it at most two items fit: the bulk, or the
        // single one.
        let left = drain(&*q);
        match (bulk_in, single_in) {
            (true, false) => assert_eq!(left, [10, 11]),
            (false, true) => assert_eq!(left, [20]),
            (false, false) => assert!(left.is_empty()),
            (true, true) => panic!("both got in: {left:?}"),
        }
        bulk_in
    });
}

/// The consumers' counterpart of `mpmc_2p1c_stale_copy`: two consumers store their copies of
/// `prod.tail` in the wrong order, and the one that finds a copy older than the tail behind
/// `cons.head` must read the real tail again, not take slots that hold no item yet.
#[test]
fn mpmc_1p2c_stale_copy() {
    model(
        "the bulk consumer got two items while the producer ran",
        || {
            let q = Arc::new(MpmcQueue::<Item, 2>::new());
            // The consumers' copy of `prod.tail` is 1, `cons.head` is 1, the ring is empty.
            assert!(q.enqueue(item(100)).is_ok());
            assert_eq!(q.dequeue().map(|it| *it), Some(100));
            let bulk = spawn_on(&q, move |q| {
                let mut b = Batch::<Item, 2>::new();
                match q.dequeue_bulk(&mut b, 2) {
                    Ok(()) => b.drain().map(|it| *it).collect(),
                    Err(Error::Empty) => Vec::new(),
                    Err(e) => panic!("{e:?}"),
                }
            });
            let single = spawn_on(&q, move |q| q.dequeue().map(|it| *it));
            for v in 0..2 {
                assert!(q.enqueue(item(v)).is_ok());
            }
            let pair = bulk.join().unwrap();
            let one = single.join().unwrap();
            let mut taken = pair.clone();
            taken.extend(one);
            assert!(pair.is_empty() || pair == [0, 1], "{pair:?}");
            assert_fifo_split(taken, drain(&*q), 2);
            !pair.is_empty()
        },
    );
}

/// Mixed operations on both sides: a producer enqueueing a burst, a consumer dequeueing one
/// item, and a third thread doing one enqueue and one dequeue; what is left is dropped with
/// the queue.
#[test]
fn mpmc_mixed() {
    model("both consumers got an item", || {
        let q = Arc::new(MpmcQueue::<Item, 4>::new());
        let p = spawn_on(&q, move |q| {
            let mut b = batch_of::<2>(&[0, 1]);
            assert_eq!(q.enqueue_burst(&mut b), Ok(2));
        });
        let c = spawn_on(&q, move |q| q.dequeue().map(|it| *it));
        assert!(q.enqueue(item(10)).is_ok());
        let mine = q.dequeue().map(|it| *it);
        let theirs = c.join().unwrap();
        p.join().unwrap();
        if let (Some(a), Some(b)) = (mine, theirs) {
            assert_ne!(a, b);
        }
        // Whatever is left (1 to 3 items) stays and is dropped with the queue.
        let taken = usize::from(mine.is_some()) + usize::from(theirs.is_some());
        assert_eq!(q.len() + taken, 3);
        taken == 2
    });
}

/// `StampQueue`: [`single_1p1c`] across the `u32` wrap of the indices.
#[test]
fn stamp_1p1c_wrap() {
    single_1p1c::<StampQueue<Item, 2>>(u32::MAX);
}

/// `StampQueue`: [`single_2p1c`].
#[test]
fn stamp_2p1c() {
    single_2p1c::<StampQueue<Item, 2>>();
}

/// `StampQueue`: [`single_1p2c_wrap`].
#[test]
fn stamp_1p2c() {
    single_1p2c_wrap::<StampQueue<Item, 2>>();
}

/// `StampQueue`: a full 2-slot ring, one consumer taking an item while a producer offers one:
/// the producer finds the ring full, or fills the slot the consumer just emptied.
#[test]
fn stamp_full_while_dequeue() {
    model("the enqueue filled the slot the dequeue emptied", || {
        let q = Arc::new(StampQueue::<Item, 2>::with_start_index(u32::MAX - 2));
        assert!(q.enqueue(item(0)).is_ok());
        assert!(q.enqueue(item(1)).is_ok());
        let c = spawn_on(&q, |q| q.dequeue().map(|it| *it));
        let went_in = q.enqueue(item(2)).is_ok();
        assert_eq!(c.join().unwrap(), Some(0));
        let left = drain(&*q);
        assert_eq!(left, if went_in { vec![1, 2] } else { vec![1] });
        went_in
    });
}

/// SPSC through the `unsafe` `&self` methods (the handles wrap exactly these): single items,
/// a 2-slot ring, indices wrapping.
#[test]
fn spsc_single_wrap() {
    model("the producer found the ring full and retried", || {
        let q = Arc::new(SpscQueue::<Item, 2>::with_start_index(u32::MAX - 1));
        let p = spawn_on(&q, |q| {
            enqueue_all(3, |it| {
                // SAFETY: This thread is the queue's only producer.
                unsafe { q.enqueue(it) }
            })
        });
        let got = dequeue_count(3, || {
            // SAFETY: This thread is the queue's only consumer.
            unsafe { q.dequeue() }
        });
        let retries = p.join().unwrap();
        assert_eq!(got, [0, 1, 2]);
        retries > 0
    });
}

/// SPSC through the split handles, which keep their positions themselves: a 2-slot ring whose
/// indices wrap, a producer that sends one item and then a burst of two, a consumer that takes
/// single items and then a burst straight out of the slots. Both make a bounded number of
/// attempts; what is still to be sent or taken is handled after `join`.
#[test]
fn spsc_split_wrap() {
    model("the producer's burst was cut short", || {
        let q = Box::into_raw(Box::new(SpscQueue::<Item, 2>::with_start_index(
            u32::MAX - 1,
        )));
        // SAFETY: `q` is valid until `Box::from_raw` below, after both handles are gone.
        let (mut tx, mut rx) = unsafe { (*q).split() };
        let p = thread::spawn(move || {
            assert!(tx.enqueue(item(0)).is_ok());
            let mut b = batch_of::<2>(&[1, 2]);
            let first = tx.enqueue_burst(&mut b).unwrap();
            if !b.is_empty() {
                thread::yield_now();
                tx.enqueue_burst(&mut b).unwrap();
            }
            (first < 2, b, tx)
        });
        let mut got = Vec::new();
        for _ in 0..2 {
            match rx.dequeue() {
                Some(it) => got.push(*it),
                None => thread::yield_now(),
            }
        }
        let (cut_short, mut unsent, mut tx) = p.join().unwrap();
        let _ = rx.dequeue_burst_with(2, |it| got.push(*it)).unwrap();
        // What the producer could not send goes in now that the consumer has made room.
        let left = unsent.len();
        assert_eq!(tx.enqueue_burst(&mut unsent), Ok(left));
        while let Some(it) = rx.dequeue() {
            got.push(*it);
        }
        // SAFETY: The handles that borrowed `*q` are gone (no use of them follows); it came
        // from `Box::into_raw`.
        let q = unsafe { Box::from_raw(q) };
        assert!(q.is_empty());
        assert_eq!(got, [0, 1, 2]);
        cut_short
    });
}

/// SPSC with a trailing consumer, one item per call (`dequeue_trailing`): see [`trailing_wrap`].
#[test]
fn spsc_trailing_wrap() {
    trailing_wrap(
        "the consumer started a dequeue with one item sent",
        |rx, got| {
            got.extend(rx.dequeue_trailing().map(|it| *it));
        },
    );
}

/// SPSC with a trailing consumer taking bursts of up to two (`dequeue_burst_trailing_with`),
/// so that it reads the producer's tail whenever it knows of fewer than two: see
/// [`trailing_wrap`].
#[test]
fn spsc_trailing_burst_wrap() {
    trailing_wrap(
        "the consumer started a burst with one item sent",
        |rx, got| {
            assert!(rx
                .dequeue_burst_trailing_with(2, |it| got.push(*it))
                .is_ok());
        },
    );
}

/// A trailing consumer's model: a 4-slot ring whose indices wrap, which the consumer trails by
/// two items, so that it waits whenever it finds one. The producer sends three items, retrying
/// while the ring is full, and counts them in `sent` after each; the consumer calls `take`,
/// which appends what it took to `got`, until it has all three, and reaches the interleaving
/// `what` when it calls with one item sent.
fn trailing_wrap(
    what: &'static str,
    take: fn(&mut alf_queue::Consumer<'_, Item, 4>, &mut Vec<u32>),
) {
    model(what, move || {
        let q = Box::into_raw(Box::new(SpscQueue::<Item, 4>::with_start_index(
            u32::MAX - 1,
        )));
        // SAFETY: `q` is valid until `Box::from_raw` below, after both handles are gone.
        let (mut tx, mut rx) = unsafe { (*q).split() };
        assert_eq!(alf_queue::Consumer::<Item, 4>::TRAIL, 2);
        let sent = Arc::new(loom::sync::atomic::AtomicU32::new(0));
        let p = {
            let sent = sent.clone();
            thread::spawn(move || {
                enqueue_all(3, |it| {
                    let r = tx.enqueue(it);
                    if r.is_ok() {
                        sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    r
                })
            })
        };
        let (mut got, mut one_sent) = (Vec::new(), false);
        while got.len() < 3 {
            one_sent |= sent.load(std::sync::atomic::Ordering::Relaxed) == 1;
            let before = got.len();
            take(&mut rx, &mut got);
            if got.len() == before {
                thread::yield_now();
            }
        }
        p.join().unwrap();
        take(&mut rx, &mut got);
        // SAFETY: The handles that borrowed `*q` are gone (no use of them follows); it came
        // from `Box::into_raw`.
        let q = unsafe { Box::from_raw(q) };
        assert!(q.is_empty());
        assert_eq!(got, [0, 1, 2]);
        one_sent
    });
}

/// SPSC bulk and burst: the producer pushes a burst of three into a 4-slot ring holding one
/// item, the consumer takes exact bulks of two; one item stays behind.
#[test]
fn spsc_bulk() {
    model("the producer's burst was cut short and resumed", || {
        let q = Arc::new(SpscQueue::<Item, 4>::new());
        let mut b = batch_of::<1>(&[0]);
        // SAFETY: No other thread exists yet.
        assert_eq!(unsafe { q.enqueue_bulk(&mut b) }, Ok(()));
        let p = spawn_on(&q, move |q| {
            let mut b = batch_of::<4>(&[1, 2, 3, 4]);
            let mut calls = 0;
            while !b.is_empty() {
                calls += 1;
                // SAFETY: This thread is the queue's only producer.
                if unsafe { q.enqueue_burst(&mut b) }.unwrap() == 0 {
                    thread::yield_now();
                }
            }
            calls
        });
        let mut got = Vec::new();
        let mut b = Batch::<Item, 2>::new();
        while got.len() < 4 {
            // SAFETY: This thread is the queue's only consumer.
            match unsafe { q.dequeue_bulk(&mut b, 2) } {
                Ok(()) => got.extend(b.drain().map(|it| *it)),
                Err(Error::Empty) => thread::yield_now(),
                Err(e) => panic!("{e:?}"),
            }
        }
        let calls = p.join().unwrap();
        assert_eq!(got, [0, 1, 2, 3]);
        assert_eq!(q.len(), 1);
        calls > 1
    });
}

/// SPSC in place: the producer writes bursts of two straight into the slots of a 2-slot ring
/// whose indices wrap, the consumer takes an exact bulk of one and then bursts straight out of
/// the slots.
#[test]
fn spsc_in_place_wrap() {
    model(
        "an in-place burst moved fewer items than asked, but some",
        || {
            let q = Arc::new(SpscQueue::<Item, 2>::with_start_index(u32::MAX));
            let p = spawn_on(&q, move |q| {
                let (mut sent, mut cut_short) = (0u32, false);
                while sent < 4 {
                    let want = (4 - sent).min(2) as usize;
                    // SAFETY: This thread is the queue's only producer.
                    let k = unsafe { q.enqueue_burst_with(want, |i| item(sent + i as u32)) };
                    match k.unwrap() {
                        0 => thread::yield_now(),
                        k => {
                            cut_short |= k < want;
                            sent += k as u32;
                        }
                    }
                }
                cut_short
            });
            let mut got = Vec::new();
            while got.len() < 4 {
                // SAFETY: This thread is the queue's only consumer.
                let r = unsafe {
                    if got.is_empty() {
                        q.dequeue_bulk_with(1, |it| got.push(*it)).map(|()| 1)
                    } else {
                        q.dequeue_burst_with(2, |it| got.push(*it))
                    }
                };
                match r {
                    Ok(0) | Err(Error::Empty) => thread::yield_now(),
                    Ok(_) => {}
                    Err(e) => panic!("{e:?}"),
                }
            }
            let cut_short = p.join().unwrap();
            assert_eq!(got, [0, 1, 2, 3]);
            cut_short
        },
    );
}

/// Two producer-side calls from different threads, one after the other in time but ordered only
/// by a `Relaxed` flag: the second producer may read a `prod.head` from before the first one's
/// commit and write the same slot. This is why the `unsafe` single-side methods require
/// happens-before between calls of one side, not merely calls that do not overlap. Loom
/// reports the race on the slot.
#[test]
#[should_panic(expected = "Causality violation")]
fn spsc_relaxed_handoff_races() {
    spsc_handoff(
        std::sync::atomic::Ordering::Relaxed,
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// The same hand-off with `Release` and `Acquire`, which orders the two calls by
/// happens-before as the contract asks: no race, and both items arrive in order.
#[test]
fn spsc_release_acquire_handoff() {
    spsc_handoff(
        std::sync::atomic::Ordering::Release,
        std::sync::atomic::Ordering::Acquire,
    );
}

/// One producer-side call on each of two threads, the second waiting for a flag that the first
/// sets with `set` after its call and the second reads with `get`.
fn spsc_handoff(set: std::sync::atomic::Ordering, get: std::sync::atomic::Ordering) {
    use loom::sync::atomic::AtomicBool;
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(DEFAULT_PREEMPTIONS);
    }
    builder.check(move || {
        let q = Arc::new(SpscQueue::<Item, 2>::new());
        let done = Arc::new(AtomicBool::new(false));
        let first = {
            let (q, done) = (q.clone(), done.clone());
            thread::spawn(move || {
                // SAFETY: The only producer-side call until `done` is set; the second thread's
                // call waits for it (ordered by happens-before only if `set`/`get` make it so,
                // which is what this test is about).
                assert!(unsafe { q.enqueue(item(0)) }.is_ok());
                done.store(true, set);
            })
        };
        let second = {
            let (q, done) = (q.clone(), done.clone());
            thread::spawn(move || {
                while !done.load(get) {
                    thread::yield_now();
                }
                // SAFETY: See above: the first thread's call has returned.
                assert!(unsafe { q.enqueue(item(1)) }.is_ok());
            })
        };
        first.join().unwrap();
        second.join().unwrap();
        let mut got = Vec::new();
        // SAFETY: Both producers have been joined; this thread is the only user.
        while let Some(it) = unsafe { q.dequeue() } {
            got.push(*it);
        }
        assert_eq!(got, [0, 1]);
    });
}
