#!/usr/bin/env bash
# bench/pam/order.sh: regenerates pam/pam_arca.order, the order in which lld lays out
# pam_arca.so's code (Package.swift's pamModuleLinkage passes it as --symbol-ordering-file).
# A login is a fresh process: every page of the module's code it runs is a first touch, a page
# fault (~0.5-1 µs in the kernel, more on a busy machine). The functions a login runs (Swift
# runtime and standard library parts included: they are linked in statically) are spread over
# the module's 4 MB of code; listed first in the ordering file, they end up contiguous, on a
# few pages. Root. Sets up what bench/pam/callgrind.sh on branch auth16 does (a throwaway
# user, a real arcad with a private state directory and socket, the vault at arcad's floor
# holding 10 items), runs one fresh C login (bench/pam/fresh.c) under callgrind with a dump at
# the end of each PAM step, and writes the module's functions that ran, step by step (pam_start:
# loading and constructors, then auth, open_session, close_session, pam_end), by their
# linkage names. The KDF is left out (collection off inside crypto_pwhash_argon2id: libsodium
# is another object anyway). A stale entry (a function renamed since) only costs its place:
# lld is told --no-warn-symbol-ordering.
#
#   bash bench/pam/order.sh     (after swift build -c release; then relink and compare with
#                                bench/pam/paired.sh: faults per step, old module vs new)
# SwiftPM does not know the module depends on the ordering file: after regenerating it, remove
# .build/*/libpam_arca.so so that the next build links it again.
#   KEEP=DIR keeps the profiles (callgrind.out.N, one per step end; linkage names).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "bench/pam/order.sh: must run as root" >&2; exit 1; }
build=$(cd "${ARCA_BUILD:-.build/release}" && pwd) || { echo "order: no build directory" >&2; exit 1; }
for f in arcad bench-arcad arca-test-pam-driver libpam_arca.so; do
    [ -e "$build/$f" ] || { echo "order: $build/$f missing (swift build -c release)" >&2; exit 1; }
done
for tool in valgrind objcopy; do
    command -v "$tool" >/dev/null || { echo "order: $tool missing (apt-get install valgrind binutils)" >&2; exit 1; }
done
out=$PWD/pam/pam_arca.order
wrapdir=/usr/lib/x86_64-linux-gnu/pam_wrapper
user=arca-order-$$
arcad_pid=""
stop() { if [ -n "$1" ]; then kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; fi; }
# shellcheck source=SCRIPTDIR/../../Tests/integration/lib-arcad.bash
. Tests/integration/lib-arcad.bash # drop_parked
cleanup() {
    stop "$arcad_pid"
    drop_parked
    if id "$user" >/dev/null 2>&1; then
        "$build/bench-arcad" --purge "$(id -u "$user")" 2>/dev/null || true
        userdel -r "$user" 2>/dev/null || true
    fi
    rm -rf "$work"
}
work=$(mktemp -d /tmp/arca-order.XXXXXX)
trap cleanup EXIT
chmod 0755 "$work"
mkdir "$work/svc" "$work/out"
# shellcheck source=SCRIPTDIR/lib-check.bash
. bench/pam/lib-check.bash # compile_fresh, check_arcad_log, start_bench_arcad
compile_fresh "$work/fresh-c"
useradd -m -s /bin/sh "$user"
uid=$(id -u "$user")
start_bench_arcad order
# valgrind 3.19 cannot read the toolchain's DWARF 5: the module runs as a copy without debug
# information (its symbol table kept).
objcopy --strip-debug "$build/libpam_arca.so" "$work/pam_arca.so"
{
    echo "auth     [default=ignore] $wrapdir/pam_set_items.so"
    echo "auth     required pam_permit.so"
    echo "auth     optional $work/pam_arca.so socket=$work/arcad.sock"
    echo "account  required pam_permit.so"
    echo "session  required pam_permit.so"
    echo "session  optional $work/pam_arca.so socket=$work/arcad.sock"
} >"$work/svc/login"
dumps=()
for s in pam_start pam_authenticate pam_open_session pam_close_session pam_end; do dumps+=("--dump-after=$s"); done
PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" \
    valgrind --tool=callgrind --callgrind-out-file="$work/out/callgrind.out" --demangle=no \
    --compress-strings=no --compress-pos=no --separate-recs=1 \
    --toggle-collect=crypto_pwhash_argon2id --collect-atstart=yes "${dumps[@]}" \
    "$work/fresh-c" txn login "$user" 1 >/dev/null 2>"$work/valgrind.err" ||
    { cat "$work/valgrind.err" >&2; echo "order: login failed" >&2; exit 1; }
check_arcad_log "$work/arcad.log" 1 # the login unlocked and opened a session
# Each dump, in the order written (callgrind.out.1, .2, ...): a "fn=" line opens a function's
# costs in the object of the last "ob=" line; the module's functions, first appearance first.
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; cp "$work/out/"* "$KEEP/"; fi
mapfile -t files < <(find "$work/out" -name 'callgrind.out.*' | sort -t. -k3 -n)
[ "${#files[@]}" -ge 5 ] || { echo "order: ${#files[@]} profiles, expected one per PAM step" >&2; exit 1; }
{
    echo "# pam/pam_arca.order: pam_arca.so's functions a login runs, in PAM-step order (lld"
    echo "# --symbol-ordering-file; Package.swift). Generated by bench/pam/order.sh: do not edit."
    # Within a step by name (callgrind's order follows the module's layout: the file would
    # churn on each regeneration).
    awk -v module="$work/pam_arca.so" '
        FNR == 1 { dump++ }
        /^ob=/ { ob = substr($0, 4) }
        /^fn=/ { name = substr($0, 4); sub(/'"'"'[0-9]+$/, "", name)
                 if (ob == module && name !~ /^0x/ && !(name in seen)) { seen[name] = 1; print dump, name } }
    ' "${files[@]}" | LC_ALL=C sort -k1,1n -k2,2 | cut -d' ' -f2-
} >"$out.tmp"
n=$(grep -vc '^#' "$out.tmp" || true)
[ "$n" -ge 100 ] || { rm -f "$out.tmp"; echo "order: only $n functions of pam_arca.so ran: not written" >&2; exit 1; }
mv "$out.tmp" "$out"
echo "order: $n functions written to pam/pam_arca.order"
