# bench/pam/lib-check.bash: sourced by paired.sh and timeline.sh.
# pam_arca is optional in the benchmark stacks and answers PAM_IGNORE on failure, so a login
# that never reached arcad looks like a fast one. check_arcad_log LOG EXPECTED: arcad's log
# (info, on its stderr) must show exactly EXPECTED login unlocks and sessions opened;
# otherwise it says so and exits.
check_arcad_log() {
    local log=$1 want=$2 unlocks sessions
    for _ in $(seq 50); do
        unlocks=$(grep -c 'unlocked by the login stack' "$log" || true)
        sessions=$(grep -c 'session opened (' "$log" || true)
        [ "$unlocks" -ge "$want" ] && [ "$sessions" -ge "$want" ] && break
        sleep 0.02
    done
    if [ "$unlocks" -ne "$want" ] || [ "$sessions" -ne "$want" ]; then
        echo "bench: $log: $unlocks login unlocks and $sessions sessions logged for $want logins" >&2
        tail -5 "$log" >&2
        exit 1
    fi
}
