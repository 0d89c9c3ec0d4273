#!/usr/bin/env bash
# Sync (issue 17) with the release binaries and real Syncthing on loopback: three instances
# (discovery, relays, NAT, reporting off; REST on loopback ports with API keys; devices at
# tcp://127.0.0.1:PORT), three arcads with their own state dirs and sockets, three throwaway
# users standing for one person's three machines A, B, C, each running `arca sync run`.
# Covers: init/join/approve with the 6-digit code (a wrong code refused; on a terminal, "n" at
# the y/N prompt approves nothing and "y" approves); status --json; an item added on A
# readable from B's and C's kernel keyrings; ThisDeviceOnly and non-synchronizable items never
# leave A (nothing in clear in any synced folder); a byte flipped in a record refused and
# reported, then replaced by the author; an old head restored reported as a rollback; an
# offline device catching up; B stopped while A edits and C deletes an item: all three converge
# with one sibling; C's clock 10 minutes ahead (arcad's sync_clock_offset_ms) flagged; C
# removed: the epoch rotates and C's later records are refused. The Syncthing mesh: every member
# shares with every other (A's Syncthing stopped, B's item reaches C); a removed device is
# unshared and deleted from the others' Syncthing. B away past the sync horizon (arcads
# restarted 31 days on): A collects its delete and publishes a snapshot, B's offline edit
# becomes one conflict sibling, never a resurrection.
set -uo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
[ "$(id -u)" -eq 0 ] || { echo "FAIL must run as root"; exit 1; }
for b in arcad arca arca-sync arca-keyring-probe; do [ -x "$build/$b" ] || { echo "FAIL $build/$b missing"; exit 1; }; done
command -v syncthing >/dev/null || { echo "FAIL syncthing is not installed (make deps)"; exit 1; }
work=$(mktemp -d /tmp/arca-sync.XXXXXX)
chmod 755 "$work"
tag=$RANDOM
pass=0 fail=0
source "$(dirname "$0")/lib-arcad.bash"
source "$(dirname "$0")/lib-sync.bash"
trap "sync_cleanup 2>/dev/null" EXIT

# eventually NAME EXPECTED COMMAND...: polls COMMAND for up to 30 s, then checks it.
eventually() {
    local name=$1 expected=$2; shift 2
    for _ in $(seq 300); do [ "$("$@" 2>&1)" = "$expected" ] && break; sleep 0.1; done
    check "$name" "$expected" "$@"
}
sync_as() { local i=$1; shift; as_user "$i" "$build/arca" sync "$@" --syncthing-home "$work/u$i/home/st" --folder "$work/u$i/sync"; }
sync_as_init() { as_user "$1" "$build/arca" sync init; }
rc() { "$@" >/dev/null 2>&1; echo $?; }
arca_as() { local i=$1; shift; as_user "$i" "$build/arca" "$@"; }
# kernel I SERVICE ACCOUNT: what user I reads from the kernel (its @u, as a login session links it).
kernel() {
    as_user "$1" keyctl session - sh -c "keyctl link @u @s >/dev/null; keyctl pipe %user:arca:genp:$2:$3:sync 2>/dev/null || echo none" 2>&1 |
        grep -v '^Joined session keyring'
}
start_sync_agent() {
    spawn_as_user "$1" "$build/arca-sync" run --syncthing-home "$work/u$1/home/st" --folder "$work/u$1/sync" \
        2>>"$work/u$1/agent.log"
    agent_pid[$1]=$spawned
}

# --- three machines: users, arcads, vaults, Syncthing ---
sync_ports
sync_users "sa$tag"
# C's clock runs 10 minutes ahead (static binaries ignore LD_PRELOAD: arcad's own offset setting).
printf 'sync_clock_offset_ms = 600000\n' >"$work/u2/arca.conf"
sync_arcads
for i in 0 1 2; do
    check "vault $i created" "0" rc sh -c "printf 'pw$i\n' | setpriv --reuid=$(id -u "${st_user[$i]}") \
        --regid=$(id -g "${st_user[$i]}") --clear-groups env ARCA_SOCKET=$work/u$i/arcad.sock $build/arca init --no-recovery-key"
    st_configure "$i"
done
for i in 0 1 2; do st_start "$i" || echo "FAIL syncthing $i did not start"; done

