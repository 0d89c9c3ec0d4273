#!/usr/bin/env bash
# bench/secretd/create-paired.sh A [B]: issue 15's CreateItem figure for one or two builds in
# alternation (A, B, B, A, A, B …), for a change measured on a loaded machine: load from elsewhere
# falls on both alike. A and B are build directories (.build/release of two worktrees). Each run:
# a fresh arcad and vault for a throwaway user, arca-secretd on a private session bus, ITEMS
# CreateItem calls from bench.py (filllog: each call's start and end), and arcad's syscalls
# recorded by `perf record` on tracepoints (fdatasync/fsync with their durations, pwrite64 with
# fd and size; cheap, unlike strace) on the same clock. create-timeline.py then gives, per block
# of 100 adds at 100 / 1,000 / 5,000 / 9,900 items: ms per add, fdatasyncs, WAL frames and
# database pages written back (checkpoints); over the whole fill: the latency of the adds that
# overlapped a checkpoint's writes or syncs beside the others; and CPU per add of arcad and
# arca-secretd. At the end, per build, the median of each figure over its runs and their range.
#   bash bench/secretd/create-paired.sh /work/main/.build/release .build/release   (ROUNDS=3 ITEMS=10000)
# Root; everything it starts (users, daemons, buses, parked rings) is gone on exit. Figures only.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
ITEMS=${ITEMS:-10000}
[ "$(id -u)" -eq 0 ] || { echo "create-paired: must run as root" >&2; exit 1; }
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: bench/secretd/create-paired.sh BUILD_A [BUILD_B]" >&2; exit 2; }
for tool in perf dbus-run-session setpriv; do
    command -v "$tool" >/dev/null || { echo "create-paired: $tool missing" >&2; exit 1; }
done
builds=()
for b in "$@"; do
    b=$(cd "$b" && pwd) || exit 1
    for f in arcad arca arca-secretd arca-keyring-probe; do
        [ -x "$b/$f" ] || { echo "create-paired: $b/$f missing" >&2; exit 1; }
    done
    builds+=("$b")
