/*
 * CArcaSystem: the C that Swift cannot express, compiled with _GNU_SOURCE
 * (see Package.swift). This header is also read by Swift's importer, which does
 * not define _GNU_SOURCE, so it declares only plain types: every GNU-only
 * symbol (clone, accept4, struct ucred, MADV_DONTDUMP) stays inside the .c files.
 *
 * Swift code reaches these through the ArcaSystem target (and ArcaKeyring's
 * Internals for the user-keyring child, ArcaThreads for the used stack); nothing
 * else imports this module.
 */
#ifndef ARCA_C_SYSTEM_H
#define ARCA_C_SYSTEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>

/* ---- The user-keyring child (keyring_as_user.c) ------------------------- */

/* What the child should do, as a bit set, in this order. */
#define ARCA_USER_OP_FIND 1  /* search @u (direct links first) for keyring `description` */
#define ARCA_USER_OP_LINK 2  /* link `ring` into @u, displacing a keyring of the same description */
#define ARCA_USER_OP_CLEAR 4 /* clear @u (account deletion) */
/* Account deletion: act as @u's owner (effective and fs uid too, not only the
 * real uid) and put back @u's default permissions before clearing it, so that a
 * `keyctl setperm` the deleted user made does not outlive the account. */
#define ARCA_USER_OP_RESET 8
/* Wait for the child by polling waitpid, the path taken when pidfd_open fails;
 * lets tests prove that path is bounded too. */
#define ARCA_USER_OP_POLL_WAIT 16
/* After LINK, link @u itself into `anchor` (a root-owned keyring the caller
 * possesses and may write as owner), so that the caller possesses @u from then
 * on and can link into it without a child. Best effort: a failure is reported
 * in `anchored`/`anchor_error`, not as the op's failure. */
#define ARCA_USER_OP_ANCHOR 32
/* Account deletion, after RESET and CLEAR: invalidate @u and @us, so that a
 * recycled uid gets new ones and the kernel's key tree (which its garbage
 * collector walks) does not keep two keyrings of every deleted account. Best
 * effort, reported in `dropped`/`drop_error`, not as the op's failure. */
#define ARCA_USER_OP_DROP 64
/* The permissions the kernel gives a new user keyring (since 5.3):
 * possessor all but setattr, owner all. */
#define ARCA_USER_KEYRING_DEFAULT_PERM 0x1f3f0000

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
#define ARCA_USER_STEP_SETPERM 9

typedef struct {
    int32_t user_keyring; /* serial of the user's @u */
    int32_t found;        /* serial found by ARCA_USER_OP_FIND, 0 if none */
    int32_t step;         /* ARCA_USER_STEP_* that failed, 0 on success */
    int32_t error;        /* errno of that step */
    int32_t done;         /* set by the child as its last act */
    uint32_t old_perm;    /* ARCA_USER_OP_RESET: @u's permissions before the reset */
    int32_t anchored;     /* ARCA_USER_OP_ANCHOR: 1 if @u was linked into `anchor` */
    int32_t anchor_error; /* ARCA_USER_OP_ANCHOR: errno of that link when it failed */
    int32_t dropped;      /* ARCA_USER_OP_DROP: 1 if @u was invalidated, | 2 if @us was */
    int32_t drop_error;   /* ARCA_USER_OP_DROP: errno of the first invalidation that failed */
} arca_user_op_result;

/*
 * Runs `ops` with real uid `uid` (effective uid stays 0, so root-owned keys
 * keep their owner permissions) in a clone(CLONE_VM) child task that makes only
 * raw system calls. Waits at most `timeout_ms` for it; a child that does not
 * finish in time (for instance because the user stopped it) is killed. Returns
 * 0 and fills `result`; on failure result->step and result->error say what went
 * wrong. `ring` and `anchor` are key serials (key_serial_t).
 */
int arca_keyring_as_user(uid_t uid, int ops, const char *description, int32_t ring, int32_t anchor, int timeout_ms,
                         arca_user_op_result *result);

/* ---- Sockets and memory (system.c) -------------------------------------- */

/* The fields of `struct ucred` (SO_PEERCRED), which Glibc's module hides
 * behind _GNU_SOURCE. */
typedef struct {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
} arca_ucred;

/* accept4(fd, NULL, NULL, SOCK_CLOEXEC [| SOCK_NONBLOCK]): one call, so no fork can
 * inherit the connection between accept and fcntl, and no fcntl pair to make it
 * non-blocking. Returns the new fd or -1 with errno. */
int arca_accept_cloexec(int fd, int nonblocking);

/* pipe2(fds, O_CLOEXEC [| O_NONBLOCK]): both ends close-on-exec from the start
 * (no fork between pipe and fcntl). Returns 0 or -1 with errno. */
int arca_pipe_cloexec(int *fds, int nonblocking);

/* getsockopt(SO_PEERCRED) into `out`. Returns 0 or -1 with errno. */
int arca_peer_credentials(int fd, arca_ucred *out);

