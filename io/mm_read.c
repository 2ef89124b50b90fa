/* io/mm_read.c - the public Matrix Market readers: a matrix as a host CSR (from a file or
 * from memory) and a dense vector. The work is in the other files of io/ (see io_impl.h);
 * here the steps are put together so that every failure returns no matrix and leaks
 * nothing, and so that a size line is judged (square when the caller needs it, row offsets
 * that fit in memory) before the data lines are parsed. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/io_impl.h"

krill_status mm_check_memory(const char *name, const mm_header *h, size_t bytes,
                             const char *what)
{
    char msg[256];
    snprintf(msg, sizeof msg, "%s:%lld: reading the %lld x %lld matrix (%s)", name,
             (long long)h->size_line, (long long)h->info.rows, (long long)h->info.cols, what);
    return krill_host_mem_check(bytes, msg);
}

/* Header and body of text[0..len) into h and e (e is released by the caller). With
 * opts->square a rectangular size line is refused; the result's row offsets, which the
 * size line alone decides, must fit in memory before the body is parsed. */
static krill_status parse_text(const char *name, const char *text, size_t len,
                               const krill_mm_opts *opts, mm_header *h, mm_entries *e)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(mm_parse_header(name, text, len, h));
    if (opts && opts->square && h->info.rows != h->info.cols) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "%s:%lld: the matrix is rectangular (%lld x "
                         "%lld): a square matrix is needed", name, (long long)h->size_line,
                         (long long)h->info.rows, (long long)h->info.cols);
        goto cleanup;
    }
    KRILL_TRY(mm_check_memory(name, h, ((size_t)h->info.rows + 1) * sizeof(int64_t),
                              "its row offsets"));
    KRILL_TRY(mm_parse_body(name, text, len, h, e));
cleanup:
    return st;
}

krill_status krill_mm_read_buffer(const char *name, const char *text, size_t len,
                                  krill_csr **csr, krill_mm_info *info)
{
    krill_status st = KRILL_OK;
    mm_header h;
    mm_entries e = {0, NULL, NULL, NULL};
    memset(&h, 0, sizeof h);
    KRILL_REQUIRE(csr != NULL, "krill_mm_read_buffer: csr is NULL");
    *csr = NULL;
    KRILL_REQUIRE(text != NULL || len == 0, "krill_mm_read_buffer: text is NULL");
    if (!name) name = "<buffer>";
    if (!text) text = "";
    KRILL_TRY(parse_text(name, text, len, NULL, &h, &e));
    KRILL_TRY(mm_build_csr(name, &h, &e, csr));
cleanup:
    if (info) *info = h.info;
    mm_entries_free(&e);
    return st;
}

krill_status krill_mm_read_opts(const char *path, const krill_mm_opts *opts, krill_csr **csr,
                                krill_mm_info *info)
{
    krill_status st = KRILL_OK;
    char *text = NULL;
    size_t len = 0;
    mm_header h;
    mm_entries e = {0, NULL, NULL, NULL};
    memset(&h, 0, sizeof h);
    KRILL_REQUIRE(csr != NULL, "krill_mm_read: csr is NULL");
    *csr = NULL;
    KRILL_REQUIRE(path != NULL, "krill_mm_read: path is NULL");
    KRILL_TRY(krill_io_load(path, &text, &len));
    KRILL_TRY(parse_text(path, text, len, opts, &h, &e));
    krill_free(text);              /* the file is no longer needed: lower the peak memory */
    text = NULL;
    KRILL_TRY(mm_build_csr(path, &h, &e, csr));
cleanup:
    if (info) *info = h.info;
    krill_free(text);
    mm_entries_free(&e);
    return st;
}

krill_status krill_mm_read(const char *path, krill_csr **csr, krill_mm_info *info)
{
    return krill_mm_read_opts(path, NULL, csr, info);
}

krill_status krill_mm_read_vector(const char *path, double **x, int64_t *n)
{
    krill_status st = KRILL_OK;
    char *text = NULL;
    size_t len = 0;
    double *v = NULL;
    mm_header h;
    mm_entries e = {0, NULL, NULL, NULL};
    KRILL_REQUIRE(x != NULL && n != NULL, "krill_mm_read_vector: x or n is NULL");
    *x = NULL;
    *n = 0;
    KRILL_REQUIRE(path != NULL, "krill_mm_read_vector: path is NULL");
    KRILL_TRY(krill_io_load(path, &text, &len));
    KRILL_TRY(mm_parse_header(path, text, len, &h));
    if (h.info.cols != 1) {
        st = krill_error(KRILL_ERR_PARSE, "%s:%lld: expected a vector (one column), the size "
                         "line says %lld x %lld", path, (long long)h.size_line,
                         (long long)h.info.rows, (long long)h.info.cols);
        goto cleanup;
    }
    KRILL_TRY(mm_check_memory(path, &h, (size_t)h.info.rows * sizeof *v, "its values"));
    KRILL_TRY(mm_parse_body(path, text, len, &h, &e));
    KRILL_CALLOC(v, h.info.rows);
    if (h.info.is_array) {
        /* one column: the stored values are the vector (1 x 1 skew-symmetric stores none) */
        memcpy(v, e.val, (size_t)e.count * sizeof *v);
    } else {
        for (int64_t k = 0; k < e.count && st == KRILL_OK; k++) {
            v[e.row[k]] += e.val[k];                        /* duplicates sum */
            if (!isfinite(v[e.row[k]]))
                st = krill_error(KRILL_ERR_PARSE, "%s:%lld: entry %d of the vector sums to %g "
                                 "with the ones before it: values must be finite", path,
                                 (long long)mm_line_of_entry(text, len, &h, k), e.row[k] + 1,
                                 v[e.row[k]]);
        }
        KRILL_TRY(st);
    }
    *x = v;
    *n = h.info.rows;
    v = NULL;
cleanup:
    krill_free(v);
    krill_free(text);
    mm_entries_free(&e);
    return st;
}
