/* precond/jacobi.c - the Jacobi (diagonal) preconditioner: M = diag(A).
 *
 * Build and update: d = diag(A) through the format's diagonal, then dinv_i = 1 / a_ii. A zero
 * or non-finite a_ii has no inverse: it is refused with KRILL_ERR_NUMERIC naming the first
 * such row (0-based). The inversion runs on the host (on a GPU context: one download and
 * one upload of n doubles at build time, never in a solve). After a failed update the
 * preconditioner refuses to apply until an update succeeds.
 * Apply: z = dinv .* r, one pass (reads r and dinv, writes z). CG does not call apply: it
 * takes dinv through inverse_diagonal and fuses the product into its own updates.
 * Reproducible mode needs nothing more: dinv_i = 1 / a_ii is computed by this file's host
 * loop for both devices (the GPU's diagonal is downloaded, inverted here and uploaded), so
 * the CPU and the GPU hold the same bits, and z_i = r_i * dinv_i is one correctly rounded
 * product on both (krill_blas_xmy: __dmul_rn on the GPU). */
#include <math.h>

#include "precond/precond_impl.h"

typedef struct pc_jacobi {
    int64_t n;
    double *dinv;            /* 1 / a_ii, context memory */
    int valid;               /* 0 after a failed update: dinv is not an inverse diagonal */
} pc_jacobi;

/* dinv = 1 ./ d on the host, in place; the first row with a zero or non-finite a_ii fails. */
static krill_status invert_diagonal(double *d, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        /* a subnormal a_ii is nonzero and finite, but its inverse overflows to Inf */
        if (d[i] == 0.0 || !isfinite(d[i]) || !isfinite(1.0 / d[i]))
            return krill_error(KRILL_ERR_NUMERIC, "jacobi: the diagonal entry of row %lld "
                               "(0-based) is %g; Jacobi needs a nonzero finite diagonal "
                               "with a finite inverse", (long long)i, d[i]);
        d[i] = 1.0 / d[i];
    }
    return KRILL_OK;
}

/* dinv = 1 ./ diag(mat), wherever the context's memory is. */
static krill_status jacobi_compute(krill_ctx *ctx, pc_jacobi *p, const krill_mat *mat)
{
    krill_status st = KRILL_OK;
    double *host = NULL;
    p->valid = 0;
    KRILL_TRY(krill_mat_diagonal_raw(mat, p->dinv));
    if (krill_on_gpu(ctx)) {
        KRILL_ALLOC(host, p->n);
        KRILL_TRY(krill_mem_download(ctx, host, p->dinv, (size_t)p->n * sizeof *host));
        KRILL_TRY(invert_diagonal(host, p->n));
        KRILL_TRY(krill_mem_upload(ctx, p->dinv, host, (size_t)p->n * sizeof *host));
        KRILL_TRY(krill_ctx_sync(ctx));   /* `host` is freed below: the upload must be done */
    } else {
        KRILL_TRY(invert_diagonal(p->dinv, p->n));
    }
    p->valid = 1;
cleanup:
    krill_free(host);
    return st;
}

static void jacobi_destroy(krill_ctx *ctx, void *impl)
{
    pc_jacobi *p = impl;
    if (!p) return;
    krill_mem_free(ctx, p->dinv);
    krill_free(p);
}

static krill_status jacobi_build(krill_ctx *ctx, const krill_mat *mat, const char *param,
                                 void **impl)
{
    krill_status st = KRILL_OK;
    pc_jacobi *p = NULL;
    KRILL_REQUIRE(param == NULL, "preconditioner \"jacobi\" takes no parameter (got \"%s\")",
                  param ? param : "");
    KRILL_CALLOC(p, 1);
    p->n = mat->n_rows;
    KRILL_MEM_ALLOC(ctx, p->dinv, p->n);
    KRILL_TRY(jacobi_compute(ctx, p, mat));
    *impl = p;
    p = NULL;
cleanup:
    jacobi_destroy(ctx, p);
    return st;
}

static krill_status jacobi_apply(krill_ctx *ctx, const void *impl, const double *r, double *z)
{
    const pc_jacobi *p = impl;
    if (!p->valid)
        return krill_error(KRILL_ERR_NUMERIC, "jacobi: the last update failed (zero or "
                           "non-finite diagonal); update it again before applying");
    return krill_blas_xmy(ctx, p->n, r, p->dinv, z);
}

static krill_status jacobi_update(krill_ctx *ctx, void *impl, const krill_mat *mat)
{
    return jacobi_compute(ctx, impl, mat);
}

static const double *jacobi_inverse_diagonal(const void *impl)
{
    const pc_jacobi *p = impl;
    return p->valid ? p->dinv : NULL;
}

const krill_pc_ops krill_pc_jacobi_ops = {
    .name = "jacobi",
    .summary = "Jacobi: z_i = r_i / a_ii (needs a nonzero diagonal)",
    .build = jacobi_build,
    .apply = jacobi_apply,
    .apply_repro = NULL,     /* z_i = r_i * dinv_i: one rounding, the same bits everywhere */
    .update = jacobi_update,
    .inverse_diagonal = jacobi_inverse_diagonal,
    .is_identity = 0,
    .destroy = jacobi_destroy,
};
