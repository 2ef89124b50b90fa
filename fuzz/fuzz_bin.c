/* fuzz/fuzz_bin.c - libFuzzer harness of krill's binary CSR reader (io/bin_read.c;
 * doc/binary-format.md).
 *
 * The input is read twice: as it is, and "resealed": where its header gives a layout, the
 * header checksum and every chunk checksum are recomputed (in the file's byte order) before
 * the read, so that mutations get past the checksums to the size, offset and index checks
 * behind them (a random mutation almost never matches a checksum). For each read:
 *   - the status and the matrix agree (KRILL_OK iff a matrix);
 *   - a matrix read without error passes fuzz_check_matrix (krill_csr_check, the csr and ell
 *     formats, a Matrix Market round trip), krill_bin_read_rows of all its rows and of two
 *     halves give the same rows, and written with krill_bin_write and read again it is the
 *     same bit for bit;
 *   - an input that reads as it is reads the same when resealed (its checksums were right).
 * Seeds (fuzz/corpus/bin): small matrices converted with chunks of 64 bytes, e.g.
 * `krill gen poisson3d:2 -o p.mtx && krill convert p.mtx p.krill --chunk 64`. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "io/io_impl.h"
#include "krill/io.h"

static uint64_t swap64(uint64_t v)
{
    uint64_t r = 0;
    for (int k = 0; k < 8; k++) r = (r << 8) | ((v >> (8 * k)) & 0xff);
    return r;
}

/* The header's int64 field at byte `at`, in host order. */
static int64_t field(const uint8_t *d, int at, int swap)
{
    uint64_t v;
    memcpy(&v, d + at, 8);
    return (int64_t)(swap ? swap64(v) : v);
}

static void put_sum(uint8_t *d, int64_t at, uint64_t sum, int swap)
{
    if (swap) sum = swap64(sum);
    memcpy(d + at, &sum, 8);
}

/* Recompute the checksums of a copy of data in place; 0 when its header gives no layout
 * that fits in `size` bytes (then there is nothing to reseal). */
static int reseal(uint8_t *d, size_t size)
{
    bin_layout l;
    uint32_t mark;
    int swap;
    if (size < KRILL_BIN_HEADER_BYTES) return 0;
    memcpy(&mark, d + 8, 4);
    swap = mark != KRILL_BIN_ORDER_MARK;
    if (bin_layout_of(field(d, 24, swap), field(d, 32, swap), field(d, 40, swap),
                      field(d, 48, swap), &l) != 0 || l.file_bytes > (int64_t)size)
        return 0;
    for (int s = 0; s < BIN_SECTIONS; s++) {
        const int64_t c = field(d, 48, swap);
        for (int64_t k = 0; k < l.chunks[s]; k++) {
            const int64_t lo = k * c, hi = lo + c < l.bytes[s] ? lo + c : l.bytes[s];
            put_sum(d, l.sums[s] + 8 * k,
                    bin_fnv(BIN_FNV_BASIS, d + l.data[s] + lo, (size_t)(hi - lo)), swap);
        }
    }
    put_sum(d, KRILL_BIN_HEADER_BYTES - 8,
            bin_fnv(BIN_FNV_BASIS, d, KRILL_BIN_HEADER_BYTES - 8), swap);
    return 1;
}

/* The properties of a matrix a read from path without error. */
static void check_read(const char *path, const krill_csr *a)
{
    krill_csr *all = NULL, *lo = NULL, *hi = NULL, *again = NULL;
    const char *copy = fuzz_path("copy.krill");
    const int64_t mid = a->n_rows / 2;
    fuzz_check_matrix(a);
    if (krill_bin_read_rows(path, 0, a->n_rows, &all, NULL) != KRILL_OK)
        fuzz_fail("read whole but not as rows 0..n: %s", krill_last_error());
    fuzz_same_csr(a, all, "krill_bin_read and krill_bin_read_rows(0, n)");
    if (krill_bin_read_rows(path, 0, mid, &lo, NULL) != KRILL_OK ||
        krill_bin_read_rows(path, mid, a->n_rows, &hi, NULL) != KRILL_OK)
        fuzz_fail("read whole but not in two halves: %s", krill_last_error());
    if (lo->nnz + hi->nnz != a->nnz ||
        memcmp(lo->col, a->col, (size_t)lo->nnz * 4) ||
        memcmp(hi->col, a->col + lo->nnz, (size_t)hi->nnz * 4) ||
        memcmp(lo->val, a->val, (size_t)lo->nnz * 8) ||
        memcmp(hi->val, a->val + lo->nnz, (size_t)hi->nnz * 8))
        fuzz_fail("two halves differ from the whole");
    if (krill_bin_write(copy, a, 64) != KRILL_OK)
        fuzz_fail("krill_bin_write: %s", krill_last_error());
    if (krill_bin_read(copy, &again, NULL) != KRILL_OK)
        fuzz_fail("reading back what krill_bin_write wrote: %s", krill_last_error());
    fuzz_same_csr(a, again, "binary write-then-read round trip");
    krill_csr_destroy(&all);
    krill_csr_destroy(&lo);
    krill_csr_destroy(&hi);
    krill_csr_destroy(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    krill_csr *raw = NULL, *sealed = NULL;
    fuzz_outcome raw_read, sealed_read;
    uint8_t *d = malloc(size + 1);
    const char *path = fuzz_path("input.krill");
    if (!d) return 0;
    fuzz_write(path, data, size);
    fuzz_record(&raw_read, krill_bin_read(path, &raw, NULL));
    if ((raw_read.st == KRILL_OK) != (raw != NULL))
        fuzz_fail("status %d with%s a matrix", (int)raw_read.st, raw ? "" : "out");
    if (raw) check_read(path, raw);
    memcpy(d, data, size);
    if (reseal(d, size)) {
        fuzz_write(path, d, size);
        fuzz_record(&sealed_read, krill_bin_read(path, &sealed, NULL));
        if ((sealed_read.st == KRILL_OK) != (sealed != NULL))
            fuzz_fail("resealed: status %d with%s a matrix", (int)sealed_read.st,
                      sealed ? "" : "out");
        if (raw) fuzz_same_csr(raw, sealed, "the input as it is and resealed");
        if (sealed) check_read(path, sealed);
    }
    krill_csr_destroy(&raw);
    krill_csr_destroy(&sealed);
    free(d);
    return 0;
}
