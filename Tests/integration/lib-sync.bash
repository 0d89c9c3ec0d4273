# Shared by Tests/integration/85-sync.sh and bench/sync/run.sh (sourced, not run): three
# Syncthing instances on 127.0.0.1 standing for one person's three machines, each run as its
# own throwaway user with its own arcad (state dir and socket). Needs $build and $work set
# by the caller; lib-arcad.bash sourced first. Instances are numbered 0 1 2 (A B C).
#
# Syncthing is confined to loopback: global and local discovery, relays, NAT traversal,
# usage and crash reporting, upgrades and the browser are off; the GUI/REST listens on
# 127.0.0.1:GUI_PORT with a generated API key; devices are addressed as tcp://127.0.0.1:PORT.

declare -a st_pid=() st_user=() st_gui=() st_listen=() st_key=() st_devid=() sync_arcad_pid=() agent_pid=()
letters=(a b c)

# sync_ports: a GUI/REST and a sync port per instance, from a random base where none is taken.
sync_ports() {
    local base
    while :; do
        base=$((21000 + RANDOM % 30000))
        ss -Htln | awk '{print $4}' | grep -Eq ":($base|$((base + 1))|$((base + 2))|$((base + 3))|$((base + 4))|$((base + 5)))\$" ||
            break
    done
    st_gui=($base $((base + 1)) $((base + 2)))
    st_listen=($((base + 3)) $((base + 4)) $((base + 5)))
}

# sync_users PREFIX: three throwaway users PREFIXa PREFIXb PREFIXc with homes under $work.
sync_users() {
    local i
    for i in 0 1 2; do
        st_user[$i]=$1${letters[$i]}
        useradd -M -N -s /usr/sbin/nologin "${st_user[$i]}" || return 1
        mkdir -p "$work/u$i/home" "$work/u$i/sync"
        chown -R "$(id -u "${st_user[$i]}"):$(id -g "${st_user[$i]}")" "$work/u$i"
        chmod 700 "$work/u$i/home" "$work/u$i/sync"
    done
}

# as_user I COMMAND...: COMMAND as instance I's user, with a clean environment, its own home,
# its arcad's socket, and a fresh session keyring (as a login would give).
as_user() {
    local i=$1; shift
    local user=${st_user[$i]}
    setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --clear-groups \
        env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$work/u$i/home" XDG_RUNTIME_DIR="$work/u$i/home" \
        ARCA_SOCKET="$work/u$i/arcad.sock" STNOUPGRADE=1 "$@"
}

