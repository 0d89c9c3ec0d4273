/* Calls Glibc's Swift overlay would otherwise supply (see include/CArcaSystem.h). */
#include "CArcaSystem.h"

#include <errno.h>
#include <fcntl.h>

int arca_errno(void) { return errno; }

int arca_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

int arca_openat(int directory, const char *name, int flags, mode_t mode) {
    return openat(directory, name, flags, mode);
}

int arca_get_status_flags(int fd) { return fcntl(fd, F_GETFL); }

int arca_set_status_flags(int fd, int flags) { return fcntl(fd, F_SETFL, flags); }

int arca_duplicate_cloexec(int fd, int lowest) { return fcntl(fd, F_DUPFD_CLOEXEC, lowest); }
