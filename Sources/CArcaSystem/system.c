/* Socket and memory calls that need _GNU_SOURCE or a header Swift does not import (see include/CArcaSystem.h). */
#include "CArcaSystem.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <unistd.h>

int arca_accept_cloexec(int fd, int nonblocking) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0));
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

int arca_peer_pidfd(int fd) {
    int pidfd = -1;
    socklen_t length = sizeof pidfd;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) != 0) return -1;
    return pidfd;
}

int arca_pipe_cloexec(int *fds, int nonblocking) { return pipe2(fds, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0)); }

int arca_peer_credentials(int fd, arca_ucred *out) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    if (length != sizeof credentials) {
        errno = EINVAL;
        return -1;
    }
    out->pid = credentials.pid;
    out->uid = credentials.uid;
    out->gid = credentials.gid;
    return 0;
}

int arca_peer_groups(int fd, uint32_t *groups, size_t *count) {
    socklen_t length = (socklen_t)(*count * sizeof(gid_t));
    int rc = getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &length);
    *count = length / sizeof(gid_t);
    return rc;
}

int arca_madvise_dontdump(void *address, size_t length) { return madvise(address, length, MADV_DONTDUMP); }

ssize_t arca_getrandom(void *buffer, size_t length) { return getrandom(buffer, length, 0); }

void arca_secure_zero(void *address, size_t length) {
    if (length > 0) explicit_bzero(address, length);
}

int arca_malloc_trim(size_t pad) { return malloc_trim(pad); }

long arca_filesystem_type(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return (long)info.f_type;
}
