/* Shifted ILU(0) / IC(0) (precond/ilu_shift.c, ilu.c): ic0 (shift by default) and ilu0:shift
 * factor s A + alpha D with alpha searched as PETSc does for its positive-definite shift.
 *
 * Matrices that need a shift: Kershaw's (J. Comput. Phys. 1978; PETSc's KSP tutorial ex1 for
 * its shift): 3 on the diagonal and the 4-cycle 0-1-2-3 with -2, -2, -2 and +2 (a strong
 * positive off-diagonal). SPD (eigenvalues 3 +- 2 sqrt 2), yet IC(0) meets a negative pivot.
 * kershaw(K, eps) repeats it in K diagonal blocks and couples block b's first row with block
 * b + K/2's by eps (< 0.17: still SPD); ILU(0) of a 3 x 3 matrix whose u_11 cancels to 0;
 * and testdata (bcsstk13 and bcsstk15 are SPD and refused by ic0:noshift; every square
 * matrix refused unshifted is tried shifted). Checked:
 *  - the shifted factors are, bit for bit, the unshifted factors of the shifted matrix
 *    A + alpha diag(A) formed here (a_ii + RN(alpha a_ii)), and alpha / alpha_top is one of
 *    the search's fractions (a multiple of 1/32 in (0, 1]);
 *  - PCG / GMRES converge with the shifted factors where the unshifted are refused;
 *  - -A: ic0 factors A's negation and applies -M^{-1}: z(-A) = -z(A) bit for bit, PCG on
 *    (-A, -b) takes as many iterations as on (A, b);
 *  - the refusals: without a shift they name the row and suggest the option; ic0 on a
 *    diagonal of both signs names the non-positive a_ii; a search that gives up names alpha;
 *    malformed options;
 *  - krill_pc_update_values runs the search again (alpha follows the values, 0 when none is
 *    needed); allocation faults in build and update; reproducible mode (CPU): the same bits
 *    of z and of a whole PCG solve on 1 and 2 threads (level-scheduled there).
 * Built twice: CPU (label data) and, with ILU_SHIFT_TEST_GPU, GPU (label gpu; the same
 * checks but the thread counts: the GPU factors the shifted values the host prepares). */
#include <float.h>

#include "core/core_impl.h"
#include "precond/ilu_impl.h"
#include "solver_util.h"

/* ---- matrices --------------------------------------------------------------------------- */

/* kershaw(K, eps): n = 4K (K even or 1), the block above on the diagonal, entries
 * (4b, 4(b + K/2)) and their mirrors = eps for b < K/2. */
static krill_csr *kershaw(int32_t k, double eps)
{
    static const double blk[4][4] = {{3, -2, 0, 2}, {-2, 3, -2, 0}, {0, -2, 3, -2},
                                     {2, 0, -2, 3}};
    const int32_t n = 4 * k;
    int64_t cap = 12 * (int64_t)k + 2 * (int64_t)k, nnz = 0;
    int32_t *rows = malloc((size_t)cap * sizeof *rows), *cols = malloc((size_t)cap * sizeof *cols);
    double *vals = malloc((size_t)cap * sizeof *vals);
    krill_csr *a = NULL;
    if (!rows || !cols || !vals) exit(1);
    for (int32_t b = 0; b < k; b++) {
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                if (blk[i][j] != 0.0) {
                    rows[nnz] = 4 * b + i;
                    cols[nnz] = 4 * b + j;
                    vals[nnz++] = blk[i][j];
                }
        if (k > 1 && b < k / 2) {
            rows[nnz] = 4 * b, cols[nnz] = 4 * (b + k / 2), vals[nnz++] = eps;
            rows[nnz] = 4 * (b + k / 2), cols[nnz] = 4 * b, vals[nnz++] = eps;
        }
    }
    CHECK_OK(krill_csr_from_triplets(n, n, nnz, rows, cols, vals, &a));
    free(rows);
    free(cols);
    free(vals);
    return a;
}

/* A copy of a scaled by s with a_ii -> s a_ii + RN(alpha s a_ii): the matrix the search
 * factors (ilu_shift.c; every a_ii != 0 here). */
