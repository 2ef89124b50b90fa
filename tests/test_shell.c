/* Shell matrices and shell preconditioners (krill_mat_create_shell, krill_pc_create_shell;
 * issue 20) on the CPU.
 *
 * - A shell whose callback is a krill matrix's SpMV gives that matrix's bits in
 *   krill_mat_spmv (any alpha, beta) and, in every solver, the same iterations, history and
 *   solution bits on 1 and 2 threads: GMRES, FGMRES, BiCGStab and MINRES against csr; CG
 *   against ell. CG against csr agrees only to rounding: csr has a fused SpMV-dot whose p'Ap
 *   is summed by row block, while a shell (like ell) takes the SpMV and then the context's
 *   dot, summed by thread: other bits, the same iterations within one.
 * - A shell preconditioner computing Jacobi's z_i = r_i * (1 / a_ii) gives the built-in
 *   jacobi's bits in every solver but CG, and CG's iterations and solution to rounding: CG
 *   fuses the built-in's diagonal into its own updates, where an optimizing compiler may
 *   contract a product and a sum into one FMA (seen in the Release build, not in Debug).
 *   Both shells together give the format-with-shell-pc's bits in every solver.
 * - Refusals: jacobi, bjacobi, ilu0, ic0 of a shell matrix; krill_mat_to_csr,
 *   krill_mat_diagonal, krill_mat_update_values; reproducible mode with a shell matrix or a
 *   shell preconditioner (KRILL_ERR_UNSUPPORTED, messages naming the shell).
 * - A failing callback: its status comes back from krill_solve, with a message naming the
 *   shell and the callback's own message; a status that is not a krill_status is ARG.
 * - Argument checks (NULL ctx, n < 0, NULL apply, NULL output: KRILL_ERR_ARG naming each).
 * - Allocation faults through both constructors and through krill_solve with both shells,
 *   every solver. */
#include <string.h>

#include "core/core_impl.h"
#include "solver_util.h"

/* ---- callbacks ----------------------------------------------------------------------- */

/* y = A x by krill_mat_spmv of a krill matrix on the same context (vectors wrapping x and y):
 * the shell computes exactly what that format computes. fail_at > 0: the fail_at-th call and
 * the later ones return fail_with instead. */
typedef struct wrap_op {
    krill_ctx *ctx;
    const krill_mat *a;
    long calls, fail_at;
    krill_status fail_with;
} wrap_op;

static krill_status wrap_apply(void *user, const double *x, double *y, int64_t n)
{
    wrap_op *w = user;
    krill_vec *xv = NULL, *yv = NULL;
    krill_status st;
    if (++w->calls >= w->fail_at && w->fail_at > 0) return w->fail_with;
    st = krill_vec_wrap(w->ctx, n, (double *)x, &xv);
    if (st == KRILL_OK) st = krill_vec_wrap(w->ctx, n, y, &yv);
    if (st == KRILL_OK) st = krill_mat_spmv(w->a, 1.0, xv, 0.0, yv);
    krill_vec_destroy(&xv);
    krill_vec_destroy(&yv);
    return st;
}

/* Jacobi of the caller's: z_i = r_i * dinv_i, dinv_i = 1 / a_ii (the built-in's bits). */
typedef struct jacobi_op {
    double *dinv;
    long calls;
} jacobi_op;

static krill_status jacobi_apply(void *user, const double *r, double *z, int64_t n)
{
    jacobi_op *j = user;
    j->calls++;
    for (int64_t i = 0; i < n; i++) z[i] = r[i] * j->dinv[i];
    return KRILL_OK;
}

static void jacobi_make(const krill_csr *a, jacobi_op *j)
{
    j->calls = 0;
    j->dinv = calloc((size_t)a->n_rows + 1, sizeof(double));
    if (!j->dinv) exit(1);
    for (int32_t i = 0; i < a->n_rows; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] == i) j->dinv[i] = 1.0 / a->val[p];
}

