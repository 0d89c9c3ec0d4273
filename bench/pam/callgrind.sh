#!/usr/bin/env bash
# bench/pam/callgrind.sh: the instructions the login process executes in each PAM step of one
# fresh C login (bench/pam/fresh.c) with pam_arca.so, beside the same login without it: counts
# that do not depend on the machine's load (valgrind --tool=callgrind). Root. Sets up what
# bench/pam/timeline.sh does (a throwaway user, a real arcad with a private state directory and
# socket, the vault at arcad's floor, 1 pass, 64 MiB, holding 10 items), then runs one login
# per module under callgrind, dumping a profile at the end of each step (--dump-after on
# pam_start, pam_authenticate, pam_open_session, pam_close_session, pam_end).
# The KDF is excluded: collection is toggled off inside crypto_pwhash_argon2id (libsodium's
# Argon2id under the crypto_pwhash that fresh-c catches), so a step's count is everything the
# process ran in it but the KDF (which is slow under valgrind: a few seconds). Arcad's own
# instructions are not counted (another process).
#
#   bash bench/pam/callgrind.sh [MODULE...]   (default: .build/release/libpam_arca.so; several
#                                             modules, e.g. an old build and a new one, take
#                                             turns against the same arcad)
#   KEEP=DIR keeps the profiles (callgrind.out.SERVICE.N) for callgrind_annotate --inclusive=yes.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "bench/pam/callgrind.sh: must run as root" >&2; exit 1; }
build=$(cd "${ARCA_BUILD:-.build/release}" && pwd) || { echo "callgrind: no build directory" >&2; exit 1; }
for f in arcad bench-arcad arca-test-pam-driver; do
    [ -e "$build/$f" ] || { echo "callgrind: $build/$f missing (swift build -c release)" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "callgrind: valgrind missing (apt-get install valgrind)" >&2; exit 1; }
modules=()
for m in "${@:-$build/libpam_arca.so}"; do modules+=("$(cd "$(dirname "$m")" && pwd)/$(basename "$m")"); done
command -v objcopy >/dev/null || { echo "callgrind: objcopy missing (apt-get install binutils)" >&2; exit 1; }
wrapdir=/usr/lib/x86_64-linux-gnu/pam_wrapper
user=arca-callgrind-$$
arcad_pid=""
# shellcheck source=SCRIPTDIR/../../Tests/integration/lib-arcad.bash
. Tests/integration/lib-arcad.bash # drop_parked
# shellcheck source=SCRIPTDIR/lib-check.bash
. bench/pam/lib-check.bash # compile_fresh, check_arcad_log, start_bench_arcad, cleanup_bench_arcad, stop, installed_module
work=$(mktemp -d /tmp/arca-callgrind.XXXXXX)
trap cleanup_bench_arcad EXIT
chmod 0755 "$work"
mkdir "$work/svc" "$work/out"
compile_fresh "$work/fresh-c"
useradd -m -s /bin/sh "$user"
uid=$(id -u "$user")
start_bench_arcad callgrind
stack() { # NAME [MODULE LINE]
    {
        echo "auth     [default=ignore] $wrapdir/pam_set_items.so"
        echo "auth     required pam_permit.so"
        if [ -n "${2:-}" ]; then echo "auth     optional $2"; fi
        echo "account  required pam_permit.so"
        echo "session  required pam_permit.so"
        if [ -n "${2:-}" ]; then echo "session  optional $2"; fi
    } >"$work/svc/$1"
}
stack base
services=(base)
# Each module in its installed form (installed_module, lib-check.bash: no RUNPATH, no libm), but
# with its symbol table, the functions' names, kept; and without debug information, which valgrind
# 3.19 cannot read (the toolchain's DWARF 5) and gives up on.
for i in "${!modules[@]}"; do
    installed_module "${modules[$i]}" "$work/m$i.so" symbols
    stack "m$i" "$work/m$i.so socket=$work/arcad.sock"
    services+=("m$i")
done
steps=(pam_start pam_authenticate pam_open_session pam_close_session pam_end)
dumps=()
for s in "${steps[@]}"; do dumps+=("--dump-after=$s"); done
# grind SERVICE: one login under callgrind → "start auth open close end" instruction counts.
grind() {
    local svc=$1 kdfs=0 f counts=()
    [ "$svc" = base ] || kdfs=1
    rm -f "$work/out/"*
    PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" \
        valgrind --tool=callgrind --callgrind-out-file="$work/out/callgrind.out" \
        --toggle-collect=crypto_pwhash_argon2id --collect-atstart=yes "${dumps[@]}" \
        "$work/fresh-c" txn "$svc" "$user" "$kdfs" >/dev/null 2>"$work/valgrind.err" ||
        { cat "$work/valgrind.err" >&2; echo "callgrind: login ($svc) failed" >&2; return 1; }
    # A dump at the end of each step; pam_wrapper's pam_* wrap libpam's, so a step may end
    # twice: a step's count is the sum of the dumps it triggered (the last, the rest, ignored).
    for f in "$work/out/callgrind.out."*; do
        if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; cp "$f" "$KEEP/$svc.$(basename "$f")"; fi
    done
    for s in "${steps[@]}"; do
        counts+=("$(awk -v t="--dump-after=$s" '$1 == "desc:" && $2 == "Trigger:" {hit = ($3 == t)}
            /^summary:/ && hit {n += $2} END {print n + 0}' "$work/out/callgrind.out."*)")
    done
    echo "${counts[*]}"
}
grind base >/dev/null # page cache
declare -A row
for svc in "${services[@]}"; do row[$svc]=$(grind "$svc"); done
check_arcad_log "$work/arcad.log" "${#modules[@]}" # each pam_arca login unlocked and opened a session
echo "instructions executed by the login process per PAM step (callgrind; KDF excluded: collection off"
echo "inside crypto_pwhash_argon2id); pam_arca rows: added over the baseline stack"
printf '%-12s %12s %12s %12s %12s %12s  %s\n' stack pam_start auth open_session close_session pam_end module
read -ra b <<<"${row[base]}"
printf '%-12s %12s %12s %12s %12s %12s  %s\n' baseline "${b[@]}" "(pam_permit only)"
for i in "${!modules[@]}"; do
    read -ra r <<<"${row[m$i]}"
    printf '%-12s %12d %12d %12d %12d %12d  %s\n' "+pam_arca" $((r[0] - b[0])) $((r[1] - b[1])) \
        $((r[2] - b[2])) $((r[3] - b[3])) $((r[4] - b[4])) "${modules[$i]}"
done