static krill_csr *shifted(const krill_csr *a, double s, double alpha)
{
    krill_csr *b = NULL;
    CHECK_OK(krill_csr_copy(a, &b));
    for (int32_t i = 0; i < b->n_rows; i++)
        for (int64_t p = b->row_ptr[i]; p < b->row_ptr[i + 1]; p++) {
            b->val[p] *= s;
            if (b->col[p] == i) b->val[p] += alpha * b->val[p];
        }
    return b;
}

/* alpha_top of ilu_shift.c for a matrix with every a_ii != 0. */
static double alpha_top(const krill_csr *a)
{
    double top = 0.0;
    for (int32_t i = 0; i < a->n_rows; i++) {
        double off = 0.0, d = 0.0;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] == i) d = fabs(a->val[p]);
            else off += fabs(a->val[p]);
        if ((off - d) / d > top) top = (off - d) / d;
    }
    return 1.1 * top;
}

/* ---- helpers ---------------------------------------------------------------------------- */

/* The row number in "... row N (0-based) ...", or -1. */
static int32_t message_row(const char *msg)
{
    const char *end = strstr(msg, " (0-based)"), *p = end;
    if (!end) return -1;
    while (p > msg && p[-1] >= '0' && p[-1] <= '9') p--;
    return p == end ? -1 : (int32_t)atol(p);
}

/* The factors of pc (downloaded to the host, nnz) and their sign and alpha. */
static double *factors_of(const krill_pc *pc, int64_t nnz, int *sign, double *alpha)
{
    krill_ilu_factors f;
    double *v = malloc((size_t)nnz * sizeof *v + 8);
    if (!v) exit(1);
    CHECK_OK(krill_pc_ilu_factors(pc, &f));
    CHECK_OK(krill_mem_download(pc->ctx, v, f.val, (size_t)nnz * sizeof *v)); /* context memory */
    *sign = f.sign;
    *alpha = f.alpha;
    return v;
}

/* kind ("ic0", "ilu0:shift", ...) on a: built with a shift alpha > 0 (returned) whose
 * fraction of alpha_top is a search fraction, with the factors of kind:noshift on the
 * shifted matrix, sign s; describe names alpha. */
static double check_shifted(krill_ctx *ctx, const krill_csr *a, const char *kind,
                            const char *plain_kind, int s)
{
    krill_mat *m = NULL, *ms = NULL;
    krill_pc *pc = NULL, *ps = NULL;
    krill_csr *b = NULL;
    double alpha = 0.0, alpha2, *f = NULL, *g = NULL, frac;
    int sign = 0, sign2 = 0;
    CHECK_OK(krill_mat_create(ctx, a, NULL, &m));
    CHECK_STATUS(krill_pc_create(m, plain_kind, &pc), KRILL_ERR_NUMERIC);
    CHECK_OK(krill_pc_create(m, kind, &pc));
    if (pc == NULL) goto done;
    f = factors_of(pc, a->nnz, &sign, &alpha);
    CHECK(sign == s && alpha > 0.0);
    CHECK(strstr(krill_pc_describe(pc), "shift alpha = ") != NULL);
    frac = alpha / alpha_top(a) * 32.0;
    CHECK(fabs(frac - nearbyint(frac)) < 1e-9 && frac >= 1.0 - 1e-9 && frac <= 32.0 + 1e-9);
    b = shifted(a, s, alpha);
    CHECK_OK(krill_mat_create(ctx, b, NULL, &ms));
    CHECK_OK(krill_pc_create(ms, plain_kind, &ps));
    if (ps) {
        g = factors_of(ps, a->nnz, &sign2, &alpha2);
        CHECK(memcmp(f, g, (size_t)a->nnz * sizeof *f) == 0 && sign2 == 1 && alpha2 == 0.0);
    }
    printf("  %s: %s\n", kind, krill_pc_describe(pc));
done:
    krill_pc_destroy(&pc);
    krill_pc_destroy(&ps);
    krill_mat_destroy(&m);
    krill_mat_destroy(&ms);
    krill_csr_destroy(&b);
    free(f);
    free(g);
    return alpha;
}

/* Iterations of solver + pc_name on (s A, s A x_true) from 0 to rtol 1e-8, -1 when it did
 * not converge or the true residual is above 1e-7. */
