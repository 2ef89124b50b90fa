/* bench/bench_trsv.c - the two triangular solves of ilu0 / ic0 on the GPU: krill's apply
 * (forward and backward solve, level-scheduled over groups of rows; precond/ilu.cu) against
 * cuSPARSE's cusparseSpSV on the very same factors.
 *
 *   bench_trsv [--warmup W] [--reps R] [--cpu] [--groups LIST] [--md FILE] [--csv FILE]
 *              [MATRIX ...]
 *
 * MATRIX is a krill_gen SPEC or a Matrix Market file; default: poisson3d:128,
 * convdiff3d:128 and elasticity3d:100,40,40. Each matrix is factored with ilu0, and with ic0
 * when it is symmetric (a refused factorization is reported and skipped). --groups LIST
 * (comma-separated, from auto,1,2,3,4,6; default auto) runs each with the GPU solves' rows
 * per group forced ("ilu0:G", precond/ilu_impl.h) or chosen by the analysis (auto); the
 * `B` and levels columns say what was used (krill_pc_describe).
 *
 * The factors are krill's (krill_pc_ilu_factors: A's CSR pattern with 32-bit offsets, the
 * values overwritten by L and U, or by L and L^T). cuSPARSE gets two descriptors of those
 * arrays: lower fill mode with a unit diagonal (ilu0; non-unit for ic0), and upper fill mode
 * with a non-unit diagonal; it reads only the triangle its fill mode names. Its analysis
 * (cusparseSpSV_analysis) and buffers are done before any timing, as krill's level analysis
 * is done at build. A cuSPARSE apply is r -> y (lower) then y -> z (upper); krill's is r -> z
 * with y kept in z.
 *
 * Timing: W untimed applies of each, then R repetitions, each timing one krill apply and one
 * cuSPARSE apply (alternating, so both see the same clocks) with CUDA events on the
 * context's stream; the figures are the medians. Factors of the small testdata matrices sit
 * in L2; poisson3d:128's (175 MB) do not.
 * Bytes moved per apply (the same count for both): 12 bytes per stored entry (value and
 * column, each entry read once over the two solves), the row offsets once per solve
 * (8 (n + 1)), r read, y written and read back, z written (32 n); gathers of y and z from
 * other rows are not counted (lower bound). GB/s = bytes / median time.
 *
 * Check: both results must pass the backward-error bound of tests/test_ilu.c:
 * |r - L U z|_i <= 6 (K + 2) eps (|L||U||z|)_i (K = longest row), which holds for any
 * summation order; their largest relative difference is printed beside. A failure prints
 * "wrong result" and the program exits 1.
 *
 * --cpu adds krill's CPU apply on the same matrix: on one thread (the serial solves) and on
 * all of OpenMP's threads (level by level when the rule of precond/ilu_impl.h picks it:
 * the `cpu_how` column), each the median of R applies timed with the host clock. They are
 * the measurements behind that rule.
 *
 * Without a CUDA device it prints why and exits 77 (skipped). */
#include <cusparse.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_common.h"
#include "core/core_impl.h"
#include "core/cuda_impl.h"
#include "krill/mat.h"
#include "precond/ilu_impl.h"

#define EXIT_SKIPPED 77

typedef struct trsv_opts {
    int warmup, reps;
    int cpu;                     /* also time the CPU apply (1 thread, all threads) */
    const char *groups;          /* --groups: comma-separated auto / G */
    const char *md_path, *csv_path;
} trsv_opts;

