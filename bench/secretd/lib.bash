# bench/secretd/lib.bash: sourced (from the top of the tree, as root) by run.sh, lookup-paired.sh and
# lookup-trace.sh. Each script keeps its own `pids` array of processes to stop on exit and $work
# (its scratch directory, holding a copy of bus.conf); the starters below add to `pids` before they
# wait for anything, so a start that fails leaves nothing running.

# as USER CMD...: CMD as USER in a clean environment, HOME and XDG_RUNTIME_DIR the user's home
# directory, DBUS_SESSION_BUS_ADDRESS=$BUS and ARCA_SOCKET=$SOCK when set; EXEC=1: in place of the
# shell (for `&`: $! is then the command's pid).
as() {
    local u=$1 home
    shift
    home=$(getent passwd "$u" | cut -d: -f6)
    ${EXEC:+exec} setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups env -i PATH=/usr/bin:/bin \
        LANG=C.UTF-8 HOME="$home" XDG_RUNTIME_DIR="$home" ${BUS:+DBUS_SESSION_BUS_ADDRESS=$BUS} \
        ${SOCK:+ARCA_SOCKET=$SOCK} "$@"
}

# waitname: wait (10 s at most) until org.freedesktop.secrets has an owner on this environment's
# session bus; 1 if none came. run.sh copies it into the shells it runs as the user.
waitname() {
    local _i
    for _i in $(seq 200); do
        gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner \
            org.freedesktop.secrets 2>/dev/null | grep -q true && return 0
        sleep 0.05
    done
    echo "${0##*/}: no provider came up on the bus" >&2
    return 1
}

# waitprovider USER BUS_ADDRESS: waitname as USER on that bus; exits if no provider came.
waitprovider() {
    BUS=$2 as "$1" bash -c "$(declare -f waitname); waitname" "${0##*/}" || exit 1
}

# start_bus USER FILE: a private dbus-daemon ($work/bus.conf) as USER, its address in FILE.
start_bus() {
    EXEC=1 as "$1" dbus-daemon --config-file="$work/bus.conf" --nofork --print-address=1 >"$2" &
    pids+=($!)
    for _ in $(seq 250); do [ -s "$2" ] && return 0; sleep 0.02; done
    echo "${0##*/}: the bus in $2 did not start" >&2
    exit 1
}

# start_arcad BUILD DIR USER [ARCAD_ARGS...]: arcad of BUILD with its state, socket and log in DIR
# (state, arcad.sock, arcad.log), its pid in arcad_pid; then USER's vault (arca init, password
# bench-pw, no recovery key).
start_arcad() {
    local b=$1 dir=$2 u=$3
    shift 3
    mkdir -p "$dir"
    "$b/arcad" --foreground "$@" --state-dir "$dir/state" --socket "$dir/arcad.sock" 2>"$dir/arcad.log" &
    arcad_pid=$!
    pids+=($!)
    for _ in $(seq 250); do [ -S "$dir/arcad.sock" ] && break; sleep 0.02; done
    [ -S "$dir/arcad.sock" ] || { echo "${0##*/}: arcad did not start (its log: $dir/arcad.log)" >&2; exit 1; }
    printf 'bench-pw\n' | SOCK=$dir/arcad.sock as "$u" "$b/arca" init --no-recovery-key >/dev/null
}

# start_secretd BUILD DIR USER BUS_ADDRESS: arca-secretd of BUILD as USER on that bus, over the arcad
# of DIR (start_arcad), its log in DIR/secretd.log and its pid in sd_pid; waits until it owns the name.
start_secretd() {
    BUS=$4 SOCK=$2/arcad.sock EXEC=1 as "$3" "$1/arca-secretd" 2>"$2/secretd.log" &
    sd_pid=$!
    pids+=($!)
    waitprovider "$3" "$4"
}
