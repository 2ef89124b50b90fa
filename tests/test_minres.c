/* MINRES on the CPU: the stokes2d generator's structure; convergence on the generated
 * saddle-point system (also singular, C = 0, with a consistent b) and on the symmetric
 * indefinite matrices of testdata (skipped with a message when absent), checked by the
 * reference SpMV; Jacobi on an indefinite matrix with a positive diagonal, and on its
 * negation (a negative definite M, used as -M); an indefinite M refused; maxit, the monitor;
 * the reproducible mode bit for bit on 1 and 2 threads; allocation faults through
 * krill_solve. SciPy's iteration counts: tests/minres_scipy.py (test_minres_scipy). */
#include <string.h>

#include "core/core_impl.h"
#include "solver_util.h"

static krill_solver_opts minres_opts(double rtol)
{
    krill_solver_opts o;
    krill_solver_opts_default(&o);
    o.solver = KRILL_SOLVER_MINRES;
    o.rtol = rtol;
    o.maxit = 20000;
    return o;
}

/* The value of entry (i, j), 0 when not stored. */
static double entry(const krill_csr *a, int32_t i, int32_t j)
{
    for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
        if (a->col[p] == j) return a->val[p];
    return 0.0;
}

static void test_generator(void)
{
    krill_csr *a = NULL;
    for (int K = 2; K <= 6; K++) {
        char spec[32];
        int64_t nu = (int64_t)(K - 1) * K, np = (int64_t)K * K, n = 3 * np - 2 * K;
        double sum = 0.0;
        snprintf(spec, sizeof spec, "stokes2d:%d", K);
        a = su_gen(spec);
        CHECK(a->n_rows == n && a->n_cols == n && a->row_ptr[n] == a->nnz);
        CHECK_OK(krill_csr_check(a, spec));
        CHECK(krill_csr_is_symmetric(a));
        for (int64_t i = 0; i < n; i++) {
            double d = entry(a, (int32_t)i, (int32_t)i);
            CHECK(i < 2 * nu ? d == 4.0 : d == -0.01);
        }
        /* B' 1 = 0: each velocity row's pressure entries sum to zero (the gradient of a
         * constant) */
        for (int64_t i = 0; i < 2 * nu; i++)
            for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
                if (a->col[p] >= 2 * nu) sum += a->val[p];
        CHECK(sum == 0.0);
        krill_csr_destroy(&a);
    }
    a = su_gen("stokes2d:3,0");         /* C = 0: no diagonal in the pressure block */
    CHECK(a->n_rows == 21 && entry(a, 20, 20) == 0.0 && krill_csr_is_symmetric(a));
    krill_csr_destroy(&a);
    CHECK_STATUS(krill_gen("stokes2d:1", &a), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "K >= 2") != NULL);
}

/* Solve and check: converged, the true residual by the reference SpMV, the history (its
 * estimates never increase without M), the time breakdown. Returns the iterations. */