/* y = T x, T = tridiag(-1, 3, -1): SPD, no allocation (the fault walks). */
static krill_status tridiag_apply(void *user, const double *x, double *y, int64_t n)
{
    (void)user;
    for (int64_t i = 0; i < n; i++)
        y[i] = 3.0 * x[i] - (i > 0 ? x[i - 1] : 0.0) - (i + 1 < n ? x[i + 1] : 0.0);
    return KRILL_OK;
}

/* z = r / 3: Jacobi of T */
static krill_status third_apply(void *user, const double *r, double *z, int64_t n)
{
    (void)user;
    for (int64_t i = 0; i < n; i++) z[i] = r[i] / 3.0;
    return KRILL_OK;
}

/* A callback that fails inside a krill call: its message must reach the caller. */
static krill_status failing_krill_call(void *user, const double *x, double *y, int64_t n)
{
    krill_vec *v = NULL;
    (void)x, (void)y, (void)n;
    return krill_vec_wrap((krill_ctx *)user, 5, NULL, &v);
}

static krill_status not_a_status(void *user, const double *x, double *y, int64_t n)
{
    (void)user, (void)x, (void)y, (void)n;
    return (krill_status)42;
}

/* Solve s's system with matrix a (x from 0); info's history is released on failure. */
static krill_status solve_with(su_system *s, const krill_mat *a, const krill_pc *pc,
                               const krill_solver_opts *o, krill_solve_info *info)
{
    if (krill_vec_fill(s->x, 0.0) != KRILL_OK) exit(1);
    return krill_solve(a, pc, s->b, s->x, o, info);
}

static int has(const char *text) { return strstr(krill_last_error(), text) != NULL; }

/* ---- SpMV ---------------------------------------------------------------------------- */

static void test_spmv(krill_ctx *ctx)
{
    krill_csr *csr = su_gen("convdiff3d:6,2");
    const int64_t n = csr->n_rows;
    static const double ab[][2] = { {1.0, 0.0}, {-1.0, 1.0}, {2.5, 0.5}, {-0.75, 0.0},
                                    {1.0, 1.0}, {0.0, 2.0} };
    krill_mat *a = NULL, *shell = NULL;
    krill_vec *x = NULL, *y1 = NULL, *y2 = NULL;
    double *h = calloc((size_t)n, sizeof(double)), *r1 = calloc((size_t)n, sizeof(double)),
           *r2 = calloc((size_t)n, sizeof(double));
    krill_format_stats stats;
    double t = 0.0;
    wrap_op w = { ctx, NULL, 0, 0, KRILL_OK };
    if (!h || !r1 || !r2) exit(1);
    CHECK_OK(krill_mat_create(ctx, csr, "csr", &a));
    w.a = a;
    CHECK_OK(krill_mat_create_shell(ctx, n, wrap_apply, &w, &shell));
    CHECK_OK(krill_vec_create(ctx, n, &x));
    CHECK_OK(krill_vec_create(ctx, n, &y1));
    CHECK_OK(krill_vec_create(ctx, n, &y2));
    tu_random(h, n, 5);
    CHECK_OK(krill_vec_upload(x, h));
    for (size_t k = 0; k < sizeof ab / sizeof ab[0]; k++) {
        double alpha = ab[k][0], beta = ab[k][1];
        tu_random(h, n, 9);
        if (beta == 0.0) h[n / 2] = NAN;   /* beta = 0 ignores y, NaN included */
        CHECK_OK(krill_vec_upload(y1, h));
        CHECK_OK(krill_vec_upload(y2, h));
        CHECK_OK(krill_mat_spmv(a, alpha, x, beta, y1));
        CHECK_OK(krill_mat_spmv(shell, alpha, x, beta, y2));
        CHECK_OK(krill_vec_download(y1, r1));
        CHECK_OK(krill_vec_download(y2, r2));
        CHECK(memcmp(r1, r2, (size_t)n * sizeof(double)) == 0);
    }
    CHECK(w.calls == (long)(sizeof ab / sizeof ab[0]));
    CHECK(strcmp(krill_mat_format(shell), "shell") == 0);
    CHECK(krill_mat_rows(shell) == n && krill_mat_cols(shell) == n && krill_mat_nnz(shell) == 0);
    CHECK(krill_mat_ctx(shell) == ctx && krill_mat_choice(shell) == NULL);
    krill_mat_stats(shell, &stats);
    CHECK(stats.n_rows == n && stats.n_cols == n && stats.nnz == 0 && stats.bytes == 0);
    CHECK(strcmp(stats.variant, "callback") == 0);
    CHECK_OK(krill_mat_time_spmv(shell, 1, 3, &t));
    CHECK(t >= 0.0);
    /* krill_mat_spmv's own checks hold for a shell too */
    CHECK_STATUS(krill_mat_spmv(shell, 1.0, x, 0.0, x), KRILL_ERR_ARG);
    krill_vec_destroy(&x);
    krill_vec_destroy(&y1);
    krill_vec_destroy(&y2);
    krill_mat_destroy(&shell);
    CHECK(shell == NULL);
    krill_mat_destroy(&shell);    /* NULL-safe */
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
    free(h);
    free(r1);
    free(r2);
}

