#!/usr/bin/env bash
# Fleets (ARCHITECTURE §13) with the release binaries: a 3-member etcd cluster on
# 127.0.0.1 with mTLS (CA and certificates made here with openssl), three hosts, each
# an arcad with its own state dir and socket plus an arca-fleetd agent, and one admin.
# Each host sees the service user name fleet<tag> as its own throwaway uid (the agent
# runs in a mount namespace with its own copy of /etc), so every host places the secret
# in a different persistent keyring and each host is checked on its own.
# Covers put/rotate/revoke, a host outside the group, forged/altered/replayed values
# written with etcd root credentials (rejected, reported, nothing rolled back), kill -9 of
# a member during a rotation and a revoke, compaction while a host is stopped (re-list
# path), and 2 of 3 members down (admin writes fail, hosts keep serving).
set -euo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
work=$(mktemp -d)
chmod 755 "$work"
tag=$RANDOM
name=fleet$tag
pass=0 fail=0
declare -a etcd_pid=() agent_pid=() host_arcad_pid=() svc=()
source "$(dirname "$0")/lib-arcad.bash"
source "$(dirname "$0")/lib-fleet.bash"

trap fleet_cleanup EXIT

fleet() { "$build/arca" fleet --conf "$work/admin/fleet.conf" "$@"; }
hostctl() { local h=$1; shift; "$build/arca-fleetd" --conf "$work/h$h/fleet.conf" "$@"; }

# vaulted H SERVICE: what host H's arcad serves root from its system vault.
vaulted() {
    ARCA_SOCKET=$work/h$1/arcad.sock "$build/arca" get --system --no-kernel -s "$2" -a db 2>/dev/null || echo none
}

# eventually NAME EXPECTED COMMAND...: polls COMMAND for up to $wait_tenths tenths of a
# second (20 s), then checks it; a failure prints the tail of every agent's log.
wait_tenths=200
eventually() {
    local name=$1 expected=$2 failed=$fail; shift 2
    for _ in $(seq "$wait_tenths"); do [ "$("$@" 2>&1)" = "$expected" ] && break; sleep 0.1; done
    check "$name" "$expected" "$@"
    if [ "$fail" != "$failed" ]; then
        for log in "$work"/h*/agent.log; do echo "---- $log"; tail -n 12 "$log" | sed 's/^/    /'; done
    fi
}
log_has() { grep -c -- "$2" "$work/h$1/agent.log" | sed 's/^[1-9][0-9]*$/yes/;s/^0$/no/'; }

# Service secrets live in persistent keyrings: a test that lowered their expiry and was cut
# short (or ran twice at once) leaves every service ring expiring within seconds.
check "persistent keyrings outlive the test (persistent_keyring_expiry >= 600 s)" "yes" \
    sh -c 'e=$(cat /proc/sys/kernel/keys/persistent_keyring_expiry); [ "$e" -ge 600 ] && echo yes || echo "no: $e s"'

# --- etcd, certificates, hosts ---
fleet_ports
fleet_certs root admin h1 h2 h3
for i in 0 1 2; do etcd_start "$i"; done
etcd_wait_healthy
fleet_hosts

# --- init, join, approve ---
admin_key=$(fleet init | sed -n 's/^admin key: //p')
check "init prints a 32-byte admin key" "44" sh -c "printf %s '$admin_key' | wc -c"
check "a second init is refused (exit 8)" "8" sh -c "'$build/arca' fleet --conf '$work/admin/fleet.conf' init >/dev/null 2>&1; echo \$?"
for h in 1 2 3; do hostctl "$h" join --host "h$h" --admin-key "$admin_key" >/dev/null; done
check "joined hosts wait for approval" "h1 pending 
h2 pending 
h3 pending " fleet hosts
check "join pins the admin key in fleet.conf" "admin_key = $admin_key" grep '^admin_key' "$work/h1/fleet.conf"
check "the host key is in the system vault, not in fleet.conf" "no" sh -c "grep -c 'PRIVATE\|seed' '$work/h1/fleet.conf' >/dev/null && echo yes || echo no"
fleet approve h1 --group web
fleet approve h2 --group web
fleet approve h3 --group db
check "approved" "h1 approved web
h2 approved web
h3 approved db" fleet hosts
for h in 1 2 3; do start_agent "$h"; done

# --- put, rotate, a host outside the group ---
printf 'app-v1' | fleet put --group web -s "${name}app" -a db --allow-user "$name" --allow-unit app.service:dbpass \
    >/dev/null
