#!/usr/bin/env bash
# pam_arca.so under pam_wrapper against the recording stand-in for arcad: the
# exact requests of each PAM flow, and the exact PAM code the module returns
# (the service files make the result depend on it, see 30-pam-lib.bash).
# The end-to-end version against the real arcad is 35-pam-arcad.sh.
source "$(dirname "$0")/30-pam-lib.bash"
u=arca-pam-t1
new_user $u
uid=$(id -u $u)
gid=$(id -g $u)
H='[0-9a-f]{8}'
N='[0-9]+'
stack login ignore success debug
stack login-unlock-in-auth ignore success unlock_in_auth
stack login-no-enroll ignore success no_auto_enroll
stack login-sshd-only ignore ignore only_if=sshd,gdm-password
stack locker ignore success

echo "-- first login enrolls"
start_recorder
rc=0; PAM_AUTHTOK=first-pass wrapped pamtester login $u authenticate open_session close_session >/dev/null || rc=$?
expect "first login: auth returns PAM_IGNORE, open and close PAM_SUCCESS" "$rc" 0
r=$(requests)
expect_lines "first login: kdfParameters (none), enroll, openSession, closeSession" "$r" \
    "kdfParameters uid=$uid peer=0 -> none" \
    "enroll uid=$uid key=$H ops=$N mem=$N peer=0 -> ok" \
    "openSession uid=$uid token=$H service=login tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"
key1=$(field "$(grep ^enroll <<<"$r")" key)
mem=$(field "$(grep ^enroll <<<"$r")" mem)
ops=$(field "$(grep ^enroll <<<"$r")" ops)
[ "${mem:-0}" -ge $((64 << 20)) ] && ok "enrollment calibrated at least 64 MiB ($mem)" || bad "enrollment memory $mem < 64 MiB"
expect "close presents the token of open" "$(field "$(grep ^closeSession <<<"$r")" token)" \
    "$(field "$(grep ^openSession <<<"$r")" token)"
expect_lines "first login: syslog (debug) says what happened, nothing secret" "$(syslog)" \
    "7 $u has no vault yet; open_session enrolls" \
    "6 enrolled $u: created a vault unlocked by the login password" \
    "7 opened a session for $u" \
    "7 closed a session of $u"
grep -q first-pass "$work/stderr" && bad "the password appears in the log" || ok "the password appears in no log line"

echo "-- next login unlocks with the same key"
rc=0; PAM_AUTHTOK=first-pass wrapped pamtester login $u authenticate open_session close_session >/dev/null || rc=$?
expect "next login: auth PAM_IGNORE, open and close PAM_SUCCESS" "$rc" 0
expect_lines "next login: kdfParameters, unlock with the enrolled key, openSession, closeSession" "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "loginUnlock uid=$uid key=$key1 peer=0 -> ok" \
    "openSession uid=$uid token=$H service=login tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"

echo "-- a wrong password changes nothing and unlocks nothing"
cat >"$work/passdb" <<EOS
$u:first-pass:matrix-with
$u:first-pass:matrix-without
EOS
for s in with without; do
    {
        echo "auth required $wrapdir/pam_matrix.so passdb=$work/passdb"
        echo "auth required $wrapdir/pam_set_items.so"
        [ $s = with ] && echo "auth optional $module socket=$sock unlock_in_auth"
        echo "account required pam_permit.so"
    } >"$work/svc/matrix-$s"
done
rc_with=0; out_with=$(echo wrong-pass | PAM_AUTHTOK=wrong-pass wrapped pamtester matrix-with $u authenticate 2>&1) || rc_with=$?
log_with=$(syslog)
rc_without=0; out_without=$(echo wrong-pass | PAM_AUTHTOK=wrong-pass wrapped pamtester matrix-without $u authenticate 2>&1) || rc_without=$?
expect "wrong password: same exit code with and without pam_arca ($rc_with)" "$rc_with" "$rc_without"
expect "wrong password: same pamtester message with and without pam_arca" "$out_with" "$out_without"
[ "$rc_with" -ne 0 ] && ok "wrong password: the login still fails" || bad "wrong password logged in"
expect_lines "wrong password: arcad refuses the unlock, with a candidate nobody confirms; vault stays locked" \
    "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "loginUnlock uid=$uid key=$H peer=0 -> candidate $H"
expect_lines "wrong password: one syslog line" "$log_with" \
    "3 arcad refused loginUnlock \(-25293\): wrong password or key"
rc=0; echo first-pass | PAM_AUTHTOK=first-pass wrapped pamtester matrix-with $u authenticate >/dev/null || rc=$?
expect "right password through pam_matrix still logs in" "$rc" 0
requests >/dev/null

echo "-- no PAM_AUTHTOK (key or token login)"
rc=0; wrapped pamtester login $u authenticate open_session close_session >/dev/null || rc=$?
expect "no authtok: auth PAM_IGNORE, session PAM_SUCCESS" "$rc" 0
expect_lines "no authtok: nothing in auth, the session is still counted" "$(requests)" \
    "openSession uid=$uid token=$H service=login tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"
