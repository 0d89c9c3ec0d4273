/*
 * Tests/integration/01-static-binaries.sh compiles this with Sources/PAMShim/libm.c and without
 * -lm, so that each call below goes to the module's forwarder, and compares it with libm's own
 * function (dlopen, dlsym) on the same inputs: the same bits and the same errno, for all 51, and
 * the caller's errno kept across the first call (which loads libm).
 * Prints one line per function and "forwarders: N checked, M differ"; exits 1 on a difference.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "libm_functions.h" /* Sources/PAMShim: the functions forwarded */

static void *libm;
static int checked, differ;

/* Inputs: ordinary values, halves (rounding), signs, zero, huge, tiny, and the edges that set
 * errno in libm (log of 0 and of a negative, fmod by 0, exp overflow). volatile: no folding. */
static volatile long double inputs[] = {0.5L, -2.5L, 3.0L, 1e-300L, 7.25L, 0.0L, -0.0L, -1.0L, 1000.0L, 2.5L};
#define COUNT (sizeof inputs / sizeof inputs[0])

/* x's bits, the size of T, with long double's 6 padding bytes left out. */
#define SAME(T, a, b) (memcmp(&(a), &(b), sizeof(T) == 16 ? 10 : sizeof(T)) == 0)

#define CHECK1(T, name)                                                          \
    {                                                                            \
        T (*real)(T) = (T(*)(T))dlsym(libm, #name);                              \
        int bad = real == NULL;                                                  \
        for (size_t i = 0; !bad && i < COUNT; i++) {                             \
            T x = (T)inputs[i];                                                  \
            errno = 0;                                                           \
            T ours = name(x);                                                    \
            int ours_errno = errno;                                              \
            errno = 0;                                                           \
            T theirs = real(x);                                                  \
            bad = !SAME(T, ours, theirs) || ours_errno != errno;                 \
        }                                                                        \
        report(#name, bad);                                                      \
    }
#define CHECK2(T, name)                                                          \
    {                                                                            \
        T (*real)(T, T) = (T(*)(T, T))dlsym(libm, #name);                        \
        int bad = real == NULL;                                                  \
        for (size_t i = 0; !bad && i < COUNT; i++) {                             \
            T x = (T)inputs[i], y = (T)inputs[(i + 3) % COUNT];                  \
            errno = 0;                                                           \
            T ours = name(x, y);                                                 \
            int ours_errno = errno;                                              \
            errno = 0;                                                           \
            T theirs = real(x, y);                                               \
            bad = !SAME(T, ours, theirs) || ours_errno != errno;                 \
        }                                                                        \
        report(#name, bad);                                                      \
    }
#define CHECK3(T, name)                                                          \
    {                                                                            \
        T (*real)(T, T, T) = (T(*)(T, T, T))dlsym(libm, #name);                  \
        int bad = real == NULL;                                                  \
        for (size_t i = 0; !bad && i < COUNT; i++) {                             \
            T x = (T)inputs[i], y = (T)inputs[(i + 3) % COUNT], z = (T)inputs[(i + 7) % COUNT]; \
            errno = 0;                                                           \
            T ours = name(x, y, z);                                              \
            int ours_errno = errno;                                              \
            errno = 0;                                                           \
            T theirs = real(x, y, z);                                            \
            bad = !SAME(T, ours, theirs) || ours_errno != errno;                 \
        }                                                                        \
        report(#name, bad);                                                      \
    }
#define CHECK_ALL(arity, name)             \
    CHECK##arity(double, name)             \
    CHECK##arity(float, name##f)           \
    CHECK##arity(long double, name##l)

static void report(const char *name, int bad) {
    checked++;
    if (bad) differ++;
    printf("%s %s\n", bad ? "DIFFERS" : "same", name);
}

int main(void) {
    /* The forwarders must not have libm loaded before their first call. */
    if (dlopen("libm.so.6", RTLD_NOLOAD | RTLD_NOW) != NULL) {
        printf("libm.so.6 was loaded at start: the forwarders are not what is tested\n");
        return 1;
    }
    /* The first call loads libm and looks the function up: errno stays as the caller left it
     * (floor sets none), whatever dlopen and dlsym did to it. */
    errno = 77;
    volatile double first = floor((double)inputs[1]);
    if (errno != 77 || first != -3.0) {
        printf("the first forwarded call changed errno to %d or returned %g\n", errno, first);
        return 1;
    }
    if (dlopen("libm.so.6", RTLD_NOLOAD | RTLD_NOW) == NULL) {
        printf("the first forwarded call did not load libm.so.6\n");
        return 1;
    }
    libm = dlopen("libm.so.6", RTLD_NOW);
    ARCA_LIBM_FUNCTIONS(CHECK_ALL)
    printf("forwarders: %d checked, %d differ\n", checked, differ);
    return differ == 0 ? 0 : 1;
}
