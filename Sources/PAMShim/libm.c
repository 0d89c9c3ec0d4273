/*
 * The 51 libm functions the static Swift runtime refers to (Float and Double's rounding,
 * remainder, sqrt, fma, the elementary functions of its math shims), defined here so that
 * pam_arca.so does not need libm.so.6: each resolves libm's own function on its first call
 * (dlopen, dlsym) and forwards every call to it, errno and all.
 *
 * Why: a login process (/bin/login, sshd's session child) has no libm loaded. As a DT_NEEDED
 * library of the module, libm was mapped, relocated and searched for those 51 symbols in every
 * login's pam_start, although no login step calls any of them (bench/pam: a fresh process's
 * dlopen of the module). Should one be called, libm is loaded then, once, and kept.
 *
 * How: these definitions are linked into the module ahead of the -lm that -static-stdlib
 * adds, so the linker resolves the runtime's references here; --as-needed (Package.swift,
 * pamModuleLinkage) then leaves libm out of DT_NEEDED. The version script keeps the names
 * local: the module never offers them to the process. Tests/integration/01-static-binaries.sh
 * checks that the module imports nothing from libm and that every forwarder returns exactly
 * what libm returns.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>

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

/* `resolved`: libm's `name`, looked up on the first call and kept in `real`. */
#define ARCA_RESOLVED(name)                                              \
    __typeof__(real) resolved = __atomic_load_n(&real, __ATOMIC_ACQUIRE); \
    if (resolved == NULL) {                                              \
        resolved = (__typeof__(real))arca_libm(#name);                   \
        __atomic_store_n(&real, resolved, __ATOMIC_RELEASE);             \
    }

#define ARCA_LIBM1(T, name)                                              \
    T name(T x) {                                                        \
        static T (*real)(T);                                             \
        ARCA_RESOLVED(name)                                    \
        return resolved(x);                                              \
    }
#define ARCA_LIBM2(T, name)                                              \
    T name(T x, T y) {                                                   \
        static T (*real)(T, T);                                          \
        ARCA_RESOLVED(name)                                 \
        return resolved(x, y);                                           \
    }
#define ARCA_LIBM3(T, name)                                              \
    T name(T x, T y, T z) {                                              \
        static T (*real)(T, T, T);                                       \
        ARCA_RESOLVED(name)                              \
        return resolved(x, y, z);                                        \
    }

/* Each function in its double, float and long double forms. */
#define ARCA_LIBM_ALL(arity, name)        \
    ARCA_LIBM##arity(double, name)        \
    ARCA_LIBM##arity(float, name##f)      \
    ARCA_LIBM##arity(long double, name##l)

ARCA_LIBM_ALL(1, ceil)
ARCA_LIBM_ALL(1, floor)
ARCA_LIBM_ALL(1, trunc)
ARCA_LIBM_ALL(1, round)
ARCA_LIBM_ALL(1, rint)
ARCA_LIBM_ALL(1, nearbyint)
ARCA_LIBM_ALL(1, sqrt)
ARCA_LIBM_ALL(1, cos)
ARCA_LIBM_ALL(1, sin)
ARCA_LIBM_ALL(1, exp)
ARCA_LIBM_ALL(1, exp2)
ARCA_LIBM_ALL(1, log)
ARCA_LIBM_ALL(1, log2)
ARCA_LIBM_ALL(1, log10)
ARCA_LIBM_ALL(2, fmod)
ARCA_LIBM_ALL(2, remainder)
ARCA_LIBM_ALL(3, fma)