typedef struct trsv_result {
    char matrix[96];
    char pc[16];                 /* "ilu0" / "ic0", or with ":G" (--groups) */
    int64_t rows, nnz;
    int group_rows;              /* B of the GPU solves (krill_pc_describe) */
    int levels_fwd, levels_bwd;  /* of the GPU solves' groups */
    double build_s;              /* krill_pc_create: to_csr, analysis, GPU factorization */
    double t_krill, t_cusp;      /* median seconds per apply */
    double bytes;
    double back_krill, back_cusp;   /* backward error / its bound (<= 1 passes) */
    double rel_diff;             /* max |z_krill - z_cusp| / max |z_cusp| */
    double t_cpu1, t_cpun;       /* --cpu: median seconds per CPU apply, 1 and all threads */
    int cpu_threads;
    char cpu_how[16];            /* "levels" or "serial" on all threads */
    int ok;
    int refused;                 /* the factorization refused the matrix (pivot, diagonal) */
    char message[240];
} trsv_result;

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_trsv [--warmup W] [--reps R] [--cpu] [--groups auto,1,2,3,4,6] "
               "[--md FILE] [--csv FILE] [MATRIX ...]\nMATRIX: a krill_gen SPEC or a .mtx file; default: poisson3d:128 "
               "convdiff3d:128 elasticity3d:100,40,40\n");
}

static krill_status cusparse_check(cusparseStatus_t s, const char *call)
{
    if (s == CUSPARSE_STATUS_SUCCESS) return KRILL_OK;
    return krill_error(KRILL_ERR_DEVICE, "%s failed: %s", call, cusparseGetErrorString(s));
}

#define CUSPARSE_TRY(call) KRILL_TRY(cusparse_check((call), #call))

/* cusparseSpSV on the factors: descriptors, buffers and analysis, made once. */
typedef struct spsv_side {
    cusparseHandle_t handle;
    cusparseSpMatDescr_t lower, upper;
    cusparseDnVecDescr_t vr, vy, vz;
    cusparseSpSVDescr_t dl, du;
    void *buf_l, *buf_u;
} spsv_side;

static void spsv_free(krill_ctx *ctx, spsv_side *s)
{
    if (s->lower) cusparseDestroySpMat(s->lower);
    if (s->upper) cusparseDestroySpMat(s->upper);
    if (s->vr) cusparseDestroyDnVec(s->vr);
    if (s->vy) cusparseDestroyDnVec(s->vy);
    if (s->vz) cusparseDestroyDnVec(s->vz);
    if (s->dl) cusparseSpSV_destroyDescr(s->dl);
    if (s->du) cusparseSpSV_destroyDescr(s->du);
    krill_mem_free(ctx, s->buf_l);
    krill_mem_free(ctx, s->buf_u);
    memset(s, 0, sizeof *s);
}

