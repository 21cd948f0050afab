#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that the loom models bite: weaken one ordering (or break one step) at a time and
expect `tests/loom.rs` to fail.

Each mutant is applied to a copy of the workspace in a temporary directory (the checkout is
never modified) and the loom tests are run there, in release mode, with the preemption bound
of LOOM_MAX_PREEMPTIONS (default: that of tests/loom.rs).

    python3 rust/alf_queue/loom_mutants.py            # all mutants
    python3 rust/alf_queue/loom_mutants.py prod_r0    # some, by name
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The protocol is written once (headtail.rs) for both sides, so a mutant that should hit one
# side only is applied to a copy of the function it changes (`move_head` or `update_tail`),
# renamed, and the calls of that function in ring.rs are pointed at a dispatcher that calls the
# copy on that side and the original on the other. ring.rs calls `move_head` once, in the
# `side!` macro, which implements `Side` for both sides (the side is the macro's `$own`), and
# `update_tail` (but for the single side's in-place commit, `SingleCommit`) as
# `<side>::own(self).update_tail` (the side is `<side>`, a `Side` type or parameter). A mutant
# that should hit only the multi (single) protocol replaces an ordering by
# `if MULTI { ... } else { ... }`.
#
# name -> (side, exact text in headtail.rs, replacement, what it removes)
ACQ = "Ordering::Acquire"
REL = "Ordering::Release"
RLX = "Ordering::Relaxed"
A1 = "let tail = other.load(Ordering::Acquire);"
A1_MULTI = "let tail = other.load(if MULTI { Ordering::Relaxed } else { Ordering::Acquire });"
A1_SINGLE = "let tail = other.load(if MULTI { Ordering::Acquire } else { Ordering::Relaxed });"
R0 = "self.tail.store(next, Ordering::Release);"
A3 = "wait_for(&self.tail, head, Ordering::Acquire);"
A4 = "read_own_tail(&self.tail, head, Ordering::Acquire)"
A0 = "self.head.load(Ordering::Acquire)\n        } else {"
C0 = "let cached = self.other_tail.load(if MULTI {\n                Ordering::Acquire"
C1 = "if MULTI {\n                            Ordering::Release"
STALE = "available.wrapping_sub(n) > size - n"
AVAIL = "capacity.wrapping_add("
POS = "pos.set(next);"
MUTANTS = {}
for side, other in (("prod", "cons"), ("cons", "prod")):
    MUTANTS.update({
        f"{side}_r0": (side, R0, R0.replace(REL, RLX),
                       f"R0 of the {side} commit ({side}.tail store) Release -> Relaxed"),
        f"{side}_a1": (side, A1, A1_MULTI,
                       f"A1 of the multi-{side} reserve ({other}.tail load) Acquire -> Relaxed"),
        f"spsc_{side}_a1": (side, A1, A1_SINGLE,
                            f"A1 of the single-{side} reserve ({other}.tail load) Acquire -> Relaxed"),
        f"{side}_a3": (side, A3, A3.replace(ACQ, RLX),
                       f"A3, the {side} commit wait ({side}.tail load) Acquire -> Relaxed"),
        f"{side}_nowait": (side, A3, "", f"the {side} commit wait removed"),
        f"{side}_a4": (side, A4, A4.replace(ACQ, RLX),
                       f"A4 of the multi-{side} reserve (its own tail, read to skip the commit "
                       "wait) Acquire -> Relaxed"),
        f"{side}_a0r1": (side, A0, A0.replace(ACQ, RLX),
                         f"A0 of the multi-{side} reserve ({side}.head load) Acquire -> Relaxed"),
        f"{side}_c0": (side, C0, C0.replace(ACQ, RLX),
                       f"C0 of the multi-{side} reserve (cached {other}.tail load) Acquire -> Relaxed"),
        f"{side}_c1": (side, C1, C1.replace(REL, RLX),
                       f"C1 of the multi-{side} reserve (cached {other}.tail store) Release -> Relaxed"),
        f"{side}_stale": (side, STALE, "available < n",
                          f"the multi-{side} check for a cached {other}.tail older than its head removed"),
        f"{side}_offbyone": (side, AVAIL, "1u32.wrapping_add(capacity).wrapping_add(",
                             f"the {side} count of available entries off by one"),
        f"spsc_{side}_pos": (side, POS, "let _ = pos;",
                             f"the single-{side} commit no longer records its position"),
    })

