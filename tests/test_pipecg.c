/* Pipelined CG (solver/pipecg.c) on the CPU, against CG: in exact arithmetic the iterates are
 * CG's, so on well-conditioned SPD systems the iteration counts must agree (within 2) and
 * the solutions within the tolerance; with no preconditioner, Jacobi (fused into the merged
 * pass) and every registered preconditioner that builds (the general path); negative
 * definite A; the indefinite stop; b = 0, maxit, the monitor, atol, NaN input; the attainable
 * accuracy (a tolerance near rounding: the true residual decides, restarting the
 * recurrences); thread counts; reproducible mode, which runs the composed operations of the
 * GPU's path (the same bits on 1, 2 and 3 threads); allocation faults. */
#include "core/core_impl.h"
#include "precond/precond_impl.h"
#include "solver_util.h"

static krill_solver_opts opts(krill_solver_type solver, double rtol)
{
    krill_solver_opts o;
    krill_solver_opts_default(&o);
    o.solver = solver;
    o.rtol = rtol;
    return o;
}

typedef struct outcome {
    krill_reason reason;
    int iterations;
    double relres;           /* by the reference SpMV */
    double error;            /* ||x - x_true|| / ||x_true|| */
    double *x;               /* n, the caller frees */
} outcome;

/* Solve `spec` (b = A x_true; negated when `negate`) from x = 0 with `solver`. 0, or -1 when
 * the preconditioner does not build on this matrix (said). */
static int solve(krill_ctx *ctx, const char *spec, int negate, const char *pc_name,
                 const krill_solver_opts *o, outcome *out)
{
    su_system s;
    krill_pc *pc = NULL;
    krill_solve_info info;
    krill_csr *csr = su_gen(spec);
    memset(out, 0, sizeof *out);
    if (negate)
        for (int64_t k = 0; k < csr->nnz; k++) csr->val[k] = -csr->val[k];
    su_system_make(&s, ctx, csr, NULL, 5);
    if (pc_name && krill_pc_create(s.a, pc_name, &pc) != KRILL_OK) {
        printf("%-22s pc %-8s: not built here (%s)\n", spec, pc_name, krill_last_error());
        su_system_free(&s);
        return -1;
    }
    CHECK_OK(su_solve(&s, pc, o, &info));
    out->reason = info.reason;
    out->iterations = info.iterations;
    out->error = su_error(&s);
    out->relres = su_true_relres(s.csr, s.x_host, s.b_host);
    out->x = malloc(((size_t)s.n + 1) * sizeof(double));
    if (!out->x) exit(1);
    memcpy(out->x, s.x_host, (size_t)s.n * sizeof(double));
    CHECK(info.history_len == info.iterations + 1);
    CHECK_CLOSE(info.history[0], su_norm(s.b_host, s.n), 1e-12);   /* x0 = 0: r0 = b */
    if (info.reason == KRILL_CONVERGED_RTOL) {
        CHECK_CLOSE(info.relres, out->relres, 1e-3);   /* the solver's own true residual */
        CHECK(info.times.spmv > 0.0 && info.times.total >= info.times.spmv);
    }
    krill_solve_info_free(&info);
    krill_pc_destroy(&pc);
    su_system_free(&s);
    return 0;
}

/* Pipelined CG against CG on one system: the same reason, iterations within 2, both within
 * rtol by the reference residual, the solutions within 10 rtol cond-free (relative to x). */
static void against_cg(krill_ctx *ctx, const char *spec, int negate, const char *pc_name)
{
    const double rtol = 1e-9;
    krill_solver_opts oc = opts(KRILL_SOLVER_CG, rtol), op = opts(KRILL_SOLVER_PIPECG, rtol);
    outcome c, p;
    if (solve(ctx, spec, negate, pc_name, &oc, &c) < 0) return;
    CHECK(solve(ctx, spec, negate, pc_name, &op, &p) == 0);
    CHECK(c.reason == KRILL_CONVERGED_RTOL && p.reason == KRILL_CONVERGED_RTOL);
    CHECK(abs(p.iterations - c.iterations) <= 2);
    CHECK(p.relres <= rtol && c.relres <= rtol);
    CHECK(p.error <= 10.0 * c.error + 1e-12);
    printf("%-22s %s pc %-8s: cg %3d its (relres %.2e, error %.2e), pipecg %3d its (%.2e, "
           "%.2e)\n", spec, negate ? "-A" : " A", pc_name ? pc_name : "none", c.iterations,
           c.relres, c.error, p.iterations, p.relres, p.error);
    free(c.x);
    free(p.x);
}

