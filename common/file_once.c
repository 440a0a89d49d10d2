/* camclass — files that replace nothing (see file_once.h). _GNU_SOURCE (meson) gives renameat2
 * and RENAME_NOREPLACE. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "file_once.h"

bool cc_file_write_synced(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO;
            return false;
        }
        p += k, n -= (size_t)k;
    }
    return fsync(fd) == 0;
}

int cc_file_name_once(const char *tmp, const char *final)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
        return errno;
    if (link(tmp, final) != 0)
        return errno;
    unlink(tmp);
    return 0;
}
