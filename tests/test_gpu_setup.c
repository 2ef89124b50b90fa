/* test_gpu_setup: the pipelined matrix setup (core/cuda_stage.cu; issue 16, client 3).
 * - staged uploads (krill_cuda_upload_staged) of odd sizes through 4 KiB slots: the bytes
 *   arrive whole; the source may be overwritten once the call returns; stream order (a fill
 *   queued before is overwritten, a download after sees the bytes); krill_mem_upload above
 *   the four slots' bytes takes the staged path with the default 8 MiB slots too;
 * - every GPU format built through small slots (many chunks, rows across chunk boundaries,
 *   a row longer than a chunk, empty rows, no entries, no rows) against the same format
 *   built with the default slots (one chunk or none): krill_mat_to_csr equal to the source,
 *   SpMV bits equal between the two builds and close to krill_csr_spmv_ref;
 * - allocation faults through the staged ELL build, its slots released before each run so
 *   that their allocation is walked too.
 * Skips (77) without a GPU. */
#include <string.h>

#include "core/core_impl.h"
#include "testutil.h"

#ifndef KRILL_HAVE_CUDA
int main(void) { tu_skip("krill was built without CUDA"); }
#else
#include "core/cuda_impl.h"

static krill_ctx *gpu;
static const size_t small_slot = 4096;

static void check_upload(size_t bytes)
{
    unsigned char *src = NULL, *back = NULL;
    void *dev = NULL;
    CHECK_OK(krill_alloc((void **)&src, bytes + 1, "src"));
    CHECK_OK(krill_alloc((void **)&back, bytes + 1, "back"));
    CHECK_OK(krill_mem_alloc(gpu, &dev, bytes + 1, "dev"));
    if (!src || !back || !dev) goto cleanup;
    for (size_t i = 0; i < bytes; i++) src[i] = (unsigned char)(i * 131u + bytes);
    CHECK_OK(krill_cuda_memset0(gpu, dev, bytes + 1));     /* queued before: overwritten */
    CHECK_OK(krill_cuda_upload_staged(gpu, dev, src, bytes));
    memset(src, 0xab, bytes);                                /* the call's copy is its own */
    CHECK_OK(krill_mem_download(gpu, back, dev, bytes + 1));
    for (size_t i = 0; i < bytes; i++)
        if (back[i] != (unsigned char)(i * 131u + bytes)) {
            fprintf(stderr, "staged upload of %zu bytes: byte %zu is %u\n", bytes, i, back[i]);
            CHECK(0);
            break;
        }
    CHECK(back[bytes] == 0);                                 /* nothing written beyond */
cleanup:
    krill_free(src);
    krill_free(back);
    krill_mem_free(gpu, dev);
}

static void test_uploads(void)
{
    const size_t sizes[] = {0, 1, 63, 64, 4095, 4096, 4097, 4 * 4096, 4 * 4096 + 1,
                            9 * 4096 + 17, 100000};
    size_t before = krill_cuda_stage_slot_bytes(small_slot);
    CHECK(before == ((size_t)8 << 20));
    CHECK(krill_cuda_stage_slot_bytes(0) == small_slot);   /* below 64: a query */
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) check_upload(sizes[s]);
    krill_cuda_stage_slot_bytes(before);
    /* krill_mem_upload of 4 default slots and more: the staged path, then the plain one */
    check_upload(4 * before + 12345);
    {
        const int64_t n = (int64_t)(4 * before / sizeof(double)) + 3;
        double *x = NULL, *y = NULL;
        void *dev = NULL;
        CHECK_OK(krill_alloc((void **)&x, (size_t)n * sizeof *x, "x"));
        CHECK_OK(krill_alloc((void **)&y, (size_t)n * sizeof *y, "y"));
        CHECK_OK(krill_mem_alloc(gpu, &dev, (size_t)n * sizeof *x, "dev"));
        if (x && y && dev) {
            tu_random(x, n, 7);
            CHECK_OK(krill_mem_upload(gpu, dev, x, (size_t)n * sizeof *x));
            CHECK_OK(krill_mem_download(gpu, y, dev, (size_t)n * sizeof *y));
            CHECK(memcmp(x, y, (size_t)n * sizeof *x) == 0);
        }
        krill_free(x);
        krill_free(y);
        krill_mem_free(gpu, dev);
    }
}

