#!/usr/bin/env bash
# bench/secretd/lookup-trace.sh: where one `secret-tool lookup` spends its time in arca-secretd and
# arcad. A throwaway user, a real arcad and vault with ITEMS items (default 1,000), arca-secretd on a
# private bus (bench/secretd/bus.conf); after three warm-up lookups, one lookup under dbus-monitor
# while strace -f -ttt -T follows arca-secretd and arcad (-s 0: no secret bytes in the traces), and
# lookup_calls.py prints per call secret-tool made: its time at the bus, the requests arca-secretd
# sent arcad for it, the time it waited for them, and the system calls arcad made. Traced times are
# inflated by strace; the counts are exact. Root; everything it starts is gone on exit.
#   ARCA_BUILD=$PWD/.build/release bash bench/secretd/lookup-trace.sh     (KEEP=DIR keeps the logs)
set -euo pipefail
cd "$(dirname "$0")/../.."
ITEMS=${ITEMS:-1000}
[ "$(id -u)" -eq 0 ] || { echo "lookup-trace: must run as root" >&2; exit 1; }
build=$(cd "${ARCA_BUILD:-.build/release}" && pwd)
work=$(mktemp -d /tmp/arca-lookup-trace.XXXXXX)
chmod 755 "$work"
user=lkptr$$
pids=()
# shellcheck source=../../Tests/integration/lib-arcad.bash
. Tests/integration/lib-arcad.bash # drop_parked
# shellcheck source=lib.bash
. bench/secretd/lib.bash # as, start_bus, start_arcad, start_secretd
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    if id -u "$user" >/dev/null 2>&1; then
        "$build/arca-keyring-probe" purge "$(id -u "$user")" >/dev/null 2>&1 || true
        userdel -f "$user"
    fi
    drop_parked
    if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$work"/*.strace "$work/monitor.txt" "$KEEP/" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
useradd -M -N -s /usr/sbin/nologin -d "$work/home" "$user"
mkdir "$work/home" && chown "$(id -u "$user"):$(id -g "$user")" "$work/home"
cp bench/secretd/bus.conf bench/secretd/bench.py "$work/"
start_arcad "$build" "$work" "$user" --config /dev/null
arcad=$arcad_pid
start_bus "$user" "$work/bus"
BUS=$(head -1 "$work/bus")
SOCK=$work/arcad.sock
export BUS SOCK
start_secretd "$build" "$work" "$user" "$BUS"
sd=$sd_pid
as "$user" /usr/bin/python3 "$work/bench.py" fill 0 "$ITEMS" >/dev/null
key=$((ITEMS / 2))
# A lookup is given 10 s: a hung provider must not hang the run.
for _ in 1 2 3; do as "$user" timeout 10 secret-tool lookup bench 1 id "$key" >/dev/null; done
EXEC=1 as "$user" dbus-monitor --session >"$work/monitor.txt" 2>/dev/null &
pids+=($!)
strace -f -ttt -T -s 0 -o "$work/sd.strace" -p "$sd" 2>/dev/null &
pids+=($!)
strace -f -ttt -T -s 0 -o "$work/arcad.strace" -p "$arcad" 2>/dev/null &
pids+=($!)
sleep 2 # the monitor and both straces attached (strace says "attached" only to its own stderr)
[ "$(as "$user" timeout 10 secret-tool lookup bench 1 id "$key")" = "secret-$key" ] || { echo "lookup-trace: the lookup failed" >&2; exit 1; }
sleep 0.5
echo "== one secret-tool lookup, arca-secretd + arcad of $build ($ITEMS items; load $(cut -d' ' -f1-3 /proc/loadavg))"
/usr/bin/python3 bench/secretd/lookup_calls.py "$work/monitor.txt" "$work/sd.strace" "$work/arcad.strace"
grep -q sendto "$work/sd.strace" || echo "lookup-trace: no request to arcad traced: strace attached too late? run again" >&2