expect_lines "no authtok: debug lines say why" "$(syslog)" \
    "7 no PAM_AUTHTOK for $u \(key or token login\); nothing to do" \
    "7 no key from auth for $u \(no password, or auth ran in another process\)" \
    "7 opened a session for $u" \
    "7 closed a session of $u"

echo "-- unlock_in_auth"
rc=0; PAM_AUTHTOK=first-pass wrapped pamtester login-unlock-in-auth $u authenticate open_session close_session >/dev/null || rc=$?
expect "unlock_in_auth: PAM_IGNORE, PAM_SUCCESS" "$rc" 0
expect_lines "unlock_in_auth: unlock during auth, not again in open_session" "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "loginUnlock uid=$uid key=$key1 peer=0 -> ok" \
    "openSession uid=$uid token=$H service=login-unlock-in-auth tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"

echo "-- screen locker: auth run as the user"
rc=0; PAM_AUTHTOK=first-pass wrapped_as "$uid" "$gid" pamtester locker $u authenticate >/dev/null || rc=$?
expect "locker: auth returns PAM_IGNORE as the user" "$rc" 0
expect_lines "locker: unprivileged auth unlocks at once, from the user's own uid" "$(requests)" \
    "kdfParameters uid=$uid peer=$uid -> params" \
    "unlock uid=$uid key=$key1 peer=$uid -> ok"

echo "-- chauthtok"
rc=0; PAM_OLDAUTHTOK=first-pass PAM_AUTHTOK=second-pass wrapped pamtester login $u chauthtok >/dev/null || rc=$?
expect "chauthtok: pamtester succeeds" "$rc" 0
r=$(requests)
expect_lines "chauthtok: old key from the current parameters, new key with a fresh salt and the same cost" "$r" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "changePassword uid=$uid old=$key1 new=$H ops=$ops mem=$mem salt=fresh peer=0 -> ok"
key2=$(field "$r" new)
rc=0; PAM_AUTHTOK=second-pass wrapped pamtester login $u authenticate open_session close_session >/dev/null || rc=$?
expect_lines "after chauthtok the new password unlocks" "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "loginUnlock uid=$uid key=$key2 peer=0 -> ok" \
    "openSession uid=$uid token=$H service=login tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"
stack login-stale ignore ignore
rc=0; PAM_AUTHTOK=first-pass wrapped pamtester login-stale $u authenticate open_session close_session >/dev/null || rc=$?
expect "the old password: auth PAM_IGNORE, open PAM_IGNORE (unlock refused), login goes on" "$rc" 0
r=$(requests)
expect_lines "the old password is refused, the session still counted, and its candidate presented by it" "$r" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "loginUnlock uid=$uid key=$H peer=0 -> candidate $H" \
    "openSession uid=$uid token=$H service=login-stale tty=- rhost=- ruser=- peer=0 -> ok" \
    "confirmCandidate uid=$uid candidate=$H session=$H peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"
expect "confirmCandidate presents the token loginUnlock returned" \
    "$(field "$(grep ^confirmCandidate <<<"$r")" candidate)" "$(grep ^loginUnlock <<<"$r" | sed 's/.* candidate //')"
expect "confirmCandidate names the session this handle opened" \
    "$(field "$(grep ^confirmCandidate <<<"$r")" session)" "$(field "$(grep ^openSession <<<"$r")" token)"

echo "-- root reset (no old password)"
rc=0; PAM_AUTHTOK=third-pass wrapped pamtester login $u chauthtok >/dev/null || rc=$?
expect "reset: pamtester succeeds" "$rc" 0
expect_lines "reset: passwordReset with a key of the new password" "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "passwordReset uid=$uid new=$H ops=$ops mem=$mem peer=0 -> ok"

echo "-- auth of a user without a vault derives nothing (sudo, polkit): Argon2id waits for open_session"
start_recorder
out=$(PAM_AUTHTOK=first-pass wrapped "$driver" login $u auth peak)
expect_lines "no vault: auth asks for the parameters only" "$(requests)" "kdfParameters uid=$uid peer=0 -> none"
peak=$(sed -n 's/^peak //p' <<<"$out")
[ "${peak:-999}" -lt 48 ] && ok "no vault: auth stays under 48 MiB (peak ${peak} MiB; Argon2id needs at least 64)" ||
    bad "no vault: auth peaked at ${peak} MiB: it calibrated or derived"
out=$(PAM_AUTHTOK=first-pass wrapped "$driver" login $u auth open peak)
peak=$(sed -n 's/^peak //p' <<<"$out")
[ "${peak:-0}" -ge 64 ] && ok "the same transaction's open_session calibrates and enrolls (peak ${peak} MiB)" ||
    bad "open_session peaked at ${peak} MiB: no enrollment?"
