/* io/bin_read.c - reading krill's binary CSR files (doc/binary-format.md; the layout is in
 * bin_write.c): the header checked against the file's size before anything is allocated,
 * then positioned reads (pread) of exactly the chunks that hold the rows asked for, each
 * chunk verified against its checksum before its bytes are used, then byte-swapped when the
 * file's byte order is not the host's, then the matrix checked (krill_csr_check). */
#define _XOPEN_SOURCE 700   /* pread */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_impl.h"

static const char *const section_name[BIN_SECTIONS] = { "row_ptr", "col", "val" };

static uint32_t swap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}

static uint64_t swap64(uint64_t v)
{
    return ((uint64_t)swap32((uint32_t)v) << 32) | swap32((uint32_t)(v >> 32));
}

/* n elements of 4 or 8 bytes at p, swapped in place */
static void swap_array(void *p, int64_t n, int size)
{
    if (size == 8) {
        uint64_t *q = p;
#pragma omp parallel for schedule(static) if (n > 65536)
        for (int64_t k = 0; k < n; k++) q[k] = swap64(q[k]);
    } else {
        uint32_t *q = p;
#pragma omp parallel for schedule(static) if (n > 65536)
        for (int64_t k = 0; k < n; k++) q[k] = swap32(q[k]);
    }
}