# --- init on A, join B and C, approve them on A ---
check "init on A" "0" rc sync_as_init 0
address_a=$(sync_as 0 status | sed -n 's/^this device: //p')
check "status prints A as ID@SYNCTHING-ID" "${st_devid[0]}" sh -c "printf %s '$address_a' | cut -d@ -f2"
# approve_tty I ADDRESS ANSWER: approve on a terminal (script(1) gives it one), ANSWER typed at its y/N prompt.
approve_tty() {
    printf '%s\n' "$3" | as_user 0 script -qec "$build/arca sync approve $2 --address tcp://127.0.0.1:${st_listen[$1]} \
        --syncthing-home $work/u0/home/st --folder $work/u0/sync" /dev/null
}
# json_status I EXPR: a Python expression over instance I's `status --json` (d).
json_status() { sync_as "$1" status --json | python3 -c "import json, sys; d = json.load(sys.stdin); print($2)"; }
declare -a arca_id=()
arca_id[0]=${address_a%@*}
for i in 1 2; do
    out=$(sync_as "$i" join "$address_a" --address "tcp://127.0.0.1:${st_listen[0]}")
    address=$(printf '%s\n' "$out" | sed -n 's/^this device: //p')
    arca_id[$i]=${address%@*}
    code=$(printf '%s\n' "$out" | sed -n 's/^verification code: //p' | tr -d ' ')
    check "join on ${letters[$i]} prints a 6-digit code" "6" sh -c "printf %s '$code' | wc -c"
    check "approve refuses a wrong code (exit 6)" "6" rc sync_as 0 approve "$address" \
        --address "tcp://127.0.0.1:${st_listen[$i]}" --sas 000001 --yes
    if [ "$i" -eq 1 ]; then
        prompt=$(approve_tty "$i" "$address" n; echo "rc=$?")
        check "approve on a terminal shows B's code and asks" "1" sh -c "printf '%s' '$prompt' | \
            grep -c 'verification code: ${code:0:3} ${code:3}'"
        check "answered n: exit 6, nothing approved" "rc=6" sh -c "printf '%s' '$prompt' | tail -1 | tr -d '\r'"
        check "answered n: A's circle is A alone" "1" json_status 0 'len(d["devices"])'
        check "approve on a terminal, answered y: exit 0" "0" rc approve_tty "$i" "$address" y
        check "answered y: B is in A's circle" "2" json_status 0 'len(d["devices"])'
    else
        check "approve ${letters[$i]} on A with its code" "0" rc sync_as 0 approve "$address" \
            --address "tcp://127.0.0.1:${st_listen[$i]}" --sas "$code" --yes
    fi
done
ids_sorted=$(printf '%s\n' "${arca_id[@]}" | sort | tr '\n' ' ' | sed 's/ $//')
check "status --json on A: device, address, folder, epoch, seq" \
    "${arca_id[0]} $address_a $work/u0/sync 0 0 0 0 []" \
    json_status 0 'd["device"], d["address"], d["folder"], d["epoch"], d["seq"], d["queued"], d["conflicts"], d["reports"]'
check "status --json on A: the three devices, all active" "$ids_sorted True True True" \
    json_status 0 '" ".join([x["id"] for x in d["devices"]] + [str(x["active"]) for x in d["devices"]])'
for i in 0 1 2; do start_sync_agent "$i"; done

# --- an item added on A is readable from B's and C's kernel keyrings ---
printf 's3cret-sync' | arca_as 0 add -s "mail$tag" -a alice --synchronizable >/dev/null
eventually "added on A: readable from B's kernel keyring" "s3cret-sync" kernel 1 "mail$tag" alice
eventually "added on A: readable from C's kernel keyring" "s3cret-sync" kernel 2 "mail$tag" alice

# --- what never leaves A ---
printf 'local-only-1' | arca_as 0 add -s "local$tag" -a tdo --synchronizable --accessible when-unlocked-this-device-only \
    >/dev/null 2>&1
