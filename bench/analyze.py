#!/usr/bin/python3
"""analyze.py: the bench's one analysis script (standard library only).

  analyze.py OUTDIR                  bench/run.sh's raw results into tables
  analyze.py longqueue OUTDIR        the tables of a bench/longqueue.sh run
  analyze.py cpu OUTDIR [SECONDS]    the tables of bench/cpu_account.sh
  analyze.py fanout snapshot FILE | diff BEFORE AFTER CYCLES LABEL OUT |
                    summary OUT      the per-process half of
                                     bench/fanout_account.sh

The three other commands are described where their code begins, below.
bench/run.sh's analysis:

Reads OUTDIR/raw/* and OUTDIR/machine.txt; writes OUTDIR/results.json,
OUTDIR/summary.txt (printed at the end of a run), OUTDIR/plot.dat (for
bench/latency.gp) and OUTDIR/BENCHMARKS.md (copied to the repository root
by a full run).  Standard library only.

Statistics.  Every latency variant ran once per round, rounds alternating
the variants.  For each variant and round we take the median (and the
mean) of the per-op latencies.  A ratio between two variants is computed
within each round, then summarised as the median over rounds (with the
range over rounds), so that slow drift of the shared machine cancels.
Targets are judged on the median-based ratios (robust to the latency
spikes other jobs on this machine cause); the mean-based ratios are shown
next to them.  The multi, semaphore and lease phases have rounds of their
own (machine.txt: multi_rounds, semaphore_rounds, lease_rounds,
barrier_rounds) and are treated the same way.  The barrier phase's samples
are lock-step cycles of a double barrier (one line per cycle in
raw/<variant>.r<round>.cycles, split by run.sh into raw/<variant>.r<round>.txt
(whole cycle), <variant>_release.r<round>.txt and <variant>_fromlast...).
Any subset of phases may be present: what did not run is "not measured".
"""
import collections
import glob
import json
import math
import os
import re
import statistics
import subprocess
import sys

VARIANTS = [
    ("floor_create", "C client: one ephemeral-sequential create (the floor)"),
    ("floor_createlist", "C client: create and getChildren sent back to back, both answers awaited"),
    ("floor_pattern", "C client: zklock's traffic with background release, without PostgreSQL (background delete, then create+getChildren pipelined)"),
    ("floor_cycle", "C client: textbook cycle create, getChildren, delete (3 synchronous calls)"),
    ("floor_cycle2", "C client: create, then delete (2 synchronous calls, both timed): the two-write floor of a lock+unlock"),
    ("floor_multi", "C client: zklock's traffic with synchronous release: multi {create, setData(parent)}, then delete (2 synchronous calls)"),
    ("floor_amulti", "C client: the same two requests through the asynchronous API, each answer awaited on a condition variable (zklock's own floor: a backend must wait interruptibly)"),
    ("sql_lock", "pgbench: SELECT zk_lock; SELECT zk_unlock (default settings)"),
    ("sql_lock_async", "pgbench: the same with `zklock.synchronous_release = off` (PGOPTIONS): background delete"),
    ("sql_xact", "pgbench: BEGIN; SELECT zk_xact_lock; COMMIT"),
    ("sql_advisory", "pgbench: SELECT pg_advisory_lock(1); SELECT pg_advisory_unlock(1)"),
    ("kazoo", "kazoo 2.8 Lock: acquire(); release()"),
    ("curator_mutex", "Curator 5.4 InterProcessMutex: acquire(); release()"),
    ("curator_rw_write", "Curator 5.4 InterProcessReadWriteLock.writeLock(): acquire(); release()"),
]
LABELS = {
    "floor_create": "C create",
    "floor_createlist": "C create+getChildren",
    "floor_pattern": "C bg-release pattern",
    "floor_cycle": "C textbook cycle",
    "floor_cycle2": "C create+delete",
    "floor_multi": "C multi+delete",
    "floor_amulti": "C async multi+delete",
    "sql_lock": "SQL zk_lock+unlock",
    "sql_lock_async": "SQL, background release",
    "sql_xact": "SQL xact lock",
    "sql_advisory": "SQL pg_advisory",
    "kazoo": "kazoo Lock",
    "curator_mutex": "Curator Mutex",
    "curator_rw_write": "Curator RW write",
}
# the multi and semaphore phases: variants of their own, rounds of their
# own (their raw files are named like the latency variants')
MULTI_VARIANTS = [
    ("multi_floor_create", "C client: one ephemeral-sequential create (the floor), measured again in this phase"),
    ("multi_floor_set10", "C client: zklock's own traffic for a 10-path multi-lock: one multi of 10 creates + 10 setData(parent), then one multi of the 10 deletes"),
    ("sql_multi10", "pgbench: SELECT zk_lock(ARRAY[10 paths]); SELECT zk_unlock(ARRAY[the same 10])"),
    ("curator_multi10", "Curator 5.4 InterProcessMultiLock over 10 InterProcessMutex: acquire(); release()"),
    ("sql_multi100", "pgbench: SELECT zk_lock(ARRAY[100 paths]); SELECT zk_unlock(ARRAY[the same 100])"),
    ("curator_multi100", "Curator 5.4 InterProcessMultiLock over 100 InterProcessMutex: acquire(); release()"),
]
SEM_VARIANTS = [
    ("sql_semaphore", "pgbench: SELECT zk_semaphore_acquire('/bench/sem', 4); SELECT zk_semaphore_release('/bench/sem')"),
    ("curator_semaphore", "Curator 5.4 InterProcessSemaphoreV2 (maxLeases 4): lease = acquire(); returnLease(lease)"),
]
# the lease phase: rounds of its own, its floors measured in it
LEASE_VARIANTS = [
    ("lease_floor_create", "C client: one ephemeral-sequential create (the floor), measured again in this phase"),
    ("lease_floor_ttlcycle", "C client: an uncontended lease cycle's ZooKeeper traffic: a create PERSISTENT_SEQUENTIAL_WITH_TTL "
     "(ttl 60 s) and a getChildren sent back to back, both answers awaited, then a synchronous delete; both timed"),
    ("sql_lease_cycle", "pgbench: SELECT zk_lease_lock('/bench/lease', '60 s') AS t \\gset; "
     "SELECT zk_lease_unlock('/bench/lease', :t)"),
    ("lease_floor_renew", "C client: the renewal traffic of the backend that last renewed the lease: a setData of one "
     "TTL node, its answer awaited"),
    ("sql_lease_renew", "pgbench: SELECT zk_lease_renew('/bench/renew', :token) on a lease taken by psql before the run"),
]
# the barrier phase: lock-step cycles of a double barrier of 8 members; its
# "variants" are the three figures of every cycle on each side (run.sh
# splits each run's per-cycle lines into them) and its own one-create floor
BARRIER_VARIANTS = [
    ("barrier_floor_create", "C client: one ephemeral-sequential create (the floor), measured again in this phase"),
    ("sql_dbarrier8", "zklock, one cycle whole: the first `zk_double_barrier_enter` sent → the last "
     "`zk_double_barrier_leave` result (includes the head start of the first 7 members)"),
    ("sql_dbarrier8_release", "zklock, the release: the last member's `zk_double_barrier_enter` sent → the last "
     "enter result (from the last arrival to every member released)"),
    ("sql_dbarrier8_fromlast", "zklock, the last member's enter sent → the last leave result (the cycle without the "
     "head start)"),
    ("curator_dbarrier8", "Curator, one cycle whole: the first `enter()` called → the last `leave()` returned "
     "(includes the same head start)"),
    ("curator_dbarrier8_release", "Curator, the release: the last member's `enter()` called → the last `enter()` "
     "returned"),
    ("curator_dbarrier8_fromlast", "Curator, the last member's `enter()` called → the last `leave()` returned"),
]
BARRIER_RUN_VARIANTS = [(v, d) for v, d in BARRIER_VARIANTS
                        if v in ("barrier_floor_create", "sql_dbarrier8", "curator_dbarrier8")]
# the fresh phase: a lock on a path whose lock node is missing
FRESH_VARIANTS = [
    ("fresh_floor_create", "C client: one ephemeral-sequential create (the floor), measured again in this phase"),
    ("sql_fresh_warm", "pgbench: SELECT zk_lock('/bench/freshwarm'); SELECT zk_unlock('/bench/freshwarm') (a warm path)"),
    ("sql_fresh", "pgbench: the same on a new path per cycle, /bench/fresh/N, N random in 1 … 2e9 (its lock node missing)"),
]
# the fanout phase: locks/s, not latencies
FANOUT_VARIANTS = [
    ("fanout_sql", "locks/s: 2 × 40 pgbench clients on random paths of 4000, default settings"),
    ("fanout_own", "locks/s: 2 × 40 pgbench clients, each on a path of its own (`/bench/fanown/S_C`), "
     "default settings: the floors' ZooKeeper work per cycle (a parent of its own per session)"),
    ("fanout_floor", "cycles/s: the floor without PostgreSQL: 2 × 40 raw C sessions (`zkfloor parallel`), each looping "
     "create + getChildren (pipelined), then a synchronous delete, on a parent node of its own"),
    ("fanout_afloor", "cycles/s: as many raw C sessions looping zklock's own cycle through the asynchronous API "
     "(`zkfloor aparallel`: multi {create, setData(parent)}, then delete, each answer awaited)"),
    ("fanout_composed", "cycles/s: the composed throughput floor: as many raw C sessions, each also with a "
     "connection of its own (40 to each server), looping PostgreSQL's two statements with zklock's requests "
     "between them (`zkfloor acomposed`: `pg_advisory_lock`, the multi, `pg_advisory_unlock`, the delete)"),
]
NAN = float("nan")

# the targets' limits
T_ZK_PART = 2.0         # (sql_lock - sql_advisory) / floor_create <=
T_PEER = 0.8            # sql_lock / curator_mutex, sql_lock / kazoo <=
T_CONTEND_FLOOR = 1.4   # contention: wall time per grant / floor_create <=
T_CONTEND_PEER = 0.6    # contention: zklock wall time per grant / Curator's <=
T_RELEASE_US = 20.0     # COMMIT time / N locks released <=
T_PARALLEL = 0.8        # parallel: zklock cycles/s / raw C cycles/s >=
T_DEADLOCK = 10.0       # deadlock_timeout -> 40P01, 2-cycle, in one-create units <=
T_MULTI_CREATE = 3.0    # sql_multi10 / multi_floor_create <=
T_MULTI_PEER = 5.0      # curator_multiN / sql_multiN >=
T_SEM_PEER = 0.8        # sql_semaphore / curator_semaphore <=
T_LEASE_CYCLE = 2.5     # sql_lease_cycle / lease_floor_create <=
T_LEASE_RENEW = 1.2     # sql_lease_renew / lease_floor_create <=
T_DBARRIER_RELEASE = 3.0  # sql_dbarrier8_release / barrier_floor_create <=
T_DBARRIER_PEER = 0.5     # sql_dbarrier8 / curator_dbarrier8 <=
T_FRESH = 1.2           # sql_fresh / sql_fresh_warm <=
# zklock's own cost per statement: the cycle against the peers and floors
T_OWN_PEER = 0.85       # sql_lock / curator_mutex <=
T_OWN_TEXTBOOK = 1.15   # sql_lock / floor_cycle (create, getChildren, delete in C) <=
T_OWN_PARALLEL = 0.8    # parallel: zklock cycles/s / the composed floor's >=
T_OWN_FANOUT = 0.7      # fanout_sql locks/s / fanout_floor cycles/s (80 sessions) >=
T_OWN_CPU = 2.0         # CPU per cycle, all threads: SQL / zkfloor multi <=
T_OWN_SWITCHES = 2.0    # context switches per cycle: SQL - zkfloor multi <=


def pct(sorted_vals, p):
    if not sorted_vals:
        return float("nan")
    i = min(len(sorted_vals) - 1, int(p * len(sorted_vals)))
    return sorted_vals[i]


def read_kv(path):
    d = {}
    if not os.path.exists(path):
        return d
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or " " not in line:
                continue
            k, v = line.split(" ", 1)
            if k in d and k.endswith("_ctx"):
                d[k] += "; " + v
            else:
                d[k] = v
    return d


def read_pgbench_both(raw, name, key):
    """The contention and parallel phases: run.sh's run_pgbench_both left
    RAW/NAME.txt ("clients", "seconds", "warmup" lines, and "KEY_failed 1"
    when pgbench failed) and the per-transaction logs of both servers'
    pgbench (client_id txn_no latency_us script_no epoch_s epoch_us).  The
    transactions (lock + unlock cycles) that ended inside [warmup, warmup +
    seconds) after the first one started count: "KEY_..." figures as
    pgclients printed them, the cycle's latency standing for the wait."""
    kv = read_kv(os.path.join(raw, name + ".txt"))
    d = {f"{key}_failed": kv[f"{key}_failed"]} if f"{key}_failed" in kv else {}
    w, secs = num(kv, "warmup"), num(kv, "seconds")
    rows = []
    for fn in glob.glob(os.path.join(raw, name + ".log.*")):
        server = fn[len(os.path.join(raw, name + ".log.")):].split(".")[0]
        with open(fn) as f:
            for line in f:
                c = line.split()
                if len(c) >= 6:
                    end = int(c[4]) + int(c[5]) / 1e6
                    rows.append((server + "_" + c[0], end - int(c[2]) / 1e6, end, float(c[2])))
    if not rows or secs != secs:
        return d
    t0 = min(r[1] for r in rows) + w
    kept = [r for r in rows if t0 <= r[2] < t0 + secs]
    lat = sorted(r[3] for r in kept)
    per_client = {}
    for r in kept:
        per_client[r[0]] = per_client.get(r[0], 0) + 1
    n = len(lat)
    d.update({f"{key}_clients": kv.get("clients", "?"), f"{key}_seconds": f"{secs:.3f}",
              f"{key}_grants": str(n), f"{key}_cycles": str(n), f"{key}_cycles_per_s": f"{n / secs:.1f}",
              f"{key}_grants_per_s": f"{n / secs:.1f}",
              f"{key}_wait_mean_us": f"{sum(lat) / n:.1f}" if n else "nan",
              f"{key}_wait_p50_us": f"{pct(lat, 0.50):.1f}", f"{key}_wait_p90_us": f"{pct(lat, 0.90):.1f}",
              f"{key}_wait_p99_us": f"{pct(lat, 0.99):.1f}", f"{key}_wait_max_us": f"{lat[-1]:.1f}" if n else "nan",
              f"{key}_client_cycles_min": str(min(per_client.values(), default=0)),
              f"{key}_client_cycles_max": str(max(per_client.values(), default=0)),
              f"{key}_failures": "1" if f"{key}_failed" in kv else "0"})
    return d


def num(d, k, default=float("nan")):
    try:
        return float(d[k])
    except (KeyError, ValueError):
        return default


def fmt(x, digits=0):
    if x is None or x != x:
        return "n/a"
    return f"{x:,.{digits}f}"


