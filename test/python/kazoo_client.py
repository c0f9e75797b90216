#!/usr/bin/python3
"""kazoo_client.py: a command-driven kazoo lock client for zklock's
interoperability tests (test/t/011_interop_kazoo.pl, and kazoo's Barrier
in test/t/026_barriers.pl).

    kazoo_client.py HOSTS LOCK_NODE [SESSION_SECONDS [IDENTIFIER]]

HOSTS is a ZooKeeper connect string, LOCK_NODE the znode of the lock
(zklock's <zklock.root><path>, e.g. /zklock/interop/a); IDENTIFIER is the
data kazoo writes into its lock nodes.  On start it connects and prints

    ready session=0x<session id> requested_ms=<MS> version=<kazoo version>

then reads commands on stdin, one per line, and answers each with one line,
flushed at once:

    lock [MS]       kazoo Lock, extra_lock_patterns=["__WRIT__", "__READ__"]:
                    an exclusive lock that queues with zklock and Curator's
                    read/write lock
    rlock [MS]      kazoo ReadLock, extra_lock_patterns=["__WRIT__"]: shared,
                    excluded by zklock's and Curator's writers.  kazoo 2.8's
                    ReadLock, while it waits, waits for the LAST writer in
                    the queue, even one queued behind it (kazoo issue #649,
                    fixed in 2.9.0): a writer of any client that queues
                    behind a waiting ReadLock deadlocks with it.  The tests
                    never queue one there.
    wlock [MS]      kazoo WriteLock, extra_lock_patterns=["__WRIT__", "__READ__"]
    plainlock [MS]  kazoo Lock without extra_lock_patterns (does not see
                    zklock's nodes)
    writlock [MS]   like lock, but its nodes are named <uuid>__WRIT__<seq>
                    (a Lock subclass), so that Curator's read/write lock,
                    which does not know kazoo's __lock__ nodes, sees them too
        Each prints "acquiring KIND" first (before blocking), then
        "acquired KIND" or, after MS milliseconds (no MS or -1: wait as long
        as needed; 0: do not wait), "timeout KIND".
    release KIND    -> "released KIND"
    barriercreate   -> "barrier created": kazoo Barrier(LOCK_NODE).create()
                       (ensure_path: no error if it was up)
    barrierremove   -> "barrier removed", or "barrier not up" when
                       Barrier.remove() says there was no node to delete
    barrierwait [MS]
        Barrier.wait on LOCK_NODE: prints "acquiring barrier" first, then
        "barrier down" or, after MS milliseconds (no MS or -1: wait as long
        as needed), "timeout barrier".
    path NODE       -> "path NODE": use lock node NODE from now on
    nodes           -> "nodes N1,N2,..." the lock node's children, sorted
    ping            -> "pong"
    close           -> "closed": stops and closes the client (the session is
                       closed, ZooKeeper deletes its nodes at once), exits
    die             -> os._exit without releasing or closing anything: the
                       session lives on until ZooKeeper expires it

Any failure prints "error <exception>".  End of input behaves like close.
Logging goes nowhere (kazoo logs through the logging module; it is not
configured here, so only warnings would reach stderr).
"""
import os
import sys

import kazoo.version
from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout, NoNodeError
from kazoo.recipe.lock import Lock

# The names zklock (and Curator's InterProcessReadWriteLock) give their
# queue nodes: _c_<uuid>-__WRIT__<seq> (exclusive), _c_<uuid>-__READ__<seq>
# (shared).  A kazoo lock that lists them among its extra_lock_patterns
# waits for them as it waits for its own kind's nodes.
ZKLOCK_WRITE = "__WRIT__"
ZKLOCK_READ = "__READ__"


class WritLock(Lock):
    """A kazoo Lock whose nodes are named like Curator's (and zklock's)
    write-lock nodes.  Curator's InterProcessReadWriteLock orders children
    by the digits after "__READ__"/"__WRIT__", and its readers wait only for
    nodes containing "__WRIT__": a stock kazoo "__lock__" node is invisible
    to it."""
    _NODE_NAME = ZKLOCK_WRITE


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def make_lock(zk, kind, node, ident):
    if kind == "lock":
        return zk.Lock(node, ident,
                       extra_lock_patterns=[ZKLOCK_WRITE, ZKLOCK_READ])
    if kind == "rlock":
        return zk.ReadLock(node, ident, extra_lock_patterns=[ZKLOCK_WRITE])
    if kind == "wlock":
        return zk.WriteLock(node, ident,
                            extra_lock_patterns=[ZKLOCK_WRITE, ZKLOCK_READ])
    if kind == "plainlock":
        return zk.Lock(node, ident)
    if kind == "writlock":
        return WritLock(zk, node, ident,
                        extra_lock_patterns=[ZKLOCK_WRITE, ZKLOCK_READ])
    raise ValueError("no such lock kind: %s" % kind)


