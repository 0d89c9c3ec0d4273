#!/bin/bash
# arca-secretd under a real dbus-daemon (dbus-run-session) with a real arcad and a
# throwaway user: secret-tool, libsecret through python3-gi, raw D-Bus clients doing
# Chromium's and go-keyring's calls, DH sessions (1-byte and 128-byte client keys, a
# shared secret with a leading zero, bad keys), sessions owned by their client,
# locked behaviour, ItemCreated for a change made by another client, and the name
# conflict with a running gnome-keyring.
set -u
build=${ARCA_BUILD:?set ARCA_BUILD to the build directory}
here=$(cd "$(dirname "$0")" && pwd)
pass=0; fail=0
. "$here/lib-arcad.bash"
[ "$(id -u)" -eq 0 ] || { echo "FAIL must run as root"; exit 1; }
for b in arcad arca arca-secretd arcad-probe; do [ -x "$build/$b" ] || { echo "FAIL $build/$b missing"; exit 1; }; done

work=$(mktemp -d /tmp/arca-secretd.XXXXXX); chmod 755 "$work"
user=secretd$$
cleanup() {
    [ -n "${arcad_pid:-}" ] && { "$build/arca" --socket "$work/arcad.sock" lock --all >/dev/null 2>&1; kill "$arcad_pid"; wait "$arcad_pid" 2>/dev/null; }
    id -u "$user" >/dev/null 2>&1 && { "$build/arca-keyring-probe" purge "$(id -u "$user")" >/dev/null 2>&1; userdel -f "$user"; }
    drop_parked  # this arcad never comes back: its ring in root's @u goes too
    rm -rf "$work"
}
trap cleanup EXIT
useradd -M -N -s /usr/sbin/nologin "$user" || exit 1
U=$(id -u "$user"); G=$(id -g "$user")
mkdir "$work/home" && chown "$U:$G" "$work/home"
printf 'secret_service_class = when-unlocked\n' >"$work/arca.conf"
"$build/arcad" --foreground --config "$work/arca.conf" --state-dir "$work/state" --socket "$work/arcad.sock" \
    2>"$work/arcad.log" &
arcad_pid=$!
for _ in $(seq 250); do [ -S "$work/arcad.sock" ] && break; sleep 0.02; done
as_user() {
    setpriv --reuid="$U" --regid="$G" --clear-groups \
        env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$work/home" XDG_RUNTIME_DIR="$work/home" ARCA_SOCKET="$work/arcad.sock" "$@"
}
check "vault created" "" as_user "$build/arca" init --no-recovery-key <<<"pw"

# Each session: a private session bus with arca-secretd on it, then the commands.
in_bus() { # in_bus SCRIPT: runs SCRIPT (bash) as the user on a fresh bus with arca-secretd
    printf '%s\n' "B=$build; C=$here/secretd-client.py; P=$here/test-prompter.py; S=$work/arcad.sock; U=$U" \
        "\$B/arca-secretd 2>>$work/home/secretd.log & sd=\$!" \
        'for _ in $(seq 100); do gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets 2>/dev/null | grep -q true && break; sleep 0.05; done' \
        "$1" 'kill $sd' >"$work/home/run.sh"
    as_user timeout 60 dbus-run-session -- bash "$work/home/run.sh" 2>&1 | grep -v '^dbus-daemon\['
}

