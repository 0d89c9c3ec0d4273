#!/usr/bin/env bash
# The Debian packages, on this machine: `make deb` of the release build the other
# scripts tested (ARCA_PREBUILT: Swift is built once), lintian, `apt-get install`,
# the files, modes and the pam-auth-update profile, arcad by hand serving `arca
# status`, an upgrade to a rebuilt package that keeps a conffile edit, remove and
# purge. Whatever happens, the trap purges the packages and puts /etc/pam.d/common-*
# and pam-auth-update's state (/var/lib/pam) back byte for byte.
set -euo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/arca-deb-test.XXXXXX)
chmod 755 "$work"
pass=0 fail=0
arcad_pid=""
pamdir=/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/security
apt=(apt-get -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends)
source "$top/Tests/integration/lib-arcad.bash"

# What this test must leave as it found it.
mkdir "$work/pam.d" "$work/var-lib-pam"
cp -p /etc/pam.d/common-* "$work/pam.d/"
cp -p /var/lib/pam/* "$work/var-lib-pam/"
state_existed=no; [ -e /var/lib/arca ] && state_existed=yes
# arcad by hand: the installed binary and arca.conf, its own socket (a live arcad may hold
# /run/arca), and the package's /var/lib/arca unless that held vaults before the test.
arcad_args=(--foreground --socket "$work/arcad.sock")
[ "$state_existed" = yes ] && arcad_args+=(--state-dir "$work/state")
expected_status=$'uid: 0\nvault: no'
for p in arca libpam-arca; do
    if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qvx not-installed; then
        echo "FAIL $p is already on this machine ($(dpkg-query -W -f='${db:Status-Abbrev}' "$p")): this test would replace it"
        exit 1
    fi
done

stop_arcad() {
    if [ -n "$arcad_pid" ]; then kill "$arcad_pid" 2>/dev/null || true; wait "$arcad_pid" 2>/dev/null || true; fi
    arcad_pid=""
}
stack_differs() { # the PAM stack files that differ from the snapshot
    for f in "$work"/pam.d/*; do cmp -s "$f" "/etc/pam.d/${f##*/}" || echo "/etc/pam.d/${f##*/}"; done
}
# The installed arcad, by hand, until `arca status` gets an answer (5 s at most).
start_installed_arcad() {
    rm -f "$work/arcad.sock"
    /usr/sbin/arcad "${arcad_args[@]}" 2>>"$work/arcad.log" &
    arcad_pid=$!
    for _ in $(seq 250); do /usr/bin/arca --socket "$work/arcad.sock" status >/dev/null 2>&1 && break; sleep 0.02; done
}
pam_differs() { # and pam-auth-update's state (its list of profiles seen)
    stack_differs
    for f in "$work"/var-lib-pam/*; do cmp -s "$f" "/var/lib/pam/${f##*/}" || echo "/var/lib/pam/${f##*/}"; done
    ls /var/lib/pam | while read -r f; do [ -e "$work/var-lib-pam/$f" ] || echo "/var/lib/pam/$f (new)"; done
}
restore() {
    stop_arcad || true
    if dpkg-query -W -f='${db:Status-Status}' arca libpam-arca 2>/dev/null | grep -qv not-installed; then
        "${apt[@]}" purge arca libpam-arca >"$work/cleanup-purge.log" 2>&1 || dpkg --purge libpam-arca arca || true
    fi
    [ "$state_existed" = no ] && rm -rf /var/lib/arca
    local changed; changed=$(pam_differs)
    if [ -n "$changed" ]; then
        echo "restoring the PAM configuration: $(echo $changed)"
        cp -p "$work"/pam.d/* /etc/pam.d/
        rm -f /var/lib/pam/*; cp -p "$work"/var-lib-pam/* /var/lib/pam/
    fi
}
trap 'restore; rm -rf "$work"' EXIT

phase() { echo "-- $1 (${SECONDS} s)"; }
phase "build"
# --- build and lint ------------------------------------------------------------
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
make -s -C "$top" deb ARCA_PREBUILT="$build" DEBDIR="$work/v1" >"$work/build-v1.log" 2>&1 \
    || { tail -30 "$work/build-v1.log"; echo "FAIL make deb"; exit 1; }
packages="arca libpam-arca"
grep -q '"arca-secretd"' "$top/Package.swift" && packages+=" arca-secretd"
expected_debs=$(for p in $packages; do echo "${p}_${version}_amd64.deb ${p}-dbgsym_${version}_amd64.deb"; done | xargs -n1 | sort | xargs)
check "make deb: $packages and their -dbgsym" "$expected_debs" sh -c "cd '$work/v1' && ls *.deb | sort | xargs"
check "the package version is the one arca reports" "arca ${version%%+*}" "$build/arca" version
phase lintian
lintian_out=$(lintian --fail-on error,warning "$work/v1/arca_${version}_amd64.changes" 2>&1 |
    grep -v '^running with root privileges' || true)
check "lintian: no error, no warning" "" echo "$lintian_out"

# --- install -------------------------------------------------------------------
phase install
start=$(date +%s%N)
"${apt[@]}" install "$work/v1/arca_${version}_amd64.deb" "$work/v1/libpam-arca_${version}_amd64.deb" \
    >"$work/install.log" 2>&1 || { cat "$work/install.log"; echo "FAIL apt-get install"; exit 1; }
installed=$(date +%s%N)
start_installed_arcad
status_out=$(/usr/bin/arca --socket "$work/arcad.sock" status 2>&1 | head -2 || true)
served=$(date +%s%N)
check "installed arcad, started by hand, serves arca status (as root: no vault)" "$expected_status" echo "$status_out"
echo "figure: apt-get install of arca + libpam-arca to a working arca status: $(((served - start) / 1000000)) ms" \
    "(apt-get $(((installed - start) / 1000000)) ms, arcad start to status $(((served - installed) / 1000000)) ms)"
for f in "$work"/v1/*.deb; do
    echo "figure: $(basename "$f"): $(stat -c %s "$f") bytes, Installed-Size $(dpkg-deb -f "$f" Installed-Size) KiB"
done

mode() { stat -c '%a %U:%G' "$1"; }
check "/usr/bin/arca 755 root" "755 root:root" mode /usr/bin/arca
check "/usr/sbin/arcad 755 root" "755 root:root" mode /usr/sbin/arcad
check "pam_arca.so in $pamdir, 644 root" "644 root:root" mode "$pamdir/pam_arca.so"
check "the pam-auth-update profile, 644 root" "644 root:root" mode /usr/share/pam-configs/arca
check "/etc/arca/arca.conf is a conffile" "/etc/arca/arca.conf" \
    sh -c "dpkg-query -W -f='\${Conffiles}' arca | awk '{print \$1}' | grep ."
check "/var/lib/arca created 700 root" "700 root:root" mode /var/lib/arca
check "arcad.service runs /usr/sbin/arcad" "ExecStart=/usr/sbin/arcad --foreground" \
    grep '^ExecStart=' /lib/systemd/system/arcad.service
check "the installed units verify" "" systemd-analyze verify --man=no /lib/systemd/system/arcad.service \
    /lib/systemd/system/arcad.socket
check "arcad.socket enabled (sockets.target.wants)" "/lib/systemd/system/arcad.socket" \
    readlink /etc/systemd/system/sockets.target.wants/arcad.socket
check "arcad.service enabled (multi-user.target.wants)" "/lib/systemd/system/arcad.service" \
    readlink /etc/systemd/system/multi-user.target.wants/arcad.service
check "man pages: arca(1), arcad(8), pam_arca(8), arca.conf(5)" "" sh -c \
    'for p in 1/arca 8/arcad 8/pam_arca 5/arca.conf 5/arca-vault 7/arca-keyring; do
        [ -f /usr/share/man/man${p%%/*}/${p#*/}.${p%%/*}.gz ] || echo "missing $p"; done'
for f in /usr/bin/arca /usr/sbin/arcad "$pamdir/pam_arca.so"; do
    check "$f is stripped (no .debug_info)" "0" sh -c "readelf -S '$f' | grep -c '\.debug_info' || true"
    id=$(readelf -n "$f" | awk '/Build ID/ {print $3}')
    check "$f: its debug info is in a -dbgsym package (build id $id)" "./usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" \
        sh -c "for d in '$work'/v1/*-dbgsym_*.deb; do dpkg-deb -c \"\$d\" | awk '{print \$6}'; done | grep -x './usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug'"
done
check "stripped pam_arca.so exports only the six pam_sm_*" \
    "pam_sm_acct_mgmt pam_sm_authenticate pam_sm_chauthtok pam_sm_close_session pam_sm_open_session pam_sm_setcred" \
    sh -c "nm -D --defined-only '$pamdir/pam_arca.so' | awk '{print \$3}' | sort | xargs"
check "stripped pam_arca.so keeps NODELETE" "1" sh -c "readelf -d '$pamdir/pam_arca.so' | grep -c NODELETE"
check "stripped pam_arca.so loads" "ok" python3 -c \
    "import ctypes, os; ctypes.CDLL('$pamdir/pam_arca.so', mode=os.RTLD_NOW); print('ok')"

# pam-auth-update: the profile is known, enabled (Default: yes), and in the stack.
check "pam-auth-update has seen the profile" "arca" grep -x arca /var/lib/pam/seen
check "pam-auth-update lists the profile as enabled" "yes" sh -c \
    "debconf-show libpam-runtime | grep -q 'libpam-runtime/profiles:.*\barca\b' && echo yes"
for t in auth session password; do
    check "common-$t calls pam_arca.so (optional)" "1" sh -c "grep -c '^[^#]*optional[[:space:]]*pam_arca.so' /etc/pam.d/common-$t"
done

# --- upgrade -------------------------------------------------------------------
printf '\n# edited by 90-debian-packages\nidle_timeout = 900\n' >>/etc/arca/arca.conf
edited=$(sha256sum </etc/arca/arca.conf)
/usr/bin/arca --socket "$work/arcad.sock" status >/dev/null 2>&1 || true
stop_arcad
ls -A /var/lib/arca | sort >"$work/vaults-before"
phase "rebuild $version+test1"
v2=${version}+test1
make -s -C "$top" deb ARCA_PREBUILT="$build" DEBDIR="$work/v2" DEB_VERSION="$v2" >"$work/build-v2.log" 2>&1 \
    || { tail -30 "$work/build-v2.log"; echo "FAIL make deb DEB_VERSION=$v2"; exit 1; }
phase upgrade
"${apt[@]}" install "$work/v2/arca_${v2}_amd64.deb" "$work/v2/libpam-arca_${v2}_amd64.deb" \
    >"$work/upgrade.log" 2>&1 || { cat "$work/upgrade.log"; echo "FAIL apt-get install (upgrade)"; exit 1; }
check "upgraded to $v2" "$v2 $v2" sh -c "dpkg-query -W -f='\${Version}\n' arca libpam-arca | xargs"
check "the conffile edit survived the upgrade" "$edited" sh -c 'sha256sum </etc/arca/arca.conf'
check "no .dpkg-new/.dpkg-dist/.dpkg-old beside it" "arca.conf" ls /etc/arca
check "the vaults survived the upgrade" "$(cat "$work/vaults-before")" sh -c 'ls -A /var/lib/arca | sort'
start_installed_arcad
check "the upgraded arcad starts with the edited arca.conf and serves" "$expected_status" \
    sh -c "/usr/bin/arca --socket '$work/arcad.sock' status | head -2"
stop_arcad

# --- remove and purge ----------------------------------------------------------
phase "remove, purge"
"${apt[@]}" remove arca libpam-arca >"$work/remove.log" 2>&1 || { cat "$work/remove.log"; echo "FAIL remove"; exit 1; }
check "remove: binaries and module gone" "" sh -c "ls /usr/bin/arca /usr/sbin/arcad '$pamdir/pam_arca.so' 2>/dev/null"
check "remove: pam_arca in no /etc/pam.d/common-*" "" sh -c 'grep -l pam_arca /etc/pam.d/common-* || true'
check "remove: /etc/pam.d/common-* byte for byte as before the install" "" stack_differs
check "remove: the vaults are kept" "$(cat "$work/vaults-before")" sh -c 'ls -A /var/lib/arca | sort'
check "remove: the conffile is kept" "$edited" sh -c 'sha256sum </etc/arca/arca.conf'

"${apt[@]}" purge arca libpam-arca >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; echo "FAIL purge"; exit 1; }
check "purge says where the vaults are and keeps them" \
    "arca: keeping the vaults in /var/lib/arca (users/UID.db, system.db, host.key): they are user data." \
    sh -c "tr -d '\r' <'$work/purge.log' | grep -m1 '^arca: keeping'"
check "purge: the vaults are still there" "$(cat "$work/vaults-before")" sh -c 'ls -A /var/lib/arca | sort'
check "purge: /etc/arca gone" "" sh -c 'ls -d /etc/arca 2>/dev/null'
check "purge: unit enablement gone" "" sh -c \
    'ls /etc/systemd/system/*.wants/arcad.* 2>/dev/null; grep -rl arcad /var/lib/systemd/deb-systemd-helper-enabled 2>/dev/null'
check "purge: no package left" "" sh -c "dpkg -l arca libpam-arca 2>/dev/null | grep '^[a-z][a-z] ' | grep -v '^un'"

if [ "$state_existed" = no ]; then
    "${apt[@]}" install "$work/v2/arca_${v2}_amd64.deb" >"$work/install2.log" 2>&1
    ARCA_PURGE_VAULTS=yes "${apt[@]}" purge arca >"$work/purge2.log" 2>&1 || { cat "$work/purge2.log"; echo "FAIL purge 2"; }
    check "ARCA_PURGE_VAULTS=yes: the purge says it deletes the vaults" \
        "arca: ARCA_PURGE_VAULTS=yes: deleting the vaults and the host key in /var/lib/arca" \
        sh -c "tr -d '\r' <'$work/purge2.log' | grep -m1 '^arca: ARCA_PURGE'"
    check "ARCA_PURGE_VAULTS=yes: /var/lib/arca gone" "" sh -c 'ls -d /var/lib/arca 2>/dev/null'
else
    echo "note: /var/lib/arca existed before this test (an installed Arca?): the ARCA_PURGE_VAULTS=yes purge is not run"
fi

check "after the purges: /etc/pam.d/common-* byte for byte as before the test" "" stack_differs
restore
check "after restore: /etc/pam.d/common-* and /var/lib/pam as before the test" "" pam_differs
echo "debian-packages: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
