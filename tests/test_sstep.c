/* s-step GMRES (issue 18's stretch item; solver/sstep.c, sstep_host.c):
 *   - the host pieces: the Hessenberg eigenvalues against known spectra (real, complex pairs,
 *     repeated), the modified Leja order (largest modulus first, conjugates adjacent, the
 *     product of distances maximal at each step), the Cholesky of a Gram matrix and its cut
 *     where the matrix is not numerically positive definite or too ill-conditioned;
 *   - convergence with S = 2, 4, 8 on generated problems (with and without Jacobi and ILU(0)):
 *     the reason and the true residual (reference SpMV) of GMRES's tolerance, the iterations
 *     within SSTEP_FACTOR x GMRES(DCGS2)'s + S, the final estimate against the true residual,
 *     the Newton basis in use after the first cycle;
 *   - the loss of orthogonality ||I - Q'Q||_F of every cycle's basis (the test hook), bounded
 *     by SSTEP_LOSS_MAX, printed beside DCGS2's;
 *   - the refusals (restart not a multiple of S, S out of range, FGMRES, other solvers), S = 1
 *     = GMRES bit for bit, maxit inside a block, the monitor's stop, a lucky breakdown, an
 *     extreme scale; reproducible mode: the same bits on 1 and 2 threads (and, on the GPU,
 *     the CPU's bits);
 *   - the allocation-fault walk of a solve (plain, ILU(0), reproducible).
 * With the argument "testdata": GMRES(32) and s-step GMRES(32) with S = 4 on every square
 * testdata matrix. Built twice: test_sstep on CPU contexts, test_gpu_sstep (SSTEP_TEST_GPU)
 * on the GPU. */
#include <math.h>

#include "core/core_impl.h"
#include "solver/solver_impl.h"
#include "solver_util.h"

#ifdef SSTEP_TEST_GPU
#define DEVICE "gpu"
#define ON_GPU 1
#else
#define DEVICE "cpu"
#define ON_GPU 0
#endif
#define test_ctx(threads) su_test_ctx(ON_GPU, threads)

/* s-step iterations <= SSTEP_FACTOR x GMRES's + S (a block ends past the convergence point
 * by up to S - 1 steps per cycle, and the polynomial basis costs a few more) */
#define SSTEP_FACTOR 1.25
#define SSTEP_LOSS_MAX 1e-10

/* ---- host pieces (on the CPU build only: they do not touch a device) ------------------------ */
#ifndef SSTEP_TEST_GPU

