/* io/mm_load.c - a whole file into memory, decompressed when it is gzip data.
 *
 * The bytes are read first, whatever the file is: a large regular file by parallel
 * pread()s (copying out of the page cache and first touching the pages are what a load
 * costs; both spread over threads), anything else - a small file, a pipe such as
 * <(gunzip -c A.mtx.gz) - by fread in growing chunks. Data that starts with the gzip magic
 * bytes 1f 8b, whatever the file is called, is then inflated in memory with zlib (all
 * members of a multi-member file). The parser works on the one resulting buffer. */
#define _DEFAULT_SOURCE            /* MADV_HUGEPAGE (Linux) in <sys/mman.h> */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef KRILL_HAVE_ZLIB
#include <zlib.h>
#endif

#include "io/io_impl.h"

#define LOAD_CHUNK ((size_t)1 << 20)          /* growth step when the size is not known */
#define PARALLEL_LOAD_MIN ((size_t)16 << 20)  /* smaller files: one read */
#define LOAD_PIECE ((size_t)8 << 20)          /* bytes per pread in a parallel load */

/* Make room for `need` bytes plus a NUL in *buf (capacity *cap), at least doubling. A
 * buffer of a megabyte or more must fit, with the old one it is copied from, in the host
 * memory available: a small gzip file that inflates to gigabytes fails as "PATH: loading
 * the file needs N bytes ...", not in the kernel's out-of-memory killer. */
static krill_status ensure_capacity(const char *path, char **buf, size_t *cap, size_t used,
                                    size_t need)
{
    krill_status st = KRILL_OK;
    char *bigger = NULL, what[256];
    if (need + 1 <= *cap) return KRILL_OK;
    size_t new_cap = *cap * 2 > need + 1 ? *cap * 2 : need + 1;
    if (new_cap >= LOAD_CHUNK) {
        snprintf(what, sizeof what, "%s: loading the file (%zu bytes so far)", path, used);
        KRILL_TRY(krill_host_mem_check(new_cap + *cap, what));
    }
    KRILL_ALLOC(bigger, new_cap);
    krill_advise_huge(bigger, new_cap);
    if (used) memcpy(bigger, *buf, used);
    krill_free(*buf);
    *buf = bigger;
    *cap = new_cap;
cleanup:
    return st;
}

/* Exactly `size` bytes of the regular file fd into buf, by pieces read in parallel. */
static krill_status read_parallel(const char *path, int fd, char *buf, size_t size)
{
    krill_status st = KRILL_OK;
    const long pieces = (long)((size + LOAD_PIECE - 1) / LOAD_PIECE);
    int failed_errno = 0, short_read = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(max : failed_errno) \
    reduction(| : short_read)
    for (long k = 0; k < pieces; k++) {
        size_t off = (size_t)k * LOAD_PIECE;
        size_t end = off + LOAD_PIECE < size ? off + LOAD_PIECE : size;
        while (off < end) {
            ssize_t got = pread(fd, buf + off, end - off, (off_t)off);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                if (got < 0) failed_errno = errno;
                else short_read = 1;
                break;
            }
            off += (size_t)got;
        }
    }
    if (failed_errno)
        st = krill_error(KRILL_ERR_IO, "%s: read failed: %s", path, strerror(failed_errno));
    else if (short_read)
        st = krill_error(KRILL_ERR_IO, "%s: read failed: the file shrank while being read", path);
    return st;
}

/* The file's bytes into a new buffer (*data, *len, NUL-terminated). */
static krill_status read_bytes(const char *path, char **data, size_t *len)
{
    krill_status st = KRILL_OK;
    char *buf = NULL;
    size_t cap = 0, used = 0;
    struct stat sb;
    FILE *f = fopen(path, "rb");
    if (!f) {
        st = krill_error(KRILL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        goto cleanup;
    }
    const int regular = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode);
    KRILL_TRY(ensure_capacity(path, &buf, &cap, 0, regular ? (size_t)sb.st_size : LOAD_CHUNK));
    if (regular && (size_t)sb.st_size >= PARALLEL_LOAD_MIN) {
        KRILL_TRY(read_parallel(path, fileno(f), buf, (size_t)sb.st_size));
        used = (size_t)sb.st_size;  /* bytes appended since the stat are not read */
    } else {
        for (;;) {
            if (cap - 1 == used) {  /* full: grow only if there is more (no copy at EOF) */
                char probe;
                if (fread(&probe, 1, 1, f) == 0) break;
                KRILL_TRY(ensure_capacity(path, &buf, &cap, used, used + LOAD_CHUNK));
                buf[used++] = probe;
            }
            size_t got = fread(buf + used, 1, cap - 1 - used, f);
            used += got;
            if (got == 0) break;
        }
        if (ferror(f)) {
            st = krill_error(KRILL_ERR_IO, "%s: read failed: %s", path, strerror(errno));
            goto cleanup;
        }
    }
    buf[used] = '\0';
    *data = buf;
    *len = used;
    buf = NULL;
cleanup:
    if (f) fclose(f);
    krill_free(buf);
    return st;
}

