#!/usr/bin/env bash
# bench/pam/paired.sh A B: fresh C logins (bench/pam/fresh.c) against two builds' arcad in
# alternation, for a change measured on a loaded machine: load from elsewhere falls on both
# alike. A and B are build directories (.build/release of two worktrees); each runs its own
# arcad (private state and socket) with the same vault (floor: 1 pass, 64 MiB, 10 items) for
# its own throwaway user, and logins go through each build's own pam_arca.so. Root.
#   bash bench/pam/paired.sh /work/main/.build/release .build/release     (ROUNDS=41)
# SYSCALLS=N adds arcad's system calls per login over N logins each (strace -c -f), and
# PERFSTAT=N its CPU time, context switches and page faults (perf stat).
# Prints, per build, the median and p10..p90 of each PAM step's wall time and of the login
# process's CPU time and minor page faults in it (µs; the time and faults inside crypto_pwhash,
# which fresh-c catches, taken out of each, exactly), the KDF caught and its calls, and the median of the per-round differences
# B - A (rounds paired by number). Stops with an error when fresh-c fails (a pam_arca login in
# which it did not catch exactly one crypto_pwhash is a failure) or arcad's log does not show one unlock and
# one session per login.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "bench/pam/paired.sh: must run as root" >&2; exit 1; }
[ $# -eq 2 ] || { echo "usage: bench/pam/paired.sh BUILD_A BUILD_B" >&2; exit 2; }
ROUNDS=${ROUNDS:-41}
wrapdir=/usr/lib/x86_64-linux-gnu/pam_wrapper
pids=()
users=()
# shellcheck source=SCRIPTDIR/../../Tests/integration/lib-arcad.bash
. Tests/integration/lib-arcad.bash # drop_parked
cleanup() {
    local p u
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    drop_parked "$work/A"
    drop_parked "$work/B"
    for u in "${users[@]}"; do
        "$work/A.build/bench-arcad" --purge "$(id -u "$u")" 2>/dev/null || true
        drop_user_keys "$u" # lib-arcad.bash: its @u and @us (an older A's purge leaves them)
        userdel -r "$u" 2>/dev/null || true
    done
    rm -rf "$work"
}
work=$(mktemp -d /tmp/arca-paired.XXXXXX)
trap cleanup EXIT
chmod 0755 "$work"
mkdir "$work/svc"
# shellcheck source=SCRIPTDIR/lib-check.bash
. bench/pam/lib-check.bash # compile_fresh, installed_module; check_arcad_log: arcad really unlocked and counted each login
compile_fresh "$work/fresh-c"
setup() { # NAME BUILD
    local name=$1 build user=arca-paired-$1-$$ uid i class
    # Absolute: the PAM stack names the module by this path, and libpam does not resolve a
    # relative one against the current directory (an optional module that fails to load
    # is skipped in silence).
    build=$(cd "$2" && pwd) || exit 1
    for f in arcad libpam_arca.so bench-arcad arca-test-pam-driver; do
        [ -e "$build/$f" ] || { echo "paired: $build/$f missing" >&2; exit 1; }
    done
    ln -s "$build" "$work/$name.build"
    mkdir "$work/$name"
    installed_module "$build/libpam_arca.so" "$work/$name/pam_arca.so" # as a login loads it
    useradd -m -s /bin/sh "$user"
    users+=("$user")
    uid=$(id -u "$user")
    "$build/arcad" --foreground --config /dev/null --state-dir "$work/$name/state" \
        --socket "$work/$name/arcad.sock" 2>"$work/$name/arcad.log" &
    pids+=($!)
    for _ in $(seq 250); do [ -S "$work/$name/arcad.sock" ] && break; sleep 0.02; done
    [ -S "$work/$name/arcad.sock" ] || { cat "$work/$name/arcad.log" >&2; exit 1; }
    printf 'bench-pw\n' | "$build/bench-arcad" --enroll "$work/$name/arcad.sock" "$uid" 1 $((64 << 20))
    for i in 1 2 3 4 5 6 7 8 9 10; do
        class=$([ $((i % 2)) -eq 0 ] && echo whenUnlocked || echo afterFirstUnlock)
        printf 'secret-%02d' "$i" | "$build/arca-test-pam-driver" --arcad "$work/$name/arcad.sock" \
            add "$uid" bench "acct$i" "$class" >/dev/null
    done
    {
        echo "auth     [default=ignore] $wrapdir/pam_set_items.so"
        echo "auth     required pam_permit.so"
        echo "auth     optional $work/$name/pam_arca.so socket=$work/$name/arcad.sock"
        echo "account  required pam_permit.so"
        echo "session  required pam_permit.so"
        echo "session  optional $work/$name/pam_arca.so socket=$work/$name/arcad.sock"
    } >"$work/svc/${name,,}" # libpam lowercases service names
    echo "$user" >"$work/$name/user"
}
setup A "$1"
setup B "$2"
login() { # NAME → fresh.c's "key value" pairs (µs); fails loudly if fresh-c does
    local row
    row=$(PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" \
        "$work/fresh-c" txn "${1,,}" "$(cat "$work/$1/user")" 1 2>"$work/$1/fresh.err") || {
        echo "paired: fresh-c failed on $1:" >&2; cat "$work/$1/fresh.err" >&2; return 1
    }
    [ "$(wc -w <<<"$row")" -eq 52 ] || { echo "paired: short row from $1: '$row'" >&2; return 1; }
    echo "$row"
}
declare -A expected=([A]=0 [B]=0)
check_arcad() { # NAME LOGINS (since the last check)
    expected[$1]=$((expected[$1] + $2))
    check_arcad_log "$work/$1/arcad.log" "${expected[$1]}"
}
for _ in 1 2 3; do login A >/dev/null || exit 1; login B >/dev/null || exit 1; done
check_arcad A 3
check_arcad B 3
for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) -eq 0 ]; then a=$(login A) || exit 1; b=$(login B) || exit 1
    else b=$(login B) || exit 1; a=$(login A) || exit 1; fi
    echo "A $round $a"
    echo "B $round $b"