static int cmp_complex(const void *x, const void *y)
{
    const double *a = x, *b = y;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* eigenvalues of the n x n Hessenberg h against want (re, im pairs), any order */
static int eig_matches(int n, double *h, const double *want, double tol)
{
    double wr[16], wi[16], got[32], ref[32];
    int ok;
    if (krill_hessenberg_eig(n, h, n, wr, wi) != 0) return 0;
    for (int i = 0; i < n; i++) {
        got[2 * i] = wr[i];
        got[2 * i + 1] = wi[i];
        ref[2 * i] = want[2 * i];
        ref[2 * i + 1] = want[2 * i + 1];
        if (wi[i] > 0.0 && !(i + 1 < n && wr[i + 1] == wr[i] && wi[i + 1] == -wi[i])) return 0;
    }
    qsort(got, (size_t)n, 2 * sizeof(double), cmp_complex);
    qsort(ref, (size_t)n, 2 * sizeof(double), cmp_complex);
    ok = 1;
    for (int i = 0; i < 2 * n; i++) ok = ok && fabs(got[i] - ref[i]) <= tol;
    return ok;
}

static void test_eig(void)
{
    /* companion matrix (Hessenberg) of (x-1)(x-2)(x-3)(x-4) = x^4 - 10x^3 + 35x^2 - 50x + 24 */
    double c[16] = {0}, r[16] = {0}, d[64] = {0};
    const double want_c[8] = {1, 0, 2, 0, 3, 0, 4, 0};
    const double want_r[8] = {1, 2, 1, -2, -3, 0.5, -3, -0.5};
    double want_d[16];
    c[0 + 3 * 4] = -24;
    c[1 + 3 * 4] = 50;
    c[2 + 3 * 4] = -35;
    c[3 + 3 * 4] = 10;
    for (int i = 1; i < 4; i++) c[i + (i - 1) * 4] = 1.0;
    CHECK(eig_matches(4, c, want_c, 1e-9));
    /* blocks [a b; -b a] (eigenvalues a +- ib) coupled by an upper entry */
    r[0] = 1;  r[1] = -2; r[4] = 2;  r[5] = 1;  r[8] = 0.7;
    r[10] = -3; r[11] = -0.5; r[14] = 0.5; r[15] = -3; r[13] = 0.3;
    CHECK(eig_matches(4, r, want_r, 1e-12));
    /* a repeated eigenvalue: the 8 x 8 tridiagonal of 2 on the diagonal, 1 beside it (the
       eigenvalues 2 + 2 cos(k pi / 9)), and a zero matrix */
    for (int i = 0; i < 8; i++) {
        d[i + 8 * i] = 2.0;
        if (i + 1 < 8) d[i + 1 + 8 * i] = d[i + 8 * (i + 1)] = 1.0;
        want_d[2 * i] = 2.0 + 2.0 * cos((i + 1) * 3.14159265358979323846 / 9.0);
        want_d[2 * i + 1] = 0.0;
    }
    CHECK(eig_matches(8, d, want_d, 1e-12));
    {
        double z[9] = {0}, wz[6] = {0};
        CHECK(eig_matches(3, z, wz, 0.0));
        double nan_h[4] = {1, NAN, 0, 1}, wr[2], wi[2];
        CHECK(krill_hessenberg_eig(2, nan_h, 2, wr, wi) != 0);
    }
    printf("hessenberg eigenvalues: companion, complex pairs, tridiagonal, zero, NaN refused\n");
}

static void test_leja(void)
{
    /* 1, 5, -4, 2 +- 3i, 0.5 */
    const double wr[6] = {1, 5, -4, 2, 2, 0.5}, wi[6] = {0, 0, 0, 3, -3, 0};
    double re[6], im[6];
    int used[6], n;
    n = krill_leja_order(6, wr, wi, 6, used, re, im);
    CHECK(n == 6);
    CHECK(re[0] == 5 && im[0] == 0);             /* largest modulus: |5| > |2+3i| = 3.6 */
    for (int i = 0; i < n; i++)
        if (im[i] > 0) CHECK(i + 1 < n && re[i + 1] == re[i] && im[i + 1] == -im[i]);
    /* each point (the first of a pair) maximizes the product of distances to those before */
    for (int i = 1; i < n; i++) {
        double best = -1.0, mine = 1.0;
        if (im[i] < 0) continue;
        for (int l = 0; l < i; l++) mine *= hypot(re[i] - re[l], im[i] - im[l]);
        for (int c = 0; c < 6; c++) {
            double prod = 1.0;
            int taken = 0;
            if (wi[c] < 0) continue;
            for (int l = 0; l < i; l++) taken |= re[l] == wr[c] && fabs(im[l]) == wi[c];
            if (taken) continue;
            for (int l = 0; l < i; l++) prod *= hypot(wr[c] - re[l], wi[c] - im[l]);
            if (prod > best) best = prod;
        }
        CHECK(mine >= best * (1 - 1e-12));
    }
    /* a pair cut by `want`: its first point, then nothing */
    n = krill_leja_order(6, wr, wi, 2, used, re, im);
    CHECK(n == 2 && re[0] == 5);
    n = krill_leja_order(2, wr, wi, 4, used, re, im);
    CHECK(n == 2);
    printf("leja order: first %g, pairs adjacent, products maximal\n", 5.0);
}

static void test_cholesky(void)
{
    double g[16], r[16], inv[16], kappa;
    /* G = X'X for X with columns (1,0,0,0), (1,1,0,0), (1,1,1,0), (1,1,1,1) */
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) g[i + 4 * j] = (i < j ? i : j) + 1.0;
    CHECK(krill_sstep_cholesky(4, g, 4, r, 4, inv, 1e-14, 1e7, &kappa) == 4);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i <= j; i++) {
            double sum = 0.0;
            for (int l = 0; l <= i; l++) sum += r[l + 4 * i] * r[l + 4 * j];
            CHECK(fabs(sum - g[i + 4 * j]) <= 1e-14 * g[j + 4 * j]);
        }
    CHECK(kappa > 1.0 && kappa < 100.0);
    /* column 2 = column 0 + column 1: cut there */
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) {
            const double x[3][2] = {{1, 0}, {0, 1}, {1, 1}};
            g[i + 4 * j] = x[i][0] * x[j][0] + x[i][1] * x[j][1];
        }
    CHECK(krill_sstep_cholesky(3, g, 4, r, 4, inv, 1e-14, 1e7, &kappa) == 2);
    /* a Hilbert Gram matrix (condition ~1e10 at 7 columns): cut by the estimate */
    {
        double h[49], rh[49], ih[49];
        int a;
        for (int j = 0; j < 7; j++)
            for (int i = 0; i < 7; i++) h[i + 7 * j] = 1.0 / (i + j + 1);
        a = krill_sstep_cholesky(7, h, 7, rh, 7, ih, 1e-14, 1e4, &kappa);
        CHECK(a >= 2 && a < 7 && kappa <= 1e4);
        printf("cholesky: exact, dependent column cut at 2, hilbert(7) cut at %d (kappa %.2e)\n",
               a, kappa);
    }
    g[0] = 0.0;
    CHECK(krill_sstep_cholesky(1, g, 4, r, 4, inv, 1e-14, 1e7, &kappa) == 0);
}

