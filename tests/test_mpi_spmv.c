/* test_mpi_spmv: the distributed SpMV (dist/) against the serial reference, on every rank
 * count it is started with (tests/mpi.cmake: 1, 2, 3, 4): generated matrices in every CPU
 * format and under every partition shape (balanced, everything on one rank, a rank without
 * rows), a diagonal matrix (no halo at all), each rank assembling its own rows
 * (krill_dist_mat_create), new values, the diagonal, global dot products and norms, products
 * back to back on a one-sided pattern (the first rank receives nothing, the last sends
 * nothing), and
 * every square matrix of testdata/. Results agree with krill_csr_spmv_ref within rounding:
 * the distributed rows are summed in another order (diagonal block, then off-rank block). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_testutil.h"

#define TOL 1e-13   /* max |y - y_ref| / max |y_ref| */

static krill_ctx *ctx;
static int rank, size;


/* Scatter `global` (rank 0; NULL elsewhere) under partition p in `format`, check. */
static void scatter_and_check(const krill_csr *global, int64_t n, mtu_partition p,
                              const char *format, const char *name)
{
    krill_mat *a = NULL;
    int64_t off[64];
    char what[160];
    snprintf(what, sizeof what, "%s, %s, %s, %d ranks", name, format, mtu_partition_name(p), size);
    CHECK_OK(krill_dist_mat_scatter(ctx, rank == 0 ? global : NULL,
                                    rank == 0 ? mtu_offsets(p, n, size, off) : NULL, format, &a));
    if (a) mtu_check_spmv(ctx, a, global, what, TOL);
    krill_mat_destroy(&a);
}

/* Every CPU format and every partition on generated matrices (each rank generates the same
 * matrix; only rank 0's copy is scattered). */
static void test_generated(void)
{
    static const char *const specs[] = {"poisson3d:6", "convdiff3d:5,2", "elasticity3d:2,2,3",
                                        "band101:400", "rand100:300"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        krill_csr *g = NULL;
        CHECK_OK(krill_gen(specs[s], &g));
        if (!g) continue;
        for (int p = 0; p < MTU_PARTITIONS; p++)
            scatter_and_check(g, g->n_rows, p, "csr", specs[s]);
        for (const char *const *f = krill_format_names(); *f; f++) {
            if (strcmp(*f, "cusparse") == 0 && krill_ctx_device(ctx) != KRILL_DEVICE_CUDA)
                continue;   /* GPU only */
            scatter_and_check(g, g->n_rows, MTU_EMPTY_SECOND, *f, specs[s]);
        }
        krill_csr_destroy(&g);
    }
}

/* Each rank assembles its own rows (krill_dist_mat_create), as a FEM code does; then new
 * values (all doubled), the diagonal, and the halo of a diagonal matrix (none). */
