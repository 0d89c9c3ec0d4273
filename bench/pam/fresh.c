/* bench/pam/fresh.c: one login step in a fresh C process, timed inside it (bench/pam/run.sh,
 * paired.sh and timeline.sh compile it with the toolchain's clang). A login (login, each sshd
 * connection) is a C process that loads the PAM stack anew: no Swift runtime, no libstdc++ and
 * no libsodium loaded yet. So this program links only what /bin/login's own code does (libpam,
 * libc; libdl is in libc): pam_arca.so's libsodium is loaded by pam_start, as in a real login.
 * Times in microseconds: wall on CLOCK_MONOTONIC, CPU on CLOCK_PROCESS_CPUTIME_ID.
 *
 *   fresh dlopen MODULE
 *       dlopen(MODULE, RTLD_NOW) with libpam already loaded (it is, in a login process).
 *       Prints "dlopen_us".
 *   fresh txn SERVICE USER KDFS [OPS MEMORY]
 *       pam_start, pam_authenticate, pam_open_session, pam_close_session, pam_end (run it
 *       under pam_wrapper: the stack supplies the password). Prints one line of "key value"
 *       pairs:
 *         start auth open close end txn   wall time of each step and of the transaction,
 *                                          the time spent inside crypto_pwhash excluded;
 *         kdf_start .. kdf_end, kdf       wall time inside crypto_pwhash, per step and in all;
 *         kdf_cpu                         this process's CPU time inside crypto_pwhash;
 *         calls                           how many times the module called crypto_pwhash;
 *         cpu_start .. cpu_end            this process's CPU time (user + system, all threads)
 *                                          per step, crypto_pwhash's own CPU excluded: wall
 *                                          minus CPU is the time the step waited (on arcad);
 *         flt_start .. flt_end            this process's minor page faults per step (getrusage),
 *                                          those inside crypto_pwhash excluded: first touches of
 *                                          the module's pages (code, data, relocations) above all;
 *         alone, alone_cpu                with OPS and MEMORY: the wall and CPU time of one
 *                                          Argon2id alone (OPS passes, MEMORY bytes) after pam_end,
 *                                          libsodium loaded then: a cross-check of kdf and kdf_cpu
 *                                          (on a loaded machine the CPU times agree and the wall
 *                                          times need not: they wait for a CPU differently); else 0.
 *       KDFS: the exact number of crypto_pwhash calls expected in the transaction (1 for a
 *       stack with pam_arca, whose auth derives the login key; 0 for the others). Any other
 *       count is an error (exit 4): fewer means the bench stopped catching the KDF and would
 *       stop subtracting it; more means the module derived again (in open_session, when arcad
 *       judges the published KDF parameters stale: openSession -> unlock ->
 *       derivedAgainIfStale), and silently subtracting a second KDF would hide that cost.
 *       KDFS must be a decimal number (exit 2 otherwise).
 *       With FRESH_MARKS=1 in the environment, each step is bracketed by a write(-1,
 *       "fresh:mark:STEP") that fails at once (EBADF) and that strace/perf trace show, and by
 *       a line "fresh:mark:STEP MONOTONIC_µs" on stderr (perf sched's clock with -k mono), so
 *       that bench/pam/timeline.sh can cut a trace into the steps.
 *
 * How the KDF is caught: this program defines crypto_pwhash itself and exports it (link with
 * -Wl,--export-dynamic-symbol=crypto_pwhash). The executable comes first in the global lookup
 * scope, so pam_arca.so's import binds here rather than to its own libsodium; the definition
 * times the call and forwards it to the one the caller would have bound (dlsym on the calling
 * object's handle: its dependencies, libsodium among them). Each step minus its own KDF time is
 * then exact per process, not a difference of medians of two noisy measurements.
 * No user/system split of the CPU time: this kernel samples it at the tick (TICK_CPU_ACCOUNTING,
 * 250 Hz), so getrusage's split of a 1 ms step is noise; the sum is exact (the scheduler's
 * runtime). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { START, AUTH, OPEN, CLOSE, END, STEP_COUNT };
static const char *const STEPS[] = {"start", "auth", "open", "close", "end", "done"};
static int marks;
static int step = -1;                                /* the PAM step running, -1 outside one */
static double kdf_wall[STEP_COUNT], kdf_cpu[STEP_COUNT]; /* inside crypto_pwhash, per step */
static double kdf_flt[STEP_COUNT];                   /* minor page faults inside crypto_pwhash */
static int kdf_calls, kdf_outside;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static double cpu_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* This process's minor page faults so far (all threads): a count the machine's load does not change. */
static double minflt(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_minflt;
}