static krill_status spsv_matrix(const krill_ilu_factors *f, cusparseFillMode_t fill,
                                cusparseDiagType_t diag, cusparseSpMatDescr_t *m)
{
    krill_status st = KRILL_OK;
    CUSPARSE_TRY(cusparseCreateCsr(m, f->n, f->n, f->nnz, (void *)f->dev_row_ptr,
                                   (void *)f->dev_col, (void *)f->val, CUSPARSE_INDEX_32I,
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CUSPARSE_TRY(cusparseSpMatSetAttribute(*m, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill));
    CUSPARSE_TRY(cusparseSpMatSetAttribute(*m, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag));
cleanup:
    return st;
}

static krill_status spsv_prepare(krill_ctx *ctx, const krill_ilu_factors *f, double *r,
                                 double *y, double *z, spsv_side *s)
{
    krill_status st = KRILL_OK;
    const double one = 1.0;
    size_t bytes_l = 0, bytes_u = 0;
    void *handle = NULL;
    KRILL_TRY(krill_cuda_cusparse(ctx, &handle));   /* bound to the context's stream */
    s->handle = handle;
    CUSPARSE_TRY(cusparseSetPointerMode(s->handle, CUSPARSE_POINTER_MODE_HOST));
    KRILL_TRY(spsv_matrix(f, CUSPARSE_FILL_MODE_LOWER,
                          f->unit_lower ? CUSPARSE_DIAG_TYPE_UNIT : CUSPARSE_DIAG_TYPE_NON_UNIT,
                          &s->lower));
    KRILL_TRY(spsv_matrix(f, CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT, &s->upper));
    CUSPARSE_TRY(cusparseCreateDnVec(&s->vr, f->n, r, CUDA_R_64F));
    CUSPARSE_TRY(cusparseCreateDnVec(&s->vy, f->n, y, CUDA_R_64F));
    CUSPARSE_TRY(cusparseCreateDnVec(&s->vz, f->n, z, CUDA_R_64F));
    CUSPARSE_TRY(cusparseSpSV_createDescr(&s->dl));
    CUSPARSE_TRY(cusparseSpSV_createDescr(&s->du));
    CUSPARSE_TRY(cusparseSpSV_bufferSize(s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                         s->lower, s->vr, s->vy, CUDA_R_64F,
                                         CUSPARSE_SPSV_ALG_DEFAULT, s->dl, &bytes_l));
    CUSPARSE_TRY(cusparseSpSV_bufferSize(s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                         s->upper, s->vy, s->vz, CUDA_R_64F,
                                         CUSPARSE_SPSV_ALG_DEFAULT, s->du, &bytes_u));
    KRILL_TRY(krill_mem_alloc(ctx, &s->buf_l, bytes_l, "cusparseSpSV buffer (lower)"));
    KRILL_TRY(krill_mem_alloc(ctx, &s->buf_u, bytes_u, "cusparseSpSV buffer (upper)"));
    CUSPARSE_TRY(cusparseSpSV_analysis(s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                       s->lower, s->vr, s->vy, CUDA_R_64F,
                                       CUSPARSE_SPSV_ALG_DEFAULT, s->dl, s->buf_l));
    CUSPARSE_TRY(cusparseSpSV_analysis(s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                       s->upper, s->vy, s->vz, CUDA_R_64F,
                                       CUSPARSE_SPSV_ALG_DEFAULT, s->du, s->buf_u));
    KRILL_TRY(krill_ctx_sync(ctx));
cleanup:
    return st;
}

static krill_status spsv_apply(const spsv_side *s)
{
    krill_status st = KRILL_OK;
    const double one = 1.0;
    CUSPARSE_TRY(cusparseSpSV_solve(s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->lower,
                                    s->vr, s->vy, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, s->dl));
    CUSPARSE_TRY(cusparseSpSV_solve(s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->upper,
                                    s->vy, s->vz, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, s->du));
cleanup:
    return st;
}

/* Largest ratio of |r - L U z|_i to 6 (K + 2) eps (|L||U||z|)_i over the rows (see the
 * head of the file); NaN or Inf anywhere gives INFINITY. */
static double backward_ratio(const krill_ilu_host *h, const double *f, int unit_lower,
                             const double *r, const double *z)
{
    const int32_t n = h->n;
    int64_t k = 0;
    double *w = NULL, *wa = NULL, worst = 0.0;
    if (krill_alloc((void **)&w, (size_t)n * sizeof *w + 8, "w") != KRILL_OK ||
        krill_alloc((void **)&wa, (size_t)n * sizeof *wa + 8, "wa") != KRILL_OK) {
        worst = INFINITY;
        goto done;
    }
    for (int32_t i = 0; i < n; i++)
        if (h->row_ptr[i + 1] - h->row_ptr[i] > k) k = h->row_ptr[i + 1] - h->row_ptr[i];
    for (int32_t i = 0; i < n; i++) {
        double s = 0.0, sa = 0.0;
        for (int64_t p = h->diag[i]; p < h->row_ptr[i + 1]; p++) {
            s += f[p] * z[h->col[p]];
            sa += fabs(f[p]) * fabs(z[h->col[p]]);
        }
        w[i] = s;
        wa[i] = sa;
    }
    for (int32_t i = 0; i < n; i++) {
        const double lii = unit_lower ? 1.0 : f[h->diag[i]];
        double v = lii * w[i], va = fabs(lii) * wa[i], ratio;
        for (int64_t p = h->row_ptr[i]; p < h->diag[i]; p++) {
            v += f[p] * w[h->col[p]];
            va += fabs(f[p]) * wa[h->col[p]];
        }
        ratio = fabs(r[i] - v) / (6.0 * (double)(k + 2) * DBL_EPSILON * va + DBL_MIN);
        if (!(ratio <= worst)) worst = isnan(ratio) ? INFINITY : ratio;
    }
done:
    krill_free(w);
    krill_free(wa);
    return worst;
}

/* Deterministic r in [-1, 1) (xorshift). */
static void fill_rhs(double *r, int64_t n)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        r[i] = (double)(s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    }
}

/* Median seconds of R CPU applies of pc_name on a with `threads` threads; how: "levels" or
 * "serial" (krill_pc_describe). */
static krill_status time_cpu(const krill_csr *a, const char *pc_name, int threads,
                             const trsv_opts *o, double *seconds, char *how, size_t how_size)
{
    krill_status st = KRILL_OK;
    krill_ctx *ctx = NULL;
    krill_mat *m = NULL;
    krill_pc *pc = NULL;
    krill_vec *vr = NULL, *vz = NULL;
    bench_clock *clock = NULL;
    double *t = NULL;
    KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CPU, threads, &ctx));
    KRILL_TRY(bench_clock_create(ctx, &clock));
    KRILL_TRY(krill_mat_create(ctx, a, "csr", &m));
    KRILL_TRY(krill_pc_create(m, pc_name, &pc));
    snprintf(how, how_size, "%s", strstr(krill_pc_describe(pc), "level by level") ? "levels"
                                                                                  : "serial");
    KRILL_TRY(krill_vec_create(ctx, a->n_rows, &vr));
    KRILL_TRY(krill_vec_create(ctx, a->n_rows, &vz));
    KRILL_TRY(krill_vec_fill(vr, 1.0));
    KRILL_ALLOC(t, o->reps);
    for (int w = 0; w < o->warmup; w++) KRILL_TRY(krill_pc_apply(pc, vr, vz));
    for (int k = 0; k < o->reps; k++) {
        KRILL_TRY(bench_clock_start(clock));
        KRILL_TRY(krill_pc_apply(pc, vr, vz));
        KRILL_TRY(bench_clock_stop(clock, &t[k]));
    }
    *seconds = bench_median(t, o->reps);
