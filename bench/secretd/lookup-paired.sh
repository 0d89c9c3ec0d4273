#!/usr/bin/env bash
# bench/secretd/lookup-paired.sh [BUILD_B]: issue 15's `secret-tool lookup` figure by paired
# rounds, steady on a loaded machine. Five buses (dbus-daemon, bench/secretd/bus.conf), one
# provider each, all running at once:
#   alone          no provider: secret-tool's own floor (ServiceUnknown at once)
#   floor          floor-provider.c with DH sessions: the least any provider costs
#   arca           arca-secretd of ARCA_BUILD (default .build/release) over its own arcad
#   arca.B         with BUILD_B: the same over another build's arcad (an A/B of two builds)
#   gnome-keyring  gnome-keyring-daemon --components=secrets, login keyring unlocked
# Each provider holds ITEMS items (default 1,000) named as bench.py names them; every round
# (ROUNDS, default 60) runs `secret-tool lookup bench 1 id ITEMS/2` once per column in a shuffled
# order, as a throwaway user per arcad (two arcads must not share a user's keyring), and
# lookup_paired.py prints the median of the per-round differences to `alone` with their
# p10..p90, the ratio issue 15 names (Arca above secret-tool's floor / gnome-keyring above it;
# target <= 0.2x), and the differences arca - floor (and arca - arca.B): what Arca adds over a
# provider answering from memory. Root; everything it starts is gone on exit.
#   ARCA_BUILD=$PWD/.build/release bash bench/secretd/lookup-paired.sh [/work/other/.build/release]   (GK=0: no gnome-keyring)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-60}
ITEMS=${ITEMS:-1000}
[ "$(id -u)" -eq 0 ] || { echo "lookup-paired: must run as root" >&2; exit 1; }
for tool in gnome-keyring-daemon secret-tool dbus-daemon; do
    command -v "$tool" >/dev/null || { echo "lookup-paired: $tool missing (make deps)" >&2; exit 1; }
done
build=$(cd "${ARCA_BUILD:-.build/release}" && pwd)
build_b=${1:+$(cd "$1" && pwd)}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
work=$(mktemp -d /tmp/arca-lookup-paired.XXXXXX)
chmod 755 "$work"
pids=()    # processes to stop (providers, buses, arcads)
users=()
# shellcheck source=../../Tests/integration/lib-arcad.bash
. Tests/integration/lib-arcad.bash # drop_parked
cleanup() {
    local p u
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    for u in "${users[@]}"; do
        "$build/arca-keyring-probe" purge "$(id -u "$u")" >/dev/null 2>&1 || true
        userdel -f "$u" 2>/dev/null || true
    done
    drop_parked "$work/A"
    drop_parked "$work/B"
    rm -rf "$work"
}
trap cleanup EXIT
cp bench/secretd/bus.conf bench/secretd/bench.py "$work/"
cc -O2 -o "$work/floor-provider" bench/secretd/floor-provider.c -lsystemd -lgcrypt

