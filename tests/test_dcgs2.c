/* DCGS2, the delayed CGS2 of GMRES and FGMRES (issue 18; solver/dcgs2.c):
 *   - its two passes (krill_fused_dcgs2_dots, krill_fused_dcgs2_update) against the plain C
 *     references below, k = 0 .. 40 columns (the GPU's fused kernels for up to 8, 16 and 32
 *     columns, their edges, and the cuBLAS sweep and generic update beyond), short and long
 *     vectors (threaded), plain and reproducible mode: the update bit for bit (the GPU's plain kernel contracts: close), the sums close to the
 *     reference's, and on the CPU the same bits on 1 and 2 threads in reproducible mode;
 *   - GMRES(30) with DCGS2 takes the iterations of CGS2 within 2% (at least 1) on generated
 *     problems, with and without Jacobi, restarts 5 and 30; the residual estimate at the end
 *     agrees with the true residual (the final correction of the last column);
 *   - the loss of orthogonality ||I - Q'Q||_F of every cycle's basis (through the test hook
 *     of solver_impl.h) on ill-conditioned generated matrices: DCGS2 within 10x of CGS2,
 *     printed with MGS's;
 *   - FGMRES with DCGS2 (Jacobi, ILU(0)) converges with GMRES's iterations within 2%.
 * With the argument "testdata": GMRES(30) with CGS2 and DCGS2 on every square matrix of
 * testdata (tu_for_each_square_mtx): where CGS2 converges, DCGS2 does; the total of the
 * iterations within 2% of CGS2's, each matrix within 10% (those beyond 2% are printed with
 * MGS's count: over many restarts, rounding alone moves GMRES's count by a few percent on
 * some systems; bcspwr02 with 12 right-hand sides: MGS up to 3.8% from CGS2, DCGS2 6.4%,
 * in both directions).
 * Built twice: test_dcgs2 on CPU contexts, test_gpu_dcgs2 (DCGS2_TEST_GPU) on the GPU. */
#include <math.h>

#include "core/core_impl.h"
#include "solver/solver_impl.h"
#include "solver_util.h"

#ifdef DCGS2_TEST_GPU
#define DEVICE "gpu"
#define ON_GPU 1
#else
#define DEVICE "cpu"
#define ON_GPU 0
#endif
#define test_ctx(threads) su_test_ctx(ON_GPU, threads)

/* ---- the passes against their references ----------------------------------------------- */

#define TEST_MAX_K 40   /* the most columns checked */

/* out = [Q u w]'[u w] (solver_impl.h's layout), each sum in index order; mag: the same
 * sums of |terms| (the scale of the rounding error) */
static void ref_dots(int64_t n, int k, const double *v, double *out, double *mag)
{
    const double *u = v + (size_t)k * (size_t)n, *w = u + n;
    for (int c = 0; c < k + 2; c++) {
        const double *vc = v + (size_t)c * (size_t)n;
        double su = 0.0, sw = 0.0, au = 0.0, aw = 0.0;
        for (int64_t i = 0; i < n; i++) {
            su += vc[i] * u[i];
            sw += vc[i] * w[i];
            au += fabs(vc[i] * u[i]);
            aw += fabs(vc[i] * w[i]);
        }
        out[c] = su;
        out[k + 2 + c] = sw;
        mag[c] = au;
        mag[k + 2 + c] = aw;
    }
}

/* The update in the contract's order, every operation rounded (-ffp-contract=off). */
static void ref_update(int64_t n, int k, double *v, const double *c)
{
    double *u = v + (size_t)k * (size_t)n, *w = u + n;
    for (int64_t i = 0; i < n; i++) {
        double ui = u[i] * c[k], wi = w[i] * c[2 * k + 2];
        for (int j = 0; j < k; j++) ui = ui + c[j] * v[(size_t)j * (size_t)n + i];
        for (int j = 0; j < k; j++) wi = wi + c[k + 1 + j] * v[(size_t)j * (size_t)n + i];
        u[i] = ui;
        w[i] = wi + c[2 * k + 1] * ui;
    }
}

/* One (n, k) on ctx: dots and update against the references; the update's output bytes go
 * to got (2n) for the thread comparison. */
