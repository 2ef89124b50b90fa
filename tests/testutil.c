#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "core/core_impl.h"
#include "krill/io.h"

int tu_failures = 0;
int tu_checks = 0;

int tu_close(double a, double b, double tol)
{
    if (isnan(a) || isnan(b)) return 0;
    double scale = fabs(b) > 1.0 ? fabs(b) : 1.0;
    return fabs(a - b) <= tol * scale;
}

double tu_now(void)
{
    return krill_wtime();
}

int tu_finish(const char *name)
{
    printf("%s: %d checks\n%d passed, %d failed\n", name, tu_checks, tu_checks - tu_failures,
           tu_failures);
    return tu_failures == 0 ? 0 : 1;
}

static int shard_depth = 0;     /* running units that enclose the caller */
static int64_t shard_unit = 0;   /* units numbered so far */
static long shard_index = 0, shard_count = 0;   /* count 0: not parsed yet */

static void shard_parse(void)
{
    const char *v = getenv("KRILL_TEST_SHARD");
    char *end = NULL;
    shard_index = 0;
    shard_count = 1;
    if (!v || !*v) return;
    shard_index = strtol(v, &end, 10);
    if (end != v && *end == '/') shard_count = strtol(end + 1, &end, 10);
    if (*end != '\0' || shard_count < 1 || shard_index < 0 || shard_index >= shard_count) {
        fprintf(stderr, "KRILL_TEST_SHARD=%s: expected i/N with 0 <= i < N\n", v);
        exit(1);
    }
}

int tu_sharded(void)
{
    if (shard_count == 0) shard_parse();
    return shard_count > 1;
}

int tu_shard_mine(void)
{
    if (shard_count == 0) shard_parse();
    if (shard_depth > 0) return 1;
    return shard_unit++ % shard_count == shard_index;
}

void tu_shard_enter(void) { shard_depth++; }
void tu_shard_leave(void) { shard_depth--; }

void tu_skip(const char *why)
{
    printf("SKIPPED: %s\n", why);
    exit(77);
}

/* A folder named by environment variable `var`, or NULL when unset or not a folder. */
static const char *env_dir(const char *var)
{
    const char *dir = getenv(var);
    struct stat sb;
    if (!dir || !*dir || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return NULL;
    return dir;
}

int tu_quick(void)
{
    const char *v = getenv("KRILL_TEST_QUICK");
    if (!v || !*v || strcmp(v, "0") == 0) return 0;
    return strcmp(v, "2") == 0 ? 2 : 1;
}

const char *tu_testdata_shared(void) { return tu_quick() ? NULL : env_dir("KRILL_TESTDATA"); }
const char *tu_testdata_local(void) { return env_dir("KRILL_TESTDATA_LOCAL"); }

const char *tu_testdata(void)
{
    const char *dir = tu_testdata_shared();
    return dir ? dir : tu_testdata_local();
}

const char *tu_testdata_path(const char *rel)
{
    static char path[4096];
    const char *dirs[2] = {tu_testdata_shared(), tu_testdata_local()};
    struct stat sb;
    for (int k = 0; k < 2; k++) {
        if (!dirs[k]) continue;
        snprintf(path, sizeof path, "%s/%s", dirs[k], rel);
        if (stat(path, &sb) == 0) return path;
    }
    return NULL;
}

int tu_testdata_has(const char *rel)
{
    return tu_testdata_path(rel) != NULL;
}

int tu_testdata_expect(int full, int local)
{
    return tu_testdata_shared() ? full : local;
}

/* The union of the two folders' `sub` folders: file names (each once, the shared folder's
 * copy first) with their folder, sorted by name. */
typedef struct td_entry {
    char *name;
    char *path;
} td_entry;

static int td_entry_cmp(const void *pa, const void *pb)
{
    return strcmp(((const td_entry *)pa)->name, ((const td_entry *)pb)->name);
}

/* Fills *out (malloc'd, free with td_free) and returns how many, or -1 when neither folder
 * has `sub`. keep(name) picks the files. */
static int td_list(const char *sub, int (*keep)(const char *name), td_entry **out)
{
    const char *dirs[2] = {tu_testdata_shared(), tu_testdata_local()};
    td_entry *list = NULL;
    int n = 0, cap = 0, found = 0;
    *out = NULL;
    for (int k = 0; k < 2; k++) {
        char dirpath[4096];
        DIR *d;
        if (!dirs[k]) continue;
        snprintf(dirpath, sizeof dirpath, "%s/%s", dirs[k], sub);
        if (!(d = opendir(dirpath))) continue;
        found = 1;
        for (struct dirent *e; (e = readdir(d));) {
            char path[8192];
            struct stat sb;
            int seen = 0;
            if (e->d_name[0] == '.' || !keep(e->d_name)) continue;
            snprintf(path, sizeof path, "%s/%s", dirpath, e->d_name);
            if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
            for (int j = 0; j < n && !seen; j++) seen = strcmp(list[j].name, e->d_name) == 0;
            if (seen) continue;     /* the shared folder's copy came first */
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                list = realloc(list, (size_t)cap * sizeof *list);
                if (!list) exit(1);
            }
            list[n].name = strdup(e->d_name);
            list[n].path = strdup(path);
            if (!list[n].name || !list[n].path) exit(1);
            n++;
        }
        closedir(d);
    }
    if (n > 1) qsort(list, (size_t)n, sizeof *list, td_entry_cmp);
    *out = list;
    return found ? n : -1;
}

