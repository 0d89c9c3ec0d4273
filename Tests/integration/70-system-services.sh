#!/usr/bin/env bash
# System services with the release binaries, as README "System services" shows
# them: root stores a secret in the system vault and grants it; the service user,
# in a fresh session keyring (KeyringMode=private), reads it with plain keyctl
# and with `arca get --system`; another user cannot; revoke removes it at once;
# the credentials socket answers root's systemd-style peer address only.
set -euo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
work=$(mktemp -d)
chmod 755 "$work"
service=arcasvc$RANDOM
other=arcaoth$RANDOM
pass=0 fail=0
arcad_pid=""
cleanup() {
    ARCA_SOCKET=$work/arcad.sock "$build/arca" revoke -s postgresql -a postgres >/dev/null 2>&1 || true
    [ -n "$arcad_pid" ] && kill -KILL "$arcad_pid" 2>/dev/null || true
    userdel -f "$service" 2>/dev/null || true
    userdel -f "$other" 2>/dev/null || true
    rm -rf "$work"
}
trap 'cleanup; drop_parked' EXIT
source "$(dirname "$0")/lib-arcad.bash"

useradd -M -N -s /usr/sbin/nologin "$service"
useradd -M -N -s /usr/sbin/nologin "$other"
start_arcad
for _ in $(seq 250); do [ -S "$work/credentials.sock" ] && break; sleep 0.02; done
export ARCA_SOCKET=$work/arcad.sock
as() { # user, shell snippet: run in a fresh session keyring, as systemd's KeyringMode=private gives
    ARCA=$build/arca setpriv --reuid="$(id -u "$1")" --regid="$(id -g "$1")" --clear-groups \
        keyctl session - bash -c "$2" 2>&1 | grep -v '^Joined session keyring'
}
keyctl_read='keyctl get_persistent @s >/dev/null; keyctl pipe $(keyctl search @s user arca:genp:postgresql:postgres 2>/dev/null) 2>/dev/null || echo none'

check "system.db created at start" "600" stat -c %a "$work/state/system.db"
check "root adds and grants" "" sh -c "printf 'pg-pass' | $build/arca add --system -s postgresql -a postgres \
    --allow-user $service --allow-unit postgresql.service:db-password"
check "arca grants" "service: postgresql
account: postgres
user: $service ($(id -u "$service"))
unit: postgresql.service (credential db-password)" "$build/arca" grants
check "the service reads with plain keyctl" "pg-pass" as "$service" "$keyctl_read"
check "the service reads with arca get --system" "pg-pass" as "$service" '$ARCA get --system -s postgresql -a postgres'
check "another user reads nothing from the kernel" "none" as "$other" "$keyctl_read"
check "another user gets 44 from arcad" "arca: get: no such item
44" as "$other" '$ARCA get --system -s postgresql -a postgres; echo $?'
check "a user cannot add to the system vault" "arca: add: not allowed" \
    as "$other" 'printf x | $ARCA add --system -s x -a y'
check "revoke" "" "$build/arca" revoke -s postgresql -a postgres --allow-user "$service"
check "after revoke the key is gone from the kernel" "none" as "$service" "$keyctl_read"
check "after revoke arcad refuses too" "44" as "$service" '$ARCA get --system -s postgresql -a postgres 2>/dev/null; echo $?'
# systemd's side of LoadCredential=: a client bound to \0<random>/unit/<unit>/<id>.
credential='import socket,sys
s=socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0f00d/unit/"+sys.argv[2]+"/"+sys.argv[3]); s.connect(sys.argv[1])
print(s.makefile("rb").read().decode(), end="")'
check "LoadCredential= as root: the secret" "pg-pass" /usr/bin/python3 -c "$credential" "$work/credentials.sock" postgresql.service db-password
check "LoadCredential= for another unit: nothing" "" /usr/bin/python3 -c "$credential" "$work/credentials.sock" other.service db-password
check "LoadCredential= from a non-root peer: nothing" "" \
    setpriv --reuid="$(id -u "$other")" --regid="$(id -g "$other")" --clear-groups \
    /usr/bin/python3 -c "$credential" "$work/credentials.sock" postgresql.service db-password
check "the refusal is logged" "1" sh -c "grep -c 'credentials: refused pid .* uid $(id -u "$other")' $work/arcad.log"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