/* ---- solvers: shell against the format it wraps ---------------------------------------- */

typedef struct run_out {
    krill_status st;
    krill_solve_info info;
    double *x;
} run_out;

static void run(su_system *s, const krill_mat *a, const krill_pc *pc, const krill_solver_opts *o,
                run_out *out)
{
    out->x = calloc((size_t)s->n + 1, sizeof(double));
    if (!out->x) exit(1);
    if (krill_vec_fill(s->x, 0.0) != KRILL_OK) exit(1);
    out->st = krill_solve(a, pc, s->b, s->x, o, &out->info);
    CHECK_OK(out->st);
    CHECK_OK(krill_vec_download(s->x, out->x));
}

static void run_free(run_out *r)
{
    krill_solve_info_free(&r->info);
    free(r->x);
}

/* Same iterations, history and solution: bit for bit when `bits`, else to rounding:
 * iterations within one, and solutions that differ by less than 1e3 rtol or than the sum
 * of their distances to x_true (an ill-conditioned A: bcsstk01's two CG solutions differ by
 * 1.7e-5). Both converged. */
static void compare(const char *what, const su_system *s, const run_out *ref,
                    const run_out *got, int bits, double rtol)
{
    int same_x = memcmp(ref->x, got->x, (size_t)s->n * sizeof(double)) == 0;
    int same_h = ref->info.history_len == got->info.history_len &&
                 memcmp(ref->info.history, got->info.history,
                        (size_t)ref->info.history_len * sizeof(double)) == 0;
    double dx = tu_max_rel_diff(got->x, ref->x, s->n);
    printf("  %-44s %4d / %4d iterations, x %s (max rel diff %.1e)\n", what,
           ref->info.iterations, got->info.iterations, same_x ? "bitwise equal" : "differs", dx);
    CHECK(ref->info.reason > 0 && got->info.reason > 0);
    CHECK(su_true_relres(s->csr, got->x, s->b_host) <= rtol * 1.0001);
    if (bits) {
        CHECK(ref->info.iterations == got->info.iterations);
        CHECK(same_x);
        CHECK(same_h);
        CHECK(ref->info.relres == got->info.relres);
    } else {
        CHECK(abs(ref->info.iterations - got->info.iterations) <= 1);
        CHECK(dx <= 1e3 * rtol || dx <= tu_max_rel_diff(ref->x, s->x_true, s->n) +
                                          tu_max_rel_diff(got->x, s->x_true, s->n));
    }
}

/* The matrix spec (a generated spec or "mtx/NAME.mtx") for solver t, the shell against the
 * format, then the shell preconditioner against jacobi, then both shells. */
