// SPDX-License-Identifier: GPL-2.0

//! Per-element cost of alf_queue against other bounded queues, in userspace.
//!
//! Every benchmark reports **nanoseconds per element**: one criterion iteration is one element
//! moved through the queue (enqueued and dequeued). Groups:
//!
//! - `st`: one thread, enqueue `k` elements then dequeue `k`, for `k` in 1..64.
//! - `1p1c`: one producer and one consumer thread; the producer moves `k` at a time (all or
//!   nothing where the queue has that), the consumer takes up to `k` at a time.
//! - `2p2c`: two of each, multi-producer multi-consumer queues only.
//! - `1p1c_alternating`: the `1p1c` queues again, in turns (each queue once per repetition,
//!   the order rotated between repetitions), outside criterion, into
//!   `target/criterion/1p1c_alternating.json`; `report.py` takes the 1P1C ratios of the
//!   targets from it, within each repetition (see [`alternating`]).
//! - `1p1c_single`: one producer and one consumer thread, one element per call on both sides
//!   (every queue through its single-element push and pop), on a large ring of
//!   [`SINGLE_CAP`] slots, reported as k = 1; and `1p1c_single_alternating`, the same queues in
//!   turns, as `1p1c_alternating` (`target/criterion/1p1c_single_alternating.json`).
//!
//! Queues: ours (`alf_mpmc`, `alf_spsc`: batches filled with `Batch::fill_from` and moved with
//! the bulk/burst API; `alf_spsc_with`: the SPSC handles' in-place `enqueue_bulk_with` and
//! `dequeue_*_with`, no batch; `alf_spsc_chunks`: the handles' `write_chunk` filled with
//! `WriteChunk::fill_with` and `read_chunk*` read as slices, as rtrb is driven; `alf_stamp`, in
//! `1p1c` only: `StampQueue`, one element per call on both sides, driven as the MPMC peers are;
//! `alf_spsc_trailing`, in `1p1c` only: in place, the consumer trailing its producer through
//! `dequeue_burst_trailing_with`; `_single`: one element per call), crossbeam-queue
//! `ArrayQueue` and concurrent-queue `ConcurrentQueue::bounded` (one element per call, there
//! is no bulk API), rtrb (chunks: `write_chunk_uninit`, written through its slices by the
//! loop of our `fill_with`, its fastest way in; `fill_from_iter`, which checks the iterator at
//! every item, is slower; `rtrb_trailing` in `1p1c`: the same, its consumer made to trail as
//! ours does) and ringbuf (slices), both SPSC. All have 1024 slots (4096 in the
//! `1p1c_single` groups) and carry `usize` elements (the size of a pointer). In the
//! `1p1c_single` groups every queue moves one element per call: ours through
//! `Producer::enqueue`/`Consumer::dequeue` (`alf_spsc_single`), `MpmcQueue::enqueue`/
//! `dequeue` (`alf_mpmc_single`) and `StampQueue::enqueue`/`dequeue` (`alf_stamp_single`;
//! in the `st` group too), rtrb through `Producer::push`/`Consumer::pop`, ringbuf
//! through `try_push`/`try_pop` of its caching halves, the MPMC peers as in the other groups;
//! and with a consumer that trails its producer, ours through `Consumer::dequeue_trailing`
//! (`alf_spsc_trailing`) and rtrb with the same wait written around `pop` (`rtrb_trailing`).
//!
//! Across threads, every worker thread is pinned to a CPU of its own (from the CPUs this
//! process may run on; `ALF_BENCH_NO_PIN=1` in the environment turns that off) and waits at a
//! barrier; the time of a run is from the first worker's
//! start to the last worker's end, each taken by the worker itself, so no worker can run
//! before the clock starts. A group that needs more spinning threads than there are CPUs is
//! named with an `_oversubscribed` suffix (`2p2c_oversubscribed` on a 2-CPU machine) and its
//! threads are left to the scheduler, unpinned: its figures measure how the queues cope with
//! preemption, not their throughput, and `report.py` keeps them apart.
//!
//! ```text
//! cargo bench -p alf_queue --bench queues                  # everything (15-20 min, 2 CPUs)
//! cargo bench -p alf_queue --bench queues -- 'st/'         # a filter
//! cargo bench -p alf_queue --bench queues -- alternating   # the alternating runs alone
//! cargo bench -p alf_queue --bench queues -- 1p1c_single   # the single-element 1P1C groups
//! python3 rust/alf_queue/benches/report.py                 # the tables, from target/criterion
//! ```
//!
//! The load average is printed before and after the run (and stored for `report.py`):
//! cross-thread figures mean little on a loaded machine.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use alf_queue::{Batch, MpmcQueue, SpscQueue, StampQueue};
use concurrent_queue::ConcurrentQueue;
use criterion::{criterion_group, BenchmarkId, Criterion};
use crossbeam_queue::ArrayQueue;
use ringbuf::traits::{Consumer as _, Producer as _, Split as _};

const BULKS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
const CAP: usize = 1024;
/// Slots of the queues of the `1p1c_single` groups: a large ring (32 KiB of `usize`), four
/// times the other groups', the ring the one-element-per-call target is judged on.
const SINGLE_CAP: usize = 4096;
const MAX_K: usize = 64;