def main():
    out = sys.argv[1]
    raw = os.path.join(out, "raw")
    machine = read_kv(os.path.join(out, "machine.txt"))
    rounds = int(machine.get("rounds", "0"))

    multi_rounds = int(machine.get("multi_rounds", "0"))
    sem_rounds = int(machine.get("semaphore_rounds", "0"))
    lease_rounds = int(machine.get("lease_rounds", "0"))
    barrier_rounds = int(machine.get("barrier_rounds", "0"))
    fresh_rounds = int(machine.get("fresh_rounds", "0"))
    fanout_rounds = int(machine.get("fanout_rounds", "0"))

    # ---- per-variant, per-round statistics
    def round_stats(v, nrounds):
        res = {}
        for r in range(1, nrounds + 1):
            fn = os.path.join(raw, f"{v}.r{r}.txt")
            if not os.path.exists(fn):
                continue
            with open(fn) as f:
                vals = [float(x) for x in f if x.strip()]
            if not vals:
                continue
            s = sorted(vals)
            res[r] = {
                "n": len(vals),
                "mean": statistics.fmean(vals),
                "median": statistics.median(s),
                "p99": pct(s, 0.99),
            }
        return res

    per_round = {v: round_stats(v, rounds) for v, _ in VARIANTS}
    # the multi, semaphore and lease phases' variants, kept apart from the
    # latency variants (plot, latency table, noise table)
    ph_rounds = {**{v: multi_rounds for v, _ in MULTI_VARIANTS}, **{v: sem_rounds for v, _ in SEM_VARIANTS},
                 **{v: lease_rounds for v, _ in LEASE_VARIANTS},
                 **{v: barrier_rounds for v, _ in BARRIER_VARIANTS},
                 **{v: fresh_rounds for v, _ in FRESH_VARIANTS},
                 **{v: fanout_rounds for v, _ in FANOUT_VARIANTS}}
    ph_per_round = {v: round_stats(v, n) for v, n in ph_rounds.items()}

    # pooled over rounds, every round weighing the same (a fast round has
    # more samples; plain pooling would let it dominate)
    def weighted_pcts(rounds_vals, ps):
        pts = []
        for vals in rounds_vals:
            w = 1.0 / len(vals)
            pts.extend((x, w) for x in vals)
        pts.sort()
        total = sum(w for _, w in pts)
        res, acc, i = [], 0.0, 0
        for p in ps:
            target = p * total
            while i < len(pts) - 1 and acc + pts[i][1] < target:
                acc += pts[i][1]
                i += 1
            res.append(pts[i][0])
        return res

    def pool(v, pr):
        rv = []
        for r in sorted(pr):
            with open(os.path.join(raw, f"{v}.r{r}.txt")) as f:
                rv.append([float(x) for x in f if x.strip()])
        p10, p25, p50, p75, p90, p99 = weighted_pcts(rv, [0.10, 0.25, 0.50, 0.75, 0.90, 0.99])
        return {
            "n": sum(len(x) for x in rv),
            "mean": statistics.fmean(statistics.fmean(x) for x in rv),
            "p10": p10, "p25": p25, "median": p50, "p75": p75, "p90": p90, "p99": p99,
            "median_of_round_medians": statistics.median(x["median"] for x in pr.values()),
            "median_of_round_means": statistics.median(x["mean"] for x in pr.values()),
            "round_medians": [pr[r]["median"] for r in sorted(pr)],
            "round_means": [pr[r]["mean"] for r in sorted(pr)],
        }

    pooled = {v: pool(v, per_round[v]) for v, _ in VARIANTS if per_round[v]}
    ph_pooled = {v: pool(v, pr) for v, pr in ph_per_round.items() if pr}

    # ---- ratios within each round (a round counts for a ratio when every
    # variant the ratio needs ran in it)
    def ratio_series(needed, fn, src=per_round, nrounds=rounds):
        res = {}
        for stat in ("median", "mean"):
            vals = []
            for r in range(1, nrounds + 1):
                try:
                    g = {v: src[v][r][stat] for v in needed}
                except KeyError:
                    continue
                vals.append(fn(g))
            res[stat] = {
                "median": statistics.median(vals) if vals else NAN,
                "min": min(vals) if vals else NAN,
                "max": max(vals) if vals else NAN,
                "rounds": vals,
            }
        res["needs"] = list(needed)
        return res

    def over(a, b):
        """the ratio of latency variants a ÷ b, within each round"""
        return ratio_series((a, b), lambda g: g[a] / g[b])

    def zk_part(g, v="sql_lock"):
        return g[v] - g["sql_advisory"]

    def zk_part_over(v, floor):
        """the ZooKeeper part of SQL variant v (v − sql_advisory) ÷ floor, within each round"""
        return ratio_series((v, "sql_advisory", floor), lambda g: zk_part(g, v) / g[floor])

    ratios = {
        "zk_part_us": ratio_series(("sql_lock", "sql_advisory"), zk_part),
        "zk_part_over_create": zk_part_over("sql_lock", "floor_create"),
        "zk_part_over_cycle2": zk_part_over("sql_lock", "floor_cycle2"),
        "zk_part_over_multi": zk_part_over("sql_lock", "floor_multi"),
        "sql_over_curator_mutex": over("sql_lock", "curator_mutex"),
        "sql_over_kazoo": over("sql_lock", "kazoo"),
        "async_zk_part_us": ratio_series(("sql_lock_async", "sql_advisory"),
                                         lambda g: zk_part(g, "sql_lock_async")),
        "async_zk_part_over_create": zk_part_over("sql_lock_async", "floor_create"),
        "async_zk_part_over_pattern": zk_part_over("sql_lock_async", "floor_pattern"),
        "async_over_curator_mutex": over("sql_lock_async", "curator_mutex"),
        "async_over_kazoo": over("sql_lock_async", "kazoo"),
        "async_over_sql": over("sql_lock_async", "sql_lock"),
        "zk_part_over_pattern": zk_part_over("sql_lock", "floor_pattern"),
        "cycle2_over_create": over("floor_cycle2", "floor_create"),
        "multi_over_create": over("floor_multi", "floor_create"),
        "multi_over_cycle2": over("floor_multi", "floor_cycle2"),
        "createlist_over_create": over("floor_createlist", "floor_create"),
        "pattern_over_createlist": over("floor_pattern", "floor_createlist"),
        "pattern_over_create": over("floor_pattern", "floor_create"),
        "kazoo_over_sql": over("kazoo", "sql_lock"),
        "curator_mutex_over_sql": over("curator_mutex", "sql_lock"),
        "curator_rw_over_sql": over("curator_rw_write", "sql_lock"),
        "textbook_over_sql": over("floor_cycle", "sql_lock"),
        "sql_over_textbook": over("sql_lock", "floor_cycle"),
        "sql_over_amulti": over("sql_lock", "floor_amulti"),
        "amulti_over_multi": over("floor_amulti", "floor_multi"),
        "xact_over_sql": over("sql_xact", "sql_lock"),
        "xact_zk_part_over_create": zk_part_over("sql_xact", "floor_create"),
    }

    # the multi and semaphore phases' ratios, within each of their rounds
    def ph_ratio(needed, fn, nrounds):
        return ratio_series(needed, fn, ph_per_round, nrounds)

    def ph_over(a, b, nrounds):
        """the ratio of a phase's variants a ÷ b, within each of its rounds"""
        return ph_ratio((a, b), lambda g: g[a] / g[b], nrounds)

    ph_ratios = {
        "multi10_over_create": ph_over("sql_multi10", "multi_floor_create", multi_rounds),
        "multi10_over_set10": ph_over("sql_multi10", "multi_floor_set10", multi_rounds),
        "set10_over_create": ph_over("multi_floor_set10", "multi_floor_create", multi_rounds),
        "multi100_over_create": ph_over("sql_multi100", "multi_floor_create", multi_rounds),
        "curator_multi10_over_sql": ph_over("curator_multi10", "sql_multi10", multi_rounds),
        "curator_multi100_over_sql": ph_over("curator_multi100", "sql_multi100", multi_rounds),
        "sql_multi100_over_multi10": ph_over("sql_multi100", "sql_multi10", multi_rounds),
        "curator_multi100_over_multi10": ph_over("curator_multi100", "curator_multi10", multi_rounds),
        "curator_multi10_per_path_over_create": ph_ratio(
            ("curator_multi10", "multi_floor_create"),
            lambda g: g["curator_multi10"] / 10 / g["multi_floor_create"], multi_rounds),
        "sql_sem_over_curator": ph_over("sql_semaphore", "curator_semaphore", sem_rounds),
        "curator_sem_over_sql": ph_over("curator_semaphore", "sql_semaphore", sem_rounds),
        "lease_cycle_over_create": ph_over("sql_lease_cycle", "lease_floor_create", lease_rounds),
        "lease_renew_over_create": ph_over("sql_lease_renew", "lease_floor_create", lease_rounds),
        "ttlcycle_over_create": ph_over("lease_floor_ttlcycle", "lease_floor_create", lease_rounds),
        "renewfloor_over_create": ph_over("lease_floor_renew", "lease_floor_create", lease_rounds),
        "lease_cycle_over_ttlcycle": ph_over("sql_lease_cycle", "lease_floor_ttlcycle", lease_rounds),
        "lease_renew_over_renewfloor": ph_over("sql_lease_renew", "lease_floor_renew", lease_rounds),
        "fresh_over_warm": ph_over("sql_fresh", "sql_fresh_warm", fresh_rounds),
        "fresh_warm_over_create": ph_over("sql_fresh_warm", "fresh_floor_create", fresh_rounds),
        "fresh_over_create": ph_over("sql_fresh", "fresh_floor_create", fresh_rounds),
        "fanout_sql_over_floor": ph_over("fanout_sql", "fanout_floor", fanout_rounds),
        "fanout_sql_over_afloor": ph_over("fanout_sql", "fanout_afloor", fanout_rounds),
        "fanout_afloor_over_floor": ph_over("fanout_afloor", "fanout_floor", fanout_rounds),
        "fanout_sql_over_composed": ph_over("fanout_sql", "fanout_composed", fanout_rounds),
        "fanout_own_over_composed": ph_over("fanout_own", "fanout_composed", fanout_rounds),
        "fanout_own_over_floor": ph_over("fanout_own", "fanout_floor", fanout_rounds),
        "fanout_composed_over_afloor": ph_over("fanout_composed", "fanout_afloor", fanout_rounds),
        "dbarrier_release_over_create": ph_over("sql_dbarrier8_release", "barrier_floor_create", barrier_rounds),
        "dbarrier_round_over_curator": ph_over("sql_dbarrier8", "curator_dbarrier8", barrier_rounds),
        "dbarrier_fromlast_over_curator": ph_over("sql_dbarrier8_fromlast", "curator_dbarrier8_fromlast", barrier_rounds),
        "dbarrier_release_over_curator": ph_over("sql_dbarrier8_release", "curator_dbarrier8_release", barrier_rounds),
        "curator_dbarrier_release_over_create": ph_over("curator_dbarrier8_release", "barrier_floor_create", barrier_rounds),
        "dbarrier_fromlast_over_create": ph_over("sql_dbarrier8_fromlast", "barrier_floor_create", barrier_rounds),
        "curator_dbarrier_fromlast_over_create": ph_over("curator_dbarrier8_fromlast", "barrier_floor_create", barrier_rounds),
    }

    # the barrier phase: what each run printed, and the other columns of
    # its per-cycle lines (cycle last round_us release_us fromlast_us
    # gap_us first_release_us leave_us), median per run, then median over
    # rounds
    dbarrier_runs = {}
    for side in ("sql_dbarrier8", "curator_dbarrier8"):
        runs = []
        for r in range(1, barrier_rounds + 1):
            log = read_kv(os.path.join(raw, f"{side}.r{r}.log"))
            cyc = os.path.join(raw, f"{side}.r{r}.cycles")
            rows = []
            if os.path.exists(cyc):
                for line in open(cyc):
                    p = line.split()
                    if len(p) == 8:
                        rows.append([float(x) for x in p])
            if not log and not rows:
                continue
            run = {"round": r, "cycles": len(rows), "early": int(num(log, "dbarrier_early", 0)),
                   "cycles_all": int(num(log, "dbarrier_cycles_all", 0)),
                   "abandoned": log.get("dbarrier_abandoned", ""),
                   "incidents": int(num(log, "dbarrier_incidents", 0))}
            # ZooKeeper's counters over the run (run.sh zk_counted), per
            # cycle run (warm-up cycles and session set-up included)
            zk = read_kv(os.path.join(raw, f"{side}.r{r}.zk"))
            for k in ("zk_requests", "zk_writes", "zk_watch_events"):
                run[k + "_per_cycle"] = (num(zk, k) / run["cycles_all"]
                                         if k in zk and run["cycles_all"] > 0 else NAN)
            for col, name in ((5, "gap_us"), (6, "first_release_us"), (7, "leave_us")):
                run[name] = statistics.median(x[col] for x in rows) if rows else NAN
            # the release by where the last member was (zklock: even
            # connections are on server 1, odd ones on server 2)
            for srv in (0, 1):
                sel = [x[3] for x in rows if int(x[1]) % 2 == srv]
                run[f"release_last_on_{srv + 1}_us"] = statistics.median(sel) if sel else NAN
            runs.append(run)
        dbarrier_runs[side] = runs

    def dbr(side, key):
        vals = [x[key] for x in dbarrier_runs.get(side, []) if x[key] == x[key]]
        return statistics.median(vals) if vals else NAN

    # per-statement mean latencies reported by pgbench -r (whole run,
    # warm-up included), median over rounds; an ARRAY[...] literal (which
    # pgbench -r cuts short) is shown as ARRAY[…]
    def stmt_means(v, nrounds):
        per = {}
        for r in range(1, nrounds + 1):
            fn = os.path.join(raw, f"{v}.r{r}.txt.pgbench")
            if not os.path.exists(fn):
                continue
            on = False
            for line in open(fn):
                if line.startswith("statement latencies"):
                    on = True
                    continue
                mm = re.match(r"^\s+([\d.]+)\s+\d+\s+(.*\S)\s*$", line) if on else None
                if mm:
                    k = re.sub(r"ARRAY\[.*", "ARRAY[…]);", mm.group(2))
                    per.setdefault(k, []).append(float(mm.group(1)) * 1000)
        return {k: statistics.median(x) for k, x in per.items()}

    stmt = {v: stmt_means(v, rounds) for v in ("sql_lock", "sql_lock_async", "sql_xact", "sql_advisory")}
    ph_stmt = {v: stmt_means(v, ph_rounds[v])
               for v in ("sql_multi10", "sql_multi100", "sql_semaphore", "sql_lease_cycle", "sql_lease_renew")}
    # leases the lease phase found left over after a pgbench run (and
    # released): pgbench stopped between a cycle's lock and unlock
    lease_leftovers = sum(1 for fn in glob.glob(os.path.join(raw, "sql_lease_*.r*.txt.leftover"))
                          for line in open(fn) if line.strip())

    stack = read_kv(os.path.join(raw, "stack.txt"))
    contend = read_pgbench_both(raw, "contend", "contend")
    herd = read_kv(os.path.join(raw, "herd.txt"))
    scale = read_kv(os.path.join(raw, "scale.txt"))
    release = read_kv(os.path.join(raw, "release.txt"))
    deadlock = read_kv(os.path.join(raw, "deadlock.txt"))
    cpu_kv = read_kv(os.path.join(raw, "cpu_figures.txt"))
    curator = [read_kv(fn) for fn in sorted(glob.glob(os.path.join(raw, "curator_contend.[0-9]*.txt")))]
    contend_floor = read_kv(os.path.join(raw, "contend_floor.txt"))
    cur_waits = []
    for fn in glob.glob(os.path.join(raw, "curator_contend_waits.*.txt")):
        with open(fn) as f:
            cur_waits.extend(float(x) for x in f if x.strip())
    cur_waits.sort()
    par = {side: [read_kv(fn) for fn in sorted(glob.glob(os.path.join(raw, f"parallel_{side}.[0-9].txt")))]
           for side in ("raw", "async", "composed")}
    par["sql"] = [read_pgbench_both(raw, os.path.basename(fn)[:-4], "sql_parallel")
                  for fn in sorted(glob.glob(os.path.join(raw, "parallel_sql.[0-9].txt")))]
    mntr = {}
    if os.path.exists(os.path.join(raw, "mntr_end.txt")):
        for line in open(os.path.join(raw, "mntr_end.txt")):
            if "\t" in line:
                k, v = line.rstrip("\n").split("\t", 1)
                mntr[k] = v
    noise = []
    cpu = []
    if os.path.exists(os.path.join(raw, "cpu.txt")):
        with open(os.path.join(raw, "cpu.txt")) as f:
            for line in f:
                p = line.split()
                if len(p) == 4:
                    cpu.append(tuple(float(x) for x in p))
    if os.path.exists(os.path.join(raw, "noise.txt")):
        with open(os.path.join(raw, "noise.txt")) as f:
            next(f, None)
            for line in f:
                p = line.split()
                if len(p) != 5:
                    continue
                t0, t1 = float(p[2]), float(p[3])
                inside = [c for c in cpu if t0 < c[0] <= t1]
                noise.append({
                    "variant": p[0], "round": int(p[1]), "loadavg1": float(p[4]),
                    "busy_pct": statistics.fmean(c[1] for c in inside) if inside else float("nan"),
                    "ours_pct": statistics.fmean(c[2] for c in inside) if inside else float("nan"),
                    "foreign_pct": statistics.fmean(c[3] for c in inside) if inside else float("nan"),
                })
    # runs of the multi and semaphore phases are in noise.txt too
    ph_noise = [x for x in noise if x["variant"] in ph_rounds]
    noise = [x for x in noise if x["variant"] not in ph_rounds]
    foreign_all = [c[3] for c in cpu]
    def interval_means(name, col):
        """(label, mean of cpuwatch column col over the label's interval) for each
        "label t_start t_end" line of raw file name; NaN for an interval with no sample"""
        out = []
        if os.path.exists(os.path.join(raw, name)):
            for line in open(os.path.join(raw, name)):
                p = line.split()
                if len(p) == 3:
                    inside = [c[col] for c in cpu if float(p[1]) < c[0] <= float(p[2])]
                    out.append((p[0], statistics.fmean(inside) if inside else float("nan")))
        return out

    phase_noise = dict(interval_means("phases.txt", 3))

    # the machine's busy CPU (cpuwatch, % of both cores, every process)
    # during each step of the parallel phase (run.sh writes
    # parallel_steps.txt: step t_start t_end), mean over its samples, and
    # the mean of the runs of each side
    par_busy = {}
    for step, x in interval_means("parallel_steps.txt", 1):
        if x == x:
            par_busy.setdefault(step.split(".")[0], []).append(x)
    par_busy = {k: statistics.fmean(v) for k, v in par_busy.items()}

    def fan_busy(v):
        """the machine's busy CPU during the fanout phase's runs of variant v, median over its rounds"""
        x = [n["busy_pct"] for n in ph_noise if n["variant"] == v and n["busy_pct"] == n["busy_pct"]]
        return statistics.median(x) if x else NAN

    def phase_note(name):
        x = phase_noise.get(name)
        if x is None or x != x:
            return ""
        return (f"Other people's processes used {x:.0f} % of the machine's CPU (both cores) on average "
                f"during this test.\n\n")

    # ---- targets
    def rmed(key, stat="median"):
        return (ratios[key] if key in ratios else ph_ratios[key])[stat]["median"]

    def pooled_med(v):
        return pooled[v]["median_of_round_medians"] if v in pooled else NAN

    def ph_med(v, stat="median_of_round_medians"):
        return ph_pooled[v][stat] if v in ph_pooled else NAN

    def known(x):
        return x is not None and x == x

    def verdict(ok_med, ok_mean=None):
        if ok_med is None:
            return "not measured"
        if ok_mean is None or ok_mean == ok_med:
            return "**met**" if ok_med else "**missed**"
        return ("**met** on medians, missed on means" if ok_med
                else "**missed** on medians, met on means")

    def check(x, limit, kind):
        """x <= limit (kind "le") or x >= limit ("ge"); None when x is unknown"""
        if not known(x):
            return None
        return x <= limit if kind == "le" else x >= limit

    def margin(x, limit, kind, unit="×"):
        if not known(x) or x == 0:
            return ""
        if kind == "le":
            return (f"{(x / limit - 1) * 100:.0f} % over the {limit:g} {unit} limit" if x > limit
                    else f"{(1 - x / limit) * 100:.0f} % under the {limit:g} {unit} limit")
        return (f"{(1 - x / limit) * 100:.0f} % short of the {limit:g} {unit} bar" if x < limit
                else f"{(x / limit - 1) * 100:.0f} % above the {limit:g} {unit} bar")

    def ratio_verdict(key, limit, kind):
        """the verdict on ratio key against limit, on its medians and on its means"""
        return verdict(check(rmed(key), limit, kind), check(rmed(key, "mean"), limit, kind))

    def ratio_target(text, key, limit, kind, extra=""):
        x, xm = rmed(key), rmed(key, "mean")
        return {
            "target": text,
            "measured": (f"{x:.2f} × (means: {xm:.2f} ×)" if known(x) else "not measured") + extra,
            "met": check(x, limit, kind),
            "verdict": ratio_verdict(key, limit, kind),
            "margin": margin(x, limit, kind),
        }

    def value_target(text, measured, x, limit, kind):
        """a target judged on one figure x against limit; measured says what was measured"""
        return {"target": text, "measured": measured, "met": check(x, limit, kind),
                "verdict": verdict(check(x, limit, kind)), "margin": margin(x, limit, kind)}

    sync_guc = machine.get("sync_release_guc", "?")
    async_ran = "sql_lock_async" in pooled
    if async_ran:
        async_why = ""
    elif os.path.exists(os.path.join(raw, "sql_lock_async.unavailable")):
        async_why = "not available (the installed build has no `zklock.synchronous_release`)"
    else:
        async_why = "not run"
    build_note = ("; **so `sql_lock` itself released in the background**" if sync_guc == "absent" else "")

    def bare_c_note(floor, floor_over_create, sql_over_floor, what="cycle"):
        """a target's note on the phase's bare C client sending zklock's traffic (variant floor), if it ran:
        the ratios floor_over_create and sql_over_floor (zklock's what over it)"""
        if floor not in ph_pooled:
            return ""
        return (f"; the same ZooKeeper traffic from a bare C client (`{floor}`) is itself "
                f"{fmt(rmed(floor_over_create), 2)} × one create, and zklock's {what} "
                f"{fmt(rmed(sql_over_floor), 2)} × that")

    def async_beside(key, what):
        if not async_ran:
            return f"; background release (`sql_lock_async`): {async_why}"
        if not known(rmed(key)):
            return "; background release (`sql_lock_async`): not measured"
        return f"; background release (`sql_lock_async`): {rmed(key):.2f} ×{what}"

    stack_us = num(stack, "stack_zk_lock_us_per_call")
    herd_all = herd.get("herd_all_granted") == "1"
    herd_epr = num(herd, "herd_events_per_release")

    # contention: zklock's wall time per grant against one create; grant
    # rates of zklock and Curator over the same window length
    c_grants = num(contend, "contend_grants")
    c_secs = num(contend, "contend_seconds")
    c_us_per_grant = c_secs * 1e6 / c_grants if known(c_grants) and c_grants > 0 else NAN
    c_rate = c_grants / c_secs if known(c_grants) and known(c_secs) and c_secs > 0 else NAN
    cur_grants = sum(num(d, "curator_contend_grants") for d in curator) if curator else NAN
    cur_secs = num(curator[0], "curator_contend_seconds") if curator else NAN
    cur_failed = any("curator_contend_failed" in d or "curator_contend_grants" not in d for d in curator)
    if cur_failed:
        cur_grants = NAN
    cur_rate = cur_grants / cur_secs if known(cur_grants) and known(cur_secs) and cur_secs > 0 else NAN
    cur_late = max((num(d, "curator_contend_late_start_ms", 0) for d in curator), default=NAN)
    c_over_floor = c_us_per_grant / pooled_med("floor_create")
    c_over_curator = c_rate / cur_rate if known(cur_rate) and cur_rate > 0 else NAN
    # wall time per grant, zklock's over Curator's (the inverse of the rates)
    c_wall_over_curator = 1 / c_over_curator if known(c_over_curator) and c_over_curator > 0 else NAN
    # the contention floor: the bare recipe in C (zkfloor contend), same
    # window; zklock's and Curator's wall time per grant over its
    cf_grants = num(contend_floor, "raw_contend_grants")
    cf_secs = num(contend_floor, "raw_contend_seconds")
    cf_failures = num(contend_floor, "raw_contend_failures")
    cf_rate = cf_grants / cf_secs if known(cf_grants) and known(cf_secs) and cf_secs > 0 else NAN
    cf_us_per_grant = cf_secs * 1e6 / cf_grants if known(cf_grants) and cf_grants > 0 else NAN
    cf_over_floor = cf_us_per_grant / pooled_med("floor_create")
    cur_us_per_grant = cur_secs * 1e6 / cur_grants if known(cur_grants) and cur_grants > 0 else NAN
    c_over_cf = c_us_per_grant / cf_us_per_grant if known(cf_us_per_grant) else NAN
    cur_over_cf = cur_us_per_grant / cf_us_per_grant if known(cf_us_per_grant) else NAN
    cf_failed = "raw_contend_failed" in contend_floor
    cf_fail_note = (f" (**{fmt(cf_failures)} grants while another thread held the lock**)"
                    if known(cf_failures) and cf_failures > 0
                    else (" (**the run failed**)" if cf_failed else ""))

    def contend_floor_note(rate=False):
        """a contention target's note on the bare recipe in C, if it ran"""
        if not known(cf_us_per_grant):
            return ""
        return (f"; the bare recipe in C (`zkfloor contend`, {contend_floor.get('raw_contend_threads', '?')} "
                f"sessions): {fmt(cf_us_per_grant)} µs per grant"
                + (f" ({fmt(cf_rate, 1)} grants/s)" if rate else "")
                + f", zklock {fmt(c_over_cf, 2)} × that"
                + (f", Curator {fmt(cur_over_cf, 2)} ×" if rate else "")
                + cf_fail_note)


    # parallel: total cycles over the same total time on both sides
    par_sql = [num(d, "sql_parallel_cycles") for d in par["sql"]]
    par_raw = [num(d, "raw_parallel_cycles") for d in par["raw"]]
    par_sql_s = sum(num(d, "sql_parallel_seconds") for d in par["sql"])
    par_raw_s = sum(num(d, "raw_parallel_seconds") for d in par["raw"])
    par_sql_rate = sum(par_sql) / par_sql_s if par_sql and par_sql_s > 0 else NAN
    par_raw_rate = sum(par_raw) / par_raw_s if par_raw and par_raw_s > 0 else NAN
    par_async = [num(d, "raw_aparallel_cycles") for d in par["async"]]
    par_async_s = sum(num(d, "raw_aparallel_seconds") for d in par["async"])
    par_async_rate = sum(par_async) / par_async_s if par_async and par_async_s > 0 else NAN
    par_ratio = par_sql_rate / par_raw_rate if known(par_raw_rate) and par_raw_rate > 0 else NAN
    # the composed throughput floor, measured (zkfloor acomposed)
    par_comp = [num(d, "raw_acomposed_cycles") for d in par["composed"]]
    par_comp_s = sum(num(d, "raw_acomposed_seconds") for d in par["composed"])
    par_comp_rate = sum(par_comp) / par_comp_s if par_comp and par_comp_s > 0 else NAN
    par_comp_ratio = par_sql_rate / par_comp_rate if known(par_comp_rate) and par_comp_rate > 0 else NAN
    par_comp_note = (f"; the measured composed floor (`zkfloor acomposed`: 8 raw C sessions, each with a connection "
                     f"of its own, 4 per server, looping `pg_advisory_lock`, zklock's multi, `pg_advisory_unlock`, "
                     f"its delete) {fmt(par_comp_rate)} cycles/s, zklock {par_comp_ratio:.2f} × that"
                     + (f" (machine busy {par_busy['sql']:.0f} % during the SQL runs, {par_busy['composed']:.0f} % "
                        f"during the composed floor's)" if "sql" in par_busy and "composed" in par_busy else "")
                     if known(par_comp_ratio) else "; the measured composed floor (`zkfloor acomposed`): not measured")

    # the composed floor of the parallel phase: each of the SQL clients
    # needs the raw C session's cycle time plus PostgreSQL's own two
    # statements (sql_advisory, from the latency phase of this run)
    par_clients = num(par["sql"][0], "sql_parallel_clients") if par["sql"] else NAN
    par_threads = num(par["raw"][0], "raw_parallel_threads") if par["raw"] else NAN
    par_composed_rate = (par_clients / (par_threads / par_raw_rate + pooled_med("sql_advisory") / 1e6)
                         if known(par_raw_rate) and par_raw_rate > 0 and known(par_clients)
                         and known(par_threads) and known(pooled_med("sql_advisory")) else NAN)
    par_composed_ratio = (par_sql_rate / par_composed_rate
                          if known(par_composed_rate) and par_composed_rate > 0 else NAN)

    # CPU and context switches per cycle (the cpu phase)
    def cpu_fig(loop, what):
        return num(cpu_kv, f"cpu_{loop}_{what}")
    cpu_ratio = (cpu_fig("sql", "us") / cpu_fig("floor", "us")
                 if known(cpu_fig("sql", "us")) and cpu_fig("floor", "us") > 0 else NAN)
    cs_excess = cpu_fig("sql", "switches") - cpu_fig("floor", "switches")
    cpu_composed_us = cpu_fig("afloor", "us") + cpu_fig("adv", "us")
    cs_composed = cpu_fig("afloor", "switches") + cpu_fig("adv", "switches")
    cpu_floor_note = (f"; the asynchronous API alone (`zkfloor amulti`, as zklock must send): "
                      f"{fmt(cpu_fig('afloor', 'us'))} µs, {cpu_fig('afloor', 'switches'):.1f} switches; "
                      f"composed with PostgreSQL's two statements (a `pg_advisory_lock` cycle, "
                      f"{fmt(cpu_fig('adv', 'us'))} µs, {cpu_fig('adv', 'switches'):.1f} switches): "
                      f"{fmt(cpu_composed_us)} µs, {cs_composed:.1f} switches; zklock "
                      f"{cpu_fig('sql', 'us') / cpu_composed_us:.2f} × and {cpu_fig('sql', 'switches') - cs_composed:+.1f}"
                      f" against that" if known(cpu_composed_us) and cpu_composed_us > 0 else "")

    # deadlock detection: ms from deadlock_timeout to 40P01, per cycle length
    dl = {}
    for m in (2, 3, 4):
        vals = [float(x) for x in deadlock.get(f"deadlock_ms_{m}", "").split()]
        dl[m] = statistics.median(vals) if vals else NAN
    dl_over_create = (dl[2] * 1000 / pooled_med("floor_create")
                      if known(dl[2]) and known(pooled_med("floor_create")) else NAN)

    # releasing N locks at COMMIT
    rel_n = num(release, "release_nlocks")
    rel_us = num(release, "release_xact_us_per_node")
    rel_left = (num(release, "release_xact_remaining_sample", 0) + num(release, "release_xact_remaining_all", 0)
                if "release_xact_remaining_all" in release else NAN)
    rel_ok = None if not known(rel_us) or not known(rel_left) else (rel_us <= T_RELEASE_US and rel_left == 0)

    targets = [
        ratio_target(f"Default (synchronous release): ZooKeeper part of an uncontended zk_lock+zk_unlock cycle "
                     f"(`sql_lock` − `sql_advisory`) ≤ {T_ZK_PART:g} × one create (`floor_create`)",
                     "zk_part_over_create", T_ZK_PART, "le",
                     f"; {fmt(rmed('zk_part_us'))} µs vs floor {fmt(pooled_med('floor_create'))} µs"
                     + async_beside("async_zk_part_over_create", f" ({fmt(rmed('async_zk_part_us'))} µs)")
                     + build_note),
        ratio_target(f"Default: SQL cycle ≤ {T_PEER:g} × Curator InterProcessMutex cycle (`sql_lock` ÷ `curator_mutex`)",
                     "sql_over_curator_mutex", T_PEER, "le",
                     async_beside("async_over_curator_mutex", "") + build_note),
        ratio_target(f"Default: SQL cycle ≤ {T_PEER:g} × kazoo Lock cycle (`sql_lock` ÷ `kazoo`)",
                     "sql_over_kazoo", T_PEER, "le",
                     async_beside("async_over_kazoo", "") + build_note),
        ratio_target(f"Multi-lock, N = 10 paths: uncontended SQL cycle `zk_lock(ARRAY[…])` + `zk_unlock(ARRAY[…])` "
                     f"(`sql_multi10`) ≤ {T_MULTI_CREATE:g} × one create (`multi_floor_create`, same phase)",
                     "multi10_over_create", T_MULTI_CREATE, "le",
                     f"; {fmt(ph_med('sql_multi10'))} µs vs floor {fmt(ph_med('multi_floor_create'))} µs; "
                     f"N = 100: {fmt(rmed('multi100_over_create'), 2)} × ({fmt(ph_med('sql_multi100'))} µs)"
                     + bare_c_note("multi_floor_set10", "set10_over_create", "multi10_over_set10")
                     if "sql_multi10" in ph_pooled else ""),
        ratio_target(f"Multi-lock, N = 10: Curator InterProcessMultiLock over the same number of paths ≥ {T_MULTI_PEER:g} × "
                     f"slower than zklock's (`curator_multi10` ÷ `sql_multi10`)",
                     "curator_multi10_over_sql", T_MULTI_PEER, "ge",
                     f"; {fmt(ph_med('curator_multi10'))} µs vs {fmt(ph_med('sql_multi10'))} µs"
                     if "sql_multi10" in ph_pooled else ""),
        ratio_target(f"Multi-lock, N = 100: Curator InterProcessMultiLock ≥ {T_MULTI_PEER:g} × slower than zklock's "
                     f"(`curator_multi100` ÷ `sql_multi100`)",
                     "curator_multi100_over_sql", T_MULTI_PEER, "ge",
                     f"; {fmt(ph_med('curator_multi100'))} µs vs {fmt(ph_med('sql_multi100'))} µs"
                     if "sql_multi100" in ph_pooled else ""),
        ratio_target(f"Semaphore (4 leases), uncontended: SQL cycle `zk_semaphore_acquire` + `zk_semaphore_release` "
                     f"≤ {T_SEM_PEER:g} × Curator InterProcessSemaphoreV2 `acquire()` + `returnLease()` "
                     f"(`sql_semaphore` ÷ `curator_semaphore`)",
                     "sql_sem_over_curator", T_SEM_PEER, "le",
                     f"; {fmt(ph_med('sql_semaphore'))} µs vs {fmt(ph_med('curator_semaphore'))} µs"
                     if "sql_semaphore" in ph_pooled else ""),
        ratio_target(f"Lease, uncontended: SQL cycle `zk_lease_lock` + `zk_lease_unlock` (`sql_lease_cycle`) "
                     f"≤ {T_LEASE_CYCLE:g} × one create (`lease_floor_create`, same phase)",
                     "lease_cycle_over_create", T_LEASE_CYCLE, "le",
                     f"; {fmt(ph_med('sql_lease_cycle'))} µs vs floor {fmt(ph_med('lease_floor_create'))} µs"
                     + bare_c_note("lease_floor_ttlcycle", "ttlcycle_over_create", "lease_cycle_over_ttlcycle")
                     if "sql_lease_cycle" in ph_pooled else ""),
        ratio_target(f"Lease renewal (node name known to the backend): `zk_lease_renew` (`sql_lease_renew`) "
                     f"≤ {T_LEASE_RENEW:g} × one create (`lease_floor_create`, same phase)",
                     "lease_renew_over_create", T_LEASE_RENEW, "le",
                     f"; {fmt(ph_med('sql_lease_renew'))} µs vs floor {fmt(ph_med('lease_floor_create'))} µs"
                     + bare_c_note("lease_floor_renew", "renewfloor_over_create", "lease_renew_over_renewfloor",
                                   "renewal")
                     if "sql_lease_renew" in ph_pooled else ""),
        ratio_target(f"Double barrier, 8 members (4 backends per server), lock-step cycles: from the last member's "
                     f"`zk_double_barrier_enter` to every member's return (`sql_dbarrier8_release`) "
                     f"≤ {T_DBARRIER_RELEASE:g} × one create (`barrier_floor_create`, same phase)",
                     "dbarrier_release_over_create", T_DBARRIER_RELEASE, "le",
                     f"; {fmt(ph_med('sql_dbarrier8_release'))} µs vs floor {fmt(ph_med('barrier_floor_create'))} µs; "
                     f"Curator's release {fmt(ph_med('curator_dbarrier8_release'))} µs = "
                     f"{fmt(rmed('curator_dbarrier_release_over_create'), 2)} × one create"
                     if "sql_dbarrier8_release" in ph_pooled else ""),
        ratio_target(f"Double barrier, 8 members: a whole enter + leave cycle (`sql_dbarrier8`) ≤ {T_DBARRIER_PEER:g} × "
                     f"Curator's DistributedDoubleBarrier cycle with 8 members (`curator_dbarrier8`, same phase)",
                     "dbarrier_round_over_curator", T_DBARRIER_PEER, "le",
                     f"; {fmt(ph_med('sql_dbarrier8'))} µs vs {fmt(ph_med('curator_dbarrier8'))} µs, both including "
                     f"the {machine.get('barrier_gap_ms', '?')} ms head start of 7 members; without it (last enter → "
                     f"last leave): {fmt(rmed('dbarrier_fromlast_over_curator'), 2)} × "
                     f"({fmt(ph_med('sql_dbarrier8_fromlast'))} µs vs {fmt(ph_med('curator_dbarrier8_fromlast'))} µs)"
                     if "sql_dbarrier8" in ph_pooled else ""),
        ratio_target(f"Fresh path, uncontended: lock + unlock on a path whose lock node is missing (`sql_fresh`) "
                     f"≤ {T_FRESH:g} × the same cycle on a warm path (`sql_fresh_warm`, same phase)",
                     "fresh_over_warm", T_FRESH, "le",
                     f"; {fmt(ph_med('sql_fresh'))} µs vs {fmt(ph_med('sql_fresh_warm'))} µs"
                     if "sql_fresh" in ph_pooled else ""),
        value_target(f"Contention, 8 contenders on one path: zklock's wall time per grant (window ÷ grants) "
                     f"≤ {T_CONTEND_FLOOR:g} × `floor_create`",
                     (f"{c_over_floor:.2f} × ({fmt(c_us_per_grant)} µs per grant; floor_create "
                      f"{fmt(pooled_med('floor_create'))} µs)" if known(c_over_floor)
                      else f"not measured ({fmt(c_us_per_grant)} µs per grant; floor_create "
                           f"{fmt(pooled_med('floor_create'))} µs)") + contend_floor_note(),
                     c_over_floor, T_CONTEND_FLOOR, "le"),
        value_target(f"Contention, 8 contenders on one path: zklock's wall time per grant ≤ {T_CONTEND_PEER:g} × "
                     f"Curator InterProcessMutex's (2 JVMs × 4 threads)",
                     (f"{c_wall_over_curator:.2f} × ({fmt(c_rate, 1)} vs {fmt(cur_rate, 1)} grants/s)"
                      if known(c_wall_over_curator) else
                      f"not measured (zklock {fmt(c_rate, 1)}, Curator {fmt(cur_rate, 1)} grants/s)")
                     + (f"; **a JVM started counting {cur_late:.0f} ms late**" if known(cur_late) and cur_late > 0 else "")
                     + contend_floor_note(rate=True),
                     c_wall_over_curator, T_CONTEND_PEER, "le"),
        {
            "target": f"Releasing N = {fmt(rel_n)} transaction locks at COMMIT: COMMIT time ÷ N ≤ {T_RELEASE_US:g} µs, "
                      f"and no queue node left when COMMIT returns",
            "measured": (f"{rel_us:.2f} µs per node (COMMIT {fmt(num(release, 'release_xact_commit_us') / 1000, 1)} ms; "
                         f"net of an empty COMMIT: {num(release, 'release_xact_net_us_per_node'):.2f} µs per node); "
                         f"nodes left: {release.get('release_xact_remaining_sample', '?')} on "
                         f"{release.get('release_xact_sample_paths', '?')} paths checked at once, "
                         f"{release.get('release_xact_remaining_all', '?')} on all N"
                         if known(rel_us) else "not measured"),
            "met": rel_ok,
            "verdict": verdict(rel_ok),
            "margin": margin(rel_us, T_RELEASE_US, "le", "µs"),
        },
        value_target(f"Deadlock detection: time from `deadlock_timeout` to 40P01 for a 2-cycle across two servers "
                     f"≤ {T_DEADLOCK:g} × `floor_create`, and linear in the cycle length",
                     (f"{dl_over_create:.1f} × ({dl[2]:.2f} ms; floor_create {fmt(pooled_med('floor_create'))} µs); "
                      f"3-cycle {dl[3]:.2f} ms, 4-cycle {dl[4]:.2f} ms (medians of "
                      f"{len(deadlock.get('deadlock_ms_2', '').split())} each)"
                      if known(dl_over_create) else
                      (f"not measured against floor_create (2-cycle {dl[2]:.2f} ms)" if known(dl[2]) else "not measured")),
                     dl_over_create, T_DEADLOCK, "le"),
        value_target(f"Independent locks in parallel (8 clients, 4 per server, a path each): zklock cycles/s "
                     f"≥ {T_PARALLEL:g} × raw C client (8 sessions, same cycle)",
                     (f"{par_ratio:.2f} × ({fmt(par_sql_rate)} vs {fmt(par_raw_rate)} cycles/s)"
                      if known(par_ratio) else "not measured"),
                     par_ratio, T_PARALLEL, "ge"),
        ratio_target(f"Own cost: SQL cycle ≤ {T_OWN_PEER:g} × Curator InterProcessMutex cycle (`sql_lock` ÷ `curator_mutex`)",
                     "sql_over_curator_mutex", T_OWN_PEER, "le",
                     f"; {fmt(pooled_med('sql_lock'))} µs vs {fmt(pooled_med('curator_mutex'))} µs"),
        ratio_target(f"Own cost: SQL cycle ≤ {T_OWN_TEXTBOOK:g} × the textbook floor, create + getChildren + delete in C "
                     f"(`sql_lock` ÷ `floor_cycle`)",
                     "sql_over_textbook", T_OWN_TEXTBOOK, "le",
                     f"; {fmt(pooled_med('sql_lock'))} µs vs {fmt(pooled_med('floor_cycle'))} µs; zklock's own "
                     f"traffic through the asynchronous API (`floor_amulti`) {fmt(pooled_med('floor_amulti'))} µs, "
                     f"plus PostgreSQL's two statements (`sql_advisory`) {fmt(pooled_med('sql_advisory'))} µs: "
                     f"{fmt(pooled_med('floor_amulti') + pooled_med('sql_advisory'))} µs"
                     if "floor_amulti" in pooled else ""),
        value_target(f"Own cost: 8 clients on paths of their own, zklock cycles/s ≥ {T_OWN_PARALLEL:g} × the composed "
                     f"floor (each raw C session's cycle time plus `sql_advisory`)",
                     (f"{par_composed_ratio:.2f} × ({fmt(par_sql_rate)} vs {fmt(par_composed_rate)} cycles/s; "
                      f"raw C {fmt(par_raw_rate)} cycles/s"
                      + (f"; zklock's own cycle through the asynchronous API from 8 raw C sessions "
                         f"(`zkfloor aparallel`) {fmt(par_async_rate)} cycles/s, zklock "
                         f"{par_sql_rate / par_async_rate:.2f} × that" if known(par_async_rate) else "")
                      + ")" if known(par_composed_ratio) else "not measured") + par_comp_note,
                     par_composed_ratio, T_OWN_PARALLEL, "ge"),
        ratio_target(f"Own cost: 80 backends on 2 servers, locks/s (`fanout_sql`) ≥ {T_OWN_FANOUT:g} × 80 bare C "
                     f"sessions' cycles/s (`fanout_floor`), same phase",
                     "fanout_sql_over_floor", T_OWN_FANOUT, "ge",
                     (f"; {fmt(ph_med('fanout_sql'))} locks/s vs {fmt(ph_med('fanout_floor'))} cycles/s"
                     + (f"; zklock's own cycle through the asynchronous API from as many raw C sessions "
                        f"(`fanout_afloor`) {fmt(ph_med('fanout_afloor'))} cycles/s, zklock "
                        f"{fmt(rmed('fanout_sql_over_afloor'), 2)} × that" if "fanout_afloor" in ph_pooled else "")
                     if "fanout_sql" in ph_pooled and "fanout_floor" in ph_pooled else "")
                     + (f"; the measured composed floor (`fanout_composed`: as many raw C sessions, each with a "
                        f"connection of its own, 40 per server, looping `pg_advisory_lock`, zklock's multi, "
                        f"`pg_advisory_unlock`, its delete) {fmt(ph_med('fanout_composed'))} cycles/s, zklock "
                        f"{fmt(rmed('fanout_sql_over_composed'), 2)} × that (within each round)"
                        + (f" (machine busy {fan_busy('fanout_sql'):.0f} % during `fanout_sql`, "
                           f"{fan_busy('fanout_composed'):.0f} % during `fanout_composed`)"
                           if known(fan_busy("fanout_sql")) and known(fan_busy("fanout_composed")) else "")
                        if "fanout_sql" in ph_pooled and known(rmed("fanout_sql_over_composed"))
                        else "; the measured composed floor (`fanout_composed`): not measured")
                     + (f"; each backend on a path of its own, as each floor session has its own parent "
                        f"(`fanout_own`) {fmt(ph_med('fanout_own'))} locks/s: "
                        f"{fmt(rmed('fanout_own_over_floor'), 2)} × `fanout_floor`, "
                        f"{fmt(rmed('fanout_own_over_composed'), 2)} × the composed floor"
                        if "fanout_own" in ph_pooled and known(rmed("fanout_own_over_composed")) else "")),
        value_target(f"Own cost: CPU per uncontended cycle, all threads of the backend, ≤ {T_OWN_CPU:g} × the bare "
                     f"C client's (`zkfloor multi`), cpu phase",
                     (f"{cpu_ratio:.2f} × ({fmt(cpu_fig('sql', 'us'))} vs {fmt(cpu_fig('floor', 'us'))} µs)"
                      + cpu_floor_note if known(cpu_ratio) else "not measured"),
                     cpu_ratio, T_OWN_CPU, "le"),
        dict(value_target(f"Own cost: context switches per uncontended cycle ≤ the bare C client's + "
                          f"{T_OWN_SWITCHES:g}, cpu phase",
                          (f"{cs_excess:+.2f} ({cpu_fig('sql', 'switches'):.2f} vs "
                           f"{cpu_fig('floor', 'switches'):.2f})" + cpu_floor_note
                           if known(cs_excess) else "not measured"),
                          cs_excess, T_OWN_SWITCHES, "le"),
             margin=(f"{abs(cs_excess - T_OWN_SWITCHES):.2f} switches "
                     f"{'over' if cs_excess > T_OWN_SWITCHES else 'under'} the limit"
                     if known(cs_excess) else "")),
        {
            "target": "Stacked re-acquire < 20 µs per call",
            "measured": f"{stack_us:.3f} µs per call" if known(stack_us) else "not measured",
            "met": stack_us < 20 if known(stack_us) else None,
            "verdict": verdict(stack_us < 20 if known(stack_us) else None),
            "margin": f"{20 / stack_us:.0f} × under the limit" if known(stack_us) and stack_us > 0 else "",
        },
        {
            "target": "200 waiters: all granted; watch events per release ≤ 2",
            "measured": (f"{herd.get('herd_granted', '?')}/{herd.get('herd_waiters', '?')} granted "
                         f"(failures {herd.get('herd_failures', '?')}, token-order inversions "
                         f"{herd.get('herd_token_inversions', '?')}); {herd_epr:.3f} watch events per release"
                         if herd else "not measured"),
            "met": (herd_all and herd_epr <= 2) if herd else None,
            "verdict": verdict((herd_all and herd_epr <= 2) if herd else None),
            "margin": "",
        },
    ]

    results = {
        "machine": machine, "per_round": per_round, "pooled": pooled, "ratios": ratios,
        "phase_per_round": ph_per_round, "phase_pooled": ph_pooled, "phase_ratios": ph_ratios,
        "phase_statements": ph_stmt, "phase_noise_runs": ph_noise, "lease_leftovers": lease_leftovers,
        "dbarrier_runs": dbarrier_runs,
        "statements": stmt, "stack": stack, "contend": contend, "herd": herd, "scale": scale,
        "curator_contend": curator, "contend_floor": contend_floor, "parallel": par, "release": release,
        "derived": {
            "contend_us_per_grant": c_us_per_grant, "contend_grants_per_s": c_rate,
            "curator_contend_grants_per_s": cur_rate, "contend_us_per_grant_over_floor_create": c_over_floor,
            "contend_rate_over_curator": c_over_curator, "parallel_sql_cycles_per_s": par_sql_rate,
            "parallel_raw_cycles_per_s": par_raw_rate, "parallel_sql_over_raw": par_ratio,
            "parallel_composed_cycles_per_s": par_comp_rate, "parallel_sql_over_composed": par_comp_ratio,
            "parallel_machine_busy_pct": par_busy,
            "fanout_machine_busy_pct": {v: fan_busy(v) for v, _ in FANOUT_VARIANTS},
            "contend_floor_grants_per_s": cf_rate, "contend_floor_us_per_grant": cf_us_per_grant,
            "contend_floor_us_per_grant_over_floor_create": cf_over_floor,
            "contend_us_per_grant_over_contend_floor": c_over_cf,
            "curator_contend_us_per_grant_over_contend_floor": cur_over_cf,
        },
        "noise": noise, "phase_noise": phase_noise, "targets": targets,
    }
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)

    # ---- plot data: index label p10 p25 median p75 p90 mean p99
    with open(os.path.join(out, "plot.dat"), "w") as f:
        f.write("# idx label p10 p25 median p75 p90 mean p99\n")
        for i, v in enumerate(v for v, _ in VARIANTS if v in pooled):
            p = pooled[v]
            f.write(f'{i} "{LABELS[v]}" {p["p10"]:.1f} {p["p25"]:.1f} {p["median"]:.1f} '
                    f'{p["p75"]:.1f} {p["p90"]:.1f} {p["mean"]:.1f} {p["p99"]:.1f}\n')

    # ---- tables
    lat_rows = ["| variant | what one op is | median µs | mean µs | p99 µs | ops | per-round medians µs |",
                "|---|---|---:|---:|---:|---:|---|"]
    for v, desc in VARIANTS:
        if v not in pooled:
            if v == "sql_lock_async" and async_why.startswith("not available"):
                lat_rows.append(f"| `{v}` | {desc} | {async_why} | | | | |")
            continue
        p = pooled[v]
        lat_rows.append(
            f"| `{v}` | {desc} | {fmt(p['median_of_round_medians'])} | {fmt(p['median_of_round_means'])} | "
            f"{fmt(p['p99'])} | {p['n']:,} | {' / '.join(fmt(x) for x in p['round_medians'])} |")

    def rrow(name, key, unit="×", digits=2):
        r = ratios[key] if key in ratios else ph_ratios[key]
        if not r["median"]["rounds"]:
            why = (async_why if "sql_lock_async" in r["needs"] and async_why.startswith("not available")
                   else "not measured")
            return f"| {name} | {why} | | |"
        return (f"| {name} | {r['median']['median']:.{digits}f} {unit} | "
                f"{r['median']['min']:.{digits}f} – {r['median']['max']:.{digits}f} | "
                f"{r['mean']['median']:.{digits}f} {unit} |")

    ratio_rows = [
        "| ratio (computed within each round) | median over rounds (from medians) | range over rounds | median over rounds (from means) |",
        "|---|---:|---:|---:|",
        rrow("ZooKeeper part of the SQL cycle = `sql_lock` − `sql_advisory`", "zk_part_us", "µs", 0),
        rrow(f"ZooKeeper part ÷ `floor_create` (target ≤ {T_ZK_PART:g})", "zk_part_over_create"),
        rrow("ZooKeeper part ÷ `floor_cycle2` (the two-write floor)", "zk_part_over_cycle2"),
        rrow("ZooKeeper part ÷ `floor_multi` (extension overhead over its own synchronous-release traffic)", "zk_part_over_multi"),
        rrow(f"`sql_lock` ÷ `curator_mutex` (target ≤ {T_PEER:g})", "sql_over_curator_mutex"),
        rrow(f"`sql_lock` ÷ `kazoo` (target ≤ {T_PEER:g})", "sql_over_kazoo"),
        rrow("ZooKeeper part with background release = `sql_lock_async` − `sql_advisory`", "async_zk_part_us", "µs", 0),
        rrow("… ÷ `floor_create`", "async_zk_part_over_create"),
        rrow("… ÷ `floor_pattern` (extension overhead over its own background-release traffic)", "async_zk_part_over_pattern"),
        rrow("`sql_lock_async` ÷ `sql_lock` (background ÷ synchronous release)", "async_over_sql"),
        rrow("`sql_lock_async` ÷ `curator_mutex`", "async_over_curator_mutex"),
        rrow("`sql_lock_async` ÷ `kazoo`", "async_over_kazoo"),
        rrow("ZooKeeper part (`sql_lock` − `sql_advisory`) ÷ `floor_pattern`", "zk_part_over_pattern"),
        rrow("`floor_cycle2` ÷ `floor_create` (the delete, a second write)", "cycle2_over_create"),
        rrow("`floor_multi` ÷ `floor_create`", "multi_over_create"),
        rrow("`floor_multi` ÷ `floor_cycle2` (the setData in the multi)", "multi_over_cycle2"),
        rrow("`floor_createlist` ÷ `floor_create` (the pipelined getChildren)", "createlist_over_create"),
        rrow("`floor_pattern` ÷ `floor_createlist` (the previous cycle's background delete)", "pattern_over_createlist"),
        rrow("`floor_pattern` ÷ `floor_create` (cost of the background-release traffic itself)", "pattern_over_create"),
        rrow("`kazoo` ÷ `sql_lock`", "kazoo_over_sql"),
        rrow("`curator_mutex` ÷ `sql_lock`", "curator_mutex_over_sql"),
        rrow("`curator_rw_write` ÷ `sql_lock`", "curator_rw_over_sql"),
        rrow("`floor_cycle` (textbook C cycle) ÷ `sql_lock`", "textbook_over_sql"),
        rrow("`sql_xact` ÷ `sql_lock`", "xact_over_sql"),
        rrow("(`sql_xact` − `sql_advisory`) ÷ `floor_create`", "xact_zk_part_over_create"),
    ]

    target_rows = ["| target | measured | verdict | margin |", "|---|---|---|---|"]
    for t in targets:
        target_rows.append(f"| {t['target']} | {t['measured']} | {t['verdict']} | {t['margin']} |")

    def stmt_table(variants, stmts):
        """the per-statement means (stmt or ph_stmt) of the pgbench variants"""
        rows = ["| pgbench script | statement | mean µs (median over rounds) |", "|---|---|---:|"]
        for v in variants:
            for k, x in stmts.get(v, {}).items():
                rows.append(f"| `{v}` | `{k}` | {x:.0f} |")
        return rows

    stmt_rows = stmt_table(("sql_lock", "sql_lock_async", "sql_xact", "sql_advisory"), stmt)

    stack_rows = [
        "| statement (one backend already holding the lock) | µs per call |", "|---|---:|",
        f"| `SELECT count(zk_lock('/bench/s')) FROM generate_series(1, {stack.get('stack_calls', '?')})` | {num(stack, 'stack_zk_lock_us_per_call'):.3f} |",
        f"| `SELECT count(zk_unlock('/bench/s')) FROM generate_series(1, …)` | {num(stack, 'stack_zk_unlock_us_per_call'):.3f} |",
        f"| same with `pg_advisory_lock(1)` (stacked), for scale | {num(stack, 'stack_pg_advisory_lock_us_per_call'):.3f} |",
        f"| same with `pg_advisory_unlock(1)` | {num(stack, 'stack_pg_advisory_unlock_us_per_call'):.3f} |",
        f"| baseline: `count(length('/bench/s'))` (executor cost of one call) | {num(stack, 'stack_baseline_length_us_per_call'):.3f} |",
    ]

    def cpct(p):
        return pct(cur_waits, p) if cur_waits else NAN

    cur_sessions = sum(int(num(d, "curator_contend_sessions", 0)) for d in curator)
    contend_rows = [
        "| measure | zklock (`pgbench -f bench/contend.sql -c 4` on each server) | Curator InterProcessMutex (`CuratorBench contend`) | "
        "raw C client (`zkfloor contend`) |",
        "|---|---:|---:|---:|",
        f"| contenders | {contend.get('contend_clients', '?')} backends (4 per server), a ZooKeeper session each | "
        f"{sum(int(num(d, 'curator_contend_threads', 0)) for d in curator)} threads in {len(curator)} JVMs, "
        f"{cur_sessions} ZooKeeper sessions | {contend_floor.get('raw_contend_threads', '?')} threads, a zhandle "
        f"(ZooKeeper session) each |",
        f"| measured window | {fmt(c_secs, 0)} s | {fmt(cur_secs, 0)} s | {fmt(cf_secs, 0)} s |",
        f"| grants | {fmt(c_grants)} | {fmt(cur_grants)} | {fmt(cf_grants)} |",
        f"| grants per second | {fmt(c_rate, 1)} | {fmt(cur_rate, 1)} | {fmt(cf_rate, 1)} |",
        f"| **wall time per grant** (window ÷ grants) | **{fmt(c_us_per_grant)} µs** | "
        f"{fmt(cur_us_per_grant)} µs | {fmt(cf_us_per_grant)} µs |",
        f"| … ÷ `floor_create` ({fmt(pooled_med('floor_create'))} µs; target ≤ {T_CONTEND_FLOOR:g} for zklock) | "
        f"{fmt(c_over_floor, 2)} × | "
        f"{fmt(cur_us_per_grant / pooled_med('floor_create'), 2)} × | {fmt(cf_over_floor, 2)} × |",
        f"| … ÷ the raw C client's (the bare recipe's hand-off) | {fmt(c_over_cf, 2)} × | {fmt(cur_over_cf, 2)} × | |",
        f"| wait p50 (client side: zklock's whole cycle, zk_lock sent → zk_unlock's result, from pgbench's "
        f"per-transaction log; Curator's acquire() called → returned) | "
        f"{fmt(num(contend, 'contend_wait_p50_us') / 1000, 2)} ms | {fmt(cpct(0.50) / 1000, 2)} ms | |",
        f"| wait p90 | {fmt(num(contend, 'contend_wait_p90_us') / 1000, 2)} ms | {fmt(cpct(0.90) / 1000, 2)} ms | |",
        f"| wait p99 | {fmt(num(contend, 'contend_wait_p99_us') / 1000, 2)} ms | {fmt(cpct(0.99) / 1000, 2)} ms | |",
        f"| wait max | {fmt(num(contend, 'contend_wait_max_us') / 1000, 2)} ms | "
        f"{fmt(cur_waits[-1] / 1000 if cur_waits else NAN, 2)} ms | |",
        f"| wait mean (raw C client: create sent → granted) | {fmt(num(contend, 'contend_wait_mean_us') / 1000, 2)} ms | "
        f"{fmt(statistics.fmean(cur_waits) / 1000 if cur_waits else NAN, 2)} ms | "
        f"{fmt(num(contend_floor, 'raw_contend_wait_mean_us') / 1000, 2)} ms |",
        f"| failures | {contend.get('contend_failures', '?')} | failures: {'yes' if cur_failed else ('0' if curator else '?')} | "
        f"grants while another thread held the lock: {contend_floor.get('raw_contend_failures', '?')}"
        f"{' (the run failed)' if cf_failed else ''} |",
        "| watches given up on after 1 s (listed again) | | | "
        f"{contend_floor.get('raw_contend_watch_timeouts', '?')} |",
        f"| latest JVM start after the agreed start time | | {fmt(cur_late, 0)} ms | |",
        f"| **zklock's wall time per grant ÷ Curator's** (target ≤ {T_CONTEND_PEER:g}) | **{fmt(c_wall_over_curator, 2)} ×** | | |",
    ]

    def par_mean_cycle(side, key_n):
        cyc = {"sql": par_sql, "raw": par_raw, "async": par_async, "composed": par_comp}[side]
        secs = {"sql": par_sql_s, "raw": par_raw_s, "async": par_async_s, "composed": par_comp_s}[side]
        return (num(par[side][0], key_n) * secs * 1e6 / sum(cyc)
                if par[side] and sum(cyc) > 0 else NAN)

    def par_busy_cell(side):
        return f"{par_busy[side]:.0f} %" if side in par_busy else "n/a"

    par_rows = [
        "| measure | zklock (`pgbench -f bench/parallel.sql -c 4` on each server) | raw C client (`zkfloor parallel`) | "
        "raw C, zklock's cycle (`zkfloor aparallel`) | the composed floor (`zkfloor acomposed`) |",
        "|---|---:|---:|---:|---:|",
        f"| sessions | {par['sql'][0].get('sql_parallel_clients', '?') if par['sql'] else '?'} backends (4 per server) | "
        f"{par['raw'][0].get('raw_parallel_threads', '?') if par['raw'] else '?'} threads, a zhandle each | "
        f"{par['async'][0].get('raw_aparallel_threads', '?') if par['async'] else '?'} threads, a zhandle each | "
        f"{par['composed'][0].get('raw_acomposed_threads', '?') if par['composed'] else '?'} threads, a zhandle "
        f"and a connection each (4 per server) |",
        f"| one cycle | `SELECT zk_lock('/bench/par/s_i')`; `SELECT zk_unlock(...)` | create and getChildren sent back to back "
        f"(pipelined), both answers awaited; then a synchronous delete | multi {{create, setData(parent)}}, then "
        f"delete, each through the asynchronous API and awaited | `SELECT pg_advisory_lock(k)`, the multi, "
        f"`SELECT pg_advisory_unlock(k)`, the delete, each awaited in turn |",
        f"| cycles per run, in run order ({'raw, async, composed, SQL, SQL, composed, async, raw' if par['composed'] else 'raw, async, SQL, SQL, async, raw'}) | "
        f"{' / '.join(fmt(x) for x in par_sql)} | "
        f"{' / '.join(fmt(x) for x in par_raw)} | {' / '.join(fmt(x) for x in par_async)} | "
        f"{' / '.join(fmt(x) for x in par_comp) or 'not measured'} |",
        f"| measured seconds, total | {fmt(par_sql_s, 0)} s | {fmt(par_raw_s, 0)} s | {fmt(par_async_s, 0)} s | "
        f"{fmt(par_comp_s, 0) + ' s' if par['composed'] else 'n/a'} |",
        f"| **aggregate cycles per second** | **{fmt(par_sql_rate)}** | **{fmt(par_raw_rate)}** | "
        f"**{fmt(par_async_rate)}** | **{fmt(par_comp_rate)}** |",
        f"| mean cycle of one session (sessions × seconds ÷ cycles) | "
        f"{fmt(par_mean_cycle('sql', 'sql_parallel_clients'))} µs | "
        f"{fmt(par_mean_cycle('raw', 'raw_parallel_threads'))} µs | "
        f"{fmt(par_mean_cycle('async', 'raw_aparallel_threads'))} µs | "
        f"{fmt(par_mean_cycle('composed', 'raw_acomposed_threads'))} µs |",
        f"| machine busy (all processes, % of both cores, mean over the runs) | {par_busy_cell('sql')} | "
        f"{par_busy_cell('raw')} | {par_busy_cell('async')} | {par_busy_cell('composed')} |",
        f"| cycles of the slowest / fastest client (per run) | "
        f"{', '.join(d.get('sql_parallel_client_cycles_min', '?') + ' / ' + d.get('sql_parallel_client_cycles_max', '?') for d in par['sql'])} | | | |",
        f"| failures | {sum(int(num(d, 'sql_parallel_failures', 0)) for d in par['sql'])}"
        f"{' (a run failed)' if any('sql_parallel_failed' in d for d in par['sql']) else ''} | "
        f"{'a run failed' if any('raw_parallel_failed' in d for d in par['raw']) else '0'} | "
        f"{'a run failed' if any('raw_aparallel_failed' in d for d in par['async']) else '0'} | "
        f"{'a run failed' if any('raw_acomposed_failed' in d for d in par['composed']) else '0' if par['composed'] else ''} |",
        f"| **zklock ÷ raw** (target ≥ {T_PARALLEL:g}) | **{fmt(par_ratio, 2)} ×** | | | |",
        f"| zklock ÷ the composed floor (raw C cycle + `sql_advisory`; target ≥ {T_OWN_PARALLEL:g}) | "
        f"**{fmt(par_composed_ratio, 2)} ×** | | | |",
        f"| zklock ÷ raw C with zklock's cycle | "
        f"{fmt(par_sql_rate / par_async_rate, 2) if known(par_async_rate) and par_async_rate > 0 else '?'} × | | | |",
        f"| zklock ÷ the composed floor, measured (`zkfloor acomposed`) | "
        f"{fmt(par_comp_ratio, 2) + ' ×' if known(par_comp_ratio) else 'not measured'} | | | |",
    ]

    def rv(k, digits=0, scale=1.0):
        return fmt(num(release, k) * scale, digits)

    release_rows = [
        "| measure | transaction locks, released by COMMIT | session locks, released by `zk_unlock_all()` |",
        "|---|---:|---:|",
        f"| N locks, distinct paths `/bench/many/1` … `/bench/many/N`, taken in one statement "
        f"(`SELECT count(zk_xact_lock(...))` in `BEGIN` … / `SELECT count(zk_lock(...))`) | {rv('release_nlocks')} "
        f"({rv('release_xact_acquire_ms')} ms to take) | {rv('release_nlocks')} ({rv('release_session_acquire_ms')} ms to take) |",
        f"| locks held before the release (`zk_locks`) | {release.get('release_xact_held', '?')} | {release.get('release_session_held', '?')} |",
        f"| **the release alone** (`COMMIT` / `SELECT zk_unlock_all()`, timed on the client) | "
        f"**{rv('release_xact_commit_us', 1, 1e-3)} ms** | **{rv('release_session_unlock_all_us', 1, 1e-3)} ms** |",
        f"| **per node** (release time ÷ N; target ≤ {T_RELEASE_US:g} µs for COMMIT) | "
        f"**{rv('release_xact_us_per_node', 2)} µs** | **{rv('release_session_us_per_node', 2)} µs** |",
        f"| the same with nothing held (`BEGIN; COMMIT` / `zk_unlock_all()`; median of 7) | "
        f"{rv('release_empty_commit_us')} µs | {rv('release_empty_unlock_all_us')} µs |",
        f"| per node, net of that | {rv('release_xact_net_us_per_node', 2)} µs | {rv('release_session_net_us_per_node', 2)} µs |",
        f"| locks held afterwards (`zk_locks`) | {release.get('release_xact_held_after', '?')} | {release.get('release_session_held_after', '?')} |",
        f"| queue nodes left right after the release returned, on the first, the last and random paths (`zk_lock_queue`) | "
        f"{release.get('release_xact_remaining_sample', '?')} on {release.get('release_xact_sample_paths', '?')} paths | "
        f"{release.get('release_session_remaining_sample', '?')} on {release.get('release_session_sample_paths', '?')} paths |",
        f"| … then on all N paths ({rv('release_xact_full_check_ms')} / {rv('release_session_full_check_ms')} ms to check) | "
        f"{release.get('release_xact_remaining_all', '?')} | {release.get('release_session_remaining_all', '?')} |",
    ]
    if "release_xact_sample_drained_ms" in release or "release_session_sample_drained_ms" in release:
        release_rows.append(f"| time from sending the release until those paths were empty | "
                            f"{release.get('release_xact_sample_drained_ms', '–')} ms | "
                            f"{release.get('release_session_sample_drained_ms', '–')} ms |")
    release_rows.append(f"| verification | {'**passed**' if release.get('release_ok') == '1' else ('**failed**' if release else 'not run')} | |")

    hd = lambda k: herd.get("herd_delta_" + k, "?")
    herd_rows = [
        "| measure | value |", "|---|---:|",
        f"| waiters | {herd.get('herd_waiters', '?')} ({int(num(herd, 'herd_waiters', 0)) // 2} per server) behind one holder |",
        f"| waiting in `wait_event_type = 'Extension'` on server 1 | {herd.get('herd_waiting_extension_server1', '?')} |",
        f"| `wchs` while all were queued | {herd.get('herd_wchs_while_queued', '?')} |",
        f"| granted | {herd.get('herd_granted', '?')} (failures {herd.get('herd_failures', '?')}, fencing tokens out of grant order {herd.get('herd_token_inversions', '?')}) |",
        f"| time from the holder's release to the last waiter's release | {herd.get('herd_total_ms', '?')} ms |",
        f"| handoff p50 / p99 (grant to next grant, client side) | {fmt(num(herd, 'herd_handoff_p50_us'))} / {fmt(num(herd, 'herd_handoff_p99_us'))} µs |",
        f"| Δ `zk_sum_node_deleted_watch_count` (watchers fired by deletes) | {hd('zk_sum_node_deleted_watch_count')} in {hd('zk_cnt_node_deleted_watch_count')} firing deletes |",
        f"| Δ `zk_sum_node_children_watch_count` (child watches fired) | {hd('zk_sum_node_children_watch_count')} |",
        f"| Δ `zk_sum_node_changed_watch_count` / `..._created_...` | {hd('zk_sum_node_changed_watch_count')} / {hd('zk_sum_node_created_watch_count')} |",
        f"| watch events delivered, total | {herd.get('herd_watch_events', '?')} |",
        f"| releases that had a waiter | {herd.get('herd_releases_waking', '?')} |",
        f"| **watch events per release** | **{herd_epr:.3f}** |",
        f"| cross-check: Δ packets sent − Δ packets received (notifications are the only unsolicited packets) | {int(num(herd, 'herd_delta_zk_packets_sent', 0) - num(herd, 'herd_delta_zk_packets_received', 0))} |",
    ]

    release_mode = {"on": "synchronous release: returns once ZooKeeper applied the deletes",
                    "off": "zklock.synchronous_release is off: deletes sent in the background",
                    "absent": "this build sends the deletes in the background"}.get(sync_guc, "release mode unknown")
    n_scale = num(scale, "scale_nlocks", 0)
    n_few = int(num(scale, "scale_held", 0) - n_scale) if "scale_held" in scale else 0
    kb = lambda k: num(scale, k) if k in scale else float("nan")
    scale_rows = [
        "| measure | value |", "|---|---:|",
        f"| locks taken in one statement (`SELECT count(zk_lock('/bench/scale/' \\|\\| i)) FROM generate_series(1, N) i`) | {fmt(n_scale)} |",
        f"| statement time | {fmt(num(scale, 'scale_one_statement_ms'), 0)} ms |",
        f"| **time per lock** | **{fmt(num(scale, 'scale_us_per_lock'), 0)} µs** |",
        f"| locks held afterwards (`zk_session().locks_held`) | {scale.get('scale_held', '?')} |",
        f"| 'zklock' memory context + children, before ({n_few} locks held) | {fmt(kb('scale_before_zklock_ctx_bytes') / 1024)} kB allocated, {fmt(kb('scale_before_zklock_ctx_used_bytes') / 1024)} kB used |",
        f"| 'zklock' memory context + children, holding N + {n_few} | {fmt(kb('scale_held_zklock_ctx_bytes') / 1024)} kB allocated, {fmt(kb('scale_held_zklock_ctx_used_bytes') / 1024)} kB used |",
        f"| … per lock held | {fmt((kb('scale_held_zklock_ctx_used_bytes') - kb('scale_before_zklock_ctx_used_bytes')) / max(n_scale, 1))} bytes used |",
        f"| contexts | {scale.get('scale_held_ctx', '?')} |",
        f"| backend RSS before → holding → after zk_unlock_all | {fmt(kb('scale_before_rss_kb') / 1024, 1)} → {fmt(kb('scale_held_rss_kb') / 1024, 1)} → {fmt(kb('scale_released_rss_kb') / 1024, 1)} MB |",
        f"| backend RssAnon before → holding → after | {fmt(kb('scale_before_rss_anon_kb') / 1024, 1)} → {fmt(kb('scale_held_rss_anon_kb') / 1024, 1)} → {fmt(kb('scale_released_rss_anon_kb') / 1024, 1)} MB |",
        f"| … RssAnon growth per lock held | {fmt((kb('scale_held_rss_anon_kb') - kb('scale_before_rss_anon_kb')) * 1024 / max(n_scale, 1))} bytes |",
        f"| one more `SELECT zk_lock(new path)` (median of 7), holding {n_few} → holding N | {fmt(num(scale, 'scale_one_more_lock_holding_few_us'))} → {fmt(num(scale, 'scale_one_more_lock_holding_n_us'))} µs |",
        f"| a write transaction (`INSERT` into a temp table; COMMIT verifies every held node; median of 7), holding {n_few} → holding N | {fmt(num(scale, 'scale_write_xact_holding_few_us'))} µs → {fmt(num(scale, 'scale_write_xact_holding_n_us'))} µs |",
        f"| `SELECT zk_unlock_all()` of all N + {n_few + 7} locks | {fmt(num(scale, 'scale_unlock_all_ms'), 1)} ms ({release_mode}) |",
        f"| … until ZooKeeper had answered every delete (`zk_session().releases_pending` = 0) | {fmt(num(scale, 'scale_releases_drained_ms'), 0)} ms; failed: {scale.get('scale_releases_failed', '?')} |",
    ]

    # ---- the multi and semaphore phases
    phases_run = machine.get("phases", "").split()

    def ph_lat_rows(variants, head="| variant | what one op is | median µs | mean µs | p99 µs | ops | per-round medians µs |"):
        rows = [head, "|---|---|---:|---:|---:|---:|---|"]
        for v, desc in variants:
            if v not in ph_pooled:
                rows.append(f"| `{v}` | {desc} | not measured | | | | |")
                continue
            p = ph_pooled[v]
            rows.append(
                f"| `{v}` | {desc} | {fmt(p['median_of_round_medians'])} | {fmt(p['median_of_round_means'])} | "
                f"{fmt(p['p99'])} | {p['n']:,} | {' / '.join(fmt(x) for x in p['round_medians'])} |")
        return rows

    ratio_head = ["| ratio (computed within each round) | median over rounds (from medians) | range over rounds | "
                  "median over rounds (from means) |", "|---|---:|---:|---:|"]
    multi_ratio_rows = ratio_head + [
        rrow(f"`sql_multi10` ÷ `multi_floor_create` (target ≤ {T_MULTI_CREATE:g})", "multi10_over_create"),
        rrow("`multi_floor_set10` ÷ `multi_floor_create` (the same traffic from a bare C client, in creates)",
             "set10_over_create"),
        rrow("`sql_multi10` ÷ `multi_floor_set10` (zklock over a bare C client sending its traffic)",
             "multi10_over_set10"),
        rrow("`sql_multi100` ÷ `multi_floor_create`", "multi100_over_create"),
        rrow(f"`curator_multi10` ÷ `sql_multi10` (target ≥ {T_MULTI_PEER:g})", "curator_multi10_over_sql"),
        rrow(f"`curator_multi100` ÷ `sql_multi100` (target ≥ {T_MULTI_PEER:g})", "curator_multi100_over_sql"),
        rrow("`sql_multi100` ÷ `sql_multi10` (ten times the paths, zklock)", "sql_multi100_over_multi10"),
        rrow("`curator_multi100` ÷ `curator_multi10` (ten times the paths, Curator)", "curator_multi100_over_multi10"),
        rrow("`curator_multi10` ÷ 10 ÷ `multi_floor_create` (Curator's cost per path, in creates)",
             "curator_multi10_per_path_over_create"),
    ]
    sem_ratio_rows = ratio_head + [
        rrow(f"`sql_semaphore` ÷ `curator_semaphore` (target ≤ {T_SEM_PEER:g})", "sql_sem_over_curator"),
        rrow("`curator_semaphore` ÷ `sql_semaphore`", "curator_sem_over_sql"),
    ]

    # the lease phase's ratios with every round's value (few rounds, and
    # the targets are judged on them)
    def rrow_rounds(name, key, digits=2):
        r = ph_ratios[key]
        if not r["median"]["rounds"]:
            return f"| {name} | not measured | | | |"
        return (f"| {name} | {r['median']['median']:.{digits}f} × | "
                f"{' / '.join(f'{x:.{digits}f}' for x in r['median']['rounds'])} | "
                f"{r['median']['min']:.{digits}f} – {r['median']['max']:.{digits}f} | "
                f"{r['mean']['median']:.{digits}f} × |")

    lease_ratio_rows = [
        "| ratio (computed within each round) | median over rounds (from medians) | each round, in order | "
        "range over rounds | median over rounds (from means) |", "|---|---:|---:|---:|---:|",
        rrow_rounds(f"`sql_lease_cycle` ÷ `lease_floor_create` (target ≤ {T_LEASE_CYCLE:g})", "lease_cycle_over_create"),
        rrow_rounds(f"`sql_lease_renew` ÷ `lease_floor_create` (target ≤ {T_LEASE_RENEW:g})", "lease_renew_over_create"),
        rrow_rounds("`lease_floor_ttlcycle` ÷ `lease_floor_create` (a lease cycle's traffic from a bare C client, "
                    "in creates)", "ttlcycle_over_create"),
        rrow_rounds("`lease_floor_renew` ÷ `lease_floor_create` (a renewal's traffic from a bare C client, in creates)",
                    "renewfloor_over_create"),
        rrow_rounds("`sql_lease_cycle` ÷ `lease_floor_ttlcycle` (zklock over a bare C client sending its traffic)",
                    "lease_cycle_over_ttlcycle"),
        rrow_rounds("`sql_lease_renew` ÷ `lease_floor_renew` (zklock over a bare C client sending its traffic)",
                    "lease_renew_over_renewfloor"),
    ]

    dbarrier_ratio_rows = [
        "| ratio (computed within each round) | median over rounds (from medians) | each round, in order | "
        "range over rounds | median over rounds (from means) |", "|---|---:|---:|---:|---:|",
        rrow_rounds(f"`sql_dbarrier8_release` ÷ `barrier_floor_create` (target ≤ {T_DBARRIER_RELEASE:g})",
                    "dbarrier_release_over_create"),
        rrow_rounds(f"`sql_dbarrier8` ÷ `curator_dbarrier8` (whole cycles; target ≤ {T_DBARRIER_PEER:g})",
                    "dbarrier_round_over_curator"),
        rrow_rounds("`sql_dbarrier8_fromlast` ÷ `curator_dbarrier8_fromlast` (the cycles without the head start)",
                    "dbarrier_fromlast_over_curator"),
        rrow_rounds("`sql_dbarrier8_release` ÷ `curator_dbarrier8_release`", "dbarrier_release_over_curator"),
        rrow_rounds("`curator_dbarrier8_release` ÷ `barrier_floor_create` (Curator's release, in creates)",
                    "curator_dbarrier_release_over_create"),
        rrow_rounds("`sql_dbarrier8_fromlast` ÷ `barrier_floor_create`", "dbarrier_fromlast_over_create"),
        rrow_rounds("`curator_dbarrier8_fromlast` ÷ `barrier_floor_create`", "curator_dbarrier_fromlast_over_create"),
    ]

    def dbarrier_cycle_rows():
        rows = ["| per run, median over rounds of each run's median | zklock (`pgclients dbarrier`) | "
                "Curator (`CuratorBench dbarrier8`) |", "|---|---:|---:|"]
        s_, c_ = "sql_dbarrier8", "curator_dbarrier8"

        def each(side, key, digits=0):
            return " / ".join(fmt(x[key], digits) for x in dbarrier_runs.get(side, []))

        rows.append(f"| members | 8 backends, 4 per server, a ZooKeeper session each | 8 CuratorFramework clients "
                    f"(8 ZooKeeper sessions) in 1 JVM, a thread each |")
        rows.append(f"| recorded cycles per run, in round order | {each(s_, 'cycles')} | {each(c_, 'cycles')} |")
        rows.append(f"| cycles in which an early member was released before the last one arrived (not recorded) | "
                    f"{sum(x['early'] for x in dbarrier_runs.get(s_, []))} | "
                    f"{sum(x['early'] for x in dbarrier_runs.get(c_, []))} |")

        def abandoned(side):
            ab = [f"round {x['round']} ({x['abandoned']}, after {x['cycles']} recorded cycles)"
                  for x in dbarrier_runs.get(side, []) if x["abandoned"]]
            return ", ".join(ab) if ab else "none"

        rows.append(f"| Curator cycles that hung or whose call failed, recovered from (sessions closed, nodes deleted, "
                    f"reconnected, the time left measured again; the run's log has the stacks), per run | | "
                    f"{' / '.join(str(x['incidents']) for x in dbarrier_runs.get(c_, []))} |")
        rows.append(f"| runs abandoned (did not recover; the cycles recorded before are kept) "
                    f"| {abandoned(s_)} | {abandoned(c_)} |")
        rows.append(f"| head start: the first enter sent → the last member's enter sent (µs) | "
                    f"{fmt(dbr(s_, 'gap_us'))} | {fmt(dbr(c_, 'gap_us'))} |")
        rows.append(f"| the last member's enter sent → the first member released (µs) | "
                    f"{fmt(dbr(s_, 'first_release_us'))} | {fmt(dbr(c_, 'first_release_us'))} |")
        rows.append(f"| the last member's enter sent → the last member released (`…_release`, µs) | "
                    f"{fmt(ph_med(s_ + '_release'))} | {fmt(ph_med(c_ + '_release'))} |")
        rows.append(f"| … when the last member was on server 1 / on server 2 (µs) | "
                    f"{fmt(dbr(s_, 'release_last_on_1_us'))} / {fmt(dbr(s_, 'release_last_on_2_us'))} | |")
        rows.append(f"| the last enter result → the last leave result (the leave, µs) | "
                    f"{fmt(dbr(s_, 'leave_us'))} | {fmt(dbr(c_, 'leave_us'))} |")
        rows.append(f"| ZooKeeper requests received per cycle (server counter `zk_packets_received` over the run ÷ "
                    f"every cycle of the run, warm-up and session set-up included) | "
                    f"{fmt(dbr(s_, 'zk_requests_per_cycle'), 1)} | {fmt(dbr(c_, 'zk_requests_per_cycle'), 1)} |")
        rows.append(f"| … of which writes (zxids used: creates, deletes, multis, setData, failed writes too) | "
                    f"{fmt(dbr(s_, 'zk_writes_per_cycle'), 1)} | {fmt(dbr(c_, 'zk_writes_per_cycle'), 1)} |")
        rows.append(f"| watch notifications sent per cycle (`zk_sum_node_*_watch_count`) | "
                    f"{fmt(dbr(s_, 'zk_watch_events_per_cycle'), 1)} | {fmt(dbr(c_, 'zk_watch_events_per_cycle'), 1)} |")
        return rows

    def noise_rows(runs, measured, variants, nrounds):
        """the CPU other people's processes used during each run (noise or ph_noise) of the variants that were
        measured (in pooled or ph_pooled), a column per round"""
        rows = ["| variant | " + " | ".join(f"round {r}" for r in range(1, nrounds + 1)) + " |",
                "|---|" + "---:|" * nrounds]
        for v, _ in variants:
            if v not in measured:
                continue
            cells = []
            for r in range(1, nrounds + 1):
                x = [n for n in runs if n["variant"] == v and n["round"] == r]
                cells.append(f"{x[0]['foreign_pct']:.0f} %" if x and x[0]["foreign_pct"] == x[0]["foreign_pct"] else "")
            rows.append(f"| `{v}` | " + " | ".join(cells) + " |")
        return rows

    fv = [x["foreign_pct"] for x in noise if x["foreign_pct"] == x["foreign_pct"]]
    bv = [x["busy_pct"] for x in noise if x["busy_pct"] == x["busy_pct"]]
    la = [x["loadavg1"] for x in noise]
    if fv:
        worst = max(noise, key=lambda x: x["foreign_pct"] if x["foreign_pct"] == x["foreign_pct"] else -1)
        noise_line = (f"CPU used by other people's processes (sampled every 0.5 s, % of both cores): "
                      f"median {statistics.median(fv):.0f} %, max {max(fv):.0f} % (averaged over one variant run; "
                      f"worst: {worst['variant']} round {worst['round']}), "
                      f"{statistics.median(foreign_all):.0f} % median over the whole run; "
                      f"machine busy during the latency variants: median {statistics.median(bv):.0f} %; "
                      f"1-min load average {min(la):.2f} – {max(la):.2f}")
    elif cpu:
        noise_line = (f"no latency variants in this run; CPU used by other people's processes: "
                      f"{statistics.median(foreign_all):.0f} % median over the whole run")
    else:
        noise_line = "no CPU samples"
    noise_table = noise_rows(noise, pooled, VARIANTS, rounds)

    m = machine
    machine_rows = [
        f"- date: {m.get('date_utc', '?')}; elapsed {m.get('elapsed_s', '?')} s",
        f"- command: `{m.get('command', '?')}` (as root, from the repository root)",
        f"- code: git {m.get('git_head', '?')} (uncommitted changes under src/, include/, sql/: {m.get('git_dirty_src', '?')} files); "
        f"installed zklock.so md5 {m.get('zklock_so_md5', '?')}…, built {m.get('zklock_so_mtime', '?')}"
        + ("" if m.get("zklock_so_md5_end", m.get("zklock_so_md5")) == m.get("zklock_so_md5")
                 and m.get("zklock_so_mtime_end", m.get("zklock_so_mtime")) == m.get("zklock_so_mtime")
           else f" — **the installed zklock.so changed during the run** (md5 at the end {m.get('zklock_so_md5_end')}…, "
                f"installed {m.get('zklock_so_mtime_end', '?')})")
        + ("" if m.get("repo_so_md5", m.get("zklock_so_md5")) == m.get("zklock_so_md5")
           else f" — **the installed zklock.so is not the one built in this tree** (md5 {m.get('repo_so_md5')}…)"),
        f"- CPU: {m.get('cpu', '?')}, {m.get('nproc', '?')} cores, {m.get('mem_gb', '?')} GB RAM, Linux {m.get('kernel', '?')}; "
        f"a shared VM",
        f"- {m.get('postgres', '?')}; ZooKeeper {m.get('zk_version', '?').replace('-${mvngit.commit.id}', '')} standalone (test/zkctl config: tickTime 200, "
        f"data dir on {m.get('zk_datadir_fs', '?')}, fsync on; mean fsync time reported by the server "
        f"{mntr.get('zk_avg_fsynctime', '?')} ms); libzookeeper-mt {m.get('libzookeeper_mt', '?')}; "
        f"python3-kazoo {m.get('kazoo', '?')}; Curator {m.get('curator', '?')}; {m.get('java', '?')}",
        f"- rounds: {m.get('rounds', '?')} × {m.get('seconds_per_variant', '?')} s per variant "
        f"(plus untimed warm-up in each: pgbench {m.get('pgbench_warmup_s', '?')} s, JVM {m.get('java_warmup_s', '?')} s, "
        f"kazoo {m.get('kazoo_warmup_s', '?')} s, C {m.get('floor_warmup_s', '?')} s); mode {m.get('mode', '?')}",
        *([f"- multi and semaphore phases: {m.get('multi_rounds', '?')} and {m.get('semaphore_rounds', '?')} rounds "
           f"× {m.get('seconds_per_variant', '?')} s per variant (same warm-ups)"]
          if "multi" in phases_run or "semaphore" in phases_run else []),
        *([f"- lease phase: {m.get('lease_rounds', '?')} rounds × {m.get('seconds_per_variant', '?')} s per variant "
           f"(same warm-ups)"] if "lease" in phases_run else []),
        *([f"- barrier phase: {m.get('barrier_rounds', '?')} rounds × {m.get('seconds_per_variant', '?')} s per variant "
           f"(same warm-ups), {m.get('barrier_members', '?')} members, head start {m.get('barrier_gap_ms', '?')} ms"]
          if "barrier" in phases_run else []),
        *([f"- **PGOPTIONS was set in the environment of the run**: `{m['pgoptions_env']}`"] if m.get("pgoptions_env") else []),
        f"- noise: {noise_line}; load average at start {m.get('loadavg_start', '?')}, at end {m.get('loadavg_end', '?')}",
    ]

    summary = []
    summary.append("Latency per variant (µs; median/mean = median over rounds of the per-round median/mean):")
    for v, _ in VARIANTS:
        if v in pooled:
            p = pooled[v]
            summary.append(f"  {v:18s} median {p['median_of_round_medians']:8.1f}  mean {p['median_of_round_means']:8.1f}  "
                           f"p99 {p['p99']:8.1f}  n {p['n']}")
    if "sql_lock_async" not in pooled:
        summary.append(f"  {'sql_lock_async':18s} {async_why}")
    if ph_pooled:
        summary.append(f"Multi ({multi_rounds} rounds), semaphore ({sem_rounds} rounds), lease ({lease_rounds} rounds) "
                       f"and barrier ({barrier_rounds} rounds) phases (µs; same statistics):")
        for v, _ in MULTI_VARIANTS + SEM_VARIANTS + LEASE_VARIANTS + BARRIER_VARIANTS + FRESH_VARIANTS:
            if v in ph_pooled:
                p = ph_pooled[v]
                summary.append(f"  {v:18s} median {p['median_of_round_medians']:8.1f}  mean {p['median_of_round_means']:8.1f}  "
                               f"p99 {p['p99']:8.1f}  n {p['n']}  (round medians "
                               f"{' / '.join(f'{x:.0f}' for x in p['round_medians'])})")
    if "fanout" in phases_run:
        for v, _ in FANOUT_VARIANTS:
            if v in ph_pooled:
                summary.append(f"Fanout phase, {v}: {'locks/s' if v in ('fanout_sql', 'fanout_own') else 'cycles/s'} per round "
                               f"{' / '.join(f'{x:.0f}' for x in ph_pooled[v]['round_medians'])}")
    if "lease" in phases_run:
        summary.append(f"Lease phase: leases left over by pgbench and released by the harness: {lease_leftovers}")
    if "barrier" in phases_run:
        for side in ("sql_dbarrier8", "curator_dbarrier8"):
            runs = dbarrier_runs.get(side, [])
            summary.append(f"Barrier phase, {side}: cycles per run {' / '.join(str(x['cycles']) for x in runs)}, "
                           f"early releases {sum(x['early'] for x in runs)}, incidents "
                           f"{sum(x['incidents'] for x in runs)}, abandoned runs "
                           f"{', '.join(str(x['round']) + ' ' + x['abandoned'] for x in runs if x['abandoned']) or 'none'}, "
                           f"head start {fmt(dbr(side, 'gap_us'))} us, "
                           f"first released {fmt(dbr(side, 'first_release_us'))} us after the last enter, "
                           f"leave {fmt(dbr(side, 'leave_us'))} us; per cycle ZooKeeper requests "
                           f"{fmt(dbr(side, 'zk_requests_per_cycle'), 1)}, writes {fmt(dbr(side, 'zk_writes_per_cycle'), 1)}, "
                           f"watch events {fmt(dbr(side, 'zk_watch_events_per_cycle'), 1)}")
    summary.append(f"zklock.synchronous_release on the installed build: {sync_guc}")
    summary.append("Ratios (median over rounds; from medians | from means):")
    for key in list(ratios) + list(ph_ratios):
        r = ratios[key] if key in ratios else ph_ratios[key]
        if not r["median"]["rounds"]:
            continue
        summary.append(f"  {key:28s} {r['median']['median']:8.2f} | {r['mean']['median']:8.2f}   "
                       f"(rounds {', '.join(f'{x:.2f}' for x in r['median']['rounds'])})")
    summary.append("Targets:")
    for t in targets:
        tag = "n/a   " if t["met"] is None else ("MET   " if t["met"] else "MISSED")
        summary.append(f"  [{tag}] {t['target']}: {t['measured']}")
    summary.append(f"Contention: zklock {fmt(c_rate, 1)} grants/s ({fmt(c_us_per_grant)} us per grant), wait p50 "
                   f"{contend.get('contend_wait_p50_us', '?')} us, p99 {contend.get('contend_wait_p99_us', '?')} us; "
                   f"Curator {fmt(cur_rate, 1)} grants/s (late start {fmt(cur_late, 0)} ms), wait p50 {fmt(cpct(0.5))} us, "
                   f"p99 {fmt(cpct(0.99))} us")
    if contend_floor:
        summary.append(f"Contention floor (zkfloor contend): {fmt(cf_rate, 1)} grants/s ({fmt(cf_us_per_grant)} us "
                       f"per grant), failures {contend_floor.get('raw_contend_failures', '?')}, watch timeouts "
                       f"{contend_floor.get('raw_contend_watch_timeouts', '?')}; zklock {fmt(c_over_cf, 2)} x, "
                       f"Curator {fmt(cur_over_cf, 2)} x its wall time per grant")
    summary.append(f"Parallel: zklock {fmt(par_sql_rate)} cycles/s (runs {' / '.join(fmt(x) for x in par_sql)}), "
                   f"raw C {fmt(par_raw_rate)} cycles/s (runs {' / '.join(fmt(x) for x in par_raw)}), "
                   f"ratio {fmt(par_ratio, 2)}; composed floor measured (zkfloor acomposed) "
                   + (f"{fmt(par_comp_rate)} cycles/s (runs {' / '.join(fmt(x) for x in par_comp)}), "
                      f"zklock {fmt(par_comp_ratio, 2)} x that" if known(par_comp_rate) else "not measured"))
    if par_busy or any(known(fan_busy(v)) for v, _ in FANOUT_VARIANTS):
        summary.append("Machine busy (cpuwatch, all processes, % of both cores): "
                       + ("parallel (mean over each side's runs) "
                          + ", ".join(f"{k} {x:.0f} %" for k, x in par_busy.items()) if par_busy else "parallel n/a")
                       + "; fanout (median over rounds) "
                       + (", ".join(f"{v} {fan_busy(v):.0f} %" for v, _ in FANOUT_VARIANTS if known(fan_busy(v)))
                          or "n/a"))
    summary.append("Deadlock: ms from deadlock_timeout to 40P01: " +
                   ", ".join(f"{m}-cycle {dl[m]:.2f}" for m in (2, 3, 4)))
    summary.append(f"Release: N {release.get('release_nlocks', '?')}, setting {release.get('release_sync_setting', '?')}; "
                   f"COMMIT {rv('release_xact_commit_us', 1, 1e-3)} ms = {rv('release_xact_us_per_node', 2)} us/node "
                   f"(empty COMMIT {rv('release_empty_commit_us')} us, net {rv('release_xact_net_us_per_node', 2)} us/node); "
                   f"zk_unlock_all {rv('release_session_unlock_all_us', 1, 1e-3)} ms = {rv('release_session_us_per_node', 2)} us/node; "
                   f"nodes left xact {release.get('release_xact_remaining_sample', '?')}+{release.get('release_xact_remaining_all', '?')}, "
                   f"session {release.get('release_session_remaining_sample', '?')}+{release.get('release_session_remaining_all', '?')}; "
                   f"ok {release.get('release_ok', '?')}")
    summary.append(f"Herd: {herd.get('herd_granted', '?')}/{herd.get('herd_waiters', '?')} granted, "
                   f"{herd.get('herd_events_per_release', '?')} watch events per release, wchs: {herd.get('herd_wchs_while_queued', '?')}")
    summary.append(f"Scale: {scale.get('scale_nlocks', '?')} locks, {scale.get('scale_us_per_lock', '?')} us per lock, "
                   f"zklock ctx {scale.get('scale_held_zklock_ctx_bytes', '?')} bytes, RSS {scale.get('scale_held_rss_kb', '?')} kB; "
                   f"write xact holding N: {scale.get('scale_write_xact_holding_n_us', '?')} us")
    summary.append("Noise: " + noise_line)
    if phase_noise:
        summary.append("Foreign CPU during " + ", ".join(f"{k} {v:.0f} %" for k, v in phase_noise.items() if v == v))
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(summary) + "\n")

    # the hand-written interpretation: the repository's BENCHMARKS.md from
    # its "## Interpretation" heading on, kept as it is
    bm_path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "BENCHMARKS.md")
    bm = open(bm_path).read() if os.path.exists(bm_path) else ""
    notes = bm[bm.index("## Interpretation"):] if "## Interpretation" in bm else ""

    md = []
    md.append("# zklock benchmarks\n\n")
    md.append("Written by `bench/run.sh`; do not edit by hand: the "
              "interpretation at the end (from \"Interpretation\" on) is hand-written and kept from run to run. The harness is not part of the "
              "test suite.\n\n")
    md.append("Reproduce (as root, from the repository root, with the extension installed by "
              "`make install`):\n\n")
    md.append("```sh\nbench/run.sh          # full run: rewrites BENCHMARKS.md and "
              "bench/latency.png, raw data in bench/out/full/\nbench/run.sh --quick  # shorter, "
              "results in bench/out/quick/ only\n```\n\n")
    md.append("## This run\n\n")
    md.extend(r + "\n" for r in machine_rows)
    md.append("\n## Targets\n\n")
    md.append("Every ratio compares figures measured in this run. Latency ratios are computed within each "
              "round and judged on their median over rounds; \"default\" means the extension's default "
              "settings (`zklock.synchronous_release = on`: zk_unlock and COMMIT return after ZooKeeper "
              "applied the delete). Each rule is stated in the target column.\n\n")
    md.extend(r + "\n" for r in target_rows)
    md.append("\n## Uncontended latency of one lock/unlock cycle\n\n")
    md.append("One client, one path, nothing else queued. pgbench runs `-M prepared -c 1` with a "
              "per-transaction log (`-l`); the others time each op in-process. The first "
              "`pgbench` transactions (which open the backend's ZooKeeper session) and the JIT warm-up "
              "of the JVM are not counted.\n\n")
    md.extend(r + "\n" for r in lat_rows)
    md.append("\n![latency per variant](bench/latency.png)\n\n")
    md.append("\nThe plot shows the pooled per-op latencies of all rounds: box = 25th–75th percentile, "
              "whiskers = 10th–90th, bar = median, × = mean, ○ = 99th percentile (log scale).\n")
    md.append("\n## Where the time goes in the SQL cycle\n\n")
    md.append("Per-statement mean latencies from `pgbench -r` (client side, so each includes one SQL round "
              "trip; these means include the warm-up second).\n\n")
    md.extend(r + "\n" for r in stmt_rows)
    md.append("\n## Ratios\n\n")
    md.extend(r + "\n" for r in ratio_rows)
    md.append("\n## Several locks at once, and semaphores\n\n")
    def ran(ph, n):
        return f"{n} rounds in this run" if ph in phases_run else "not run"

    def section(title, ph, rows, *paragraphs):
        """a section on the measurement of phase ph: its title, its paragraphs, the CPU others used during it
        and its table"""
        md.append(f"\n## {title}\n\n")
        md.extend(paragraphs)
        md.append(phase_note(ph))
        md.extend(r + "\n" for r in rows)

    def phase_start(ph):
        """whether phase ph ran: appends what md says of it first (not run, or the CPU others used during it)"""
        if ph not in phases_run:
            md.append(f"Not measured in this run (phase `{ph}` not selected).\n")
            return False
        md.append(phase_note(ph))
        return True

    def phase_tables(variants, ratio_rows, own_floor=True, *head):
        """a phase's latency table (head: its header line, if not the usual one), beside it the latency phase's
        floor_create (if it ran) for a phase that measured a floor of its own, then the phase's ratio table"""
        md.extend(r + "\n" for r in ph_lat_rows(variants, *head))
        if own_floor and "floor_create" in pooled:
            md.append(f"\n(`floor_create` of the latency phase in this run: {fmt(pooled_med('floor_create'))} µs.)\n")
        md.append("\n")
        md.extend(r + "\n" for r in ratio_rows)

    def ph_stmt_section(variants, intro="(warm-up second included)"):
        """the per-statement means of a phase's pgbench variants"""
        md.append(f"\nPer-statement mean latencies from `pgbench -r` {intro}:\n\n")
        md.extend(r + "\n" for r in stmt_table(variants, ph_stmt))

    def ph_noise_section(variants, nrounds, runs_of="this phase"):
        """the CPU other people's processes used during each run of the phase's variants, if any ran"""
        if any(x["variant"] in dict(variants) for x in ph_noise):
            md.append(f"\nCPU used by other people's processes during each run of {runs_of}:\n\n")
            md.extend(r + "\n" for r in noise_rows(ph_noise, ph_pooled, variants, nrounds))

    md.append(f"Two phases of their own, uncontended, one client. Phase `multi` ({ran('multi', multi_rounds)}) runs five "
              f"variants, phase `semaphore` ({ran('semaphore', sem_rounds)}) two, each for the same seconds as a latency variant "
              "(after the same warm-ups), in the listed order in odd rounds and in the reverse order in even ones "
              "(zklock, Curator, Curator, zklock, …), so that drift of the machine hits both sides alike. Every "
              "ratio is computed within a round and summarised as the median over the phase's rounds, on the "
              "per-round medians, as above (means beside).\n\n")
    md.append("### Multi-lock over N = 10 and N = 100 paths\n\n")
    md.append("`sql_multiN`: pgbench `-M prepared -c 1`, script `SELECT zk_lock(ARRAY['/bench/multi/N/p1', …, "
              "'/bench/multi/N/pN']); SELECT zk_unlock(ARRAY[the same paths]);` (every queue node of the set in one "
              "ZooKeeper multi, the release in one round trip). `curator_multiN`: `CuratorBench multiN`, "
              "Curator's `InterProcessMultiLock` over N `InterProcessMutex` on `/zklock/bench/multi_c/N/p1` … "
              "`pN`, `acquire()` + `release()` timed in-process after the JIT warm-up, a fresh JVM per round "
              "(Curator takes the N mutexes one after the other: create and getChildren per path, then N "
              "deletes). `multi_floor_create` is `floor_create` (one ephemeral-sequential create from the C "
              "client) measured again inside this phase, so that the ratio to it is computed within each "
              "round; the paths are created by an untimed pgbench second before the first round.\n\n")
    if phase_start("multi"):
        phase_tables(MULTI_VARIANTS, multi_ratio_rows)
        ph_stmt_section(("sql_multi10", "sql_multi100"), "(client side; these means include the warm-up second)")
    md.append("\n### Semaphore with 4 leases\n\n")
    md.append("`sql_semaphore`: pgbench `-M prepared -c 1`, script `SELECT zk_semaphore_acquire('/bench/sem', 4); "
              "SELECT zk_semaphore_release('/bench/sem');` (one multi to acquire, one delete to release). "
              "`curator_semaphore`: `CuratorBench semaphore`, Curator's `InterProcessSemaphoreV2` on "
              "`/zklock/bench/sem_c` with maxLeases 4, `lease = acquire()` + `returnLease(lease)`, timed in-process "
              "after the JIT warm-up, a fresh JVM per round (Curator takes the semaphore's internal mutex, creates "
              "the lease node, reads the leases, releases the mutex; returning deletes the lease node).\n\n")
    if phase_start("semaphore"):
        phase_tables(SEM_VARIANTS, sem_ratio_rows, False)
        ph_stmt_section(("sql_semaphore",))
    ph_noise_section(MULTI_VARIANTS + SEM_VARIANTS, max(multi_rounds, sem_rounds),
                     "these phases (as in the noise table at the end)")
    md.append("\n## Leases\n\n")
    md.append(f"Phase `lease` ({ran('lease', lease_rounds)}): uncontended leases, one client, its five variants for "
              "the same seconds as a latency variant (after the same warm-ups), in the listed order in odd rounds "
              "and in the reverse order in even ones. Every ratio is computed within a round, on the per-round "
              "medians (means beside), and summarised as the median over the phase's rounds; each round's value "
              "is shown.\n\n")
    md.append("`sql_lease_cycle`: pgbench `-M prepared -c 1`, script `SELECT zk_lease_lock('/bench/lease', '60 s') AS t "
              "\\gset` then `SELECT zk_lease_unlock('/bench/lease', :t)` (a TTL create with a getChildren pipelined "
              "behind it, which grants the free lock; no round trip at COMMIT, the grant's answer being fresh; "
              "then one synchronous delete). `sql_lease_renew`: pgbench as above, script `SELECT "
              "zk_lease_renew('/bench/renew', :token)`, on a lease taken by psql just before each run (its token "
              "given with `-D token=N`) and released by psql after it; a renewal by the backend that last "
              "granted or renewed the lease, less than half its ttl ago, is one setData (one round trip, one "
              "write). The pgbench backend's first renewal does not know the name and looks it up (getChildren, "
              "then getData of the head, then a getData with the setData); it falls in the untimed warm-up second. `lease_floor_create` is `floor_create` (one "
              "ephemeral-sequential create from the C client) measured again in this phase; "
              "`lease_floor_ttlcycle` (`bench/zkfloor ttlcycle`) and `lease_floor_renew` (`bench/zkfloor renew`) "
              "send the same ZooKeeper requests as the two SQL variants from a bare C client, so that zklock's "
              "cost over its own traffic shows. After each pgbench run the harness checks the path's queue; a "
              "lease left by a cycle cut between its lock and its unlock would be released and counted.\n\n")
    if phase_start("lease"):
        phase_tables(LEASE_VARIANTS, lease_ratio_rows)
        md.append(f"\nTargets: lease cycle ≤ {T_LEASE_CYCLE:g} × one create: "
                  f"{ratio_verdict('lease_cycle_over_create', T_LEASE_CYCLE, 'le')}; "
                  f"renewal ≤ {T_LEASE_RENEW:g} × one create: "
                  f"{ratio_verdict('lease_renew_over_create', T_LEASE_RENEW, 'le')} "
                  f"(judged on the median over rounds of the per-round ratios of medians).\n")
        md.append(f"\nLeases left over after a pgbench run (released by the harness): {lease_leftovers}.\n")
        ph_stmt_section(("sql_lease_cycle", "sql_lease_renew"))
        ph_noise_section(LEASE_VARIANTS, lease_rounds)
    md.append("\n## Double barrier with 8 members\n\n")
    md.append(f"Phase `barrier` ({ran('barrier', barrier_rounds)}): a double barrier of 8 members entered and left "
              "in lock-step cycles, zklock against Curator, each side for the same seconds as a latency variant "
              "(after the same warm-ups), with the one-create floor measured again in the phase; the three in the "
              "listed order in odd rounds and in the reverse order in even ones. Every ratio is computed within a "
              "round, on the per-round medians (means beside), and summarised as the median over the phase's "
              "rounds; each round's value is shown.\n\n")
    md.append(f"`sql_dbarrier8`: `bench/pgclients dbarrier`, 8 connections (4 to each server), driven by one "
              "asynchronous libpq loop (`PQsendQuery`, simple protocol, `lock_timeout = 30s`). In every cycle 7 "
              "members send `SELECT zk_double_barrier_enter('/bench/db', 8)` at once; the last one (connection c "
              "mod 8 in cycle c, so both servers take turns) sends it "
              f"{machine.get('barrier_gap_ms', '?')} ms later, so that it is the last to arrive and the 7 are "
              "waiting; every member sends `SELECT zk_double_barrier_leave('/bench/db')` as soon as its enter "
              "returned `true`; the next cycle starts once every leave returned `true`. Each cycle gives three "
              "figures: the whole cycle (`sql_dbarrier8`: the first enter sent → the last leave result, so it "
              "includes the head start of the 7), the release (`sql_dbarrier8_release`: the last member's enter "
              "sent → the last enter result: from the last arrival to every member released) and the cycle without "
              "the head start (`sql_dbarrier8_fromlast`: the last member's enter sent → the last leave result). "
              "zklock's last arrival reads the barrier and creates its node in one round trip, then opens the "
              "barrier with one multi; the 7 waiting members are woken by the creation of `ready`, read the barrier "
              "again and return. Leaving follows Curator's algorithm, each member also reading the creation zxid of "
              "the other participants so that it counts only its own round's.\n\n")
    md.append("`curator_dbarrier8`: `CuratorBench dbarrier8`, Curator's `DistributedDoubleBarrier` on "
              "`/zklock/bench/db_c` with 8 members: one JVM, 8 threads, each with its own CuratorFramework client "
              "(its own ZooKeeper session, as each backend has), a fresh `DistributedDoubleBarrier` object per "
              "member and cycle (a fresh UUID-named node, as zklock's members have), `enter(10 s)` then `leave(10 s)`, "
              "the same lock-step cycles with the same head start (the 7 threads let go at once, the last one "
              "after the gap), timed in-process with `System.nanoTime()` the same three ways (`enter()` called / "
              "returned, `leave()` returned), after the JIT warm-up, a fresh JVM per round. Curator's last arrival "
              "makes 4 synchronous requests (exists of `ready` with a watch, create, getChildren, create `ready`); "
              "its waiting members return on the watch event without reading again. `barrier_floor_create` is "
              "`floor_create` (one ephemeral-sequential create from the C client) measured again in this phase. "
              "On zklock's side, a cycle in which a member's enter returns before the last member's was sent, or "
              "an enter or leave that returns anything but true, fails the run. On Curator's, such a cycle is "
              "not recorded; a cycle that is not over after 25 s (Curator 5.4's `internalEnter` can `wait()` "
              "without a deadline: a member whose watch on `ready` fired before it counted the participants, "
              "some of whom had already left, never wakes up) or whose call failed is logged with every "
              "member's stage and the stuck threads' stacks, the members' sessions are closed, the barrier "
              "emptied, the clients connected again and the time left measured again after a new warm-up.\n\n")
    if phase_start("barrier"):
        phase_tables(BARRIER_VARIANTS, dbarrier_ratio_rows, True,
                     "| variant | what one sample is | median µs | mean µs | p99 µs | samples (cycles) | per-round medians µs |")
        md.append(f"\nTargets: from the last member's enter to every member's return ≤ {T_DBARRIER_RELEASE:g} × one "
                  f"create: {ratio_verdict('dbarrier_release_over_create', T_DBARRIER_RELEASE, 'le')}; "
                  f"a whole enter + leave cycle ≤ {T_DBARRIER_PEER:g} × Curator's: "
                  f"{ratio_verdict('dbarrier_round_over_curator', T_DBARRIER_PEER, 'le')} "
                  f"(judged on the median over rounds of the per-round ratios of medians; without the head start: "
                  f"{fmt(rmed('dbarrier_fromlast_over_curator'), 2)} ×).\n")
        md.append("\nThe other columns of the per-cycle lines:\n\n")
        md.extend(r + "\n" for r in dbarrier_cycle_rows())
        ph_noise_section(BARRIER_RUN_VARIANTS, barrier_rounds)
    md.append("\n## Fresh paths, and many distinct paths\n\n")
    md.append(f"Phase `fresh` ({ran('fresh', fresh_rounds)}): one client, uncontended, a lock + unlock cycle whose "
              "lock node is missing (a path nobody has used: the lock nodes are containers, which ZooKeeper removes "
              "once their last child is gone, within `znode.container.checkIntervalMs`, 1 s here), with the default "
              "settings. A backend that has "
              "lately found lock nodes missing sends the lock node's create just before its queue node's multi, "
              "without waiting: one round trip, two writes. The "
              "three variants run for the same seconds as a latency variant, in the listed order in odd rounds and "
              "reversed in even ones; ratios within each round, median over rounds.\n\n")
    if phase_start("fresh"):
        phase_tables(FRESH_VARIANTS, ratio_head + [
            rrow(f"`sql_fresh` ÷ `sql_fresh_warm` (target ≤ {T_FRESH:g})", "fresh_over_warm"),
            rrow("`sql_fresh_warm` ÷ `fresh_floor_create`", "fresh_warm_over_create"),
            rrow("`sql_fresh` ÷ `fresh_floor_create`", "fresh_over_create"),
        ], False)
    md.append(f"\nPhase `fanout` ({ran('fanout', fanout_rounds)}): {machine.get('fanout_clients_per_server', '?')} "
              "pgbench clients on each of the two servers at once (`-M prepared -j 2`), each transaction "
              f"`SELECT zk_lock('/bench/fan/' || :n); SELECT zk_unlock('/bench/fan/' || :n)` with n random in "
              f"1 … {machine.get('fanout_paths', '?')}, for {machine.get('fanout_seconds', '?')} s; the figure "
              "is the sum of both servers' transactions per second (pgbench's tps without connection time), that "
              "is locks taken and released per second (`fanout_sql`); after each run no node may be left under "
              "`/bench/fan`. `fanout_floor`, in the same rounds: the most lock + unlock cycles per second that "
              "as many ZooKeeper sessions get from this ZooKeeper on this machine without PostgreSQL: "
              "`zkfloor parallel` with one thread per pgbench client of both servers, each with its own "
              "session and its own parent node, looping an ephemeral-sequential create and a getChildren sent "
              "back to back, then a synchronous delete (cycles whose delete is answered after the C warm-up, "
              "over the same seconds). `fanout_afloor`: the same sessions sending zklock's own requests through the "
              "asynchronous API. `fanout_composed`, the composed throughput floor: as many sessions, each also with "
              "a connection of its own (to the two servers in turn, as many per server as pgbench clients), each "
              "cycle `SELECT pg_advisory_lock(k)`, zklock's multi, `SELECT pg_advisory_unlock(k)`, its delete, "
              "prepared statements, each awaited in turn (k a key of the session's own): what a backend's cycle "
              "costs at the least, two statements with one ZooKeeper write in each, on the same two cores.\n\n")
    if phase_start("fanout"):
        md.append("| variant | what | median over rounds | per round |\n|---|---|---:|---|\n")
        for v, desc in FANOUT_VARIANTS:
            if v in ph_pooled:
                p = ph_pooled[v]
                md.append(f"| `{v}` | {desc} | {fmt(p['median_of_round_medians'])} | "
                          f"{' / '.join(fmt(x) for x in p['round_medians'])} |\n")
            else:
                md.append(f"| `{v}` | {desc} | not measured | |\n")
        md.append("\n")
        md.extend(r + "\n" for r in ratio_head + [
            rrow("`fanout_sql` ÷ `fanout_floor` (locks/s over the bare C client's cycles/s)", "fanout_sql_over_floor"),
            rrow("`fanout_sql` ÷ `fanout_composed` (locks/s over the measured composed floor's cycles/s)",
                 "fanout_sql_over_composed"),
            rrow("`fanout_own` ÷ `fanout_floor` (each backend on a path of its own)", "fanout_own_over_floor"),
            rrow("`fanout_own` ÷ `fanout_composed`", "fanout_own_over_composed"),
            rrow("`fanout_composed` ÷ `fanout_afloor` (what PostgreSQL's two statements leave of the bare cycles/s)",
                 "fanout_composed_over_afloor"),
        ])
    section("Stacked re-acquire", "stack", stack_rows,
            "A backend that holds `/bench/s` takes it again many times in one statement (no "
            "ZooKeeper round trip; the count goes up), then releases as many holds; best of 3.\n\n")
    section("Contention: 8 contenders on one path", "contend", contend_rows,
            "`pgbench -M prepared -c 4 -f bench/contend.sql` on each server at once: 8 backends, each "
            "repeating `SELECT zk_lock('/bench/contend')` then `SELECT zk_unlock(...)` as fast as it can. "
            "A grant counts when its cycle (pgbench's per-transaction log) ends inside the window; the wait "
            "percentiles are of the whole cycle, the zk_lock wait plus the zk_unlock (one synchronous delete, "
            "about 0.6 ms). The first second is not counted.\n\n",
            "Then, for comparison, `CuratorBench contend`: two JVMs started together, 4 threads each, every "
            "thread with its own Curator client (its own ZooKeeper session, as every backend has) and its "
            "own `InterProcessMutex('/bench/curator_contend')`, looping `acquire(); release()`. Both JVMs "
            "are given the same wall-clock start time a few seconds ahead; they connect and loop unmeasured "
            "(JIT and contention warm-up) until it, then count the grants whose `acquire()` returns in the "
            "window of the same length as zklock's. The two JVMs' grants are summed. Wall time per grant = "
            "window ÷ grants (the mean hand-off time).\n\n",
            "Last, the floor: `zkfloor contend`, the textbook herd-free exclusive lock in C with no PostgreSQL "
            "and no framework around it: 8 threads in one process, each with its own ZooKeeper session, all "
            "on one lock node, each looping as fast as it can: an ephemeral-sequential create and a "
            "getChildren sent back to back (pipelined); granted when its node has the lowest sequence, "
            "otherwise an exists watch on the node just before it and a new getChildren once that node is "
            "gone; once granted, a synchronous delete of its node. A grant counts when it comes inside a "
            "window of the same length as zklock's, after the same warm-up; a grant while another thread "
            "held the lock would count as a failure. Its wall time per grant is what the ZooKeeper "
            "recipe itself costs per hand-off on this machine.\n\n")
    section("Independent locks in parallel", "parallel", par_rows,
            "`pgbench -M prepared -c 4 -f bench/parallel.sql` on each server at once: 8 backends, "
            "each looping `SELECT zk_lock('/bench/par/<server>_<client>')`, `SELECT zk_unlock(...)` on a path "
            "of its own. `bench/zkfloor parallel`: 8 threads, each with its own ZooKeeper "
            "session (zhandle) and its own parent node, looping the linearizable cycle: an "
            "ephemeral-sequential create and a getChildren sent back to back (pipelined), both answers "
            "awaited, then a synchronous delete. "
            "`bench/zkfloor aparallel`: the same, each thread looping zklock's own requests through the "
            "asynchronous API (a multi {create, setData(parent)}, then a delete, each answer awaited on a "
            "condition variable set by the completion thread). "
            "`bench/zkfloor acomposed`, the composed throughput floor: as `aparallel`, each thread also with a "
            "libpq connection of its own (4 to each server), looping `SELECT pg_advisory_lock(k)`, the multi, "
            "`SELECT pg_advisory_unlock(k)`, the delete (prepared statements, each awaited in turn; k a key of "
            "the thread's own): a backend's two statements with one ZooKeeper write in each, and nothing of "
            "zklock's own. "
            "All run against the same ZooKeeper for the same time, "
            "twice each in the order raw, async, composed, SQL, SQL, composed, async, raw (so that linear drift "
            "cancels; runs before the composed floor was added had no composed step); a cycle counts when "
            "its release is answered inside the measured window (after 1 s of warm-up). "
            "Ratio = (SQL cycles of both runs ÷ their seconds) ÷ (raw cycles of both runs ÷ their seconds).\n\n")
    section("200 waiters on one path, and watch events per release", "herd", herd_rows,
            "`bench/pgclients herd`: a holder on server 1 takes `/bench/herd`; 100 backends on each server "
            "then call `zk_lock` on it (asynchronous libpq, all at once). When ZooKeeper's `wchs` shows a "
            "watch for every waiter and `zk_lock_queue` shows all 201 nodes, the harness reads `mntr`, the "
            "holder releases, and every waiter releases as soon as it is granted. The harness checks "
            "that every waiter was granted and that fencing tokens arrive in strictly increasing order "
            "(one holder at a time, FIFO), waits until the queue is empty, and reads `mntr` again.\n\n",
            "**How watch events are counted (server side).** ZooKeeper 3.8's `mntr` exposes, for each "
            "kind of watch trigger, a summary of how many watchers one event fired: "
            "`zk_{cnt,sum}_node_deleted_watch_count`, `..._node_changed_...`, `..._node_children_...`, "
            "`..._node_created_...` (`WatchManager.triggerWatch` adds one sample, the number of watchers "
            "notified, whenever an event finds at least one watcher; the sum is therefore the number of "
            "notifications the server sent). The difference of the four sums across the test is the "
            "number of watch notifications delivered during the 200 hand-offs; divided by the 200 "
            "releases that had a waiter it gives watch events per release. A herd (every waiter "
            "watching the lock node's children) would show up as ~200 child-watch notifications per "
            "release. Two cross-checks: `wchs` while all are queued shows how many watches exist on how "
            "many paths (herd-free: one watch per waiter, each on a different node), and the difference "
            "between `zk_packets_sent` and `zk_packets_received` over the test counts unsolicited server "
            "packets (every request gets exactly one reply; notifications are the only extra packets).\n\n")
    section("Scale: one backend holding many locks", "scale", scale_rows,
            "`bench/pgclients scale` with `zklock.max_locks_per_backend = 20000` in postgresql.conf. Memory "
            "is `pg_backend_memory_contexts` for the `zklock` context and its children (the held-locks "
            "hash table), and VmRSS / RssAnon from `/proc/<backend pid>/status` (which also counts "
            "what the ZooKeeper C client mallocs).\n\n")
    section("Releasing many locks at once", "release", release_rows,
            "`bench/pgclients release`, one backend on server 1 (`zklock.max_locks_per_backend = 20000`): "
            "`BEGIN`, then N transaction locks on distinct paths in one statement, then the `COMMIT` sent and "
            "timed alone on the client (PQexec); then N session locks on the same paths and "
            "`SELECT zk_unlock_all()` timed alone. For contrast, the same two statements with nothing held "
            "(median of 7). Right after each release returns, `zk_lock_queue` counts the queue nodes left "
            "on the first, the last and 8 random paths, then on all N paths; any node left fails the "
            f"check. Release mode of the installed build: {release_mode}.\n\n")
    md.append("\n## Deadlock detection\n\n")
    md.append("`bench/deadlock.sql`, run on server 2 (`deadlock_timeout = 100ms` in every member): a cycle of "
              "m waits across the two servers, members 1 … m−1 being backends of server 1 driven through "
              "dblink (member i holds path i and waits for path i+1), this backend holding path m and, 50 ms "
              "after the others, waiting for path 1. It publishes last, so it is the victim. Timed in the "
              "victim: from the start of its waiting `zk_lock` call, minus `deadlock_timeout`, to the 40P01.\n\n")
    md.append(phase_note("deadlock"))
    md.append("| cycle length | median ms from deadlock_timeout to 40P01 | all repetitions (ms) |\n|---:|---:|---|\n")
    for m in (2, 3, 4):
        vals = deadlock.get(f"deadlock_ms_{m}", "").split()
        md.append(f"| {m} | {dl[m]:.2f} | {' / '.join(f'{float(x):.1f}' for x in vals)} |\n"
                  if vals else f"| {m} | not measured | |\n")
    md.append("\n## Method\n\n")
    md.append(
        "- One run of `bench/run.sh` starts a standalone ZooKeeper with `test/zkctl` and two PostgreSQL 15 "
        "clusters (as user postgres, in a temporary directory) on free loopback ports, and stops all of "
        "them by pid when it exits, however it exits.\n"
        f"- The {len(pooled)} latency variants run once per round, in an order rotated from round to round "
        "(round r starts 3(r−1) places further along the list), for the same number of seconds each. "
        "Ratios are computed within a round and summarised by their median over rounds, so drift of this "
        "shared machine cancels; the range over rounds shows how stable they are.\n"
        "- `floor_create`: `zoo_create` (synchronous API of libzookeeper_mt, i.e. the asynchronous request "
        "plus a wait for the completion thread, the same hop zklock makes) of an EPHEMERAL|SEQUENTIAL node "
        "with 160 bytes of data (about zklock's owner record); the node is then deleted untimed. "
        "`floor_createlist`: create and getChildren sent back to back (asynchronous API), both "
        "answers awaited, the node deleted untimed. `floor_cycle`: create, getChildren, delete, all timed. `floor_pattern`: zklock's requests with background release "
        "without PostgreSQL: the previous node's delete sent without waiting, 40 µs (one SQL round trip), "
        "then create and getChildren sent back to back, timing the wait for both answers. "
        "`floor_cycle2`: create, then delete, both synchronous and timed (the two writes every "
        "linearizable lock+unlock makes). `floor_multi`: zklock's requests with synchronous release: one "
        "`zoo_multi` {create EPHEMERAL|SEQUENTIAL, setData(parent, empty)} (the setData's Stat gives the "
        "queue length, so no getChildren when alone), then a synchronous delete, both timed.\n"
        "- SQL variants use cluster 1 and pgbench `-M prepared -c 1 -T`; latency per transaction comes "
        "from the `-l` log. The ZooKeeper part of the SQL cycle is `sql_lock` − `sql_advisory`: the same "
        "two prepared statements with the ZooKeeper work replaced by an in-memory lock. `sql_lock_async` runs "
        "the `sql_lock` script with `PGOPTIONS='-c zklock.synchronous_release=off'` (background delete); "
        "it is left out when the installed build has no such setting.\n"
        "- kazoo: `KazooClient.Lock('/bench/kazoo')`, `acquire()` + `release()` timed with "
        "`perf_counter_ns`. Curator: `InterProcessMutex('/bench/curator_mutex')` and "
        "`InterProcessReadWriteLock('/bench/curator_rw').writeLock()`, `acquire()` + `release()` timed "
        "with `System.nanoTime()` after a JIT warm-up, in a fresh JVM per round.\n"
        "- Statistics: per round, the median and the mean of the per-op latencies; the tables show the "
        "median over rounds of those. Targets are judged on the median-based ratios; mean-based ratios "
        "are shown too.\n"
        "- The multi, semaphore, lease and barrier phases run after the latency rounds, with rounds of their own "
        "(listed order in odd rounds, reversed in even ones); their ratios use only figures of the same phase and "
        "round, so the multi, lease and barrier phases measure their own one-create floor (`multi_floor_create`, "
        "`lease_floor_create`, `barrier_floor_create`).\n")
    md.append("\n## Noise: CPU used by other people's processes during each variant run\n\n")
    md.append("`bench/cpuwatch.py` samples /proc every 0.5 s; a process is ours when it descends from "
              "run.sh or belongs to the benchmark's clusters or ZooKeeper. Percent of both cores, averaged "
              "over the variant's run (a lower bound: processes that live less than 0.5 s are missed).\n\n")
    md.extend(r + "\n" for r in noise_table)
    if notes:
        md.append("\n" + notes.strip() + "\n")
    with open(os.path.join(out, "BENCHMARKS.md"), "w") as f:
        f.write("".join(md))


