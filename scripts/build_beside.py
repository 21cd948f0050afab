#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the benchmark boots of scripts/build-beside.sh: quiet, and with a build beside.

usage: build_beside.py --quiet LOG... --loaded LOG...

For each benchmark and cell (variant, bulk) it takes every run's cost (TSC cycles per object or
element) from the boots' console lines, and prints per benchmark: how far the cells' medians
moved with the build beside (the median, smallest and largest of loaded/quiet over the cells),
and the spread of the runs each way (per cell, the interquartile range over the median; their
median and mean over the cells, and in how many cells the loaded spread is the wider).
"""

import argparse
import collections
import statistics

from collect import parse


def costs(logs):
    """{(bench, variant, bulk): [cycles per object of each run]} over the boots' logs, as
    collect.py reads them."""
    cells = collections.defaultdict(list)
    for boot, path in enumerate(logs, 1):
        for r in parse(path, boot)[0]:
            cells[(r["bench"], r["variant"], r["bulk"])].append(r["cycles"])
    return cells


def spread(runs):
    """The interquartile range of `runs` over their median."""
    q = statistics.quantiles(runs, n=4)
    return (q[2] - q[0]) / statistics.median(runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quiet", nargs="+", required=True)
    ap.add_argument("--loaded", nargs="+", required=True)
    a = ap.parse_args()
    quiet, loaded = costs(a.quiet), costs(a.loaded)
    print(f"{len(a.quiet)} quiet and {len(a.loaded)} loaded boots")
    print("| bench | cells | loaded/quiet medians: median (min-max) "
          "| spread quiet: median, mean | spread loaded: median, mean | loaded wider |")
    print("|---|---|---|---|---|---|")
    for bench in sorted({k[0] for k in quiet}):
        keys = [k for k in quiet if k[0] == bench and k in loaded
                and len(quiet[k]) >= 2 and len(loaded[k]) >= 2]
        if not keys:
            continue
        moved = [statistics.median(loaded[k]) / statistics.median(quiet[k]) for k in keys]
        sq = [spread(quiet[k]) for k in keys]
        sl = [spread(loaded[k]) for k in keys]
        wider = sum(1 for q, lo in zip(sq, sl) if lo > q)
        print(f"| {bench} | {len(keys)} | {statistics.median(moved):.3f} "
              f"({min(moved):.3f}-{max(moved):.3f}) "
              f"| {statistics.median(sq):.3f}, {statistics.mean(sq):.3f} "
              f"| {statistics.median(sl):.3f}, {statistics.mean(sl):.3f} "
              f"| {wider} of {len(keys)} |")


if __name__ == "__main__":
    main()
