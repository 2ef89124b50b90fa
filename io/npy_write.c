/* io/npy_write.c - a dense row-major array as a NumPy .npy file (format version 1.0).
 *
 * The file is: the magic "\x93NUMPY", the version bytes 1 and 0, the header length as a
 * little-endian uint16, the header (a Python dict literal, padded with blanks and ended by
 * '\n' so that the data start at a multiple of 64 bytes), then the elements in C order,
 * little endian. numpy.load(path) returns a rows x cols array of the dtype. The file is
 * written whole or not at all (outfile.c): a failed write leaves no partial file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "io/io_impl.h"

#define NPY_ALIGN 64              /* the data start at a multiple of this (NumPy's own) */
#define NPY_PREAMBLE 10           /* magic (6), version (2), header length (2) */
#define NPY_CHUNK 4096            /* bytes byte-swapped per write on a big-endian host */

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char first = 0;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* The element size of a dtype string, or 0 when it is not one krill writes. */
static size_t npy_elem_size(const char *dtype)
{
    size_t size = 0;
    if (!strcmp(dtype, "<i4") || !strcmp(dtype, "<f4"))
        size = 4;
    else if (!strcmp(dtype, "<f8"))
        size = 8;
    return size;
}

/* The elements in little-endian order: straight from memory on a little-endian host,
 * else swapped chunk by chunk. */
static int write_data(FILE *f, const unsigned char *data, size_t count, size_t elem)
{
    int ok = 1;
    if (host_is_little_endian()) {
        ok = count == 0 || fwrite(data, elem, count, f) == count;
    } else {
        unsigned char buf[NPY_CHUNK];
        const size_t per_chunk = NPY_CHUNK / elem;
        for (size_t done = 0; done < count && ok; done += per_chunk) {
            const size_t m = count - done < per_chunk ? count - done : per_chunk;
            for (size_t e = 0; e < m; e++)
                for (size_t b = 0; b < elem; b++)
                    buf[e * elem + b] = data[(done + e) * elem + elem - 1 - b];
            ok = fwrite(buf, elem, m, f) == m;
        }
    }
    return ok;
}

krill_status krill_npy_write(const char *path, const char *dtype, int64_t rows, int64_t cols,
                             const void *data)
{
    krill_status st = KRILL_OK;
    krill_outfile out = { 0 };
    char header[160];
    unsigned char preamble[NPY_PREAMBLE] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0 };
    size_t elem = 0, count = 0, len = 0, padded = 0;
    KRILL_REQUIRE(path && path[0], "krill_npy_write: no path");
    KRILL_REQUIRE(dtype, "krill_npy_write: %s: no dtype", path);
    elem = npy_elem_size(dtype);
    KRILL_REQUIRE(elem > 0, "krill_npy_write: %s: dtype \"%s\" is not one of <i4, <f4, <f8",
                  path, dtype);
    KRILL_REQUIRE(rows >= 0 && cols >= 0, "krill_npy_write: %s: shape (%lld, %lld) is negative",
                  path, (long long)rows, (long long)cols);
    KRILL_REQUIRE(cols == 0 || (uint64_t)rows <= SIZE_MAX / elem / (uint64_t)cols,
                  "krill_npy_write: %s: %lld x %lld elements overflow the address space", path,
                  (long long)rows, (long long)cols);
    count = (size_t)rows * (size_t)cols;
    KRILL_REQUIRE(data || count == 0, "krill_npy_write: %s: no data", path);

    /* the dict, then blanks and '\n' up to the next multiple of NPY_ALIGN */
    len = (size_t)snprintf(header, sizeof header,
                           "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %lld), }",
                           dtype, (long long)rows, (long long)cols);
    padded = (NPY_PREAMBLE + len + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN - NPY_PREAMBLE;
    if (padded >= sizeof header) {      /* cannot happen: two 19-digit numbers fit */
        st = krill_error(KRILL_ERR_INTERNAL, "krill_npy_write: %s: header of %zu bytes", path,
                         padded);
        goto cleanup;
    }
    memset(header + len, ' ', padded - 1 - len);
    header[padded - 1] = '\n';
    preamble[8] = (unsigned char)(padded & 0xff);
    preamble[9] = (unsigned char)(padded >> 8);

    KRILL_TRY(krill_outfile_open(&out, path));
    if (!(fwrite(preamble, 1, sizeof preamble, out.f) == sizeof preamble &&
          fwrite(header, 1, padded, out.f) == padded &&
          write_data(out.f, (const unsigned char *)data, count, elem)))
        st = krill_error(KRILL_ERR_IO, "%s: write failed: %s", path, strerror(errno));
cleanup:
    if (out.f) {
        krill_status closed = krill_outfile_close(&out, st == KRILL_OK);
        if (st == KRILL_OK) st = closed;
    }
    return st;
}