typedef int pwhash_fn(unsigned char *out, unsigned long long outlen, const char *passwd,
                      unsigned long long passwdlen, const unsigned char *salt, unsigned long long opslimit,
                      size_t memlimit, int alg);
pwhash_fn crypto_pwhash; /* defined below: the interposer */

/* libsodium's crypto_pwhash, as the calling object would have bound it: looked up through that
 * object's handle (the object and its dependencies; never this executable). */
static pwhash_fn *real_pwhash(const void *caller) {
    Dl_info info;
    if (dladdr(caller, &info) == 0 || info.dli_fname == NULL) return NULL;
    void *object = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (object == NULL) return NULL;
    pwhash_fn *real = (pwhash_fn *)dlsym(object, "crypto_pwhash");
    dlclose(object); /* drops the reference RTLD_NOLOAD took; the caller keeps it loaded */
    return real == crypto_pwhash ? NULL : real;
}

/* The interposer: times the call (the lookup included, so that none of this program's own work
 * stays in a step) and forwards it. */
int crypto_pwhash(unsigned char *const out, unsigned long long outlen, const char *const passwd,
                  unsigned long long passwdlen, const unsigned char *const salt, unsigned long long opslimit,
                  size_t memlimit, int alg) {
    double w0 = now_us(), c0 = cpu_us(), f0 = minflt();
    pwhash_fn *real = real_pwhash(__builtin_return_address(0));
    if (real == NULL) {
        fprintf(stderr, "fresh: crypto_pwhash called, but the caller's own one cannot be found\n");
        _exit(5);
    }
    int result = real(out, outlen, passwd, passwdlen, salt, opslimit, memlimit, alg);
    double f1 = minflt(), c1 = cpu_us(), w1 = now_us();
    if (step >= 0) {
        kdf_wall[step] += w1 - w0;
        kdf_cpu[step] += c1 - c0;
        kdf_flt[step] += f1 - f0;
        kdf_calls++;
    } else {
        kdf_outside++;
    }
    return result;
}

/* A marker in a syscall trace: write(2) to fd -(100 + the step's index in STEPS) fails with
 * EBADF and does nothing else; the step is in the fd, so strace can run with -s 0 (no strings:
 * the derived key and session token on arcad's socket stay out of the trace). */
static void mark(int index) {
    if (marks) {
        fprintf(stderr, "fresh:mark:%s %.1f\n", STEPS[index], now_us()); /* CLOCK_MONOTONIC µs, for perf sched */
        char text[64];
        int n = snprintf(text, sizeof text, "fresh:mark:%s", STEPS[index]);
        if (write(-100 - index, text, (size_t)n) < 0) { /* EBADF, by design */ }
    }
}

static int no_conversation(int n, const struct pam_message **m, struct pam_response **r, void *a) {
    (void)n, (void)m, (void)r, (void)a;
    return PAM_CONV_ERR;
}

/* One Argon2id alone, libsodium loaded now (after the transaction: never before pam_start).
 * Returns its wall time; its CPU time in *cpu. */