static void compare_solver(int threads, const char *spec, krill_solver_type t, int jacobi_ok)
{
    krill_ctx *ctx = tu_cpu_ctx(threads);
    krill_csr *csr = strncmp(spec, "mtx/", 4) == 0 ? su_testdata(spec) : su_gen(spec);
    const char *format = t == KRILL_SOLVER_CG ? "ell" : "csr";
    const double rtol = 1e-8;
    krill_solver_opts o = su_krylov_opts(t, KRILL_ORTHO_CGS2, 20, rtol, 20000);
    su_system s;
    krill_mat *shell = NULL, *csr_mat = NULL, *shell_csr = NULL;
    krill_pc *jac = NULL, *sjac = NULL;
    wrap_op w = { ctx, NULL, 0, 0, KRILL_OK }, wc = { ctx, NULL, 0, 0, KRILL_OK };
    jacobi_op j;
    run_out ref, got;
    char what[128];

    su_system_make(&s, ctx, csr, format, 17);
    w.a = s.a;
    CHECK_OK(krill_mat_create_shell(ctx, s.n, wrap_apply, &w, &shell));
    /* the matrix */
    run(&s, s.a, NULL, &o, &ref);
    run(&s, shell, NULL, &o, &got);
    snprintf(what, sizeof what, "%s %s, %d thr: shell vs %s", krill_solver_name(t), spec, threads,
             format);
    compare(what, &s, &ref, &got, 1, rtol);
    CHECK(w.calls >= got.info.iterations);
    run_free(&got);
    if (t == KRILL_SOLVER_CG) {   /* against csr and its fused SpMV-dot: rounding */
        CHECK_OK(krill_mat_create(ctx, csr, "csr", &csr_mat));
        run(&s, csr_mat, NULL, &o, &got);
        snprintf(what, sizeof what, "cg %s, %d thr: csr vs shell(ell)", spec, threads);
        compare(what, &s, &ref, &got, 0, rtol);
        run_free(&got);
    }
    run_free(&ref);
    /* the preconditioner, and both */
    if (jacobi_ok) {
        jacobi_make(csr, &j);
        CHECK_OK(krill_pc_create(s.a, "jacobi", &jac));
        CHECK_OK(krill_pc_create_shell(ctx, s.n, jacobi_apply, &j, &sjac));
        run(&s, s.a, jac, &o, &ref);
        run(&s, s.a, sjac, &o, &got);
        snprintf(what, sizeof what, "%s %s, %d thr: shell pc vs jacobi", krill_solver_name(t), spec,
                 threads);
        compare(what, &s, &ref, &got, t != KRILL_SOLVER_CG, rtol);
        CHECK(j.calls >= got.info.iterations);
        run_free(&got);
        run_free(&ref);
        /* both shells against the format with the shell pc: the same bits (CG: against ell) */
        wc.a = s.a;
        CHECK_OK(krill_mat_create_shell(ctx, s.n, wrap_apply, &wc, &shell_csr));
        run(&s, s.a, sjac, &o, &ref);
        run(&s, shell_csr, sjac, &o, &got);
        snprintf(what, sizeof what, "%s %s, %d thr: both shells vs %s+shell pc",
                 krill_solver_name(t), spec, threads, format);
        compare(what, &s, &ref, &got, 1, rtol);
        run_free(&got);
        run_free(&ref);
        free(j.dinv);
    }
    krill_pc_destroy(&jac);
    krill_pc_destroy(&sjac);
    krill_mat_destroy(&shell);
    krill_mat_destroy(&shell_csr);
    krill_mat_destroy(&csr_mat);
    su_system_free(&s);
    krill_ctx_destroy(&ctx);
}

