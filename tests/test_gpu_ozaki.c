/* Reproducible mode on the GPU (ozaki/ozaki.cu, fast.cu, cgs.cu) against the CPU path, bit for
 * bit: dot, nrm2, mdot, mdot2 and the stats variants in every mode (exact, S = 1..4, fast
 * S = 2, 3, 4, 7), on the (rand - 0.5) exp(phi randn) family and the edge cases, for several launch
 * configurations (block size, grid size, rows per flush, register path or the general path)
 * with exact mode's fast path on and off: none of them may change a bit (the CPU reference
 * runs the exact path alone). The fast kernel's verdicts: decided where it must decide,
 * declined where it must decline, per column, on every configuration, and no stale verdict
 * or accumulator carried into the next call. Exact mode also against MPFR. Repeated calls
 * (the device accumulators are reset by each kernel's last block), results in device memory,
 * plain mode differing between CPU and GPU, and allocation faults of the GPU workspace (a
 * clean error, the mode unchanged, and the context still usable). Needs a GPU (else 77). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "ozaki/ozaki_impl.h"
#include "ozaki_ref.h"
#include "solver/solver_impl.h"
#include "testutil.h"

static krill_ctx *gpu, *cpu;


/* launch configurations: threads, blocks (0 = a wave), rows per flush (k > 1), register
 * slices (0 = always the general path) */
typedef struct config {
    int threads, blocks, rows, reg;
} config;
static const config configs[] = {
    {256, 0, 8, 8}, {32, 1, 8, 8}, {1024, 7, 3, 4}, {128, 0, 1, 0}, {64, 3, 17, 8}, {96, 0, 8, 2},
};
#define NCONFIGS ((int)(sizeof configs / sizeof configs[0]))

/* Quick mode (tu_quick: under compute-sanitizer) runs three: the default, the register path
 * with 4 slices and many rows, the general path. */
static int config_in_run(int c) { return !tu_quick() || c == 0 || c == 2 || c == 3; }

/* a launch configuration, and exact mode's fast path on or off (both devices) */
static void use_config(const config *c, int fast)
{
    krill_ozaki_tuning t;
    krill_ozaki_tuning_get(&t);
    t.gpu_threads = c->threads;
    t.gpu_blocks = c->blocks;
    t.gpu_rows = c->rows;
    t.gpu_reg_slices = c->reg;
    t.cpu_min_n = 1;
    t.fast_path = fast;
    krill_ozaki_tuning_set(&t);
}

static void set_mode(const oz_mode *m)
{
    CHECK_OK(krill_ctx_set_repro(gpu, m->mode, m->slices));
    CHECK_OK(krill_ctx_set_repro(cpu, m->mode, m->slices));
}

static double *dev_copy(const double *h, int64_t n)
{
    double *d = NULL;
    CHECK_OK(krill_mem_alloc(gpu, (void **)&d, (size_t)(n > 0 ? n : 1) * sizeof *d, "test vector"));
    if (d && n > 0) CHECK_OK(krill_mem_upload(gpu, d, h, (size_t)n * sizeof *d));
    return d;
}

static krill_ozaki_tuning current(void)
{
    krill_ozaki_tuning t;
    krill_ozaki_tuning_get(&t);
    return t;
}

static void report(const char *what, const oz_mode *m, const config *c, double got, double want)
{
    uint64_t a, b;
    memcpy(&a, &got, 8);
    memcpy(&b, &want, 8);
    fprintf(stderr, "  %s [%s; %d threads x %d blocks, rows %d, reg %d, fast path %d]: GPU "
            "%.17g (0x%016llx), CPU %.17g (0x%016llx)\n", what, m->name, c->threads, c->blocks,
            c->rows, c->reg, current().fast_path, got, (unsigned long long)a, want,
            (unsigned long long)b);
}

static int compare(double got, double want, const char *what, const oz_mode *m, const config *c)
{
    tu_checks++;
    if (oz_same_bits(got, want)) return 1;
    tu_failures++;
    report(what, m, c, got, want);
    return 0;
}

/* the GPU's verdicts on the last call's first k columns against want */
static void check_verdicts(int k, const int *want, const char *what, const config *c)
{
    int got[2 * KRILL_OZ_KMAX];
    CHECK_OK(krill_ozaki_fast_verdicts(gpu, k, got));
    for (int j = 0; j < k; j++) {
        tu_checks++;
        if (got[j] != want[j]) {
            tu_failures++;
            fprintf(stderr, "  %s [%d threads x %d blocks, rows %d]: column %d: verdict %d, "
                    "expected %d\n", what, c->threads, c->blocks, c->rows, j, got[j], want[j]);
        }
    }
}