static void check_passes(krill_ctx *ctx, int64_t n, int k, int repro, double *got)
{
    const size_t len = (size_t)n * (size_t)(k + 2);
    double *vh = malloc(len * sizeof(double) + 8), *ref = malloc(len * sizeof(double) + 8);
    double out[2 * TEST_MAX_K + 4], want[2 * TEST_MAX_K + 4], mag[2 * TEST_MAX_K + 4];
    double ch[2 * TEST_MAX_K + 3];
    double *v, *outd, *cd;
    krill_reduce_ws red;
    int sums_ok = 1, update_ok = 1;
    tu_random(vh, (int64_t)len, 1000 + (uint64_t)k);
    tu_random(ch, 2 * k + 3, 2000 + (uint64_t)k);
    memcpy(ref, vh, len * sizeof(double));
    v = su_to_ctx(ctx, vh, (int64_t)len);
    memset(out, 0, sizeof out);
    outd = su_to_ctx(ctx, out, 2 * k + 4);
    cd = su_to_ctx(ctx, ch, 2 * k + 3);
    CHECK_OK(krill_reduce_ws_create(ctx, 2 * k + 3, &red));
    CHECK_OK(krill_fused_dcgs2_dots(ctx, &red, n, k, v, n, outd));
    CHECK_OK(krill_scalars_read(ctx, outd, out, 2 * k + 4));
    ref_dots(n, k, ref, want, mag);
    for (int i = 0; i < 2 * k + 4; i++)
        if (!(fabs(out[i] - want[i]) <= 1e-13 * mag[i])) sums_ok = 0;
    CHECK(sums_ok);
    CHECK_OK(krill_fused_dcgs2_update(ctx, n, k, v, n, ch, cd));
    CHECK_OK(krill_mem_download(ctx, got, v + (size_t)k * (size_t)n,
                                2 * (size_t)n * sizeof(double)));
    ref_update(n, k, ref, ch);
#if defined(DCGS2_TEST_GPU)
    if (!repro) {   /* the plain kernel contracts: within the rounding of k + 2 terms */
        for (int64_t i = 0; i < 2 * n; i++)
            if (!(fabs(got[i] - ref[(size_t)k * (size_t)n + i]) <=
                  1e-14 * (k + 3) * (1.0 + fabs(ref[(size_t)k * (size_t)n + i]))))
                update_ok = 0;
    } else
#endif
    {
        update_ok = memcmp(got, ref + (size_t)k * (size_t)n, 2 * (size_t)n * sizeof(double)) == 0;
    }
    (void)repro;
    CHECK(update_ok);
    if (!sums_ok || !update_ok)
        fprintf(stderr, "  n %lld, k %d, %s: sums %s, update %s\n", (long long)n, k,
                repro ? "repro" : "plain", sums_ok ? "ok" : "WRONG", update_ok ? "ok" : "WRONG");
    krill_reduce_ws_destroy(ctx, &red);
    krill_mem_free(ctx, v);
    krill_mem_free(ctx, outd);
    krill_mem_free(ctx, cd);
    free(vh);
    free(ref);
}

static void test_passes(void)
{
    /* 20011: threaded on the CPU; 70001: several of the CPU sweep's 32768-row blocks per thread */
    static const int64_t ns[] = {0, 1, 7, 3001, 20011, 70001};
    /* the GPU instances' bounds 8, 16, 32 and their edges; 40: the cuBLAS sweep */
    static const int ks[] = {0, 1, 2, 5, 8, 9, 15, 16, 17, 31, 32, 33, TEST_MAX_K};
    const int nn = (int)(sizeof ns / sizeof ns[0]), nk = (int)(sizeof ks / sizeof ks[0]);
    const int contexts = strcmp(DEVICE, "gpu") == 0 ? 1 : 2;   /* CPU: 1 and 2 threads */
    krill_ctx *ctx[2] = {test_ctx(1), contexts == 2 ? test_ctx(2) : NULL};
    int same_bits = 1;
    for (int repro = 0; repro <= 1; repro++) {
        for (int c = 0; c < contexts; c++)
            CHECK_OK(krill_ctx_set_repro(ctx[c], repro ? KRILL_REPRO_OZAKI : KRILL_REPRO_OFF, 0));
        for (int a = 0; a < nn; a++) {
            for (int b = 0; b < nk; b++) {
                double *got[2];
                for (int c = 0; c < contexts; c++) {
                    got[c] = malloc(2 * (size_t)ns[a] * sizeof(double) + 8);
                    check_passes(ctx[c], ns[a], ks[b], repro, got[c]);
                }
                if (contexts == 2 &&
                    memcmp(got[0], got[1], 2 * (size_t)ns[a] * sizeof(double)) != 0)
                    same_bits = 0;
                for (int c = 0; c < contexts; c++) free(got[c]);
            }
        }
    }
    CHECK(same_bits);
    printf("passes (%s): dots and update against the references, n up to %lld, k up to %d\n",
           DEVICE, (long long)ns[nn - 1], ks[nk - 1]);
    krill_ctx_destroy(&ctx[0]);
    krill_ctx_destroy(&ctx[1]);
}