static double kdf_alone(unsigned long long ops, size_t memory, double *cpu) {
    void *sodium = dlopen("libsodium.so.23", RTLD_NOW);
    if (sodium == NULL) { fprintf(stderr, "fresh: %s\n", dlerror()); exit(3); }
    int (*init)(void) = (int (*)(void))dlsym(sodium, "sodium_init");
    pwhash_fn *pwhash = (pwhash_fn *)dlsym(sodium, "crypto_pwhash");
    unsigned char out[32], salt[16] = {0}; /* crypto_pwhash_SALTBYTES */
    if (init == NULL || pwhash == NULL || init() < 0) exit(3);
    double t0 = now_us(), c0 = cpu_us();
    if (pwhash(out, sizeof out, "bench-pw", 8, salt, ops, memory, 2 /* crypto_pwhash_ALG_ARGON2ID13 */) != 0)
        exit(3);
    *cpu = cpu_us() - c0;
    return now_us() - t0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "dlopen") == 0) {
        double t0 = now_us();
        void *module = dlopen(argv[2], RTLD_NOW);
        double t1 = now_us();
        if (module == NULL) { fprintf(stderr, "fresh: %s\n", dlerror()); return 2; }
        printf("%.0f\n", t1 - t0);
        return 0;
    }
    if ((argc == 5 || argc == 7) && strcmp(argv[1], "txn") == 0) {
        char *rest = NULL;
        long want = strtol(argv[4], &rest, 10);
        if (rest == argv[4] || *rest != '\0' || want < 0 || want > 100) {
            fprintf(stderr, "fresh: KDFS must be a number of crypto_pwhash calls (0..100), not '%s'\n", argv[4]);
            return 2;
        }
        if (dlsym(RTLD_DEFAULT, "crypto_pwhash") != (void *)crypto_pwhash) {
            fprintf(stderr, "fresh: crypto_pwhash is not exported (link with "
                            "-Wl,--export-dynamic-symbol=crypto_pwhash): the KDF would not be caught\n");
            return 4;
        }
        struct pam_conv conversation = {no_conversation, NULL};
        pam_handle_t *handle = NULL;
        marks = getenv("FRESH_MARKS") != NULL;
        double wall[STEP_COUNT + 1], cpu[STEP_COUNT + 1], flt[STEP_COUNT + 1];
        int r[STEP_COUNT] = {PAM_SUCCESS, PAM_SUCCESS, PAM_SUCCESS, PAM_SUCCESS, PAM_SUCCESS};
        for (step = START; step <= END; step++) {
            mark(step);
            wall[step] = now_us();
            cpu[step] = cpu_us();
            flt[step] = minflt();
            switch (step) {
            case START: r[step] = pam_start(argv[2], argv[3], &conversation, &handle); break;
            case AUTH: r[step] = pam_authenticate(handle, 0); break;
            case OPEN: r[step] = pam_open_session(handle, 0); break;
            case CLOSE: r[step] = pam_close_session(handle, 0); break;
            case END: r[step] = pam_end(handle, PAM_SUCCESS); break;
            }
            if (step == START && r[step] != PAM_SUCCESS) return 2;
        }
        wall[STEP_COUNT] = now_us();
        cpu[STEP_COUNT] = cpu_us();
        flt[STEP_COUNT] = minflt();
        step = -1;
        mark(STEP_COUNT);
        if (r[AUTH] != PAM_SUCCESS || r[OPEN] != PAM_SUCCESS || r[CLOSE] != PAM_SUCCESS) {
            fprintf(stderr, "fresh: %s: auth %d open %d close %d\n", argv[2], r[AUTH], r[OPEN], r[CLOSE]);
            return 2;
        }
        if (kdf_calls != want || kdf_outside != 0) {
            fprintf(stderr, "fresh: %s: %d crypto_pwhash calls caught in the transaction (%d outside it), "
                            "expected exactly %ld: %s\n",
                    argv[2], kdf_calls, kdf_outside, want,
                    kdf_calls < want ? "fewer: a KDF went uncaught, and would not be subtracted"
                                     : "more: the module derived again, and subtracting every call "
                                       "would hide that cost");
            return 4;
        }
        double alone_cpu = 0;
        double alone = argc == 7 ? kdf_alone(strtoull(argv[5], NULL, 10), strtoull(argv[6], NULL, 10), &alone_cpu) : 0;
        double txn = 0, kdf = 0, kdf_cpu_all = 0;
        for (int i = START; i <= END; i++) {
            txn += wall[i + 1] - wall[i] - kdf_wall[i];
            kdf += kdf_wall[i];
            kdf_cpu_all += kdf_cpu[i];
        }
        for (int i = START; i <= END; i++) printf("%s %.0f ", STEPS[i], wall[i + 1] - wall[i] - kdf_wall[i]);
        printf("txn %.0f", txn);
        for (int i = START; i <= END; i++) printf(" kdf_%s %.0f", STEPS[i], kdf_wall[i]);
        printf(" kdf %.0f kdf_cpu %.0f calls %d", kdf, kdf_cpu_all, kdf_calls);
        for (int i = START; i <= END; i++) printf(" cpu_%s %.0f", STEPS[i], cpu[i + 1] - cpu[i] - kdf_cpu[i]);
        printf(" alone %.0f alone_cpu %.0f", alone, alone_cpu);
        for (int i = START; i <= END; i++) printf(" flt_%s %.0f", STEPS[i], flt[i + 1] - flt[i] - kdf_flt[i]);
        printf("\n");
        return 0;
    }
    fprintf(stderr, "usage: fresh dlopen MODULE | fresh txn SERVICE USER KDFS [OPS MEMORY]\n");
    return 2;
}
