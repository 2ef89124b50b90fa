/* test_gpu_device_csr: krill_mat_create_device_csr (a caller's CSR arrays in device memory,
 * no copy) against krill_mat_create(ctx, csr, "csr") on the same GPU context.
 * - poisson3d, convdiff3d and elasticity3d (smaller in quick mode) with int32_t and int64_t
 *   offsets: no device allocation of krill's (krill_ctx_alloc_stats_get), SpMV bits equal,
 *   GMRES / CG / BiCGStab with and without ilu0 and reproducible CG: residual histories and
 *   solutions bit for bit, krill_mat_to_csr equal to the source;
 * - update_values: host values written into the caller's array; NULL after the caller
 *   changed the array in place (and refused when that put a NaN there);
 * - a row long enough for the long-row path: its tables are all krill allocates, bits equal;
 * - refusals: host pointers, broken offsets, columns out of range / unsorted / duplicated,
 *   non-finite values, each naming the entry; krill_vec_wrap of host memory; an empty
 *   matrix; allocation faults at every step.
 * Skips (77) without a GPU. test_core covers the CPU context's refusal. */
#include <math.h>
#include <string.h>

#include "core/core_impl.h"
#include "solver_util.h"

#ifndef KRILL_HAVE_CUDA
int main(void) { tu_skip("krill was built without CUDA"); }
#else
#include <cuda_runtime_api.h>

static krill_ctx *gpu;

/* A CSR in device memory the way a caller has it: cudaMalloc'ed outside krill. The caller's
 * copies must be complete before krill reads (krill runs on its own stream, and cudaMemcpy
 * from pageable memory may return before its DMA lands): hence the synchronize after each
 * upload (initcheck's timing once showed krill reading the old contents without it). */
typedef struct dev_csr {
    void *row_ptr;
    int32_t *col;
    double *val;
    int index_bytes;
} dev_csr;

static void *dev_upload(const void *host, size_t bytes)
{
    void *d = NULL;
    if (cudaMalloc(&d, bytes > 0 ? bytes : 1) != cudaSuccess ||
        cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
        fprintf(stderr, "cudaMalloc / cudaMemcpy of %zu bytes failed\n", bytes);
        exit(1);
    }
    return d;
}

static dev_csr dev_from(const krill_csr *a, int index_bytes)
{
    dev_csr d;
    d.index_bytes = index_bytes;
    if (index_bytes == 8) {
        d.row_ptr = dev_upload(a->row_ptr, (size_t)(a->n_rows + 1) * sizeof(int64_t));
    } else {
        int32_t *r32 = malloc((size_t)(a->n_rows + 1) * sizeof *r32);
        if (!r32) exit(1);
        for (int64_t r = 0; r <= a->n_rows; r++) r32[r] = (int32_t)a->row_ptr[r];
        d.row_ptr = dev_upload(r32, (size_t)(a->n_rows + 1) * sizeof *r32);
        free(r32);
    }
    d.col = dev_upload(a->col, (size_t)a->nnz * sizeof *a->col);
    d.val = dev_upload(a->val, (size_t)a->nnz * sizeof *a->val);
    return d;
}

static void dev_free(dev_csr *d)
{
    cudaFree(d->row_ptr);
    cudaFree(d->col);
    cudaFree(d->val);
    memset(d, 0, sizeof *d);
}

static krill_status wrap(const krill_csr *a, const dev_csr *d, krill_mat **m)
{
    return krill_mat_create_device_csr(gpu, a->n_rows, a->n_cols, a->nnz, d->row_ptr,
                                       d->index_bytes, d->col, d->val, m);
}

/* y = A x on both matrices, bit for bit */
static void check_spmv(const krill_mat *ref, const krill_mat *dev, int64_t n, const char *what)
{
    krill_vec *x = NULL, *y0 = NULL, *y1 = NULL;
    double *hx = malloc((size_t)n * sizeof *hx), *h0 = malloc((size_t)n * sizeof *h0);
    double *h1 = malloc((size_t)n * sizeof *h1);
    if (!hx || !h0 || !h1) exit(1);
    tu_random(hx, n, 5);
    CHECK_OK(krill_vec_create(gpu, n, &x));
    CHECK_OK(krill_vec_create(gpu, n, &y0));
    CHECK_OK(krill_vec_create(gpu, n, &y1));
    CHECK_OK(krill_vec_upload(x, hx));
    CHECK_OK(krill_mat_spmv(ref, 1.5, x, 0.0, y0));
    CHECK_OK(krill_mat_spmv(dev, 1.5, x, 0.0, y1));
    CHECK_OK(krill_vec_download(y0, h0));
    CHECK_OK(krill_vec_download(y1, h1));
    tu_checks++;
    if (memcmp(h0, h1, (size_t)n * sizeof *h0) != 0) {
        tu_failures++;
        fprintf(stderr, "%s: SpMV differs (max rel %.3g)\n", what, tu_max_rel_diff(h1, h0, n));
    }
    krill_vec_destroy(&x);
    krill_vec_destroy(&y0);
    krill_vec_destroy(&y1);
    free(hx);
    free(h0);
    free(h1);
}

