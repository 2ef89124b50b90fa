/* io/outfile.c - output files that are written whole or not at all (io_impl.h, "outfile.c").
 *
 * The data go to a temporary file in the target's folder; once every write, the flush, the
 * fsync and the close have succeeded, rename() puts it in the target's place in one step.
 * On any failure the temporary file is removed, so a reader of the target sees the old
 * file or the complete new one, never a part. */
#define _XOPEN_SOURCE 700   /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_impl.h"

#define TMP_TRIES 100            /* temporary names tried while each one exists already */
#define TMP_NAME_LEN 64          /* room for ".krill-PID-SERIAL.tmp" */

static atomic_uint tmp_serial;   /* tells apart the temporary files of one process */

/* A krill-allocated copy of s. */
static krill_status copy_string(const char *s, char **out)
{
    krill_status st = KRILL_OK;
    KRILL_ALLOC(*out, strlen(s) + 1);
    memcpy(*out, s, strlen(s) + 1);
cleanup:
    return st;
}

/* Where `path` is written. A regular file, or a name that does not exist yet, is replaced
 * through a temporary file: *target is its name (for a symbolic link to a regular file, the
 * file it points to) and *mode the permission bits to keep (-1: a new file). Anything else
 * that exists (a device such as /dev/full, a FIFO, a dangling link) is written in place:
 * *target is NULL. */
static krill_status choose_target(const char *path, char **target, int *mode)
{
    krill_status st = KRILL_OK;
    struct stat link_sb, file_sb;
    *target = NULL;
    *mode = -1;
    if (lstat(path, &link_sb) != 0) {
        KRILL_TRY(copy_string(path, target));
    } else if (S_ISREG(link_sb.st_mode)) {
        *mode = (int)(link_sb.st_mode & 07777);
        KRILL_TRY(copy_string(path, target));
    } else if (S_ISLNK(link_sb.st_mode) && stat(path, &file_sb) == 0 &&
               S_ISREG(file_sb.st_mode)) {
        *mode = (int)(file_sb.st_mode & 07777);
        KRILL_ALLOC(*target, PATH_MAX);
        if (!realpath(path, *target)) {
            st = krill_error(KRILL_ERR_IO, "%s: cannot resolve the link: %s", path,
                             strerror(errno));
            goto cleanup;
        }
    }
cleanup:
    if (st != KRILL_OK) {
        krill_free(*target);
        *target = NULL;
    }
    return st;
}

/* Create a new temporary file in target's folder, named ".krill-PID-SERIAL.tmp", with the
 * permissions a new file gets (0666 less the umask) or `mode`; *fd is open for writing. */
static krill_status create_tmp(krill_outfile *out, int mode, int *fd)
{
    krill_status st = KRILL_OK;
    const char *slash = strrchr(out->target, '/');
    const size_t dir_len = slash ? (size_t)(slash - out->target) + 1 : 0;
    *fd = -1;
    KRILL_ALLOC(out->tmp, dir_len + TMP_NAME_LEN);
    memcpy(out->tmp, out->target, dir_len);
    for (int k = 0; k < TMP_TRIES && *fd < 0; k++) {
        snprintf(out->tmp + dir_len, TMP_NAME_LEN, ".krill-%ld-%u.tmp", (long)getpid(),
                 atomic_fetch_add(&tmp_serial, 1u));
        *fd = open(out->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (*fd < 0 && errno != EEXIST) break;
    }
    if (*fd < 0) {
        st = krill_error(KRILL_ERR_IO, "%s: cannot create: %s", out->name, strerror(errno));
        goto cleanup;
    }
    if (mode >= 0 && fchmod(*fd, (mode_t)mode) != 0) {
        st = krill_error(KRILL_ERR_IO, "%s: cannot set the permissions: %s", out->name,
                         strerror(errno));
        close(*fd);
        remove(out->tmp);
        *fd = -1;
    }
cleanup:
    if (st != KRILL_OK) {
        krill_free(out->tmp);
        out->tmp = NULL;
    }
    return st;
}

krill_status krill_outfile_open(krill_outfile *out, const char *path)
{
    krill_status st = KRILL_OK;
    int mode = -1, fd = -1;
    memset(out, 0, sizeof *out);
    out->name = path;
    KRILL_TRY(choose_target(path, &out->target, &mode));
    if (out->target) {
        KRILL_TRY(create_tmp(out, mode, &fd));
        out->f = fdopen(fd, "wb");
        if (!out->f) {
            const int fdopen_errno = errno;
            close(fd);
            errno = fdopen_errno;
        }
    } else {
        out->f = fopen(path, "wb");
    }
    if (!out->f) st = krill_error(KRILL_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
cleanup:
    if (st != KRILL_OK) krill_outfile_close(out, 0);
    return st;
}

void krill_outfile_stream(krill_outfile *out, FILE *f, const char *name)
{
    memset(out, 0, sizeof *out);
    out->f = f;
    out->name = name;
    out->borrowed = 1;
}

krill_status krill_outfile_close(krill_outfile *out, int commit)
{
    krill_status st = KRILL_OK;
    int err = 0, failed = 0;
    if (out->f && commit) {
        errno = 0;
        failed = fflush(out->f) != 0 || ferror(out->f);   /* fflush first: it sets errno */
        err = failed ? errno : 0;
        if (!failed && out->tmp && fsync(fileno(out->f)) != 0) {
            failed = 1;
            err = errno;
        }
    }
    if (out->f && !out->borrowed && fclose(out->f) != 0 && commit && !failed) {
        failed = 1;
        err = errno;
    }
    if (out->tmp && commit && !failed && rename(out->tmp, out->target) != 0) {
        failed = 1;
        err = errno;
    }
    if (failed)
        st = krill_error(KRILL_ERR_IO, "%s: write failed: %s", out->name,
                         err ? strerror(err) : "an earlier write was refused");
    if (out->tmp && (failed || !commit)) remove(out->tmp);
    krill_free(out->target);
    krill_free(out->tmp);
    out->f = NULL;
    out->target = out->tmp = NULL;
    return st;
}
