/* Extreme but finite scaling (issue 17): every solver on diag(1e160, 2e160, 3e160) and
 * diag(1e-170, 2e-170, 3e-170) (condition number 3; SPD), with b = A 1 (||b|| extreme: the
 * sums of squares of r overflow or underflow) and b = 1 (||b|| ~ 1, but A M^{-1} v extreme),
 * without and with Jacobi, in plain and reproducible mode; then real problems scaled by
 * 2^70 (just outside krill_solve's equilibration band: the scaled path), 2^-300, 1e150,
 * and so that their largest entry is 1e300 or their smallest 1e-300, against the unscaled
 * ones: the same iterations, and for powers of two the same history times the factor and
 * the same solution, bit for bit. */
#include <math.h>

#include "core/core_impl.h"
#include "solver_util.h"

/* GMRES and FGMRES with each orthogonalization (DCGS2, the default, first) */
static const krill_solver_type solvers[] = { KRILL_SOLVER_GMRES, KRILL_SOLVER_FGMRES,
                                             KRILL_SOLVER_CG, KRILL_SOLVER_BICGSTAB,
                                             KRILL_SOLVER_MINRES, KRILL_SOLVER_GMRES,
                                             KRILL_SOLVER_GMRES, KRILL_SOLVER_FGMRES,
                                             KRILL_SOLVER_FGMRES, KRILL_SOLVER_PIPECG };
static const krill_ortho orthos[] = { KRILL_ORTHO_DCGS2, KRILL_ORTHO_DCGS2, KRILL_ORTHO_DCGS2,
                                      KRILL_ORTHO_DCGS2, KRILL_ORTHO_DCGS2, KRILL_ORTHO_CGS2,
                                      KRILL_ORTHO_MGS, KRILL_ORTHO_CGS2, KRILL_ORTHO_MGS,
                                      KRILL_ORTHO_DCGS2 };
static const char *const solver_names[] = { "gmres", "fgmres", "cg", "bicgstab", "minres",
                                            "gmres+cgs2", "gmres+mgs", "fgmres+cgs2",
                                            "fgmres+mgs", "pipecg" };
#define SOLVER_COUNT ((int)(sizeof solvers / sizeof solvers[0]))
_Static_assert(sizeof orthos / sizeof orthos[0] == SOLVER_COUNT &&
                   sizeof solver_names / sizeof solver_names[0] == SOLVER_COUNT,
               "solvers, orthos and solver_names run in parallel");

/* Solve diag(s, 2s, 3s) x = b (b = A 1 when b_is_a1, else b = 1) from x = 0; x_out: the
 * solution (3). Checks convergence in at most 3 iterations and the solution. */
static void check_diagonal(krill_ctx *ctx, double s, int b_is_a1, int solver, const char *pc_name,
                           double *x_out)
{
    const int32_t idx[3] = { 0, 1, 2 };
    const double d[3] = { s, 2.0 * s, 3.0 * s };
    krill_csr *csr = NULL;
    krill_mat *a = NULL;
    krill_pc *pc = NULL;
    krill_vec *b = NULL, *x = NULL;
    krill_solver_opts o;
    krill_solve_info info;
    double bh[3], err = 0.0;
    for (int i = 0; i < 3; i++) bh[i] = b_is_a1 ? d[i] : 1.0;
    CHECK_OK(krill_csr_from_triplets(3, 3, 3, idx, idx, d, &csr));
    CHECK_OK(krill_mat_create(ctx, csr, "csr", &a));
    if (pc_name) CHECK_OK(krill_pc_create(a, pc_name, &pc));
    CHECK_OK(krill_vec_create(ctx, 3, &b));
    CHECK_OK(krill_vec_create(ctx, 3, &x));
    CHECK_OK(krill_vec_upload(b, bh));
    krill_solver_opts_default(&o);
    o.solver = solvers[solver];
    o.ortho = orthos[solver];
    o.rtol = 1e-12;
    CHECK_OK(krill_solve(a, pc, b, x, &o, &info));
    CHECK_OK(krill_vec_download(x, x_out));
    for (int i = 0; i < 3; i++) {        /* x_i = b_i / d_i */
        double want = bh[i] / d[i];
        err = fmax(err, fabs(x_out[i] - want) / want);
    }
    if (info.reason != KRILL_CONVERGED_RTOL || info.iterations > 3 || !(err <= 1e-12))
        fprintf(stderr, "diag(%g) b = %s %s pc %s: %s after %d iterations, error %g\n", s,
                b_is_a1 ? "A 1" : "1", solver_names[solver], pc_name ? pc_name : "none",
                krill_reason_string(info.reason), info.iterations, err);
    CHECK(info.reason == KRILL_CONVERGED_RTOL);
    CHECK(info.iterations <= 3);
    CHECK(err <= 1e-12);
    CHECK(info.relres <= o.rtol);
    CHECK_CLOSE(info.bnorm, su_norm(bh, 3), 1e-15);      /* in b's units, not the scaled */
    CHECK_CLOSE(info.history[0], info.bnorm, 1e-15);     /* r0 = b */
    krill_solve_info_free(&info);
    krill_vec_destroy(&b);
    krill_vec_destroy(&x);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
}

