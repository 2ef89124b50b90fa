/* io/bin_write.c - krill's binary CSR files (doc/binary-format.md): the layout both sides
 * derive from the header, the chunk checksum, and the writer.
 *
 * The file, every integer in the writer's (the host's) byte order:
 *
 *   header       128 bytes (bin_read.c's parse_header lists the fields)
 *   checksums    8 bytes per chunk: row_ptr's chunks, then col's, then val's
 *   row_ptr      8 (n_rows + 1) bytes, int64
 *   col          4 nnz bytes, int32, then 4 zero bytes when nnz is odd
 *   val          8 nnz bytes, IEEE binary64
 *
 * Chunk k of a section is its bytes [k C, min((k + 1) C, S)) (C = chunk bytes, S = the
 * section's size with the padding); its checksum is FNV-1a 64 of those bytes as stored.
 * The file is written whole or not at all (outfile.c). */
#include <errno.h>
#include <string.h>

#include "io/io_impl.h"

uint64_t bin_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t k = 0; k < n; k++) {
        h ^= b[k];
        h *= 0x100000001b3ull;
    }
    return h;
}

int bin_layout_of(int64_t n_rows, int64_t n_cols, int64_t nnz, int64_t chunk, bin_layout *l)
{
    int64_t pos = KRILL_BIN_HEADER_BYTES;
    const int ok = n_rows >= 0 && n_rows <= INT32_MAX && n_cols >= 0 && n_cols <= INT32_MAX &&
                   nnz >= 0 && nnz <= n_rows * n_cols && nnz <= ((int64_t)1 << 56) &&
                   chunk >= KRILL_BIN_MIN_CHUNK && chunk <= KRILL_BIN_MAX_CHUNK &&
                   (chunk & (chunk - 1)) == 0;
    if (ok) {   /* nnz <= 2^56, n_rows < 2^31: no product or sum below can overflow int64 */
        l->bytes[BIN_ROW_PTR] = 8 * (n_rows + 1);
        l->bytes[BIN_COL] = 8 * ((nnz + 1) / 2);
        l->bytes[BIN_VAL] = 8 * nnz;
        for (int s = 0; s < BIN_SECTIONS; s++) {
            l->chunks[s] = (l->bytes[s] + chunk - 1) / chunk;
            l->sums[s] = pos;
            pos += 8 * l->chunks[s];
        }
        for (int s = 0; s < BIN_SECTIONS; s++) {
            l->data[s] = pos;
            pos += l->bytes[s];
        }
        l->file_bytes = pos;
    }
    return ok ? 0 : -1;
}

/* The writer's flags: exact symmetry, and the sign of a complete diagonal. */
static uint32_t matrix_flags(const krill_csr *a)
{
    uint32_t flags = 0;
    int32_t pos = 0, neg = 0;
    if (a->n_rows == a->n_cols && krill_csr_is_symmetric(a)) flags |= KRILL_BIN_SYMMETRIC;
    for (int32_t i = 0; i < a->n_rows && a->n_rows == a->n_cols; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] == i) {
                pos += a->val[p] > 0.0;
                neg += a->val[p] < 0.0;
            }
    if (a->n_rows > 0 && pos == a->n_rows) flags |= KRILL_BIN_DIAG_POSITIVE;
    if (a->n_rows > 0 && neg == a->n_rows) flags |= KRILL_BIN_DIAG_NEGATIVE;
    return flags;
}

