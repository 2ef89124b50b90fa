/* precond/ilu.c - the "ilu0" and "ic0" preconditioners: zero-fill incomplete LU, A ~ L U (L
 * unit lower, U upper, both on A's pattern), and zero-fill incomplete Cholesky of a symmetric
 * matrix, A ~ L L^T (L on the lower triangle of A's pattern). M = L U or L L^T; apply solves
 * M z = r by a forward and a backward triangular solve.
 *
 * Build: the matrix comes back as a host CSR (krill_mat_to_csr), the only copy of A made:
 * the analysis (diagonal positions, the level sets of both solves; ilu_host.c) runs once on
 * the host and keeps its pattern, and on the CPU its values become the factors in place. The
 * factorization runs on the context's device: ilu_host.c on the CPU (which checks ic0's
 * symmetry as it goes), ilu.cu on the GPU (for ic0 after the L^T map, built with the same
 * check). Update (krill_pc_update_values): the matrix's new values, checked to have the same
 * pattern, are factored again with the same analysis; after a failed build step or update, apply
 * refuses until an update succeeds. Layout, pivot rule and messages: ilu_impl.h.
 *
 * Apply, memory traffic: each factor entry is read once over the two solves (12 bytes:
 * value and column), the row offsets and diagonal positions once per solve, r read, y
 * written then read, z written (32 bytes per row), plus the gathers of y and z (from cache
 * when the pattern is local). About one SpMV with A, in two dependent halves.
 *
 * Reproducible mode (apply_repro; ilu_impl.h says what it computes): the factors are the
 * same (the device factorization already has the CPU's bits, see ilu.cu: factoring on the
 * host and uploading would only add a round trip), the solves are the exact-row ones of
 * krill_ilu_solve_repro (CPU, on the threads the plain solves use) and
 * krill_ilu_cuda_apply_repro (GPU). A GPU row longer than a thread's exact sum holds is
 * refused: at build when the context is already in reproducible mode, else at the first
 * reproducible apply. */
#include <stdio.h>
#include <string.h>

#include "precond/ilu_impl.h"
#ifdef KRILL_HAVE_CUDA
#include "core/cuda_impl.h"
#endif

typedef struct pc_ilu {
    krill_ilu_host h;        /* the analysis, kept for updates and both solves' levels */
    const char *name;        /* "ilu0" or "ic0" */
    int threads;             /* CPU solves */
    double *val;             /* CPU: the factors (host memory); GPU: NULL */
    int parallel;            /* CPU: level-scheduled solves on `perm` (else serial) */
    krill_ilu_perm perm;     /* CPU, parallel: the factors in level order */
    void *gpu;               /* GPU: ilu.cu's half; CPU: NULL */
    int valid;               /* 0 until a factorization succeeds, and after a failed one */
    char describe[200];      /* what was built: levels and how the solves run */
} pc_ilu;

static void ilu_destroy(krill_ctx *ctx, void *impl)
{
    pc_ilu *p = impl;
    if (!p) return;
#ifdef KRILL_HAVE_CUDA
    krill_ilu_cuda_destroy(ctx, p->gpu);
#else
    (void)ctx;
#endif
    krill_ilu_host_free(&p->h);
    krill_ilu_perm_free(&p->perm);
    krill_free(p->val);
    krill_free(p);
}

/* Factor a's values (p's pattern) on the context's device; on the CPU they become p->val,
 * taken from a (a->val is NULL after). */
static krill_status ilu_factor(krill_ctx *ctx, pc_ilu *p, krill_csr *a)
{
    krill_status st = KRILL_OK;
    p->valid = 0;
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        krill_ilu_set_row_max(&p->h, a->val);
        KRILL_TRY(krill_ilu_cuda_factor(ctx, p->gpu, &p->h, p->name, a->val));
        p->valid = 1;
        goto cleanup;
    }
#else
    (void)ctx;
#endif
    krill_free(p->val);
    p->val = a->val;
    a->val = NULL;
    KRILL_TRY(krill_ilu_factor_cpu(&p->h, p->name, p->val));
    if (p->parallel) krill_ilu_perm_values(&p->h, p->val, &p->perm);
    p->valid = 1;
cleanup:
    return st;
}

