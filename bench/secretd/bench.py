#!/usr/bin/python3
"""Timed Secret Service calls for bench/secretd/run.sh (run inside a session bus).

  fill FROM TO        CreateItem items FROM..TO-1 (plain session); prints the mean cost
                      of each block of 100 that starts at a checkpoint (100, 1000, 5000, 9900)
  filllog FROM TO F   as fill, and writes each call's start and end (CLOCK_MONOTONIC, s) to F
                      (bench/secretd/create-paired.sh lines them up with arcad's syscalls)
  searchitems         SearchItems({"bench": "1"}) over every item: the median of 5 calls, in ms
  burst K FROM N      K clients at once, each its own connection and CreateItem of N items in a
                      row (ids FROM…): wall time from a common start to the last reply, per item
"""
import subprocess, sys, time
import dbus

if sys.argv[1] == "burst":
    clients, first, per = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    procs = [subprocess.Popen([sys.executable, __file__, "client", str(first + c * per), str(first + (c + 1) * per)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for c in range(clients)]
    for p in procs:
        p.stdout.readline()  # ready: connected, session open
    t = time.perf_counter()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        p.wait()
    print("create burst %d clients x %d items: %.2f ms/item" % (clients, per, (time.perf_counter() - t) * 1000 / (clients * per)))
    sys.exit(0)

BASE = "/org/freedesktop/secrets"
b = dbus.SessionBus()
service = b.get_object("org.freedesktop.secrets", BASE)
SVC = "org.freedesktop.Secret.Service"

if sys.argv[1] in ("fill", "client", "filllog"):
    start, end = int(sys.argv[2]), int(sys.argv[3])
    log = open(sys.argv[4], "w") if sys.argv[1] == "filllog" else None
    _, session = service.OpenSession("plain", dbus.String(""), dbus_interface=SVC)
    col = b.get_object("org.freedesktop.secrets", str(service.ReadAlias("default", dbus_interface=SVC)))
    block_start = None
    if sys.argv[1] == "client":
        print("ready", flush=True)
        sys.stdin.readline()
    for i in range(start, end):
        if i in (100, 1000, 5000, 9900):
            block_start, block_first = time.perf_counter(), i
        props = dbus.Dictionary({
            "org.freedesktop.Secret.Item.Label": dbus.String("bench %d" % i),
            "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary(
                {"bench": "1", "id": str(i), "xdg:schema": "org.example.Bench"}, signature="ss")}, signature="sv")
        secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"secret-%d" % i), "text/plain"),
                             signature="oayays")
        t0 = time.monotonic()
        col.CreateItem(props, secret, False, dbus_interface="org.freedesktop.Secret.Collection")
        if log:
            log.write("%d %.6f %.6f\n" % (i, t0, time.monotonic()))
        if block_start is not None and i == block_first + 99:
            print("create items %d-%d: %.2f ms/item" % (block_first, i, (time.perf_counter() - block_start) * 10))
            block_start = None
elif sys.argv[1] == "searchitems":
    times, count = [], 0
    for _ in range(5):
        t = time.perf_counter()
        unlocked, locked = service.SearchItems(dbus.Dictionary({"bench": "1"}, signature="ss"), dbus_interface=SVC)
        times.append((time.perf_counter() - t) * 1000)
        count = len(unlocked) + len(locked)
    print("SearchItems over %d items: %.1f ms" % (count, sorted(times)[2]))
