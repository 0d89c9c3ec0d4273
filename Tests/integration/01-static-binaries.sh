#!/usr/bin/env bash
# Release executables and the PAM module must not depend on the Swift toolchain's
# directory: run them with that directory hidden under an empty tmpfs.
set -euo pipefail
build=${ARCA_BUILD:?ARCA_BUILD must point at .build/release}
swift_usr=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
pass=0 fail=0
check() { # name, command...
    local name=$1; shift
    if out=$("$@" 2>&1); then echo "ok   $name"; pass=$((pass + 1));
    else echo "FAIL $name: $out"; fail=$((fail + 1)); fi
}
hidden() { unshare -m sh -c "mount -t tmpfs none '$swift_usr' && $*"; }

check "toolchain directory found ($swift_usr)" test -x "$swift_usr/bin/swift"
check "hiding works: swift is gone under the tmpfs" hidden "! test -e '$swift_usr/bin/swift'"
check "arca version runs with the toolchain hidden" hidden "'$build/arca' version | grep -qx 'arca [0-9.]*'"
check "arcad --version runs with the toolchain hidden" hidden "'$build/arcad' --version | grep -qx 'arcad [0-9.]*'"
check "arca-secretd --version runs with the toolchain hidden" \
    hidden "'$build/arca-secretd' --version | grep -qx 'arca-secretd [0-9.]*'"
for bin in arca-fleetd arca-sync; do  # Foundation linked statically: no --version, --help answers
    check "$bin --help runs with the toolchain hidden" hidden "'$build/$bin' --help | grep -q '^usage: arca '"
done
check "pam_arca.so loads with the toolchain hidden" \
    hidden "python3 -c \"import ctypes, os; ctypes.CDLL('$build/libpam_arca.so', mode=os.RTLD_NOW)\""
for bin in arca arcad arca-secretd arca-fleetd arca-sync libpam_arca.so; do
    check "$bin links nothing from the toolchain" sh -c "! ldd '$build/$bin' | grep -q '$swift_usr'"
done
exports=$(nm -D --defined-only "$build/libpam_arca.so" | awk '{print $3}' | sort | tr '\n' ' ')
check "pam_arca.so exports only pam_sm_*" test "$exports" = \
    "pam_sm_acct_mgmt pam_sm_authenticate pam_sm_chauthtok pam_sm_close_session pam_sm_open_session pam_sm_setcred "
check "pam_arca.so is linked -z nodelete" sh -c "readelf -d '$build/libpam_arca.so' | grep -q 'NODELETE'"
# A login process (C) does not have libstdc++ loaded: loading it for the module doubled
# the module's dlopen (bench/pam). The Swift runtime's C++ comes from GCC's archive.
check "pam_arca.so does not load libstdc++.so" sh -c "! readelf -d '$build/libpam_arca.so' | grep -q 'libstdc++'"
# GCC's unwinder, which the runtime's C++ needs, comes from GCC's archive too (-static-libgcc):
# libgcc_s.so.1 was the one library besides libsodium and libm that a login process loaded for it.
check "pam_arca.so does not load libgcc_s.so" sh -c "! readelf -d '$build/libpam_arca.so' | grep -q 'libgcc_s'"
# Glibc's Swift overlay (errno, open, S_IFMT...) is one object whose retained sections wrap ~60
# libm functions: linked in, each login's dlopen resolved them all. ArcaSystem calls CArcaSystem.
# The listing must hold the module's own Swift symbols: a stripped module or a failing nm would
# list none, and "no s5Glibc" would pass without looking.
symbols=$(mktemp)
nm "$build/libpam_arca.so" >"$symbols" 2>&1 || true
check "nm lists pam_arca.so's Swift symbols (\$s...)" grep -q ' \$s' "$symbols"
check "pam_arca.so links no Glibc Swift overlay" sh -c "! grep -q 's5Glibc' '$symbols'"
rm -f "$symbols"
check "pam_arca.so imports none of the overlay's libm wrappers (tgammal)" \
    sh -c "! nm -D --undefined-only '$build/libpam_arca.so' | grep -qw tgammal"
# libm's 51 functions the runtime refers to are the module's own forwarders (Sources/PAMShim/libm.c),
# so that the installed module needs no libm.so.6 (02 checks it): pam/prepare-install.sh, which make
# install runs, refuses a module that imports any symbol libm defines; no Arca function calls a
# forwarder (only the standard library's own math does, which Arca does not use), so no login
# loads libm; and each forwarder returns libm's bits and errno.
prepared=$(mktemp)
check "pam/prepare-install.sh accepts the module: it imports nothing libm defines" \
    bash "$(dirname "$0")/../../pam/prepare-install.sh" "$build/libpam_arca.so" "$prepared"
check "the prepared module needs no libm.so.6 (the build's does)" sh -c \
    "readelf -d '$build/libpam_arca.so' | grep -q 'libm\.so' && ! readelf -d '$prepared' | grep -q 'libm\.so'"