#endif

/* ---- whole solves ----------------------------------------------------------------------- */

typedef struct run {
    int iterations;
    krill_reason reason;
    double relres, estimate;
    krill_sstep_stats stats;
} run;

/* su_solve_run, and the s-step statistics of the solve */
static void solve(su_system *s, const krill_pc *pc, const krill_solver_opts *o, run *r)
{
    su_run base;
    su_solve_run(s, pc, o, &base);
    r->iterations = base.iterations;
    r->reason = base.reason;
    r->relres = base.relres;
    r->estimate = base.estimate;
    krill_sstep_last_stats(&r->stats);
}

static krill_solver_opts sstep_opts(int sstep, int restart, double rtol, int maxit)
{
    krill_solver_opts o = su_krylov_opts(KRILL_SOLVER_GMRES, KRILL_ORTHO_DCGS2, restart, rtol,
                                         maxit);
    o.sstep = sstep;
    return o;
}

typedef struct ortho_loss {
    double worst;
    int cycles;
} ortho_loss;

static void basis_hook(krill_ctx *ctx, const double *v, int64_t n, int k, void *user)
{
    ortho_loss *l = user;
    double *q = malloc((size_t)n * (size_t)k * sizeof(double) + 8), f = 0.0;
    CHECK_OK(krill_mem_download(ctx, q, v, (size_t)n * (size_t)k * sizeof(double)));
    for (int a = 0; a < k; a++)
        for (int b = 0; b <= a; b++) {
            double g = 0.0;
            for (int64_t i = 0; i < n; i++) g += q[(size_t)a * n + i] * q[(size_t)b * n + i];
            g = (a == b ? 1.0 : 0.0) - g;
            f += (a == b ? 1.0 : 2.0) * g * g;
        }
    if (sqrt(f) > l->worst) l->worst = sqrt(f);
    l->cycles++;
    free(q);
}

