#!/usr/bin/env bash
# A failed login must never re-key someone else's vault (issue 14, point 1).
# Real arcad, real pam_arca.so, real pam_unix in temporary /etc/pam.d services,
# a throwaway user. The attack: a stack where optional modules still run after
# a failed password (`auth required pam_unix`, then pam_arca with
# unlock_in_auth), two failed logins with attacker-pw, each followed by an
# unrelated session-only transaction (cron-like). Then the victim logs in; after
# a lock the real password must still open the vault and attacker-pw must not.
# Also the legitimate recovery: the password changed outside pam_arca, two
# logins with the new password mark the vault out of sync, and the next unlock
# with the old one re-wraps it.
set -euo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
source "$(dirname "$0")/30-pam-lib.bash"
source "$(dirname "$0")/lib-arcad.bash"  # start_arcad: arcad on $work/arcad.sock (= $sock)
arcad_pid=""
trap '[ -n "$arcad_pid" ] && kill "$arcad_pid" 2>/dev/null; cleanup' EXIT

u=rekey-victim
new_user $u
uid=$(id -u $u)
gid=$(id -g $u)
echo "$u:real-pw" | chpasswd
# arca RUNS AS THE USER, reading stdin: prints the output and the exit code.
arca() { ARCA_SOCKET=$sock setpriv --reuid="$uid" --regid="$gid" --clear-groups "$build/arca" "$@" 2>&1 || echo "exit $?"; }
out_of_sync() { arca status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["passwordOutOfSync"])'; }

# login-in-auth: pam_arca unlocks in auth, and runs even when pam_unix refused
# the password (required, not requisite: RHEL-style). login: the unlock in
# open_session only. cron: a session-only service.
in_auth=rekey-in-auth-$$ plain=rekey-login-$$ cron=rekey-cron-$$
created_files+=("/etc/pam.d/$in_auth" "/etc/pam.d/$plain" "/etc/pam.d/$cron")
for svc in "$in_auth" "$plain"; do
    extra=""
    [ "$svc" = "$in_auth" ] && extra=unlock_in_auth
    cat >"/etc/pam.d/$svc" <<EOS
auth     required  pam_unix.so nodelay
auth     optional  $module socket=$sock $extra
account  required  pam_permit.so
session  required  pam_permit.so
session  optional  $module socket=$sock
EOS
done
cat >"/etc/pam.d/$cron" <<EOS
account  required  pam_permit.so
session  required  pam_permit.so
session  optional  $module socket=$sock
EOS
login() { # SERVICE PASSWORD: a whole login; prints pamtester's exit code
    local rc=0
    echo "$2" | pamtester "$1" $u authenticate open_session close_session >/dev/null 2>&1 || rc=$?
    echo $rc
}
start_arcad

echo "-- the victim enrolls at the first login and stores a secret"
expect "first login succeeds" "$(login "$in_auth" real-pw)" 0
expect "a secret is stored" "$(printf s3cret | setpriv --reuid="$uid" --regid="$gid" --clear-groups \
    "$driver" --arcad "$sock" add "$uid" mail victim afterFirstUnlock)" ok
expect "the vault is in sync" "$(out_of_sync)" False

echo "-- the attack: two failed logins with attacker-pw, each followed by an unrelated session"
for round in 1 2; do
    rc=0; echo attacker-pw | pamtester "$in_auth" $u authenticate >/dev/null 2>&1 || rc=$?
    [ "$rc" -ne 0 ] && ok "round $round: the login with attacker-pw fails" || bad "attacker-pw logged in"
    rc=0; pamtester "$cron" $u open_session close_session >/dev/null 2>&1 || rc=$?
    expect "round $round: a cron-like session of the victim opens" "$rc" 0
done
expect "the vault is not marked out of sync" "$(out_of_sync)" False

echo "-- the victim's next real login does not re-wrap the vault"
expect "the victim logs in" "$(login "$plain" real-pw)" 0
expect "lock everything" "$(arca lock --all)" ""
expect "attacker-pw does not open the vault" "$(echo attacker-pw | arca unlock)" \
    "arca: unlock: wrong password
exit 1"
expect "the real password still opens it" "$(echo real-pw | arca unlock)" ""
expect "and the secret is there" "$(arca get -s mail -a victim)" s3cret
grep -q 're-wrapped to the new login password' "$work/arcad.log" &&
    bad "arcad re-wrapped the vault" "$(grep -- 're-wrapped' "$work/arcad.log")" || ok "arcad never re-wrapped"

echo "-- legitimate recovery: the password changes outside pam_arca, two logins with it"
echo "$u:new-pw" | chpasswd
expect "first login with the new password" "$(login "$in_auth" new-pw)" 0
expect "one login is not enough" "$(out_of_sync)" False
expect "second login with the new password (unlock in open_session)" "$(login "$plain" new-pw)" 0
expect "two logins with the same new password: out of sync" "$(out_of_sync)" True
expect "lock everything" "$(arca lock --all)" ""
expect "the old password still opens the vault, and re-wraps it" "$(echo real-pw | arca unlock)" ""
expect "back in sync" "$(out_of_sync)" False
expect "lock everything again" "$(arca lock --all)" ""
expect "the old password no longer opens it" "$(echo real-pw | arca unlock)" \
    "arca: unlock: wrong password
exit 1"
expect "the new password does" "$(echo new-pw | arca unlock)" ""
expect "and the secret survived" "$(arca get -s mail -a victim)" s3cret

summary pam-rekey
