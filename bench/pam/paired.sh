#!/usr/bin/env bash
# bench/pam/paired.sh A B: fresh C logins (bench/pam/fresh.c) against two builds' arcad in
# alternation, for a change measured on a loaded machine: load from elsewhere falls on both
# alike. A and B are build directories (.build/release of two worktrees); each runs its own
# arcad (private state and socket) with the same vault (floor: 1 pass, 64 MiB, 10 items) for
# its own throwaway user, and logins go through each build's own pam_arca.so. Root.
#   bash bench/pam/paired.sh /work/main/.build/release .build/release     (ROUNDS=41)
# Prints, per build, the median and p10..p90 of each PAM step (µs, KDF before the
# transaction, so auth still holds one Argon2id: compare auth between A and B only),
# and the median of the per-round differences B - A.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "bench/pam/paired.sh: must run as root" >&2; exit 1; }
[ $# -eq 2 ] || { echo "usage: bench/pam/paired.sh BUILD_A BUILD_B" >&2; exit 2; }
ROUNDS=${ROUNDS:-41}
wrapdir=/usr/lib/x86_64-linux-gnu/pam_wrapper
work=$(mktemp -d /tmp/arca-paired.XXXXXX)
chmod 0755 "$work"
mkdir "$work/svc"
clang -O2 -Wall -o "$work/fresh-c" bench/pam/fresh.c -lpam -lsodium -ldl
pids=()
users=()
# shellcheck source=../../Tests/integration/lib-arcad.bash
. Tests/integration/lib-arcad.bash # drop_parked
cleanup() {
    local p u
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    drop_parked "$work/A"
    drop_parked "$work/B"
    for u in "${users[@]}"; do
        "$work/A.build/bench-arcad" --purge "$(id -u "$u")" 2>/dev/null || true
        userdel -r "$u" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
setup() { # NAME BUILD
    local name=$1 build=$2 user=arca-paired-$1-$$ uid i class
    for f in arcad libpam_arca.so bench-arcad arca-test-pam-driver; do
        [ -e "$build/$f" ] || { echo "paired: $build/$f missing" >&2; exit 1; }
    done
    ln -s "$(cd "$build" && pwd)" "$work/$name.build"
    mkdir "$work/$name"
    useradd -m -s /bin/sh "$user"
    users+=("$user")
    uid=$(id -u "$user")
    "$build/arcad" --foreground --config /dev/null --state-dir "$work/$name/state" \
        --socket "$work/$name/arcad.sock" 2>"$work/$name/arcad.log" &
    pids+=($!)
    for _ in $(seq 250); do [ -S "$work/$name/arcad.sock" ] && break; sleep 0.02; done
    [ -S "$work/$name/arcad.sock" ] || { cat "$work/$name/arcad.log" >&2; exit 1; }
    printf 'bench-pw\n' | "$build/bench-arcad" --enroll "$work/$name/arcad.sock" "$uid" 1 $((64 << 20))
    for i in 1 2 3 4 5 6 7 8 9 10; do
        class=$([ $((i % 2)) -eq 0 ] && echo whenUnlocked || echo afterFirstUnlock)
        printf 'secret-%02d' "$i" | "$build/arca-test-pam-driver" --arcad "$work/$name/arcad.sock" \
            add "$uid" bench "acct$i" "$class" >/dev/null
    done
    {
        echo "auth     [default=ignore] $wrapdir/pam_set_items.so"
        echo "auth     required pam_permit.so"
        echo "auth     optional $build/libpam_arca.so socket=$work/$name/arcad.sock"
        echo "account  required pam_permit.so"
        echo "session  required pam_permit.so"
        echo "session  optional $build/libpam_arca.so socket=$work/$name/arcad.sock"
    } >"$work/svc/${name,,}" # libpam lowercases service names
    echo "$user" >"$work/$name/user"
}
setup A "$1"
setup B "$2"
login() { # NAME
    PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" \
        "$work/fresh-c" txn "${1,,}" "$(cat "$work/$1/user")" 1 $((64 << 20)) 1 2>/dev/null
}
for _ in 1 2 3; do login A >/dev/null; login B >/dev/null; done
for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) -eq 0 ]; then echo "A $(login A)"; echo "B $(login B)"
    else echo "B $(login B)"; echo "A $(login A)"; fi