static void describe(const krill_ctx *ctx, pc_ilu *p)
{
    const krill_ilu_host *h = &p->h;
    char how[128];
    if (krill_on_gpu(ctx)) {
#ifdef KRILL_HAVE_CUDA
        int32_t rows = 1, forward = 0, backward = 0;
        krill_ilu_cuda_layout(p->gpu, &rows, &forward, &backward);
        snprintf(how, sizeof how, "GPU: factorization sync-free in level order, solves "
                 "level-scheduled in groups of %d rows (%d and %d levels)", rows, forward,
                 backward);
#endif
    } else if (p->parallel)
        snprintf(how, sizeof how, "CPU: solves level by level on %d threads", p->threads);
    else
        snprintf(how, sizeof how, "CPU: serial solves (1 thread or < %d rows per level)",
                 KRILL_ILU_CPU_LEVEL_ROWS);
    snprintf(p->describe, sizeof p->describe, "%s: %d rows, %lld entries, %d forward and %d "
             "backward levels; %s", p->name, h->n, (long long)h->nnz, h->lower.n_levels,
             h->upper.n_levels, how);
}

static const char *ilu_describe(const void *impl) { return ((const pc_ilu *)impl)->describe; }

/* "ilu0:G" / "ic0:G": G rows per group of the GPU's triangular solves, one of
 * krill_ilu_group_sizes (ilu_impl.h); no parameter: the analysis chooses. The CPU solves
 * take rows one by one and ignore it. */
static krill_status parse_group_rows(const char *name, const char *param, int32_t *rows)
{
    krill_status st = KRILL_OK;
    *rows = 0;
    if (param != NULL) {
        for (int k = 0; k < KRILL_ILU_GROUP_SIZES; k++) {
            char text[8];
            snprintf(text, sizeof text, "%d", krill_ilu_group_sizes[k]);
            if (strcmp(param, text) == 0) *rows = krill_ilu_group_sizes[k];
        }
        KRILL_REQUIRE(*rows != 0, "%s:%s: the parameter is the rows per group of the GPU's "
                      "triangular solves, one of 1, 2, 3, 4, 6 (or none: chosen at build)",
                      name, param);
    }
cleanup:
    return st;
}

static krill_status ilu_build_kind(krill_ctx *ctx, const krill_mat *mat, const char *param,
                                   krill_ilu_kind kind, const char *name, void **impl)
{
    krill_status st = KRILL_OK;
    pc_ilu *p = NULL;
    krill_csr *a = NULL;
    int32_t group_rows = 0;
    KRILL_TRY(parse_group_rows(name, param, &group_rows));
    KRILL_CALLOC(p, 1);
    p->name = name;
    p->threads = ctx->threads < 1 ? 1 : ctx->threads;
    KRILL_TRY(krill_mat_to_csr(mat, &a));
    KRILL_TRY(krill_ilu_analyze(a, kind, name, &p->h));
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        if (kind == KRILL_ILU_KIND_IC0) KRILL_TRY(krill_ilu_symmetric_map(&p->h, a->val, name));
        KRILL_TRY(krill_ilu_cuda_create(ctx, &p->h, group_rows, &p->gpu));
    }
#else
    (void)group_rows;
#endif
    if (!krill_on_gpu(ctx)) {
        p->parallel = krill_ilu_cpu_parallel(&p->h, p->threads);
        if (p->parallel) KRILL_TRY(krill_ilu_perm_build(&p->h, &p->perm));
    }
    describe(ctx, p);
    if (krill_on_gpu(ctx) && krill_ctx_repro(ctx, NULL) != KRILL_REPRO_OFF)
        KRILL_TRY(krill_ilu_gpu_repro_fits(&p->h, name));
    KRILL_TRY(ilu_factor(ctx, p, a));
    *impl = p;
    p = NULL;
cleanup:
    krill_csr_destroy(&a);
    ilu_destroy(ctx, p);
    return st;
}

static krill_status ilu0_build(krill_ctx *ctx, const krill_mat *mat, const char *param,
                               void **impl)
{
    return ilu_build_kind(ctx, mat, param, KRILL_ILU_KIND_ILU0, "ilu0", impl);
}

static krill_status ic0_build(krill_ctx *ctx, const krill_mat *mat, const char *param,
                              void **impl)
{
    return ilu_build_kind(ctx, mat, param, KRILL_ILU_KIND_IC0, "ic0", impl);
}

