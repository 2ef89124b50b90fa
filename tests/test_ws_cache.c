/* The solver workspace kept between solves (core/mem.c, krill_ws_*): a second solve on the
 * same context allocates nothing and gives the bits of a solve on a fresh context, also
 * after a solve that left NaN and Inf in the workspace it hands on (every solver, on the
 * same size, so that every block is taken back); sizes that change; the kept workspace is
 * at most the last solve's; krill_ctx_release_cache; and the cache's own bookkeeping. */
#include "core/core_impl.h"
#include "solver_util.h"

/* A 4 x 4 system: the SPD tridiagonal (2, -1), or every entry 1e308 (A v overflows: the
 * solve stops with NaN/Inf in its workspace). */
static krill_csr *small_matrix(int overflow)
{
    int32_t rows[16], cols[16];
    double vals[16];
    int nnz = 0;
    krill_csr *csr = NULL;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            if (overflow || abs(i - j) <= 1) {
                rows[nnz] = i;
                cols[nnz] = j;
                vals[nnz++] = overflow ? 1e308 : (i == j ? 2.0 : -1.0);
            }
    CHECK_OK(krill_csr_from_triplets(4, 4, nnz, rows, cols, vals, &csr));
    return csr;
}

/* Solve A x = 1 from x = 0; x (host, 4) and the iterations out. */
static void solve4(krill_ctx *ctx, int overflow, const krill_solver_opts *o, double *x, int *its)
{
    static const double ones[4] = {1, 1, 1, 1};
    krill_csr *csr = small_matrix(overflow);
    krill_mat *a = NULL;
    krill_vec *b = NULL, *xv = NULL;
    krill_solve_info info;
    CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
    CHECK_OK(krill_vec_create(ctx, 4, &b));
    CHECK_OK(krill_vec_create(ctx, 4, &xv));
    CHECK_OK(krill_vec_upload(b, ones));
    CHECK_OK(krill_vec_fill(xv, 0.0));
    CHECK_OK(krill_solve(a, NULL, b, xv, o, &info));
    CHECK(overflow ? info.reason == KRILL_DIVERGED_NAN : info.reason == KRILL_CONVERGED_RTOL);
    CHECK_OK(krill_vec_download(xv, x));
    *its = info.iterations;
    krill_solve_info_free(&info);
    krill_vec_destroy(&b);
    krill_vec_destroy(&xv);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
}

static int64_t allocations(const krill_ctx *ctx)
{
    krill_ctx_alloc_stats s;
    krill_ctx_alloc_stats_get(ctx, &s);
    return s.allocations;
}

/* Every solver: fresh context vs a context that ran the overflowing solve first (its
 * workspace, full of NaN and Inf, taken back): the same iterations and bits; the repeated
 * solve allocates no more than the vectors and the matrix. */
static void test_reuse_after_nan(void)
{
    for (int t = KRILL_SOLVER_GMRES; t <= KRILL_SOLVER_PIPECG; t++) {
        const int gmres_like = t == KRILL_SOLVER_GMRES || t == KRILL_SOLVER_FGMRES;
        for (int ortho = KRILL_ORTHO_CGS2; ortho <= (gmres_like ? KRILL_ORTHO_DCGS2 : 0);
             ortho++) {
            krill_solver_opts o = su_krylov_opts((krill_solver_type)t, (krill_ortho)ortho, 30,
                                                 1e-12, 0);
            krill_ctx *fresh = tu_cpu_ctx(2), *used = tu_cpu_ctx(2);
            double xf[4], xu[4], xr[4];
            int itf, itu, itr;
            int64_t before, first, second;
            solve4(fresh, 0, &o, xf, &itf);
            solve4(used, 1, &o, xu, &itu);             /* NaN and Inf in the workspace */
            solve4(used, 0, &o, xu, &itu);
            CHECK(itf == itu && memcmp(xf, xu, sizeof xf) == 0);
            before = allocations(fresh);               /* what a repeat allocates */
            solve4(fresh, 0, &o, xr, &itr);
            first = allocations(fresh) - before;
            krill_ctx_release_cache(fresh);            /* everything again */
            before = allocations(fresh);
            solve4(fresh, 0, &o, xr, &itr);
            second = allocations(fresh) - before;
            CHECK(itr == itf && memcmp(xf, xr, sizeof xf) == 0);
            CHECK(second > first);
            if (itf != itu || second <= first)
                printf("%s/%s: fresh %d its, after NaN %d; repeat allocates %lld, after "
                       "release %lld\n", krill_solver_name((krill_solver_type)t),
                       su_ortho_name(o.ortho), itf, itu, (long long)first, (long long)second);
            krill_ctx_destroy(&fresh);
            krill_ctx_destroy(&used);
        }
    }
}

