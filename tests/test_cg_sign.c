/* CG on negative definite systems (PETSc's definiteness test, solver/cg.c): for SPD testdata
 * matrices and the SPD generators, -A x = -b takes exactly the iterations of A x = b, with
 * and without Jacobi (and block Jacobi, which CG applies on its own, where n % 3 == 0), in
 * plain and reproducible mode. What holds, and is checked: the same reason, the same
 * iteration count, and the same iterates bit for bit -- x is identical (the solution of
 * -A x = -b is that of A x = b) and so is the residual history (r is negated exactly):
 * every operation CG makes is odd or even in the sign of A, and rounding to nearest is
 * symmetric, so no bit can differ. The state machine's sign test itself on
 * hand-made states. Built twice: CPU (label unit) and, with CG_SIGN_TEST_GPU, GPU (label
 * gpu; skips without a device). */
#include <string.h>

#include "core/core_impl.h"
#include "solver/solver_impl.h"
#include "solver_util.h"

static krill_ctx *test_ctx(void)
{
#ifdef CG_SIGN_TEST_GPU
    return tu_gpu_ctx_or_skip();
#else
    return tu_cpu_ctx(2);
#endif
}

/* The definiteness test on states: a first p'Ap of either sign is a step; a later one of
 * the other sign, or zero, is indefinite; r'z likewise against the previous r'z. */
static void test_state_machine(void)
{
    krill_cg_state s;
    double alpha = 0.0;
    memset(&s, 0, sizeof s);
    s.rz = -2.0;
    s.pap = -4.0;
    CHECK(krill_cg_step(&s, &alpha) == KRILL_CG_RUNNING && alpha == 0.5);
    s.pap = 0.0;
    CHECK(krill_cg_step(&s, &alpha) == KRILL_CG_INDEFINITE);
    s.pap = -4.0;
    s.tol2 = 0.0;
    s.rr = 1.0;
    krill_cg_finish_residual(&s, 1, KRILL_CG_PC_DIAGONAL, 0.5, 1.0, -1.0);
    CHECK(s.stop == KRILL_CG_RUNNING && s.pap_sign == -1.0 && s.applied == 1);
    CHECK(s.beta == 0.5 && s.rz == -1.0);
    s.pap = 3.0;                                  /* p'Ap changed sign */
    CHECK(krill_cg_step(&s, &alpha) == KRILL_CG_INDEFINITE);
    krill_cg_next_direction(&s, 1.0);             /* r'z changed sign */
    CHECK(s.stop == KRILL_CG_INDEFINITE);
    s.stop = KRILL_CG_RUNNING;
    krill_cg_next_direction(&s, 0.0);
    CHECK(s.stop == KRILL_CG_INDEFINITE);
    CHECK(krill_cg_sign_kept(-1e-300, 0.0) && !krill_cg_sign_kept(0.0, 0.0));
}

typedef struct sign_run {
    krill_solve_info info;
    double *x;               /* n, the solution */
} sign_run;

/* Solve (sign * A) x = sign * b from x = 0, b = A x_true (seed 3). */
static void solve_signed(krill_ctx *ctx, const krill_csr *csr, double sign, const char *pc_name,
                         sign_run *out)
{
    su_system s;
    krill_csr *copy = NULL;
    krill_pc *pc = NULL;
    krill_solver_opts o;
    krill_solver_opts_default(&o);
    o.solver = KRILL_SOLVER_CG;
    o.rtol = 1e-8;
    o.maxit = 3000;
    CHECK_OK(krill_csr_copy(csr, &copy));
    for (int64_t k = 0; k < copy->nnz; k++) copy->val[k] *= sign;
    su_system_make(&s, ctx, copy, NULL, 3);
    if (pc_name) CHECK_OK(krill_pc_create(s.a, pc_name, &pc));
    CHECK_OK(su_solve(&s, pc, &o, &out->info));
    out->x = malloc(((size_t)s.n + 1) * sizeof(double));
    if (!out->x) exit(1);
    CHECK_OK(krill_vec_download(s.x, out->x));
    krill_pc_destroy(&pc);
    su_system_free(&s);
}