rm -f "$prepared"
check "no Arca function calls a libm forwarder" python3 -c "
import re, subprocess, sys
header = open('$(dirname "$0")/../../Sources/PAMShim/libm_functions.h').read()
names = {f + s for f in re.findall(r'X\\([123], (\\w+)\\)', header) for s in ('', 'f', 'l')}
if len(names) != 51: sys.exit(f'{len(names)} names read from libm_functions.h, not 51')
out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', '$build/libpam_arca.so'],
                     capture_output=True, text=True, check=True).stdout
function, callers, calls = '', set(), 0
for line in out.splitlines():
    header = re.match(r'^[0-9a-f]+ <(.+)>:$', line)
    if header:
        function = header.group(1)
        continue
    target = re.search(r'\\b(?:call|jmp)\\s+[0-9a-f]+ <([^>+]+)>', line)
    if target and target.group(1) in names:
        calls += 1
        if re.match(r'\\\$s[0-9]+Arca', function) or function.startswith(('arca', 'pam_sm')):
            callers.add(function)
print(f'{calls} calls to forwarders; from Arca: {sorted(callers)}')
sys.exit(1 if calls == 0 or callers else 0)
"
forwarders=$(mktemp)
check "libm forwarders compile without -lm" clang -O2 -fno-builtin -Wall -I"$(dirname "$0")/../../Sources/PAMShim" -o "$forwarders" \
    "$(dirname "$0")/libm-forwarders.c" "$(dirname "$0")/../../Sources/PAMShim/libm.c"
check "the forwarders' test program does not need libm" sh -c "! readelf -d '$forwarders' | grep -q 'libm\.so'"
check "all 51 libm forwarders return libm's bits and errno" \
    sh -c "'$forwarders' | tail -1 | grep -qx 'forwarders: 51 checked, 0 differ'"
rm -f "$forwarders"
# The Swift runtime's argv grabber reads /proc/self/maps at load: CArcaStartup keeps it out
# of arca and pam_arca.so (0.28 ms of a login's module load), and arca still gets its arguments.
command -v strace >/dev/null || { echo "FAIL strace is missing (make deps installs it)"; exit 1; }
for bin in arca libpam_arca.so; do
    check "$bin carries no runtime argv grabber (CArcaStartup)" \
        sh -c "! nm '$build/$bin' | grep -qi -e argvgrabber -e _GLOBAL__sub_I_CommandLine"
done
# Each trace must show the binary itself being opened/run (a refused ptrace or a failed
# dlopen would otherwise show no /proc/self/maps and pass without testing anything).
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT
strace -f -e trace=openat -o "$traces/pam" python3 -c \
    "import ctypes, os; ctypes.CDLL('$build/libpam_arca.so', mode=os.RTLD_NOW); print('loaded')" >"$traces/pam.out" 2>&1
check "strace saw pam_arca.so loaded" sh -c "grep -q 'libpam_arca.so' '$traces/pam' && grep -qx loaded '$traces/pam.out'"
check "loading pam_arca.so does not read /proc/self/maps" sh -c "! grep -q /proc/self/maps '$traces/pam'"
check "arca gets its arguments without the grabber" sh -c \
    "'$build/arca' get --help | head -1 | grep -qx 'usage: arca get \[options\]'"
strace -f -e trace=openat -o "$traces/arca" "$build/arca" version >/dev/null 2>&1
check "strace saw arca run to its exit" sh -c "grep -q '+++ exited with 0 +++' '$traces/arca'"
check "arca does not read /proc/self/maps" sh -c "! grep -q /proc/self/maps '$traces/arca'"
# The functions a login runs (pam/pam_arca.order, bench/pam/order.sh) are laid out together:
# each 64 KiB of code they touch is a first-touch page fault in a fresh login process (the
# kernel maps file pages around a fault 64 KiB at a time). 20 windows when the order was
# written; 38 without it (the runtime's C++ objects and libswiftCore's Swift.o have one .text
# each, which lld can only move whole).
order=$(dirname "$0")/../../pam/pam_arca.order
check "pam_arca.so's login functions lie on at most 24 64-KiB windows of code" python3 -c "
import subprocess, sys
want = {l.strip() for l in open('$order') if l.strip() and not l.startswith('#')}
windows, found = set(), set()
for line in subprocess.run(['nm', '-S', '--defined-only', '$build/libpam_arca.so'],
                           capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 4 and f[3] in want and f[2] in 'tTwW':
        start, size = int(f[0], 16), max(int(f[1], 16), 1)
        found.add(f[3])
        windows.update(range(start >> 16, ((start + size - 1) >> 16) + 1))
print(f'{len(found)} of {len(want)} functions found on {len(windows)} windows')
sys.exit(0 if len(want) >= 100 and len(found) >= 0.9 * len(want) and len(windows) <= 24 else 1)
"
echo "static-binaries: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