static int iterations(krill_ctx *ctx, const krill_csr *a, double s, krill_solver_type solver,
                      const char *pc_name)
{
    su_system sys;
    krill_pc *pc = NULL;
    krill_solver_opts o;
    krill_solve_info info = {0};
    krill_csr *b = shifted(a, s, 0.0);
    int its = -1;
    su_system_make(&sys, ctx, b, NULL, 7);
    CHECK_OK(krill_pc_create(sys.a, pc_name, &pc));
    krill_solver_opts_default(&o);
    o.solver = solver;
    o.maxit = 3000;
    if (pc) CHECK_OK(su_solve(&sys, pc, &o, &info));
    if (pc && info.reason == KRILL_CONVERGED_RTOL) {
        CHECK_OK(krill_vec_download(sys.x, sys.x_host));
        if (su_true_relres(sys.csr, sys.x_host, sys.b_host) <= 1e-7) its = info.iterations;
    }
    krill_solve_info_free(&info);
    krill_pc_destroy(&pc);
    su_system_free(&sys);
    return its;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void test_kershaw(krill_ctx *ctx)
{
    krill_csr *a1 = kershaw(1, 0.0), *a = kershaw(64, 0.05);
    const double u_cancels[9] = {1, 1, 0, 1, 1, 1, 0, 1, 3};   /* u_11 = 1 - 1 = 0 */
    krill_csr *c = tu_csr_from_dense(3, u_cancels);
    check_shifted(ctx, a1, "ic0", "ic0:noshift", 1);
    check_shifted(ctx, a, "ic0:shift", "ic0:noshift", 1);
    check_shifted(ctx, c, "ilu0:2,shift", "ilu0", 1);
    {
        const int cg = iterations(ctx, a, 1.0, KRILL_SOLVER_CG, "ic0");
        const int cg_jacobi = iterations(ctx, a, 1.0, KRILL_SOLVER_CG, "jacobi");
        const int gm = iterations(ctx, c, 1.0, KRILL_SOLVER_GMRES, "ilu0:shift");
        printf("  kershaw(64): CG + ic0 %d iterations (+ jacobi %d); 3 x 3: GMRES + "
               "ilu0:shift %d\n", cg, cg_jacobi, gm);
        CHECK(cg > 0 && cg_jacobi > 0 && gm > 0);
    }
    krill_csr_destroy(&a1);
    krill_csr_destroy(&a);
    krill_csr_destroy(&c);
}

/* -A: the factors of A with s = -1, z(-A) = -z(A) bit for bit, the same PCG iterations
 * (a matrix that needs no shift, and one that does). */
static void test_negative(krill_ctx *ctx)
{
    krill_csr *p = su_gen("poisson3d:8"), *k = kershaw(64, 0.05);
    const krill_csr *mats[2] = {p, k};
    for (int t = 0; t < 2; t++) {
        const krill_csr *a = mats[t];
        krill_csr *na = shifted(a, -1.0, 0.0);
        const int32_t n = a->n_rows;
        krill_mat *m = NULL, *mn = NULL;
        krill_pc *pc = NULL, *pn = NULL;
        krill_vec *vr = NULL, *vz = NULL;
        double *r = malloc((size_t)n * 8), *z = malloc((size_t)n * 8), *zn = malloc((size_t)n * 8);
        double *f = NULL, *fn = NULL, alpha = 0.0, alpha_n = 0.0;
        int sign = 0, sign_n = 0, same = 1;
        if (!r || !z || !zn) exit(1);
        tu_random(r, n, 5);
        CHECK_OK(krill_mat_create(ctx, a, NULL, &m));
        CHECK_OK(krill_mat_create(ctx, na, NULL, &mn));
        CHECK_OK(krill_pc_create(m, "ic0", &pc));
        CHECK_OK(krill_pc_create(mn, "ic0", &pn));
        CHECK(strstr(krill_pc_describe(pn), "factors -A") != NULL);
        f = factors_of(pc, a->nnz, &sign, &alpha);
        fn = factors_of(pn, a->nnz, &sign_n, &alpha_n);
        CHECK(sign == 1 && sign_n == -1 && alpha == alpha_n && (alpha > 0.0) == (t == 1));
        CHECK(memcmp(f, fn, (size_t)a->nnz * sizeof *f) == 0);
        CHECK_OK(krill_vec_create(ctx, n, &vr));
        CHECK_OK(krill_vec_create(ctx, n, &vz));
        CHECK_OK(krill_vec_upload(vr, r));
        CHECK_OK(krill_pc_apply(pc, vr, vz));
        CHECK_OK(krill_vec_download(vz, z));
        CHECK_OK(krill_pc_apply(pn, vr, vz));
        CHECK_OK(krill_vec_download(vz, zn));
        for (int32_t i = 0; i < n; i++) same &= zn[i] == -z[i];
        CHECK(same);
        {
            const int its = iterations(ctx, a, 1.0, KRILL_SOLVER_CG, "ic0");
            const int its_n = iterations(ctx, a, -1.0, KRILL_SOLVER_CG, "ic0");
            printf("  PCG + ic0 on %s: %d iterations, on -A: %d\n", t ? "kershaw(64)" :
                   "poisson3d:8", its, its_n);
            CHECK(its > 0 && its_n == its);
        }
        krill_vec_destroy(&vr);
        krill_vec_destroy(&vz);
        krill_pc_destroy(&pc);
        krill_pc_destroy(&pn);
        krill_mat_destroy(&m);
        krill_mat_destroy(&mn);
        krill_csr_destroy(&na);
        free(r);
        free(z);
        free(zn);
        free(f);
        free(fn);
    }
    krill_csr_destroy(&p);
    krill_csr_destroy(&k);
}

static void expect_refusal(krill_ctx *ctx, const krill_csr *a, const char *kind,
                           krill_status want, int32_t row, const char *phrase)
{
    krill_mat *m = NULL;
    krill_pc *pc = NULL;
    CHECK_OK(krill_mat_create(ctx, a, NULL, &m));
    CHECK_STATUS(krill_pc_create(m, kind, &pc), want);
    CHECK(pc == NULL && strstr(krill_last_error(), phrase) != NULL);
    if (row >= 0) CHECK(message_row(krill_last_error()) == row);
    if (!strstr(krill_last_error(), phrase) || (row >= 0 && message_row(krill_last_error()) != row))
        fprintf(stderr, "  %s: expected \"%s\" (row %d), got: %s\n", kind, phrase, row,
                krill_last_error());
    krill_pc_destroy(&pc);
    krill_mat_destroy(&m);
}

static void test_refusals(krill_ctx *ctx)
{
    const int32_t zr[3] = {0, 0, 1}, zc[3] = {0, 1, 1};   /* row 1: a stored a_11 = 0 only */
    const double zv[3] = {2, 1, 0};
    const double mixed[9] = {4, 1, 0, 1, -2, 1, 0, 1, 4};
    const double zero_cancel[9] = {1, 1, 0, 1, 1, 1, 0, 1, 3};
    krill_csr *k = kershaw(1, 0.0), *s = NULL, *x = tu_csr_from_dense(3, mixed);
    krill_csr *z = tu_csr_from_dense(3, zero_cancel);
    static const char *bad[] = {"ilu0:shift,shift", "ic0:4,shift,noshift", "ic0:shft",
                                "ilu0:4,2", "ilu0:", "ilu0:shift,"};
    static const char *good[] = {"ilu0:4,shift", "ic0:shift,2", "ic0:noshift,6", "ilu0:noshift"};
    krill_csr *p = su_gen("poisson3d:4");
    krill_mat *m = NULL;
    CHECK_OK(krill_csr_from_triplets(2, 2, 3, zr, zc, zv, &s));
    expect_refusal(ctx, k, "ic0:noshift", KRILL_ERR_NUMERIC, 3, "without :noshift");
    expect_refusal(ctx, z, "ilu0", KRILL_ERR_NUMERIC, 1, "try ilu0:shift");
    expect_refusal(ctx, x, "ic0", KRILL_ERR_NUMERIC, 1, "not definite");
    expect_refusal(ctx, s, "ilu0:shift", KRILL_ERR_NUMERIC, 1, "no diagonal shift made");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_refusal(ctx, p, bad[i], KRILL_ERR_ARG, -1, "shift or noshift");
    CHECK_OK(krill_mat_create(ctx, p, NULL, &m));
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        krill_pc *pc = NULL;
        CHECK_OK(krill_pc_create(m, good[i], &pc));
        CHECK(pc && strstr(krill_pc_describe(pc), "shift") != NULL);
        krill_pc_destroy(&pc);
    }
    krill_mat_destroy(&m);
    krill_csr_destroy(&k);
    krill_csr_destroy(&s);
    krill_csr_destroy(&x);
    krill_csr_destroy(&z);
    krill_csr_destroy(&p);
}

