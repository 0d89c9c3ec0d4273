#!/usr/bin/env bash
# bench/sync (issue 17), one run, as root:
#  1. add → readable: `arca add --synchronizable` on machine A until the secret is readable from
#     machine B's kernel keyring (keyctl), through both agents and two real Syncthing instances
#     on loopback with scans triggered over REST; p50 over ROUNDS (target ≤ 2 s). Beside it the
#     peer, Syncthing alone: a plaintext file written into A's folder plus the same REST scan,
#     until it is on B's disk.
#  2. idle: the agents' context switches (all threads) over IDLE seconds with nothing changing,
#     beside Syncthing's own over the same window.
#  3. apply: 10,000 incoming records (bench-sync, target ≤ 5 s).
#
#   bench/sync/run.sh        (ROUNDS=20 IDLE=30)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-20}
IDLE=${IDLE:-30}
[ "$(id -u)" -eq 0 ] || { echo "bench/sync: must run as root" >&2; exit 1; }
for p in arcad arca arca-sync bench-sync arca-keyring-probe; do swift build -c release --product "$p" >/dev/null; done
build=$PWD/.build/release
work=$(mktemp -d /tmp/arca-bench-sync.XXXXXX)
chmod 755 "$work"
source Tests/integration/lib-arcad.bash
source Tests/integration/lib-sync.bash
trap "sync_cleanup 2>/dev/null" EXIT
ms() { echo $(( $(date +%s%N) / 1000000 )); }
p50() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
sync_as() { local i=$1; shift; as_user "$i" "$build/arca" sync "$@" --syncthing-home "$work/u$i/home/st" --folder "$work/u$i/sync"; }
kernel() {
    as_user "$1" keyctl session - sh -c "keyctl link @u @s >/dev/null; keyctl pipe %user:arca:genp:$2:$3:sync 2>/dev/null" 2>/dev/null
}
switches() { # total context switches of every thread of every process of session SID
    local pid
    for pid in $(pgrep -s "$1"); do cat /proc/"$pid"/task/*/status 2>/dev/null; done |
        awk '/ctxt_switches/ {s+=$2} END {print s+0}'
}

sync_ports
sync_users "sab$RANDOM"
sync_arcads
for i in 0 1; do
    printf 'pw%s\n' "$i" | setpriv --reuid="$(id -u "${st_user[$i]}")" --regid="$(id -g "${st_user[$i]}")" --clear-groups \
        env ARCA_SOCKET="$work/u$i/arcad.sock" "$build/arca" init --no-recovery-key >/dev/null
    st_configure "$i"
    st_start "$i"
done
as_user 0 "$build/arca" sync init >/dev/null
address_a=$(sync_as 0 status | sed -n 's/^this device: //p')
out=$(sync_as 1 join "$address_a" --address "tcp://127.0.0.1:${st_listen[0]}")
address_b=$(printf '%s\n' "$out" | sed -n 's/^this device: //p')
code=$(printf '%s\n' "$out" | sed -n 's/^verification code: //p' | tr -d ' ')
sync_as 0 approve "$address_b" --address "tcp://127.0.0.1:${st_listen[1]}" --sas "$code" --yes >/dev/null
for i in 0 1; do
    spawn_as_user "$i" "$build/arca-sync" run --syncthing-home "$work/u$i/home/st" --folder "$work/u$i/sync" \
        2>>"$work/u$i/agent.log"
    agent_pid[$i]=$spawned
done
printf 'warm' | as_user 0 "$build/arca" add -s warm -a up --synchronizable >/dev/null
for _ in $(seq 600); do [ "$(kernel 1 warm up)" = warm ] && break; sleep 0.05; done
[ "$(kernel 1 warm up)" = warm ] || { echo "bench/sync: B never received the first item" >&2; tail "$work"/u*/agent.log >&2; exit 1; }

echo "== add on A → readable from B's kernel keyring ($ROUNDS rounds)"
for round in $(seq "$ROUNDS"); do
    start=$(ms)
    printf 'v%s' "$round" | as_user 0 "$build/arca" add -s "bench$round" -a b --synchronizable >/dev/null
    until [ "$(kernel 1 "bench$round" b)" = "v$round" ]; do sleep 0.01; done
    echo $(( $(ms) - start ))
done >"$work/arca.ms"
for round in $(seq "$ROUNDS"); do
    start=$(ms)
    as_user 0 sh -c "mkdir -p $work/u0/sync/peer && printf p$round >$work/u0/sync/peer/.syncthing.f.tmp && mv $work/u0/sync/peer/.syncthing.f.tmp $work/u0/sync/peer/f$round"
    st_api 0 POST "/rest/db/scan?folder=arca-sync&sub=peer" >/dev/null
    until [ -f "$work/u1/sync/peer/f$round" ]; do sleep 0.01; done
    echo $(( $(ms) - start ))
done >"$work/peer.ms"
printf '%-58s p50 %5s ms  (min %s, max %s)\n' "Arca: arca add on A → keyctl read on B" "$(p50 <"$work/arca.ms")" \
    "$(sort -n "$work/arca.ms" | head -1)" "$(sort -n "$work/arca.ms" | tail -1)"
printf '%-58s p50 %5s ms  (min %s, max %s)\n' "Syncthing alone: plaintext file on A → on B's disk" "$(p50 <"$work/peer.ms")" \
    "$(sort -n "$work/peer.ms" | head -1)" "$(sort -n "$work/peer.ms" | tail -1)"

echo "== idle for $IDLE s: context switches (all threads)"
sleep 2
a0=$(switches "${agent_pid[0]}")
s0=$(switches "${st_pid[0]}")
sleep "$IDLE"
a1=$(switches "${agent_pid[0]}")
s1=$(switches "${st_pid[0]}")
printf '%-58s %5s\n' "arca-sync run (A)" "$((a1 - a0))"
printf '%-58s %5s\n' "syncthing serve (A)" "$((s1 - s0))"

echo "== applying 10,000 incoming records"
"$build/bench-sync" 10000