static void test_against_cg(krill_ctx *ctx)
{
    const char *const *names = krill_pc_names();
    against_cg(ctx, "poisson3d:12", 0, NULL);
    against_cg(ctx, "poisson3d:12", 0, "jacobi");
    against_cg(ctx, "elasticity3d:6,3,3", 0, NULL);
    against_cg(ctx, "elasticity3d:6,3,3", 0, "jacobi");
    against_cg(ctx, "poisson3d:24", 0, "ic0");
    against_cg(ctx, "poisson3d:10", 1, NULL);          /* negative definite: CG on -A */
    against_cg(ctx, "poisson3d:10", 1, "jacobi");      /* and M from -A */
    for (int k = 0; names[k]; k++) against_cg(ctx, "poisson3d:10", 0, names[k]);
    if (tu_testdata_has("mtx/bcsstk01.mtx")) {         /* cond ~ 1e6: the drift shows more */
        krill_solver_opts o = opts(KRILL_SOLVER_PIPECG, 1e-8);
        su_system s;
        krill_solve_info info;
        su_system_make(&s, ctx, su_testdata("mtx/bcsstk01.mtx"), NULL, 7);
        CHECK_OK(su_solve(&s, NULL, &o, &info));
        CHECK(info.reason == KRILL_CONVERGED_RTOL);
        (void)su_error(&s);                            /* x to the host */
        CHECK(su_true_relres(s.csr, s.x_host, s.b_host) <= 1e-8);
        printf("bcsstk01: pipecg %d iterations\n", info.iterations);
        krill_solve_info_free(&info);
        su_system_free(&s);
    } else {
        printf("test_pipecg: mtx/bcsstk01.mtx not in testdata, skipped\n");
    }
}

/* diag(1, 2, ..., 39, -0.5) with b = 1: the first steps see positive curvature, a later one
 * the negative eigenvalue. CG and pipelined CG both stop as INDEFINITE (pipelined CG must not
 * take the lost sign for drift and restart until maxit). */
static void test_indefinite_later(krill_ctx *ctx)
{
    enum { N = 40 };
    double vals[N];
    for (int i = 0; i < N; i++) vals[i] = i < N - 1 ? i + 1.0 : -0.5;
    for (int s = 0; s < 2; s++) {
        krill_solver_opts o = opts(s ? KRILL_SOLVER_PIPECG : KRILL_SOLVER_CG, 1e-10);
        krill_solve_info info;
        o.maxit = 1000;
        CHECK_OK(su_diagonal_solve(ctx, N, vals, &o, &info));
        CHECK(info.reason == KRILL_DIVERGED_INDEFINITE);
        CHECK(info.iterations >= 1 && info.iterations < 60);
        printf("diag(1..39, -0.5): %s %s after %d iterations\n",
               krill_solver_name(o.solver), krill_reason_string(info.reason), info.iterations);
        krill_solve_info_free(&info);
    }
}

/* diag(1, -1, 1, -1, ...) with b = 1: u'Au = 0 at the first step: INDEFINITE, x unspoiled. */
static void test_indefinite(krill_ctx *ctx)
{
    enum { N = 10 };
    double vals[N];
    krill_solve_info info;
    krill_solver_opts o = opts(KRILL_SOLVER_PIPECG, 1e-8);
    for (int i = 0; i < N; i++) vals[i] = i % 2 ? -1.0 : 1.0;
    CHECK_OK(su_diagonal_solve(ctx, N, vals, &o, &info));
    CHECK(info.reason == KRILL_DIVERGED_INDEFINITE);
    CHECK(info.iterations == 0);
    CHECK_CLOSE(info.relres, 1.0, 1e-12);                 /* x = x0 = 0 */
    krill_solve_info_free(&info);
}