cleanup:
    krill_free(t);
    krill_vec_destroy(&vr);
    krill_vec_destroy(&vz);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&m);
    bench_clock_destroy(&clock);
    krill_ctx_destroy(&ctx);
    return st;
}

/* Time and check one preconditioner on one matrix; fills res (ok = 0 with a message on any
 * failure). */
static void bench_one(krill_ctx *ctx, const krill_csr *a, const char *pc_name,
                      const trsv_opts *o, bench_clock *clock, trsv_result *res)
{
    krill_status st = KRILL_OK;
    krill_mat *m = NULL;
    krill_pc *pc = NULL;
    krill_vec *vr = NULL, *vz = NULL, *vy_c = NULL, *vz_c = NULL;
    krill_ilu_factors f;
    spsv_side cs;
    double *r = NULL, *zk = NULL, *zc = NULL, *fh = NULL, *tk = NULL, *tc = NULL, t0;
    memset(&cs, 0, sizeof cs);
    snprintf(res->pc, sizeof res->pc, "%s", pc_name);
    res->rows = a->n_rows;
    res->nnz = a->nnz;
    res->bytes = 12.0 * (double)a->nnz + 8.0 * ((double)a->n_rows + 1.0) + 32.0 * a->n_rows;
    KRILL_TRY(krill_mat_create(ctx, a, "csr", &m));
    KRILL_TRY(krill_ctx_sync(ctx));
    t0 = krill_wtime();
    st = krill_pc_create(m, pc_name, &pc);
    res->refused = st == KRILL_ERR_NUMERIC;
    if (st != KRILL_OK) goto cleanup;
    KRILL_TRY(krill_ctx_sync(ctx));
    res->build_s = krill_wtime() - t0;
    KRILL_TRY(krill_pc_ilu_factors(pc, &f));
    {
        const char *groups = strstr(krill_pc_describe(pc), "groups of ");
        if (!groups || sscanf(groups, "groups of %d rows (%d and %d levels)", &res->group_rows,
                              &res->levels_fwd, &res->levels_bwd) != 3) {
            st = krill_error(KRILL_ERR_INTERNAL, "unexpected description: %s",
                             krill_pc_describe(pc));
            goto cleanup;
        }
    }

    KRILL_ALLOC(r, a->n_rows);
    KRILL_ALLOC(zk, a->n_rows);
    KRILL_ALLOC(zc, a->n_rows);
    KRILL_ALLOC(fh, a->nnz);
    KRILL_ALLOC(tk, o->reps);
    KRILL_ALLOC(tc, o->reps);
    fill_rhs(r, a->n_rows);
    KRILL_TRY(krill_vec_create(ctx, a->n_rows, &vr));
    KRILL_TRY(krill_vec_create(ctx, a->n_rows, &vz));
    KRILL_TRY(krill_vec_create(ctx, a->n_rows, &vy_c));
    KRILL_TRY(krill_vec_create(ctx, a->n_rows, &vz_c));
    KRILL_TRY(krill_vec_upload(vr, r));
    KRILL_TRY(spsv_prepare(ctx, &f, krill_vec_data(vr), krill_vec_data(vy_c),
                           krill_vec_data(vz_c), &cs));

    for (int w = 0; w < o->warmup; w++) {
        KRILL_TRY(krill_pc_apply(pc, vr, vz));
        KRILL_TRY(spsv_apply(&cs));
    }
    for (int k = 0; k < o->reps; k++) {
        KRILL_TRY(bench_clock_start(clock));
        KRILL_TRY(krill_pc_apply(pc, vr, vz));
        KRILL_TRY(bench_clock_stop(clock, &tk[k]));
        KRILL_TRY(bench_clock_start(clock));
        KRILL_TRY(spsv_apply(&cs));
        KRILL_TRY(bench_clock_stop(clock, &tc[k]));
    }
    res->t_krill = bench_median(tk, o->reps);
    res->t_cusp = bench_median(tc, o->reps);

    /* the results of one more apply each, over NaN, against the factors */
    KRILL_TRY(krill_vec_fill(vz, NAN));
    KRILL_TRY(krill_vec_fill(vz_c, NAN));
    KRILL_TRY(krill_pc_apply(pc, vr, vz));
    KRILL_TRY(spsv_apply(&cs));
    KRILL_TRY(krill_vec_download(vz, zk));
    KRILL_TRY(krill_vec_download(vz_c, zc));
    KRILL_TRY(krill_mem_download(ctx, fh, f.val, (size_t)a->nnz * sizeof *fh));
    res->back_krill = backward_ratio(f.host, fh, f.unit_lower, r, zk);
    res->back_cusp = backward_ratio(f.host, fh, f.unit_lower, r, zc);
    {
        double diff = 0.0, scale = DBL_MIN;
        for (int32_t i = 0; i < a->n_rows; i++) {
            if (fabs(zk[i] - zc[i]) > diff || isnan(zk[i] - zc[i])) diff = fabs(zk[i] - zc[i]);
            if (fabs(zc[i]) > scale) scale = fabs(zc[i]);
        }
        res->rel_diff = diff / scale;
    }
    if (o->cpu) {
        char how1[16];
        res->cpu_threads = omp_get_max_threads();
        KRILL_TRY(time_cpu(a, pc_name, 1, o, &res->t_cpu1, how1, sizeof how1));
        KRILL_TRY(time_cpu(a, pc_name, res->cpu_threads, o, &res->t_cpun, res->cpu_how,
                           sizeof res->cpu_how));
    }
    if (!(res->back_krill <= 1.0) || !(res->back_cusp <= 1.0))
        snprintf(res->message, sizeof res->message, "wrong result: backward error / bound = "
                 "%.3g (krill), %.3g (cuSPARSE)", res->back_krill, res->back_cusp);
    else
        res->ok = 1;
cleanup:
    if (st != KRILL_OK) snprintf(res->message, sizeof res->message, "%s", krill_last_error());
    spsv_free(ctx, &cs);
    krill_vec_destroy(&vr);
    krill_vec_destroy(&vz);
    krill_vec_destroy(&vy_c);
    krill_vec_destroy(&vz_c);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&m);
    krill_free(r);
    krill_free(zk);
    krill_free(zc);
    krill_free(fh);
    krill_free(tk);
    krill_free(tc);
}

