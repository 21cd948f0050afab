#!/usr/bin/env python3
"""Splits a kernel build's rustc, clippy or rustdoc output into the diagnostics of the project's
code and the others, for `make check` (scripts/check.sh).

    clippy_ours.py BUILD_DIR < build-output

Prints every diagnostic located in the project's files, then one line per diagnostic located
elsewhere (the upstream kernel's own code, which the gate does not judge), and exits 1 if there
is any of the project's. A diagnostic is located by its first `--> path:line:col`; one without
a location (a build error, say) counts as the project's. In `rust/doctests_kernel_generated.rs`
a line belongs to the doctest whose `.location:` comment last precedes it (the header that the
generator writes before the first doctest is upstream's).
"""

import re
import sys

OURS = re.compile(
    r"(^|/)(rust/kernel/slab_bulk/|rust/kernel/qmempool/|rust/alf_queue/|rust/kernel/\.\./alf_queue/"
    r"|samples/rust/|drivers/net/ixgbe_bulk_shim/)"
)
START = re.compile(r"^(warning|error)(\[\w+\])?: ")
WHERE = re.compile(r"^\s*--> (\S+):(\d+):\d+")
SUMMARY = re.compile(r"^(warning|error): (\d+ warnings? emitted|aborting due to)")
DOCTESTS = "rust/doctests_kernel_generated.rs"
DOCTEST_LOCATION = re.compile(r"\.location: (\S+):\d+")


def doctest_origins(build_dir):
    """For each line of the generated doctests file, the source file of its doctest or None."""
    origins, current = [None], None
    try:
        with open(f"{build_dir}/{DOCTESTS}", encoding="utf-8", errors="replace") as f:
            for line in f:
                m = DOCTEST_LOCATION.search(line)
                if m:
                    current = m.group(1)
                origins.append(current)
    except FileNotFoundError:
        pass
    return origins


def blocks(lines):
    """The diagnostics in `lines`, each a list of lines, without the compiler's summaries."""
    block = None
    for line in lines:
        if START.match(line):
            if block:
                yield block
            block = None if SUMMARY.match(line) else [line]
        elif block is not None:
            if line.strip() == "" or not (line[0].isspace() or line[0] in "|=.-:"):
                yield block
                block = None
            else:
                block.append(line)
    if block:
        yield block


def location(block, origins):
    for line in block:
        m = WHERE.match(line)
        if m:
            path, lineno = m.group(1), int(m.group(2))
            if path.endswith(DOCTESTS):
                return origins[lineno] if lineno < len(origins) else None
            return path
    return ""


def main():
    origins = doctest_origins(sys.argv[1])
    ours, others = [], []
    for block in blocks(sys.stdin.read().splitlines()):
        where = location(block, origins)
        (ours if where == "" or (where and OURS.search(where)) else others).append((where, block))
    for _, block in ours:
        print("\n".join(block))
    for where, block in others:
        print(f"not ours, not judged: {block[0]} ({where or 'doctest generator header'})")
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
