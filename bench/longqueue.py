#!/usr/bin/env python3
"""bench/longqueue.py OUTDIR: the tables of a bench/longqueue.sh run.

Reads OUTDIR/machine.txt and OUTDIR/raw/KIND.N.txt ("key value" lines of
bench/pgclients longqueue) and prints markdown: one row per kind and size,
and the growth of the requests from one size to the next against n and n².
"""
import glob
import math
import os
import sys

KINDS = ["exclusive", "mixed", "semaphore1", "semaphore2", "set2", "lease"]
WHAT = {
    "exclusive": "`zk_lock`",
    "mixed": "`zk_rlock`, every 4th `zk_lock`",
    "semaphore1": "`zk_semaphore_acquire(path, 1)`",
    "semaphore2": "`zk_semaphore_acquire(path, 2)`, 2 holders",
    "set2": "`zk_lock(ARRAY[a, b])`",
    "lease": "`zk_lease_lock`",
}


def read_kv(path):
    d = {}
    with open(path) as f:
        for line in f:
            parts = line.split(None, 1)
            if len(parts) == 2:
                d[parts[0]] = parts[1].strip()
    return d


def num(d, k):
    try:
        return float(d[k])
    except (KeyError, ValueError):
        return math.nan


def fmt(x, digits=0):
    if x != x:
        return "?"
    return f"{x:,.{digits}f}"


def main():
    out = sys.argv[1]
    machine = read_kv(os.path.join(out, "machine.txt"))
    runs = {}
    for p in glob.glob(os.path.join(out, "raw", "*.txt")):
        kind, n = os.path.basename(p)[:-4].rsplit(".", 1)
        runs[(kind, int(n))] = read_kv(p)
    kinds = [k for k in KINDS if any(k == r[0] for r in runs)]
    kinds += sorted({r[0] for r in runs} - set(kinds))

    print(f"Run of {machine.get('date_utc', '?')}, build {machine.get('git_head', '?')} "
          f"(zklock.so {machine.get('zklock_so_md5', '?')}), {machine.get('postgres', '?')}, "
          f"ZooKeeper {machine.get('zk_version', '?')}, {machine.get('nproc', '?')} cores "
          f"(load average {machine.get('loadavg_start', '?')} at the start, "
          f"{machine.get('loadavg_end', '?')} at the end), {machine.get('elapsed_s', '?')} s: "
          f"`{machine.get('command', '?')}`; deadlock_timeout = "
          f"{machine.get('deadlock_timeout_ms', '?')} ms; held {machine.get('hold_s', '?')} s "
          f"after every waiter was waiting, and on until the checks were over (a second with at most "
          f"n/2 + 10 requests: pings), at most {machine.get('limit_s', '?')} s more.\n")
    hold = machine.get("hold_s", "?")
    print(f"| kind | n | requests in the first {hold} s | checks over after s | requests until then | "
          "÷ n² | per s: mean / busiest | drain ms | drain requests | "
          "granted in queue order | nodes left (ephemeral) |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|---|---|")
    for kind in kinds:
        for n in sorted(n for k, n in runs if k == kind):
            d = runs[(kind, n)]
            drained = d.get("lq_drained") == "1"
            quiet = num(d, "lq_quiet_after_s") >= 0
            granted = d.get("lq_granted", "?")
            fifo = (f"{granted}/{n}, {d.get('lq_fifo_inversions', '?')} inversions"
                    + ("" if d.get("lq_queued") == str(n) else f", {d.get('lq_queued', '?')} seen queued"))
            drain = fmt(num(d, "lq_drain_ms")) if drained else \
                f"not drained in {machine.get('limit_s', '?')} s"
            left = (f"{d.get('lq_left_nodes', '?')} ({d.get('lq_left_ephemerals', '?')})"
                    if drained else "not checked")
            if d.get("lq_exit") not in ("0", "1"):
                drain += f" (exit {d.get('lq_exit', '?')})"
            if quiet:
                over = fmt(num(d, "lq_quiet_after_s"), 1)
                until = fmt(num(d, "lq_quiet_requests"))
                per_n2 = fmt(num(d, "lq_quiet_requests_per_n2"), 2)
                mean = fmt(num(d, "lq_quiet_rps"))
            else:
                # still busy when released: what the wait saw is a lower bound
                over = f"not within {fmt(num(d, 'lq_wait_s'), 0)}"
                until = "≥ " + fmt(num(d, "lq_wait_requests"))
                per_n2 = "≥ " + fmt(num(d, "lq_wait_requests_per_n2"), 2)
                mean = fmt(num(d, "lq_wait_requests") / num(d, "lq_wait_s"))
            print(f"| {kind} | {n} | {fmt(num(d, 'lq_hold_requests'))} | {over} | {until} | {per_n2} | "
                  f"{mean} / {fmt(num(d, 'lq_wait_peak_rps'))} | {drain} | "
                  f"{fmt(num(d, 'lq_drain_requests'))} | {fifo} | {left} |")

    def cost(d):
        """the requests until the checks were over, and whether that is a lower bound"""
        if num(d, "lq_quiet_after_s") >= 0:
            return num(d, "lq_quiet_requests"), ""
        return num(d, "lq_wait_requests"), "≥ "

    print("\nGrowth of the requests until the checks were over, from one size to the next "
          "(×4 per ×4 of n is linear, ×16 quadratic):\n")
    print("| kind | sizes | n × | requests × | requests ÷ n² |")
    print("|---|---|---:|---:|---|")
    for kind in kinds:
        ns = sorted(n for k, n in runs if k == kind)
        for a, b in zip(ns, ns[1:]):
            ra, la = cost(runs[(kind, a)])
            rb, lb = cost(runs[(kind, b)])
            growth = fmt(rb / ra, 1) if ra and not la and not lb else "?"
            print(f"| {kind} | {a} → {b} | {b / a:g} | {growth} | "
                  f"{la}{fmt(ra / a / a, 2)} → {lb}{fmt(rb / b / b, 2)} |")


if __name__ == "__main__":
    main()