/* getsockopt(SO_PEERGROUPS) (Linux 4.13). `*count` is the capacity of `groups`
 * on entry and the number of groups (or, with ERANGE, the number needed) on
 * return. Returns 0 or -1 with errno. */
int arca_peer_groups(int fd, uint32_t *groups, size_t *count);

/* getsockopt(SO_PEERPIDFD) (Linux 6.5): a pidfd (close-on-exec) for the process that
 * connected, recorded by the kernel at connect time, so it never names a later process
 * that reused the pid. Returns the pidfd or -1 with errno (ENOPROTOOPT: older kernel). */
int arca_peer_pidfd(int fd);

/* statfs(path)'s f_type (the file system's magic number; <sys/statfs.h> is not in
 * Swift's Glibc module). Returns it, or -1 with errno. */
long arca_filesystem_type(const char *path);

/* madvise(MADV_DONTDUMP): keep the range out of core files. Returns 0 or -1 with errno. */
int arca_madvise_dontdump(void *address, size_t length);
/* getrandom(2) (glibc declares it in <sys/random.h>, which Swift's Glibc module lacks). */
ssize_t arca_getrandom(void *buffer, size_t length);

/* Zeroes `length` bytes at `address` in a way the compiler may not elide
 * (explicit_bzero): the one zeroing primitive every Swift wipe ends in. */
void arca_secure_zero(void *address, size_t length);

/* glibc's malloc_trim(3), which Swift's Glibc module does not export (<malloc.h>). */
int arca_malloc_trim(size_t pad);

/* ---- Files that appear whole (file.c) ------------------------------------ */

/* open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode): an unnamed file in
 * `directory` that vanishes if the process dies before arca_link_unnamed.
 * Returns the descriptor or -1 with errno (EOPNOTSUPP/EISDIR on file systems
 * without O_TMPFILE). */
int arca_open_unnamed(const char *directory, mode_t mode);

/* Gives the unnamed file `fd` the name `path` (linkat through /proc/self/fd):
 * fails with EEXIST rather than replace an existing file. 0 or -1 with errno. */
int arca_link_unnamed(int fd, const char *path);

/* ---- What Glibc's Swift overlay would otherwise supply (overlay.c) -------- */

/* errno, the variadic open/openat/fcntl: ArcaSystem calls these rather than the
 * Swift overlay's wrappers. The overlay is one object in libswiftGlibc.a whose
 * retained sections also wrap ~60 libm functions; linking it for a wrapper made
 * every login's dlopen of pam_arca.so bind 59 more symbols (63,000 of ld.so's
 * instructions; Tests/integration/01-static-binaries.sh keeps it out). */

/* The calling thread's errno. */
int arca_errno(void);

/* open(path, flags, mode). Returns the descriptor or -1 with errno. */
int arca_open(const char *path, int flags, mode_t mode);

/* openat(directory, name, flags, mode). Returns the descriptor or -1 with errno. */
int arca_openat(int directory, const char *name, int flags, mode_t mode);

/* fcntl(fd, F_GETFL). Returns the file status flags or -1 with errno. */
int arca_get_status_flags(int fd);

/* fcntl(fd, F_SETFL, flags). Returns 0 or -1 with errno. */
int arca_set_status_flags(int fd, int flags);

/* fcntl(fd, F_DUPFD_CLOEXEC, lowest). Returns the new descriptor or -1 with errno. */
int arca_duplicate_cloexec(int fd, int lowest);

/* The file type bits of st_mode and mmap's failure value, as the system headers
 * define them: Swift's importer cannot read these macros, and the overlay's own
 * spellings of them are what it costs to link. */
static const mode_t ARCA_S_IFMT = S_IFMT;
static const mode_t ARCA_S_IFDIR = S_IFDIR;
static const mode_t ARCA_S_IFREG = S_IFREG;
static const mode_t ARCA_S_IFLNK = S_IFLNK;
static void *const ARCA_MAP_FAILED = MAP_FAILED;

/* ---- A reused thread's stack (thread_stack.c) ---------------------------- */

/* How far below the caller's frame arca_clear_used_stack zeroes in place (twice
 * this) rather than discarding the pages. */
#define ARCA_STACK_KEEP_BYTES 16384

/*
 * Clears what earlier calls left on the calling thread's stack below the caller's
 * frame: zeroes the 32 KiB just below it (explicit_bzero) and gives every page
 * from the stack's low end (pthread_getattr_np) up to 16 KiB below it back to the
 * kernel (madvise MADV_DONTNEED), so they read as zeros, as glibc does when a
 * thread exits. For a thread that serves one connection after another (arcad):
 * the next one must not find the last one's secrets. Not for the main thread.
 * Returns 0 or -1 with errno.
 */
int arca_clear_used_stack(void);

/* The calling thread's stack: lowest address and size, guard page excluded
 * (pthread_getattr_np). Returns 0 or -1 with errno. */
int arca_thread_stack(uintptr_t *low, size_t *size);

#endif
