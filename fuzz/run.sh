#!/bin/bash
# Builds the libFuzzer target for the ArcaProtocol decoder with swiftc
# (-sanitize=fuzzer,address, no SwiftPM target) and runs it for a bounded time.
# Exit 0 when no crash was found; non-zero (and the crashing input kept under
# .build/fuzz/) otherwise. `make test` may call it; FUZZ_SECONDS sets the time.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_BUDGET=${FUZZ_SECONDS:-20}
OUT=.build/fuzz
WORK=fuzz/corpus-ProtocolDecoder      # grows with new inputs; git-ignored
SEEDS=fuzz/ProtocolDecoder/corpus     # committed seed frames, never written
BIN=$OUT/protocol-decoder
mkdir -p "$OUT" "$WORK"

# Does this toolchain link libFuzzer into Swift? If not, fall back to the
# deterministic seeded fuzz of the test suite rather than skip silently.
PROBE=$OUT/probe
printf '@_cdecl("LLVMFuzzerTestOneInput")\npublic func f(_ p: UnsafePointer<UInt8>?, _ n: Int) -> CInt { 0 }\n' >"$PROBE.swift"
if ! swiftc -sanitize=fuzzer,address -parse-as-library "$PROBE.swift" -o "$PROBE" >"$PROBE.log" 2>&1; then
    cat "$PROBE.log" >&2
    echo "fuzz: this toolchain cannot build with -sanitize=fuzzer; running the deterministic fuzz tests" >&2
    exec swift test --filter ArcaProtocolTests.FuzzTests
fi

echo "fuzz: building $BIN (swiftc -sanitize=fuzzer,address)"
# ArcaProtocol imports ArcaSystem (over the C target CArcaSystem): build those two first,
# as SwiftPM would (a module map for the C headers, the Swift module and its object).
DEPS=$OUT/modules
build_dependencies() {
    mkdir -p "$DEPS/CArcaSystem"
    printf 'module CArcaSystem {\n    header "%s"\n    export *\n}\n' \
        "$PWD/Sources/CArcaSystem/include/CArcaSystem.h" >"$DEPS/CArcaSystem/module.modulemap"
    for c in Sources/CArcaSystem/*.c; do
        clang -c -O1 -g -D_GNU_SOURCE -fsanitize=address -ISources/CArcaSystem/include "$c" \
            -o "$DEPS/$(basename "$c" .c).o" || return 1
    done
    swiftc -parse-as-library -O -g -sanitize=address -module-name ArcaSystem -wmo -I "$DEPS/CArcaSystem" \
        -emit-module -emit-module-path "$DEPS/ArcaSystem.swiftmodule" -c -o "$DEPS/ArcaSystem.o" \
        $(find Sources/ArcaSystem -name '*.swift' | sort)
}
if ! build_dependencies >"$OUT/build.log" 2>&1 \
    || ! swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name ArcaProtocolFuzz \
        -I "$DEPS" -I "$DEPS/CArcaSystem" \
        Sources/ArcaProtocol/*.swift Sources/ArcaProtocol/Internals/*.swift \
        fuzz/ProtocolDecoder/*.swift "$DEPS"/*.o -o "$BIN" >>"$OUT/build.log" 2>&1; then
    # The linker warns about ASan's local symbols; only a failed build matters.
    cat "$OUT/build.log" >&2
    echo "fuzz: FAILED to build the fuzz target" >&2
    exit 1
fi

echo "fuzz: running for ${SECONDS_BUDGET}s over $(ls "$SEEDS" | wc -l) seed frames"
status=0
"$BIN" "$WORK" "$SEEDS" -max_total_time="$SECONDS_BUDGET" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$OUT/" -print_final_stats=1 >"$OUT/run.log" 2>&1 || status=$?

grep -E '^(stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb)' "$OUT/run.log" || true
grep -E '^#[0-9]+ *DONE' "$OUT/run.log" || true
if [ "$status" -ne 0 ]; then
    tail -n 40 "$OUT/run.log" >&2
    echo "fuzz: FAILED (exit $status); crashing input under $OUT/" >&2
    exit "$status"
fi
echo "fuzz: no crash; corpus $(ls "$WORK" | wc -l) inputs in $WORK"