/// Runs `round` (which moves `k` elements) often enough to move `iters` elements, and returns
/// the time scaled to exactly `iters` elements.
fn per_element(iters: u64, k: usize, mut round: impl FnMut()) -> Duration {
    let rounds = iters.div_ceil(k as u64);
    let t = Instant::now();
    for _ in 0..rounds {
        round();
    }
    t.elapsed()
        .mul_f64(iters as f64 / (rounds * k as u64) as f64)
}

// ---------------------------------------------------------------------------------------------
// One thread: enqueue k, dequeue k.

/// One round of the variants through a `Batch`: `b` filled with `0 .. k`, one bulk enqueue of
/// it, one bulk dequeue of `k` back into it, whose items are summed.
#[inline(always)]
fn batch_round<E: std::fmt::Debug>(
    k: usize,
    b: &mut Batch<usize, MAX_K>,
    mut enqueue: impl FnMut(&mut Batch<usize, MAX_K>) -> Result<(), E>,
    mut dequeue: impl FnMut(&mut Batch<usize, MAX_K>) -> Result<(), E>,
) {
    b.fill_from(0..k);
    enqueue(b).unwrap();
    dequeue(b).unwrap();
    black_box(b.as_slice().iter().sum::<usize>());
    b.clear();
}

/// One round of the one-element-per-call variants: `push(0)` .. `push(k - 1)`, then `k` times
/// `pop()`, whose results are summed.
#[inline(always)]
fn single_round(k: usize, mut push: impl FnMut(usize), mut pop: impl FnMut() -> usize) {
    for i in 0..k {
        push(i);
    }
    let mut sum = 0;
    for _ in 0..k {
        sum += pop();
    }
    black_box(sum);
}

fn single_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("st");
    g.sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for k in BULKS {
        g.bench_with_input(BenchmarkId::new("alf_mpmc", k), &k, |bch, &k| {
            let q = MpmcQueue::<usize, CAP>::new();
            let mut b = Batch::<usize, MAX_K>::new();
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    batch_round(k, &mut b, |b| q.enqueue_bulk(b), |b| q.dequeue_bulk(b, k))
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("alf_mpmc_single", k), &k, |bch, &k| {
            let q = MpmcQueue::<usize, CAP>::new();
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    single_round(k, |i| q.enqueue(i).unwrap(), || q.dequeue().unwrap())
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("alf_stamp_single", k), &k, |bch, &k| {
            let q = StampQueue::<usize, CAP>::new();
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    single_round(k, |i| q.enqueue(i).unwrap(), || q.dequeue().unwrap())
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("alf_spsc", k), &k, |bch, &k| {
            let mut q = SpscQueue::<usize, CAP>::new();
            let (mut tx, mut rx) = q.split();
            let mut b = Batch::<usize, MAX_K>::new();
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    batch_round(k, &mut b, |b| tx.enqueue_bulk(b), |b| rx.dequeue_bulk(b, k))
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("alf_spsc_with", k), &k, |bch, &k| {
            let mut q = SpscQueue::<usize, CAP>::new();
            let (mut tx, mut rx) = q.split();
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    tx.enqueue_bulk_with(k, |i| i).unwrap();
                    let mut sum = 0;
                    rx.dequeue_bulk_with(k, |x| sum += x).unwrap();
                    black_box(sum);
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("alf_spsc_chunks", k), &k, |bch, &k| {
            let mut q = SpscQueue::<usize, CAP>::new();
            let (mut tx, mut rx) = q.split();
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    tx.write_chunk(k).unwrap().fill_with(|i| i);
                    let r = rx.read_chunk(k).unwrap();
                    let (a, b) = r.as_slices();
                    black_box(a.iter().sum::<usize>() + b.iter().sum::<usize>());
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("alf_spsc_single", k), &k, |bch, &k| {
            let mut q = SpscQueue::<usize, CAP>::new();
            let (mut tx, mut rx) = q.split();
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    single_round(k, |i| tx.enqueue(i).unwrap(), || rx.dequeue().unwrap())
                })
            })
        });
        g.bench_with_input(
            BenchmarkId::new("crossbeam_arrayqueue", k),
            &k,
            |bch, &k| {
                let q = ArrayQueue::<usize>::new(CAP);
                bch.iter_custom(|iters| {
                    per_element(iters, k, || {
                        single_round(k, |i| q.push(i).unwrap(), || q.pop().unwrap())
                    })
                })
            },
        );
        g.bench_with_input(BenchmarkId::new("concurrent_queue", k), &k, |bch, &k| {
            let q = ConcurrentQueue::<usize>::bounded(CAP);
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    single_round(k, |i| q.push(i).unwrap(), || q.pop().unwrap())
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("rtrb_chunks", k), &k, |bch, &k| {
            let (mut p, mut c) = rtrb::RingBuffer::<usize>::new(CAP);
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    rtrb_fill(p.write_chunk_uninit(k).unwrap());
                    let r = c.read_chunk(k).unwrap();
                    let (a, b) = r.as_slices();
                    black_box(a.iter().chain(b).sum::<usize>());
                    r.commit_all();
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("ringbuf_slices", k), &k, |bch, &k| {
            let (mut p, mut c) = ringbuf::HeapRb::<usize>::new(CAP).split();
            let mut src = [0usize; MAX_K];
            let mut dst = [0usize; MAX_K];
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    for (i, x) in src[..k].iter_mut().enumerate() {
                        *x = i;
                    }
                    assert_eq!(p.push_slice(&src[..k]), k);
                    assert_eq!(c.pop_slice(&mut dst[..k]), k);
                    black_box(dst[..k].iter().sum::<usize>());
                })
            })
        });
    }
    g.finish();
}