/* dot, dot_stats and nrm2 of x, y on the GPU in every mode and config vs the CPU's bits */
static void check_pair(int64_t n, const double *x, const double *y, const char *what)
{
    double *dx, *dy, *dst = NULL;
    double *slot = KRILL_CUDA_SLOT(gpu, 0);
    if (!tu_shard_mine()) return;   /* one unit of work (KRILL_TEST_SHARD) */
    dx = dev_copy(x, n);
    dy = dev_copy(y, n);
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dst, 4 * sizeof(double), "stats"));
    for (int k = 0; k < OZ_NMODES; k++) {
        double want_dot, want_nrm, want_ref;
        set_mode(&oz_modes[k]);
        use_config(&configs[0], 0);   /* the CPU's exact path alone */
        CHECK_OK(krill_ozaki_dot(cpu, n, x, y, &want_dot));
        CHECK_OK(krill_ozaki_nrm2(cpu, n, x, &want_nrm));
        if (k == 0 && isfinite(want_dot) && oz_ref_dot(n, x, y, &want_ref))
            CHECK(oz_same_bits(want_dot, want_ref));
        for (int cf = 0; cf < 2 * NCONFIGS; cf++) {
            const int c = cf / 2;
            double got[3];
            if (!config_in_run(c)) continue;
            use_config(&configs[c], cf % 2);
            CHECK_OK(krill_ozaki_dot(gpu, n, dx, dy, slot));
            CHECK_OK(krill_ozaki_stats(gpu, n, dx, dst));
            CHECK_OK(krill_ozaki_stats(gpu, n, dy, dst + 2));
            CHECK_OK(krill_ozaki_dot_stats(gpu, n, dx, dst, dy, dst + 2, slot + 1));
            CHECK_OK(krill_ozaki_nrm2(gpu, n, dx, slot + 2));
            CHECK_OK(krill_scalars_read(gpu, slot, got, 3));
            compare(got[0], want_dot, what, &oz_modes[k], &configs[c]);
            compare(got[1], want_dot, "dot_stats", &oz_modes[k], &configs[c]);
            compare(got[2], want_nrm, "nrm2", &oz_modes[k], &configs[c]);
        }
    }
    {   /* the stats themselves: the CPU's bits */
        double gs[4], cs[4];
        CHECK_OK(krill_ozaki_stats(gpu, n, dx, dst));
        CHECK_OK(krill_ozaki_stats(gpu, n, dy, dst + 2));
        CHECK_OK(krill_scalars_read(gpu, dst, gs, 4));
        CHECK_OK(krill_ozaki_stats(cpu, n, x, cs));
        CHECK_OK(krill_ozaki_stats(cpu, n, y, cs + 2));
        for (int i = 0; i < 4; i++) CHECK(oz_same_bits(gs[i], cs[i]));
    }
    krill_mem_free(gpu, dx);
    krill_mem_free(gpu, dy);
    krill_mem_free(gpu, dst);
}

static void test_phi_family(void)
{
    static const double phis[] = {0, 1, 2, 4, 8};
    static const int64_t sizes[] = {1, 3, 100, 1000, 100003, ((int64_t)1 << 20) + 7};
    for (int ip = 0; ip < 5; ip++)
        for (int is = 0; is < (tu_quick() ? 5 : 6); is++) {   /* quick: up to 100003 */
            const int64_t n = sizes[is];
            double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
            char what[64];
            oz_ref_phi_vector(x, n, phis[ip], 10 * ip + is + 1);
            oz_ref_phi_vector(y, n, phis[ip], 10 * ip + is + 500);
            snprintf(what, sizeof what, "phi = %g n = %lld", phis[ip], (long long)n);
            check_pair(n, x, y, what);
            free(x);
            free(y);
        }
}

static void test_edges(void)
{
    double x[64] = {0}, y[64] = {0};
    const double tiny = 0x1p-1074, big = DBL_MAX;
    check_pair(0, x, y, "n = 0");
    for (int i = 0; i < 64; i++) {
        x[i] = i % 2 ? -0.0 : 0.0;
        y[i] = i - 30.5;
    }
    check_pair(64, x, y, "zeros");
    oz_ref_phi_vector(x, 32, 4.0, 77);
    oz_ref_phi_vector(y, 32, 4.0, 78);
    for (int i = 0; i < 32; i++) {
        x[32 + i] = -x[i];
        y[32 + i] = y[i];
    }
    check_pair(64, x, y, "exact cancellation");
    for (int i = 0; i < 16; i++) {
        x[i] = (i + 1) * tiny * (i % 3 ? 1 : -1);
        y[i] = ldexp(1.5 + i, 1000 - 20 * i);
    }
    check_pair(16, x, y, "subnormal x, huge y");
    x[0] = 0x1p1000; y[0] = 0x1p20;
    x[1] = 0x1p1000; y[1] = -0x1p20;
    x[2] = tiny;     y[2] = 3.0;
    check_pair(3, x, y, "huge range cancelling");
    x[0] = big; y[0] = 2.0;
    x[1] = -big; y[1] = 1.5;
    check_pair(2, x, y, "near DBL_MAX");
    x[0] = big; y[0] = big;
    check_pair(1, x, y, "overflow");
    x[0] = big; y[0] = 1.0;
    x[1] = 0x1p970; y[1] = 1.0;
    check_pair(2, x, y, "DBL_MAX + ulp / 2");
    x[0] = 0x1.fffffffffffffp0;
    y[0] = -0x1.5555555555555p-1;
    check_pair(1, x, y, "n = 1 full mantissas");
    {
        /* +Inf, Inf 0, NaN, -Inf, +Inf - Inf */
        const double sx[] = {INFINITY, INFINITY, NAN, 0.0, INFINITY};
        const double sy[] = {2.0, 0.0, 1.0, -INFINITY, INFINITY};
        const double sy1[] = {1.0, 1.0, 1.0, 1.0, -INFINITY};
        for (int t = 0; t < 5; t++) {
            x[0] = sx[t];
            y[0] = sy[t];
            x[1] = 1.0;
            y[1] = sy1[t];
            check_pair(2, x, y, "Inf/NaN");
        }
    }
    {   /* many slices: the general path on every config */
        const int64_t n = 50000;
        double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
        oz_ref_phi_vector(a, n, 1.0, 901);
        oz_ref_phi_vector(b, n, 1.0, 902);
        for (int64_t i = 0; i < n; i++) {
            a[i] = ldexp(a[i], (int)(i % 61) * 30 - 900);
            b[i] = ldexp(b[i], -(int)(i % 47) * 20 + 400);
        }
        check_pair(n, a, b, "range 2^1800");
        free(a);
        free(b);
    }
}

