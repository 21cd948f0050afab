#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the logs of the forwarding benchmark (scripts/guest/fwd_bench.sh) into results/fwd-*.

usage: collect_fwd.py --boot NAME=LOG [--boot NAME=LOG ...] [--stats NAME=LOG ...]
                      --kernel VERSION --config KERNEL/.config --cpu DESCRIPTION --out DIR

Each --boot is a boot of a timed kernel: "default" (um-bench, one CPU; its cells are every arm
at each tx_coalesce and min_partial, paired within each repetition), "slab_nomerge" (the same
kernel with slab_nomerge on its command line), "noinline" (um-bench-noinline: the same kernel
without CONFIG_RUST_INLINE_HELPERS, so every Rust call into a C helper is a call) or "smp"
(um-bench-smp with two CPUs, whose conditions are "1cpu", both interrupts on CPU 0, "2cpu", TX
completion on CPU 1, and "cross", two flows in opposite directions, each CPU receiving one and
completing the other's TX). Each --stats is the same boot of the kernel with CONFIG_SLUB_STATS
(um-stats, um-stats-smp), whose runs give the slab counters and are never mixed with the timed
figures. Writes DIR/fwd-uml-VERSION.{json,md}. The collection fails and writes nothing on: a
burst that did not forward every frame, a burst whose independent counts disagree with its
forwarded count (ForwDatagrams, both ports' rx/tx packets, any drop, the shim's count of the
skbs it freed), an error line, a missing cell or repetition, or a log with a warning or oops.
Logs of the three-arm fwd_bench.sh before the count lines (no "paths" in the setup line) are
read too: their missing arms and counts are shown as "-".
"""

import argparse
import datetime
import hashlib
import json
import os
import re
import statistics
import sys

from collect import CPU, INIT, spread

ARMS = ["shim", "napi", "napi-nodefer", "any", "slab-bulk"]
ARM_NAMES = {
    "shim": "the shim: batches of 32 through `napi_consume_skb_bulk()`",
    "napi": "`napi_consume_skb()` per skb (ixgbe today)",
    "napi-nodefer": "`napi_consume_skb()` per skb with `skb_defer_max` 0 (7.x: no hand-back to the "
                    "allocating CPU)",
    "any": "`dev_consume_skb_any()` per skb (ixgbe before 2015's bulk free)",
    "slab-bulk": "2015's mechanism: each skb released, the heads freed with one "
                 "`kmem_cache_free_bulk()` per 16 (`kfree_skb_list_reason()`)",
}
OLD_ARMS = ["shim", "napi", "any"]
# The pairs whose difference answers a question, in ns per packet (first minus second).
PAIRS = [("shim", "napi"), ("shim", "slab-bulk"), ("slab-bulk", "napi"), ("napi", "napi-nodefer"),
         ("shim", "any"), ("napi", "any")]
BOOTS = ("default", "slab_nomerge", "noinline", "smp")
# Targets: a paired difference resolved to under 5 ns, or 2 % of the per-packet cost where
# that is larger; at least 2 Mpps on one CPU.
RESOLUTION_NS = 5.0
RESOLUTION_SHARE = 0.02
RATE_PPS = 2_000_000
COUNT_KEYS = ("forw", "rx0", "tx0", "rxdrop0", "txdrop0", "rx1", "tx1", "rxdrop1", "txdrop1",
              "pgalloc", "calls", "skbs")

LINE = re.compile(r"rfl_fwd: (?P<what>setup|knob|tune|run|count|slab|error|done)\b ?(?P<rest>.*)$")
BAD = re.compile(r"BUG:|WARNING:|Oops|Kernel panic|general protection")

# What each SLUB counter counts, per kernel, read from mm/slub.c of 6.12.107 and 7.3.4 (stat()
# adds one per event, stat_add() the objects of a batch): "objects", "calls" (one per call,
# whatever number of objects the call frees), "slabs", "sheaves" or "events".
SLUB_UNITS = {
    6: {"alloc_fastpath": "objects", "alloc_slowpath": "objects (one per ___slab_alloc())",
        "free_fastpath": "objects (stat_add of the batch)",
        "free_slowpath": "calls (one per __slab_free(), which frees a detached freelist of 1-n objects)",
        "free_frozen": "calls", "free_add_partial": "slabs", "free_remove_partial": "slabs",
        "alloc_from_partial": "slabs", "alloc_slab": "slabs", "alloc_refill": "events", "free_slab": "slabs",
        "cpuslab_flush": "events", "cmpxchg_double_cpu_fail": "events", "cmpxchg_double_fail": "events",
        "cpu_partial_alloc": "events", "cpu_partial_free": "calls", "cpu_partial_node": "events",
        "cpu_partial_drain": "events", "alloc_node_mismatch": "events", "order_fallback": "events"},
    7: {"alloc_fastpath": "objects", "alloc_slowpath": "objects", "free_fastpath": "objects",
        "free_slowpath": "objects", "free_rcu_sheaf": "objects", "free_rcu_sheaf_fail": "objects",
        "free_add_partial": "slabs", "free_remove_partial": "slabs", "alloc_slab": "slabs",
        "free_slab": "slabs", "sheaf_flush": "objects", "sheaf_refill": "objects",
        "sheaf_alloc": "sheaves", "sheaf_free": "sheaves", "barn_get": "sheaves", "barn_get_fail": "events",
        "barn_put": "sheaves", "barn_put_fail": "events", "cmpxchg_double_fail": "events",
        "alloc_node_mismatch": "events", "order_fallback": "events", "sheaf_prefill_fast": "events",
        "sheaf_prefill_slow": "events", "sheaf_prefill_oversize": "events",
        "sheaf_return_fast": "events", "sheaf_return_slow": "events"},
}
for _c in ("deactivate_full", "deactivate_empty", "deactivate_to_head", "deactivate_to_tail",
           "deactivate_remote_frees", "deactivate_bypass"):
    SLUB_UNITS[6][_c] = "slabs"

# The 2015 figures (Jesper Dangaard Brouer, "slab-nomerge (was Re: [git pull] device mapper
# changes for 4.3)", dm-devel, 4 Sep 2015): single-CPU IPv4 forwarding through ixgbe, pktgen
# UDP single flow, i7-4790K at 4 GHz, Linux 4.1-mmotm.
ORIGINAL = [
    ("normal (per-skb free)", 2049166),
    ("normal, slab_nomerge", 2053440),
    ("bulk free of up to 32", 2091218),
    ("bulk free, slab_nomerge", 2121703),
    ("bulk free, cpu_partial 256 + min_partial 9", 2110842),
]


def kv(text):
    """The key=value pairs of a line."""
    return dict(m.groups() for m in re.finditer(r"(\S+?)=(\S+)", text))


def num(v):
    """A count of a count line: an integer, or None for "-" (the kernel has no such counter)."""
    return None if v in (None, "-") else int(v)


def natural(v):
    """A sort key that puts "32" before "128"."""
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", v)]


def fail(why):
    sys.exit(f"collect_fwd.py: {why}")


def check_counts(b, c):
    """What is wrong with one burst's independent counts (a list of words, empty if nothing):
    forwarded must equal ForwDatagrams, fwdnic1's TX and fwdnic0's RX (with two flows, each
    direction's RX the other port's TX and their sum), with no drop, and the shim's bulk frees
    must have freed every frame of a shim burst and none of another's."""
    fw, flows = int(b["forwarded"]), int(b.get("flows", 1))
    bad = []
    for k in ("forw", "rx0", "tx0", "rx1", "tx1", "rxdrop0", "txdrop0", "rxdrop1", "txdrop1"):
        if c[k] is None:
            bad.append(f"no {k} counter")
    if bad:
        return bad
    if c["forw"] != fw:
        bad.append(f"ForwDatagrams {c['forw']}")
    if flows == 1:
        if c["tx1"] != fw or c["rx0"] != fw:
            bad.append(f"fwdnic0 rx {c['rx0']}, fwdnic1 tx {c['tx1']}")
    elif c["rx0"] != c["tx1"] or c["rx1"] != c["tx0"] or c["rx0"] + c["rx1"] != fw:
        bad.append(f"fwdnic0 rx {c['rx0']} tx {c['tx0']}, fwdnic1 rx {c['rx1']} tx {c['tx1']}")
    drops = {k: c[k] for k in ("rxdrop0", "txdrop0", "rxdrop1", "txdrop1") if c[k]}
    if drops:
        bad.append("drops " + ", ".join(f"{k} {v}" for k, v in drops.items()))
    if c["skbs"] is not None:
        want = fw if b["path"] == "shim" else 0
        if c["skbs"] != want:
            bad.append(f"the shim's bulk frees freed {c['skbs']} skbs, not {want}")
    return bad


def parse(name, log):
    """One boot's log: its setup, knobs, tunings, runs (a repetition's bursts of one cell added
    up, with their counts) and slab lines."""
    out = {"boot": name, "setup": None, "tune": {}, "knobs": {}, "runs": [], "slab": [], "done": False}
    errors, bursts, runs, counted, mismatches = [], {}, {}, 0, []
    with open(log, errors="replace") as f:
        for line in f:
            if m := LINE.search(line):
                what, rest = m["what"], m["rest"]
                if what == "error":
                    errors.append(rest)
                elif what == "setup":
                    out["setup"] = kv(rest)
                elif what == "knob":
                    k = kv(rest)
                    out["knobs"][(k.get("cond"), k["name"])] = k
                elif what == "tune":
                    t = kv(rest)
                    out["tune"][t.pop("cond")] = t
                elif what == "run":
                    b = kv(rest)
                    b.setdefault("coal", "-")
                    b.setdefault("mp", "-")
                    free = "napi" if b["path"] == "napi-nodefer" else b["path"]
                    if b.get("free") != free:
                        errors.append(f"burst through {b['path']} ran {b.get('free')}: {rest}")
                    bursts[(b["cond"], b["rep"], b["round"], b["path"], b["coal"], b["mp"])] = b
                    key = (b["cond"], int(b["rep"]), b["path"], b["coal"], b["mp"])
                    r = runs.setdefault(key, {"cond": key[0], "rep": key[1], "path": key[2],
                                              "coal": key[3], "mp": key[4], "flows": int(b.get("flows", 1)),
                                              "packets": 0, "forwarded": 0, "ns": 0, "bursts": 0,
                                              "counts": None})
                    for k in ("packets", "forwarded", "ns"):
                        r[k] += int(b[k])
                    r["bursts"] += 1
                elif what == "count":
                    c = kv(rest)
                    bk = (c["cond"], c["rep"], c["round"], c["path"], c["coal"], c["mp"])
                    if bk not in bursts:
                        errors.append(f"count line without its run line: {rest}")
                        continue
                    b, vals = bursts[bk], {k: num(c.get(k)) for k in COUNT_KEYS}
                    if bad := check_counts(b, vals):
                        mismatches.append(f"cond={b['cond']} rep={b['rep']} round={b['round']} "
                                          f"path={b['path']} coal={b['coal']} mp={b['mp']} forwarded "
                                          f"{b['forwarded']}: " + "; ".join(bad))
                    r = runs[(b["cond"], int(b["rep"]), b["path"], b["coal"], b["mp"])]
                    if r["counts"] is None:
                        r["counts"] = {k: 0 for k in COUNT_KEYS}
                    for k, v in vals.items():
                        r["counts"][k] = None if v is None or r["counts"][k] is None else r["counts"][k] + v
                    r.setdefault("counted", 0)
                    r["counted"] += 1
                    counted += 1
                elif what == "slab":
                    s = kv(rest)
                    out["slab"].append({"cond": s.pop("cond"), "rep": int(s.pop("rep")),
                                        "path": s.pop("path"), "coal": s.pop("coal", "-"),
                                        "mp": s.pop("mp", "-"), "cache": s.pop("cache"),
                                        "counts": {k: int(v) for k, v in s.items()}})
                else:
                    out["done"] = True
            elif BAD.search(line):
                errors.append(f"log: {line.strip()}")
            elif m := INIT.search(line):
                out["kernel"] = m["release"]
            elif m := CPU.search(line):
                out["guest_cpu"] = m["cpu"]
    out["runs"] = list(runs.values())
    where = f"{name} ({log})"
    if errors:
        fail(f"{where}: " + "; ".join(errors[:5]))
    if mismatches:
        fail(f"{where}: {len(mismatches)} burst(s) whose independent counts disagree with "
             "forwarded: " + " | ".join(mismatches[:5]))
    if not out["setup"] or not out["done"]:
        fail(f"{where}: no setup or done line: the plan did not run to its end")
    setup = out["setup"]
    out["new"] = "paths" in setup
    out["arms"] = setup["paths"].split(",") if out["new"] else OLD_ARMS
    out["absent"] = dict(a.split(":", 1) for a in setup.get("absent", "-").split(",") if ":" in a)
    out["counted"] = counted
    for r in out["runs"]:
        want = int(setup["packets"]) * r["flows"]
        if r["bursts"] != int(setup["rounds"]) or r["packets"] * r["flows"] != want:
            fail(f"{where}: cond={r['cond']} rep={r['rep']} path={r['path']} coal={r['coal']} mp={r['mp']}: "
                 f"{r['bursts']} bursts of {r['packets']} frames, not {setup['rounds']} of {setup['packets']} in all")
        if r["forwarded"] != r["packets"] * r["flows"]:
            fail(f"{where}: cond={r['cond']} rep={r['rep']} path={r['path']}: forwarded "
                 f"{r['forwarded']} of {r['packets']} x {r['flows']} flows")
        if out["new"] and r.get("counted") != r["bursts"]:
            fail(f"{where}: cond={r['cond']} rep={r['rep']} path={r['path']}: "
                 f"{r.get('counted', 0)} count lines for {r['bursts']} bursts")
    for cond in setup["conds"].split(","):
        coals = setup.get("coal", "-").split(",")
        mps = out["knobs"].get((cond, "min_partial"), {}).get("values", "-").split(",")
        for path in out["arms"]:
            for coal in coals:
                for mp in mps:
                    n = sum(1 for r in out["runs"] if (r["cond"], r["path"], r["coal"], r["mp"])
                            == (cond, path, coal, mp))
                    if n != int(setup["runs"]):
                        fail(f"{where}: cond={cond} path={path} coal={coal} mp={mp}: "
                             f"{n} runs of {setup['runs']}")
    return out


def label(boot, cond):
    """The condition's name in the tables: the boot's, and the tuning within it."""
    if boot == "default":
        return cond
    if boot == "smp":
        return f"smp-{cond}"
    return boot if cond == "default" else f"{boot}+{cond}"


def baseline(cond):
    """What a condition is set against: the uniprocessor kernel's default, or, in the SMP
    kernel, which costs several times as much per frame, its own one-CPU condition."""
    return "smp-1cpu" if cond.startswith("smp-") else "default"


def row_name(row):
    c, coal, mp = row
    return f"{c}, coal {coal}, mp {mp}"


def defers_here(boot, cond):
    """Why napi-nodefer cannot differ from napi in this condition, or None if it can: only
    where TX completes on another CPU than the one that received (and allocated) the skb."""
    if int(boot["setup"]["cpus"]) < 2:
        return "uniprocessor: cannot show (nothing is handed back on one CPU)"
    t = boot["tune"].get(cond, {})
    if t.get("flows") == "2" or (t.get("rx_cpu") is not None and t.get("rx_cpu") != t.get("tx_cpu")):
        return None
    return "one CPU receives and completes: cannot show (nothing is handed back)"


def timed(boots):
    """Per row (condition, tx_coalesce, min_partial) and arm: ns per packet and pps over the
    repetitions, and the paired differences between arms, and along the paired dimensions,
    within each repetition."""
    rows, cells, pairs, dims, ctx = [], {}, {}, {}, {}
    for b in boots:
        for r in b["runs"]:
            row = (label(b["boot"], r["cond"]), r["coal"], r["mp"])
            if row not in rows:
                rows.append(row)
                ctx[row] = {"boot": b, "cond": r["cond"], "nodefer_why": defers_here(b, r["cond"]),
                            "mp_default": b["knobs"].get((r["cond"], "min_partial"), {}).get("was"),
                            "coal_default": b["setup"].get("coal_was", "128")}
            r["ns_per_packet"] = r["ns"] / r["forwarded"]
            cells.setdefault((row, r["path"]), []).append(r)
    first = {c: i for i, c in enumerate(dict.fromkeys(r[0] for r in rows))}
    rows.sort(key=lambda r: (first[r[0]], natural(r[1]), natural(r[2])))
    for key, rs in list(cells.items()):
        ns = [r["ns_per_packet"] for r in rs]
        cs = [r["counts"] for r in rs if r["counts"]]
        cell = {"ns_per_packet": spread(ns), "pps": {k: round(v) for k, v in spread([1e9 / x for x in ns]).items()},
                "runs": [round(x, 2) for x in ns]}
        if cs:
            fw = [r["forwarded"] for r in rs if r["counts"]]
            if all(c["pgalloc"] is not None for c in cs):
                cell["pages_per_packet"] = spread([c["pgalloc"] / f for c, f in zip(cs, fw)])
            if all(c["calls"] for c in cs):
                cell["skbs_per_call"] = round(sum(c["skbs"] for c in cs) / sum(c["calls"] for c in cs), 2)
        cells[key] = cell
    for b in boots:
        by = {(r["cond"], r["rep"], r["path"], r["coal"], r["mp"]): r["ns_per_packet"] for r in b["runs"]}
        for (cond, rep, path, coal, mp), ns in by.items():
            row = (label(b["boot"], cond), coal, mp)
            for a, z in PAIRS:
                if path == a and (cond, rep, z, coal, mp) in by:
                    pairs.setdefault((row, a, z), []).append(ns - by[(cond, rep, z, coal, mp)])
            # Along the paired dimensions: each coalesce against the module's own, each
            # min_partial against the condition's default, same arm, same repetition.
            c0, m0 = ctx[row]["coal_default"], ctx[row]["mp_default"]
            if coal != c0 and (cond, rep, path, c0, mp) in by:
                dims.setdefault(("coal", label(b["boot"], cond), path, f"{coal} - {c0}", mp), []).append(
                    ns - by[(cond, rep, path, c0, mp)])
            if m0 and mp != m0 and (cond, rep, path, coal, m0) in by:
                dims.setdefault(("mp", label(b["boot"], cond), path, coal, f"{mp} - {m0}"), []).append(
                    ns - by[(cond, rep, path, coal, m0)])
    diffs = {}
    for (row, a, z), d in pairs.items():
        s = spread(d)
        cost = statistics.mean([cells[(row, a)]["ns_per_packet"]["median"], cells[(row, z)]["ns_per_packet"]["median"]])
        why = ctx[row]["nodefer_why"] if "napi-nodefer" in (a, z) else None
        diffs[(row, a, z)] = {"diff_ns": s, "resolution_ns": round(s["max"] - s["min"], 2),
                              "limit_ns": round(max(RESOLUTION_NS, RESOLUTION_SHARE * cost), 2),
                              "verdict": verdict(s, a, why)}
    dim = {k: {"diff_ns": spread(d), "resolution_ns": round(max(d) - min(d), 2)} for k, d in dims.items()}
    return rows, cells, diffs, dim, ctx


def verdict(s, first, cannot=None):
    """The 2015 rule: a difference within the run-to-run noise is no difference.  Paired, the
    noise is the spread of the differences: when it reaches across zero, the repetitions do not
    agree on a sign.  A condition that cannot show the effect is called that, whatever it
    measured."""
    if cannot:
        return cannot
    if s["min"] <= 0 <= s["max"]:
        return "no difference"
    return f"{first} {'cheaper' if s['median'] < 0 else 'dearer'} by {abs(s['median']):.1f} ns"


def slab_counts(stat_boots):
    """Per row, arm and cache: each counter per forwarded packet, the median over the
    repetitions of the stats boots."""
    per = {}
    for b in stat_boots:
        fwd = {(r["cond"], r["rep"], r["path"], r["coal"], r["mp"]): r["forwarded"] for r in b["runs"]}
        for s in b["slab"]:
            n = fwd[(s["cond"], s["rep"], s["path"], s["coal"], s["mp"])]
            key = ((label(b["boot"], s["cond"]), s["coal"], s["mp"]), s["path"], s["cache"])
            for k, v in s["counts"].items():
                per.setdefault(key, {}).setdefault(k, []).append(v / n)
    return {k: {c: round(statistics.median(v), 4) for c, v in sorted(cs.items())}
            for k, cs in per.items()}


def mp_inert(slab, head, row, mp0):
    """Whether min_partial cannot act in this row: at the condition's default min_partial no
    slab of the head cache went to or came from the page allocator on any arm (alloc_slab and
    free_slab under one per 10000 packets), so keeping more partial slabs changes nothing.
    None where no stats boot counted the row."""
    c, coal, _ = row
    seen = [cs for (r, _, cache), cs in slab.items() if r == (c, coal, mp0) and cache == head]
    if not seen:
        return None
    return all(cs.get("alloc_slab", 0) < 1e-4 and cs.get("free_slab", 0) < 1e-4 for cs in seen)


def dim_verdicts(dim, slab, ctx, rows, boots):
    out = []
    head = {b["boot"]: b["setup"]["cache"] for b in boots}
    order = {c: i for i, c in enumerate(dict.fromkeys(r[0] for r in rows))}
    for (kind, c, path, x, y), d in sorted(dim.items(), key=lambda kv: (
            kv[0][0] != "coal", order.get(kv[0][1], 99), ARMS.index(kv[0][2]), natural(kv[0][3]), natural(kv[0][4]))):
        row = next(r for r in rows if r[0] == c)
        why, inert = None, False
        if kind == "mp":
            inert = mp_inert(slab, head.get(ctx[row]["boot"]["boot"], "skbuff_head_cache"), (c, x, y),
                             ctx[row]["mp_default"])
            if inert:
                why = (f"inert: no slab of the head cache went to or from the page allocator at "
                       f"min_partial {ctx[row]['mp_default']} (stats boot)")
        v = verdict(d["diff_ns"], f"min_partial {y.split(' ')[0]}" if kind == "mp" else f"tx_coalesce {x.split(' ')[0]}", why)
        if kind == "mp" and inert is None:
            v += " (inertness not checked: no stats boot counted this row)"
        out.append({"dimension": "min_partial" if kind == "mp" else "tx_coalesce", "cond": c, "path": path,
                    "coal": x, "mp": y, **d, "verdict": v})
    return out


def against_default(rows, cells, boots):
    """Each condition against its baseline, arm by arm, at the module's tx_coalesce and the
    default min_partial (different runs, unpaired: the noise is the larger of the two min-max
    spreads)."""
    out, conds = [], {}
    for row in rows:
        conds.setdefault(row[0], [])
        conds[row[0]].append(row)
    # Each condition's row at the module's tx_coalesce and the default min_partial, or its first.
    for c, rs in conds.items():
        b = next(b for b in boots if any(label(b["boot"], r["cond"]) == c for r in b["runs"]))
        cond = next(r["cond"] for r in b["runs"] if label(b["boot"], r["cond"]) == c)
        want = (b["setup"].get("coal_was", "128"), b["knobs"].get((cond, "min_partial"), {}).get("was", "-"))
        conds[c] = next((r for r in rs if (r[1], r[2]) == want), rs[0])
    merged = {b["boot"]: b["setup"]["merged"] == "1" for b in boots}
    for c, row in conds.items():
        base = baseline(c)
        if c == base or base not in conds:
            continue
        brow = conds[base]
        for p in ARMS:
            if (row, p) not in cells or (brow, p) not in cells:
                continue
            x, y = cells[(row, p)]["ns_per_packet"], cells[(brow, p)]["ns_per_packet"]
            d = x["median"] - y["median"]
            noise = max(x["max"] - x["min"], y["max"] - y["min"])
            v = "no difference" if abs(d) <= noise else f"{d:+.1f} ns"
            if c.startswith("slab_nomerge") and not merged.get("default", True):
                v += " (inert for skbuff_head_cache, never merged: only other caches can differ)"
            out.append({"cond": row_name(row), "against": row_name(brow), "path": p, "diff_ns": round(d, 2),
                        "noise_ns": round(noise, 2), "verdict": v})
    return out


def targets_of(kernel, rows, cells, diffs, ctx):
    major = int(kernel.split(".")[0])
    res = [(row, a, z, d) for (row, a, z), d in diffs.items()]
    over = [(row, a, z, d) for row, a, z, d in res if d["resolution_ns"] >= d["limit_ns"]]
    widest = max(res, key=lambda x: x[3]["resolution_ns"] / x[3]["limit_ns"]) if res else None
    one_cpu = [r for r in rows if int(ctx[r]["boot"]["setup"]["cpus"]) == 1]
    sn = {row: diffs[(row, "shim", "napi")] for row in rows if (row, "shim", "napi") in diffs}
    cross = [r for r in sn if r[0] == "smp-cross"]
    others = [r for r in sn if r[0] != "smp-cross"]
    sb = [(row, a, z, d) for (row, a, z), d in diffs.items() if "slab-bulk" in (a, z) and "any" not in (a, z)]
    t = [
        {"target": f"resolution: every paired difference resolved to under {RESOLUTION_NS:.0f} ns, "
                   f"or {RESOLUTION_SHARE:.0%} of the per-packet cost where that is larger",
         "result": ("no pairs" if not widest else
                    f"widest against its limit: {row_name(widest[0])}, {widest[1]} - {widest[2]}: "
                    f"{widest[3]['resolution_ns']:.1f} ns (limit {widest[3]['limit_ns']:.1f})")
                   + (f"; {len(over)} of {len(res)} over: " + ", ".join(
                       f"{row_name(r)} {a}-{z} {d['resolution_ns']:.1f}/{d['limit_ns']:.1f}" for r, a, z, d in over[:6])
                      if over else ""),
         "met": bool(res) and not over},
        {"target": f"rate: at least {RATE_PPS / 1e6:.0f} Mpps forwarded on one CPU, every arm",
         "result": ("slowest: " + min((f"{cells[(r, p)]['pps']['median'] / 1e6:.3f} Mpps, {p} in {row_name(r)}"
                                       for r in one_cpu for p in ARMS if (r, p) in cells),
                                      key=lambda x: float(x.split(" ")[0])) if one_cpu else "no one-CPU condition"),
         "met": all(cells[(r, p)]["pps"]["median"] >= RATE_PPS for r in one_cpu for p in ARMS if (r, p) in cells)},
    ]
    if major < 7:
        t.append({"target": "shim cheaper than napi_consume_skb() in cross (7.3), resolved",
                  "result": f"n/a: {kernel}'s UML has no SMP, so no cross condition", "met": None})
    else:
        t.append({"target": "shim cheaper than napi_consume_skb() in cross, resolved (the range of "
                            "the paired difference stays below zero)",
                  "result": ", ".join(f"{row_name(r)}: {sn[r]['diff_ns']['median']:+.1f} "
                                      f"({sn[r]['diff_ns']['min']:+.1f} to {sn[r]['diff_ns']['max']:+.1f}) ns"
                                      for r in cross) or "cross was not measured",
                  "met": bool(cross) and all(sn[r]["diff_ns"]["max"] < 0 for r in cross)})
    dearer = [r for r in others if sn[r]["diff_ns"]["min"] > 0]
    t.append({"target": "shim no dearer than napi_consume_skb() in every other condition "
                        "(the range reaches zero or below)",
              "result": (f"dearer in {len(dearer)} of {len(others)} rows" +
                         (": " + ", ".join(f"{row_name(r)} ({sn[r]['diff_ns']['median']:+.1f} ns)" for r in dearer)
                          if dearer else "")),
              "met": bool(others) and not dearer})
    if sb:
        by = {}
        for row, a, z, d in sb:
            by.setdefault(f"{a} - {z}", []).append(d["diff_ns"])
        place = lambda ds: (f"below zero in {sum(d['max'] < 0 for d in ds)}, above in {sum(d['min'] > 0 for d in ds)}, "
                            f"across in {sum(d['min'] <= 0 <= d['max'] for d in ds)} of {len(ds)} rows, medians "
                            f"{min(d['median'] for d in ds):+.1f} to {max(d['median'] for d in ds):+.1f} ns")
        t.append({"target": "slab-bulk placed against the shim and napi_consume_skb() (a placement, not pass/fail)",
                  "result": "; ".join(f"{k}: {place(ds)}" for k, ds in by.items()),
                  "met": None, "kind": "placement"})
    return t


def markdown(doc, rows, cells, diffs, dims, vs_default, slab, ctx):
    kernel, setup0 = doc["series"], doc["boots"][0]["setup"]
    major = int(kernel.split(".")[0])
    fmt = lambda s, d=1: f"{s['median']:.{d}f} ({s['min']:.{d}f}-{s['max']:.{d}f})"
    absent = {}
    for b in doc["boots"]:
        for a, why in b["absent"].items():
            absent[a] = why.replace("-", " ")
        if not b["new"]:
            for a in set(ARMS) - set(OLD_ARMS):
                absent.setdefault(a, "not in this log (fwd_bench.sh before five arms)")
    arm_of = lambda row: set(p for (r, p) in cells if r == row)
    dash = lambda p: f"- ({absent.get(p, 'not run')})"
    md = [f"### fwd: IPv4 forwarding through fwdnic, per free path at TX completion (uml, {kernel})", "",
          "fwdnic (drivers/net/fwdnic) receives pktgen's 60-byte UDP single flow on one port, builds "
          "each skb with napi_build_skb() on a page fragment as ixgbe does, and the stack forwards "
          "it (ip_forward, static neighbour, rp_filter 0, ip_early_demux 0, GRO off) to the other "
          "port, whose TX cleanup (ixgbe_clean_tx_irq()'s shape, a TX interrupt per tx_coalesce "
          "descriptors) frees it through one of five arms: " + "; ".join(f"`{p}` {ARM_NAMES[p]}" for p in ARMS) + ".",
          "",
          f"kernel {doc['kernel']}, config {doc['config']}; host CPU: {doc['cpu']}. "
          f"{setup0['runs']} repetitions per condition; a cell (an arm at one tx_coalesce and one "
          f"min_partial) runs {setup0['packets']} frames per repetition in {setup0['rounds']} bursts; "
          "each round runs every cell once, the arms of one tx_coalesce and min_partial back to back, "
          "every order rotating from round to round. ns/packet: a repetition's time over its "
          "forwarded frames (with two flows, both directions' frames), median (min-max) over the "
          "repetitions; Mpps its inverse. `coal`: fwdnic's tx_coalesce; `mp`: skbuff_head_cache's "
          "min_partial.", ""]
    for b in doc["boots"]:
        s = b["setup"]
        tune = "; ".join(f"{c}: " + ", ".join(f"{k} {v}" for k, v in t.items()) for c, t in b["tune"].items())
        knobs = "; ".join(
            f"{k[1]}{' (' + k[0] + ')' if k[0] else ''}: " + (f"{v.get('values', v.get('value'))} "
                                                              f"{'taken' if v.get('taken') == '1' else 'REFUSED'}, was {v.get('was')}")
            for k, v in b["knobs"].items())
        md.append(f"- boot `{b['boot']}`: {s['cpus']} CPU(s), fwdnic parameters "
                  f"{'none' if s['args'] == '-' else s['args']}, qdisc {s.get('qlen', '1000')}; arms "
                  f"{', '.join(b['arms'])}" + (f" (absent: {', '.join(f'{a}: {w}' for a, w in b['absent'].items())})"
                                                if b["absent"] else "")
                  + f"; tx_coalesce {s.get('coal', '-')}; skbuff_head_cache "
                  f"{'merged into ' + s['cache'] if s['merged'] == '1' else 'a cache of its own'} "
                  f"(object {s['object_size']} B, {s['objs_per_slab']} per slab, order {s['order']}, "
                  f"min_partial {s['min_partial']}, cpu_partial {s['cpu_partial']}, sheaf_capacity "
                  f"{s['sheaf_capacity']}); skb_defer_max {s.get('skb_defer_max', '-')}"
                  f"{'; knobs: ' + knobs if knobs else ''}{'; conditions set: ' + tune if tune else ''}")
    md += ["", "| condition | coal | mp | " + " | ".join(f"{p} ns/packet" for p in ARMS) + " |",
           "|---|---|---|" + "---|" * len(ARMS)]
    for row in rows:
        have = arm_of(row)
        md.append(f"| {row[0]} | {row[1]} | {row[2]} | " + " | ".join(
            fmt(cells[(row, p)]["ns_per_packet"]) if p in have else dash(p) for p in ARMS) + " |")
    md += ["", "Mpps (median):", "", "| condition | coal | mp | " + " | ".join(ARMS) + " |",
           "|---|---|---|" + "---|" * len(ARMS)]
    for row in rows:
        have = arm_of(row)
        md.append(f"| {row[0]} | {row[1]} | {row[2]} | " + " | ".join(
            f"{cells[(row, p)]['pps']['median'] / 1e6:.3f}" if p in have else "-" for p in ARMS) + " |")
    md += ["", "Paired differences between arms, ns per packet, within each repetition (first minus "
           "second), median (min-max). Rule, as in 2015: a difference within the run-to-run noise is "
           "no difference; paired, that is a min-max range that reaches across zero. Resolution: the "
           f"width of that range (target: under {RESOLUTION_NS:.0f} ns, or {RESOLUTION_SHARE:.0%} of "
           "the per-packet cost where that is larger).", "",
           "| condition | coal | mp | " + " | ".join(f"{a} - {z}" for a, z in PAIRS) + " | resolution (widest) / limit |",
           "|---|---|---|" + "---|" * (len(PAIRS) + 1)]
    for row in rows:
        ds = [diffs.get((row, a, z)) for a, z in PAIRS]
        have = [d for d in ds if d]
        worst = max(have, key=lambda d: d["resolution_ns"] / d["limit_ns"]) if have else None
        md.append(f"| {row[0]} | {row[1]} | {row[2]} | " + " | ".join(fmt(d["diff_ns"]) if d else "-" for d in ds)
                  + (f" | {worst['resolution_ns']:.1f} / {worst['limit_ns']:.1f} ns |" if worst else " | - |"))
    md += ["", "Verdicts of those differences (\"cannot show\": the condition cannot produce the "
           "effect, whatever it measured; \"no difference\": it could, and the repetitions do not "
           "agree on a sign):", "",
           "| condition | coal | mp | " + " | ".join(f"{a} vs {z}" for a, z in PAIRS) + " |",
           "|---|---|---|" + "---|" * len(PAIRS)]
    for row in rows:
        md.append(f"| {row[0]} | {row[1]} | {row[2]} | " + " | ".join(
            diffs[(row, a, z)]["verdict"] if (row, a, z) in diffs else
            dash(a if a not in arm_of(row) else z) for a, z in PAIRS) + " |")
    if dims:
        md += ["", "The paired dimensions, ns per packet, same arm, same repetition: each tx_coalesce "
               "against the module's own, each min_partial against the condition's default; "
               "\"inert\": the knob acts on nothing this benchmark does (the stats boot shows no slab "
               "going to or from the page allocator at the default):", "",
               "| dimension | condition | arm | coal | mp | difference | resolution | verdict |",
               "|---|---|---|---|---|---|---|---|"]
        for d in dims:
            md.append(f"| {d['dimension']} | {d['cond']} | {d['path']} | {d['coal']} | {d['mp']} | "
                      f"{fmt(d['diff_ns'])} | {d['resolution_ns']:.1f} | {d['verdict']} |")
    if vs_default:
        md += ["", "Each condition against its baseline, arm by arm, at the module's tx_coalesce and "
               "the default min_partial (other runs, so unpaired: the noise is the larger of the two "
               "min-max spreads; slab_nomerge is another boot; noinline another boot of the same kernel "
               "built without CONFIG_RUST_INLINE_HELPERS, so what it differs by is the helpers' calls; "
               "the SMP kernel's conditions against "
               "its own one-CPU one, per forwarded frame):", "",
               "| condition | against | arm | ns/packet difference | noise | verdict |",
               "|---|---|---|---|---|---|"]
        for v in vs_default:
            md.append(f"| {v['cond']} | {v['against']} | {v['path']} | {v['diff_ns']:+.1f} | "
                      f"{v['noise_ns']:.1f} | {v['verdict']} |")
    counted = sum(b["counted"] for b in doc["boots"] + doc["stats_boots"])
    md += ["", f"Independent counts: {counted} bursts checked, each forwarded count equal to its "
           "ForwDatagrams (/proc/net/snmp), fwdnic1's tx_packets and fwdnic0's rx_packets (with two "
           "flows: each port's rx_packets equal to the other's tx_packets, and their sum), with no "
           "rx_dropped or tx_dropped on either port, and the shim's own count "
           "(ixgbe_bulk_shim.batches) of the skbs its bulk frees freed equal to the frames of each "
           "shim burst and 0 in every other (a mismatch fails the collection)."
           + (" Some boots' logs predate the counts: their cells show \"-\"." if any(not b["new"] for b in doc["boots"]) else ""),
           "", "Pages the page allocator handed out per forwarded packet (the sum of /proc/vmstat's "
           "pgalloc_*, in base pages: an order-3 page counts 8; page fragments themselves have no "
           "counter, only the pages they are cut from), median over the repetitions; the shim's skbs "
           "per bulk free; the skbs 7.x's napi_consume_skb() hands back to the allocating CPU: "
           + ("no counter: 7.3 exposes none for skb_attempt_defer_free() (no SNMP/netstat MIB, no "
              "/proc/net/softnet_stat column, no tracepoint), so it is not measured, only inferred "
              "from napi against napi-nodefer" if major >= 7 else
              f"none: {kernel}'s napi_consume_skb() frees on the spot"), "",
           "| condition | coal | mp | " + " | ".join(f"{p} pages/packet" for p in ARMS) + " | shim skbs/call |",
           "|---|---|---|" + "---|" * (len(ARMS) + 1)]
    for row in rows:
        def pg(p):
            c = cells.get((row, p))
            return f"{c['pages_per_packet']['median']:.4f}" if c and "pages_per_packet" in c else "-"
        spc = cells.get((row, "shim"), {}).get("skbs_per_call")
        md.append(f"| {row[0]} | {row[1]} | {row[2]} | " + " | ".join(pg(p) for p in ARMS)
                  + f" | {spc if spc is not None else '-'} |")
    md += ["", "Targets on this host:", ""]
    for t in doc["targets"]:
        state = "n/a" if t["met"] is None else "met" if t["met"] else "MISSED"
        md.append(f"- {t['target']}: {t['result']} ({state})")
    if slab:
        units = SLUB_UNITS[7 if major >= 7 else 6]
        md += ["", "Slab counters per forwarded packet (CONFIG_SLUB_STATS, the same runs in a boot of "
               "its own, never timed; median over its repetitions), for every cache whose counters moved "
               f"by one per 100 frames or more. What each counts, in {kernel}'s mm/slub.c: "
               + "; ".join(f"{k} {v}" for k, v in sorted(units.items())
                           if any(cs.get(k, 0) >= 0.001 for cs in slab.values())) + ".", ""]
        counters = sorted({k for cs in slab.values() for k in cs})
        keep = [k for k in counters if any(cs.get(k, 0) >= 0.001 for cs in slab.values())]
        unit = lambda k: units.get(k, "?").split(" ")[0]
        md += ["| condition | coal | mp | arm | cache | " + " | ".join(f"{k} ({unit(k)})" for k in keep) + " |",
               "|---|---|---|---|---|" + "---|" * len(keep)]
        order = {c: i for i, c in enumerate(dict.fromkeys(r[0] for r in rows))}
        for (row, p, cache), cs in sorted(slab.items(), key=lambda kv: (
                order.get(kv[0][0][0], 99), natural(kv[0][0][1]), natural(kv[0][0][2]), ARMS.index(kv[0][1]), kv[0][2])):
            md.append(f"| {row[0]} | {row[1]} | {row[2]} | {p} | {cache} | "
                      + " | ".join(f"{cs.get(k, 0):.3f}" for k in keep) + " |")
    md += ["", "The 2015 figures (one CPU of an i7-4790K at 4 GHz, ixgbe, Linux 4.1-mmotm; "
           "\"slab-nomerge (was Re: [git pull] device mapper changes for 4.3)\", dm-devel, September 2015):", "",
           "| 2015 condition | pps | ns/packet |", "|---|---|---|"]
    for name, pps in ORIGINAL:
        md.append(f"| {name} | {pps:,} | {1e9 / pps:.1f} |")
    return "\n".join(md) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boot", action="append", default=[], metavar="NAME=LOG")
    ap.add_argument("--stats", action="append", default=[], metavar="NAME=LOG")
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--cpu", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    pairs = lambda xs: [tuple(x.split("=", 1)) for x in xs]
    for name, _ in pairs(a.boot + a.stats):
        if name not in BOOTS:
            ap.error(f"boot '{name}': one of {', '.join(BOOTS)}")
    if not a.boot:
        ap.error("at least one --boot")
    boots = [parse(n, log) for n, log in pairs(a.boot)]
    stat_boots = [parse(n, log) for n, log in pairs(a.stats)]
    rows, cells, diffs, dim, ctx = timed(boots)
    vs_default = against_default(rows, cells, boots)
    slab = slab_counts(stat_boots)
    dims = dim_verdicts(dim, slab, ctx, rows, boots)
    with open(a.config, "rb") as f:
        cfg = hashlib.sha256(f.read()).hexdigest()[:16]
    keep = ("boot", "setup", "tune", "arms", "absent", "new", "counted")
    doc = {"stamp": datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ"),
           "bench": "fwd", "where": "uml", "series": a.kernel, "kernel": boots[0].get("kernel"),
           "config": cfg, "cpu": a.cpu,
           "boots": [{**{k: b[k] for k in keep}, "knobs": [{"cond": c, **v} for (c, _), v in b["knobs"].items()]}
                     for b in boots],
           "stats_boots": [{**{k: b[k] for k in keep}, "knobs": [{"cond": c, **v} for (c, _), v in b["knobs"].items()]}
                           for b in stat_boots],
           "records": [{"cond": r[0], "coal": r[1], "mp": r[2], "path": p, **cells[(r, p)]}
                       for r in rows for p in ARMS if (r, p) in cells],
           "differences": [{"cond": r[0], "coal": r[1], "mp": r[2], "first": x, "second": z, **diffs[(r, x, z)]}
                           for r in rows for x, z in PAIRS if (r, x, z) in diffs],
           "dimensions": dims,
           "against_default": vs_default,
           "slab_per_packet": [{"cond": r[0], "coal": r[1], "mp": r[2], "path": p, "cache": k, "counts": v,
                                "units": {c: SLUB_UNITS[7 if int(a.kernel.split('.')[0]) >= 7 else 6].get(c, "?")
                                          for c in v}}
                               for (r, p, k), v in sorted(slab.items())],
           "head_cache": {b["boot"]: b["setup"]["cache"] for b in boots},
           "targets": targets_of(a.kernel, rows, cells, diffs, ctx)}
    # The markdown reads the parsed boots (absent arms, counts) as well as the document.
    md = markdown({**doc, "boots": boots, "stats_boots": stat_boots}, rows, cells, diffs, dims, vs_default, slab, ctx)
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, f"fwd-uml-{a.kernel}")
    with open(f"{base}.json", "w") as f:
        json.dump(doc, f, indent=1)
    with open(f"{base}.md", "w") as f:
        f.write(md)
    print(md)
    print(f"(written: {base}.json, {base}.md)\n")


if __name__ == "__main__":
    main()