/// Fills an rtrb chunk with 0, 1, ... through its two slices and commits it: the loop of
/// alf_queue's `WriteChunk::fill_with`, so that both queues are filled the same way.
fn rtrb_fill(mut w: rtrb::chunks::WriteChunkUninit<'_, usize>) {
    let (a, b) = w.as_mut_slices();
    let skip = a.len();
    for (i, slot) in a.iter_mut().enumerate() {
        slot.write(i);
    }
    for (i, slot) in b.iter_mut().enumerate() {
        slot.write(skip + i);
    }
    // SAFETY: Every slot of the chunk was written above.
    unsafe { w.commit_all() };
}

// ---------------------------------------------------------------------------------------------
// Across threads.

/// Waits a little: spins first, then lets the other threads (and whatever else runs on the
/// machine) have the core.
fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

type Job<'a> = Box<dyn FnOnce() + Send + 'a>;

/// A job's state (its closure, with the queue handle and the counters it captured) in 128-byte
/// blocks of its own, a pair of cache lines as the queues' indices have (`headtail.rs`).
///
/// The jobs' loops store to that state on every pass (an SPSC handle's position, the consumer's
/// count). Boxed by the allocator wherever it has room, a producer's and a consumer's state may
/// share a line, whose stores then move it between their CPUs on every element: a cost of the
/// harness, not of the queue, that falls on whichever queue's samples the allocator happens to
/// place so.
#[repr(align(128))]
struct OwnLines<F>(F);

impl<F: FnOnce()> OwnLines<F> {
    /// Runs the job (a method, so that a closure calling it captures the whole block).
    fn run(self) {
        (self.0)()
    }
}

/// Boxes `job` as a [`Job`], its state in lines of its own ([`OwnLines`]).
fn job<'q>(job: impl FnOnce() + Send + 'q) -> Job<'q> {
    let job = OwnLines(job);
    Box::new(move || job.run())
}

/// The CPUs this process may run on, in order.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: `cpu_set_t` is plain data, valid when zeroed; `sched_getaffinity` writes at most
    // `size_of::<cpu_set_t>()` bytes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Pins the calling thread to `cpu`; panics if that fails (a run that asked for pinned
/// threads must not silently measure unpinned ones).
fn pin_to(cpu: usize) {
    // SAFETY: As in `allowed_cpus`; `sched_setaffinity(0, ..)` applies to the calling thread.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    assert_eq!(rc, 0, "sched_setaffinity to CPU {cpu}");
}

/// Whether `threads` spinning threads are more than this process has CPUs.
fn oversubscribed(threads: usize) -> bool {
    threads > allowed_cpus().len().max(1)
}

/// The name of a cross-thread group of `threads` threads: `name`, or `name_oversubscribed`.
fn group_name(name: &str, threads: usize) -> String {
    if oversubscribed(threads) {
        format!("{name}_oversubscribed")
    } else {
        name.to_owned()
    }
}

/// Runs every job on a thread of its own, pinned to a CPU of its own unless there are more
/// jobs than CPUs, all released at once by a barrier; returns the time from the first job's
/// start to the last job's end, as the jobs' threads saw them.
fn run_jobs(jobs: Vec<Job<'_>>) -> Duration {
    let cpus = allowed_cpus();
    let pin = jobs.len() <= cpus.len() && std::env::var_os("ALF_BENCH_NO_PIN").is_none();
    let barrier = Barrier::new(jobs.len());
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .into_iter()
            .enumerate()
            .map(|(i, job)| {
                let (barrier, cpus) = (&barrier, &cpus);
                s.spawn(move || {
                    if pin {
                        pin_to(cpus[i]);
                    }
                    barrier.wait();
                    let start = Instant::now();
                    job();
                    (start, Instant::now())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let first = spans.iter().map(|s| s.0).min().unwrap();
    let last = spans.iter().map(|s| s.1).max().unwrap();
    last - first
}

/// Moves about `iters` elements from `p` producers to `c` consumers; returns the time scaled to
/// `iters` elements. `make` builds the jobs for `per_producer` elements each and `total`.
fn cross_thread<'q>(
    iters: u64,
    producers: u64,
    make: impl FnOnce(u64, u64) -> Vec<Job<'q>>,
) -> Duration {
    let per_producer = iters.div_ceil(producers).max(MAX_K as u64);
    let total = per_producer * producers;
    run_jobs(make(per_producer, total)).mul_f64(iters as f64 / total as f64)
}

/// A producer job: moves `per_producer` elements, offering `k` at a time (fewer for the last).
/// `send(n)` moves up to `n` and returns how many; the job backs off while it moves none, and
/// starts its back-off over after every success.
fn producer<'q>(
    k: usize,
    per_producer: u64,
    mut send: impl FnMut(usize) -> usize + Send + 'q,
) -> Job<'q> {
    job(move || {
        let (mut sent, mut spins) = (0, 0);
        while sent < per_producer {
            match send((k as u64).min(per_producer - sent) as usize) {
                0 => backoff(&mut spins),
                m => {
                    spins = 0;
                    sent += m as u64;
                }
            }
        }
    })
}

/// A consumer job: `recv(&mut sum)` moves some elements out, adds them to `sum` and returns how
/// many; `more(n)` counts them and says whether more are to come. The job backs off while it
/// gets none, and starts its back-off over after every success.
fn consumer<'q>(
    mut recv: impl FnMut(&mut usize) -> usize + Send + 'q,
    mut more: impl FnMut(usize) -> bool + Send + 'q,
) -> Job<'q> {
    job(move || {
        let (mut sum, mut spins) = (0, 0);
        loop {
            let n = recv(&mut sum);
            if n == 0 {
                backoff(&mut spins);
            } else {
                spins = 0;
            }
            if !more(n) {
                break;
            }
        }
        black_box(sum);
    })
}