done >"$work/rows"
check_arcad A "$ROUNDS"
check_arcad B "$ROUNDS"
python3 - "$work/rows" <<'EOF'
import statistics, sys
# Paired by round number; every row is whole (login checks), so a bad one is an error here.
by_round = {"A": {}, "B": {}}
for line in open(sys.argv[1]):
    p = line.split()
    assert len(p) == 54, f"bad row: {line!r}"
    by_round[p[0]][int(p[1])] = {k: int(v) for k, v in zip(p[2::2], p[3::2])}
assert by_round["A"].keys() == by_round["B"].keys(), "rounds missing on one side"
rounds = sorted(by_round["A"])
rows = {n: [by_round[n][r] for r in rounds] for n in ("A", "B")}
# Steps with the KDF taken out (fresh-c catches crypto_pwhash), then the KDF itself.
keys = ["start", "auth", "open", "close", "end", "txn", "cpu_start", "cpu_auth", "cpu_open", "cpu_close",
        "cpu_end", "flt_start", "flt_auth", "flt_open", "flt_close", "flt_end", "kdf", "kdf_cpu", "calls"]
names = ["pam_start", "auth", "open_session", "close_session", "pam_end", "txn", "CPU pam_start", "CPU auth",
         "CPU open", "CPU close", "CPU pam_end", "faults start", "faults auth", "faults open", "faults close",
         "faults end", "KDF caught", "KDF CPU", "KDF calls"]
def q(v, f):
    v = sorted(v)
    return v[min(len(v) - 1, int(f * len(v)))]
print(f"{len(rows['A'])} rounds; µs (faults: minor page faults, a count): median [p10..p90]")
print(f"  {'step':<14}{'A':>26}{'B':>26}{'B-A (median of pairs)':>26}")
for k, n in zip(keys, names):
    a = [r[k] for r in rows["A"]]
    b = [r[k] for r in rows["B"]]
    d = [y - x for x, y in zip(a, b)]
    fa = f"{statistics.median(a):.0f} [{q(a, .1)}..{q(a, .9)}]"
    fb = f"{statistics.median(b):.0f} [{q(b, .1)}..{q(b, .9)}]"
    print(f"  {n:<14}{fa:>26}{fb:>26}{statistics.median(d):>26.0f}")
print("  (wall and CPU of the login process, all threads, with the time inside crypto_pwhash taken out;"
      " wall - CPU = waiting)")
