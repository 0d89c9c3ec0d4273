# Shared by the fleet scripts (80-fleet.sh, bench/fleet): a CA and certificates made
# with openssl, a 3-member etcd cluster on 127.0.0.1 with mTLS (clients and peers),
# and per-host arcads. Sourced after lib-arcad.bash; needs $work (and $build for arcads).

# fleet_ports: three client and three peer ports from a random base.
fleet_ports() {
    local base=$((21000 + (RANDOM % 800) * 10))
    client_port=($((base)) $((base + 1)) $((base + 2)))
    peer_port=($((base + 3)) $((base + 4)) $((base + 5)))
    endpoints="https://127.0.0.1:${client_port[0]},https://127.0.0.1:${client_port[1]},https://127.0.0.1:${client_port[2]}"
}

# fleet_certs NAME...: $work/pki/ca.pem, server.pem (SAN 127.0.0.1) and a client
# certificate NAME.pem / NAME-key.pem per name.
fleet_certs() {
    local pki=$work/pki
    mkdir -p "$pki"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=fleet-test-ca \
        -keyout "$pki/ca-key.pem" -out "$pki/ca.pem" 2>/dev/null
    local name ext
    for name in server "$@"; do
        ext="extendedKeyUsage=serverAuth,clientAuth"
        [ "$name" = server ] && ext="$ext
subjectAltName=IP:127.0.0.1"
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$name" \
            -keyout "$pki/$name-key.pem" -out "$pki/$name.csr" 2>/dev/null
        openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca-key.pem" -CAcreateserial \
            -days 2 -extfile <(printf '%s\n' "$ext") -out "$pki/$name.pem" 2>/dev/null
    done
    chmod 600 "$pki"/*-key.pem
}

# etcd_start I: member I (0-2) in the background, its pid in etcd_pid[I]; data in $work/etcdI.
etcd_start() {
    local i=$1 pki=$work/pki cluster=""
    local j
    for j in 0 1 2; do cluster="$cluster${cluster:+,}m$j=https://127.0.0.1:${peer_port[$j]}"; done
    etcd --name "m$i" --data-dir "$work/etcd$i" \
        --listen-client-urls "https://127.0.0.1:${client_port[$i]}" \
        --advertise-client-urls "https://127.0.0.1:${client_port[$i]}" \
        --listen-peer-urls "https://127.0.0.1:${peer_port[$i]}" \
        --initial-advertise-peer-urls "https://127.0.0.1:${peer_port[$i]}" \
        --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token "arca-fleet-$$" \
        --client-cert-auth --trusted-ca-file "$pki/ca.pem" --cert-file "$pki/server.pem" \
        --key-file "$pki/server-key.pem" --peer-client-cert-auth --peer-trusted-ca-file "$pki/ca.pem" \
        --peer-cert-file "$pki/server.pem" --peer-key-file "$pki/server-key.pem" \
        --heartbeat-interval 50 --election-timeout 500 --logger zap --log-level error ${ETCD_EXTRA:-} \
        >>"$work/etcd$i.log" 2>&1 &
    etcd_pid[$i]=$!
}

# ctl CERT ARGS...: etcdctl with the client certificate CERT against every member.
ctl() {
    local name=$1; shift
    ETCDCTL_API=3 etcdctl --endpoints="$endpoints" --cacert="$work/pki/ca.pem" --cert="$work/pki/$name.pem" \
        --key="$work/pki/$name-key.pem" --dial-timeout=2s --command-timeout=5s "$@"
}

# etcd_wait_healthy: until every member answers (10 s at most).
etcd_wait_healthy() {
    for _ in $(seq 100); do
        ctl root endpoint health >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "etcd cluster did not become healthy" >&2
    return 1
}

# fleet_conf DIR CERT: a fleet.conf for a host or admin using $work/pki/CERT.pem.
fleet_conf() {
    local dir=$1 name=$2
    mkdir -p "$dir"
    cat >"$dir/fleet.conf" <<CONF
endpoints = $endpoints
cacert = $work/pki/ca.pem
cert = $work/pki/$name.pem
key = $work/pki/$name-key.pem
state_dir = $dir/fleet
socket = $dir/arcad.sock
resync_seconds = 2
CONF
}

# fleet_hosts: hosts 1-3, each with a throwaway service user ${svc[H]} (seen as $name on
# that host), a fleet.conf, an /etc whose passwd maps $name to it, and an arcad; and the
# admin's fleet.conf, working from host 1's arcad (the admin key lives in its system vault).
# arcad pids in host_arcad_pid[H].
fleet_hosts() {
    local h
    for h in 1 2 3; do
        svc[$h]=${name}h$h
        useradd -M -N -s /usr/sbin/nologin "${svc[$h]}"
        fleet_conf "$work/h$h" "h$h"
        # A copy of /etc, not a bind mount over /etc/passwd alone: useradd/userdel elsewhere on the
        # machine rename a new passwd over the old one, which detaches a mount on that file.
        # (Lock files of a concurrent useradd may vanish while cp runs: not an error here.)
        cp -a /etc "$work/h$h/etc" 2>/dev/null || [ -f "$work/h$h/etc/nsswitch.conf" ]
        rm -f "$work/h$h/etc/"{shadow,gshadow}*
        { grep '^root:' /etc/passwd
          echo "$name:x:$(id -u "${svc[$h]}"):$(id -g "${svc[$h]}")::/nonexistent:/usr/sbin/nologin"; } \
            >"$work/h$h/etc/passwd"
        start_arcad "$work/h$h"
        host_arcad_pid[$h]=$arcad_pid
    done
    fleet_conf "$work/admin" admin
    sed -i "s|^socket = .*|socket = $work/h1/arcad.sock|" "$work/admin/fleet.conf"
}

# The host agents. Each host sees the service user name $name as its own uid ${svc[H]}:
# the agent runs in a mount namespace with its own copy of /etc.
# start_agent H: the agent of host H in its own session (process group) and mount namespace;
# its pid in agent_pid[H].
start_agent() {
    local h=$1
    setsid unshare --mount --propagation private sh -c \
        "mount --bind '$work/h$h/etc' /etc && exec '$build/arca-fleetd' --conf '$work/h$h/fleet.conf' run" \
        >>"$work/h$h/agent.log" 2>&1 &
    agent_pid[$h]=$!
}
stop_agent() {
    local h=$1
    kill -TERM -- "-${agent_pid[$h]}" 2>/dev/null || true
    wait "${agent_pid[$h]}" 2>/dev/null || true
    agent_pid[$h]=""
}

# kernel H SERVICE: what host H's service user reads from its persistent keyring, as a
# systemd service with KeyringMode=private would (fresh session keyring).
kernel() {
    local user=${svc[$1]}
    setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --clear-groups keyctl session - bash -c \
        "keyctl get_persistent @s >/dev/null; keyctl pipe \$(keyctl search @s user arca:genp:$2:db 2>/dev/null) \
        2>/dev/null || echo none" 2>&1 | grep -v '^Joined session keyring'
}

# fleet_cleanup: every agent (with its etcdctl child), arcad and etcd member, the service
# users (their persistent keyrings cleared first), the rings arcads parked, and $work.
fleet_cleanup() {
    set +e
    for pid in "${agent_pid[@]}"; do [ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null; done
    for pid in "${host_arcad_pid[@]}"; do [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; done
    for pid in "${etcd_pid[@]}"; do [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; done
    wait 2>/dev/null
    for user in "${svc[@]}"; do
        # Whatever a killed arcad left in the service user's persistent keyring goes too.
        ring=$(keyctl get_persistent @s "$(id -u "$user")" 2>/dev/null) && keyctl clear "$ring" 2>/dev/null
        userdel -f "$user" 2>/dev/null
    done
    for dir in "$work"/h* "$work"/fan; do [ -d "$dir" ] && drop_parked "$dir"; done
    rm -rf "$work"
}
