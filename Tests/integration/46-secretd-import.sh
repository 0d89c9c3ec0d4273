#!/bin/bash
# arca import --from secret-service: a real gnome-keyring-daemon on a private session bus
# (dbus-run-session), its login keyring unlocked and seeded through libsecret with N items
# (labels, unicode/whitespace/punctuation attributes, secrets, some empty), imported into a
# throwaway user's vault in a real arcad. Every item compared one by one (label,
# attributes, secret, content type) as arca-secretd then serves them; --dry-run writes
# nothing; a re-run imports 0; gnome-keyring still holds everything; --json exact.
set -u
build=${ARCA_BUILD:?set ARCA_BUILD to the build directory}
here=$(cd "$(dirname "$0")" && pwd)
pass=0; fail=0
. "$here/lib-arcad.bash"
[ "$(id -u)" -eq 0 ] || { echo "FAIL must run as root"; exit 1; }
for b in arcad arca arca-secretd arca-keyring-probe; do [ -x "$build/$b" ] || { echo "FAIL $build/$b missing"; exit 1; }; done
for t in gnome-keyring-daemon dbus-run-session gdbus; do command -v $t >/dev/null || { echo "FAIL $t missing"; exit 1; }; done
# 1,000 items as the issue asks: gnome-keyring takes 70-90 s to store them on a loaded
# 2-core machine (the whole script ~2.3 min); ARCA_IMPORT_ITEMS=N for a quicker run.
count=${ARCA_IMPORT_ITEMS:-1000}

work=$(mktemp -d /tmp/arca-import.XXXXXX); chmod 755 "$work"
user=import$$
cleanup() {
    [ -n "${arcad_pid:-}" ] && { "$build/arca" --socket "$work/arcad.sock" lock --all >/dev/null 2>&1; kill "$arcad_pid"; wait "$arcad_pid" 2>/dev/null; }
    id -u "$user" >/dev/null 2>&1 && { "$build/arca-keyring-probe" purge "$(id -u "$user")" >/dev/null 2>&1; userdel -f "$user"; }
    drop_parked
    rm -rf "$work"
}
trap cleanup EXIT
useradd -M -N -s /usr/sbin/nologin "$user" || exit 1
U=$(id -u "$user"); G=$(id -g "$user")
mkdir "$work/home" && chown "$U:$G" "$work/home"
start_arcad
as_user() {
    setpriv --reuid="$U" --regid="$G" --clear-groups \
        env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$work/home" XDG_RUNTIME_DIR="$work/home" ARCA_SOCKET="$work/arcad.sock" "$@"
}
check "vault created" "" as_user "$build/arca" init --no-recovery-key <<<"pw"

# in_bus SCRIPT: runs SCRIPT (bash) as the user on a fresh private session bus.
in_bus() {
    printf '%s\n' "B=$build; I=$here/secretd-import.py; N=$count; H=$work/home" \
        'waitname() { for _ in $(seq 200); do gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets 2>/dev/null | grep -q true && return; sleep 0.05; done; }' \
        'gkpid() { gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.secrets 2>/dev/null | sed -n "s/.*uint32 \([0-9]*\).*/\1/p"; }' \
        "$1" 'p=$(gkpid); [ -n "$p" ] && kill $p' >"$work/home/run.sh"
    as_user timeout 600 dbus-run-session -- bash "$work/home/run.sh" 2>&1 | grep -v '^dbus-daemon\['
}
# gnome-keyring with its login keyring created (first time) or unlocked by the password on stdin.
gk='printf gk-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; waitname'

check "usage: --dry-run with a backup file (not this import's)" "rc=2" as_user sh -c \
    "'$build/arca' import --from /tmp/backup.arca --dry-run >/dev/null 2>&1; echo rc=\$?"
check "no provider on the bus: a clear message, exit 1" "arca-secretd: import: nothing owns org.freedesktop.secrets on the session bus: start the provider to import from
rc=1
arca-secretd: import: nothing owns org.example.Nobody on the session bus: start the provider to import from
rc=1" in_bus '$B/arca import --from secret-service; echo rc=$?
$B/arca import --from secret-service --bus-name org.example.Nobody --dry-run; echo rc=$?'

start=$(date +%s)
check "gnome-keyring seeded with $count items" "$count" in_bus "$gk"'
/usr/bin/python3 $I seed $N && /usr/bin/python3 $I dump >$H/source-before.txt; wc -l <$H/source-before.txt'
echo "     (seeding took $(( $(date +%s) - start )) s)"

