#!/bin/bash
# bench/backup: wall time of a whole backup and restore of N items with 2 KiB secrets
# (default N = 1000 and 10000), Arca beside a pass-style peer on the same secrets.
#   Arca:  `arca export --to F --passphrase` from a filled vault (arcad seals every item as
#          a signed record, Argon2id 64 MiB for the passphrase, 1 MiB pieces to the CLI, file
#          linked when whole), then `arca import --from F` into a fresh vault of a fresh arcad
#          (verify every record, merge in one transaction, publish to the kernel).
#   peer:  what `pass` users do (gnome-keyring has no backup command): the store, one file per
#          secret, `tar c | gpg --symmetric` (AES-256, gpg's default iterated-SHA S2K), and
#          `gpg --decrypt | tar x` into an empty directory. No merge, no per-item integrity.
# Runs as root (arcad), the vault belongs to a throwaway user; leaves nothing behind.
# Prints one line per N and tool, seconds with three decimals. Do not run beside a build.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZES=${SIZES:-"1000 10000"}
for tool in gpg tar python3 setpriv; do
    command -v $tool >/dev/null || { echo "bench/backup: $tool is missing (make deps)"; exit 1; }
done
BIN=${ARCA_BUILD:-$(swift build -c release --show-bin-path)}
WORK=$(mktemp -d)
chmod 755 "$WORK"
PIDS=()
USER_NAME=backup17b$RANDOM
useradd -M -N -s /usr/sbin/nologin "$USER_NAME"
USER_ID=$(id -u "$USER_NAME")
AS_USER="setpriv --reuid=$USER_ID --regid=$(id -g "$USER_NAME") --clear-groups"
PASSPHRASE="a long backup passphrase"
cleanup() {
    for dir in "$WORK"/arcad-*; do
        [ -S "$dir/arcad.sock" ] && ARCA_SOCKET=$dir/arcad.sock "$BIN/arca" lock --all >/dev/null 2>&1 || true
    done
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for dir in "$WORK"/arcad-*; do
        tag=$(printf %s "$dir/state" | b2sum -l 128 | cut -c1-12)
        keyctl search @u keyring "arcad:parked:$tag" 2>/dev/null | xargs -r keyctl invalidate 2>/dev/null || true
    done
    userdel -f "$USER_NAME" 2>/dev/null || true
    gpgconf --homedir "$WORK/gnupg" --kill all >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -m 700 "$WORK/gnupg"

# start_arcad NAME: a fresh arcad with its own state directory; its socket in $SOCKET.
start_arcad() {
    local dir=$WORK/arcad-$1
    mkdir -m 755 "$dir"
    "$BIN/arcad" --foreground --state-dir "$dir/state" --socket "$dir/arcad.sock" 2>"$dir/arcad.log" &
    PIDS+=($!)
    SOCKET=$dir/arcad.sock
    for _ in $(seq 250); do [ -S "$SOCKET" ] && break; sleep 0.02; done
    printf 'bench-password\n' | ARCA_SOCKET=$SOCKET $AS_USER "$BIN/arca" init --no-recovery-key >/dev/null
}

seconds() { python3 -c 'import sys, time; print(f"{time.monotonic():.6f}")'; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$2"; }

printf '%-8s %-34s %10s %10s %12s\n' items tool export_s import_s file_bytes
for n in $SIZES; do
    install -d -o "$USER_NAME" -m 700 "$WORK/home-$n"
    start_arcad "source-$n"
    source_socket=$SOCKET
    python3 bench/backup/fill.py "$source_socket" "$USER_ID" "$n" "$WORK/store-$n"
    start_arcad "target-$n"
    target_socket=$SOCKET
    file=$WORK/home-$n/arca.backup

    t0=$(seconds)
    printf '%s\n' "$PASSPHRASE" | ARCA_SOCKET=$source_socket $AS_USER "$BIN/arca" export --to "$file" --passphrase \
        >/dev/null
    t1=$(seconds)
    summary=$(printf '%s\n' "$PASSPHRASE" | ARCA_SOCKET=$target_socket $AS_USER "$BIN/arca" import --from "$file")
    t2=$(seconds)
    [ "$summary" = "added $n, replaced 0, unchanged 0" ] || { echo "bench/backup: import said: $summary"; exit 1; }
    printf '%-8s %-34s %10s %10s %12s\n' "$n" "arca export/import --passphrase" "$(elapsed "$t0" "$t1")" \
        "$(elapsed "$t1" "$t2")" "$(stat -c %s "$file")"

    gpg_file=$WORK/store-$n.tar.gpg
    restore=$WORK/restore-$n
    mkdir "$restore"
    t0=$(seconds)
    tar -C "$WORK/store-$n" -c . | gpg --homedir "$WORK/gnupg" --batch --quiet --yes --pinentry-mode loopback \
        --passphrase-fd 3 --symmetric --cipher-algo AES256 -o "$gpg_file" 3<<<"$PASSPHRASE"
    t1=$(seconds)
    gpg --homedir "$WORK/gnupg" --batch --quiet --pinentry-mode loopback --passphrase-fd 3 --decrypt "$gpg_file" \
        3<<<"$PASSPHRASE" | tar -C "$restore" -x
    t2=$(seconds)
    [ "$(ls "$restore" | wc -l)" = "$n" ] || { echo "bench/backup: gpg restore is incomplete"; exit 1; }
    printf '%-8s %-34s %10s %10s %12s\n' "$n" "tar | gpg --symmetric (pass-style)" "$(elapsed "$t0" "$t1")" \
        "$(elapsed "$t1" "$t2")" "$(stat -c %s "$gpg_file")"
done