/* ---- whole solves ----------------------------------------------------------------------- */

/* Iterations within 2% of the reference's, at least 1 either way. */
static int within_2pct(int it, int ref)
{
    double slack = 0.02 * ref;
    return fabs((double)(it - ref)) <= (slack > 1.0 ? slack : 1.0);
}

/* GMRES (or FGMRES) with CGS2 and DCGS2 on csr (owned): both converge, DCGS2 within 2%, its
 * final estimate within 1% (and 1e-3 rtol) of the true residual. */
static void compare_counts(krill_ctx *ctx, const char *name, krill_csr *csr, const char *pc_name,
                           krill_solver_type solver, int restart)
{
    su_system s;
    krill_pc *pc = NULL;
    su_run r[2];
    const double rtol = 1e-10;
    su_system_make(&s, ctx, csr, NULL, 7);
    if (pc_name) CHECK_OK(krill_pc_create(s.a, pc_name, &pc));
    for (int i = 0; i < 2; i++) {
        krill_solver_opts o = su_krylov_opts(solver, i ? KRILL_ORTHO_DCGS2 : KRILL_ORTHO_CGS2,
                                         restart, rtol, 5000);
        su_solve_run(&s, pc, &o, &r[i]);
        CHECK(r[i].reason == KRILL_CONVERGED_RTOL);
        CHECK(r[i].relres <= rtol);
    }
    CHECK(within_2pct(r[1].iterations, r[0].iterations));
    CHECK(fabs(r[1].estimate - r[1].relres) <= 1e-2 * r[1].relres + 1e-3 * rtol);
    printf("%-6s(%2d) %-16s pc %-6s: cgs2 %4d, dcgs2 %4d iterations; dcgs2 true relres "
           "%.3e, estimate %.3e\n", solver == KRILL_SOLVER_FGMRES ? "fgmres" : "gmres", restart,
           name, pc_name ? pc_name : "none", r[0].iterations, r[1].iterations, r[1].relres,
           r[1].estimate);
    krill_pc_destroy(&pc);
    su_system_free(&s);
}

static void test_counts(void)
{
    krill_ctx *ctx = test_ctx(2);
    compare_counts(ctx, "convdiff3d:10,2", su_gen("convdiff3d:10,2"), NULL, KRILL_SOLVER_GMRES, 30);
    compare_counts(ctx, "convdiff3d:10,2", su_gen("convdiff3d:10,2"), "jacobi",
                   KRILL_SOLVER_GMRES, 30);
    compare_counts(ctx, "convdiff3d:10,2", su_gen("convdiff3d:10,2"), NULL, KRILL_SOLVER_GMRES, 5);
    if (tu_quick()) {   /* quick: a restart of 5, and FGMRES with ilu0 below */
        compare_counts(ctx, "convdiff3d:12,20", su_gen("convdiff3d:12,20"), "ilu0",
                       KRILL_SOLVER_FGMRES, 10);
        krill_ctx_destroy(&ctx);
        return;
    }
    compare_counts(ctx, "convdiff3d:24", su_gen("convdiff3d:24"), NULL, KRILL_SOLVER_GMRES, 30);
    compare_counts(ctx, "convdiff3d:12,20", su_gen("convdiff3d:12,20"), NULL,
                   KRILL_SOLVER_GMRES, 30);
    compare_counts(ctx, "poisson3d:12", su_gen("poisson3d:12"), NULL, KRILL_SOLVER_GMRES, 30);
    compare_counts(ctx, "elasticity3d:4,4,4", su_gen("elasticity3d:4,4,4"), "jacobi",
                   KRILL_SOLVER_GMRES, 30);
    /* FGMRES: Z keeps M^{-1} u_j of the vectors before their second pass */
    compare_counts(ctx, "convdiff3d:10,2", su_gen("convdiff3d:10,2"), "jacobi",
                   KRILL_SOLVER_FGMRES, 30);
    compare_counts(ctx, "convdiff3d:12,20", su_gen("convdiff3d:12,20"), "ilu0",
                   KRILL_SOLVER_FGMRES, 10);
    compare_counts(ctx, "elasticity3d:4,4,4", su_gen("elasticity3d:4,4,4"), "jacobi",
                   KRILL_SOLVER_FGMRES, 30);
    krill_ctx_destroy(&ctx);
}