/* GMRES(restart) with DCGS2 and s-step GMRES with S = 2, 4, 8 on csr (owned) */
static void compare(krill_ctx *ctx, const char *name, krill_csr *csr, const char *pc_name,
                    int restart)
{
    static const int ss[] = {2, 4, 8};
    const double rtol = 1e-10;
    su_system s;
    krill_pc *pc = NULL;
    run ref, r;
    ortho_loss lref = {0, 0};
    su_system_make(&s, ctx, csr, NULL, 7);
    if (pc_name) CHECK_OK(krill_pc_create(s.a, pc_name, &pc));
    {
        krill_solver_opts o = sstep_opts(0, restart, rtol, 5000);
        krill_gmres_set_basis_hook(basis_hook, &lref);
        solve(&s, pc, &o, &ref);
        krill_gmres_set_basis_hook(NULL, NULL);
        CHECK(ref.reason == KRILL_CONVERGED_RTOL);
    }
    for (size_t i = 0; i < sizeof ss / sizeof ss[0]; i++) {
        krill_solver_opts o = sstep_opts(ss[i], restart, rtol, 5000);
        ortho_loss loss = {0, 0};
        krill_sstep_set_basis_hook(basis_hook, &loss);
        solve(&s, pc, &o, &r);
        krill_sstep_set_basis_hook(NULL, NULL);
        CHECK(r.reason == KRILL_CONVERGED_RTOL);
        CHECK(r.relres <= rtol);
        CHECK(r.iterations <= SSTEP_FACTOR * ref.iterations + ss[i]);
        /* the estimate tracks the true residual down to its floor (x's rounding, ~1e-13) */
        CHECK(fabs(r.estimate - r.relres) <= 1e-2 * r.relres + 2e-3 * rtol);
        CHECK(loss.cycles > 0 && loss.worst <= SSTEP_LOSS_MAX);
        CHECK(r.stats.spmvs == r.iterations + r.stats.discarded);
        if (loss.cycles > 1) CHECK(r.stats.newton == 1);   /* Ritz values after cycle 1 */
        printf("%-18s pc %-6s m %2d S %d: %4d it (gmres %4d, x%.2f), relres %.1e, est %.1e; "
               "||I-Q'Q|| %.1e (dcgs2 %.1e); blocks %d, cut %d, kappa %.1e, "
               "reortho %.1e%s\n", name, pc_name ? pc_name : "none", restart, ss[i],
               r.iterations, ref.iterations, (double)r.iterations / ref.iterations, r.relres,
               r.estimate, loss.worst, lref.worst, r.stats.blocks, r.stats.truncated,
               r.stats.max_kappa, r.stats.max_reortho,
               r.stats.newton ? ", newton" : "");
    }
    krill_pc_destroy(&pc);
    su_system_free(&s);
}

static void test_convergence(void)
{
    krill_ctx *ctx = test_ctx(2);
    compare(ctx, "convdiff3d:10,2", su_gen("convdiff3d:10,2"), NULL, 32);
    compare(ctx, "poisson3d:12", su_gen("poisson3d:12"), NULL, 32);
    compare(ctx, "convdiff3d:12,20", su_gen("convdiff3d:12,20"), "ilu0", 16);
    if (!tu_quick()) {
        compare(ctx, "convdiff3d:24", su_gen("convdiff3d:24"), NULL, 32);
        compare(ctx, "poisson3d:16", su_gen("poisson3d:16"), "jacobi", 24);
        compare(ctx, "elasticity3d:4,4,4", su_gen("elasticity3d:4,4,4"), "jacobi", 40);
        compare(ctx, "convdiff3d:12,20", su_gen("convdiff3d:12,20"), NULL, 64);
    }
    krill_ctx_destroy(&ctx);
}