/* pc's sign and alpha, and its factors equal to those of a fresh build on m's values. */
static void check_as_fresh(const krill_pc *pc, const krill_mat *m, int64_t nnz, int want_sign,
                           int want_shift)
{
    krill_pc *fresh = NULL;
    double *f, *g, alpha, alpha_f;
    int sign, sign_f;
    CHECK_OK(krill_pc_create(m, "ic0", &fresh));
    if (!fresh) return;
    f = factors_of(pc, nnz, &sign, &alpha);
    g = factors_of(fresh, nnz, &sign_f, &alpha_f);
    CHECK(sign == want_sign && sign_f == sign && alpha == alpha_f && (alpha > 0.0) == want_shift);
    CHECK(memcmp(f, g, (size_t)nnz * sizeof *f) == 0);
    free(f);
    free(g);
    krill_pc_destroy(&fresh);
}

/* krill_pc_update_values searches again: no shift, a shift, none, a refused diagonal of both
 * signs (apply refuses), -A, A. */
static void test_update(krill_ctx *ctx)
{
    krill_csr *a = kershaw(64, 0.05);
    double *mild = malloc((size_t)a->nnz * 8), *neg = malloc((size_t)a->nnz * 8);
    double *mixed = malloc((size_t)a->nnz * 8);
    krill_mat *m = NULL;
    krill_pc *pc = NULL;
    krill_vec *vr = NULL, *vz = NULL;
    if (!mild || !neg || !mixed) exit(1);
    for (int32_t i = 0; i < a->n_rows; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++) {
            mild[p] = a->col[p] == i ? a->val[p] : 0.25 * a->val[p];   /* dominant */
            neg[p] = -a->val[p];
            mixed[p] = a->col[p] == i && i == 5 ? -a->val[p] : a->val[p];
        }
    CHECK_OK(krill_mat_create(ctx, a, NULL, &m));
    CHECK_OK(krill_mat_update_values(m, mild));
    CHECK_OK(krill_pc_create(m, "ic0", &pc));
    CHECK_OK(krill_vec_create(ctx, a->n_rows, &vr));
    CHECK_OK(krill_vec_create(ctx, a->n_rows, &vz));
    CHECK_OK(krill_vec_fill(vr, 1.0));
    CHECK(strstr(krill_pc_describe(pc), "none needed") != NULL);
    CHECK_OK(krill_mat_update_values(m, a->val));
    CHECK_OK(krill_pc_update_values(pc));
    CHECK(strstr(krill_pc_describe(pc), "shift alpha = ") != NULL);
    check_as_fresh(pc, m, a->nnz, 1, 1);
    CHECK_OK(krill_mat_update_values(m, mild));
    CHECK_OK(krill_pc_update_values(pc));
    check_as_fresh(pc, m, a->nnz, 1, 0);
    CHECK_OK(krill_mat_update_values(m, mixed));
    CHECK_STATUS(krill_pc_update_values(pc), KRILL_ERR_NUMERIC);
    CHECK(message_row(krill_last_error()) == 5 && strstr(krill_last_error(), "not definite"));
    CHECK_STATUS(krill_pc_apply(pc, vr, vz), KRILL_ERR_NUMERIC);
    CHECK_OK(krill_mat_update_values(m, neg));
    CHECK_OK(krill_pc_update_values(pc));
    check_as_fresh(pc, m, a->nnz, -1, 1);
    CHECK_OK(krill_pc_apply(pc, vr, vz));
    CHECK_OK(krill_mat_update_values(m, a->val));
    CHECK_OK(krill_pc_update_values(pc));
    check_as_fresh(pc, m, a->nnz, 1, 1);
    krill_vec_destroy(&vr);
    krill_vec_destroy(&vz);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&m);
    krill_csr_destroy(&a);
    free(mild);
    free(neg);
    free(mixed);
}

