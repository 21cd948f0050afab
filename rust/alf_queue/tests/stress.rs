// SPDX-License-Identifier: GPL-2.0

//! Multi-threaded stress tests: no item lost, none duplicated, FIFO per producer.
//!
//! Items encode `producer << 40 | sequence`. Producers and consumers pick a random operation
//! (single, bulk or burst) and a random size in `1..=64` for every call. Each consumer checks
//! that the sequence numbers it receives from each producer increase; at the end the union of
//! what all consumers received must be exactly every sequence number of every producer, once.
//!
//! Size: `ALF_STRESS_ITEMS` items per test (default 10^7 in an optimised build, 2 * 10^5 in a
//! debug build, so that a plain `cargo test` stays quick); `ALF_STRESS_SEED` fixes the random
//! seed (printed by every test).
//!
//! ```text
//! cargo test -p alf_queue --release --test stress -- --nocapture
//! ALF_STRESS_ITEMS=100000000 cargo test -p alf_queue --release --test stress
//! ```
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use alf_queue::{Batch, Error, MpmcQueue, SpscQueue, StampQueue};

const MAX_BULK: usize = 64;

fn items() -> u64 {
    std::env::var("ALF_STRESS_ITEMS")
        .map(|v| v.parse().expect("ALF_STRESS_ITEMS"))
        .unwrap_or(if cfg!(debug_assertions) {
            200_000
        } else {
            10_000_000
        })
}

fn seed() -> u64 {
    std::env::var("ALF_STRESS_SEED")
        .map(|v| v.parse().expect("ALF_STRESS_SEED"))
        .unwrap_or_else(|_| fastrand::u64(..))
}

fn encode(producer: u64, seq: u64) -> u64 {
    producer << 40 | seq
}

/// Waits a little: the threads outnumber the cores, so a waiter must let others run.
fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 16 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

/// The queue operations the stress driver needs, for every flavour.
trait Side: Sync {
    /// The queue has single operations only: the driver makes no bulk or burst call.
    const SINGLE: bool = false;
    fn enq(&self, item: u64) -> Result<(), u64>;
    fn enq_bulk(&self, b: &mut Batch<u64, MAX_BULK>) -> Result<(), Error>;
    fn enq_burst(&self, b: &mut Batch<u64, MAX_BULK>) -> Result<usize, Error>;
    fn deq(&self) -> Option<u64>;
    fn deq_bulk(&self, b: &mut Batch<u64, MAX_BULK>, n: usize) -> Result<(), Error>;
    fn deq_burst(&self, b: &mut Batch<u64, MAX_BULK>, n: usize) -> Result<usize, Error>;
}

impl<const N: usize> Side for MpmcQueue<u64, N> {
    fn enq(&self, item: u64) -> Result<(), u64> {
        self.enqueue(item)
    }
    fn enq_bulk(&self, b: &mut Batch<u64, MAX_BULK>) -> Result<(), Error> {
        self.enqueue_bulk(b)
    }
    fn enq_burst(&self, b: &mut Batch<u64, MAX_BULK>) -> Result<usize, Error> {
        self.enqueue_burst(b)
    }
    fn deq(&self) -> Option<u64> {
        self.dequeue()
    }
    fn deq_bulk(&self, b: &mut Batch<u64, MAX_BULK>, n: usize) -> Result<(), Error> {
        self.dequeue_bulk(b, n)
    }
    fn deq_burst(&self, b: &mut Batch<u64, MAX_BULK>, n: usize) -> Result<usize, Error> {
        self.dequeue_burst(b, n)
    }
}

/// An `SpscQueue` used through its `unsafe` `&self` methods by exactly one producer thread
/// and one consumer thread.
struct Spsc<const N: usize>(SpscQueue<u64, N>);

