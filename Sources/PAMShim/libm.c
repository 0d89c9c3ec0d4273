/*
 * The 51 libm functions the static Swift runtime refers to (Float and Double's rounding,
 * remainder, sqrt, fma, the elementary functions of its math shims), defined here so that
 * pam_arca.so does not need libm.so.6: each resolves libm's own function on its first call
 * (dlopen, dlsym) and forwards every call to it, errno and all.
 *
 * Why: a login process (/bin/login, sshd's session child) has no libm loaded. As a DT_NEEDED
 * library of the module, libm was mapped, relocated and searched for those 51 symbols in every
 * login's pam_start (bench/pam: a fresh process's dlopen of the module), although none of
 * Arca's code calls them (Tests/integration/01-static-binaries.sh checks that no Arca function
 * calls a forwarder: only the standard library's own, unused, math does). Should one be called,
 * libm is loaded then, once, and kept.
 *
 * How: these definitions are linked into the module ahead of the -lm that -static-stdlib adds,
 * so the linker resolves the runtime's references here and the module imports nothing from
 * libm; the build's module still lists libm.so.6 as needed (the driver's -lm comes where no
 * --as-needed reaches it), and pam/prepare-install.sh removes it from the installed one. The
 * version script keeps the names local: the module never offers them to the process. 01 also
 * checks that every forwarder returns exactly what libm returns, errno included.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "libm_functions.h"

/* libm's function `name`. libm ships with the C library the module runs on, so a missing
 * libm or symbol means a broken system; the caller asked for a value it cannot be given,
 * and returning any number would be a silent wrong answer: abort. */
static void *arca_libm(const char *name) {
    static void *handle;
    void *library = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);
    if (library == NULL) {
        /* Two threads may both open it: dlopen counts references, and NODELETE keeps it. */
        library = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (library == NULL) abort();
        __atomic_store_n(&handle, library, __ATOMIC_RELEASE);
    }
    void *function = dlsym(library, name);
    if (function == NULL) abort();
    return function;
}

/* `resolved`: libm's `name`, looked up on the first call and kept in `real`; errno as the
 * caller left it (dlopen and dlsym may change it), so that what libm sets is all it sees. */
#define ARCA_RESOLVED(name)                                                   \
    __typeof__(real) resolved = __atomic_load_n(&real, __ATOMIC_ACQUIRE);     \
    if (resolved == NULL) {                                                   \
        int saved = errno;                                                    \
        resolved = (__typeof__(real))arca_libm(#name);                        \
        __atomic_store_n(&real, resolved, __ATOMIC_RELEASE);                  \
        errno = saved;                                                        \
    }

#define ARCA_LIBM1(T, name)                                                   \
    T name(T x) {                                                             \
        static T (*real)(T);                                                  \
        ARCA_RESOLVED(name)                                                   \
        return resolved(x);                                                   \
    }
#define ARCA_LIBM2(T, name)                                                   \
    T name(T x, T y) {                                                        \
        static T (*real)(T, T);                                               \
        ARCA_RESOLVED(name)                                                   \
        return resolved(x, y);                                                \
    }
#define ARCA_LIBM3(T, name)                                                   \
    T name(T x, T y, T z) {                                                   \
        static T (*real)(T, T, T);                                            \
        ARCA_RESOLVED(name)                                                   \
        return resolved(x, y, z);                                             \
    }

/* Each function in its double, float and long double forms. */
#define ARCA_LIBM_ALL(arity, name)                                            \
    ARCA_LIBM##arity(double, name)                                            \
    ARCA_LIBM##arity(float, name##f)                                          \
    ARCA_LIBM##arity(long double, name##l)

ARCA_LIBM_FUNCTIONS(ARCA_LIBM_ALL)
