/* ArcaKeyring's user-keyring child; declared in include/CArcaSystem.h.
 * Built with _GNU_SOURCE (Package.swift), so clone() and CLONE_VM come from
 * <sched.h> rather than a hand-written declaration, and the keyctl numbers from
 * <linux/keyctl.h>: the child makes raw system calls only and never calls libkeyutils. */
#include "CArcaSystem.h"

#include <errno.h>
#include <linux/keyctl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * ArcaKeyring's one piece of C: run a few keyctl calls with the real uid of
 * another user, in a short-lived child process, the way pam_keyinit does.
 *
 * Why a child: the kernel resolves KEY_SPEC_USER_KEYRING (@u) from the
 * caller's *real* uid, so root must become the user to link a ring into that
 * user's @u. glibc's setresuid() changes every thread of the process (the
 * SIGSETXID broadcast), so it is out. A raw per-thread setresuid would work and
 * cost two system calls, but while it lasts the daemon's thread has the user's
 * real uid, and kill/tgkill let a user signal any task whose real uid is theirs:
 * the user could SIGSTOP or SIGKILL the root daemon in that window. A child
 * with the user's real uid can only hurt itself: the parent waits a bounded
 * time and kills it.
 *
 * Why clone(CLONE_VM) and not fork(): fork copies the page tables, and a daemon
 * holding many mlocked secrets (SecretBytes in pool slots, and guarded mappings
 * for those over 4 KiB) pays milliseconds per fork; a CLONE_VM child shares the memory and costs
 * about as much as a thread. It runs on its own small stack, with every signal
 * blocked (so none of the parent's handlers can run in it), and makes only raw
 * system calls through the `arca_raw_syscall` below: no libc function,
 * no errno (which would be the parent thread's), no allocation, no lock. It
 * writes only its result struct; the parent reads it after reaping the child.
 */

#if defined(__x86_64__)
static inline long arca_raw_syscall(long n, long a1, long a2, long a3, long a4, long a5) {
    long ret;
    register long r10 __asm__("r10") = a4;
    register long r8 __asm__("r8") = a5;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return ret;
}
#elif defined(__aarch64__)
static inline long arca_raw_syscall(long n, long a1, long a2, long a3, long a4, long a5) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a1;
    register long x1 __asm__("x1") = a2;
    register long x2 __asm__("x2") = a3;
    register long x3 __asm__("x3") = a4;
    register long x4 __asm__("x4") = a5;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory", "cc");
    return x0;
}
#else
#error "arca_raw_syscall: add this architecture's system-call sequence"
#endif

typedef struct {
    uid_t uid;
    int ops;
    const char *description;
    int32_t ring;   /* key_serial_t */
    int32_t anchor; /* key_serial_t */
    arca_user_op_result *result;
} arca_user_op_request;

/* The child. Raw system calls only (see above). */
static int arca_user_op_child(void *argument) {
    arca_user_op_request *request = (arca_user_op_request *)argument;
    arca_user_op_result *result = request->result;
    /* Normally only the real uid changes (it selects @u); the effective and fs
     * uid stay 0 so that root-owned rings keep their owner permissions. To reset
     * @u the child becomes its owner outright. */
    long euid = (request->ops & ARCA_USER_OP_RESET) ? (long)request->uid : -1;
    long r = arca_raw_syscall(SYS_setresuid, (long)request->uid, euid, -1, 0, 0);
    if (r < 0) {
        result->step = ARCA_USER_STEP_SETUID;
        result->error = (int32_t)-r;
        return 1;
    }
    r = arca_raw_syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 1, 0, 0);
    if (r < 0) {
        result->step = ARCA_USER_STEP_USER_KEYRING;
        result->error = (int32_t)-r;
        return 1;
    }
    result->user_keyring = (int32_t)r;
    if (request->ops & ARCA_USER_OP_FIND) {
        r = arca_raw_syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, (long)"keyring",
                             (long)request->description, 0);
        /* A revoked or dying match (EKEYREVOKED, EKEYEXPIRED; seen right after
         * a purge while the garbage collector runs) is no usable ring: the
         * same as none. A link displaces it anyway. */
        if (r >= 0) {
            result->found = (int32_t)r;
        } else if (r != -ENOKEY && r != -EKEYREVOKED && r != -EKEYEXPIRED) {
            result->step = ARCA_USER_STEP_FIND;
            result->error = (int32_t)-r;
            return 1;
        }
    }
    if (request->ops & ARCA_USER_OP_LINK) {
        r = arca_raw_syscall(SYS_keyctl, KEYCTL_LINK, request->ring, KEY_SPEC_USER_KEYRING, 0, 0);
        if (r < 0) {
            result->step = ARCA_USER_STEP_LINK;
            result->error = (int32_t)-r;
            return 1;
        }
    }
    if (request->ops & ARCA_USER_OP_ANCHOR) {
        /* Needs link permission on @u as its possessor (the user may have taken it
         * away) and write on the anchor as its owner (fsuid 0): best effort. */
        r = arca_raw_syscall(SYS_keyctl, KEYCTL_LINK, KEY_SPEC_USER_KEYRING, request->anchor, 0, 0);
        if (r < 0) {
            result->anchor_error = (int32_t)-r;
        } else {
            result->anchored = 1;
        }
    }
    if (request->ops & ARCA_USER_OP_RESET) {
        /* KEYCTL_DESCRIBE into a small buffer on this stack: "keyring;uid;gid;perm;..." */
        char record[96];
        long n = arca_raw_syscall(SYS_keyctl, KEYCTL_DESCRIBE, KEY_SPEC_USER_KEYRING, (long)record,
                                  (long)sizeof record, 0);
        if (n > 0) {
            /* The fourth field is the permission mask in hex. */
            int field = 0;
            uint32_t perm = 0;
            for (long i = 0; i < n && i < (long)sizeof record && record[i] != 0; i++) {
                char c = record[i];
                if (c == ';') {
                    if (++field > 3) break;
                    continue;
                }
                if (field != 3) continue;
                perm = perm * 16 + (uint32_t)(c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0');
            }
            result->old_perm = perm;
        }
        r = arca_raw_syscall(SYS_keyctl, KEYCTL_SETPERM, KEY_SPEC_USER_KEYRING, ARCA_USER_KEYRING_DEFAULT_PERM, 0, 0);
        if (r < 0) {
            result->step = ARCA_USER_STEP_SETPERM;
            result->error = (int32_t)-r;
            return 1;
        }
    }
    if (request->ops & ARCA_USER_OP_CLEAR) {
        r = arca_raw_syscall(SYS_keyctl, KEYCTL_CLEAR, KEY_SPEC_USER_KEYRING, 0, 0, 0);
        if (r < 0) {
            result->step = ARCA_USER_STEP_CLEAR;
            result->error = (int32_t)-r;
            return 1;
        }
    }
    if (request->ops & ARCA_USER_OP_DROP) {
        /* Both serials first, then invalidate by serial: naming either by its special
         * id after the other is gone would make the kernel create it again. As their
         * owner (ARCA_USER_OP_RESET). Best effort, each reported on its own: the user
         * may have taken the owner's search away from @us, which RESET does not restore. */
        long session = arca_raw_syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_SESSION_KEYRING, 0, 0, 0);
        r = arca_raw_syscall(SYS_keyctl, KEYCTL_INVALIDATE, result->user_keyring, 0, 0, 0);
        if (r < 0) {
            result->drop_error = (int32_t)-r;
        } else {
            result->dropped |= 1;
        }
        r = session < 0 ? session : arca_raw_syscall(SYS_keyctl, KEYCTL_INVALIDATE, session, 0, 0, 0);
        if (r < 0) {
            if (result->drop_error == 0) result->drop_error = (int32_t)-r;
        } else {
            result->dropped |= 2;
        }
    }
    result->done = 1;
    return 0;
}

