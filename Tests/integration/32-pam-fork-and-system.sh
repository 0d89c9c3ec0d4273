#!/usr/bin/env bash
# Fork safety (sshd-style and xrdp-style) with arca-test-pam-driver, and a real
# /etc/pam.d service with pam_unix + pam_keyinit + pam_arca through pamtester
# (no pam_wrapper), both against the recording stand-in for arcad.
source "$(dirname "$0")/30-pam-lib.bash"
u=arca-pam-k1
new_user $u
uid=$(id -u $u)
H='[0-9a-f]{8}'
solo solo debug
start_recorder --password pw

echo "-- sshd-style: the parent opens, a forked child closes"
out=$(PAM_AUTHTOK=pw wrapped "$driver" solo $u auth open fork close) && rc=0 || rc=$?
expect "sshd-style: no crash, the child's close succeeds" "$rc" 0
expect_lines "sshd-style: codes" "$out" "auth 6" "open 0" "forked" "close 0" "end" "child exited 0"
r=$(requests)
expect_lines "sshd-style: the child closes the parent's session with its token" "$r" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "loginUnlock uid=$uid key=$H peer=0 -> ok" \
    "openSession uid=$uid token=$H service=solo tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"
expect "sshd-style: same token" "$(field "$(grep ^closeSession <<<"$r")" token)" \
    "$(field "$(grep ^openSession <<<"$r")" token)"

echo "-- a fork between auth and session, same handle"
out=$(PAM_AUTHTOK=pw wrapped "$driver" solo $u auth fork open close) && rc=0 || rc=$?
expect_lines "fork after auth: the child still has the key" "$out" \
    "auth 6" "forked" "open 0" "close 0" "end" "child exited 0"
expect_lines "fork after auth: unlock from the child" "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "loginUnlock uid=$uid key=$H peer=0 -> ok" \
    "openSession uid=$uid token=$H service=solo tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"

echo "-- xrdp-style: auth in one handle, the session in a fresh one"
out=$(PAM_AUTHTOK=pw wrapped "$driver" solo $u auth fork newhandle open close) && rc=0 || rc=$?
expect "xrdp-style: no crash" "$rc" 0
expect_lines "xrdp-style: the stash is lost, the session still opens" "$out" \
    "auth 6" "forked" "newhandle 0" "open 0" "close 0" "end" "child exited 0"
expect_lines "xrdp-style: no unlock without the key; session counted" "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "openSession uid=$uid token=$H service=solo tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"
grep -q "no key from auth for $u (no password, or auth ran in another process)" "$work/stderr" &&
    ok "xrdp-style: a debug line says the key is missing" || bad "no debug line" "$(syslog)"

echo "-- two sessions of one user"
out=$(PAM_AUTHTOK=pw wrapped "$driver" solo $u auth open fork newhandle auth open close) && rc=0 || rc=$?
expect_lines "two handles: each opens its own session" "$out" \
    "auth 6" "open 0" "forked" "newhandle 0" "auth 6" "open 0" "close 0" "end" "child exited 0"
r=$(requests)
t1=$(grep ^openSession <<<"$r" | sed -n 1p | sed 's/.*token=\([0-9a-f]*\).*/\1/')
t2=$(grep ^openSession <<<"$r" | sed -n 2p | sed 's/.*token=\([0-9a-f]*\).*/\1/')
[ -n "$t1" ] && [ "$t1" != "$t2" ] && ok "two sessions get different tokens" || bad "tokens $t1 $t2"
expect "closing the second session presents the second token only" \
    "$(grep ^closeSession <<<"$r" | sed 's/.*token=\([0-9a-f]*\).*/\1/')" "$t2"

echo "-- no threads: fork is safe at any point"
nm -D --undefined-only "$module" | grep -qw pthread_create && bad "pam_arca.so imports pthread_create" ||
    ok "pam_arca.so does not import pthread_create"
nm "$module" | grep -qE 'dispatch_async|swift_task_create' && bad "Dispatch or Swift Concurrency linked in" ||
    ok "no Dispatch or Swift Concurrency code in pam_arca.so"
PAM_AUTHTOK=pw wrapped "$driver" solo $u auth open "pause:$work/go" close >"$work/t" &
dpid=$!
for _ in $(seq 200); do grep -q paused "$work/t" && break; sleep 0.02; done
# The background job is a subshell running the driver; find the driver itself.
tpid=$(pgrep -f "arca-test-pam-driver solo $u auth open pause:$work/go" | head -1)
comm=$(cat /proc/$tpid/comm 2>/dev/null)
threads=$(ls /proc/$tpid/task 2>/dev/null | wc -l)
expect "the process measured is the driver" "$comm" arca-test-pam-d
touch "$work/go"
wait $dpid || true
expect "one thread in the process after auth and open_session" "$threads" 1
requests >/dev/null

echo "-- a real /etc/pam.d service: pam_unix, pam_keyinit force revoke, pam_arca"
svc=arca-test-$$
echo "$u:unix-pass-1" | chpasswd
start_recorder
created_files+=("/etc/pam.d/$svc")
cat >"/etc/pam.d/$svc" <<EOS
auth     required  pam_unix.so
auth     optional  $module socket=$sock
account  required  pam_unix.so
session  required  pam_keyinit.so force revoke
session  optional  $module socket=$sock
password required  pam_unix.so
password optional  $module socket=$sock
EOS
rc=0; echo unix-pass-1 | pamtester "$svc" $u authenticate open_session close_session >/dev/null 2>&1 || rc=$?
expect "real service: pamtester logs in" "$rc" 0
expect_lines "real service: first login enrolls under pam_unix" "$(requests)" \
    "kdfParameters uid=$uid peer=0 -> none" \
    "enroll uid=$uid key=$H ops=[0-9]+ mem=[0-9]+ peer=0 -> ok" \
    "openSession uid=$uid token=$H service=$svc tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"
rc=0; echo unix-pass-1 | pamtester "$svc" $u authenticate open_session close_session >/dev/null 2>&1 || rc=$?
r=$(requests)
expect_lines "real service: the next login unlocks" "$r" \
    "kdfParameters uid=$uid peer=0 -> params" \
    "loginUnlock uid=$uid key=$H peer=0 -> ok" \
    "openSession uid=$uid token=$H service=$svc tty=- rhost=- ruser=- peer=0 -> ok" \
    "closeSession uid=$uid token=$H peer=0 -> ok"
rc=0; echo wrong-pass | pamtester "$svc" $u authenticate >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] && ok "real service: a wrong password still fails in pam_unix" || bad "wrong password accepted"
requests >/dev/null
stop_recorder
rm -f "$sock"
rc=0; echo unix-pass-1 | pamtester "$svc" $u authenticate open_session close_session >/dev/null 2>&1 || rc=$?
expect "real service: arcad down, the login still succeeds" "$rc" 0
rm -f "/etc/pam.d/$svc"
[ ! -e "/etc/pam.d/$svc" ] && ok "real service file removed" || bad "service file left"

summary pam-fork-and-system