static void test_mdot(void)
{
    const int64_t n = 70001, ldv = 70017;
    const int k = 37;
    double *V = malloc((size_t)(ldv * k) * sizeof *V), *w = malloc((size_t)n * sizeof *w);
    double want[37], got[37], *dV, *dw, *dres = NULL, *dvs = NULL, *dws = NULL;
    oz_ref_phi_vector(w, n, 2.0, 7);
    for (int j = 0; j < k; j++) {
        oz_ref_phi_vector(V + j * ldv, n, (double)(j % 5) * 2.0, 100 + j);
        for (int64_t i = n; i < ldv; i++) V[j * ldv + i] = NAN;   /* never read */
    }
    for (int64_t i = 0; i < n; i++) {
        V[3 * ldv + i] = 0.0;
        V[5 * ldv + i] = ldexp(V[5 * ldv + i], 700 - (int)(i % 90) * 20);
    }
    V[9 * ldv + 17] = INFINITY;
    dV = dev_copy(V, ldv * k);
    dw = dev_copy(w, n);
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dres, 2 * k * sizeof(double), "results"));
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dvs, 2 * k * sizeof(double), "vstats"));
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dws, 2 * sizeof(double), "wstats"));
    for (int m = 0; m < OZ_NMODES; m++) {
        set_mode(&oz_modes[m]);
        use_config(&configs[0], 0);   /* the CPU's exact path alone */
        CHECK_OK(krill_ozaki_mdot(cpu, n, k, V, ldv, w, want));
        for (int cf = 0; cf < 2 * NCONFIGS; cf++) {
            const int c = cf / 2;
            if (!config_in_run(c) || !tu_shard_mine()) continue;   /* a unit of work */
            use_config(&configs[c], cf % 2);
            CHECK_OK(krill_ozaki_mdot(gpu, n, k, dV, ldv, dw, dres));
            for (int j = 0; j < k; j++)
                CHECK_OK(krill_ozaki_stats(gpu, n, dV + j * ldv, dvs + 2 * j));
            CHECK_OK(krill_ozaki_stats(gpu, n, dw, dws));
            CHECK_OK(krill_ozaki_mdot_stats(gpu, n, k, dV, ldv, dvs, dw, dws, dres + k));
            CHECK_OK(krill_scalars_read(gpu, dres, got, k));
            for (int j = 0; j < k; j++) compare(got[j], want[j], "mdot", &oz_modes[m], &configs[c]);
            CHECK_OK(krill_scalars_read(gpu, dres + k, got, k));
            for (int j = 0; j < k; j++)
                compare(got[j], want[j], "mdot_stats", &oz_modes[m], &configs[c]);
        }
    }
    krill_mem_free(gpu, dV);
    krill_mem_free(gpu, dw);
    krill_mem_free(gpu, dres);
    krill_mem_free(gpu, dvs);
    krill_mem_free(gpu, dws);
    free(V);
    free(w);
}

/* Columns of V (n rows each, n odd) the fast kernel must decline against w: column 1 cancels
 * exactly against w (w made symmetric, column 1 antisymmetric), column 2 holds 2^401 (the
 * guard's exclusive top), column 3 an Inf */
static void decline_columns(double *V, double *w, int64_t n)
{
    for (int64_t i = 0; i < n / 2; i++) {
        V[1 * n + n - 1 - i] = -V[1 * n + i];
        w[n - 1 - i] = w[i];
    }
    V[1 * n + n / 2] = 0.0;
    V[2 * n + 5] = 0x1p401;
    V[3 * n + 9] = -INFINITY;
}

/* krill_ozaki_mdot2 (DCGS2's sweep) on the GPU against the CPU's two krill_ozaki_mdot calls,
 * bit for bit, on every configuration with the fast path on and off: k = 1, 8, 17, 32 (one
 * group: 64 sums, fewer threads a block at 1024) and 34 (a group and a rest), n from 1 to
 * 70001, u and w V's last two columns (DCGS2's shape) or vectors of their own; columns the
 * fast kernel declines against w only (exact cancellation) or against both (2^401, an Inf,
 * a subnormal), and right-hand sides it declines (an Inf in u, 2^401 in w: the products pass
 * reads their statistics from the fast pass's), take the products pass after it; the
 * verdicts of a group (u's sums, then w's) checked for k = 5 and 8; and k = 32 on 2048
 * blocks, above the workspace's room for 64 sums (1024 blocks). */