static int check_solve(su_system *s, const krill_pc *pc, const char *name)
{
    krill_solve_info info;
    krill_solver_opts o = minres_opts(1e-8);
    double relres;
    int its;
    CHECK_OK(su_solve(s, pc, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_RTOL);
    CHECK_OK(krill_vec_download(s->x, s->x_host));
    relres = su_true_relres(s->csr, s->x_host, s->b_host);
    CHECK(relres <= o.rtol);
    CHECK_CLOSE(info.relres, relres, 1e-3);
    CHECK(info.history_len == info.iterations + 1);
    CHECK_CLOSE(info.history[0], su_norm(s->b_host, s->n), 1e-12);
    for (int k = 1; k < info.history_len && !pc; k++)
        CHECK(info.history[k] <= info.history[k - 1] * (1.0 + 1e-12));
    CHECK(info.times.spmv > 0.0 && info.times.ortho > 0.0);
    CHECK(info.times.setup + info.times.spmv + info.times.precond + info.times.ortho +
              info.times.other <= info.times.total * (1.0 + 1e-9) + 1e-9);
    printf("minres %-28s pc %-6s: %5d iterations, relres %.2e, error %.2e\n", name,
           pc ? "jacobi" : "none", info.iterations, relres, su_error(s));
    its = info.iterations;
    krill_solve_info_free(&info);
    return its;
}

static void test_converges(krill_ctx *ctx)
{
    static const char *const specs[] = { "stokes2d:10", "stokes2d:24", "stokes2d:12,0", NULL };
    /* the symmetric indefinite (KKT) matrices of testdata's manifest; MINRES needs 12969,
     * 3862 iterations (SciPy 12457, 3862: tests/minres_scipy.py); hangGlider_2 converges
     * within 20000 in neither */
    static const char *const files[] = { "mtx/tumorAntiAngiogenesis_2.mtx",
                                         "mtx/reorientation_1.mtx", NULL };
    for (int k = 0; specs[k]; k++) {
        su_system s;
        su_system_make(&s, ctx, su_gen(specs[k]), NULL, 7);
        check_solve(&s, NULL, specs[k]);
        su_system_free(&s);
    }
    for (int k = 0; files[k]; k++) {
        su_system s;
        if (!tu_testdata_has(files[k])) {
            printf("minres %s: absent from testdata, skipped\n", files[k]);
            continue;
        }
        su_system_make(&s, ctx, su_testdata(files[k]), NULL, 7);
        check_solve(&s, NULL, files[k] + 4);
        su_system_free(&s);
    }
}

/* sign (poisson3d:K - shift I): the eigenvalues of poisson3d:K lie in 6 -+ 6 cos(pi/(K+1))
 * (0.36 .. 11.64 for K = 8), so a shift between them makes it indefinite, with the positive
 * diagonal 6 - shift. */
static krill_csr *shifted_laplacian(const char *spec, double shift, double sign)
{
    krill_csr *a = su_gen(spec);
    for (int32_t i = 0; i < a->n_rows; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            a->val[p] = sign * (a->col[p] == i ? a->val[p] - shift : a->val[p]);
    return a;
}

/* Jacobi is SPD on the shifted Laplacian (diagonal 4) and negative definite on its
 * negation, which MINRES uses as -M: the same iterations. */
static void test_jacobi(krill_ctx *ctx)
{
    int its[2];
    for (int k = 0; k < 2; k++) {
        su_system s;
        krill_pc *pc = NULL;
        su_system_make(&s, ctx, shifted_laplacian("poisson3d:8", 2.0, k ? -1.0 : 1.0), NULL, 9);
        CHECK_OK(krill_pc_create(s.a, "jacobi", &pc));
        its[k] = check_solve(&s, pc, k ? "-(poisson3d:8 - 2I)" : "poisson3d:8 - 2I");
        krill_pc_destroy(&pc);
        su_system_free(&s);
    }
    CHECK(its[0] == its[1]);
}

/* diag(1, -1) with Jacobi (M = diag(1, -1), indefinite) and b = (1, 1): r'M^{-1}r = 0 at
 * the start; the monitor, maxit. */
static void test_edge_cases(krill_ctx *ctx)
{
    const int32_t idx[2] = { 0, 1 };
    const double d[2] = { 1.0, -1.0 }, ones[2] = { 1.0, 1.0 };
    krill_csr *csr = NULL;
    krill_mat *a = NULL;
    krill_pc *pc = NULL;
    krill_vec *b = NULL, *x = NULL;
    krill_solve_info info;
    krill_solver_opts o = minres_opts(1e-8);
    su_monitor mon = { 0, 0, 1, 3 };
    su_system s;
    CHECK_OK(krill_csr_from_triplets(2, 2, 2, idx, idx, d, &csr));
    CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
    CHECK_OK(krill_pc_create(a, "jacobi", &pc));
    CHECK_OK(krill_vec_create(ctx, 2, &b));
    CHECK_OK(krill_vec_create(ctx, 2, &x));
    CHECK_OK(krill_vec_upload(b, ones));
    CHECK_OK(krill_vec_fill(x, 0.0));
    CHECK_OK(krill_solve(a, pc, b, x, &o, &info));
    CHECK(info.reason == KRILL_DIVERGED_INDEFINITE && info.iterations == 0);
    krill_solve_info_free(&info);
    CHECK_OK(krill_solve(a, NULL, b, x, &o, &info));        /* without M: 2 iterations */
    CHECK(info.reason == KRILL_CONVERGED_RTOL && info.iterations <= 2);
    krill_solve_info_free(&info);
    krill_pc_destroy(&pc);
    krill_vec_destroy(&b);
    krill_vec_destroy(&x);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);

    su_system_make(&s, ctx, su_gen("stokes2d:8"), NULL, 5);
    o.monitor = su_monitor_fn;
    o.monitor_data = &mon;
    CHECK_OK(su_solve(&s, NULL, &o, &info));
    CHECK(info.reason == KRILL_DIVERGED_MAXIT && info.iterations == 3 && mon.calls == 3);
    CHECK(mon.in_order);
    krill_solve_info_free(&info);
    o.monitor = NULL;
    o.maxit = 5;
    CHECK_OK(su_solve(&s, NULL, &o, &info));
    CHECK(info.reason == KRILL_DIVERGED_MAXIT && info.iterations == 5 && info.history_len == 6);
    CHECK_OK(krill_vec_download(s.x, s.x_host));
    CHECK_CLOSE(info.relres, su_true_relres(s.csr, s.x_host, s.b_host), 1e-10);
    krill_solve_info_free(&info);
    su_system_free(&s);
}

/* Reproducible mode: 1 and 2 threads give the same x and history, bit for bit, at sizes
 * where every loop runs in parallel (n >= 8192), over the first 150 iterations. */
static void test_repro_threads(void)
{
    for (int pcase = 0; pcase < 2; pcase++) {
        double *x[2] = { NULL, NULL }, *hist[2] = { NULL, NULL };
        int len[2] = { 0, 0 }, its[2] = { 0, 0 };
        int64_t n = 0;
        for (int t = 1; t <= 2; t++) {
            krill_ctx *ctx = tu_cpu_ctx(t);
            su_system s;
            krill_pc *pc = NULL;
            krill_solve_info info;
            krill_solver_opts o = minres_opts(1e-8);
            o.maxit = 150;
            CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, 0));
            su_system_make(&s, ctx, pcase ? shifted_laplacian("poisson3d:21", 2.0, 1.0)
                                          : su_gen("stokes2d:56"), NULL, 11);
            if (pcase) CHECK_OK(krill_pc_create(s.a, "jacobi", &pc));
            CHECK_OK(su_solve(&s, pc, &o, &info));
            CHECK(info.reason == KRILL_DIVERGED_MAXIT);
            CHECK_OK(krill_vec_download(s.x, s.x_host));
            n = s.n;
            x[t - 1] = malloc((size_t)n * sizeof(double));
            hist[t - 1] = malloc((size_t)info.history_len * sizeof(double));
            memcpy(x[t - 1], s.x_host, (size_t)n * sizeof(double));
            memcpy(hist[t - 1], info.history, (size_t)info.history_len * sizeof(double));
            len[t - 1] = info.history_len;
            its[t - 1] = info.iterations;
            krill_solve_info_free(&info);
            krill_pc_destroy(&pc);
            su_system_free(&s);
            krill_ctx_destroy(&ctx);
        }
        CHECK(n >= 8192 && its[0] == its[1] && len[0] == len[1]);
        CHECK(memcmp(x[0], x[1], (size_t)n * sizeof(double)) == 0);
        CHECK(len[0] == len[1] && memcmp(hist[0], hist[1], (size_t)len[0] * sizeof(double)) == 0);
        printf("minres repro %-20s n %lld: %d iterations on 1 and 2 threads, x and history "
               "bit-identical: %s\n", pcase ? "poisson3d:21 - 2I" : "stokes2d:56",
               (long long)n, its[0],
               memcmp(x[0], x[1], (size_t)n * sizeof(double)) == 0 ? "yes" : "NO");
        for (int t = 0; t < 2; t++) {
            free(x[t]);
            free(hist[t]);
        }
    }
}

/* The k-th allocation of a MINRES solve fails, for every k: a clean error, x untouched. */
static void test_faults(krill_ctx *ctx)
{
    krill_solver_opts o = minres_opts(1e-8);
    su_check_alloc_faults(ctx, "stokes2d:4", 4, NULL, &o, 6);
    su_check_alloc_faults(ctx, "poisson3d:5", 4, "jacobi", &o, 6);
    CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, 0));
    su_check_alloc_faults(ctx, "stokes2d:4", 4, NULL, &o, 6);
    CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OFF, 0));
}

int main(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    test_generator();
    test_converges(ctx);
    test_jacobi(ctx);
    test_edge_cases(ctx);
    test_repro_threads();
    test_faults(ctx);
    krill_ctx_destroy(&ctx);
    return tu_finish("test_minres");
}
