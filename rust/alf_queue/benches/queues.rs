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
//!
//! Queues: ours (`alf_mpmc`, `alf_spsc`: batches filled with `Batch::fill_from` and moved with
//! the bulk/burst API; `alf_spsc_with`: the SPSC handles' in-place `enqueue_bulk_with` and
//! `dequeue_*_with`, no batch; `alf_spsc_chunks`: the handles' `write_chunk` filled with
//! `WriteChunk::fill_with` and `read_chunk*` read as slices, as rtrb is driven; `_single`: one
//! element per call), crossbeam-queue
//! `ArrayQueue` and concurrent-queue `ConcurrentQueue::bounded` (one element per call, there
//! is no bulk API), rtrb (chunks: `write_chunk_uninit`, written through its slices by the
//! loop of our `fill_with`, its fastest way in; `fill_from_iter`, which checks the iterator at
//! every item, is slower) and ringbuf (slices), both SPSC. All have 1024 slots and carry `usize`
//! elements (the size of a pointer).
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
//! cargo bench -p alf_queue --bench queues                  # everything (~10 min)
//! cargo bench -p alf_queue --bench queues -- 'st/'         # a filter
//! python3 rust/alf_queue/benches/report.py                 # the tables, from target/criterion
//! ```
//!
//! The load average is printed before and after the run (and stored for `report.py`):
//! cross-thread figures mean little on a loaded machine.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use alf_queue::{Batch, MpmcQueue, SpscQueue};
use concurrent_queue::ConcurrentQueue;
use criterion::{criterion_group, BenchmarkId, Criterion};
use crossbeam_queue::ArrayQueue;
use ringbuf::traits::{Consumer as _, Producer as _, Split as _};

