// SPDX-License-Identifier: GPL-2.0

//! Benchmark of freeing completed TX skbs: one at a time, through an exported bulk route, and
//! through `ixgbe_bulk_shim`.
//!
//! For each batch size `n`, `n` skbs are allocated (`alloc_skb()` of `size` bytes, as pktgen
//! and a driver's TX path get them) and then freed, and only the freeing is timed, in each of
//! the ways below, interleaved within each repetition in an order that rotates from one
//! repetition to the next:
//!
//! - `consume_skb`: `consume_skb()` for each skb (what a driver without NAPI does);
//! - `napi_consume_skb`: `napi_consume_skb()` for each skb with a NAPI budget of 64, what ixgbe's
//!   and igb's TX cleanup do (their heads go to the per-CPU NAPI skb cache, which gives them
//!   back to the slab 32 at a time when it fills);
//! - `kfree_skb_list`: the skbs linked through `skb->next` and freed by one
//!   `kfree_skb_list_reason()`, the exported route that bulk-frees heads to the slab (16 per
//!   `kmem_cache_free_bulk()`), bypassing the NAPI cache;
//! - `shim`: `ixgbe_bulk_shim_init()`, `ixgbe_bulk_shim_add()` for each skb and
//!   `ixgbe_bulk_shim_flush()` with a budget of 64, on a `struct ixgbe_bulk_shim` on the stack
//!   (32 skbs per `napi_consume_skb_bulk()`), in C (`rust_skb_free_bench_c.c`) as the drivers
//!   call them, so that `ixgbe_bulk_shim_add()` is the header's inline.
//!
//! Every round runs with bottom halves disabled, the softirq context a NAPI poll runs in, so
//! that the NAPI variants are used as drivers use them and no round migrates between CPUs. The
//! cycles of a round are read with `lfence; rdtsc` around its frees; they include one such
//! pair per round (a few tens of cycles, the same for every variant, that weigh most at
//! `n = 1`). The `ns` of a run are its cycles converted at the rate `ktime_get()` and the TSC
//! advanced over the whole run.
//!
//! Its parameters (`insmod rust_skb_free_bench.ko bulk=1,32,256 objs=262144 runs=21`), their
//! bounds and defaults are the `bench::module_params!` block below; a value out of its bounds
//! fails the load with `EINVAL` and a line saying what the parameter takes.
//!
//! It prints one `rfl_bench:` line per run (see `bench_common.rs`) and stays loaded; unload it
//! with `rmmod`.
//!
//! # The self-check
//!
//! With `check=1`, every variant frees batches of 1, 31, 32, 33, 64 and 256 skbs, many times
//! over, and the shim also with a NAPI budget of 0 (netpoll's case, in process context). Each skb
//! carries a destructor that counts it: every skb must be released exactly once. Then the number of
//! `skbuff_head_cache` objects in use (with `CONFIG_SLUB_DEBUG`) must be back to what it was
//! before, give or take the heads the per-CPU NAPI skb caches may keep (64 per CPU before 6.19, 128
//! from 6.19 on); the check frees tens of thousands of skbs, so a head lost per batch would show.
//! One line per case and one verdict:
//!
//! ```text
//! rfl_test: skb_free shim_b64 n=33 PASS skbs=6600 released=6600
//! rfl_test: skb_free heads PASS before=260 after=292 slack=128
//! rfl_test: skb_free PASS
//! ```

use core::ffi::{c_int, c_uint};
use core::ptr;
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::bindings;
use kernel::prelude::*;

#[path = "bench_common.rs"]
mod bench;

use bench::{MAX_OBJS, MAX_RUNS};

bench::sample_module! {
    type: SkbFreeBench,
    name: "rust_skb_free_bench",
    description: "Benchmark: freeing skbs one at a time, in bulk, and through ixgbe_bulk_shim",
}

// The shim's way, in C as the drivers call it, in `rust_skb_free_bench_c.c`. The skbs go by
// pointer only; `improper_ctypes` would flag `struct sk_buff` for the zero-sized
// `struct lock_class_key` inside it in a kernel without lockdep.
#[allow(improper_ctypes)]
extern "C" {
    fn rust_skb_free_bench_shim(skbs: *const *mut bindings::sk_buff, n: c_uint, budget: c_int);
}

