#!/bin/bash
# The plain-keyctl usage of arca-keyring(7), against the real kernel, as root,
# with a throwaway user: items installed by the layout (through the
# arca-keyring-probe test helper) are readable with keyctl from a login-like
# session, a fresh private session (after `keyctl link @u @s`), and no session;
# nobody else can read them; after remove they are gone.
set -u
BUILD=${ARCA_BUILD:?set ARCA_BUILD to the build directory}
PROBE=$BUILD/arca-keyring-probe
fail=0
check() { # check <what> <expected> <actual>
    if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected '$2', got '$3'"; fail=1; fi
}
[ "$(id -u)" -eq 0 ] || { echo "FAIL must run as root"; exit 1; }
[ -x "$PROBE" ] || { echo "FAIL $PROBE missing (swift build -c release)"; exit 1; }
keyctl rdescribe @u >/dev/null 2>&1 || { echo "FAIL this kernel has no keyring support"; exit 1; }

owner=arcait$$a; other=arcait$$b
cleanup() {
    for u in $owner $other; do
        id -u $u >/dev/null 2>&1 && { "$PROBE" purge "$(id -u $u)" >/dev/null; userdel -f $u; }
    done
}
trap cleanup EXIT
useradd -M -N -s /usr/sbin/nologin $owner && useradd -M -N -s /usr/sbin/nologin $other || exit 1
U=$(id -u $owner); G=$(id -g $owner)
as_owner() { setpriv --reuid="$U" --regid="$G" --clear-groups "$@"; }
as_other() { setpriv --reuid="$(id -u $other)" --regid="$(id -g $other)" --clear-groups "$@"; }

check "install" "ok loaded=1" "$(echo s3cret | "$PROBE" install "$U" whenUnlocked arca:genp:mail:alice | cut -d' ' -f1,2)"
id=$(as_owner keyctl search @u user arca:genp:mail:alice)
check "search @u finds the item" "0" "$?"
check "no session: keyctl print" "s3cret" "$(as_owner keyctl print "$id")"
check "no session: keyctl pipe %user:" "s3cret" "$(as_owner keyctl pipe %user:arca:genp:mail:alice)"
check "login-like session: link @u @s, pipe" "s3cret" \
    "$(as_owner keyctl session - sh -c 'keyctl link @u @s && keyctl pipe %user:arca:genp:mail:alice' 2>/dev/null)"
check "fresh session without @u: EACCES" "keyctl_read_alloc: Permission denied" \
    "$(as_owner keyctl session - keyctl print "$id" 2>&1 >/dev/null | tail -1)"
check "rdescribe shows root, tagged with the uid, 0b3f0000" "user;0;$U;0b3f0000;arca:genp:mail:alice" "$(as_owner keyctl rdescribe "$id")"
check "owner cannot update" "keyctl_update: Permission denied" "$(echo x | as_owner keyctl pupdate "$id" 2>&1)"
check "other user cannot print" "keyctl_read_alloc: Permission denied" "$(as_other keyctl print "$id" 2>&1)"
check "other user cannot describe" "keyctl_describe: Permission denied" "$(as_other keyctl rdescribe "$id" 2>&1)"
check "remove" "ok removed=1" "$("$PROBE" remove "$U" whenUnlocked)"
check "after remove: search fails" "1" "$(as_owner keyctl search @u user arca:genp:mail:alice >/dev/null 2>&1; echo $?)"
sleep 0.1
check "after remove: gone from /proc/keys" "" "$(grep -i "^$(printf '%08x' "$id") " /proc/keys)"
check "grant to a service uid" "ok loaded=1" "$(echo svc | "$PROBE" grant "$U" arca:genp:db:replica)"
check "service: get_persistent, pipe" "svc" \
    "$(as_owner keyctl session - sh -c 'keyctl get_persistent @s >/dev/null && keyctl pipe %user:arca:genp:db:replica' 2>/dev/null)"
exit $fail