static void check_mdot2(int64_t n, int k, const double *V, const double *u, const double *w,
                        int in_v, const int *want_v, const char *what, const config *cfgs,
                        int ncfg)
{
    const oz_mode *exact = &oz_modes[0];
    double *want = malloc(2 * (size_t)k * sizeof *want), *got = malloc(2 * (size_t)k * sizeof *got);
    double *dV = dev_copy(V, n * k), *du, *dw, *dres = NULL;
    if (in_v) {   /* u and w are V's last two columns, on both devices */
        u = V + (k - 2) * n;
        w = V + (k - 1) * n;
    }
    du = in_v ? dV + (k - 2) * n : dev_copy(u, n);
    dw = in_v ? dV + (k - 1) * n : dev_copy(w, n);
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dres, 2 * (size_t)k * sizeof(double), "results"));
    set_mode(exact);
    use_config(&configs[0], 0);
    CHECK_OK(krill_ozaki_mdot(cpu, n, k, V, n, u, want));
    CHECK_OK(krill_ozaki_mdot(cpu, n, k, V, n, w, want + k));
    for (int cf = 0; cf < 2 * ncfg; cf++) {
        const int c = cf / 2;
        if ((cfgs == configs && !config_in_run(c)) || !tu_shard_mine()) continue;   /* a unit */
        use_config(&cfgs[c], cf % 2);
        CHECK_OK(krill_ozaki_mdot2(gpu, n, k, dV, n, du, dw, dres));
        if (want_v && cf % 2) check_verdicts(2 * k, want_v, what, &cfgs[c]);
        CHECK_OK(krill_scalars_read(gpu, dres, got, 2 * k));
        for (int j = 0; j < 2 * k; j++) compare(got[j], want[j], what, exact, &cfgs[c]);
    }
    krill_mem_free(gpu, dV);
    if (!in_v) {
        krill_mem_free(gpu, du);
        krill_mem_free(gpu, dw);
    }
    krill_mem_free(gpu, dres);
    free(want);
    free(got);
}

static void test_mdot2(void)
{
    static const config many = {256, 2048, 8, 8};
    const int64_t n = 70001;
    const int kmax = 34;
    double *V = malloc((size_t)(kmax * n) * sizeof *V), *u = malloc((size_t)n * sizeof *u);
    double *w = malloc((size_t)n * sizeof *w);
    int want_v[16];
    for (int j = 0; j < kmax; j++) oz_ref_phi_vector(V + j * n, n, (double)(j % 4), 300 + j);
    oz_ref_phi_vector(u, n, 1.0, 390);
    oz_ref_phi_vector(w, n, 2.0, 391);
    check_mdot2(n, 34, V, u, w, 1, NULL, "mdot2: 34 columns, u and w in V", configs, NCONFIGS);
    check_mdot2(n, 17, V, u, w, 0, NULL, "mdot2: 17 columns", configs, NCONFIGS);
    check_mdot2(n, 32, V, u, w, 1, NULL, "mdot2: 32 columns, u and w in V", configs, NCONFIGS);
    check_mdot2(n, 32, V, u, w, 0, NULL, "mdot2: 32 columns, 2048 blocks", &many, 1);
    check_mdot2(1, 5, V, u, w, 0, NULL, "mdot2: n = 1", configs, NCONFIGS);
    check_mdot2(33, 3, V, u, w, 1, NULL, "mdot2: n = 33", configs, NCONFIGS);
    check_mdot2(n, 1, V, u, w, 0, NULL, "mdot2: one column", configs, NCONFIGS);
    {   /* right-hand sides the fast kernel declines: an Inf in u, 2^401 in w */
        const double u_keep = u[40], w_keep = w[41];
        u[40] = INFINITY;
        w[41] = 0x1p401;
        for (int j = 0; j < 10; j++) want_v[j] = 0;
        check_mdot2(n, 5, V, u, w, 0, want_v, "mdot2: declined right-hand sides", configs,
                    NCONFIGS);
        u[40] = u_keep;
        w[41] = w_keep;
    }
    /* test_fast_path's columns: 1 cancels exactly against w (not u), 2 has 2^401, 3 an Inf,
     * 4 is zero, 6 has a subnormal; 0, 5 and 7 are ordinary */
    decline_columns(V, w, n);
    for (int64_t i = 0; i < n; i++) V[4 * n + i] = 0.0;
    V[6 * n + 11] = 0x1p-1074;
    for (int j = 0; j < 8; j++) want_v[j] = want_v[8 + j] = !(j == 2 || j == 3 || j == 6);
    want_v[8 + 1] = 0;
    check_mdot2(n, 8, V, u, w, 0, want_v, "mdot2: declined columns", configs, NCONFIGS);
    free(V);
    free(u);
    free(w);
}

/* The two-sum fast pass in its merged-only mode (what a GPU rank of a communicator sends in
 * krill_ozaki_mdot2's one allgather, ozaki/comm.c), here on one GPU: the 2k merged states
 * (u's sums, then w's) decide where the CPU's mdot2 says the fast path decides, with its
 * bits; nothing is decided on the device (results untouched, verdicts 0). Columns as in
 * test_mdot2: 1 cancels against w, 2 has 2^401, 3 an Inf, 4 zero, 6 a subnormal. On every
 * configuration (the launch cannot change which states decide a column's correctly
 * rounded value, only whether: the decided ones are compared). The internal launcher exists
 * only in a CUDA build (without one the test as a whole is skipped). */
