# bench/pam/lib-check.bash: sourced by run.sh, paired.sh and timeline.sh.
# pam_arca is optional in the benchmark stacks and answers PAM_IGNORE on failure, so a login
# that never reached arcad looks like a fast one. check_arcad_log LOG EXPECTED [FROM]: the lines
# of arcad's log (info, on its stderr) after its first FROM lines (0: all of them) must show
# exactly EXPECTED login unlocks and sessions opened, and no login that derived its key from a
# stale published copy (pam_arca would then derive a second time, in open_session, and that
# cost would not be in the figure the bench reports as one KDF); otherwise it says so and exits.
# arcad_log_lines LOG: the FROM to pass for "from now on".
check_arcad_log() {
    local log=$1 want=$2 from=${3:-0} unlocks sessions stale
    for _ in $(seq 50); do
        unlocks=$(tail -n "+$((from + 1))" "$log" | grep -c 'unlocked by the login stack' || true)
        sessions=$(tail -n "+$((from + 1))" "$log" | grep -c 'session opened (' || true)
        [ "$unlocks" -ge "$want" ] && [ "$sessions" -ge "$want" ] && break
        sleep 0.02
    done
    stale=$(tail -n "+$((from + 1))" "$log" | grep -c 'stale published copy' || true)
    if [ "$unlocks" -ne "$want" ] || [ "$sessions" -ne "$want" ] || [ "$stale" -ne 0 ]; then
        echo "bench: $log: $unlocks login unlocks, $sessions sessions and $stale logins from a stale" \
            "published copy logged for $want logins" >&2
        tail -5 "$log" >&2
        exit 1
    fi
}
arcad_log_lines() { wc -l <"$1"; }

# compile_fresh OUT: bench/pam/fresh.c with the toolchain's clang, linked like /bin/login
# (libpam, libpam_misc, libc; libdl is part of libc) and exporting its crypto_pwhash, which
# catches pam_arca.so's KDF (see fresh.c). Fails when the program would load a library before
# pam_start that /bin/login does not (libsodium above all: it would make loading pam_arca.so
# look cheaper than in a real login), or when crypto_pwhash is not exported.
compile_fresh() {
    local out=$1 extra
    clang -O2 -Wall -o "$out" bench/pam/fresh.c -Wl,--export-dynamic-symbol=crypto_pwhash \
        -Wl,--no-as-needed -lpam -lpam_misc ||
        { echo "bench: cannot compile bench/pam/fresh.c (clang comes with the Swift toolchain)" >&2; exit 1; }
    nm -D --defined-only "$out" | grep -qw crypto_pwhash ||
        { echo "bench: $out does not export crypto_pwhash: the KDF would not be subtracted" >&2; exit 1; }
    if [ -e /bin/login ]; then
        extra=$(comm -23 <(ldd "$out" | awk '{print $1}' | sort) <(ldd /bin/login | awk '{print $1}' | sort))
    else
        extra=$(ldd "$out" | awk '$1 !~ /^(linux-vdso|\/lib64\/ld-linux|libc\.|libpam|libaudit|libcap-ng)/ {print $1}')
    fi
    [ -z "$extra" ] ||
        { echo "bench: $out loads what a login process does not: $extra" >&2; exit 1; }
}

# start_bench_arcad NAME: the arcad the fresh-process scripts log in against, as run.sh's C-login
# rows use it: $build/arcad with a private state directory and socket in $work (log in
# $work/arcad.log), and the vault of $uid at arcad's floor (1 pass, 64 MiB) holding 10 items,
# the two classes in turn. Sets arcad_pid (the caller's cleanup stops it); NAME prefixes the error.
start_bench_arcad() {
    "$build/arcad" --foreground --config /dev/null --state-dir "$work/state" --socket "$work/arcad.sock" \
        2>"$work/arcad.log" &
    arcad_pid=$!
    for _ in $(seq 250); do [ -S "$work/arcad.sock" ] && break; sleep 0.02; done
    [ -S "$work/arcad.sock" ] || { cat "$work/arcad.log" >&2; echo "$1: arcad did not start" >&2; exit 1; }
    printf 'bench-pw\n' | "$build/bench-arcad" --enroll "$work/arcad.sock" "$uid" 1 $((64 << 20))
    local i class
    for i in 1 2 3 4 5 6 7 8 9 10; do
        class=$([ $((i % 2)) -eq 0 ] && echo whenUnlocked || echo afterFirstUnlock)
        printf 'secret-%02d' "$i" |
            "$build/arca-test-pam-driver" --arcad "$work/arcad.sock" add "$uid" bench "acct$i" "$class" >/dev/null
    done
}

# stop PID: terminates one process the script started and reaps it (nothing for an empty PID).
stop() { if [ -n "$1" ]; then kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; fi; }

# cleanup_bench_arcad: the EXIT trap of the scripts that use start_bench_arcad: stops strace
# ($strace_pid, if the script set one) and arcad ($arcad_pid), drops the keys arcad parked in root's
# keyring (drop_parked, Tests/integration/lib-arcad.bash, sourced by the caller), purges the
# throwaway $user's kernel keys, drops its keyrings (drop_user_keys) and removes the user, then $work.
cleanup_bench_arcad() {
    stop "${strace_pid:-}"
    stop "$arcad_pid"
    drop_parked
    if id "$user" >/dev/null 2>&1; then
        "$build/bench-arcad" --purge "$(id -u "$user")" 2>/dev/null || true
        drop_user_keys "$user" # lib-arcad.bash: its @u and @us
        userdel -r "$user" 2>/dev/null || true
    fi
    rm -rf "$work"
}

# installed_module MODULE OUT [symbols]: OUT is MODULE (a build's libpam_arca.so) in the form
# `make install` puts in place and a login loads: pam/prepare-install.sh (no RUNPATH, no libm.so.6),
# then stripped as make install-strip strips it. The rows of the bench scripts measure that file,
# not the build's, whose RUNPATH, libm and symbol table a login never pays for. `symbols`: not
# stripped, only its debug information removed (callgrind names the functions by the symbol table).
installed_module() {
    local module=$1 out=$2
    if ! nm -D --undefined-only "$module" 2>/dev/null | awk '$2 ~ /^sqrt(@|$)/ {found = 1} END {exit !found}'; then
        bash pam/prepare-install.sh "$module" "$out.prepared" ||
            { echo "bench: pam/prepare-install.sh $module failed" >&2; exit 1; }
    else # a build from before Sources/PAMShim/libm.c (paired.sh against an old build): RUNPATH only
        echo "bench: $module has no libm forwarders (an older build): its installed form keeps libm" >&2
        patchelf --remove-rpath --output "$out.prepared" "$module"
    fi
    if [ "${3:-}" = symbols ]; then
        objcopy --strip-debug "$out.prepared" "$out"
    else
        strip --strip-unneeded --remove-section=.comment -o "$out" "$out.prepared"
    fi
    rm -f "$out.prepared"
}
