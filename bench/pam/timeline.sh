#!/usr/bin/env bash
# bench/pam/timeline.sh: where the wall time of one fresh-process login goes (issue 16 §7).
# Root. Sets up what bench/pam/run.sh's "C login" rows use (a throwaway user, a real arcad
# with a private state directory and socket, the vault at arcad's floor, 1 pass, 64 MiB,
# holding 10 items), then:
#   1. untraced: $RUNS fresh C processes per stack (bench/pam/fresh.c; baseline and pam_arca
#      take turns), the median of each PAM step's wall and CPU time, baseline subtracted, the
#      time inside crypto_pwhash (caught by fresh-c) taken out: the true figures;
#   2. traced: one more login under `strace -f -ttt -T -s 0` (no strings: the key and the
#      session token on arcad's socket stay out of the trace), on the fresh process (marked steps:
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
# Absolute: the PAM stack names the module by this path (libpam skips an optional module it
# cannot load, in silence, and a relative path does not load).
build=$(cd "${ARCA_BUILD:-.build/release}" && pwd) || { echo "timeline: no build directory" >&2; exit 1; }
RUNS=${RUNS:-15}
for f in arcad libpam_arca.so bench-arcad arca-test-pam-driver; do
    [ -e "$build/$f" ] || { echo "timeline: $build/$f missing (swift build -c release)" >&2; exit 1; }
done
command -v strace >/dev/null || { echo "timeline: strace missing (apt-get install strace)" >&2; exit 1; }
command -v perf >/dev/null || { echo "timeline: perf missing (apt-get install linux-perf)" >&2; exit 1; }
wrapdir=/usr/lib/x86_64-linux-gnu/pam_wrapper
user=arca-timeline-$$
arcad_pid="" strace_pid=""
# shellcheck source=SCRIPTDIR/../../Tests/integration/lib-arcad.bash
. Tests/integration/lib-arcad.bash # drop_parked
# shellcheck source=SCRIPTDIR/lib-check.bash
. bench/pam/lib-check.bash # compile_fresh, check_arcad_log, start_bench_arcad, cleanup_bench_arcad, stop, installed_module
work=$(mktemp -d /tmp/arca-timeline.XXXXXX)
trap cleanup_bench_arcad EXIT
chmod 0755 "$work"
mkdir "$work/svc"
compile_fresh "$work/fresh-c"
useradd -m -s /bin/sh "$user"
uid=$(id -u "$user")
start_bench_arcad timeline
installed_module "$build/libpam_arca.so" "$work/pam_arca.so" # as a login loads it (lib-check.bash)
real="$work/pam_arca.so socket=$work/arcad.sock"
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
kdfs() { if [ "$1" = arcad ]; then echo 1; else echo 0; fi; } # crypto_pwhash calls fresh-c must catch, exactly
login() { # SERVICE → fresh.c's "key value" pairs (µs)
    local row
    row=$(PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" \
        "$work/fresh-c" txn "$1" "$user" "$(kdfs "$1")" 2>"$work/fresh.err") || {
        echo "timeline: fresh-c failed ($1):" >&2; cat "$work/fresh.err" >&2; return 1
    }
    [ "$(wc -w <<<"$row")" -eq 52 ] || { echo "timeline: short row ($1): '$row'" >&2; return 1; }
    echo "$row"
}
logins=0
check_arcad() { # LOGINS (pam_arca logins since the last check)
    logins=$((logins + $1))
    check_arcad_log "$work/arcad.log" "$logins"
}
for _ in 1 2 3; do login base >/dev/null || exit 1; login arcad >/dev/null || exit 1; done # page cache, threads
check_arcad 3
for _ in $(seq "$RUNS"); do
    row=$(login base) || exit 1
    echo "base $row"
    row=$(login arcad) || exit 1
    echo "arcad $row"
done >"$work/untraced"
check_arcad "$RUNS"

# One traced login: arcad's threads first (all of them, and what they clone), then the process.

strace -f -ttt -T -qq -s 0 -o "$work/arcad.st" -p "$arcad_pid" &
strace_pid=$!
for _ in $(seq 100); do grep -q "TracerPid:[[:space:]]*$strace_pid" "/proc/$arcad_pid/status" && break; sleep 0.02; done
sleep 0.2
PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" FRESH_MARKS=1 \
    strace -f -ttt -T -qq -s 0 -o "$work/fresh.st" "$work/fresh-c" txn arcad "$user" 1 >/dev/null
check_arcad 1
sleep 0.2
stop "$strace_pid"
strace_pid=""
# One login under perf sched (scheduler events only, no ptrace): who ran, who waited, and how long
# each wake-up took to get a CPU, for the login process and arcad's threads.
PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" FRESH_MARKS=1 \
    perf sched record -k CLOCK_MONOTONIC -a -o "$work/sched.data" -- \
    "$work/fresh-c" txn arcad "$user" 1 >/dev/null 2>"$work/marks"
check_arcad 1
perf sched timehist -i "$work/sched.data" -w 2>"$work/perf.err" >"$work/sched.txt" ||
    { cat "$work/perf.err" >&2; echo "timeline: perf sched timehist failed" >&2; exit 1; }
python3 bench/pam/timeline.py "$work/untraced" "$work/fresh.st" "$work/arcad.st" "$arcad_pid" \
    "$work/marks" "$work/sched.txt"
[ -z "${KEEP:-}" ] || cp -a "$work" "$KEEP"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; build $build"
