#!/usr/bin/env bash
# bench/logind: time from logind's LockedHint=true (the fake logind's
# PropertiesChanged emission, CLOCK_MONOTONIC) to the whenUnlocked item being
# unreadable in the kernel as the user sees it, median and worst over 100
# cycles, against the real arcad on a private bus; plus 1,000 lock/unlock
# cycles with key and RSS figures. Root (throwaway users, the kernel keyring).
# Target: ≤ 50 ms. The Swift suite LogindTimingTests does the work.
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --build-tests >/dev/null
out=$(swift test --skip-build --filter 'LogindTimingTests' 2>&1) || { echo "$out" | tail -20; exit 1; }
echo "| figure | | | |"
echo "|---|---|---|---|"
echo "$out" | grep '^|'
