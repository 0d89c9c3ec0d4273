#!/usr/bin/env bash
# bench/secretd: arca-secretd beside gnome-keyring, each on its own private session
# bus, as a throwaway user (arca-secretd over a real arcad and vault):
#   * `secret-tool lookup` as a whole process (hyperfine, and at the end in paired rounds:
#     lookup-paired.sh): with gnome-keyring, with
#     arca-secretd, and secret-tool's own floor (a bus with no provider at all);
#   * SearchItems over 1,000 items, and `secret-tool search --all` of 1,000 items;
#   * the floor of a provider: floor-provider.c, answering the same calls from memory with
#     sd-bus alone, for lookup (plain sessions, and DH sessions as secret-tool asks for first and
#     both providers grant), SearchItems and search --all, and what search --all sends per item
#     (dbus-monitor): what no provider can go below through dbus-daemon;
#   * for each of the three, what one search --all sends per item (dbus-monitor: calls to the
#     provider and to dbus-daemon by member, the round trip of the GetSecret calls secret-tool
#     makes one after the other) and the CPU it costs the provider (arca: and arcad), dbus-daemon
#     and secret-tool itself (bench/secretd/messages.py). A second bus is not measured: Debian's
#     dbus-broker (33) starts only under a systemd user manager (dbus-broker-launch fails with
#     ENOMEDIUM without one, and needs journald's socket), which this test machine does not run;
#   * the providers' own CPU time per lookup (arca-secretd + arcad, gnome-keyring-daemon, the
#     floor provider), which a loaded machine stretches less than wall time;
#   * CreateItem cost per item at 100 and 1,000 (both, and the floor provider, which answers
#     and signals from memory: the bus's and bench.py's own share) and up to 10,000 (arca), and
#     per item for 4 clients creating at once (a burst: Arca's group commit shares syncs);
#   * arca-secretd's RSS with 10,000 items.
# At the end, per figure of issue 15: the target, the measured value, the floor, and whether
# the target is above the floor at all. Figures only, no assertions. Root; a few minutes; everything it starts is gone on exit.
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
    drop_parked  # this arcad never comes back: its ring in root's @u goes too
    rm -rf "$work"
}
# shellcheck source=../../Tests/integration/lib-arcad.bash
. Tests/integration/lib-arcad.bash  # drop_parked (the script runs from the top of the tree)
# shellcheck source=lib.bash
. bench/secretd/lib.bash  # as, start_arcad, waitname
trap cleanup EXIT
useradd -M -N -s /usr/sbin/nologin -d "$work/home" "$user"
U=$(id -u "$user"); G=$(id -g "$user")
mkdir -p "$work/home" && chown "$U:$G" "$work/home"
cc=$(command -v cc || command -v clang) || { echo "bench/secretd: no C compiler for floor-provider.c" >&2; exit 1; }
"$cc" -O2 -o "$work/home/floor-provider" bench/secretd/floor-provider.c -lsystemd -lgcrypt
start_arcad "$build" "$work" "$user"
as_user() { SOCK=$work/arcad.sock as "$user" "$@"; }