EOF
# Load-independent counts, per login: the login process's voluntary context switches (each a
# wait: GNU time's %w; the KDF's, if any, are the same in A and B), and arcad's CPU time (utime+stime
# of /proc/PID/stat: all its threads, exited ones included; clock ticks, so COUNTS logins
# together) and voluntary context switches (summed over the threads alive at both ends: an
# exited thread's are lost, so the threads that came and went are printed too). The keyring
# helpers arcad clones are processes of their own, the same in A and B, and not counted.
arcad_cpu_ms() { # PID
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.0f", ($12 + $13) * 1000 / hz }' "/proc/$1/stat"
}
arcad_switches() { # PID → "TID voluntary_switches" per live thread
    local t
    for t in /proc/"$1"/task/*; do
        echo "${t##*/} $(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status" 2>/dev/null || echo 0)"
    done
}
COUNTS=${COUNTS:-10}
for name in A B; do
    pid=${pids[$([ "$name" = A ] && echo 0 || echo 1)]}
    cpu0=$(arcad_cpu_ms "$pid")
    arcad_switches "$pid" | sort >"$work/$name.sw0"
    : >"$work/$name.perf"
    for _ in $(seq "$COUNTS"); do
        PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" \
            /usr/bin/time -f %w -o "$work/$name.one" \
            "$work/fresh-c" txn "${name,,}" "$(cat "$work/$name/user")" 1 >/dev/null \
            2>"$work/$name/fresh.err" || { echo "paired: fresh-c failed on $name:" >&2; cat "$work/$name/fresh.err" >&2; exit 1; }
        cat "$work/$name.one" >>"$work/$name.perf"
    done
    check_arcad "$name" "$COUNTS"
    cpu1=$(arcad_cpu_ms "$pid")
    arcad_switches "$pid" | sort >"$work/$name.sw1"
    switches=$(join "$work/$name.sw0" "$work/$name.sw1" | awk '{s += $3 - $2} END {print s + 0}')
    churn=$(join -v1 -v2 "$work/$name.sw0" "$work/$name.sw1" | wc -l)
    echo "$name: per login ($COUNTS logins): login process $(sort -n "$work/$name.perf" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')" \
        "voluntary context switches (median); arcad $(awk -v s="$switches" -v n="$COUNTS" 'BEGIN {printf "%.1f", s/n}')" \
        "voluntary context switches ($churn threads came or went, theirs not counted)," \
        "$(awk -v a="$cpu0" -v b="$cpu1" -v n="$COUNTS" 'BEGIN {printf "%.2f", (b-a)/n}') ms CPU;" \
        "login waits (all): $(sort -n "$work/$name.perf" | paste -sd' ')"
done
# SYSCALLS=N: arcad's system calls per login over N more logins each, counted by `strace -c -f`
# on every arcad thread (and the keyring helpers it clones): exact counts whatever the load;
# ptrace makes each call dearer, so these logins are not timed.
SYSCALLS=${SYSCALLS:-0}
if [ "$SYSCALLS" -gt 0 ]; then
    command -v strace >/dev/null || { echo "paired: strace missing (apt-get install strace)" >&2; exit 1; }
    for name in A B; do
        pid=${pids[$([ "$name" = A ] && echo 0 || echo 1)]}
        strace -c -f -q -p "$pid" -o "$work/$name.strace" &
        tracer=$!
        sleep 0.5 # attached to every thread before the first login
        for _ in $(seq "$SYSCALLS"); do login "$name" >/dev/null || exit 1; done
        check_arcad "$name" "$SYSCALLS"
        kill -INT "$tracer"
        wait "$tracer" 2>/dev/null || true
        # strace -c rows: % time, seconds, usecs/call, calls, [errors,] syscall.
        printf '%s: arcad system calls per login (%d logins, strace -c -f): %s; by call:' "$name" "$SYSCALLS" \
            "$(awk -v n="$SYSCALLS" '$NF == "total" { printf "%.1f", $4 / n }' "$work/$name.strace")"
        awk -v n="$SYSCALLS" '$1 ~ /^[0-9.]+$/ && $NF != "total" { printf "%.1f %s\n", $4 / n, $NF }' \
            "$work/$name.strace" | sort -rn | awk '{ printf " %s %s", $2, $1 } END { printf "\n" }'
    done
fi
# PERFSTAT=N: arcad's CPU time, context switches and page faults per login over N more logins
# each, from `perf stat` on arcad's threads (the keyring helpers it clones are not counted, the
# same in A and B): finer than clock ticks. (No instruction counts: the machine's virtual CPUs
# have no hardware counters.)
PERFSTAT=${PERFSTAT:-0}
if [ "$PERFSTAT" -gt 0 ]; then
    command -v perf >/dev/null || { echo "paired: perf missing (apt-get install linux-perf)" >&2; exit 1; }
    for name in A B; do
        pid=${pids[$([ "$name" = A ] && echo 0 || echo 1)]}
        perf stat -x, -e task-clock,context-switches,page-faults -p "$pid" \
            -o "$work/$name.perfstat" &
        stat=$!
        sleep 0.5
        for _ in $(seq "$PERFSTAT"); do login "$name" >/dev/null || exit 1; done
        check_arcad "$name" "$PERFSTAT"
        kill -INT "$stat"
        wait "$stat" 2>/dev/null || true
        # perf stat -x, rows: value, unit, event, ...
        awk -F, -v n="$PERFSTAT" -v name="$name" '
            $3 != "" && $1 ~ /^[0-9.]+$/ { v[$3] = $1 }
            END {
                printf "%s: arcad per login (%d logins, perf stat): %.3f ms CPU, %.1f context switches, %.1f page faults\n",
                    name, n, v["task-clock"] / n, v["context-switches"] / n, v["page-faults"] / n
            }' "$work/$name.perfstat"
    done
fi
echo "load average $(cut -d' ' -f1-3 /proc/loadavg); A=$1 B=$2"
