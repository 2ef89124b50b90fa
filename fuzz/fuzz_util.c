/* fuzz/fuzz_util.c - the harnesses' shared checks (fuzz_util.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core_impl.h"
#include "fuzz_util.h"
#include "krill/io.h"
#include "krill/mat.h"

/* ELL stores rows x (longest row) entries: built only up to this many, so that one dense
 * row in a tall matrix does not make a harness allocate gigabytes. */
#define FUZZ_ELL_MAX_CELLS ((int64_t)1 << 20)

static krill_ctx *cpu;

/* The scratch files of fuzz_path, removed when the process exits normally. */
static char scratch[8][512];
static int n_scratch;

static void remove_scratch(void)
{
    for (int k = 0; k < n_scratch; k++) remove(scratch[k]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    (void)argc;
    (void)argv;
    krill_host_mem_limit(FUZZ_MEM_LIMIT);
    atexit(remove_scratch);
    o.device = KRILL_DEVICE_CPU;
    o.threads = 1;
    if (!cpu && krill_ctx_create(&o, &cpu) != KRILL_OK)
        fuzz_fail("cannot create a CPU context: %s", krill_last_error());
    return 0;
}

const char *fuzz_path(const char *tag)
{
    static const char *tags[8];
    for (int k = 0; k < n_scratch; k++)
        if (strcmp(tags[k], tag) == 0) return scratch[k];
    if (n_scratch == 8) fuzz_fail("more than 8 scratch paths");
    /* the writers fsync what they write: on a disk that costs milliseconds an execution,
     * in memory (tmpfs) nothing */
    const char *dir = getenv("TMPDIR");
    struct stat sb;
    if (!dir || !*dir)
        dir = stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) ? "/dev/shm" : "/tmp";
    snprintf(scratch[n_scratch], sizeof scratch[n_scratch], "%s/krill-fuzz-%ld-%s", dir,
             (long)getpid(), tag);
    tags[n_scratch] = tag;
    return scratch[n_scratch++];
}

void fuzz_write(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        fuzz_fail("cannot write the scratch file %s", path);
}

void fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    fputs("fuzz property violated: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

void fuzz_record(fuzz_outcome *o, krill_status st)
{
    o->st = st;
    snprintf(o->msg, sizeof o->msg, "%s", st == KRILL_OK ? "" : krill_last_error());
}

void fuzz_same_outcome(const fuzz_outcome *a, const fuzz_outcome *b, const char *how)
{
    if (a->st != b->st || strcmp(a->msg, b->msg) != 0)
        fuzz_fail("%s disagree: status %d '%s' vs status %d '%s'", how, (int)a->st, a->msg,
                  (int)b->st, b->msg);
}

void fuzz_same_csr(const krill_csr *a, const krill_csr *b, const char *how)
{
    if (!a && !b) return;
    if (!a || !b) fuzz_fail("%s: one matrix is missing", how);
    if (a->n_rows != b->n_rows || a->n_cols != b->n_cols || a->nnz != b->nnz)
        fuzz_fail("%s: %d x %d, nnz %lld vs %d x %d, nnz %lld", how, a->n_rows, a->n_cols,
                  (long long)a->nnz, b->n_rows, b->n_cols, (long long)b->nnz);
    if (memcmp(a->row_ptr, b->row_ptr, ((size_t)a->n_rows + 1) * sizeof *a->row_ptr) != 0 ||
        memcmp(a->col, b->col, (size_t)a->nnz * sizeof *a->col) != 0 ||
        memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) != 0)
        fuzz_fail("%s: the entries differ", how);
}

/* a built in `format` on the CPU and converted back must be a, bit for bit. */
static void check_format(const krill_csr *a, const char *format)
{
    krill_mat *m = NULL;
    krill_csr *back = NULL;
    krill_status st = krill_mat_create(cpu, a, format, &m);
    if (st != KRILL_OK)
        fuzz_fail("krill_mat_create(%s) of a %d x %d matrix (nnz %lld): %s", format, a->n_rows,
                  a->n_cols, (long long)a->nnz, krill_last_error());
    st = krill_mat_to_csr(m, &back);
    if (st != KRILL_OK) fuzz_fail("krill_mat_to_csr(%s): %s", format, krill_last_error());
    fuzz_same_csr(a, back, format);
    krill_csr_destroy(&back);
    krill_mat_destroy(&m);
}

void fuzz_check_matrix(const krill_csr *a)
{
    krill_csr *again = NULL;
    int64_t longest = 0;
    if (krill_csr_check(a, "read") != KRILL_OK)
        fuzz_fail("a matrix read without error fails krill_csr_check: %s", krill_last_error());
    for (int32_t r = 0; r < a->n_rows; r++)
        if (a->row_ptr[r + 1] - a->row_ptr[r] > longest)
            longest = a->row_ptr[r + 1] - a->row_ptr[r];
    check_format(a, "csr");
    if ((int64_t)a->n_rows * longest <= FUZZ_ELL_MAX_CELLS) check_format(a, "ell");
    const char *path = fuzz_path("roundtrip.mtx");
    if (krill_mm_write(path, a) != KRILL_OK)
        fuzz_fail("krill_mm_write: %s", krill_last_error());
    if (krill_mm_read(path, &again, NULL) != KRILL_OK)
        fuzz_fail("reading back what krill_mm_write wrote: %s", krill_last_error());
    fuzz_same_csr(a, again, "write-then-read round trip");
    krill_csr_destroy(&again);
}