# ---------------------------------------------------------------------------
# analyze.py longqueue OUTDIR: the tables of a bench/longqueue.sh run.
# Reads OUTDIR/machine.txt and OUTDIR/raw/KIND.N.txt ("key value" lines of
# bench/pgclients longqueue) and prints markdown: one row per kind and size,
# and the growth of the requests from one size to the next against n and n².

KINDS = ["exclusive", "mixed", "semaphore1", "semaphore2", "set2", "lease"]
WHAT = {
    "exclusive": "`zk_lock`",
    "mixed": "`zk_rlock`, every 4th `zk_lock`",
    "semaphore1": "`zk_semaphore_acquire(path, 1)`",
    "semaphore2": "`zk_semaphore_acquire(path, 2)`, 2 holders",
    "set2": "`zk_lock(ARRAY[a, b])`",
    "lease": "`zk_lease_lock`",
}


def longqueue_tables(out):
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


# ---------------------------------------------------------------------------
# analyze.py cpu OUTDIR [SECONDS]: the tables of bench/cpu_account.sh.
# Reads what cpu_account.sh left in OUTDIR (perf stat --per-thread output,
# strace -f logs, callgrind profiles) and prints, per cycle of zk_lock +
# zk_unlock (the SQL cycle), of `zkfloor multi` (the bare C client), of
# `zkfloor amulti` (the same through the asynchronous API) and of a
# pg_advisory_lock + pg_advisory_unlock cycle (perf and strace only):
#   1. CPU (task-clock) and context switches by thread;
#   2. system calls by thread and by call;
#   3. instructions (callgrind) by thread, and on the backend's main thread
#      by phase: the inclusive cost of the functions named below, per cycle.
# Threads are told apart by the order of their TIDs: the main thread (TID =
# PID), then the client library's I/O thread, then its completion thread
# (zookeeper_init creates them in that order).