# newuser NAME: a throwaway user lkpNAME<pid> in $user, whose home is $work/NAME<pid> (col() finds it so)
newuser() {
    user=lkp$1$$
    useradd -M -N -s /usr/sbin/nologin -d "$work/$1$$" "$user"
    users+=("$user")
    mkdir -p "$work/$1$$"
    chown "$(id -u "$user"):$(id -g "$user")" "$work/$1$$"
}
as() { # USER CMD...: as that user, clean environment; EXEC=1: in place of the shell (for `&`: $! is then the command)
    local u=$1
    shift
    ${EXEC:+exec} setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups env -i PATH=/usr/bin:/bin LANG=C.UTF-8 \
        HOME="$(getent passwd "$u" | cut -d: -f6)" XDG_RUNTIME_DIR="$(getent passwd "$u" | cut -d: -f6)" \
        ${BUS:+DBUS_SESSION_BUS_ADDRESS=$BUS} ${SOCK:+ARCA_SOCKET=$SOCK} "$@"
}
# bus USER NAME: a private bus for column NAME, its address in $work/NAME.bus
bus() {
    EXEC=1 as "$1" dbus-daemon --config-file="$work/bus.conf" --nofork --print-address=1 >"$work/$2.bus" &
    pids+=($!)
    for _ in $(seq 250); do [ -s "$work/$2.bus" ] && break; sleep 0.02; done
    [ -s "$work/$2.bus" ] || { echo "lookup-paired: the bus for $2 did not start" >&2; exit 1; }
}
addr() { head -1 "$work/$1.bus"; }
waitname() { # USER NAME
    local _i
    for _i in $(seq 200); do
        BUS=$(addr "$2") as "$1" gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
            -m org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets 2>/dev/null | grep -q true && return
        sleep 0.05
    done
    echo "lookup-paired: no provider came up for $2" >&2
    exit 1
}
# arca NAME BUILD USER: arcad (state in $work/NAME), a vault, arca-secretd on bus NAME, ITEMS items.
# Sets arcad_pid and sd_pid.
arca() {
    local name=$1 b=$2 u=$3
    mkdir -p "$work/$name"
    "$b/arcad" --foreground --config /dev/null --state-dir "$work/$name/state" --socket "$work/$name/arcad.sock" \
        2>"$work/$name/arcad.log" &
    arcad_pid=$!
    pids+=($!)
    for _ in $(seq 250); do [ -S "$work/$name/arcad.sock" ] && break; sleep 0.02; done
    printf 'bench-pw\n' | SOCK=$work/$name/arcad.sock as "$u" "$b/arca" init --no-recovery-key >/dev/null
    bus "$u" "$name"
    BUS=$(addr "$name") SOCK=$work/$name/arcad.sock EXEC=1 as "$u" "$b/arca-secretd" 2>"$work/$name/secretd.log" &
    sd_pid=$!
    pids+=($!)
    waitname "$u" "$name"
    BUS=$(addr "$name") as "$u" /usr/bin/python3 "$work/bench.py" fill 0 "$ITEMS" >/dev/null
}
col() { # COLUMN BUS USER PIDS → one column argument of lookup_paired.py
    local a
    a=$(addr "$2")
    echo "$1:$(id -u "$3"):$(id -g "$3"):$work/${3#lkp}:${a//:/%3A}:$4"
}

newuser A
ua=$user
bus "$ua" alone
bus "$ua" floor
BUS=$(addr floor) EXEC=1 as "$ua" "$work/floor-provider" "$ITEMS" dh &
pids+=($!)
fp=$!
waitname "$ua" floor
arca A "$build" "$ua"
arcad_a=$arcad_pid sd_a=$sd_pid
columns=("$(col alone alone "$ua" "")" "$(col floor floor "$ua" "$fp")" "$(col arca A "$ua" "$sd_a,$arcad_a")")
pairs="arca/floor"
if [ -n "$build_b" ]; then
    newuser B
    ub=$user
    arca B "$build_b" "$ub"
    columns+=("$(col arca.B B "$ub" "$sd_pid,$arcad_pid")")
    pairs="$pairs arca/arca.B arca.B/floor"
fi
if [ "${GK:-1}" != 0 ]; then # GK=0: no gnome-keyring column (an A/B of two builds, quicker)
bus "$ua" gk
printf bench-pw | BUS=$(addr gk) as "$ua" gnome-keyring-daemon --unlock --components=secrets >/dev/null
waitname "$ua" gk
gk=$(BUS=$(addr gk) as "$ua" gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
    -m org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.secrets | grep -o '[0-9][0-9]*' | tail -1)
pids+=("$gk")
BUS=$(addr gk) as "$ua" /usr/bin/python3 "$work/bench.py" fill 0 "$ITEMS" >/dev/null
columns+=("$(col gnome-keyring gk "$ua" "$gk")")
fi

echo "== bench/secretd/lookup-paired ($(nproc) cores, $ITEMS items per provider; load average at the start $load0)"
echo "   arca: $build${build_b:+; arca.B: $build_b}"
LOOKUP_ID=$((ITEMS / 2)) PAIRS=$pairs /usr/bin/python3 bench/secretd/lookup_paired.py "$ROUNDS" "${columns[@]}"
echo "   load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