const BULKS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];
const CAP: usize = 1024;
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
                    b.fill_from(0..k);
                    q.enqueue_bulk(&mut b).unwrap();
                    q.dequeue_bulk(&mut b, k).unwrap();
                    black_box(b.as_slice().iter().sum::<usize>());
                    b.clear();
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("alf_mpmc_single", k), &k, |bch, &k| {
            let q = MpmcQueue::<usize, CAP>::new();
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    for i in 0..k {
                        q.enqueue(i).unwrap();
                    }
                    let mut sum = 0;
                    for _ in 0..k {
                        sum += q.dequeue().unwrap();
                    }
                    black_box(sum);
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("alf_spsc", k), &k, |bch, &k| {
            let mut q = SpscQueue::<usize, CAP>::new();
            let (mut tx, mut rx) = q.split();
            let mut b = Batch::<usize, MAX_K>::new();
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    b.fill_from(0..k);
                    tx.enqueue_bulk(&mut b).unwrap();
                    rx.dequeue_bulk(&mut b, k).unwrap();
                    black_box(b.as_slice().iter().sum::<usize>());
                    b.clear();
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
                    for i in 0..k {
                        tx.enqueue(i).unwrap();
                    }
                    let mut sum = 0;
                    for _ in 0..k {
                        sum += rx.dequeue().unwrap();
                    }
                    black_box(sum);
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
                        for i in 0..k {
                            q.push(i).unwrap();
                        }
                        let mut sum = 0;
                        for _ in 0..k {
                            sum += q.pop().unwrap();
                        }
                        black_box(sum);
                    })
                })
            },
        );
        g.bench_with_input(BenchmarkId::new("concurrent_queue", k), &k, |bch, &k| {
            let q = ConcurrentQueue::<usize>::bounded(CAP);
            bch.iter_custom(|iters| {
                per_element(iters, k, || {
                    for i in 0..k {
                        q.push(i).unwrap();
                    }
                    let mut sum = 0;
                    for _ in 0..k {
                        sum += q.pop().unwrap();
                    }
                    black_box(sum);
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

/// Jobs for our MPMC queue: bulk producers (all or nothing, `k` at a time) and burst consumers.
fn alf_mpmc_jobs<'q>(
    q: &'q MpmcQueue<usize, CAP>,
    done: &'q AtomicU64,
    k: usize,
    (producers, consumers): (u64, u64),
    (per_producer, total): (u64, u64),
) -> Vec<Job<'q>> {
    let mut jobs: Vec<Job<'q>> = Vec::new();
    for _ in 0..producers {
        jobs.push(Box::new(move || {
            let mut b = Batch::<usize, MAX_K>::new();
            let mut sent = 0;
            while sent < per_producer {
                let n = (k as u64).min(per_producer - sent);
                b.fill_from(0..n as usize);
                if n == 1 {
                    let mut item = b.pop().unwrap();
                    let mut spins = 0;
                    while let Err(back) = q.enqueue(item) {
                        item = back;
                        backoff(&mut spins);
                    }
                } else {
                    let mut spins = 0;
                    while q.enqueue_bulk(&mut b).is_err() {
                        backoff(&mut spins);
                    }
                }
                sent += n;
            }
        }));
    }
    for _ in 0..consumers {
        jobs.push(Box::new(move || {
            let mut b = Batch::<usize, MAX_K>::new();
            let mut spins = 0;
            let mut sum = 0;
            while done.load(Ordering::Relaxed) < total {
                let n = if k == 1 {
                    match q.dequeue() {
                        Some(x) => {
                            sum += x;
                            1
                        }
                        None => 0,
                    }
                } else {
                    let n = q.dequeue_burst(&mut b, k).unwrap();
                    sum += b.as_slice().iter().sum::<usize>();
                    b.clear();
                    n
                };
                if n == 0 {
                    backoff(&mut spins);
                } else {
                    spins = 0;
                    done.fetch_add(n as u64, Ordering::Relaxed);
                }
            }
            black_box(sum);
        }));
    }
    jobs
}

/// Jobs for a queue with one-element `push`/`pop` (ArrayQueue, ConcurrentQueue).
fn one_by_one_jobs<'q, Q: Sync>(
    q: &'q Q,
    push: fn(&Q, usize) -> Result<(), usize>,
    pop: fn(&Q) -> Option<usize>,
    done: &'q AtomicU64,
    k: usize,
    (producers, consumers): (u64, u64),
    (per_producer, total): (u64, u64),
) -> Vec<Job<'q>> {
    let mut jobs: Vec<Job<'q>> = Vec::new();
    for _ in 0..producers {
        jobs.push(Box::new(move || {
            for i in 0..per_producer {
                let mut item = i as usize;
                let mut spins = 0;
                while let Err(back) = push(q, item) {
                    item = back;
                    backoff(&mut spins);
                }
            }
        }));
    }
    for _ in 0..consumers {
        jobs.push(Box::new(move || {
            let mut spins = 0;
            let mut sum = 0;
            while done.load(Ordering::Relaxed) < total {
                let mut n = 0;
                while n < k {
                    match pop(q) {
                        Some(x) => {
                            sum += x;
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    backoff(&mut spins);
                } else {
                    spins = 0;
                    done.fetch_add(n as u64, Ordering::Relaxed);
                }
            }
            black_box(sum);
        }));
    }
    jobs
}

fn arrayqueue_push(q: &ArrayQueue<usize>, x: usize) -> Result<(), usize> {
    q.push(x)
}
fn arrayqueue_pop(q: &ArrayQueue<usize>) -> Option<usize> {
    q.pop()
}
fn concurrent_push(q: &ConcurrentQueue<usize>, x: usize) -> Result<(), usize> {
    q.push(x).map_err(|e| e.into_inner())
}
fn concurrent_pop(q: &ConcurrentQueue<usize>) -> Option<usize> {
    q.pop().ok()
}

fn one_producer_one_consumer(c: &mut Criterion) {
    let mut g = c.benchmark_group(group_name("1p1c", 2));
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    const PC: (u64, u64) = (1, 1);
    for k in BULKS {
        g.bench_with_input(BenchmarkId::new("alf_spsc", k), &k, |bch, &k| {
            bch.iter_custom(|iters| {
                let mut q = SpscQueue::<usize, CAP>::new();
                let (mut tx, mut rx) = q.split();
                cross_thread(iters, 1, |per_producer, total| {
                    vec![
                        Box::new(move || {
                            let mut b = Batch::<usize, MAX_K>::new();
                            let mut sent = 0;
                            while sent < per_producer {
                                let n = (k as u64).min(per_producer - sent);
                                b.fill_from(0..n as usize);
                                let mut spins = 0;
                                if n == 1 {
                                    let mut item = b.pop().unwrap();
                                    while let Err(back) = tx.enqueue(item) {
                                        item = back;
                                        backoff(&mut spins);
                                    }
                                } else {
                                    while tx.enqueue_bulk(&mut b).is_err() {
                                        backoff(&mut spins);
                                    }
                                }
                                sent += n;
                            }
                        }),
                        Box::new(move || {
                            let mut b = Batch::<usize, MAX_K>::new();
                            let (mut got, mut sum, mut spins) = (0, 0, 0);
                            while got < total {
                                let n = if k == 1 {
                                    rx.dequeue().map(|x| sum += x).is_some() as usize
                                } else {
                                    let n = rx.dequeue_burst(&mut b, k).unwrap();
                                    sum += b.as_slice().iter().sum::<usize>();
                                    b.clear();
                                    n
                                };
                                if n == 0 {
                                    backoff(&mut spins);
                                } else {
                                    spins = 0;
                                    got += n as u64;
                                }
                            }
                            black_box(sum);
                        }),
                    ]
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("alf_spsc_with", k), &k, |bch, &k| {
            bch.iter_custom(|iters| {
                let mut q = SpscQueue::<usize, CAP>::new();
                let (mut tx, mut rx) = q.split();
                cross_thread(iters, 1, |per_producer, total| {
                    vec![
                        Box::new(move || {
                            let mut sent = 0;
                            let mut spins = 0;
                            while sent < per_producer {
                                let n = (k as u64).min(per_producer - sent) as usize;
                                match tx.enqueue_bulk_with(n, |i| i) {
                                    Ok(()) => sent += n as u64,
                                    Err(_) => backoff(&mut spins),
                                }
                            }
                        }),
                        Box::new(move || {
                            let (mut got, mut sum, mut spins) = (0, 0, 0);
                            while got < total {
                                match rx.dequeue_burst_with(k, |x| sum += x).unwrap() {
                                    0 => backoff(&mut spins),
                                    n => got += n as u64,
                                }
                            }
                            black_box(sum);
                        }),
                    ]
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("alf_spsc_chunks", k), &k, |bch, &k| {
            bch.iter_custom(|iters| {
                let mut q = SpscQueue::<usize, CAP>::new();
                let (mut tx, mut rx) = q.split();
                cross_thread(iters, 1, |per_producer, total| {
                    vec![
                        Box::new(move || {
                            let mut sent = 0;
                            let mut spins = 0;
                            while sent < per_producer {
                                let n = (k as u64).min(per_producer - sent) as usize;
                                match tx.write_chunk(n) {
                                    Ok(w) => {
                                        w.fill_with(|i| i);
                                        sent += n as u64;
                                    }
                                    Err(_) => backoff(&mut spins),
                                }
                            }
                        }),
                        Box::new(move || {
                            let (mut got, mut sum, mut spins) = (0, 0, 0);
                            while got < total {
                                let r = rx.read_chunk_burst(k).unwrap();
                                if r.is_empty() {
                                    backoff(&mut spins);
                                    continue;
                                }
                                let (a, b) = r.as_slices();
                                sum += a.iter().sum::<usize>() + b.iter().sum::<usize>();
                                got += r.len() as u64;
                            }
                            black_box(sum);
                        }),
                    ]
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("alf_mpmc", k), &k, |bch, &k| {
            bch.iter_custom(|iters| {
                let q = MpmcQueue::<usize, CAP>::new();
                let done = AtomicU64::new(0);
                cross_thread(iters, 1, |pp, total| {
                    alf_mpmc_jobs(&q, &done, k, PC, (pp, total))
                })
            })
        });
        g.bench_with_input(
            BenchmarkId::new("crossbeam_arrayqueue", k),
            &k,
            |bch, &k| {
                bch.iter_custom(|iters| {
                    let q = ArrayQueue::<usize>::new(CAP);
                    let done = AtomicU64::new(0);
                    cross_thread(iters, 1, |pp, total| {
                        one_by_one_jobs(
                            &q,
                            arrayqueue_push,
                            arrayqueue_pop,
                            &done,
                            k,
                            PC,
                            (pp, total),
                        )
                    })
                })
            },
        );
        g.bench_with_input(BenchmarkId::new("concurrent_queue", k), &k, |bch, &k| {
            bch.iter_custom(|iters| {
                let q = ConcurrentQueue::<usize>::bounded(CAP);
                let done = AtomicU64::new(0);
                cross_thread(iters, 1, |pp, total| {
                    one_by_one_jobs(
                        &q,
                        concurrent_push,
                        concurrent_pop,
                        &done,
                        k,
                        PC,
                        (pp, total),
                    )
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("rtrb_chunks", k), &k, |bch, &k| {
            bch.iter_custom(|iters| {
                let (mut p, mut c) = rtrb::RingBuffer::<usize>::new(CAP);
                cross_thread(iters, 1, |per_producer, total| {
                    vec![
                        Box::new(move || {
                            let mut sent = 0;
                            let mut spins = 0;
                            while sent < per_producer {
                                let n = (k as u64).min(per_producer - sent) as usize;
                                match p.write_chunk_uninit(n) {
                                    Ok(w) => {
                                        rtrb_fill(w);
                                        sent += n as u64;
                                    }
                                    Err(_) => backoff(&mut spins),
                                }
                            }
                        }),
                        Box::new(move || {
                            let (mut got, mut sum, mut spins) = (0, 0, 0);
                            while got < total {
                                let n = k.min(c.slots());
                                if n == 0 {
                                    backoff(&mut spins);
                                    continue;
                                }
                                let r = c.read_chunk(n).unwrap();
                                let (a, b) = r.as_slices();
                                sum += a.iter().chain(b).sum::<usize>();
                                r.commit_all();
                                got += n as u64;
                            }
                            black_box(sum);
                        }),
                    ]
                })
            })
        });
        g.bench_with_input(BenchmarkId::new("ringbuf_slices", k), &k, |bch, &k| {
            bch.iter_custom(|iters| {
                let (mut p, mut c) = ringbuf::HeapRb::<usize>::new(CAP).split();
                cross_thread(iters, 1, |per_producer, total| {
                    vec![
                        Box::new(move || {
                            let mut src = [0usize; MAX_K];
                            let mut sent = 0;
                            let mut spins = 0;
                            while sent < per_producer {
                                let n = (k as u64).min(per_producer - sent) as usize;
                                for (i, x) in src[..n].iter_mut().enumerate() {
                                    *x = i;
                                }
                                let mut off = 0;
                                while off < n {
                                    let m = p.push_slice(&src[off..n]);
                                    if m == 0 {
                                        backoff(&mut spins);
                                    }
                                    off += m;
                                }
                                sent += n as u64;
                            }
                        }),
                        Box::new(move || {
                            let mut dst = [0usize; MAX_K];
                            let (mut got, mut sum, mut spins) = (0, 0, 0);
                            while got < total {
                                let n = c.pop_slice(&mut dst[..k]);
                                if n == 0 {
                                    backoff(&mut spins);
                                    continue;
                                }
                                sum += dst[..n].iter().sum::<usize>();
                                got += n as u64;
                            }
                            black_box(sum);
                        }),
                    ]
                })
            })
        });
    }
    g.finish();
}

fn two_producers_two_consumers(c: &mut Criterion) {
    let mut g = c.benchmark_group(group_name("2p2c", 4));
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    const PC: (u64, u64) = (2, 2);
    for k in BULKS {
        g.bench_with_input(BenchmarkId::new("alf_mpmc", k), &k, |bch, &k| {
            bch.iter_custom(|iters| {
                let q = MpmcQueue::<usize, CAP>::new();
                let done = AtomicU64::new(0);
                cross_thread(iters, 2, |pp, total| {
                    alf_mpmc_jobs(&q, &done, k, PC, (pp, total))
                })
            })
        });
        g.bench_with_input(
            BenchmarkId::new("crossbeam_arrayqueue", k),
            &k,
            |bch, &k| {
                bch.iter_custom(|iters| {
                    let q = ArrayQueue::<usize>::new(CAP);
                    let done = AtomicU64::new(0);
                    cross_thread(iters, 2, |pp, total| {
                        one_by_one_jobs(
                            &q,
                            arrayqueue_push,
                            arrayqueue_pop,
                            &done,
                            k,
                            PC,
                            (pp, total),
                        )
                    })
                })
            },
        );
        g.bench_with_input(BenchmarkId::new("concurrent_queue", k), &k, |bch, &k| {
            bch.iter_custom(|iters| {
                let q = ConcurrentQueue::<usize>::bounded(CAP);
                let done = AtomicU64::new(0);
                cross_thread(iters, 2, |pp, total| {
                    one_by_one_jobs(
                        &q,
                        concurrent_push,
                        concurrent_pop,
                        &done,
                        k,
                        PC,
                        (pp, total),
                    )
                })
            })
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    single_thread,
    one_producer_one_consumer,
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
    let after = loadavg();
    eprintln!("load average after: {after}");
    // For report.py: the last run's load, next to criterion's own files.
    let dir = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../target").to_owned());
    let _ = std::fs::create_dir_all(format!("{dir}/criterion"));
    let _ = std::fs::write(
        format!("{dir}/criterion/alf_load.txt"),
        format!("before: {before}\nafter: {after}\n"),
    );
}