/* n bytes at file offset off into dst (pread until done). */
static krill_status read_at(const krill_bin_file *f, int64_t off, void *dst, int64_t n)
{
    krill_status st = KRILL_OK;
    char *p = dst;
    while (n > 0) {
        const size_t want = n > ((int64_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
        const ssize_t got = pread(f->fd, p, want, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            st = krill_error(KRILL_ERR_IO, "%s: read failed at byte %lld: %s", f->name,
                             (long long)off, strerror(errno));
            goto cleanup;
        }
        if (got == 0) {
            st = krill_error(KRILL_ERR_PARSE, "%s: truncated: no data at byte %lld (did the "
                             "file shrink while it was read?)", f->name, (long long)off);
            goto cleanup;
        }
        p += got;
        off += got;
        n -= got;
    }
cleanup:
    return st;
}

/* Chunks [k, k + n) of section s lie at buf (the section's bytes from k C on): each must
 * match sums[0..n). */
static krill_status verify(const krill_bin_file *f, int s, int64_t k, int64_t n,
                           const unsigned char *buf, const uint64_t *sums)
{
    krill_status st = KRILL_OK;
    const int64_t c = f->info.chunk_bytes, size = f->layout.bytes[s];
    int64_t bad = INT64_MAX;
#pragma omp parallel for schedule(static) reduction(min : bad) if (n > 4)
    for (int64_t j = 0; j < n; j++) {
        const int64_t lo = (k + j) * c, hi = lo + c < size ? lo + c : size;
        uint64_t want = f->swap ? swap64(sums[j]) : sums[j];
        if (bin_fnv(BIN_FNV_BASIS, buf + j * c, (size_t)(hi - lo)) != want && k + j < bad)
            bad = k + j;
    }
    if (bad != INT64_MAX) {
        const int64_t at = f->layout.data[s] + bad * c;
        st = krill_error(KRILL_ERR_PARSE, "%s: checksum mismatch in the %s section, chunk %lld "
                         "of %lld (file bytes %lld to %lld): the file is corrupt", f->name,
                         section_name[s], (long long)bad + 1, (long long)f->layout.chunks[s],
                         (long long)at, (long long)(at + c < f->layout.data[s] + size
                                                    ? at + c : f->layout.data[s] + size) - 1);
    }
    return st;
}

/* Bytes [lo, hi) of section s into dst, through the chunks that hold them, each verified:
 * whole chunks inside [lo, hi) are read straight into dst; a chunk that sticks out at
 * either end goes through a buffer of one chunk. */
static krill_status read_section(const krill_bin_file *f, int s, int64_t lo, int64_t hi,
                                 void *dst)
{
    krill_status st = KRILL_OK;
    const int64_t c = f->info.chunk_bytes, size = f->layout.bytes[s];
    const int64_t k0 = lo / c, k1 = (hi + c - 1) / c;
    uint64_t *sums = NULL;
    unsigned char *buf = NULL, *out = dst;
    if (hi <= lo) goto cleanup;
    KRILL_ALLOC(sums, k1 - k0);
    KRILL_TRY(read_at(f, f->layout.sums[s] + 8 * k0, sums, 8 * (k1 - k0)));
    for (int64_t k = k0, kb = k0; k < k1; k = kb) {
        const int64_t clo = k * c, chi = clo + c < size ? clo + c : size;
        if (clo >= lo && chi <= hi) {          /* whole chunks k .. kb - 1 straight in */
            for (kb = k + 1; kb < k1 && (kb * c + c < size ? kb * c + c : size) <= hi; kb++) {}
            const int64_t end = kb * c < size ? kb * c : size;
            KRILL_TRY(read_at(f, f->layout.data[s] + clo, out + (clo - lo), end - clo));
            KRILL_TRY(verify(f, s, k, kb - k, out + (clo - lo), sums + (k - k0)));
        } else {                               /* one chunk through the buffer */
            const int64_t a = clo > lo ? clo : lo, b = chi < hi ? chi : hi;
            kb = k + 1;
            if (!buf) KRILL_ALLOC(buf, c < size ? c : size);
            KRILL_TRY(read_at(f, f->layout.data[s] + clo, buf, chi - clo));
            KRILL_TRY(verify(f, s, k, 1, buf, sums + (k - k0)));
            memcpy(out + (a - lo), buf + (a - clo), (size_t)(b - a));
        }
    }
cleanup:
    krill_free(sums);
    krill_free(buf);
    return st;
}

/* The header's fields (offsets in bytes; integers in the file's byte order):
 *     0  8  magic "KRILLCSR"              48  8  chunk bytes (power of two, 64 .. 2^30)
 *     8  4  byte-order mark 0x0A0B0C0D    56  8  file bytes (the whole file)
 *    12  4  version (1)                   64 56  reserved, zero
 *    16  4  header bytes (128)           120  8  FNV-1a 64 of bytes 0 .. 119
 *    20  4  flags (KRILL_BIN_*)
 *    24  8  n_rows    32  8  n_cols    40  8  nnz
 * Checked in the order that names the first thing wrong: the magic, the byte order, the
 * version (a later version may lay out the rest differently), the checksum, then the
 * fields, the sizes and the file's size. */
static krill_status parse_header(krill_bin_file *f, const unsigned char *h, int64_t size)
{
    krill_status st = KRILL_OK;
    const char *name = f->name;
    uint32_t u32[4];
    int64_t i64[5];
    uint64_t sum, stored;
    static const unsigned char zeros[56] = { 0 };
    krill_bin_info *in = &f->info;
    if (size < 8 || memcmp(h, KRILL_BIN_MAGIC, 8) != 0) {
        st = krill_error(KRILL_ERR_PARSE, "%s: not a krill binary file (bad magic: it does not "
                         "start with \"%s\")", name, KRILL_BIN_MAGIC);
        goto cleanup;
    }
    if (size < KRILL_BIN_HEADER_BYTES) {
        st = krill_error(KRILL_ERR_PARSE, "%s: truncated: %lld bytes, the header alone has %d",
                         name, (long long)size, KRILL_BIN_HEADER_BYTES);
        goto cleanup;
    }
    memcpy(u32, h + 8, sizeof u32);
    memcpy(i64, h + 24, sizeof i64);
    memcpy(&stored, h + KRILL_BIN_HEADER_BYTES - 8, 8);
    if (u32[0] != KRILL_BIN_ORDER_MARK && u32[0] != swap32(KRILL_BIN_ORDER_MARK)) {
        st = krill_error(KRILL_ERR_PARSE, "%s: bad byte-order mark %02x %02x %02x %02x (0a 0b "
                         "0c 0d big-endian or 0d 0c 0b 0a little-endian): the header is corrupt",
                         name, h[8], h[9], h[10], h[11]);
        goto cleanup;
    }
    f->swap = u32[0] != KRILL_BIN_ORDER_MARK;
    in->swapped = f->swap;
    for (int k = 0; k < 4 && f->swap; k++) u32[k] = swap32(u32[k]);
    for (int k = 0; k < 5 && f->swap; k++) i64[k] = (int64_t)swap64((uint64_t)i64[k]);
    if (f->swap) stored = swap64(stored);
    in->version = u32[1];
    if (u32[1] != KRILL_BIN_VERSION) {
        st = krill_error(KRILL_ERR_PARSE, "%s: format version %u; this krill reads version %u "
                         "(convert the Matrix Market file again)", name, u32[1],
                         KRILL_BIN_VERSION);
        goto cleanup;
    }
    sum = bin_fnv(BIN_FNV_BASIS, h, KRILL_BIN_HEADER_BYTES - 8);
    if (sum != stored) {
        st = krill_error(KRILL_ERR_PARSE, "%s: header checksum mismatch (stored %016llx, "
                         "computed %016llx): the header is corrupt", name,
                         (unsigned long long)stored, (unsigned long long)sum);
        goto cleanup;
    }
    if (u32[2] != KRILL_BIN_HEADER_BYTES || memcmp(h + 64, zeros, sizeof zeros) != 0 ||
        (u32[3] & ~KRILL_BIN_KNOWN_FLAGS) != 0) {
        st = krill_error(KRILL_ERR_PARSE, "%s: header size %u, flags 0x%x or the reserved bytes "
                         "are not those of version %u (128, flags 0..7, zeros)", name, u32[2],
                         u32[3], KRILL_BIN_VERSION);
        goto cleanup;
    }
    in->flags = u32[3];
    if (bin_layout_of(i64[0], i64[1], i64[2], i64[3], &f->layout) != 0) {
        st = krill_error(KRILL_ERR_PARSE, "%s: sizes out of range: %lld x %lld with %lld "
                         "entries in chunks of %lld bytes (rows and columns 0 .. 2^31 - 1, "
                         "entries 0 .. rows x columns, chunks a power of two 64 .. 2^30)",
                         name, (long long)i64[0], (long long)i64[1], (long long)i64[2],
                         (long long)i64[3]);
        goto cleanup;
    }
    if (i64[4] != f->layout.file_bytes) {
        st = krill_error(KRILL_ERR_PARSE, "%s: the header says the file has %lld bytes, its "
                         "sizes make %lld: the header is inconsistent", name,
                         (long long)i64[4], (long long)f->layout.file_bytes);
        goto cleanup;
    }
    if (size != i64[4]) {
        st = krill_error(KRILL_ERR_PARSE, size < i64[4]
                         ? "%s: truncated: %lld bytes, the header describes %lld"
                         : "%s: %lld bytes, the header describes %lld: trailing data",
                         name, (long long)size, (long long)i64[4]);
        goto cleanup;
    }
    in->n_rows = (int32_t)i64[0];
    in->n_cols = (int32_t)i64[1];
    in->nnz = i64[2];
    in->chunk_bytes = i64[3];
    in->file_bytes = i64[4];
cleanup:
    return st;
}

krill_status krill_bin_open(const char *path, krill_bin_file *f)
{
    krill_status st = KRILL_OK;
    struct stat sb;
    unsigned char h[KRILL_BIN_HEADER_BYTES];
    int64_t got = 0;
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->name = path;
    KRILL_REQUIRE(path != NULL, "krill_bin_open: path is NULL");
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0 || fstat(f->fd, &sb) != 0) {
        st = krill_error(KRILL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        goto cleanup;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = krill_error(KRILL_ERR_IO, "%s: not a regular file (a binary file is read by "
                         "positioned reads)", path);
        goto cleanup;
    }
    got = sb.st_size < KRILL_BIN_HEADER_BYTES ? (int64_t)sb.st_size : KRILL_BIN_HEADER_BYTES;
    KRILL_TRY(read_at(f, 0, h, got));
    KRILL_TRY(parse_header(f, h, (int64_t)sb.st_size));
cleanup:
    if (st != KRILL_OK) krill_bin_close(f);
    return st;
}

void krill_bin_close(krill_bin_file *f)
{
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
}

krill_status krill_bin_read_ptr(krill_bin_file *f, int64_t first, int64_t count, int64_t *out)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(first >= 0 && count >= 0 && first + count <= (int64_t)f->info.n_rows + 1,
                  "%s: row offsets [%lld, %lld) outside [0, %lld)", f->name, (long long)first,
                  (long long)(first + count), (long long)f->info.n_rows + 1);
    KRILL_TRY(read_section(f, BIN_ROW_PTR, 8 * first, 8 * (first + count), out));
    if (f->swap) swap_array(out, count, 8);
cleanup:
    return st;
}

/* The offsets ptr[0..n] of rows [r0, r0 + n): non-decreasing, in [0, nnz], from 0 at row
 * 0 and to nnz at the last row. */
static krill_status check_ptr(const krill_bin_file *f, int64_t r0, int64_t n, const int64_t *ptr)
{
    krill_status st = KRILL_OK;
    const int64_t nnz = f->info.nnz, last = f->info.n_rows;
    int64_t bad = -1;
    for (int64_t i = 0; i <= n && bad < 0; i++)
        if (ptr[i] < 0 || ptr[i] > nnz || (i > 0 && ptr[i] < ptr[i - 1]) ||
            (r0 + i == 0 && ptr[i] != 0) || (r0 + i == last && ptr[i] != nnz))
            bad = i;
    if (bad >= 0)
        st = krill_error(KRILL_ERR_PARSE, "%s: row_ptr[%lld] = %lld (after %lld): row offsets "
                         "must rise from 0 to nnz = %lld: the file is malformed", f->name,
                         (long long)(r0 + bad), (long long)ptr[bad],
                         bad > 0 ? (long long)ptr[bad - 1] : 0LL, (long long)nnz);
    return st;
}

krill_status krill_bin_read_slice(krill_bin_file *f, int64_t r0, int64_t r1, krill_csr **rows)
{
    krill_status st = KRILL_OK;
    int64_t *ptr = NULL, p0 = 0, p1 = 0;
    krill_csr *a = NULL;
    char what[96];
    KRILL_REQUIRE(rows != NULL, "krill_bin_read_rows: rows is NULL");
    *rows = NULL;
    KRILL_REQUIRE(r0 >= 0 && r0 <= r1 && r1 <= f->info.n_rows, "krill_bin_read_rows: %s: "
                  "rows [%lld, %lld) are not within the file's %d", f->name, (long long)r0,
                  (long long)r1, f->info.n_rows);
    KRILL_ALLOC(ptr, r1 - r0 + 1);
    KRILL_TRY(krill_bin_read_ptr(f, r0, r1 - r0 + 1, ptr));
    KRILL_TRY(check_ptr(f, r0, r1 - r0, ptr));
    p0 = ptr[0];
    p1 = ptr[r1 - r0];
    snprintf(what, sizeof what, "reading rows %lld to %lld (%lld entries) of %s",
             (long long)r0, (long long)r1 - 1, (long long)(p1 - p0),
             strlen(f->name) < 40 ? f->name : "the file");
    KRILL_TRY(krill_host_mem_check(8 * (size_t)(r1 - r0 + 1) + 12 * (size_t)(p1 - p0), what));
    KRILL_TRY(krill_csr_create((int32_t)(r1 - r0), f->info.n_cols, p1 - p0, &a));
    for (int64_t i = 0; i <= r1 - r0; i++) a->row_ptr[i] = ptr[i] - p0;
    KRILL_TRY(read_section(f, BIN_COL, 4 * p0, 4 * p1, a->col));
    KRILL_TRY(read_section(f, BIN_VAL, 8 * p0, 8 * p1, a->val));
    if (f->swap) {
        swap_array(a->col, a->nnz, 4);
        swap_array(a->val, a->nnz, 8);
    }
    if (krill_csr_check(a, f->name) != KRILL_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", krill_last_error());
        st = krill_error(KRILL_ERR_PARSE, "%s (rows %lld to %lld of the file): the file is "
                         "malformed", msg, (long long)r0, (long long)r1 - 1);
        goto cleanup;
    }
    *rows = a;
    a = NULL;
cleanup:
    krill_free(ptr);
    krill_csr_destroy(&a);
    return st;
}

int krill_bin_detect(const char *path)
{
    char magic[8];
    FILE *f = path ? fopen(path, "rb") : NULL;
    int yes = f && fread(magic, 1, 8, f) == 8 && memcmp(magic, KRILL_BIN_MAGIC, 8) == 0;
    if (f) fclose(f);
    return yes;
}

krill_status krill_bin_read_info(const char *path, krill_bin_info *info)
{
    krill_status st = KRILL_OK;
    krill_bin_file f;
    KRILL_REQUIRE(info != NULL, "krill_bin_read_info: info is NULL");
    KRILL_TRY(krill_bin_open(path, &f));
    *info = f.info;
    krill_bin_close(&f);
cleanup:
    return st;
}

krill_status krill_bin_read_rows(const char *path, int64_t r0, int64_t r1, krill_csr **rows,
                                 krill_bin_info *info)
{
    krill_status st = KRILL_OK;
    krill_bin_file f = { .fd = -1 };
    KRILL_REQUIRE(rows != NULL, "krill_bin_read_rows: rows is NULL");
    *rows = NULL;
    KRILL_TRY(krill_bin_open(path, &f));
    if (info) *info = f.info;
    KRILL_TRY(krill_bin_read_slice(&f, r0, r1, rows));
cleanup:
    krill_bin_close(&f);
    return st;
}

krill_status krill_bin_read(const char *path, krill_csr **csr, krill_bin_info *info)
{
    krill_status st = KRILL_OK;
    krill_bin_file f = { .fd = -1 };
    KRILL_REQUIRE(csr != NULL, "krill_bin_read: csr is NULL");
    *csr = NULL;
    KRILL_TRY(krill_bin_open(path, &f));
    if (info) *info = f.info;
    KRILL_TRY(krill_bin_read_slice(&f, 0, f.info.n_rows, csr));
cleanup:
    krill_bin_close(&f);
    return st;
}
