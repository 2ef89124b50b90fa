/* formats/shell.c - the shell matrix: A known only by a callback y = A x of the caller's
 * (krill_mat_create_shell; matrix-free operators, doc/shell.md).
 *
 * One more format table, not in the registry (it is not built from a CSR): the solvers
 * reach it through krill_mat_spmv_raw like any format and never know. SpMV:
 *   alpha = 1, beta = 0:   y = apply(x), the callback writes y directly (what every solver's
 *                          iteration asks for);
 *   otherwise:             w = apply(x), y = alpha w + beta y (krill_blas_axpby; beta = 0
 *                          does not read y), with w one n-vector of context memory allocated
 *                          at creation (the true residual b - A x is alpha = -1, beta = 1).
 * y_i = alpha w_i + beta y_i rounds as a format's alpha s_i + beta y_i does, so a shell whose
 * callback computes a format's plain SpMV gives that format's bits. No fused SpMV-dot (CG
 * takes krill_mat_spmv_dot_raw's fallback: the SpMV, then the context's dot).
 *
 * The table has no CUDA code: on a GPU context x, y and w are device pointers, the callback
 * gets them as they are, and the combination runs through core's BLAS-1 on the context's
 * stream. Before the callback the context is synchronized, so x is complete whatever stream
 * the callback uses; the callback must leave y complete (krill/mat.h).
 *
 * What needs stored entries refuses with KRILL_ERR_UNSUPPORTED naming the shell: the
 * diagonal (jacobi), the CSR (ilu0, ic0, bjacobi, krill_mat_to_csr), new values, and the
 * reproducible SpMV (the callback's sums are not the Ozaki scheme's). */
#include <stdio.h>
#include <string.h>

#include "formats/formats_impl.h"

typedef struct shell_impl {
    krill_shell_apply apply;
    void *user;
    int64_t n;
    double *work;            /* n doubles of context memory: A x before alpha and beta */
} shell_impl;

/* Run the callback: y = A x. A failure keeps the callback's status and adds a message that
 * names the shell (and what the callback left in krill_last_error, if anything). */
krill_status krill_shell_call(krill_ctx *ctx, krill_shell_apply apply, void *user,
                              const double *x, double *y, int64_t n, const char *what)
{
    krill_status st = KRILL_OK;
    char inner[256];
    KRILL_TRY(krill_ctx_sync(ctx));   /* x complete before the callback reads it */
    krill_clear_error();
    st = apply(user, x, y, n);
    if (st == KRILL_OK) goto cleanup;
    snprintf(inner, sizeof inner, "%s", krill_last_error());
    if (st < KRILL_ERR_ARG || st > KRILL_ERR_INTERNAL) {
        st = krill_error(KRILL_ERR_ARG, "%s: the apply callback returned %d, which is not a "
                         "krill_status%s%s", what, (int)st, inner[0] ? ": " : "", inner);
    } else {
        st = krill_error(st, "%s: the apply callback failed (%s)%s%s", what,
                         krill_status_string(st), inner[0] ? ": " : "", inner);
    }
cleanup:
    return st;
}

static krill_status shell_spmv(krill_ctx *ctx, const void *impl, double alpha, const double *x,
                               double beta, double *y)
{
    krill_status st = KRILL_OK;
    const shell_impl *s = impl;
    if (alpha == 1.0 && beta == 0.0) {
        st = krill_shell_call(ctx, s->apply, s->user, x, y, s->n, "shell matrix");
        goto cleanup;
    }
    KRILL_TRY(krill_shell_call(ctx, s->apply, s->user, x, s->work, s->n, "shell matrix"));
    KRILL_TRY(krill_blas_axpby(ctx, s->n, alpha, s->work, beta, y));
cleanup:
    return st;
}

static krill_status shell_spmv_repro(krill_ctx *ctx, const void *impl, double alpha,
                                     const double *x, double beta, double *y)
{
    (void)ctx, (void)impl, (void)alpha, (void)x, (void)beta, (void)y;
    return krill_error(KRILL_ERR_UNSUPPORTED, "shell matrix: reproducible mode needs every "
                       "row sum of A x computed by the Ozaki scheme, and a shell matrix's sums "
                       "are its callback's: turn reproducible mode off for it");
}

static krill_status shell_update_values(krill_ctx *ctx, void *impl, const double *values)
{
    (void)ctx, (void)impl, (void)values;
    return krill_error(KRILL_ERR_UNSUPPORTED, "krill_mat_update_values: a shell matrix has no "
                       "stored values; change what its callback computes instead");
}

static krill_status shell_diagonal(krill_ctx *ctx, const void *impl, double *d)
{
    (void)ctx, (void)impl, (void)d;
    return krill_error(KRILL_ERR_UNSUPPORTED, "shell matrix: its diagonal is unknown (it has "
                       "no stored entries, only a callback y = A x)");
}

static krill_status shell_to_csr(krill_ctx *ctx, const void *impl, krill_csr **csr)
{
    (void)ctx, (void)impl, (void)csr;
    return krill_error(KRILL_ERR_UNSUPPORTED, "shell matrix: it cannot be given back as CSR "
                       "(it has no stored entries, only a callback y = A x)");
}

static void shell_stats(const void *impl, krill_format_stats *stats)
{
    const shell_impl *s = impl;
    stats->n_rows = stats->n_cols = s->n;
    strcpy(stats->variant, "callback");
}

static void shell_destroy(krill_ctx *ctx, void *impl)
{
    shell_impl *s = impl;
    if (!s) return;
    krill_mem_free(ctx, s->work);
    krill_free(s);
}

/* Made only by krill_mat_create_shell; the same table on every device. */
const krill_format_ops krill_shell_ops = {
    .name = "shell",
    .build = NULL,
    .spmv = shell_spmv,
    .spmv_repro = shell_spmv_repro,
    .spmv_dot = NULL,
    .update_values = shell_update_values,
    .diagonal = shell_diagonal,
    .to_csr = shell_to_csr,
    .stats = shell_stats,
    .destroy = shell_destroy,
    .diagonal_blocks = NULL,     /* bjacobi then asks to_csr, which refuses */
};

int krill_mat_is_shell(const krill_mat *a) { return a->ops == &krill_shell_ops; }

krill_status krill_mat_create_shell(krill_ctx *ctx, int64_t n, krill_shell_apply apply,
                                    void *user, krill_mat **out)
{
    krill_status st = KRILL_OK;
    krill_mat *a = NULL;
    shell_impl *s = NULL;

    KRILL_REQUIRE(out != NULL, "krill_mat_create_shell: mat (the output pointer) is NULL");
    *out = NULL;
    KRILL_REQUIRE(ctx != NULL, "krill_mat_create_shell: ctx is NULL");
    KRILL_REQUIRE(n >= 0, "krill_mat_create_shell: n = %lld; the order must be >= 0",
                  (long long)n);
    KRILL_REQUIRE(apply != NULL, "krill_mat_create_shell: apply (the callback) is NULL");
    KRILL_CALLOC(s, 1);
    s->apply = apply;
    s->user = user;
    s->n = n;
    KRILL_MEM_ALLOC(ctx, s->work, n > 0 ? n : 1);
    KRILL_CALLOC(a, 1);
    a->ctx = ctx;
    a->ops = &krill_shell_ops;
    a->impl = s;
    s = NULL;
    a->n_rows = a->n_cols = n;
    a->nnz = 0;
    strcpy(a->name, "shell");
    *out = a;
    a = NULL;
cleanup:
    if (s) shell_destroy(ctx, s);
    krill_mat_destroy(&a);
    return st;
}