/// The largest batch size.
const MAX_BULK: usize = 256;

/// The NAPI budget the NAPI variants run with (`NAPI_POLL_WEIGHT`).
const BUDGET: c_int = 64;

/// The heads one CPU's NAPI skb cache may hold (`NAPI_SKB_CACHE_SIZE` in `net/core/skbuff.c`).
const NAPI_SKB_CACHE_SIZE: usize = if cfg!(napi_skb_cache_128) { 128 } else { 64 };

/// The largest skb data length `size` takes: the largest IP packet.
const MAX_SIZE: usize = 65535;

bench::module_params! {
    /// The batch sizes.
    bulk: list 1..=MAX_BULK = "1,2,4,8,16,32,64,128,256";
    /// Skbs per timed run (the number of rounds is `objs / n`); the default keeps a run of the
    /// cheapest variant above the 1 ms that `make bench` asks of a run.
    objs: uint 1..=MAX_OBJS = 1 << 18;
    /// Timed repetitions per size and variant, after one untimed warm-up.
    runs: uint 1..=MAX_RUNS = 21;
    /// The length of each skb's data (the default: pktgen's smallest packet).
    size: uint 0..=MAX_SIZE = 60;
    /// 1 to run the self-check (below) instead of the benchmark.
    check: uint 0..=1 = 0;
}

bench::variants! {
    /// The ways to free, in the order the first repetition runs them; each one's code is an arm
    /// of [`Round::free`].
    enum Variant {
        ConsumeSkb => "consume_skb",
        NapiConsumeSkb => "napi_consume_skb",
        KfreeSkbList => "kfree_skb_list",
        Shim => "shim",
    }
}

/// Disables bottom halves until dropped: the context of a NAPI poll.
///
/// `PhantomData<*mut ()>` keeps it on the CPU (task) that made it: `!Send`.
struct BhGuard(core::marker::PhantomData<*mut ()>);

impl BhGuard {
    #[inline]
    fn new() -> Self {
        // SAFETY: Called from process context (module init); the matching enable is in `drop`.
        unsafe { bindings::local_bh_disable() };
        Self(core::marker::PhantomData)
    }
}

impl Drop for BhGuard {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: Bottom halves were disabled by `new` on this CPU and task (`!Send`).
        unsafe { bindings::local_bh_enable() };
    }
}

/// The skbs of one round.
///
/// # Invariants
///
/// `skbs[..len]` are live skbs, each with one reference that the round owns.
struct Round {
    skbs: [*mut bindings::sk_buff; MAX_BULK],
    len: usize,
}

/// Counts the releases of skbs allocated by the self-check (their destructor).
static RELEASED: AtomicUsize = AtomicUsize::new(0);

/// The destructor of the self-check's skbs: counts one release.
///
/// # Safety
///
/// Called by the networking core as an skb's `destructor`, with that skb; it reads nothing.
unsafe extern "C" fn count_release(_skb: *mut bindings::sk_buff) {
    RELEASED.fetch_add(1, Ordering::Relaxed);
}

impl Round {
    /// Allocates `n` skbs with `size` bytes of data; with `counted`, each counts its release.
    ///
    /// Returns `false` (with fewer skbs) if the allocator had no memory.
    fn alloc(&mut self, n: usize, size: u32, counted: bool) -> bool {
        while self.len < n {
            // SAFETY: `GFP_ATOMIC` allocates in any context but hard IRQ; no fclone, any node.
            let skb = unsafe {
                bindings::__alloc_skb(size, bindings::GFP_ATOMIC, 0, bindings::NUMA_NO_NODE)
            };
            if skb.is_null() {
                return false;
            }
            if counted {
                // SAFETY: `skb` is a new skb that nobody else sees yet; its destructor slot is
                // free (no socket owns it).
                unsafe {
                    (*skb).__bindgen_anon_3.__bindgen_anon_1.destructor = Some(count_release)
                };
            }
            // INVARIANT: `skb` is live and its one reference is the round's.
            self.skbs[self.len] = skb;
            self.len += 1;
        }
        true
    }

