#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the tables of `cargo bench -p alf_queue --bench queues` from criterion's files.

One table per group (st, 1p1c, 1p1c_single, 2p2c, and the same with an _oversubscribed
suffix when the run had fewer CPUs than spinning threads; 1p1c_alternating and
1p1c_single_alternating, the bench binary's own runs in turns): a row per queue, a column per
bulk size (k = 1 only in the single-element groups), each cell the median over criterion's
samples (the repetitions) of nanoseconds per element, and, with --spread, the range [min-max].
The host CPU (as `make bench-userspace` records it) and the load average recorded by the
bench run are printed first.

Then where each of alf_queue's performance targets (docs/benchmarks.md, "alf_queue against its
peers in userspace") stands: ours (the fastest of our forms) against the peers per k, the
single-element 1P1C case (ours one element per call against rtrb's push/pop and ArrayQueue's),
and the MPMC 2p2c tail (slowest sample against the median).

Then a sanity line: no cross-thread sample may be faster than the fastest single-thread
sample (any queue) for the same k divided by the number of threads that can run at once (the
group's threads, at most the CPUs this process may use), with a quarter's margin. One thread
moves an element in and out; across threads the producers' and consumers' halves of that work
overlap, on at most that many CPUs. (The one-thread figure alone is not a bound: rtrb's 1P1C at
k=32 ran at 0.74 ns per element against 0.76 on one thread.) The halves need not cost across
threads what they cost on one, hence the margin: one element per call on one thread, each
dequeue finds its copy of the producer's tail used up (the element was enqueued just before)
and reads the tail again, where two threads streaming through a 4096-slot ring do so once in
many elements (ours one element per call across threads ran at 1.91 ns against a one-thread
4.08 halved, 2.04). A violation means the harness mis-timed a run (as when workers could
finish before the clock started: 0.04 ns per element); the line says FAIL with the offending
cells and the script exits with status 1.

    python3 rust/alf_queue/benches/report.py [--spread] [TARGET_DIR]

TARGET_DIR defaults to $CARGO_TARGET_DIR or the workspace's target/.
"""

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GROUPS = ("st", "1p1c", "1p1c_single", "2p2c", "1p1c_oversubscribed",
          "1p1c_single_oversubscribed", "2p2c_oversubscribed")
# The 1p1c queues run in turns by the bench binary itself (not criterion): a JSON file of
# nanoseconds per element for each queue, k and repetition.
ALTERNATING = "1p1c_alternating"
# The same for the single-element 1p1c queues (k = 1 only).
SINGLE_ALTERNATING = "1p1c_single_alternating"


def samples(path):
    """Nanoseconds per element of each sample (one criterion iteration is one element)."""
    with open(os.path.join(path, "new", "sample.json")) as f:
        s = json.load(f)
    return [t / n for t, n in zip(s["times"], s["iters"])]


def main(argv):
    spread = "--spread" in argv
    args = [a for a in argv if not a.startswith("--")]
    target = (args[0] if args else os.environ.get("CARGO_TARGET_DIR")
              or os.path.join(HERE, "..", "..", "..", "target"))
    root = os.path.join(target, "criterion")
    if not os.path.isdir(root):
        sys.exit(f"no criterion results under {root}")
    host = os.path.join(root, "alf_host.txt")
    if os.path.exists(host):
        with open(host) as f:
            print("host CPU: " + f.read().strip())
    load = os.path.join(root, "alf_load.txt")
    if os.path.exists(load):
        with open(load) as f:
            print("load average (1, 5, 15 min) " + "; ".join(f.read().split("\n")).strip("; "))
    tables = {}
    for group in GROUPS:
        rows = criterion_rows(os.path.join(root, group))
        if rows:
            tables[group] = rows
    for name in (ALTERNATING, SINGLE_ALTERNATING):
        alternating = os.path.join(root, name + ".json")
        if os.path.exists(alternating):
            with open(alternating) as f:
                tables[name] = {impl: {int(k): ns for k, ns in by_k.items()}
                                for impl, by_k in json.load(f).items()}
    for group, rows in tables.items():
        sizes = sorted({k for by_k in rows.values() for k in by_k})
        turns = group in (ALTERNATING, SINGLE_ALTERNATING)
        what = "median of the repetitions" if turns else "median of samples"
        print(f"\n{group}: ns per element, {what}" + (" [min-max]" if spread else "")
              + ("; the queues run in turns, the order rotated between repetitions"
                 if turns else ""))
        print(head("queue", sizes))
        for impl, by_k in rows.items():
            print(row(impl, sizes, lambda k: by_k.get(k) and cell(by_k[k], spread)))
    targets(tables)
    return sanity(tables)


def criterion_rows(gdir):
    """{queue: {k: ns per element of each sample}} of the criterion group in `gdir`, empty if
    it has none."""
    rows = {}
    if not os.path.isdir(gdir):
        return rows
    for impl in sorted(os.listdir(gdir)):
        idir = os.path.join(gdir, impl)
        if impl == "report" or not os.path.isdir(idir):
            continue
        for k in os.listdir(idir):
            if not k.isdigit():
                continue
            try:
                ns = samples(os.path.join(idir, k))
            except FileNotFoundError:
                continue
            rows.setdefault(impl, {})[int(k)] = ns
    return rows


def cell(ns, spread):
    """A table cell: the median of `ns`, and with `spread` their range."""
    text = f"{statistics.median(ns):.2f}"
    return text + f" [{min(ns):.2f}-{max(ns):.2f}]" if spread else text


def head(first, sizes):
    """The header and separator lines of a table with a column per k."""
    return (f"| {first} | " + " | ".join(f"k={k}" for k in sizes) + " |\n"
            + "|---|" + "---|" * len(sizes))


def row(label, sizes, cell):
    """A table line: `label`, then `cell(k)` for each k, empty where it is None or empty."""
    return f"| {label} | " + " | ".join(cell(k) or "" for k in sizes) + " |"


# Our variants in their best mode, as the peers are in theirs: the fastest of these medians
# counts, and its letter is printed with the ratio.
OURS = {
    "spsc": {"alf_spsc": "b", "alf_spsc_with": "w", "alf_spsc_chunks": "c",
             "alf_spsc_single": "s", "alf_spsc_trailing": "r"},
    "mpmc": {"alf_mpmc": "b", "alf_mpmc_single": "s", "alf_stamp": "t", "alf_stamp_single": "t"},
}
# Across threads rtrb counts in its faster form too: as it is, or its consumer made to trail
# the producer as ours does (`rtrb_trailing`, the 1p1c groups only).
SPSC_PEERS = ("rtrb_chunks", "rtrb_trailing", "ringbuf_slices")
MPMC_PEERS = ("crossbeam_arrayqueue", "concurrent_queue")
# The single-element 1p1c targets: ours one element per call against one peer, also one
# element per call; for SPSC the faster of each queue's consumer as it is and made to trail
# its producer (ours with `dequeue_trailing`, rtrb with the same wait around `pop`).
SINGLE_TARGETS = (("SPSC", {"alf_spsc_single": "s", "alf_spsc_trailing": "r"},
                   ("rtrb_single", "rtrb_trailing"), "rtrb"),
                  ("MPMC", {"alf_mpmc_single": "s", "alf_stamp_single": "t"},
                   ("crossbeam_arrayqueue",), "ArrayQueue"))


def best(rows, names, k):
    """(median, name) of the fastest of `names` at `k` in `rows`, or None."""
    found = [(statistics.median(rows[n][k]), n) for n in names
             if n in rows and rows[n].get(k)]
    return min(found) if found else None


def per_rep_best(rows, names, k):
    """For each repetition of the alternating runs, (ns, name) of the fastest of `names` at
    `k`, or None."""
    found = [[(ns, n) for ns in rows[n][k]] for n in names if n in rows and rows[n].get(k)]
    return [min(rep) for rep in zip(*found)] if found else None


def targets(tables):
    """Prints where each of alf_queue's performance targets stands in `tables`."""
    sizes = sorted({k for rows in tables.values() for by_k in rows.values() for k in by_k})
    lines = []

    def ratio_row(label, group, ours, peers, limit):
        rows = tables.get(group)
        if not rows:
            return

        def cell(k):
            o, p = best(rows, ours, k), best(rows, peers, k)
            if not o or not p:
                return None
            r = o[0] / p[0]
            return f"{r:.2f}{ours[o[1]]} {'met' if r <= limit else 'MISSED'}"
        lines.append(row(label, sizes, cell))

    def paired_row(label, ours, peers, limit, group=ALTERNATING):
        rows = tables[group]

        def cell(k):
            o, p = per_rep_best(rows, ours, k), per_rep_best(rows, peers, k)
            if not o or not p:
                return None
            r = statistics.median(a / b for (a, _), (b, _) in zip(o, p))
            names = [n for _, n in o]
            return (f"{r:.2f}{ours[max(set(names), key=names.count)]} "
                    f"{'met' if r <= limit else 'MISSED'}")
        lines.append(row(label, sizes, cell))

    # Across threads the ratios come from the alternating runs when there are any (both
    # queues of a ratio measured under the same conditions), else from criterion's medians.
    paired = ALTERNATING in tables
    cross = f"1p1c {'alternating' if paired else 'medians'}"
    for side, peers, which in (("SPSC", SPSC_PEERS, "faster of rtrb, ringbuf"),
                               ("MPMC", MPMC_PEERS, "fastest of ArrayQueue, concurrent-queue")):
        ours = OURS[side.lower()]
        ratio_row(f"{side} st: ours / {which} (<= 1)", "st", ours, peers, 1.0)
        label = f"{side} {cross}: ours / {which} (<= 1)"
        if paired:
            paired_row(label, ours, peers, 1.0)
        else:
            ratio_row(label, "1p1c", ours, peers, 1.0)
    # The single-element case, from its own runs in turns if there are any.
    for side, ours, peers, which in SINGLE_TARGETS:
        label = f"{side} 1p1c single item: ours / {which} (<= 1)"
        if SINGLE_ALTERNATING in tables:
            paired_row(label, ours, peers, 1.0, SINGLE_ALTERNATING)
        else:
            ratio_row(label, "1p1c_single", ours, peers, 1.0)
    rows = tables.get(ALTERNATING if paired else "1p1c", {})
    ours16, peer16 = rows.get("alf_mpmc", {}).get(16), rows.get("crossbeam_arrayqueue", {}).get(16)
    if ours16 and peer16:
        if paired:
            x = statistics.median(p / o for o, p in zip(ours16, peer16))
        else:
            x = statistics.median(peer16) / statistics.median(ours16)
        lines.append(f"| MPMC {cross} k=16: ArrayQueue / ours (>= 10) | {x:.1f}x "
                     f"{'met' if x >= 10 else 'MISSED'} |")
    for group in ("2p2c", "2p2c_oversubscribed"):
        by_k = tables.get(group, {}).get("alf_mpmc")
        if not by_k:
            continue

        def tail(k):
            ns = by_k.get(k)
            if not ns:
                return None
            r = max(ns) / statistics.median(ns)
            return f"{r:.1f} {'met' if r <= 10 else 'MISSED'}"
        lines.append(row(f"MPMC {group}: slowest sample / median (<= 10)", sizes, tail))
    if not lines:
        return
    print("\ntargets: ratios of medians per k (1p1c alternating and 1p1c single item, when "
          "its runs in turns are there: the median over the repetitions of the ratio within "
          "each); b = our bulk/burst through a Batch, w = in place (`*_with`), c = chunks "
          "(`write_chunk`, `read_chunk`), s = one element per call, t = one element per call "
          "through StampQueue, r = the consumer trailing (`dequeue_trailing`, in bursts "
          "`dequeue_burst_trailing_with`), whichever of ours was fastest; the single-item rows "
          "are one element per call on both sides, k = 1, 4096 slots, against the faster of the "
          "peer's consumer as it is and trailing; across threads rtrb counts as it is or "
          "trailing, as ours")
    print(head("target", sizes))
    for line in lines:
        print(line)


# Threads of each cross-thread group.
THREADS = {"1p1c": 2, "2p2c": 4}


# How far under the one-thread bound a cross-thread sample may run (see the module's docs).
MARGIN = 1.25


def sanity(tables):
    """Prints the sanity line; returns 1 if a cross-thread sample beats the bound."""
    st = tables.get("st", {})
    fastest = {}
    for by_k in st.values():
        for k, ns in by_k.items():
            fastest[k] = min(fastest.get(k, min(ns)), min(ns))
    if not fastest:
        print("\nsanity: no single-thread figures to check against")
        return 0
    cpus = len(os.sched_getaffinity(0))
    bad = []
    checked = 0
    for group, rows in tables.items():
        if group == "st":
            continue
        parallel = min(THREADS[group.split("_")[0]], cpus)
        for impl, by_k in rows.items():
            for k, ns in by_k.items():
                if k not in fastest:
                    continue
                checked += len(ns)
                bound = fastest[k] / parallel / MARGIN
                if min(ns) < bound:
                    bad.append(f"{group}/{impl}/{k}: {min(ns):.2f} < {bound:.2f}")
    if bad:
        print(f"\nsanity: FAIL, {len(bad)} cross-thread cells have a sample faster than the "
              "fastest single-thread sample for the same k divided by the threads that can "
              f"run at once and by {MARGIN}: " + "; ".join(bad))
        return 1
    print(f"\nsanity: pass ({checked} cross-thread samples, none faster than the fastest "
          "single-thread sample for the same k divided by the threads that can run at once "
          f"and by {MARGIN}, on {cpus} CPUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