OUT = None         # set by cpu_tables
SECONDS = NAN      # the seconds of each measured window (for cycles/s), if given
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


def cpu_tables(out, seconds=NAN):
    global OUT, SECONDS
    OUT, SECONDS = out, seconds
    if os.path.exists(f"{OUT}/sql.perf"):
        perf_table()
        strace_table()
    if os.path.exists(f"{OUT}/sql.cg.runs"):
        callgrind_table()


# ---------------------------------------------------------------------------
# analyze.py fanout: the per-process half of bench/fanout_account.sh.
#   fanout snapshot FILE: every thread of every process: its process's name,
#     whether it is the process's main thread, voluntary and involuntary
#     context switches and CPU time (utime + stime, clock ticks), from /proc,
#     as JSON.
#   fanout diff BEFORE AFTER CYCLES LABEL OUT: what each group of threads did
#     between two snapshots, per cycle: CPU (microseconds) and context
#     switches, voluntary and involuntary.  Appends one JSON line to OUT and
#     prints a table.
#   fanout summary OUT: the medians over the rounds of each side, side by side.
# Groups: PostgreSQL's processes split into main threads (the backends' own
# work: statements, and zklock's part of a cycle) and other threads (in a
# backend, libzookeeper_mt's I/O and completion threads and zklock's loss
# watch); pgbench; zkfloor (the composed floor's client: its sessions'
# threads and libpq); the ZooKeeper server (java); everything else.
# Threads that started or ended within the window are left out (none do in
# a steady loop).

