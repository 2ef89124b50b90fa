/* FGMRES(m) on the CPU. With a fixed preconditioner it builds the same iterates as
 * right-preconditioned GMRES (Saad, Prop. 9.2 and the remark after Algorithm 9.6): equal
 * iteration counts and residual histories equal to rounding, on generated and real
 * systems, with every registered preconditioner that builds. Without one it is GMRES, bit
 * for bit. With a preconditioner that changes at every application (two test-only ones,
 * made here on the internal table: Jacobi scaled by a different factor each time, and a
 * varying number of Jacobi sweeps), FGMRES converges with its residual estimate equal to the
 * true residual, and the scaled one gives Jacobi's iterates; GMRES, which assumes a fixed
 * M, does not (its estimate and true residual part). Also maxit, the monitor, b = 0, the
 * restart check and allocation faults. */
#include "core/core_impl.h"
#include "formats/formats_impl.h"
#include "precond/precond_impl.h"
#include "solver_util.h"

/* max over k of |a_k / b_k - 1| for the first n entries */
static double history_diff(const double *a, const double *b, int n)
{
    double d = 0.0;
    for (int k = 0; k < n; k++) {
        double e = fabs(a[k] / b[k] - 1.0);
        if (!(e <= d)) d = e;
    }
    return d;
}

/* GMRES and FGMRES with preconditioner pc_name (NULL: none) on csr (owned), each
 * orthogonalization (CGS2, MGS, DCGS2): both converge (true residual by the reference SpMV),
 * with the same
 * iterations and histories equal to `hist_tol` over the first cycle (rounding grows
 * afterwards: the two update x differently at each restart). */
static void compare_fixed(krill_ctx *ctx, const char *name, krill_csr *csr, const char *pc_name,
                          int restart, double rtol)
{
    su_system s;
    krill_pc *pc = NULL;
    su_system_make(&s, ctx, csr, NULL, 31);
    if (pc_name && krill_pc_create(s.a, pc_name, &pc) != KRILL_OK) {
        printf("fgmres %-16s pc %-8s: not built here (%s)\n", name, pc_name, krill_last_error());
        su_system_free(&s);
        return;
    }
    for (int ortho = KRILL_ORTHO_CGS2; ortho <= KRILL_ORTHO_DCGS2; ortho++) {
        krill_solve_info g, f;
        krill_solver_opts og = su_krylov_opts(KRILL_SOLVER_GMRES, (krill_ortho)ortho,
                                              restart, rtol, 0);
        krill_solver_opts of = su_krylov_opts(KRILL_SOLVER_FGMRES, (krill_ortho)ortho,
                                              restart, rtol, 0);
        double relres, diff;
        int first_cycle;
        CHECK_OK(su_solve(&s, pc, &og, &g));
        CHECK_OK(su_solve(&s, pc, &of, &f));
        (void)su_error(&s);
        relres = su_true_relres(s.csr, s.x_host, s.b_host);
        CHECK(g.reason == KRILL_CONVERGED_RTOL && f.reason == KRILL_CONVERGED_RTOL);
        CHECK(relres <= rtol);
        CHECK_CLOSE(f.relres, relres, 1e-3 * relres + 1e-15);
        CHECK(abs(f.iterations - g.iterations) <= (pc && !krill_pc_is_identity(pc) ? 1 : 0));
        /* the first cycle's Arnoldi process is the same computation in both: the same
         * bits; they differ from the first update of x on, by rounding */
        first_cycle = restart < f.iterations ? restart : f.iterations;
        if (first_cycle > g.iterations) first_cycle = g.iterations;
        for (int k = 0; k <= first_cycle; k++) CHECK(f.history[k] == g.history[k]);
        diff = history_diff(f.history, g.history,
                            (f.iterations < g.iterations ? f.iterations : g.iterations) + 1);
        CHECK(diff <= 1e-3);
        if (pc == NULL || krill_pc_is_identity(pc)) {   /* the same code path: the same bits */
            CHECK(f.iterations == g.iterations);
            for (int k = 0; k < f.history_len && k < g.history_len; k++)
                CHECK(f.history[k] == g.history[k]);
        }
        CHECK(f.times.spmv > 0.0);
        CHECK(pc == NULL || krill_pc_is_identity(pc) || f.times.precond > 0.0);
        printf("fgmres(%d) %-5s %-16s pc %-8s: %4d iterations (gmres %4d), relres %.2e, "
               "history vs gmres %.1e\n", restart,
               ortho == KRILL_ORTHO_CGS2 ? "cgs2" : ortho == KRILL_ORTHO_MGS ? "mgs" : "dcgs2",
               name, pc_name ? pc_name : "(null)", f.iterations, g.iterations, relres, diff);
        krill_solve_info_free(&g);
        krill_solve_info_free(&f);
    }
    krill_pc_destroy(&pc);
    su_system_free(&s);
}

