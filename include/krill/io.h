/* krill/io.h - Matrix Market files, and krill's binary CSR files (at the end).
 *
 * Reads `coordinate` (real | integer | pattern; general | symmetric | skew-symmetric) and
 * `array` (real | integer; general | symmetric | skew-symmetric) files, plain or gzip
 * compressed (.gz, when built with zlib). Symmetric storage is expanded to full,
 * duplicates are summed, rows sorted, indices become zero-based. `complex` and `hermitian`
 * files are refused with KRILL_ERR_UNSUPPORTED. Every malformed file gives
 * KRILL_ERR_PARSE with "FILE:LINE: what" in krill_last_error(), and no matrix.
 *
 * Memory: the reader's work arrays grow with the entries the file holds, not with the sizes
 * it declares; the one thing sized by the declared rows is the result's row offsets. Before
 * allocating, a read compares what it needs with the host memory available (MemAvailable)
 * and fails with KRILL_ERR_ALLOC and "FILE:LINE: ... needs N bytes of host memory, M are
 * available" when it does not fit. */
#ifndef KRILL_IO_H
#define KRILL_IO_H

#include <stddef.h>
#include <stdint.h>
#include "krill/csr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum krill_mm_symmetry {
    KRILL_MM_GENERAL = 0,
    KRILL_MM_SYMMETRIC,
    KRILL_MM_SKEW_SYMMETRIC,
    KRILL_MM_HERMITIAN
} krill_mm_symmetry;

typedef enum krill_mm_field {
    KRILL_MM_REAL = 0,
    KRILL_MM_INTEGER,
    KRILL_MM_PATTERN,        /* values read as 1.0 */
    KRILL_MM_COMPLEX
} krill_mm_field;

/* What the header and size line said (filled even when the file is then refused). */
typedef struct krill_mm_info {
    int is_array;            /* 1 for `array` (dense), 0 for `coordinate` */
    krill_mm_field field;
    krill_mm_symmetry symmetry;
    int64_t rows, cols;      /* as written in the file */
    int64_t entries;         /* entries stored in the file (before expansion) */
} krill_mm_info;

/* Read a Matrix Market file into a new host CSR. info may be NULL. */
krill_status krill_mm_read(const char *path, krill_csr **csr, krill_mm_info *info);

/* Options of krill_mm_read_opts; KRILL_MM_OPTS_INIT reads as krill_mm_read does. */
typedef struct krill_mm_opts {
    int square;              /* 1: only a square matrix will do (a solver's case): a size line
                                with rows != cols fails with KRILL_ERR_UNSUPPORTED before the
                                data lines are read or anything is allocated for them */
} krill_mm_opts;

#define KRILL_MM_OPTS_INIT { 0 }

/* krill_mm_read with options; opts may be NULL (KRILL_MM_OPTS_INIT). */
krill_status krill_mm_read_opts(const char *path, const krill_mm_opts *opts, krill_csr **csr,
                                krill_mm_info *info);

/* Read from a memory buffer; `name` is used in error messages in place of a file name. */
krill_status krill_mm_read_buffer(const char *name, const char *text, size_t len,
                                  krill_csr **csr, krill_mm_info *info);

/* Read a dense vector: an `array` file with one column, or a `coordinate` file with one
 * column (missing entries are 0). *n receives its length, *x a krill-allocated array to
 * release with krill_host_free(). */
krill_status krill_mm_read_vector(const char *path, double **x, int64_t *n);

/* Write `coordinate real general` with %.17g: reading it back gives the same bits. */
krill_status krill_mm_write(const char *path, const krill_csr *csr);
/* Write a dense column vector as `array real general`, %.17g. */
krill_status krill_mm_write_vector(const char *path, const double *x, int64_t n);
/* Write a dense n_rows x n_cols column-major array as `array real general`. */
krill_status krill_mm_write_array(const char *path, const double *a, int64_t n_rows,
                                  int64_t n_cols);

/* Write a dense rows x cols row-major array in NumPy's .npy format (version 1.0, little
 * endian, C order) so that numpy.load(path) returns it. dtype: "<i4" (int32_t), "<f4"
 * (float) or "<f8" (double); anything else is KRILL_ERR_ARG. */
krill_status krill_npy_write(const char *path, const char *dtype, int64_t rows, int64_t cols,
                             const void *data);

/* ---- krill binary CSR files (doc/binary-format.md) ----------------------------------------
 * The "binary cache" of a matrix (`krill convert A.mtx A.krill`): a checksummed header, then
 * row_ptr (int64), col (int32) and val (double) as they lie in memory, so that a reader can
 * take any block of rows with a few positioned reads, verifying the checksums of the fixed-
 * size chunks it reads. Written in the host's byte order; a file of the other byte order is
 * byte-swapped on read. Every failure is KRILL_ERR_PARSE "PATH: what" (bad magic, version,
 * byte-order marker, header checksum, sizes, truncation, a chunk's checksum, a malformed
 * matrix) or KRILL_ERR_IO (cannot open or read), and no matrix; sizes are checked against
 * the file's size before anything is allocated. */
#define KRILL_BIN_SYMMETRIC 1u          /* flags: A == A^T exactly (pattern and values) */
#define KRILL_BIN_DIAG_POSITIVE 2u      /* every diagonal entry present and > 0 */
#define KRILL_BIN_DIAG_NEGATIVE 4u      /* every diagonal entry present and < 0 */

typedef struct krill_bin_info {
    int32_t n_rows, n_cols;
    int64_t nnz;
    uint32_t version;
    uint32_t flags;          /* KRILL_BIN_*: computed by the writer, not checked on read */
    int64_t chunk_bytes;     /* checksum granularity */
    int64_t file_bytes;
    int swapped;             /* 1: written with the other byte order (swapped on read) */
} krill_bin_info;

/* 1 when the file at path starts with the binary format's magic bytes, else 0 (also when it
 * cannot be read). */
int krill_bin_detect(const char *path);

/* Write csr (krill_csr_check must pass), whole or not at all (temporary file + rename).
 * chunk_bytes: the checksum granularity, a power of two in [64, 2^30]; 0 = 1 MiB. */
krill_status krill_bin_write(const char *path, const krill_csr *csr, int64_t chunk_bytes);

/* The header alone (checked, and against the file's size). */
krill_status krill_bin_read_info(const char *path, krill_bin_info *info);

/* The whole matrix, every chunk verified. info may be NULL. */
krill_status krill_bin_read(const char *path, krill_csr **csr, krill_bin_info *info);

/* Rows [r0, r1) (0 <= r0 <= r1 <= n_rows) as an (r1 - r0) x n_cols CSR with global column
 * indices (what krill_dist_mat_create takes); reads and verifies only the chunks that hold
 * them. info may be NULL. */
krill_status krill_bin_read_rows(const char *path, int64_t r0, int64_t r1, krill_csr **rows,
                                 krill_bin_info *info);

/* Release host memory that krill allocated and handed to the caller. */
void krill_host_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