/* The checksums of a section's chunks: data[0..used) followed by zeros up to `bytes`. */
static void section_sums(const void *data, int64_t used, int64_t bytes, int64_t chunk,
                         uint64_t *sums)
{
    static const unsigned char zeros[8] = { 0 };
    const unsigned char *b = data;
    const int64_t n = (bytes + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (n > 4)
    for (int64_t k = 0; k < n; k++) {
        const int64_t lo = k * chunk, hi = lo + chunk < bytes ? lo + chunk : bytes;
        const int64_t end = hi < used ? hi : used;
        uint64_t h = bin_fnv(BIN_FNV_BASIS, b + lo, (size_t)(end > lo ? end - lo : 0));
        sums[k] = bin_fnv(h, zeros, (size_t)(hi - (end > lo ? end : lo)));
    }
}

/* The 128-byte header (fields as bin_read.c's parse_header lists them), checksum included. */
static void make_header(const krill_csr *a, int64_t chunk, const bin_layout *l,
                        unsigned char *h)
{
    const uint32_t u32[4] = { KRILL_BIN_ORDER_MARK, KRILL_BIN_VERSION, KRILL_BIN_HEADER_BYTES,
                              matrix_flags(a) };
    const int64_t i64[5] = { a->n_rows, a->n_cols, a->nnz, chunk, l->file_bytes };
    uint64_t sum;
    memset(h, 0, KRILL_BIN_HEADER_BYTES);
    memcpy(h, KRILL_BIN_MAGIC, 8);
    memcpy(h + 8, u32, sizeof u32);
    memcpy(h + 24, i64, sizeof i64);
    sum = bin_fnv(BIN_FNV_BASIS, h, KRILL_BIN_HEADER_BYTES - 8);
    memcpy(h + KRILL_BIN_HEADER_BYTES - 8, &sum, 8);
}

static int put(FILE *f, const void *p, size_t n) { return n == 0 || fwrite(p, 1, n, f) == n; }

krill_status krill_bin_write(const char *path, const krill_csr *a, int64_t chunk)
{
    krill_status st = KRILL_OK;
    krill_outfile out = { 0 };
    bin_layout l;
    uint64_t *sums = NULL;
    unsigned char header[KRILL_BIN_HEADER_BYTES];
    static const unsigned char pad[4] = { 0 };
    int64_t n_sums = 0;
    KRILL_REQUIRE(path != NULL && a != NULL, "krill_bin_write: path or csr is NULL");
    KRILL_TRY(krill_csr_check(a, "krill_bin_write"));
    if (chunk == 0) chunk = KRILL_BIN_DEFAULT_CHUNK;
    KRILL_REQUIRE(bin_layout_of(a->n_rows, a->n_cols, a->nnz, chunk, &l) == 0,
                  "krill_bin_write: %s: chunk_bytes %lld must be a power of two in [%lld, %lld]",
                  path, (long long)chunk, (long long)KRILL_BIN_MIN_CHUNK,
                  (long long)KRILL_BIN_MAX_CHUNK);
    n_sums = l.chunks[BIN_ROW_PTR] + l.chunks[BIN_COL] + l.chunks[BIN_VAL];
    KRILL_ALLOC(sums, n_sums);
    section_sums(a->row_ptr, l.bytes[BIN_ROW_PTR], l.bytes[BIN_ROW_PTR], chunk, sums);
    section_sums(a->col, 4 * a->nnz, l.bytes[BIN_COL], chunk, sums + l.chunks[BIN_ROW_PTR]);
    section_sums(a->val, 8 * a->nnz, l.bytes[BIN_VAL], chunk,
                 sums + l.chunks[BIN_ROW_PTR] + l.chunks[BIN_COL]);
    make_header(a, chunk, &l, header);
    KRILL_TRY(krill_outfile_open(&out, path));
    if (!(put(out.f, header, sizeof header) && put(out.f, sums, 8 * (size_t)n_sums) &&
          put(out.f, a->row_ptr, (size_t)l.bytes[BIN_ROW_PTR]) &&
          put(out.f, a->col, 4 * (size_t)a->nnz) &&
          put(out.f, pad, (size_t)(l.bytes[BIN_COL] - 4 * a->nnz)) &&
          put(out.f, a->val, 8 * (size_t)a->nnz)))
        st = krill_error(KRILL_ERR_IO, "%s: write failed: %s", path, strerror(errno));
cleanup:
    if (out.f) {
        krill_status closed = krill_outfile_close(&out, st == KRILL_OK);
        if (st == KRILL_OK) st = closed;
    }
    krill_free(sums);
    return st;
}
