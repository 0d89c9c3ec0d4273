#!/usr/bin/env bash
# pam_arca.so never fails or hangs a login: arcad absent, silent, closing the
# connection or answering errors → PAM_IGNORE, one syslog line, bounded time.
source "$(dirname "$0")/30-pam-lib.bash"
u=arca-pam-f1
new_user $u
uid=$(id -u $u)
H='[0-9a-f]{8}'
stack ignore-all ignore ignore timeout=500
stack ignore-auth ignore success timeout=500

echo "-- arcad not running (no socket)"
stop_recorder
rm -f "$sock"
t0=$(now_ms)
rc=0; PAM_AUTHTOK=pw wrapped pamtester ignore-all $u authenticate open_session close_session >/dev/null || rc=$?
t=$(($(now_ms) - t0))
expect "no socket: auth and session return PAM_IGNORE, login goes on" "$rc" 0
[ "$t" -lt 1000 ] && ok "no socket: the whole transaction took ${t} ms (< 1000)" || bad "no socket took $t ms"
expect_lines "no socket: one syslog line per call that needed arcad" "$(syslog)" \
    "3 arcad is not running \($sock: No such file or directory\)" \
    "3 arcad is not running \($sock: No such file or directory\)"
grep -q '\bpw\b' "$work/stderr" && bad "the password appears in the log" || ok "no secret in the log"

echo "-- arcad never answers (timeout=500)"
start_recorder --password pw --hang all
t0=$(now_ms)
rc=0; PAM_AUTHTOK=pw wrapped pamtester ignore-all $u authenticate open_session close_session >/dev/null || rc=$?
t=$(($(now_ms) - t0))
expect "silent arcad: PAM_IGNORE everywhere, login goes on" "$rc" 0
[ "$t" -ge 450 ] && [ "$t" -lt 1500 ] && ok "silent arcad: one timeout for the whole transaction (${t} ms)" ||
    bad "silent arcad: transaction took $t ms, expected one 500 ms timeout"
expect_lines "silent arcad: later calls of the transaction do not wait again" "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> hang"
expect_lines "silent arcad: syslog" "$(syslog)" \
    "3 arcad did not answer in time" "3 arcad did not answer in time"

start_recorder --password pw --hang openSession
t0=$(now_ms)
rc=0; PAM_AUTHTOK=pw wrapped pamtester ignore-all $u authenticate open_session close_session >/dev/null || rc=$?
t=$(($(now_ms) - t0))
expect "arcad stuck at openSession: PAM_IGNORE" "$rc" 0
[ "$t" -lt 1500 ] && ok "arcad stuck at openSession: bounded (${t} ms)" || bad "took $t ms"
expect_lines "arcad stuck at openSession: unlock went through, nothing to close" "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "loginUnlock uid=$uid key=$H peer=0 -> ok" \
    "openSession uid=$uid token=$H service=ignore-all tty=- rhost=- ruser=- peer=0 -> hang"

echo "-- arcad closes the connection"
start_recorder --password pw --close kdfParameters
rc=0; PAM_AUTHTOK=pw wrapped pamtester ignore-auth $u authenticate open_session close_session >/dev/null || rc=$?
expect "closed connection in auth: auth PAM_IGNORE, session still PAM_SUCCESS" "$rc" 0
expect_lines "closed connection: the session is opened without a key" "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> close" \
    "openSession uid=$uid token=$H service=ignore-auth tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"
expect_lines "closed connection: one syslog line" "$(syslog)" "3 arcad closed the connection"

echo "-- arcad answers errors"
solo solo timeout=500
# 6 is PAM_IGNORE from the only module (see solo in 30-pam-lib.bash), 0 PAM_SUCCESS.
# libpam freezes the session chain at open: close_session is judged by the
# open code too, so after an open that ignored, close shows 6 as well.
for spec in "kdfParameters=-25291 6 0 0" "loginUnlock=-25308 6 6 6" "openSession=-50 6 6 6" "closeSession=-25300 6 0 6"; do
    read -r kindstatus auth open close <<<"$spec"
    kind=${kindstatus%%=*} status=${kindstatus#*=}
    start_recorder --password pw --fail "$kindstatus"
    out=$(PAM_AUTHTOK=pw wrapped "$driver" solo $u auth open close)
    expect_lines "error $status to $kind: auth $auth, open $open, close $close" "$out" \
        "auth $auth" "open $open" "close $close" "end"
    expect_lines "error $status to $kind: exactly one syslog line, naming the request and status" \
        "$(syslog | grep -v '^6 ')" "3 arcad refused $kind \\($status\\): scripted failure"
    if [ "$kind" = loginUnlock ]; then
        expect_lines "error to loginUnlock: the session is still opened and closed" "$(requests | tail -2)" \
            "openSession uid=$uid token=$H service=solo tty=- rhost=- ruser=- peer=0 -> ok" \
            "closeSession uid=$uid token=$H peer=0 -> ok"
    fi
done

echo "-- a recovery key from enroll is never shown"
start_recorder --recovery
rc=0; out=$(PAM_AUTHTOK=pw wrapped pamtester ignore-auth $u authenticate open_session close_session 2>&1) || rc=$?
expect "enroll answered with a recovery key: login goes on" "$rc" 0
grep -q RECOVERY-TEST-KEY "$work/stderr" <<<"$out" && bad "recovery key shown" || ok "the recovery key appears nowhere"
grep -q '^enroll .* -> recoveryKey$' "$record" && ok "enroll was answered with a recovery key" || bad "$(cat "$record")"

summary pam-failures
