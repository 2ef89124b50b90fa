/* CPU CSR SpMV on every real matrix of testdata/mtx against the reference, on 1 and 3
 * threads (bitwise equal), and on generated matrices. Skips when testdata is absent. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static int check_one(const krill_csr *a, int threads)
{
    krill_ctx *ctx = tu_cpu_ctx(threads);
    krill_mat *m = NULL;
    krill_vec *vx = NULL, *vy = NULL;
    double *x = malloc((size_t)a->n_cols * sizeof *x + 8);
    double *ref = malloc((size_t)a->n_rows * sizeof *ref + 8);
    double *got = malloc((size_t)a->n_rows * sizeof *got + 8);
    int ok = 0;
    tu_random(x, a->n_cols, 11);
    krill_csr_spmv_ref(a, 1.0, x, 0.0, ref);
    if (krill_mat_create(ctx, a, "csr", &m) == KRILL_OK &&
        krill_vec_create(ctx, a->n_cols, &vx) == KRILL_OK &&
        krill_vec_create(ctx, a->n_rows, &vy) == KRILL_OK && krill_vec_upload(vx, x) == KRILL_OK &&
        krill_mat_spmv(m, 1.0, vx, 0.0, vy) == KRILL_OK && krill_vec_download(vy, got) == KRILL_OK)
        ok = memcmp(ref, got, (size_t)a->n_rows * sizeof *ref) == 0;
    else
        fprintf(stderr, "krill: %s\n", krill_last_error());
    krill_vec_destroy(&vx);
    krill_vec_destroy(&vy);
    krill_mat_destroy(&m);
    krill_ctx_destroy(&ctx);
    free(x);
    free(ref);
    free(got);
    return ok;
}

int main(void)
{
    static const char *specs[] = {"poisson3d:12", "convdiff3d:9,2", "elasticity3d:4,3,2",
                                  "band3:500", "band101:600", "rand100:300", "band1x:400"};
    int tested = 0;
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        krill_csr *a = NULL;
        CHECK_OK(krill_gen(specs[i], &a));
        if (!a) continue;
        for (int t = 1; t <= 3; t += 2) {
            int ok = check_one(a, t);
            CHECK(ok);
            if (!ok) fprintf(stderr, "  mismatch on %s, %d threads\n", specs[i], t);
        }
        krill_csr_destroy(&a);
    }
    const char *dir = tu_testdata_path("mtx");
    if (!dir) {
        printf("testdata absent ($KRILL_TESTDATA): only generated matrices tested\n");
        return tu_finish("test_csr_testdata");
    }
    char dirpath[4096];
    snprintf(dirpath, sizeof dirpath, "%s", dir);
    DIR *d = opendir(dirpath);
    CHECK(d != NULL);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strstr(e->d_name, ".mtx")) continue;
        char path[8192];
        krill_csr *a = NULL;
        snprintf(path, sizeof path, "%s/%s", dirpath, e->d_name);
        if (krill_mm_read(path, &a, NULL) != KRILL_OK) continue;   /* refused: io tests */
        for (int t = 1; t <= 3; t += 2) {
            int ok = check_one(a, t);
            CHECK(ok);
            if (!ok) fprintf(stderr, "  mismatch on %s, %d threads\n", e->d_name, t);
        }
        tested++;
        krill_csr_destroy(&a);
    }
    if (d) closedir(d);
    printf("%d testdata matrices checked\n", tested);
    CHECK(tested > tu_testdata_expect(50, 10));
    return tu_finish("test_csr_testdata");
}
