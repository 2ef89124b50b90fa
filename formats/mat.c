/* formats/mat.c - krill_mat: a matrix in one registered format on one context. */
#include <stdio.h>
#include <string.h>

#include "formats/formats_impl.h"
#include "ozaki/ozaki_impl.h"

/* "csr, cusparse" for error messages */
/* KRILL_ERR_ARG for an unknown format name, listing the known ones. */
static krill_status unknown_format(const char *format)
{
    char known[256];
    known[0] = '\0';
    for (const char *const *n = krill_format_names(); *n; n++) {
        if (known[0]) strncat(known, ", ", sizeof known - strlen(known) - 1);
        strncat(known, *n, sizeof known - strlen(known) - 1);
    }
    return krill_error(KRILL_ERR_ARG, "unknown format '%s' (known: %s, auto, auto:measure, "
                       "auto:spmvs=N)", format, known);
}

krill_status krill_mat_build(krill_ctx *ctx, const krill_csr *csr, const char *format,
                             krill_mat **out)
{
    krill_status st = KRILL_OK;
    krill_mat *a = NULL;
    const char *param = NULL;
    const krill_format_entry *entry = krill_format_find(format, &param);

    *out = NULL;
    if (!entry) {
        st = unknown_format(format);
        goto cleanup;
    }
    KRILL_CALLOC(a, 1);
    a->ctx = ctx;
    a->ops = krill_on_gpu(ctx) ? entry->cuda : entry->cpu;
    if (!a->ops) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "format '%s' has no %s implementation",
                         entry->name, krill_on_gpu(ctx) ? "GPU" : "CPU");
        goto cleanup;
    }
    a->n_rows = csr->n_rows;
    a->n_cols = csr->n_cols;
    a->nnz = csr->nnz;
    strcpy(a->name, format);
    KRILL_TRY(a->ops->build(ctx, csr, param, &a->impl));
    *out = a;
    a = NULL;
cleanup:
    krill_mat_destroy(&a);
    return st;
}

krill_status krill_mat_create(krill_ctx *ctx, const krill_csr *csr, const char *format,
                              krill_mat **out)
{
    krill_status st = KRILL_OK;
    const char *param = NULL;

    KRILL_REQUIRE(out != NULL, "krill_mat_create: output pointer is NULL");
    *out = NULL;
    KRILL_REQUIRE(ctx != NULL && csr != NULL, "krill_mat_create: NULL ctx or matrix");
    if (!format || !format[0]) format = "csr";   /* the default (why not auto: doc/auto.md) */
    KRILL_REQUIRE(strlen(format) < sizeof((krill_mat *)0)->name,
                  "krill_mat_create: format name too long");
    if (strncmp(format, "auto", 4) == 0 && (format[4] == '\0' || format[4] == ':')) {
        KRILL_TRY(krill_csr_check_threads(csr, "matrix", ctx->threads));   /* auto reads the rows */
        st = krill_auto_create(ctx, csr, format[4] ? format + 5 : NULL, out);
        goto cleanup;
    }
    if (!krill_format_find(format, &param)) {   /* an unknown name before the matrix's check */
        st = unknown_format(format);
        goto cleanup;
    }
    KRILL_TRY(krill_csr_check_threads(csr, "matrix", ctx->threads));
    st = krill_mat_build(ctx, csr, format, out);
cleanup:
    return st;
}

void krill_mat_destroy(krill_mat **pa)
{
    if (!pa || !*pa) return;
    if ((*pa)->impl) (*pa)->ops->destroy((*pa)->ctx, (*pa)->impl);
    krill_free(*pa);
    *pa = NULL;
}

/* Plain mode: the format's spmv. A reproducible mode: its spmv_repro (every row sum
 * correctly rounded), or KRILL_ERR_UNSUPPORTED when it has none on this device. */
krill_status krill_mat_spmv_raw(const krill_mat *a, double alpha, const double *x, double beta,
                                double *y)
{
    if (krill_ctx_repro(a->ctx, NULL) == KRILL_REPRO_OFF)
        return a->ops->spmv(a->ctx, a->impl, alpha, x, beta, y);
    if (!a->ops->spmv_repro)
        return krill_error(KRILL_ERR_UNSUPPORTED, "format '%s' has no reproducible SpMV on the "
                           "%s: use another format there, or turn reproducible mode off",
                           a->name, krill_on_gpu(a->ctx) ? "GPU" : "CPU");
    return a->ops->spmv_repro(a->ctx, a->impl, alpha, x, beta, y);
}

/* Plain mode: the format's fused spmv_dot (its local x'y then summed over the context's
 * ranks), or its spmv and then a dot. A reproducible mode: the reproducible SpMV, then the
 * context's Ozaki dot x'y. */
