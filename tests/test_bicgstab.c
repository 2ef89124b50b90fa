/* BiCGStab on the CPU: nonsymmetric generated and real systems with a known solution (true
 * residual by the reference SpMV, error within the condition-number bound by a dense LU),
 * with every registered preconditioner that builds, and one that converges only through the
 * restart after a near-breakdown; the residual history against a plain
 * textbook BiCGStab written here on the host; the three breakdowns (r0'v = 0, omega = 0,
 * r0'r = 0) on hand-made systems whose iterates are known in closed form; a breakdown that
 * meets the tolerance; the half-step convergence; b = 0, maxit, the monitor, atol, NaN,
 * threads, the time breakdown, and allocation faults. */
#include "core/core_impl.h"
#include "precond/precond_impl.h"
#include "solver_util.h"

static krill_solver_opts bicgstab_opts(double rtol)
{
    krill_solver_opts o;
    krill_solver_opts_default(&o);
    o.solver = KRILL_SOLVER_BICGSTAB;
    o.rtol = rtol;
    return o;
}

static double ref_dot(const double *x, const double *y, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* Textbook right-preconditioned BiCGStab (x0 = 0, M^{-1} = diag(dinv), or none when dinv is
 * NULL) with the solver's stopping rule on the recurrence residual; hist[k] = ||r_k|| (||s||
 * when the half step meets tol). Returns the iterations (maxit + 1 when not converged). */
static int ref_bicgstab(const krill_csr *a, const double *dinv, const double *b, double tol,
                        int maxit, double *hist)
{
    int64_t n = a->n_rows;
    size_t bytes = ((size_t)n + 1) * sizeof(double);
    double *r = malloc(bytes), *r0 = malloc(bytes), *p = malloc(bytes), *v = malloc(bytes);
    double *t = malloc(bytes), *ph = malloc(bytes), *sh = malloc(bytes);
    double rho, alpha, omega, beta, rho_new;
    int k, its = maxit + 1;
    if (!r || !r0 || !p || !v || !t || !ph || !sh) exit(1);
    memcpy(r, b, (size_t)n * sizeof(double));
    memcpy(r0, b, (size_t)n * sizeof(double));
    memcpy(p, b, (size_t)n * sizeof(double));
    rho = ref_dot(r0, r, n);
    hist[0] = sqrt(ref_dot(r, r, n));
    for (k = 1; k <= maxit; k++) {
        for (int64_t i = 0; i < n; i++) ph[i] = dinv ? dinv[i] * p[i] : p[i];
        krill_csr_spmv_ref(a, 1.0, ph, 0.0, v);
        alpha = rho / ref_dot(r0, v, n);
        for (int64_t i = 0; i < n; i++) r[i] -= alpha * v[i];        /* r = s */
        hist[k] = sqrt(ref_dot(r, r, n));
        if (hist[k] <= tol) {
            its = k;
            break;
        }
        for (int64_t i = 0; i < n; i++) sh[i] = dinv ? dinv[i] * r[i] : r[i];
        krill_csr_spmv_ref(a, 1.0, sh, 0.0, t);
        omega = ref_dot(t, r, n) / ref_dot(t, t, n);
        for (int64_t i = 0; i < n; i++) r[i] -= omega * t[i];
        hist[k] = sqrt(ref_dot(r, r, n));
        if (hist[k] <= tol) {
            its = k;
            break;
        }
        rho_new = ref_dot(r0, r, n);
        beta = (rho_new / rho) * (alpha / omega);
        rho = rho_new;
        for (int64_t i = 0; i < n; i++) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    }
    free(r);
    free(r0);
    free(p);
    free(v);
    free(t);
    free(ph);
    free(sh);
    return its;
}

/* 1 / a_ii of a matrix with a nonzero diagonal */
static double *inverse_diagonal(const krill_csr *a)
{
    double *d = calloc((size_t)a->n_rows + 1, sizeof(double));
    if (!d) exit(1);
    for (int64_t i = 0; i < a->n_rows; i++)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
            if (a->col[k] == i) d[i] = 1.0 / a->val[k];
    return d;
}