eventually "put: host 1's service user reads it from its persistent keyring" "app-v1" kernel 1 "${name}app"
eventually "put: host 2's service user reads it from its persistent keyring" "app-v1" kernel 2 "${name}app"
check "put: host 3 (group db) has nothing in the kernel" "none" kernel 3 "${name}app"
check "put: host 3's arcad has nothing" "none" vaulted 3 "${name}app"
check "put: the unit grant is there" "1" sh -c "ARCA_SOCKET=$work/h2/arcad.sock '$build/arca' grants | grep -c 'unit: app.service (credential dbpass)'"
bodies='import json,sys,base64
for line in sys.stdin:
    if line.startswith("{"): print(base64.b64decode(json.loads(line)["body"]).decode())'
plaintext_hits() { ctl root get --prefix /arca/ --print-value-only | python3 -c "$bodies" | grep -c app-v1 || true; }
check "etcd holds signed ciphertext only: no plaintext in any record" "0" plaintext_hits
old_manifest=$(ctl root get /arca/v1/hosts/h1/manifest --print-value-only)
printf 'app-v2' | fleet rotate -s "${name}app" -a db >/dev/null
eventually "rotate: host 1 serves v2" "app-v2" kernel 1 "${name}app"
eventually "rotate: host 2 serves v2" "app-v2" kernel 2 "${name}app"
eventually "status: every host acked the head's seq" "h1 1
h2 1
h3 1" sh -c "'$build/arca' fleet --conf '$work/admin/fleet.conf' status | awk '{split(\$3, s, \"/\"); print \$1, s[1] == s[2]}'"

# --- attacks with etcd's root credentials ---
openssl genpkey -algorithm ed25519 -out "$work/attacker.pem" 2>/dev/null
# envelope KIND BODY-JSON: a record signed with the attacker's own Ed25519 key.
forge() {
    printf 'arca-fleet-v1\0%s\0%s' "$1" "$2" >"$work/msg"
    openssl pkeyutl -sign -rawin -inkey "$work/attacker.pem" -in "$work/msg" -out "$work/sig"
    printf '{"body":"%s","kind":"%s","signature":"%s"}' "$(printf %s "$2" | base64 -w0)" "$1" "$(base64 -w0 <"$work/sig")"
}
# tamper VALUE SED: the envelope with its body edited, signature kept.
tamper() {
    local body
    body=$(printf %s "$1" | python3 -c 'import json,sys,base64; print(base64.b64decode(json.load(sys.stdin)["body"]).decode())' | sed "$2")
    printf %s "$1" | python3 -c 'import json,sys,base64; e=json.load(sys.stdin); e["body"]=base64.b64encode(sys.argv[1].encode()).decode(); print(json.dumps(e))' "$body"
}
current=$(ctl root get /arca/v1/hosts/h1/manifest --print-value-only)
forge manifest '{"entries":[],"host":"h1","notAfter":9999999999,"seq":999}' | ctl root put /arca/v1/hosts/h1/manifest >/dev/null
eventually "forged manifest (another key): rejected and logged" "yes" log_has 1 "rejected: manifest: bad signature"
check "forged manifest: host 1 still serves v2" "app-v2" kernel 1 "${name}app"
tamper "$current" 's/"entries":\[[^]]*\]/"entries":[]/; s/"seq":[0-9]*/"seq":998/' | ctl root put /arca/v1/hosts/h1/manifest >/dev/null
sleep 1
check "altered manifest (body edited, signature kept): host 1 still serves v2" "app-v2" kernel 1 "${name}app"
printf %s "$old_manifest" | ctl root put /arca/v1/hosts/h1/manifest >/dev/null
eventually "replayed older manifest: refused as a replay" "yes" log_has 1 "older than the applied .* (replay)"
check "replayed manifest: host 1 is not rolled back to v1" "app-v2" kernel 1 "${name}app"
eventually "the refusal is reported in host 1's ack" "1" sh -c \
    "'$build/arca' fleet --conf '$work/admin/fleet.conf' status | grep '^h1 ' | grep -c 'replay'"
# A version host 2 has not seen yet, altered or replaced before host 2 reads it.
stop_agent 2
printf 'app-v3' | fleet rotate -s "${name}app" -a db >/dev/null
id=$(ctl root get --prefix /arca/v1/items/ --keys-only | sed -n 's|^/arca/v1/items/\([0-9a-f]*\)/3$|\1|p')
v2=$(ctl root get "/arca/v1/items/$id/2" --print-value-only)
v3=$(ctl root get "/arca/v1/items/$id/3" --print-value-only)
tamper "$v3" "s/\"users\":\[[^]]*\]/\"users\":[\"root\",\"$name\"]/" | ctl root put "/arca/v1/items/$id/3" >/dev/null
start_agent 2
eventually "altered item (grants widened): host 2 rejects it" "yes" log_has 2 "item $id v3: bad signature"
check "altered item: host 2 keeps serving v2" "app-v2" kernel 2 "${name}app"
printf %s "$v2" | ctl root put "/arca/v1/items/$id/3" >/dev/null
eventually "replayed item (v2 under v3's key): host 2 rejects it" "yes" log_has 2 "the record is item $id v2"
check "admin status names the key not signed as what it claims" "1" sh -c \
    "'$build/arca' fleet --conf '$work/admin/fleet.conf' status | grep -c 'rejected (not signed by the admin): /arca/v1/items/$id/3'"
