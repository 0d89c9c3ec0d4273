/* Unnamed files that get their name only when whole (see include/CArcaSystem.h). */
#include "CArcaSystem.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int arca_open_unnamed(const char *directory, mode_t mode) {
    return open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
}

int arca_link_unnamed(int fd, const char *path) {
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}