static void test_solvers(void)
{
    for (int threads = 1; threads <= 2; threads++) {
        compare_solver(threads, "convdiff3d:8,2", KRILL_SOLVER_GMRES, 1);
        compare_solver(threads, "convdiff3d:8,2", KRILL_SOLVER_FGMRES, 1);
        compare_solver(threads, "convdiff3d:8,2", KRILL_SOLVER_BICGSTAB, 1);
        compare_solver(threads, "poisson3d:8", KRILL_SOLVER_CG, 1);
        compare_solver(threads, "poisson3d:8", KRILL_SOLVER_MINRES, 1);
        compare_solver(threads, "poisson3d:8", KRILL_SOLVER_PIPECG, 1);
        compare_solver(threads, "stokes2d:8", KRILL_SOLVER_MINRES, 0);   /* zero diagonal */
    }
    if (tu_testdata_has("mtx/cage5.mtx")) {
        compare_solver(2, "mtx/cage5.mtx", KRILL_SOLVER_GMRES, 1);
        compare_solver(2, "mtx/cage5.mtx", KRILL_SOLVER_BICGSTAB, 1);
    }
    if (tu_testdata_has("mtx/bcsstk01.mtx")) {
        compare_solver(2, "mtx/bcsstk01.mtx", KRILL_SOLVER_CG, 1);
        compare_solver(2, "mtx/bcsstk01.mtx", KRILL_SOLVER_MINRES, 1);
    }
}

/* ---- refusals, failing callbacks, argument checks ----------------------------------------- */

static void test_refusals(void)
{
    static const char *const needs_entries[] = { "jacobi", "bjacobi", "bjacobi:3", "ilu0", "ic0" };
    krill_ctx *ctx = tu_cpu_ctx(2);
    krill_csr *csr = su_gen("poisson3d:5"), *back = (krill_csr *)&back;
    const int64_t n = csr->n_rows;
    krill_mat *shell = NULL, *a = NULL;
    krill_pc *pc = (krill_pc *)&pc, *spc = NULL;
    krill_vec *b = NULL, *x = NULL, *d = NULL;
    krill_solver_opts o = su_krylov_opts(KRILL_SOLVER_GMRES, KRILL_ORTHO_CGS2, 20, 1e-8, 0);
    krill_solve_info info;
    double v[1] = { 1.0 };

    CHECK_OK(krill_mat_create_shell(ctx, n, tridiag_apply, NULL, &shell));
    CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
    CHECK_OK(krill_vec_create(ctx, n, &b));
    CHECK_OK(krill_vec_create(ctx, n, &x));
    CHECK_OK(krill_vec_create(ctx, n, &d));
    CHECK_OK(krill_vec_fill(b, 1.0));
    for (size_t k = 0; k < sizeof needs_entries / sizeof needs_entries[0]; k++) {
        pc = (krill_pc *)&pc;
        CHECK_STATUS(krill_pc_create(shell, needs_entries[k], &pc), KRILL_ERR_UNSUPPORTED);
        CHECK(pc == NULL);
        CHECK(has("shell matrix") && has(needs_entries[k]) && has("krill_pc_create_shell"));
    }
    CHECK_OK(krill_pc_create(shell, "none", &pc));   /* needs nothing */
    krill_pc_destroy(&pc);
    CHECK_STATUS(krill_mat_to_csr(shell, &back), KRILL_ERR_UNSUPPORTED);
    CHECK(back == NULL && has("shell matrix"));
    CHECK_STATUS(krill_mat_diagonal(shell, d), KRILL_ERR_UNSUPPORTED);
    CHECK(has("shell matrix") && has("diagonal"));
    CHECK_STATUS(krill_mat_update_values(shell, v), KRILL_ERR_UNSUPPORTED);
    CHECK(has("shell matrix") && has("krill_mat_update_values"));
    CHECK_STATUS(krill_mat_update_values(shell, NULL), KRILL_ERR_UNSUPPORTED);
    /* a shell preconditioner is not a registry name */
    CHECK_STATUS(krill_pc_create(a, "shell", &pc), KRILL_ERR_ARG);
    /* reproducible mode: the shell matrix at its first SpMV, the shell pc at its first apply */
    CHECK_OK(krill_pc_create_shell(ctx, n, third_apply, NULL, &spc));
    CHECK(strcmp(krill_pc_name(spc), "shell") == 0 && strstr(krill_pc_describe(spc), "callback"));
    CHECK_OK(krill_pc_update_values(spc));
    CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, 0));
    CHECK_STATUS(krill_solve(shell, NULL, b, x, &o, &info), KRILL_ERR_UNSUPPORTED);
    CHECK(has("shell matrix") && has("reproducible") && info.history == NULL);
    CHECK_STATUS(krill_mat_spmv(shell, 1.0, b, 0.0, x), KRILL_ERR_UNSUPPORTED);
    CHECK_STATUS(krill_solve(a, spc, b, x, &o, &info), KRILL_ERR_UNSUPPORTED);
    CHECK(has("shell preconditioner") && has("reproducible") && info.history == NULL);
    CHECK_STATUS(krill_pc_apply(spc, b, x), KRILL_ERR_UNSUPPORTED);
    CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OFF, 0));
    CHECK_OK(krill_solve(shell, spc, b, x, &o, &info));   /* off again: both work */
    CHECK(info.reason > 0);
    krill_solve_info_free(&info);
    krill_pc_destroy(&spc);
    krill_vec_destroy(&b);
    krill_vec_destroy(&x);
    krill_vec_destroy(&d);
    krill_mat_destroy(&shell);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
    krill_ctx_destroy(&ctx);
}

