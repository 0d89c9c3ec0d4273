# Shared by Tests/integration/3x-pam-*.sh (sourced; not a test itself, hence
# not *.sh). Runs pam_arca.so from $ARCA_BUILD under pam_wrapper against the
# recording stand-in for arcad, with throwaway users removed on exit. The module
# is the one make install ships: pam/prepare-install.sh's copy of the build's
# (no RUNPATH, no libm.so.6), so every flow, enrollment's calibration included,
# runs without libm loaded.
set -euo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
# shellcheck source=SCRIPTDIR/lib-arcad.bash
source "$(dirname "${BASH_SOURCE[0]}")/lib-arcad.bash" # drop_user_keys (first: what follows wins)
built_module=$build/libpam_arca.so
recorder=$build/arca-test-arcad-recorder
driver=$build/arca-test-pam-driver
wrapdir=/usr/lib/x86_64-linux-gnu/pam_wrapper
for f in "$built_module" "$recorder" "$driver" "$wrapdir/pam_set_items.so" /usr/lib/x86_64-linux-gnu/libpam_wrapper.so; do
    [ -e "$f" ] || { echo "FAIL missing $f (make build; apt-get install libpam-wrapper)"; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "FAIL must run as root (useradd, setpriv)"; exit 1; }
work=$(mktemp -d /tmp/arca-pam-test.XXXXXX)
chmod 0755 "$work"
mkdir -m 0755 "$work/svc"
module=$work/pam_arca.so
bash "$(dirname "${BASH_SOURCE[0]}")/../../pam/prepare-install.sh" "$built_module" "$module" ||
    { echo "FAIL pam/prepare-install.sh $built_module"; rm -rf "$work"; exit 1; }
sock=$work/arcad.sock
record=$work/record
pass=0 fail=0 recorder_pid="" created_users=() created_files=()

