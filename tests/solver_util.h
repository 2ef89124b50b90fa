/* tests/solver_util.h - what the solver and preconditioner tests share: test systems with
 * a known solution (b = A x_true), the true residual by the CSR reference SpMV (independent
 * of the solvers), and an SPD condition-number estimate by a banded Cholesky (independent
 * too). Header-only: each test is one source file. */
#ifndef KRILL_TEST_SOLVER_UTIL_H
#define KRILL_TEST_SOLVER_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* A system A x = b on a context, with its host copies. */
typedef struct su_system {
    krill_csr *csr;          /* host matrix */
    krill_mat *a;
    krill_vec *b, *x;
    double *b_host;          /* n */
    double *x_true;          /* n: b = A x_true */
    double *x_host;          /* n: the last solution downloaded */
    int64_t n;
} su_system;

/* Generated matrix; exits on failure (the generators have their own tests). */
/* The default options with the solver, orthogonalization, restart and rtol set, and maxit
 * when > 0. */
static inline krill_solver_opts su_krylov_opts(krill_solver_type solver, krill_ortho ortho,
                                               int restart, double rtol, int maxit)
{
    krill_solver_opts o;
    krill_solver_opts_default(&o);
    o.solver = solver;
    o.ortho = ortho;
    o.restart = restart;
    o.rtol = rtol;
    if (maxit > 0) o.maxit = maxit;
    return o;
}

/* --ortho's name of o. */
static inline const char *su_ortho_name(krill_ortho o)
{
    return o == KRILL_ORTHO_CGS2 ? "cgs2" : o == KRILL_ORTHO_MGS ? "mgs" : "dcgs2";
}

/* Context memory holding a copy of n host doubles (and 8 bytes more); exits on failure. */
static inline double *su_to_ctx(krill_ctx *ctx, const double *h, int64_t n)
{
    double *d = NULL;
    if (krill_mem_alloc(ctx, (void **)&d, (size_t)n * sizeof(double) + 8, "test") != KRILL_OK ||
        krill_mem_upload(ctx, d, h, (size_t)n * sizeof(double)) != KRILL_OK) {
        fprintf(stderr, "su_to_ctx: %s\n", krill_last_error());
        exit(1);
    }
    return d;
}

static inline krill_csr *su_gen(const char *spec)
{
    krill_csr *csr = NULL;
    if (krill_gen(spec, &csr) != KRILL_OK) {
        fprintf(stderr, "krill_gen(%s) failed: %s\n", spec, krill_last_error());
        exit(1);
    }
    return csr;
}

/* A testdata matrix, or exit 77 (skipped) when the testdata folder is absent. */
static inline krill_csr *su_testdata(const char *rel)
{
    krill_csr *csr = NULL;
    const char *path = tu_testdata_path(rel);
    if (!path) tu_skip("testdata folder absent (set KRILL_TESTDATA)");
    if (krill_mm_read(path, &csr, NULL) != KRILL_OK) {
        fprintf(stderr, "reading %s failed: %s\n", path, krill_last_error());
        exit(1);
    }
    return csr;
}

/* Take `csr` (owned from now on) to ctx, with x_true random (seed), b = A x_true, x = 0. */
static inline void su_system_make(su_system *s, krill_ctx *ctx, krill_csr *csr,
                                  const char *format, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->csr = csr;
    s->n = csr->n_rows;
    s->b_host = calloc((size_t)s->n + 1, sizeof(double));
    s->x_true = calloc((size_t)s->n + 1, sizeof(double));
    s->x_host = calloc((size_t)s->n + 1, sizeof(double));
    if (!s->b_host || !s->x_true || !s->x_host) exit(1);
    tu_random(s->x_true, s->n, seed);
    krill_csr_spmv_ref(csr, 1.0, s->x_true, 0.0, s->b_host);
    if (krill_mat_create(ctx, csr, format, &s->a) != KRILL_OK ||
        krill_vec_create(ctx, s->n, &s->b) != KRILL_OK ||
        krill_vec_create(ctx, s->n, &s->x) != KRILL_OK ||
        krill_vec_upload(s->b, s->b_host) != KRILL_OK) {
        fprintf(stderr, "setting up the system failed: %s\n", krill_last_error());
        exit(1);
    }
}

static inline void su_system_free(su_system *s)
{
    krill_vec_destroy(&s->b);
    krill_vec_destroy(&s->x);
    krill_mat_destroy(&s->a);
    krill_csr_destroy(&s->csr);
    free(s->b_host);
    free(s->x_true);
    free(s->x_host);
    memset(s, 0, sizeof *s);
}

