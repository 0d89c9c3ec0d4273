#!/usr/bin/env bash
# The shipped systemd units parse cleanly (systemd-analyze verify), and the
# hardening they promise is in them. ExecStart points at the built arcad.
set -euo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() { if "${@:2}"; then echo "ok   $1"; pass=$((pass + 1)); else echo "FAIL $1"; fail=$((fail + 1)); fi; }

sed "s|^ExecStart=/usr/local/sbin/arcad|ExecStart=$build/arcad|" "$top/systemd/arcad.service" >"$work/arcad.service"
cp "$top/systemd/arcad.socket" "$work/arcad.socket"
out=$(systemd-analyze verify --man=no "$work/arcad.service" "$work/arcad.socket" 2>&1 || true)
check "systemd-analyze verify reports nothing${out:+: $out}" test -z "$out"
for setting in KeyringMode=private ProtectSystem=strict "ReadWritePaths=/var/lib/arca /run/arca" PrivateTmp=yes \
    NoNewPrivileges=yes LockPersonality=yes StateDirectoryMode=0700 LimitMEMLOCK=64M; do
    check "arcad.service has $setting" grep -qx "$setting" "$top/systemd/arcad.service"
done
# arca-secretd's user unit and D-Bus activation file (verified in system mode: no user manager here).
sed "s|^ExecStart=/usr/local/bin/arca-secretd|ExecStart=$build/arca-secretd|" "$top/systemd/user/arca-secretd.service" \
    >"$work/arca-secretd.service"
out=$(systemd-analyze verify --man=no "$work/arca-secretd.service" 2>&1 || true)
check "arca-secretd.service: systemd-analyze verify reports nothing${out:+: $out}" test -z "$out"
for setting in Type=dbus BusName=org.freedesktop.secrets ExecStart=/usr/local/bin/arca-secretd; do
    check "arca-secretd.service has $setting" grep -qx "$setting" "$top/systemd/user/arca-secretd.service"
done
for setting in Name=org.freedesktop.secrets Exec=/usr/local/bin/arca-secretd SystemdService=arca-secretd.service; do
    check "the activation file has $setting" grep -qx "$setting" "$top/systemd/user/org.freedesktop.secrets.service"
done
check "arcad.socket listens on /run/arca/arcad.sock with mode 0666" \
    grep -qx "ListenStream=/run/arca/arcad.sock" "$top/systemd/arcad.socket"
check "arcad.socket mode 0666" grep -qx "SocketMode=0666" "$top/systemd/arcad.socket"

# Socket activation: arcad adopts the socket systemd passes (LISTEN_FDS) instead of binding its own.
systemd-socket-activate -l "$work/activated.sock" "$build/arcad" --foreground --config /dev/null \
    --state-dir "$work/state" --socket "$work/unused.sock" 2>"$work/arcad.log" &
activator=$!
for _ in $(seq 100); do [ -S "$work/activated.sock" ] && break; sleep 0.05; done
reply=$("$build/arcad-probe" "$work/activated.sock" status 2>&1 || true)
check "socket activation: arcad answers on the passed socket ($reply)" test "$reply" = "ok vault=false unlocked=0 sessions=0 sync=true"
check "socket activation: arcad did not bind its own socket" test ! -e "$work/unused.sock"
check "socket activation: arcad said so" grep -q "using the socket passed by systemd" "$work/arcad.log"
# A second arcad on the activated one's state directory is refused (naming its pid) and
# touches nothing; the activated one keeps answering on the passed socket.
holder=$(cat "$work/state/arcad.lock" 2>/dev/null || true)
rc=0; err=$("$build/arcad" --foreground --config /dev/null --state-dir "$work/state" --socket "$work/activated.sock" 2>&1) || rc=$?
check "socket activation: a second arcad exits 1 naming the holder ($err)" \
    test "$rc" = 1 -a "$err" = "arcad: cannot start: another arcad (pid $holder) is using the state directory $work/state"
reply=$("$build/arcad-probe" "$work/activated.sock" status 2>&1 || true)
check "socket activation: the first arcad still answers ($reply)" test "$reply" = "ok vault=false unlocked=0 sessions=0 sync=true"
kill "$activator" 2>/dev/null || true
pkill -f "state-dir $work/state" 2>/dev/null || true
wait "$activator" 2>/dev/null || true

# Without --foreground arcad detaches; the parent exits 0 once arcad serves, or 1
# with the reason when it cannot start.
rc=0; "$build/arcad" --config /dev/null --state-dir "$work/bg-state" --socket "$work/bg.sock" || rc=$?
check "daemon mode: the parent exits 0 once arcad serves" test "$rc" = 0
reply=$("$build/arcad-probe" "$work/bg.sock" status 2>&1 || true)
check "daemon mode: the detached arcad answers ($reply)" test "$reply" = "ok vault=false unlocked=0 sessions=0 sync=true"
pkill -9 -f "state-dir $work/bg-state" 2>/dev/null || true
rc=0; err=$("$build/arcad" --config /dev/null --state-dir "$work/bg2" --socket /nonexistent/arca/s.sock 2>&1) || rc=$?
check "daemon mode: a failure to start exits 1 with the reason ($err)" test "$rc" = 1 -a -n "$err"
echo "systemd-units: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