/* The refusal to apply after a failed factorization. */
static krill_status ilu_refuse(const pc_ilu *p)
{
    return krill_error(KRILL_ERR_NUMERIC, "%s: the last update failed (see its message); "
                       "update it again before applying", p->name);
}

static krill_status ilu_apply(krill_ctx *ctx, const void *impl, const double *r, double *z)
{
    const pc_ilu *p = impl;
    if (!p->valid) return ilu_refuse(p);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) return krill_ilu_cuda_apply(ctx, p->gpu, r, z);
#else
    (void)ctx;
#endif
    if (p->parallel)
        krill_ilu_solve_levels(&p->h, &p->perm, p->threads, r, z);
    else
        krill_ilu_solve_serial(&p->h, p->val, r, z);
    return KRILL_OK;
}

static krill_status ilu_apply_repro(krill_ctx *ctx, const void *impl, const double *r,
                                    double *z)
{
    const pc_ilu *p = impl;
    if (!p->valid) return ilu_refuse(p);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        const krill_status st = krill_ilu_gpu_repro_fits(&p->h, p->name);
        return st != KRILL_OK ? st : krill_ilu_cuda_apply_repro(ctx, p->gpu, &p->h, r, z);
    }
#else
    (void)ctx;
#endif
    krill_ilu_solve_repro(&p->h, p->val, p->parallel ? p->threads : 1, r, z);
    return KRILL_OK;
}

static krill_status ilu_update(krill_ctx *ctx, void *impl, const krill_mat *mat)
{
    krill_status st = KRILL_OK;
    pc_ilu *p = impl;
    krill_csr *a = NULL;
    p->valid = 0;
    KRILL_TRY(krill_mat_to_csr(mat, &a));
    KRILL_TRY(krill_ilu_check_same(&p->h, a, p->name));
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx) && p->h.kind == KRILL_ILU_KIND_IC0)
        KRILL_TRY(krill_ilu_symmetric_map(&p->h, a->val, p->name));
#endif
    KRILL_TRY(ilu_factor(ctx, p, a));
cleanup:
    krill_csr_destroy(&a);
    return st;
}

krill_status krill_pc_ilu_factors(const krill_pc *pc, krill_ilu_factors *f)
{
    krill_status st = KRILL_OK;
    const pc_ilu *p;
    KRILL_REQUIRE(pc != NULL && f != NULL, "krill_pc_ilu_factors: NULL argument");
    KRILL_REQUIRE(pc->ops == &krill_pc_ilu0_ops || pc->ops == &krill_pc_ic0_ops,
                  "krill_pc_ilu_factors: preconditioner \"%s\" is not ilu0 or ic0", pc->name);
    p = pc->impl;
    KRILL_REQUIRE(p->valid, "krill_pc_ilu_factors: %s: the last factorization failed", p->name);
    memset(f, 0, sizeof *f);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(pc->ctx)) krill_ilu_cuda_factors(p->gpu, f);
#endif
    if (!krill_on_gpu(pc->ctx)) f->val = p->val;
    f->n = p->h.n;
    f->nnz = p->h.nnz;
    f->unit_lower = p->h.kind == KRILL_ILU_KIND_ILU0;
    f->host = &p->h;
cleanup:
    return st;
}

const krill_pc_ops krill_pc_ilu0_ops = {
    .name = "ilu0",
    .summary = "ILU(0): incomplete LU on A's pattern, z = U^{-1} L^{-1} r (needs a_ii stored)",
    .build = ilu0_build,
    .apply = ilu_apply,
    .apply_repro = ilu_apply_repro,
    .update = ilu_update,
    .inverse_diagonal = NULL,
    .is_identity = 0,
    .destroy = ilu_destroy,
    .describe = ilu_describe,
};

const krill_pc_ops krill_pc_ic0_ops = {
    .name = "ic0",
    .summary = "IC(0): incomplete Cholesky of a symmetric A, z = L^{-T} L^{-1} r",
    .build = ic0_build,
    .apply = ilu_apply,
    .apply_repro = ilu_apply_repro,
    .update = ilu_update,
    .inverse_diagonal = NULL,
    .is_identity = 0,
    .destroy = ilu_destroy,
    .describe = ilu_describe,
};