    /// Frees the round's skbs the way `variant` does, with the NAPI budget `budget` where the
    /// variant takes one.
    ///
    /// With a non-zero budget the caller has bottom halves disabled (a [`BhGuard`]).
    #[inline(never)]
    fn free(&mut self, variant: Variant, budget: c_int) {
        let skbs = &self.skbs[..self.len];
        // INVARIANT: Every skb's reference is given up below; the round owns none after.
        self.len = 0;
        match variant {
            Variant::ConsumeSkb => {
                for &skb in skbs {
                    consume_skb(skb);
                }
            }
            Variant::NapiConsumeSkb => {
                for &skb in skbs {
                    // SAFETY: The round owns a reference on `skb` (type invariant), given up
                    // here; a non-zero budget comes with bottom halves disabled (the caller's).
                    unsafe { bindings::napi_consume_skb(skb, budget) };
                }
            }
            Variant::KfreeSkbList => {
                let mut head = ptr::null_mut();
                for &skb in skbs.iter().rev() {
                    // SAFETY: The round owns `skb` (type invariant); nobody else links it.
                    unsafe { (*skb).__bindgen_anon_1.__bindgen_anon_1.next = head };
                    head = skb;
                }
                // SAFETY: `head` is a NULL-terminated list of skbs the round owns, given up
                // here; IRQs are enabled (process context or bottom halves disabled).
                unsafe {
                    bindings::kfree_skb_list_reason(head, bindings::skb_drop_reason_SKB_CONSUMED)
                };
            }
            Variant::Shim => {
                // SAFETY: The round owns a reference on each of the `skbs.len()` skbs of
                // `skbs` (type invariant), all given up here; a non-zero budget comes with
                // bottom halves disabled (the caller's), as in a NAPI poll.
                unsafe { rust_skb_free_bench_shim(skbs.as_ptr(), skbs.len() as c_uint, budget) };
            }
        }
    }
}

impl Drop for Round {
    fn drop(&mut self) {
        // Skbs left by a failed allocation: freed on their own.
        self.free(Variant::ConsumeSkb, 0);
    }
}

/// `consume_skb()`, exported with `CONFIG_TRACEPOINTS`.
#[cfg(CONFIG_TRACEPOINTS)]
#[inline(always)]
fn consume_skb(skb: *mut bindings::sk_buff) {
    // SAFETY: The caller owns a reference on `skb` and gives it up.
    unsafe { bindings::consume_skb(skb) };
}

/// `consume_skb()`, which without `CONFIG_TRACEPOINTS` is an inline `kfree_skb()`, that is
/// `sk_skb_reason_drop()`: the same reference drop and `__kfree_skb()`.
#[cfg(not(CONFIG_TRACEPOINTS))]
#[inline(always)]
fn consume_skb(skb: *mut bindings::sk_buff) {
    // SAFETY: The caller owns a reference on `skb` and gives it up; no socket is involved.
    unsafe {
        bindings::sk_skb_reason_drop(
            ptr::null_mut::<bindings::sock>(),
            skb,
            bindings::skb_drop_reason_SKB_CONSUMED,
        )
    };
}

/// Times `rounds` rounds of `n` skbs freed the way `variant` says.
fn measure(round: &mut Round, p: &Params, variant: Variant, n: usize, rounds: usize) -> bench::Run {
    bench::pause();
    let mut cycles = 0;
    let mut freed = 0;
    let whole = bench::time(0, || {
        for _ in 0..rounds {
            let _bh = BhGuard::new();
            if !round.alloc(n, p.size, false) {
                break;
            }
            let t0 = bench::tsc();
            round.free(variant, BUDGET);
            cycles += bench::tsc() - t0;
            freed += n as u64;
        }
    });
    bench::Run {
        objs: freed,
        tsc: cycles,
        // The timed part in ns, at the run's TSC rate (in cycles per 1000 ns, so that no
        // product overflows a u64 and no 128-bit division is needed: the kernel has none).
        ns: match whole.tsc.saturating_mul(1000) / whole.ns.max(1) {
            0 => 0,
            tsc_per_us => cycles.saturating_mul(1000) / tsc_per_us,
        },
    }
}

