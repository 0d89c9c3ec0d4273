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
# shellcheck source=lib.bash
. bench/secretd/lib.bash # as, waitprovider, start_bus, start_arcad, start_secretd
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
bus() { start_bus "$1" "$work/$2.bus"; } # USER NAME: a private bus for column NAME, its address in $work/NAME.bus
addr() { head -1 "$work/$1.bus"; }
# arca NAME BUILD USER: arcad (state in $work/NAME), a vault, arca-secretd on bus NAME, ITEMS items.
# Sets arcad_pid and sd_pid.
arca() {
    local name=$1 b=$2 u=$3
    start_arcad "$b" "$work/$name" "$u" --config /dev/null
    bus "$u" "$name"
    start_secretd "$b" "$work/$name" "$u" "$(addr "$name")"
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
waitprovider "$ua" "$(addr floor)"
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
# In the foreground, so that its pid is known (and stopped on exit) before anything can fail.
printf bench-pw | BUS=$(addr gk) EXEC=1 as "$ua" gnome-keyring-daemon --foreground --unlock --components=secrets \
    >/dev/null 2>&1 &
gk=$!
pids+=("$gk")
waitprovider "$ua" "$(addr gk)"
BUS=$(addr gk) as "$ua" /usr/bin/python3 "$work/bench.py" fill 0 "$ITEMS" >/dev/null
columns+=("$(col gnome-keyring gk "$ua" "$gk")")
fi

echo "== bench/secretd/lookup-paired ($(nproc) cores, $ITEMS items per provider; load average at the start $load0)"
echo "   arca: $build${build_b:+; arca.B: $build_b}"
LOOKUP_ID=$((ITEMS / 2)) PAIRS=$pairs /usr/bin/python3 bench/secretd/lookup_paired.py "$ROUNDS" "${columns[@]}"
echo "   load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