static inline double su_norm(const double *v, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += v[i] * v[i];
    return sqrt(s);
}

/* ||b - A x|| / ||b|| by the CSR reference SpMV, x on the host. */
static inline double su_true_relres(const krill_csr *a, const double *x, const double *b)
{
    int64_t n = a->n_rows;
    double *r = malloc(((size_t)n + 1) * sizeof(double));
    double res, bn;
    if (!r) exit(1);
    memcpy(r, b, (size_t)n * sizeof(double));
    krill_csr_spmv_ref(a, -1.0, x, 1.0, r);
    res = su_norm(r, n);
    bn = su_norm(b, n);
    free(r);
    return bn > 0.0 ? res / bn : res;
}

/* ||x - x_true|| / ||x_true|| of the solution in s->x (downloaded into s->x_host). */
static inline double su_error(su_system *s)
{
    double d = 0.0;
    if (krill_vec_download(s->x, s->x_host) != KRILL_OK) return INFINITY;
    for (int64_t i = 0; i < s->n; i++)
        d += (s->x_host[i] - s->x_true[i]) * (s->x_host[i] - s->x_true[i]);
    return sqrt(d) / su_norm(s->x_true, s->n);
}

/* Solve from x = 0; returns the status; info is filled (the caller frees its history). */
static inline krill_status su_solve(su_system *s, const krill_pc *pc,
                                    const krill_solver_opts *o, krill_solve_info *info)
{
    if (krill_vec_fill(s->x, 0.0) != KRILL_OK) exit(1);
    return krill_solve(s->a, pc, s->b, s->x, o, info);
}

/* A test's context: the GPU's (exit 77 without one) when gpu, else `threads` CPU threads
 * (the tests built twice, for CPU and GPU contexts). */
static inline krill_ctx *su_test_ctx(int gpu, int threads)
{
    return gpu ? tu_gpu_ctx_or_skip() : tu_cpu_ctx(threads);
}

/* What a whole solve gave, for the tests that compare solvers (test_dcgs2, test_sstep). */
typedef struct su_run {
    int iterations;
    krill_reason reason;
    double relres;           /* by the reference SpMV */
    double estimate;         /* the last history entry, relative to ||b|| */
} su_run;

/* su_solve (checked), then x downloaded and r filled; info's history freed. */
static inline void su_solve_run(su_system *s, const krill_pc *pc, const krill_solver_opts *o,
                                su_run *r)
{
    krill_solve_info info;
    const double bn = su_norm(s->b_host, s->n);
    CHECK_OK(su_solve(s, pc, o, &info));
    CHECK_OK(krill_vec_download(s->x, s->x_host));
    r->iterations = info.iterations;
    r->reason = info.reason;
    r->relres = su_true_relres(s->csr, s->x_host, s->b_host);
    r->estimate = info.history[info.history_len - 1] / bn;
    krill_solve_info_free(&info);
}

/* diag(d) x = 1 (n entries) on ctx from x = 0, without a preconditioner: the status of
 * krill_solve; info filled (the caller frees its history). The indefinite tests' system. */
static inline krill_status su_diagonal_solve(krill_ctx *ctx, int32_t n, const double *d,
                                             const krill_solver_opts *o, krill_solve_info *info)
{
    int32_t *idx = malloc(((size_t)n + 1) * sizeof *idx);
    double *ones = malloc(((size_t)n + 1) * sizeof *ones);
    krill_csr *csr = NULL;
    krill_mat *a = NULL;
    krill_vec *b = NULL, *x = NULL;
    krill_status st;
    if (!idx || !ones) exit(1);
    for (int32_t i = 0; i < n; i++) {
        idx[i] = i;
        ones[i] = 1.0;
    }
    if (krill_csr_from_triplets(n, n, n, idx, idx, d, &csr) != KRILL_OK ||
        krill_mat_create(ctx, csr, NULL, &a) != KRILL_OK ||
        krill_vec_create(ctx, n, &b) != KRILL_OK || krill_vec_create(ctx, n, &x) != KRILL_OK ||
        krill_vec_upload(b, ones) != KRILL_OK || krill_vec_fill(x, 0.0) != KRILL_OK) {
        fprintf(stderr, "setting up diag(d) x = 1 failed: %s\n", krill_last_error());
        exit(1);
    }
    st = krill_solve(a, NULL, b, x, o, info);
    krill_vec_destroy(&b);
    krill_vec_destroy(&x);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
    free(idx);
    free(ones);
    return st;
}

