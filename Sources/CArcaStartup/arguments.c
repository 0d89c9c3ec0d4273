/*
 * The command line for Swift's `CommandLine`, taken from the arguments glibc hands
 * to every ELF constructor (argc, argv, envp: in a static executable, a dynamic one
 * and a dlopen'ed library alike).
 *
 * Why: on Linux the Swift runtime finds argv with a static constructor (ArgvGrabber,
 * stdlib/public/CommandLineSupport/CommandLine.cpp) that reads and parses
 * /proc/self/maps to locate the stack, in every process the runtime is loaded into,
 * whether or not it ever asks for its arguments. That was 0.28 ms of each dlopen of
 * pam_arca.so in a fresh login process (more in sshd, whose maps are longer) and a
 * good part of what `arca get` pays over `keyctl print` (bench/pam, bench/cli).
 *
 * How: the constructor lives in the runtime archive's CommandLine.cpp.o, which the
 * linker extracts only to resolve `_swift_stdlib_getUnsafeArgvArgc` (the one symbol
 * of it the standard library calls). Defined here, in an object linked ahead of the
 * archive, that member is never extracted and its constructor never runs. Should a
 * later toolchain need another symbol of that member, the link fails with a
 * duplicate definition instead of silently reading /proc/self/maps again; and
 * Tests/integration/01-static-binaries.sh checks that neither binary opens it.
 */
#include <stddef.h>
#include <features.h>

/* Only glibc hands (argc, argv, envp) to .init_array entries; musl (the static Linux
 * SDK) calls them with no arguments, and argv would be whatever the registers held. */
#if !defined(__GLIBC__)
#error "CArcaStartup relies on glibc calling .init_array entries with (argc, argv, envp)"
#endif

static int arca_argc;
static char **arca_argv;
static char *arca_no_arguments[] = {NULL};

static void arca_capture_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    if (argv != NULL && argc >= 0) {
        arca_argc = argc;
        arca_argv = argv;
    }
}

/* In .init_array, so that glibc calls it with (argc, argv, envp); a plain
 * __attribute__((constructor)) is declared without them. */
__attribute__((used, section(".init_array"))) static void (*const arca_capture_entry)(int, char **, char **) =
    arca_capture_arguments;

/* The runtime's declaration: SWIFT_CC(swift) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen).
 * The array is not owned by the caller and lives as long as the process. */
__attribute__((swiftcall, visibility("hidden"))) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    if (arca_argv == NULL) {
        *outArgLen = 0;
        return arca_no_arguments;
    }
    *outArgLen = arca_argc;
    return arca_argv;
}
