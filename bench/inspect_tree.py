#!/usr/bin/python3
"""inspect_tree.py: build ZooKeeper trees for measuring zklock's inspection
functions (zk_cluster_locks, zk_blocking_pids, zk_lock_queue with max_rows).

    inspect_tree.py HOSTS ROOT paths N     N lock paths ROOT/t/p<i>, each
                                           with one held exclusive node
    inspect_tree.py HOSTS ROOT queue N     one lock path ROOT/q whose queue
                                           holds N exclusive nodes (one
                                           holder, N - 1 waiters)

Queue nodes are ephemeral-sequential, named like zklock's
(_c_<uuid>-__WRIT__<seq>), with zklock-style owner JSON as data.  Lock
nodes are created persistent (zklock creates containers).  Creates are
sent asynchronously, 500 at a time.  Prints "ready" when the tree is
built, then keeps the session (and so the nodes) until stdin is closed;
then deletes what it created and exits.
"""
import json
import sys
import uuid

from kazoo.client import KazooClient

WINDOW = 500


def data(i):
    return json.dumps({"cluster_name": "bench", "host": "benchhost",
                       "port": 5432, "pid": 100000 + i,
                       "database": "bench", "user": "bench",
                       "application_name": "inspect_tree",
                       "mode": "exclusive", "scope": "session"}).encode()


def pipelined(c, items, make):
    pending = []
    for item in items:
        pending.append(make(item))
        if len(pending) >= WINDOW:
            for p in pending:
                p.get()
            pending = []
    for p in pending:
        p.get()


def main():
    hosts, root, what, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    c = KazooClient(hosts=hosts, timeout=30)
    c.start(timeout=30)
    if what == "paths":
        c.ensure_path(root + "/t")
        locks = ["%s/t/p%05d" % (root, i) for i in range(n)]
        pipelined(c, locks, lambda p: c.create_async(p, b""))
        pipelined(c, range(n), lambda i: c.create_async(
            "%s/_c_%s-__WRIT__" % (locks[i], uuid.uuid4()), data(i),
            ephemeral=True, sequence=True))
        parents = locks
    else:
        c.ensure_path(root + "/q")
        pipelined(c, range(n), lambda i: c.create_async(
            "%s/q/_c_%s-__WRIT__" % (root, uuid.uuid4()), data(i),
            ephemeral=True, sequence=True))
        parents = []
    print("ready", flush=True)
    sys.stdin.read()
    c.stop()                    # ephemeral nodes go with the session
    c.start(timeout=30)
    pipelined(c, parents, lambda p: c.delete_async(p))
    c.delete(root, recursive=True)
    c.stop()


main()