/* one solve on each matrix from x = 0: iterations, history and x bit for bit */
static void check_solve(const krill_mat *ref, const krill_mat *dev, const double *b, int64_t n,
                        const krill_solver_opts *o, const char *pc_name, const char *what)
{
    const krill_mat *mats[2] = {ref, dev};
    krill_solve_info info[2];
    double *x[2];
    for (int k = 0; k < 2; k++) {
        krill_vec *vb = NULL, *vx = NULL;
        krill_pc *pc = NULL;
        x[k] = malloc((size_t)n * sizeof(double));
        if (!x[k]) exit(1);
        memset(&info[k], 0, sizeof info[k]);
        CHECK_OK(krill_vec_create(gpu, n, &vb));
        CHECK_OK(krill_vec_create(gpu, n, &vx));
        CHECK_OK(krill_vec_upload(vb, b));
        if (pc_name) CHECK_OK(krill_pc_create(mats[k], pc_name, &pc));
        CHECK_OK(krill_solve(mats[k], pc, vb, vx, o, &info[k]));
        CHECK_OK(krill_vec_download(vx, x[k]));
        krill_pc_destroy(&pc);
        krill_vec_destroy(&vb);
        krill_vec_destroy(&vx);
    }
    {
        const int same = info[0].iterations == info[1].iterations &&
                         info[0].history_len == info[1].history_len &&
                         memcmp(info[0].history, info[1].history,
                                (size_t)info[0].history_len * sizeof(double)) == 0 &&
                         memcmp(x[0], x[1], (size_t)n * sizeof(double)) == 0;
        printf("  %-44s %4d iterations, %s\n", what, info[1].iterations,
               same ? "bit for bit" : "DIFFERS");
        CHECK(info[0].reason > 0 && same);
    }
    for (int k = 0; k < 2; k++) {
        krill_solve_info_free(&info[k]);
        free(x[k]);
    }
}

/* the matrix given back (krill_mat_to_csr) equals a */
static void check_to_csr(const krill_mat *dev, const krill_csr *a)
{
    krill_csr *back = NULL;
    CHECK_OK(krill_mat_to_csr(dev, &back));
    CHECK(back && back->n_rows == a->n_rows && back->nnz == a->nnz &&
          memcmp(back->row_ptr, a->row_ptr, (size_t)(a->n_rows + 1) * sizeof(int64_t)) == 0 &&
          memcmp(back->col, a->col, (size_t)a->nnz * sizeof(int32_t)) == 0 &&
          memcmp(back->val, a->val, (size_t)a->nnz * sizeof(double)) == 0);
    krill_csr_destroy(&back);
}

/* everything the copied matrix ref does, dev does with the same bits */
static void check_same(const char *spec, int ib, const krill_csr *a, const krill_mat *ref,
                       const krill_mat *dev, const double *b)
{
    const int64_t n = a->n_rows;
    const int spd = strncmp(spec, "convdiff", 8) != 0;
    krill_format_stats st0, st1;
    char what[96];
    krill_solver_opts o = su_krylov_opts(spd ? KRILL_SOLVER_CG : KRILL_SOLVER_GMRES,
                                         KRILL_ORTHO_CGS2, 30, 1e-10, 2000);
    krill_mat_stats(ref, &st0);
    krill_mat_stats(dev, &st1);
    CHECK(strcmp(krill_mat_format(dev), "csr") == 0 && krill_mat_nnz(dev) == a->nnz);
    CHECK(strcmp(st0.variant, st1.variant) == 0 && st1.max_row_nnz == st0.max_row_nnz);
    CHECK(ib == 8 || st1.bytes == st0.bytes);
    snprintf(what, sizeof what, "%s int%d", spec, 8 * ib);
    check_spmv(ref, dev, n, what);
    check_to_csr(dev, a);
    snprintf(what, sizeof what, "%s int%d %s", spec, 8 * ib, spd ? "cg" : "gmres");
    check_solve(ref, dev, b, n, &o, NULL, what);
    strncat(what, " ilu0", sizeof what - strlen(what) - 1);
    check_solve(ref, dev, b, n, &o, "ilu0", what);
    if (!spd) {
        o.solver = KRILL_SOLVER_BICGSTAB;
        snprintf(what, sizeof what, "%s int%d bicgstab jacobi", spec, 8 * ib);
        check_solve(ref, dev, b, n, &o, "jacobi", what);
    } else {   /* reproducible mode: the same bits as the copied matrix */
        CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OZAKI, 0));
        snprintf(what, sizeof what, "%s int%d cg reproducible", spec, 8 * ib);
        check_solve(ref, dev, b, n, &o, NULL, what);
        CHECK_OK(krill_ctx_set_repro(gpu, KRILL_REPRO_OFF, 0));
    }
}

