#!/usr/bin/env bash
# A PAM session whose application dies without closing it (SIGKILL) must not
# stay counted: arcad binds each session to the process that opened it and
# closes it within a second of that process's death, with the usual effect
# (the last session gone removes whenUnlocked). The attack it stops: a user
# runs a setuid PAM application as themself (`su $USER`: real uid the user,
# effective uid root), then kill -9s it, leaving a session that holds
# whenUnlocked in the kernel after logout. Real arcad, real libpam through
# pam_wrapper, the kernel keyring read as the user.
set -euo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
source "$(dirname "$0")/30-pam-lib.bash"
source "$(dirname "$0")/lib-arcad.bash"  # start_arcad: arcad on $work/arcad.sock (= $sock)
arcad_pid=""
trap '[ -n "$arcad_pid" ] && kill "$arcad_pid" 2>/dev/null; cleanup' EXIT

u=fair-reap-u1
new_user $u
uid=$(id -u $u)
gid=$(id -g $u)
as_user() { setpriv --reuid="$uid" --regid="$gid" --clear-groups "$@"; }
keys() { ring_keys "$uid" "$gid" "$1"; }
# paused FILE: waits until the driver writing FILE paused with its session open.
paused() { for _ in $(seq 300); do grep -q paused "$1" && return 0; sleep 0.02; done; return 1; }
# gone_within_ms MS: polls the user's arca:wu until it is empty; prints the ms it took, or "still there".
gone_within_ms() {
    local t0 t
    t0=$(now_ms)
    while :; do
        t=$(($(now_ms) - t0))
        [ "$(keys arca:wu)" = 0 ] && { echo "$t"; return; }
        [ "$t" -gt "$1" ] && { echo "still there after $t ms"; return; }
        sleep 0.02
    done
}
solo solo timeout=2000
start_arcad

echo "-- the first login enrolls; a whenUnlocked item is in the kernel"
PAM_AUTHTOK=pw-1 wrapped "$driver" solo $u auth open "pause:$work/go1" close >"$work/s1" &
s1=$!
paused "$work/s1" || bad "the first login did not open its session" "$(cat "$work/s1")"
printf s3cret | as_user "$driver" --arcad "$sock" add "$uid" svc-wu acct whenUnlocked >/dev/null
expect "whenUnlocked item in the kernel" "$(keys arca:wu)" 1

echo "-- attack: a setuid PAM application run by the user (su \$USER), then kill -9 by the user"
# The driver opens the session as root, then takes the user's real uid and
# keeps effective uid root: what a setuid su run by the user is to kill(2).
PAM_AUTHTOK=pw-1 wrapped "$driver" solo $u auth open "ruid:$uid" "pause:$work/never-su" close >"$work/su" &
paused "$work/su" || bad "the su-like session did not open" "$(cat "$work/su")"
expect_lines "su-like: auth, session, then the user's real uid" "$(cat "$work/su")" \
    "auth 6" "open 0" "ruid:$uid 0" "paused"
touch "$work/go1"
wait $s1 || true
expect "the real login closed; the su session still holds whenUnlocked" "$(keys arca:wu)" 1
drv=$(pgrep -f "arca-test-pam-driver solo $u auth open ruid:$uid pause:$work/never-su" | head -1)
expect "the su-like process has the user's real uid" "$(ps -o ruid=,euid= -p "$drv" | awk '{print $1, $2}')" "$uid 0"
as_user kill -9 "$drv" && ok "the user may SIGKILL their own su" || bad "the user could not kill $drv"
t=$(gone_within_ms 1000)
[[ "$t" =~ ^[0-9]+$ ]] && ok "the killed su's session was reaped: whenUnlocked gone ${t} ms after kill -9" ||
    bad "whenUnlocked outlived the killed su's session: $t"
grep -q "uid $uid: session (solo, pid $drv) ended without closing: its process is gone (0 open)" "$work/arcad.log" &&
    ok "arcad logged the reaped session" || bad "no reap line in arcad's log" "$(tail -5 "$work/arcad.log")"

echo "-- a root PAM application killed with SIGKILL, beside a live session"
PAM_AUTHTOK=pw-1 wrapped "$driver" solo $u auth open "pause:$work/go2" close >"$work/s2" &
s2=$!
paused "$work/s2" || bad "session 2 did not open"
PAM_AUTHTOK=pw-1 wrapped "$driver" solo $u auth open "pause:$work/never-3" close >"$work/s3" &
paused "$work/s3" || bad "session 3 did not open"
s3=$(pgrep -f "arca-test-pam-driver solo $u auth open pause:$work/never-3" | head -1)
expect "two sessions: whenUnlocked in the kernel" "$(keys arca:wu)" 1
kill -9 "$s3"
sleep 1
expect "one of two killed: whenUnlocked stays (a live session remains)" "$(keys arca:wu)" 1
grep -q "uid $uid: session (solo, pid $s3) ended without closing: its process is gone (1 open)" "$work/arcad.log" &&
    ok "the killed session alone was reaped" || bad "no reap line for pid $s3" "$(tail -5 "$work/arcad.log")"
touch "$work/go2"
wait $s2 || true
expect "the live session closes normally: whenUnlocked gone" "$(keys arca:wu)" 0

summary pam-session-reap
