#!/usr/bin/python3
"""kazoo_bench.py: kazoo Lock acquire/release cycle, timed in-process.

    kazoo_bench.py HOSTS SECONDS OUTFILE [WARMUP_SECONDS]

A plain kazoo Lock on its own path (/bench/kazoo); each op is one
lock.acquire() followed by lock.release(), timed with time.perf_counter_ns.
Per-op latencies (microseconds, one per line) go to OUTFILE; ops during the
first WARMUP_SECONDS (default 1.0) are not recorded.
"""
import logging
import statistics
import sys
import time

from kazoo.client import KazooClient


def main():
    if len(sys.argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    hosts, seconds, outfile = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    warmup = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    logging.basicConfig(level=logging.ERROR)

    zk = KazooClient(hosts=hosts, timeout=30.0)
    zk.start(timeout=30)
    lock = zk.Lock("/bench/kazoo", "kazoo-bench")
    lat = []
    now = time.perf_counter_ns
    t_rec = now() + int(warmup * 1e9)
    t_end = t_rec + int(seconds * 1e9)
    while True:
        t0 = now()
        if t0 >= t_end:
            break
        if not lock.acquire(timeout=30):
            raise SystemExit("kazoo_bench: acquire timed out")
        lock.release()
        t1 = now()
        if t0 >= t_rec:
            lat.append((t1 - t0) / 1000.0)
    zk.stop()
    zk.close()
    with open(outfile, "w") as f:
        for v in lat:
            f.write("%.1f\n" % v)
    print("kazoo Lock: n=%d mean=%.1f us median=%.1f us"
          % (len(lat), statistics.fmean(lat), statistics.median(lat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