done >"$work/rows"
python3 - "$work/rows" <<'EOF'
import statistics, sys
rows = {"A": [], "B": []}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 8:
        rows[p[0]].append([int(x) for x in p[1:]])
names = ["pam_start", "auth(+KDF)", "open_session", "close_session", "pam_end", "txn", "KDF alone"]
def q(v, f):
    v = sorted(v)
    return v[min(len(v) - 1, int(f * len(v)))]
print(f"{len(rows['A'])} rounds; µs: median [p10..p90]")
print(f"  {'step':<14}{'A':>22}{'B':>22}{'B-A (median of pairs)':>26}")
for i, n in enumerate(names):
    a = [r[i] for r in rows["A"]]
    b = [r[i] for r in rows["B"]]
    d = [y - x for x, y in zip(a, b)]
    fa = f"{statistics.median(a):.0f} [{q(a, .1)}..{q(a, .9)}]"
    fb = f"{statistics.median(b):.0f} [{q(b, .1)}..{q(b, .9)}]"
    print(f"  {n:<14}{fa:>22}{fb:>22}{statistics.median(d):>26.0f}")
rest = lambda r: r[0] + r[2] + r[3] + r[4]
a = [rest(r) for r in rows["A"]]
b = [rest(r) for r in rows["B"]]
print(f"  start+open+close+end (no KDF in it): A {statistics.median(a):.0f}, B {statistics.median(b):.0f},"
      f" B-A median of pairs {statistics.median([y - x for x, y in zip(a, b)]):.0f}")
EOF
# Load-independent counts, per login: the login process's voluntary context switches (each a
# wait: GNU time's %w; the KDF's are the same in A and B), and
# arcad's voluntary context switches and CPU time (ns, schedstat), summed over its threads (not
# the keyring helpers it clones: processes of their own, the same in A and B).
arcad_counts() { # PID → "voluntary_switches cpu_ns"
    local sw=0 ns=0 t
    for t in /proc/"$1"/task/*; do
        sw=$((sw + $(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status" 2>/dev/null || echo 0)))
        ns=$((ns + $(awk '{print $1}' "$t/schedstat" 2>/dev/null || echo 0)))
    done
    echo "$sw $ns"
}
COUNTS=${COUNTS:-10}
for name in A B; do
    pid=${pids[$([ "$name" = A ] && echo 0 || echo 1)]}
    read -r sw0 cpu0 < <(arcad_counts "$pid")
    : >"$work/$name.perf"
    for _ in $(seq "$COUNTS"); do
        PAM_AUTHTOK=bench-pw PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" \
            /usr/bin/time -f %w -o "$work/$name.one" \
            "$work/fresh-c" txn "${name,,}" "$(cat "$work/$name/user")" 1 $((64 << 20)) 1 >/dev/null 2>&1
        cat "$work/$name.one" >>"$work/$name.perf"
    done
    read -r sw1 cpu1 < <(arcad_counts "$pid")
    echo "$name: per login ($COUNTS logins): login process $(sort -n "$work/$name.perf" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')" \
        "voluntary context switches (median); arcad $(awk -v a="$sw0" -v b="$sw1" -v n="$COUNTS" 'BEGIN {printf "%.1f", (b-a)/n}')" \
        "voluntary context switches, $(awk -v a="$cpu0" -v b="$cpu1" -v n="$COUNTS" 'BEGIN {printf "%.2f", (b-a)/1e6/n}') ms CPU;" \
        "login waits (all): $(sort -n "$work/$name.perf" | paste -sd' ')"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg); A=$1 B=$2"
