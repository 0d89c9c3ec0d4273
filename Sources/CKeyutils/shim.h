#include <keyutils.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * ArcaKeyring's one piece of C: run a few keyctl calls with the real uid of
 * another user, in a short-lived child process, the way pam_keyinit does.
 *
 * Why C and why a child: the kernel resolves KEY_SPEC_USER_KEYRING (@u) from
 * the caller's *real* uid, so root must become the user to link a ring into
 * that user's @u. glibc's setresuid() changes every thread of the process
 * (SIGSETXID broadcast), and a raw per-thread setresuid would leave arcad's
 * thread signalable by that user (kill/tgkill compare the sender's uid with the
 * target's real uid): the user could SIGSTOP or SIGKILL the root daemon during
 * the window. A child with the user's real uid can only hurt itself; the
 * parent bounds the wait and kills it. After fork() in a multithreaded process
 * only async-signal-safe work is allowed, so the child path is written here in
 * C with raw system calls only (no allocation, no locks, no Swift runtime),
 * after _Fork(), which skips the atfork handlers, with every signal blocked.
 */

/* What the child should do, as a bit set, in this order. */
#define ARCA_USER_OP_FIND 1  /* search @u (direct links first) for keyring `description` */
#define ARCA_USER_OP_LINK 2  /* link `ring` into @u, displacing a keyring of the same description */
#define ARCA_USER_OP_CLEAR 4 /* clear @u (account deletion) */

/* Which step failed, reported with its errno. */
#define ARCA_USER_STEP_NONE 0
#define ARCA_USER_STEP_FORK 1
#define ARCA_USER_STEP_SETUID 2
#define ARCA_USER_STEP_USER_KEYRING 3
#define ARCA_USER_STEP_FIND 4
#define ARCA_USER_STEP_LINK 5
#define ARCA_USER_STEP_CLEAR 6
#define ARCA_USER_STEP_WAIT 7
#define ARCA_USER_STEP_CHILD_DIED 8

typedef struct {
    int32_t user_keyring; /* serial of the user's @u */
    int32_t found;        /* serial found by ARCA_USER_OP_FIND, 0 if none */
    int32_t step;         /* ARCA_USER_STEP_* that failed, 0 on success */
    int32_t error;        /* errno of that step */
} arca_user_op_result;

/*
 * Runs `ops` with real uid `uid` (effective uid stays 0, so root-owned keys
 * keep their owner permissions) in a child process. Waits at most
 * `timeout_ms` for it; a child that does not finish in time (for instance
 * because the user stopped it) is killed. Returns 0 and fills `result`; on
 * failure result->step and result->error say what went wrong.
 */
static inline int arca_keyring_as_user(uid_t uid, int ops, const char *description, key_serial_t ring,
                                       int timeout_ms, arca_user_op_result *result) {
    memset(result, 0, sizeof *result);
    arca_user_op_result *shared =
        mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        result->step = ARCA_USER_STEP_FORK;
        result->error = errno;
        return -1;
    }
    memset(shared, 0, sizeof *shared);

    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    pid_t pid = _Fork();
    if (pid == 0) {
        /* Child: raw system calls only, every signal blocked. */
        long r = syscall(SYS_setresuid, uid, (uid_t)-1, (uid_t)-1);
        if (r != 0) {
            shared->step = ARCA_USER_STEP_SETUID;
            shared->error = errno;
            syscall(SYS_exit_group, 1);
        }
        r = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 1);
        if (r < 0) {
            shared->step = ARCA_USER_STEP_USER_KEYRING;
            shared->error = errno;
            syscall(SYS_exit_group, 1);
        }
        shared->user_keyring = (int32_t)r;
        if (ops & ARCA_USER_OP_FIND) {
            r = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "keyring", description, 0);
            if (r >= 0) {
                shared->found = (int32_t)r;
            } else if (errno != ENOKEY) {
                shared->step = ARCA_USER_STEP_FIND;
                shared->error = errno;
                syscall(SYS_exit_group, 1);
            }
        }
        if (ops & ARCA_USER_OP_LINK) {
            r = syscall(SYS_keyctl, KEYCTL_LINK, ring, KEY_SPEC_USER_KEYRING);
            if (r < 0) {
                shared->step = ARCA_USER_STEP_LINK;
                shared->error = errno;
                syscall(SYS_exit_group, 1);
            }
        }
        if (ops & ARCA_USER_OP_CLEAR) {
            r = syscall(SYS_keyctl, KEYCTL_CLEAR, KEY_SPEC_USER_KEYRING);
            if (r < 0) {
                shared->step = ARCA_USER_STEP_CLEAR;
                shared->error = errno;
                syscall(SYS_exit_group, 1);
            }
        }
        syscall(SYS_exit_group, 0);
    }
    int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (pid < 0) {
        munmap(shared, sizeof *shared);
        result->step = ARCA_USER_STEP_FORK;
        result->error = fork_errno;
        return -1;
    }

    /* Bounded wait: a pidfd becomes readable when the child exits. */
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd >= 0) {
        struct pollfd pfd = {.fd = pidfd, .events = POLLIN, .revents = 0};
        int n;
        do {
            n = poll(&pfd, 1, timeout_ms);
        } while (n < 0 && errno == EINTR);
        if (n == 0) {
            kill(pid, SIGKILL);
        }
        close(pidfd);
    }
    int status = 0;
    pid_t w;
    do {
        w = waitpid(pid, &status, 0);
    } while (w < 0 && errno == EINTR);
    int wait_errno = errno;

    *result = *shared;
    munmap(shared, sizeof *shared);
    if (w < 0) {
        result->step = ARCA_USER_STEP_WAIT;
        result->error = wait_errno;
        return -1;
    }
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && result->step == 0)) {
        result->step = ARCA_USER_STEP_CHILD_DIED;
        result->error = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        return -1;
    }
    return result->step == 0 ? 0 : -1;
}
