#!/usr/bin/env python3
"""check_layers.py: zklock's source tree points down, in its includes and
in its calls, and has no circle.

src/ has one folder per layer, from the top down:

    sql      the SQL entry points, views, settings, _PG_init, DISCARD ALL
    holds    the backend's table of holds: acquire, release, commit, loss
    recipes  the queue driver and each recipe
    cluster  the cluster view, wait records, the deadlock search
    client   the ZooKeeper session, requests, background jobs, threads
    base     vocabulary, paths, node data, encodings, JSON

A unit is foo.c with its foo.h, in one folder.  Rules, each checked over
every .c and .h under src/:
  - a file is in a layer folder, and includes zklock's headers by their
    layer, "layer/name.h" (the include path is src/);
  - it includes only headers of its own layer or of a layer below;
  - the units form no include circle.

And over the objects make built (foo.o beside foo.c), read with nm: unit X
calls unit Y when X's object uses a symbol (function or variable) that Y's
object defines.
  - no unit calls a unit of a layer above its own;
  - the units form no call circle, within a layer or across layers (files
    that share a header can call each other in a circle with no include
    circle at all).
A missing object, or one older than its .c, is a problem: run make first.

A call up through a function pointer is invisible to nm: that is a hook,
and each is listed.  A hook type is a pointer-to-function typedef named
Zk...Hook in one of our headers; a function declared in a header that takes
one is a hook setter; each object of a layer above that header's that uses
a setter registers a hook, listed as
"hook: client/client.h ZkSessionSetHooks <- holds/table.c".  A hook is no
problem, but it is counted, so that a test can hold the list to the
expected ones.

Prints one line per problem and per hook, then a summary (units, include
circles, the number of levels of the unit graph: its longest chain of
includes, call circles, upward calls, hooks, problems), and exits 1 if
there is any problem.

Usage: test/check_layers.py [REPOSITORY]
"""
import os
import re
import subprocess
import sys

LAYERS = ["sql", "holds", "recipes", "cluster", "client", "base"]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
HOOK_TYPE = re.compile(r'typedef\s[^;()]*\(\s*\*\s*(Zk\w*Hook)\s*\)')
PROTOTYPE = re.compile(r'\bextern\s[^;{]*?\b(\w+)\s*\(([^;{]*)\)[^;{]*;')


def circles(edges):
    """The strongly connected sets of more than one node (Tarjan)."""
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
    for v in sorted(edges):
        if v not in index:
            connect(v)
    return [c for c in sccs if len(c) > 1]


def symbols(obj):
    """The symbols an object defines and those it uses."""
    out = subprocess.run(["nm", obj], stdout=subprocess.PIPE, check=True,
                         universal_newlines=True).stdout
    defined, used = set(), set()
    for fields in (line.split() for line in out.splitlines()):
        if len(fields) == 2 and fields[0] == "U":
            used.add(fields[1])
        elif len(fields) == 3 and fields[1] in ("T", "D", "B", "R", "C"):
            defined.add(fields[2])
    return defined, used


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
    texts = {}

    for f in files:
        layer = layer_of(f)
        if layer is None:
            problems.append("%s: not in a layer folder (%s)" % (f, ", ".join(LAYERS)))
            continue
        text = texts[f] = open(os.path.join(src, f), errors="replace").read()
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

    include_circles = circles(edges)
    for c in include_circles:
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

    # calls: unit -> {unit it uses a symbol of: those symbols}
    objects, unbuilt = {}, []
    for f in files:
        if f.endswith(".c") and f in texts:
            c = os.path.join(src, f)
            o = c[:-2] + ".o"
            if not os.path.exists(o) or os.path.getmtime(o) < os.path.getmtime(c):
                unbuilt.append(f)
            else:
                objects[unit(f)] = symbols(o)
    if unbuilt:
        problems.append("no object, or one older than its source (run make first): " +
                        " ".join(unbuilt))
    owner = {s: u for u, (defined, _) in objects.items() for s in defined}
    calls = {u: {} for u in objects}
    for u, (_, used) in objects.items():
        for s in used:
            if owner.get(s, u) != u:
                calls[u].setdefault(owner[s], set()).add(s)
    layer_rank = lambda u: RANK[u.split(os.sep)[0]]
    upward = 0
    for u in sorted(calls):
        for v, syms in sorted(calls[u].items()):
            if layer_rank(v) < layer_rank(u):
                upward += 1
                problems.append("upward call: %s.c -> %s.c: %s" %
                                (u, v, ", ".join(sorted(syms))))
    call_circles = circles({u: set(calls[u]) for u in calls})
    for c in call_circles:
        problems.append("call circle: " + " ".join(u + ".c" for u in c) + "".join(
            "\n  %s.c -> %s.c: %s" % (u, v, ", ".join(sorted(calls[u][v])))
            for u in c for v in c if v in calls[u]))

    # hooks: setters declared in a header, used by an object of a layer above
    hook_types = {t for h in headers if h in texts for t in HOOK_TYPE.findall(texts[h])}
    hooks = []
    for h in sorted(headers):
        for name, params in PROTOTYPE.findall(texts.get(h, "")):
            if set(re.findall(r"\w+", params)) & hook_types:
                hooks += ["hook: %s %s <- %s.c" % (h, name, u) for u in sorted(objects)
                          if name in objects[u][1] and layer_rank(u) < RANK[layer_of(h)]]

    for line in problems + hooks:
        print(line)
    print("layers: %s; units=%d circles=%d levels=%d call_circles=%d upward_calls=%d "
          "hooks=%d problems=%d" %
          (" > ".join(LAYERS), len(units), len(include_circles), levels,
           len(call_circles), upward, len(hooks), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