/* An update under allocation faults: each failure leaves the preconditioner refusing to
 * apply; the success, the factors of a fresh build. */
typedef struct update_call {
    krill_pc *pc;
    krill_vec *r, *z;
} update_call;

static krill_status run_update(void *user) { return krill_pc_update_values(((update_call *)user)->pc); }

static int update_refuses(void *user)
{
    update_call *c = user;
    return krill_pc_apply(c->pc, c->r, c->z) == KRILL_ERR_NUMERIC &&
           strstr(krill_last_error(), "last update failed") != NULL;
}

static void test_faults(krill_ctx *ctx)
{
    static const char *kinds[] = {"ic0", "ic0:shift", "ilu0:shift"};
    const double cancel[9] = {1, 1, 0, 1, 1, 1, 0, 1, 3};
    krill_csr *a = kershaw(8, 0.05), *c = tu_csr_from_dense(3, cancel), *na = shifted(a, -1.0, 0.0);
    krill_mat *m = NULL, *mc = NULL, *mn = NULL;
    update_call u = {NULL, NULL, NULL};
    tu_fault_call call = {"krill_pc_update_values(ic0, shifted)", run_update, update_refuses,
                          NULL, &u, 0};
    CHECK_OK(krill_mat_create(ctx, a, NULL, &m));
    CHECK_OK(krill_mat_create(ctx, c, NULL, &mc));
    CHECK_OK(krill_mat_create(ctx, na, NULL, &mn));
    su_check_pc_faults(m, kinds[0], 10);
    su_check_pc_faults(mn, kinds[1], 10);
    su_check_pc_faults(mc, kinds[2], 10);
    CHECK_OK(krill_pc_create(m, "ic0", &u.pc));
    CHECK_OK(krill_vec_create(ctx, a->n_rows, &u.r));
    CHECK_OK(krill_vec_create(ctx, a->n_rows, &u.z));
    CHECK_OK(krill_vec_fill(u.r, 1.0));
    CHECK(tu_alloc_fault_walk(&call) >= 3);
    check_as_fresh(u.pc, m, a->nnz, 1, 1);
    krill_vec_destroy(&u.r);
    krill_vec_destroy(&u.z);
    krill_pc_destroy(&u.pc);
    krill_mat_destroy(&m);
    krill_mat_destroy(&mc);
    krill_mat_destroy(&mn);
    krill_csr_destroy(&a);
    krill_csr_destroy(&c);
    krill_csr_destroy(&na);
}