/* ---- condition number of an SPD matrix --------------------------------------------------
 * lambda_max by power iteration, lambda_min by inverse iteration with a banded Cholesky
 * factor (dense within the band: fine for the small test matrices). */

typedef struct su_band {
    int64_t n, bw;           /* half bandwidth */
    double *l;               /* l[i * (bw + 1) + (i - j)] = L_ij for i - bw <= j <= i */
} su_band;

static inline int su_band_cholesky(const krill_csr *a, su_band *f)
{
    int64_t n = a->n_rows, bw = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
            if (i - a->col[k] > bw) bw = i - a->col[k];
    f->n = n;
    f->bw = bw;
    f->l = calloc((size_t)n * (size_t)(bw + 1), sizeof(double));
    if (!f->l) return 0;
#define SU_L(i, j) f->l[(size_t)(i) * (size_t)(bw + 1) + (size_t)((i) - (j))]
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
            if (a->col[k] <= i) SU_L(i, a->col[k]) = a->val[k];
    for (int64_t j = 0; j < n; j++) {
        int64_t lo = j - bw > 0 ? j - bw : 0;
        double d = SU_L(j, j);
        for (int64_t k = lo; k < j; k++) d -= SU_L(j, k) * SU_L(j, k);
        if (!(d > 0.0)) return 0;
        d = sqrt(d);
        SU_L(j, j) = d;
        for (int64_t i = j + 1; i <= j + bw && i < n; i++) {
            double s = SU_L(i, j);
            int64_t lo2 = i - bw > lo ? i - bw : lo;
            for (int64_t k = lo2; k < j; k++) s -= SU_L(i, k) * SU_L(j, k);
            SU_L(i, j) = s / d;
        }
    }
    return 1;
}

/* x = A^{-1} x with the factor. */
static inline void su_band_solve(const su_band *f, double *x)
{
    int64_t n = f->n, bw = f->bw;
    for (int64_t i = 0; i < n; i++) {
        int64_t lo = i - bw > 0 ? i - bw : 0;
        double s = x[i];
        for (int64_t k = lo; k < i; k++) s -= SU_L(i, k) * x[k];
        x[i] = s / SU_L(i, i);
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        double s = x[i];
        for (int64_t k = i + 1; k <= i + bw && k < n; k++) s -= SU_L(k, i) * x[k];
        x[i] = s / SU_L(i, i);
    }
#undef SU_L
}

/* Estimate of cond_2(A) for SPD A (a lower bound, converged to a few digits: 300 steps of
 * each iteration). Returns 0 when A is not numerically SPD. */
static inline double su_cond_spd(const krill_csr *a)
{
    int64_t n = a->n_rows;
    su_band f;
    double *v = malloc(((size_t)n + 1) * sizeof(double));
    double *w = malloc(((size_t)n + 1) * sizeof(double));
    double lmax = 0.0, inv_lmin = 0.0, cond = 0.0;
    if (!v || !w) exit(1);
    if (!su_band_cholesky(a, &f)) goto done;
    tu_random(v, n, 7);
    for (int it = 0; it < 300; it++) {
        double nv = su_norm(v, n);
        for (int64_t i = 0; i < n; i++) v[i] /= nv;
        krill_csr_spmv_ref(a, 1.0, v, 0.0, w);
        lmax = su_norm(w, n);
        memcpy(v, w, (size_t)n * sizeof(double));
    }
    tu_random(v, n, 11);
    for (int it = 0; it < 300; it++) {
        double nv = su_norm(v, n);
        for (int64_t i = 0; i < n; i++) v[i] /= nv;
        su_band_solve(&f, v);
        inv_lmin = su_norm(v, n);
    }
    cond = lmax * inv_lmin;
done:
    free(f.l);
    free(v);
    free(w);
    return cond;
}

/* Estimate of cond_2(A) = sigma_max / sigma_min for a general square A (small n: a dense LU
 * with partial pivoting): power iteration on A'A and on (A'A)^{-1}, 300 steps each. Returns 0
 * when A is numerically singular. */
