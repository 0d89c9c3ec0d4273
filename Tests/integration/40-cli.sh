#!/usr/bin/env bash
# The release `arca` against the release arcad, as a throwaway user in a session
# keyring linked to @u (as pam_keyinit sets up a login): what only a shell can
# check — the newline `get` adds on a terminal and not on a pipe, `keyctl print`
# of an id that `arca show` prints, and that arca(1) renders without warnings.
set -euo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
work=$(mktemp -d)
chmod 755 "$work"
user=arcacli$RANDOM
pass=0 fail=0
arcad_pid=""
cleanup() {
    ARCA_SOCKET=$work/arcad.sock "$build/arca" lock --all >/dev/null 2>&1 || true
    [ -n "$arcad_pid" ] && kill -KILL "$arcad_pid" 2>/dev/null || true
    userdel -f "$user" 2>/dev/null || true
    rm -rf "$work"
}
trap 'cleanup; drop_parked' EXIT
source "$(dirname "$0")/lib-arcad.bash"

useradd -M -N -s /usr/sbin/nologin "$user"
start_arcad
as_user() { # runs a shell snippet as the user, in a new session keyring linked to @u
    ARCA_SOCKET=$work/arcad.sock ARCA=$build/arca setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" \
        --clear-groups keyctl session - bash -c "keyctl link @u @s >/dev/null; $1" 2>&1 | grep -v '^Joined session keyring'
}

check "init from a pipe" "" as_user 'printf "pw\n" | $ARCA init --no-recovery-key'
check "add from a pipe" "" as_user 'printf "hunter2\n" | $ARCA add -s mail -a alice'
check "get on a pipe: no newline" "hunter2|" as_user '$ARCA get -s mail -a alice; echo "|"'
check "get on a terminal: a newline" "hunter2" as_user 'script -qec "$ARCA get -s mail -a alice" /dev/null | tr -d "\r"'
# The quick path (ArcaCLI/QuickGet.swift): the secret goes into one mlocked page of the
# pool, found by one search of @u and one read, without a process keyring.
check "get: one page locked for the secret, two keyring calls" "mlock 4096
keyctl SEARCH
keyctl READ" as_user 'strace -qq -e trace=mlock,keyctl $ARCA get -s mail -a alice 2>&1 >/dev/null |
    sed -E "s/^mlock\(0x[0-9a-f]+, ([0-9]+)\) += 0$/mlock \1/; s/^keyctl\(KEYCTL_([A-Z]+),.*/keyctl \1/"'
check "get in a private session keyring (no @u), arcad unreachable: from the kernel" "hunter2|" as_user \
    'ARCA_SOCKET=/nonexistent/arcad.sock keyctl session - $ARCA get -s mail -a alice 2>/dev/null; echo "|"'
# Secrets around the quick path's one page (QuickGet.bufferSize, 4096 bytes): 4095 bytes
# are answered by the quick path alone (its two keyring calls); 4096 and more do not fit
# with room to spare, so the full path reads the kernel again; each comes out whole.
for n in 4095 4096 5000; do
    head -c $((n * 2)) /dev/urandom | base64 -w0 | head -c "$n" >"$work/secret$n"
    chmod 644 "$work/secret$n"
done
check "add secrets of 4095, 4096 and 5000 bytes" "" as_user \
    "for n in 4095 4096 5000; do \$ARCA add -s big\$n -a alice <$work/secret\$n; done"
for n in 4095 4096 5000; do
    check "get $n bytes: whole" "whole" as_user "\$ARCA get -s big$n -a alice | cmp - $work/secret$n && echo whole"
done
check "get: 4095 bytes by the quick path's 2 keyring calls; 4096 and 5000 by its 2, then the full path's 3" \
    "4095 SEARCH READ
4096 SEARCH READ SEARCH READ READ
5000 SEARCH READ SEARCH READ READ" as_user 'for n in 4095 4096 5000; do
    echo $n $(strace -qq -e trace=keyctl $ARCA get -s big$n -a alice 2>&1 >/dev/null |
        sed -nE "s/^keyctl\(KEYCTL_([A-Z]+),.*/\1/p"); done'
check "keyctl print of the id arca show prints" "hunter2" as_user \
    'keyctl print $($ARCA show --json | python3 -c "import json,sys; print([k[\"id\"] for k in json.load(sys.stdin)[\"keys\"] if k[\"description\"] == \"arca:genp:mail:alice\"][0])")'
check "locked: 46" "arca: get: locked
46" as_user '$ARCA lock; $ARCA get -s mail -a alice; echo $?'
check "man page renders without warnings" "" sh -c "MANWIDTH=80 man --warnings -l '$(dirname "$0")/../../man/arca.1' 2>&1 >/dev/null"
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