TICK_US = 1e6 / os.sysconf("SC_CLK_TCK")
GROUPS = ["PostgreSQL, main threads", "PostgreSQL, other threads (zklock's client)",
          "pgbench", "zkfloor (the floor's client)", "ZooKeeper server", "other"]


def fan_snapshot(path):
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


def fan_group_of(comm, main):
    if comm == "postgres":
        return GROUPS[0] if main else GROUPS[1]
    if comm == "pgbench":
        return GROUPS[2]
    if comm == "zkfloor":
        return GROUPS[3]
    if comm == "java":
        return GROUPS[4]
    return GROUPS[5]


def fan_diff(before, after, cycles, label, out):
    a = json.load(open(before))
    b = json.load(open(after))
    cycles = float(cycles)
    g = {name: [0, 0, 0] for name in GROUPS}
    for k, v in b.items():
        if k not in a:
            continue
        x = g[fan_group_of(v[0], v[1])]
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


def fan_summary(out):
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
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "longqueue":
        longqueue_tables(args[1])
    elif len(args) in (2, 3) and args[0] == "cpu":
        cpu_tables(args[1], float(args[2]) if len(args) == 3 else NAN)
    elif len(args) == 3 and args[:2] == ["fanout", "snapshot"]:
        fan_snapshot(args[2])
    elif len(args) == 7 and args[:2] == ["fanout", "diff"]:
        fan_diff(*args[2:7])
    elif len(args) == 3 and args[:2] == ["fanout", "summary"]:
        fan_summary(args[2])
    elif len(args) == 1 and args[0] not in ("longqueue", "cpu", "fanout"):
        main()
    else:
        sys.exit(__doc__)
