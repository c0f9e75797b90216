#!/usr/bin/env python3
"""bench/cpu_account.py OUTDIR: the tables of bench/cpu_account.sh.

Reads what cpu_account.sh left in OUTDIR (perf stat --per-thread output,
strace -f logs, callgrind profiles) and prints, per cycle of zk_lock +
zk_unlock (the SQL cycle), of `zkfloor multi` (the bare C client), of
`zkfloor amulti` (the same through the asynchronous API) and of a
pg_advisory_lock + pg_advisory_unlock cycle (perf and strace only):

  1. CPU (task-clock) and context switches by thread;
  2. system calls by thread and by call;
  3. instructions (callgrind) by thread, and on the backend's main thread by
     phase: the inclusive cost of the functions named below, per cycle.

Threads are told apart by the order of their TIDs: the main thread (TID =
PID), then the client library's I/O thread, then its completion thread
(zookeeper_init creates them in that order).
"""
import collections
import glob
import os
import re
import statistics
import subprocess
import sys

OUT = sys.argv[1]
# the seconds of each measured window (for cycles/s), if given
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else float("nan")
THREADS = ["main", "zk I/O", "zk completion"]


def read(path):
    with open(path) as f:
        return f.read()


def thread_names(tids):
    return {tid: THREADS[i] if i < len(THREADS) else f"thread {i + 1}"
            for i, tid in enumerate(tids)}


def tids_of(name, tool):
    return [int(t) for t in read(f"{OUT}/{name}.{tool}.tids").split()]


def cycles_of(name, tool):
    return int(read(f"{OUT}/{name}.{tool}.cycles").strip())


# the measured loops, in column order: (file name, column title)
LOOPS = [("sql", "SQL cycle"), ("floor", "zkfloor multi"),
         ("afloor", "zkfloor amulti"), ("adv", "pg_advisory")]


def loops(tool):
    return [(n, t) for n, t in LOOPS if os.path.exists(f"{OUT}/{n}.{tool}")]


def perf_tools():
    """the perf rounds measured: perf, perf2, perf3, ..."""
    tools = []
    while os.path.exists(f"{OUT}/sql.{'perf' if not tools else f'perf{len(tools) + 1}'}"):
        tools.append("perf" if not tools else f"perf{len(tools) + 1}")
    return tools


def perf_round(name, tool):
    """({thread: µs CPU per cycle}, {thread: switches per cycle}, cycles,
    (user µs, system µs) per cycle) of one loop in one perf round"""
    names = thread_names(tids_of(name, tool))
    n = cycles_of(name, tool)
    cpu = collections.Counter()
    cs = collections.Counter()
    for line in read(f"{OUT}/{name}.{tool}").splitlines():
        f = line.split(",")
        if len(f) < 4 or "-" not in f[0]:
            continue
        tid = int(f[0].rsplit("-", 1)[1])
        if f[1].startswith("<"):
            continue
        th = names.get(tid, f"tid {tid}")
        if f[3] == "task-clock":
            cpu[th] += float(f[1]) * 1000 / n
        elif f[3] == "context-switches":
            cs[th] += float(f[1]) / n
    t0 = {int(l.split()[0]): l.split()[1:] for l in read(f"{OUT}/{name}.{tool}.ticks0").splitlines()}
    t1 = {int(l.split()[0]): l.split()[1:] for l in read(f"{OUT}/{name}.{tool}.ticks1").splitlines()}
    hz = os.sysconf("SC_CLK_TCK")
    user = sys_ = 0
    for tid in t1:
        if tid in t0:
            user += (int(t1[tid][0]) - int(t0[tid][0])) * 1e6 / hz / n
            sys_ += (int(t1[tid][1]) - int(t0[tid][1])) * 1e6 / hz / n
    return cpu, cs, n, (user, sys_)