#ifdef KRILL_HAVE_ZLIB
#define DEFLATE_MAX_RATIO 1032     /* deflate expands at most about 1032:1 */
#define GZIP_WINDOW (16 + MAX_WBITS)  /* inflateInit2: gzip header and trailer, 32 KiB window */

/* The gzip trailer's last 4 bytes hold the uncompressed size mod 2^32 (of the last member):
 * a good first guess for the buffer, grown if it is short, capped by what the compressed
 * size allows so that a corrupt trailer cannot ask for gigabytes. */
static size_t gzip_size_hint(const unsigned char *z, size_t n)
{
    size_t hint = LOAD_CHUNK;
    if (n >= 4) {
        hint = (size_t)z[n - 4] | (size_t)z[n - 3] << 8 | (size_t)z[n - 2] << 16 |
               (size_t)z[n - 1] << 24;
        if (hint > n * DEFLATE_MAX_RATIO) hint = n * DEFLATE_MAX_RATIO;
    }
    return hint > 0 ? hint : LOAD_CHUNK;
}

/* Inflate the gzip data z[0..n) - one member or several in a row - into a new buffer. */
static krill_status gunzip(const char *path, const unsigned char *z, size_t n, char **text,
                           size_t *len)
{
    krill_status st = KRILL_OK;
    char *buf = NULL;
    size_t cap = 0, used = 0, in = 0;
    z_stream zs;
    int zinit = 0;
    memset(&zs, 0, sizeof zs);
    KRILL_TRY(ensure_capacity(path, &buf, &cap, 0, gzip_size_hint(z, n)));
    if (inflateInit2(&zs, GZIP_WINDOW) != Z_OK) {
        st = krill_error(KRILL_ERR_ALLOC, "%s: zlib could not allocate its state", path);
        goto cleanup;
    }
    zinit = 1;
    for (;;) {
        if (cap - 1 == used)
            KRILL_TRY(ensure_capacity(path, &buf, &cap, used, used + used / 2 + 1));
        size_t in_room = n - in, out_room = cap - 1 - used;
        zs.next_in = (Bytef *)(uintptr_t)(z + in);   /* zlib does not write the input */
        zs.avail_in = (uInt)(in_room < UINT_MAX ? in_room : UINT_MAX);
        zs.next_out = (Bytef *)(buf + used);
        zs.avail_out = (uInt)(out_room < UINT_MAX ? out_room : UINT_MAX);
        uInt in_before = zs.avail_in, out_before = zs.avail_out;
        int r = inflate(&zs, Z_NO_FLUSH);
        in += in_before - zs.avail_in;
        used += out_before - zs.avail_out;
        if (r == Z_STREAM_END) {
            if (in == n) break;                      /* the last member */
            if (n - in < 2 || z[in] != 0x1f || z[in + 1] != 0x8b) {
                st = krill_error(KRILL_ERR_PARSE, "%s: corrupt gzip data: %zu bytes that are "
                                 "not gzip after the compressed data", path, n - in);
                goto cleanup;
            }
            inflateReset(&zs);                       /* the next member */
        } else if (r == Z_BUF_ERROR && (in == n || (in_before == zs.avail_in &&
                                                    out_before == zs.avail_out))) {
            st = krill_error(KRILL_ERR_PARSE, "%s: corrupt gzip data: the file is truncated",
                             path);
            goto cleanup;
        } else if (r != Z_OK && r != Z_BUF_ERROR) {
            st = krill_error(r == Z_MEM_ERROR ? KRILL_ERR_ALLOC : KRILL_ERR_PARSE,
                             "%s: corrupt gzip data: %s", path, zs.msg ? zs.msg : zError(r));
            goto cleanup;
        }
    }
    buf[used] = '\0';
    *text = buf;
    *len = used;
    buf = NULL;
cleanup:
    if (zinit) inflateEnd(&zs);
    krill_free(buf);
    return st;
}
#endif

krill_status krill_io_load(const char *path, char **text, size_t *len)
{
    krill_status st = KRILL_OK;
    char *raw = NULL;
    size_t n = 0;
    KRILL_TRY(read_bytes(path, &raw, &n));
    const int gzip = n >= 2 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b;
    if (!gzip) {
        *text = raw;
        *len = n;
        raw = NULL;
    } else {
#ifdef KRILL_HAVE_ZLIB
        KRILL_TRY(gunzip(path, (const unsigned char *)raw, n, text, len));
#else
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s: gzip-compressed file, but krill was built "
                         "without zlib (decompress it with gunzip first)", path);
#endif
    }
cleanup:
    krill_free(raw);
    return st;
}