static void test_problems(void)
{
    static const char *const full[] = {"poisson3d:20", "convdiff3d:16,5", "elasticity3d:6,3,3"};
    static const char *const quick[] = {"poisson3d:10", "convdiff3d:10,5", "elasticity3d:6,3,3"};
    const char *const *specs = tu_quick() ? quick : full;   /* quick: under the sanitizers */
    for (int p = 0; p < 3; p++)
        for (int ib = 4; ib <= 8; ib += 4) {
            krill_csr *a = su_gen(specs[p]);
            dev_csr d = dev_from(a, ib);
            krill_mat *ref = NULL, *dev = NULL;
            krill_ctx_alloc_stats s0, s1;
            double *b = malloc((size_t)a->n_rows * sizeof *b);
            if (!b) exit(1);
            tu_random(b, a->n_rows, 17);
            CHECK_OK(krill_mat_create(gpu, a, "csr", &ref));
            krill_ctx_alloc_stats_get(gpu, &s0);
            CHECK_OK(wrap(a, &d, &dev));
            krill_ctx_alloc_stats_get(gpu, &s1);
            printf("%s, int%d offsets: %lld allocations, %lld bytes by the wrap\n", specs[p],
                   8 * ib, (long long)(s1.allocations - s0.allocations),
                   (long long)(s1.bytes - s0.bytes));
            CHECK(s1.allocations == s0.allocations && s1.bytes == s0.bytes);
            if (ref && dev) check_same(specs[p], ib, a, ref, dev, b);
            krill_mat_destroy(&dev);
            krill_mat_destroy(&ref);
            dev_free(&d);
            free(b);
            krill_csr_destroy(&a);
        }
}

/* New values: from the host (krill writes the caller's array), and in place (NULL) */
static void test_update_values(void)
{
    krill_csr *a = su_gen("poisson3d:12");
    dev_csr d = dev_from(a, 4);
    krill_mat *ref = NULL, *dev = NULL;
    double *v2 = malloc((size_t)a->nnz * sizeof *v2), *got = malloc((size_t)a->nnz * sizeof *got);
    const double nan = NAN;
    if (!v2 || !got) exit(1);
    for (int64_t k = 0; k < a->nnz; k++) v2[k] = 2.0 * a->val[k] + (a->col[k] == 0 ? 1.0 : 0.0);
    CHECK_OK(wrap(a, &d, &dev));
    CHECK_OK(krill_mat_create(gpu, a, "csr", &ref));
    CHECK_OK(krill_mat_update_values(dev, v2));
    CHECK_OK(krill_ctx_sync(gpu));   /* krill's upload done before the caller reads */
    CHECK(cudaMemcpy(got, d.val, (size_t)a->nnz * sizeof *got, cudaMemcpyDeviceToHost) ==
          cudaSuccess);
    CHECK(memcmp(got, v2, (size_t)a->nnz * sizeof *got) == 0);   /* the caller's array */
    CHECK_OK(krill_mat_update_values(ref, v2));
    check_spmv(ref, dev, a->n_rows, "after update_values(host)");
    /* in place: the caller writes the original values back, then tells krill */
    CHECK(cudaMemcpy(d.val, a->val, (size_t)a->nnz * sizeof *got, cudaMemcpyHostToDevice) ==
          cudaSuccess && cudaDeviceSynchronize() == cudaSuccess);
    CHECK_OK(krill_mat_update_values(dev, NULL));
    CHECK_OK(krill_mat_update_values(ref, a->val));
    check_spmv(ref, dev, a->n_rows, "after update_values(NULL)");
    CHECK(cudaMemcpy(d.val + 7, &nan, sizeof nan, cudaMemcpyHostToDevice) == cudaSuccess &&
          cudaDeviceSynchronize() == cudaSuccess);
    CHECK_STATUS(krill_mat_update_values(dev, NULL), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "value 7 is nan") != NULL);
    krill_mat_destroy(&dev);
    krill_mat_destroy(&ref);
    dev_free(&d);
    free(v2);
    free(got);
    krill_csr_destroy(&a);
}

