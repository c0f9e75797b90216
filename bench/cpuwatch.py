#!/usr/bin/python3
"""cpuwatch.py OUTFILE ROOTPID MARKER...: sample who uses the CPU.

Runs until killed (bench/run.sh starts it in the background and stops it
by pid).  Every INTERVAL (0.5 s) it reads /proc/stat and /proc/*/stat and
writes one line to OUTFILE:

    epoch_s  machine_busy_pct  ours_pct  foreign_pct

as percentages of the whole machine (all cores).  A process is "ours" when
it descends from ROOTPID (bench/run.sh) or its command line contains one of
the MARKERs (the benchmark's temporary directory, the cluster names of its
postmasters' children); everything else is "foreign": other people's test
suites and servers on this shared machine.  Processes born and gone between
two samples are not seen, so foreign_pct is a lower bound; machine_busy_pct
minus ours_pct is an upper bound.
"""
import os
import sys
import time

INTERVAL = 0.5


def machine_jiffies():
    with open("/proc/stat") as f:
        p = f.readline().split()[1:]
    v = [int(x) for x in p]
    total = sum(v[:8])  # user nice system idle iowait irq softirq steal
    idle = v[3] + v[4]
    return total - idle, total


def procs():
    res = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
            rest = s[s.rindex(")") + 2:].split()
            ppid = int(rest[1])
            jiff = int(rest[11]) + int(rest[12])  # utime + stime
            start = int(rest[19])
            res[int(d)] = (ppid, jiff, start)
        except (OSError, ValueError, IndexError):
            pass
    return res


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def main():
    out, root, markers = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    ours_cache = {}

    def is_ours(pid, table):
        key = (pid, table[pid][2])
        if key in ours_cache:
            return ours_cache[key]
        p, seen, ours = pid, 0, False
        while p in table and seen < 64:
            if p == root:
                ours = True
                break
            p = table[p][0]
            seen += 1
        if not ours:
            c = cmdline(pid)
            ours = any(m in c for m in markers)
        ours_cache[key] = ours
        return ours

    prev_b, prev_t = machine_jiffies()
    prev = procs()
    with open(out, "w", buffering=1) as f:
        while True:
            time.sleep(INTERVAL)
            b, t = machine_jiffies()
            cur = procs()
            ours = foreign = 0
            for pid, (ppid, jiff, start) in cur.items():
                old = prev.get(pid)
                d = jiff - old[1] if old and old[2] == start else jiff
                if d <= 0:
                    continue
                if is_ours(pid, cur):
                    ours += d
                else:
                    foreign += d
            dt = max(t - prev_t, 1)
            f.write(f"{time.time():.2f} {100 * (b - prev_b) / dt:.1f} "
                    f"{100 * ours / dt:.1f} {100 * foreign / dt:.1f}\n")
            prev_b, prev_t, prev = b, t, cur


if __name__ == "__main__":
    main()