# A bus whose only services are the ones started here (bench/secretd/bus.conf says why its limits).
cp bench/secretd/bus.conf "$work/bus.conf"
lookup='secret-tool lookup bench 1 id 500'
hf() { hyperfine -N -i --warmup 3 --runs 30 --export-json "$HOME/$1.json" "$2" >/dev/null 2>&1 || true
    /usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print('%.1f' % (r['median']*1000))" "$HOME/$1.json"; }
# "MS ITEMS": the wall time, and how many items secret-tool printed (all 1,000, or the run failed).
# A third field: secret-tool's own CPU ms (user + system).
allsearch() { /usr/bin/python3 -c "import resource,subprocess,time; t=time.perf_counter(); r=subprocess.run(['secret-tool','search','--all','bench','1'],capture_output=True); u=resource.getrusage(resource.RUSAGE_CHILDREN); print('%.0f %d %.0f' % ((time.perf_counter()-t)*1000, r.stdout.count(b'[/'), (u.ru_utime+u.ru_stime)*1000))"; }
# CPU time (ms) of the given pids, whole processes: utime + stime of /proc/PID/stat count every
# thread the process ever had, those that exited meanwhile too (a thread per request or session
# would escape a sum over /proc/PID/task). Clock ticks (10 ms at 100 Hz): over the 33 runs of a
# lookup figure that is 0.3 ms per lookup; a search --all costs hundreds of ms.
cpums() { local t=0 p f; for p in "$@"; do read -ra f <<<"$(sed 's/.*) //' "/proc/$p/stat")"; t=$((t + f[11] + f[12]))
    done; echo $((t * 1000 / $(getconf CLK_TCK))); }
# "hf NAME CMD PIDS...": the median, then the pids' CPU ms per run (3 warm-up runs + 30).
hfcpu() { local name=$1 cmd=$2; shift 2; local c0; c0=$(cpums "$@")
    local med; med=$(hf "$name" "$cmd"); echo "$med $(/usr/bin/python3 -c "print('%.2f' % (($(cpums "$@") - $c0) / 33))")"; }
# "searchprofile PROVIDER_PID [ARCAD_PID]" (inside a dbus-run-session): one search --all under
# dbus-monitor, summed up per item by messages.py (msg.* lines), then the CPU ms of one
# unmonitored search --all (median of 3) of the provider, arcad, dbus-daemon and secret-tool.
searchprofile() { local p=$1 a=${2:-} bus mon i c0 a0 b0 r; bus=$(pgrep -P "$PPID" -x dbus-daemon || true)
    dbus-monitor --session >"$HOME/monitor.txt" 2>/dev/null & mon=$!; sleep 0.5
    allsearch >/dev/null; sleep 0.5; kill $mon; wait $mon 2>/dev/null || true
    /usr/bin/python3 "$MSG" "$HOME/monitor.txt" 1000 | sed 's/^/msg./'
    for i in 1 2 3; do c0=$(cpums "$p"); a0=$(cpums $a); b0=$(cpums $bus); r=$(allsearch)
        echo "$(($(cpums "$p") - c0)) $(($(cpums $a) - a0)) $(($(cpums $bus) - b0)) ${r##* }"; done |
        /usr/bin/python3 -c "import sys,statistics; c=list(zip(*[map(int,l.split()) for l in sys.stdin]))
print('cpu.provider=%d\ncpu.arcad=%d\ncpu.bus=%d\ncpu.client=%d' % tuple(statistics.median(x) for x in c))"; }
export -f hf waitname allsearch cpums hfcpu searchprofile
cat >"$work/home/common.sh" <<EOF2
B=$build; PY=$PWD/bench/secretd/bench.py; MSG=$PWD/bench/secretd/messages.py; ITEMS=$ITEMS; lookup='$lookup'
$(declare -f hf waitname allsearch cpums hfcpu searchprofile)
EOF2

# secret-tool's floor: nothing on the bus answers (ServiceUnknown at once).
as_user dbus-run-session --config-file="$work/bus.conf" -- bash -c ". \$HOME/common.sh
echo \"floor_ms=\$(hf floor \"\$lookup\")\"" >"$work/floor.out" 2>/dev/null

# The floor of any provider: floor-provider answers from memory; dbus-monitor counts the
# calls of one search --all (to the provider, and to dbus-daemon itself).
as_user dbus-run-session --config-file="$work/bus.conf" -- bash -c ". \$HOME/common.sh
\$HOME/floor-provider 1000 & fp=\$!; waitname
echo \"lookup_ms=\$(hfcpu fp \"\$lookup\" \$fp)\"
/usr/bin/python3 \$PY searchitems
allsearch >/dev/null
echo \"searchall_ms=\$(allsearch)\"
searchprofile \$fp
/usr/bin/python3 \$PY fill 0 1100
kill \$fp
\$HOME/floor-provider 1000 dh & fp=\$!; waitname
echo \"lookup_dh_ms=\$(hfcpu fpdh \"\$lookup\" \$fp)\"
kill \$fp" >"$work/fp.out" 2>/dev/null

# gnome-keyring: login keyring created and unlocked non-interactively, 1,000 items.
as_user dbus-run-session --config-file="$work/bus.conf" -- bash -c ". \$HOME/common.sh
printf bench-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; waitname
gk=\$(gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.secrets | grep -o '[0-9][0-9]*' | tail -1)
/usr/bin/python3 \$PY fill 0 1000
echo \"lookup_ms=\$(hfcpu gk \"\$lookup\" \$gk)\"
/usr/bin/python3 \$PY searchitems
echo \"searchall_ms=\$(allsearch)\"
searchprofile \$gk
/usr/bin/python3 \$PY fill 1000 1100
/usr/bin/python3 \$PY burst 4 20000 50
kill \$gk" >"$work/gk.out" 2>/dev/null

# arca-secretd.
as_user dbus-run-session --config-file="$work/bus.conf" -- bash -c ". \$HOME/common.sh
\$B/arca-secretd & sd=\$!; waitname
/usr/bin/python3 \$PY fill 0 1000
echo \"lookup_ms=\$(hfcpu arca \"\$lookup\" \$sd $arcad_pid)\"
/usr/bin/python3 \$PY searchitems
echo \"searchall_ms=\$(allsearch)\"
searchprofile \$sd $arcad_pid
/usr/bin/python3 \$PY fill 1000 \$ITEMS
secret-tool search --all bench 1 >/dev/null 2>&1
echo \"rss_kb=\$(ps -o rss= -p \$sd | tr -d ' ')\"
/usr/bin/python3 \$PY burst 4 20000 50
kill \$sd" >"$work/arca.out" 2>/dev/null

val() { { grep -m1 "^$2" "$work/$1.out" || true; } | sed "s/^$2//"; }
floor=$(val floor floor_ms=)
read -r gk_lookup gk_cpu <<<"$(val gk lookup_ms=)"; read -r arca_lookup arca_cpu <<<"$(val arca lookup_ms=)"
read -r fp_lookup fp_cpu <<<"$(val fp lookup_ms=)"; read -r fpdh_lookup fpdh_cpu <<<"$(val fp lookup_dh_ms=)"
echo "== bench/secretd ($(nproc) cores, $ITEMS items for Arca's fill; load average at the start $load0, at the end $(cut -d' ' -f1-3 /proc/loadavg))"
echo "   floor: floor-provider.c, the same answers from memory through the same dbus-daemon (plain; dh: DH sessions)"
printf '%-48s %14s %14s %14s %14s\n' "" "arca-secretd" "gnome-keyring" "floor (plain)" "floor (dh)"
printf '%-48s %11s ms %11s ms %11s ms %11s ms\n' "secret-tool lookup, whole process (median)" "$arca_lookup" "$gk_lookup" \
    "$fp_lookup" "$fpdh_lookup"
printf '%-48s %11s ms\n' "secret-tool's floor (no provider on the bus)" "$floor"
printf '%-48s %11s ms %11s ms %11s ms %11s ms\n' "  provider CPU per lookup (arca: + arcad)" "$arca_cpu" "$gk_cpu" "$fp_cpu" "$fpdh_cpu"
/usr/bin/python3 - "$arca_lookup" "$gk_lookup" "$fp_lookup" "$fpdh_lookup" "$floor" <<'PY'
import sys
a, g, p, d, f = map(float, sys.argv[1:])
print("%-48s %14s %14s %14s %14s" % ("time above secret-tool's floor", "%.1f ms" % (a - f), "%.1f ms" % (g - f),
                                     "%.1f ms" % (p - f), "%.1f ms" % (d - f)))
print("%-48s %14s" % ("Arca above floor / gnome-keyring above floor", "%.2fx" % ((a - f) / (g - f) if g > f else float("nan"))))
PY
printf '%-48s %14s %14s %14s\n' "SearchItems over 1,000 items (median of 5)" \
    "$(val arca 'SearchItems over 1000 items: ')" "$(val gk 'SearchItems over 1000 items: ')" \
    "$(val fp 'SearchItems over 1000 items: ')"
read -r a_all a_n _ <<<"$(val arca searchall_ms=)"; read -r g_all g_n _ <<<"$(val gk searchall_ms=)"
read -r f_all f_n _ <<<"$(val fp searchall_ms=)"
printf '%-48s %11s ms %11s ms %11s ms\n' "secret-tool search --all, 1,000 items" "$a_all" "$g_all" "$f_all"
printf '%-48s %14s %14s %14s\n' "  items it printed (all 1,000, or it failed)" "$a_n" "$g_n" "$f_n"
# What one search --all sends per item, and what it costs whom (searchprofile).
/usr/bin/python3 - "$work" <<'PY'
import sys
def load(name):
    d = {}
    for line in open("%s/%s.out" % (sys.argv[1], name)):
        if line.startswith(("msg.", "cpu.")) and "=" in line:
            k, v = line.strip().split("=", 1); d[k] = v
    return d
cols = [load("arca"), load("gk"), load("fp")]
order = ["msg.messages", "msg.replies", "msg.bus.", "msg.provider.", "msg.rtt.", "msg.gap."]
keys = sorted({k for c in cols for k in c if k.startswith("msg.")},
              key=lambda k: (min(i for i, o in enumerate(order) if k.startswith(o)) if any(
                  k.startswith(o) for o in order) else len(order), k))
print("  one search --all, per item (dbus-monitor)")
names = {"msg.messages": "messages the bus routed", "msg.replies": "replies and errors",
         "msg.rtt.GetSecret": "GetSecret round trip at the bus (median, ms)",
         "msg.gap.GetSecret": "secret-tool between GetSecrets (median, ms)"}
for k in keys:
    if float(max((c.get(k, "0") for c in cols), key=float)) < 0.01:
        continue  # the calls made once per search (Hello, OpenSession, SearchItems, GetSecrets)
    label = names.get(k) or ("calls to the provider: " if k.startswith("msg.provider.") else "calls to dbus-daemon: ") \
        + k.split(".")[-1]
    print("%-48s %14s %14s %14s" % ("    " + label, *(c.get(k, "-") for c in cols)))
print("  CPU ms of one search --all (median of 3)")
for k, label in (("cpu.provider", "provider (arca: arca-secretd)"), ("cpu.arcad", "arcad"),
                 ("cpu.bus", "dbus-daemon"), ("cpu.client", "secret-tool")):
    print("%-48s %14s %14s %14s" % ("    " + label, *((c.get(k, "-") if k != "cpu.arcad" or i == 0 else "-")
                                                      for i, c in enumerate(cols))))
PY
creates=""
for n in 100 1000 5000 9900; do
    a=$({ grep -m1 "create items $n-" "$work/arca.out" || true; } | sed 's/.*: //')
    g=$({ grep -m1 "create items $n-" "$work/gk.out" || true; } | sed 's/.*: //')
    f=$({ grep -m1 "create items $n-" "$work/fp.out" || true; } | sed 's/.*: //')
    printf '%-48s %14s %14s %14s\n' "CreateItem, items $n-$((n + 99))" "${a:--}" "${g:--}" "${f:--}"
    creates="$creates ${a%% *}"
done
burst=$(val arca 'create burst 4 clients x 50 items: ')
printf '%-48s %14s %14s\n' "CreateItem, 4 clients at once x 50 items" "$burst" "$(val gk 'create burst 4 clients x 50 items: ')"
rss=$(val arca rss_kb=)
printf '%-48s %11s kB\n' "arca-secretd RSS with $ITEMS items" "$rss"

# Issue 15's figures: target, measured, floor (what a provider answering from memory costs through
# the same dbus-daemon), and whether the target lies above the floor at all.
echo
/usr/bin/python3 - "$arca_lookup" "$gk_lookup" "$fp_lookup" "$fpdh_lookup" "$floor" \
    "$(val arca 'SearchItems over 1000 items: ' | sed 's/ ms//')" "$(val fp 'SearchItems over 1000 items: ' | sed 's/ ms//')" \
    "$a_all" "$g_all" "$f_all" "$rss" "${burst%% *}" "$(val fp cpu.client=)" \
    "$(val fp 'create items 100-199: ' | sed 's/ .*//')" $creates <<'PY'
import sys
v = sys.argv[1:]
a, g, p, d, f = map(float, v[:5])
si, si_floor, a_all, g_all, f_all, rss, burst, client = map(float, v[5:13])
create_floor = v[13]
creates = [float(x) for x in v[14:] if x not in ("", "-")]
rows = []
def row(name, target, measured, floor, reachable, met):
    rows.append((name, target, measured, floor, "yes" if reachable else "NO", "met" if met else "not met"))
t = 0.2 * (g - f)
row("lookup: time above secret-tool's floor", "<= %.1f ms" % t, "%.1f ms" % (a - f),
    "%.1f ms (dh) / %.1f (plain)" % (d - f, p - f), d - f <= t, a - f <= t)
row("SearchItems over 1,000 items", "<= 20 ms", "%.1f ms" % si, "%.1f ms" % si_floor, si_floor <= 20, si <= 20)
# Its floor is the floor provider's wall time; secret-tool's own CPU time for the same search
# (measured beside it) is a floor too, that no provider and no bus can lower.
row("search --all of 1,000 items", "<= %.0f ms (20x gk)" % (g_all / 20), "%.0f ms" % a_all,
    "%.0f ms (secret-tool CPU %.0f)" % (f_all, client), min(f_all, client) <= g_all / 20, a_all <= g_all / 20)
worst = max(creates + [burst]) if creates else burst
row("CreateItem per item, 100..10,000 and burst", "<= 2 ms, flat", "%.2f ms (worst)" % worst,
    "%s ms (100-199)" % (create_floor or "-"), not create_floor or float(create_floor) <= 2, worst <= 2)
row("arca-secretd RSS, 10,000 items", "<= 15 MB", "%.1f MB" % (rss / 1024), "-", True, rss <= 15 * 1024)
print("%-44s %-20s %-16s %-28s %-10s %s" % ("figure (issue 15)", "target", "measured", "floor", "reachable", ""))
for r in rows:
    print("%-44s %-20s %-16s %-28s %-10s %s" % r)
PY

# Issue 15's lookup figure again, in paired rounds (bench/secretd/lookup-paired.sh): the lookup row
# above is a difference of medians, which moved by several ms between quiet runs.
echo
ARCA_BUILD=$build bash bench/secretd/lookup-paired.sh