/* ---- output -------------------------------------------------------------------------- */

static double gbs(double bytes, double t) { return t > 0.0 ? bytes / t * 1e-9 : 0.0; }

static void print_row(FILE *f, const trsv_result *r, int markdown, int cpu)
{
    if (!(r->t_krill > 0.0)) {
        fprintf(f, markdown ? "| %s | %s | %lld | %lld | %s: %s | | | | | | | | |%s |\n"
                            : "%-26s %-7s %9lld %10lld %s: %s\n",
                r->matrix, r->pc, (long long)r->rows, (long long)r->nnz,
                r->refused ? "refused" : "FAILED", r->message, markdown && cpu ? " | |" : "");
        return;
    }
    fprintf(f, markdown ? "| %s | %s | %lld | %lld | %d | %d/%d | %.3f" : "%-26s %-7s %9lld "
            "%10lld %2d %5d/%-5d %8.3f", r->matrix, r->pc, (long long)r->rows, (long long)r->nnz,
            r->group_rows, r->levels_fwd, r->levels_bwd, r->build_s);
    fprintf(f, markdown ? " | %.1f | %.1f | %.1f | %.1f | %.3f | %.1e"
                        : " %10.1f %10.1f %7.1f %7.1f %8.3f %9.1e",
            r->t_krill * 1e6, r->t_cusp * 1e6, gbs(r->bytes, r->t_krill),
            gbs(r->bytes, r->t_cusp), r->t_krill / r->t_cusp, r->rel_diff);
    if (cpu)
        fprintf(f, markdown ? " | %.0f | %.0f (%d, %s)" : " %9.0f %9.0f %3d %-6s", r->t_cpu1 * 1e6,
                r->t_cpun * 1e6, r->cpu_threads, r->cpu_how);
    fprintf(f, markdown ? " | %s |\n" : " %s\n", r->ok ? "ok" : r->message);
}

