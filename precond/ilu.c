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
 * Shift (ilu_shift.c has the math): ic0 by default (PETSc's ICC shifts by default) and
 * ilu0:shift (PETSc's ILU does not) factor s A + alpha D, alpha searched from 0 up at every
 * build and update; the values are prepared on the host, so the GPU factors them with its own
 * kernel unchanged. s = -1 (ic0 of a matrix whose diagonal is all negative, shift or not):
 * M = -L L^T, and apply negates z after the solves (krill_blas_scal, exact: the same bits on
 * any thread count and device). While shifting the CPU keeps A's values beside the factors (8
 * bytes per entry more during a build or update), the GPU a host copy of the shifted values.
 *
 * Apply, memory traffic: each factor entry is read once over the two solves (12 bytes:
 * value and column), the row offsets, diagonal positions and the diagonal's reciprocals (the
 * CPU multiplies by them: ilu_host.c says why; the GPU divides) once per solve, r read, y
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
    double *dinv;            /* CPU, serial: 1 / the factors' diagonal (krill_ilu_solve_serial) */
    int parallel;            /* CPU: level-scheduled solves on `perm` (else serial) */
    krill_ilu_perm perm;     /* CPU, parallel: the factors in level order */
    void *gpu;               /* GPU: ilu.cu's half; CPU: NULL */
    int valid;               /* 0 until a factorization succeeds, and after a failed one */
    int sign;                /* s: -1 when M = -L L^T (ic0 of -A), else 1 */
    double alpha;            /* the shift of the last factorization (0: none) */
    int factorizations;      /* made by the last build or update (the search's tries) */
    char layout[200];        /* levels and how the solves run (fixed at build) */
    char describe[360];      /* layout, then the sign and shift of the last factorization */
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
    krill_free(p->dinv);
    krill_free(p);
}

/* Factor the values val (p's pattern, host memory) on the context's device: on the CPU val
 * is p->val and becomes the factors; the GPU uploads it. */
static krill_status factor_values(krill_ctx *ctx, pc_ilu *p, double *val)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) {
        krill_ilu_set_row_max(&p->h, val);
        KRILL_TRY(krill_ilu_cuda_factor(ctx, p->gpu, &p->h, p->name, val));
        goto cleanup;
    }
#else
    (void)ctx;
#endif
    KRILL_TRY(krill_ilu_factor_cpu(&p->h, p->name, val));
    if (p->parallel) krill_ilu_perm_values(&p->h, val, &p->perm);
    else krill_ilu_diag_inverse(&p->h, val, p->dinv);
cleanup:
    return st;
}

/* The shift search (ilu_shift.c) on s A's values sa_val: factorizations of s A + alpha D
 * until krill_ilu_shift_next settles. Values factored on the CPU: p->val (nnz, allocated
 * here); on the GPU: a host buffer of this call. A failure other than a refused row
 * (allocation, device, ic0's asymmetry) ends the search with its own error. */
static krill_status factor_shifted(krill_ctx *ctx, pc_ilu *p, const double *sa_val)
{
    krill_status st = KRILL_OK;
    krill_ilu_shift s = {0};
    double *buf = NULL;
    int next = 1;
    KRILL_TRY(krill_ilu_shift_begin(&s, &p->h, sa_val));
    if (krill_on_gpu(ctx)) {
        KRILL_ALLOC(buf, p->h.nnz > 0 ? p->h.nnz : 1);
    } else {
        krill_free(p->val);
        p->val = NULL;
        KRILL_ALLOC(p->val, p->h.nnz > 0 ? p->h.nnz : 1);
    }
    while (next == 1) {
        krill_ilu_shift_values(&s, &p->h, sa_val, buf ? buf : p->val);
        p->alpha = krill_ilu_shift_alpha(&s);
        p->factorizations++;
        st = factor_values(ctx, p, buf ? buf : p->val);
        if (st != KRILL_OK && st != KRILL_ERR_NUMERIC) goto cleanup;
        next = krill_ilu_shift_next(&s, st != KRILL_OK);
    }
    st = next == 0 ? KRILL_OK : krill_ilu_shift_refuse(&s, &p->h, p->name, sa_val);
cleanup:
    krill_ilu_shift_free(&s);
    krill_free(buf);
    return st;
}

