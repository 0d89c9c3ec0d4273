#!/usr/bin/env bash
# bench/pam/timeline.sh: where the wall time of one fresh-process login goes (issue 16 §7).
# Root. Sets up what bench/pam/run.sh's "C login" rows use (a throwaway user, a real arcad
# with a private state directory and socket, the vault at arcad's floor, 1 pass, 64 MiB,
# holding 10 items), then:
#   1. untraced: $RUNS fresh C processes per stack (bench/pam/fresh.c; baseline and pam_arca
#      take turns), the median of each PAM step, baseline subtracted: the true figures;
#   2. traced: one more login under `strace -f -ttt -T`, on the fresh process (marked steps:
#      FRESH_MARKS=1) and on every thread of arcad (and the keyring helpers it clones);
#      both traces merged on the clock and cut into the PAM steps. Per step: wall time
#      under strace (ptrace makes every syscall dearer: read the counts and the waits, not
#      the totals), the login process's time blocked on arcad's socket, and arcad's
#      accepts, fsyncs (with their durations), clones of the keyring helper and their
#      waits, keyctl/add_key calls, SQLite file writes, futex waits.
#   TRACE=1 prints every merged event of the traced login too.
#
#   ARCA_BUILD=.build/release bash bench/pam/timeline.sh     (RUNS=15 by default)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "bench/pam/timeline.sh: must run as root" >&2; exit 1; }
build=${ARCA_BUILD:-$PWD/.build/release}
RUNS=${RUNS:-15}
for f in arcad libpam_arca.so bench-arcad arca-test-pam-driver; do
    [ -e "$build/$f" ] || { echo "timeline: $build/$f missing (swift build -c release)" >&2; exit 1; }
done
command -v strace >/dev/null || { echo "timeline: strace missing (apt-get install strace)" >&2; exit 1; }
wrapdir=/usr/lib/x86_64-linux-gnu/pam_wrapper
work=$(mktemp -d /tmp/arca-timeline.XXXXXX)
chmod 0755 "$work"
mkdir "$work/svc"
clang -O2 -Wall -o "$work/fresh-c" bench/pam/fresh.c -lpam -lsodium -ldl
user=arca-timeline-$$
arcad_pid="" strace_pid=""
stop() { if [ -n "$1" ]; then kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; fi; }
# shellcheck source=../../Tests/integration/lib-arcad.bash
. Tests/integration/lib-arcad.bash # drop_parked
cleanup() {
    stop "$strace_pid"
    stop "$arcad_pid"
    drop_parked
    if id "$user" >/dev/null 2>&1; then
        "$build/bench-arcad" --purge "$(id -u "$user")" 2>/dev/null || true
        userdel -r "$user" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
useradd -m -s /bin/sh "$user"
uid=$(id -u "$user")
"$build/arcad" --foreground --config /dev/null --state-dir "$work/state" --socket "$work/arcad.sock" \
    2>"$work/arcad.log" &
arcad_pid=$!
for _ in $(seq 250); do [ -S "$work/arcad.sock" ] && break; sleep 0.02; done
[ -S "$work/arcad.sock" ] || { cat "$work/arcad.log" >&2; echo "timeline: arcad did not start" >&2; exit 1; }
printf 'bench-pw\n' | "$build/bench-arcad" --enroll "$work/arcad.sock" "$uid" 1 $((64 << 20))
for i in 1 2 3 4 5 6 7 8 9 10; do
    class=$([ $((i % 2)) -eq 0 ] && echo whenUnlocked || echo afterFirstUnlock)
    printf 'secret-%02d' "$i" |
        "$build/arca-test-pam-driver" --arcad "$work/arcad.sock" add "$uid" bench "acct$i" "$class" >/dev/null
done
real="$build/libpam_arca.so socket=$work/arcad.sock"
stack() { # NAME [MODULE LINE]
    {
        echo "auth     [default=ignore] $wrapdir/pam_set_items.so"
        echo "auth     required pam_permit.so"
        if [ -n "${2:-}" ]; then echo "auth     optional $2"; fi
        echo "account  required pam_permit.so"
        echo "session  required pam_permit.so"
        if [ -n "${2:-}" ]; then echo "session  optional $2"; fi
    } >"$work/svc/$1"
}
stack base
stack arcad "$real"
login() { # SERVICE → "start auth open close end txn kdf" (µs), KDF before the transaction
    PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" \
        "$work/fresh-c" txn "$1" "$user" 1 $((64 << 20)) 1
}
for _ in 1 2 3; do login base >/dev/null; login arcad >/dev/null; done # page cache, arcad's threads
for _ in $(seq "$RUNS"); do
    echo "base $(login base)"
    echo "arcad $(login arcad)"
done >"$work/untraced"

# One traced login: arcad's threads first (all of them, and what they clone), then the process.

strace -f -ttt -T -qq -s 48 -o "$work/arcad.st" -p "$arcad_pid" &
strace_pid=$!
for _ in $(seq 100); do grep -q "TracerPid:[[:space:]]*$strace_pid" "/proc/$arcad_pid/status" && break; sleep 0.02; done
sleep 0.2
PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" FRESH_MARKS=1 \
    strace -f -ttt -T -qq -s 48 -o "$work/fresh.st" "$work/fresh-c" txn arcad "$user" 1 $((64 << 20)) 1 >/dev/null
sleep 0.2
stop "$strace_pid"
strace_pid=""
# One login under perf sched (scheduler events only, no ptrace): who ran, who waited, and how long
# each wake-up took to get a CPU, for the login process and arcad's threads.
PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" FRESH_MARKS=1 \
    perf sched record -k CLOCK_MONOTONIC -a -o "$work/sched.data" -- \
    "$work/fresh-c" txn arcad "$user" 1 $((64 << 20)) 1 >/dev/null 2>"$work/marks" || true
perf sched timehist -i "$work/sched.data" -w 2>/dev/null >"$work/sched.txt" || true
python3 bench/pam/timeline.py "$work/untraced" "$work/fresh.st" "$work/arcad.st" "$arcad_pid" \
    "$work/marks" "$work/sched.txt"
[ -z "${KEEP:-}" ] || cp -a "$work" "$KEEP"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; build $build"
