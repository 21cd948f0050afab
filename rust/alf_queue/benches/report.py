#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the tables of `cargo bench -p alf_queue --bench queues` from criterion's files.

One table per group (st, 1p1c, 2p2c, and the same with an _oversubscribed suffix when the
run had fewer CPUs than spinning threads): a row per queue, a column per bulk size, each cell
the median over criterion's samples of nanoseconds per element, and, with --spread, the range
[min-max] of the samples. The load average recorded by the bench run is printed first.

Then a sanity line: no cross-thread sample may be faster than the fastest single-thread
median (any queue) for the same k, since moving an element between threads cannot cost less
than moving it in and out on one. A violation means the harness mis-timed a run; the line
says FAIL with the offending cells and the script exits with status 1.

    python3 rust/alf_queue/benches/report.py [--spread] [TARGET_DIR]

TARGET_DIR defaults to $CARGO_TARGET_DIR or the workspace's target/.
"""

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GROUPS = ("st", "1p1c", "2p2c", "1p1c_oversubscribed", "2p2c_oversubscribed")


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
    load = os.path.join(root, "alf_load.txt")
    if os.path.exists(load):
        with open(load) as f:
            print("load average (1, 5, 15 min) " + "; ".join(f.read().split("\n")).strip("; "))
    tables = {}
    for group in GROUPS:
        gdir = os.path.join(root, group)
        if not os.path.isdir(gdir):
            continue
        rows = {}
        sizes = set()
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
                sizes.add(int(k))
        if not rows:
            continue
        tables[group] = rows
        sizes = sorted(sizes)
        print(f"\n{group}: ns per element, median of samples"
              + (" [min-max]" if spread else ""))
        print("| queue | " + " | ".join(f"k={k}" for k in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        for impl, by_k in rows.items():
            cells = []
            for k in sizes:
                ns = by_k.get(k)
                if not ns:
                    cells.append("")
                    continue
                cell = f"{statistics.median(ns):.2f}"
                if spread:
                    cell += f" [{min(ns):.2f}-{max(ns):.2f}]"
                cells.append(cell)
            print(f"| {impl} | " + " | ".join(cells) + " |")
    return sanity(tables)


def sanity(tables):
    """Prints the sanity line; returns 1 if a cross-thread sample beats single-thread."""
    st = tables.get("st", {})
    floor = {}
    for by_k in st.values():
        for k, ns in by_k.items():
            m = statistics.median(ns)
            floor[k] = min(floor.get(k, m), m)
    if not floor:
        print("\nsanity: no single-thread figures to check against")
        return 0
    bad = []
    checked = 0
    for group, rows in tables.items():
        if group == "st":
            continue
        for impl, by_k in rows.items():
            for k, ns in by_k.items():
                if k not in floor:
                    continue
                checked += len(ns)
                fast = min(ns)
                if fast < floor[k]:
                    bad.append(f"{group}/{impl}/{k}: {fast:.2f} < {floor[k]:.2f}")
    if bad:
        print(f"\nsanity: FAIL, {len(bad)} cross-thread cells have a sample faster than the "
              "fastest single-thread median for the same k: " + "; ".join(bad))
        return 1
    print(f"\nsanity: pass ({checked} cross-thread samples, none faster than the fastest "
          "single-thread median for the same k)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