krill_status krill_mat_spmv_dot_raw(const krill_mat *a, const double *x, double *y, double *xy)
{
    krill_status st = KRILL_OK;
    if (krill_ctx_repro(a->ctx, NULL) != KRILL_REPRO_OFF) {
        KRILL_TRY(krill_mat_spmv_raw(a, 1.0, x, 0.0, y));
        st = krill_ozaki_dot(a->ctx, a->n_rows, x, y, xy);
    } else if (a->ops->spmv_dot) {
        if (krill_on_gpu(a->ctx)) {   /* xy in device memory; a local failure is agreed on */
            st = krill_ctx_allreduce_device(a->ctx, a->ops->spmv_dot(a->ctx, a->impl, x, y, xy),
                                            xy, 1, NULL, 0);
            goto cleanup;
        }
        KRILL_TRY(a->ops->spmv_dot(a->ctx, a->impl, x, y, xy));
        st = krill_ctx_allreduce(a->ctx, xy, 1, KRILL_REDUCE_SUM);
    } else {
        KRILL_TRY(a->ops->spmv(a->ctx, a->impl, 1.0, x, 0.0, y));
        st = krill_blas_dot(a->ctx, a->n_rows, x, y, xy);
    }
cleanup:
    return st;
}

krill_status krill_mat_diagonal_raw(const krill_mat *a, double *d)
{
    return a->ops->diagonal(a->ctx, a->impl, d);
}

krill_status krill_mat_diagonal_blocks_raw(const krill_mat *a, int b, double *blocks)
{
    if (!a->ops->diagonal_blocks) return KRILL_ERR_UNSUPPORTED;
    return a->ops->diagonal_blocks(a->ctx, a->impl, b, blocks);
}

krill_status krill_mat_spmv(const krill_mat *a, double alpha, const krill_vec *x, double beta,
                            krill_vec *y)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(a && x && y, "krill_mat_spmv: NULL argument");
    KRILL_REQUIRE(krill_vec_ctx(x) == a->ctx && krill_vec_ctx(y) == a->ctx,
                  "krill_mat_spmv: vectors and matrix are on different contexts");
    KRILL_REQUIRE(krill_vec_size(x) == a->n_cols && krill_vec_size(y) == a->n_rows,
                  "krill_mat_spmv: matrix is %lld x %lld but x has %lld and y %lld entries",
                  (long long)a->n_rows, (long long)a->n_cols, (long long)krill_vec_size(x),
                  (long long)krill_vec_size(y));
    KRILL_REQUIRE(krill_vec_data((krill_vec *)x) != krill_vec_data(y),
                  "krill_mat_spmv: x and y must be different vectors");
    st = krill_mat_spmv_raw(a, alpha, krill_vec_data((krill_vec *)x), beta, krill_vec_data(y));
cleanup:
    return st;
}

krill_status krill_mat_update_values(krill_mat *a, const double *values)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(a && (values || a->nnz == 0 || a->device_row_ptr),
                  "krill_mat_update_values: NULL argument");
#ifdef KRILL_HAVE_CUDA
    if (!values && a->device_row_ptr) {   /* a device CSR changed in place: check it */
        if (a->nnz > 0)
            st = krill_csr_cuda_check(a->ctx, "krill_mat_update_values", a->n_rows, a->n_cols,
                                      a->nnz, a->device_row_ptr, a->device_wide, NULL,
                                      a->device_col, a->device_val);
        goto cleanup;
    }
#endif
    for (int64_t k = 0; k < a->nnz; k++)
        if (!(values[k] - values[k] == 0.0)) {   /* false for NaN and +-Inf */
            st = krill_error(KRILL_ERR_NUMERIC, "krill_mat_update_values: value %lld is %g: "
                             "values must be finite", (long long)k, values[k]);
            goto cleanup;
        }
    st = a->ops->update_values(a->ctx, a->impl, values);
cleanup:
    return st;
}

krill_status krill_mat_to_csr(const krill_mat *a, krill_csr **csr)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(csr != NULL, "krill_mat_to_csr: csr is NULL");
    *csr = NULL;
    KRILL_REQUIRE(a != NULL, "krill_mat_to_csr: matrix is NULL");
    if (a->ops->to_csr == NULL) {
        st = krill_error(KRILL_ERR_UNSUPPORTED, "format '%s' cannot give its matrix back as "
                         "CSR", a->name);
        goto cleanup;
    }
    st = a->ops->to_csr(a->ctx, a->impl, csr);
cleanup:
    return st;
}

krill_status krill_mat_diagonal(const krill_mat *a, krill_vec *d)
{
    krill_status st = KRILL_OK;
    KRILL_REQUIRE(a && d, "krill_mat_diagonal: NULL argument");
    KRILL_REQUIRE(krill_vec_ctx(d) == a->ctx, "krill_mat_diagonal: vector on another context");
    KRILL_REQUIRE(krill_vec_size(d) == a->n_rows, "krill_mat_diagonal: d has %lld entries, "
                  "matrix has %lld rows", (long long)krill_vec_size(d), (long long)a->n_rows);
    st = krill_mat_diagonal_raw(a, krill_vec_data(d));
cleanup:
    return st;
}

void krill_mat_stats(const krill_mat *a, krill_format_stats *s)
{
    memset(s, 0, sizeof *s);
    a->ops->stats(a->impl, s);
}

const char *krill_mat_format(const krill_mat *a) { return a->name; }
int64_t krill_mat_rows(const krill_mat *a) { return a->n_rows; }
int64_t krill_mat_cols(const krill_mat *a) { return a->n_cols; }
int64_t krill_mat_nnz(const krill_mat *a) { return a->nnz; }
krill_ctx *krill_mat_ctx(const krill_mat *a) { return a->ctx; }
const char *krill_mat_choice(const krill_mat *a) { return a->choice[0] ? a->choice : NULL; }
