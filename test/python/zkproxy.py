#!/usr/bin/env python3
"""zkproxy: a loopback TCP proxy in front of a ZooKeeper server, for tests.

    zkproxy.py UPSTREAM_PORT

It listens on a free port of 127.0.0.1, prints "listening PORT", and
forwards every client connection to 127.0.0.1:UPSTREAM_PORT, reading the
client-to-server stream as ZooKeeper frames (4-byte length, then for every
frame after the connect request: xid, op type, and for a create, the path;
a multi whose first operation is a create counts as a create of that path).
Commands on stdin, one per line, each answered with "ok":

    drop-after-create TEXT    for the next create whose path contains TEXT:
                              forward it to the server, then cut the
                              connection before the reply can come back
    drop-before-create TEXT   the same, but cut without forwarding it
    delay MS                  hold every client request MS milliseconds
                              before forwarding it (0: none), as a slower
                              network between client and server would
    down                      cut every connection and refuse new ones
    up                        accept connections again
    quit

When a rule fires it prints "dropped-after-create PATH" (or -before-).
"""
import socket
import struct
import sys
import threading
import time

from proxylib import close_quietly, recv_exact, say

CREATE_OPS = {1, 15, 19, 21}    # create, create2, createContainer, createTTL
MULTI_OP = 14


def created_path(body):
    """The path a request creates (a create, or a multi starting with one),
    or None.  body starts after the length: xid, type, then the record."""
    xid, op = struct.unpack(">ii", body[:8])
    at = 8
    if op == MULTI_OP and len(body) >= 17:
        # MultiHeader of the first operation: int type, bool done, int err
        (op,) = struct.unpack(">i", body[8:12])
        at = 17
    if op not in CREATE_OPS or len(body) < at + 4:
        return None
    (plen,) = struct.unpack(">i", body[at:at + 4])
    return body[at + 4:at + 4 + plen].decode("utf-8", "replace")

lock = threading.Lock()
rule = None                     # (when, text) or None
is_down = False
delay_s = 0.0                   # added to every client-to-server frame
conns = set()




def close_pair(a, b):
    close_quietly(a, b)
    with lock:
        conns.discard((a, b))


cut_after = set()               # upstream sockets whose client was cut


def server_to_client(up, down):
    try:
        while True:
            data = up.recv(65536)
            if not data:
                break
            with lock:
                cut = up in cut_after
            if not cut:
                down.sendall(data)
    except OSError:
        pass
    with lock:
        cut_after.discard(up)
    close_pair(down, up)


def client_to_server(down, up):
    global rule
    first = True
    try:
        while True:
            head = recv_exact(down, 4)
            if head is None:
                break
            (length,) = struct.unpack(">i", head)
            body = recv_exact(down, length)
            if body is None:
                break
            path = created_path(body) if not first and len(body) >= 8 else None
            if path is not None:
                with lock:
                    fire = rule if rule and rule[1] in path else None
                    if fire:
                        rule = None
                if fire:
                    if fire[0] == "after":
                        # the server gets the request; the client loses
                        # the connection before any reply reaches it.  The
                        # upstream side is half-closed (FIN after the data)
                        # and drained, so that the request is not lost to
                        # a reset.
                        with lock:
                            cut_after.add(up)
                        up.sendall(head + body)
                        try:
                            down.shutdown(socket.SHUT_RDWR)
                            down.close()
                        except OSError:
                            pass
                        up.shutdown(socket.SHUT_WR)
                    else:
                        close_pair(down, up)
                    say("dropped-%s-create %s" % (fire[0], path))
                    return
            first = False
            with lock:
                pause = delay_s
            if pause > 0:
                time.sleep(pause)
            up.sendall(head + body)
    except OSError:
        pass
    close_pair(down, up)


def accept_loop(listener, upstream_port):
    while True:
        down, _ = listener.accept()
        with lock:
            refuse = is_down
        if refuse:
            down.close()
            continue
        try:
            up = socket.create_connection(("127.0.0.1", upstream_port))
        except OSError:
            down.close()
            continue
        for s in (down, up):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with lock:
            conns.add((down, up))
        threading.Thread(target=client_to_server, args=(down, up), daemon=True).start()
        threading.Thread(target=server_to_client, args=(up, down), daemon=True).start()


def main():
    global rule, is_down, delay_s
    upstream_port = int(sys.argv[1])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    threading.Thread(target=accept_loop, args=(listener, upstream_port), daemon=True).start()
    say("listening %d" % listener.getsockname()[1])
    for line in sys.stdin:
        words = line.split(None, 1)
        if not words:
            continue
        cmd = words[0]
        arg = words[1].strip() if len(words) > 1 else ""
        if cmd == "drop-after-create":
            with lock:
                rule = ("after", arg)
        elif cmd == "drop-before-create":
            with lock:
                rule = ("before", arg)
        elif cmd == "down":
            with lock:
                is_down = True
                pairs = list(conns)
            for a, b in pairs:
                close_pair(a, b)
        elif cmd == "delay":
            with lock:
                delay_s = float(arg) / 1000.0
        elif cmd == "up":
            with lock:
                is_down = False
        elif cmd == "quit":
            break
        say("ok")


if __name__ == "__main__":
    main()
