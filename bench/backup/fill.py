#!/usr/bin/env python3
"""bench/backup: adds N generic passwords with 2 KiB random secrets to a user's vault through
arcad's socket (as root, one connection: `arca add` would start N processes), and writes the same
secrets as one file each under OUT (a pass-style store) for the peer. Usage: fill.py SOCKET UID N OUT"""
import os
import socket
import struct
import sys

path, uid, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]


def string_attribute(tag, text):  # tag u16, type 1 (string), u32 length, UTF-8
    data = text.encode()
    return struct.pack(">HBI", tag, 1, len(data)) + data


def recv_exactly(sock, n):
    data = b""
    while len(data) < n:
        more = sock.recv(n - len(data))
        if not more:
            sys.exit("fill.py: arcad closed the connection")
        data += more
    return data


sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(path)
os.makedirs(out, exist_ok=True)
for i in range(count):
    secret = os.urandom(1536).hex().encode()[:2048]
    attributes = struct.pack(">I", 2) + string_attribute(2, f"svc{i}") + string_attribute(3, "acct")
    # add: vault (1 = user, uid), class 1 (genp), attributes, secret, return flags 0
    body = struct.pack(">BIB", 1, uid, 1) + attributes + struct.pack(">I", len(secret)) + secret + b"\0"
    sock.sendall(b"ARCA" + struct.pack(">HHII", 1, 0x000A, i + 1, len(body)) + body)
    header = recv_exactly(sock, 16)
    kind, length = struct.unpack(">H", header[6:8])[0], struct.unpack(">I", header[12:16])[0]
    reply = recv_exactly(sock, length)
    if kind != 0x8004:
        sys.exit(f"fill.py: add {i} failed: kind {kind:#x} {reply!r}")
    with open(os.path.join(out, f"svc{i}"), "wb") as f:
        f.write(secret)