static inline double su_cond_general(const krill_csr *a)
{
    int64_t n = a->n_rows;
    double *lu = calloc((size_t)n * (size_t)n, sizeof(double));
    int64_t *piv = malloc(((size_t)n + 1) * sizeof(int64_t));
    double *v = malloc(((size_t)n + 1) * sizeof(double));
    double *w = malloc(((size_t)n + 1) * sizeof(double));
    double smax = 0.0, inv_smin = 0.0, cond = 0.0;
    if (!lu || !piv || !v || !w) exit(1);
#define SU_A(i, j) lu[(size_t)(i) * (size_t)n + (size_t)(j)]
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++) SU_A(i, a->col[k]) = a->val[k];
    for (int64_t j = 0; j < n; j++) {           /* PA = LU, row-major, in place */
        int64_t p = j;
        for (int64_t i = j + 1; i < n; i++)
            if (fabs(SU_A(i, j)) > fabs(SU_A(p, j))) p = i;
        piv[j] = p;
        if (SU_A(p, j) == 0.0) goto done;
        if (p != j)
            for (int64_t k = 0; k < n; k++) {
                double t = SU_A(j, k);
                SU_A(j, k) = SU_A(p, k);
                SU_A(p, k) = t;
            }
        for (int64_t i = j + 1; i < n; i++) {
            double l = SU_A(i, j) / SU_A(j, j);
            SU_A(i, j) = l;
            if (l != 0.0)
                for (int64_t k = j + 1; k < n; k++) SU_A(i, k) -= l * SU_A(j, k);
        }
    }
    tu_random(v, n, 5);
    for (int it = 0; it < 300; it++) {          /* sigma_max^2 = lambda_max(A'A) */
        double nv = su_norm(v, n);
        for (int64_t i = 0; i < n; i++) v[i] /= nv;
        krill_csr_spmv_ref(a, 1.0, v, 0.0, w);
        smax = su_norm(w, n);
        memset(v, 0, (size_t)n * sizeof(double));    /* v = A' w */
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
                v[a->col[k]] += a->val[k] * w[i];
    }
    tu_random(v, n, 9);
    for (int it = 0; it < 300; it++) {          /* 1/sigma_min: v = A^{-1} A^{-T} v */
        double nv = su_norm(v, n);
        for (int64_t i = 0; i < n; i++) v[i] /= nv;
        /* A' = U' L' P: solve U' t = v, L' s = t, then x = P' s */
        for (int64_t i = 0; i < n; i++) {
            double t = v[i];
            for (int64_t k = 0; k < i; k++) t -= SU_A(k, i) * v[k];
            v[i] = t / SU_A(i, i);
        }
        for (int64_t i = n - 1; i >= 0; i--) {
            double t = v[i];
            for (int64_t k = i + 1; k < n; k++) t -= SU_A(k, i) * v[k];
            v[i] = t;
        }
        for (int64_t j = n - 1; j >= 0; j--) {
            double t = v[j];
            v[j] = v[piv[j]];
            v[piv[j]] = t;
        }
        inv_smin = su_norm(v, n);               /* ||A^{-T} v||, v of norm 1 */
        for (int64_t j = 0; j < n; j++) {       /* then A^{-1}: P, L, U */
            double t = v[j];
            v[j] = v[piv[j]];
            v[piv[j]] = t;
        }
        for (int64_t i = 0; i < n; i++) {
            double t = v[i];
            for (int64_t k = 0; k < i; k++) t -= SU_A(i, k) * v[k];
            v[i] = t;
        }
        for (int64_t i = n - 1; i >= 0; i--) {
            double t = v[i];
            for (int64_t k = i + 1; k < n; k++) t -= SU_A(i, k) * v[k];
            v[i] = t / SU_A(i, i);
        }
    }
#undef SU_A
    cond = smax * inv_smin;
done:
    free(lu);
    free(piv);
    free(v);
    free(w);
    return cond;
}

/* A monitor that counts its calls and asks to stop at iteration `stop_at` (0: never). */
typedef struct su_monitor {
    int calls;
    int last_iteration;
    int in_order;            /* 1 while the iterations came as 1, 2, 3, ... */
    int stop_at;
} su_monitor;

static inline int su_monitor_fn(int iteration, double residual_norm, void *user)
{
    su_monitor *m = user;
    (void)residual_norm;
    m->calls++;
    if (iteration != m->last_iteration + 1) m->in_order = 0;
    m->last_iteration = iteration;
    return m->stop_at > 0 && iteration >= m->stop_at;
}

/* The monitor's contract on s with options o (no preconditioner; o's tolerances converge
 * within o->maxit): called once per iteration, in order, until convergence; a monitor that
 * returns nonzero at iteration `stop_at` stops the solve there (KRILL_DIVERGED_MAXIT after
 * stop_at iterations). o->monitor is NULL again afterwards. */