def perf_table():
    cols = loops("perf")
    tools = perf_tools()
    med = statistics.median
    print("## 1. CPU and context switches per cycle (perf stat --per-thread; "
          "task-clock is noisy on a shared machine)\n")
    if len(tools) > 1:
        print(f"medians of {len(tools)} rounds (the loops in turn, in reverse order every "
              "other round)\n")
    print(f"{'':<16}" + "".join(f"{t:>20}" for _, t in cols))
    print(f"{'thread':<16}" + f"{'µs CPU':>10}{'switches':>10}" * len(cols))
    per = {name: [perf_round(name, tool) for tool in tools] for name, _ in cols}
    for th in THREADS:
        print(f"{th:<16}" + "".join(f"{med(r[0][th] for r in per[n]):10.1f}"
                                    f"{med(r[1][th] for r in per[n]):10.2f}" for n, _ in cols))
    # the totals: the median over rounds of each round's sum over threads
    totals = {n: (med(sum(r[0].values()) for r in per[n]), med(sum(r[1].values()) for r in per[n]),
                  sum(r[2] for r in per[n])) for n, _ in cols}
    print(f"{'all threads':<16}" + "".join(f"{totals[n][0]:10.1f}{totals[n][1]:10.2f}"
                                           for n, _ in cols))
    print(f"{'  of which user':<16}" + "".join(f"{med(r[3][0] for r in per[n]):10.1f}{'':10}"
                                               for n, _ in cols))
    print(f"{'  of which system':<16}" + "".join(f"{med(r[3][1] for r in per[n]):10.1f}{'':10}"
                                                 for n, _ in cols))
    print("(user and system from /proc/PID/task/TID/stat, in clock ticks: coarse)")
    print("\ncycles counted, all rounds: " + ", ".join(f"{t} {totals[n][2]}" for n, t in cols))
    if len(tools) > 1:
        print("per round, CPU µs per cycle (all threads) and cycles/s:")
        for n, t in cols:
            print(f"  {t:<16}" + "  ".join(f"{sum(r[0].values()):7.1f} ({r[2] / SECONDS:.0f}/s)"
                                           for r in per[n]))
        print("  SQL / zkfloor multi, CPU per round: " +
              " ".join(f"{sum(a[0].values()) / sum(b[0].values()):.2f}"
                       for a, b in zip(per["sql"], per["floor"])))
    # the figures as "key value" lines, for bench/run.sh's cpu phase
    with open(f"{OUT}/cpu_figures.txt", "w") as kv:
        kv.write(f"cpu_rounds {len(tools)}\n")
        for name, _ in cols:
            kv.write(f"cpu_{name}_us {totals[name][0]:.2f}\n"
                     f"cpu_{name}_switches {totals[name][1]:.3f}\n"
                     f"cpu_{name}_cycles {totals[name][2]}\n")
    sql_cpu, sql_cs, _ = totals["sql"]
    fl_cpu, fl_cs, _ = totals["floor"]
    print(f"\ntargets (the bare client is zkfloor multi, measured in this run):")
    print(f"  CPU per cycle, all threads: SQL / zkfloor multi = {sql_cpu / fl_cpu:.2f} x "
          f"(target <= 2): {'met' if sql_cpu <= 2 * fl_cpu else 'missed'}")
    print(f"  context switches per cycle: SQL - zkfloor multi = {sql_cs - fl_cs:+.2f} "
          f"(target <= +2): {'met' if sql_cs <= fl_cs + 2 else 'missed'}")
    if "afloor" in totals and "adv" in totals:
        af_cpu, af_cs, _ = totals["afloor"]
        ad_cpu, ad_cs, _ = totals["adv"]
        print("floors that explain them (same run):")
        print(f"  the asynchronous API's own hop: zkfloor amulti / multi = CPU "
              f"{af_cpu / fl_cpu:.2f} x, switches {af_cs - fl_cs:+.2f}")
        print(f"  composed floor = zkfloor amulti + the pg_advisory_lock cycle "
              f"(PostgreSQL's two statements): {af_cpu + ad_cpu:.1f} µs, "
              f"{af_cs + ad_cs:.2f} switches")
        print(f"  SQL / composed floor: CPU {sql_cpu / (af_cpu + ad_cpu):.2f} x, "
              f"switches {sql_cs - (af_cs + ad_cs):+.2f}; zklock's own CPU beyond it "
              f"{sql_cpu - af_cpu - ad_cpu:.1f} µs per cycle")
    print()


CALL = re.compile(r"^(\d+)\s+(?:<\.\.\. )?([a-z_0-9]+)\(")
SIGNAL = re.compile(r"^(\d+)\s+--- (SIG[A-Z]+)")