impl<const N: usize> Side for Spsc<N> {
    // SAFETY (every method): `spsc_1p1c` runs one producer and one consumer thread.
    fn enq(&self, item: u64) -> Result<(), u64> {
        // SAFETY: Only the producer thread calls producer-side methods.
        unsafe { self.0.enqueue(item) }
    }
    fn enq_bulk(&self, b: &mut Batch<u64, MAX_BULK>) -> Result<(), Error> {
        // SAFETY: As in `enq`.
        unsafe { self.0.enqueue_bulk(b) }
    }
    fn enq_burst(&self, b: &mut Batch<u64, MAX_BULK>) -> Result<usize, Error> {
        // SAFETY: As in `enq`.
        unsafe { self.0.enqueue_burst(b) }
    }
    fn deq(&self) -> Option<u64> {
        // SAFETY: Only the consumer thread calls consumer-side methods.
        unsafe { self.0.dequeue() }
    }
    fn deq_bulk(&self, b: &mut Batch<u64, MAX_BULK>, n: usize) -> Result<(), Error> {
        // SAFETY: As in `deq`.
        unsafe { self.0.dequeue_bulk(b, n) }
    }
    fn deq_burst(&self, b: &mut Batch<u64, MAX_BULK>, n: usize) -> Result<usize, Error> {
        // SAFETY: As in `deq`.
        unsafe { self.0.dequeue_burst(b, n) }
    }
}

/// A `StampQueue`: single operations only.
impl<const N: usize> Side for StampQueue<u64, N> {
    const SINGLE: bool = true;
    fn enq(&self, item: u64) -> Result<(), u64> {
        self.enqueue(item)
    }
    fn enq_bulk(&self, _: &mut Batch<u64, MAX_BULK>) -> Result<(), Error> {
        unreachable!()
    }
    fn enq_burst(&self, _: &mut Batch<u64, MAX_BULK>) -> Result<usize, Error> {
        unreachable!()
    }
    fn deq(&self) -> Option<u64> {
        self.dequeue()
    }
    fn deq_bulk(&self, _: &mut Batch<u64, MAX_BULK>, _: usize) -> Result<(), Error> {
        unreachable!()
    }
    fn deq_burst(&self, _: &mut Batch<u64, MAX_BULK>, _: usize) -> Result<usize, Error> {
        unreachable!()
    }
}

/// Sends `count` items `encode(id, 0..count)` with random operations and sizes.
fn produce<Q: Side>(q: &Q, id: u64, count: u64, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut b = Batch::<u64, MAX_BULK>::new();
    let mut seq = 0;
    while seq < count || !b.is_empty() {
        // Top the batch up to a new random size (a burst may have left some behind).
        let want = rng.usize(1..=MAX_BULK);
        while b.len() < want && seq < count {
            b.push(encode(id, seq)).unwrap();
            seq += 1;
        }
        let mut spins = 0;
        match if Q::SINGLE { 0 } else { rng.u8(0..3) } {
            0 => {
                // One at a time, in order.
                for item in b.drain().collect::<Vec<_>>() {
                    let mut item = item;
                    while let Err(back) = q.enq(item) {
                        item = back;
                        backoff(&mut spins);
                    }
                }
            }
            1 => loop {
                match q.enq_bulk(&mut b) {
                    Ok(()) => break,
                    Err(Error::Full) => backoff(&mut spins),
                    Err(e) => panic!("{e:?}"),
                }
            },
            _ => {
                if q.enq_burst(&mut b).unwrap() == 0 {
                    backoff(&mut spins);
                }
            }
        }
    }
}

