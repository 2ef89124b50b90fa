/* tests/test_mm_edges.c - the readers at the edges (issue 17): sizes that claim far more
 * than a file holds, matrices that do not fit in memory, a caller that needs a square
 * matrix, and numbers whose leading zeros or exponents are unusually long.
 *
 * Memory: core's krill_host_mem_limit pretends that only a little memory is available, so
 * a header claiming gigabytes must fail with KRILL_ERR_ALLOC, naming the file, the size
 * line and the bytes needed and available, before anything of that size is allocated;
 * the work arrays of a read must grow with the entries, not the declared rows. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef KRILL_HAVE_ZLIB
#include <zlib.h>
#endif

#include "core/core_impl.h"
#include "io/io_impl.h"
#include "testutil.h"

#define MiB ((size_t)1 << 20)

#define MAX_SCRATCH 16

static char path_buf[256];
static char scratch_files[MAX_SCRATCH][256];
static int n_scratch;

/* path_buf = the scratch path for `name`, remembered for remove_scratch. */
static const char *scratch_path(const char *name)
{
    snprintf(path_buf, sizeof path_buf, "/tmp/krill-edges-%ld-%s", (long)getpid(), name);
    if (n_scratch < MAX_SCRATCH) snprintf(scratch_files[n_scratch++], 256, "%s", path_buf);
    return path_buf;
}

static void remove_scratch(void)
{
    for (int k = 0; k < n_scratch; k++) remove(scratch_files[k]);
}

/* Write text to a scratch file named like `name` (its extension chooses a graph format). */
static const char *scratch(const char *name, const char *text)
{
    FILE *f = fopen(scratch_path(name), "wb");
    if (!f) {
        perror(path_buf);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    return path_buf;
}

/* The last message contains every one of the NULL-terminated strings. */
static int message_has(const char *first, ...)
{
    const char *msg = krill_last_error();
    int ok = strstr(msg, first) != NULL;
    va_list ap;
    va_start(ap, first);
    for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *))
        ok &= strstr(msg, s) != NULL;
    va_end(ap);
    if (!ok) fprintf(stderr, "  message: %s\n", msg);
    return ok;
}

static void test_available(void)
{
    size_t all = krill_host_mem_available();
    CHECK(all > 0);
    krill_host_mem_limit(MiB);
    CHECK(krill_host_mem_available() == (all < MiB ? all : MiB));
    CHECK_OK(krill_host_mem_check(1000, "a little"));
    CHECK_STATUS(krill_host_mem_check(2 * MiB, "two MiB"), KRILL_ERR_ALLOC);
    CHECK(message_has("two MiB needs 2097152 bytes of host memory, 1048576 are available", NULL));
    krill_host_mem_limit(0);
    CHECK(krill_host_mem_available() == all || krill_host_mem_available() > 0);
}

/* The 70-byte file: 2^31 - 1 rows and no entries. The row offsets alone need
 * 16 GiB: refused from the size line, whatever the memory (here 64 MiB) allows. */
