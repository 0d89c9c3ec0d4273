#!/bin/bash
# The library products are usable from another SwiftPM package: build
# Tests/ConsumerPackage (which depends on Arca by path, nothing fetched) and run
# it against a real arcad, then with arcad gone.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ARCA_BUILD=${ARCA_BUILD:-$ROOT/.build/release}
WORK=$(mktemp -d /tmp/arca-consumer-XXXXXX)
ARCAD_PID=
cleanup() {
    [ -n "$ARCAD_PID" ] && kill "$ARCAD_PID" 2>/dev/null && wait "$ARCAD_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

echo "check: the consumer package builds against Arca's library products (by path, offline)"
cp -r "$ROOT/Tests/ConsumerPackage" "$WORK/consumer"
rm -rf "$WORK/consumer/.build"
ARCA_ROOT="$ROOT" swift build --package-path "$WORK/consumer" --scratch-path "$WORK/build" \
    --disable-automatic-resolution 2>&1 | tail -n 3
BIN="$WORK/build/debug/ArcaConsumer"
[ -x "$BIN" ] || { echo "FAIL: no consumer binary"; exit 1; }
echo "ok   the consumer package built"

echo "check: against a real arcad, a user without a vault is locked (-25308), never 'not found'"
SOCK="$WORK/arcad.sock"
"$ARCA_BUILD/arcad" --foreground --state-dir "$WORK/state" --socket "$SOCK" 2>/dev/null &
ARCAD_PID=$!
for _ in $(seq 1 200); do [ -S "$SOCK" ] && break; sleep 0.05; done
[ -S "$SOCK" ] || { echo "FAIL: arcad did not open $SOCK"; exit 1; }
ARCA_SOCKET="$SOCK" "$BIN" locked

echo "check: with arcad stopped, calls report errSecNotAvailable (-25291)"
kill "$ARCAD_PID"; wait "$ARCAD_PID" 2>/dev/null || true; ARCAD_PID=
ARCA_SOCKET="$SOCK" "$BIN" unavailable
echo "50-consumer-package: all checks passed"