/* restart not a multiple of S, S out of range, FGMRES, CG: refused with a message */
static void test_refusals(void)
{
    krill_ctx *ctx = test_ctx(1);
    su_system s;
    krill_solve_info info;
    krill_solver_opts o = sstep_opts(4, 30, 1e-8, 100);
    su_system_make(&s, ctx, su_gen("convdiff3d:5,1"), NULL, 3);
    CHECK_STATUS(su_solve(&s, NULL, &o, &info), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "restart = 30 is not a multiple of sstep = 4") != NULL);
    CHECK(strstr(krill_last_error(), "use restart 28 or 32") != NULL);
    CHECK(info.history == NULL);
    o.restart = 3;           /* S > restart: not a multiple either */
    CHECK_STATUS(su_solve(&s, NULL, &o, &info), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "(use restart 4)") != NULL);
    o = sstep_opts(-1, 30, 1e-8, 100);
    CHECK_STATUS(su_solve(&s, NULL, &o, &info), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "sstep = -1") != NULL);
    o = sstep_opts(KRILL_SSTEP_MAX + 1, 66, 1e-8, 100);
    CHECK_STATUS(su_solve(&s, NULL, &o, &info), KRILL_ERR_ARG);
    o = sstep_opts(2, 30, 1e-8, 100);
    o.solver = KRILL_SOLVER_FGMRES;
    CHECK_STATUS(su_solve(&s, NULL, &o, &info), KRILL_ERR_UNSUPPORTED);
    CHECK(strstr(krill_last_error(), "FGMRES") != NULL);
    o.solver = KRILL_SOLVER_CG;
    CHECK_STATUS(su_solve(&s, NULL, &o, &info), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "applies to GMRES only, not to cg") != NULL);
    /* the limits themselves are taken */
    o = sstep_opts(KRILL_SSTEP_MAX, KRILL_SSTEP_MAX, 1e-8, 100);
    CHECK_OK(su_solve(&s, NULL, &o, &info));
    krill_solve_info_free(&info);
    printf("refusals: restart %% S, S range, FGMRES, CG\n");
    su_system_free(&s);
    krill_ctx_destroy(&ctx);
}

static int stop_at_7(int it, double res, void *user)
{
    (void)res;
    *(int *)user = it;
    return it >= 7;
}

/* S = 1 is GMRES bit for bit; maxit inside a block; the monitor; lucky breakdown; scale */
static void test_edges(void)
{
    krill_ctx *ctx = test_ctx(2);
    su_system s;
    krill_solve_info info;
    krill_solver_opts o;
    int last = 0;
    su_system_make(&s, ctx, su_gen("convdiff3d:10,2"), NULL, 5);
    {
        double *x0 = malloc((size_t)s.n * sizeof(double) + 8);
        krill_solve_info i1;
        o = sstep_opts(0, 30, 1e-10, 0);
        CHECK_OK(su_solve(&s, NULL, &o, &info));
        CHECK_OK(krill_vec_download(s.x, x0));
        o.sstep = 1;
        CHECK_OK(su_solve(&s, NULL, &o, &i1));
        CHECK_OK(krill_vec_download(s.x, s.x_host));
        CHECK(info.iterations == i1.iterations);
        CHECK(memcmp(x0, s.x_host, (size_t)s.n * sizeof(double)) == 0);
        krill_solve_info_free(&info);
        krill_solve_info_free(&i1);
        free(x0);
    }
    o = sstep_opts(4, 32, 1e-12, 5);   /* maxit 5: a block of 4, then one of 1 */
    CHECK_OK(su_solve(&s, NULL, &o, &info));
    CHECK(info.reason == KRILL_DIVERGED_MAXIT && info.iterations == 5 && info.history_len == 6);
    for (int i = 1; i < info.history_len; i++) CHECK(info.history[i] <= info.history[i - 1]);
    krill_solve_info_free(&info);
    o = sstep_opts(4, 32, 1e-12, 0);
    o.monitor = stop_at_7;
    o.monitor_data = &last;
    CHECK_OK(su_solve(&s, NULL, &o, &info));   /* stops after the block of iteration 7 */
    CHECK(info.reason == KRILL_DIVERGED_MAXIT && info.iterations == 8 && last == 8);
    krill_solve_info_free(&info);
    su_system_free(&s);
    {   /* diag with 3 distinct values: the Krylov space is exhausted after 3 steps */
        double d[60];
        for (int i = 0; i < 60; i++) d[i] = 1.0 + (i % 3);
        o = sstep_opts(8, 32, 1e-12, 0);
        CHECK_OK(su_diagonal_solve(ctx, 60, d, &o, &info));
        CHECK(info.reason == KRILL_CONVERGED_RTOL && info.iterations <= 4);
        printf("lucky breakdown: diag(1, 2, 3 repeated) in %d iterations (S = 8)\n",
               info.iterations);
        krill_solve_info_free(&info);
        /* extreme but finite scale: diag(1e160 (1 .. 50)) */
        for (int i = 0; i < 50; i++) d[i] = 1e160 * (1.0 + i);
        o = sstep_opts(4, 32, 1e-10, 500);
        CHECK_OK(su_diagonal_solve(ctx, 50, d, &o, &info));
        CHECK(info.reason == KRILL_CONVERGED_RTOL);
        printf("scale 1e160: %s in %d iterations\n", krill_reason_string(info.reason),
               info.iterations);
        krill_solve_info_free(&info);
    }
    printf("edges: S = 1 is GMRES, maxit 5 with S = 4, monitor stop, lucky, scale\n");
    krill_ctx_destroy(&ctx);
}

