#!/usr/bin/env python3
"""Summarises `nvcc -Xptxas -v` output (stdin): one line per kernel or
non-inlined function with registers, stack frame and spill bytes.
Optional argument: a regular expression the (mangled) name must match."""
import re
import sys

pat = re.compile(sys.argv[1]) if len(sys.argv) > 1 else None
props = {}
regs = {}
cur = None
for line in sys.stdin:
    m = re.search(r"Compiling entry function '([^']+)'", line)
    if m:
        cur = m.group(1)
        continue
    m = re.search(r"Function properties for (\S+)", line)
    if m:
        cur = m.group(1)
        continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and cur:
        props[cur] = tuple(int(x) for x in m.groups())
        continue
    m = re.search(r"Used (\d+) registers", line)
    if m and cur:
        regs[cur] = int(m.group(1))
for name in sorted(set(props) | set(regs)):
    if pat and not pat.search(name):
        continue
    st, ss, sl = props.get(name, (0, 0, 0))
    r = regs.get(name, "-")
    print(f"{str(r):>4} regs {st:5d} B stack {ss:5d} B spill st {sl:5d} B spill ld  {name}")