/// The two jobs of a one-producer one-consumer run, for bulk size `k`: a [`producer`] of
/// `per_producer` elements through `send` and a [`consumer`] of `total` through `recv`.
fn pair_jobs<'q>(
    k: usize,
    (per_producer, total): (u64, u64),
    send: impl FnMut(usize) -> usize + Send + 'q,
    recv: impl FnMut(&mut usize) -> usize + Send + 'q,
) -> Vec<Job<'q>> {
    let mut got = 0;
    vec![
        producer(k, per_producer, send),
        consumer(recv, move |n| {
            got += n as u64;
            got < total
        }),
    ]
}

/// The jobs of a run of `producers` and `consumers` on one queue: a [`producer`] each, with the
/// `send` that `sender()` makes, and a [`consumer`] each, with the `recv` that `receiver()`
/// makes; the consumers count what they take in `done` and stop once it reaches `total`.
fn multi_jobs<'q, S, R>(
    k: usize,
    (producers, consumers): (u64, u64),
    (per_producer, total): (u64, u64),
    done: &'q AtomicU64,
    sender: impl Fn() -> S,
    receiver: impl Fn() -> R,
) -> Vec<Job<'q>>
where
    S: FnMut(usize) -> usize + Send + 'q,
    R: FnMut(&mut usize) -> usize + Send + 'q,
{
    let mut jobs: Vec<Job<'q>> = Vec::new();
    for _ in 0..producers {
        jobs.push(producer(k, per_producer, sender()));
    }
    for _ in 0..consumers {
        jobs.push(consumer(receiver(), move |n| {
            if n > 0 {
                done.fetch_add(n as u64, Ordering::Relaxed);
            }
            done.load(Ordering::Relaxed) < total
        }));
    }
    jobs
}

/// The send step of our queues through a `Batch`, for [`producer`], on the producer side `tx`
/// (an SPSC handle, or a shared reference to an MPMC queue): a single enqueue for `n = 1`,
/// else one all-or-nothing bulk of `out`, refilled with `0 .. n` only once its last bulk went
/// in (a bulk that did not fit is offered again). Returns how many moved.
#[inline(always)]
fn offer_from_batch<P, E>(
    tx: &mut P,
    out: &mut Batch<usize, MAX_K>,
    n: usize,
    one: impl FnOnce(&mut P, usize) -> Result<(), usize>,
    bulk: impl FnOnce(&mut P, &mut Batch<usize, MAX_K>) -> Result<(), E>,
) -> usize {
    if n == 1 {
        return one(tx, 0).map_or(0, |()| 1);
    }
    if out.is_empty() {
        out.fill_from(0..n);
    }
    bulk(tx, out).map_or(0, |()| n)
}

/// The receive step of our queues through a `Batch`, for [`consumer`], on the consumer side
/// `rx`: a single dequeue for `k = 1`, else one burst of up to `k` into `back`; adds what it
/// took to `sum` and returns how many.
#[inline(always)]
fn take_into_batch<C, E: std::fmt::Debug>(
    rx: &mut C,
    back: &mut Batch<usize, MAX_K>,
    k: usize,
    sum: &mut usize,
    one: impl FnOnce(&mut C) -> Option<usize>,
    burst: impl FnOnce(&mut C, &mut Batch<usize, MAX_K>, usize) -> Result<usize, E>,
) -> usize {
    if k == 1 {
        return one(rx).map(|x| *sum += x).is_some() as usize;
    }
    let n = burst(rx, back, k).unwrap();
    *sum += back.as_slice().iter().sum::<usize>();
    back.clear();
    n
}

/// Jobs for our MPMC queue: bulk producers (all or nothing, `k` at a time; single operations
/// for `k = 1`) and burst consumers.
fn alf_mpmc_jobs<'q>(
    q: &'q MpmcQueue<usize, CAP>,
    done: &'q AtomicU64,
    k: usize,
    pc: (u64, u64),
    counts: (u64, u64),
) -> Vec<Job<'q>> {
    let sender = || {
        let (mut q, mut out) = (q, Batch::<usize, MAX_K>::new());
        move |n| {
            offer_from_batch(
                &mut q,
                &mut out,
                n,
                |q, x| q.enqueue(x),
                |q, b| q.enqueue_bulk(b),
            )
        }
    };
    let receiver = || {
        let (mut q, mut back) = (q, Batch::<usize, MAX_K>::new());
        move |sum: &mut usize| {
            take_into_batch(
                &mut q,
                &mut back,
                k,
                sum,
                |q| q.dequeue(),
                |q, b, k| q.dequeue_burst(b, k),
            )
        }
    };
    multi_jobs(k, pc, counts, done, sender, receiver)
}

