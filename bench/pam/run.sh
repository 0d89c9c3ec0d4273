#!/usr/bin/env bash
# bench/pam: what pam_arca.so adds to a login transaction (pam_start, auth,
# open_session, close_session, pam_end), excluding the KDF, beside
# pam_gnome_keyring on the same stack; and the KDF at the default calibration,
# reported separately. Root (throwaway user, removed on exit).
#
#   bench/pam/run.sh            (make bench runs it; N=200 transactions per stack)
#
# arcad is the recording stand-in (Tests/ArcaPAMRecorder) until the real arcad
# lands: it answers at once, so the figure is the module's own cost plus one
# socket round trip per request. Its vault uses the cheapest Argon2id (1 pass,
# 8 KiB) so that the KDF is excluded; a second pam_arca row uses the calibrated
# parameters to show the whole cost.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${N:-200}
[ "$(id -u)" -eq 0 ] || { echo "bench/pam: must run as root" >&2; exit 1; }
swift build -c release --product pam_arca >/dev/null
swift build -c release --product arca-test-arcad-recorder >/dev/null
swift build -c release --product arca-test-pam-driver >/dev/null
build=$PWD/.build/release
wrapdir=/usr/lib/x86_64-linux-gnu/pam_wrapper
gk=/usr/lib/x86_64-linux-gnu/security/pam_gnome_keyring.so
[ -e "$gk" ] || { echo "bench/pam: $gk missing (make deps installs libpam-gnome-keyring)" >&2; exit 1; }
work=$(mktemp -d /tmp/arca-bench-pam.XXXXXX)
chmod 0755 "$work"
mkdir "$work/svc"
user=arca-bench-pam
recorder_pid=""
cleanup() {
    if [ -n "$recorder_pid" ]; then kill "$recorder_pid" 2>/dev/null || true; fi
    userdel -r "$user" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
userdel -r "$user" 2>/dev/null || true
useradd -m -s /bin/sh "$user"

start_recorder() {
    if [ -n "$recorder_pid" ]; then kill "$recorder_pid" 2>/dev/null || true; wait "$recorder_pid" 2>/dev/null || true; fi
    rm -f "$work/sock"
    "$build/arca-test-arcad-recorder" --socket "$work/sock" --record /dev/null --password bench-pw "$@" &
    recorder_pid=$!
    for _ in $(seq 100); do [ -S "$work/sock" ] && break; sleep 0.02; done
}

# stack NAME AUTH_LINE SESSION_LINE: pam_permit decides; the extra module is optional.
stack() {
    {
        echo "auth     [default=ignore] $wrapdir/pam_set_items.so"
        echo "auth     required pam_permit.so"
        if [ -n "$2" ]; then echo "auth     optional $2"; fi
        echo "account  required pam_permit.so"
        echo "session  required pam_permit.so"
        if [ -n "$3" ]; then echo "session  optional $3"; fi
    } >"$work/svc/$1"
}
arca="$build/libpam_arca.so socket=$work/sock"
stack base "" ""
stack arca "$arca" "$arca"
stack gnome "$gk" "$gk auto_start"

run() { # SERVICE → "median_us p90_us"
    PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" \
        "$build/arca-test-pam-driver" "$1" "$user" "loop:$N" auth open close 2>/dev/null |
        awk '/^median_us/ {print $2, $4}'
}
# fresh SERVICE...: median wall time (µs) of 31 fresh processes per service,
# each doing one transaction: what a login in a new process (sshd, login)
# pays, module loading included. The services take turns in each round so
# that load from elsewhere on the machine falls on all of them alike.
fresh() {
    local round s t0
    for round in $(seq 31); do
        for s in "$@"; do
            t0=$(date +%s%N)
            PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" \
                "$build/arca-test-pam-driver" "$s" "$user" auth open close >/dev/null 2>&1
            echo "$s $((($(date +%s%N) - t0) / 1000))"
        done
    done >"$work/fresh"
    for s in "$@"; do awk -v s="$s" '$1 == s {print $2}' "$work/fresh" | sort -n | sed -n 16p; done
}
ms() { awk -v us="$1" 'BEGIN {printf "%.2f", us / 1000}'; }

read -r kdf_ops kdf_mem kdf_ms < <("$build/arca-test-arcad-recorder" --kdf-bench)
start_recorder --ops 1 --memory 8192
run base >/dev/null # warm up pam_wrapper and the page cache
read -r base_med base_p90 < <(run base)
read -r arca_med arca_p90 < <(run arca)
read -r gk_med gk_p90 < <(run gnome)
{ read -r base_fresh; read -r arca_fresh; read -r gk_fresh; } < <(fresh base arca gnome)
start_recorder --ops "$kdf_ops" --memory "$kdf_mem"
kdf_runs=$((N / 10 > 5 ? N / 10 : 5))
read -r arcakdf_med arcakdf_p90 < <(N=$kdf_runs run arca)

added=$((arca_med - base_med))
verdict=$([ "$added" -le 5000 ] && echo "PASS" || echo "FAIL")
echo "bench/pam: $N login transactions per stack (pam_start, auth, open_session, close_session, pam_end)"
echo "under pam_wrapper, driven in-process by arca-test-pam-driver; $(nproc) cores."
echo "arcad: the recording stand-in (arca-test-arcad-recorder), NOT the real arcad (not built yet)."
echo "gnome-keyring-daemon is $(command -v gnome-keyring-daemon >/dev/null && echo installed || echo 'not installed (pam_gnome_keyring finds no daemon to start)')."
echo
printf '%-47s %10s %10s %14s\n' "stack" "median ms" "p90 ms" "added (median)"
printf '%-47s %10s %10s %14s\n' "pam_permit only (baseline)" "$(ms "$base_med")" "$(ms "$base_p90")" "-"
printf '%-47s %10s %10s %14s\n' "+ pam_arca, KDF excluded (1 pass, 8 KiB)" "$(ms "$arca_med")" "$(ms "$arca_p90")" "$(ms "$added")"
printf '%-47s %10s %10s %14s\n' "+ pam_gnome_keyring (auth, session auto_start)" "$(ms "$gk_med")" "$(ms "$gk_p90")" "$(ms $((gk_med - base_med)))"
printf '%-47s %10s %10s %14s\n' "+ pam_arca, default calibration ($kdf_runs runs)" "$(ms "$arcakdf_med")" "$(ms "$arcakdf_p90")" "$(ms $((arcakdf_med - base_med)))"
printf '%-47s %10s %10s %14s\n' "fresh process, baseline (load included)" "$(ms "$base_fresh")" "" "-"
printf '%-47s %10s %10s %14s\n' "fresh process, + pam_arca (KDF excluded)" "$(ms "$arca_fresh")" "" "$(ms $((arca_fresh - base_fresh)))"
printf '%-47s %10s %10s %14s\n' "fresh process, + pam_gnome_keyring" "$(ms "$gk_fresh")" "" "$(ms $((gk_fresh - base_fresh)))"
echo
echo "KDF at the default calibration (Argon2id.calibrate, 0.25 s target): ops=$kdf_ops memory=$((kdf_mem >> 20)) MiB, ${kdf_ms} ms per derivation (median of 5)"
echo "target: pam_arca adds <= 5 ms per transaction excluding the KDF: $verdict ($(ms "$added") ms)"