expect_lines "open_session enrolled" "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> none" \
    "enroll uid=$uid key=$H ops=$N mem=$N peer=0 -> ok" \
    "openSession uid=$uid token=$H service=login tty=- rhost=- ruser=- peer=0 -> ok"

echo "-- no_auto_enroll, only_if"
u2=arca-pam-t2
new_user $u2
uid2=$(id -u $u2)
start_recorder
rc=0; PAM_AUTHTOK=pw wrapped pamtester login-no-enroll $u2 authenticate open_session close_session >/dev/null || rc=$?
expect "no_auto_enroll: PAM_IGNORE, PAM_SUCCESS" "$rc" 0
expect_lines "no_auto_enroll: no vault is created" "$(requests)" \
    "kdfParameters uid=$uid2 peer=0 -> none" \
    "openSession uid=$uid2 token=$H service=login-no-enroll tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid2 token=$H peer=0 -> ok"
echo "-- the uid: looked up once per name and handle, never reused for another name"
# getpwnam_r reads and parses the password database each time: auth looks the user up, and
# open_session and close_session of the same handle reuse the answer, for the same PAM_USER only.
# traced CMD...: CMD under pam_wrapper and strace (openat only, into $work/trace); the preload set
# by strace -E for CMD alone (preloaded into strace, pam_wrapper would leave a copy of itself behind).
traced() {
    strace -f -qq -e trace=openat -o "$work/trace" -E PAM_WRAPPER=1 -E LD_PRELOAD=libpam_wrapper.so \
        -E PAM_WRAPPER_SERVICE_DIR="$work/svc" "$@" 2>/dev/null
}
passwd_reads() { grep -c '"/etc/passwd"' "$work/trace" || true; }
out=$(PAM_AUTHTOK=pw traced "$driver" login-no-enroll $u2 auth open close)
expect "auth, open, close in one handle: codes" "$(tr '\n' ' ' <<<"$out")" "auth 0 open 0 close 0 end "
expect "auth, open, close in one handle: /etc/passwd read once" "$(passwd_reads)" 1
expect_lines "auth, open, close in one handle: all for the user's uid" "$(requests)" \
    "kdfParameters uid=$uid2 peer=0 -> none" \
    "openSession uid=$uid2 token=$H service=login-no-enroll tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid2 token=$H peer=0 -> ok"
out=$(PAM_AUTHTOK=pw traced "$driver" login-no-enroll $u2 auth user:$u open close)
expect "PAM_USER set anew after auth: codes" "$(tr '\n' ' ' <<<"$out")" "auth 0 user:$u 0 open 0 close 0 end "
expect "PAM_USER set anew after auth: /etc/passwd read again for the new name" "$(passwd_reads)" 2
expect_lines "PAM_USER set anew after auth: the session is the new user's, not auth's uid" "$(requests)" \
    "kdfParameters uid=$uid2 peer=0 -> none" \
    "openSession uid=$uid token=$H service=login-no-enroll tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"
# A second open_session after PAM_USER changed: the first user's session is closed with its own
# token, not orphaned (arcad would count it until the process ends, and that vault would not lock).
out=$(PAM_AUTHTOK=pw wrapped "$driver" login-no-enroll $u2 auth open user:$u open close)
expect "open, PAM_USER set anew, open again, close: codes" "$(tr '\n' ' ' <<<"$out")" \
    "auth 0 open 0 user:$u 0 open 0 close 0 end "
r=$(requests)
expect_lines "the first user's session is closed before the second opens" "$r" \
    "kdfParameters uid=$uid2 peer=0 -> none" \
    "openSession uid=$uid2 token=$H service=login-no-enroll tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid2 token=$H peer=0 -> ok" \
    "openSession uid=$uid token=$H service=login-no-enroll tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"
expect "the replaced session is closed with its own token" \
    "$(field "$(grep "^closeSession uid=$uid2 " <<<"$r")" token)" "$(field "$(grep "^openSession uid=$uid2 " <<<"$r")" token)"
expect "the last close presents the second session's token" \
    "$(field "$(grep "^closeSession uid=$uid " <<<"$r")" token)" "$(field "$(grep "^openSession uid=$uid " <<<"$r")" token)"
expect_lines "the replaced session's close is logged" "$(syslog)" \
    "6 closed the session of uid $uid2 this handle had opened before PAM_USER changed"
rc=0; PAM_AUTHTOK=pw wrapped pamtester login-sshd-only $u2 authenticate open_session close_session >/dev/null || rc=$?
expect "only_if=sshd,gdm-password on service login: PAM_IGNORE everywhere" "$rc" 0
expect "only_if: nothing sent to arcad" "$(requests)" ""
rc=0; PAM_AUTHTOK=pw wrapped pamtester login nosuchuser-arca authenticate >/dev/null || rc=$?
expect "unknown user: PAM_IGNORE" "$rc" 0
expect_lines "unknown user: one syslog line" "$(syslog)" "3 unknown user nosuchuser-arca"

summary pam-flows