/* The child's stack: a buffer in the caller's frame, which outlives the child (every
 * path below reaps it, or waits until the kernel has, before returning). The child
 * makes raw system calls only and uses well under a kilobyte; no mmap/munmap per call
 * (a munmap in a threaded process also costs a TLB shootdown on every other CPU). */
#define ARCA_USER_OP_STACK_SIZE (16 * 1024)

/*
 * Runs `ops` with real uid `uid` (effective uid stays 0, so root-owned keys
 * keep their owner permissions) in a child task. Waits at most `timeout_ms`
 * for it; a child that does not finish in time (for instance because the user
 * stopped it) is killed. Returns 0 and fills `result`; on failure
 * result->step and result->error say what went wrong.
 */
int arca_keyring_as_user(uid_t uid, int ops, const char *description, int32_t ring, int32_t anchor, int timeout_ms,
                         arca_user_op_result *result) {
    memset(result, 0, sizeof *result);
    _Alignas(16) char stack[ARCA_USER_OP_STACK_SIZE];
    arca_user_op_request request = {uid, ops, description, ring, anchor, result};

    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    pid_t pid = clone(arca_user_op_child, stack + ARCA_USER_OP_STACK_SIZE, CLONE_VM | SIGCHLD, &request);
    int clone_errno = errno;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (pid < 0) {
        result->step = ARCA_USER_STEP_FORK;
        result->error = clone_errno;
        return -1;
    }

    /* Bounded wait on every path. A pidfd becomes readable when the child
     * exits; without one (a kernel before 5.3, a seccomp filter) poll waitpid
     * with WNOHANG every 200 µs. Either way a child still alive at the deadline
     * (the user stopped it) is killed: SIGKILL ends even a stopped task, so the
     * final blocking waitpid returns at once. */
    int status = 0;
    pid_t w = 0;
    int pidfd = (ops & ARCA_USER_OP_POLL_WAIT) ? -1 : (int)syscall(SYS_pidfd_open, pid, 0);
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
    } else {
        /* Against the clock, not by counting sleeps: a loaded machine oversleeps. */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long deadline_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec + (long long)timeout_ms * 1000000LL;
        for (;;) {
            do {
                w = waitpid(pid, &status, WNOHANG);
            } while (w < 0 && errno == EINTR);
            if (w != 0) break;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if ((long long)now.tv_sec * 1000000000LL + now.tv_nsec >= deadline_ns) {
                kill(pid, SIGKILL);
                break;
            }
            struct timespec pause = {0, 200 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    int wait_errno = 0;
    if (w == 0) {
        do {
            w = waitpid(pid, &status, 0);
        } while (w < 0 && errno == EINTR);
        wait_errno = errno;
    } else if (w < 0) {
        wait_errno = errno;
    }
    /* The child is gone (reaped, or auto-reaped if SIGCHLD is ignored): its stack, in
     * this frame, is free. */

    if (w < 0 && wait_errno != ECHILD) {
        result->step = ARCA_USER_STEP_WAIT;
        result->error = wait_errno;
        return -1;
    }
    if (result->step != 0) {
        return -1;
    }
    if (!result->done || (w >= 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))) {
        result->step = ARCA_USER_STEP_CHILD_DIED;
        result->error = (w >= 0 && WIFSIGNALED(status)) ? WTERMSIG(status) : 0;
        return -1;
    }
    return 0;
}