static void test_diagonals(void)
{
    static const double scales[2] = { 1e160, 1e-170 };
    static const char *const pcs[2] = { NULL, "jacobi" };
    krill_ctx *plain = tu_cpu_ctx(2), *repro1 = tu_cpu_ctx(1), *repro2 = tu_cpu_ctx(2);
    CHECK_OK(krill_ctx_set_repro(repro1, KRILL_REPRO_OZAKI, 0));
    CHECK_OK(krill_ctx_set_repro(repro2, KRILL_REPRO_OZAKI, 0));
    for (int si = 0; si < 2; si++)
        for (int b1 = 0; b1 < 2; b1++)
            for (int sv = 0; sv < SOLVER_COUNT; sv++)
                for (int pi = 0; pi < 2; pi++) {
                    double x[3], x1[3], x2[3];
                    check_diagonal(plain, scales[si], b1, sv, pcs[pi], x);
                    check_diagonal(repro1, scales[si], b1, sv, pcs[pi], x1);
                    check_diagonal(repro2, scales[si], b1, sv, pcs[pi], x2);
                    CHECK(memcmp(x1, x2, sizeof x1) == 0);   /* reproducible: same bits */
                }
    krill_ctx_destroy(&plain);
    krill_ctx_destroy(&repro1);
    krill_ctx_destroy(&repro2);
}

/* A monitor that records the residual norms it is given (room for maxit). */
typedef struct recorder {
    double *values;
    int count, room;
} recorder;

static int record(int iteration, double residual_norm, void *user)
{
    recorder *r = user;
    (void)iteration;
    if (r->count < r->room) r->values[r->count++] = residual_norm;
    return 0;
}

typedef struct scaled_run {
    krill_solve_info info;
    recorder mon;
    double *x;               /* n, host */
} scaled_run;

/* Solve (f A) x = f b, b = A x_true, from x = 0 (f = 1: the problem itself). */
static void solve_scaled(krill_ctx *ctx, const krill_csr *src, double f,
                         const krill_solver_opts *opts, scaled_run *run)
{
    krill_csr *csr = NULL;
    su_system s;
    krill_solver_opts o = *opts;
    memset(run, 0, sizeof *run);
    CHECK_OK(krill_csr_copy(src, &csr));
    for (int64_t k = 0; k < csr->nnz; k++) csr->val[k] *= f;
    su_system_make(&s, ctx, csr, NULL, 5);     /* b = (f A) x_true */
    run->mon.room = o.maxit;
    run->mon.values = malloc((size_t)o.maxit * sizeof(double));
    if (!run->mon.values) exit(1);
    o.monitor = record;
    o.monitor_data = &run->mon;
    CHECK_OK(su_solve(&s, NULL, &o, &run->info));
    CHECK(run->info.reason == KRILL_CONVERGED_RTOL);
    CHECK(run->mon.count == run->info.iterations);
    run->x = malloc((size_t)s.n * sizeof(double));
    if (!run->x) exit(1);
    CHECK_OK(krill_vec_download(s.x, run->x));
    su_system_free(&s);
}