static void test_failing_callbacks(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    krill_csr *csr = su_gen("convdiff3d:5,2");
    su_system s;
    krill_mat *shell = NULL;
    krill_pc *spc = NULL;
    wrap_op w = { ctx, NULL, 0, 4, KRILL_ERR_NUMERIC };
    krill_solver_opts o = su_krylov_opts(KRILL_SOLVER_GMRES, KRILL_ORTHO_CGS2, 20, 1e-10, 0);
    krill_solve_info info;

    su_system_make(&s, ctx, csr, NULL, 3);
    w.a = s.a;
    /* the 4th SpMV fails: the solve stops with the callback's status */
    for (int t = KRILL_SOLVER_GMRES; t <= KRILL_SOLVER_PIPECG; t++) {
        o.solver = (krill_solver_type)t;
        w.calls = 0;
        CHECK_OK(krill_mat_create_shell(ctx, s.n, wrap_apply, &w, &shell));
        CHECK_STATUS(solve_with(&s, shell, NULL, &o, &info), KRILL_ERR_NUMERIC);
        CHECK(has("shell matrix: the apply callback failed"));
        CHECK(info.history == NULL && w.calls == 4);
        krill_mat_destroy(&shell);
    }
    o.solver = KRILL_SOLVER_GMRES;
    /* the callback's own krill message comes along */
    CHECK_OK(krill_mat_create_shell(ctx, s.n, failing_krill_call, ctx, &shell));
    CHECK_STATUS(solve_with(&s, shell, NULL, &o, &info), KRILL_ERR_ARG);
    CHECK(has("shell matrix") && has("krill_vec_wrap: data is NULL"));
    krill_mat_destroy(&shell);
    /* not a krill_status: ARG, and the value */
    CHECK_OK(krill_mat_create_shell(ctx, s.n, not_a_status, NULL, &shell));
    CHECK_STATUS(solve_with(&s, shell, NULL, &o, &info), KRILL_ERR_ARG);
    CHECK(has("shell matrix") && has("42") && has("not a krill_status"));
    krill_mat_destroy(&shell);
    /* a failing preconditioner, in every solver */
    for (int t = KRILL_SOLVER_GMRES; t <= KRILL_SOLVER_MINRES; t++) {
        o.solver = (krill_solver_type)t;
        CHECK_OK(krill_pc_create_shell(ctx, s.n, failing_krill_call, ctx, &spc));
        CHECK_STATUS(solve_with(&s, s.a, spc, &o, &info), KRILL_ERR_ARG);
        CHECK(has("shell preconditioner: the apply callback failed") && has("krill_vec_wrap"));
        CHECK(info.history == NULL);
        krill_pc_destroy(&spc);
    }
    /* the size checks of krill_solve and krill_pc_apply hold for shells */
    CHECK_OK(krill_mat_create_shell(ctx, s.n + 1, tridiag_apply, NULL, &shell));
    CHECK_STATUS(solve_with(&s, shell, NULL, &o, &info), KRILL_ERR_ARG);
    krill_mat_destroy(&shell);
    CHECK_OK(krill_pc_create_shell(ctx, s.n - 1, third_apply, NULL, &spc));
    CHECK_STATUS(solve_with(&s, s.a, spc, &o, &info), KRILL_ERR_ARG);
    CHECK(has("preconditioner \"shell\""));
    CHECK_STATUS(krill_pc_apply(spc, s.b, s.x), KRILL_ERR_ARG);
    krill_pc_destroy(&spc);
    su_system_free(&s);
    krill_ctx_destroy(&ctx);
}