static void print_header(FILE *f, int markdown, int cpu)
{
    if (markdown) {
        fprintf(f, "| matrix | pc | rows | nnz | B | levels fwd/bwd | build s | krill us | "
                   "cuSPARSE us | krill GB/s | cuSPARSE GB/s | krill / cuSPARSE | max rel "
                   "diff |%s check |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
                   "---:|---:|%s---|\n", cpu ? " CPU 1 thread us | CPU all threads us |" : "",
                cpu ? "---:|---:|" : "");
    } else {
        fprintf(f, "%-26s %-7s %9s %10s %2s %11s %8s %10s %10s %7s %7s %8s %9s", "matrix", "pc",
                "rows", "nnz", "B", "levels", "build_s", "krill_us", "cusp_us", "k_GB/s", "c_GB/s",
                "k/cusp", "rel_diff");
        if (cpu) fprintf(f, " %9s %9s %3s %-6s", "cpu1_us", "cpuN_us", "N", "how");
        fprintf(f, " %s\n", "check");
    }
}

static int write_csv(const char *path, const trsv_result *res, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "matrix,pc,rows,nnz,group_rows,levels_fwd,levels_bwd,build_s,t_krill_s,t_cusparse_s,bytes,"
               "gb_per_s_krill,gb_per_s_cusparse,time_krill_vs_cusparse,rel_diff,"
               "backward_krill,backward_cusparse,t_cpu_1thread_s,t_cpu_all_s,cpu_threads,"
               "cpu_how,ok,message\n");
    for (int i = 0; i < n; i++) {
        const trsv_result *r = &res[i];
        fprintf(f, "\"%s\",%s,%lld,%lld,%d,%d,%d,%.4e,%.6e,%.6e,%.0f,%.3f,%.3f,%.4f,%.3e,%.3e,%.3e,"
                   "%.6e,%.6e,%d,%s,%d,\"%s\"\n", r->matrix, r->pc, (long long)r->rows,
                (long long)r->nnz, r->group_rows, r->levels_fwd, r->levels_bwd, r->build_s, r->t_krill,
                r->t_cusp, r->bytes, gbs(r->bytes, r->t_krill), gbs(r->bytes, r->t_cusp),
                r->t_cusp > 0.0 ? r->t_krill / r->t_cusp : 0.0, r->rel_diff, r->back_krill,
                r->back_cusp, r->t_cpu1, r->t_cpun, r->cpu_threads, r->cpu_how, r->ok,
                r->message);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static int write_md(const char *path, const trsv_result *res, int n, krill_ctx *ctx,
                    const trsv_opts *o)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "### ilu0 / ic0 apply: krill vs cusparseSpSV on %s\n\n", krill_ctx_describe(ctx));
    fprintf(f, "Median of %d applies (after %d warm-up) timed with CUDA events; an apply is the "
               "forward and the backward solve. Bytes per apply: 12 nnz + 8 (n + 1) + 32 n. "
               "`krill / cuSPARSE` < 1: krill is faster. Check: both results within the "
               "backward-error bound 6 (K + 2) eps |L||U||z|.\n\n", o->reps, o->warmup);
    if (o->cpu)
        fprintf(f, "CPU columns: krill's apply on the host, one thread (serial solves) and all "
                   "threads (level by level or serial, by the rule of precond/ilu_impl.h).\n\n");
    print_header(f, 1, o->cpu);
    for (int i = 0; i < n; i++) print_row(f, &res[i], 1, o->cpu);
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- main ---------------------------------------------------------------------------- */

