#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the console logs of a benchmark's boots into results/*.json, markdown tables and a plot.

The sample modules print one line per timed run (see samples/rust/bench_common.rs):

    rfl_bench: bench=slab_bulk variant=raw_bulk bulk=16 run=3 objs=1048576 tsc=11534336 ns=4442112

and, before the first, the line that names the benchmark's variants, in the order of its
declaration, which is the order of the table's columns:

    rfl_bench: variants bench=slab_bulk names=raw_single,raw_bulk,... bulk=1,16,64 runs=2

This script computes per-object cycles and nanoseconds for every run of every boot (one LOG
per boot of the same kernel), then per (bench, variant, bulk) the minimum, median and maximum
over all of them, and writes one record per group:

    {"bench", "variant", "bulk", "cycles": {"min", "median", "max"}, "ns": {...}, "runs",
     "boots", "kernel", "config", "cpu", "tsc_mhz", "where"}

Ratios are taken within each repetition of each boot; the placement table says how far the
medians of the boots, the copies of the code and the sets of data differ.

A run that cannot be timed (a timed run shorter than MIN_RUN_NS, or whose TSC rate strays from
the others') fails the whole collection with the parameters to raise, and writes nothing.

usage: collect.py LOG... --where uml|uml-smp|uml-noinline|qemu --kernel VERSION --config KERNEL/.config --out DIR
       collect.py --compare DIR     (the kernels side by side: DIR/slab_bulk-kernels.md; and
                                     where DIR has them, DIR/helpers-inline-<version>.md)
"""

import argparse
import datetime
import hashlib
import json
import os
import re
import statistics
import sys

LINE = re.compile(
    r"rfl_bench: bench=(?P<bench>\S+) variant=(?P<variant>\S+) bulk=(?P<bulk>\d+) "
    r"run=(?P<run>\d+) objs=(?P<objs>\d+) tsc=(?P<tsc>\d+) ns=(?P<ns>\d+)"
)
# A benchmark's variants, as its module declares them (bench::variants! and bench::header).
VARIANTS = re.compile(r"rfl_bench: variants bench=(?P<bench>\S+) names=(?P<names>\S+) ")
# Which copy of the code and which set of data a repetition ran on (alf_queue only).
PLACEMENT = re.compile(
    r"rfl_bench: placement bench=(?P<bench>\S+) bulk=(?P<bulk>\d+) run=(?P<run>\d+) "
    r"data=(?P<data>\d+) code=(?P<code>\d+)"
)
# The slab benchmark's stack sweep (`stack_sweep` in its module): a C loop's and ours' median
# TSC cycles, from a frame at one page offset, and how many offsets a bulk size reached.
STACK = re.compile(
    r"rfl_bench: stack bench=(?P<bench>\S+) bulk=(?P<bulk>\d+) frame=(?P<frame>0x[0-9a-f]+) "
    r"objs=(?P<objs>\d+) (?P<c>\w+)=(?P<c_tsc>\d+) (?P<ours>\w+)=(?P<ours_tsc>\d+)"
)
STACK_COVERED = re.compile(
    r"rfl_bench: stack bench=(?P<bench>\S+) bulk=(?P<bulk>\d+) covered=(?P<covered>\d+)")
# Where ours/C at one offset of the stack sweep counts as off the others, either way.
STACK_OFF = 1.10
# A timed run must last this long for ktime (and the TSC rate derived from it) to mean anything.
MIN_RUN_NS = 1_000_000
INIT = re.compile(r"rfl_guest: init up: (?P<release>\S+)")
CPU = re.compile(r"rfl_guest: cpu (?P<cpu>.+?)\s*$")

# Under every table of the kernel without inlined C helpers.
NOINLINE_NOTE = ("Without CONFIG_RUST_INLINE_HELPERS (um-bench-noinline): every call of Rust into "
                 "a C helper (rust_helper_*) is an out-of-line call. The uml table of the same "
                 "kernel version, from the same make bench, has them inlined.")

# What the alf_queue table's ptr_ring column measures, wherever it runs.
PTR_RING_NOTE = ("ptr_ring has no bulk produce: n ptr_ring_produce() + one "
                 "ptr_ring_consume_batched(n).")

# How each benchmark's table is laid out: its title and the ratios shown (numerator variant,
# denominator variant, column title); optionally the decimals of the cycles cells ("digits", 1
# by default) and a note printed under the title, per "where". The variants and their order
# are the module's (its variants line); a ratio whose variants the build lacks stays empty.
LAYOUT = {
    "slab_bulk": {
        "title": "slab_bulk: 256-byte objects, alloc+free, per object",
        "ratios": [
            ("ours_single", "raw_single", "ours/raw single"),
            ("box_single", "ours_single", "Box<T, C>/ours single"),
            ("ours_bulk", "raw_bulk", "ours/raw bulk"),
            ("ours_batch", "raw_bulk", "batch/raw bulk"),
            ("raw_bulk", "raw_single", "bulk/single (C)"),
        ],
    },
    "alf_queue": {
        "title": "alf_queue: one thread, enqueue then dequeue, per enqueue or dequeue of one "
        "element (objs = 2 x elements)",
        "ratios": [
            ("mpmc_bulk", "c_mpmc_bulk", "MPMC bulk ours/C"),
            ("spsc_bulk", "c_spsc_bulk", "SPSC bulk ours/C"),
            ("mpmc_slice", "c_mpmc_bulk", "MPMC slice ours/C"),
            ("spsc_slice", "c_spsc_bulk", "SPSC slice ours/C"),
            ("spsc_with", "c_spsc_bulk", "SPSC in place ours/C"),
            ("mpmc_bulk", "ptr_ring", "MPMC bulk/ptr_ring"),
            ("spsc_bulk", "ptr_ring", "SPSC bulk/ptr_ring"),
            ("mpmc_bulk", "mpmc_single", "MPMC bulk/single"),
            ("spsc_bulk", "spsc_single", "SPSC bulk/single"),
            ("mpmc_slice", "mpmc_single", "MPMC slice/single"),
            ("spsc_slice", "spsc_single", "SPSC slice/single"),
            ("spsc_with", "spsc_single", "SPSC in place/single"),
        ],
        "digits": 2,
        "notes": {
            "uml": "UML is uniprocessor: ptr_ring's spinlocks compile away and the C "
            "reference's cmpxchg() (c_mpmc_bulk, the C original's algorithm re-implemented in "
            "the module's C file) loses its LOCK prefix, as in the C original's UP build, while "
            "Rust's core atomics keep it (mpmc_* pays two LOCK CMPXCHG per call, one per side, "
            "so MPMC bulk ours/C includes their cost; SPSC uses none, in Rust or C). "
            + PTR_RING_NOTE,
            "uml-smp": "UML with two CPUs (CONFIG_SMP): the C reference's cmpxchg() is a LOCK "
            "CMPXCHG here as Rust's atomics are, so MPMC bulk ours/C compares like for like; "
            "ptr_ring's spinlocks are real. The benchmark runs on one CPU, the other idles. "
            + PTR_RING_NOTE,
            "qemu": "QEMU TCG, SMP: every variant pays its real locks (the C reference's "
            "cmpxchg() is a LOCK CMPXCHG too); for shape, not for absolute figures.",
        },
    },
    "qmempool": {
        "title": "qmempool: 256-byte objects, one alloc+free per object; bulk = objects outstanding",
        "ratios": [
            ("pool", "c_qmempool", "pool ours/C (BH per call)"),
            ("pool_bh", "c_qmempool_bh", "pool ours/C (BH for the run)"),
            ("pool_batch", "c_qmempool", "pool BH per 16 calls/C BH per call"),
            ("objpool", "pool", "objpool/pool (BH per call)"),
            ("objpool", "pool_bh", "objpool/pool (BH for the run)"),
            ("cache_single", "pool", "cache single/pool (BH per call)"),
            ("cache_single", "pool_bh", "cache single/pool (BH for the run)"),
            ("sheaf_single", "pool_bh", "sheaf single/pool (BH for the run)"),
            ("sheaf_prefill", "pool_bh", "sheaf prefill/pool (BH for the run)"),
        ],
        "digits": 2,
        "notes": {
            "uml": "pool and c_qmempool disable bottom halves per call (the C original's "
            "qmempool_alloc()/qmempool_free() outside softirq), pool_bh and c_qmempool_bh once "
            "for the whole timed loop (the cost of the pool itself, as in softirq), pool_batch "
            "once per 16 calls (allocations and frees together, across rounds); "
            "cache_single is kmem_cache_alloc/free, cache_bulk one bulk alloc and one bulk free "
            "of the n outstanding objects; objpool is the kernel's lib/objpool.c (objpool_pop, "
            "objpool_push, IRQs saved and restored in each: in UML, calls into its signal emulation), "
            "preallocated with max(n, 32) objects per possible CPU; sheaf_single (7.x only) is kmem_cache_alloc/free on a cache created "
            "with sheaf_capacity = the pool's per-CPU size, sheaf_prefill (7.x only) the same cache "
            "through the prefilled-sheaf API (kmem_cache_refill_sheaf to n objects, n "
            "kmem_cache_alloc_from_sheaf, n kmem_cache_free; built-in C, as the API is not exported).",
        },
    },
    "skb_free": {
        "title": "skb_free: freeing N skbs, per skb",
        "ratios": [
            ("shim", "napi_consume_skb", "shim/napi_consume_skb"),
            ("shim", "consume_skb", "shim/consume_skb"),
            ("kfree_skb_list", "napi_consume_skb", "kfree_skb_list/napi_consume_skb"),
        ],
        "digits": 1,
    },
}


def parse(log, boot=1):
    """One boot's log: its timed runs (each tagged with `boot`), its environment, and each
    benchmark's variants in the module's order."""
    runs, env, places, variants = [], {}, {}, {}
    stack, covered = {}, {}
    with open(log, errors="replace") as f:
        for line in f:
            if m := STACK.search(line):
                # (UML's console prints every line twice: keyed, each counts once.)
                objs = int(m["objs"])
                key = (m["bench"], int(m["bulk"]), m["c"], m["ours"])
                stack.setdefault(key, {})[int(m["frame"], 16)] = (
                    int(m["c_tsc"]) / objs, int(m["ours_tsc"]) / objs)
            elif m := STACK_COVERED.search(line):
                covered[(m["bench"], int(m["bulk"]))] = int(m["covered"])
            elif m := VARIANTS.search(line):
                variants[m["bench"]] = m["names"].split(",")
            elif m := PLACEMENT.search(line):
                places[(m["bench"], int(m["bulk"]), int(m["run"]))] = (int(m["data"]), int(m["code"]))
            elif m := LINE.search(line):
                r = m.groupdict()
                objs = int(r["objs"])
                if objs == 0 or int(r["ns"]) < MIN_RUN_NS:
                    sys.exit(
                        f"collect.py: {r['bench']} {r['variant']} bulk={r['bulk']} run={r['run']}: "
                        f"{objs} objects in {r['ns']} ns, under the {MIN_RUN_NS} ns a timed run "
                        "needs: raise objs= (slab_bulk) or elems= (alf_queue)"
                    )
                runs.append(
                    {
                        "bench": r["bench"],
                        "variant": r["variant"],
                        "bulk": int(r["bulk"]),
                        "run": int(r["run"]),
                        "cycles": int(r["tsc"]) / objs,
                        "ns": int(r["ns"]) / objs,
                        "tsc_per_ns": int(r["tsc"]) / int(r["ns"]) if int(r["ns"]) else None,
                        "boot": boot,
                    }
                )
            elif m := INIT.search(line):
                env["kernel"] = m["release"]
            elif m := CPU.search(line):
                env["cpu"] = m["cpu"]
    for r in runs:
        if p := places.get((r["bench"], r["bulk"], r["run"])):
            r["data"], r["code"] = p
    for bench in sorted({r["bench"] for r in runs}):
        if bench not in variants:
            sys.exit(f"collect.py: {log} has {bench} results but no 'rfl_bench: variants "
                     f"bench={bench}' line (a module without bench::header?)")
        if unknown := sorted({r["variant"] for r in runs if r["bench"] == bench}
                             - set(variants[bench])):
            sys.exit(f"collect.py: {log}: {bench} variant(s) {', '.join(unknown)} not in its "
                     "variants line")
    sweeps = []
    for (bench, bulk, c, ours), frames in sorted(stack.items()):
        if covered.get((bench, bulk)) != len(frames):
            sys.exit(f"collect.py: {log}: the stack sweep of {bench} at {bulk} printed "
                     f"{len(frames)} offsets for {c}/{ours} and says it covered "
                     f"{covered.get((bench, bulk), 'none (no covered= line)')}")
        sweeps.append({"bench": bench, "boot": boot, "bulk": bulk, "c": c, "ours": ours,
                       "frames": {f"{k:#05x}": v for k, v in sorted(frames.items())}})
    env["stack"] = sweeps
    return runs, env, variants


def placements(bench, runs):
    """Per variant and bulk size, the median cycles on each copy of the code, on each set of
    data (for a benchmark whose repetitions say where they ran) and in each boot (when there
    were several); empty if there is nothing to compare."""
    out = {}
    boots = len({r["boot"] for r in runs if r["bench"] == bench})
    for r in runs:
        if r["bench"] == bench and ("code" in r or boots > 1):
            cell = out.setdefault((r["variant"], r["bulk"]), {"code": {}, "data": {}, "boot": {}})
            if "code" in r:
                cell["code"].setdefault(r["code"], []).append(r["cycles"])
                cell["data"].setdefault(r["data"], []).append(r["cycles"])
            cell["boot"].setdefault(r["boot"], []).append(r["cycles"])
    return {
        k: {kind: {i: statistics.median(v) for i, v in sorted(by.items())} for kind, by in c.items()}
        for k, c in sorted(out.items())
    }


def placement_table(bench, places, order):
    """The variants' largest differences between copies of the code and between sets of data."""
    if not places:
        return ""
    variants = [v for v in order if any(k[0] == v for k in places)]
    out = [
        "",
        "Placement: every repetition ran in one boot of the kernel and, where the module has them, "
        "on one of several copies of the timed loops' code, each at its own address, and on one "
        "of several sets of data (see the module). Per variant, the bulk size where the medians "
        "of the copies (of the sets, of the boots) differ most, the slowest over the fastest "
        "there, and the medians in cycles:",
        "",
        "| variant | code copies | at bulk | medians by copy | data sets | at bulk | medians by set "
        "| boots | at bulk | medians by boot |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for v in variants:
        row = [v]
        for kind in ("code", "data", "boot"):
            worst = max(
                ((max(c[kind].values()) / min(c[kind].values()), b, c[kind])
                 for (var, b), c in places.items() if var == v and len(c[kind]) > 1),
                default=None,
            )
            if worst is None:
                row += ["", "", ""]
            else:
                ratio, b, med = worst
                row += [f"{ratio:.3f}", str(b), " / ".join(f"{m:.2f}" for m in med.values())]
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def stack_table(sweeps):
    """The stack sweep's offsets, a row per boot, bulk size and pair of loops."""
    if not sweeps:
        return ""
    out = [
        "",
        "Stack offsets: after its table, each boot timed the pairs below from a frame at every "
        "16-byte offset of a page (the module's `stack_sweep`: one cache, the first copy of the "
        "code and set of data, the median of its runs at each offset). Per row, over the "
        "offsets: the C loop's and ours' cycles per object, ours/C at each offset (median, "
        f"min-max), and the offsets where ours/C is above {STACK_OFF:.2f} or below {1 / STACK_OFF:.2f}:",
        "",
        "| boot | bulk | pair | offsets | C cycles | ours cycles | ours/C | "
        f"above {STACK_OFF:.2f} at | below {1 / STACK_OFF:.2f} at |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def offs(items):
        shown = ", ".join(f"{f} ({r:.2f})" for f, r in items[:6])
        return shown + (f", {len(items) - 6} more" if len(items) > 6 else "")

    for s in sweeps:
        fr = s["frames"]
        ratio = {f: o / c for f, (c, o) in fr.items()}
        slow = sorted(((f, r) for f, r in ratio.items() if r > STACK_OFF), key=lambda x: -x[1])
        fast = sorted(((f, r) for f, r in ratio.items() if r < 1 / STACK_OFF), key=lambda x: x[1])
        cs, os_, rs = ([v[0] for v in fr.values()], [v[1] for v in fr.values()],
                       list(ratio.values()))
        out.append(
            f"| {s['boot']} | {s['bulk']} | {s['ours']}/{s['c']} | {len(fr)} "
            f"| {statistics.median(cs):.2f} ({min(cs):.2f}-{max(cs):.2f}) "
            f"| {statistics.median(os_):.2f} ({min(os_):.2f}-{max(os_):.2f}) "
            f"| {statistics.median(rs):.3f} ({min(rs):.2f}-{max(rs):.2f}) "
            f"| {offs(slow)} | {offs(fast)} |")
    return "\n".join(out) + "\n"


def spread(values):
    return {
        "min": round(min(values), 3),
        "median": round(statistics.median(values), 3),
        "max": round(max(values), 3),
    }


def paired_ratios(runs):
    """Per (bench, numerator, denominator, bulk): the median over repetitions of the ratio of the
    two variants measured back to back in the same repetition (slow drift of the machine cancels
    out, which medians of separate columns do not)."""
    by = {(r["bench"], r["variant"], r["bulk"], r["boot"], r["run"]): r["cycles"] for r in runs}
    out = {}
    for bench, layout in LAYOUT.items():
        for num, den, _ in layout["ratios"]:
            for (b, v, bulk, boot, run), cyc in by.items():
                if b == bench and v == num and (b, den, bulk, boot, run) in by:
                    out.setdefault((bench, num, den, bulk), []).append(
                        cyc / by[(b, den, bulk, boot, run)])
    return {k: spread(v) for k, v in out.items()}


def summarise(runs, env):
    groups = {}
    for r in runs:
        groups.setdefault((r["bench"], r["variant"], r["bulk"]), []).append(r)
    records = []
    for (bench, variant, bulk), rs in sorted(groups.items()):
        records.append(
            {
                "bench": bench,
                "variant": variant,
                "bulk": bulk,
                "cycles": spread([r["cycles"] for r in rs]),
                "ns": spread([r["ns"] for r in rs]),
                "runs": len(rs),
                "boots": len({r["boot"] for r in rs}),
                **env,
            }
        )
    return records


def cell(rec, key, digits=1):
    s = rec[key]
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"


def table(bench, records, ratios, order):
    layout = LAYOUT.get(bench, {"title": bench, "ratios": []})
    by = {(r["variant"], r["bulk"]): r for r in records if r["bench"] == bench}
    variants = [v for v in order if any(k[0] == v for k in by)]
    bulks = sorted({b for _, b in by})
    env = next(iter(by.values()))
    out = [
        f"### {layout['title']} ({env['where']})",
        "",
        f"kernel {env.get('kernel', '?')}, config {env['config']}, TSC {env['tsc_mhz']} MHz; "
        f"host CPU: {env.get('cpu', '?')}. TSC cycles and ns per object, median (min-max) of "
        f"{env['runs']} runs over {env.get('boots', 1)} boot(s); ratios: median (min-max) over "
        "the runs of the ratio within each run",
        "",
    ]
    # The kernel without inlined helpers is UML as "uml" is: the same notes.
    notes = layout.get("notes", {})
    if note := notes.get(env["where"], notes.get("uml") if env["where"] == "uml-noinline" else None):
        out += [note, ""]
    if env["where"] == "uml-noinline":
        out += [NOINLINE_NOTE, ""]
    head = ["bulk"] + [f"{v} cycles" for v in variants] + [f"{v} ns" for v in variants]
    head += [t for _, _, t in layout["ratios"]]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for b in bulks:
        row = [str(b)]
        digits = layout.get("digits", 1)
        row += [cell(by[(v, b)], "cycles", digits) if (v, b) in by else "" for v in variants]
        row += [f"{by[(v, b)]['ns']['median']:.2f}" if (v, b) in by else "" for v in variants]
        for num, den, _ in layout["ratios"]:
            r = ratios.get((bench, num, den, b))
            row.append(f"{r['median']:.3f} ({r['min']:.2f}-{r['max']:.2f})" if r else "")
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def plot(bench, records, path, order):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    for v in order:
        rs = sorted((r for r in records if r["bench"] == bench and r["variant"] == v), key=lambda r: r["bulk"])
        if not rs:
            continue
        x = [r["bulk"] for r in rs]
        med = [r["cycles"]["median"] for r in rs]
        lo = [r["cycles"]["median"] - r["cycles"]["min"] for r in rs]
        hi = [r["cycles"]["max"] - r["cycles"]["median"] for r in rs]
        ax.errorbar(x, med, yerr=[lo, hi], marker="o", ms=3, capsize=2, label=v)
    env = next(r for r in records if r["bench"] == bench)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bulk size (objects per call)")
    ax.set_ylabel("TSC cycles per object (median, min-max)")
    ax.set_title(f"{LAYOUT.get(bench, {}).get('title', bench)}\n{env.get('kernel', '')} {env['where']}, {env.get('cpu', '')}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_ylim(bottom=0)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def verdict(r):
    """A paired ratio's reading: below 1 in every run, above 1 in every run, or no difference
    (the runs straddle 1: the difference is within the run-to-run noise)."""
    if r["max"] < 1:
        return "lower"
    if r["min"] > 1:
        return "higher"
    return "same"


def compare(d):
    """The kernels side by side: prototype-kernel's slab_bulk_test01 table (raw single, raw bulk,
    ours single, ours bulk) for each kernel found in D (UML), and the question the per-CPU sheaves
    of 7.x raise: does bulk still beat single alloc+free, at which sizes, by how much."""
    docs = {}
    for name in sorted(os.listdir(d)):
        if m := re.fullmatch(r"slab_bulk-uml-(?P<k>[\d.]+)\.json", name):
            with open(os.path.join(d, name)) as f:
                docs[m["k"]] = json.load(f)
    if not docs:
        sys.exit(f"collect.py --compare: no slab_bulk-uml-*.json in {d}")
    kernels = sorted(docs, key=lambda k: tuple(int(x) for x in k.split(".")))
    cyc, rat, env = {}, {}, {}
    for k, doc in docs.items():
        for r in doc["records"]:
            cyc[(k, r["variant"], r["bulk"])] = r["cycles"]["median"]
            env[k] = r
        for r in doc["ratios"]:
            rat[(k, r["numerator"], r["denominator"], r["bulk"])] = r["ratio"]
    bulks = sorted({b for (_, _, b) in cyc})
    out = [
        "### slab_bulk across kernels (UML): 256-byte objects, alloc+free, TSC cycles per object",
        "",
        "Each kernel's columns come from its own boot in the same `make bench` run; medians over "
        "the runs, ratios as the median (min-max) over the runs of the ratio within each run. "
        + "; ".join(
            f"{k}: {env[k].get('kernel', '?')}, {env[k].get('cpu', '?')}, {env[k]['runs']} runs"
            for k in kernels
        )
        + ".",
        "",
    ]
    head = ["bulk"]
    for k in kernels:
        head += [f"{k} raw single", f"{k} raw bulk", f"{k} ours single", f"{k} ours bulk",
                 f"{k} bulk/single (C)", f"{k} ours/raw single", f"{k} ours/raw bulk"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    fmt = lambda r: f"{r['median']:.3f} ({r['min']:.2f}-{r['max']:.2f})" if r else ""
    for b in bulks:
        row = [str(b)]
        for k in kernels:
            row += [f"{cyc[(k, v, b)]:.1f}" if (k, v, b) in cyc else ""
                    for v in ("raw_single", "raw_bulk", "ours_single", "ours_bulk")]
            row.append(fmt(rat.get((k, "raw_bulk", "raw_single", b))))
            row.append(fmt(rat.get((k, "ours_single", "raw_single", b))))
            row.append(fmt(rat.get((k, "ours_bulk", "raw_bulk", b))))
        out.append("| " + " | ".join(row) + " |")
    out += ["", "Does bulk still beat single alloc+free (C API, same cache, same run)?", ""]
    for k in kernels:
        lower, same, higher = [], [], []
        for b in bulks:
            r = rat.get((k, "raw_bulk", "raw_single", b))
            if r:
                {"lower": lower, "same": same, "higher": higher}[verdict(r)].append((b, r["median"]))
        line = f"- {k}: "
        parts = []
        if lower:
            gain = sorted(1 - m for _, m in lower)
            parts.append(
                f"bulk is cheaper at {len(lower)} of {len(lower) + len(same) + len(higher)} sizes "
                f"({', '.join(str(b) for b, _ in lower)}), by {gain[0] * 100:.0f}-{gain[-1] * 100:.0f} % "
                f"per object (median {statistics.median(gain) * 100:.0f} %)"
            )
        if same:
            parts.append(f"no difference beyond the run-to-run spread at {', '.join(str(b) for b, _ in same)}")
        if higher:
            parts.append(
                f"bulk costs more at {', '.join(f'{b} ({(m - 1) * 100:+.0f} %)' for b, m in higher)}"
            )
        out.append(line + "; ".join(parts) + ".")
    md = "\n".join(out) + "\n"
    with open(os.path.join(d, "slab_bulk-kernels.md"), "w") as f:
        f.write(md)
    print(md)
    compare_inline(d)


# What compare_inline() sets side by side: within each kernel, these paired ratios.
INLINE_RATIOS = [("slab_bulk", "ours_single", "raw_single"), ("slab_bulk", "box_single", "ours_single"),
                 ("qmempool", "pool", "c_qmempool"), ("qmempool", "pool_batch", "c_qmempool"),
                 ("qmempool", "pool_bh", "c_qmempool_bh"), ("skb_free", "shim", "napi_consume_skb")]


def compare_inline(d):
    """Where D has a kernel's tables with and without CONFIG_RUST_INLINE_HELPERS (uml and
    uml-noinline, make bench BENCH_NOINLINE=1): DIR/helpers-inline-<version>.md, the paired
    ratios of INLINE_RATIOS in each kernel, and each variant's median cycles in both."""
    kernels = sorted({m["k"] for m in (re.fullmatch(r"[a-z_]+-uml-noinline-(?P<k>[\d.]+)\.json", name)
                                       for name in os.listdir(d)) if m})
    for k in kernels:
        docs = {}
        for bench in ("slab_bulk", "qmempool", "skb_free"):
            for where in ("uml", "uml-noinline"):
                path = os.path.join(d, f"{bench}-{where}-{k}.json")
                if os.path.exists(path):
                    with open(path) as f:
                        docs[(bench, where)] = json.load(f)
        fmt = lambda r: f"{r['median']:.3f} ({r['min']:.2f}-{r['max']:.2f})" if r else ""
        out = [f"### Rust's C helpers inlined (CONFIG_RUST_INLINE_HELPERS) or not, {k}", "",
               "Two kernels of one make bench, the same but for the option: uml inlines the "
               "helpers, uml-noinline calls them. Paired ratios (median (min-max) over the runs "
               "of the ratio within each run) are within one kernel; the kernels' own cycles "
               "come from different boots and are not paired.", "",
               "| ratio | bulk | inlined | called |", "|---|---|---|---|"]
        for bench, num, den in INLINE_RATIOS:
            rat = {}
            for where in ("uml", "uml-noinline"):
                for r in docs.get((bench, where), {}).get("ratios", []):
                    if (r["numerator"], r["denominator"]) == (num, den):
                        rat[(where, r["bulk"])] = r["ratio"]
            for b in sorted({b for _, b in rat}):
                out.append(f"| {bench} {num}/{den} | {b} | {fmt(rat.get(('uml', b)))} | "
                           f"{fmt(rat.get(('uml-noinline', b)))} |")
        out += ["", "| bench | variant | bulk | cycles inlined | cycles called | inlined/called |",
                "|---|---|---|---|---|---|"]
        for bench in ("slab_bulk", "qmempool", "skb_free"):
            cyc = {}
            for where in ("uml", "uml-noinline"):
                for r in docs.get((bench, where), {}).get("records", []):
                    cyc[(where, r["variant"], r["bulk"])] = r["cycles"]["median"]
            for v, b in sorted({(v, b) for w, v, b in cyc if w == "uml-noinline"}):
                a, c = cyc.get(("uml", v, b)), cyc.get(("uml-noinline", v, b))
                if a and c:
                    out.append(f"| {bench} | {v} | {b} | {a:.1f} | {c:.1f} | {a / c:.3f} |")
        md = "\n".join(out) + "\n"
        with open(os.path.join(d, f"helpers-inline-{k}.md"), "w") as f:
            f.write(md)
        print(md)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", nargs="*", help="the console log of each boot")
    ap.add_argument("--compare", metavar="DIR", help="compare the kernels' tables in DIR")
    ap.add_argument("--where", choices=["uml", "uml-smp", "uml-noinline", "qemu"])
    ap.add_argument("--kernel", help="the kernel series (6.12, 7.3), part of the file names")
    ap.add_argument("--config", help="the kernel's .config")
    ap.add_argument("--out")
    ap.add_argument("--cpu", help="the CPU model, when the guest cannot tell it (UML says 'UML')")
    ap.add_argument("--stamp", default=datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ"))
    a = ap.parse_args()
    if a.compare:
        return compare(a.compare)
    if not (a.log and a.where and a.kernel and a.config and a.out):
        ap.error("LOG, --where, --kernel, --config and --out are required")

    runs, env, variants, sweeps = [], {}, {}, []
    for boot, log in enumerate(a.log, 1):
        r, e, v = parse(log, boot)
        sweeps += e.pop("stack")
        if not r:
            sys.exit(f"collect.py: no rfl_bench lines in {log}")
        if env and e.get("kernel") != env.get("kernel"):
            sys.exit(f"collect.py: {log} booted {e.get('kernel')}, not {env.get('kernel')}")
        for bench, names in v.items():
            if variants.setdefault(bench, names) != names:
                sys.exit(f"collect.py: {log}: {bench}'s variants {','.join(names)} differ from "
                         f"the first boot's {','.join(variants[bench])}")
        runs += r
        env = env or e
    with open(a.config, "rb") as f:
        env["config"] = hashlib.sha256(f.read()).hexdigest()[:16]
    rates = sorted(r["tsc_per_ns"] for r in runs if r["tsc_per_ns"])
    rate = statistics.median(rates)
    if stray := [r for r in runs if abs(r["tsc_per_ns"] / rate - 1) > 0.1]:
        r = stray[0]
        sys.exit(
            f"collect.py: {len(stray)} run(s) with a TSC rate off the median {rate * 1000:.0f} MHz "
            f"by over 10 % (first: {r['bench']} {r['variant']} bulk={r['bulk']} run={r['run']}, "
            f"{r['tsc_per_ns'] * 1000:.0f} MHz): the clock is not to be trusted; rerun"
        )
    env["tsc_mhz"] = round(rate * 1000, 1)
    env["series"] = a.kernel
    env["where"] = a.where
    if a.cpu:
        env["cpu"] = a.cpu
    records = summarise(runs, env)
    ratios = paired_ratios(runs)

    os.makedirs(a.out, exist_ok=True)
    for bench in sorted({r["bench"] for r in records}):
        mine = [r for r in records if r["bench"] == bench]
        base = os.path.join(a.out, f"{bench}-{a.where}-{a.kernel}")
        places = placements(bench, runs)
        doc = {
            "stamp": a.stamp,
            "records": mine,
            "ratios": [
                {"bench": k[0], "numerator": k[1], "denominator": k[2], "bulk": k[3], "ratio": v}
                for k, v in sorted(ratios.items())
                if k[0] == bench
            ],
        }
        mine_sweeps = [s for s in sweeps if s["bench"] == bench]
        if mine_sweeps:
            doc["stack"] = mine_sweeps
        if places:
            doc["placements"] = [
                {"variant": v, "bulk": b, "code": c["code"], "data": c["data"]}
                for (v, b), c in places.items()
            ]
        with open(f"{base}.json", "w") as f:
            json.dump(doc, f, indent=1)
        md = table(bench, mine, ratios, variants[bench]) + placement_table(
            bench, places, variants[bench]) + stack_table(mine_sweeps)
        with open(f"{base}.md", "w") as f:
            f.write(md)
        plot(bench, mine, f"{base}.png", variants[bench])
        print(md)
        print(f"(written: {base}.json, {base}.md, {base}.png)\n")


if __name__ == "__main__":
    main()
