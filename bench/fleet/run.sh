#!/usr/bin/env bash
# bench/fleet (issue 18), one run, as root:
#  1. put → readable: `arca fleet rotate` until the new secret is in the granted service
#     user's persistent keyring on all 3 hosts (3-member etcd with mTLS on loopback, an
#     arcad and an arca-fleetd per host), p50 over ROUNDS; beside it the peer, plain etcd:
#     `etcdctl put` of a plaintext value until an `etcdctl watch` prints it.
#  2. fan-out: HOSTS simulated host watchers (bench-fleet: watch + verify + decrypt, no
#     arcad) against the same cluster: time for all to apply one put; etcd CPU and RSS.
#
#   bench/fleet/run.sh        (ROUNDS=10 HOSTS=200)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-10}
HOSTS=${HOSTS:-200}
[ "$(id -u)" -eq 0 ] || { echo "bench/fleet: must run as root" >&2; exit 1; }
for p in arcad arca arca-fleetd bench-fleet; do swift build -c release --product "$p" >/dev/null; done
build=$PWD/.build/release
work=$(mktemp -d /tmp/arca-bench-fleet.XXXXXX)
chmod 755 "$work"
name=fleetb$RANDOM
declare -a etcd_pid=() agent_pid=() host_arcad_pid=() svc=()
source Tests/integration/lib-arcad.bash
source Tests/integration/lib-fleet.bash
trap fleet_cleanup EXIT
ms() { echo $(( $(date +%s%N) / 1000000 )); }
p50() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# One transaction writes every manifest of a change: let it hold HOSTS of them. etcd's
# default heartbeat/election timing (the tests use 50/500 ms for quick fail-over).
ETCD_EXTRA="--max-txn-ops $((HOSTS * 3 + 100)) --heartbeat-interval 100 --election-timeout 1000"
fleet_ports
fleet_certs root admin h1 h2 h3
for i in 0 1 2; do etcd_start "$i"; done
etcd_wait_healthy
fleet_hosts
fleet() { "$build/arca" fleet --conf "$work/admin/fleet.conf" "$@"; }
key=$(fleet init | sed -n 's/^admin key: //p')
for h in 1 2 3; do "$build/arca-fleetd" --conf "$work/h$h/fleet.conf" join --host "h$h" --admin-key "$key" >/dev/null; done
fleet approve h1 h2 h3 --group web
for h in 1 2 3; do start_agent "$h"; done
printf 'v0' | fleet put --group web -s "${name}app" -a db --allow-user "$name" >/dev/null
for _ in $(seq 200); do [ "$(kernel 3 "${name}app")" = v0 ] && break; sleep 0.05; done

echo "== put → readable in the granted service's keyring on all 3 hosts ($ROUNDS rounds)"
for round in $(seq "$ROUNDS"); do
    start=$(ms)
    printf 'v%s' "$round" | fleet rotate -s "${name}app" -a db >/dev/null
    for h in 1 2 3; do
        until [ "$(kernel "$h" "${name}app")" = "v$round" ]; do sleep 0.01; done
    done
    echo $(( $(ms) - start ))
done >"$work/arca.ms"
ctl root watch /peer/k >"$work/peer.watch" &
watch_pid=$!
sleep 1
for round in $(seq "$ROUNDS"); do
    start=$(ms)
    ctl root put /peer/k "plain-$round" >/dev/null
    until grep -qx "plain-$round" "$work/peer.watch"; do sleep 0.005; done
    echo $(( $(ms) - start ))
done >"$work/peer.ms"
pkill -P "$watch_pid"  # the etcdctl the function started
kill "$watch_pid" 2>/dev/null || true
echo "arca fleet rotate → all 3 keyrings: p50 $(p50 <"$work/arca.ms") ms (each: $(xargs <"$work/arca.ms"))"
echo "peer, plain etcdctl put → etcdctl watch prints it: p50 $(p50 <"$work/peer.ms") ms (each: $(xargs <"$work/peer.ms"))"

echo "== fan-out: $HOSTS simulated host watchers"
for h in 1 2 3; do stop_agent "$h"; done
mkdir -p "$work/fan"
fleet_conf "$work/fan" admin
printf 'prefix = /bench/v1/\n' >>"$work/fan/fleet.conf"
start_arcad "$work/fan"
host_arcad_pid[4]=$arcad_pid
# In its own process group, so that its etcdctl watch children go with it even if it fails.
setsid "$build/bench-fleet" --conf "$work/fan/fleet.conf" --hosts "$HOSTS" \
    --etcd-pids "${etcd_pid[0]},${etcd_pid[1]},${etcd_pid[2]}" &
bench_pid=$!
status=0
wait "$bench_pid" || status=$?
kill -KILL -- "-$bench_pid" 2>/dev/null || true
exit "$status"
