#!/usr/bin/env bash
# pam/prepare-install.sh MODULE OUT: writes OUT, the pam_arca.so that is installed (make
# install-files, so the Debian package too) and benchmarked (bench/pam), from MODULE, SwiftPM's
# .build/release/libpam_arca.so. MODULE itself is not changed. Two edits, both with patchelf:
#
# - no RUNPATH: SwiftPM links every product with RUNPATH $ORIGIN. The module needs none (its
#   libraries are the system's), and with it each login's dlopen probes ~24 missing paths under
#   security/.
# - no libm.so.6 among the libraries it needs: the Swift runtime refers to 51 libm functions, which
#   Sources/PAMShim/libm.c defines in the module (each loads libm's own on its first call, which
#   none of Arca's code makes), so that a login process, which has no libm loaded, does not map and
#   relocate it for the module. The swiftc driver puts its -lm where no --as-needed can reach it,
#   so it is dropped here, and only after checking that the module imports no symbol libm
#   defines: should a toolchain's runtime come to call one that libm.c does not forward, this
#   fails and says which, instead of installing a module that would not load.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: pam/prepare-install.sh MODULE OUT" >&2; exit 2; }
module=$1 out=$2
PATCHELF=${PATCHELF:-patchelf}
command -v "$PATCHELF" >/dev/null ||
    { echo "pam/prepare-install.sh: $PATCHELF is missing (make deps installs patchelf)" >&2; exit 1; }
[ -f "$module" ] || { echo "pam/prepare-install.sh: $module: no such module" >&2; exit 1; }
needed=$(readelf -d "$module" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if grep -qx libm.so.6 <<<"$needed"; then
    # The libm the module was linked against, as the loader would find it.
    libm=$(ldd "$module" 2>/dev/null | awk '$1 == "libm.so.6" {print $3}') || libm=""
    [ -n "$libm" ] && [ -f "$libm" ] ||
        { echo "pam/prepare-install.sh: libm.so.6 not found for $module (ldd): nothing was written" >&2; exit 1; }
    # Undefined symbols of the module that libm defines (versions stripped on both sides).
    from_libm=$(comm -12 \
        <(nm -D --undefined-only "$module" | awk '{print $2}' | sed 's/@.*//' | sort -u) \
        <(nm -D --defined-only "$libm" | awk '{print $3}' | sed 's/@.*//' | sort -u))
    if [ -n "$from_libm" ]; then
        echo "pam/prepare-install.sh: $module imports from libm: $(tr "\n" " " <<<"$from_libm")." \
            "Forward them in Sources/PAMShim/libm.c; nothing was written." >&2
        exit 1
    fi
    drop=(--remove-needed libm.so.6)
else
    drop=()
fi
"$PATCHELF" --remove-rpath "${drop[@]}" --output "$out" "$module"