/// Jobs for a queue with one-element `push`/`pop` (ArrayQueue, ConcurrentQueue): producers
/// push one element at a time, consumers pop up to `k` per round.
fn one_by_one_jobs<'q, Q: Sync>(
    q: &'q Q,
    push: fn(&Q, usize) -> Result<(), usize>,
    pop: fn(&Q) -> Option<usize>,
    done: &'q AtomicU64,
    k: usize,
    pc: (u64, u64),
    counts: (u64, u64),
) -> Vec<Job<'q>> {
    let sender = || move |_: usize| push(q, 0).map_or(0, |()| 1);
    let receiver = || {
        move |sum: &mut usize| {
            let mut n = 0;
            while n < k {
                match pop(q) {
                    Some(x) => {
                        *sum += x;
                        n += 1;
                    }
                    None => break,
                }
            }
            n
        }
    };
    multi_jobs(1, pc, counts, done, sender, receiver)
}

fn arrayqueue_push(q: &ArrayQueue<usize>, x: usize) -> Result<(), usize> {
    q.push(x)
}
fn arrayqueue_pop(q: &ArrayQueue<usize>) -> Option<usize> {
    q.pop()
}
fn stamp_push(q: &StampQueue<usize, CAP>, x: usize) -> Result<(), usize> {
    q.enqueue(x)
}
fn stamp_pop(q: &StampQueue<usize, CAP>) -> Option<usize> {
    q.dequeue()
}
fn concurrent_push(q: &ConcurrentQueue<usize>, x: usize) -> Result<(), usize> {
    q.push(x).map_err(|e| e.into_inner())
}
fn concurrent_pop(q: &ConcurrentQueue<usize>) -> Option<usize> {
    q.pop().ok()
}

