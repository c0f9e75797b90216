#!/usr/bin/python3
"""analyze.py OUTDIR BENCHMARKS_MD: bench/run.sh's raw data into BENCHMARKS.md.

Rewrites BENCHMARKS_MD up to its hand-written part (from the line
"## Interpretation" on, which is kept) from OUTDIR/machine.txt and
OUTDIR/raw/, and prints the targets table.  Every ratio compares figures
of one run; a latency ratio is computed within each round (on the
round's medians) and summarised by its median over the rounds.
"""
import glob
import re
import statistics
import sys

OUT, MD = sys.argv[1], sys.argv[2]
RAW = OUT + "/raw"
M = dict(l.rstrip("\n").split(" ", 1) for l in open(OUT + "/machine.txt") if " " in l)
SECS = float(M["phase_seconds"])
WARMUP = float(M["warmup"])
med = statistics.median


def nums(path):
    return [float(x) for x in open(path) if x.strip()]


def rounds(v):
    """{round: [latency µs, ...]} of a variant"""
    return {int(re.search(r"\.r(\d+)\.txt$", f).group(1)): nums(f)
            for f in glob.glob(f"{RAW}/{v}.r*.txt")}


def pct(xs, p):
    s = sorted(xs)
    return s[min(len(s) - 1, int(p * len(s)))]


def per_round(f, *vs):
    """f(medians of vs in a round) for every round that has them all"""
    rs = [rounds(v) for v in vs]
    common = sorted(set.intersection(*(set(r) for r in rs)))
    return [f(*(med(r[k]) for r in rs)) for k in common]


def summary(xs, unit=" ×", fmt="{:.2f}"):
    return (fmt + unit).format(med(xs)), (fmt + " – " + fmt).format(min(xs), max(xs))


def us(x):
    return f"{x:,.0f}"


DESC = {
    "floor_create": "C client: one ephemeral-sequential create (the floor: one write)",
    "floor_cycle2": "C client: create, then delete (the two writes of a lock+unlock)",
    "floor_cycle": "C client: textbook cycle create, getChildren, delete",
    "sql_lock": "pgbench: SELECT zk_lock; SELECT zk_unlock (default settings)",
    "sql_lock_async": "pgbench: the same with `zklock.synchronous_release = off`",
    "sql_advisory": "pgbench: SELECT pg_advisory_lock(1); SELECT pg_advisory_unlock(1)",
    "kazoo": "kazoo Lock: acquire(); release()",
    "curator_mutex": "Curator InterProcessMutex: acquire(); release()",
    "multi_floor_create": "C client: one create, measured again in this phase",
    "sql_multi10": "pgbench: SELECT zk_lock(ARRAY[10 paths]); SELECT zk_unlock(the same)",
    "curator_multi10": "Curator InterProcessMultiLock over 10 InterProcessMutex: acquire(); release()",
    "sql_semaphore": "pgbench: zk_semaphore_acquire('/bench/sem', 4); zk_semaphore_release",
    "curator_semaphore": "Curator InterProcessSemaphoreV2 (4 permits): acquire(); returnLease()",
}


def latency_table(vs):
    rows = ["| variant | what one op is | median µs | mean µs | p99 µs | ops | per-round medians µs |",
            "|---|---|---:|---:|---:|---:|---|"]
    for v in vs:
        r = rounds(v)
        if not r:
            continue
        allx = [x for k in sorted(r) for x in r[k]]
        rows.append(f"| `{v}` | {DESC[v]} | {us(med(allx))} | {us(statistics.fmean(allx))} | "
                    f"{us(pct(allx, 0.99))} | {len(allx):,} | "
                    + " / ".join(us(med(r[k])) for k in sorted(r)) + " |")
    return rows


def ratio_table(items):
    rows = ["| ratio (within each round) | median over rounds | range over rounds |", "|---|---:|---:|"]
    for name, xs, unit in items:
        m, rng = summary(xs, unit, "{:.0f}" if unit == " µs" else "{:.2f}")
        rows.append(f"| {name} | {m} | {rng} |")
    return rows