static void test_arguments(void)
{
    krill_ctx *ctx = tu_cpu_ctx(1);
    krill_mat *m = (krill_mat *)&m;
    krill_pc *p = (krill_pc *)&p;
    krill_vec *b = NULL, *x = NULL;
    krill_solver_opts o = su_krylov_opts(KRILL_SOLVER_CG, KRILL_ORTHO_CGS2, 20, 1e-8, 0);
    krill_solve_info info;

    CHECK_STATUS(krill_mat_create_shell(NULL, 4, tridiag_apply, NULL, &m), KRILL_ERR_ARG);
    CHECK(m == NULL && has("krill_mat_create_shell") && has("ctx"));
    m = (krill_mat *)&m;
    CHECK_STATUS(krill_mat_create_shell(ctx, -1, tridiag_apply, NULL, &m), KRILL_ERR_ARG);
    CHECK(m == NULL && has("n = -1"));
    CHECK_STATUS(krill_mat_create_shell(ctx, 4, NULL, NULL, &m), KRILL_ERR_ARG);
    CHECK(m == NULL && has("apply"));
    CHECK_STATUS(krill_mat_create_shell(ctx, 4, tridiag_apply, NULL, NULL), KRILL_ERR_ARG);
    CHECK(has("mat"));
    CHECK_STATUS(krill_pc_create_shell(NULL, 4, third_apply, NULL, &p), KRILL_ERR_ARG);
    CHECK(p == NULL && has("krill_pc_create_shell") && has("ctx"));
    p = (krill_pc *)&p;
    CHECK_STATUS(krill_pc_create_shell(ctx, -3, third_apply, NULL, &p), KRILL_ERR_ARG);
    CHECK(p == NULL && has("n = -3"));
    CHECK_STATUS(krill_pc_create_shell(ctx, 4, NULL, NULL, &p), KRILL_ERR_ARG);
    CHECK(p == NULL && has("apply"));
    CHECK_STATUS(krill_pc_create_shell(ctx, 4, third_apply, NULL, NULL), KRILL_ERR_ARG);
    CHECK(has("pc"));
    /* n = 0: an empty system solves at once */
    CHECK_OK(krill_mat_create_shell(ctx, 0, tridiag_apply, NULL, &m));
    CHECK_OK(krill_pc_create_shell(ctx, 0, third_apply, NULL, &p));
    CHECK_OK(krill_vec_create(ctx, 0, &b));
    CHECK_OK(krill_vec_create(ctx, 0, &x));
    CHECK_OK(krill_solve(m, p, b, x, &o, &info));
    CHECK(info.reason > 0 && info.iterations == 0);
    krill_solve_info_free(&info);
    krill_vec_destroy(&b);
    krill_vec_destroy(&x);
    krill_pc_destroy(&p);
    CHECK(p == NULL);
    krill_pc_destroy(&p);
    krill_mat_destroy(&m);
    krill_ctx_destroy(&ctx);
}

