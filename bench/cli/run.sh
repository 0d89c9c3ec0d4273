#!/bin/bash
# bench/cli: whole-process median of reading one secret with `arca get` (kernel
# keyring and socket), `keyctl print <id>`, `secret-tool lookup` (gnome-keyring
# on a private D-Bus session bus) and `pass show` (a throwaway gpg key), with
# hyperfine. Runs as root; the vault belongs to a throwaway user (root's own
# keyring is shared with every other arcad on the machine), whose reads run in a
# session keyring linked to @u, as pam_keyinit sets up a login. Leaves nothing behind.
# Targets (issue 7): arca get <= 1.5x keyctl print, and >= 5x faster than secret-tool lookup.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-300}
for tool in hyperfine keyctl secret-tool gnome-keyring-daemon dbus-run-session pass gpg; do
    command -v $tool >/dev/null || { echo "bench/cli: $tool is missing (make deps)"; exit 1; }
done
swift build -c release --product arca >/dev/null
swift build -c release --product arcad >/dev/null
BIN=$(swift build -c release --show-bin-path)
WORK=$(mktemp -d)
chmod 755 "$WORK"
ARCAD_PID=
USER_NAME=arcabench$RANDOM
useradd -M -N -s /usr/sbin/nologin "$USER_NAME"
AS_USER="setpriv --reuid=$(id -u $USER_NAME) --regid=$(id -g $USER_NAME) --clear-groups"
cleanup() {
    ARCA_SOCKET=$WORK/arcad.sock "$BIN/arca" lock --all >/dev/null 2>&1 || true
    [ -n "$ARCAD_PID" ] && kill -KILL "$ARCAD_PID" 2>/dev/null || true
    userdel -f "$USER_NAME" 2>/dev/null || true
    gpgconf --homedir "$WORK/gnupg" --kill all >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# Arca: a vault with one item, loaded in the kernel.
"$BIN/arcad" --foreground --state-dir "$WORK/state" --socket "$WORK/arcad.sock" 2>"$WORK/arcad.log" &
ARCAD_PID=$!
export ARCA_SOCKET=$WORK/arcad.sock
for _ in $(seq 100); do [ -S "$ARCA_SOCKET" ] && break; sleep 0.05; done
install -d -o "$USER_NAME" -m 700 "$WORK/out"
printf 'bench-password\n' | $AS_USER "$BIN/arca" init --no-recovery-key
printf 'hunter2' | $AS_USER "$BIN/arca" add -s mail -a alice
RUNS=$RUNS BIN=$BIN WORK=$WORK/out $AS_USER keyctl session - bash -c '
    set -e
    keyctl link @u @s
    KEY=$(keyctl search @s user arca:genp:mail:alice)
    [ "$("$BIN/arca" get -s mail -a alice)" = hunter2 ] || { echo "bench/cli: arca get is wrong"; exit 1; }
    [ "$(keyctl pipe "$KEY")" = hunter2 ] || { echo "bench/cli: keyctl pipe is wrong"; exit 1; }
    hf() { local name=$1; shift
        hyperfine -N --style none --warmup 20 --runs "$RUNS" --export-json "$WORK/$name.json" "$@" >/dev/null 2>&1; }
    hf arca_get "$BIN/arca get -s mail -a alice"
    hf arca_socket "$BIN/arca get --no-kernel -s mail -a alice"
    hf arca_version "$BIN/arca version"
    hf keyctl "keyctl print $KEY"
' >/dev/null

# pass: a throwaway gpg key without passphrase.
export GNUPGHOME=$WORK/gnupg PASSWORD_STORE_DIR=$WORK/pass
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key bench@arca.invalid default default never 2>/dev/null
pass init bench@arca.invalid >/dev/null
printf 'hunter2\n' | pass insert -e bench/mail >/dev/null
[ "$(pass show bench/mail)" = hunter2 ] || { echo "bench/cli: pass show is wrong"; exit 1; }

hf() { # name, command...
    local name=$1; shift
    hyperfine -N --style none --warmup 20 --runs "$RUNS" --export-json "$WORK/$name.json" "$@" >/dev/null 2>&1
}
hf pass "pass show bench/mail"

# gnome-keyring on a private session bus, unlocked with an empty login keyring password.
export HOME=$WORK/home XDG_RUNTIME_DIR=$WORK/run XDG_DATA_HOME=$WORK/home/.local/share
mkdir -p "$HOME" -m 700 "$XDG_RUNTIME_DIR"
dbus-run-session -- bash -c '
    set -e
    eval "$(printf "\n" | gnome-keyring-daemon --unlock --components=secrets 2>/dev/null | grep "^[A-Z_]*=")"
    printf "hunter2" | secret-tool store --label=mail service mail account alice
    [ "$(secret-tool lookup service mail account alice)" = hunter2 ] || { echo "bench/cli: secret-tool is wrong"; exit 1; }
    hyperfine -N --style none --warmup 20 --runs '"$RUNS"' --export-json "'"$WORK"'/secret_tool.json" \
        "secret-tool lookup service mail account alice" >/dev/null 2>&1
' 2>/dev/null

python3 - "$WORK" "$(stat -c %s "$BIN/arca")" <<'PY'
import json, sys
work, size = sys.argv[1], int(sys.argv[2])
def median(name):
    path = f"{work}/out/{name}.json" if name.startswith(("arca", "keyctl")) else f"{work}/{name}.json"
    with open(path) as f:
        return json.load(f)["results"][0]["median"] * 1000
rows = [
    ("arca get (kernel keyring)", "arca_get"),
    ("arca get --no-kernel (socket)", "arca_socket"),
    ("arca version", "arca_version"),
    ("keyctl print <id>", "keyctl"),
    ("secret-tool lookup (gnome-keyring)", "secret_tool"),
    ("pass show (gpg)", "pass"),
]
m = {key: median(key) for _, key in rows}
print(f"{'whole process, median of runs':<36} {'ms':>8} {'x keyctl':>9}")
for label, key in rows:
    print(f"{label:<36} {m[key]:8.3f} {m[key] / m['keyctl']:9.2f}")
print(f"arca binary: {size / 1e6:.1f} MB (release, -static-executable)")
ok1 = m["arca_get"] <= 1.5 * m["keyctl"]
ok2 = m["secret_tool"] >= 5 * m["arca_get"]
print(f"target arca get <= 1.5x keyctl print: {m['arca_get'] / m['keyctl']:.2f}x {'met' if ok1 else 'MISSED'}")
print(f"target >= 5x faster than secret-tool: {m['secret_tool'] / m['arca_get']:.1f}x {'met' if ok2 else 'MISSED'}")
PY