/// A cross-thread run of one queue: moves about `iters` elements at bulk size `k` with
/// `pc.0` producers and `pc.1` consumers on a queue made for the run; returns the time scaled
/// to `iters` elements.
type CrossRun = fn(usize, (u64, u64), u64) -> Duration;
/// A queue's name and its [`CrossRun`].
type Run = (&'static str, CrossRun);

/// Ours, MPMC: bulk producers (all or nothing, `k` at a time; single operations for `k = 1`)
/// and burst consumers.
fn run_alf_mpmc(k: usize, pc: (u64, u64), iters: u64) -> Duration {
    let q = MpmcQueue::<usize, CAP>::new();
    let done = AtomicU64::new(0);
    cross_thread(iters, pc.0, |pp, total| {
        alf_mpmc_jobs(&q, &done, k, pc, (pp, total))
    })
}

/// A run of a queue with one-element `push`/`pop`, made by `new`.
fn run_one_by_one<Q: Sync>(
    new: fn() -> Q,
    push: fn(&Q, usize) -> Result<(), usize>,
    pop: fn(&Q) -> Option<usize>,
    k: usize,
    pc: (u64, u64),
    iters: u64,
) -> Duration {
    let q = new();
    let done = AtomicU64::new(0);
    cross_thread(iters, pc.0, |pp, total| {
        one_by_one_jobs(&q, push, pop, &done, k, pc, (pp, total))
    })
}

fn run_arrayqueue(k: usize, pc: (u64, u64), iters: u64) -> Duration {
    run_one_by_one(
        || ArrayQueue::new(CAP),
        arrayqueue_push,
        arrayqueue_pop,
        k,
        pc,
        iters,
    )
}

/// Ours, `StampQueue`: one element per call on both sides, as the peers below.
fn run_stamp(k: usize, pc: (u64, u64), iters: u64) -> Duration {
    run_one_by_one(StampQueue::new, stamp_push, stamp_pop, k, pc, iters)
}

fn run_concurrent(k: usize, pc: (u64, u64), iters: u64) -> Duration {
    run_one_by_one(
        || ConcurrentQueue::bounded(CAP),
        concurrent_push,
        concurrent_pop,
        k,
        pc,
        iters,
    )
}

/// The MPMC queues of the cross-thread groups: ours (bulk producers, burst consumers) and the
/// peers (an element per call).
const MPMC_RUNS: [Run; 3] = [
    ("alf_mpmc", run_alf_mpmc),
    ("crossbeam_arrayqueue", run_arrayqueue),
    ("concurrent_queue", run_concurrent),
];

/// Ours, SPSC, through a `Batch`: single operations for k = 1, all-or-nothing bulks in,
/// bursts out. One producer and one consumer (`_pc` is `(1, 1)`).
fn run_alf_spsc(k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let mut q = SpscQueue::<usize, CAP>::new();
    let (mut tx, mut rx) = q.split();
    let (mut out, mut back) = (Batch::<usize, MAX_K>::new(), Batch::<usize, MAX_K>::new());
    cross_thread(iters, 1, |pp, total| {
        pair_jobs(
            k,
            (pp, total),
            move |n| {
                offer_from_batch(
                    &mut tx,
                    &mut out,
                    n,
                    |t, x| t.enqueue(x),
                    |t, b| t.enqueue_bulk(b),
                )
            },
            move |sum| {
                take_into_batch(
                    &mut rx,
                    &mut back,
                    k,
                    sum,
                    |r| r.dequeue(),
                    |r, b, k| r.dequeue_burst(b, k),
                )
            },
        )
    })
}

/// Ours, SPSC, in place: items made in and consumed from their slots; with `TRAILING`, the
/// consumer trailing the producer (`Consumer::dequeue_burst_trailing_with`).
fn run_alf_spsc_with<const TRAILING: bool>(k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let mut q = SpscQueue::<usize, CAP>::new();
    let (mut tx, mut rx) = q.split();
    cross_thread(iters, 1, |pp, total| {
        pair_jobs(
            k,
            (pp, total),
            move |n| tx.enqueue_bulk_with(n, |i| i).map_or(0, |()| n),
            move |sum| {
                let take = |x| *sum += x;
                if TRAILING {
                    rx.dequeue_burst_trailing_with(k, take).unwrap()
                } else {
                    rx.dequeue_burst_with(k, take).unwrap()
                }
            },
        )
    })
}

/// Ours, SPSC, through chunks: reserved slots lent as slices.
fn run_alf_spsc_chunks(k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let mut q = SpscQueue::<usize, CAP>::new();
    let (mut tx, mut rx) = q.split();
    cross_thread(iters, 1, |pp, total| {
        pair_jobs(
            k,
            (pp, total),
            move |n| {
                tx.write_chunk(n).map_or(0, |w| {
                    w.fill_with(|i| i);
                    n
                })
            },
            move |sum| {
                let r = rx.read_chunk_burst(k).unwrap();
                let (a, b) = r.as_slices();
                *sum += a.iter().sum::<usize>() + b.iter().sum::<usize>();
                r.len()
            },
        )
    })
}

/// rtrb's consumer `c` made to trail its producer by its caller, as our
/// `Consumer::dequeue_trailing` and `dequeue_burst_trailing_with` trail ours: when rtrb's copy
/// of the producer's index shows fewer than the `want` items the caller asks for, `slots()`
/// reads the index (and keeps it as the copy), and if it shows fewer than our `TRAIL` items
/// for a ring of `N` but some, this spins our `TRAIL_SPINS` pause hints. Returns the items
/// rtrb knows of.
fn rtrb_trail<const N: usize>(c: &mut rtrb::Consumer<usize>, want: usize) -> usize {
    type Ours<'a, const N: usize> = alf_queue::Consumer<'a, usize, N>;
    let mut n = c.cached_slots();
    if n < want {
        n = c.slots();
        if n != 0 && n < Ours::<N>::TRAIL as usize {
            for _ in 0..Ours::<N>::TRAIL_SPINS {
                std::hint::spin_loop();
            }
        }
    }
    n
}

/// rtrb, through chunks (`write_chunk_uninit`, filled as ours is); with `TRAILING`, its
/// consumer made to trail the producer ([`rtrb_trail`], asking for `k`) before it reads up to
/// `k` items. Without, the consumer reads the producer's index at every call, through
/// `slots()`.
fn run_rtrb<const TRAILING: bool>(k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let (mut p, mut c) = rtrb::RingBuffer::<usize>::new(CAP);
    cross_thread(iters, 1, |pp, total| {
        pair_jobs(
            k,
            (pp, total),
            move |n| {
                p.write_chunk_uninit(n).map_or(0, |w| {
                    rtrb_fill(w);
                    n
                })
            },
            move |sum| {
                let n = if TRAILING {
                    rtrb_trail::<CAP>(&mut c, k)
                } else {
                    c.slots()
                }
                .min(k);
                if n == 0 {
                    return 0;
                }
                let r = c.read_chunk(n).unwrap();
                let (a, b) = r.as_slices();
                *sum += a.iter().chain(b).sum::<usize>();
                r.commit_all();
                n
            },
        )
    })
}

/// ringbuf, through slices: it takes what fits of a slice, so `send` may move part of an
/// offer.
fn run_ringbuf(k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let (mut p, mut c) = ringbuf::HeapRb::<usize>::new(CAP).split();
    let (mut src, mut dst) = ([0usize; MAX_K], [0usize; MAX_K]);
    cross_thread(iters, 1, |pp, total| {
        pair_jobs(
            k,
            (pp, total),
            move |n| {
                for (i, x) in src[..n].iter_mut().enumerate() {
                    *x = i;
                }
                p.push_slice(&src[..n])
            },
            move |sum| {
                let n = c.pop_slice(&mut dst[..k]);
                *sum += dst[..n].iter().sum::<usize>();
                n
            },
        )
    })
}

/// Every queue of the one-producer one-consumer runs, in the order they are measured.
const ONE_P_ONE_C: [Run; 11] = [
    ("alf_spsc", run_alf_spsc),
    ("alf_spsc_with", run_alf_spsc_with::<false>),
    ("alf_spsc_chunks", run_alf_spsc_chunks),
    ("alf_spsc_trailing", run_alf_spsc_with::<true>),
    MPMC_RUNS[0],
    ("alf_stamp", run_stamp),
    MPMC_RUNS[1],
    MPMC_RUNS[2],
    ("rtrb_chunks", run_rtrb::<false>),
    ("rtrb_trailing", run_rtrb::<true>),
    ("ringbuf_slices", run_ringbuf),
];

// ---------------------------------------------------------------------------------------------
// One producer, one consumer, one element per call, a large ring.

/// A one-producer one-consumer run moving about `iters` elements one per call: `push(x)`
/// offers one element and says whether it went in, `pop()` takes one if there is any. The
/// jobs are the other groups' [`producer`] and [`consumer`], for k = 1.
fn single_pair<'q>(
    iters: u64,
    mut push: impl FnMut(usize) -> bool + Send + 'q,
    mut pop: impl FnMut() -> Option<usize> + Send + 'q,
) -> Duration {
    cross_thread(iters, 1, |pp, total| {
        pair_jobs(
            1,
            (pp, total),
            move |_| push(0) as usize,
            move |sum| pop().map(|x| *sum += x).is_some() as usize,
        )
    })
}