static inline void su_check_monitor(su_system *s, krill_solver_opts *o, int stop_at)
{
    su_monitor mon = {0, 0, 1, 0};
    krill_solve_info info;
    o->monitor = su_monitor_fn;
    o->monitor_data = &mon;
    CHECK_OK(su_solve(s, NULL, o, &info));
    CHECK(info.reason == KRILL_CONVERGED_RTOL);
    CHECK(mon.calls == info.iterations && mon.in_order);
    krill_solve_info_free(&info);
    mon = (su_monitor){0, 0, 1, stop_at};
    CHECK_OK(su_solve(s, NULL, o, &info));
    CHECK(info.reason == KRILL_DIVERGED_MAXIT && info.iterations == stop_at &&
          mon.calls == stop_at);
    krill_solve_info_free(&info);
    o->monitor = NULL;
    o->monitor_data = NULL;
}

/* krill_pc_create for the fault walk: a failure leaves no preconditioner. */
typedef struct su_fault_pc {
    const krill_mat *a;
    const char *name;
    krill_pc *pc;
} su_fault_pc;

static inline krill_status su_fault_pc_run(void *user)
{
    su_fault_pc *f = user;
    return krill_pc_create(f->a, f->name, &f->pc);
}

static inline int su_fault_pc_null(void *user) { return ((su_fault_pc *)user)->pc == NULL; }

static inline void su_fault_pc_undo(void *user) { krill_pc_destroy(&((su_fault_pc *)user)->pc); }

/* Every allocation of krill_pc_create(a, name) failing in turn (at least min_calls): a
 * clean error and no preconditioner, then the build succeeds. */
static inline void su_check_pc_faults(const krill_mat *a, const char *name, long min_calls)
{
    char what[64];
    su_fault_pc f = { a, name, NULL };
    tu_fault_call call = { what, su_fault_pc_run, su_fault_pc_null, su_fault_pc_undo, &f, 0 };
    snprintf(what, sizeof what, "krill_pc_create(%s)", name);
    CHECK(tu_alloc_fault_walk(&call) >= min_calls);
}

/* A solve from x0 for the fault walk (tu_alloc_fault_walk). */
typedef struct su_fault_solve {
    su_system s;
    const krill_pc *pc;
    const krill_solver_opts *opts;
    krill_solve_info info;
    double *x0;              /* n, host */
} su_fault_solve;

static inline krill_status su_fault_solve_run(void *user)
{
    su_fault_solve *f = user;
    if (krill_vec_upload(f->s.x, f->x0) != KRILL_OK) exit(1);
    return krill_solve(f->s.a, f->pc, f->s.b, f->s.x, f->opts, &f->info);
}

/* A failed solve releases the history and leaves x as it was, bit for bit. */
static inline int su_fault_solve_intact(void *user)
{
    su_fault_solve *f = user;
    if (krill_vec_download(f->s.x, f->s.x_host) != KRILL_OK) exit(1);
    return f->info.history == NULL &&
           memcmp(f->s.x_host, f->x0, (size_t)f->s.n * sizeof(double)) == 0;
}

static inline void su_fault_solve_undo(void *user)
{
    su_fault_solve *f = user;
    CHECK(f->info.reason == KRILL_CONVERGED_RTOL);
    krill_solve_info_free(&f->info);
}

/* The k-th allocation of a solve of `spec` (b = A x_true, seed; x0 random) fails, for
 * k = 1, 2, ... until the solve succeeds (it must converge), and at least min_calls of
 * them: each gives a clean allocation error, no history and x0 untouched (ASan sees any
 * leak). The context's reproducible mode applies. pc_name NULL: no preconditioner. */
static inline void su_check_alloc_faults(krill_ctx *ctx, const char *spec, uint64_t seed,
                                         const char *pc_name, const krill_solver_opts *o,
                                         long min_calls)
{
    su_fault_solve f;
    krill_pc *pc = NULL;
    char what[96];
    tu_fault_call call = { what, su_fault_solve_run, su_fault_solve_intact,
                           su_fault_solve_undo, &f, 0 };
    snprintf(what, sizeof what, "krill_solve(%s, solver %d, pc %s%s)", spec, (int)o->solver,
             pc_name ? pc_name : "none", krill_ctx_repro(ctx, NULL) ? ", reproducible" : "");
    memset(&f, 0, sizeof f);
    su_system_make(&f.s, ctx, su_gen(spec), NULL, seed);
    if (pc_name) CHECK_OK(krill_pc_create(f.s.a, pc_name, &pc));
    f.pc = pc;
    f.opts = o;
    f.x0 = malloc(((size_t)f.s.n + 1) * sizeof(double));
    if (!f.x0) exit(1);
    tu_random(f.x0, f.s.n, seed + 1);
    CHECK(tu_alloc_fault_walk(&call) >= min_calls);
    free(f.x0);
    krill_pc_destroy(&pc);
    su_system_free(&f.s);
}

#endif