static void scaled_run_free(scaled_run *run)
{
    krill_solve_info_free(&run->info);
    free(run->mon.values);
    free(run->x);
}

/* A power-of-two factor gives the same iterates exactly (the same iterations, history and
 * monitor values times f, the same x); the others the same iterations within rounding's
 * effect (a few percent on these matrices). */
static void check_scaled_problem(krill_ctx *ctx, const char *name, const krill_csr *csr,
                                 int solver)
{
    double amax = 0.0, amin = INFINITY;
    krill_solver_opts o;
    scaled_run ref, run;
    for (int64_t k = 0; k < csr->nnz; k++)
        if (csr->val[k] != 0.0) {
            amax = fmax(amax, fabs(csr->val[k]));
            amin = fmin(amin, fabs(csr->val[k]));
        }
    /* the last two: the largest entry to 1e300, the smallest to 1e-300 */
    const double factors[5] = { 0x1p70, 0x1p-300, 1e150, 1e300 / amax, 1e-300 / amin };
    krill_solver_opts_default(&o);
    o.solver = solvers[solver];
    o.ortho = orthos[solver];
    o.rtol = 1e-10;
    solve_scaled(ctx, csr, 1.0, &o, &ref);
    for (int fi = 0; fi < 5; fi++) {
        double f = factors[fi];
        int exact = frexp(f, &(int){ 0 }) == 0.5, same = 1;
        solve_scaled(ctx, csr, f, &o, &run);
        printf("%-9s %-10s scaled by %-8g: %3d iterations (unscaled %d), relres %.2e\n", name,
               solver_names[solver], f, run.info.iterations, ref.info.iterations,
               run.info.relres);
        CHECK(abs(run.info.iterations - ref.info.iterations) <= 2 + ref.info.iterations / 20);
        CHECK(run.info.relres <= o.rtol);
        if (exact) {
            CHECK(run.info.iterations == ref.info.iterations);
            CHECK(run.info.relres == ref.info.relres);
        }
        if (exact && run.info.iterations == ref.info.iterations) {
            for (int i = 0; i < run.info.history_len; i++)
                same = same && run.info.history[i] == ref.info.history[i] * f;
            for (int i = 0; i < run.mon.count; i++)
                same = same && run.mon.values[i] == ref.mon.values[i] * f;
            same = same && memcmp(run.x, ref.x, (size_t)csr->n_rows * sizeof(double)) == 0;
            CHECK(same);
        }
        scaled_run_free(&run);
    }
    scaled_run_free(&ref);
}

static void test_scaled_problems(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    /* bcsstk01 (structural stiffness, SPD, cond ~ 1e6) when the testdata is there */
    krill_csr *spd = tu_testdata_has("mtx/bcsstk01.mtx") ? su_testdata("mtx/bcsstk01.mtx")
                                                          : su_gen("elasticity3d:4,3,3");
    krill_csr *gen = su_gen("convdiff3d:8,2");     /* nonsymmetric */
    for (int sv = 0; sv < SOLVER_COUNT; sv++) {
        int symmetric = solvers[sv] == KRILL_SOLVER_CG || solvers[sv] == KRILL_SOLVER_MINRES ||
                        solvers[sv] == KRILL_SOLVER_PIPECG;
        check_scaled_problem(ctx, symmetric ? "spd" : "convdiff", symmetric ? spd : gen, sv);
    }
    krill_csr_destroy(&spd);
    krill_csr_destroy(&gen);
    krill_ctx_destroy(&ctx);
}

int main(void)
{
    test_diagonals();
    test_scaled_problems();
    return tu_finish("test_scaling");
}