/// Ours, SPSC, one element per call through the `Producer` and `Consumer` handles.
fn run_alf_spsc_single(_k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let mut q = Box::<SpscQueue<usize, SINGLE_CAP>>::new_uninit();
    SpscQueue::init_in_place(&mut q);
    // SAFETY: `init_in_place` initialised the queue.
    let mut q = unsafe { q.assume_init() };
    let (mut tx, mut rx) = q.split();
    single_pair(iters, move |x| tx.enqueue(x).is_ok(), move || rx.dequeue())
}

/// Ours, SPSC, one element per call through the handles, the consumer trailing the producer
/// (`Consumer::dequeue_trailing`).
fn run_alf_spsc_single_trailing(_k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let mut q = Box::<SpscQueue<usize, SINGLE_CAP>>::new_uninit();
    SpscQueue::init_in_place(&mut q);
    // SAFETY: `init_in_place` initialised the queue.
    let mut q = unsafe { q.assume_init() };
    let (mut tx, mut rx) = q.split();
    single_pair(
        iters,
        move |x| tx.enqueue(x).is_ok(),
        move || rx.dequeue_trailing(),
    )
}

/// Ours, MPMC, one element per call (`enqueue`, `dequeue`).
fn run_alf_mpmc_single(_k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let mut q = Box::<MpmcQueue<usize, SINGLE_CAP>>::new_uninit();
    MpmcQueue::init_in_place(&mut q);
    // SAFETY: `init_in_place` initialised the queue.
    let q = unsafe { q.assume_init() };
    let q = &*q;
    single_pair(iters, move |x| q.enqueue(x).is_ok(), move || q.dequeue())
}

/// Ours, `StampQueue` (MPMC, a stamp per slot), one element per call (`enqueue`, `dequeue`).
fn run_alf_stamp_single(_k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let mut q = Box::<StampQueue<usize, SINGLE_CAP>>::new_uninit();
    StampQueue::init_in_place(&mut q);
    // SAFETY: `init_in_place` initialised the queue.
    let q = unsafe { q.assume_init() };
    let q = &*q;
    single_pair(iters, move |x| q.enqueue(x).is_ok(), move || q.dequeue())
}

/// rtrb, one element per call (`push`, `pop`).
fn run_rtrb_single(_k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let (mut p, mut c) = rtrb::RingBuffer::<usize>::new(SINGLE_CAP);
    single_pair(iters, move |x| p.push(x).is_ok(), move || c.pop().ok())
}

/// rtrb, one element per call, its consumer made to trail the producer ([`rtrb_trail`], asking
/// for one) before popping.
fn run_rtrb_single_trailing(_k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let (mut p, mut c) = rtrb::RingBuffer::<usize>::new(SINGLE_CAP);
    single_pair(
        iters,
        move |x| p.push(x).is_ok(),
        move || {
            rtrb_trail::<SINGLE_CAP>(&mut c, 1);
            c.pop().ok()
        },
    )
}

/// ringbuf, one element per call (`try_push`, `try_pop` of its caching halves).
fn run_ringbuf_single(_k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let (mut p, mut c) = ringbuf::HeapRb::<usize>::new(SINGLE_CAP).split();
    single_pair(iters, move |x| p.try_push(x).is_ok(), move || c.try_pop())
}

/// crossbeam's `ArrayQueue`, one element per call.
fn run_arrayqueue_single(_k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let q = ArrayQueue::new(SINGLE_CAP);
    let q = &q;
    single_pair(iters, move |x| q.push(x).is_ok(), move || q.pop())
}

/// concurrent-queue's bounded queue, one element per call.
fn run_concurrent_single(_k: usize, _pc: (u64, u64), iters: u64) -> Duration {
    let q = ConcurrentQueue::bounded(SINGLE_CAP);
    let q = &q;
    single_pair(iters, move |x| q.push(x).is_ok(), move || q.pop().ok())
}

/// Every queue of the single-element one-producer one-consumer runs (k is 1 for all).
const ONE_P_ONE_C_SINGLE: [Run; 9] = [
    ("alf_spsc_single", run_alf_spsc_single),
    ("alf_spsc_trailing", run_alf_spsc_single_trailing),
    ("alf_mpmc_single", run_alf_mpmc_single),
    ("alf_stamp_single", run_alf_stamp_single),
    ("rtrb_single", run_rtrb_single),
    ("rtrb_trailing", run_rtrb_single_trailing),
    ("ringbuf_single", run_ringbuf_single),
    ("crossbeam_arrayqueue", run_arrayqueue_single),
    ("concurrent_queue", run_concurrent_single),
];