# The StampQueue's mutants (stamp.rs), each applied inside one function: name -> (function,
# exact text in it, replacement, what it removes).
S_LOAD = "read_stamp(&slot.stamp, {}, Ordering::Acquire)"
STAMP_MUTANTS = {
    "stamp_s0": ("enqueue", S_LOAD.format("tail"), S_LOAD.format("tail").replace(ACQ, RLX),
                 "S0, the enqueue's stamp load, Acquire -> Relaxed"),
    "stamp_s1": ("enqueue", "store(tail.wrapping_add(1), Ordering::Release)",
                 "store(tail.wrapping_add(1), Ordering::Relaxed)",
                 "S1, the enqueue's stamp store, Release -> Relaxed"),
    "stamp_s2": ("dequeue", S_LOAD.format("head"), S_LOAD.format("head").replace(ACQ, RLX),
                 "S2, the dequeue's stamp load, Acquire -> Relaxed"),
    "stamp_s3": ("dequeue", ".store(head.wrapping_add(Self::CAP), Ordering::Release)",
                 ".store(head.wrapping_add(Self::CAP), Ordering::Relaxed)",
                 "S3, the dequeue's stamp store, Release -> Relaxed"),
    "stamp_prod_nocas": ("enqueue", "self.tail.compare_exchange_weak(",
                         "self::racy_reserve(&self.tail, ",
                         "the enqueue's reservation a load and a store, not a compare-and-swap"),
    "stamp_cons_nocas": ("dequeue", "self.head.compare_exchange_weak(",
                         "self::racy_reserve(&self.head, ",
                         "the dequeue's reservation a load and a store, not a compare-and-swap"),
    "stamp_prod_publish": ("enqueue", "store(tail.wrapping_add(1), Ordering::Release)",
                           "store(tail.wrapping_add(Self::CAP), Ordering::Release)",
                           "the enqueue publishes the slot as emptied, not filled"),
    "stamp_cons_publish": ("dequeue", ".store(head.wrapping_add(Self::CAP), Ordering::Release)",
                           ".store(head.wrapping_add(1), Ordering::Release)",
                           "the dequeue leaves the slot marked full"),
}

# For the `*_nocas` mutants: a reservation by a plain load, a yield (so that loom can run the
# other operation of the side in between) and a store, in place of `compare_exchange_weak`.
RACY_RESERVE = """
#[allow(dead_code)]
fn racy_reserve(
    index: &AtomicU32,
    current: u32,
    new: u32,
    _: Ordering,
    _: Ordering,
) -> Result<u32, u32> {
    let now = index.load(Ordering::Relaxed);
    if now != current {
        return Err(now);
    }
    #[cfg(loom)]
    loom::thread::yield_now();
    index.store(new, Ordering::Relaxed);
    Ok(current)
}
"""

FUNCTIONS = ("move_head", "update_tail")

# The dispatchers: `mutate` (true for the mutant's side) picks the mutated copy of the function.
DISPATCH = {
    "move_head": """
    #[inline(always)]
    pub(crate) unsafe fn move_head_for<const MULTI: bool, const FIXED: bool>(
        &self, mutate: bool, pos: &impl Position, other: &AtomicU32, capacity: u32, size: u32,
        n: usize, trail: u32,
    ) -> (u32, usize, bool) {
        if mutate {
            unsafe { self.move_head_mutant::<MULTI, FIXED>(pos, other, capacity, size, n, trail) }
        } else {
            unsafe { self.move_head::<MULTI, FIXED>(pos, other, capacity, size, n, trail) }
        }
    }
""",
    "update_tail": """
    #[inline(always)]
    pub(crate) fn update_tail_for<const MULTI: bool>(
        &self, mutate: bool, pos: &mut impl Position, head: u32, next: u32, settled: bool,
    ) {
        if mutate {
            self.update_tail_mutant::<MULTI>(pos, head, next, settled)
        } else {
            self.update_tail::<MULTI>(pos, head, next, settled)
        }
    }
""",
}