static void test_fast2_merged(void)
{
#ifdef KRILL_HAVE_CUDA
    const int64_t n = 50001;
    const int k = 8;
    double *V = malloc((size_t)(k * n) * sizeof *V), *u = malloc((size_t)n * sizeof *u);
    double *w = malloc((size_t)n * sizeof *w), want[16], *dV, *du, *dw;
    const double poison = -1234.5;
    double *dres = NULL, res[16];
    int want_v[16], verdict[16];
    for (int j = 0; j < k; j++) oz_ref_phi_vector(V + j * n, n, 1.0, 500 + j);
    oz_ref_phi_vector(u, n, 1.0, 590);
    oz_ref_phi_vector(w, n, 2.0, 591);
    decline_columns(V, w, n);
    for (int64_t i = 0; i < n; i++) V[4 * n + i] = 0.0;
    V[6 * n + 11] = 0x1p-1074;
    for (int j = 0; j < k; j++) want_v[j] = want_v[k + j] = !(j == 2 || j == 3 || j == 6);
    want_v[k + 1] = 0;
    set_mode(&oz_modes[0]);
    dV = dev_copy(V, k * n);
    du = dev_copy(u, n);
    dw = dev_copy(w, n);
    for (int j = 0; j < 2 * k; j++) res[j] = poison;
    dres = dev_copy(res, 2 * k);
    for (int c = 0; c < NCONFIGS; c++) {
        if (!config_in_run(c) || !tu_shard_mine()) continue;   /* a unit of work */
        use_config(&configs[c], 1);
        CHECK_OK(krill_ozaki_mdot2(cpu, n, k, V, n, u, w, want));
        CHECK_OK(krill_ozaki_ctx_init(gpu));
        if (gpu->ozaki) {
            krill_ozaki_ws *ws = (krill_ozaki_ws *)gpu->ozaki;
            krill_oz_fast s[16];
            int bad = 0;
            CHECK_OK(krill_ozaki_cuda_fast2(gpu, ws->dev, ws->launch, n, k, dV, n, du, dw, dres,
                                            dres + k, NULL, 1));
            CHECK_OK(krill_mem_download(gpu, s, krill_ozaki_cuda_merged_area(ws->dev),
                                        sizeof s));
            CHECK_OK(krill_mem_download(gpu, verdict, krill_ozaki_cuda_verdict_area(ws->dev),
                                        sizeof verdict));
            CHECK_OK(krill_mem_download(gpu, res, dres, sizeof res));
            for (int j = 0; j < 2 * k; j++) {
                double r = 0.0;
                const int decided = krill_oz_fast_result(&s[j], 0, &r);
                bad += decided != want_v[j] || (decided && memcmp(&r, &want[j], sizeof r) != 0) ||
                       verdict[j] != 0 || memcmp(&res[j], &poison, sizeof poison) != 0;
            }
            CHECK(bad == 0);
            if (bad) printf("  fast2 merged-only, configuration %d: %d sums wrong\n", c, bad);
        }
    }
    krill_mem_free(gpu, dV);
    krill_mem_free(gpu, du);
    krill_mem_free(gpu, dw);
    krill_mem_free(gpu, dres);
    free(V);
    free(u);
    free(w);
#endif
}

/* The fast kernel on every configuration: x'x, a norm and well-conditioned columns decided,
 * cancelling / out-of-range (an operand of 2^401, a subnormal one) / Inf columns declined
 * and an operand just below 2^401 decided, per column (mdot and mdot_stats, k = 8);
 * every result the bits of the CPU's exact path; calls that decide and calls that decline in
 * turn on one context (the verdicts and the accumulators of the skipped kernels must not
 * leak into the next call); not tried in the fixed-slice modes. */