#ifndef ILU_SHIFT_TEST_GPU
/* Reproducible mode: z = M^{-1} r and a whole PCG solve have the same bits on 1 thread and
 * on 2 (the CPU solves level by level there), for A and -A, both shifted. */
static void test_repro_threads(void)
{
    krill_ctx *ctx[2] = {tu_cpu_ctx(1), tu_cpu_ctx(2)};
    krill_csr *a = kershaw(512, 0.05);
    const int32_t n = a->n_rows;
    double *z[2], *x[2];
    for (int t = 0; t < 2; t++) {
        z[t] = malloc((size_t)n * 8);
        x[t] = malloc((size_t)n * 8);
        if (!z[t] || !x[t]) exit(1);
        CHECK_OK(krill_ctx_set_repro(ctx[t], KRILL_REPRO_OZAKI, 0));
    }
    for (int sgn = 1; sgn >= -1; sgn -= 2) {
        for (int t = 0; t < 2; t++) {
            su_system s;
            krill_pc *pc = NULL;
            krill_solver_opts o;
            krill_solve_info info = {0};
            su_system_make(&s, ctx[t], shifted(a, sgn, 0.0), NULL, 11);
            CHECK_OK(krill_pc_create(s.a, "ic0", &pc));
            if (!pc) continue;
            CHECK(strstr(krill_pc_describe(pc), t ? "level by level on 2 threads" : "serial"));
            CHECK_OK(krill_pc_apply(pc, s.b, s.x));
            CHECK_OK(krill_vec_download(s.x, z[t]));
            krill_solver_opts_default(&o);
            o.solver = KRILL_SOLVER_CG;
            CHECK_OK(su_solve(&s, pc, &o, &info));
            CHECK(info.reason == KRILL_CONVERGED_RTOL);
            CHECK_OK(krill_vec_download(s.x, x[t]));
            krill_solve_info_free(&info);
            krill_pc_destroy(&pc);
            su_system_free(&s);
        }
        CHECK(memcmp(z[0], z[1], (size_t)n * 8) == 0 && memcmp(x[0], x[1], (size_t)n * 8) == 0);
    }
    for (int t = 0; t < 2; t++) {
        free(z[t]);
        free(x[t]);
        krill_ctx_destroy(&ctx[t]);
    }
    krill_csr_destroy(&a);
}
#endif

