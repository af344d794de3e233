#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Which file of the driver calls which, from the built objects' symbols.

    tools/layers.py [DIR]      (DIR: drivers, after make)

For each drivers/vhca_X.o, the other files whose global symbols (functions
and data: an ops table that names a function counts) it uses, with how
many; then the groups of files that call each other in a loop, which a
layered driver has none of.  Static inline functions in headers are not
seen: calling one is the caller's own code.
"""
import collections
import glob
import os
import subprocess
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "drivers"
objs = sorted(glob.glob(os.path.join(d, "vhca_*.o")))
if not objs:
    sys.exit("layers.py: no %s/vhca_*.o: run make first" % d)
defs, uses = {}, collections.defaultdict(set)
for o in objs:
    f = os.path.basename(o)[:-2].replace("vhca_", "")
    for line in subprocess.check_output(["nm", o], text=True).splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBR":
            defs[p[2]] = f
        elif len(p) == 2 and p[0] == "U":
            uses[f].add(p[1])
edges = collections.defaultdict(lambda: collections.defaultdict(list))
for f, syms in uses.items():
    for s in syms:
        g = defs.get(s)
        if g and g != f:
            edges[f][g].append(s)
files = sorted(set(defs.values()))
for f in files:
    print("%-9s -> %s" % (f, " ".join("%s(%d)" % (g, len(edges[f][g]))
                                      for g in sorted(edges[f]))))

# the loops: strongly connected components of more than one file (Tarjan)
index, low, stack, on, loops = {}, {}, [], set(), []


def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop()
            on.discard(w)
            c.append(w)
            if w == v:
                break
        if len(c) > 1:
            loops.append(sorted(c))


for f in files:
    if f not in index:
        visit(f)
print("files in loops: %d" % sum(len(c) for c in loops))
for c in loops:
    print("  loop: " + " ".join(c))