/// Receives until `done` reaches `total`, checking per-producer FIFO order; returns what it
/// got, per producer.
fn consume<Q: Side>(
    q: &Q,
    producers: usize,
    done: &AtomicU64,
    total: u64,
    seed: u64,
) -> Vec<Vec<u64>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut b = Batch::<u64, MAX_BULK>::new();
    let mut got = vec![Vec::new(); producers];
    let mut next = vec![0u64; producers];
    let mut spins = 0;
    while done.load(Ordering::Relaxed) < total {
        let n = rng.usize(1..=MAX_BULK);
        let k = match if Q::SINGLE { 0 } else { rng.u8(0..3) } {
            0 => q.deq().map(|item| b.push(item).unwrap()).is_some() as usize,
            1 => match q.deq_bulk(&mut b, n) {
                Ok(()) => n,
                Err(Error::Empty) => 0,
                Err(e) => panic!("{e:?}"),
            },
            _ => q.deq_burst(&mut b, n).unwrap(),
        };
        if k == 0 {
            backoff(&mut spins);
            continue;
        }
        spins = 0;
        assert_eq!(b.len(), k);
        for item in b.drain() {
            let (p, seq) = ((item >> 40) as usize, item & ((1 << 40) - 1));
            assert!(p < producers, "garbage item {item:#x}");
            assert!(seq >= next[p], "producer {p}: {seq} after {}", next[p]);
            next[p] = seq + 1;
            got[p].push(seq);
        }
        done.fetch_add(k as u64, Ordering::Relaxed);
    }
    got
}

/// Runs `producers` x `consumers` threads over `q` and checks the result.
fn run(name: &str, q: &impl Side, producers: usize, consumers: usize) {
    let total = items();
    let per_producer = total / producers as u64;
    let total = per_producer * producers as u64;
    let seed = seed();
    let done = AtomicU64::new(0);
    let t = Instant::now();
    let results: Vec<Vec<Vec<u64>>> = std::thread::scope(|s| {
        for p in 0..producers {
            s.spawn(move || produce(q, p as u64, per_producer, seed ^ p as u64));
        }
        let cs: Vec<_> = (0..consumers)
            .map(|c| {
                let done = &done;
                s.spawn(move || consume(q, producers, done, total, seed ^ (100 + c as u64)))
            })
            .collect();
        cs.into_iter().map(|c| c.join().unwrap()).collect()
    });
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(done.load(Ordering::Relaxed), total);
    // Every sequence number of every producer, exactly once.
    for p in 0..producers {
        let mut all: Vec<u64> = results.iter().flat_map(|r| r[p].iter().copied()).collect();
        assert_eq!(
            all.len() as u64,
            per_producer,
            "producer {p}: lost or duplicated items"
        );
        all.sort_unstable();
        assert!(
            all.iter().copied().eq(0..per_producer),
            "producer {p}: some item lost and another duplicated"
        );
    }
    let split: Vec<u64> = results
        .iter()
        .map(|r| r.iter().map(|v| v.len() as u64).sum())
        .collect();
    eprintln!(
        "{name}: {total} items, {producers}P{consumers}C, seed {seed}, {secs:.2} s \
         ({:.0} ns/item), per consumer {split:?}",
        secs * 1e9 / total as f64
    );
}

#[test]
fn mpmc_2p2c_1024() {
    let q = MpmcQueue::<u64, 1024>::with_start_index(u32::MAX - 5000);
    run("mpmc_2p2c_1024", &q, 2, 2);
    assert!(q.is_empty());
}

#[test]
fn mpmc_2p2c_64() {
    // A ring as small as one bulk: constant full/empty transitions and slot-array wraps.
    let q = MpmcQueue::<u64, 64>::with_start_index(u32::MAX - 100);
    run("mpmc_2p2c_64", &q, 2, 2);
    assert!(q.is_empty());
}

#[test]
fn stamp_2p2c_1024() {
    let q = StampQueue::<u64, 1024>::with_start_index(u32::MAX - 5000);
    run("stamp_2p2c_1024", &q, 2, 2);
    assert!(q.is_empty());
}

#[test]
fn stamp_3p3c_4() {
    // A tiny ring: slots change hands every few operations, and the threads find it full or
    // empty all the time.
    let q = StampQueue::<u64, 4>::with_start_index(u32::MAX - 100);
    run("stamp_3p3c_4", &q, 3, 3);
    assert!(q.is_empty());
}

#[test]
fn spsc_1p1c() {
    let q = Spsc(SpscQueue::<u64, 256>::with_start_index(u32::MAX - 300));
    run("spsc_1p1c_256", &q, 1, 1);
    assert!(q.0.is_empty());
}