/* ---- loss of orthogonality ---------------------------------------------------------------- */

typedef struct ortho_loss {
    double worst;            /* max over the cycles of ||I - Q'Q||_F */
    int cycles;
} ortho_loss;

static void basis_hook(krill_ctx *ctx, const double *v, int64_t n, int k, void *user)
{
    ortho_loss *l = user;
    double *q = malloc((size_t)n * (size_t)k * sizeof(double) + 8), f = 0.0;
    CHECK_OK(krill_mem_download(ctx, q, v, (size_t)n * (size_t)k * sizeof(double)));
    for (int a = 0; a < k; a++) {
        for (int b = 0; b <= a; b++) {
            double g = 0.0;
            for (int64_t i = 0; i < n; i++) g += q[(size_t)a * n + i] * q[(size_t)b * n + i];
            g = (a == b ? 1.0 : 0.0) - g;
            f += (a == b ? 1.0 : 2.0) * g * g;
        }
    }
    if (sqrt(f) > l->worst) l->worst = sqrt(f);
    l->cycles++;
    free(q);
}

/* n x n, A = D (I + off S), S the upper shift: d_i = 10^(-decades i / (n - 1)) on the
 * diagonal, off d_i beside it. Nonnormal, with eigenvalues d_i and a condition number within
 * (1 + off) / (1 - off) of 10^decades (off < 1): GMRES's Krylov vectors turn nearly
 * dependent as it resolves the small eigenvalues. */
static krill_csr *graded(int32_t n, double decades, double off)
{
    krill_csr *a = NULL;
    int64_t nz = 0;
    if (krill_csr_create(n, n, 2 * (int64_t)n - 1, &a) != KRILL_OK) exit(1);
    for (int32_t i = 0; i < n; i++) {
        const double d = pow(10.0, -decades * i / (n - 1));
        a->col[nz] = i;
        a->val[nz++] = d;
        if (i + 1 < n) {
            a->col[nz] = i + 1;
            a->val[nz++] = off * d;
        }
        a->row_ptr[i + 1] = nz;
    }
    return a;
}

static void check_loss(krill_ctx *ctx, const char *name, krill_csr *csr, int restart, int maxit)
{
    static const krill_ortho orthos[] = {KRILL_ORTHO_CGS2, KRILL_ORTHO_DCGS2, KRILL_ORTHO_MGS};
    su_system s;
    ortho_loss loss[3];
    su_run r;
    su_system_make(&s, ctx, csr, NULL, 11);
    for (int i = 0; i < 3; i++) {
        krill_solver_opts o = su_krylov_opts(KRILL_SOLVER_GMRES, orthos[i], restart, 1e-14, maxit);
        memset(&loss[i], 0, sizeof loss[i]);
        krill_gmres_set_basis_hook(basis_hook, &loss[i]);
        su_solve_run(&s, NULL, &o, &r);
        krill_gmres_set_basis_hook(NULL, NULL);
        CHECK(loss[i].cycles > 0);
        printf("||I - Q'Q||_F %-26s %-5s: %.3e (worst of %d cycles, %d iterations, "
               "relres %.2e)\n", name, su_ortho_name(orthos[i]), loss[i].worst, loss[i].cycles,
               r.iterations, r.relres);
    }
    /* at the CGS2 level: within 10x, or both at the rounding of an orthonormal basis */
    CHECK(loss[1].worst <= 10.0 * loss[0].worst || loss[1].worst <= 1e-13);
    su_system_free(&s);
}