login=/org/freedesktop/secrets/collection/login
start=$(date +%s)
check "--dry-run counts, writes nothing; import; re-run imports 0; the source unchanged" \
"{\"collection\":\"$login\",\"dry_run\":true,\"imported\":$count,\"skipped\":0,\"failed\":[]} rc=0
{\"collection\":\"$login\",\"dry_run\":false,\"imported\":$count,\"skipped\":0,\"failed\":[]} rc=0
imported 0, skipped $count already present, failed 0 (from $login) rc=0
source unchanged: yes" in_bus "$gk"'
echo "$($B/arca import --from secret-service --dry-run --json) rc=$?"
echo "$($B/arca import --from=secret-service --json) rc=$?"
echo "$($B/arca import --from secret-service --collection login) rc=$?"
/usr/bin/python3 $I dump >$H/source-after.txt
cmp -s $H/source-before.txt $H/source-after.txt && echo "source unchanged: yes" || echo "source unchanged: NO"'
echo "     (dry run, import and re-run of $count items took $(( $(date +%s) - start )) s)"

# Arca's side, served by arca-secretd on another bus: the same items, one by one.
check "every item in Arca: label, attributes, secret, content type" "$count identical" in_bus '
$B/arca-secretd 2>>$H/secretd.log & sd=$!; waitname
/usr/bin/python3 $I dump >$H/arca.txt; kill $sd
if cmp -s $H/source-before.txt $H/arca.txt; then echo "$(wc -l <$H/arca.txt) identical"; else diff $H/source-before.txt $H/arca.txt | head -5; fi'
# The dumps hold the secrets themselves (so the comparison above cannot pass on empty ones).
check "the dumps hold the secrets: $(( count - (count + 49) / 50 )) set, $(( (count + 49) / 50 )) empty" \
    "$(( count - (count + 49) / 50 )) $(( (count + 49) / 50 ))" \
    sh -c "echo \$(grep -c '\"secret\": \"pässwörd ' $work/home/arca.txt) \$(grep -c '\"secret\": \"\"' $work/home/arca.txt)"
# `arca --socket PATH import ...` (the socket before the verb) is handed over with its socket:
# with ARCA_SOCKET aimed at nothing, only the given socket reaches this arcad.
check "the socket given before the verb goes along to arca-secretd" \
"{\"collection\":\"$login\",\"dry_run\":true,\"imported\":0,\"skipped\":$count,\"failed\":[]} rc=0" in_bus "$gk"'
s=$ARCA_SOCKET
echo "$(ARCA_SOCKET=/nonexistent/arcad.sock $B/arca --socket "$s" import --from secret-service --dry-run --json) rc=$?"'
check "an item changed at the source is imported as a new item; the rest skipped" \
"{\"collection\":\"$login\",\"dry_run\":false,\"imported\":1,\"skipped\":$((count - 1)),\"failed\":[]}" in_bus "$gk"'
printf changed | secret-tool store --label="Item №1 — 1" service "sérvice 1 ✓" user "zoë;=,\"1\" 	" n 1 xdg:schema org.example.Import
$B/arca import --from secret-service --json'
check "an unknown collection: a clear message, exit 1" "arca-secretd: import: the provider has no collection nosuch
rc=1" in_bus "$gk"'
$B/arca import --from secret-service --collection nosuch; echo rc=$?'
# A locked gnome-keyring: the import unlocks through gnome-keyring's own prompt, which asks
# the system prompter on the bus (a test one speaking gcr's interface, as in 45).
check "locked source: a dismissed prompt imports nothing (exit 1); an answered one unlocks" \
"arca-secretd: import: unlocking $login was dismissed at the provider's prompt; nothing imported
rc=1
{\"collection\":\"$login\",\"dry_run\":false,\"imported\":0,\"skipped\":$count,\"failed\":[]} rc=0" in_bus "$gk"'
/usr/bin/python3 '"$here"'/test-prompter.py - gk-pw >$H/prompter.log 2>&1 & pp=$!
for _ in $(seq 200); do grep -q ready $H/prompter.log 2>/dev/null && break; sleep 0.05; done
gdbus call --session -d org.freedesktop.secrets -o /org/freedesktop/secrets -m org.freedesktop.Secret.Service.Lock "[\"/org/freedesktop/secrets/collection/login\"]" >/dev/null
$B/arca import --from secret-service; echo rc=$?
echo "$($B/arca import --from secret-service --json) rc=$?"
kill $pp'
check "a locked Arca vault takes nothing, exit 1" "arca-secretd: import: Arca's login collection is locked: run arca unlock first
rc=1" in_bus "$gk"'
$B/arca lock --all; $B/arca import --from secret-service; echo rc=$?'

echo "46-secretd-import: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