def mutate(crate, side, old, new):
    """Applies a mutant to the copy of the crate in `crate`; returns an error or None."""
    path = os.path.join(crate, "headtail.rs")
    with open(path) as f:
        src = f.read()
    if old not in src:
        return f"anchor not found in headtail.rs: {old!r}"
    # Copy the function holding the anchor, renamed, with the mutant applied, and make
    # `side`'s calls in ring.rs use the copy.
    for fn in FUNCTIONS:
        m = re.search(r"(?ms)^    pub\(crate\) (unsafe )?fn " + fn + r"\b.*?^    }\n", src)
        if m and old in m.group(0):
            break
    else:
        return f"anchor not inside {' or '.join(FUNCTIONS)}"
    body = m.group(0).replace(f"fn {fn}", f"fn {fn}_mutant", 1).replace(old, new)
    src = (src[:m.end()] + "\n    #[inline(always)]\n" + body + DISPATCH[fn]
           + src[m.end():])
    ring = os.path.join(crate, "ring.rs")
    with open(ring) as f:
        rsrc = f.read()
    short = "Full" if side == "prod" else "Empty"
    if fn == "move_head":
        # The one call, in `side!`: `ring.$own.move_head::<...>(`.
        call = re.compile(r"ring\.\$own\.move_head(::<[^>]*>)\(")
        to = r'ring.$own.move_head_for\1(stringify!($own) == "%s", ' % side
        want = 1
    else:
        # `<side>::own(self).update_tail::<MULTI>(`: the two single operations and the bulk.
        call = re.compile(r"(\w+)::own\(self\)\.update_tail(::<MULTI>)\(")
        to = r"\1::own(self).update_tail_for\2(<\1 as Side<T, N>>::SHORT == Error::%s, " % short
        want = 3
    if len(call.findall(rsrc)) != want:
        return f"not {want} calls of {fn} in ring.rs"
    rsrc = call.sub(to, rsrc)
    with open(ring, "w") as f:
        f.write(rsrc)
    with open(path, "w") as f:
        f.write(src)
    return None


def mutate_stamp(crate, fn, old, new):
    """Applies a StampQueue mutant to stamp.rs in `crate`, inside `fn`; returns an error or
    None."""
    path = os.path.join(crate, "stamp.rs")
    with open(path) as f:
        src = f.read()
    m = re.search(r"(?ms)^    pub fn " + fn + r"\b.*?^    }\n", src)
    if not m:
        return f"no function {fn} in stamp.rs"
    body = m.group(0)
    if body.count(old) != 1:
        return f"anchor not found once in {fn}: {old!r}"
    src = src[:m.start()] + body.replace(old, new) + src[m.end():] + RACY_RESERVE
    with open(path, "w") as f:
        f.write(src)
    return None


def copy_workspace(dst):
    """Copies the workspace manifests and the crate, with alf_queue as the only member.

    The loom tests need neither the twin nor anything else in the tree, so the copy drops the
    `kernel` dev-dependency (the twin) and whatever the other members are doing.
    """
    with open(os.path.join(ROOT, "Cargo.toml")) as f:
        manifest = re.sub(r"(?m)^members = .*$", 'members = ["rust/alf_queue"]', f.read())
    with open(os.path.join(dst, "Cargo.toml"), "w") as f:
        f.write(manifest)
    shutil.copy(os.path.join(ROOT, "Cargo.lock"), dst)
    crate = os.path.join(dst, "rust", "alf_queue")
    shutil.copytree(HERE, crate, ignore=shutil.ignore_patterns("target"))
    with open(os.path.join(crate, "Cargo.toml")) as f:
        manifest = re.sub(r"(?m)^kernel = .*$", "", f.read())
    with open(os.path.join(crate, "Cargo.toml"), "w") as f:
        f.write(manifest)