/// A cross-thread criterion group `name` of `runs`, for every k of `sizes`, with `pc` threads.
fn cross_group(c: &mut Criterion, name: &str, pc: (u64, u64), sizes: &[usize], runs: &[Run]) {
    let mut g = c.benchmark_group(group_name(name, (pc.0 + pc.1) as usize));
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for &k in sizes {
        for &(queue, run) in runs {
            g.bench_with_input(BenchmarkId::new(queue, k), &k, |bch, &k| {
                bch.iter_custom(|iters| run(k, pc, iters))
            });
        }
    }
    g.finish();
}

fn one_producer_one_consumer(c: &mut Criterion) {
    cross_group(c, "1p1c", (1, 1), &BULKS, &ONE_P_ONE_C);
}

fn one_producer_one_consumer_single(c: &mut Criterion) {
    cross_group(c, "1p1c_single", (1, 1), &[1], &ONE_P_ONE_C_SINGLE);
}

fn two_producers_two_consumers(c: &mut Criterion) {
    cross_group(c, "2p2c", (2, 2), &BULKS, &MPMC_RUNS);
}

// ---------------------------------------------------------------------------------------------
// One producer, one consumer, the queues alternating.

/// Repetitions of the alternating runs, after one that warms up and is not kept. Which
/// placement of the two threads a repetition lands in (see [`alternating`]) moves a ratio by
/// up to twice, so the median needs many (docs/benchmarks.md, "alf_queue against its peers in
/// userspace", says how far one placement is from another).
const PAIR_REPS: usize = 101;
/// About how long each run of the alternation lasts.
const PAIR_RUN: Duration = Duration::from_millis(20);

/// One-producer one-consumer queues (`runs`) run in turns rather than one after the other:
/// for each k of `sizes`, every queue once per repetition, the order rotated by one queue from each
/// repetition to the next, each run moving as many elements as took [`PAIR_RUN`] in a
/// calibration run. The ratio of two queues is then taken within each repetition, between
/// runs made seconds apart under the same conditions.
///
/// Criterion measures each queue in one stretch of a few seconds, one queue after another;
/// on a virtual machine whose two CPUs the host places now on one core's two threads, now on
/// two cores, the cost of a cache line's trip between the threads changes by several times
/// from stretch to stretch, and a ratio of two queues' medians compares two such placements.
///
/// Returns, as JSON, each queue's nanoseconds per element for each k and repetition.
fn alternating(runs: &[Run], sizes: &[usize]) -> String {
    let mut by_queue: Vec<Vec<String>> = vec![Vec::new(); runs.len()];
    for &k in sizes {
        let counts: Vec<u64> = runs
            .iter()
            .map(|&(_, run)| {
                let probe = 1 << 16;
                let t = run(k, (1, 1), probe).as_secs_f64().max(1e-6);
                ((probe as f64 * PAIR_RUN.as_secs_f64() / t) as u64).clamp(1 << 14, 1 << 26)
            })
            .collect();
        let mut ns = vec![Vec::new(); runs.len()];
        for rep in 0..=PAIR_REPS {
            for i in 0..runs.len() {
                let q = (i + rep) % runs.len();
                let t = (runs[q].1)(k, (1, 1), counts[q]);
                if rep > 0 {
                    ns[q].push(format!("{:.4}", t.as_nanos() as f64 / counts[q] as f64));
                }
            }
        }
        for (q, ns) in ns.into_iter().enumerate() {
            by_queue[q].push(format!("\"{k}\": [{}]", ns.join(", ")));
        }
    }
    let queues: Vec<String> = runs
        .iter()
        .zip(by_queue)
        .map(|((name, _), ks)| format!("\"{name}\": {{{}}}", ks.join(", ")))
        .collect();
    format!("{{{}}}\n", queues.join(", "))
}
criterion_group!(
    benches,
    single_thread,
    one_producer_one_consumer,
    one_producer_one_consumer_single,
    two_producers_two_consumers
);

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn main() {
    let before = loadavg();
    eprintln!("load average before: {before}");
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
    let dir = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../target").to_owned());
    let _ = std::fs::create_dir_all(format!("{dir}/criterion"));
    // The alternating runs are not criterion groups: they run with the whole set, or alone
    // with a filter that names them; only where the two threads have a CPU each.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let sets: [(&str, &[Run], &[usize]); 2] = [
        ("1p1c_alternating", &ONE_P_ONE_C, &BULKS),
        ("1p1c_single_alternating", &ONE_P_ONE_C_SINGLE, &[1]),
    ];
    for (name, runs, sizes) in sets {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let file = format!("{dir}/criterion/{name}.json");
        if oversubscribed(2) {
            eprintln!("{name}: skipped, fewer than 2 CPUs");
            let _ = std::fs::remove_file(&file);
        } else {
            eprintln!("{name}: {PAIR_REPS} repetitions of every queue in turn");
            std::fs::write(&file, alternating(runs, sizes))
                .expect("writing the alternating runs' figures");
        }
    }
    let after = loadavg();
    eprintln!("load average after: {after}");
    // For report.py: the last run's load, next to criterion's own files.
    let _ = std::fs::write(
        format!("{dir}/criterion/alf_load.txt"),
        format!("before: {before}\nafter: {after}\n"),
    );
}