def strace_table():
    cols = loops("strace")
    print("## 2. System calls per cycle (strace -f)\n")
    per = {}
    for name, _ in cols:
        names = thread_names(tids_of(name, "strace"))
        n = cycles_of(name, "strace")
        counts = collections.Counter()
        for line in read(f"{OUT}/{name}.strace").splitlines():
            if "resumed>" in line:
                continue
            m = CALL.match(line) or SIGNAL.match(line)
            if not m:
                continue
            th = names.get(int(m.group(1)), "other")
            counts[(th, m.group(2))] += 1
        per[name] = (counts, n)
    print(f"{'thread':<16}{'call':<14}" + "".join(f"{t:>16}" for _, t in cols))
    keys = sorted(set().union(*(set(per[n][0]) for n, _ in cols)),
                  key=lambda k: (THREADS.index(k[0]) if k[0] in THREADS else 9,
                                 -per["sql"][0][k]))
    for k in keys:
        vals = [per[n][0][k] / per[n][1] for n, _ in cols]
        if max(vals) < 0.05:
            continue
        print(f"{k[0]:<16}{k[1]:<14}" + "".join(f"{v:16.2f}" for v in vals))
    for th in THREADS + ["all threads"]:
        vals = [sum(v for k, v in per[n][0].items()
                    if th == "all threads" or k[0] == th) / per[n][1] for n, _ in cols]
        print(f"{th:<16}{'(all)':<14}" + "".join(f"{v:16.2f}" for v in vals))
    print("\ncycles counted under strace: " +
          ", ".join(f"{t} {per[n][1]}" for n, t in cols) + "\n")


OBJECTS = {}
ANN = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*)$")