def window(name):
    """transactions of both servers' pgbench logs that ended inside the
    window [WARMUP, WARMUP + SECS) after both servers' clients had started
    their first one; and per grant, ZooKeeper's requests and watch events
    between the counters' samples nearest the window's ends"""
    ends, firsts = [], []
    for f in glob.glob(f"{RAW}/{name}.log.*"):
        starts = []
        for l in open(f):
            c = l.split()
            e = int(c[4]) + int(c[5]) / 1e6
            ends.append(e)
            starts.append(e - int(c[2]) / 1e6)
        firsts.append(min(starts))
    t0 = max(firsts) + WARMUP
    if max(ends) < t0 + SECS:
        sys.exit(f"analyze.py: {name}: the clients stopped before the window's end")
    zk = [tuple(map(float, l.split())) for l in open(f"{RAW}/{name}.zk") if len(l.split()) == 3]
    a = min((s for s in zk if s[0] >= t0), key=lambda s: s[0])
    b = max((s for s in zk if s[0] <= t0 + SECS), key=lambda s: s[0])
    between = sum(1 for e in ends if a[0] <= e < b[0])
    return (sum(1 for e in ends if t0 <= e < t0 + SECS),
            (b[1] - a[1]) / between, (b[2] - a[2]) / between)


def kv(path):
    return dict(l.split()[:2] for l in open(path) if len(l.split()) >= 2)


# ------------------------------------------------------------------ figures
zk_part = per_round(lambda l, a: l - a, "sql_lock", "sql_advisory")
R = {
    "zk_create": per_round(lambda l, a, c: (l - a) / c, "sql_lock", "sql_advisory", "floor_create"),
    "zk_cycle2": per_round(lambda l, a, c: (l - a) / c, "sql_lock", "sql_advisory", "floor_cycle2"),
    "async_create": per_round(lambda l, a, c: (l - a) / c, "sql_lock_async", "sql_advisory", "floor_create"),
    "lock_curator": per_round(lambda l, c: l / c, "sql_lock", "curator_mutex"),
    "lock_kazoo": per_round(lambda l, c: l / c, "sql_lock", "kazoo"),
    "async_curator": per_round(lambda l, c: l / c, "sql_lock_async", "curator_mutex"),
    "async_kazoo": per_round(lambda l, c: l / c, "sql_lock_async", "kazoo"),
    "async_lock": per_round(lambda a, l: a / l, "sql_lock_async", "sql_lock"),
    "lock_cycle": per_round(lambda l, c: l / c, "sql_lock", "floor_cycle"),
    "cycle2_create": per_round(lambda a, c: a / c, "floor_cycle2", "floor_create"),
    "multi_create": per_round(lambda s, c: s / c, "sql_multi10", "multi_floor_create"),
    "curator_multi": per_round(lambda c, s: c / s, "curator_multi10", "sql_multi10"),
    "sem_curator": per_round(lambda s, c: s / c, "sql_semaphore", "curator_semaphore"),
}
create_us = med([med(x) for x in rounds("floor_create").values()])

contend_n, contend_req, contend_watch = window("contend")
contend_us = SECS * 1e6 / contend_n
curator_grants = int(kv(f"{RAW}/curator_contend.txt")["curator_contend_grants"])
curator_us = SECS * 1e6 / curator_grants
floor_c = kv(f"{RAW}/floor_contend.txt")
floor_contend_us = 1e6 / float(floor_c["raw_contend_per_s"])

par_sql = [window(f"parallel.{s}")[0] / SECS for s in (1, 2)]
par_raw = [float(kv(f"{RAW}/floor_parallel.{s}.txt")["raw_parallel_per_s"]) for s in (1, 2)]

queue = [(8, contend_n, contend_req, contend_watch)]
for f in sorted(glob.glob(f"{RAW}/queue*.zk"), key=lambda f: int(re.findall(r"\d+", f)[-1])):
    name = f.rsplit("/", 1)[1][:-3]
    queue.append((int(name[5:]),) + window(name))