def acquire(zk, kind, node, ident, ms):
    """Take a lock of this kind; returns (lock, acquired?).

    kazoo's Lock makes sure the lock node exists (ensure_path) and then
    creates its child with a plain create.  zklock and Curator create the
    lock node as a container, which the server deletes once it is empty, so
    it can vanish in between and kazoo 2.8 raises NoNodeError: a kazoo
    application sharing a path with them has to retry, as this does."""
    for _ in range(10):
        lock = make_lock(zk, kind, node, ident)
        try:
            if ms < 0:
                return lock, lock.acquire()
            if ms == 0:
                return lock, lock.acquire(blocking=False)
            return lock, lock.acquire(timeout=ms / 1000.0)
        except LockTimeout:
            return lock, False
        except NoNodeError:
            sys.stderr.write("NoNodeError (the lock node, a container, was "
                             "reaped before our create): retrying\n")
            sys.stderr.flush()
    raise RuntimeError("the lock node kept disappearing")


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(
            "usage: kazoo_client.py HOSTS LOCK_NODE [SESSION_SECONDS [ID]]\n")
        sys.exit(2)
    hosts, node = sys.argv[1], sys.argv[2]
    session_s = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    ident = sys.argv[4] if len(sys.argv) > 4 else "kazoo-%d" % os.getpid()

    zk = KazooClient(hosts=hosts, timeout=session_s)
    zk.start(timeout=20)
    # kazoo does not keep the timeout the server granted; the test reads
    # it from the server ("cons") by session id
    say("ready session=0x%x requested_ms=%d version=%s" % (
        zk.client_id[0], int(session_s * 1000), kazoo.version.__version__))

    held = {}
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd = words[0]
        try:
            if cmd in ("lock", "rlock", "wlock", "plainlock", "writlock"):
                ms = int(words[1]) if len(words) > 1 else -1
                say("acquiring " + cmd)
                lock, got = acquire(zk, cmd, node, ident, ms)
                if got:
                    held[cmd] = lock
                say(("acquired " if got else "timeout ") + cmd)
            elif cmd == "release":
                kind = words[1] if len(words) > 1 else ""
                held.pop(kind).release()
                say("released " + kind)
            elif cmd == "barriercreate":
                # ensure_path creates the parents one by one; a container
                # parent made by zklock or Curator can be reaped in between
                for _ in range(10):
                    try:
                        zk.Barrier(node).create()
                        break
                    except NoNodeError:
                        pass
                else:
                    raise RuntimeError("the barrier's parent kept disappearing")
                say("barrier created")
            elif cmd == "barrierremove":
                say("barrier removed" if zk.Barrier(node).remove()
                    else "barrier not up")
            elif cmd == "barrierwait":
                ms = int(words[1]) if len(words) > 1 else -1
                say("acquiring barrier")
                down = zk.Barrier(node).wait(None if ms < 0 else ms / 1000.0)
                say("barrier down" if down else "timeout barrier")
            elif cmd == "path":
                if held:
                    raise RuntimeError("release the locks first")
                node = words[1]
                say("path " + node)
            elif cmd == "nodes":
                say("nodes " + ",".join(sorted(zk.get_children(node))))
            elif cmd == "ping":
                say("pong")
            elif cmd == "close":
                zk.stop()
                zk.close()
                say("closed")
                sys.exit(0)
            elif cmd == "die":
                say("dying")
                os._exit(3)
            else:
                say("error unknown command: " + cmd)
        except SystemExit:
            raise
        except Exception as e:  # report, keep serving
            say("error %s: %s" % (type(e).__name__,
                                  str(e).replace("\n", " ")))
    zk.stop()
    zk.close()


if __name__ == "__main__":
    main()