ctl root put /arca/v1/hosts/h2/manifest <<<'garbage' >/dev/null
eventually "garbage manifest: rejected" "yes" log_has 2 "manifest: not a signed record"
printf 'app-v4' | fleet rotate -s "${name}app" -a db >/dev/null
eventually "the admin's next rotation heals host 2" "app-v4" kernel 2 "${name}app"
eventually "and host 1" "app-v4" kernel 1 "${name}app"

# --- revoke ---
fleet revoke -s "${name}app" -a db
eventually "revoke: gone from host 1's kernel" "none" kernel 1 "${name}app"
eventually "revoke: gone from host 2's kernel" "none" kernel 2 "${name}app"
check "revoke: gone from host 2's arcad" "none" vaulted 2 "${name}app"

# --- kill -9 a member during a rotation and a revoke ---
printf 'a-1' | fleet put --group web -s "${name}a" -a db --allow-user "$name" >/dev/null
printf 'b-1' | fleet put --group web -s "${name}b" -a db --allow-user "$name" >/dev/null
eventually "before fail-over: host 2 serves b" "b-1" kernel 2 "${name}b"
kill -KILL "${etcd_pid[0]}"
wait "${etcd_pid[0]}" 2>/dev/null || true
printf 'a-2' | fleet rotate -s "${name}a" -a db >/dev/null
fleet revoke -s "${name}b" -a db
# The agents' watches and gets fail over to members 1 and 2 through etcdctl's balancer; a
# watch stuck on the dead member is caught by the idle resync (resync_seconds = 2). Once in
# CI host 1 had not converged after 20 s (cause unknown: no log was kept); a longer wait
# here, and the agents' logs printed if it fails.
wait_tenths=600
for h in 1 2; do
    eventually "member 0 killed: host $h converges on the rotation" "a-2" kernel "$h" "${name}a"
    eventually "member 0 killed: host $h converges on the revoke" "none" kernel "$h" "${name}b"
done
wait_tenths=200
etcd_start 0
etcd_wait_healthy

# --- compaction while host 2 is stopped ---
printf 'c-1' | fleet put --group web -s "${name}c" -a db --allow-user "$name" >/dev/null
eventually "host 2 serves c" "c-1" kernel 2 "${name}c"
stop_agent 2
fleet revoke -s "${name}c" -a db
printf 'a-3' | fleet rotate -s "${name}a" -a db >/dev/null
revision=$(ctl root get /arca/v1/head -w json | sed 's/.*"revision":\([0-9]*\).*/\1/')
ctl root compact "$revision" >/dev/null
start_agent 2
eventually "compaction: the restarted agent re-lists" "yes" log_has 2 "compacted.*: re-listing"
eventually "compaction: what left the manifest is revoked" "none" kernel 2 "${name}c"
eventually "compaction: the rotation is applied" "a-3" kernel 2 "${name}a"

# --- 2 of 3 members down ---
for i in 1 2; do kill -KILL "${etcd_pid[$i]}"; wait "${etcd_pid[$i]}" 2>/dev/null || true; done
check "no quorum: an admin write fails with exit 3" "3" sh -c \
    "printf a-4 | '$build/arca' fleet --conf '$work/admin/fleet.conf' rotate -s ${name}a -a db >/dev/null 2>&1; echo \$?"
check "no quorum: host 1 keeps serving" "a-3" kernel 1 "${name}a"
eventually "no quorum: status on host 1 says since when it is out of touch" "1" sh -c \
    "'$build/arca-fleetd' --conf '$work/h1/fleet.conf' status --local | grep -c '^out of touch with etcd since 20'"
check "no quorum: host 2 keeps serving" "a-3" kernel 2 "${name}a"
for i in 1 2; do etcd_start "$i"; done
etcd_wait_healthy
eventually "quorum back: host 1 is in touch again" "0" sh -c \
    "'$build/arca-fleetd' --conf '$work/h1/fleet.conf' status --local | grep -c '^out of touch' || true"

# --- remove a host ---
fleet remove h2
eventually "remove: host 2 revokes everything" "none" kernel 2 "${name}a"
check "remove: host 1 keeps serving" "a-3" kernel 1 "${name}a"
check "remove: only hosts 1 and 3 remain" "h1 approved web
h3 approved db" fleet hosts
fleet revoke -s "${name}a" -a db
eventually "last revoke: gone from host 1" "none" kernel 1 "${name}a"

if [ "$fail" -ne 0 ]; then
    for h in 1 2 3; do echo "--- host $h agent log (end)"; tail -n 25 "$work/h$h/agent.log"; done
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