# per cycle length: the repetitions' ms, and how many had a remote victim
deadlock = {int(l.split()[0]): ([float(x) for x in l.split()[1:] if x != "remote"], l.split().count("remote"))
            for l in open(f"{RAW}/deadlock.txt")}

noise = [float(l.split()[3]) for l in open(f"{RAW}/noise.txt")]


# ------------------------------------------------------------------ targets
def target(rule, measured, ok):
    return f"| {rule} | {measured} | {'**met**' if ok else '**missed**'} |"


q_last = queue[-1]
q_watch = q_last[3]
targets = [
    "| target | measured | verdict |", "|---|---|---|",
    target("ZooKeeper part of an uncontended zk_lock+zk_unlock (`sql_lock` − `sql_advisory`) ≤ 2 × one create (`floor_create`)",
           f"{med(R['zk_create']):.2f} × ({us(med(zk_part))} µs vs {us(create_us)} µs); with `synchronous_release = off`: "
           f"{med(R['async_create']):.2f} ×", med(R["zk_create"]) <= 2),
    target("SQL cycle ≤ 0.8 × Curator InterProcessMutex cycle (`sql_lock` ÷ `curator_mutex`)",
           f"{med(R['lock_curator']):.2f} ×; `sql_lock_async`: {med(R['async_curator']):.2f} ×", med(R["lock_curator"]) <= 0.8),
    target("SQL cycle ≤ 0.8 × kazoo Lock cycle (`sql_lock` ÷ `kazoo`)",
           f"{med(R['lock_kazoo']):.2f} ×; `sql_lock_async`: {med(R['async_kazoo']):.2f} ×", med(R["lock_kazoo"]) <= 0.8),
    target("SQL cycle ≤ 1.15 × the textbook C cycle (`sql_lock` ÷ `floor_cycle`)",
           f"{med(R['lock_cycle']):.2f} ×", med(R["lock_cycle"]) <= 1.15),
    target("Multi-lock, 10 paths: `sql_multi10` ≤ 3 × one create (`multi_floor_create`, same phase)",
           f"{med(R['multi_create']):.2f} ×", med(R["multi_create"]) <= 3),
    target("Multi-lock, 10 paths: Curator InterProcessMultiLock ≥ 5 × slower (`curator_multi10` ÷ `sql_multi10`)",
           f"{med(R['curator_multi']):.2f} ×", med(R["curator_multi"]) >= 5),
    target("Semaphore (4 permits): `sql_semaphore` ≤ 0.8 × Curator InterProcessSemaphoreV2",
           f"{med(R['sem_curator']):.2f} ×", med(R["sem_curator"]) <= 0.8),
    target("Contention, 8 contenders on one path: wall time per grant ≤ 1.4 × `floor_create`",
           f"{contend_us / create_us:.2f} × ({us(contend_us)} µs per grant); the bare C recipe: {us(floor_contend_us)} µs, "
           f"zklock {contend_us / floor_contend_us:.2f} × that", contend_us <= 1.4 * create_us),
    target("Contention: zklock's time per grant ≤ 0.6 × Curator's (8 sessions)",
           f"{contend_us / curator_us:.2f} × ({us(contend_us)} vs {us(curator_us)} µs)", contend_us <= 0.6 * curator_us),
    target("Independent locks in parallel (8 clients, a path each): cycles/s ≥ 0.8 × 8 raw C sessions",
           f"{sum(par_sql) / sum(par_raw):.2f} × ({sum(par_sql) / 2:.0f} vs {sum(par_raw) / 2:.0f} cycles/s)",
           sum(par_sql) >= 0.8 * sum(par_raw)),
    target(f"Long queue ({q_last[0]} clients on one path): watch events per release ≤ 2",
           f"{q_watch:.2f}", q_watch <= 2),
    target("Deadlock detection: deadlock_timeout to 40P01 for a 2-cycle across two servers ≤ 10 × `floor_create`",
           f"{med(deadlock[2][0]) * 1000 / create_us:.1f} × ({med(deadlock[2][0]):.2f} ms)",
           med(deadlock[2][0]) * 1000 <= 10 * create_us),
]