static void test_huge_size_line(void)
{
    const char *text = "%%MatrixMarket matrix coordinate real general\n2147483647 2147483647 0\n";
    krill_csr *a = NULL;
    krill_mm_info info;
    double *x = NULL;
    int64_t n = 0;
    krill_host_mem_limit(64 * MiB);
    CHECK(strlen(text) == 70);
    const char *path = scratch("huge.mtx", text);
    CHECK_STATUS(krill_mm_read(path, &a, &info), KRILL_ERR_ALLOC);
    CHECK(a == NULL && info.rows == 2147483647);
    CHECK(message_has(":2: reading the 2147483647 x 2147483647 matrix (its row offsets) needs "
                      "17179869184 bytes of host memory, 67108864 are available", NULL));
    CHECK_STATUS(krill_mm_read_buffer("t.mtx", text, strlen(text), &a, NULL), KRILL_ERR_ALLOC);
    CHECK(message_has("t.mtx:2: ", "17179869184 bytes", NULL));
    /* a vector of 2^31 - 1 zeros */
    path = scratch("huge_vec.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                   "2147483647 1 0\n");
    CHECK_STATUS(krill_mm_read_vector(path, &x, &n), KRILL_ERR_ALLOC);
    CHECK(x == NULL && message_has(":2: reading the 2147483647 x 1 matrix (its values) needs "
                                   "17179869176 bytes", NULL));
    /* an array file cannot claim more than it holds: it fails as truncated */
    CHECK_STATUS(krill_mm_read_buffer("t.mtx", "%%MatrixMarket matrix array real general\n"
                                      "100000 100000\n1\n", 50, &a, NULL), KRILL_ERR_PARSE);
    krill_host_mem_limit(0);
}

/* The CSR must fit too: 50000 entries need 600 kB of columns and values besides 400 kB of
 * row offsets (one thread builds so few: no per-thread counters). */
static void test_csr_too_large(void)
{
    size_t len = 0, cap = MiB;
    char *text = malloc(cap);
    krill_csr *a = NULL;
    CHECK(text != NULL);
    len += (size_t)snprintf(text, cap, "%%%%MatrixMarket matrix coordinate pattern general\n"
                            "50000 50000 50000\n");
    for (int i = 1; i <= 50000; i++)
        len += (size_t)snprintf(text + len, cap - len, "%d %d\n", i, i);
    krill_host_mem_limit(900000);
    CHECK_STATUS(krill_mm_read_buffer("t.mtx", text, len, &a, NULL), KRILL_ERR_ALLOC);
    CHECK(a == NULL && message_has("t.mtx:2: reading the 50000 x 50000 matrix (the CSR) "
                                   "needs 1000008 bytes of host memory, 900000 are available",
                                   NULL));
    krill_host_mem_limit(0);
    CHECK_OK(krill_mm_read_buffer("t.mtx", text, len, &a, NULL));
    CHECK(a && a->nnz == 50000);
    krill_csr_destroy(&a);
    free(text);
}

/* Work arrays grow with the entries read: 10^6 declared rows and 3 entries need the 8 MB
 * of row offsets and almost nothing more (the per-row counters were another 8 MB). */
static void test_work_by_entries(void)
{
    const char *text = "%%MatrixMarket matrix coordinate real symmetric\n1000000 1000000 3\n"
                       "1 1 2\n1000000 1 -1\n500000 7 3\n";
    krill_csr *a = NULL;
    krill_host_mem_limit(8 * MiB + 4096);
    CHECK_OK(krill_mm_read_buffer("t.mtx", text, strlen(text), &a, NULL));
    CHECK(a && a->n_rows == 1000000 && a->nnz == 5 && a->row_ptr[1] == 2);
    CHECK(a && a->row_ptr[1000000] == 5 && a->col[a->row_ptr[6]] == 499999);
    if (a) CHECK_OK(krill_csr_check(a, "read"));
    krill_csr_destroy(&a);
    krill_host_mem_limit(0);
}

/* krill_mm_read_opts: square = 1 refuses a rectangular size line before the data is read
 * (here 2^31 - 1 x 1, which needs 16 GiB, and a body that is garbage). */
static void test_square_option(void)
{
    krill_mm_opts opts = KRILL_MM_OPTS_INIT;
    krill_csr *a = NULL;
    krill_mm_info info;
    opts.square = 1;
    const char *path = scratch("tall.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                           "% a comment\n2147483647 1 1\nnot an entry\n");
    CHECK_STATUS(krill_mm_read_opts(path, &opts, &a, &info), KRILL_ERR_UNSUPPORTED);
    CHECK(a == NULL && info.rows == 2147483647 && info.cols == 1);
    CHECK(message_has(":3: the matrix is rectangular (2147483647 x 1): a square matrix is "
                      "needed", NULL));
    path = scratch("sq.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 5\n");
    CHECK_OK(krill_mm_read_opts(path, &opts, &a, NULL));
    CHECK(a && a->n_rows == 2 && a->nnz == 1 && a->val[0] == 5.0);
    krill_csr_destroy(&a);
    CHECK_OK(krill_mm_read_opts(path, NULL, &a, NULL));
    CHECK(a && a->nnz == 1);
    krill_csr_destroy(&a);
    path = scratch("wide.mtx", "%%MatrixMarket matrix array real general\n1 2\n1\n2\n");
    CHECK_STATUS(krill_mm_read_opts(path, &opts, &a, NULL), KRILL_ERR_UNSUPPORTED);
    opts.square = 0;
    CHECK_OK(krill_mm_read_opts(path, &opts, &a, NULL));
    CHECK(a && a->n_cols == 2);
    krill_csr_destroy(&a);
}

#ifdef KRILL_HAVE_ZLIB
/* A gzip bomb: 64 MiB of blanks in a 64 kB file, read with 16 MiB available, fails while
 * inflating, not in the out-of-memory killer. */
static void test_gzip_bomb(void)
{
    const size_t plain = 64 * MiB;
    char *text = calloc(plain, 1);
    uLongf zlen = compressBound(plain) + 64;
    unsigned char *z = malloc(zlen);
    z_stream zs;
    krill_csr *a = NULL;
    CHECK(text != NULL && z != NULL);
    memset(text, ' ', plain);
    const char *head = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 5\n";
    memcpy(text, head, strlen(head));
    memset(&zs, 0, sizeof zs);
    CHECK(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    zs.next_in = (Bytef *)text;
    zs.avail_in = (uInt)plain;
    zs.next_out = z;
    zs.avail_out = (uInt)zlen;
    CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    deflateEnd(&zs);
    FILE *f = fopen(scratch_path("bomb.mtx.gz"), "wb");
    CHECK(f && fwrite(z, 1, zs.total_out, f) == zs.total_out && fclose(f) == 0);
    CHECK(zs.total_out < plain / 256);
    krill_host_mem_limit(16 * MiB);
    CHECK_STATUS(krill_mm_read(path_buf, &a, NULL), KRILL_ERR_ALLOC);
    CHECK(a == NULL && message_has("bomb.mtx.gz: loading the file (", "bytes so far) needs",
                                   "16777216 are available", NULL));
    krill_host_mem_limit(0);
    CHECK_OK(krill_mm_read(path_buf, &a, NULL));
    CHECK(a && a->nnz == 1 && a->val[0] == 5.0);
    krill_csr_destroy(&a);
    free(text);
    free(z);
}
#endif

/* Duplicates of a coordinate vector that sum to infinity: refused at the entry that
 * overflows, with its line (fuzz_vector checks that every value read is finite). */
static void test_vector_sum(void)
{
    double *x = NULL;
    int64_t n = 0;
    const char *path = scratch("inf.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                          "2 1 3\n1 1 1e308\n% c\n\n2 1 1\n  1 1 1e308\n");
    CHECK_STATUS(krill_mm_read_vector(path, &x, &n), KRILL_ERR_PARSE);
    CHECK(x == NULL && n == 0 && message_has("inf.mtx:7: entry 1 of the vector sums to inf with "
                                             "the ones before it: values must be finite", NULL));
    path = scratch("big.mtx", "%%MatrixMarket matrix coordinate real general\n"
                              "2 1 3\n1 1 1e308\n1 1 -1e308\n1 1 1e308\n");
    CHECK_OK(krill_mm_read_vector(path, &x, &n));
    CHECK(x && n == 2 && x[0] == 1e308 && x[1] == 0.0);
    krill_host_free(x);
}

/* The graph readers: a header of 2^31 - 1 vertices needs 16 GiB of row offsets. (A METIS
 * file cannot claim more than it holds: it needs a line per vertex.) */
static void test_graph_sizes(void)
{
    static const struct {
        const char *name, *text, *what;
        krill_graph_ids ids;
    } cases[] = {
        {"huge.gr", "p sp 2147483647 0\n",
         ":1: a graph of 2147483647 vertices and 0 arcs needs 17179869184 bytes",
         KRILL_GRAPH_IDS_REMAP},
        {"huge.txt", "# big ids\n0 2147483646\n",
         ":2: a graph of 2147483647 vertices and 1 arcs needs 17179869196 bytes",
         KRILL_GRAPH_IDS_BASE0},
        {"huge.mtx", "%%MatrixMarket matrix coordinate pattern general\n2147483647 2147483647 0\n",
         ":2: a graph of 2147483647 vertices and 0 arcs needs 17179869184 bytes",
         KRILL_GRAPH_IDS_REMAP},
    };
    krill_csr *g = NULL;
    krill_host_mem_limit(64 * MiB);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        krill_graph_opts opts = KRILL_GRAPH_OPTS_INIT;
        opts.ids = cases[k].ids;
        CHECK_STATUS(krill_graph_read(scratch(cases[k].name, cases[k].text), &opts, &g, NULL),
                     KRILL_ERR_ALLOC);
        CHECK(g == NULL && message_has(cases[k].name, cases[k].what, "67108864 are available",
                                       NULL));
    }
    CHECK_STATUS(krill_graph_read(scratch("huge.graph", "2147483647 0\n"), NULL, &g, NULL),
                 KRILL_ERR_PARSE);
    CHECK(g == NULL && message_has("the file ends after 0 of the 2147483647 vertex lines", NULL));
    krill_host_mem_limit(0);
}

/* Numbers: exponents as long as the mantissa's leading zeros need (10^6 of them here), and
 * leading zeros of indices and sizes that do not count towards their 18 digits. */
static void test_numbers(void)
{
    const size_t zeros = 1000000;
    char *tok = malloc(zeros + 64);
    double v = -1.0;
    const char *p;
    CHECK(tok != NULL);
    /* 0.(10^6 zeros)1e1000039 = 1e38 */
    memcpy(tok, "0.", 2);
    memset(tok + 2, '0', zeros);
    snprintf(tok + 2 + zeros, 64, "1e%zu", zeros + 39);
    p = tok;
    CHECK(mm_lex_real(&p, tok + strlen(tok), '.', &v) == MM_LEX_OK && v == 1e38);
    /* the mirror: 1(10^6 zeros)e-1000038 = 1e-38 */
    tok[0] = '1';
    memset(tok + 1, '0', zeros);
    snprintf(tok + 1 + zeros, 64, "e-%zu", zeros + 38);
    p = tok;
    v = -1.0;
    CHECK(mm_lex_real(&p, tok + strlen(tok), '.', &v) == MM_LEX_OK && v == 1e-38);
    /* still out of range beyond: 1e(10^6 digits) and a huge exponent with a small mantissa */
    snprintf(tok, 64, "1e1000000000000000000000");
    p = tok;
    CHECK(mm_lex_real(&p, tok + strlen(tok), '.', &v) == MM_LEX_RANGE);
    snprintf(tok, 64, "1e-1000000000000000000000");
    p = tok;
    CHECK(mm_lex_real(&p, tok + strlen(tok), '.', &v) == MM_LEX_OK && v == 0.0);
    free(tok);

    int64_t idx = -1;
    static const char *const ok[] = {"0000000000000000001", "000000000000000000000000000042",
                                     "000999999999999999999", "0"};
    static const int64_t want[] = {1, 42, 999999999999999999, 0};
    for (int k = 0; k < 4; k++) {
        p = ok[k];
        CHECK(mm_lex_index(&p, ok[k] + strlen(ok[k]), &idx) == MM_LEX_OK && idx == want[k]);
    }
    p = "0001000000000000000000";
    CHECK(mm_lex_index(&p, p + strlen(p), &idx) == MM_LEX_RANGE);
    krill_csr *a = NULL;
    const char *text = "%%MatrixMarket matrix coordinate real general\n"
                       "0000000000000000002 00000000000000000000002 000000000000000000001\n"
                       "000000000000000000002 0000000000000000000001 0.(ignored)\n";
    CHECK_STATUS(krill_mm_read_buffer("t.mtx", text, strlen(text), &a, NULL), KRILL_ERR_PARSE);
    CHECK(message_has("t.mtx:3: bad value '0.(ignored)'", NULL));
    text = "%%MatrixMarket matrix coordinate real general\n"
           "0000000000000000002 00000000000000000000002 000000000000000000001\n"
           "000000000000000000002 0000000000000000000001 7\n";
    CHECK_OK(krill_mm_read_buffer("t.mtx", text, strlen(text), &a, NULL));
    CHECK(a && a->n_rows == 2 && a->nnz == 1 && a->row_ptr[1] == 0 && a->col[0] == 0);
    krill_csr_destroy(&a);
}

/* krill_mm_read_opts's allocations, each failing in turn (square = 1, a square file). */
typedef struct read_call {
    const char *path;
    krill_csr *out;
} read_call;

static krill_status run_read_square(void *user)
{
    read_call *c = (read_call *)user;
    krill_mm_opts opts = KRILL_MM_OPTS_INIT;
    opts.square = 1;
    return krill_mm_read_opts(c->path, &opts, &c->out, NULL);
}

static int read_out_null(void *user) { return ((read_call *)user)->out == NULL; }

static void read_out_free(void *user) { krill_csr_destroy(&((read_call *)user)->out); }

static void test_square_option_faults(void)
{
    read_call c = {scratch("sq3.mtx", "%%MatrixMarket matrix coordinate real symmetric\n"
                                      "3 3 4\n1 1 4\n2 1 -1\n2 2 4\n3 3 4\n"), NULL};
    tu_fault_call call = {"krill_mm_read_opts", run_read_square, read_out_null, read_out_free,
                          &c, 0};
    CHECK(tu_alloc_fault_walk(&call) > 0);
}

int main(void)
{
    test_available();
    test_huge_size_line();
    test_csr_too_large();
    test_work_by_entries();
    test_square_option();
    test_square_option_faults();
    test_vector_sum();
#ifdef KRILL_HAVE_ZLIB
    test_gzip_bomb();
#endif
    test_graph_sizes();
    test_numbers();
    remove_scratch();
    return tu_finish("test_mm_edges");
}