static void test_loss(void)
{
    krill_ctx *ctx = test_ctx(2);
    check_loss(ctx, "graded:80 (1e10, 0.5)", graded(80, 10.0, 0.5), 100, 100);
    if (tu_quick()) {   /* quick: one graded matrix */
        krill_ctx_destroy(&ctx);
        return;
    }
    check_loss(ctx, "graded:120 (1e14, 0.3)", graded(120, 14.0, 0.3), 150, 150);
    check_loss(ctx, "graded:400 (1e8, 0.5)", graded(400, 8.0, 0.5), 100, 300);
    check_loss(ctx, "graded:2000 (1e12, 0.5)", graded(2000, 12.0, 0.5), 60, 120);
    check_loss(ctx, "convdiff3d:12,20", su_gen("convdiff3d:12,20"), 50, 100);
    krill_ctx_destroy(&ctx);
}

/* ---- testdata ------------------------------------------------------------------------------ */

typedef struct walk {
    krill_ctx *ctx;
    int tested, compared, beyond;
    long sum_cgs2, sum_dcgs2;    /* iterations over the compared matrices */
} walk;

static void testdata_one(const krill_csr *a, const char *name, void *user)
{
    walk *wk = user;
    const int maxit = 600;
    krill_csr *copy = NULL;
    su_system s;
    su_run r[3];
    if (krill_csr_copy(a, &copy) != KRILL_OK) exit(1);
    su_system_make(&s, wk->ctx, copy, NULL, 5);
    for (int i = 0; i < 2; i++) {
        /* DCGS2 gets 2% more room, so that a count just past CGS2's still shows */
        krill_solver_opts o = su_krylov_opts(KRILL_SOLVER_GMRES,
                                         i ? KRILL_ORTHO_DCGS2 : KRILL_ORTHO_CGS2, 30, 1e-8,
                                         i ? maxit + maxit / 50 + 1 : maxit);
        su_solve_run(&s, NULL, &o, &r[i]);
    }
    wk->tested++;
    printf("%-36s n %7d: cgs2 %4d it (%-16s relres %.1e), dcgs2 %4d it (%-16s relres %.1e)\n",
           name, (int)a->n_rows, r[0].iterations, krill_reason_string(r[0].reason), r[0].relres,
           r[1].iterations, krill_reason_string(r[1].reason), r[1].relres);
    if (r[0].reason > 0 && r[0].iterations > 0) {
        CHECK(r[1].reason > 0);
        wk->compared++;
        wk->sum_cgs2 += r[0].iterations;
        wk->sum_dcgs2 += r[1].iterations;
        if (!within_2pct(r[1].iterations, r[0].iterations)) {
            /* Restarted GMRES over many cycles amplifies rounding: MGS, the same method with
             * other rounding, shows how far the count moves by rounding alone. */
            krill_solver_opts o = su_krylov_opts(KRILL_SOLVER_GMRES, KRILL_ORTHO_MGS, 30, 1e-8,
                                             2 * maxit);
            su_solve_run(&s, NULL, &o, &r[2]);
            CHECK(abs(r[1].iterations - r[0].iterations) <= 0.1 * r[0].iterations);
            wk->beyond++;
            printf("  dcgs2 beyond 2%% of cgs2 (%+.1f%%); mgs takes %d (%+.1f%%)\n",
                   100.0 * (r[1].iterations - r[0].iterations) / r[0].iterations,
                   r[2].iterations, 100.0 * (r[2].iterations - r[0].iterations) / r[0].iterations);
        }
    }
    su_system_free(&s);
}

static void test_testdata(void)
{
    walk wk = {test_ctx(2), 0, 0, 0, 0, 0};
    if (tu_for_each_square_mtx(testdata_one, &wk) < 0) {
        krill_ctx_destroy(&wk.ctx);
        tu_skip("testdata absent: no matrices to compare CGS2 and DCGS2 on");
    }
    printf("testdata: %d matrices; on the %d where CGS2 converged within the budget, %ld "
           "iterations with CGS2, %ld with DCGS2; %d beyond 2%% (within 10%%)\n", wk.tested,
           wk.compared, wk.sum_cgs2, wk.sum_dcgs2, wk.beyond);
    CHECK(labs(wk.sum_dcgs2 - wk.sum_cgs2) <= 0.02 * wk.sum_cgs2);
    CHECK(wk.tested >= tu_testdata_expect(50, 10));
    krill_ctx_destroy(&wk.ctx);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "testdata") == 0) {
        TU_STEP(test_testdata());
        return tu_finish("test_dcgs2 testdata");
    }
    TU_STEP(test_passes());
    TU_STEP(test_counts());
    TU_STEP(test_loss());
    return tu_finish("test_dcgs2");
}
