/* test_mpi_repro: the reproducible mode across rank counts (tests/mpi.cmake: 1, 2, 3, 4 and
 * 7 CPU ranks; 1, 2 and 3 GPU ranks with KRILL_TEST_MPI_DEVICE=gpu). Every rank holds the
 * whole input (generated), solves or sums it on a CPU context of its own (one process, two
 * threads) and on the communicator (one thread or one GPU a rank, its rows only), and checks
 * that the bits are the same:
 *   - dot products, norms, two independent dots in one call (krill_ozaki_dot_pairs), the
 *     k columns of a Gram-Schmidt step (k up to 40: two groups) against one right-hand side
 *     and against two (krill_ozaki_mdot2: one allgather when all are decided)
 *     on vectors the fast path decides, on cancelling ones it cannot (the exact path), with
 *     a dynamic range that needs the general (windowed) path, with NaN or an infinity on one
 *     rank, all zeros, and on partitions with empty ranks; exact mode, S = 2 and fast mode;
 *   - the SpMV y = alpha A x + beta y0 on every partition: each rank's rows (generated
 *     matrices; empty rows and rows summing to an exact zero, -0 results, beta = 0 over a
 *     NaN y0, a second call on the cached rows; a row longer than a GPU thread's exact row
 *     sum holds, refused on every GPU rank);
 *   - whole solves: every solver (CG, GMRES with CGS2 / MGS / DCGS2, FGMRES, BiCGStab,
 *     MINRES) with no preconditioner and Jacobi, on two partitions: the same reason,
 *     iteration count, residual history and solution, bit for bit;
 *   - new values (the distributed matrix's whole rows are remade), a failure to allocate
 *     on the last rank (the workspace, the whole rows) returned on every rank, and a local
 *     failure inside each collective of a sum (test_marks). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"   /* the allocation fault hook */
#include "mpi_testutil.h"
#include "ozaki/ozaki_impl.h"

static krill_ctx *ctx, *serial;
static int rank, size;

/* a copy of h[0..n) in the communicator context's memory (the device's on GPU ranks) */
static double *to_ctx(const double *h, int64_t n)
{
    void *p = NULL;
    CHECK_OK(krill_mem_alloc(ctx, &p, (size_t)(n > 0 ? n : 1) * sizeof *h, "test vector"));
    if (p && n > 0) CHECK_OK(krill_mem_upload(ctx, p, h, (size_t)n * sizeof *h));
    return p;
}

static void from_ctx(double *h, const double *p, int64_t n)
{
    CHECK_OK(krill_mem_download(ctx, h, p, (size_t)n * sizeof *h));
}

