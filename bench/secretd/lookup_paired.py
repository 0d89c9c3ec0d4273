#!/usr/bin/python3
"""Paired `secret-tool lookup` rounds for bench/secretd/lookup-paired.sh (run as root).

  LOOKUP_ID=K lookup_paired.py ROUNDS COLUMN...      COLUMN = NAME:UID:GID:HOME:BUS_ADDRESS:PID,PID...

Each round runs one `secret-tool lookup bench 1 id K` per column, as that column's user on its
own bus, in an order that changes every round (so no column always follows another), and times
each whole process. Every column but the first (secret-tool alone, which must print nothing) must
print the item's secret, `secret-K`; any other output stops the run: a figure is only kept for lookups that found the item. The PIDs
are the column's provider processes, whose CPU time (utime + stime of /proc/PID/stat: the whole
process, threads that exited included, in clock ticks, so over many rounds) and voluntary context
switches (each a wait for a message or a reply; of the threads alive at both ends only: /proc has
no count for exited threads, so the table marks a column whose threads exited meanwhile) are
divided by the lookups at the end; secret-tool's own CPU time and voluntary context switches
come from wait4's rusage per lookup. These counts move little with load, where wall times do.

Printed: per column the median and p10..p90 of the wall time (ms), and for each column the median
of the per-round differences to the first column (secret-tool alone) and to every other column the
table names, with p10..p90 of those differences: the load of the moment falls on both sides of a
difference alike.
"""
import os, random, signal, statistics, subprocess, sys, time

KEY = os.environ.get("LOOKUP_ID", "500")
TIMEOUT = 10  # s per lookup
ARGV = ["secret-tool", "lookup", "bench", "1", "id", KEY]


def quantile(values, f):
    v = sorted(values)
    return v[min(len(v) - 1, int(f * len(v)))]


def spread(values):
    return "%6.2f [%5.2f..%5.2f]" % (statistics.median(values), quantile(values, 0.1), quantile(values, 0.9))


def provider_counts(pids):
    """(CPU ticks of the whole process, ns on a CPU of the live threads, their voluntary context switches)
    summed over `pids`. The ticks (utime + stime of /proc/PID/stat) count every thread the process ever
    had, exited ones too; schedstat and the switches only the threads alive at the moment, so a
    thread that starts and exits between two readings escapes those two (main() says when it did)."""
    ticks = ns = switches = 0
    for pid in pids:
        try:
            fields = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
            tasks = os.listdir("/proc/%s/task" % pid)
        except FileNotFoundError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        for t in tasks:
            try:
                ns += int(open("/proc/%s/task/%s/schedstat" % (pid, t)).read().split()[0])
                for line in open("/proc/%s/task/%s/status" % (pid, t)):
                    if line.startswith("voluntary_ctxt_switches:"):
                        switches += int(line.split()[1])
            except FileNotFoundError:
                continue
    return ticks, ns, switches


def main():
    rounds = int(sys.argv[1])

    def hung(_signum, _frame):
        sys.exit("lookup-paired: a lookup took over %d s" % TIMEOUT)  # cleanup stops the buses, secret-tool with them
    signal.signal(signal.SIGALRM, hung)
    columns = []
    for spec in sys.argv[2:]:
        name, uid, gid, home, address, pids = spec.split(":", 5)
        expect = "-" if not columns else "secret-" + KEY
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home, "XDG_RUNTIME_DIR": home,
               "DBUS_SESSION_BUS_ADDRESS": address.replace("%3A", ":")}
        columns.append({"name": name, "uid": int(uid), "gid": int(gid), "env": env, "expect": expect,
                        "pids": [p for p in pids.split(",") if p], "times": [], "client": []})

    def lookup(c):
        t = time.perf_counter()
        p = subprocess.Popen(ARGV, user=c["uid"], group=c["gid"], extra_groups=[], env=c["env"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=c["env"]["HOME"])
        signal.alarm(TIMEOUT)  # a hung provider must not hang the run (hung() ends it)
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        signal.alarm(0)
        elapsed = (time.perf_counter() - t) * 1000
        p.returncode = os.waitstatus_to_exitcode(status)
        got = out.decode(errors="replace").strip()
        if got != ("" if c["expect"] == "-" else c["expect"]):
            sys.exit("lookup-paired: %s printed %r (exit %d), not %r" % (c["name"], got, p.returncode, c["expect"]))
        c["client"].append(((usage.ru_utime + usage.ru_stime) * 1000, usage.ru_nvcsw))
        return elapsed

    for c in columns:  # warm-up: page cache, each provider's first session
        for _ in range(3):
            lookup(c)
        c["client"] = []
    rng = random.Random(15)
    start = [provider_counts(c["pids"]) for c in columns]
    for _ in range(rounds):
        order = list(columns)
        rng.shuffle(order)
        for c in order:
            c["times"].append(lookup(c))
    end = [provider_counts(c["pids"]) for c in columns]
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    cpu = [(e[0] - s0[0]) * tick_ms / rounds for s0, e in zip(start, end)]
    live = [(e[1] - s0[1]) / 1e6 / rounds for s0, e in zip(start, end)]
    woke = [(e[2] - s0[2]) / rounds for s0, e in zip(start, end)]
    # Threads that exited between the readings: the whole process's CPU exceeds its live threads'
    # by more than the ticks' resolution (one tick per process and end), and their switches are missing.
    exited = [w - l > 2 * len(c["pids"]) * tick_ms / rounds for w, l, c in zip(cpu, live, columns)]

    base = columns[0]
    print("%d rounds, one lookup per column each, in a shuffled order; ms: median [p10..p90]" % rounds)
    print("  %-16s %24s %24s %10s %8s %10s %8s" % ("column", "whole process", "minus %s (paired)" % base["name"],
                                                  "prov. CPU", "wakes", "client CPU", "waits"))
    for c, ms, w, x in zip(columns, cpu, woke, exited):
        d = [x - y for x, y in zip(c["times"], base["times"])]
        print("  %-16s %24s %24s %10s %8s %10.2f %8.0f" % (
            c["name"], spread(c["times"]), spread(d) if c is not base else "",
            "%.2f" % ms if c["pids"] else "-", ("%.1f" % w + ("!" if x else "")) if c["pids"] else "-",
            statistics.median(u for u, _ in c["client"]), statistics.median(n for _, n in c["client"])))
    print("  (per lookup: the provider's CPU ms, arca: arca-secretd + arcad, the whole process with exited threads")
    print("   (/proc/PID/stat, %.2f ms resolution over %d rounds), and its voluntary context switches, over the" % (
        2 * tick_ms / rounds, rounds))
    print("   threads alive at both ends only (! where threads exited meanwhile: those switches are missing);")
    print("   secret-tool's own CPU ms and voluntary context switches, medians)")
    byname = {c["name"]: c for c in columns}
    pairs = [p.split("/", 1) for p in os.environ.get("PAIRS", "").split()]
    for a, b in pairs:
        if a in byname and b in byname:
            d = [x - y for x, y in zip(byname[a]["times"], byname[b]["times"])]
            print("  %-41s %24s" % ("%s minus %s (paired)" % (a, b), spread(d)))
    gk = byname.get("gnome-keyring")
    if gk:
        above_gk = statistics.median([x - y for x, y in zip(gk["times"], base["times"])])
        for c in columns:
            if c["name"].startswith("arca"):
                above = statistics.median([x - y for x, y in zip(c["times"], base["times"])])
                print("  %-66s %6.2fx (target <= 0.2x)" % (
                    "%s above %s / gnome-keyring above it" % (c["name"], base["name"]), above / above_gk))


main()