/* reproducible mode: the same bits on 1 and 2 threads (n above the parallel threshold);
 * on the GPU, the CPU's bits */
static void test_repro(void)
{
    const char *pcs[] = {NULL, "jacobi"};
    krill_ctx *ctx[2];
    double *x[2];
    int it[2];
#ifdef SSTEP_TEST_GPU
    ctx[0] = tu_cpu_ctx(2);
    ctx[1] = test_ctx(1);
#else
    ctx[0] = tu_cpu_ctx(1);
    ctx[1] = tu_cpu_ctx(2);
#endif
    for (int p = 0; p < 2; p++) {
        for (int c = 0; c < 2; c++) {
            su_system s;
            krill_pc *pc = NULL;
            krill_solve_info info;
            krill_solver_opts o = sstep_opts(4, 32, 1e-10, 0);
            CHECK_OK(krill_ctx_set_repro(ctx[c], KRILL_REPRO_OZAKI, 0));
            su_system_make(&s, ctx[c], su_gen("convdiff3d:24,5"), NULL, 9);
            if (pcs[p]) CHECK_OK(krill_pc_create(s.a, pcs[p], &pc));
            CHECK_OK(su_solve(&s, pc, &o, &info));
            CHECK(info.reason == KRILL_CONVERGED_RTOL);
            it[c] = info.iterations;
            x[c] = malloc((size_t)s.n * sizeof(double) + 8);
            CHECK_OK(krill_vec_download(s.x, x[c]));
            if (c == 1) {
                CHECK(it[0] == it[1]);
                CHECK(memcmp(x[0], x[1], (size_t)s.n * sizeof(double)) == 0);
                printf("repro (%s, pc %s): %d iterations, %s bits\n", DEVICE,
                       pcs[p] ? pcs[p] : "none", it[1],
                       memcmp(x[0], x[1], (size_t)s.n * sizeof(double)) ? "DIFFERENT" : "same");
                free(x[0]);
                free(x[1]);
            }
            krill_solve_info_free(&info);
            krill_pc_destroy(&pc);
            su_system_free(&s);
        }
    }
    krill_ctx_destroy(&ctx[0]);
    krill_ctx_destroy(&ctx[1]);
}

static void test_faults(void)
{
    krill_ctx *ctx = test_ctx(2), *repro = test_ctx(2);
    krill_solver_opts o = sstep_opts(4, 16, 1e-8, 0);
    CHECK_OK(krill_ctx_set_repro(repro, KRILL_REPRO_OZAKI, 0));
    su_check_alloc_faults(ctx, "convdiff3d:5,1", 7, NULL, &o, 4);
    su_check_alloc_faults(ctx, "convdiff3d:5,1", 7, "ilu0", &o, 4);
    su_check_alloc_faults(repro, "convdiff3d:5,1", 9, NULL, &o, 4);
    printf("allocation faults: s-step GMRES plain, ilu0, reproducible\n");
    krill_ctx_destroy(&ctx);
    krill_ctx_destroy(&repro);
}

/* ---- testdata ------------------------------------------------------------------------------ */

