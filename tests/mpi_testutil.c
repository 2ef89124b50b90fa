/* tests/mpi_testutil.c - see mpi_testutil.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_testutil.h"

krill_ctx *mtu_init(int *argc, char ***argv)
{
    krill_ctx *ctx = NULL;
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    const char *device = getenv("KRILL_TEST_MPI_DEVICE");
    if (MPI_Init(argc, argv) != MPI_SUCCESS) exit(1);
    o.device = KRILL_DEVICE_CPU;
    o.threads = 1;
    if (device && strcmp(device, "gpu") == 0) {   /* one GPU per rank; none: skipped */
        int count = krill_cuda_device_count(), fewest = 0;
        MPI_Allreduce(&count, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (fewest == 0) {
            int rank = 0;
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            if (rank == 0) printf("SKIPPED: KRILL_TEST_MPI_DEVICE=gpu, but no CUDA device here\n");
            MPI_Finalize();
            exit(77);
        }
        o.device = KRILL_DEVICE_CUDA;
        o.device_id = KRILL_DEVICE_ID_LOCAL_RANK;
    }
    if (krill_mpi_ctx_create(MPI_COMM_WORLD, &o, &ctx) != KRILL_OK) {
        fprintf(stderr, "krill_mpi_ctx_create: %s\n", krill_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* the NCCL variants (tests/mpi.cmake): skipped where the ranks did not get it (one GPU
     * shared, a build without NCCL); every rank's context says the same */
    if (getenv("KRILL_TEST_REQUIRE_NCCL") && !strstr(krill_ctx_describe(ctx), ": NCCL")) {
        if (krill_ctx_rank(ctx) == 0)
            printf("SKIPPED: KRILL_NCCL=1, but the context has no NCCL: %s\n",
                   krill_ctx_describe(ctx));
        krill_ctx_destroy(&ctx);
        MPI_Finalize();
        exit(77);
    }
    return ctx;
}

int mtu_finish(const char *name, krill_ctx **ctx)
{
    int counts[2] = {tu_checks, tu_failures}, sums[2], rank = krill_ctx_rank(*ctx), code = 0;
    MPI_Reduce(counts, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        tu_checks = sums[0];
        tu_failures = sums[1];
        printf("(%d ranks) ", krill_ctx_size(*ctx));
        code = tu_finish(name);
    }
    krill_ctx_destroy(ctx);
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return code;
}

const char *mtu_partition_name(mtu_partition p)
{
    static const char *const names[MTU_PARTITIONS] = {"balanced", "all on rank 0",
                                                      "all on the last rank", "rank 1 empty"};
    return names[p];
}

const int64_t *mtu_offsets(mtu_partition p, int64_t n, int size, int64_t *off)
{
    int empty = size > 2 ? 1 : 0;
    if (p == MTU_BALANCED) return NULL;
    for (int r = 0; r <= size; r++) {
        if (p == MTU_ALL_ON_FIRST) off[r] = r == 0 ? 0 : n;
        else if (p == MTU_ALL_ON_LAST) off[r] = r == size ? n : 0;
        else if (size == 1) off[r] = r == 0 ? 0 : n;
        else {   /* even split among the size - 1 ranks other than `empty` */
            int k = r <= empty ? r : r - 1;   /* ranks before r that hold rows */
            off[r] = n * k / (size - 1);
        }
    }
    return off;
}

void mtu_vector(int64_t n, double *x)
{
    for (int64_t i = 0; i < n; i++) x[i] = 1.0 + sin(0.37 * (double)i) + (double)(i % 7) / 8.0;
}

static void system_vectors(krill_ctx *ctx, mtu_system *s)
{
    CHECK_OK(krill_vec_create(ctx, s->n_local, &s->b));
    CHECK_OK(krill_vec_create(ctx, s->n_local, &s->x));
}

void mtu_system_serial(krill_ctx *serial, const krill_csr *g, mtu_system *s)
{
    memset(s, 0, sizeof *s);
    s->n_local = s->n_global = g->n_rows;
    CHECK_OK(krill_mat_create(serial, g, "csr", &s->a));
    system_vectors(serial, s);
    mtu_vector(g->n_rows, krill_vec_data(s->b));
}

void mtu_system_dist(krill_ctx *ctx, const krill_csr *g, mtu_partition p, mtu_system *s)
{
    krill_dist_layout l;
    int64_t off[65];
    double *gb;
    const int rank = krill_ctx_rank(ctx);
    memset(s, 0, sizeof *s);
    CHECK_OK(krill_dist_mat_scatter(ctx, rank == 0 ? g : NULL,
                                    rank == 0 ? mtu_offsets(p, g->n_rows, krill_ctx_size(ctx), off)
                                              : NULL, "csr", &s->a));
    CHECK_OK(krill_dist_mat_layout(s->a, &l));
    s->n_local = l.n_local;
    s->n_global = l.n_global;
    s->dist = 1;
    system_vectors(ctx, s);
    gb = malloc((size_t)l.n_global * sizeof *gb);
    if (!gb) exit(1);
    mtu_vector(l.n_global, gb);
    CHECK_OK(krill_dist_vec_scatter(s->a, gb, s->b));
    free(gb);
}

void mtu_system_solve(mtu_system *s, const char *pc_name, const krill_solver_opts *o, double *x,
                      krill_solve_info *info)
{
    krill_pc *pc = NULL;
    CHECK_OK(krill_pc_create(s->a, pc_name, &pc));
    CHECK_OK(krill_solve(s->a, pc, s->b, s->x, o, info));
    if (s->dist) {
        CHECK_OK(krill_dist_vec_gather(s->a, s->x, x));
        MPI_Bcast(x, (int)s->n_global, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    } else {
        CHECK_OK(krill_vec_download(s->x, x));
    }
    krill_pc_destroy(&pc);
}

void mtu_system_free(mtu_system *s)
{
    krill_vec_destroy(&s->b);
    krill_vec_destroy(&s->x);
    krill_mat_destroy(&s->a);
}

void mtu_check_spmv(krill_ctx *ctx, const krill_mat *a, const krill_csr *g, const char *what,
                    double tol)
{
    krill_dist_layout l;
    krill_vec *x = NULL, *y = NULL;
    const int rank = krill_ctx_rank(ctx);
    double *gx, *gy, *ref;
    int64_t n;
    CHECK_OK(krill_dist_mat_layout(a, &l));
    n = l.n_global;
    gx = malloc((size_t)(n + 1) * sizeof *gx);
    gy = malloc((size_t)(n + 1) * sizeof *gy);
    ref = malloc((size_t)(n + 1) * sizeof *ref);
    if (!gx || !gy || !ref) exit(1);
    mtu_vector(n, gx);
    for (int64_t i = 0; i < n; i++) gy[i] = ref[i] = 0.25 * (double)(i % 5) - 0.5;
    CHECK_OK(krill_vec_create(ctx, l.n_local, &x));
    CHECK_OK(krill_vec_create(ctx, l.n_local, &y));
    CHECK_OK(krill_dist_vec_scatter(a, gx, x));
    CHECK_OK(krill_dist_vec_scatter(a, gy, y));
    CHECK_OK(krill_mat_spmv(a, 1.5, x, -0.5, y));
    for (int64_t i = 0; rank == 0 && i < n; i++) gy[i] = -1e300;   /* all overwritten */
    CHECK_OK(krill_dist_vec_gather(a, y, gy));
    if (rank == 0) {
        krill_csr_spmv_ref(g, 1.5, gx, -0.5, ref);
        const double err = tu_max_rel_diff(gy, ref, n);
        CHECK(err <= tol);
        if (err > tol) fprintf(stderr, "  %s: max rel diff %.3g\n", what, err);
    }
    krill_vec_destroy(&x);
    krill_vec_destroy(&y);
    free(gx);
    free(gy);
    free(ref);
}

int mtu_bcast_int(int value)
{
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return value;
}

krill_csr *mtu_even_rows(const krill_csr *g, int rank, int size)
{
    krill_csr *mine = NULL;
    const int64_t n = g->n_rows, lo = n * rank / size, hi = n * (rank + 1) / size;
    const int64_t base = g->row_ptr[lo], nnz = g->row_ptr[hi] - base;
    CHECK_OK(krill_csr_create((int32_t)(hi - lo), g->n_cols, nnz, &mine));
    if (!mine) exit(1);
    for (int64_t i = 0; i <= hi - lo; i++) mine->row_ptr[i] = g->row_ptr[lo + i] - base;
    memcpy(mine->col, g->col + base, (size_t)nnz * sizeof *mine->col);
    memcpy(mine->val, g->val + base, (size_t)nnz * sizeof *mine->val);
    return mine;
}
