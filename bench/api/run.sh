#!/bin/sh
# bench-api needs arcad beside it: build both in release, then run.
set -e
cd "$(dirname "$0")/../.."
swift build -c release --product arcad >/dev/null
swift build -c release --product bench-api >/dev/null
exec .build/release/bench-api
