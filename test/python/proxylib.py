"""proxylib: what the test proxies (zkproxy.py, tcpproxy.py) share.

say() prints one line of the proxy's report on stdout at once (the test
reads it while the proxy runs); recv_exact() reads exactly n bytes from a
socket, or None if the peer closed it first; close_quietly() shuts down and
closes sockets, whatever state they are in (None is skipped).
"""
import socket
import sys
import threading

_out = threading.Lock()


def say(line):
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def close_quietly(*socks):
    for s in socks:
        if s is None:
            continue
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            s.close()
        except OSError:
            pass
