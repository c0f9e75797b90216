#!/usr/bin/env python3
"""check_layers.py: zklock's source tree points down and has no include circle.

src/ has one folder per layer, from the top down:

    sql      the SQL entry points, views, settings, _PG_init, DISCARD ALL
    holds    the backend's table of holds: acquire, release, commit, loss
    recipes  the queue driver and each recipe
    cluster  the cluster view, wait records, the deadlock search
    client   the ZooKeeper session, requests, background jobs, threads
    common   vocabulary, paths, node data, encodings, JSON

Rules, each checked over every .c and .h under src/:
  - a file is in a layer folder, and includes zklock's headers by their
    layer, "layer/name.h" (the include path is src/);
  - it includes only headers of its own layer or of a layer below;
  - the units (foo.c with its foo.h, in one folder) form no circle.

Prints one line per problem, then a summary (units, include circles, the
number of levels of the unit graph: its longest chain of includes), and
exits 1 if there is any problem.

Usage: test/check_layers.py [REPOSITORY]
"""
import os
import re
import sys

LAYERS = ["sql", "holds", "recipes", "cluster", "client", "common"]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    src = os.path.join(root, "src")
    problems = []
    files = []
    for d, _, names in os.walk(src):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                files.append(os.path.relpath(os.path.join(d, n), src))
    files.sort()

    def layer_of(rel):
        parts = rel.split(os.sep)
        return parts[0] if len(parts) == 2 and parts[0] in RANK else None

    headers = {f for f in files if f.endswith(".h")}
    unit = lambda rel: os.path.splitext(rel)[0]
    units = sorted({unit(f) for f in files})
    edges = {u: set() for u in units}

    for f in files:
        layer = layer_of(f)
        if layer is None:
            problems.append("%s: not in a layer folder (%s)" % (f, ", ".join(LAYERS)))
            continue
        text = open(os.path.join(src, f), errors="replace").read()
        for inc in INCLUDE.findall(text):
            if inc not in headers:
                # PostgreSQL's own headers ("postgres.h", "utils/guc.h",
                # "common/int.h") are not zklock's: only a name of ours
                # without its layer is wrong
                if any(os.path.basename(h) == os.path.basename(inc) for h in headers):
                    problems.append('%s: includes "%s" without its layer' % (f, inc))
                continue
            target_layer = layer_of(inc)
            if RANK[target_layer] < RANK[layer]:
                problems.append('%s: includes "%s" from the %s layer, above %s' %
                                (f, inc, target_layer, layer))
            if unit(inc) != unit(f):
                edges[unit(f)].add(unit(inc))

    # circles: strongly connected sets of more than one unit (Tarjan)
    index, low, on_stack, stack, sccs, counter = {}, {}, set(), [], [], [0]

    def connect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in units:
        if v not in index:
            connect(v)
    circles = [c for c in sccs if len(c) > 1]
    for c in circles:
        problems.append("include circle: " + " <-> ".join(c))

    # levels: the longest chain of includes (a unit alone is one level)
    depth = {}

    def level(v, seen=()):
        if v in depth:
            return depth[v]
        if v in seen:
            return 0
        depth[v] = 1 + max([level(w, seen + (v,)) for w in edges[v]] or [0])
        return depth[v]

    levels = max([level(v) for v in units] or [0])
    for p in problems:
        print(p)
    print("layers: %s; units=%d circles=%d levels=%d problems=%d" %
          (" > ".join(LAYERS), len(units), len(circles), levels, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
