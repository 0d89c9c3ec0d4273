#!/usr/bin/env bash
# bench/secretd: arca-secretd beside gnome-keyring, each on its own private session
# bus, as a throwaway user (arca-secretd over a real arcad and vault):
#   * `secret-tool lookup` as a whole process (hyperfine): with gnome-keyring, with
#     arca-secretd, and secret-tool's own floor (a bus with no provider at all);
#   * SearchItems over 1,000 items, and `secret-tool search --all` of 1,000 items;
#   * the floor of a provider: floor-provider.c, answering the same calls from memory with
#     sd-bus alone (plain sessions), for lookup and search --all, and what search --all sends
#     per item (dbus-monitor): what no provider can go below through dbus-daemon;
#   * CreateItem cost per item at 100 and 1,000 (both) and up to 10,000 (arca), and per item
#     for 4 clients creating at once (a burst: Arca's group commit shares syncs);
#   * arca-secretd's RSS with 10,000 items.
# Figures only, no assertions. Root; a few minutes; everything it starts is gone on exit.
#
#   bench/secretd/run.sh      (make bench runs it; ITEMS=10000 for Arca's fill)
set -euo pipefail
cd "$(dirname "$0")/../.."
ITEMS=${ITEMS:-10000}
[ "$(id -u)" -eq 0 ] || { echo "bench/secretd: must run as root" >&2; exit 1; }
for tool in gnome-keyring-daemon secret-tool dbus-run-session hyperfine; do
    command -v "$tool" >/dev/null || { echo "bench/secretd: $tool missing (make deps)" >&2; exit 1; }
done
build=${ARCA_BUILD:-$PWD/.build/release}
[ -n "${ARCA_BUILD:-}" ] || swift build -c release >/dev/null

load0=$(cut -d' ' -f1-3 /proc/loadavg)
work=$(mktemp -d /tmp/arca-bench-secretd.XXXXXX); chmod 755 "$work"
user=benchsd$$
arcad_pid=""
cleanup() {
    if [ -n "$arcad_pid" ]; then "$build/arca" --socket "$work/arcad.sock" lock --all >/dev/null 2>&1 || true
        kill "$arcad_pid" 2>/dev/null || true; wait "$arcad_pid" 2>/dev/null || true; fi
    if id -u "$user" >/dev/null 2>&1; then
        "$build/arca-keyring-probe" purge "$(id -u "$user")" >/dev/null 2>&1 || true; userdel -f "$user"; fi
    rm -rf "$work"
}
trap cleanup EXIT
useradd -M -N -s /usr/sbin/nologin "$user"
U=$(id -u "$user"); G=$(id -g "$user")
mkdir -p "$work/home" && chown "$U:$G" "$work/home"
cc=$(command -v cc || command -v clang) || { echo "bench/secretd: no C compiler for floor-provider.c" >&2; exit 1; }
"$cc" -O2 -o "$work/home/floor-provider" bench/secretd/floor-provider.c -lsystemd
"$build/arcad" --foreground --state-dir "$work/state" --socket "$work/arcad.sock" 2>"$work/arcad.log" &
arcad_pid=$!
for _ in $(seq 250); do [ -S "$work/arcad.sock" ] && break; sleep 0.02; done
as_user() {
    setpriv --reuid="$U" --regid="$G" --clear-groups env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$work/home" \
        XDG_RUNTIME_DIR="$work/home" ARCA_SOCKET="$work/arcad.sock" "$@"
}
printf 'bench-pw\n' | as_user "$build/arca" init --no-recovery-key >/dev/null