/// Frees `rounds` rounds of `n` counted skbs the way `variant` says; returns whether every skb
/// was released exactly once, after printing the case's line.
fn check_case(round: &mut Round, p: &Params, variant: Variant, budget: c_int, n: usize) -> bool {
    let rounds = (8192 / n).max(200);
    let before = RELEASED.load(Ordering::Relaxed);
    let mut skbs = 0;
    for _ in 0..rounds {
        // A budget of 0 is netpoll's case: no NAPI context needed, so none is made.
        let _bh = (budget != 0).then(BhGuard::new);
        let ok = round.alloc(n, p.size, true);
        skbs += round.len;
        round.free(variant, budget);
        if !ok {
            pr_info!(
                "rfl_test: skb_free {}_b{} n={} FAIL alloc\n",
                variant.name(),
                budget,
                n
            );
            return false;
        }
    }
    let released = RELEASED.load(Ordering::Relaxed) - before;
    let verdict = if released == skbs { "PASS" } else { "FAIL" };
    pr_info!(
        "rfl_test: skb_free {}_b{} n={} {} skbs={} released={}\n",
        variant.name(),
        budget,
        n,
        verdict,
        skbs,
        released
    );
    released == skbs
}

/// The skb head cache's objects in use, through the object-count helper the project's KUnit
/// suites use (`rust/helpers/slab_bulk.c`, built with `CONFIG_KUNIT` and `CONFIG_SLUB_DEBUG`).
fn heads_in_use() -> Option<usize> {
    #[cfg(all(CONFIG_KUNIT, CONFIG_SLUB_DEBUG))]
    {
        // SAFETY: `net_hotdata.skbuff_cache` is the skb head cache, created at boot and never
        // destroyed; the helper only shrinks it and reads its counters (process context).
        let in_use =
            unsafe { bindings::kmem_cache_objects_in_use(bindings::net_hotdata.skbuff_cache) };
        Some(in_use as usize)
    }
    #[cfg(not(all(CONFIG_KUNIT, CONFIG_SLUB_DEBUG)))]
    None
}

/// The self-check: every skb released exactly once, and no head kept.
fn self_check(round: &mut Round, p: &Params) -> bool {
    let before = heads_in_use();
    let mut ok = true;
    for n in [1, 31, 32, 33, 64, 256] {
        for variant in Variant::ALL {
            ok &= check_case(round, p, variant, BUDGET, n);
        }
        ok &= check_case(round, p, Variant::Shim, 0, n);
    }
    if let (Some(before), Some(after)) = (before, heads_in_use()) {
        // SAFETY: No preconditions.
        let slack = NAPI_SKB_CACHE_SIZE * unsafe { bindings::num_online_cpus() } as usize;
        let fine = after <= before + slack;
        pr_info!(
            "rfl_test: skb_free heads {} before={} after={} slack={}\n",
            if fine { "PASS" } else { "FAIL" },
            before,
            after,
            slack
        );
        ok &= fine;
    } else {
        pr_info!(
            "rfl_test: skb_free heads SKIP no object counts (CONFIG_KUNIT or SLUB_DEBUG unset)\n"
        );
    }
    ok
}

struct SkbFreeBench;

impl kernel::Module for SkbFreeBench {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let p = Params::read()?;
        let mut round = KBox::new(
            Round {
                skbs: [ptr::null_mut(); MAX_BULK],
                len: 0,
            },
            GFP_KERNEL,
        )?;
        if p.check != 0 {
            let ok = self_check(&mut round, &p);
            pr_info!("rfl_test: skb_free {}\n", if ok { "PASS" } else { "FAIL" });
            return Ok(SkbFreeBench);
        }
        pr_info!(
            "rfl_bench: start bench=skb_free objs={} runs={} size={} budget={}\n",
            p.objs,
            p.runs,
            p.size,
            BUDGET
        );
        bench::header("skb_free", Variant::NAMES, &p.bulk, p.runs);
        bench::sweep!("skb_free", p.bulk, p.objs, p.runs, |variant, n, rounds| {
            measure(&mut round, &p, variant, n, rounds)
        });
        bench::done("skb_free");
        Ok(SkbFreeBench)
    }
}
