#!/usr/bin/env python3
"""bench/pam/timeline.py UNTRACED FRESH_TRACE ARCAD_TRACE ARCAD_PID: the report of timeline.sh.

(MARKS SCHED: optional, the stderr of a FRESH_MARKS=1 login and `perf sched timehist -w` of it.)

UNTRACED: lines "base|arcad" then bench/pam/fresh.c's "key value" pairs (µs; steps with the time
inside crypto_pwhash taken out, their CPU times, the KDF caught and its calls).
FRESH_TRACE, ARCAD_TRACE: `strace -f -ttt -T` of the login process (with FRESH_MARKS=1) and
of arcad. Both traces share the wall clock; the login's marks cut them into PAM steps."""
import os
import re
import statistics
import sys

STEPS = ["start", "auth", "open", "close", "end"]
LINE = re.compile(r"^(\d+)\s+(\d+\.\d+) (.*)$")
CALL = re.compile(r"^([a-z0-9_]+)\((.*)$")
DURATION = re.compile(r"<(\d+\.\d+)>$")
RESUMED = re.compile(r"^<\.\.\. ([a-z0-9_]+) resumed>(.*)$")
RESULT = re.compile(r"\)\s+= (-?\d+|\?|0x[0-9a-f]+)")


class Call:
    def __init__(self, who, pid, start, name, text, duration, result):
        self.who, self.pid, self.start, self.name, self.text = who, pid, start, name, text
        self.duration, self.result = duration, result

    @property
    def end(self):
        return self.start + self.duration

    def first_arg(self):
        m = re.match(r"(-?\d+)", self.text)
        return int(m.group(1)) if m else None


def parse(path, who):
    """Every finished syscall (an unfinished one is joined with its resumption)."""
    calls, pending = [], {}
    with open(path, errors="replace") as f:
        for raw in f:
            m = LINE.match(raw.rstrip("\n"))
            if not m:
                continue
            pid, ts, rest = int(m.group(1)), float(m.group(2)), m.group(3)
            if rest.endswith("<unfinished ...>"):
                c = CALL.match(rest)
                if c:
                    pending[pid] = (ts, c.group(1), c.group(2))
                continue
            r = RESUMED.match(rest)
            if r:
                if pid not in pending:
                    continue
                start, name, text = pending.pop(pid)
                text = text.replace("<unfinished ...>", "") + r.group(2)
            else:
                c = CALL.match(rest)
                if not c:
                    continue
                start, name, text = ts, c.group(1), c.group(2)
            d = DURATION.search(rest)
            res = RESULT.search(text)
            result = res.group(1) if res else "?"
            calls.append(Call(who, pid, start, name, text, float(d.group(1)) if d else 0.0, result))
    calls.sort(key=lambda c: c.start)
    return calls


def ms(seconds):
    return f"{seconds * 1000:.2f}"


def untraced(path):
    rows = {"base": [], "arcad": []}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] in rows:
                rows[parts[0]].append({k: int(v) for k, v in zip(parts[1::2], parts[2::2])})
    return rows


SLICE = re.compile(r"^\s*(\d+\.\d+)\s+\[(\d+)\]\s+(\S.*?)\[(\d+)(?:/(\d+))?\]\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")


def sched_report(marks_path, sched_path, arcad_pid):
    """Per PAM step, from perf sched timehist: CPU time, time waiting for a CPU after a
    wake-up (sch delay) and number of wake-ups, of the login process and of arcad
    (its threads, and the keyring helpers it clones: processes named arcad that exited)."""
    marks = {}
    with open(marks_path) as f:
        for line in f:
            m = re.match(r"fresh:mark:(\w+) ([\d.]+)", line)
            if m:
                marks[m.group(1)] = float(m.group(2)) / 1e6
    if "start" not in marks or "done" not in marks:
        print("perf sched: no marks (perf missing or failed)")
        return
    slices = []
    with open(sched_path) as f:
        for line in f:
            m = SLICE.match(line)
            if m:
                end, name, tid, pid = float(m.group(1)), m.group(3), int(m.group(4)), int(m.group(5) or m.group(4))
                delay, run = float(m.group(7)) / 1000, float(m.group(8)) / 1000
                slices.append((end, name, tid, pid, delay, run))
    login = [s for s in slices if s[1] == "fresh-c"]
    login_pid = login[0][3] if login else -1
    def is_arcad(s):
        if s[3] == int(arcad_pid):
            return True
        # a keyring helper: a process arcad cloned during this login, gone since
        return s[1].startswith("arcad") and s[2] == s[3] and s[3] > login_pid and not os.path.exists(f"/proc/{s[3]}")
    arcad = [s for s in slices if is_arcad(s)]
    print("untraced login under perf sched (no ptrace), per step: CPU time run, wake-ups (switch-ins) and the time")
    print("they waited for a CPU (sch delay), of the login process and of arcad (threads + keyring helpers):")
    print("  step        wall   login run  wakes  cpu-wait   arcad run  wakes  cpu-wait   neither ran")
    for step, nxt in zip(STEPS, STEPS[1:] + ["done"]):
        lo, hi = marks[step], marks[nxt]
        def part(group):
            inside = [s for s in group if lo < s[0] <= hi]
            return (sum(min(s[5], s[0] - lo) for s in inside), len(inside), sum(s[4] for s in inside))
        lr, lw, ld = part(login)
        ar, aw, ad = part(arcad)
        print(f"  {step:<8}{ms(hi - lo):>8}{ms(lr):>12}{lw:>7}{ms(ld):>10}{ms(ar):>12}{aw:>7}{ms(ad):>10}"
              f"{ms(max(0.0, hi - lo - lr - ar)):>14}")
    print("  (ms; 'neither ran' = wall minus both CPU times: hand-offs, wake-up latency, other work on the CPUs)")
    print()