static void test_fixed(krill_ctx *ctx)
{
    const char *const *names = krill_pc_names();
    compare_fixed(ctx, "convdiff3d:10,2", su_gen("convdiff3d:10,2"), NULL, 30, 1e-10);
    for (int k = 0; names[k]; k++)
        compare_fixed(ctx, "convdiff3d:10,2", su_gen("convdiff3d:10,2"), names[k], 30, 1e-10);
    compare_fixed(ctx, "convdiff3d:12,20", su_gen("convdiff3d:12,20"), "jacobi", 8, 1e-9);
    if (!tu_testdata()) {
        printf("testdata folder absent: the real matrices are skipped\n");
        return;
    }
    for (int k = 0; names[k]; k++)
        compare_fixed(ctx, "fs_183_6", su_testdata("mtx/fs_183_6.mtx"), names[k], 30, 1e-10);
    compare_fixed(ctx, "cage5", su_testdata("mtx/cage5.mtx"), "jacobi", 10, 1e-10);
}

/* ---- preconditioners that change at every application ------------------------------------
 * Built on the internal table (precond_impl.h) and a struct krill_pc filled here; the solver
 * uses only apply, inverse_diagonal and is_identity. Both work on context memory through the
 * BLAS-1 and the matrix's raw SpMV, so they would run on any device. */
typedef struct varying_pc {
    const krill_mat *a;
    const double *dinv;      /* context memory: 1 / a_ii (from a jacobi krill_pc) */
    double *work;            /* context memory, n: the sweeps' residual */
    int64_t n;
    int sweeps;              /* 0: scaled Jacobi; else up to this many Jacobi sweeps */
    int *calls;              /* applications so far (mutable through the const impl) */
} varying_pc;

/* factor of the k-th scaled application: 1, 4, 1/4, 2, 1/2, 1, ... (exact powers of 2) */
static double scale_factor(int k)
{
    static const double f[5] = {1.0, 4.0, 0.25, 2.0, 0.5};
    return f[k % 5];
}

/* scaled: z = c_k D^{-1} r. sweeps: z = D^{-1} r, then (k mod sweeps) more sweeps
 * z += D^{-1} (r - A z). */
static krill_status varying_apply(krill_ctx *ctx, const void *impl, const double *r, double *z)
{
    krill_status st = KRILL_OK;
    const varying_pc *v = impl;
    int k = (*v->calls)++;
    KRILL_TRY(krill_blas_xmy(ctx, v->n, r, v->dinv, z));
    if (v->sweeps == 0) {
        KRILL_TRY(krill_blas_scal(ctx, v->n, scale_factor(k), z));
    } else {
        for (int sweep = 0; sweep < k % v->sweeps; sweep++) {
            KRILL_TRY(krill_blas_copy(ctx, v->n, r, v->work));
            KRILL_TRY(krill_mat_spmv_raw(v->a, -1.0, z, 1.0, v->work));
            KRILL_TRY(krill_blas_xmy(ctx, v->n, v->work, v->dinv, v->work));
            KRILL_TRY(krill_blas_axpy(ctx, v->n, 1.0, v->work, z));
        }
    }
cleanup:
    return st;
}