TESTS = None


def cargo(dst, target, *args):
    env = dict(os.environ, RUSTFLAGS="--cfg loom", CARGO_TARGET_DIR=target, RUST_BACKTRACE="0")
    return subprocess.run(
        ["cargo", "test", "-q", "-p", "alf_queue", "--release", "--test", "loom", *args],
        cwd=dst, env=env, capture_output=True, text=True)


def run(dst, target):
    """Runs every loom test on its own (a failing loom model may abort the whole process)
    and returns (all passed, seconds, failed tests, the failures' output)."""
    global TESTS
    t = time.time()
    p = cargo(dst, target, "--no-run")
    if p.returncode != 0:
        return False, time.time() - t, ["(build)"], p.stdout + p.stderr
    if TESTS is None:
        listing = cargo(dst, target, "--", "--list").stdout
        TESTS = [l.split(":")[0] for l in listing.splitlines() if l.endswith(": test")]
    failed, out = [], ""
    for name in TESTS:
        p = cargo(dst, target, "--", "--exact", name)
        if p.returncode != 0:
            failed.append(name)
            out += p.stdout + p.stderr
    return not failed, time.time() - t, failed, out


def main():
    names = sys.argv[1:] or list(MUTANTS) + list(STAMP_MUTANTS)
    base = tempfile.mkdtemp(prefix="alf_mutants.")
    target = os.path.join(base, "target")
    try:
        src = os.path.join(base, "src")
        os.mkdir(src)
        copy_workspace(src)
        crate = os.path.join(src, "rust", "alf_queue")
        ok, secs, failed, out = run(src, target)
        print(f"baseline: {'pass' if ok else 'FAIL'} ({secs:.1f} s, {len(TESTS or [])} tests)")
        if not ok:
            print(out)
            return 1
        missed = 0
        for name in names:
            saved = {}
            for fname in ("headtail.rs", "ring.rs", "stamp.rs"):
                with open(os.path.join(crate, fname)) as f:
                    saved[fname] = f.read()
            try:
                if name in STAMP_MUTANTS:
                    fn, old, new, what = STAMP_MUTANTS[name]
                    err = mutate_stamp(crate, fn, old, new)
                else:
                    side, old, new, what = MUTANTS[name]
                    err = mutate(crate, side, old, new)
                if err:
                    print(f"{name}: {err}")
                    return 1
                ok, secs, failed, out = run(src, target)
            finally:
                for fname, text in saved.items():
                    with open(os.path.join(crate, fname), "w") as f:
                        f.write(text)
            if failed == ["(build)"]:
                # A mutant that does not compile says nothing about the models: the script's
                # anchors or dispatchers no longer fit the code.
                print(f"{name}: DOES NOT BUILD -- {what}\n{out[-3000:]}")
                return 1
            if ok:
                missed += 1
                print(f"{name}: MISSED ({secs:.1f} s) -- {what}")
            else:
                kinds = []
                # A crash (SIGABRT, SIGSEGV) is a mutant that made the test use memory the
                # protocol had not handed over, e.g. an item read from an empty slot.
                for key in ("Causality violation", "assertion", "leaked", "already released",
                            "deadlock", "maximum number of branches", "never explored",
                            "SIGABRT", "SIGSEGV"):
                    if key in out:
                        kinds.append(key)
                print(f"{name}: caught ({secs:.1f} s) by {len(failed)} of {len(TESTS)}: "
                      f"{', '.join(failed)} [{'; '.join(kinds) or 'other failure'}] -- {what}")
        return 1 if missed else 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