static void test_edge_cases(krill_ctx *ctx)
{
    su_system s;
    krill_solve_info info;
    krill_solver_opts o = opts(KRILL_SOLVER_PIPECG, 1e-8);
    double *zeros, inf_x[1] = {INFINITY};
    su_system_make(&s, ctx, su_gen("poisson3d:8"), NULL, 2);
    zeros = calloc((size_t)s.n, sizeof(double));

    CHECK_OK(krill_vec_upload(s.b, zeros));              /* b = 0: x = 0, no iteration */
    CHECK_OK(krill_vec_fill(s.x, 3.0));
    CHECK_OK(krill_solve(s.a, NULL, s.b, s.x, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_ZERO_RHS && info.iterations == 0);
    CHECK_OK(krill_vec_download(s.x, s.x_host));
    CHECK(su_norm(s.x_host, s.n) == 0.0);
    krill_solve_info_free(&info);
    CHECK_OK(krill_vec_upload(s.b, s.b_host));

    for (int maxit = 0; maxit <= 5; maxit += 5) {       /* stops there, not converged */
        o.maxit = maxit;
        CHECK_OK(su_solve(&s, NULL, &o, &info));
        CHECK(info.reason == KRILL_DIVERGED_MAXIT);
        CHECK(info.iterations == maxit && info.history_len == maxit + 1);
        CHECK(maxit > 0 || fabs(info.relres - 1.0) <= 1e-12);
        krill_solve_info_free(&info);
    }

    o.maxit = 1000;                                      /* the monitor, in order; a stop */
    su_check_monitor(&s, &o, 3);

    o.rtol = 0.0;                                        /* atol alone */
    o.atol = 1e-6 * su_norm(s.b_host, s.n);
    CHECK_OK(su_solve(&s, NULL, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_ATOL && info.resnorm <= o.atol);
    krill_solve_info_free(&info);
    o = opts(KRILL_SOLVER_PIPECG, 1e-8);

    s.b_host[3] = NAN;                                   /* NaN in b, Inf in x0: errors */
    CHECK_OK(krill_vec_upload(s.b, s.b_host));
    CHECK_STATUS(su_solve(&s, NULL, &o, &info), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "b contains NaN") != NULL);
    krill_csr_spmv_ref(s.csr, 1.0, s.x_true, 0.0, s.b_host);
    CHECK_OK(krill_vec_upload(s.b, s.b_host));
    CHECK_OK(krill_vec_fill(s.x, 0.0));
    CHECK_OK(krill_mem_upload(ctx, krill_vec_data(s.x) + 5, inf_x, sizeof inf_x));
    CHECK_STATUS(krill_solve(s.a, NULL, s.b, s.x, &o, &info), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "initial guess") != NULL);

    free(zeros);
    su_system_free(&s);
}

/* A tolerance near rounding, where pipelined CG's recurrences drift from the vectors they
 * stand for (the residual estimate runs ahead of b - A x; r'u loses its sign at 1e-14 after
 * 66 steps): restarts from the true residual reach it, as CG does (64 iterations, 4e-15). */
static void test_attainable_accuracy(krill_ctx *ctx)
{
    const double rtols[] = {1e-12, 1e-14};
    for (int k = 0; k < 2; k++) {
        krill_solver_opts o = opts(KRILL_SOLVER_PIPECG, rtols[k]);
        outcome p;
        o.maxit = 2000;
        CHECK(solve(ctx, "elasticity3d:6,3,3", 0, "jacobi", &o, &p) == 0);
        CHECK(p.reason == KRILL_CONVERGED_RTOL);   /* a lost sign restarts, not "indefinite" */
        CHECK(p.relres <= 1.01 * rtols[k]);
        printf("rtol %.0e: %s after %d iterations, true relres %.2e\n", rtols[k],
               krill_reason_string(p.reason), p.iterations, p.relres);
        free(p.x);
    }
}

/* 1, 2 and 3 threads: plain mode the same iterations; reproducible mode the same bits. */
static void test_threads_and_repro(void)
{
    int its[3];
    double *xr[3];
    for (int t = 1; t <= 3; t++) {
        krill_ctx *ctx = tu_cpu_ctx(t);
        krill_solver_opts o = opts(KRILL_SOLVER_PIPECG, 1e-8);
        outcome p;
        CHECK(solve(ctx, "poisson3d:24", 0, "jacobi", &o, &p) == 0);
        CHECK(p.reason == KRILL_CONVERGED_RTOL);
        its[t - 1] = p.iterations;
        free(p.x);
        CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, 0));
        CHECK(solve(ctx, "poisson3d:24", 0, "jacobi", &o, &p) == 0);
        CHECK(p.reason == KRILL_CONVERGED_RTOL && p.relres <= 1e-8);
        xr[t - 1] = p.x;
        krill_ctx_destroy(&ctx);
    }
    CHECK(its[0] == its[1] && its[1] == its[2]);
    CHECK(memcmp(xr[0], xr[1], 24 * 24 * 24 * sizeof(double)) == 0);
    CHECK(memcmp(xr[0], xr[2], 24 * 24 * 24 * sizeof(double)) == 0);
    for (int t = 0; t < 3; t++) free(xr[t]);
}

static void test_faults(krill_ctx *ctx, const char *pc_name)
{
    krill_solver_opts o = opts(KRILL_SOLVER_PIPECG, 1e-8);
    su_check_alloc_faults(ctx, "poisson3d:6", 4, pc_name, &o, 4);
}

int main(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    test_against_cg(ctx);
    test_indefinite(ctx);
    test_indefinite_later(ctx);
    test_edge_cases(ctx);
    test_attainable_accuracy(ctx);
    test_threads_and_repro();
    test_faults(ctx, NULL);
    test_faults(ctx, "jacobi");
    test_faults(ctx, "ic0");
    CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, 0));
    test_faults(ctx, "jacobi");
    krill_ctx_destroy(&ctx);
    return tu_finish("test_pipecg");
}