def annotate(path):
    """{function: inclusive Ir}, and the total, of one callgrind file."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no",
                           "--threshold=100", path],
                          capture_output=True, text=True, check=True).stdout
    fns = collections.Counter()
    total = 0
    for line in text.splitlines():
        m = ANN.match(line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        what = m.group(2)
        if what.startswith("PROGRAM TOTALS"):
            total = ir
            continue
        obj = ""
        mo = re.search(r"\[(.*)\]\s*$", what)
        if mo:
            obj = os.path.basename(mo.group(1))
            what = what[:mo.start()].strip()
        fn = what.rsplit(":", 1)[-1]
        # code inlined from another file is listed apart, without its
        # object: a function's inclusive cost is its largest entry
        if obj:
            OBJECTS[fn] = obj
        fns[fn] = max(fns[fn], ir)
    return fns, total


def profiles(files_by_run):
    """Per-cycle difference of two runs: ({thread: {fn: Ir}}, {thread: Ir})."""
    (pa, na), (pb, nb) = files_by_run
    fns = {}
    totals = {}
    for th in range(len(pa)):
        fa, ta = annotate(pa[th])
        fb, tb = annotate(pb[th])
        d = nb - na
        fns[th] = {k: (fb[k] - fa.get(k, 0)) / d for k in fb}
        totals[th] = (tb - ta) / d
    return fns, totals


# the phases of the main thread: (label, functions whose inclusive costs add
# up without nesting)
PHASES = [
    ("zk_lock (the SQL function, all of it)", ["zk_lock"]),
    ("zk_unlock (the SQL function, all of it)", ["zk_unlock"]),
    ("zk_xact_lock (the SQL function, all of it)", ["zk_xact_lock"]),
    ("  path check", ["ZkCheckLockPath"]),
    ("  node data (owner JSON)", ["ZkBuildNodeData"]),
    ("  lock node path", ["ZkLockNodePath"]),
    ("  attempt set-up and free", ["ZkAttemptBegin", "ZkAttemptFree"]),
    ("    of which the node prefix (UUID)", ["ZkMakeNodePrefix"]),
    ("  lock table", ["ZkEntryLookup", "ZkEntryEnter", "ZkEntryAdoptGuard",
                      "ZkEntryAddHold", "ZkEntryDrop"]),
    ("  statistics", ["ZkStatAcquisition", "ZkStatRequest"]),
    ("  request hand-off (library)", ["zoo_amulti", "zoo_adelete"]),
    ("  op bookkeeping", ["ZkOpTryNew", "ZkOpFree"]),
    ("  waits for answers (latch)", ["ZkLatchWait"]),
    ("transaction callbacks (COMMIT)", ["ZkLockXactCallback"]),
]


def callgrind_table():
    runs = []
    for line in read(f"{OUT}/sql.cg.runs").splitlines():
        pid, n = line.split()
        files = sorted(glob.glob(f"{OUT}/cg.{pid}-[0-9][0-9]"))
        runs.append((files, int(n)))
    fns, totals = profiles(runs)
    sql_objects = dict(OBJECTS)
    adv = []
    if os.path.exists(f"{OUT}/adv.cg.runs"):
        for line in read(f"{OUT}/adv.cg.runs").splitlines():
            pid, n = line.split()
            adv.append((sorted(glob.glob(f"{OUT}/cg.{pid}-[0-9][0-9]")), int(n)))
        _, atotals = profiles(adv)
    floor = []
    for s in (3, 9):
        files = sorted(glob.glob(f"{OUT}/floor.cg.{s}.*-[0-9][0-9]"))
        floor.append((files, int(read(f"{OUT}/floor.cg.{s}.n").strip())))
    ffns, ftotals = profiles(floor)
    afloor = []
    for s in (3, 9):
        files = sorted(glob.glob(f"{OUT}/afloor.cg.{s}.*-[0-9][0-9]"))
        if files:
            afloor.append((files, int(read(f"{OUT}/afloor.cg.{s}.n").strip())))
    atot = profiles(afloor)[1] if len(afloor) == 2 else {}
    OBJECTS.clear()
    OBJECTS.update(sql_objects)

    print("## 3. Instructions per cycle (callgrind; the difference of two runs "
          f"of {runs[0][1]} and {runs[1][1]} cycles, and of zkfloor runs of "
          f"{floor[0][1]} and {floor[1][1]} cycles)\n")
    print(f"{'thread':<44}{'SQL cycle':>12}{'zkfloor':>12}{'amulti':>12}")
    for th in range(max(len(totals), len(ftotals))):
        name = THREADS[th] if th < len(THREADS) else f"thread {th + 1}"
        print(f"{name:<44}{totals.get(th, 0):12.0f}{ftotals.get(th, 0):12.0f}"
              f"{atot.get(th, 0):12.0f}")
    print(f"{'all threads':<44}{sum(totals.values()):12.0f}"
          f"{sum(ftotals.values()):12.0f}{sum(atot.values()):12.0f}")
    if adv:
        print(f"{'pg_advisory_lock + pg_advisory_unlock cycle':<44}"
              f"{sum(atotals.values()):12.0f}   (PostgreSQL's two statements)")
    if adv and atot:
        composed = sum(atot.values()) + sum(atotals.values())
        print(f"{'composed floor: amulti + pg_advisory cycle':<44}{composed:12.0f}"
              f"   (SQL cycle / composed = {sum(totals.values()) / composed:.2f} x; "
              f"zklock's own {sum(totals.values()) - composed:.0f})")
    print()

    main = fns[0]

    def incl(names, table):
        return sum(v for fn, v in table.items() if fn in names)

    print("main thread by phase (inclusive instructions per cycle)\n")
    zk = 0
    for label, names in PHASES:
        v = incl(names, main)
        if not label.startswith(" "):
            zk += v
        if label.startswith("    "):
            label = "  " + label
        print(f"{label:<44}{v:12.0f}")
    print(f"{'PostgreSQL around them (main thread rest)':<44}{totals[0] - zk:12.0f}")
    print()
    for th, label in ((1, "zk I/O thread"), (2, "zk completion thread")):
        if th not in fns:
            continue
        print(f"{label}: the heaviest functions (inclusive per cycle)")
        for fn, v in sorted(fns[th].items(), key=lambda kv: -kv[1])[:12]:
            obj = OBJECTS.get(fn, "")
            if v < 0.02 * totals[th]:
                break
            print(f"  {fn + ' (' + obj + ')':<60}{v:10.0f}")
        print()
    print("main thread: zklock.so's functions (inclusive per cycle, top 30)")
    ours = [(k, v) for k, v in main.items() if OBJECTS.get(k) == "zklock.so"]
    for fn, v in sorted(ours, key=lambda kv: -kv[1])[:30]:
        print(f"  {fn:<58}{v:10.0f}")
    print()
    print("main thread: the heaviest functions of other objects (self cost "
          "not shown; inclusive, top 25)")
    other = [(k, v) for k, v in main.items()
             if OBJECTS.get(k, "zklock.so") != "zklock.so"]
    for fn, v in sorted(other, key=lambda kv: -kv[1])[:25]:
        obj = OBJECTS[fn]
        print(f"  {fn + ' (' + obj + ')':<58}{v:10.0f}")
    print()


if os.path.exists(f"{OUT}/sql.perf"):
    perf_table()
    strace_table()
if os.path.exists(f"{OUT}/sql.cg.runs"):
    callgrind_table()
