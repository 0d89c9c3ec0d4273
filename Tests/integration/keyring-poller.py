#!/usr/bin/python3
"""Watches one kernel key from a user's side, for the logind latency figures.

Run as the user (setpriv). Joins a new session keyring with @u linked (as
pam_keyinit does), so that it possesses the user's Arca rings. Commands on
stdin, one answer line each on stdout:
  arm DESCRIPTION   find the live key -> "armed SERIAL" or "missing"
  count RING        keys linked in the user's ring RING (arca:wu) -> "count N"
  wait              poll it until it is unreadable -> "gone <CLOCK_MONOTONIC ns>"
"""
import ctypes
import sys
import time

k = ctypes.CDLL("libkeyutils.so.1", use_errno=True)
k.keyctl_join_session_keyring.argtypes = [ctypes.c_char_p]
k.keyctl_search.argtypes = [ctypes.c_int32, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32]
k.keyctl_read.argtypes = [ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t]
k.keyctl_read.restype = ctypes.c_long
SESSION, USER = -3, -4
k.keyctl_join_session_keyring(None)
k.keyctl_link(USER, SESSION)
serial = 0
print("ready", flush=True)
for line in sys.stdin:
    words = line.split()
    if words[0] == "arm":
        serial = k.keyctl_search(SESSION, b"user", words[1].encode(), 0)
        print("armed %d" % serial if serial > 0 else "missing", flush=True)
    elif words[0] == "count":
        ring = k.keyctl_search(SESSION, b"keyring", words[1].encode(), 0)
        size = k.keyctl_read(ring, None, 0) if ring > 0 else -1
        print("count %d" % (size // 4 if size >= 0 else -1), flush=True)
    elif words[0] == "wait":
        while k.keyctl_read(serial, None, 0) >= 0:
            time.sleep(0.0001)
        print("gone %d" % time.monotonic_ns(), flush=True)