/* ---- allocation faults -------------------------------------------------------------------- */

typedef struct fault_case {
    krill_ctx *ctx;
    int64_t n;
    krill_mat *mat;
    krill_pc *pc;
    /* the solve */
    krill_solver_type solver;
    const krill_mat *a;
    const krill_pc *spc;
    krill_vec *b, *x;
    krill_solve_info info;
} fault_case;

static krill_status run_create_shell(void *user)
{
    fault_case *c = user;
    return krill_mat_create_shell(c->ctx, c->n, tridiag_apply, NULL, &c->mat);
}

static int mat_null(void *user) { return ((fault_case *)user)->mat == NULL; }

static void mat_free(void *user) { krill_mat_destroy(&((fault_case *)user)->mat); }

static krill_status run_pc_create_shell(void *user)
{
    fault_case *c = user;
    return krill_pc_create_shell(c->ctx, c->n, third_apply, NULL, &c->pc);
}

static int pc_null(void *user) { return ((fault_case *)user)->pc == NULL; }

static void pc_free(void *user) { krill_pc_destroy(&((fault_case *)user)->pc); }

static krill_status run_solve(void *user)
{
    fault_case *c = user;
    krill_solver_opts o = su_krylov_opts(c->solver, KRILL_ORTHO_CGS2, 10, 1e-8, 0);
    krill_status st = krill_vec_fill(c->x, 0.0);
    return st ? st : krill_solve(c->a, c->spc, c->b, c->x, &o, &c->info);
}

static int info_clean(void *user) { return ((fault_case *)user)->info.history == NULL; }

static void info_free(void *user) { krill_solve_info_free(&((fault_case *)user)->info); }

static void test_faults(void)
{
    fault_case c;
    memset(&c, 0, sizeof c);
    c.ctx = tu_cpu_ctx(2);
    c.n = 200;
    tu_fault_call mk = { "krill_mat_create_shell", run_create_shell, mat_null, mat_free, &c, 0 };
    tu_fault_call pk = { "krill_pc_create_shell", run_pc_create_shell, pc_null, pc_free, &c, 0 };
    CHECK(tu_alloc_fault_walk(&mk) >= 2);   /* the handle, its state, the work vector */
    CHECK(tu_alloc_fault_walk(&pk) >= 2);   /* the handle and its state */
    CHECK_OK(krill_mat_create_shell(c.ctx, c.n, tridiag_apply, NULL, &c.mat));
    CHECK_OK(krill_pc_create_shell(c.ctx, c.n, third_apply, NULL, &c.pc));
    CHECK_OK(krill_vec_create(c.ctx, c.n, &c.b));
    CHECK_OK(krill_vec_create(c.ctx, c.n, &c.x));
    CHECK_OK(krill_vec_fill(c.b, 1.0));
    c.a = c.mat;
    c.spc = c.pc;
    for (int t = KRILL_SOLVER_GMRES; t <= KRILL_SOLVER_PIPECG; t++) {
        char what[64];
        tu_fault_call sk = { what, run_solve, info_clean, info_free, &c, 0 };
        snprintf(what, sizeof what, "krill_solve(%s, shell matrix, shell pc)",
                 krill_solver_name((krill_solver_type)t));
        c.solver = (krill_solver_type)t;
        tu_alloc_fault_walk(&sk);
    }
    krill_vec_destroy(&c.b);
    krill_vec_destroy(&c.x);
    krill_pc_destroy(&c.pc);
    krill_mat_destroy(&c.mat);
    krill_ctx_destroy(&c.ctx);
}

int main(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    TU_STEP(test_arguments());
    TU_STEP(test_spmv(ctx));
    TU_STEP(test_refusals());
    TU_STEP(test_failing_callbacks());
    TU_STEP(test_solvers());
    TU_STEP(test_faults());
    krill_ctx_destroy(&ctx);
    return tu_finish("test_shell");
}
