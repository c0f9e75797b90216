#!/usr/bin/env python3
"""tcpproxy: loopback TCP forwarders that can be cut, for partition tests.

    tcpproxy.py NAME=UPSTREAM_PORT[@OTHER] [NAME=UPSTREAM_PORT[@OTHER] ...]

For each NAME it listens on a free port of 127.0.0.1 and prints
"listening NAME PORT", then "ready" once every listener is up.  Each
connection accepted on NAME's port is forwarded, byte for byte, to
127.0.0.1:UPSTREAM_PORT: it does not parse anything, so it suits any
protocol (ZooKeeper's quorum and election traffic between servers, which
test/python/zkproxy.py, reading client frames, does not).

With @OTHER (the name of another forwarder), NAME carries ZooKeeper
leader-election connections, and the one thing the proxy changes is the
first message of each: the election address its initiator announces
(QuorumCnxManager's initial message: protocol version -65536 or -65535,
server id, address length, "host:port") becomes 127.0.0.1 and OTHER's
port.  A server that receives a connection from a server with a smaller
id drops it and connects back to the address announced there; without
the rewrite that second connection would go straight to the real port,
around the proxy, and a "partition" would leave the election connected.

Commands on stdin, one per line, each answered with "ok" (NAMES is one or
more names separated by spaces; "*" means every name):

    cut NAMES     a partition: what the peers send is read and thrown away,
                  nothing reaches the other side, in either direction; the
                  connections stay open (as over a network that silently
                  drops packets), and new ones are accepted and held the
                  same way without reaching the upstream
    reset NAMES   close their connections and refuse new ones at once (as
                  a peer whose host is down but whose network answers)
    heal NAMES    forward again: the connections that were cut (bytes were
                  lost on them) are closed, so the peers open new ones
    count NAMES   answer "count N" (open connections), then "ok"
    quit

State is per name: a cut name stays cut until healed.
"""
import socket
import struct
import sys
import threading
import time

from proxylib import close_quietly, recv_exact, say

lock = threading.Lock()
state = {}          # name -> "up" | "cut" | "reset"
conns = {}          # name -> set of Conn


class Conn:
    def __init__(self, name, down, up):
        self.name = name
        self.down = down
        self.up = up
        self.tainted = up is None   # bytes were (or would be) lost
        self.closed = False

    def close(self):
        with lock:
            if self.closed:
                return
            self.closed = True
            conns[self.name].discard(self)
        close_quietly(self.down, self.up)



listen_port = {}    # name -> the port it listens on
rewrite_to = {}     # name -> the forwarder whose address is announced instead



def election_hello(c, src):
    """Read the initial message of an election connection from src and
    return it with the announced address replaced (or unchanged if it is
    of the old form without an address); None if the peer went away."""
    head = recv_exact(src, 8)
    if head is None:
        return None
    (version,) = struct.unpack(">q", head)
    if version not in (-65536, -65535):
        return head                 # the old protocol: version is the id
    rest = recv_exact(src, 12)
    if rest is None:
        return None
    sid, alen = struct.unpack(">qi", rest)
    if alen < 0 or alen > 4096:
        return head + rest          # not what we expected: leave it alone
    addr = recv_exact(src, alen)
    if addr is None:
        return None
    new = ("127.0.0.1:%d" % listen_port[rewrite_to[c.name]]).encode()
    say("rewrote %s %s -> %s" % (c.name, addr.decode("utf-8", "replace"), new.decode()))
    return head + struct.pack(">qi", sid, len(new)) + new


def pump(c, src, dst, first=None):
    """Copy src to dst while the name is up; throw the bytes away while it
    is cut (and from then on: the stream has a hole)."""
    try:
        data = first(c, src) if first is not None else src.recv(65536)
        if data is None:
            raise OSError("closed")
        while data:
            with lock:
                if state[c.name] != "up":
                    c.tainted = True
                drop = c.tainted
            if not drop and dst is not None:
                dst.sendall(data)
            data = src.recv(65536)
    except OSError:
        pass
    c.close()


def connect_upstream(port):
    """A connection to the upstream port, trying for up to 3 s: a peer
    that connects to a server whose port is not open yet (a leader just
    elected) would be refused and try again at once; through the proxy its
    connection is already accepted, so the proxy waits for the port in its
    place rather than close a connection the peer thinks is made."""
    deadline = time.monotonic() + 3
    while True:
        try:
            up = socket.create_connection(("127.0.0.1", port), timeout=5)
            up.settimeout(None)
            return up
        except OSError:
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)


def accept_loop(name, listener, upstream_port):
    while True:
        try:
            down, _ = listener.accept()
        except OSError:
            return
        with lock:
            st = state[name]
        if st == "reset":
            down.close()
            continue
        up = None
        if st == "up":
            up = connect_upstream(upstream_port)
            if up is None:
                down.close()
                continue
        for s in (down, up):
            if s is not None:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c = Conn(name, down, up)
        with lock:
            conns[name].add(c)
        hello = election_hello if name in rewrite_to else None
        threading.Thread(target=pump, args=(c, down, up, hello), daemon=True).start()
        if up is not None:
            threading.Thread(target=pump, args=(c, up, down), daemon=True).start()


def names_of(args):
    if args == ["*"]:
        return list(state)
    for n in args:
        if n not in state:
            raise KeyError(n)
    return args


def main():
    listeners = []
    for arg in sys.argv[1:]:
        name, port = arg.rsplit("=", 1)
        if "@" in port:
            port, rewrite_to[name] = port.split("@", 1)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        state[name] = "up"
        conns[name] = set()
        listeners.append((name, listener, int(port)))
        listen_port[name] = listener.getsockname()[1]
    for name, other in rewrite_to.items():
        if other not in listen_port:
            sys.exit("tcpproxy: %s: no forwarder named %s" % (name, other))
    for name, listener, port in listeners:
        threading.Thread(target=accept_loop, args=(name, listener, port), daemon=True).start()
        say("listening %s %d" % (name, listener.getsockname()[1]))
    say("ready")
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd, args = words[0], words[1:]
        if cmd == "quit":
            break
        try:
            names = names_of(args)
        except KeyError as e:
            say("error unknown name %s" % e)
            continue
        if cmd in ("cut", "reset"):
            with lock:
                for n in names:
                    state[n] = cmd
                    for c in conns[n]:
                        c.tainted = True
                victims = [c for n in names for c in conns[n]] if cmd == "reset" else []
            for c in victims:
                c.close()
        elif cmd == "heal":
            with lock:
                for n in names:
                    state[n] = "up"
                victims = [c for n in names for c in conns[n] if c.tainted]
            for c in victims:
                c.close()
        elif cmd == "count":
            with lock:
                n = sum(len(conns[x]) for x in names)
            say("count %d" % n)
        else:
            say("error unknown command %s" % cmd)
            continue
        say("ok")


if __name__ == "__main__":
    main()
