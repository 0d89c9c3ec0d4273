#!/usr/bin/python3
"""Per call of one `secret-tool lookup`, for bench/secretd/lookup-trace.sh:

  lookup_calls.py MONITOR_LOG PROVIDER_STRACE ARCAD_STRACE

MONITOR_LOG is dbus-monitor's of the lookup; the straces are `strace -f -ttt -T` of the provider
(arca-secretd) and of arcad over the same time. Prints, for each call secret-tool made to the
provider: the time from the call to its reply at the bus, the requests the provider sent arcad
meanwhile (a sendto, arca-secretd's write of a request, on a socket: reads on that socket are its
waits), the time the provider waited for their replies (the durations of those reads), and the
system calls arcad made to answer them (a call strace -f split into "unfinished" and "resumed"
lines counts once, at its start). Wall-clock times from
the two tools are both CLOCK_REALTIME, so they line up (strace's own overhead inflates them alike).
"""
import re, sys

mon, sd, arcad = sys.argv[1:4]
calls, replies = [], {}
provider = None
for line in open(mon):
    m = re.match(r"method call time=([\d.]+) sender=(\S+) -> destination=(\S+) serial=(\d+) path=(\S+); "
                 r"interface=(\S+); member=(\S+)", line)
    if m and m.group(3).startswith(":") and m.group(6) != "org.freedesktop.DBus":
        provider = m.group(3)
        calls.append({"t": float(m.group(1)), "serial": m.group(4), "what": m.group(6).split(".")[-1] + "." + m.group(7)})
    m = re.match(r"method return time=([\d.]+) sender=(\S+) -> destination=\S+ serial=\d+ reply_serial=(\d+)", line)
    if m and m.group(2) == provider:
        replies[m.group(3)] = float(m.group(1))
# The provider's requests to arcad: a write on its arcad socket, then reads of the reply.
# With -f, a call another thread interrupts is split in two lines: "PID T read(FD, <unfinished ...>"
# and later "PID T2 <... read resumed>..., N) = R <DUR>"; the pair is joined by PID (a thread has
# one call open at a time) into one call at T with the resumed line's duration.
fd = None
events = []  # (time, kind, duration)
open_calls = {}  # PID -> (time, call, fd) of an unfinished sendto or read
def event(t, call, f, dur):
    global fd
    if call == "sendto":
        fd = f
        events.append((t, "request", 0.0))
    elif f == fd:
        events.append((t, "wait", dur))
for line in open(sd):
    m = re.match(r"(\d+)\s+([\d.]+) (sendto|read)\((\d+), (.*)", line)
    if m:
        pid, t, call, f, rest = m.group(1), float(m.group(2)), m.group(3), m.group(4), m.group(5)
        if rest.rstrip().endswith("<unfinished ...>"):
            open_calls[pid] = (t, call, f)
            continue
        d = re.search(r"<([\d.]+)>\s*$", rest)
        if d:
            event(t, call, f, float(d.group(1)))
        continue
    m = re.match(r"(\d+)\s+[\d.]+ <\.\.\. (sendto|read) resumed>.*<([\d.]+)>\s*$", line)
    if m and m.group(1) in open_calls:
        t, call, f = open_calls.pop(m.group(1))
        event(t, call, f, float(m.group(3)))
arcad_calls = []
for line in open(arcad):
    m = re.match(r"\d+\s+([\d.]+) (\w+)\(", line)
    if m and "resumed" not in line and m.group(2) not in ("restart_syscall", "clock_nanosleep", "accept4", "poll"):
        arcad_calls.append((float(m.group(1)), m.group(2)))
print("%-34s %10s %14s %12s %s" % ("call", "at bus ms", "arcad requests", "waited ms", "arcad syscalls"))
for c in calls:
    end = replies.get(c["serial"])
    if end is None:
        continue
    inside = [e for e in events if c["t"] <= e[0] <= end]
    sys_in = [n for t, n in arcad_calls if c["t"] <= t <= end]
    counts = {}
    for n in sys_in:
        counts[n] = counts.get(n, 0) + 1
    print("%-34s %10.3f %14d %12.3f %s" % (c["what"], (end - c["t"]) * 1000, sum(1 for e in inside if e[1] == "request"),
                                          sum(e[2] for e in inside if e[1] == "wait") * 1000,
                                          " ".join("%s:%d" % kv for kv in sorted(counts.items())) or "-"))