/* Sizes that change: a larger solve allocates (nothing kept fits), the smaller one's kept
 * blocks are freed at its end; back to the small size, the large blocks are not taken (more
 * than twice the size asked). Results as on a fresh context. */
static void test_sizes(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2), *fresh = tu_cpu_ctx(2);
    krill_solver_opts o = su_krylov_opts(KRILL_SOLVER_CG, KRILL_ORTHO_DCGS2, 30, 1e-10, 0);
    const char *const specs[] = {"poisson3d:8", "poisson3d:16", "poisson3d:8", "poisson3d:8"};
    int64_t grew[4];
    for (int k = 0; k < 4; k++) {
        su_system s, f;
        krill_solve_info info, finfo;
        int64_t at;
        su_system_make(&s, ctx, su_gen(specs[k]), NULL, 3);
        su_system_make(&f, fresh, su_gen(specs[k]), NULL, 3);
        at = allocations(ctx);
        CHECK_OK(su_solve(&s, NULL, &o, &info));
        grew[k] = allocations(ctx) - at;
        CHECK_OK(su_solve(&f, NULL, &o, &finfo));
        CHECK(info.reason == KRILL_CONVERGED_RTOL && info.iterations == finfo.iterations);
        CHECK_OK(krill_vec_download(s.x, s.x_host));
        CHECK_OK(krill_vec_download(f.x, f.x_host));
        CHECK(memcmp(s.x_host, f.x_host, (size_t)s.n * sizeof(double)) == 0);
        krill_solve_info_free(&info);
        krill_solve_info_free(&finfo);
        su_system_free(&s);
        su_system_free(&f);
        krill_ctx_release_cache(fresh);
    }
    CHECK(grew[0] > 0 && grew[1] > 0);   /* first solve; larger: nothing kept fits */
    CHECK(grew[2] > 0);                  /* smaller: the large blocks are too large */
    CHECK(grew[3] == 0);                 /* the same size again: all taken back */
    printf("allocations per solve, sizes 8, 16, 8, 8: %lld %lld %lld %lld\n",
           (long long)grew[0], (long long)grew[1], (long long)grew[2], (long long)grew[3]);
    krill_ctx_destroy(&ctx);
    krill_ctx_destroy(&fresh);
}

/* The bookkeeping itself: a block given back is taken again by an allocation of its size or
 * a little less, not by one of less than half; trim frees what was kept before the mark. */
static void test_blocks(void)
{
    krill_ctx *ctx = tu_cpu_ctx(1);
    krill_status st = KRILL_OK;
    double *a = NULL, *b = NULL, *c = NULL;
    unsigned long e;
    KRILL_WS_ALLOC(ctx, a, 1000);
    krill_ws_free(ctx, a);
    KRILL_WS_ALLOC(ctx, b, 900);                       /* 900 <= 1000 < 1800: the same block */
    CHECK(b == a);
    krill_ws_free(ctx, b);
    KRILL_WS_ALLOC(ctx, c, 400);                       /* less than half: a new block */
    CHECK(c != a);
    e = krill_ws_epoch(ctx);
    krill_ws_free(ctx, c);                             /* kept after the mark: stays */
    krill_ws_trim(ctx, e);                             /* a (kept before it) is freed */
    KRILL_WS_ALLOC(ctx, b, 1000);
    KRILL_WS_ALLOC(ctx, a, 400);
    CHECK(a == c);
    krill_ws_free(ctx, a);
    krill_ws_free(ctx, b);
    krill_ws_free(ctx, NULL);
cleanup:
    CHECK_OK(st);
    krill_ctx_release_cache(NULL);
    krill_ctx_destroy(&ctx);                           /* ASan: nothing kept leaks */
}

int main(void)
{
    test_blocks();
    test_reuse_after_nan();
    test_sizes();
    return tu_finish("test_ws_cache");
}
