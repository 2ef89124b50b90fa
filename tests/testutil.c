#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "krill/io.h"

int tu_failures = 0;
int tu_checks = 0;

int tu_close(double a, double b, double tol)
{
    if (isnan(a) || isnan(b)) return 0;
    double scale = fabs(b) > 1.0 ? fabs(b) : 1.0;
    return fabs(a - b) <= tol * scale;
}

int tu_finish(const char *name)
{
    printf("%s: %d checks\n%d passed, %d failed\n", name, tu_checks, tu_checks - tu_failures,
           tu_failures);
    return tu_failures == 0 ? 0 : 1;
}

void tu_skip(const char *why)
{
    printf("SKIPPED: %s\n", why);
    exit(77);
}

const char *tu_testdata(void)
{
    const char *dir = getenv("KRILL_TESTDATA");
    struct stat sb;
    if (!dir || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return NULL;
    return dir;
}

const char *tu_testdata_path(const char *rel)
{
    static char path[4096];
    const char *dir = tu_testdata();
    if (!dir) return NULL;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    return path;
}

int tu_for_each_square_mtx(void (*fn)(const krill_csr *a, const char *name, void *user),
                           void *user)
{
    const char *dir = tu_testdata_path("mtx");
    char dirpath[4096];
    int count = 0;
    DIR *d;
    if (!dir) {
        printf("testdata absent ($KRILL_TESTDATA): real matrices skipped\n");
        return -1;
    }
    snprintf(dirpath, sizeof dirpath, "%s", dir);
    d = opendir(dirpath);
    CHECK(d != NULL);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[8192];
        krill_csr *a = NULL;
        if (!strstr(e->d_name, ".mtx")) continue;
        snprintf(path, sizeof path, "%s/%s", dirpath, e->d_name);
        if (krill_mm_read(path, &a, NULL) != KRILL_OK) continue;
        if (a->n_rows == a->n_cols) {
            fn(a, e->d_name, user);
            count++;
        }
        krill_csr_destroy(&a);
    }
    if (d) closedir(d);
    return count;
}

double tu_max_rel_diff(const double *x, const double *y, int64_t n)
{
    double diff = 0.0, scale = 1e-300;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(x[i] - y[i]);
        if (isnan(x[i]) != isnan(y[i]) || (isnan(d) && !isnan(x[i]))) return INFINITY;
        if (d > diff) diff = d;
        if (fabs(y[i]) > scale) scale = fabs(y[i]);
    }
    return diff / scale;
}

void tu_random(double *x, int64_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        x[i] = (double)(s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    }
}

krill_ctx *tu_gpu_ctx_or_skip(void)
{
    krill_ctx *ctx = NULL;
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    if (!krill_have_cuda()) tu_skip("krill was built without CUDA");
    if (krill_cuda_device_count() == 0) tu_skip("no CUDA device on this machine");
    o.device = KRILL_DEVICE_CUDA;
    if (krill_ctx_create(&o, &ctx) != KRILL_OK) {
        fprintf(stderr, "GPU present but context failed: %s\n", krill_last_error());
        exit(1);
    }
    return ctx;
}

krill_ctx *tu_cpu_ctx(int threads)
{
    krill_ctx *ctx = NULL;
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    o.device = KRILL_DEVICE_CPU;
    o.threads = threads;
    if (krill_ctx_create(&o, &ctx) != KRILL_OK) {
        fprintf(stderr, "CPU context failed: %s\n", krill_last_error());
        exit(1);
    }
    return ctx;
}

krill_csr *tu_arrow(int32_t n)
{
    const int64_t cap = 5 * (int64_t)n;
    int32_t *ri = malloc((size_t)cap * sizeof *ri), *ci = malloc((size_t)cap * sizeof *ci);
    double *v = malloc((size_t)cap * sizeof *v);
    int64_t k = 0;
    krill_csr *a = NULL;
    if (!ri || !ci || !v) exit(1);
    for (int32_t i = 0; i < n; i++) {
        ri[k] = i, ci[k] = i, v[k++] = i == n - 1 ? (double)n : 4.0;
        if (i + 1 < n - 1) {
            ri[k] = i, ci[k] = i + 1, v[k++] = -1.0;
            ri[k] = i + 1, ci[k] = i, v[k++] = -1.0;
        }
        if (i < n - 1) {
            const double e = (i % 2 ? -1.0 : 1.0) / (1.0 + i);
            ri[k] = n - 1, ci[k] = i, v[k++] = e;
            ri[k] = i, ci[k] = n - 1, v[k++] = e;
        }
    }
    if (krill_csr_from_triplets(n, n, k, ri, ci, v, &a) != KRILL_OK) exit(1);
    free(ri);
    free(ci);
    free(v);
    return a;
}