static void test_fast_path(void)
{
    const int64_t n = 100003;
    const int k = 8;
    double *V = malloc((size_t)(k * n) * sizeof *V), *w = malloc((size_t)n * sizeof *w);
    double *dV, *dw, *dvs = NULL, *dws = NULL, *slot = KRILL_CUDA_SLOT(gpu, 0);
    double *dres = NULL, want[8], got[8], want_xx, want_nrm, want_big, want_cancel;
    const int want_cols[8] = {1, 0, 0, 0, 1, 1, 0, 1};
    const oz_mode *exact = &oz_modes[0];
    oz_ref_phi_vector(w, n, 1.0, 706);
    for (int j = 0; j < k; j++) oz_ref_phi_vector(V + j * n, n, 1.0, 800 + j);
    decline_columns(V, w, n);                /* 1 cancels, 2 has 2^401, 3 an Inf */
    V[5 * n + 7] = 0x1.fffffffffffffp400;    /* the largest operand it takes */
    V[6 * n + 11] = 0x1p-1074;               /* a subnormal operand */
    for (int64_t i = 0; i < n; i++) V[4 * n + i] = 0.0;
    set_mode(exact);
    use_config(&configs[0], 0);
    CHECK_OK(krill_ozaki_mdot(cpu, n, k, V, n, w, want));
    CHECK_OK(krill_ozaki_dot(cpu, n, w, w, &want_xx));
    CHECK_OK(krill_ozaki_nrm2(cpu, n, w, &want_nrm));
    CHECK_OK(krill_ozaki_dot(cpu, n, V + 2 * n, V + 2 * n, &want_big));
    CHECK_OK(krill_ozaki_dot(cpu, n, V + n, w, &want_cancel));
    dV = dev_copy(V, k * n);
    dw = dev_copy(w, n);
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dres, k * sizeof(double), "results"));
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dvs, 2 * k * sizeof(double), "vstats"));
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dws, 2 * sizeof(double), "wstats"));
    for (int j = 0; j < k; j++) CHECK_OK(krill_ozaki_stats(gpu, n, dV + j * n, dvs + 2 * j));
    CHECK_OK(krill_ozaki_stats(gpu, n, dw, dws));
    for (int c = 0; c < NCONFIGS; c++) {
        double r[4];
        if (!config_in_run(c) || !tu_shard_mine()) continue;   /* a unit of work */
        use_config(&configs[c], 1);
        CHECK_OK(krill_ozaki_mdot(gpu, n, k, dV, n, dw, dres));
        check_verdicts(k, want_cols, "mdot", &configs[c]);
        CHECK_OK(krill_scalars_read(gpu, dres, got, k));
        for (int j = 0; j < k; j++) compare(got[j], want[j], "fast mdot", exact, &configs[c]);
        CHECK_OK(krill_ozaki_mdot_stats(gpu, n, k, dV, n, dvs, dw, dws, dres));
        check_verdicts(k, want_cols, "mdot_stats", &configs[c]);
        CHECK_OK(krill_scalars_read(gpu, dres, got, k));
        for (int j = 0; j < k; j++)
            compare(got[j], want[j], "fast mdot_stats", exact, &configs[c]);
        /* decided, declined, decided, declined: one context, one workspace */
        CHECK_OK(krill_ozaki_dot(gpu, n, dw, dw, slot));
        check_verdicts(1, (const int[]){1}, "x'x", &configs[c]);
        CHECK_OK(krill_ozaki_dot(gpu, n, dV + n, dw, slot + 1));
        check_verdicts(1, (const int[]){0}, "cancelling", &configs[c]);
        CHECK_OK(krill_ozaki_nrm2(gpu, n, dw, slot + 2));
        check_verdicts(1, (const int[]){1}, "nrm2", &configs[c]);
        CHECK_OK(krill_ozaki_dot(gpu, n, dV + 2 * n, dV + 2 * n, slot + 3));
        check_verdicts(1, (const int[]){0}, "2^401", &configs[c]);
        CHECK_OK(krill_scalars_read(gpu, slot, r, 4));
        compare(r[0], want_xx, "fast x'x", exact, &configs[c]);
        compare(r[1], want_cancel, "fast cancelling", exact, &configs[c]);
        compare(r[2], want_nrm, "fast nrm2", exact, &configs[c]);
        compare(r[3], want_big, "fast 2^401", exact, &configs[c]);
    }
    if (tu_shard_mine()) {   /* the stats after a call whose stats pass was skipped (a unit) */
        double gs[2], cs[2];
        use_config(&configs[0], 1);   /* the fast path on, whichever units this shard ran */
        CHECK_OK(krill_ozaki_dot(gpu, n, dw, dw, slot));
        CHECK_OK(krill_ozaki_stats(gpu, n, dV + 2 * n, dvs));
        CHECK_OK(krill_scalars_read(gpu, dvs, gs, 2));
        CHECK_OK(krill_ozaki_stats(cpu, n, V + 2 * n, cs));
        CHECK(oz_same_bits(gs[0], cs[0]) && oz_same_bits(gs[1], cs[1]));
    }
    set_mode(&oz_modes[2]);   /* a fixed slice count: never tried */
    CHECK_OK(krill_ozaki_dot(gpu, n, dw, dw, slot));
    check_verdicts(1, (const int[]){-1}, "S = 2", &configs[0]);
    krill_mem_free(gpu, dV);
    krill_mem_free(gpu, dw);
    krill_mem_free(gpu, dres);
    krill_mem_free(gpu, dvs);
    krill_mem_free(gpu, dws);
    free(V);
    free(w);
}

/* One fused CGS pass on the GPU (krill_fused_cgs_pass in exact mode: krill_ozaki_cgs_pass)
 * against the CPU's three calls (w -= V h, mdot, w'w) on every configuration: w's bytes,
 * h_out and w'w bit for bit, and the verdicts (columns, then w'w) where want_v is given. */
