#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a function of a kernel object costs in instructions and calls, from its machine code.

usage: calls.py OBJECT [REGEX]

OBJECT is a relocatable object or module (.o, .ko); for each function whose demangled name
matches REGEX (all by default) it prints the instruction count, the calls it makes (tail jumps
through a register included) and their targets, each with how often it appears. A call's target
is the relocation on it; in UML's large code model (movabs $sym,%reg; call *%reg) it is the
symbol last loaded into that register, followed through register-to-register moves. Calls to
rust_helper_* are the ones CONFIG_RUST_INLINE_HELPERS removes. Run inside the toolchain root
(llvm-objdump), as make bench's scripts do."""

import collections
import re
import subprocess
import sys

SECTION = re.compile(r"^Disassembly of section (\S+):$")
FUNC = re.compile(r"^([0-9a-f]+) <(.+)>:$")
INSN = re.compile(r"^\s+[0-9a-f]+:\s+(\S+)\s*(.*)$")
RELOC = re.compile(r"^\s+[0-9a-f]+:\s+R_X86_64_\S+\s+(.+?)\s*$")


def short(name):
    """A demangled Rust name without its crate hashes and generic arguments."""
    name = re.sub(r"\[[0-9a-f]{16}\]", "", name)
    name = re.sub(r"::h[0-9a-f]{16}$", "", name)
    while True:
        n = re.sub(r"<[^<>]*>", "<..>", name)
        if n == name:
            return name.replace("<..>", "")
        name = n


def parse(obj):
    out = subprocess.run(["llvm-objdump", "-dr", "--demangle", "--no-show-raw-insn", obj],
                         capture_output=True, text=True, check=True).stdout
    funcs, at = {}, {}
    cur = sec = None
    for line in out.splitlines():
        if m := SECTION.match(line):
            sec = m[1]
            continue
        if m := FUNC.match(line):
            cur = short(m[2])
            at[(sec, int(m[1], 16))] = cur
            funcs[cur] = {"insns": 0, "targets": [], "regs": {}, "pending": None}
            continue
        if cur is None:
            continue
        f = funcs[cur]
        if m := RELOC.match(line):
            if f["pending"] == "call":
                f["targets"][-1] = m[1]
            elif f["pending"]:
                f["regs"][f["pending"]] = m[1]
            f["pending"] = None
            continue
        if not (m := INSN.match(line)):
            continue
        op, args = m[1], m[2].split("#")[0].strip()
        f["insns"] += 1
        f["pending"] = None
        if op.startswith("movabs"):
            dst = args.split(",")[-1].strip()
            f["regs"].pop(dst, None)
            f["pending"] = dst
        elif op == "movq" and re.fullmatch(r"%r\w+,\s*%r\w+", args):
            src, dst = (a.strip() for a in args.split(","))
            if src in f["regs"]:
                f["regs"][dst] = f["regs"][src]
            else:
                f["regs"].pop(dst, None)
        if op.startswith("call") or (op.startswith("jmp") and args.startswith("*%")):
            if args.startswith("*%"):
                f["targets"].append(f["regs"].get(args[1:], "(indirect)"))
            else:
                f["targets"].append(args)
                f["pending"] = "call"
    return funcs, at


def resolve(target, at):
    """A relocation against a section (".ltext+0x40") as the function at that offset."""
    if m := re.match(r"^(\.l?text[\w.]*)([+-]0x[0-9a-f]+)?$", target):
        off = int(m[2] or "0", 16)
        for o in (off, off + 4):  # absolute (movabs), or PC-relative with its -4
            if (m[1], o) in at:
                return at[(m[1], o)]
    return short(re.sub(r"-0x4$", "", target))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split("\n\n")[1])
    pat = re.compile(sys.argv[2]) if len(sys.argv) == 3 else None
    funcs, at = parse(sys.argv[1])
    for name, f in funcs.items():
        if pat and not pat.search(name):
            continue
        targets = collections.Counter(resolve(t, at) for t in f["targets"])
        helpers = sum(n for t, n in targets.items() if t.startswith("rust_helper_"))
        print(f"{name}: {f['insns']} instructions, {len(f['targets'])} calls "
              f"({helpers} to rust_helper_*)")
        if targets:
            print("  " + ", ".join(f"{t} x{n}" for t, n in sorted(targets.items())))


if __name__ == "__main__":
    main()