/* Factor a's values (p's pattern) on the context's device: s A, negated in a when s = -1;
 * without a shift the CPU takes them over as p->val (a->val is NULL after), with one the
 * search of factor_shifted. */
static krill_status ilu_factor(krill_ctx *ctx, pc_ilu *p, krill_csr *a)
{
    krill_status st = KRILL_OK;
    p->valid = 0;
    p->alpha = 0.0;
    p->factorizations = 0;
    p->sign = krill_ilu_sign(&p->h, a->val);
    if (p->sign < 0)
        for (int64_t k = 0; k < a->nnz; k++) a->val[k] = -a->val[k];
    if (p->h.shift) {
        KRILL_TRY(factor_shifted(ctx, p, a->val));
    } else {
        if (!krill_on_gpu(ctx)) {
            krill_free(p->val);
            p->val = a->val;
            a->val = NULL;
        }
        p->factorizations = 1;
        KRILL_TRY(factor_values(ctx, p, p->val ? p->val : a->val));
    }
    p->valid = 1;
cleanup:
    return st;
}

/* p->layout: the levels and how the solves run. */
static void describe_layout(const krill_ctx *ctx, pc_ilu *p)
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
    snprintf(p->layout, sizeof p->layout, "%s: %d rows, %lld entries, %d forward and %d "
             "backward levels; %s", p->name, h->n, (long long)h->nnz, h->lower.n_levels,
             h->upper.n_levels, how);
}

/* p->describe after a successful factorization: the layout, the sign, the shift. */
static void describe(pc_ilu *p)
{
    const char *sign = p->sign < 0 ? "; every a_ii < 0: factors -A, M = -L L^T" : "";
    if (!p->h.shift)
        snprintf(p->describe, sizeof p->describe, "%s%s; no shift (%s)", p->layout, sign,
                 p->h.kind == KRILL_ILU_KIND_IC0 ? "ic0:noshift" : "ilu0:shift searches one");
    else if (p->alpha > 0.0)
        snprintf(p->describe, sizeof p->describe, "%s%s; shift alpha = %.4g (A + alpha diag(A), "
                 "%d factorizations)", p->layout, sign, p->alpha, p->factorizations);
    else
        snprintf(p->describe, sizeof p->describe, "%s%s; shift alpha = 0 (none needed)",
                 p->layout, sign);
}

static const char *ilu_describe(const void *impl) { return ((const pc_ilu *)impl)->describe; }

/* The parameters after "ilu0:" / "ic0:", separated by commas, each at most once:
 *   G        rows per group of the GPU's triangular solves, one of krill_ilu_group_sizes
 *            (ilu_impl.h); absent: the analysis chooses. The CPU solves take rows one by one
 *            and ignore it;
 *   shift    search a diagonal shift when a row is refused (ilu_shift.c); ic0's default;
 *   noshift  refuse the row instead; ilu0's default.
 * (ilu0:4,shift; ic0:noshift). *shift starts as the kind's default. */
