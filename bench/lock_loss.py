#!/usr/bin/env python3
"""lock_loss.py: the timing half of bench/lock_loss.sh (which starts the
servers and passes their ports).

For each kind of loss, each trial starts a psql holder (as the postgres
user) that takes a lock and runs SELECT pg_sleep(60), makes the loss, and
times the holder's statement from the loss to its end (the psql process
exiting on the ERROR, ON_ERROR_STOP):

  deletion   kazoo deletes the held node (the holder has held it for 1 s,
             so its watch is set); from the confirmed delete;
  early deletion  the same 50 ms after the grant, before the watch is set
             (the exists that sets it finds the node gone);
  ttl        the holder's transaction took a lease with the given ttl;
             from the lease node's creation (its ctime) plus the ttl;
  cut        the proxy between the holder and ZooKeeper drops every byte;
             from the cut (the bound: 5/3 of the session timeout + 1 s);
  expiry     the holder's backend is frozen (SIGSTOP) until ZooKeeper has
             dropped its node, then woken; from the wake-up.

Prints one line per kind: n, min, median, max in ms, and the bound.
"""
import argparse
import os
import pwd
import signal
import statistics
import subprocess
import sys
import time

from kazoo.client import KazooClient


def main():
    ap = argparse.ArgumentParser()
    for a in ('zk-port', 'pg-port', 'trials', 'session-timeout', 'ttl'):
        ap.add_argument('--' + a, type=int, required=True)
    for a in ('socket-dir', 'pgbin', 'data'):
        ap.add_argument('--' + a, required=True)
    args = ap.parse_args()

    proxy = subprocess.Popen(
        ['python3', 'test/python/tcpproxy.py', 'zk=%d' % args.zk_port],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    port = None
    for line in proxy.stdout:
        if line.startswith('listening zk '):
            port = int(line.split()[2])
        if line.strip() == 'ready':
            break

    def proxy_cmd(cmd):
        proxy.stdin.write(cmd + '\n')
        proxy.stdin.flush()
        for line in proxy.stdout:
            if line.strip() == 'ok':
                return

    as_pg = [] if os.getuid() != 0 else ['runuser', '-u', 'postgres', '--']
    conf = os.path.join(args.data, 'postgresql.conf')
    with open(conf, 'a') as f:
        f.write("zklock.hosts = '127.0.0.1:%d'\n" % port)
    subprocess.run(as_pg + [os.path.join(args.pgbin, 'pg_ctl'), '-D', args.data,
                            '-l', os.path.join(args.socket_dir, 'log'), '-w', 'start'],
                   check=True, stdout=subprocess.DEVNULL)
    psql = as_pg + [os.path.join(args.pgbin, 'psql'), '-X', '-q', '-At',
                    '-h', args.socket_dir, '-p', str(args.pg_port), '-d', 'postgres',
                    '-v', 'ON_ERROR_STOP=1']
    subprocess.run(psql + ['-c', 'CREATE EXTENSION zklock'], check=True)

    zk = KazooClient(hosts='127.0.0.1:%d' % args.zk_port)
    zk.start(timeout=30)

    def holder(path, sql_before, mode='lock'):
        """Start a holder; return (process, backend pid, its node)."""
        script = ("SELECT pg_backend_pid();\n" + sql_before +
                  "\\echo held\nSELECT pg_sleep(60);\n")
        p = subprocess.Popen(psql, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        p.stdin.write(script)
        p.stdin.close()
        pid = int(p.stdout.readline())
        for line in p.stdout:
            if line.strip() == 'held':
                break
        node = '/zklock' + path
        kids = zk.get_children(node)
        return p, pid, node + '/' + kids[0]

    def ended(p):
        p.wait(timeout=120)
        end = time.time()
        err = p.stderr.read()
        return end, err

    results = {}

    # deletion of a held node: watched already (held 1 s), or deleted before
    # its watch is set (held 50 ms: found when the watch is set)
    for held, kind in ((1.0, 'deletion'), (0.05, 'early deletion')):
        xs = []
        for i in range(args.trials):
            path = '/bench/loss/del%d_%d' % (int(held * 1000), i)
            p, _, node = holder(path, "SELECT zk_lock('%s');\n" % path)
            time.sleep(held)
            zk.delete(node)
            t0 = time.time()
            end, err = ended(p)
            assert 'was lost' in err, err
            xs.append((end - t0) * 1000)
        results[kind] = (xs, 'within 1 s of the deletion: 1000 ms')

    # a lease's ttl
    xs = []
    for i in range(min(args.trials, 5)):
        path = '/bench/loss/ttl%d' % i
        p, _, node = holder(path, "BEGIN;\nSELECT zk_lease_lock('%s', '%d ms');\n"
                            % (path, args.ttl))
        _, stat = zk.get(node)
        end, err = ended(p)
        assert 'ran out' in err, err
        xs.append((end - stat.ctime / 1000.0) * 1000 - args.ttl)
        zk.delete(node)
    results['lease ttl'] = (xs, 'within ttl + 1 s of the grant: 1000 ms past the ttl')

    # cut off from ZooKeeper
    xs = []
    for i in range(min(args.trials, 3)):
        path = '/bench/loss/cut%d' % i
        p, _, node = holder(path, "SELECT zk_lock('%s');\n" % path)
        time.sleep(0.5)
        proxy_cmd('cut zk')
        t0 = time.time()
        end, err = ended(p)
        proxy_cmd('heal zk')
        assert 'session expired' in err, err
        xs.append((end - t0) * 1000)
    results['cut off'] = (xs, '5/3 x session timeout + 1 s: %d ms'
                          % (args.session_timeout * 5 // 3 + 1000))

    # session expiry, heard when the frozen backend wakes
    xs = []
    for i in range(min(args.trials, 3)):
        path = '/bench/loss/exp%d' % i
        p, pid, node = holder(path, "SELECT zk_lock('%s');\n" % path)
        time.sleep(0.5)
        os.kill(pid, signal.SIGSTOP)
        while zk.exists(node):
            time.sleep(0.05)
        os.kill(pid, signal.SIGCONT)
        t0 = time.time()
        end, err = ended(p)
        assert 'lost' in err or 'expired' in err, err
        xs.append((end - t0) * 1000)
    results['session expiry'] = (xs, 'at once once heard: 1000 ms')

    proxy_cmd('quit')
    zk.stop()
    print('session timeout %d ms, lease ttl %d ms' % (args.session_timeout, args.ttl))
    print('%-16s %3s %8s %8s %8s   %s' % ('loss', 'n', 'min ms', 'median', 'max ms', 'bound'))
    for kind, (xs, bound) in results.items():
        print('%-16s %3d %8.0f %8.0f %8.0f   %s' % (kind, len(xs), min(xs),
                                                  statistics.median(xs), max(xs), bound))


if __name__ == '__main__':
    main()
