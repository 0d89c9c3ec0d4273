/* bench/pam/fresh.c: one login step in a fresh C process, timed inside it (bench/pam/run.sh
 * compiles it with the toolchain's clang). A login (login, each sshd connection) is a C
 * process that loads the PAM stack anew: no Swift runtime and no libstdc++ loaded yet.
 * Times in microseconds, CLOCK_MONOTONIC.
 *
 *   fresh dlopen MODULE
 *       dlopen(MODULE, RTLD_NOW) with libpam already loaded (it is, in a login process).
 *       Prints "dlopen_us".
 *   fresh txn SERVICE USER OPS MEMORY KDF_FIRST
 *       pam_start, pam_authenticate, pam_open_session, pam_close_session, pam_end (run it
 *       under pam_wrapper: the stack supplies the password), and one Argon2id with the
 *       vault's parameters (crypto_pwhash, OPS passes, MEMORY bytes) before the transaction
 *       if KDF_FIRST is 1, else after it. Prints "start auth open close end txn kdf".
 *       With FRESH_MARKS=1 in the environment, each step is bracketed by a write(-1,
 *       "fresh:mark:STEP") that fails at once (EBADF) and that strace/perf trace show, and by
 *       a line "fresh:mark:STEP MONOTONIC_µs" on stderr (perf sched's clock with -k mono), so
 *       that bench/pam/timeline.sh can cut a trace into the steps. */
#include <dlfcn.h>
#include <security/pam_appl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int marks;
static double now_us(void);

/* A marker in a syscall trace: write(2) to fd -(100 + the step's index in STEPS) fails with
 * EBADF and does nothing else; the step is in the fd, so strace can run with -s 0 (no strings:
 * the derived key and session token on arcad's socket stay out of the trace). */
static const char *const STEPS[] = {"start", "auth", "open", "close", "end", "done"};
static void mark(const char *step) {
    if (marks) {
        fprintf(stderr, "fresh:mark:%s %.1f\n", step, now_us()); /* CLOCK_MONOTONIC µs, for perf sched */
        int fd = -1;
        for (int i = 0; i < (int)(sizeof STEPS / sizeof *STEPS); i++)
            if (strcmp(STEPS[i], step) == 0) fd = -100 - i;
        char text[64];
        int n = snprintf(text, sizeof text, "fresh:mark:%s", step);
        if (write(fd, text, (size_t)n) < 0) { /* EBADF, by design */ }
    }
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int no_conversation(int n, const struct pam_message **m, struct pam_response **r, void *a) {
    (void)n, (void)m, (void)r, (void)a;
    return PAM_CONV_ERR;
}

static double kdf(unsigned long long ops, size_t memory) {
    unsigned char out[32], salt[crypto_pwhash_SALTBYTES] = {0};
    if (sodium_init() < 0) exit(3);
    double t0 = now_us();
    if (crypto_pwhash(out, sizeof out, "bench-pw", 8, salt, ops, memory, crypto_pwhash_ALG_ARGON2ID13) != 0) exit(3);
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
    if (argc == 7 && strcmp(argv[1], "txn") == 0) {
        unsigned long long ops = strtoull(argv[4], NULL, 10);
        size_t memory = strtoull(argv[5], NULL, 10);
        int kdf_first = strcmp(argv[6], "1") == 0;
        struct pam_conv conversation = {no_conversation, NULL};
        pam_handle_t *handle = NULL;
        marks = getenv("FRESH_MARKS") != NULL;
        double k = kdf_first ? kdf(ops, memory) : 0, t[6];
        mark("start");
        t[0] = now_us();
        if (pam_start(argv[2], argv[3], &conversation, &handle) != PAM_SUCCESS) return 2;
        t[1] = now_us();
        mark("auth");
        int a = pam_authenticate(handle, 0);
        t[2] = now_us();
        mark("open");
        int o = pam_open_session(handle, 0);
        t[3] = now_us();
        mark("close");
        int c = pam_close_session(handle, 0);
        t[4] = now_us();
        mark("end");
        pam_end(handle, PAM_SUCCESS);
        t[5] = now_us();
        mark("done");
        if (a != PAM_SUCCESS || o != PAM_SUCCESS || c != PAM_SUCCESS) {
            fprintf(stderr, "fresh: %s: auth %d open %d close %d\n", argv[2], a, o, c);
            return 2;
        }
        if (!kdf_first) k = kdf(ops, memory);
        printf("%.0f %.0f %.0f %.0f %.0f %.0f %.0f\n", t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3],
               t[5] - t[4], t[5] - t[0], k);
        return 0;
    }
    fprintf(stderr, "usage: fresh dlopen MODULE | fresh txn SERVICE USER OPS MEMORY KDF_FIRST\n");
    return 2;
}