/* ---- testdata ---------------------------------------------------------------------------- */

typedef struct testdata_counts {
    krill_ctx *ctx;
    int refused, built, converged;
    int spd_named;           /* bcsstk13 and bcsstk15 met: refused unshifted, PCG converges */
} testdata_counts;

/* A square testdata matrix refused by ic0:noshift (symmetric) or ilu0 with a numerical error:
 * built shifted, and PCG (symmetric) or GMRES(30) tried with it. */
static void check_testdata_matrix(const krill_csr *a, const char *name, void *user)
{
    testdata_counts *c = user;
    const int sym = krill_csr_is_symmetric(a);
    const char *plain = sym ? "ic0:noshift" : "ilu0", *kind = sym ? "ic0" : "ilu0:shift";
    const int spd = strcmp(name, "bcsstk13.mtx") == 0 || strcmp(name, "bcsstk15.mtx") == 0;
    krill_mat *m = NULL;
    krill_pc *pc = NULL;
    krill_status st;
    if (a->nnz > 200000) return;
    CHECK_OK(krill_mat_create(c->ctx, a, NULL, &m));
    st = krill_pc_create(m, plain, &pc);
    krill_pc_destroy(&pc);
    if (st == KRILL_ERR_NUMERIC && strstr(krill_last_error(), "no diagonal entry") == NULL) {
        int its = -1;
        c->refused++;
        st = krill_pc_create(m, kind, &pc);
        if (st == KRILL_OK) {
            c->built++;
            its = iterations(c->ctx, a, 1.0, sym ? KRILL_SOLVER_CG : KRILL_SOLVER_GMRES, kind);
            c->converged += its > 0;
        }
        printf("  %s: %s refused; %s %s, %d iterations (%s)\n", name, plain, kind,
               st == KRILL_OK ? "built" : "refused", its,
               st == KRILL_OK ? krill_pc_describe(pc) : krill_last_error());
        if (spd) {
            CHECK(st == KRILL_OK && its > 0);
            c->spd_named++;
        }
        krill_pc_destroy(&pc);
    }
    krill_mat_destroy(&m);
}

static void test_testdata(krill_ctx *ctx)
{
    testdata_counts c = {ctx, 0, 0, 0, 0};
    const int tested = tu_for_each_square_mtx(check_testdata_matrix, &c);
    if (tested < 0) return;
    printf("%d testdata matrices: %d refused unshifted, %d built shifted, %d of them converged "
           "(PCG + ic0 or GMRES(30) + ilu0:shift, rtol 1e-8, 3000 iterations)\n", tested,
           c.refused, c.built, c.converged);
    if (tu_testdata_shared()) CHECK(c.spd_named == 2);
}

int main(void)
{
#ifdef ILU_SHIFT_TEST_GPU
    krill_ctx *ctx = tu_gpu_ctx_or_skip();
#else
    krill_ctx *ctx = tu_cpu_ctx(2);
#endif
    test_kershaw(ctx);
    test_negative(ctx);
    test_refusals(ctx);
    test_update(ctx);
    test_faults(ctx);
#ifndef ILU_SHIFT_TEST_GPU
    test_repro_threads();
#endif
    test_testdata(ctx);
    krill_ctx_destroy(&ctx);
    return tu_finish("test_ilu_shift");
}