# spawn_as_user I COMMAND...: COMMAND as instance I's user in the background, in a session of its own
# whose id is the pid left in $spawned (the subshell execs, so $! is the command's own pid).
spawn_as_user() {
    local i=$1; shift
    local user=${st_user[$i]}
    (exec setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --clear-groups \
        env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$work/u$i/home" XDG_RUNTIME_DIR="$work/u$i/home" \
        ARCA_SOCKET="$work/u$i/arcad.sock" STNOUPGRADE=1 setsid "$@") &
    spawned=$!
}

# sync_arcads: one arcad per instance, state in $work/uI/state, socket $work/uI/arcad.sock, and
# $work/uI/arca.conf as its configuration when present (a skewed clock: sync_clock_offset_ms).
sync_arcads() {
    local i
    for i in 0 1 2; do
        local conf=()
        [ -f "$work/u$i/arca.conf" ] && conf=(--config "$work/u$i/arca.conf")
        "$build/arcad" --foreground "${conf[@]}" --state-dir "$work/u$i/state" --socket "$work/u$i/arcad.sock" \
            2>"$work/u$i/arcad.log" &
        sync_arcad_pid[$i]=$!
    done
    for i in 0 1 2; do
        for _ in $(seq 250); do [ -S "$work/u$i/arcad.sock" ] && break; sleep 0.02; done
        chmod 755 "$work/u$i"
    done
}

# st_configure I: generates instance I's key and config.xml (as its user) and confines it to loopback.
st_configure() {
    local i=$1 home=$work/u$i/home/st
    as_user "$i" syncthing generate --home="$home" --no-default-folder --skip-port-probing >/dev/null 2>&1 || return 1
    python3 - "$home/config.xml" "${st_gui[$i]}" "${st_listen[$i]}" <<'EOF'
import sys, xml.etree.ElementTree as ET
path, gui, listen = sys.argv[1], sys.argv[2], sys.argv[3]
tree = ET.parse(path)
root = tree.getroot()
root.find("gui/address").text = "127.0.0.1:" + gui
options = root.find("options")
settings = {
    "listenAddress": "tcp://127.0.0.1:" + listen, "globalAnnounceEnabled": "false",
    "localAnnounceEnabled": "false", "relaysEnabled": "false", "natEnabled": "false", "urAccepted": "-1",
    "crashReportingEnabled": "false", "startBrowser": "false", "autoUpgradeIntervalH": "0",
    "reconnectionIntervalS": "1", "setLowPriority": "false",
}
for name, value in settings.items():
    node = options.find(name)
    if node is None:
        node = ET.SubElement(options, name)
    node.text = value
tree.write(path)
EOF
    st_key[$i]=$(sed -n 's:.*<apikey>\(.*\)</apikey>.*:\1:p' "$home/config.xml")
}

# st_start I: runs instance I (as its user) and waits until its REST API answers; its device id in st_devid[I].
st_start() {
    local i=$1 home=$work/u$i/home/st
    spawn_as_user "$i" syncthing serve --home="$home" --no-browser --no-restart --no-upgrade \
        --logfile="$work/u$i/home/syncthing.log" >/dev/null 2>&1
    st_pid[$i]=$spawned
    for _ in $(seq 300); do
        st_devid[$i]=$(st_api "$i" GET /rest/system/status 2>/dev/null |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["myID"])' 2>/dev/null) && break
        sleep 0.1
    done
    [ -n "${st_devid[$i]}" ]
}

# st_api I METHOD PATH [BODY]: one REST call to instance I with its API key.
st_api() {
    local i=$1 method=$2 path=$3 body=${4:-}
    curl -fsS -X "$method" -H "X-API-Key: ${st_key[$i]}" ${body:+-H 'Content-Type: application/json' -d "$body"} \
        "http://127.0.0.1:${st_gui[$i]}$path"
}

# st_stop I: stops instance I (and every process of its session).
st_stop() {
    [ -n "${st_pid[$1]:-}" ] && { kill -TERM -- "-${st_pid[$1]}" 2>/dev/null; wait "${st_pid[$1]}" 2>/dev/null; }
    st_pid[$1]=""
}

# sync_cleanup: agents, Syncthing instances, arcads, the users (their @u cleared first), parked rings, $work.
sync_cleanup() {
    set +e
    local i pid
    for pid in "${agent_pid[@]}" "${st_pid[@]}"; do [ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null; done
    for pid in "${sync_arcad_pid[@]}"; do [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; done
    for i in 0 1 2; do
        local user=${st_user[$i]:-}
        [ -n "$user" ] && id -u "$user" >/dev/null 2>&1 || continue
        # Anything still running as this test's own throwaway user (a child that left its session).
        pkill -KILL -u "$user" 2>/dev/null
    done
    for pid in "${agent_pid[@]}" "${st_pid[@]}" "${sync_arcad_pid[@]}"; do [ -n "$pid" ] && { wait "$pid"; } 2>/dev/null; done
    for i in 0 1 2; do
        local user=${st_user[$i]:-}
        [ -n "$user" ] && id -u "$user" >/dev/null 2>&1 || continue
        "$build/arca-keyring-probe" purge "$(id -u "$user")" >/dev/null 2>&1
        userdel -f "$user" 2>/dev/null
    done
    for i in 0 1 2; do [ -d "$work/u$i" ] && drop_parked "$work/u$i"; done
    rm -rf "$work"
}
