#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the results of one make bench against the project's benchmark targets.

usage: targets.py DIR      (DIR: the results make bench just wrote)

Prints one line per target and kernel, met or missed with the cells that missed, then a summary
line, and exits 0: a missed target is a finding of the run, reported on the host it ran on, not
a failure of make bench.  The targets (docs/benchmarks.md says where each comes from):

- slab_bulk, ours/C: bulk through SlotObjs at most 1.05 at 1-4 objects and 1.02 from 8; single
  at most 1.05 (median of the paired ratios);
- alf_queue, ours from and into a slice / the C reference: SPSC at most 1.05 on every kernel;
  MPMC at most 1.05 where both sides pay LOCK (two CPUs, uml-smp; on uniprocessor UML C's
  cmpxchg() has no LOCK while Rust's atomics keep it, so that cell is not like for like); a
  bulk of one no dearer than one single operation (slice/single at k = 1 at most 1.00);
- qmempool with a bottom-half guard per call / the C qmempool: at most 1.10 (uml-noinline, the
  kernel without inlined C helpers, for comparison);
- forwarding (fwd): the targets that collect_fwd.py wrote into its results: every paired
  difference resolved to under 5 ns, or 2 % of the per-packet cost where that is larger;
  at least 2 Mpps on one CPU; the shim cheaper than napi_consume_skb() in `cross` on 7.x,
  resolved (the range of the paired difference stays below zero; n/a where UML has no SMP); the
  shim no dearer than napi_consume_skb() in every other condition; and slab-bulk placed against
  both, a placement shown as n/a, not a target met or missed.
"""

import json
import os
import re
import sys


def ratios(doc):
    return {(r["numerator"], r["denominator"], r["bulk"]): r["ratio"]["median"] for r in doc["ratios"]}


def check(name, cells, limit):
    """cells: (bulk, ratio); returns (name, met, detail)."""
    if not cells:
        return (name, None, "no cells")
    over = [(b, x) for b, x in cells if x > limit]
    worst = max(cells, key=lambda c: c[1])
    if over:
        return (name, False, "over at " + ", ".join(f"{b}: {x:.3f}" for b, x in over))
    return (name, True, f"highest {worst[1]:.3f} at {worst[0]}")


def slab(doc):
    r = ratios(doc)
    bulk = [(b, x) for (n, d, b), x in r.items() if (n, d) == ("ours_bulk", "raw_bulk")]
    single = [(b, x) for (n, d, b), x in r.items() if (n, d) == ("ours_single", "raw_single")]
    return [check("slab_bulk SlotObjs/C, 1-4 objects (1.05)", [c for c in bulk if c[0] <= 4], 1.05),
            check("slab_bulk SlotObjs/C, from 8 objects (1.02)", [c for c in bulk if c[0] >= 8], 1.02),
            check("slab_bulk single ours/C (1.05)", single, 1.05)]


def alf_queue(doc, where):
    r = ratios(doc)
    pick = lambda n, d: [(b, x) for (nn, dd, b), x in r.items() if (nn, dd) == (n, d)]
    out = [check("alf_queue SPSC slice/C (1.05)", pick("spsc_slice", "c_spsc_bulk"), 1.05),
           check("alf_queue SPSC slice of one/single (1.00)",
                 [c for c in pick("spsc_slice", "spsc_single") if c[0] == 1], 1.00)]
    if where == "uml-smp":
        out += [check("alf_queue MPMC slice/C, both LOCK (1.05)", pick("mpmc_slice", "c_mpmc_bulk"), 1.05),
                check("alf_queue MPMC slice of one/single (1.00)",
                      [c for c in pick("mpmc_slice", "mpmc_single") if c[0] == 1], 1.00)]
    return out


def qmempool(doc):
    r = ratios(doc)
    cells = [(b, x) for (n, d, b), x in r.items() if (n, d) == ("pool", "c_qmempool")]
    return [check("qmempool, BH guard per call / C qmempool (1.10)", cells, 1.10)]


def fwd(doc):
    return [(f"forwarding: {t['target']}", t["met"], t["result"]) for t in doc["targets"]]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    d = sys.argv[1]
    lines = []
    for name in sorted(os.listdir(d)):
        m = re.fullmatch(r"(?P<bench>[a-z_]+)-(?P<where>uml|uml-smp|uml-noinline)-(?P<k>[\d.]+)\.json", name)
        if not m:
            continue
        with open(os.path.join(d, name)) as f:
            doc = json.load(f)
        bench, where, k = m["bench"], m["where"], m["k"]
        found = {"slab_bulk": lambda: slab(doc), "alf_queue": lambda: alf_queue(doc, where),
                 "qmempool": lambda: qmempool(doc), "fwd": lambda: fwd(doc)}.get(bench, list)()
        cpu = doc.get("cpu") or (doc.get("records") or [{}])[0].get("cpu", "?")
        lines += [(k, where, cpu, *t) for t in found]
    if not lines:
        sys.exit(f"targets.py: no results in {d}")
    print("Targets of this run (host CPU as each result records it):")
    for k, where, cpu, name, met, detail in lines:
        state = "met" if met else "n/a" if met is None else "MISSED"
        print(f"  {k:5} {where:12} {state:6} {name}: {detail}")
    missed = [x for x in lines if x[4] is False]
    hosts = sorted({x[2] for x in lines})
    print(f"{len(lines) - len(missed)} of {len(lines)} targets met"
          + (f"; missed: " + "; ".join(f"{k} {w} {n}" for k, w, _, n, _, _ in missed) if missed else "")
          + f" (host: {' / '.join(hosts)})")


if __name__ == "__main__":
    main()
