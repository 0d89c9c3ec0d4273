#!/usr/bin/python3
"""Figures of bench/secretd/create-paired.sh's runs: python3 create-timeline.py WORK NAME...

Each NAME (e.g. A1, B1) is a directory of WORK holding fill.log (bench.py filllog: item, start,
end on CLOCK_MONOTONIC), perf.txt (arcad's fdatasync/fsync enter and exit and pwrite64, from
`perf script` on the same clock) and info (CPU, file sizes). The write-ahead log's fd is the one
that receives 24-byte writes (SQLite's frame headers): each is one WAL frame (a page of a commit).
Page writes (4,096 bytes) to any other fd are a checkpoint copying pages back into the database;
a checkpoint pass is a burst of those and the syncs beside them (gaps under 20 ms). Per block of
100 adds at 100, 1,000, 5,000 and 9,900: ms per add (the block's wall time / 100), fdatasyncs,
WAL frames and pages written back; over the whole fill: passes, the median add beside a pass and
away from one, and the time the adds beside passes took above that median (what passes cost the
adds); CPU per add. The first letter of NAME is the build: per build, the median over its runs
and the range.
"""
import collections, os, re, statistics, sys

BLOCKS = (100, 1000, 5000, 9900)
EVENT = re.compile(r"^\s*(\d+)/(\d+)\s+([\d.]+):\s+syscalls:(\w+):\s*(.*)$")


def parse_perf(path):
    events = []
    for line in open(path):
        m = EVENT.match(line)
        if not m:
            continue
        tid, t, name, rest = int(m.group(2)), float(m.group(3)), m.group(4), m.group(5)
        fields = dict(re.findall(r"(\w+): (0x[0-9a-f]+)", rest))
        events.append((t, tid, name, {k: int(v, 16) for k, v in fields.items()}, rest))
    events.sort(key=lambda e: e[0])
    return events