/* rows with gaps: row i has (i * 7) % 11 entries (some empty), row `long_row` has n entries */
static krill_csr *ragged(int32_t n, int32_t long_row)
{
    krill_csr *a = NULL;
    int64_t nnz = 0, p = 0;
    for (int32_t i = 0; i < n; i++) nnz += i == long_row ? n : (i * 7) % 11;
    CHECK_OK(krill_csr_create(n, n, nnz, &a));
    if (!a) return NULL;
    for (int32_t i = 0; i < n; i++) {
        const int32_t len = i == long_row ? n : (i * 7) % 11;
        for (int32_t j = 0; j < len; j++, p++) {
            a->col[p] = i == long_row ? j : (int32_t)(((int64_t)i + 3 * j) % n);
            a->val[p] = 1.0 + 1.0 / (1.0 + (double)(p % 97));
        }
        a->row_ptr[i + 1] = p;
    }
    /* columns ascending within a row (the short rows' cyclic columns may wrap) */
    for (int32_t i = 0; i < n; i++)
        for (int64_t q = a->row_ptr[i] + 1; q < a->row_ptr[i + 1]; q++)
            for (int64_t r = q; r > a->row_ptr[i] && a->col[r - 1] > a->col[r]; r--) {
                const int32_t c = a->col[r];
                a->col[r] = a->col[r - 1];
                a->col[r - 1] = c;
            }
    for (int32_t i = 0; i < n; i++)   /* and distinct: drop a repeat by moving it right */
        for (int64_t q = a->row_ptr[i] + 1; q < a->row_ptr[i + 1]; q++)
            if (a->col[q] <= a->col[q - 1]) a->col[q] = a->col[q - 1] + 1;
    for (int64_t q = 0; q < nnz; q++) CHECK(a->col[q] < n);
    return a;
}

static int same_csr(const krill_csr *a, const krill_csr *b)
{
    return a && b && a->n_rows == b->n_rows && a->n_cols == b->n_cols && a->nnz == b->nnz &&
           memcmp(a->row_ptr, b->row_ptr, (size_t)(a->n_rows + 1) * sizeof *a->row_ptr) == 0 &&
           memcmp(a->col, b->col, (size_t)a->nnz * sizeof *a->col) == 0 &&
           memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) == 0;
}

static void spmv(const krill_mat *m, const double *hx, double *hy, int64_t n)
{
    krill_vec *x = NULL, *y = NULL;
    CHECK_OK(krill_vec_create(gpu, n, &x));
    CHECK_OK(krill_vec_create(gpu, n, &y));
    if (x && y) {
        CHECK_OK(krill_vec_upload(x, hx));
        CHECK_OK(krill_mat_spmv(m, 1.25, x, 0.0, y));
        CHECK_OK(krill_vec_download(y, hy));
    }
    krill_vec_destroy(&x);
    krill_vec_destroy(&y);
}

static const char *const formats[] = {"csr", "ell", "ellr", "rbp-csr", "rbp-ell", "rbp-ellr",
                                      "segscan"};

