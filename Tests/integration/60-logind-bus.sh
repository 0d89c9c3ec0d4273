#!/usr/bin/env bash
# The release arcad and the system bus: without a bus it serves and says so
# once; a private dbus-daemon with the fake logind (fake-logind.py) appearing
# later is picked up. The lock flows themselves are checked against the kernel
# by the Swift suites LogindEndToEndTests and LogindTimingTests.
set -euo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/arca-logind-sh.XXXXXX)
pids=()
cleanup() { exec 8>&- 2>/dev/null || true; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
pass=0 fail=0
check() { # name, command...
    local name=$1; shift
    if "$@" >/dev/null 2>&1; then echo "ok   $name"; pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}
eventually() { for _ in $(seq 200); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done; return 1; }

cat >"$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$work/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/><allow send_type="method_call"/><allow send_type="signal"/>
    <allow send_destination="*"/><allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/system_bus_socket"
"$build/arcad" --foreground --config /dev/null --state-dir "$work/state" --socket "$work/arcad.sock" 2>"$work/arcad.log" &
pids+=($!)
check "arcad answers without a system bus" eventually "$build/arcad-probe" "$work/arcad.sock" status
sleep 11  # two retry periods
check "it says 'no system bus' exactly once" test "$(grep -c 'no system bus' "$work/arcad.log")" = 1

dbus-daemon --config-file="$work/bus.conf" --nofork --print-address >"$work/address" 2>/dev/null &
pids+=($!)
eventually test -S "$work/system_bus_socket"
check "with a bus but no logind it says so once" eventually grep -q 'logind is not on the system bus' "$work/arcad.log"
mkfifo "$work/fake.in"
/usr/bin/python3 "$here/fake-logind.py" "1:4242" <"$work/fake.in" >"$work/fake.out" &
pids+=($!)
exec 8>"$work/fake.in"  # the fake serves until this closes
check "logind appearing later is picked up" eventually grep -q 'logind: following 1 session' "$work/arcad.log"
check "arcad still answers" "$build/arcad-probe" "$work/arcad.sock" status
check "'logind is not on the system bus' said once" test "$(grep -c 'logind is not on the system bus' "$work/arcad.log")" = 1
echo "logind-bus: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