done
# shellcheck source=../../Tests/integration/lib-arcad.bash
. Tests/integration/lib-arcad.bash # drop_parked
work=$(mktemp -d /tmp/arca-create-paired.XXXXXX)
chmod 755 "$work"
user=benchcp$$
arcad_pid=""
perf_pid=""
run_dir=""
stop_run() {
    set +e
    if [ -n "$perf_pid" ]; then kill -TERM "$perf_pid" 2>/dev/null || true; wait "$perf_pid" 2>/dev/null || true; fi
    perf_pid=""
    if [ -n "$arcad_pid" ]; then
        "${builds[0]}/arca" --socket "$run_dir/arcad.sock" lock --all >/dev/null 2>&1 || true
        kill "$arcad_pid" 2>/dev/null || true
        wait "$arcad_pid" 2>/dev/null || true
        drop_parked "$run_dir"
    fi
    arcad_pid=""
}
cleanup() {
    stop_run
    if id -u "$user" >/dev/null 2>&1; then
        "${builds[0]}/arca-keyring-probe" purge "$(id -u "$user")" >/dev/null 2>&1 || true
        userdel -f "$user"
    fi
    if [ -n "${KEEP:-}" ]; then echo "create-paired: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
useradd -M -N -s /usr/sbin/nologin "$user"
U=$(id -u "$user")
G=$(id -g "$user")
mkdir -p "$work/home" && chown "$U:$G" "$work/home"
cat >"$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
cpums() { local t=0 p f; for p in "$@"; do for f in /proc/$p/task/*/schedstat; do
    t=$((t + $(cut -d' ' -f1 "$f" 2>/dev/null || echo 0))); done; done; echo $((t / 1000000)); }

# one_run NAME BUILD: one fill into a fresh vault; leaves $work/NAME.{log,perf.txt,info}.
one_run() {
    local name=$1 build=$2 c0 c1
    run_dir=$work/$name
    mkdir -p "$run_dir"
    "$build/arcad" --foreground --config /dev/null --state-dir "$run_dir/state" --socket "$run_dir/arcad.sock" \
        2>"$run_dir/arcad.log" &
    arcad_pid=$!
    for _ in $(seq 250); do [ -S "$run_dir/arcad.sock" ] && break; sleep 0.02; done
    printf 'bench-pw\n' | setpriv --reuid="$U" --regid="$G" --clear-groups env -i PATH=/usr/bin:/bin \
        HOME="$work/home" ARCA_SOCKET="$run_dir/arcad.sock" "$build/arca" init --no-recovery-key >/dev/null
    perf record -q -a -k mono -o "$run_dir/perf.data" \
        -e syscalls:sys_enter_fdatasync -e syscalls:sys_exit_fdatasync \
        -e syscalls:sys_enter_fsync -e syscalls:sys_exit_fsync -e syscalls:sys_enter_pwrite64 \
        2>/dev/null &
    perf_pid=$!
    sleep 1
    c0=$(cpums "$arcad_pid")
    setpriv --reuid="$U" --regid="$G" --clear-groups env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$work/home" \
        XDG_RUNTIME_DIR="$work/home" ARCA_SOCKET="$run_dir/arcad.sock" \
        dbus-run-session --config-file="$work/bus.conf" -- bash -c "
        $build/arca-secretd & sd=\$!
        for _ in \$(seq 200); do gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
            -m org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets 2>/dev/null | grep -q true && break; sleep 0.05; done
        s0=\$(cut -d' ' -f1 /proc/\$sd/schedstat)
        /usr/bin/python3 $PWD/bench/secretd/bench.py filllog 0 $ITEMS \$HOME/fill.log >/dev/null
        echo secretd_cpu_ns=\$((\$(cut -d' ' -f1 /proc/\$sd/schedstat) - s0))
        kill \$sd" >"$run_dir/info" 2>/dev/null
    c1=$(cpums "$arcad_pid")
    echo "arcad_cpu_ms=$((c1 - c0))" >>"$run_dir/info"
    echo "arcad_pid=$arcad_pid" >>"$run_dir/info"
    echo "wal_bytes=$(stat -c %s "$run_dir/state/users/$U.db-wal" 2>/dev/null || echo 0)" >>"$run_dir/info"
    echo "db_bytes=$(stat -c %s "$run_dir/state/users/$U.db" 2>/dev/null || echo 0)" >>"$run_dir/info"
    mv "$work/home/fill.log" "$run_dir/fill.log"
    stop_run
    perf script -i "$run_dir/perf.data" -F tid,pid,time,event,trace --ns 2>/dev/null |
        awk -v p="$(grep arcad_pid= "$run_dir/info" | cut -d= -f2)" '$1 ~ "^"p"/"' >"$run_dir/perf.txt"
    rm -f "$run_dir/perf.data"
    rm -rf "$run_dir/state"
}

names=()
for r in $(seq "$ROUNDS"); do
    order=("${!builds[@]}")
    # Alternate which build goes first: A B, B A, A B …
    if [ $((r % 2)) -eq 0 ] && [ ${#builds[@]} -eq 2 ]; then order=(1 0); fi
    for i in "${order[@]}"; do
        name=$(printf '%s%d' "$(echo ABCDEFGH | cut -c$((i + 1)))" "$r")
        echo "create-paired: run $name (${builds[$i]}), load $(cut -d' ' -f1 /proc/loadavg)" >&2
        one_run "$name" "${builds[$i]}"
        names+=("$name")
    done
done
echo "== bench/secretd/create-paired.sh: $ITEMS CreateItem per run, $ROUNDS round(s); load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!builds[@]}"; do echo "   $(echo ABCDEFGH | cut -c$((i + 1))) = ${builds[$i]}"; done
/usr/bin/python3 bench/secretd/create-timeline.py "$work" "${names[@]}"