#[test]
fn spsc_handles_and_drops() {
    // The safe handles, with heap items: a leak or double free shows in the counters (and
    // the allocator).
    static LIVE: AtomicUsize = AtomicUsize::new(0);
    struct Item(Box<u64>);
    impl Item {
        fn new(v: u64) -> Self {
            LIVE.fetch_add(1, Ordering::Relaxed);
            Item(Box::new(v))
        }
    }
    impl Drop for Item {
        fn drop(&mut self) {
            LIVE.fetch_sub(1, Ordering::Relaxed);
        }
    }
    let n = items() / 10;
    let mut q = SpscQueue::<Item, 64>::new();
    let (mut tx, mut rx) = q.split();
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut b = Batch::<Item, 16>::new();
            let mut v = 0;
            while v < n {
                while !b.is_full() && v < n {
                    assert!(b.push(Item::new(v)).is_ok());
                    v += 1;
                }
                while tx.enqueue_bulk(&mut b).is_err() {
                    std::thread::yield_now();
                }
            }
        });
        s.spawn(move || {
            let mut b = Batch::<Item, 16>::new();
            let mut expect = 0;
            while expect < n {
                match rx.dequeue_burst(&mut b, 16).unwrap() {
                    0 => std::thread::yield_now(),
                    _ => {
                        for it in b.drain() {
                            assert_eq!(*it.0, expect);
                            expect += 1;
                        }
                    }
                }
            }
        });
    });
    assert!(q.is_empty());
    assert_eq!(LIVE.load(Ordering::Relaxed), 0);
}

#[test]
fn spsc_trailing() {
    // One item per call through the handles, the consumer trailing (`dequeue_trailing`).
    trailing_stream("spsc_trailing", false);
}

#[test]
fn spsc_trailing_burst() {
    // Bulks of one to four in, trailing bursts of one to four out
    // (`dequeue_burst_trailing_with`).
    trailing_stream("spsc_trailing_burst", true);
}

/// A producer and a trailing consumer through the handles, one item per call or (`bursts`)
/// bulks and trailing bursts of one to four: every item arrives once and in order, from indices
/// that wrap, whether the consumer finds the ring empty, short of `TRAIL` items (and waits) or
/// well ahead.
fn trailing_stream(name: &str, bursts: bool) {
    let n = items();
    let mut q = SpscQueue::<u64, 256>::with_start_index(u32::MAX - 300);
    let (mut tx, mut rx) = q.split();
    let empties = std::thread::scope(|s| {
        s.spawn(move || {
            let (mut v, mut spins, mut size) = (0, 0, 1);
            while v < n {
                let k = if bursts { size.min(n - v) } else { 1 };
                let sent = if bursts {
                    tx.enqueue_bulk_with(k as usize, |i| v + i as u64).is_ok()
                } else {
                    tx.enqueue(v).is_ok()
                };
                if sent {
                    v += k;
                    size = size % 4 + 1;
                    spins = 0;
                } else {
                    backoff(&mut spins);
                }
            }
        });
        s.spawn(move || {
            let (mut empties, mut spins, mut size) = (0u64, 0, 1);
            let expect = std::cell::Cell::new(0);
            let check = |v| {
                assert_eq!(v, expect.get());
                expect.set(v + 1);
            };
            while expect.get() < n {
                let got = if bursts {
                    size = size % 4 + 1;
                    rx.dequeue_burst_trailing_with(size, check).unwrap()
                } else {
                    rx.dequeue_trailing().map(check).is_some() as usize
                };
                if got == 0 {
                    empties += 1;
                    backoff(&mut spins);
                } else {
                    spins = 0;
                }
            }
            assert!(rx.dequeue_trailing().is_none());
            assert_eq!(rx.dequeue_burst_trailing_with(4, |_| ()), Ok(0));
            empties
        })
        .join()
        .unwrap()
    });
    eprintln!("{name}: {n} items, {empties} empty dequeues");
    assert!(q.is_empty());
}
