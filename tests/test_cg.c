/* CG and PCG on the CPU: SPD systems with a known solution (converged, true residual by the
 * reference SpMV, error within the condition-number bound), Jacobi against no
 * preconditioner, every registered preconditioner that builds, indefinite detection, b = 0,
 * maxit, the monitor, atol, NaN input, thread counts, and allocation faults. */
#include "core/core_impl.h"
#include "precond/precond_impl.h"
#include "solver_util.h"

static krill_solver_opts cg_opts(double rtol)
{
    krill_solver_opts o;
    krill_solver_opts_default(&o);
    o.solver = KRILL_SOLVER_CG;
    o.rtol = rtol;
    return o;
}

/* Converged, true relres <= rtol, and ||x - x_true|| / ||x_true|| <= cond * relres (the
 * bound for SPD A; 2x margin for the estimate). Returns the iterations, or -1 (and says
 * why) when the preconditioner does not build on this matrix. */
static int check_spd_solve(krill_ctx *ctx, const char *spec, const char *pc_name)
{
    su_system s;
    krill_pc *pc = NULL;
    krill_solve_info info;
    krill_solver_opts o = cg_opts(1e-10);
    double cond, relres, err;
    int its;
    su_system_make(&s, ctx, su_gen(spec), NULL, 1);
    if (pc_name && krill_pc_create(s.a, pc_name, &pc) != KRILL_OK) {
        printf("cg %-22s pc %-8s: not built here (%s)\n", spec, pc_name, krill_last_error());
        su_system_free(&s);
        return -1;
    }
    cond = su_cond_spd(s.csr);
    CHECK(cond >= 1.0);
    CHECK_OK(su_solve(&s, pc, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_RTOL);
    err = su_error(&s);
    relres = su_true_relres(s.csr, s.x_host, s.b_host);
    CHECK(relres <= o.rtol);
    CHECK_CLOSE(info.relres, relres, 1e-3);     /* the solver's own true residual */
    CHECK(err <= 2.0 * cond * relres + 1e-14);
    CHECK(info.history_len == info.iterations + 1);
    CHECK_CLOSE(info.history[0], su_norm(s.b_host, s.n), 1e-12);   /* x0 = 0: r0 = b */
    CHECK(info.history[info.iterations] <= o.rtol * info.bnorm);
    CHECK(info.times.total >= info.times.spmv && info.times.spmv > 0.0);
    /* a diagonal M is fused into the vector updates: no time of its own */
    CHECK(krill_pc_is_identity(pc) || krill_pc_inverse_diagonal(pc) || info.times.precond > 0.0);
    printf("cg %-22s pc %-8s: %3d iterations, relres %.2e, error %.2e, cond %.3g\n", spec,
           pc_name ? pc_name : "none", info.iterations, relres, err, cond);
    its = info.iterations;
    krill_solve_info_free(&info);
    krill_pc_destroy(&pc);
    su_system_free(&s);
    return its;
}

static void test_spd(krill_ctx *ctx)
{
    check_spd_solve(ctx, "poisson3d:12", NULL);
    check_spd_solve(ctx, "poisson3d:12", "jacobi");
    int plain = check_spd_solve(ctx, "elasticity3d:6,3,3", NULL);
    int jacobi = check_spd_solve(ctx, "elasticity3d:6,3,3", "jacobi");
    CHECK(jacobi >= 0 && jacobi <= plain);
}

/* PCG with every registered preconditioner that builds on these SPD matrices (the general
 * path of cg.c for the non-diagonal ones: block Jacobi, incomplete factorizations). */
static void test_every_preconditioner(krill_ctx *ctx)
{
    const char *const *names = krill_pc_names();
    for (int k = 0; names[k]; k++) {
        check_spd_solve(ctx, "poisson3d:12", names[k]);
        check_spd_solve(ctx, "elasticity3d:6,3,3", names[k]);
    }
    CHECK(check_spd_solve(ctx, "elasticity3d:6,3,3", "none") >= 0);
}

/* diag(1, -1, 1, -1, ...) with b = 1: p'Ap = sum of the diagonal = 0 at the first step. */
static void test_indefinite(krill_ctx *ctx)
{
    enum { N = 10 };
    double vals[N];
    krill_solve_info info;
    krill_solver_opts o = cg_opts(1e-8);
    for (int i = 0; i < N; i++) vals[i] = i % 2 ? -1.0 : 1.0;
    CHECK_OK(su_diagonal_solve(ctx, N, vals, &o, &info));
    CHECK(info.reason == KRILL_DIVERGED_INDEFINITE);
    CHECK(info.iterations == 1);
    CHECK(info.relres == info.relres && info.relres <= 1.0 + 1e-12);   /* x not spoiled */
    krill_solve_info_free(&info);
}

static void test_edge_cases(krill_ctx *ctx)
{
    su_system s;
    krill_solve_info info;
    krill_solver_opts o = cg_opts(1e-8);
    double *zeros, nan_x[1];
    su_system_make(&s, ctx, su_gen("poisson3d:8"), NULL, 2);
    zeros = calloc((size_t)s.n, sizeof(double));

    /* b = 0: x = 0 whatever the initial guess, no iteration */
    CHECK_OK(krill_vec_upload(s.b, zeros));
    CHECK_OK(krill_vec_fill(s.x, 3.0));
    CHECK_OK(krill_solve(s.a, NULL, s.b, s.x, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_ZERO_RHS);
    CHECK(info.iterations == 0 && info.history_len == 1);
    CHECK_OK(krill_vec_download(s.x, s.x_host));
    CHECK(su_norm(s.x_host, s.n) == 0.0);
    krill_solve_info_free(&info);
    CHECK_OK(krill_vec_upload(s.b, s.b_host));

    /* maxit: stops there, not converged */
    o.maxit = 5;
    CHECK_OK(su_solve(&s, NULL, &o, &info));
    CHECK(info.reason == KRILL_DIVERGED_MAXIT);
    CHECK(info.iterations == 5 && info.history_len == 6);
    krill_solve_info_free(&info);

    /* maxit = 0: only the initial residual */
    o.maxit = 0;
    CHECK_OK(su_solve(&s, NULL, &o, &info));
    CHECK(info.reason == KRILL_DIVERGED_MAXIT && info.iterations == 0);
    CHECK_CLOSE(info.relres, 1.0, 1e-12);
    krill_solve_info_free(&info);

    /* the monitor: once per iteration, in order; a nonzero return stops the solve */
    o.maxit = 1000;
    su_check_monitor(&s, &o, 3);

    /* atol alone */
    o.rtol = 0.0;
    o.atol = 1e-6 * su_norm(s.b_host, s.n);
    CHECK_OK(su_solve(&s, NULL, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_ATOL && info.resnorm <= o.atol);
    krill_solve_info_free(&info);
    o = cg_opts(1e-8);

    /* NaN in b, Inf in x0: bad input, an error with a message */
    s.b_host[3] = NAN;
    CHECK_OK(krill_vec_upload(s.b, s.b_host));
    CHECK_STATUS(su_solve(&s, NULL, &o, &info), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "b contains NaN") != NULL);
    CHECK(info.reason == KRILL_DIVERGED_NAN && info.history == NULL);
    krill_csr_spmv_ref(s.csr, 1.0, s.x_true, 0.0, s.b_host);
    CHECK_OK(krill_vec_upload(s.b, s.b_host));
    nan_x[0] = INFINITY;
    CHECK_OK(krill_vec_fill(s.x, 0.0));
    CHECK_OK(krill_mem_upload(ctx, krill_vec_data(s.x) + 5, nan_x, sizeof nan_x));
    CHECK_STATUS(krill_solve(s.a, NULL, s.b, s.x, &o, &info), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "initial guess") != NULL);

    free(zeros);
    su_system_free(&s);
}

/* 1 and 2 threads: the same iterations (a size where the loops really run in parallel). */
static void test_threads(void)
{
    int its[2];
    for (int t = 1; t <= 2; t++) {
        krill_ctx *ctx = tu_cpu_ctx(t);
        su_system s;
        krill_solve_info info;
        krill_solver_opts o = cg_opts(1e-8);
        su_system_make(&s, ctx, su_gen("poisson3d:24"), NULL, 3);
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
    krill_solver_opts o = cg_opts(1e-8);
    su_check_alloc_faults(ctx, "poisson3d:6", 4, pc_name, &o, 4);
}

int main(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    test_spd(ctx);
    test_every_preconditioner(ctx);
    test_indefinite(ctx);
    test_edge_cases(ctx);
    test_threads();
    test_faults(ctx, NULL);
    test_faults(ctx, "jacobi");
    krill_ctx_destroy(&ctx);
    return tu_finish("test_cg");
}
