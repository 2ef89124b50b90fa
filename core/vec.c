/* core/vec.c - krill_vec: a length and a pointer in its context's memory. */
#include "core/core_impl.h"
#include "krill/vec.h"

struct krill_vec {
    krill_ctx *ctx;
    int64_t n;
    double *data;
    int owns;                /* 0 for krill_vec_wrap */
};

static krill_status vec_new(krill_ctx *ctx, int64_t n, double *data, krill_vec **out)
{
    krill_status st = KRILL_OK;
    krill_vec *v = NULL;
    KRILL_REQUIRE(out != NULL, "krill_vec: output pointer is NULL");
    *out = NULL;
    KRILL_REQUIRE(ctx != NULL, "krill_vec: ctx is NULL");
    KRILL_REQUIRE(n >= 0, "krill_vec: length %lld < 0", (long long)n);
    KRILL_CALLOC(v, 1);
    v->ctx = ctx;
    v->n = n;
    if (data) {
        v->data = data;
    } else {
        KRILL_MEM_ALLOC(ctx, v->data, n);
        v->owns = 1;
        KRILL_TRY(krill_mem_zero(ctx, v->data, (size_t)n * sizeof(double)));
    }
    *out = v;
    v = NULL;
cleanup:
    krill_vec_destroy(&v);
    return st;
}

krill_status krill_vec_create(krill_ctx *ctx, int64_t n, krill_vec **v)
{
    return vec_new(ctx, n, NULL, v);
}

krill_status krill_vec_wrap(krill_ctx *ctx, int64_t n, double *data, krill_vec **v)
{
    krill_status st = KRILL_OK;
    if (v) *v = NULL;
    KRILL_REQUIRE(data || n <= 0, "krill_vec_wrap: data is NULL for length %lld",
                  (long long)n);
    if (ctx && data) KRILL_TRY(krill_mem_check_pointer(ctx, data, "krill_vec_wrap: data"));
    st = vec_new(ctx, n, data ? data : (double *)v /* any non-NULL: never read */, v);
cleanup:
    return st;
}

void krill_vec_destroy(krill_vec **pv)
{
    if (!pv || !*pv) return;
    if ((*pv)->owns) krill_mem_free((*pv)->ctx, (*pv)->data);
    krill_free(*pv);
    *pv = NULL;
}

int64_t krill_vec_size(const krill_vec *v) { return v->n; }
double *krill_vec_data(krill_vec *v) { return v->data; }
krill_ctx *krill_vec_ctx(const krill_vec *v) { return v->ctx; }

krill_status krill_vec_upload(krill_vec *v, const double *host)
{
    if (!v || (!host && v->n > 0)) return krill_error(KRILL_ERR_ARG, "krill_vec_upload: NULL argument");
    return krill_mem_upload(v->ctx, v->data, host, (size_t)v->n * sizeof(double));
}

krill_status krill_vec_download(const krill_vec *v, double *host)
{
    if (!v || (!host && v->n > 0)) return krill_error(KRILL_ERR_ARG, "krill_vec_download: NULL argument");
    return krill_mem_download(v->ctx, host, v->data, (size_t)v->n * sizeof(double));
}

/* Two vectors fit together: both given, same context, same length. */
static krill_status pair_ok(const krill_vec *x, const krill_vec *y, const char *op)
{
    if (!x || !y) return krill_error(KRILL_ERR_ARG, "%s: NULL vector", op);
    if (x->ctx != y->ctx) return krill_error(KRILL_ERR_ARG, "%s: vectors on different contexts", op);
    if (x->n != y->n)
        return krill_error(KRILL_ERR_ARG, "%s: lengths differ (%lld and %lld)", op,
                           (long long)x->n, (long long)y->n);
    return KRILL_OK;
}

krill_status krill_vec_fill(krill_vec *v, double value)
{
    if (!v) return krill_error(KRILL_ERR_ARG, "krill_vec_fill: NULL vector");
    return krill_blas_fill(v->ctx, v->n, value, v->data);
}

krill_status krill_vec_copy(const krill_vec *x, krill_vec *y)
{
    krill_status st = pair_ok(x, y, "krill_vec_copy");
    return st ? st : krill_blas_copy(x->ctx, x->n, x->data, y->data);
}

krill_status krill_vec_scal(double alpha, krill_vec *x)
{
    if (!x) return krill_error(KRILL_ERR_ARG, "krill_vec_scal: NULL vector");
    return krill_blas_scal(x->ctx, x->n, alpha, x->data);
}

krill_status krill_vec_axpy(double alpha, const krill_vec *x, krill_vec *y)
{
    krill_status st = pair_ok(x, y, "krill_vec_axpy");
    return st ? st : krill_blas_axpby(x->ctx, x->n, alpha, x->data, 1.0, y->data);
}

krill_status krill_vec_axpby(double alpha, const krill_vec *x, double beta, krill_vec *y)
{
    krill_status st = pair_ok(x, y, "krill_vec_axpby");
    return st ? st : krill_blas_axpby(x->ctx, x->n, alpha, x->data, beta, y->data);
}

/* Reductions land in the context's scratch (a device double on CUDA) and are read back. */
static krill_status reduce(const krill_vec *x, const krill_vec *y, double *result)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = x->ctx;
    double *slot = ctx->cuda ? KRILL_CUDA_SLOT(ctx, 0) : result;
    if (y) KRILL_TRY(krill_blas_dot(ctx, x->n, x->data, y->data, slot));
    else KRILL_TRY(krill_blas_nrm2(ctx, x->n, x->data, slot));
    if (slot != result) KRILL_TRY(krill_scalars_read(ctx, slot, result, 1));
cleanup:
    return st;
}

krill_status krill_vec_dot(const krill_vec *x, const krill_vec *y, double *result)
{
    krill_status st = pair_ok(x, y, "krill_vec_dot");
    if (!st && !result) st = krill_error(KRILL_ERR_ARG, "krill_vec_dot: result is NULL");
    return st ? st : reduce(x, y, result);
}

krill_status krill_vec_nrm2(const krill_vec *x, double *result)
{
    if (!x || !result) return krill_error(KRILL_ERR_ARG, "krill_vec_nrm2: NULL argument");
    return reduce(x, NULL, result);
}