cleanup() {
    stop_recorder
    local u f
    # A deleted user's @u lives on in the kernel and a recycled uid would inherit
    # it: invalidate the user's keyrings (drop_user_keys, lib-arcad.bash; Arca's
    # rings, linked only from @u, go with it) before deleting the user.
    for u in "${created_users[@]}"; do
        drop_user_keys "$u"
        userdel "$u" 2>/dev/null || true
    done
    for f in "${created_files[@]}"; do rm -f "$f"; done
    rm -rf "$work"
}
trap cleanup EXIT

ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; [ $# -gt 1 ] && printf '%s\n' "${@:2}" | sed 's/^/     /'; fail=$((fail + 1)); }
summary() { echo "$1: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; }

# new_user NAME: a throwaway user without home, removed on exit. Not in a
# command substitution: the cleanup list lives in this shell.
new_user() {
    userdel "$1" 2>/dev/null || true
    useradd -M -s /usr/sbin/nologin "$1"
    created_users+=("$1")
}

# start_recorder ARGS...: (re)starts the stand-in arcad with an empty record.
start_recorder() {
    stop_recorder
    : >"$record"
    "$recorder" --socket "$sock" --record "$record" "$@" &
    recorder_pid=$!
    for _ in $(seq 100); do grep -q listening "$record" 2>/dev/null && break; sleep 0.02; done
    : >"$record"
}
stop_recorder() {
    if [ -n "$recorder_pid" ]; then kill "$recorder_pid" 2>/dev/null || true; wait "$recorder_pid" 2>/dev/null || true; fi
    recorder_pid=""
}

# stack NAME AUTH_OK SESSION_OK [MODULE ARGS...]: a service file where pam_arca
# decides the result: the auth (session) phase succeeds exactly when the module
# returns AUTH_OK (SESSION_OK): "ignore" for PAM_IGNORE, "success" for
# PAM_SUCCESS. Any other code falls onto pam_deny. pam_set_items.so copies
# PAM_AUTHTOK / PAM_OLDAUTHTOK from the environment, as pam_unix would.
stack() {
    local name=$1 auth=$2 session=$3
    shift 3
    local args="socket=$sock $*"
    cat >"$work/svc/$name" <<EOS
auth      required                   $wrapdir/pam_set_items.so
auth      [$auth=1 default=bad]      $module $args
auth      requisite                  pam_deny.so
auth      required                   pam_permit.so
account   required                   pam_permit.so
session   [$session=1 default=bad]   $module $args
session   requisite                  pam_deny.so
session   required                   pam_permit.so
password  required                   $wrapdir/pam_set_items.so
password  optional                   $module $args
EOS
}

# wrapped CMD...: runs CMD under pam_wrapper with our service directory; the
# module's pam_syslog lines land in $work/stderr.
wrapped() {
    env PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER_SERVICE_DIR="$work/svc" \
        PAM_WRAPPER_DEBUGLEVEL=2 "$@" 2>"$work/stderr"
}

# wrapped_as UID GID CMD...: as wrapped, but as another user. The preload is
# set after setpriv drops privileges: preloaded into setpriv itself, pam_wrapper
# would leave its /tmp/pam.X copy behind when setpriv execs.
wrapped_as() {
    local uid=$1 gid=$2
    shift 2
    setpriv --reuid="$uid" --regid="$gid" --clear-groups env PAM_WRAPPER=1 LD_PRELOAD=libpam_wrapper.so \
        PAM_WRAPPER_SERVICE_DIR="$work/svc" PAM_WRAPPER_DEBUGLEVEL=2 "$@" 2>"$work/stderr"
}

# syslog: the module's syslog lines of the last wrapped run, "PRIORITY message".
syslog() {
    grep -o 'SYSLOG([0-9]): .*' "$work/stderr" | grep -v '_pam_init_handlers' |
        sed 's/^SYSLOG(\([0-9]\)): /\1 /' || true
}

# requests: the record so far, one request per line (then cleared).
requests() { cat "$record"; : >"$record"; }

# field LINE NAME: the value of NAME=... in a record line.
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }

# expect_lines NAME ACTUAL PATTERN...: ACTUAL has exactly one line per
# extended regex PATTERN, in order.
expect_lines() {
    local name=$1 actual=$2
    shift 2
    local -a lines=()
    [ -n "$actual" ] && mapfile -t lines <<<"$actual"
    if [ "${#lines[@]}" -ne $# ]; then bad "$name: ${#lines[@]} lines, expected $#" "$actual"; return; fi
    local i=0 p
    for p in "$@"; do
        if ! grep -Eqx -- "$p" <<<"${lines[$i]}"; then bad "$name: line $((i + 1)) is not /$p/" "$actual"; return; fi
        i=$((i + 1))
    done
    ok "$name"
}

# expect NAME ACTUAL EXPECTED
expect() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got [$2], expected [$3]"; fi; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# solo NAME [MODULE ARGS...]: a service where pam_arca is the only module that
# counts in auth and session, for arca-test-pam-driver, which prints the code
# of each step: the module's own code, except that PAM_IGNORE from the only
# module comes out as 6 (PAM_PERM_DENIED: no module decided).
solo() {
    local name=$1
    shift
    cat >"$work/svc/$name" <<EOS
auth      [default=ignore]   $wrapdir/pam_set_items.so
auth      required           $module socket=$sock $*
account   required           pam_permit.so
session   required           $module socket=$sock $*
EOS
}

# ring_keys UID GID RING: how many keys the user's ring RING (arca:wu, arca:afu)
# holds, as the user sees it through keyctl; 0 when the ring is not linked into @u.
ring_keys() {
    local id who=(setpriv --reuid="$1" --regid="$2" --clear-groups)
    id=$("${who[@]}" keyctl search @u keyring "$3" 2>/dev/null) || { echo 0; return; }
    "${who[@]}" keyctl rlist "$id" 2>/dev/null | wc -w
}