static const krill_pc_ops varying_ops = {
    .name = "varying",
    .summary = "test only: changes at every application",
    .build = NULL,
    .apply = varying_apply,
    .update = NULL,
    .inverse_diagonal = NULL,
    .is_identity = 0,
    .destroy = NULL,
};

/* A system on ctx with a varying preconditioner of `sweeps` (0 = scaled Jacobi). */
typedef struct varying_setup {
    su_system s;
    krill_pc *jacobi;
    varying_pc impl;
    struct krill_pc pc;
    int calls;
} varying_setup;

static void varying_make(varying_setup *v, krill_ctx *ctx, const char *spec, int sweeps)
{
    memset(v, 0, sizeof *v);
    su_system_make(&v->s, ctx, su_gen(spec), NULL, 32);
    CHECK_OK(krill_pc_create(v->s.a, "jacobi", &v->jacobi));
    v->impl.a = v->s.a;
    v->impl.dinv = krill_pc_inverse_diagonal(v->jacobi);
    v->impl.n = v->s.n;
    v->impl.sweeps = sweeps;
    v->impl.calls = &v->calls;
    CHECK_OK(krill_mem_alloc(ctx, (void **)&v->impl.work, (size_t)v->s.n * sizeof(double),
                             "work"));
    v->pc.ctx = ctx;
    v->pc.mat = v->s.a;
    v->pc.ops = &varying_ops;
    v->pc.impl = &v->impl;
    v->pc.n = v->s.n;
    snprintf(v->pc.name, sizeof v->pc.name, "varying");
}

static void varying_free(varying_setup *v, krill_ctx *ctx)
{
    krill_mem_free(ctx, v->impl.work);
    krill_pc_destroy(&v->jacobi);
    su_system_free(&v->s);
}

/* The last estimate against the true residual of the returned x, relative. */
static double estimate_gap(varying_setup *v, const krill_solve_info *info)
{
    double true_res;
    (void)su_error(&v->s);
    true_res = su_true_relres(v->s.csr, v->s.x_host, v->s.b_host) * info->bnorm;
    return fabs(info->history[info->iterations] / true_res - 1.0);
}

static void test_varying(krill_ctx *ctx)
{
    for (int sweeps = 0; sweeps <= 3; sweeps += 3) {
        varying_setup v;
        krill_solve_info f, g, j;
        krill_solver_opts of = su_krylov_opts(KRILL_SOLVER_FGMRES, KRILL_ORTHO_CGS2, 40, 1e-10, 0);
        krill_solver_opts og = su_krylov_opts(KRILL_SOLVER_GMRES, KRILL_ORTHO_CGS2, 40, 1e-10, 0);
        double gap_f, gap_g;
        varying_make(&v, ctx, "convdiff3d:12,20", sweeps);

        /* converged to the true residual, several restarts */
        of.restart = 8;
        CHECK_OK(su_solve(&v.s, &v.pc, &of, &f));
        CHECK(f.reason == KRILL_CONVERGED_RTOL);
        (void)su_error(&v.s);
        CHECK(su_true_relres(v.s.csr, v.s.x_host, v.s.b_host) <= of.rtol);
        CHECK(v.calls >= f.iterations);
        printf("fgmres(8) varying (%s): %d iterations, relres %.2e\n",
               sweeps ? "1-3 Jacobi sweeps" : "scaled Jacobi", f.iterations, f.relres);
        krill_solve_info_free(&f);

        /* inside one cycle (maxit 12 < restart 40): FGMRES's estimate is its true residual;
         * GMRES's is not, since it applies the last M to all of V y */
        of.restart = 40;
        of.maxit = og.maxit = 12;
        CHECK_OK(su_solve(&v.s, &v.pc, &of, &f));
        gap_f = estimate_gap(&v, &f);
        CHECK_OK(su_solve(&v.s, &v.pc, &og, &g));
        gap_g = estimate_gap(&v, &g);
        CHECK(f.reason == KRILL_DIVERGED_MAXIT && f.iterations == 12);
        CHECK(gap_f <= 1e-8);
        CHECK(gap_g >= 0.1);
        printf("  after 12 iterations: |estimate / true - 1| fgmres %.1e, gmres %.1e\n", gap_f,
               gap_g);

        /* scaled Jacobi spans the same space as Jacobi: FGMRES's iterates are Jacobi's */
        if (sweeps == 0) {
            of.maxit = 10000;
            CHECK_OK(su_solve(&v.s, v.jacobi, &of, &j));
            krill_solve_info_free(&f);
            CHECK_OK(su_solve(&v.s, &v.pc, &of, &f));
            /* powers of 2: z_j, w, h and y scale exactly, V and the estimates do not move */
            CHECK(f.iterations == j.iterations);
            for (int k = 0; k < f.history_len && k < j.history_len; k++)
                CHECK(f.history[k] == j.history[k]);
            krill_solve_info_free(&j);
        }
        krill_solve_info_free(&f);
        krill_solve_info_free(&g);
        varying_free(&v, ctx);
    }
}