typedef struct walk {
    krill_ctx *ctx;
    int tested, compared, failed;
    long sum_gmres, sum_sstep;
    double ratio[256];       /* s-step / GMRES iterations, per matrix both converged on */
    int n_ratio;
} walk;

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void testdata_one(const krill_csr *a, const char *name, void *user)
{
    walk *wk = user;
    const int maxit = 640;
    krill_csr *copy = NULL;
    su_system s;
    run r[2];
    if (krill_csr_copy(a, &copy) != KRILL_OK) exit(1);
    su_system_make(&s, wk->ctx, copy, NULL, 5);
    for (int i = 0; i < 2; i++) {
        krill_solver_opts o = sstep_opts(i ? 4 : 0, 32, 1e-8,
                                         i ? (int)(SSTEP_FACTOR * maxit) + 4 : maxit);
        solve(&s, NULL, &o, &r[i]);
    }
    wk->tested++;
    printf("%-36s n %7d: gmres %4d it (%-16s relres %.1e), sstep:4 %4d it (%-16s relres "
           "%.1e), cut %d, kappa %.1e\n", name, (int)a->n_rows, r[0].iterations,
           krill_reason_string(r[0].reason), r[0].relres, r[1].iterations,
           krill_reason_string(r[1].reason), r[1].relres, r[1].stats.truncated,
           r[1].stats.max_kappa);
    if (r[0].reason > 0 && r[0].iterations > 0) {
        wk->compared++;
        if (r[1].reason > 0) {
            wk->sum_gmres += r[0].iterations;
            wk->sum_sstep += r[1].iterations;
            if (wk->n_ratio < 256)
                wk->ratio[wk->n_ratio++] = (double)r[1].iterations / r[0].iterations;
            CHECK(r[1].relres <= 1e-8 * 1.01);
        } else {
            wk->failed++;
        }
    }
    su_system_free(&s);
}

static void test_testdata(void)
{
    walk wk = {test_ctx(2), 0, 0, 0, 0, 0, {0}, 0};
    double median;
    if (tu_for_each_square_mtx(testdata_one, &wk) < 0) {
        krill_ctx_destroy(&wk.ctx);
        tu_skip("testdata absent: no matrices to compare GMRES and s-step GMRES on");
    }
    printf("testdata: %d matrices; GMRES(32) converged on %d; s-step (S = 4) converged on %d "
           "of them, %ld iterations against GMRES's %ld (x%.3f)\n", wk.tested, wk.compared,
           wk.compared - wk.failed, wk.sum_sstep, wk.sum_gmres,
           wk.sum_gmres ? (double)wk.sum_sstep / wk.sum_gmres : 0.0);
    /* measured (kappa limit 1e5): the shared set's 34 of 34, 1.022x in all; s-step may lose a
     * hard one in 20. The badly scaled fs_183_* and pores_1 take 1.6-2.7x GMRES's count: in
     * the repository's own few matrices (a clean checkout: 6 converge) they make the sum
     * 1.43x, so the sum's bound holds for the whole set, the median's and the worst's for
     * either */
    qsort(wk.ratio, (size_t)wk.n_ratio, sizeof *wk.ratio, by_value);
    median = wk.n_ratio ? wk.ratio[wk.n_ratio / 2] : 1.0;
    printf("per matrix: median %.3f, worst %.3f\n", median,
           wk.n_ratio ? wk.ratio[wk.n_ratio - 1] : 1.0);
    CHECK(wk.failed <= wk.compared / 20);
    CHECK(median <= 1.10);
    CHECK(wk.n_ratio == 0 || wk.ratio[wk.n_ratio - 1] <= 3.0);
    CHECK(wk.tested < 50 || wk.sum_sstep <= 1.10 * wk.sum_gmres);
    CHECK(wk.tested >= tu_testdata_expect(50, 10));
    krill_ctx_destroy(&wk.ctx);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "testdata") == 0) {
        TU_STEP(test_testdata());
        return tu_finish("test_sstep testdata");
    }
#ifndef SSTEP_TEST_GPU
    TU_STEP(test_eig());
    TU_STEP(test_leja());
    TU_STEP(test_cholesky());
#endif
    TU_STEP(test_convergence());
    TU_STEP(test_refusals());
    TU_STEP(test_edges());
    TU_STEP(test_repro());
    TU_STEP(test_faults());
    return tu_finish("test_sstep");
}