printf 'local-only-2' | arca_as 0 add -s "plain$tag" -a nosync >/dev/null
printf 'barrier' | arca_as 0 add -s "barrier$tag" -a b --synchronizable >/dev/null
eventually "a later synchronizable item arrives on B" "barrier" kernel 1 "barrier$tag" b
check "ThisDeviceOnly item: not on B" "none" kernel 1 "local$tag" tdo
check "non-synchronizable item: not on B" "none" kernel 1 "plain$tag" nosync
for needle in s3cret-sync local-only-1 local-only-2 barrier "mail$tag" alice "local$tag" "plain$tag" nosync; do
    check "no '$needle' in clear in any synced folder" "0" sh -c "grep -rac -- '$needle' $work/u0/sync $work/u1/sync $work/u2/sync | awk -F: '{s+=\$2} END {print s+0}'"
done
check "record files are 0600 in 0700 directories" "600 700" sh -c \
    "stat -c %a \$(ls -d $work/u0/sync/*/records/*.rec | head -1) | tr '\n' ' '; stat -c %a \$(ls -d $work/u0/sync/*/records | head -1)"

# --- a byte flipped in a record is refused and reported; the log recovers ---
dir_a=$(ls -d "$work"/u0/sync/*/records | head -1)
dev_a=$(basename "$(dirname "$dir_a")")
last=$(ls "$dir_a" | tail -1)
next=$(printf '%020d.rec' $((10#${last%.rec} + 1)))
as_user 0 python3 -c '
import sys
data = bytearray(open(sys.argv[1], "rb").read()); data[len(data) // 2] ^= 1
open(sys.argv[2], "wb").write(data)' "$dir_a/$last" "$dir_a/.syncthing.flip.tmp"
as_user 0 mv "$dir_a/.syncthing.flip.tmp" "$dir_a/$next"
st_api 0 POST "/rest/db/scan?folder=arca-sync&sub=$dev_a" >/dev/null
reported() { sync_as "$1" status | grep -c -- "$2" | sed 's/^[1-9][0-9]*$/yes/;s/^0$/no/'; }
eventually "a flipped byte: B refuses the record and reports it" "yes" reported 1 "forged or altered"
printf 'after-flip' | arca_as 0 add -s "next$tag" -a n --synchronizable >/dev/null
eventually "the author's next record replaces the altered file: B applies it" "after-flip" kernel 1 "next$tag" n

# --- an old head restored is detected as a rollback ---
as_user 0 cp "$work/u0/sync/$dev_a/head" "$work/u0/home/old-head"
printf 'newer' | arca_as 0 add -s "newer$tag" -a n --synchronizable >/dev/null
eventually "B has the newer item" "newer" kernel 1 "newer$tag" n
as_user 0 sh -c "cat '$work/u0/home/old-head' >'$work/u0/sync/$dev_a/.syncthing.head.tmp' && mv '$work/u0/sync/$dev_a/.syncthing.head.tmp' '$work/u0/sync/$dev_a/head'"
st_api 0 POST "/rest/db/scan?folder=arca-sync&sub=$dev_a" >/dev/null
eventually "an old head restored: B reports a rollback" "yes" reported 1 "rolled back"

# --- an offline device catches up ---
kill -STOP -- "-${st_pid[2]}" "-${agent_pid[2]}"
printf 'while-away' | arca_as 0 add -s "away$tag" -a n --synchronizable >/dev/null
eventually "B gets the item while C is offline" "while-away" kernel 1 "away$tag" n
check "C (stopped) does not have it" "none" kernel 2 "away$tag" n
kill -CONT -- "-${st_pid[2]}" "-${agent_pid[2]}"
eventually "C catches up when it comes back" "while-away" kernel 2 "away$tag" n

# --- B stopped; A edits an item while C deletes it; all converge with one sibling ---
printf 'shared-v1' | arca_as 0 add -s "shared$tag" -a s --synchronizable >/dev/null
eventually "the shared item reaches C" "shared-v1" kernel 2 "shared$tag" s
eventually "the shared item reaches B" "shared-v1" kernel 1 "shared$tag" s
kill -STOP -- "-${st_pid[1]}" "-${agent_pid[1]}" "-${agent_pid[0]}" "-${agent_pid[2]}"
check "A edits the item (its agent stopped)" "0" rc sh -c "printf shared-v2 | setpriv --reuid=$(id -u "${st_user[0]}") \
    --regid=$(id -g "${st_user[0]}") --clear-groups env ARCA_SOCKET=$work/u0/arcad.sock $build/arca update -s shared$tag -a s --synchronizable"
arca_as 2 delete -s "shared$tag" -a s --synchronizable >/dev/null 2>&1
kill -CONT -- "-${agent_pid[0]}" "-${agent_pid[2]}"
sleep 3
kill -CONT -- "-${st_pid[1]}" "-${agent_pid[1]}"
conflicts() { arca_as "$1" find --conflicts 2>&1 | grep -c '^ *version'; }
both_conflicts() { echo "$(conflicts 0) $(conflicts 2)"; }
converged() {
    local a b c; a=$(kernel 0 "shared$tag" s); b=$(kernel 1 "shared$tag" s); c=$(kernel 2 "shared$tag" s)
    [ "$a" = "$b" ] && [ "$b" = "$c" ] && echo same || echo "differ: $a / $b / $c"
}
listings() {
    local a b c; a=$(arca_as 0 find --conflicts 2>&1); b=$(arca_as 1 find --conflicts 2>&1); c=$(arca_as 2 find --conflicts 2>&1)
    [ "$a" = "$b" ] && [ "$b" = "$c" ] && echo same || printf 'differ:\n%s\n--\n%s\n--\n%s\n' "$a" "$b" "$c"
}
eventually "A and C see two versions (winner and one sibling)" "2 2" both_conflicts
eventually "B, resumed, sees the same two versions" "2" conflicts 1
eventually "all three converge to the same value" "same" converged
eventually "the same conflict listing on all three" "same" listings

# --- clock skew: C's records carry a clock 10 minutes ahead: accepted, and flagged ---
printf 'from-the-future' | arca_as 2 add -s "skew$tag" -a k --synchronizable >/dev/null
eventually "an item from C (clock 10 min ahead) reaches A" "from-the-future" kernel 0 "skew$tag" k
eventually "A flags C's clock as ahead" "yes" reported 0 "minutes ahead (accepted)"

# --- the mesh: every member shares the folder with every other; A's Syncthing stopped, B reaches C ---
# st_ids I PATH: the sorted device ids of a REST config list (devices, or a folder's devices).
st_ids() {
    st_api "$1" GET "$2" | python3 -c 'import json, sys
d = json.load(sys.stdin); d = d["devices"] if isinstance(d, dict) else d
print(" ".join(sorted(x["deviceID"] for x in d)))'
}
all3=$(printf '%s\n' "${st_devid[@]}" | sort | tr '\n' ' ' | sed 's/ $//')
for i in 0 1 2; do
    eventually "${letters[$i]}'s Syncthing knows all three devices" "$all3" st_ids "$i" /rest/config/devices
    eventually "${letters[$i]}'s folder is shared with all three" "$all3" st_ids "$i" /rest/config/folders/arca-sync
done
kill -STOP -- "-${st_pid[0]}"
printf 'via-mesh' | arca_as 1 add -s "mesh$tag" -a m --synchronizable >/dev/null
eventually "A's Syncthing stopped: an item added on B reaches C" "via-mesh" kernel 2 "mesh$tag" m
kill -CONT -- "-${st_pid[0]}"

# --- a removed device: new epoch, unshared everywhere, its later records refused ---
epoch() { sync_as "$1" status | sed -n 's/^epoch: //p'; }
epoch_before=$(epoch 0)
dev_c=$(sync_as 2 status | sed -n 's/^this device: //p' | cut -d@ -f1)
check "remove C on A" "0" rc sync_as 0 remove "$dev_c"
check "the epoch rotates" "$((epoch_before + 1))" epoch 0
ab=$(printf '%s\n' "${st_devid[0]}" "${st_devid[1]}" | sort | tr '\n' ' ' | sed 's/ $//')
check "A's Syncthing no longer has C's device" "$ab" st_ids 0 /rest/config/devices
check "A's folder is no longer shared with C" "$ab" st_ids 0 /rest/config/folders/arca-sync
eventually "B's Syncthing no longer has C's device" "$ab" st_ids 1 /rest/config/devices
eventually "B's folder is no longer shared with C" "$ab" st_ids 1 /rest/config/folders/arca-sync
# C's later record cannot reach A through Syncthing any more: delivered by hand, arcad refuses it.
c_records=$work/u2/sync/$dev_c/records
c_before=$(ls "$c_records" | wc -l)
printf 'from-removed' | arca_as 2 add -s "removed$tag" -a r --synchronizable >/dev/null
eventually "C writes its record into its own folder" "$((c_before + 1))" sh -c "ls $c_records | wc -l"
cp "$c_records"/*.rec "$work/u0/sync/$dev_c/records/" && cp "$work/u2/sync/$dev_c/head" "$work/u0/sync/$dev_c/head"
chown -R "$(id -u "${st_user[0]}"):$(id -g "${st_user[0]}")" "$work/u0/sync/$dev_c"
printf 'wake' | arca_as 0 add -s "wake$tag" -a w --synchronizable >/dev/null
eventually "A reports the removed device's record" "yes" reported 0 "removed device"
check "the removed device's item is not on A" "none" kernel 0 "removed$tag" r

# --- the horizon: B away past it; A collects its delete without B; B's offline edit a sibling ---
# restart_arcad I OFFSET_MS: arcad I again, its sync clock OFFSET_MS ahead (a machine 31 days on);
# the keys it parked keep the vault unlocked.
restart_arcad() {
    kill -TERM "${sync_arcad_pid[$1]}"
    wait "${sync_arcad_pid[$1]}" 2>/dev/null
    printf 'sync_clock_offset_ms = %s\n' "$2" >"$work/u$1/arca.conf"
    rm -f "$work/u$1/arcad.sock"
    "$build/arcad" --foreground --config "$work/u$1/arca.conf" --state-dir "$work/u$1/state" \
        --socket "$work/u$1/arcad.sock" 2>>"$work/u$1/arcad.log" &
    sync_arcad_pid[$1]=$!
    for _ in $(seq 250); do [ -S "$work/u$1/arcad.sock" ] && break; sleep 0.02; done
}
printf 'horizon-v1' | arca_as 0 add -s "hz$tag" -a h --synchronizable >/dev/null
eventually "the item reaches B" "horizon-v1" kernel 1 "hz$tag" h
base0=$(conflicts 0) base1=$(conflicts 1)
kill -STOP -- "-${st_pid[1]}" "-${agent_pid[1]}"
arca_as 0 delete -s "hz$tag" -a h --synchronizable >/dev/null 2>&1
check "deleted on A" "none" kernel 0 "hz$tag" h
restart_arcad 0 2678400000
{ kill -KILL -- "-${agent_pid[0]}"; wait "${agent_pid[0]}"; } 2>/dev/null
start_sync_agent 0
has_snapshot() { [ -s "$work/u0/sync/$dev_a/snapshot" ] && echo yes || echo no; }
eventually "A, 31 days on, collects its delete past dormant B and publishes a snapshot" "yes" has_snapshot
check "nothing of the item in clear in the snapshot" "0" sh -c "grep -ac -- 'hz$tag' '$work/u0/sync/$dev_a/snapshot'"
check "A's status --json: B (the other active device) dormant since its last head" "dormant True" json_status 0 \
    '" ".join(str(x) for y in d["devices"] if y["id"] != d["device"] and y["active"] for x in (y["state"], "dormantSince" in y))'
dormant_lines() { sync_as 0 status | grep -c ': dormant since [0-9-]*T[0-9:]*Z, applied'; }
check "A's status: one device dormant since a UTC time" "1" dormant_lines
restart_arcad 1 2678520000
check "B, still away and 2 minutes later, edits the item" "0" rc sh -c "printf horizon-offline | setpriv \
    --reuid=$(id -u "${st_user[1]}") --regid=$(id -g "${st_user[1]}") --clear-groups \
    env ARCA_SOCKET=$work/u1/arcad.sock $build/arca update -s hz$tag -a h --synchronizable"
{ kill -KILL -- "-${agent_pid[1]}"; wait "${agent_pid[1]}"; } 2>/dev/null
kill -CONT -- "-${st_pid[1]}"
start_sync_agent 1
eventually "B, back, resyncs: the item is not resurrected on B" "none" kernel 1 "hz$tag" h
eventually "B lists its offline edit as one conflict version" "$((base1 + 1))" conflicts 1
eventually "A lists the same sibling" "$((base0 + 1))" conflicts 0
check "the item is not live on A" "none" kernel 0 "hz$tag" h
eventually "B reports the resync" "yes" reported 1 "resynced from the snapshot"

echo "sync: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