/* An arrow matrix: row 0 full (20000 entries: past 128 x lanes), the rest diagonal plus
 * column 0. The long-row tables are krill's only device allocations. */
static krill_csr *arrow(int32_t n)
{
    krill_csr *a = NULL;
    int64_t k = 0;
    if (krill_csr_create(n, n, (int64_t)n + 2 * (int64_t)(n - 1), &a) != KRILL_OK) exit(1);
    for (int32_t i = 0; i < n; i++) {
        a->row_ptr[i] = k;
        if (i == 0) {
            for (int32_t j = 0; j < n; j++, k++) {
                a->col[k] = j;
                a->val[k] = j == 0 ? 4.0 * n : 1.0 / (1 + j % 7);
            }
        } else {
            a->col[k] = 0;
            a->val[k++] = 0.5;
            a->col[k] = i;
            a->val[k++] = 3.0 + i % 5;
        }
    }
    a->row_ptr[n] = k;
    return a;
}

static void test_long_rows(void)
{
    krill_csr *a = arrow(20000);
    dev_csr d = dev_from(a, 4);
    krill_mat *ref = NULL, *dev = NULL;
    krill_ctx_alloc_stats s0, s1;
    krill_format_stats st;
    CHECK_OK(krill_mat_create(gpu, a, "csr", &ref));
    krill_ctx_alloc_stats_get(gpu, &s0);
    CHECK_OK(wrap(a, &d, &dev));
    krill_ctx_alloc_stats_get(gpu, &s1);
    if (dev) {
        krill_mat_stats(dev, &st);
        printf("arrow 20000: variant %s, %lld allocations of %lld bytes (long-row tables)\n",
               st.variant, (long long)(s1.allocations - s0.allocations),
               (long long)(s1.bytes - s0.bytes));
        CHECK(strstr(st.variant, "+long") != NULL);
        CHECK(s1.allocations > s0.allocations && s1.bytes - s0.bytes < 4096);
        check_spmv(ref, dev, a->n_rows, "arrow");
    }
    krill_mat_destroy(&dev);
    krill_mat_destroy(&ref);
    dev_free(&d);
    krill_csr_destroy(&a);
}

/* a broken copy of the device arrays: refused with status `want` and a message holding
 * `needle` */
static void refused_as(krill_status want, const krill_csr *a, int64_t n_cols,
                       const int32_t *rp32, const int32_t *col, const double *val,
                       const char *needle)
{
    dev_csr d;
    krill_mat *m = NULL;
    d.index_bytes = 4;
    d.row_ptr = dev_upload(rp32, (size_t)(a->n_rows + 1) * sizeof *rp32);
    d.col = dev_upload(col, (size_t)a->nnz * sizeof *col);
    d.val = dev_upload(val, (size_t)a->nnz * sizeof *val);
    CHECK_STATUS(krill_mat_create_device_csr(gpu, a->n_rows, n_cols, a->nnz, d.row_ptr, 4,
                                             d.col, d.val, &m),
                 want);
    tu_checks++;
    if (m != NULL || strstr(krill_last_error(), needle) == NULL) {
        tu_failures++;
        fprintf(stderr, "expected a message with \"%s\", got: %s\n", needle, krill_last_error());
    }
    krill_mat_destroy(&m);
    dev_free(&d);
}

static void refused(const krill_csr *a, int64_t n_cols, const int32_t *rp32, const int32_t *col,
                    const double *val, const char *needle)
{
    refused_as(KRILL_ERR_ARG, a, n_cols, rp32, col, val, needle);
}

