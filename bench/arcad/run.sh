#!/usr/bin/env bash
# bench/arcad: arcad over its socket (bench-arcad: throughput, latency, RSS with
# 10 users × 1,000 items), side by side with the peer's memory measured here:
# gnome-keyring-daemon (secrets component) on a private D-Bus session bus, its
# login keyring created and unlocked non-interactively (--unlock, password on
# stdin), 1,000 items stored through `secret-tool store` (secrets on stdin),
# then its VmRSS / VmHWM. Root; a few minutes at most; every process and temp
# directory it starts is gone on exit.
#
#   bench/arcad/run.sh        (make bench runs it; ITEMS=1000 items per user)
set -euo pipefail
cd "$(dirname "$0")/../.."
ITEMS=${ITEMS:-1000}
[ "$(id -u)" -eq 0 ] || { echo "bench/arcad: must run as root" >&2; exit 1; }
for tool in gnome-keyring-daemon secret-tool dbus-run-session dbus-send; do
    command -v "$tool" >/dev/null || {
        echo "bench/arcad: $tool missing (make deps installs gnome-keyring libsecret-tools dbus)" >&2; exit 1; }
done
swift build -c release --product arcad >/dev/null
swift build -c release --product bench-arcad >/dev/null

work=$(mktemp -d /tmp/arca-bench-arcad.XXXXXX)
bus_pid=""
cleanup() {
    if [ -n "$bus_pid" ]; then kill "$bus_pid" 2>/dev/null || true; wait "$bus_pid" 2>/dev/null || true; fi
    # The peer records its daemon's pid; make sure it did not outlive the bus.
    if [ -s "$work/gk.pid" ]; then kill -KILL "$(cat "$work/gk.pid")" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# The peer, inside its own session bus; prints "rss_empty rss hwm seconds" to $work/peer.
cat >"$work/peer.sh" <<'EOF'
set -euo pipefail
export HOME=$WORK/home XDG_RUNTIME_DIR=$WORK/run XDG_DATA_HOME=$WORK/home/.local/share
mkdir -p -m 0700 "$HOME" "$XDG_RUNTIME_DIR"
printf 'bench-pw' | gnome-keyring-daemon --unlock --components=secrets >/dev/null
gk=""
for _ in $(seq 100); do # the daemon forks before it claims its bus name
    gk=$(dbus-send --session --print-reply --dest=org.freedesktop.DBus / \
        org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null |
        awk '/uint32/ {print $2}') && [ -n "$gk" ] && break
    sleep 0.05
done
[ -n "$gk" ] || { echo "bench/arcad: gnome-keyring-daemon did not claim org.freedesktop.secrets" >&2; exit 1; }
echo "$gk" >"$WORK/gk.pid"
kb() { awk -v f="$1:" '$1 == f {print $2}' "/proc/$gk/status"; }
rss_empty=$(kb VmRSS)
t0=$(date +%s%N)
for i in $(seq "$ITEMS"); do
    # 64-byte secrets, as bench-arcad stores.
    printf 'secret-%06d-%050d' "$i" 0 | head -c 64 |
        secret-tool store --label="bench acct$i" service bench account "acct$i"
done
seconds=$((($(date +%s%N) - t0) / 1000000))
[ "$(secret-tool lookup service bench account "acct$ITEMS" | head -c 13)" = "$(printf 'secret-%06d' "$ITEMS")" ] ||
    { echo "bench/arcad: gnome-keyring did not return item $ITEMS" >&2; exit 1; }
echo "$rss_empty $(kb VmRSS) $(kb VmHWM) $seconds" >"$WORK/peer"
kill "$gk"
for _ in $(seq 50); do [ -e "/proc/$gk" ] || break; sleep 0.1; done
EOF
WORK=$work ITEMS=$ITEMS timeout 300 dbus-run-session -- bash "$work/peer.sh" 2>"$work/peer.err" &
bus_pid=$!
wait "$bus_pid" || { cat "$work/peer.err" >&2; echo "bench/arcad: peer measurement failed" >&2; exit 1; }
bus_pid=""
read -r rss_empty rss hwm ms <"$work/peer"
mib() { awk -v kb="$1" 'BEGIN {printf "%.1f MiB", kb / 1024}'; }
export BENCH_ARCAD_PEER_RSS="$(mib "$rss") ($(mib "$rss_empty") with the keyring empty)"
export BENCH_ARCAD_PEER_HWM="$(mib "$hwm")"
export BENCH_ARCAD_PEER_LABEL="1 user × $ITEMS items"
.build/release/bench-arcad "$ITEMS"
echo "peer: gnome-keyring-daemon $(dpkg-query -W -f '${Version}' gnome-keyring 2>/dev/null), --components=secrets," \
    "private D-Bus session bus; $ITEMS × secret-tool store (64-byte secrets) took $((ms / 1000)).$(printf %03d $((ms % 1000))) s."
echo "RSS from /proc/PID/status (VmRSS, VmHWM), 1 MiB = 1024 kB."