# A bus whose only services are the ones started here: no activation of anything. Its limits
# are the session bus's (/usr/share/dbus-1/session.conf): with dbus-daemon's built-in 512 match
# rules and 128 pending replies per connection, search --all of 1,000 items failed part-way
# (libsecret adds two match rules per item and sends its calls at once).
cat >"$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
<limit name="max_match_rules_per_connection">50000</limit><limit name="max_replies_per_connection">50000</limit>
</busconfig>
CONF
lookup='secret-tool lookup bench 1 id 500'
hf() { hyperfine -N -i --warmup 3 --runs 30 --export-json "$HOME/$1.json" "$2" >/dev/null 2>&1 || true
    /usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print('%.1f' % (r['median']*1000))" "$HOME/$1.json"; }
waitname() { for _ in $(seq 200); do gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
    -m org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets 2>/dev/null | grep -q true && return; sleep 0.05; done; }
# "MS ITEMS": the wall time, and how many items secret-tool printed (all 1,000, or the run failed).
allsearch() { /usr/bin/python3 -c "import subprocess,time; t=time.perf_counter(); r=subprocess.run(['secret-tool','search','--all','bench','1'],capture_output=True); print('%.0f %d' % ((time.perf_counter()-t)*1000, r.stdout.count(b'[/')))"; }
export -f hf waitname allsearch
cat >"$work/home/common.sh" <<EOF2
B=$build; PY=$PWD/bench/secretd/bench.py; ITEMS=$ITEMS; lookup='$lookup'
$(declare -f hf waitname allsearch)
EOF2

# secret-tool's floor: nothing on the bus answers (ServiceUnknown at once).
as_user dbus-run-session --config-file="$work/bus.conf" -- bash -c ". \$HOME/common.sh
echo \"floor_ms=\$(hf floor \"\$lookup\")\"" >"$work/floor.out" 2>/dev/null

# The floor of any provider: floor-provider answers from memory; dbus-monitor counts the
# calls of one search --all (to the provider, and to dbus-daemon itself).
as_user dbus-run-session --config-file="$work/bus.conf" -- bash -c ". \$HOME/common.sh
\$HOME/floor-provider 1000 & fp=\$!; waitname
echo \"lookup_ms=\$(hf fp \"\$lookup\")\"
allsearch >/dev/null
echo \"searchall_ms=\$(allsearch)\"
dbus-monitor --session \"type='method_call'\" >\$HOME/monitor.txt 2>/dev/null & mon=\$!; sleep 0.5
allsearch >/dev/null; sleep 0.5; kill \$mon
echo \"calls_provider=\$(grep -c 'path=/org/freedesktop/secrets' \$HOME/monitor.txt)\"
echo \"calls_bus=\$(grep -c 'destination=org.freedesktop.DBus ' \$HOME/monitor.txt)\"
kill \$fp" >"$work/fp.out" 2>/dev/null

# gnome-keyring: login keyring created and unlocked non-interactively, 1,000 items.
as_user dbus-run-session --config-file="$work/bus.conf" -- bash -c ". \$HOME/common.sh
printf bench-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; waitname
/usr/bin/python3 \$PY fill 0 1000
echo \"lookup_ms=\$(hf gk \"\$lookup\")\"
/usr/bin/python3 \$PY searchitems
echo \"searchall_ms=\$(allsearch)\"
/usr/bin/python3 \$PY fill 1000 1100
/usr/bin/python3 \$PY burst 4 20000 50
gk=\$(gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.secrets | grep -o '[0-9][0-9]*' | tail -1)
kill \$gk" >"$work/gk.out" 2>/dev/null

# arca-secretd.
as_user dbus-run-session --config-file="$work/bus.conf" -- bash -c ". \$HOME/common.sh
\$B/arca-secretd & sd=\$!; waitname
/usr/bin/python3 \$PY fill 0 1000
echo \"lookup_ms=\$(hf arca \"\$lookup\")\"
/usr/bin/python3 \$PY searchitems
echo \"searchall_ms=\$(allsearch)\"
/usr/bin/python3 \$PY fill 1000 \$ITEMS
secret-tool search --all bench 1 >/dev/null 2>&1
echo \"rss_kb=\$(ps -o rss= -p \$sd | tr -d ' ')\"
/usr/bin/python3 \$PY burst 4 20000 50
kill \$sd" >"$work/arca.out" 2>/dev/null

val() { { grep -m1 "^$2" "$work/$1.out" || true; } | sed "s/^$2//"; }
floor=$(val floor floor_ms=)
gk_lookup=$(val gk lookup_ms=); arca_lookup=$(val arca lookup_ms=); fp_lookup=$(val fp lookup_ms=)
echo "== bench/secretd ($(nproc) cores, $ITEMS items for Arca's fill; load average at the start $load0, at the end $(cut -d' ' -f1-3 /proc/loadavg))"
echo "   floor: floor-provider.c, the same answers from memory through the same dbus-daemon (plain sessions)"
printf '%-48s %16s %16s %16s\n' "" "arca-secretd" "gnome-keyring" "floor"
printf '%-48s %13s ms %13s ms %13s ms\n' "secret-tool lookup, whole process (median)" "$arca_lookup" "$gk_lookup" \
    "$fp_lookup"
printf '%-48s %13s ms\n' "secret-tool's floor (no provider on the bus)" "$floor"
/usr/bin/python3 - "$arca_lookup" "$gk_lookup" "$fp_lookup" "$floor" <<'PY'
import sys
a, g, p, f = map(float, sys.argv[1:])
print("%-48s %16s %16s %16s" % ("time above secret-tool's floor", "%.1f ms" % (a - f), "%.1f ms" % (g - f),
                                 "%.1f ms" % (p - f)))
print("%-48s %16s" % ("Arca above floor / gnome-keyring above floor", "%.2fx" % ((a - f) / (g - f) if g > f else float("nan"))))
# Issue 15 asks for 0.2x; the floor provider shows what any provider costs above secret-tool's floor.
print("  0.2x needs %.1f ms above the floor; a provider answering from memory is %.1f ms above it" % (
    0.2 * (g - f), p - f))
PY
printf '%-48s %16s %16s\n' "SearchItems over 1,000 items (median of 5)" \
    "$(val arca 'SearchItems over 1000 items: ')" "$(val gk 'SearchItems over 1000 items: ')"
read -r a_all a_n <<<"$(val arca searchall_ms=)"; read -r g_all g_n <<<"$(val gk searchall_ms=)"
read -r f_all f_n <<<"$(val fp searchall_ms=)"
printf '%-48s %13s ms %13s ms %13s ms\n' "secret-tool search --all, 1,000 items" "$a_all" "$g_all" "$f_all"
printf '%-48s %16s %16s %16s\n' "  items it printed (all 1,000, or it failed)" "$a_n" "$g_n" "$f_n"
/usr/bin/python3 - "$a_all" "$g_all" "$f_all" <<'PY'
import sys
a, g, f = (max(float(x), 1) for x in sys.argv[1:])
print("%-48s %16s %16s" % ("  gnome-keyring's time / this one's", "%.1fx" % (g / a), "%.1fx" % (g / f)))
# Issue 15 asks for 20x; no provider goes below the floor column, whatever it does.
print("  20x gnome-keyring needs %.0f ms; the floor of any provider is %.0f ms: %s" % (
    g / 20, f, "reachable" if f <= g / 20 else "unreachable through dbus-daemon"))
PY
printf '%-48s %16s\n' "  calls of one search --all, per item" \
    "$(/usr/bin/python3 -c "print('%.1f to the provider, %.1f to dbus-daemon' % ($(val fp calls_provider=) / 1000, \
        $(val fp calls_bus=) / 1000))")"
for n in 100 1000 5000 9900; do
    a=$({ grep -m1 "create items $n-" "$work/arca.out" || true; } | sed 's/.*: //')
    g=$({ grep -m1 "create items $n-" "$work/gk.out" || true; } | sed 's/.*: //')
    printf '%-48s %16s %16s\n' "CreateItem, items $n-$((n + 99))" "${a:--}" "${g:--}"
done
printf '%-48s %16s %16s\n' "CreateItem, 4 clients at once x 50 items" \
    "$(val arca 'create burst 4 clients x 50 items: ')" "$(val gk 'create burst 4 clients x 50 items: ')"
printf '%-48s %13s kB\n' "arca-secretd RSS with $ITEMS items" "$(val arca rss_kb=)"
