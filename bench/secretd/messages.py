#!/usr/bin/python3
"""What one `secret-tool search --all` sends, from a dbus-monitor capture (bench/secretd/run.sh).

  messages.py MONITOR.txt ITEMS

Prints `key=value` lines, per item of the search (value / ITEMS):
  provider.MEMBER   method calls to the provider (GetAll, GetSecret, GetSecrets, ...)
  bus.MEMBER        method calls to dbus-daemon itself (AddMatch, GetNameOwner, ...)
  replies           method returns and errors, from either
  messages          everything the bus routed (calls, replies, errors, signals)
and, in ms, the median time from a call to its reply as dbus-monitor saw it pass the bus:
  rtt.GetSecret     the calls secret-tool makes one after the other (one per item, each
                    waiting for the last), so this is the provider's share of each item
  gap.GetSecret     from one GetSecret's reply to the next call: secret-tool's own share

What secret-tool 0.20 (libsecret, GDBus) sends for each item, whatever the provider: a GDBusProxy
per item (two AddMatch, StartServiceByName, GetNameOwner, then GetAll; sent for all items before
any is answered), one GetSecrets for all, then secret_retrievable_retrieve_secret_sync per item as
it prints: one GetSecret, each waiting for the last. RemoveMatch comes at the proxies' end and is
cut short by the exit (dbus-daemon drops the rest at the disconnect). On the bench's private bus
StartServiceByName fails (no .service file); on a desktop bus it answers ALREADY_RUNNING.
"""
import re, statistics, sys

head = re.compile(r"^(method call|method return|error|signal) time=([0-9.]+) sender=(\S+) -> destination=(\S+)"
                  r"(?: serial=(\d+))?(?:.*?reply_serial=(\d+))?(?:.*?member=(\S+))?")
path, items = sys.argv[1], int(sys.argv[2])
counts, calls, rtt, order = {}, {}, {}, []
for line in open(path, errors="replace"):
    m = head.match(line)
    if not m:
        continue
    kind, t, sender, dest, serial, reply_serial, member = m.groups()
    t = float(t)
    if sender == "org.freedesktop.DBus" and kind == "signal":
        continue  # NameAcquired/NameLost of the monitor itself
    counts["messages"] = counts.get("messages", 0) + 1
    if kind == "method call":
        key = ("bus." if dest == "org.freedesktop.DBus" else "provider.") + (member or "?")
        counts[key] = counts.get(key, 0) + 1
        calls[(sender, serial)] = (t, member)
        order.append((t, member, "call"))
    elif kind in ("method return", "error"):
        counts["replies"] = counts.get("replies", 0) + 1
        call = calls.pop((dest, reply_serial), None)
        if call:
            rtt.setdefault(call[1], []).append((t - call[0]) * 1000)
            order.append((t, call[1], "reply"))
for key in sorted(counts):
    print("%s=%.2f" % (key, counts[key] / items))
if len(rtt.get("GetSecret", [])) > 1:
    print("rtt.GetSecret=%.3f" % statistics.median(rtt["GetSecret"]))
    gaps, last = [], None
    for t, member, what in order:
        if member != "GetSecret":
            continue
        if what == "reply":
            last = t
        elif last is not None:
            gaps.append((t - last) * 1000)
    if gaps:
        print("gap.GetSecret=%.3f" % statistics.median(gaps))