check "secret-tool store, lookup (unicode, spaces, punctuation)" "hunter2 ✓" in_bus '
printf "hunter2 ✓" | secret-tool store --label="Tëst  item" service "git  hub" user "Zoë;=,\"x"
secret-tool lookup service "git  hub" user "Zoë;=,\"x"'
check "secret-tool lookup is exact (case, whitespace)" "rc=1
rc=1" in_bus '
secret-tool lookup service "Git  hub"; echo rc=$?
secret-tool lookup service "git hub"; echo rc=$?'
check "secret-tool search --all" "attribute.service = git  hub
attribute.user = Zoë;=,\"x
label = Tëst  item
secret = hunter2 ✓" in_bus 'secret-tool search --all service "git  hub" 2>&1 | grep -v "^\[\|created\|modified" | LC_ALL=C sort'
check "secret-tool clear" "gone rc=1" in_bus '
secret-tool clear user "Zoë;=,\"x"; printf "gone "; secret-tool lookup service "git  hub"; echo rc=$?'
check "libsecret (python3-gi)" "store: True
lookup: pässword
lookup wrong case: None
search: 1 Example ✓ [('port', '443'), ('user', 'zoë'), ('xdg:schema', 'org.example.Arca')] pässword False True
collections: ['Login', 'Session']
clear: True
lookup after clear: None" in_bus '/usr/bin/python3 $C libsecret'
check "Chromium's calls" "ReadAlias default: /org/freedesktop/secrets/collection/login
Label: Login
Unlock: ['/org/freedesktop/secrets/collection/login'] /
CreateItem prompt: /
SearchItems: [True] 0
GetSecret: peanuts text/plain
replace=false twin: True 2" in_bus '/usr/bin/python3 $C chromium'
check "go-keyring's calls" "Unlock exact: True /
replace=true same item: True
SearchItems: 1
GetSecret: new
Delete prompt: /
after Delete: org.freedesktop.DBus.Error.UnknownObject
unknown algorithm: org.freedesktop.DBus.Error.NotSupported" in_bus '/usr/bin/python3 $C gokeyring'
check "DH: one-byte client key" "server key bytes: 128 leading zero: n/a
round trip: ünïcode ✓ 16" in_bus '/usr/bin/python3 $C dh 1'
check "DH: 128-byte client key, shared secret with a leading zero" "server key bytes: 128 leading zero: True
round trip: ünïcode ✓ 16" in_bus '/usr/bin/python3 $C dh 128 leading-zero'
check "DH: bad client keys" "empty: org.freedesktop.DBus.Error.InvalidArgs
129 bytes: org.freedesktop.DBus.Error.InvalidArgs
one: org.freedesktop.DBus.Error.InvalidArgs
zero: org.freedesktop.DBus.Error.InvalidArgs
p-1: org.freedesktop.DBus.Error.InvalidArgs
p: org.freedesktop.DBus.Error.InvalidArgs
variant of wrong type: org.freedesktop.DBus.Error.InvalidArgs" in_bus '/usr/bin/python3 $C badkeys'
check "attack: another client's session is NoSession; a client's sessions go with it" \
"GetSecret with another client's session: org.freedesktop.Secret.Error.NoSession
CreateItem with another client's session: org.freedesktop.Secret.Error.NoSession
GetSecrets with another client's session: org.freedesktop.Secret.Error.NoSession
session visible while its owner is connected: ok
after its owner disconnected: org.freedesktop.DBus.Error.UnknownObject
GetSecrets with my session: 1" in_bus '/usr/bin/python3 $C sessions'
# 24 CreateItem calls without waiting for replies (one more with 65 attributes, past the
# protocol's 64: refused before it reaches arcad), pipelined by arca-secretd.
check "CreateItem calls sent at once: each answered with its own item; a refused one fails alone" \
"answered: 24 distinct: 24 prompts: ['/']
refused: {-1: 'org.freedesktop.DBus.Error.Failed'}
found: 24 locked: 0 same paths: True
each reply names its own item: True" in_bus '/usr/bin/python3 $C burst 24'
# GetSecret calls sent at once (libsecret's search --all sends one per item), read from
# arcad together by arca-secretd: a write between two reads of one item still splits them.
check "GetSecret calls sent at once: each its own secret; a SetSecret between two reads splits them" \
"items: 24 each answered with its own secret: True
GetSecret, SetSecret, GetSecret of one item: True b'set' b'changed'
another client's session: org.freedesktop.Secret.Error.NoSession" in_bus '/usr/bin/python3 $C reads'
# Three 900 KiB secrets do not fit in one 2 MiB reply of arcad: the batch is split, and
# each caller still gets exactly its own answers.
check "GetSecret of 900 KiB secrets by two clients at once: each exact; a deleted item fails alone (UnknownObject)" \
"client a, exact secrets: [True, True, True]
client b, exact secrets: [True, True]
client b, deleted item: org.freedesktop.DBus.Error.UnknownObject" in_bus '/usr/bin/python3 $C bigreads'
check "ItemCreated for an item another client adds through arcad" "ItemCreated: {'origin': 'probe'}" \
    in_bus '/usr/bin/python3 $C listen $B/arcad-probe $S $U'

# Locked: new items are when-unlocked here (arca.conf); a screen lock keeps the index key.
check "store an item to lock" "" in_bus '/usr/bin/python3 $C locked store'
check "attack: a screen lock by another client reaches a running arca-secretd at once" "Locked: False Label: locked
Locked: True Label: -" in_bus '
/usr/bin/python3 $C lockedprop
$B/arca lock; sleep 0.3
/usr/bin/python3 $C lockedprop
$B/arca unlock <<<pw'
check "the collection's label is kept in the vault, not in arca-secretd's memory" "set: Wörk 🔑
next arca-secretd: Wörk 🔑" in_bus '
gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets/collection/login -m org.freedesktop.DBus.Properties.Set org.freedesktop.Secret.Collection Label "<\"Wörk 🔑\">" >/dev/null
echo "set: $(/usr/bin/python3 $C label)"
kill $sd; wait $sd 2>/dev/null; $B/arca-secretd 2>>$HOME/secretd.log & sd=$!
for _ in $(seq 100); do gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets 2>/dev/null | grep -q true && break; sleep 0.05; done
echo "next arca-secretd: $(/usr/bin/python3 $C label)"'
check "attack: with secret_service_class = when-unlocked, a screen lock locks the collection" "before: False
after arca lock: True" in_bus '
echo "before: $(/usr/bin/python3 $C collocked)"
$B/arca lock; sleep 0.3
echo "after arca lock: $(/usr/bin/python3 $C collocked)"
$B/arca unlock <<<pw'
check "arca lock" "" as_user "$build/arca" lock
check "attack: locked items are listed as locked, never read" "SearchItems: 0 unlocked, 1 locked
Item Locked: True
GetSecret: org.freedesktop.Secret.Error.IsLocked
GetSecrets leaves it out: 0
GetAll: ['Attributes', 'Created', 'Label', 'Locked', 'Modified']
Unlock: 0 prompt
Prompt completed: [(True, [])]
prompt gone: org.freedesktop.DBus.Error.UnknownObject" in_bus '/usr/bin/python3 $C locked check'
check "arca lock --all" "" as_user "$build/arca" lock --all
check "attack: nothing held: IsLocked, never not found" "SearchItems: org.freedesktop.Secret.Error.IsLocked
GetAll on the collection: ok
Unlock: 0 prompt
Prompt completed: [(True, [])]
prompt gone: org.freedesktop.DBus.Error.UnknownObject" in_bus '/usr/bin/python3 $C locked check'
check "secret-tool lookup while locked fails" "secret-tool: the collection or item is locked
rc=1" in_bus 'secret-tool lookup lock test; echo rc=$?'

# The system prompter (a test one on the bus, speaking gcr's interface and secret exchange).
with_prompter() { # with_prompter ANSWERS CLIENT-ARGS
    printf '%s\n' "/usr/bin/python3 \$P $1 >\$HOME/prompter.log 2>&1 & pp=\$!" \
        'for _ in $(seq 200); do grep -q ready $HOME/prompter.log 2>/dev/null && break; sleep 0.05; done' \
        "/usr/bin/python3 \$C prompt $2" \
        'sleep 0.3; grep -v "^ready" $HOME/prompter.log | sed "s/^/prompter: /"; kill $pp' >"$work/home/prompt.sh"
    in_bus '. $HOME/prompt.sh'
}
check "prompt with a system prompter: a wrong password is asked again with a warning; the right one unlocks" \
"Locked before: True
Completed: [(False, ['/org/freedesktop/secrets/collection/login'])]
Locked after: False
prompter: BeginPrompting
prompter: PerformPrompt password warning: -
prompter: PerformPrompt password warning: The password was not right. Try again.
prompter: StopPrompting" with_prompter "wrong pw" ""
check "arca lock --all" "" as_user "$build/arca" lock --all
check "prompt cancelled in the prompter: dismissed, still locked" "Locked before: True
Completed: [(True, [])]
Locked after: True
prompter: BeginPrompting
prompter: PerformPrompt password warning: -
prompter: StopPrompting" with_prompter "-" ""
check "attack: another client answering the prompter's callback is refused and unlocks nothing" "Locked before: True
PromptReady from another client: org.freedesktop.DBus.Error.UnknownObject
Locked after the forged answer: True
Completed: [(True, [])]
Locked after: True
prompter: BeginPrompting
prompter: PerformPrompt password warning: -
prompter: StopPrompting" with_prompter "hold" attack
check "arca unlock" "" as_user "$build/arca" unlock <<<"pw"

# Name ownership: a running gnome-keyring keeps the name; --replace asks for it.
check "name conflict with gnome-keyring: clear message, exit 1" "rc=1 owner named: yes" in_bus '
kill $sd; wait $sd 2>/dev/null
gnome-keyring-daemon --start --foreground --components=secrets >/dev/null 2>&1 & gk=$!
for _ in $(seq 100); do gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets 2>/dev/null | grep -q true && break; sleep 0.05; done
msg=$($B/arca-secretd 2>&1); rc=$?
case "$msg" in *"org.freedesktop.secrets is owned by pid $gk (/usr/bin/gnome-keyring-daemon)"*) named=yes;; *) named="no: $msg";; esac
echo "rc=$rc owner named: $named"; kill $gk; sd=$$'
check "--replace takes the name from an arca-secretd; the old one exits on NameLost" "old: rc=0 lost org.freedesktop.secrets to another provider
new serves: hunter3" in_bus '
$B/arca-secretd --replace 2>$HOME/new.log & new=$!
wait $sd; echo "old: rc=$? $(tail -1 $HOME/secretd.log | sed "s/^arca-secretd: //")"
printf hunter3 | secret-tool store --label=r k replace; echo "new serves: $(secret-tool lookup k replace)"; sd=$new'

echo "45-secretd: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
