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
install_into() { # DESTDIR, make arguments...
    local into=$1; shift
    make -s -C "$repo" install-files install-strip DESTDIR="$into" PREFIX=/usr BUILD="$build" \
        PAMDIR="$into/lib/security" UNITDIR="$into/lib/systemd/system" "$@"
}
install_into "$dest" >"$dest.log" 2>&1 || { cat "$dest.log"; rm -f "$dest.log"; exit 1; }
rm -f "$dest.log"
installed="usr/bin/arca usr/sbin/arcad usr/bin/arca-secretd lib/security/pam_arca.so"
declare -A inode sum
for f in $installed; do inode[$f]=$(stat -c %i "$dest/$f") sum[$f]=$(sha256sum <"$dest/$f"); done
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
# Nor libm.so.6 (pam/prepare-install.sh; the runtime's libm calls are the module's forwarders): a login
# process has none loaded, and loading the installed module does not load it either.
check "installed pam_arca.so does not need libm.so.6" sh -c "! readelf -d '$pamdir/pam_arca.so' | grep -q 'libm\.so'"
cat >"$dest/noload.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
    if (argc != 2 || dlopen("libm.so.6", RTLD_NOLOAD | RTLD_NOW) != NULL) return 2;
    if (dlopen(argv[1], RTLD_NOW) == NULL) { printf("dlopen: %s\n", dlerror()); return 1; }
    printf("%s\n", dlopen("libm.so.6", RTLD_NOLOAD | RTLD_NOW) != NULL ? "libm loaded" : "no libm");
    return 0;
}
EOF
check "a C program without libm compiles" clang -O2 -o "$dest/noload" "$dest/noload.c"
check "loading the installed pam_arca.so does not load libm.so.6" \
    sh -c "'$dest/noload' '$pamdir/pam_arca.so' | grep -qx 'no libm'"
check "loading the build's pam_arca.so does (the check can see libm)" \
    sh -c "'$dest/noload' '$build/libpam_arca.so' | grep -qx 'libm loaded'"
command -v strace >/dev/null || { echo "FAIL strace is missing (make deps installs it)"; exit 1; }
strace -f -e trace=openat -o "$dest/trace" python3 -c \
    "import ctypes, os; ctypes.CDLL('$pamdir/pam_arca.so', mode=os.RTLD_NOW); print('loaded')" >"$dest/trace.out" 2>&1
check "strace saw the installed pam_arca.so loaded" \
    sh -c "grep -q '$pamdir/pam_arca.so' '$dest/trace' && grep -qx loaded '$dest/trace.out'"
check "loading the installed pam_arca.so opens no missing path" sh -c \
    "! awk -v m='$pamdir/pam_arca.so' 'index(\$0, m) { seen = 1 } seen && /ENOENT/' '$dest/trace' | grep -q ."
# A re-install reaches the installed files only by rename: install unlinked pam_arca.so and wrote the
# new one at its path, patchelf and strip then rewrote it in place, and a login loading the module
# meanwhile got SIGBUS or "file too short".
# An open descriptor keeps each old inode alive (its number is not reused) and shows what a process
# that had the file open or mapped still sees: the old file, whole. (Not a second hard link: install
# unlinks a file with several links instead of writing it, which would hide the rewrite.)
declare -A held
for f in $installed; do exec {fd}<"$dest/$f"; held[$f]=$fd; done
strace -f -e trace=%file -o "$dest.trace" bash -c "$(declare -f install_into); repo='$repo' build='$build' \
    install_into '$dest'" >"$dest.log" 2>&1 && status=0 || status=$?
check "a re-install succeeds" sh -c "[ $status -eq 0 ] || cat '$dest.log'"
rm -f "$dest.log"
live="\"$pamdir/pam_arca.so\""
check "re-install renames pam_arca.so into place" grep -qE "rename[a-z0-9]*\(.*, $live" "$dest.trace"
check "re-install never writes or unlinks pam_arca.so at its path" sh -c \
    "! grep -F '$live' '$dest.trace' | grep -E 'O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|unlink'"
rm -f "$dest.trace"
for f in $installed; do
    check "re-install renames a new $f into place (inode ${inode[$f]} replaced)" \
        test "$(stat -c %i "$dest/$f")" != "${inode[$f]}"
    check "re-install leaves the old $f's contents alone" \
        test "$(sha256sum <"/proc/$$/fd/${held[$f]}")" = "${sum[$f]}"
    fd=${held[$f]}
    exec {fd}<&-
done
check "re-installed pam_arca.so is stripped and has no RUNPATH" sh -c \
    "! readelf -S '$pamdir/pam_arca.so' | grep -q ' \.symtab' && ! readelf -d '$pamdir/pam_arca.so' | grep -q RUNPATH"
check "re-installed pam_arca.so loads" python3 -c "import ctypes, os; ctypes.CDLL('$pamdir/pam_arca.so', mode=os.RTLD_NOW)"
check "no temporary file is left beside the installed files" \
    test -z "$(find "$dest" -name '.*.new')$(find "$build" -maxdepth 1 -name 'pam_arca.so.install')"
# Without patchelf, install-files stops before installing anything, and says why.
empty=$(mktemp -d /tmp/arca-install-nopatchelf.XXXXXX)
trap 'rm -rf "$dest" "$empty"' EXIT
install_into "$empty" PATCHELF=/nonexistent/patchelf >"$empty.log" 2>&1 && status=0 || status=$?
check "without patchelf install-files fails" test "$status" -ne 0
check "without patchelf install-files says patchelf is missing" \
    grep -q 'make install-files: /nonexistent/patchelf is missing' "$empty.log"
check "without patchelf nothing is installed" test -z "$(ls -A "$empty")"
rm -f "$empty.log"
echo "install-strip: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