/* Solve csr (owned) with each preconditioner of the NULL-terminated list `pcs` (NULL: once,
 * without): converged, true relres <= rtol, error <= 2 cond relres (cond once per matrix),
 * and the history: iterations + 1 entries, [0] = ||b||, the last <= tol. A preconditioner
 * that does not build on this matrix says so and is skipped. x_ones: x_true = 1, b = A 1
 * (else x_true is random). */
static void check_system(krill_ctx *ctx, const char *name, krill_csr *csr,
                         const char *const *pcs, double rtol, int x_ones)
{
    su_system s;
    double cond;
    su_system_make(&s, ctx, csr, NULL, 41);
    if (x_ones) {
        for (int64_t i = 0; i < s.n; i++) s.x_true[i] = 1.0;
        krill_csr_spmv_ref(s.csr, 1.0, s.x_true, 0.0, s.b_host);
        CHECK_OK(krill_vec_upload(s.b, s.b_host));
    }
    cond = su_cond_general(s.csr);
    CHECK(cond >= 1.0);
    for (int k = 0; k == 0 || (pcs && pcs[k]); k++) {
        const char *pc_name = pcs ? pcs[k] : NULL;
        krill_pc *pc = NULL;
        krill_solve_info info;
        krill_solver_opts o = bicgstab_opts(rtol);
        double relres, err;
        if (pc_name && krill_pc_create(s.a, pc_name, &pc) != KRILL_OK) {
            printf("bicgstab %-18s pc %-9s: not built here (%s)\n", name, pc_name,
                   krill_last_error());
            continue;
        }
        CHECK_OK(su_solve(&s, pc, &o, &info));
        CHECK(info.reason == KRILL_CONVERGED_RTOL);
        err = su_error(&s);
        relres = su_true_relres(s.csr, s.x_host, s.b_host);
        CHECK(relres <= rtol);
        CHECK_CLOSE(info.relres, relres, 1e-3 * relres + 1e-15);
        CHECK(err <= 2.0 * cond * relres + 1e-14);
        CHECK(info.history_len == info.iterations + 1);
        CHECK_CLOSE(info.history[0], su_norm(s.b_host, s.n), 1e-12);
        CHECK(info.history[info.iterations] <= rtol * info.bnorm);
        CHECK(info.times.spmv > 0.0 && info.times.ortho > 0.0);
        CHECK(krill_pc_is_identity(pc) || info.times.precond > 0.0);
        CHECK(info.times.setup + info.times.spmv + info.times.precond + info.times.ortho +
                  info.times.other <= info.times.total * (1.0 + 1e-9) + 1e-9);
        printf("bicgstab %-18s pc %-9s: %4d iterations, relres %.2e, error %.2e, cond %.3g\n",
               name, pc_name ? pc_name : "(null)", info.iterations, relres, err, cond);
        krill_solve_info_free(&info);
        krill_pc_destroy(&pc);
    }
    su_system_free(&s);
}

static void test_systems(krill_ctx *ctx)
{
    const char *const *all = krill_pc_names();
    const char *const jacobi[] = {"jacobi", NULL};
    check_system(ctx, "convdiff3d:10,2", su_gen("convdiff3d:10,2"), all, 1e-10, 0);
    check_system(ctx, "convdiff3d:8,20", su_gen("convdiff3d:8,20"), jacobi, 1e-9, 0);
    if (!tu_testdata()) {
        printf("testdata folder absent: the real matrices are skipped\n");
        return;
    }
    check_system(ctx, "fs_183_6", su_testdata("mtx/fs_183_6.mtx"), all, 1e-10, 0);
    check_system(ctx, "saylr1", su_testdata("mtx/saylr1.mtx"), jacobi, 1e-8, 0);
    check_system(ctx, "cage5", su_testdata("mtx/cage5.mtx"), NULL, 1e-10, 0);
    /* with b = A 1, r0'r falls to roundoff level after about 200 iterations: this converges
     * only through the restart (stopping there reported a breakdown at relres 4e-5) */
    check_system(ctx, "e05r0000 (x = 1)", su_testdata("mtx/e05r0000.mtx"), NULL, 1e-8, 1);
}