static void test_edge_cases(krill_ctx *ctx)
{
    su_system s;
    krill_pc *pc = NULL;
    krill_solve_info info;
    krill_solver_opts o = su_krylov_opts(KRILL_SOLVER_FGMRES, KRILL_ORTHO_CGS2, 10, 1e-10, 0);
    su_monitor mon = {0, 0, 1, 0};
    double *zeros;
    su_system_make(&s, ctx, su_gen("convdiff3d:8,1"), NULL, 33);
    CHECK_OK(krill_pc_create(s.a, "jacobi", &pc));
    zeros = calloc((size_t)s.n, sizeof(double));

    CHECK_OK(krill_vec_upload(s.b, zeros));
    CHECK_OK(krill_vec_fill(s.x, -2.0));
    CHECK_OK(krill_solve(s.a, pc, s.b, s.x, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_ZERO_RHS && info.iterations == 0);
    krill_solve_info_free(&info);
    CHECK_OK(krill_vec_upload(s.b, s.b_host));

    for (int maxit = 7; maxit <= 20; maxit += 13) {   /* inside a cycle and at its end */
        o.maxit = maxit;
        CHECK_OK(su_solve(&s, pc, &o, &info));
        CHECK(info.reason == KRILL_DIVERGED_MAXIT && info.iterations == maxit);
        CHECK(info.history_len == maxit + 1);
        CHECK_OK(krill_vec_download(s.x, s.x_host));
        CHECK_CLOSE(info.relres, su_true_relres(s.csr, s.x_host, s.b_host), 1e-8);
        krill_solve_info_free(&info);
    }
    o.maxit = 10000;

    o.monitor = su_monitor_fn;
    o.monitor_data = &mon;
    CHECK_OK(su_solve(&s, pc, &o, &info));
    CHECK(info.reason == KRILL_CONVERGED_RTOL && mon.calls == info.iterations && mon.in_order);
    krill_solve_info_free(&info);
    mon = (su_monitor){0, 0, 1, 4};
    CHECK_OK(su_solve(&s, pc, &o, &info));
    CHECK(info.reason == KRILL_DIVERGED_MAXIT && info.iterations == 4 && mon.calls == 4);
    krill_solve_info_free(&info);
    o.monitor = NULL;

    o.restart = 0;
    CHECK_STATUS(su_solve(&s, pc, &o, &info), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "restart = 0") != NULL);

    free(zeros);
    krill_pc_destroy(&pc);
    su_system_free(&s);
}

/* The k-th allocation of a solve fails, for every k: a clean error, no leak (ASan). */
static void test_faults(krill_ctx *ctx)
{
    krill_solver_opts o = su_krylov_opts(KRILL_SOLVER_FGMRES, KRILL_ORTHO_MGS, 8, 1e-8, 0);
    su_check_alloc_faults(ctx, "convdiff3d:6,1", 34, "jacobi", &o, 8);
}

int main(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    test_fixed(ctx);
    test_varying(ctx);
    test_edge_cases(ctx);
    test_faults(ctx);
    krill_ctx_destroy(&ctx);
    return tu_finish("test_fgmres");
}
