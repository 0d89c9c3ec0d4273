#!/usr/bin/env bash
# make install strips what it installs and keeps the debug info in the build tree:
# install-files + install-strip (what `make install` runs) into a scratch DESTDIR.
set -euo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
repo=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(mktemp -d /tmp/arca-install-strip.XXXXXX)
trap 'rm -rf "$dest"' EXIT
pass=0 fail=0
check() { # name, command...
    local name=$1; shift
    if out=$("$@" 2>&1); then echo "ok   $name"; pass=$((pass + 1));
    else echo "FAIL $name: $out"; fail=$((fail + 1)); fi
}
pamdir=$dest/lib/security
make -s -C "$repo" install-files install-strip DESTDIR="$dest" PREFIX=/usr BUILD="$build" PAMDIR="$pamdir" \
    UNITDIR="$dest/lib/systemd/system" >"$dest.log" 2>&1 || { cat "$dest.log"; rm -f "$dest.log"; exit 1; }
rm -f "$dest.log"
for pair in arca:usr/bin/arca arcad:usr/sbin/arcad arca-secretd:usr/bin/arca-secretd \
    libpam_arca.so:lib/security/pam_arca.so; do
    src=$build/${pair%%:*} dst=$dest/${pair#*:}
    check "$dst has no debug info" sh -c "! readelf -S '$dst' | grep -q '\.debug_info'"
    check "$dst has no symbol table" sh -c "! readelf -S '$dst' | grep -q ' \.symtab'"
    check "$dst is smaller than $src" test "$(stat -c %s "$dst")" -lt "$(stat -c %s "$src")"
    check "$src.debug holds the debug info" sh -c "readelf -S '$src.debug' | grep -q '\.debug_info'"
    check "$dst names ${src##*/}.debug in .gnu_debuglink" \
        sh -c "readelf --string-dump=.gnu_debuglink '$dst' | grep -q '${src##*/}.debug'"
    check "$dst and $src.debug share the build id" test \
        "$(readelf -n "$dst" | awk '/Build ID/ {print $3}')" = "$(readelf -n "$src.debug" | awk '/Build ID/ {print $3}')"
done
check "stripped arca runs" sh -c "'$dest/usr/bin/arca' version | grep -qx 'arca [0-9.]*'"
check "stripped arcad runs" sh -c "'$dest/usr/sbin/arcad' --version | grep -qx 'arcad [0-9.]*'"
exports=$(nm -D --defined-only "$pamdir/pam_arca.so" | awk '{print $3}' | sort | tr '\n' ' ')
check "stripped pam_arca.so exports only pam_sm_*" test "$exports" = \
    "pam_sm_acct_mgmt pam_sm_authenticate pam_sm_chauthtok pam_sm_close_session pam_sm_open_session pam_sm_setcred "
check "stripped pam_arca.so keeps NODELETE" sh -c "readelf -d '$pamdir/pam_arca.so' | grep -q NODELETE"
check "stripped pam_arca.so loads" python3 -c "import ctypes, os; ctypes.CDLL('$pamdir/pam_arca.so', mode=os.RTLD_NOW)"
# SwiftPM links the module with RUNPATH $ORIGIN; the installed copy has none, so a login's dlopen
# finds libsodium through ld.so's cache instead of first probing ~24 missing paths under security/.
check "installed pam_arca.so has no RUNPATH or RPATH" \
    sh -c "! readelf -d '$pamdir/pam_arca.so' | grep -q -e RUNPATH -e '(RPATH)'"
command -v strace >/dev/null || { echo "FAIL strace is missing (make deps installs it)"; exit 1; }
strace -f -e trace=openat -o "$dest/trace" python3 -c \
    "import ctypes, os; ctypes.CDLL('$pamdir/pam_arca.so', mode=os.RTLD_NOW); print('loaded')" >"$dest/trace.out" 2>&1
check "strace saw the installed pam_arca.so loaded" \
    sh -c "grep -q '$pamdir/pam_arca.so' '$dest/trace' && grep -qx loaded '$dest/trace.out'"
check "loading the installed pam_arca.so opens no missing path" sh -c \
    "! awk -v m='$pamdir/pam_arca.so' 'index(\$0, m) { seen = 1 } seen && /ENOENT/' '$dest/trace' | grep -q ."
echo "install-strip: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