static void check_cgs(int64_t n, int k, const double *V, const double *w0, const double *h,
                      int with_h, int with_ss, const int *want_v, const char *what)
{
    const krill_reduce_ws none = {0};
    const int kd = with_h ? k : 0, kc = kd + with_ss;
    double *w = malloc((size_t)n * sizeof *w), *gw = malloc((size_t)n * sizeof *gw);
    double want[KRILL_OZ_KMAX + 1], got[KRILL_OZ_KMAX + 1];
    double *dV = dev_copy(V, n * k), *dw = NULL, *dh = h ? dev_copy(h, k) : NULL;
    double *dres = NULL;
    const oz_mode *exact = &oz_modes[0];
    CHECK_OK(krill_mem_alloc(gpu, (void **)&dres, (KRILL_OZ_KMAX + 1) * sizeof(double), "res"));
    set_mode(exact);
    use_config(&configs[0], 0);
    memcpy(w, w0, (size_t)n * sizeof *w);
    CHECK_OK(krill_fused_cgs_pass(cpu, &none, n, k, V, n, h, w, with_h ? want : NULL,
                                  with_ss ? want + kd : NULL));
    for (int c = 0; c < NCONFIGS; c++) {
        if (!tu_shard_mine()) continue;   /* a unit of work (KRILL_TEST_SHARD) */
        use_config(&configs[c], 1);
        tu_checks++;
        if (!krill_ozaki_cgs_fused(gpu, n, k)) {
            tu_failures++;
            fprintf(stderr, "  %s: not fused on the GPU\n", what);
            break;
        }
        krill_mem_free(gpu, dw);
        dw = dev_copy(w0, n);
        CHECK_OK(krill_fused_cgs_pass(gpu, &none, n, k, dV, n, dh, dw, with_h ? dres : NULL,
                                      with_ss ? dres + kd : NULL));
        if (want_v) check_verdicts(kc, want_v, what, &configs[c]);
        CHECK_OK(krill_scalars_read(gpu, dres, got, kc));
        for (int j = 0; j < kc; j++) compare(got[j], want[j], what, exact, &configs[c]);
        CHECK_OK(krill_mem_download(gpu, gw, dw, (size_t)n * sizeof *gw));
        tu_checks++;
        if (memcmp(gw, w, (size_t)n * sizeof *w) != 0) {
            tu_failures++;
            fprintf(stderr, "  %s: w differs from the CPU's\n", what);
        }
    }
    krill_mem_free(gpu, dV);
    krill_mem_free(gpu, dw);
    krill_mem_free(gpu, dh);
    krill_mem_free(gpu, dres);
    free(w);
    free(gw);
}

/* The fused Gram-Schmidt pass: the three shapes GMRES uses (h_out alone; update and h_out;
 * update and w'w), 31 columns plus w'w (the most), n from 1 to 100003; columns the fast
 * path declines (exact cancellation, an operand of 2^401, an Inf, operands whose least
 * exponents sum below -800) and a w'w it declines (an Inf that the update puts into w) take
 * the exact path after it, on the device, with the statistics bounds of the fused kernel. */
static void test_cgs_pass(void)
{
    const int64_t n = 100003;
    const int kmax = KRILL_OZ_KMAX - 1;
    double *V = malloc((size_t)(kmax * n) * sizeof *V), *w = malloc((size_t)n * sizeof *w);
    double h[KRILL_OZ_KMAX];
    int want_v[KRILL_OZ_KMAX + 1];
    for (int j = 0; j < kmax; j++) oz_ref_phi_vector(V + j * n, n, (double)(j % 3), 900 + j);
    oz_ref_phi_vector(w, n, 1.0, 950);
    for (int j = 0; j < kmax; j++) h[j] = ldexp((double)(j + 1) / 7.0, -(j % 4));
    check_cgs(n, kmax, V, w, h, 1, 1, NULL, "cgs: update, 31 columns, w'w");
    check_cgs(n, 5, V, w, h, 0, 1, NULL, "cgs: update, w'w");
    check_cgs(n, 1, V, w, NULL, 1, 0, NULL, "cgs: one column");
    check_cgs(1, 3, V, w, h, 1, 1, NULL, "cgs: n = 1");
    check_cgs(33, 7, V, w, h, 1, 0, NULL, "cgs: n = 33");
    /* no update: test_fast_path's columns (1 cancels exactly, 2 has 2^401, 3 an Inf) */
    decline_columns(V, w, n);
    /* column 4: 2^-500 in the row after w's 2^-400 (w's middle, keeping column 1's
     * cancellation; one tile in every configuration): every product is above 2^-800, but
     * the guard comes from the ranges of the block's elements (2^-500 2^-400 < 2^-800), so
     * the column is declined; w'w (2^-800) is decided */
    V[4 * n + n / 2 + 1] = 0x1p-500;
    w[n / 2] = 0x1p-400;
    for (int j = 0; j < 5; j++) want_v[j] = j == 0;
    want_v[5] = 1;
    check_cgs(n, 5, V, w, NULL, 1, 1, want_v, "cgs: declined columns");
    /* the update puts -Inf into w (h_3 V[3 n + 9]): every product with it, and w'w, declined */
    for (int j = 0; j < 6; j++) want_v[j] = 0;
    check_cgs(n, 5, V, w, h, 1, 1, want_v, "cgs: Inf in w");
    free(V);
    free(w);
}

/* the context's reductions follow the mode; a special result does not stick to the next
 * call (the device flags and sums are reset); plain GPU differs from plain CPU somewhere */