static void test_refusals(void)
{
    krill_csr *a = su_gen("poisson3d:5");   /* 125 rows, 7 entries in the inner rows */
    const int64_t nnz = a->nnz;
    int32_t *rp = malloc((size_t)(a->n_rows + 1) * sizeof *rp), *col = malloc((size_t)nnz * 4);
    double *val = malloc((size_t)nnz * sizeof *val);
    krill_mat *m = NULL;
    krill_vec *v = NULL;
    dev_csr d = dev_from(a, 4);
    double host[4] = {0};
    const int64_t r = 62, k = a->row_ptr[r] + 2;   /* an inner row and one of its entries */
    if (!rp || !col || !val) exit(1);
#define RESET()                                                                          \
    do {                                                                                 \
        for (int64_t i = 0; i <= a->n_rows; i++) rp[i] = (int32_t)a->row_ptr[i];         \
        memcpy(col, a->col, (size_t)nnz * sizeof *col);                                  \
        memcpy(val, a->val, (size_t)nnz * sizeof *val);                                  \
    } while (0)
    RESET();
    rp[0] = 1;
    refused(a, a->n_cols, rp, col, val, "row_ptr[0] = 1");
    RESET();
    rp[r] = rp[r + 1] + 1;
    refused(a, a->n_cols, rp, col, val, "must not decrease");
    RESET();
    rp[a->n_rows] = (int32_t)nnz - 1;
    refused(a, a->n_cols, rp, col, val, "but nnz");
    RESET();
    col[k] = a->n_cols;
    refused(a, a->n_cols, rp, col, val, "outside [0, 125)");
    RESET();
    col[k] = -3;
    refused(a, a->n_cols, rp, col, val, "row 62) has column -3");
    RESET();
    col[k] = col[k - 1];
    refused(a, a->n_cols, rp, col, val, "row 62's columns are not strictly increasing");
    RESET();
    { const int32_t t = col[k]; col[k] = col[k + 1]; col[k + 1] = t; }
    refused(a, a->n_cols, rp, col, val, "not strictly increasing");
    RESET();
    val[k] = INFINITY;
    refused_as(KRILL_ERR_NUMERIC, a, a->n_cols, rp, col, val, "is inf");
    RESET();
    refused(a, 60, rp, col, val, "outside [0, 60)");   /* n_cols smaller than a column */
    /* host memory where device memory belongs */
    CHECK_STATUS(krill_mat_create_device_csr(gpu, a->n_rows, a->n_cols, nnz, rp, 4, d.col,
                                             d.val, &m), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "row_ptr is host memory") != NULL);
    CHECK_STATUS(krill_mat_create_device_csr(gpu, a->n_rows, a->n_cols, nnz, d.row_ptr, 4, col,
                                             d.val, &m), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "col is host memory") != NULL);
    CHECK_STATUS(krill_vec_wrap(gpu, 4, host, &v), KRILL_ERR_ARG);
    CHECK(v == NULL && strstr(krill_last_error(), "host memory") != NULL);
    {   /* an empty matrix (no entries): y = 0 */
        const int32_t zeros[4] = {0, 0, 0, 0};
        void *drp = dev_upload(zeros, sizeof zeros);
        krill_vec *x = NULL, *y = NULL;
        double hy[3] = {1, 1, 1};
        CHECK_OK(krill_mat_create_device_csr(gpu, 3, 3, 0, drp, 4, NULL, NULL, &m));
        CHECK_OK(krill_vec_create(gpu, 3, &x));
        CHECK_OK(krill_vec_create(gpu, 3, &y));
        CHECK_OK(krill_vec_fill(x, 1.0));
        CHECK_OK(krill_vec_fill(y, 5.0));
        if (m) CHECK_OK(krill_mat_spmv(m, 1.0, x, 0.0, y));
        CHECK_OK(krill_vec_download(y, hy));
        CHECK(hy[0] == 0.0 && hy[1] == 0.0 && hy[2] == 0.0);
        krill_vec_destroy(&x);
        krill_vec_destroy(&y);
        krill_mat_destroy(&m);
        cudaFree(drp);
    }
#undef RESET
    dev_free(&d);
    free(rp);
    free(col);
    free(val);
    krill_csr_destroy(&a);
}

/* Every allocation of the wrap (the host offsets, the long-row tables) made to fail in
 * turn: a clean error and no matrix, until the walk passes them all. */
static void test_faults(void)
{
    krill_csr *a = arrow(3000);
    dev_csr d = dev_from(a, 8);
    int failed = 0;
    for (long k = 1; k <= 40; k++) {
        krill_mat *m = NULL;
        krill_status st;
        krill_fault_alloc_after(k);
        st = wrap(a, &d, &m);
        krill_fault_alloc_after(0);
        if (st == KRILL_OK) {
            CHECK(m != NULL);
            krill_mat_destroy(&m);
            break;
        }
        failed++;
        CHECK((st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC) && m == NULL);
    }
    printf("faults: %d allocations of the wrap failed in turn\n", failed);
    CHECK(failed >= 2);
    dev_free(&d);
    krill_csr_destroy(&a);
}

int main(void)
{
    gpu = tu_gpu_ctx_or_skip();
    printf("%s\n", krill_ctx_describe(gpu));
    TU_STEP(test_problems());
    TU_STEP(test_update_values());
    TU_STEP(test_long_rows());
    TU_STEP(test_refusals());
    TU_STEP(test_faults());
    krill_ctx_destroy(&gpu);
    return tu_finish("test_gpu_device_csr");
}
#endif