def analyse(directory):
    adds = []
    for line in open(os.path.join(directory, "fill.log")):
        i, t0, t1 = line.split()
        adds.append((int(i), float(t0), float(t1)))
    info = dict(l.strip().split("=", 1) for l in open(os.path.join(directory, "info")) if "=" in l)
    events = parse_perf(os.path.join(directory, "perf.txt"))
    wal_fds = {e[3]["fd"] for e in events if e[2] == "sys_enter_pwrite64" and e[3].get("count") == 24}
    frames, pages, syncs = [], [], []  # times; pages: (time, tid); syncs: (start, end, fd, tid)
    writers = collections.Counter()  # threads writing WAL frames: the committing one(s)
    open_sync = {}
    for t, tid, name, f, _ in events:
        if name == "sys_enter_pwrite64":
            if f.get("count") == 24 and f.get("fd") in wal_fds:
                frames.append(t)
                writers[tid] += 1
            elif f.get("count") == 4096 and f.get("fd") not in wal_fds:
                pages.append((t, tid))
        elif name in ("sys_enter_fdatasync", "sys_enter_fsync"):
            open_sync[tid] = (t, f.get("fd"))
        elif name in ("sys_exit_fdatasync", "sys_exit_fsync") and tid in open_sync:
            start, fd = open_sync.pop(tid)
            syncs.append((start, t, fd, tid))
    # Checkpoint passes: bursts of page write-backs, with the syncs of the same thread around them.
    passes = []
    for t, tid in pages:
        if passes and passes[-1][2] == tid and t - passes[-1][1] < 0.02:
            passes[-1][1] = t
            passes[-1][3] += 1
        else:
            passes.append([t, t, tid, 1])
    for p in passes:
        for s0, s1, fd, tid in syncs:
            # Not the writer's own WAL syncs (a pass the writer runs sits between its commits).
            if tid == p[2] and fd not in wal_fds and (p[0] - 0.02 <= s0 <= p[1] + 0.02 or s0 <= p[0] <= s1):
                p[0], p[1] = min(p[0], s0), max(p[1], s1)

    def count(times, a, b):
        return sum(1 for t in times if a <= t <= b)

    out = {}
    for first in BLOCKS:
        block = [a for a in adds if first <= a[0] < first + 100]
        if len(block) < 100:
            continue
        a, b = block[0][1], block[-1][2]
        out["ms/add %d" % first] = (b - a) * 1000 / 100
        out["fdatasync/100 %d" % first] = sum(1 for s in syncs if a <= s[0] <= b)
        out["WAL frames/100 %d" % first] = count(frames, a, b)
        out["pages back/100 %d" % first] = count([p[0] for p in pages], a, b)
        out["passes in block %d" % first] = sum(1 for p in passes if p[0] <= b and p[1] >= a)
    lat = [(t1 - t0) * 1000 for _, t0, t1 in adds]
    beside = [False] * len(adds)
    j = 0
    for k, (_, t0, t1) in enumerate(adds):
        while j < len(passes) and passes[j][1] < t0:
            j += 1
        beside[k] = j < len(passes) and passes[j][0] <= t1
    away = [l for l, b in zip(lat, beside) if not b]
    near = [l for l, b in zip(lat, beside) if b]
    typical = statistics.median(away) if away else 0
    out["add median ms"] = statistics.median(lat)
    out["add p99 ms"] = sorted(lat)[int(len(lat) * 0.99)]
    out["add max ms"] = max(lat)
    out["passes"] = len(passes)
    out["pages per pass"] = statistics.median([p[3] for p in passes]) if passes else 0
    out["pass ms (median)"] = statistics.median([(p[1] - p[0]) * 1000 for p in passes]) if passes else 0
    out["adds beside a pass"] = len(near)
    out["add ms away from passes"] = typical
    out["add ms beside a pass"] = statistics.median(near) if near else 0
    out["ms passes add (sum/pass)"] = sum(l - typical for l in near) / len(passes) if passes else 0
    # Passes the committing thread ran itself (inside an add) and passes of the checkpoint thread.
    for kind, mine in (("writer", True), ("thread", False)):
        ps = [p for p in passes if (p[2] in writers) == mine]
        out["passes by the %s" % kind] = len(ps)
        out["  %s: pages per pass" % kind] = statistics.median([p[3] for p in ps]) if ps else 0
        out["  %s: pass ms (median)" % kind] = statistics.median([(p[1] - p[0]) * 1000 for p in ps]) if ps else 0
        extra = 0.0
        for p in ps:
            extra += sum((t1 - t0) * 1000 - typical for _, t0, t1 in adds if t0 <= p[1] and t1 >= p[0])
        out["  %s: ms added to adds/pass" % kind] = extra / len(ps) if ps else 0
    commit_syncs = [(s1 - s0) * 1000 for s0, s1, fd, _ in syncs if fd in wal_fds]
    out["WAL sync ms (median)"] = statistics.median(commit_syncs) if commit_syncs else 0
    out["fdatasync total/100 adds"] = len(syncs) * 100 / len(adds)
    out["WAL frames/add"] = len(frames) / len(adds)
    out["arcad CPU ms/add"] = int(info.get("arcad_cpu_ms", 0)) / len(adds)
    out["arca-secretd CPU ms/add"] = int(info.get("secretd_cpu_ns", 0)) / 1e6 / len(adds)
    out["WAL MB at end"] = int(info.get("wal_bytes", 0)) / 1e6
    out["db MB at end"] = int(info.get("db_bytes", 0)) / 1e6
    return out


def main():
    work, names = sys.argv[1], sys.argv[2:]
    results = {n: analyse(os.path.join(work, n)) for n in names}
    keys = list(dict.fromkeys(k for r in results.values() for k in r))
    print("%-30s" % "run" + "".join("%10s" % n for n in names))
    for k in keys:
        print("%-30s" % k + "".join("%10.2f" % results[n].get(k, float("nan")) for n in names))
    builds = sorted({n[0] for n in names})
    print()
    print("%-30s" % "median [min-max] per build" + "".join("%26s" % b for b in builds))
    for k in keys:
        row = "%-30s" % k
        for b in builds:
            v = [results[n][k] for n in names if n[0] == b and k in results[n]]
            row += "%26s" % ("%.2f [%.2f-%.2f]" % (statistics.median(v), min(v), max(v)) if v else "-")
        print(row)


if __name__ == "__main__":
    main()
