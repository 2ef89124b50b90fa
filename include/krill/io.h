/* krill/io.h - Matrix Market files.
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

/* Release host memory that krill allocated and handed to the caller. */
void krill_host_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