/* A and -A: same reason, iterations, history and x, bit for bit. */
static void check_pair(krill_ctx *ctx, const krill_csr *csr, const char *name,
                       const char *pc_name)
{
    sign_run pos, neg;
    int64_t n = csr->n_rows;
    int same_x, same_history;
    solve_signed(ctx, csr, 1.0, pc_name, &pos);
    solve_signed(ctx, csr, -1.0, pc_name, &neg);
    same_x = memcmp(pos.x, neg.x, (size_t)n * sizeof(double)) == 0;
    same_history = pos.info.history_len == neg.info.history_len &&
                   memcmp(pos.info.history, neg.info.history,
                          (size_t)pos.info.history_len * sizeof(double)) == 0;
    printf("cg %-26s pc %-6s%s: A %4d iterations (%s), -A %4d (%s); x %s, history %s\n", name,
           pc_name ? pc_name : "none", krill_ctx_repro(ctx, NULL) ? " repro" : "",
           pos.info.iterations, krill_reason_string(pos.info.reason), neg.info.iterations,
           krill_reason_string(neg.info.reason), same_x ? "identical" : "DIFFERS",
           same_history ? "identical" : "DIFFERS");
    CHECK(pos.info.reason > 0 || pos.info.reason == KRILL_DIVERGED_MAXIT);
    CHECK(neg.info.reason == pos.info.reason);
    CHECK(neg.info.iterations == pos.info.iterations);
    CHECK(same_x && same_history);
    krill_solve_info_free(&pos.info);
    krill_solve_info_free(&neg.info);
    free(pos.x);
    free(neg.x);
}

static void check_pcs(krill_ctx *ctx, const krill_csr *csr, const char *name)
{
    check_pair(ctx, csr, name, NULL);
    check_pair(ctx, csr, name, "jacobi");       /* fused into CG's kernels (DIAGONAL) */
    if (csr->n_rows % 3 == 0)                   /* applied on its own (GENERAL) */
        check_pair(ctx, csr, name, "bjacobi:3");
}

static void test_pairs(krill_ctx *ctx)
{
    static const char *const specs[] = { "poisson3d:10", "elasticity3d:6,3,3", NULL };
    /* SPD matrices of testdata (the manifest's "SPD" notes); the local set has the first four */
    static const char *const files[] = { "mtx/494_bus.mtx", "mtx/bcsstk01.mtx", "mtx/LF10.mtx",
                                         "mtx/Trefethen_20b.mtx", "mtx/gr_30_30.mtx",
                                         "mtx/mesh2e1.mtx", "mtx/poisson274.mtx",
                                         "mtx/pyamg_unit_cube.mtx", NULL };
    int tested = 0;
    for (int k = 0; specs[k] && !(tu_quick() && k > 0); k++) {   /* quick: poisson3d */
        krill_csr *csr = su_gen(specs[k]);
        check_pcs(ctx, csr, specs[k]);
        krill_csr_destroy(&csr);
    }
    for (int k = 0; files[k] && !tu_quick(); k++) {   /* quick: generated only */
        krill_csr *csr = NULL;
        if (!tu_testdata_has(files[k])) continue;
        csr = su_testdata(files[k]);
        check_pcs(ctx, csr, files[k] + 4);
        krill_csr_destroy(&csr);
        tested++;
    }
    if (tested == 0) printf("no SPD testdata matrix %s: generated ones only\n",
                            tu_quick() ? "in quick mode" : "found");
}

int main(void)
{
    krill_ctx *ctx = test_ctx();
    test_state_machine();
    test_pairs(ctx);
    CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, 0));
    test_pairs(ctx);
    krill_ctx_destroy(&ctx);
    return tu_finish("test_cg_sign");
}
