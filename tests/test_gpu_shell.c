/* test_gpu_shell: shell matrices and shell preconditioners on a GPU context, where the
 * callbacks get device pointers (test_shell covers the CPU, the refusals and the faults).
 * The callbacks compute with krill on those pointers: krill_vec_wrap and krill_mat_spmv of a
 * GPU csr matrix (y = A x), krill_blas_xmy (z = r .* dinv, dinv in device memory).
 * - GMRES, FGMRES and BiCGStab (convdiff3d) and MINRES (poisson3d): the shell gives the
 *   format's iterations, residual history and solution bit for bit; CG within rounding (csr's
 *   fused SpMV-dot sums p'Ap in another order than the shell's SpMV and dot).
 * - The shell preconditioner computing Jacobi gives the built-in jacobi's iterations in
 *   every solver, its bits in GMRES and BiCGStab.
 * - A failing callback's status comes back from the solve. Skips (77) without a GPU. */
#include <string.h>

#include "core/core_impl.h"
#include "solver_util.h"

typedef struct wrap_op {
    krill_ctx *ctx;
    const krill_mat *a;
    long calls;
    int fail;
} wrap_op;

static krill_status wrap_apply(void *user, const double *x, double *y, int64_t n)
{
    wrap_op *w = user;
    krill_vec *xv = NULL, *yv = NULL;
    krill_status st;
    w->calls++;
    if (w->fail) return KRILL_ERR_NUMERIC;
    st = krill_vec_wrap(w->ctx, n, (double *)x, &xv);
    if (st == KRILL_OK) st = krill_vec_wrap(w->ctx, n, y, &yv);
    if (st == KRILL_OK) st = krill_mat_spmv(w->a, 1.0, xv, 0.0, yv);
    krill_vec_destroy(&xv);
    krill_vec_destroy(&yv);
    return st;
}

typedef struct jacobi_op {
    krill_ctx *ctx;
    double *dinv;            /* device memory */
    long calls;
} jacobi_op;

static krill_status jacobi_apply(void *user, const double *r, double *z, int64_t n)
{
    jacobi_op *j = user;
    j->calls++;
    return krill_blas_xmy(j->ctx, n, r, j->dinv, z);
}

typedef struct outcome {
    krill_solve_info info;
    double *x;
} outcome;

static void run(su_system *s, const krill_mat *a, const krill_pc *pc, const krill_solver_opts *o,
                outcome *out)
{
    out->x = calloc((size_t)s->n, sizeof(double));
    if (!out->x) exit(1);
    CHECK_OK(krill_vec_fill(s->x, 0.0));
    CHECK_OK(krill_solve(a, pc, s->b, s->x, o, &out->info));
    CHECK_OK(krill_vec_download(s->x, out->x));
}

static void compare(const char *what, const su_system *s, outcome *ref, outcome *got, int bits)
{
    const int same = ref->info.iterations == got->info.iterations &&
                     ref->info.history_len == got->info.history_len &&
                     memcmp(ref->info.history, got->info.history,
                            (size_t)ref->info.history_len * sizeof(double)) == 0 &&
                     memcmp(ref->x, got->x, (size_t)s->n * sizeof(double)) == 0;
    const double dx = tu_max_rel_diff(got->x, ref->x, s->n);
    printf("  %-36s %4d / %4d iterations, %s (max rel diff %.1e)\n", what, ref->info.iterations,
           got->info.iterations, same ? "bit for bit" : "x differs", dx);
    CHECK(ref->info.reason > 0 && got->info.reason > 0);
    if (bits) CHECK(same);
    else CHECK(abs(ref->info.iterations - got->info.iterations) <= 1 && dx <= 1e-6);
    krill_solve_info_free(&ref->info);
    krill_solve_info_free(&got->info);
    free(ref->x);
    free(got->x);
}

static void check_solver(krill_ctx *gpu, const char *spec, krill_solver_type t, const char *name)
{
    krill_solver_opts o = su_krylov_opts(t, KRILL_ORTHO_CGS2, 20, 1e-9, 5000);
    su_system s;
    krill_mat *shell = NULL;
    krill_pc *jac = NULL, *sjac = NULL;
    wrap_op w = {gpu, NULL, 0, 0};
    jacobi_op j = {gpu, NULL, 0};
    outcome ref, got;
    double *dinv;
    char what[96];
    su_system_make(&s, gpu, su_gen(spec), "csr", 23);
    w.a = s.a;
    CHECK_OK(krill_mat_create_shell(gpu, s.n, wrap_apply, &w, &shell));
    run(&s, s.a, NULL, &o, &ref);
    run(&s, shell, NULL, &o, &got);
    snprintf(what, sizeof what, "%s %s: shell vs csr", name, spec);
    compare(what, &s, &ref, &got, t != KRILL_SOLVER_CG);
    CHECK(w.calls > 0);
    /* the preconditioner */
    dinv = malloc((size_t)s.n * sizeof *dinv);
    for (int32_t i = 0; i < s.csr->n_rows; i++)
        for (int64_t k = s.csr->row_ptr[i]; k < s.csr->row_ptr[i + 1]; k++)
            if (s.csr->col[k] == i) dinv[i] = 1.0 / s.csr->val[k];
    j.dinv = su_to_ctx(gpu, dinv, s.n);
    CHECK_OK(krill_pc_create(s.a, "jacobi", &jac));
    CHECK_OK(krill_pc_create_shell(gpu, s.n, jacobi_apply, &j, &sjac));
    run(&s, s.a, jac, &o, &ref);
    run(&s, s.a, sjac, &o, &got);
    snprintf(what, sizeof what, "%s %s: shell pc vs jacobi", name, spec);
    compare(what, &s, &ref, &got, t == KRILL_SOLVER_GMRES || t == KRILL_SOLVER_BICGSTAB);
    CHECK(j.calls > 0);
    /* a failing callback */
    w.fail = 1;
    CHECK_OK(krill_vec_fill(s.x, 0.0));
    CHECK_STATUS(krill_solve(shell, NULL, s.b, s.x, &o, &ref.info), KRILL_ERR_NUMERIC);
    krill_solve_info_free(&ref.info);
    krill_pc_destroy(&jac);
    krill_pc_destroy(&sjac);
    krill_mem_free(gpu, j.dinv);
    free(dinv);
    krill_mat_destroy(&shell);
    su_system_free(&s);
}

int main(void)
{
    krill_ctx *gpu = tu_gpu_ctx_or_skip();
    printf("%s\n", krill_ctx_describe(gpu));
    check_solver(gpu, "convdiff3d:10,2", KRILL_SOLVER_GMRES, "gmres");
    check_solver(gpu, "convdiff3d:10,2", KRILL_SOLVER_FGMRES, "fgmres");
    check_solver(gpu, "convdiff3d:10,2", KRILL_SOLVER_BICGSTAB, "bicgstab");
    check_solver(gpu, "poisson3d:10", KRILL_SOLVER_MINRES, "minres");
    check_solver(gpu, "poisson3d:10", KRILL_SOLVER_CG, "cg");
    krill_ctx_destroy(&gpu);
    return tu_finish("test_gpu_shell");
}