static krill_status parse_params(const char *name, const char *param, int32_t *rows, int *shift)
{
    krill_status st = KRILL_OK;
    const char *tok = param;
    int shift_given = 0;
    *rows = 0;
    while (tok != NULL) {
        const char *comma = strchr(tok, ',');
        const size_t len = comma ? (size_t)(comma - tok) : strlen(tok);
        int32_t g = 0;
        for (int k = 0; k < KRILL_ILU_GROUP_SIZES; k++) {
            char text[8];
            snprintf(text, sizeof text, "%d", krill_ilu_group_sizes[k]);
            if (strlen(text) == len && strncmp(tok, text, len) == 0) g = krill_ilu_group_sizes[k];
        }
        if (g != 0 && *rows == 0) {
            *rows = g;
        } else if (!shift_given && ((len == 5 && strncmp(tok, "shift", 5) == 0) ||
                                    (len == 7 && strncmp(tok, "noshift", 7) == 0))) {
            *shift = len == 5;
            shift_given = 1;
        } else {
            st = krill_error(KRILL_ERR_ARG, "%s:%s: the parameters, separated by commas, are G, "
                             "the rows per group of the GPU's triangular solves, one of 1, 2, "
                             "3, 4, 6 (or none: chosen at build), and shift or noshift (%s's "
                             "default: %s), each at most once, e.g. %s:4,%s", name, param, name,
                             *shift ? "shift" : "noshift", name, *shift ? "noshift" : "shift");
            goto cleanup;
        }
        tok = comma ? comma + 1 : NULL;
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
    int shift = kind == KRILL_ILU_KIND_IC0;   /* PETSc's defaults: ICC shifts, ILU does not */
    KRILL_TRY(parse_params(name, param, &group_rows, &shift));
    KRILL_CALLOC(p, 1);
    p->name = name;
    p->threads = ctx->threads < 1 ? 1 : ctx->threads;
    KRILL_TRY(krill_mat_to_csr(mat, &a));
    KRILL_TRY(krill_ilu_analyze(a, kind, name, &p->h));
    p->h.shift = shift;
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
        else KRILL_ALLOC(p->dinv, p->h.n > 0 ? p->h.n : 1);
    }
    describe_layout(ctx, p);
    if (krill_on_gpu(ctx) && krill_ctx_repro(ctx, NULL) != KRILL_REPRO_OFF)
        KRILL_TRY(krill_ilu_gpu_repro_fits(&p->h, name));
    KRILL_TRY(ilu_factor(ctx, p, a));
    describe(p);
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

/* z = (L U)^{-1} r with the factors, plain. */
static krill_status ilu_solve(krill_ctx *ctx, const pc_ilu *p, const double *r, double *z)
{
    if (!p->valid) return ilu_refuse(p);
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) return krill_ilu_cuda_apply(ctx, p->gpu, r, z);
#else
    (void)ctx;
#endif
    if (p->parallel)
        krill_ilu_solve_levels(&p->h, &p->perm, p->threads, r, z);
    else
        krill_ilu_solve_serial(&p->h, p->val, p->dinv, r, z);
    return KRILL_OK;
}

/* The same in reproducible mode (ilu_impl.h). */
static krill_status ilu_solve_repro(krill_ctx *ctx, const pc_ilu *p, const double *r,
                                    double *z)
{
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

/* z = M^{-1} r: the solves of the factors (plain or reproducible), then z = -z when
 * M = -L L^T (exact). */
static krill_status ilu_apply_signed(krill_ctx *ctx, const void *impl, const double *r,
                                     double *z, int repro)
{
    krill_status st = KRILL_OK;
    const pc_ilu *p = impl;
    KRILL_TRY(repro ? ilu_solve_repro(ctx, p, r, z) : ilu_solve(ctx, p, r, z));
    if (p->sign < 0) KRILL_TRY(krill_blas_scal(ctx, p->h.n, -1.0, z));
cleanup:
    return st;
}

static krill_status ilu_apply(krill_ctx *ctx, const void *impl, const double *r, double *z)
{
    return ilu_apply_signed(ctx, impl, r, z, 0);
}

static krill_status ilu_apply_repro(krill_ctx *ctx, const void *impl, const double *r,
                                    double *z)
{
    return ilu_apply_signed(ctx, impl, r, z, 1);
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
    describe(p);
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
    f->sign = p->sign;
    f->alpha = p->alpha;
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
