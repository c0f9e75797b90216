#!/usr/bin/env python3
"""bench/fanout_account.py: the per-process half of bench/fanout_account.sh.

  fanout_account.py snapshot FILE
      Every thread of every process: its process's name, whether it is the
      process's main thread, voluntary and involuntary context switches
      and CPU time (utime + stime, clock ticks), from /proc, as JSON.

  fanout_account.py diff BEFORE AFTER CYCLES LABEL OUT
      What each group of threads did between two snapshots, per cycle:
      CPU (microseconds) and context switches, voluntary and involuntary.
      Appends one JSON line to OUT and prints a table.

  fanout_account.py summary OUT
      The medians over the rounds of each side, side by side.

Groups: PostgreSQL's processes split into main threads (the backends'
own work: statements, and zklock's part of a cycle) and other threads (in
a backend, libzookeeper_mt's I/O and completion threads and zklock's loss
watch); pgbench; zkfloor (the composed floor's client: its sessions'
threads and libpq); the ZooKeeper server (java); everything else.
Threads that started or ended within the window are left out (none do in
a steady loop).
"""
import json
import os
import statistics
import sys

TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")
GROUPS = ["PostgreSQL, main threads", "PostgreSQL, other threads (zklock's client)",
          "pgbench", "zkfloor (the floor's client)", "ZooKeeper server", "other"]


def snapshot(path):
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            comm = open(f"/proc/{pid}/comm").read().strip()
            for tid in os.listdir(f"/proc/{pid}/task"):
                status = {}
                for line in open(f"/proc/{pid}/task/{tid}/status"):
                    k, _, v = line.partition(":")
                    status[k] = v.strip()
                stat = open(f"/proc/{pid}/task/{tid}/stat").read()
                fields = stat[stat.rindex(")") + 2:].split()
                out[f"{pid}/{tid}"] = [comm, pid == tid,
                                       int(status["voluntary_ctxt_switches"]),
                                       int(status["nonvoluntary_ctxt_switches"]),
                                       int(fields[11]) + int(fields[12])]
        except (OSError, KeyError, ValueError, IndexError):
            continue            # gone meanwhile
    with open(path, "w") as f:
        json.dump(out, f)


def group_of(comm, main):
    if comm == "postgres":
        return GROUPS[0] if main else GROUPS[1]
    if comm == "pgbench":
        return GROUPS[2]
    if comm == "zkfloor":
        return GROUPS[3]
    if comm == "java":
        return GROUPS[4]
    return GROUPS[5]


def diff(before, after, cycles, label, out):
    a = json.load(open(before))
    b = json.load(open(after))
    cycles = float(cycles)
    g = {name: [0, 0, 0] for name in GROUPS}
    for k, v in b.items():
        if k not in a:
            continue
        x = g[group_of(v[0], v[1])]
        for i in range(3):
            x[i] += v[2 + i] - a[k][2 + i]
    row = {"label": label, "cycles": cycles,
           "groups": {name: {"cpu_us": x[2] * TICK_US / cycles, "vol": x[0] / cycles,
                             "invol": x[1] / cycles} for name, x in g.items()}}
    row["groups"]["all"] = {k: sum(row["groups"][n][k] for n in GROUPS) for k in ("cpu_us", "vol", "invol")}
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(f"{label}: {cycles:.0f} cycles")
    for name, x in row["groups"].items():
        print(f"  {name:46s} {x['cpu_us']:8.1f} µs  {x['vol']:6.2f} vol  {x['invol']:6.2f} invol")


def summary(out):
    rows = [json.loads(line) for line in open(out) if line.strip()]
    labels = []
    for r in rows:
        if r["label"] not in labels:
            labels.append(r["label"])
    by = {lab: [r for r in rows if r["label"] == lab] for lab in labels}

    def med(lab, group, key):
        return statistics.median(r["groups"][group][key] for r in by[lab])

    print("per cycle, medians of %s rounds" % " / ".join(str(len(by[lab])) for lab in labels))
    print(f"{'':46s}" + "".join(f"{lab:>30s}" for lab in labels))
    for group in GROUPS + ["all"]:
        if all(med(lab, group, "cpu_us") == 0 and med(lab, group, "vol") == 0 for lab in labels):
            continue
        print(f"{group:46s}" + "".join(
            f"{med(lab, group, 'cpu_us'):10.1f} µs {med(lab, group, 'vol'):5.2f}+{med(lab, group, 'invol'):5.2f} sw"
            for lab in labels))
    print("(sw: voluntary + involuntary context switches)")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "snapshot" and len(sys.argv) == 3:
        snapshot(sys.argv[2])
    elif cmd == "diff" and len(sys.argv) == 7:
        diff(*sys.argv[2:7])
    elif cmd == "summary" and len(sys.argv) == 3:
        summary(sys.argv[2])
    else:
        sys.exit(__doc__)