static int same_bits(const double *a, const double *b, int64_t n)
{
    return n == 0 || memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* The same status on every rank */
static int agreed(krill_status st)
{
    int s[2] = {(int)st, -(int)st}, m[2];
    MPI_Allreduce(s, m, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return m[0] == -m[1];
}

/* Rank r's share [lo, hi) of n: mtu's partition p */
static void share(mtu_partition p, int64_t n, int64_t *lo, int64_t *hi)
{
    int64_t off[65];
    const int64_t *o = mtu_offsets(p, n, size, off);
    if (!o) {
        *lo = n * rank / size;
        *hi = n * (rank + 1) / size;
    } else {
        *lo = o[rank];
        *hi = o[rank + 1];
    }
}

/* ---- the reductions --------------------------------------------------------------------- */

enum { KMAX = 40 };

/* Column j of a test block: kind 0 random, 1 cancelling (x_i = -x_{n-1-i} partners, the
 * fast path's bound cannot decide the tiny remainder), 2 a dynamic range of 2^-500..2^500
 * (more than 16 slices: the general path), 3 zeros. */
static void fill(double *v, int64_t n, int kind, int seed)
{
    tu_random(v, n, 1000 + (uint64_t)seed);
    for (int64_t i = 0; i < n; i++) {
        if (kind == 1 && i >= n / 2) v[i] = -v[n - 1 - i] * (1.0 + 0x1p-40 * (double)(i % 3));
        if (kind == 2) v[i] = ldexp(v[i], (int)((i * 37 + seed) % 1001) - 500);
        if (kind == 3) v[i] = 0.0;
    }
}

/* One mode: every kind of column, k = 1, 3, 40, each partition; then NaN / Inf. */
static void check_reductions(krill_repro_mode mode, int slices, const char *label)
{
    const int64_t n = 5003;
    double *V = malloc((size_t)n * KMAX * sizeof *V), *w = malloc((size_t)n * sizeof *w);
    double want[KMAX] = {0}, got[KMAX], *Vl = NULL, *Vd, *wd, *gd = to_ctx(want, KMAX);
    double want2[2 * KMAX] = {0}, got2[2 * KMAX], *g2d = to_ctx(want2, 2 * KMAX);
    const int lone_gpu = krill_ctx_device(ctx) == KRILL_DEVICE_CUDA && size == 1;
    int bad = 0, calls = 0, undecided = 0, rounds_bad = 0;
    CHECK_OK(krill_ctx_set_repro(serial, mode, slices));
    CHECK_OK(krill_ctx_set_repro(ctx, mode, slices));
    for (int kind = 0; kind < 4; kind++) {
        for (int j = 0; j < KMAX; j++)
            fill(V + (int64_t)j * n, n, (kind + j) % 4 == 3 ? 3 : kind, j);
        fill(w, n, kind == 3 ? 0 : kind, 99);
        for (mtu_partition p = MTU_BALANCED; p < MTU_PARTITIONS; p++) {
            int64_t lo, hi, nl;
            share(p, n, &lo, &hi);
            nl = hi - lo;
            Vl = malloc((size_t)(nl > 0 ? nl : 1) * KMAX * sizeof *Vl);
            for (int j = 0; j < KMAX; j++)
                memcpy(Vl + (int64_t)j * nl, V + (int64_t)j * n + lo, (size_t)nl * sizeof *Vl);
            Vd = to_ctx(Vl, nl * KMAX);
            wd = to_ctx(w + lo, nl);
            static const int ks[] = {1, 3, KMAX};
            for (int t = 0; t < 3; t++) {
                const int k = ks[t];
                int dec[KMAX];
                CHECK_OK(krill_ozaki_mdot(serial, n, k, V, n, w, want));
                CHECK_OK(krill_ozaki_fast_verdicts(serial, k < KRILL_OZ_KMAX ? k : 8, dec));
                for (int j = 0; j < (k < KRILL_OZ_KMAX ? k : 8); j++) undecided += dec[j] == 0;
                CHECK_OK(krill_ozaki_mdot(ctx, nl, k, Vd, nl > 0 ? nl : 1, wd, gd));
                from_ctx(got, gd, k);
                bad += !same_bits(want, got, k);
                calls++;
                {   /* two right-hand sides (DCGS2's sweep), w and column 1: the bits of two
                       mdots; with every sum decided (kind 0, exact mode), one allgather for
                       k <= KRILL_OZ_KMAX, else one per group and right-hand side (none on a
                       lone GPU) */
                    const int64_t before = ctx->comm_calls;
                    const int64_t groups = k <= KRILL_OZ_KMAX ? 1 : 2 * ((k + KRILL_OZ_KMAX - 1) /
                                                                      KRILL_OZ_KMAX);
                    CHECK_OK(krill_ozaki_mdot2(serial, n, k, V, n, w, V + n, want2));
                    CHECK_OK(krill_ozaki_mdot2(ctx, nl, k, Vd, nl > 0 ? nl : 1, wd, Vd + nl, g2d));
                    from_ctx(got2, g2d, 2 * k);
                    bad += !same_bits(want2, got2, 2 * k);
                    calls++;
                    if (kind == 0 && mode == KRILL_REPRO_OZAKI && slices == 0)
                        rounds_bad += ctx->comm_calls - before != (lone_gpu ? 0 : groups);
                    if (t == 0) {   /* no columns: nothing to do, no collective, no error */
                        const int64_t calls_before = ctx->comm_calls;
                        CHECK_OK(krill_ozaki_mdot2(ctx, nl, 0, Vd, nl > 0 ? nl : 1, wd,
                                                   Vd + nl, g2d));
                        rounds_bad += ctx->comm_calls != calls_before;
                    }
                }
            }
            CHECK_OK(krill_ozaki_dot(serial, n, V, w, want));
            CHECK_OK(krill_ozaki_dot(ctx, nl, Vd, wd, gd));
            CHECK_OK(krill_ozaki_nrm2(serial, n, V + n, want + 1));
            CHECK_OK(krill_ozaki_nrm2(ctx, nl, Vd + nl, gd + 1));
            from_ctx(got, gd, 2);
            bad += !same_bits(want, got, 2);
            calls += 2;
            {   /* two independent pairs in one call: the bits of the two dots */
                const double *xs[2] = {Vd, Vd + nl}, *ys[2] = {wd, Vd};
                CHECK_OK(krill_ozaki_dot(serial, n, V + n, V, want + 1));
                CHECK_OK(krill_ozaki_dot_pairs(ctx, nl, 2, xs, ys, gd));
                from_ctx(got, gd, 2);
                bad += !same_bits(want, got, 2);
                calls += 2;
                CHECK_STATUS(krill_ozaki_dot_pairs(ctx, nl, 0, xs, ys, gd), KRILL_ERR_ARG);
            }
            krill_mem_free(ctx, Vd);
            krill_mem_free(ctx, wd);
            free(Vl);
        }
    }
    /* NaN on the last rank's rows, then +Inf and -Inf on two ranks (a NaN product) */
    for (int c = 0; c < 3; c++) {
        int64_t lo, hi;
        fill(V, n, 0, 5);
        fill(w, n, 0, 6);
        if (c == 0) V[n - 1] = NAN;
        if (c >= 1) V[0] = INFINITY;
        if (c == 2) V[n - 1] = -INFINITY;
        share(MTU_BALANCED, n, &lo, &hi);
        CHECK_OK(krill_ozaki_dot(serial, n, V, w, want));
        Vd = to_ctx(V + lo, hi - lo);
        wd = to_ctx(w + lo, hi - lo);
        CHECK_OK(krill_ozaki_dot(ctx, hi - lo, Vd, wd, gd));
        from_ctx(got, gd, 1);
        bad += !(isnan(want[0]) ? isnan(got[0]) : same_bits(want, got, 1));
        calls++;
        krill_mem_free(ctx, Vd);
        krill_mem_free(ctx, wd);
    }
    krill_mem_free(ctx, gd);
    krill_mem_free(ctx, g2d);
    CHECK(bad == 0);
    CHECK(rounds_bad == 0);
    if (mode == KRILL_REPRO_OZAKI && slices == 0) CHECK(undecided > 0);   /* the exact path ran */
    if (rank == 0)
        printf("  %-10s %3d sums (dot, nrm2, pairs, k = 1, 3, 40 columns against one and two "
               "right-hand sides; 4 partitions; %d columns left to the exact path): %s%s\n",
               label, calls, undecided, bad ? "DIFFER" : "the serial bits",
               rounds_bad ? ", NOT one allgather per group for two right-hand sides" : "");
    free(V);
    free(w);
}

/* ---- whole solves ------------------------------------------------------------------------ */

typedef struct solve_case {
    const char *spec, *pc;
    krill_solver_type solver;
    krill_ortho ortho;
} solve_case;

typedef struct outcome {
    krill_solve_info info;
    double *x;          /* n_global, on every rank (gathered to 0, broadcast) */
} outcome;

static void options(const solve_case *c, krill_solver_opts *o)
{
    krill_solver_opts_default(o);
    o->solver = c->solver;
    o->ortho = c->ortho;
    o->rtol = 1e-10;
    o->maxit = 1000;
    o->restart = 20;
}

static void solve_serial(const solve_case *c, const krill_csr *g, outcome *out)
{
    mtu_system sys;
    krill_solver_opts o;
    options(c, &o);
    mtu_system_serial(serial, g, &sys);
    mtu_system_solve(&sys, c->pc, &o, out->x, &out->info);
    mtu_system_free(&sys);
}

/* scale != 1: after a first solve (which makes the whole rows) the values become scale * A
 * through krill_mat_update_values, and the solve is made again from x = 0. */
static void solve_dist(const solve_case *c, const krill_csr *g, mtu_partition p, double scale,
                       outcome *out)
{
    mtu_system sys;
    krill_solver_opts o;
    options(c, &o);
    mtu_system_dist(ctx, g, p, &sys);
    if (scale != 1.0) {
        krill_dist_layout l;
        int64_t k0, k1;
        double *vals;
        CHECK_OK(krill_dist_mat_layout(sys.a, &l));
        k0 = g->row_ptr[l.row_start];
        k1 = g->row_ptr[l.row_start + l.n_local];
        vals = malloc((size_t)(k1 - k0 + 1) * sizeof *vals);
        CHECK_OK(krill_solve(sys.a, NULL, sys.b, sys.x, &o, &out->info));
        krill_solve_info_free(&out->info);
        for (int64_t k = k0; k < k1; k++) vals[k - k0] = scale * g->val[k];
        CHECK_OK(krill_mat_update_values(sys.a, vals));
        CHECK_OK(krill_vec_fill(sys.x, 0.0));
        free(vals);
    }
    mtu_system_solve(&sys, c->pc, &o, out->x, &out->info);
    mtu_system_free(&sys);
}

static const char *case_name(const solve_case *c)
{
    static const char *const orthos[] = {"/cgs2", "/mgs", "/dcgs2"};
    static char buf[64];
    const int gm = c->solver == KRILL_SOLVER_GMRES || c->solver == KRILL_SOLVER_FGMRES;
    snprintf(buf, sizeof buf, "%s%s %s", krill_solver_name(c->solver), gm ? orthos[c->ortho] : "", c->pc);
    return buf;
}

/* Every rank compares its distributed outcome with its own serial one. */
static void compare(const solve_case *c, mtu_partition p, double scale)
{
    krill_csr *g = NULL;
    outcome s, d;
    int same;
    CHECK_OK(krill_gen(c->spec, &g));
    if (scale != 1.0)
        for (int64_t k = 0; k < g->nnz; k++) g->val[k] *= scale;
    s.x = malloc((size_t)g->n_rows * sizeof(double));
    d.x = malloc((size_t)g->n_rows * sizeof(double));
    solve_serial(c, g, &s);
    if (scale != 1.0)
        for (int64_t k = 0; k < g->nnz; k++) g->val[k] /= scale;   /* exact: a power of two */
    solve_dist(c, g, p, scale, &d);
    same = s.info.reason == d.info.reason && s.info.iterations == d.info.iterations &&
           s.info.history_len == d.info.history_len &&
           same_bits(s.info.history, d.info.history, s.info.history_len) &&
           same_bits(s.x, d.x, g->n_rows);
    CHECK(s.info.reason > 0);
    CHECK(same);
    if (rank == 0)
        printf("  %-22s %-18s %-22s %4d it: %s\n", case_name(c), c->spec, mtu_partition_name(p),
               d.info.iterations, same ? "history and x: the serial bits" : "DIFFER");
    krill_solve_info_free(&s.info);
    krill_solve_info_free(&d.info);
    free(s.x);
    free(d.x);
    krill_csr_destroy(&g);
}

/* y = alpha A x + beta y0 on the distributed matrix in exact mode, `calls` times (the cache of
 * whole rows made once): every rank's rows the bits of the serial reproducible SpMV (on GPU
 * ranks the interior rows run beside the exchange and the boundary rows after it,
 * dist/repro.c, each row's result at its place in y). y0: -0 everywhere (y0_kind 1), NaN
 * (2: beta = 0 must not read it), else values of both signs with a -0 among them. */
static void check_spmv_csr(const krill_csr *g, const char *name, mtu_partition p, double alpha,
                           double beta, int y0_kind, int calls)
{
    krill_dist_layout l;
    mtu_system ss, sd;
    double *x = malloc((size_t)g->n_rows * sizeof *x), *y0 = malloc((size_t)g->n_rows * sizeof *y0);
    double *want = malloc((size_t)g->n_rows * sizeof *want);
    double *got = malloc((size_t)g->n_rows * sizeof *got);
    int same = 1;
    mtu_vector(g->n_rows, x);
    for (int64_t i = 0; i < g->n_rows; i++)
        y0[i] = y0_kind == 1 ? -0.0 : y0_kind == 2 ? NAN
                : (i % 5 == 0) ? -0.0 : (double)(i % 7) - 3.1;
    if (y0_kind) for (int64_t i = 0; i < g->n_rows; i++) x[i] = 1.0;   /* rows that cancel */
    mtu_system_serial(serial, g, &ss);
    CHECK_OK(krill_vec_upload(ss.x, x));
    CHECK_OK(krill_vec_upload(ss.b, y0));
    CHECK_OK(krill_mat_spmv(ss.a, alpha, ss.x, beta, ss.b));
    CHECK_OK(krill_vec_download(ss.b, want));
    mtu_system_dist(ctx, g, p, &sd);
    CHECK_OK(krill_dist_mat_layout(sd.a, &l));
    CHECK_OK(krill_vec_upload(sd.x, x + l.row_start));
    for (int c = 0; c < calls; c++) {
        CHECK_OK(krill_vec_upload(sd.b, y0 + l.row_start));
        CHECK_OK(krill_mat_spmv(sd.a, alpha, sd.x, beta, sd.b));
        CHECK_OK(krill_vec_download(sd.b, got));
        same = same && same_bits(got, want + l.row_start, l.n_local);
    }
    CHECK(same);
    if (rank == 0)
        printf("  spmv %-18s %-22s alpha %g beta %g: %s\n", name, mtu_partition_name(p),
               alpha, beta, same ? "the serial bits" : "DIFFER");
    mtu_system_free(&ss);
    mtu_system_free(&sd);
    free(x);
    free(y0);
    free(want);
    free(got);
}

static void check_spmv(const char *spec, mtu_partition p)
{
    krill_csr *g = NULL;
    CHECK_OK(krill_gen(spec, &g));
    check_spmv_csr(g, spec, p, 1.5, -0.25, 0, 1);
    krill_csr_destroy(&g);
}

/* A matrix of 13 rows: rows 0, 6 and 12 empty, every other row i the entries 2 at column i
 * and -2 at column (i + 5) mod 13: against x = 1 each sums to an exact zero, from its own
 * rows and, on a split, from another rank's (boundary rows); with y0 = -0, alpha < 0 and
 * beta > 0 every row comes out -0, so a row stored in the wrong place or a sign lost shows. */
static void check_spmv_edges(mtu_partition p)
{
    const int32_t n = 13;
    krill_csr *g = NULL;
    int64_t k = 0;
    CHECK_OK(krill_csr_create(n, n, 2 * (n - 3), &g));
    for (int32_t i = 0; i < n; i++) {
        if (i % 6 != 0) {
            const int32_t j = (i + 5) % n, lo = i < j ? i : j, hi = i < j ? j : i;
            g->col[k] = lo;
            g->val[k++] = lo == i ? 2.0 : -2.0;
            g->col[k] = hi;
            g->val[k++] = hi == i ? 2.0 : -2.0;
        }
        g->row_ptr[i + 1] = k;
    }
    check_spmv_csr(g, "13 rows, 3 empty", p, -1.5, 0.25, 1, 2);
    check_spmv_csr(g, "13 rows, 3 empty", p, 1.5, 0.0, 2, 1);
    krill_csr_destroy(&g);
}

/* A row longer than a GPU thread's exact row sum holds (KRILL_OZ_ROW_MAX_N entries): row 0
 * full, the others a diagonal. CPU ranks: the serial bits. GPU ranks: KRILL_ERR_UNSUPPORTED
 * on every rank, twice (the refusal is made with the whole rows, where the ranks agree, and
 * the cache is not kept), whichever rank holds the row. */
static void check_spmv_long_row(mtu_partition p)
{
    const int32_t n = (int32_t)KRILL_OZ_ROW_MAX_N + 100;
    krill_csr *g = NULL;
    int64_t k = 0;
    char label[32];
    snprintf(label, sizeof label, "a row of %d", (int)n);
    CHECK_OK(krill_csr_create(n, n, 2 * (int64_t)n - 1, &g));
    for (int32_t j = 0; j < n; j++) {
        g->col[k] = j;
        g->val[k++] = 1.0 / (j + 1.0);
    }
    g->row_ptr[1] = k;
    for (int32_t i = 1; i < n; i++) {
        g->col[k] = i;
        g->val[k++] = 2.0;
        g->row_ptr[i + 1] = k;
    }
    if (krill_ctx_device(ctx) != KRILL_DEVICE_CUDA) {
        check_spmv_csr(g, label, p, 1.5, 0.0, 0, 1);
    } else {
        mtu_system sd;
        krill_dist_layout l;
        double *x = malloc((size_t)n * sizeof *x);
        int refused = 1;
        mtu_vector(n, x);
        mtu_system_dist(ctx, g, p, &sd);
        CHECK_OK(krill_dist_mat_layout(sd.a, &l));
        CHECK_OK(krill_vec_upload(sd.x, x + l.row_start));
        for (int c = 0; c < 2; c++) {   /* agreed() on every rank each time: a collective */
            const krill_status st = krill_mat_spmv(sd.a, 1.5, sd.x, 0.0, sd.b);
            const int alike = agreed(st);
            refused = refused && alike && st == KRILL_ERR_UNSUPPORTED &&
                      strstr(krill_last_error(), "KRILL_OZ_ROW_MAX_N") != NULL;
        }
        CHECK(refused);
        if (rank == 0)
            printf("  spmv %-18s %-22s: %s\n", label, mtu_partition_name(p),
                   refused ? "refused on every rank" : "NOT REFUSED ALIKE");
        mtu_system_free(&sd);
        free(x);
    }
    krill_csr_destroy(&g);
}

static void test_solves(void)
{
    static const solve_case cases[] = {
        {"poisson3d:8", "none", KRILL_SOLVER_CG, KRILL_ORTHO_CGS2},
        {"elasticity3d:3,2,2", "jacobi", KRILL_SOLVER_CG, KRILL_ORTHO_CGS2},
        {"convdiff3d:7,2", "none", KRILL_SOLVER_GMRES, KRILL_ORTHO_CGS2},
        {"convdiff3d:7,2", "jacobi", KRILL_SOLVER_GMRES, KRILL_ORTHO_MGS},
        {"convdiff3d:7,2", "jacobi", KRILL_SOLVER_GMRES, KRILL_ORTHO_DCGS2},
        {"convdiff3d:7,2", "jacobi", KRILL_SOLVER_FGMRES, KRILL_ORTHO_CGS2},
        {"convdiff3d:7,2", "jacobi", KRILL_SOLVER_BICGSTAB, KRILL_ORTHO_CGS2},
        {"poisson3d:7", "jacobi", KRILL_SOLVER_MINRES, KRILL_ORTHO_CGS2},
        {"poisson3d:8", "none", KRILL_SOLVER_PIPECG, KRILL_ORTHO_CGS2},
        {"elasticity3d:3,2,2", "jacobi", KRILL_SOLVER_PIPECG, KRILL_ORTHO_CGS2},
    };
    CHECK_OK(krill_ctx_set_repro(serial, KRILL_REPRO_OZAKI, 0));
    CHECK_OK(krill_ctx_set_repro(ctx, KRILL_REPRO_OZAKI, 0));
    for (mtu_partition p = MTU_BALANCED; p < MTU_PARTITIONS; p++) {
        check_spmv("convdiff3d:7,2", p);
        check_spmv("elasticity3d:3,2,2", p);
        check_spmv_edges(p);
        check_spmv_long_row(p);
    }
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        compare(&cases[k], MTU_BALANCED, 1.0);
        compare(&cases[k], MTU_EMPTY_SECOND, 1.0);
    }
    compare(&cases[1], MTU_BALANCED, 4.0);   /* new values: the whole rows remade */
    compare(&cases[3], MTU_ALL_ON_LAST, 0.5);
}

/* ---- failures on one rank ---------------------------------------------------------------- */

/* One sum of test_marks on the communicator context: krill_ozaki_mdot of the nl rows' k
 * columns against w, or (two) krill_ozaki_mdot2 against w and column 1 */
typedef struct marks_call {
    int64_t nl;
    int k;
    const double *Vd, *wd;
    double *out;
    int two;
} marks_call;

static krill_status marks_sum(const marks_call *c)
{
    const int64_t ld = c->nl > 0 ? c->nl : 1;
    return c->two ? krill_ozaki_mdot2(ctx, c->nl, c->k, c->Vd, ld, c->wd, c->Vd + c->nl, c->out)
                  : krill_ozaki_mdot(ctx, c->nl, c->k, c->Vd, ld, c->wd, c->out);
}

/* The sum with a failure forced on rank `faulty` after 1, 2, ... checkpoints (at most
 * `most` tries) until one call succeeds: each failure the same on every rank; the failures
 * counted. */
static int failures_until_ok(int faulty, long most, const marks_call *c)
{
    int failed = 0;
    for (long step = 1; step <= most; step++) {
        krill_status st;
        if (rank == faulty) krill_ozaki_fault_step_after(step);
        st = marks_sum(c);
        krill_ozaki_fault_step_after(0);
        CHECK(agreed(st));
        if (st == KRILL_OK) break;
        CHECK(st == KRILL_ERR_INTERNAL);
        failed++;
    }
    return failed;
}

/* A local failure inside each collective of a sum (ozaki/comm.c's mark, forced by
 * krill_ozaki_fault_step_after on one rank): every rank returns it, and the next sum gives
 * the serial bits. The columns span 2^-500..2^500 (outside the fast path's guard), so every
 * step runs: the lengths' allgather, the statistics' maximum and, on GPU ranks, the
 * diagonal sums' allreduce (cpu.c's has no local failure to carry); then krill_ozaki_mdot2's
 * allgather of both right-hand sides and each one's whole round. One GPU rank alone keeps
 * the device path, with no collective. */
static void test_marks(int faulty)
{
    const int64_t n = 3001;
    const int k = 3;
    const int gpu = krill_ctx_device(ctx) == KRILL_DEVICE_CUDA;
    const int steps = gpu ? (size > 1 ? 3 : 0) : 2;
    double *V = malloc((size_t)n * k * sizeof *V), *w = malloc((size_t)n * sizeof *w);
    double want[3], got[3], *Vd, *wd, *gd = to_ctx(want, k);
    int64_t lo = n * rank / size, hi = n * (rank + 1) / size, nl = hi - lo;
    double *Vl = malloc((size_t)(nl > 0 ? nl : 1) * k * sizeof *Vl);
    int failed = 0;
    for (int j = 0; j < k; j++) fill(V + (int64_t)j * n, n, 2, j);
    fill(w, n, 2, 7);
    for (int j = 0; j < k; j++)
        memcpy(Vl + (int64_t)j * nl, V + (int64_t)j * n + lo, (size_t)nl * sizeof *Vl);
    Vd = to_ctx(Vl, nl * k);
    wd = to_ctx(w + lo, nl);
    CHECK_OK(krill_ozaki_mdot(serial, n, k, V, n, w, want));
    {
        const marks_call call = {nl, k, Vd, wd, gd, 0};
        failed = failures_until_ok(faulty, steps + 1, &call);
        CHECK(failed == steps);
        CHECK_OK(marks_sum(&call));
        from_ctx(got, gd, k);
        CHECK(same_bits(want, got, k));
    }
    {   /* krill_ozaki_mdot2 (w and column 1): the allgather of both right-hand sides, then,
           every sum undecided here, each right-hand side's whole round */
        const int steps2 = steps ? 1 + 2 * steps : 0;
        double want2[6], got2[6], *g2d = to_ctx(want2, 2 * k);
        const marks_call call = {nl, k, Vd, wd, g2d, 1};
        const int failed2 = failures_until_ok(faulty, steps2 + 1, &call);
        CHECK_OK(krill_ozaki_mdot2(serial, n, k, V, n, w, V + n, want2));
        CHECK(failed2 == steps2);
        from_ctx(got2, g2d, 2 * k);
        CHECK(same_bits(want2, got2, 2 * k));
        krill_mem_free(ctx, g2d);
        failed += failed2;
    }
    if (rank == 0)
        printf("  a failure on rank %d inside each of the collectives of a sum and of a sum "
               "against two right-hand sides (%d in all): returned on every rank; the next "
               "sum the serial bits\n", faulty, failed);
    krill_mem_free(ctx, Vd);
    krill_mem_free(ctx, wd);
    krill_mem_free(ctx, gd);
    free(Vl);
    free(V);
    free(w);
}

static void test_faults(void)
{
    const int faulty = size - 1;
    krill_ctx *c2 = NULL;
    krill_csr *g = NULL;
    krill_mat *a = NULL;
    krill_vec *vb = NULL, *vx = NULL;
    krill_solver_opts o;
    krill_solve_info info;
    krill_status st;
    krill_dist_layout l;
    int failed = 0;
    /* the workspace (the allgather's buffer; on GPU ranks the device's and the host sums)
     * of a new context's reproducible mode, on the communicator context's kind of device */
    krill_ctx_opts co = KRILL_CTX_OPTS_INIT;
    co.threads = 1;
    if (krill_ctx_device(ctx) == KRILL_DEVICE_CUDA) {
        co.device = KRILL_DEVICE_CUDA;
        co.device_id = KRILL_DEVICE_ID_LOCAL_RANK;
    }
    CHECK_OK(krill_mpi_ctx_create(MPI_COMM_WORLD, &co, &c2));
    for (int k = 1; k <= 10; k++) {
        if (rank == faulty) krill_fault_alloc_after(k);
        st = krill_ctx_set_repro(c2, KRILL_REPRO_OZAKI, 0);
        krill_fault_alloc_after(0);
        CHECK(agreed(st));
        if (st == KRILL_OK) break;
        CHECK((st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC) &&   /* GPU ranks: */
              krill_ctx_repro(c2, NULL) == KRILL_REPRO_OFF);   /* the device workspace */
        failed++;
    }
    CHECK(failed >= 1);
    /* the whole rows, made at the first reproducible SpMV of a solve */
    CHECK_OK(krill_gen("poisson3d:6", &g));
    CHECK_OK(krill_dist_mat_scatter(c2, rank == 0 ? g : NULL, NULL, "csr", &a));
    CHECK_OK(krill_dist_mat_layout(a, &l));
    CHECK_OK(krill_vec_create(c2, l.n_local, &vb));
    CHECK_OK(krill_vec_create(c2, l.n_local, &vx));
    CHECK_OK(krill_vec_fill(vb, 1.0));
    krill_solver_opts_default(&o);
    o.solver = KRILL_SOLVER_CG;
    failed = 0;
    for (int k = 1; k <= 400; k++) {   /* every allocation of the solve in turn */
        CHECK_OK(krill_vec_fill(vx, 0.0));
        if (rank == faulty) krill_fault_alloc_after(k);
        st = krill_solve(a, NULL, vb, vx, &o, &info);
        krill_fault_alloc_after(0);
        CHECK(agreed(st));
        krill_solve_info_free(&info);
        if (st == KRILL_OK) break;
        failed++;
    }
    CHECK(st == KRILL_OK && failed >= 1);   /* a solve past the last allocation succeeded */
    if (rank == 0)
        printf("  allocation failures on rank %d: each returned on every rank\n", faulty);
    test_marks(faulty);
    krill_vec_destroy(&vb);
    krill_vec_destroy(&vx);
    krill_mat_destroy(&a);
    krill_csr_destroy(&g);
    krill_ctx_destroy(&c2);
}

int main(int argc, char **argv)
{
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    ctx = mtu_init(&argc, &argv);
    rank = krill_ctx_rank(ctx);
    size = krill_ctx_size(ctx);
    o.device = KRILL_DEVICE_CPU;
    o.threads = 2;
    CHECK_OK(krill_ctx_create(&o, &serial));
    if (rank == 0) printf("reproducible sums on %d ranks against one process:\n", size);
    check_reductions(KRILL_REPRO_OZAKI, 0, "exact");
    check_reductions(KRILL_REPRO_OZAKI, 2, "S = 2");
    check_reductions(KRILL_REPRO_OZAKI_FAST, 3, "fast S = 3");
    if (rank == 0) printf("reproducible solves on %d ranks against one process:\n", size);
    test_solves();
    test_faults();
    krill_ctx_destroy(&serial);
    return mtu_finish("test_mpi_repro", &ctx);
}
