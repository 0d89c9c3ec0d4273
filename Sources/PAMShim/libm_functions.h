/* The libm functions pam_arca.so forwards (libm.c): the ones the static Swift runtime refers to.
 * ARCA_LIBM_FUNCTIONS(X) expands X(arity, name) for each, named in its double form; the float and
 * long double forms add f and l. The one list: Tests/integration/libm-forwarders.c includes it and
 * Tests/integration/01-static-binaries.sh reads it. */
#ifndef ARCA_LIBM_FUNCTIONS_H
#define ARCA_LIBM_FUNCTIONS_H
#define ARCA_LIBM_FUNCTIONS(X) \
    X(1, ceil)                 \
    X(1, floor)                \
    X(1, trunc)                \
    X(1, round)                \
    X(1, rint)                 \
    X(1, nearbyint)            \
    X(1, sqrt)                 \
    X(1, cos)                  \
    X(1, sin)                  \
    X(1, exp)                  \
    X(1, exp2)                 \
    X(1, log)                  \
    X(1, log2)                 \
    X(1, log10)                \
    X(2, fmod)                 \
    X(2, remainder)            \
    X(3, fma)
#endif