/* The options into o, the positional arguments to argv[1..] (bench_parse_options). */
static int parse_args(int argc, char **argv, trsv_opts *o, int *n_positional)
{
    const bench_opt opts[] = {
        {.name = "--warmup", .kind = BENCH_OPT_INT, .field = &o->warmup},
        {.name = "--reps", .kind = BENCH_OPT_INT, .field = &o->reps},
        {.name = "--cpu", .kind = BENCH_OPT_FLAG, .field = &o->cpu},
        {.name = "--groups", .kind = BENCH_OPT_STRING, .field = &o->groups},
        {.name = "--md", .kind = BENCH_OPT_STRING, .field = &o->md_path},
        {.name = "--csv", .kind = BENCH_OPT_STRING, .field = &o->csv_path},
        {.name = NULL},
    };
    int rc;
    memset(o, 0, sizeof *o);
    o->warmup = 5;
    o->reps = 30;
    o->groups = "auto";
    rc = bench_parse_options(argc, argv, "bench_trsv", opts, NULL, usage, n_positional);
    if (rc == 0 && (o->warmup < 0 || o->reps < 1)) {
        fprintf(stderr, "bench_trsv: --warmup >= 0, --reps >= 1\n");
        rc = -1;
    }
    return rc;
}

static const char *const default_matrices[] = {"poisson3d:128", "convdiff3d:128",
                                               "elasticity3d:100,40,40", NULL};