static void check_formats(const krill_csr *a, const char *name)
{
    const int64_t n = a->n_rows;
    double *x = NULL, *y_ref = NULL, *y_small = NULL, *y_whole = NULL;
    CHECK_OK(krill_alloc((void **)&x, (size_t)(n + 1) * sizeof *x, "x"));
    CHECK_OK(krill_alloc((void **)&y_ref, (size_t)(n + 1) * sizeof *x, "y_ref"));
    CHECK_OK(krill_alloc((void **)&y_small, (size_t)(n + 1) * sizeof *x, "y_small"));
    CHECK_OK(krill_alloc((void **)&y_whole, (size_t)(n + 1) * sizeof *x, "y_whole"));
    tu_random(x, n, 3);
    krill_csr_spmv_ref(a, 1.25, x, 0.0, y_ref);
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
        krill_mat *small = NULL, *whole = NULL;
        krill_csr *back = NULL;
        const size_t before = krill_cuda_stage_slot_bytes(small_slot);
        krill_status st = krill_mat_create(gpu, a, formats[f], &small);
        krill_cuda_stage_slot_bytes(before);
        if (st == KRILL_ERR_UNSUPPORTED || st == KRILL_ERR_ARG) {   /* refused: alike */
            CHECK(krill_mat_create(gpu, a, formats[f], &whole) == st);
            krill_mat_destroy(&whole);
            continue;
        }
        CHECK_OK(st);
        CHECK_OK(krill_mat_create(gpu, a, formats[f], &whole));
        if (!small || !whole) goto next;
        CHECK_OK(krill_mat_to_csr(small, &back));
        if (!same_csr(a, back)) {
            fprintf(stderr, "%s %s: to_csr of the staged build differs from the source\n", name,
                    formats[f]);
            CHECK(0);
        }
        if (n > 0) {
            spmv(small, x, y_small, n);
            spmv(whole, x, y_whole, n);
            CHECK(memcmp(y_small, y_whole, (size_t)n * sizeof *y_small) == 0);
            CHECK(tu_max_rel_diff(y_small, y_ref, n) < 1e-13);
        }
    next:
        krill_csr_destroy(&back);
        krill_mat_destroy(&small);
        krill_mat_destroy(&whole);
    }
    krill_free(x);
    krill_free(y_ref);
    krill_free(y_small);
    krill_free(y_whole);
}

static void test_formats(void)
{
    const char *const specs[] = {"poisson3d:12", "elasticity3d:4,3,3", "rand100:2000",
                                 "band101:3000"};
    krill_csr *a = NULL;
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        if (tu_quick() && s == 3) continue;
        CHECK_OK(krill_gen(specs[s], &a));
        if (a) check_formats(a, specs[s]);
        krill_csr_destroy(&a);
    }
    a = ragged(1500, 700);   /* a 1500-entry row: longer than a 4 KiB chunk (341 entries) */
    if (a) check_formats(a, "ragged");
    krill_csr_destroy(&a);
    CHECK_OK(krill_csr_create(5, 5, 0, &a));   /* no entries */
    if (a) check_formats(a, "no entries");
    krill_csr_destroy(&a);
    CHECK_OK(krill_csr_create(0, 0, 0, &a));   /* no rows */
    if (a) check_formats(a, "no rows");
    krill_csr_destroy(&a);
}

typedef struct build_call {
    const krill_csr *a;
    const char *format;
    krill_mat *mat;
} build_call;

static krill_status build_run(void *user)
{
    build_call *c = user;
    krill_cuda_stage_release(gpu);   /* the slots' allocation is walked too */
    return krill_mat_create(gpu, c->a, c->format, &c->mat);
}

static int build_intact(void *user) { return ((build_call *)user)->mat == NULL; }

static void build_undo(void *user) { krill_mat_destroy(&((build_call *)user)->mat); }

static void test_faults(void)
{
    const char *const walked[] = {"ell", "ellr", "csr"};
    krill_csr *a = ragged(600, 100);
    const size_t before = krill_cuda_stage_slot_bytes(small_slot);
    for (size_t f = 0; a && f < sizeof walked / sizeof *walked; f++) {
        build_call c = {a, walked[f], NULL};
        char what[64];
        snprintf(what, sizeof what, "staged %s build", walked[f]);
        tu_fault_call call = {what, build_run, build_intact, build_undo, &c, 0};
        CHECK(tu_alloc_fault_walk(&call) >= 5);
    }
    krill_cuda_stage_slot_bytes(before);
    krill_csr_destroy(&a);
}

int main(void)
{
    gpu = tu_gpu_ctx_or_skip();
    TU_STEP(test_uploads());
    TU_STEP(test_formats());
    TU_STEP(test_faults());
    krill_ctx_destroy(&gpu);
    return tu_finish("test_gpu_setup");
}
#endif
