# Shared by the integration scripts that run the release arcad (sourced, not run:
# make integration runs *.sh only). Needs $build and $work set by the caller.

# check NAME EXPECTED COMMAND...: runs COMMAND, compares its output (stdout and
# stderr) with EXPECTED, counts and prints the result.
check() {
    local name=$1 expected=$2; shift 2
    local out
    out=$("$@" 2>&1) || true
    if [ "$out" = "$expected" ]; then echo "ok   $name"; pass=$((pass + 1));
    else echo "FAIL $name: expected $(printf %q "$expected"), got $(printf %q "$out")"; fail=$((fail + 1)); fi
}

# start_arcad [DIR]: arcad in the foreground with state DIR/state and socket DIR/arcad.sock
# (DIR defaults to $work), its pid in $arcad_pid.
start_arcad() {
    local dir=${1:-$work}
    "$build/arcad" --foreground --state-dir "$dir/state" --socket "$dir/arcad.sock" 2>"$dir/arcad.log" &
    arcad_pid=$!
    for _ in $(seq 250); do [ -S "$dir/arcad.sock" ] && break; sleep 0.02; done
}

# drop_user_keys USER: invalidates every kernel key USER owns (its @u and @us would stay
# until reboot: a recycled uid would inherit them, and every key the kernel holds lengthens
# each pass of its garbage collector, which runs on the CPU of whoever invalidates a key).
drop_user_keys() {
    local uid gid s
    uid=$(id -u "$1" 2>/dev/null) || return 0
    gid=$(id -g "$1")
    for s in $(setpriv --reuid="$uid" --regid="$gid" --clear-groups awk -v u="$uid" '$6 == u { print $1 }' /proc/keys); do
        setpriv --reuid="$uid" --regid="$gid" --clear-groups keyctl invalidate "$((16#$s))" 2>/dev/null || true
    done
}

# drop_parked [DIR]: a test's arcad (state in DIR/state, default $work) never comes back, so the ring it parked keys in, in
# root's @u (shared by every arcad on the machine), goes too. The ring is
# arcad:parked:<first 6 bytes of BLAKE2b-128 of the state directory> (KeyParking).
drop_parked() {
    local tag
    tag=$(printf %s "${1:-$work}/state" | b2sum -l 128 | cut -c1-12)
    keyctl search @u keyring "arcad:parked:$tag" 2>/dev/null | xargs -r keyctl invalidate 2>/dev/null || true
}