/* krill's history against the host reference: the same number of iterations (within 1),
 * and the first iterations' residuals equal to rounding (the two differ only in the order
 * of their sums). */
static void check_reference(krill_ctx *ctx, const char *spec, int jacobi)
{
    su_system s;
    krill_pc *pc = NULL;
    krill_solve_info info;
    krill_solver_opts o = bicgstab_opts(1e-10);
    double *hist, *dinv = NULL;
    int its, compared;
    su_system_make(&s, ctx, su_gen(spec), NULL, 42);
    if (jacobi) {
        CHECK_OK(krill_pc_create(s.a, "jacobi", &pc));
        dinv = inverse_diagonal(s.csr);
    }
    hist = calloc((size_t)o.maxit + 2, sizeof(double));
    its = ref_bicgstab(s.csr, dinv, s.b_host, o.rtol * su_norm(s.b_host, s.n), o.maxit, hist);
    CHECK_OK(su_solve(&s, pc, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_RTOL);
    CHECK(abs(info.iterations - its) <= 1);
    compared = its < 10 ? its : 10;
    for (int k = 0; k <= compared && k <= info.iterations; k++)
        CHECK_CLOSE(info.history[k] / hist[k], 1.0, 1e-7);
    printf("bicgstab %-18s pc %-9s: %4d iterations, reference %d\n", spec,
           jacobi ? "jacobi" : "none", info.iterations, its);
    krill_solve_info_free(&info);
    krill_pc_destroy(&pc);
    free(hist);
    free(dinv);
    su_system_free(&s);
}

/* Solve the n x n system given by dense rows a (row-major) with b from x = 0; returns
 * the solution in xh. */
static void solve_dense(krill_ctx *ctx, int n, const double *a, const double *b,
                        const krill_solver_opts *o, krill_solve_info *info, double *xh)
{
    int32_t rows[16], cols[16];
    double vals[16];
    int nnz = 0;
    krill_csr *csr = NULL;
    krill_mat *m = NULL;
    krill_vec *bv = NULL, *xv = NULL;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (a[i * n + j] != 0.0) {
                rows[nnz] = i;
                cols[nnz] = j;
                vals[nnz++] = a[i * n + j];
            }
    CHECK_OK(krill_csr_from_triplets(n, n, nnz, rows, cols, vals, &csr));
    CHECK_OK(krill_mat_create(ctx, csr, NULL, &m));
    CHECK_OK(krill_vec_create(ctx, n, &bv));
    CHECK_OK(krill_vec_create(ctx, n, &xv));
    CHECK_OK(krill_vec_upload(bv, b));
    CHECK_OK(krill_vec_fill(xv, 0.0));
    CHECK_OK(krill_solve(m, NULL, bv, xv, o, info));
    CHECK_OK(krill_vec_download(xv, xh));
    krill_vec_destroy(&bv);
    krill_vec_destroy(&xv);
    krill_mat_destroy(&m);
    krill_csr_destroy(&csr);
}

/* Breakdowns, each at iteration 1, with the iterates worked out by hand (r0 = p = b):
 * - A = [[0, 1], [-1, 0]] (skew): r0'A r0 = 0 for every b: sigma = 0, x stays 0;
 * - A = [[1,0,0],[1,0,1],[0,-1,0]], b = e1: alpha = 1, s = (0,-1,0), t = A s = (0,0,1),
 *   t's = 0: omega = 0; x takes the half step x = e1, ||r|| = ||s|| = 1;
 * - A = [[2,1,-1],[1,3,0],[1,0,1]], b = e1: alpha = 1/2, s = (0,-1/2,-1/2), t = (0,-3/2,-1/2),
 *   omega = 2/5, x = (1/2,-1/5,-1/5), r = (0,1/10,-3/10) is orthogonal to r0 = e1: rho = 0
 *   with ||r|| = sqrt(1/10); with rtol 0.5 the same iteration converges instead. */
static void test_breakdown(krill_ctx *ctx)
{
    const double skew[4] = {0, 1, -1, 0}, b2[2] = {1.0, 2.0};
    const double omega0[9] = {1, 0, 0, 1, 0, 1, 0, -1, 0};
    const double rho0[9] = {2, 1, -1, 1, 3, 0, 1, 0, 1};
    const double e1[3] = {1, 0, 0};
    double xh[3];
    krill_solve_info info;
    krill_solver_opts o = bicgstab_opts(1e-8);

    solve_dense(ctx, 2, skew, b2, &o, &info, xh);
    CHECK(info.reason == KRILL_DIVERGED_BREAKDOWN && info.iterations == 1);
    CHECK(xh[0] == 0.0 && xh[1] == 0.0);
    CHECK_CLOSE(info.relres, 1.0, 1e-15);
    CHECK(info.history_len == 2 && info.history[1] == info.history[0]);
    krill_solve_info_free(&info);

    solve_dense(ctx, 3, omega0, e1, &o, &info, xh);
    CHECK(info.reason == KRILL_DIVERGED_BREAKDOWN && info.iterations == 1);
    CHECK_CLOSE(xh[0], 1.0, 1e-15);
    CHECK(xh[1] == 0.0 && xh[2] == 0.0);
    CHECK_CLOSE(info.relres, 1.0, 1e-15);
    CHECK_CLOSE(info.history[1], 1.0, 1e-15);
    krill_solve_info_free(&info);

    solve_dense(ctx, 3, rho0, e1, &o, &info, xh);
    CHECK(info.reason == KRILL_DIVERGED_BREAKDOWN && info.iterations == 1);
    CHECK_CLOSE(xh[0], 0.5, 1e-15);
    CHECK_CLOSE(xh[1], -0.2, 1e-15);
    CHECK_CLOSE(xh[2], -0.2, 1e-15);
    CHECK_CLOSE(info.relres, sqrt(0.1), 1e-14);
    CHECK_CLOSE(info.history[1], sqrt(0.1), 1e-14);
    krill_solve_info_free(&info);

    o.rtol = 0.5;   /* ||r|| = 0.316 meets it: converged, not a breakdown */
    solve_dense(ctx, 3, rho0, e1, &o, &info, xh);
    CHECK(info.reason == KRILL_CONVERGED_RTOL && info.iterations == 1);
    CHECK_CLOSE(info.relres, sqrt(0.1), 1e-14);
    krill_solve_info_free(&info);
}

/* A = 2 I: the half step solves it (s = 0) in iteration 1; x = b / 2. Entries of 1e308
 * overflow A p: NaN/Inf is a reason at iteration 1 and x stays finite. */
static void test_half_step_and_nan(krill_ctx *ctx)
{
    const double twice[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2}, b[3] = {1.0, -4.0, 0.5};
    const double huge[9] = {1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308};
    double xh[3];
    krill_solve_info info;
    krill_solver_opts o = bicgstab_opts(1e-12);
    solve_dense(ctx, 3, twice, b, &o, &info, xh);
    CHECK(info.reason == KRILL_CONVERGED_RTOL && info.iterations == 1);
    CHECK(info.history[1] == 0.0);
    for (int i = 0; i < 3; i++) CHECK(xh[i] == b[i] / 2.0);
    krill_solve_info_free(&info);

    solve_dense(ctx, 3, huge, b, &o, &info, xh);
    CHECK(info.reason == KRILL_DIVERGED_NAN && info.iterations == 1);
    CHECK(isfinite(xh[0]) && isfinite(xh[1]) && isfinite(xh[2]));
    krill_solve_info_free(&info);
}

static void test_edge_cases(krill_ctx *ctx)
{
    su_system s;
    krill_solve_info info;
    krill_solver_opts o = bicgstab_opts(1e-10);
    double *zeros;
    su_system_make(&s, ctx, su_gen("convdiff3d:8,1"), NULL, 43);
    zeros = calloc((size_t)s.n, sizeof(double));

    /* b = 0 */
    CHECK_OK(krill_vec_upload(s.b, zeros));
    CHECK_OK(krill_vec_fill(s.x, -2.0));
    CHECK_OK(krill_solve(s.a, NULL, s.b, s.x, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_ZERO_RHS && info.iterations == 0);
    CHECK(info.history_len == 1);
    CHECK_OK(krill_vec_download(s.x, s.x_host));
    CHECK(su_norm(s.x_host, s.n) == 0.0);
    krill_solve_info_free(&info);
    CHECK_OK(krill_vec_upload(s.b, s.b_host));

    /* maxit: exactly maxit iterations, the true residual reported */
    for (int maxit = 0; maxit <= 6; maxit += 3) {
        o.maxit = maxit;
        CHECK_OK(su_solve(&s, NULL, &o, &info));
        CHECK(info.reason == KRILL_DIVERGED_MAXIT && info.iterations == maxit);
        CHECK(info.history_len == maxit + 1);
        CHECK_OK(krill_vec_download(s.x, s.x_host));
        CHECK_CLOSE(info.relres, su_true_relres(s.csr, s.x_host, s.b_host), 1e-8);
        CHECK(maxit == 0 ? info.relres == 1.0 : info.relres < 1.0);
        krill_solve_info_free(&info);
    }
    o.maxit = 10000;

    /* the monitor: once per iteration, in order, with the history's value; nonzero stops */
    su_check_monitor(&s, &o, 3);

    /* atol alone */
    o.rtol = 0.0;
    o.atol = 1e-7 * su_norm(s.b_host, s.n);
    CHECK_OK(su_solve(&s, NULL, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_ATOL && info.resnorm <= o.atol);
    krill_solve_info_free(&info);
    o = bicgstab_opts(1e-10);

    /* already converged at the start: 0 iterations */
    CHECK_OK(krill_vec_upload(s.x, s.x_true));
    o.rtol = 1e-6;
    CHECK_OK(krill_solve(s.a, NULL, s.b, s.x, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_RTOL && info.iterations == 0);
    krill_solve_info_free(&info);
    o.rtol = 1e-10;

    /* NaN in b: bad input */
    s.b_host[0] = NAN;
    CHECK_OK(krill_vec_upload(s.b, s.b_host));
    CHECK_STATUS(su_solve(&s, NULL, &o, &info), KRILL_ERR_NUMERIC);
    CHECK(info.reason == KRILL_DIVERGED_NAN && info.history == NULL);

    free(zeros);
    su_system_free(&s);
}

/* 1 and 2 threads: the same iterations. */
static void test_threads(void)
{
    int its[2];
    for (int t = 1; t <= 2; t++) {
        krill_ctx *ctx = tu_cpu_ctx(t);
        su_system s;
        krill_solve_info info;
        krill_solver_opts o = bicgstab_opts(1e-9);
        su_system_make(&s, ctx, su_gen("convdiff3d:24,1"), NULL, 44);
        CHECK_OK(su_solve(&s, NULL, &o, &info));
        CHECK(info.reason == KRILL_CONVERGED_RTOL);
        its[t - 1] = info.iterations;
        krill_solve_info_free(&info);
        su_system_free(&s);
        krill_ctx_destroy(&ctx);
    }
    CHECK(its[0] == its[1]);
}

/* The k-th allocation of a solve fails, for every k: a clean error, no leak (ASan). */
static void test_faults(krill_ctx *ctx, const char *pc_name)
{
    krill_solver_opts o = bicgstab_opts(1e-8);
    su_check_alloc_faults(ctx, "convdiff3d:6,1", 45, pc_name, &o, 5);
}

int main(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    test_systems(ctx);
    check_reference(ctx, "convdiff3d:10,2", 0);
    check_reference(ctx, "convdiff3d:10,2", 1);
    check_reference(ctx, "convdiff3d:12,20", 1);
    test_breakdown(ctx);
    test_half_step_and_nan(ctx);
    test_edge_cases(ctx);
    test_threads();
    test_faults(ctx, NULL);
    test_faults(ctx, "jacobi");
    krill_ctx_destroy(&ctx);
    return tu_finish("test_bicgstab");
}