def main():
    untraced_path, fresh_path, arcad_path, arcad_pid = sys.argv[1:5]
    rows = untraced(untraced_path)
    med = {k: {key: statistics.median(r[key] for r in v) for key in v[0]} for k, v in rows.items() if v}
    print(f"untraced fresh C logins ({len(rows['arcad'])} per stack; the time inside crypto_pwhash taken out of"
          " each step; median µs; CPU = the login process's):")
    print("  step            baseline   pam_arca      added   CPU added   wait added")
    for step in STEPS + ["txn"]:
        b, a = med["base"][step], med["arcad"][step]
        if step == "txn":
            print(f"  {step:<14}{b:10.0f}{a:11.0f}{a - b:11.0f}")
            continue
        cpu = med["arcad"]["cpu_" + step] - med["base"]["cpu_" + step]
        print(f"  {step:<14}{b:10.0f}{a:11.0f}{a - b:11.0f}{cpu:12.0f}{a - b - cpu:13.0f}")
    calls = sorted(r["calls"] for r in rows["arcad"])
    txns = sorted(r["txn"] for r in rows["arcad"])
    base_txn = med["base"]["txn"]
    print(f"  KDF caught inside pam_arca.so: median {med['arcad']['kdf']:.0f} µs wall,"
          f" {med['arcad']['kdf_cpu']:.0f} µs CPU, {calls[0]}..{calls[-1]} calls"
          f" per login; added: min {txns[0] - base_txn:.0f}, max {txns[-1] - base_txn:.0f} µs")
    print()

    fresh = parse(fresh_path, "login")
    arcad = parse(arcad_path, "arcad")
    fds = {}
    for entry in os.listdir(f"/proc/{arcad_pid}/fd") if os.path.isdir(f"/proc/{arcad_pid}/fd") else []:
        try:
            fds[int(entry)] = os.readlink(f"/proc/{arcad_pid}/fd/{entry}")
        except OSError:
            pass
    marks = {}
    for c in fresh:
        # fresh.c's marks: write(-(100 + index of the step), ...), traced with -s 0.
        if c.name == "write" and c.first_arg() is not None and -106 < c.first_arg() <= -100:
            marks[(STEPS + ["done"])[-100 - c.first_arg()]] = c.start
    bounds = [(s, marks[s], marks[n]) for s, n in zip(STEPS, STEPS[1:] + ["done"]) if s in marks and n in marks]
    # Sockets to arcad in the login process, and the KDF's 64 MiB mapping.
    sock, kdf = set(), []
    for c in fresh:
        if c.name == "connect" and "arcad.sock" in c.text:
            sock.add(c.first_arg())
        elif c.name == "close" and c.first_arg() in sock:
            sock.discard(c.first_arg())
        if c.name == "mmap" and ", 67108864," in c.text:
            kdf.append([c.start, None])
        if c.name == "munmap" and ", 67108864)" in c.text and kdf and kdf[-1][1] is None:
            kdf[-1][1] = c.end
        c.arcad_socket = c.first_arg() in sock or (c.name == "connect" and "arcad.sock" in c.text)
    waits = ("read", "recvfrom", "recvmsg", "poll", "ppoll")

    def in_step(calls, lo, hi):
        return [c for c in calls if lo <= c.start < hi]

    print("traced login (strace on both sides: counts and waits are exact, totals inflated by ptrace), per step:")
    for step, lo, hi in bounds:
        f = in_step(fresh, lo, hi)
        a = in_step(arcad, lo, hi)
        kdf_time = sum(min(e, hi) - max(s, lo) for s, e in kdf if e and s < hi and e > lo)
        blocked = [c for c in f if c.arcad_socket and c.name in waits and c.duration > 0.00005]
        connects = [c for c in f if c.name == "connect" and c.arcad_socket]
        fsyncs = [c for c in a if c.name in ("fsync", "fdatasync")]
        clones = [c for c in a if c.name in ("clone", "clone3", "vfork", "fork")]
        reaps = [c for c in a if c.name in ("wait4", "waitid")]
        keyctl = [c for c in a if c.name in ("keyctl", "add_key", "request_key")]
        writes = [c for c in a if c.name in ("pwrite64", "write") and c.first_arg() in fds
                  and fds[c.first_arg()].endswith((".db", ".db-wal", ".db-shm"))]
        futex = [c for c in a if c.name == "futex" and c.duration > 0.0001]
        accepts = [c for c in a if c.name in ("accept", "accept4") and c.result not in ("?", "-1")]
        opens = [c for c in f if c.name in ("openat", "open")]
        print(f"  {step}: {ms(hi - lo)} ms traced wall"
              + (f" ({ms(kdf_time)} ms of it the KDF)" if kdf_time else "")
              + f"; login process: {len(f)} syscalls, {len(opens)} opens, {len(connects)} connects,"
              f" blocked on arcad (>50 µs) {len(blocked)}x {ms(sum(c.duration for c in blocked))} ms")
        print(f"      arcad: {len(a)} syscalls, {len(accepts)} accepts, {len(fsyncs)} fsync"
              f" {ms(sum(c.duration for c in fsyncs))} ms"
              f" [{', '.join(fds.get(c.first_arg(), str(c.first_arg())).rsplit('/', 1)[-1] + ' ' + ms(c.duration) for c in fsyncs)}],"
              f" {len(writes)} db writes, {len(clones)} clones, waits {len(reaps)}x"
              f" {ms(sum(c.duration for c in reaps))} ms, {len(keyctl)} keyctl/add_key,"
              f" futex waits >0.1 ms {len(futex)}x {ms(sum(c.duration for c in futex))} ms")
    print()
    interesting = {"connect", "accept", "accept4", "fsync", "fdatasync", "clone", "clone3", "vfork", "wait4",
                   "waitid", "exit_group", "execve"}
    full = os.environ.get("TRACE") == "1"
    print("timeline of the traced login (ms from pam_start; login = the PAM process, a<pid> = arcad's threads"
          " and helpers)" + ("" if full else "; TRACE=1 for every syscall") + ":")
    t0 = marks.get("start", fresh[0].start if fresh else 0)
    t1 = marks.get("done", 0) + 0.001
    events = [c for c in fresh + arcad if t0 <= c.start < t1]
    events.sort(key=lambda c: c.start)
    run = None
    for c in events:
        show = full or c.name in interesting or (c.who == "login" and c.name == "write" and (c.first_arg() or 0) <= -100) \
            or (c.arcad_socket if c.who == "login" else False) \
            or (c.name in ("fsync", "fdatasync")) or (c.name == "futex" and c.duration > 0.0003) \
            or (c.who == "arcad" and c.name in waits + ("write", "sendmsg", "sendto", "writev")
                and c.duration > 0.0003) or c.duration > 0.0005
        if c.name in ("keyctl", "add_key") and not full:
            key = (c.who, c.pid, c.name)
            if run and run[0] == key:
                run[1] += 1
                run[3] = c.end
                continue
            if run:
                print(f"  {ms(run[2] - t0):>8} a{run[0][1]:<7} {run[0][2]} x{run[1]} ({ms(run[3] - run[2])} ms)")
            run = [key, 1, c.start, c.end]
            continue
        if not show:
            continue
        if run:
            print(f"  {ms(run[2] - t0):>8} a{run[0][1]:<7} {run[0][2]} x{run[1]} ({ms(run[3] - run[2])} ms)")
            run = None
        who = "login" if c.who == "login" else f"a{c.pid}"
        text = c.text if len(c.text) < 90 else c.text[:87] + "..."
        fd = c.first_arg()
        if c.who == "arcad" and c.name in ("fsync", "fdatasync") and fd in fds:
            text = fds[fd]
        print(f"  {ms(c.start - t0):>8} {who:<8} {c.name}({text}  [{ms(c.duration)} ms]")
    if run:
        print(f"  {ms(run[2] - t0):>8} a{run[0][1]:<7} {run[0][2]} x{run[1]} ({ms(run[3] - run[2])} ms)")


    if len(sys.argv) > 6:
        print()
        sched_report(sys.argv[5], sys.argv[6], arcad_pid)


if __name__ == "__main__":
    main()