int main(int argc, char **argv)
{
    trsv_opts o;
    krill_ctx *ctx = NULL;
    bench_clock *clock = NULL;
    trsv_result *res = NULL;
    const char *const *matrices;
    int n_matrices = 0, n_res = 0, failures = 0, rc = 2, n_groups = 0;
    char group[KRILL_ILU_GROUP_SIZES + 1][8];   /* "" (auto) or "G" */

    if (parse_args(argc, argv, &o, &n_matrices) != 0) goto cleanup;
    for (const char *g = o.groups; *g; n_groups++) {
        const size_t len = strcspn(g, ",");
        if (n_groups == KRILL_ILU_GROUP_SIZES + 1 || len == 0 || len >= sizeof group[0]) {
            fprintf(stderr, "bench_trsv: --groups %s: up to %d of auto, 1, 2, 3, 4, 6, "
                    "comma-separated\n", o.groups, KRILL_ILU_GROUP_SIZES + 1);
            goto cleanup;
        }
        snprintf(group[n_groups], sizeof group[0], "%.*s", (int)len, g);
        if (strcmp(group[n_groups], "auto") == 0) group[n_groups][0] = '\0';
        g += len + (g[len] == ',');
    }
    if (n_groups == 0) {
        fprintf(stderr, "bench_trsv: --groups: empty\n");
        goto cleanup;
    }
    if (krill_cuda_device_count() <= 0) {
        printf("bench_trsv: skipped: no CUDA device here (this benchmark times GPU triangular "
               "solves against cuSPARSE)\n");
        rc = EXIT_SKIPPED;
        goto cleanup;
    }
    n_matrices = bench_names(argv, n_matrices, default_matrices, &matrices);
    if (bench_ctx_create(KRILL_DEVICE_CUDA, 0, &ctx) != KRILL_OK) goto cleanup;
    if (bench_clock_create(ctx, &clock) != KRILL_OK ||
        krill_calloc((void **)&res, sizeof *res * (size_t)(2 * n_matrices * n_groups),
                     "results")) {
        fprintf(stderr, "bench_trsv: %s\n", krill_last_error());
        goto cleanup;
    }
    printf("# bench_trsv on %s; clock: %s; median of %d applies after %d warm-up\n",
           krill_ctx_describe(ctx), bench_clock_kind(clock), o.reps, o.warmup);
    print_header(stdout, 0, o.cpu);
    for (int m = 0; m < n_matrices; m++) {
        krill_csr *a = NULL;
        double load_s = 0.0;
        if (bench_load_matrix(matrices[m], &a, &load_s) != KRILL_OK) {
            printf("%-26s FAILED to load: %s\n", matrices[m], krill_last_error());
            failures++;
            continue;
        }
        for (int k = 0; k < 2 * n_groups; k++) {
            trsv_result *r = &res[n_res];
            char pc_name[16];
            if (k % 2 == 1 && !krill_csr_is_symmetric(a)) continue;
            n_res++;
            snprintf(r->matrix, sizeof r->matrix, "%s", matrices[m]);
            snprintf(pc_name, sizeof pc_name, "%s%s%s", k % 2 ? "ic0" : "ilu0",
                     group[k / 2][0] ? ":" : "", group[k / 2]);
            bench_one(ctx, a, pc_name, &o, clock, r);
            /* a refused factorization (a property of the matrix) is reported, not a failure */
            if (!r->ok && !r->refused) failures++;
            print_row(stdout, r, 0, o.cpu);
            fflush(stdout);
        }
        krill_csr_destroy(&a);
    }
    if (o.md_path && write_md(o.md_path, res, n_res, ctx, &o) != 0) {
        fprintf(stderr, "bench_trsv: cannot write %s\n", o.md_path);
        failures++;
    }
    if (o.csv_path && write_csv(o.csv_path, res, n_res) != 0) {
        fprintf(stderr, "bench_trsv: cannot write %s\n", o.csv_path);
        failures++;
    }
    printf("# k/cusp = krill time / cuSPARSE time (below 1: krill faster); GB/s over "
           "12 nnz + 8 (n + 1) + 32 n bytes\n");
    rc = failures ? 1 : 0;
cleanup:
    krill_free(res);
    bench_clock_destroy(&clock);
    krill_ctx_destroy(&ctx);
    return rc;
}