static void td_free(td_entry *list, int n)
{
    for (int k = 0; k < n; k++) {
        free(list[k].name);
        free(list[k].path);
    }
    free(list);
}

static int is_mtx_name(const char *name) { return strstr(name, ".mtx") != NULL; }
static int any_name(const char *name) { (void)name; return 1; }

int tu_for_each_square_mtx(void (*fn)(const krill_csr *a, const char *name, void *user),
                           void *user)
{
    td_entry *list;
    int n = td_list("mtx", is_mtx_name, &list), count = 0;
    if (n < 0) {
        printf("testdata absent ($KRILL_TESTDATA, $KRILL_TESTDATA_LOCAL): real matrices "
               "skipped\n");
        return -1;
    }
    for (int k = 0; k < n; k++) {
        krill_csr *a = NULL;
        if (krill_mm_read(list[k].path, &a, NULL) != KRILL_OK) continue;
        if (a->n_rows == a->n_cols) {
            fn(a, list[k].name, user);
            count++;
        }
        krill_csr_destroy(&a);
    }
    td_free(list, n);
    return count;
}

int tu_for_each_graph(void (*fn)(const char *path, const char *name, void *user), void *user)
{
    td_entry *list;
    int n = td_list("graphs", any_name, &list);
    if (n < 0) {
        printf("testdata absent ($KRILL_TESTDATA, $KRILL_TESTDATA_LOCAL): real graphs "
               "skipped\n");
        return -1;
    }
    for (int k = 0; k < n; k++) fn(list[k].path, list[k].name, user);
    td_free(list, n);
    return n;
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

/* One run with allocation k failing (k = 0: none): 1 for a success (undone), 0 for a clean
 * failure, -1 (reported) for anything else. */
static int fault_run(const tu_fault_call *c, long k)
{
    krill_status st;
    int intact;
    krill_clear_error();
    krill_fault_alloc_after(k);
    st = c->run(c->user);
    krill_fault_alloc_after(0);
    if (st == KRILL_OK) {
        if (c->undo) c->undo(c->user);
        return 1;
    }
    intact = !c->intact || c->intact(c->user);
    if ((st == KRILL_ERR_ALLOC || st == KRILL_ERR_DEVICE_ALLOC) && krill_last_error()[0] &&
        intact)
        return 0;
    fprintf(stderr, "%s with allocation %ld failing: %s (%s)%s\n", c->what, k,
            krill_status_string(st), krill_last_error(), intact ? "" : ", outputs changed");
    return -1;
}

long tu_alloc_fault_walk(const tu_fault_call *c)
{
    /* far more allocations than any call here makes: beyond it, the call never succeeds */
    long limit = 1000000, k = 0, failed = 0;
    int r = 0, bad = 0;
    if (c->survives) {
        long before = krill_alloc_calls();
        bad = fault_run(c, 0) != 1;
        limit = krill_alloc_calls() - before;
        if (bad) fprintf(stderr, "%s: failed without an injected fault\n", c->what);
    }
    while (!bad && k < limit && (c->survives || r != 1)) {
        r = fault_run(c, ++k);
        bad = r < 0;
        failed += r == 0;
    }
    if (!bad && (failed == 0 || (!c->survives && r != 1)))
        fprintf(stderr, "%s: %s\n", c->what,
                failed == 0 ? "no allocation failure reached the caller" : "never succeeded");
    printf("%s: %ld allocation failures walked\n", c->what, failed);
    tu_checks++;
    if (bad || failed == 0 || (!c->survives && r != 1)) tu_failures++;
    return failed;
}

krill_csr *tu_csr_from_dense(int32_t n, const double *dense)
{
    int32_t rows[64], cols[64];
    double vals[64];
    int64_t nnz = 0;
    krill_csr *a = NULL;
    CHECK(n >= 0 && n <= 8);
    for (int32_t i = 0; i < n && n <= 8; i++)
        for (int32_t j = 0; j < n; j++)
            if (dense[i * n + j] != 0.0) {
                rows[nnz] = i;
                cols[nnz] = j;
                vals[nnz++] = dense[i * n + j];
            }
    CHECK_OK(krill_csr_from_triplets(n, n, nnz, rows, cols, vals, &a));
    return a;
}