static void test_own_rows(void)
{
    krill_csr *g = NULL, *mine = NULL;
    krill_mat *a = NULL;
    krill_vec *d = NULL;
    krill_dist_layout l;
    CHECK_OK(krill_gen("poisson3d:5", &g));
    const int64_t n = g->n_rows, lo = n * rank / size, hi = n * (rank + 1) / size;
    mine = mtu_even_rows(g, rank, size);
    CHECK_OK(krill_dist_mat_create(ctx, mine, "csr", &a));
    CHECK_OK(krill_dist_mat_layout(a, &l));
    CHECK(l.n_global == n && l.row_start == lo && l.n_local == hi - lo);
    CHECK(l.nnz_diag + l.nnz_off == mine->nnz);
    CHECK(size > 1 || (l.halo == 0 && l.sent == 0 && l.recv_ranks == 0));
    {   /* the halo's path (core/nccl.cu, dist/mat.c): KRILL_NCCL=1 NCCL, not timed; the
         * default on 4+ GPU ranks with NCCL timed (this matrix has a halo on every rank),
         * NCCL kept where its products take at most 0.8x the host path's; else the host */
        const char *e = getenv("KRILL_NCCL");
        const int nccl = strstr(krill_ctx_describe(ctx), ": NCCL") != NULL;
        const int forced = nccl && e && !strcmp(e, "1");
        const int timed = l.halo_timed_ms[0] > 0.0;
        CHECK(!forced || (l.halo_path == 1 && !timed));
        CHECK(!timed || (nccl && l.halo_timed_ms[1] > 0.0 &&
                         (l.halo_path == 1) == (l.halo_timed_ms[1] <= 0.8 * l.halo_timed_ms[0])));
        CHECK(forced || timed || (l.halo_path == 0 && l.halo_timed_ms[1] == 0.0));
        CHECK(!(nccl && e && !strcmp(e, "auto") && size >= 4) || timed);
    }
    mtu_check_spmv(ctx, a, g, "poisson3d:5, own rows", TOL);

    /* new values: 2 A */
    for (int64_t k = 0; k < mine->nnz; k++) mine->val[k] *= 2.0;
    for (int64_t k = 0; k < g->nnz; k++) g->val[k] *= 2.0;
    CHECK_OK(krill_mat_update_values(a, mine->val));
    mtu_check_spmv(ctx, a, g, "poisson3d:5, updated values", TOL);

    /* the diagonal of 2 A is 12 everywhere */
    CHECK_OK(krill_vec_create(ctx, l.n_local, &d));
    CHECK_OK(krill_mat_diagonal(a, d));
    {   /* through host memory: the context may be a GPU's */
        double *dh = malloc((size_t)(l.n_local > 0 ? l.n_local : 1) * sizeof *dh);
        CHECK_OK(krill_vec_download(d, dh));
        for (int64_t i = 0; i < l.n_local; i++) CHECK(dh[i] == 12.0);
        free(dh);
    }
    krill_vec_destroy(&d);
    krill_mat_destroy(&a);
    krill_csr_destroy(&mine);

    /* a diagonal matrix on a balanced partition: no rank sends or receives anything */
    CHECK_OK(krill_csr_create(g->n_rows, g->n_cols, g->n_rows, &mine));
    for (int32_t i = 0; i < mine->n_rows; i++) {
        mine->row_ptr[i + 1] = i + 1;
        mine->col[i] = i;
        mine->val[i] = 1.0 + i;
    }
    CHECK_OK(krill_dist_mat_scatter(ctx, rank == 0 ? mine : NULL, NULL, "csr", &a));
    CHECK_OK(krill_dist_mat_layout(a, &l));
    CHECK(l.halo == 0 && l.sent == 0 && l.recv_ranks == 0 && l.send_ranks == 0);
    mtu_check_spmv(ctx, a, mine, "diagonal", TOL);
    krill_mat_destroy(&a);
    krill_csr_destroy(&mine);
    krill_csr_destroy(&g);
}

/* krill_vec_dot and krill_vec_nrm2 on the context sum over the ranks (also the rescaled
 * norm of tiny values). */
static void test_reductions(void)
{
    krill_csr *g = NULL;
    krill_mat *a = NULL;
    krill_vec *x = NULL;
    krill_dist_layout l;
    double *gx, dot = 0.0, nrm = 0.0, ref = 0.0;
    CHECK_OK(krill_gen("poisson3d:7", &g));
    CHECK_OK(krill_dist_mat_scatter(ctx, rank == 0 ? g : NULL, NULL, "csr", &a));
    CHECK_OK(krill_dist_mat_layout(a, &l));
    gx = malloc((size_t)l.n_global * sizeof *gx);
    mtu_vector(l.n_global, gx);
    for (int64_t i = 0; i < l.n_global; i++) ref += gx[i] * gx[i];
    CHECK_OK(krill_vec_create(ctx, l.n_local, &x));
    CHECK_OK(krill_dist_vec_scatter(a, gx, x));
    CHECK_OK(krill_vec_dot(x, x, &dot));
    CHECK_OK(krill_vec_nrm2(x, &nrm));
    CHECK_CLOSE(dot, ref, 1e-14);
    CHECK_CLOSE(nrm, sqrt(ref), 1e-14);
    CHECK_OK(krill_vec_scal(1e-160, x));   /* squares underflow: the scaled path */
    CHECK_OK(krill_vec_nrm2(x, &nrm));
    CHECK_CLOSE(nrm * 1e160, sqrt(ref), 1e-14);
    krill_vec_destroy(&x);
    krill_mat_destroy(&a);
    krill_csr_destroy(&g);
    free(gx);
}

