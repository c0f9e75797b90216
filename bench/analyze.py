#!/usr/bin/python3
"""analyze.py OUTDIR: turn bench/run.sh's raw results into tables.

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
next to them.
"""
import glob
import json
import os
import re
import statistics
import sys

VARIANTS = [
    ("floor_create", "C client: one ephemeral-sequential create (the floor)"),
    ("floor_createlist", "C client: create and getChildren sent back to back, both answers awaited"),
    ("floor_pattern", "C client: zklock's traffic without PostgreSQL (background delete, then create+getChildren pipelined)"),
    ("floor_cycle", "C client: textbook cycle create, getChildren, delete (3 synchronous calls)"),
    ("sql_lock", "pgbench: SELECT zk_lock; SELECT zk_unlock"),
    ("sql_xact", "pgbench: BEGIN; SELECT zk_xact_lock; COMMIT"),
    ("sql_advisory", "pgbench: SELECT pg_advisory_lock(1); SELECT pg_advisory_unlock(1)"),
    ("kazoo", "kazoo 2.8 Lock: acquire(); release()"),
    ("curator_mutex", "Curator 5.4 InterProcessMutex: acquire(); release()"),
    ("curator_rw_write", "Curator 5.4 InterProcessReadWriteLock.writeLock(): acquire(); release()"),
]
LABELS = {
    "floor_create": "C create",
    "floor_createlist": "C create+getChildren",
    "floor_pattern": "C zklock pattern",
    "floor_cycle": "C textbook cycle",
    "sql_lock": "SQL zk_lock+unlock",
    "sql_xact": "SQL xact lock",
    "sql_advisory": "SQL pg_advisory",
    "kazoo": "kazoo Lock",
    "curator_mutex": "Curator Mutex",
    "curator_rw_write": "Curator RW write",
}


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

    # ---- per-variant, per-round statistics
    per_round = {}
    for v, _ in VARIANTS:
        per_round[v] = {}
        for r in range(1, rounds + 1):
            fn = os.path.join(raw, f"{v}.r{r}.txt")
            if not os.path.exists(fn):
                continue
            with open(fn) as f:
                vals = [float(x) for x in f if x.strip()]
            if not vals:
                continue
            s = sorted(vals)
            per_round[v][r] = {
                "n": len(vals),
                "mean": statistics.fmean(vals),
                "median": statistics.median(s),
                "p99": pct(s, 0.99),
            }

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

    pooled = {}
    for v, _ in VARIANTS:
        pr = per_round[v]
        if not pr:
            continue
        rv = []
        for r in sorted(pr):
            with open(os.path.join(raw, f"{v}.r{r}.txt")) as f:
                rv.append([float(x) for x in f if x.strip()])
        p10, p25, p50, p75, p90, p99 = weighted_pcts(rv, [0.10, 0.25, 0.50, 0.75, 0.90, 0.99])
        pooled[v] = {
            "n": sum(len(x) for x in rv),
            "mean": statistics.fmean(statistics.fmean(x) for x in rv),
            "p10": p10, "p25": p25, "median": p50, "p75": p75, "p90": p90, "p99": p99,
            "median_of_round_medians": statistics.median(x["median"] for x in pr.values()),
            "median_of_round_means": statistics.median(x["mean"] for x in pr.values()),
            "round_medians": [pr[r]["median"] for r in sorted(pr)],
        }

    # ---- ratios within each round
    def ratio_series(fn):
        res = {}
        for stat in ("median", "mean"):
            vals = []
            for r in range(1, rounds + 1):
                try:
                    g = {v: per_round[v][r][stat] for v, _ in VARIANTS}
                except KeyError:
                    continue
                vals.append(fn(g))
            res[stat] = {
                "median": statistics.median(vals) if vals else float("nan"),
                "min": min(vals) if vals else float("nan"),
                "max": max(vals) if vals else float("nan"),
                "rounds": vals,
            }
        return res

    ratios = {
        "zk_part_us": ratio_series(lambda g: g["sql_lock"] - g["sql_advisory"]),
        "zk_part_over_create": ratio_series(lambda g: (g["sql_lock"] - g["sql_advisory"]) / g["floor_create"]),
        "zk_part_over_pattern": ratio_series(lambda g: (g["sql_lock"] - g["sql_advisory"]) / g["floor_pattern"]),
        "createlist_over_create": ratio_series(lambda g: g["floor_createlist"] / g["floor_create"]),
        "pattern_over_createlist": ratio_series(lambda g: g["floor_pattern"] / g["floor_createlist"]),
        "pattern_over_create": ratio_series(lambda g: g["floor_pattern"] / g["floor_create"]),
        "kazoo_over_sql": ratio_series(lambda g: g["kazoo"] / g["sql_lock"]),
        "curator_mutex_over_sql": ratio_series(lambda g: g["curator_mutex"] / g["sql_lock"]),
        "curator_rw_over_sql": ratio_series(lambda g: g["curator_rw_write"] / g["sql_lock"]),
        "textbook_over_sql": ratio_series(lambda g: g["floor_cycle"] / g["sql_lock"]),
        "xact_over_sql": ratio_series(lambda g: g["sql_xact"] / g["sql_lock"]),
        "xact_zk_part_over_create": ratio_series(lambda g: (g["sql_xact"] - g["sql_advisory"]) / g["floor_create"]),
    }

    # per-statement mean latencies reported by pgbench -r (whole run,
    # warm-up included), median over rounds
    stmt = {}
    for v in ("sql_lock", "sql_xact", "sql_advisory"):
        per = {}
        for r in range(1, rounds + 1):
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
                    per.setdefault(mm.group(2), []).append(float(mm.group(1)) * 1000)
        stmt[v] = {k: statistics.median(x) for k, x in per.items()}

    stack = read_kv(os.path.join(raw, "stack.txt"))
    contend = read_kv(os.path.join(raw, "contend.txt"))
    herd = read_kv(os.path.join(raw, "herd.txt"))
    scale = read_kv(os.path.join(raw, "scale.txt"))
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
    foreign_all = [c[3] for c in cpu]
    phase_noise = {}
    if os.path.exists(os.path.join(raw, "phases.txt")):
        for line in open(os.path.join(raw, "phases.txt")):
            p = line.split()
            if len(p) == 3:
                inside = [c[3] for c in cpu if float(p[1]) < c[0] <= float(p[2])]
                phase_noise[p[0]] = statistics.fmean(inside) if inside else float("nan")

    def phase_note(name):
        x = phase_noise.get(name)
        if x is None or x != x:
            return ""
        return (f"Other people's processes used {x:.0f} % of the machine's CPU (both cores) on average "
                f"during this test.\n\n")

    # ---- targets
    t1 = ratios["zk_part_over_create"]
    t2k = ratios["kazoo_over_sql"]
    t2c = ratios["curator_mutex_over_sql"]
    stack_us = num(stack, "stack_zk_lock_us_per_call")
    herd_all = herd.get("herd_all_granted") == "1"
    herd_epr = num(herd, "herd_events_per_release")

    def verdict(ok_med, ok_mean=None):
        if ok_mean is None or ok_mean == ok_med:
            return "**met**" if ok_med else "**missed**"
        return ("**met** on medians, missed on means" if ok_med
                else "**missed** on medians, met on means")

    targets = [
        {
            "target": "ZooKeeper part of zk_lock+zk_unlock (SQL cycle − pg_advisory cycle) ≤ 1.3 × one-create floor",
            "measured": f"{t1['median']['median']:.2f} × (means: {t1['mean']['median']:.2f} ×); "
                        f"{fmt(ratios['zk_part_us']['median']['median'])} µs vs floor "
                        f"{fmt(pooled['floor_create']['median_of_round_medians'])} µs",
            "met": t1["median"]["median"] <= 1.3,
            "verdict": verdict(t1["median"]["median"] <= 1.3, t1["mean"]["median"] <= 1.3),
            "margin": (f"{(t1['median']['median'] / 1.3 - 1) * 100:.0f} % over the 1.3 × limit" if t1["median"]["median"] > 1.3
                       else f"{(1 - t1['median']['median'] / 1.3) * 100:.0f} % under the 1.3 × limit"),
        },
        {
            "target": "SQL cycle ≥ 1.5 × faster than kazoo Lock cycle",
            "measured": f"{t2k['median']['median']:.2f} × (means: {t2k['mean']['median']:.2f} ×)",
            "met": t2k["median"]["median"] >= 1.5,
            "verdict": verdict(t2k["median"]["median"] >= 1.5, t2k["mean"]["median"] >= 1.5),
            "margin": (f"{(1 - t2k['median']['median'] / 1.5) * 100:.0f} % short of the 1.5 × bar" if t2k["median"]["median"] < 1.5
                       else f"{(t2k['median']['median'] / 1.5 - 1) * 100:.0f} % above the 1.5 × bar"),
        },
        {
            "target": "SQL cycle ≥ 1.5 × faster than Curator InterProcessMutex cycle",
            "measured": f"{t2c['median']['median']:.2f} × (means: {t2c['mean']['median']:.2f} ×)",
            "met": t2c["median"]["median"] >= 1.5,
            "verdict": verdict(t2c["median"]["median"] >= 1.5, t2c["mean"]["median"] >= 1.5),
            "margin": (f"{(1 - t2c['median']['median'] / 1.5) * 100:.0f} % short of the 1.5 × bar" if t2c["median"]["median"] < 1.5
                       else f"{(t2c['median']['median'] / 1.5 - 1) * 100:.0f} % above the 1.5 × bar"),
        },
        {
            "target": "Stacked re-acquire < 20 µs per call",
            "measured": f"{stack_us:.3f} µs per call",
            "met": stack_us < 20,
            "verdict": verdict(stack_us < 20),
            "margin": f"{20 / stack_us:.0f} × under the limit" if stack_us > 0 else "",
        },
        {
            "target": "200 waiters: all granted; watch events per release ≤ 2",
            "measured": f"{herd.get('herd_granted', '?')}/{herd.get('herd_waiters', '?')} granted "
                        f"(failures {herd.get('herd_failures', '?')}, token-order inversions "
                        f"{herd.get('herd_token_inversions', '?')}); {herd_epr:.3f} watch events per release",
            "met": herd_all and herd_epr <= 2,
            "verdict": verdict(herd_all and herd_epr <= 2),
            "margin": "",
        },
    ]

    results = {
        "machine": machine, "per_round": per_round, "pooled": pooled, "ratios": ratios,
        "statements": stmt, "stack": stack, "contend": contend, "herd": herd, "scale": scale,
        "noise": noise, "phase_noise": phase_noise, "targets": targets,
    }
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)

    # ---- plot data: index label p10 p25 median p75 p90 mean p99
    with open(os.path.join(out, "plot.dat"), "w") as f:
        f.write("# idx label p10 p25 median p75 p90 mean p99\n")
        for i, (v, _) in enumerate(VARIANTS):
            if v not in pooled:
                continue
            p = pooled[v]
            f.write(f'{i} "{LABELS[v]}" {p["p10"]:.1f} {p["p25"]:.1f} {p["median"]:.1f} '
                    f'{p["p75"]:.1f} {p["p90"]:.1f} {p["mean"]:.1f} {p["p99"]:.1f}\n')

    # ---- tables
    lat_rows = ["| variant | what one op is | median µs | mean µs | p99 µs | ops | per-round medians µs |",
                "|---|---|---:|---:|---:|---:|---|"]
    for v, desc in VARIANTS:
        if v not in pooled:
            continue
        p = pooled[v]
        lat_rows.append(
            f"| `{v}` | {desc} | {fmt(p['median_of_round_medians'])} | {fmt(p['median_of_round_means'])} | "
            f"{fmt(p['p99'])} | {p['n']:,} | {' / '.join(fmt(x) for x in p['round_medians'])} |")

    def rrow(name, key, unit="×", digits=2):
        r = ratios[key]
        return (f"| {name} | {r['median']['median']:.{digits}f} {unit} | "
                f"{r['median']['min']:.{digits}f} – {r['median']['max']:.{digits}f} | "
                f"{r['mean']['median']:.{digits}f} {unit} |")

    ratio_rows = [
        "| ratio (computed within each round) | median over rounds (from medians) | range over rounds | median over rounds (from means) |",
        "|---|---:|---:|---:|",
        rrow("ZooKeeper part of the SQL cycle = `sql_lock` − `sql_advisory`", "zk_part_us", "µs", 0),
        rrow("ZooKeeper part ÷ `floor_create` (target ≤ 1.3)", "zk_part_over_create"),
        rrow("ZooKeeper part ÷ `floor_pattern` (extension overhead over its own traffic)", "zk_part_over_pattern"),
        rrow("`floor_createlist` ÷ `floor_create` (the pipelined getChildren)", "createlist_over_create"),
        rrow("`floor_pattern` ÷ `floor_createlist` (the previous cycle's background delete)", "pattern_over_createlist"),
        rrow("`floor_pattern` ÷ `floor_create` (cost of zklock's traffic pattern itself)", "pattern_over_create"),
        rrow("`kazoo` ÷ `sql_lock` (target ≥ 1.5)", "kazoo_over_sql"),
        rrow("`curator_mutex` ÷ `sql_lock` (target ≥ 1.5)", "curator_mutex_over_sql"),
        rrow("`curator_rw_write` ÷ `sql_lock`", "curator_rw_over_sql"),
        rrow("`floor_cycle` (textbook C cycle) ÷ `sql_lock`", "textbook_over_sql"),
        rrow("`sql_xact` ÷ `sql_lock`", "xact_over_sql"),
        rrow("(`sql_xact` − `sql_advisory`) ÷ `floor_create`", "xact_zk_part_over_create"),
    ]

    target_rows = ["| target | measured | verdict | margin |", "|---|---|---|---|"]
    for t in targets:
        target_rows.append(f"| {t['target']} | {t['measured']} | {t['verdict']} | {t['margin']} |")

    stmt_rows = ["| pgbench script | statement | mean µs (median over rounds) |", "|---|---|---:|"]
    for v in ("sql_lock", "sql_xact", "sql_advisory"):
        for k, x in stmt.get(v, {}).items():
            stmt_rows.append(f"| `{v}` | `{k}` | {x:.0f} |")

    stack_rows = [
        "| statement (one backend already holding the lock) | µs per call |", "|---|---:|",
        f"| `SELECT count(zk_lock('/bench/s')) FROM generate_series(1, {stack.get('stack_calls', '?')})` | {num(stack, 'stack_zk_lock_us_per_call'):.3f} |",
        f"| `SELECT count(zk_unlock('/bench/s')) FROM generate_series(1, …)` | {num(stack, 'stack_zk_unlock_us_per_call'):.3f} |",
        f"| same with `pg_advisory_lock(1)` (stacked), for scale | {num(stack, 'stack_pg_advisory_lock_us_per_call'):.3f} |",
        f"| same with `pg_advisory_unlock(1)` | {num(stack, 'stack_pg_advisory_unlock_us_per_call'):.3f} |",
        f"| baseline: `count(length('/bench/s'))` (executor cost of one call) | {num(stack, 'stack_baseline_length_us_per_call'):.3f} |",
    ]

    contend_rows = [
        "| measure | value |", "|---|---:|",
        f"| clients | {contend.get('contend_clients', '?')} (4 per server, one path) |",
        f"| measured window | {fmt(num(contend, 'contend_seconds'), 0)} s |",
        f"| grants | {fmt(num(contend, 'contend_grants'))} |",
        f"| grants per second | {fmt(num(contend, 'contend_grants_per_s'), 1)} |",
        f"| wait p50 (zk_lock sent → granted, client side) | {fmt(num(contend, 'contend_wait_p50_us') / 1000, 2)} ms |",
        f"| wait p90 | {fmt(num(contend, 'contend_wait_p90_us') / 1000, 2)} ms |",
        f"| wait p99 | {fmt(num(contend, 'contend_wait_p99_us') / 1000, 2)} ms |",
        f"| wait max | {fmt(num(contend, 'contend_wait_max_us') / 1000, 2)} ms |",
        f"| mean handoff time (1 / grants per second) | {fmt(1e6 / num(contend, 'contend_grants_per_s', float('inf')), 0)} µs |",
        f"| duplicate fencing tokens / failures | {contend.get('contend_duplicate_tokens', '?')} / {contend.get('contend_failures', '?')} |",
    ]

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
        f"| `SELECT zk_unlock_all()` of all N + {n_few + 7} locks | {fmt(num(scale, 'scale_unlock_all_ms'), 1)} ms (deletes sent in the background) |",
        f"| … until ZooKeeper had answered every delete (`zk_session().releases_pending` = 0) | {fmt(num(scale, 'scale_releases_drained_ms'), 0)} ms; failed: {scale.get('scale_releases_failed', '?')} |",
    ]

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
    else:
        noise_line = "no CPU samples"
    noise_table = ["| variant | " + " | ".join(f"round {r}" for r in range(1, rounds + 1)) + " |",
                   "|---|" + "---:|" * rounds]
    for v, _ in VARIANTS:
        cells = []
        for r in range(1, rounds + 1):
            x = [n for n in noise if n["variant"] == v and n["round"] == r]
            cells.append(f"{x[0]['foreign_pct']:.0f} %" if x and x[0]["foreign_pct"] == x[0]["foreign_pct"] else "")
        noise_table.append(f"| `{v}` | " + " | ".join(cells) + " |")

    m = machine
    machine_rows = [
        f"- date: {m.get('date_utc', '?')}; elapsed {m.get('elapsed_s', '?')} s",
        f"- command: `{m.get('command', '?')}` (as root, from the repository root)",
        f"- code: git {m.get('git_head', '?')} (uncommitted changes under src/, include/, sql/: {m.get('git_dirty_src', '?')} files); "
        f"installed zklock.so md5 {m.get('zklock_so_md5', '?')}…, built {m.get('zklock_so_mtime', '?')}"
        + ("" if m.get("zklock_so_md5_end", m.get("zklock_so_md5")) == m.get("zklock_so_md5")
           else f" — **the installed zklock.so changed during the run** (md5 at the end {m.get('zklock_so_md5_end')}…)"),
        f"- CPU: {m.get('cpu', '?')}, {m.get('nproc', '?')} cores, {m.get('mem_gb', '?')} GB RAM, Linux {m.get('kernel', '?')}; "
        f"a shared VM",
        f"- {m.get('postgres', '?')}; ZooKeeper {m.get('zk_version', '?').replace('-${mvngit.commit.id}', '')} standalone (test/zkctl config: tickTime 200, "
        f"data dir on {m.get('zk_datadir_fs', '?')}, fsync on; mean fsync time reported by the server "
        f"{mntr.get('zk_avg_fsynctime', '?')} ms); libzookeeper-mt {m.get('libzookeeper_mt', '?')}; "
        f"python3-kazoo {m.get('kazoo', '?')}; Curator {m.get('curator', '?')}; {m.get('java', '?')}",
        f"- rounds: {m.get('rounds', '?')} × {m.get('seconds_per_variant', '?')} s per variant "
        f"(plus untimed warm-up in each: pgbench {m.get('pgbench_warmup_s', '?')} s, JVM {m.get('java_warmup_s', '?')} s, "
        f"kazoo {m.get('kazoo_warmup_s', '?')} s, C {m.get('floor_warmup_s', '?')} s); mode {m.get('mode', '?')}",
        f"- noise: {noise_line}; load average at start {m.get('loadavg_start', '?')}, at end {m.get('loadavg_end', '?')}",
    ]

    summary = []
    summary.append("Latency per variant (µs; median/mean = median over rounds of the per-round median/mean):")
    for v, _ in VARIANTS:
        if v in pooled:
            p = pooled[v]
            summary.append(f"  {v:18s} median {p['median_of_round_medians']:8.1f}  mean {p['median_of_round_means']:8.1f}  "
                           f"p99 {p['p99']:8.1f}  n {p['n']}")
    summary.append("Ratios (median over rounds; from medians | from means):")
    for key in ratios:
        r = ratios[key]
        summary.append(f"  {key:28s} {r['median']['median']:8.2f} | {r['mean']['median']:8.2f}   "
                       f"(rounds {', '.join(f'{x:.2f}' for x in r['median']['rounds'])})")
    summary.append("Targets:")
    for t in targets:
        summary.append(f"  [{'MET   ' if t['met'] else 'MISSED'}] {t['target']}: {t['measured']}")
    summary.append(f"Contention: {contend.get('contend_grants_per_s', '?')} grants/s, wait p50 "
                   f"{contend.get('contend_wait_p50_us', '?')} us, p99 {contend.get('contend_wait_p99_us', '?')} us")
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

    notes_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "NOTES.md")
    notes = open(notes_path).read() if os.path.exists(notes_path) else ""

    md = []
    md.append("# zklock benchmarks\n\n")
    md.append("Written by `bench/run.sh` (the measurement part of issue 6); do not edit by hand: the "
              "interpretation at the end comes from `bench/NOTES.md`. The harness is not part of the "
              "test suite.\n\n")
    md.append("Reproduce (as root, from the repository root, with the extension installed by "
              "`make install`):\n\n")
    md.append("```sh\nbench/run.sh          # full run (about 7 minutes): rewrites BENCHMARKS.md and "
              "bench/latency.png, raw data in bench/out/full/\nbench/run.sh --quick  # about 2 minutes, "
              "results in bench/out/quick/ only\n```\n\n")
    md.append("## This run\n\n")
    md.extend(r + "\n" for r in machine_rows)
    md.append("\n## Targets (issue 6)\n\n")
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
    md.append("\n## Stacked re-acquire\n\n")
    md.append("A backend that holds `/bench/s` takes it again many times in one statement (no "
              "ZooKeeper round trip; the count goes up), then releases as many holds; best of 3.\n\n")
    md.append(phase_note("stack"))
    md.extend(r + "\n" for r in stack_rows)
    md.append("\n## Contention: 8 clients on 2 servers, one path\n\n")
    md.append("`bench/pgclients contend`: 4 connections to each server, driven by one asynchronous libpq "
              "loop, each repeating `SELECT zk_lock('/bench/contend')` then `SELECT zk_unlock(...)` as fast "
              "as it can. The wait of a grant is timed on the client from sending `zk_lock` to its result "
              "(so it includes the ~1 SQL round trip of the statement itself). The first second is "
              "not counted.\n\n")
    md.append(phase_note("contend"))
    md.extend(r + "\n" for r in contend_rows)
    md.append("\n## 200 waiters on one path, and watch events per release\n\n")
    md.append("`bench/pgclients herd`: a holder on server 1 takes `/bench/herd`; 100 backends on each server "
              "then call `zk_lock` on it (asynchronous libpq, all at once). When ZooKeeper's `wchs` shows a "
              "watch for every waiter and `zk_lock_queue` shows all 201 nodes, the harness reads `mntr`, the "
              "holder releases, and every waiter releases as soon as it is granted. The harness checks "
              "that every waiter was granted and that fencing tokens arrive in strictly increasing order "
              "(one holder at a time, FIFO), waits until the queue is empty, and reads `mntr` again.\n\n")
    md.append("**How watch events are counted (server side).** ZooKeeper 3.8's `mntr` exposes, for each "
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
    md.append(phase_note("herd"))
    md.extend(r + "\n" for r in herd_rows)
    md.append("\n## Scale: one backend holding many locks\n\n")
    md.append("`bench/pgclients scale` with `zklock.max_locks_per_backend = 20000` in postgresql.conf. Memory "
              "is `pg_backend_memory_contexts` for the `zklock` context and its children (the held-locks "
              "hash table), and VmRSS / RssAnon from `/proc/<backend pid>/status` (which also counts "
              "what the ZooKeeper C client mallocs).\n\n")
    md.append(phase_note("scale"))
    md.extend(r + "\n" for r in scale_rows)
    md.append("\n## Method\n\n")
    md.append(
        "- One run of `bench/run.sh` starts a standalone ZooKeeper with `test/zkctl` and two PostgreSQL 15 "
        "clusters (as user postgres, in a temporary directory) on free loopback ports, and stops all of "
        "them by pid when it exits, however it exits.\n"
        "- The ten latency variants run once per round, in an order rotated from round to round "
        "(round r starts 3(r−1) places further along the list), for the same number of seconds each. "
        "Ratios are computed within a round and summarised by their median over rounds, so drift of this "
        "shared machine cancels; the range over rounds shows how stable they are.\n"
        "- `floor_create`: `zoo_create` (synchronous API of libzookeeper_mt, i.e. the asynchronous request "
        "plus a wait for the completion thread, the same hop zklock makes) of an EPHEMERAL|SEQUENTIAL node "
        "with 160 bytes of data (about zklock's owner record); the node is then deleted untimed. "
        "`floor_createlist`: create and getChildren sent back to back (asynchronous API), both "
        "answers awaited, the node deleted untimed. `floor_cycle`: create, getChildren, delete, all timed. `floor_pattern`: zklock's own requests "
        "without PostgreSQL: the previous node's delete sent without waiting, 40 µs (one SQL round trip), "
        "then create and getChildren sent back to back, timing the wait for both answers.\n"
        "- SQL variants use cluster 1 and pgbench `-M prepared -c 1 -T`; latency per transaction comes "
        "from the `-l` log. The ZooKeeper part of the SQL cycle is `sql_lock` − `sql_advisory`: the same "
        "two prepared statements with the ZooKeeper work replaced by an in-memory lock.\n"
        "- kazoo: `KazooClient.Lock('/bench/kazoo')`, `acquire()` + `release()` timed with "
        "`perf_counter_ns`. Curator: `InterProcessMutex('/bench/curator_mutex')` and "
        "`InterProcessReadWriteLock('/bench/curator_rw').writeLock()`, `acquire()` + `release()` timed "
        "with `System.nanoTime()` after a JIT warm-up, in a fresh JVM per round.\n"
        "- Statistics: per round, the median and the mean of the per-op latencies; the tables show the "
        "median over rounds of those. Targets are judged on the median-based ratios; mean-based ratios "
        "are shown too.\n")
    md.append("\n## Noise: CPU used by other people's processes during each variant run\n\n")
    md.append("`bench/cpuwatch.py` samples /proc every 0.5 s; a process is ours when it descends from "
              "run.sh or belongs to the benchmark's clusters or ZooKeeper. Percent of both cores, averaged "
              "over the variant's run (a lower bound: processes that live less than 0.5 s are missed).\n\n")
    md.extend(r + "\n" for r in noise_table)
    if notes:
        md.append("\n" + notes.strip() + "\n")
    with open(os.path.join(out, "BENCHMARKS.md"), "w") as f:
        f.write("".join(md))


if __name__ == "__main__":
    main()
