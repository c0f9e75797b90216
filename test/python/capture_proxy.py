#!/usr/bin/env python3
"""capture_proxy: a loopback TCP proxy that records what crosses it, for tests.

    capture_proxy.py UPSTREAM_PORT FILE

It listens on a free port of 127.0.0.1, prints "listening PORT", forwards
every connection to 127.0.0.1:UPSTREAM_PORT unchanged, and appends every
byte it forwards, in either direction, to FILE (flushed at once), so that
a test can look at what an eavesdropper on that hop would see.  It runs
until it is killed.
"""
import socket
import sys
import threading

upstream = int(sys.argv[1])
out = open(sys.argv[2], "ab", buffering=0)
lock = threading.Lock()


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            with lock:
                out.write(data)
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(listener):
    while True:
        client, _ = listener.accept()
        try:
            server = socket.create_connection(("127.0.0.1", upstream))
        except OSError:
            client.close()
            continue
        for a, b in ((client, server), (server, client)):
            threading.Thread(target=pipe, args=(a, b), daemon=True).start()


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
print("listening %d" % listener.getsockname()[1], flush=True)
serve(listener)