/* A one-sided pattern, lower bidiagonal (row i: 2 at i, -1 at i - 1): on a row partition rank
 * r receives from r - 1 and sends to r + 1, so the first rank receives nothing and the last
 * sends nothing. Eight products back to back, each reading the last one's result, y_k =
 * A y_{k-1} (nothing in between waits for the device), against the serial products: on GPU
 * ranks the next ghosts must not land before the last off-rank product has read them. */
static void test_one_sided(void)
{
    const int64_t n = 2000;
    krill_csr *g = NULL;
    krill_mat *a = NULL;
    krill_vec *v[2] = {NULL, NULL};
    krill_dist_layout l;
    double *gx = malloc((size_t)n * sizeof *gx), *ref = malloc((size_t)n * sizeof *ref);
    double *got = malloc((size_t)n * sizeof *got);
    int k;
    if (!gx || !ref || !got) exit(1);
    CHECK_OK(krill_csr_create((int32_t)n, (int32_t)n, 2 * n - 1, &g));
    for (int64_t i = 0, e = 0; g && i < n; i++) {
        if (i > 0) {
            g->col[e] = (int32_t)(i - 1);
            g->val[e++] = -1.0;
        }
        g->col[e] = (int32_t)i;
        g->val[e++] = 2.0;
        g->row_ptr[i + 1] = e;
    }
    CHECK_OK(krill_dist_mat_scatter(ctx, rank == 0 ? g : NULL, NULL, "csr", &a));
    CHECK_OK(krill_dist_mat_layout(a, &l));
    CHECK(size == 1 || l.halo > 0 || l.sent > 0);
    mtu_vector(n, gx);
    CHECK_OK(krill_vec_create(ctx, l.n_local, &v[0]));
    CHECK_OK(krill_vec_create(ctx, l.n_local, &v[1]));
    CHECK_OK(krill_dist_vec_scatter(a, gx, v[0]));
    for (k = 0; k < 8; k++) CHECK_OK(krill_mat_spmv(a, 1.0, v[k % 2], 0.0, v[(k + 1) % 2]));
    CHECK_OK(krill_dist_vec_gather(a, v[k % 2], got));
    if (rank == 0) {
        for (int j = 0; j < 8; j++) {
            krill_csr_spmv_ref(g, 1.0, gx, 0.0, ref);
            memcpy(gx, ref, (size_t)n * sizeof *gx);
        }
        CHECK(tu_max_rel_diff(got, ref, n) <= TOL);
    }
    krill_vec_destroy(&v[0]);
    krill_vec_destroy(&v[1]);
    krill_mat_destroy(&a);
    krill_csr_destroy(&g);
    free(gx);
    free(ref);
    free(got);
}

/* testdata: rank 0 walks the matrices and tells the others, for each, to join the scatter. */
static void testdata_one(const krill_csr *a, const char *name, void *user)
{
    (*(int *)user)++;
    mtu_bcast_int(1);
    scatter_and_check(a, a->n_rows, MTU_BALANCED, "csr", name);
}

static void test_testdata(void)
{
    int count = 0;
    if (rank == 0) {
        if (tu_for_each_square_mtx(testdata_one, &count) < 0) printf("testdata skipped\n");
        mtu_bcast_int(0);
        printf("testdata: %d square matrices on %d ranks\n", count, size);
    } else {
        while (mtu_bcast_int(0)) scatter_and_check(NULL, 0, MTU_BALANCED, "csr", "testdata");
    }
}

int main(int argc, char **argv)
{
    ctx = mtu_init(&argc, &argv);
    rank = krill_ctx_rank(ctx);
    size = krill_ctx_size(ctx);
    CHECK(size >= 1 && size <= 63);
    test_generated();
    test_own_rows();
    test_reductions();
    test_one_sided();
    test_testdata();
    return mtu_finish("test_mpi_spmv", &ctx);
}
