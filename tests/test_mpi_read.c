/* test_mpi_read: krill_dist_mat_read and krill_dist_read_rows (dist/read.c) on 1, 2, 3 and 4
 * ranks (tests/mpi.cmake). Each rank reads its own rows of a krill binary file; the result
 * must be the matrix krill_dist_mat_scatter makes of the Matrix Market file: the same
 * partition (balanced by nonzeros, or the caller's offsets), the same rows, the same SpMV and
 * CG solve bit for bit. A .mtx path goes through rank 0 and the scatter. A corrupt file (a
 * flipped byte in a chunk that one rank reads, a truncated file, a wrong magic), a missing
 * one and a rectangular one fail on every rank with the same status, never a hang; the
 * allocation fault hook on the last rank walks krill_dist_mat_read. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core_impl.h"   /* the allocation fault hook */
#include "mpi_testutil.h"

static krill_ctx *ctx;
static int rank, size;
static char dir[128];

static const char *path_of(const char *name)
{
    static char p[2][256];
    static int turn;
    turn ^= 1;
    snprintf(p[turn], sizeof p[turn], "%s/%s", dir, name);
    return p[turn];
}

/* Every rank returned st: the same status everywhere; where it failed, the message has
 * `want` (NULL: anything). */
static void check_everywhere(krill_status st, krill_status expected, const char *want,
                             const char *what)
{
    int s[2] = {(int)st, -(int)st}, m[2];
    MPI_Allreduce(s, m, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(m[0] == -m[1] && st == expected);
    if (st != expected) fprintf(stderr, "  %s: rank %d: %s\n", what, rank, krill_last_error());
    if (st != KRILL_OK && want) {
        CHECK(strstr(krill_last_error(), want) != NULL);
        if (!strstr(krill_last_error(), want))
            fprintf(stderr, "  %s: rank %d's message: %s (want %s)\n", what, rank,
                    krill_last_error(), want);
    }
}

/* y = A x on the distributed matrices a and b: the same bits, and the same layout. */
static void same_matrix(const krill_mat *a, const krill_mat *b, const krill_csr *g,
                        const char *what)
{
    krill_dist_layout la, lb;
    krill_vec *x = NULL, *ya = NULL, *yb = NULL;
    double *xg = malloc((size_t)g->n_rows * sizeof *xg + 8);
    CHECK_OK(krill_dist_mat_layout(a, &la));
    CHECK_OK(krill_dist_mat_layout(b, &lb));
    CHECK(!memcmp(&la, &lb, sizeof la));
    mtu_vector(g->n_rows, xg);
    CHECK_OK(krill_vec_create(ctx, la.n_local, &x));
    CHECK_OK(krill_vec_create(ctx, la.n_local, &ya));
    CHECK_OK(krill_vec_create(ctx, la.n_local, &yb));
    memcpy(krill_vec_data(x), xg + la.row_start, (size_t)la.n_local * sizeof *xg);
    CHECK_OK(krill_mat_spmv(a, 1.5, x, 0.0, ya));
    CHECK_OK(krill_mat_spmv(b, 1.5, x, 0.0, yb));
    int same = !memcmp(krill_vec_data(ya), krill_vec_data(yb), (size_t)la.n_local * 8);
    CHECK(same);
    if (!same || memcmp(&la, &lb, sizeof la))
        fprintf(stderr, "  %s: rank %d: read and scatter differ\n", what, rank);
    krill_vec_destroy(&x);
    krill_vec_destroy(&ya);
    krill_vec_destroy(&yb);
    free(xg);
}

/* CG on a (read) and b (scattered) from b = A 1: the same iterations and solution bits. */
static void same_solve(krill_mat *a, krill_mat *b, const char *what)
{
    krill_mat *m[2] = {a, b};
    krill_vec *x[2] = {NULL, NULL}, *rhs = NULL, *ones = NULL;
    krill_solve_info info[2];
    krill_solver_opts o;
    krill_dist_layout l;
    krill_solver_opts_default(&o);
    o.solver = KRILL_SOLVER_CG;
    o.rtol = 1e-10;
    CHECK_OK(krill_dist_mat_layout(a, &l));
    CHECK_OK(krill_vec_create(ctx, l.n_local, &rhs));
    CHECK_OK(krill_vec_create(ctx, l.n_local, &ones));
    for (int64_t i = 0; i < l.n_local; i++) krill_vec_data(ones)[i] = 1.0;
    CHECK_OK(krill_mat_spmv(b, 1.0, ones, 0.0, rhs));
    for (int k = 0; k < 2; k++) {
        memset(&info[k], 0, sizeof info[k]);
        CHECK_OK(krill_vec_create(ctx, l.n_local, &x[k]));
        CHECK_OK(krill_solve(m[k], NULL, rhs, x[k], &o, &info[k]));
    }
    CHECK(info[0].reason > 0 && info[0].iterations == info[1].iterations);
    CHECK(!memcmp(krill_vec_data(x[0]), krill_vec_data(x[1]), (size_t)l.n_local * 8));
    if (rank == 0) printf("  %s: CG %d iterations, read and scattered alike\n", what,
                          info[0].iterations);
    for (int k = 0; k < 2; k++) {
        krill_solve_info_free(&info[k]);
        krill_vec_destroy(&x[k]);
    }
    krill_vec_destroy(&rhs);
    krill_vec_destroy(&ones);
}

/* g (on every rank) written by rank 0 as .krill (chunks of `chunk` bytes) and .mtx, then
 * read on every rank and compared with the scatter, for each partition. */
static void read_and_compare(const krill_csr *g, int64_t chunk, const char *what, int solve)
{
    krill_status st = KRILL_OK;
    int64_t off[16];
    krill_csr *copy = NULL;   /* where g is NULL: rank 0's matrix, read back whole */
    if (rank == 0) {
        st = krill_bin_write(path_of("g.krill"), g, chunk);
        if (st == KRILL_OK) st = krill_mm_write(path_of("g.mtx"), g);
    }
    CHECK(mtu_bcast_int((int)st) == KRILL_OK);
    if (!g) {
        CHECK_OK(krill_bin_read(path_of("g.krill"), &copy, NULL));
        g = copy;
    }
    for (int p = 0; p < MTU_PARTITIONS; p++) {
        krill_mat *a = NULL, *b = NULL, *c = NULL;
        krill_csr *rows = NULL;
        const int64_t *given = rank == 0 ? mtu_offsets(p, g->n_rows, size, off) : NULL;
        CHECK_OK(krill_dist_mat_read(ctx, path_of("g.krill"), given, "csr", &a));
        CHECK_OK(krill_dist_mat_read(ctx, path_of("g.mtx"), given, "csr", &c));
        CHECK_OK(krill_dist_mat_scatter(ctx, rank == 0 ? g : NULL, given, "csr", &b));
        if (a && b && c) {
            krill_dist_layout l;
            same_matrix(a, b, g, what);
            same_matrix(c, b, g, what);
            CHECK_OK(krill_dist_mat_layout(a, &l));
            CHECK_OK(krill_dist_read_rows(ctx, path_of("g.krill"), given, &rows));
            const int64_t p0 = g->row_ptr[l.row_start];
            CHECK(rows && rows->n_rows == l.n_local && rows->n_cols == g->n_cols &&
                  !memcmp(rows->col, g->col + p0, (size_t)rows->nnz * 4) &&
                  !memcmp(rows->val, g->val + p0, (size_t)rows->nnz * 8) &&
                  rows->nnz == g->row_ptr[l.row_start + l.n_local] - p0);
            if (solve && p == MTU_BALANCED) same_solve(a, b, what);
        }
        krill_csr_destroy(&rows);
        krill_mat_destroy(&a);
        krill_mat_destroy(&b);
        krill_mat_destroy(&c);
    }
    krill_csr_destroy(&copy);
}

static void test_generated(void)
{
    static const char *const specs[] = {"poisson3d:6", "convdiff3d:5,2", "band101:300",
                                        "rand100:150", "elasticity3d:2,2,3"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        krill_csr *g = NULL;
        CHECK_OK(krill_gen(specs[s], &g));
        if (!g) continue;
        read_and_compare(g, 64, specs[s], s == 0);
        read_and_compare(g, 0, specs[s], 0);
        krill_csr_destroy(&g);
    }
}

/* testdata: rank 0 walks the square matrices and has the others join each read (they read
 * rank 0's matrix back from the file it writes). */
static void testdata_one(const krill_csr *a, const char *name, void *user)
{
    (void)user;
    mtu_bcast_int(1);
    read_and_compare(a, 256, name, 0);
}

static void test_testdata(void)
{
    if (rank == 0) {
        int n = tu_for_each_square_mtx(testdata_one, NULL);
        mtu_bcast_int(0);
        printf("testdata: %d square matrices read on %d ranks\n", n, size);
    } else {
        while (mtu_bcast_int(0)) read_and_compare(NULL, 256, "testdata", 0);
    }
}

/* A copy of good.krill with byte `at` xor-ed with `bits` (at < 0: from the end), or cut to
 * `len` bytes (len >= 0), as bad.krill; rank 0 writes it. */
static void make_bad(size_t n, const unsigned char *good, long at, int bits, long len)
{
    if (rank == 0) {
        FILE *f = fopen(path_of("bad.krill"), "wb");
        unsigned char *b = malloc(n);
        memcpy(b, good, n);
        if (at != 0 || bits) b[at < 0 ? (long)n + at : at] ^= (unsigned char)bits;
        CHECK(f && fwrite(b, 1, len >= 0 ? (size_t)len : n, f) == (len >= 0 ? (size_t)len : n));
        if (f) fclose(f);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void refused2(krill_status expected, const char *want, const char *want_rows,
                     const char *what)
{
    krill_mat *a = NULL;
    krill_csr *rows = NULL;
    krill_status st = krill_dist_mat_read(ctx, path_of("bad.krill"), NULL, "csr", &a);
    check_everywhere(st, expected, want, what);
    CHECK(a == NULL);
    st = krill_dist_read_rows(ctx, path_of("bad.krill"), NULL, &rows);
    check_everywhere(st, expected, want_rows, what);
    CHECK(rows == NULL);
    if (rank == 0) printf("  %-34s refused on every rank: %s\n", what, krill_last_error());
}

static void refused(krill_status expected, const char *want, const char *what)
{
    refused2(expected, want, want, what);
}

/* Corrupt files: every rank fails alike; the flipped chunk is one that only the ranks
 * holding the last rows read. */
static void test_corrupt(void)
{
    krill_csr *g = NULL;
    size_t n = 0;
    unsigned char *good = NULL;
    CHECK_OK(krill_gen("poisson3d:5", &g));
    if (rank == 0) CHECK_OK(krill_bin_write(path_of("good.krill"), g, 64));
    MPI_Barrier(MPI_COMM_WORLD);
    FILE *f = fopen(path_of("good.krill"), "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        n = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        good = malloc(n);
        CHECK(fread(good, 1, n, f) == n);
        fclose(f);
    }
    CHECK(good != NULL);
    if (!good) goto cleanup;
    make_bad(n, good, -3, 0x40, -1);                   /* the last value */
    refused(KRILL_ERR_PARSE, "checksum mismatch in the val section", "a flipped last value");
    if (size > 1 && rank == 0) {   /* found by the last rank alone: it reads that chunk */
        char want[32];
        snprintf(want, sizeof want, "rank %d of %d", size - 1, size);
        CHECK(strstr(krill_last_error(), want) != NULL);
    }
    make_bad(n, good, 128 + 8 * 3, 0x01, -1);          /* a checksum of the row_ptr table */
    refused(KRILL_ERR_PARSE, "checksum mismatch in the row_ptr section", "a flipped checksum");
    make_bad(n, good, 0, 0, (long)n - 100);
    refused(KRILL_ERR_PARSE, "truncated", "a truncated file");
    make_bad(n, good, 2, 0x20, -1);
    refused2(KRILL_ERR_PARSE, "bad.krill", "bad magic", "a wrong magic (read as .mtx)");
    make_bad(n, good, 40, 0x01, -1);                    /* nnz: header checksum */
    refused(KRILL_ERR_PARSE, "header checksum mismatch", "a flipped header byte");
    if (rank == 0) remove(path_of("bad.krill"));
    MPI_Barrier(MPI_COMM_WORLD);
    refused(KRILL_ERR_IO, "bad.krill", "a missing file");
    if (rank == 0) {                                    /* a rectangular matrix */
        krill_csr *r = NULL;
        CHECK_OK(krill_csr_create(3, 4, 0, &r));
        CHECK_OK(krill_bin_write(path_of("bad.krill"), r, 0));
        krill_csr_destroy(&r);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    refused(KRILL_ERR_UNSUPPORTED, "square", "a rectangular matrix");
    if (rank == 0) remove(path_of("bad.krill"));
cleanup:
    free(good);
    krill_csr_destroy(&g);
}

/* The allocation fault hook on the last rank, k = 1, 2, ... until krill_dist_mat_read
 * succeeds: each failure is KRILL_ERR_ALLOC there and the same status on every rank. */
static void test_faults(void)
{
    const int faulty = size - 1;
    int k, failed = 0;
    for (k = 1; k <= 400; k++) {
        krill_mat *a = NULL;
        int bad = 0, any = 0;
        if (rank == faulty) krill_fault_alloc_after(k);
        krill_status st = krill_dist_mat_read(ctx, path_of("good.krill"), NULL, "csr", &a);
        krill_fault_alloc_after(0);
        bad = st != KRILL_OK;
        check_everywhere(st, st, NULL, "fault walk");
        if (bad && rank == faulty) CHECK(st == KRILL_ERR_ALLOC);
        CHECK(bad == (a == NULL));
        krill_mat_destroy(&a);
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (!any) break;
        failed++;
    }
    CHECK(k <= 400 && failed > 0);
    if (rank == 0) printf("  krill_dist_mat_read: %d allocations of rank %d failed, each on "
                          "every rank\n", failed, faulty);
}

int main(int argc, char **argv)
{
    ctx = mtu_init(&argc, &argv);
    rank = krill_ctx_rank(ctx);
    size = krill_ctx_size(ctx);
    int pid = mtu_bcast_int((int)getpid());
    snprintf(dir, sizeof dir, "/tmp/krill-mpi-read-%d", pid);
    if (rank == 0 && mkdir(dir, 0700) != 0) fprintf(stderr, "cannot create %s\n", dir);
    MPI_Barrier(MPI_COMM_WORLD);
    TU_STEP(test_generated());
    TU_STEP(test_testdata());
    TU_STEP(test_corrupt());
    TU_STEP(test_faults());
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        const char *const names[] = {"g.krill", "g.mtx", "good.krill"};
        for (size_t k = 0; k < sizeof names / sizeof *names; k++) remove(path_of(names[k]));
        rmdir(dir);
    }
    return mtu_finish("test_mpi_read", &ctx);
}
