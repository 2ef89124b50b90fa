/* test_mpi_faults: a failure on one rank is returned on every rank, never a hang
 * (tests/mpi.cmake: 1, 2, 3, 4 ranks, each with a TIMEOUT). The allocation fault hook makes
 * the k-th allocation of the last rank fail, for k = 1, 2, ... until the call succeeds,
 * through every collective function (the context, scatter and assembly of a matrix,
 * preconditioners, every solver, vector scatter and gather): every rank must return the same
 * status, and the others must name the failing rank. Then failures that are not
 * allocations: a rank with a malformed CSR, a rank whose columns disagree, a block size that
 * does not divide one rank's rows. On GPU ranks (krill_mpi_gpu_test) all of it again, and the
 * device reductions' failure flag. */
#include <execinfo.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core_impl.h"   /* the allocation fault hook */
#include "solver/solver_impl.h"   /* the solvers' asynchronous read */
#include "mpi_testutil.h"

static krill_ctx *ctx;
static int rank, size, faulty;   /* faulty: the rank whose allocations fail */

/* Every rank returned st; the same status everywhere, and on the others a message naming
 * the failing rank. */
static void check_agreed(krill_status st, int failing, const char *what)
{
    int s[2] = {(int)st, -(int)st}, m[2];
    char want[32];
    MPI_Allreduce(s, m, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(m[0] == -m[1]);
    if (m[0] != -m[1]) fprintf(stderr, "  %s: statuses differ between ranks\n", what);
    snprintf(want, sizeof want, "rank %d of %d", failing, size);
    if (st != KRILL_OK && rank != failing) {
        CHECK(strstr(krill_last_error(), want) != NULL);
        if (!strstr(krill_last_error(), want))
            fprintf(stderr, "  %s: rank %d's message: %s\n", what, rank, krill_last_error());
    }
}

/* KRILL_TEST_TRACE: a rank still in one fault's call after TRACE_SECONDS prints where it is
 * (its stack, through glibc's backtrace) and its last error: what a hang looks like. */
#define TRACE_SECONDS 20
static void trace_stuck(int sig)
{
    void *frames[48];
    const int n = backtrace(frames, 48);
    (void)sig;
    fprintf(stderr, "rank %d stuck; last error: %s\n", rank, krill_last_error());
    backtrace_symbols_fd(frames, n, 2);
}

typedef krill_status (*step_fn)(void *state);
typedef void (*undo_fn)(void *state);

/* Walk the faults of `call` on the faulty rank; returns how many failed before success. */
static int walk(const char *what, step_fn call, undo_fn undo, void *state)
{
    const int trace = getenv("KRILL_TEST_TRACE") != NULL;   /* each fault on stderr */
    int k, failed = 0;
    for (k = 1; k <= 400; k++) {
        if (trace) {
            fprintf(stderr, "rank %d: %s, fault at allocation %d\n", rank, what, k);
            signal(SIGALRM, trace_stuck);
            alarm(TRACE_SECONDS);
        }
        if (rank == faulty) krill_fault_alloc_after(k);
        krill_status st = call(state);
        krill_fault_alloc_after(0);
        if (trace) alarm(0);
        int bad = st != KRILL_OK, any = 0;
        check_agreed(st, faulty, what);
        /* host memory, or device memory on GPU ranks */
        if (bad && rank == faulty) CHECK(st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC);
        undo(state);
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (!any) break;
        failed++;
    }
    CHECK(k <= 400 && failed > 0);
    if (rank == 0) printf("  %-28s %3d allocations of rank %d failed, each on every rank\n",
                          what, failed, faulty);
    return failed;
}

typedef struct state {
    krill_csr *g;            /* the whole matrix (rank 0) */
    krill_csr *mine;         /* this rank's even share of g's rows */
    krill_ctx *c;
    krill_mat *a;
    krill_pc *pc;
    krill_vec *b, *x;
    const char *pc_name;
    krill_solver_opts opts;
    double *global;
} state;

static krill_status make_ctx(void *s)
{
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    o.device = KRILL_DEVICE_CPU;
    o.threads = 1;
    return krill_mpi_ctx_create(MPI_COMM_WORLD, &o, &((state *)s)->c);
}
static void drop_ctx(void *s) { krill_ctx_destroy(&((state *)s)->c); }

static krill_status scatter(void *s)
{
    state *t = s;
    return krill_dist_mat_scatter(ctx, rank == 0 ? t->g : NULL, NULL, "csr", &t->a);
}
static void drop_mat(void *s) { krill_mat_destroy(&((state *)s)->a); }

static krill_status own_rows(void *s)
{
    state *t = s;
    return krill_dist_mat_create(ctx, t->mine, "csr", &t->a);
}

static krill_status make_pc(void *s)
{
    state *t = s;
    return krill_pc_create(t->a, t->pc_name, &t->pc);
}
static void drop_pc(void *s) { krill_pc_destroy(&((state *)s)->pc); }

static krill_status solve(void *s)
{
    state *t = s;
    krill_solve_info info;
    krill_status st = krill_vec_fill(t->x, 0.0);
    if (st == KRILL_OK) st = krill_solve(t->a, t->pc, t->b, t->x, &t->opts, &info);
    krill_solve_info_free(&info);
    return st;
}
static void nothing(void *s) { (void)s; }

static krill_status gather(void *s)
{
    state *t = s;
    return krill_dist_vec_gather(t->a, t->x, t->global);
}

static void test_alloc_faults(void)
{
    static const krill_solver_type solvers[] = {KRILL_SOLVER_CG, KRILL_SOLVER_GMRES,
                                                KRILL_SOLVER_FGMRES, KRILL_SOLVER_BICGSTAB,
                                                KRILL_SOLVER_MINRES, KRILL_SOLVER_PIPECG};
    static const char *const names[] = {"krill_solve cg", "krill_solve gmres/dcgs2",
                                        "krill_solve fgmres", "krill_solve bicgstab",
                                        "krill_solve minres", "krill_solve pipecg"};
    state t;
    krill_dist_layout l;
    memset(&t, 0, sizeof t);
    CHECK_OK(krill_gen("poisson3d:5", &t.g));
    walk("krill_mpi_ctx_create", make_ctx, drop_ctx, &t);
    walk("krill_dist_mat_scatter", scatter, drop_mat, &t);
    t.mine = mtu_even_rows(t.g, rank, size);
    walk("krill_dist_mat_create", own_rows, drop_mat, &t);
    krill_csr_destroy(&t.mine);
    CHECK_OK(scatter(&t));
    t.pc_name = "ilu0";
    walk("krill_pc_create ilu0", make_pc, drop_pc, &t);
    t.pc_name = "jacobi";
    CHECK_OK(make_pc(&t));
    CHECK_OK(krill_dist_mat_layout(t.a, &l));
    CHECK_OK(krill_vec_create(ctx, l.n_local, &t.b));
    CHECK_OK(krill_vec_create(ctx, l.n_local, &t.x));
    CHECK_OK(krill_vec_fill(t.b, 1.0));
    for (size_t k = 0; k < sizeof solvers / sizeof *solvers; k++) {
        krill_solver_opts_default(&t.opts);
        t.opts.solver = solvers[k];
        t.opts.ortho = KRILL_ORTHO_DCGS2;
        walk(names[k], solve, nothing, &t);
    }
    t.global = malloc((size_t)l.n_global * sizeof *t.global);
    walk("krill_dist_vec_gather", gather, nothing, &t);
    free(t.global);
    krill_vec_destroy(&t.b);
    krill_vec_destroy(&t.x);
    drop_pc(&t);
    drop_mat(&t);
    krill_csr_destroy(&t.g);
}

/* krill_comm_create is not collective in its failures (its allocations come after no
 * communication): the k-th allocation fails on every rank alike, each gets KRILL_ERR_ALLOC
 * and a NULL handle, nothing leaks (ASan), and the walk ends in a handle. */
static void test_comm_create_faults(void)
{
    int failed = 0, k;
    for (k = 1; k <= 50; k++) {
        krill_comm *h = NULL;
        krill_fault_alloc_after(k);
        krill_status st = krill_comm_create(MPI_COMM_WORLD, &h);
        krill_fault_alloc_after(0);
        if (st == KRILL_OK) {
            CHECK(h != NULL);
            krill_comm_destroy(&h);
            break;
        }
        CHECK(st == KRILL_ERR_ALLOC && h == NULL);
        failed++;
    }
    CHECK(k <= 50 && failed > 0);
}

/* Rank `bad` gives rows that are wrong in one way; every rank fails with its status. */
static void test_bad_rows(void)
{
    krill_csr *g = NULL, *mine = NULL;
    krill_mat *a = NULL;
    krill_pc *pc = NULL;
    int bad = size - 1;
    CHECK_OK(krill_gen("poisson3d:4", &g));
    const int64_t n = g->n_rows, lo = n * rank / size, hi = n * (rank + 1) / size;
    mine = mtu_even_rows(g, rank, size);

    /* columns out of order on one rank */
    if (rank == bad) {
        int32_t c = mine->col[0];
        mine->col[0] = mine->col[1];
        mine->col[1] = c;
    }
    krill_status st = krill_dist_mat_create(ctx, mine, "csr", &a);
    CHECK(st == KRILL_ERR_ARG && a == NULL);
    check_agreed(st, bad, "unsorted columns");
    if (rank == bad) {
        int32_t c = mine->col[0];
        mine->col[0] = mine->col[1];
        mine->col[1] = c;
    }
    /* one rank's column count disagrees (checked by all: every rank names it) */
    if (rank == bad) mine->n_cols++;
    st = krill_dist_mat_create(ctx, mine, "csr", &a);
    CHECK(st == KRILL_ERR_ARG && a == NULL);
    CHECK(strstr(krill_last_error(), "columns") != NULL);
    if (rank == bad) mine->n_cols--;
    /* a block size that divides some ranks' rows only: 64 rows, 5 = 1 + 4 blocks on 2 ranks */
    CHECK_OK(krill_dist_mat_create(ctx, mine, "csr", &a));
    st = krill_pc_create(a, "bjacobi:4", &pc);
    {
        int64_t rows = hi - lo, any_bad = 0, mine_bad = rows % 4 != 0;
        MPI_Allreduce(&mine_bad, &any_bad, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
        CHECK(any_bad ? st != KRILL_OK && pc == NULL : st == KRILL_OK);
        int first = size;
        int me = mine_bad ? rank : size;
        MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (any_bad) check_agreed(st, first, "bjacobi:4");
    }
    krill_pc_destroy(&pc);
    krill_mat_destroy(&a);
    krill_csr_destroy(&mine);
    krill_csr_destroy(&g);
}

/* A device reduction's failure on the faulty rank, seen on every rank: at once (the host
 * path: the flag inside the sum), or, with NCCL (core/nccl.cu), not by the reduction
 * (deferred: KRILL_OK everywhere) but by the next read: a download when via_async is 0,
 * else a solver's asynchronous read of dev. */
static krill_status failed_reduction(double *dev, int n, int norm, int via_async)
{
    const krill_status local =
        rank == faulty ? krill_error(KRILL_ERR_DEVICE, "injected: a kernel failed") : KRILL_OK;
    double h = 0.0;
    krill_status st = norm ? krill_ctx_nrm2_allreduce_device(ctx, local, dev)
                           : krill_ctx_allreduce_device(ctx, local, dev, n, NULL, 0);
    if (st != KRILL_OK) return st;
    CHECK(strstr(krill_ctx_describe(ctx), ": NCCL") != NULL);   /* only NCCL defers */
    if (via_async) {
        krill_async_read r;
        CHECK_OK(krill_async_read_create(ctx, sizeof h, &r));
        st = krill_async_read_start(&r, 1, dev);
        if (st == KRILL_OK) st = krill_async_read_wait(&r, 1, &h);
        krill_async_read_destroy(&r);
    } else {
        st = krill_mem_download(ctx, &h, dev, sizeof h);
    }
    return st;
}

/* NCCL: a failed reduction read first by the failing rank alone, then by every rank: no
 * hang (the code travels in the group, a read makes no collective), and every rank sees
 * the failure once. The host path returns it at the reduction: nothing to check. */
static void lone_read(double *dev, int n)
{
    const krill_status local = rank == faulty ? krill_error(KRILL_ERR_DEVICE, "injected: alone")
                                              : KRILL_OK;
    krill_status first = KRILL_OK, second;
    double h;
    if (krill_ctx_allreduce_device(ctx, local, dev, n, NULL, 0) != KRILL_OK) return;
    if (rank == faulty) first = krill_mem_download(ctx, &h, dev, sizeof h);
    second = krill_mem_download(ctx, &h, dev, sizeof h);
    CHECK((first != KRILL_OK) + (second != KRILL_OK) == 1);
    CHECK(rank != faulty || first == KRILL_ERR_DEVICE);
    CHECK(rank == faulty || second == KRILL_ERR_DEVICE);
}

/* GPU ranks: the device reductions (core_impl.h) sum over the ranks when all went well, and
 * return the failing rank's status on every rank when its local work failed; for a short run
 * (one collective) and for one longer than the pinned buffer (agree first), and for the
 * norm; with NCCL through both kinds of read, and the sums right again after each failure
 * (the flag cleared). A CPU context returns `local` at once: nothing to check there. */
static void test_device_reductions(void)
{
    const int counts[2] = {3, 5000};
    if (!krill_on_gpu(ctx)) return;
    if (rank == 0) printf("  device reductions: %s\n", krill_ctx_describe(ctx));
    for (int c = 0; c < 2; c++) {
        const int n = counts[c];
        double *dev = NULL, *h = malloc((size_t)n * sizeof *h);
        krill_status st;
        CHECK_OK(krill_mem_alloc(ctx, (void **)&dev, (size_t)n * sizeof *dev, "test sums"));
        for (int via_async = 0; via_async < 2; via_async++) {
            for (int i = 0; i < n; i++) h[i] = rank + 1.0 + i;
            CHECK_OK(krill_mem_upload(ctx, dev, h, (size_t)n * sizeof *h));
            /* two runs: n - 1 doubles and one more after them */
            CHECK_OK(krill_ctx_allreduce_device(ctx, KRILL_OK, dev, n - 1, dev + n - 1, 1));
            CHECK_OK(krill_mem_download(ctx, h, dev, (size_t)n * sizeof *h));
            for (int i = 0; i < n; i++)
                CHECK_CLOSE(h[i], size * (size + 1) / 2.0 + (double)size * i, 1e-15);
            st = failed_reduction(dev, n, 0, via_async);
            CHECK(st == KRILL_ERR_DEVICE);
            check_agreed(st, faulty, n > 4000 ? "long device reduction" : "device reduction");
            h[0] = rank + 1.0;   /* the norm: sqrt(sum of the squares of the ranks' norms) */
            CHECK_OK(krill_mem_upload(ctx, dev, h, sizeof *h));
            CHECK_OK(krill_ctx_nrm2_allreduce_device(ctx, KRILL_OK, dev));
            CHECK_OK(krill_mem_download(ctx, h, dev, sizeof *h));
            CHECK_CLOSE(h[0], sqrt(size * (size + 1.0) * (2.0 * size + 1.0) / 6.0), 1e-15);
            for (int e = 0; e < 2; e++) {   /* squares beyond the range: the scaled sum */
                const double scale = e ? 1e200 : 1e-160;
                h[0] = (rank + 1.0) * scale;
                CHECK_OK(krill_mem_upload(ctx, dev, h, sizeof *h));
                CHECK_OK(krill_ctx_nrm2_allreduce_device(ctx, KRILL_OK, dev));
                CHECK_OK(krill_mem_download(ctx, h, dev, sizeof *h));
                CHECK_CLOSE(h[0] / scale, sqrt(size * (size + 1.0) * (2.0 * size + 1.0) / 6.0),
                            1e-15);
            }
            st = failed_reduction(dev, 1, 1, via_async);
            CHECK(st == KRILL_ERR_DEVICE);
            check_agreed(st, faulty, "device norm");
        }
        lone_read(dev, n);
        krill_mem_free(ctx, dev);
        free(h);
    }
}

int main(int argc, char **argv)
{
    ctx = mtu_init(&argc, &argv);
    rank = krill_ctx_rank(ctx);
    size = krill_ctx_size(ctx);
    faulty = size - 1;
    test_alloc_faults();
    test_comm_create_faults();
    test_bad_rows();
    test_device_reductions();
    return mtu_finish("test_mpi_faults", &ctx);
}