# ------------------------------------------------------------------ document
md = [
    "# zklock benchmarks", "",
    "Written by `bench/run.sh` (as root, from the repository root, with the extension installed by `make install`; "
    "`bench/run.sh --quick` for a short run whose results stay in `bench/out/quick/`). Do not edit by hand up to "
    "\"Interpretation\": from there on the text is hand-written and kept from run to run. The harness is not part of the test suite.",
    "", "## This run", "",
    f"- date: {M['date_utc']}; elapsed {M['elapsed_s']} s; command: `{M['command']}`; code: git {M['git_head']} (installed zklock.so: {M['installed_so']})",
    f"- machine: {M['cpu']}; a VM shared with other sessions running the test suite, so the figures are noisy: "
    f"1-min load average {M['loadavg_start'].split()[0]} at the start, {M['loadavg_end'].split()[0]} at the end, "
    f"{min(noise):.2f} – {max(noise):.2f} after the single-client variants (median {med(noise):.2f}; this run keeps about 1 busy in its single-client phases, many more with 200 clients just before the end)",
    f"- {M['postgres']}; ZooKeeper {M['zookeeper']} standalone (test/zkctl: tickTime 200, fsync on); Curator {M['curator']}; kazoo {M['kazoo']}",
    f"- single-client phases: {M['rounds']} rounds (multi and semaphore: {M['mrounds']}) × {M['seconds']} s per variant, "
    f"after an untimed warm-up ({M['warmup']} s; the JVM 2 s); other phases {M['phase_seconds']} s each after {M['warmup']} s",
    "", "## Targets", "",
    "Every ratio compares figures of this run; latency ratios are computed within each round and judged on their median over the rounds.", "",
] + targets + [
    "", "## Uncontended latency of one lock/unlock cycle", "",
    "One client, one path, nothing else queued. pgbench runs `-M prepared -c 1` with a per-transaction log; the others time each op in-process. "
    "The floors use the C client's synchronous calls; ZooKeeper applies every write with an fsync.", "",
] + latency_table(["floor_create", "floor_cycle2", "floor_cycle", "sql_lock", "sql_lock_async", "sql_advisory", "kazoo", "curator_mutex"]) + [""] + ratio_table([
    ("ZooKeeper part of the SQL cycle: `sql_lock` − `sql_advisory`", zk_part, " µs"),
    ("ZooKeeper part ÷ `floor_create` (target ≤ 2)", R["zk_create"], " ×"),
    ("ZooKeeper part ÷ `floor_cycle2` (the two-write floor)", R["zk_cycle2"], " ×"),
    ("`floor_cycle2` ÷ `floor_create` (the delete, a second write)", R["cycle2_create"], " ×"),
    ("(`sql_lock_async` − `sql_advisory`) ÷ `floor_create`", R["async_create"], " ×"),
    ("`sql_lock_async` ÷ `sql_lock`", R["async_lock"], " ×"),
    ("`sql_lock` ÷ `floor_cycle` (target ≤ 1.15)", R["lock_cycle"], " ×"),
    ("`sql_lock` ÷ `curator_mutex` (target ≤ 0.8)", R["lock_curator"], " ×"),
    ("`sql_lock` ÷ `kazoo` (target ≤ 0.8)", R["lock_kazoo"], " ×"),
    ("`sql_lock_async` ÷ `curator_mutex`", R["async_curator"], " ×"),
    ("`sql_lock_async` ÷ `kazoo`", R["async_kazoo"], " ×"),
]) + [
    "", "## Multi-lock over 10 paths, and a semaphore", "",
    "Uncontended, one client, phases of their own. `sql_multi10` takes 10 paths in one ZooKeeper multi and releases them in one; "
    "Curator's InterProcessMultiLock takes its 10 mutexes one after the other. The semaphore has 4 permits on both sides.", "",
] + latency_table(["multi_floor_create", "sql_multi10", "curator_multi10", "sql_semaphore", "curator_semaphore"]) + [""] + ratio_table([
    ("`sql_multi10` ÷ `multi_floor_create` (target ≤ 3)", R["multi_create"], " ×"),
    ("`curator_multi10` ÷ `sql_multi10` (target ≥ 5)", R["curator_multi"], " ×"),
    ("`sql_semaphore` ÷ `curator_semaphore` (target ≤ 0.8)", R["sem_curator"], " ×"),
]) + [
    "", "## Contention: 8 contenders on one path", "",
    f"zklock: pgbench `-c 4` on each server (`bench/contend.sql`), {SECS:.0f} s counted after {WARMUP:.0f} s; Curator: 8 InterProcessMutex "
    "threads, each with its own session, in one JVM; the bare C recipe: `zkfloor contend`, 8 sessions (create, getChildren, an exists "
    "watch on the predecessor, delete). Wall time per grant = window ÷ grants.", "",
    "| contenders | grants | grants/s | µs per grant | ÷ `floor_create` |", "|---|---:|---:|---:|---:|",
    f"| zklock, 4 + 4 backends | {contend_n:,} | {contend_n / SECS:.1f} | {us(contend_us)} | {contend_us / create_us:.2f} × |",
    f"| Curator InterProcessMutex, 8 sessions | {curator_grants:,} | {curator_grants / SECS:.1f} | {us(curator_us)} | {curator_us / create_us:.2f} × |",
    f"| bare C recipe, 8 sessions (failures {floor_c['raw_contend_failures']}) | | {float(floor_c['raw_contend_per_s']):.1f} | "
    f"{us(floor_contend_us)} | {floor_contend_us / create_us:.2f} × |",
    "", "## Independent locks in parallel", "",
    f"8 clients, each on a path of its own: pgbench `-c 4` on each server (`bench/parallel.sql`) against 8 raw C sessions "
    f"(`zkfloor parallel`: the textbook cycle, a parent each), in the order C, zklock, zklock, C, {SECS:.0f} s each.", "",
    "| run | zklock cycles/s | raw C cycles/s | ratio |", "|---|---:|---:|---:|",
] + [f"| {s} | {par_sql[s - 1]:.0f} | {par_raw[s - 1]:.0f} | {par_sql[s - 1] / par_raw[s - 1]:.2f} × |" for s in (1, 2)] + [
    "", "## Long queues: the cost per grant as the queue grows", "",
    "The contention phase again with N clients on one path, half on each server (N = 8 is the contention phase). Each client loops "
    "zk_lock + zk_unlock, so about N − 1 wait at any time. ZooKeeper's counters (requests received, pings included; watch "
    "notifications sent), sampled every 0.5 s, are divided by the grants between the samples nearest the window's ends. A herd-free queue costs the same per grant whatever N: "
    "the work grows with the grants, not with N × grants.", "",
    "| N | grants counted | µs per grant | ÷ `floor_create` | ZooKeeper requests per grant | watch events per release |",
    "|---:|---:|---:|---:|---:|---:|",
]
for n, counted, req, watch in queue:
    g = SECS * 1e6 / counted
    md.append(f"| {n} | {counted:,} | {us(g)} | {g / create_us:.2f} × | {req:.2f} | {watch:.2f} |")
md += [
    "", "## Deadlock detection", "",
    "A cycle of 2, 3 or 4 backends across the two servers (`bench/deadlock.sql`, `deadlock_timeout = 100ms`): the time from "
    "deadlock_timeout (counted from the start of the closing zk_lock) to its 40P01. The closing backend starts waiting last, "
    "so it is usually the victim; when a remote member was (its check ran last), that repetition is not timed.", "",
    "| cycle | repetitions timed | median ms | min – max ms |", "|---:|---|---:|---:|",
] + [f"| {m} | {len(x)} (and {r} with a remote victim, not timed) | {med(x):.2f} | {min(x):.2f} – {max(x):.2f} |"
      for m, (x, r) in sorted(deadlock.items())] + [""]

try:
    old = open(MD).read()
    kept = old[old.index("## Interpretation"):]
except (OSError, ValueError):
    kept = "## Interpretation\n\n(none yet)\n"
open(MD, "w").write("\n".join(md) + "\n" + kept)
print("\n".join(targets))
