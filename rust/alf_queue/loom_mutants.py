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

# name -> (file, exact text, replacement, what it removes)
MUTANTS = {
    "prod_r0": ("enqueue.rs",
                "self.prod.tail.store(next, Ordering::Release);",
                "self.prod.tail.store(next, Ordering::Relaxed);",
                "R0 of the producer commit (prod.tail store) Release -> Relaxed"),
    "cons_r0": ("dequeue.rs",
                "self.cons.tail.store(next, Ordering::Release);",
                "self.cons.tail.store(next, Ordering::Relaxed);",
                "R0 of the consumer commit (cons.tail store) Release -> Relaxed"),
    "cons_a1": ("dequeue.rs",
                "let prod_tail = self.prod.tail.load(Ordering::Acquire);",
                "let prod_tail = self.prod.tail.load(Ordering::Relaxed);",
                "A1 of the multi-consumer reserve (prod.tail load) Acquire -> Relaxed"),
    "prod_a1": ("enqueue.rs",
                "let cons_tail = self.cons.tail.load(Ordering::Acquire);",
                "let cons_tail = self.cons.tail.load(Ordering::Relaxed);",
                "A1 of the multi-producer reserve (cons.tail load) Acquire -> Relaxed"),
    "spsc_cons_a1": ("dequeue.rs",
                     "                prod_tail = self.prod.tail.load(Ordering::Acquire);",
                     "                prod_tail = self.prod.tail.load(Ordering::Relaxed);",
                     "A1 of the single-consumer reserve (prod.tail reload) Acquire -> Relaxed"),
    "spsc_prod_a1": ("enqueue.rs",
                     "                cons_tail = self.cons.tail.load(Ordering::Acquire);",
                     "                cons_tail = self.cons.tail.load(Ordering::Relaxed);",
                     "A1 of the single-producer reserve (cons.tail reload) Acquire -> Relaxed"),
    "prod_a3": ("enqueue.rs",
                "wait_for(&self.prod.tail, head, Ordering::Acquire);",
                "wait_for(&self.prod.tail, head, Ordering::Relaxed);",
                "A3, the producer commit wait (prod.tail load) Acquire -> Relaxed"),
    "cons_a3": ("dequeue.rs",
                "wait_for(&self.cons.tail, head, Ordering::Acquire);",
                "wait_for(&self.cons.tail, head, Ordering::Relaxed);",
                "A3, the consumer commit wait (cons.tail load) Acquire -> Relaxed"),
    "prod_a0r1": ("enqueue.rs",
                  "let mut head = self.prod.head.load(Ordering::Acquire);",
                  "let mut head = self.prod.head.load(Ordering::Relaxed);",
                  "A0 of the producer reserve (prod.head load) Acquire -> Relaxed"),
    "cons_a0r1": ("dequeue.rs",
                  "let mut head = self.cons.head.load(Ordering::Acquire);",
                  "let mut head = self.cons.head.load(Ordering::Relaxed);",
                  "A0 of the consumer reserve (cons.head load) Acquire -> Relaxed"),
    "prod_nowait": ("enqueue.rs",
                    "wait_for(&self.prod.tail, head, Ordering::Acquire);",
                    "",
                    "the producer commit wait removed"),
    "cons_nowait": ("dequeue.rs",
                    "wait_for(&self.cons.tail, head, Ordering::Acquire);",
                    "",
                    "the consumer commit wait removed"),
    "prod_offbyone": ("enqueue.rs",
                      "let free = Self::CAP.wrapping_add(cons_tail).wrapping_sub(head);",
                      "let free = Self::CAP.wrapping_add(1).wrapping_add(cons_tail).wrapping_sub(head);",
                      "the (multi-producer) free-space check off by one"),
}


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
    names = sys.argv[1:] or list(MUTANTS)
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
            fname, old, new, what = MUTANTS[name]
            path = os.path.join(crate, fname)
            with open(path) as f:
                orig = f.read()
            if old not in orig:
                print(f"{name}: anchor not found in {fname}")
                return 1
            with open(path, "w") as f:
                f.write(orig.replace(old, new))
            try:
                ok, secs, failed, out = run(src, target)
            finally:
                with open(path, "w") as f:
                    f.write(orig)
            if ok:
                missed += 1
                print(f"{name}: MISSED ({secs:.1f} s) -- {what}")
            else:
                kinds = []
                for key in ("Causality violation", "assertion", "leaked", "already released",
                            "deadlock", "maximum number of branches", "never explored"):
                    if key in out:
                        kinds.append(key)
                print(f"{name}: caught ({secs:.1f} s) by {len(failed)} of {len(TESTS)}: "
                      f"{', '.join(failed)} [{'; '.join(kinds) or 'other failure'}] -- {what}")
        return 1 if missed else 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