static void test_dispatch_and_reset(void)
{
    const int64_t n = 1 << 20;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    krill_vec *vx = NULL, *vy = NULL;
    double a, b, c;
    int differs = 0;
    oz_ref_phi_vector(x, n, 8.0, 41);
    oz_ref_phi_vector(y, n, 8.0, 42);
    CHECK_OK(krill_vec_create(gpu, n, &vx));
    CHECK_OK(krill_vec_create(gpu, n, &vy));
    CHECK_OK(krill_vec_upload(vx, x));
    CHECK_OK(krill_vec_upload(vy, y));
    krill_ozaki_tuning_set(NULL);
    for (int m = 0; m < OZ_NMODES; m++) {
        if (!tu_shard_mine()) continue;   /* a unit of work (KRILL_TEST_SHARD) */
        set_mode(&oz_modes[m]);
        CHECK_OK(krill_vec_dot(vx, vy, &a));
        CHECK_OK(krill_ozaki_dot(cpu, n, x, y, &b));
        CHECK(oz_same_bits(a, b));
        CHECK_OK(krill_vec_nrm2(vx, &a));
        CHECK_OK(krill_ozaki_nrm2(cpu, n, x, &b));
        CHECK(oz_same_bits(a, b));
    }
    if (tu_shard_mine()) {   /* special, then ordinary, then special again (a unit) */
        double *d = dev_copy(x, 4), *slot = KRILL_CUDA_SLOT(gpu, 0), keep = x[2];
        set_mode(&oz_modes[0]);
        x[2] = NAN;
        CHECK_OK(krill_mem_upload(gpu, d, x, 4 * sizeof *x));
        CHECK_OK(krill_ozaki_dot(gpu, 4, d, d, slot));
        CHECK_OK(krill_scalars_read(gpu, slot, &a, 1));
        CHECK(isnan(a));
        x[2] = keep;
        CHECK_OK(krill_mem_upload(gpu, d, x, 4 * sizeof *x));
        CHECK_OK(krill_ozaki_dot(gpu, 4, d, d, slot));
        CHECK_OK(krill_ozaki_dot(gpu, 4, d, d, slot + 1));
        CHECK_OK(krill_scalars_read(gpu, slot, &a, 1));
        CHECK_OK(krill_scalars_read(gpu, slot + 1, &c, 1));
        CHECK_OK(krill_ozaki_dot(cpu, 4, x, x, &b));
        CHECK(oz_same_bits(a, b) && oz_same_bits(c, b));
        krill_mem_free(gpu, d);
    }
    if (tu_shard_mine()) {   /* a unit of work (KRILL_TEST_SHARD) */
        for (int seed = 0; seed < 8 && !differs; seed++) {
            oz_ref_phi_vector(x, n, 4.0, 600 + seed);
            CHECK_OK(krill_vec_upload(vx, x));
            set_mode(&(oz_mode){KRILL_REPRO_OFF, 0, "off"});
            CHECK_OK(krill_vec_dot(vx, vy, &a));
            CHECK_OK(krill_blas_dot(cpu, n, x, y, &b));
            differs = !oz_same_bits(a, b);
        }
        CHECK(differs);
    }
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    free(x);
    free(y);
}

/* allocation faults of the workspace: set_repro and a first direct call fail cleanly */
static void test_faults(void)
{
    double h[3] = {1.0, 2.0, 3.0}, r = 0.0;
    for (long k = 1; k <= 4; k++) {
        krill_ctx *g = tu_gpu_ctx_or_skip();
        double *d = NULL, *slot = KRILL_CUDA_SLOT(g, 0);
        krill_status st;
        CHECK_OK(krill_mem_alloc(g, (void **)&d, sizeof h, "x"));
        CHECK_OK(krill_mem_upload(g, d, h, sizeof h));
        krill_fault_alloc_after(k);
        st = krill_ctx_set_repro(g, KRILL_REPRO_OZAKI, 0);
        krill_fault_alloc_after(0);
        if (st != KRILL_OK) {
            CHECK(st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC);
            CHECK(strstr(krill_last_error(), "injected") != NULL);
            CHECK(krill_ctx_repro(g, NULL) == KRILL_REPRO_OFF);
            /* a direct call makes the workspace on first use: fault it too */
            krill_fault_alloc_after(k);
            st = krill_ozaki_dot(g, 3, d, d, slot);
            krill_fault_alloc_after(0);
            CHECK(st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC);
            CHECK_OK(krill_ctx_set_repro(g, KRILL_REPRO_OZAKI, 0));
        }
        CHECK_OK(krill_ozaki_dot(g, 3, d, d, slot));
        CHECK_OK(krill_scalars_read(g, slot, &r, 1));
        CHECK(r == 14.0);
        krill_mem_free(g, d);
        krill_ctx_destroy(&g);
    }
}

int main(void)
{
    gpu = tu_gpu_ctx_or_skip();
    cpu = tu_cpu_ctx(3);
    printf("%s\n", krill_ctx_describe(gpu));
    if (!oz_ref_have_mpfr()) printf("MPFR absent at build time: exact mode is compared with "
                                    "the CPU only\n");
    TU_SPLIT(test_edges());        /* each check_pair a unit of work */
    TU_SPLIT(test_phi_family());
    TU_SPLIT(test_mdot());                 /* each (mode, launch configuration) a unit */
    TU_SPLIT(test_fast_path());            /* each launch configuration a unit */
    TU_SPLIT(test_mdot2());                /* each (shape, configuration) a unit */
    TU_SPLIT(test_fast2_merged());         /* each configuration a unit */
    TU_SPLIT(test_cgs_pass());             /* each check_cgs configuration a unit */
    TU_SPLIT(test_dispatch_and_reset());   /* each mode, and each closing check, a unit */
    TU_STEP(test_faults());
    krill_ozaki_tuning_set(NULL);
    krill_ctx_destroy(&gpu);
    krill_ctx_destroy(&cpu);
    return tu_finish("test_gpu_ozaki");
}
