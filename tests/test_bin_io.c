/* test_bin_io: krill's binary CSR files (io/bin_write.c, io/bin_read.c; doc/binary-format.md).
 *
 * Round trips bit for bit (generated matrices in several chunk sizes, every matrix of
 * testdata/, rectangular ones included), row slices against the rows of the matrix, and
 * every way a file can be wrong: each byte of a small file flipped in turn (the header, the
 * checksum tables, each section: the read fails and names the section and chunk), a slice
 * read that does not touch the flipped chunk succeeds, truncation at every length, trailing
 * bytes, a wrong magic, version or byte-order mark, a big-endian file (crafted here from the
 * format's description: read, byte-swapped, as the same matrix), and hostile sizes in a
 * 128-byte file, refused without a single allocation. The files are crafted from the layout
 * that doc/binary-format.md states, not from io/'s own constants. */
#define _XOPEN_SOURCE 700   /* mkdtemp */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core_impl.h"   /* krill_alloc_calls, krill_host_mem_limit */
#include "testutil.h"

static char dir[64];

static const char *tmp(const char *name)
{
    static char path[2][256];
    static int turn;
    turn ^= 1;
    snprintf(path[turn], sizeof path[turn], "%s/%s", dir, name);
    return path[turn];
}

/* ---- the layout as the documentation states it ---------------------------------------- */
typedef struct layout {
    int64_t n_rows, n_cols, nnz, chunk;
    int64_t bytes[3], chunks[3], sums[3], data[3], file;
} layout;

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t k = 0; k < n; k++) h = (h ^ p[k]) * 0x100000001b3ull;
    return h;
}

static int64_t get64(const unsigned char *p) { int64_t v; memcpy(&v, p, 8); return v; }

static layout layout_of(const unsigned char *h)
{
    layout l;
    int64_t pos = 128;
    l.n_rows = get64(h + 24);
    l.n_cols = get64(h + 32);
    l.nnz = get64(h + 40);
    l.chunk = get64(h + 48);
    l.bytes[0] = 8 * (l.n_rows + 1);
    l.bytes[1] = 8 * ((l.nnz + 1) / 2);
    l.bytes[2] = 8 * l.nnz;
    for (int s = 0; s < 3; s++) {
        l.chunks[s] = (l.bytes[s] + l.chunk - 1) / l.chunk;
        l.sums[s] = pos;
        pos += 8 * l.chunks[s];
    }
    for (int s = 0; s < 3; s++) {
        l.data[s] = pos;
        pos += l.bytes[s];
    }
    l.file = pos;
    return l;
}

static void header_resum(unsigned char *h)
{
    uint64_t sum = fnv(h, 120);
    memcpy(h + 120, &sum, 8);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long len = 0;
    CHECK(f != NULL);
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = malloc((size_t)len + 1);
    *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

static void spit(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(b, 1, n, f) == n);
    if (f) fclose(f);
}

static int same_csr(const krill_csr *a, const krill_csr *b)
{
    return a && b && a->n_rows == b->n_rows && a->n_cols == b->n_cols && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, 8 * ((size_t)a->n_rows + 1)) &&
           !memcmp(a->col, b->col, 4 * (size_t)a->nnz) &&
           !memcmp(a->val, b->val, 8 * (size_t)a->nnz);
}

/* rows [r0, r1) of a, global columns */
static int same_rows(const krill_csr *a, int64_t r0, int64_t r1, const krill_csr *rows)
{
    const int64_t p0 = a->row_ptr[r0], n = a->row_ptr[r1] - p0;
    int ok = rows && rows->n_rows == r1 - r0 && rows->n_cols == a->n_cols && rows->nnz == n &&
             !memcmp(rows->col, a->col + p0, 4 * (size_t)n) &&
             !memcmp(rows->val, a->val + p0, 8 * (size_t)n);
    for (int64_t i = 0; ok && i <= r1 - r0; i++) ok = rows->row_ptr[i] == a->row_ptr[r0 + i] - p0;
    return ok;
}

/* a written in chunks of `chunk` and read back whole and in slices */
static void round_trip(const krill_csr *a, int64_t chunk, const char *what)
{
    krill_csr *b = NULL, *rows = NULL;
    krill_bin_info info;
    const char *path = tmp("rt.krill");
    CHECK_OK(krill_bin_write(path, a, chunk));
    CHECK(krill_bin_detect(path) == 1);
    CHECK_OK(krill_bin_read(path, &b, &info));
    CHECK(same_csr(a, b));
    if (!same_csr(a, b)) fprintf(stderr, "  %s (chunk %lld): round trip differs\n", what,
                                 (long long)chunk);
    CHECK(info.version == 1 && info.swapped == 0 && info.n_rows == a->n_rows && info.nnz == a->nnz);
    CHECK(info.chunk_bytes == (chunk ? chunk : (int64_t)1 << 20));
    /* slices: 1, 2, 3 and 7 pieces, and a few single rows */
    for (int parts = 1; parts <= 7; parts += parts < 3 ? 1 : 4)
        for (int p = 0; p < parts; p++) {
            int64_t r0 = (int64_t)a->n_rows * p / parts, r1 = (int64_t)a->n_rows * (p + 1) / parts;
            CHECK_OK(krill_bin_read_rows(path, r0, r1, &rows, NULL));
            CHECK(same_rows(a, r0, r1, rows));
            krill_csr_destroy(&rows);
        }
    krill_csr_destroy(&b);
}

static void test_generated(void)
{
    const char *specs[] = { "poisson3d:6", "convdiff3d:5", "band101:300", "rand100:200",
                            "elasticity3d:3,2,2", "band1x:500" };
    const int64_t chunks[] = { 0, 64, 128, 4096 };
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        krill_csr *a = NULL;
        CHECK_OK(krill_gen(specs[s], &a));
        for (size_t c = 0; a && c < sizeof chunks / sizeof *chunks; c++)
            round_trip(a, chunks[c], specs[s]);
        krill_csr_destroy(&a);
    }
    /* empty, 0 x 0, odd nnz (col padding), -0.0 and subnormals, a rectangular one */
    {
        krill_csr *a = NULL, *b = NULL;
        CHECK_OK(krill_csr_create(0, 0, 0, &a));
        round_trip(a, 64, "0 x 0");
        krill_csr_destroy(&a);
        CHECK_OK(krill_csr_create(5, 3, 0, &a));
        round_trip(a, 64, "5 x 3 empty");
        krill_csr_destroy(&a);
        const int32_t r[3] = { 0, 1, 1 }, c[3] = { 2, 0, 4 };
        const double v[3] = { -0.0, 4.9e-324, -1.7976931348623157e308 };
        CHECK_OK(krill_csr_from_triplets(2, 5, 3, r, c, v, &a));
        round_trip(a, 64, "2 x 5, odd nnz");
        CHECK_OK(krill_bin_write(tmp("odd.krill"), a, 0));
        CHECK_OK(krill_bin_read(tmp("odd.krill"), &b, NULL));
        CHECK(same_csr(a, b) && b->val[0] == 0.0 && 1.0 / b->val[0] < 0.0);
        krill_csr_destroy(&a);
        krill_csr_destroy(&b);
    }
}

/* the writer's flags: symmetric with a positive diagonal (poisson), neither (convdiff) */
static void test_flags(void)
{
    krill_csr *a = NULL;
    krill_bin_info info;
    CHECK_OK(krill_gen("poisson3d:4", &a));
    CHECK_OK(krill_bin_write(tmp("f.krill"), a, 0));
    CHECK_OK(krill_bin_read_info(tmp("f.krill"), &info));
    CHECK(info.flags == (KRILL_BIN_SYMMETRIC | KRILL_BIN_DIAG_POSITIVE));
    for (int64_t k = 0; k < a->nnz; k++) a->val[k] = -a->val[k];
    CHECK_OK(krill_bin_write(tmp("f.krill"), a, 0));
    CHECK_OK(krill_bin_read_info(tmp("f.krill"), &info));
    CHECK(info.flags == (KRILL_BIN_SYMMETRIC | KRILL_BIN_DIAG_NEGATIVE));
    krill_csr_destroy(&a);
    CHECK_OK(krill_gen("convdiff3d:4", &a));
    CHECK_OK(krill_bin_write(tmp("f.krill"), a, 0));
    CHECK_OK(krill_bin_read_info(tmp("f.krill"), &info));
    CHECK(info.flags == KRILL_BIN_DIAG_POSITIVE);
    krill_csr_destroy(&a);
}

/* every matrix krill reads in both testdata folders, square or not */
static int testdata_folder(const char *root)
{
    char path[1024];
    int count = 0;
    DIR *d = NULL;
    struct dirent *e;
    if (!root) return 0;
    snprintf(path, sizeof path, "%s/mtx", root);
    d = opendir(path);
    while (d && (e = readdir(d)) != NULL) {
        krill_csr *a = NULL;
        const size_t len = strlen(e->d_name);
        if (len < 5 || (strcmp(e->d_name + len - 4, ".mtx") && strcmp(e->d_name + len - 3, ".gz")))
            continue;
        snprintf(path, sizeof path, "%s/mtx/%s", root, e->d_name);
        if (krill_mm_read(path, &a, NULL) != KRILL_OK) continue;   /* complex: not krill's */
        round_trip(a, count % 2 ? 0 : 256, e->d_name);
        krill_csr_destroy(&a);
        count++;
    }
    if (d) closedir(d);
    return count;
}

static void test_testdata(void)
{
    int n = testdata_folder(tu_testdata_shared()) + testdata_folder(tu_testdata_local());
    printf("testdata: %d matrices round-tripped\n", n);
    CHECK(n >= tu_testdata_expect(40, 10));
}

/* The status and message of reading path whole: PARSE, naming the file, containing want. */
static void expect_refused(const char *path, const char *want, const char *what)
{
    krill_csr *a = NULL;
    krill_status st = krill_bin_read(path, &a, NULL);
    CHECK(st == KRILL_ERR_PARSE && a == NULL);
    CHECK(strstr(krill_last_error(), path) != NULL);
    CHECK(!want || strstr(krill_last_error(), want) != NULL);
    if (st != KRILL_ERR_PARSE || (want && !strstr(krill_last_error(), want)))
        fprintf(stderr, "  %s: %s: %s (want \"%s\")\n", what, krill_status_string(st),
                krill_last_error(), want ? want : "");
    krill_csr_destroy(&a);
}

/* Every byte of a small file (chunks of 64 bytes: several per section) flipped in turn. */
static void test_flips(void)
{
    krill_csr *a = NULL, *rows = NULL;
    size_t n = 0;
    unsigned char *good = NULL;
    const char *path = tmp("flip.krill");
    int refused = 0, slice_ok = 0;
    CHECK_OK(krill_gen("poisson3d:3", &a));   /* 27 rows, 135 entries: odd, padded */
    CHECK_OK(krill_bin_write(tmp("good.krill"), a, 64));
    good = slurp(tmp("good.krill"), &n);
    if (!good) goto cleanup;
    layout l = layout_of(good);
    CHECK((size_t)l.file == n && l.chunks[0] == 4 && l.chunks[1] == 9 && l.chunks[2] == 17);
    for (size_t at = 0; at < n; at++) {
        char want[96] = "";
        static const char *const names[3] = { "row_ptr", "col", "val" };
        good[at] ^= 0x10;
        spit(path, good, n);
        good[at] ^= 0x10;
        for (int s = 0; s < 3; s++) {
            if ((int64_t)at >= l.data[s] && (int64_t)at < l.data[s] + l.bytes[s])
                snprintf(want, sizeof want, "checksum mismatch in the %s section, chunk %lld of",
                         names[s], (long long)((int64_t)at - l.data[s]) / 64 + 1);
            if ((int64_t)at >= l.sums[s] && (int64_t)at < l.sums[s] + 8 * l.chunks[s])
                snprintf(want, sizeof want, "checksum mismatch in the %s section, chunk %lld of",
                         names[s], (long long)((int64_t)at - l.sums[s]) / 8 + 1);
        }
        if (at < 8) snprintf(want, sizeof want, "bad magic");
        else if (at < 12) snprintf(want, sizeof want, "byte-order mark");
        else if (at < 16) snprintf(want, sizeof want, "version");
        else if (at < 128) snprintf(want, sizeof want, "header checksum mismatch");
        expect_refused(path, want, "flipped byte");
        refused++;
        /* row 0 (4 entries) needs the header, the first checksum of each section and the
         * first chunk of each: a flip anywhere else leaves its read alone */
        int touched = at < 128;
        for (int s = 0; s < 3; s++)
            touched |= ((int64_t)at >= l.sums[s] && (int64_t)at < l.sums[s] + 8) ||
                       ((int64_t)at >= l.data[s] && (int64_t)at < l.data[s] + 64);
        krill_status st = krill_bin_read_rows(path, 0, 1, &rows, NULL);
        CHECK(touched ? st == KRILL_ERR_PARSE : st == KRILL_OK && same_rows(a, 0, 1, rows));
        krill_csr_destroy(&rows);
        slice_ok += !touched;
    }
    CHECK(refused == (int)n && slice_ok > 0);
    printf("flips: each of %zu bytes refused; %d flips outside row 0's chunks left its read OK\n",
           n, slice_ok);
cleanup:
    free(good);
    krill_csr_destroy(&a);
}

static void test_truncation(void)
{
    krill_csr *a = NULL;
    size_t n = 0;
    unsigned char *good = NULL;
    const char *path = tmp("cut.krill");
    CHECK_OK(krill_gen("band3:50", &a));
    CHECK_OK(krill_bin_write(tmp("good.krill"), a, 64));
    good = slurp(tmp("good.krill"), &n);
    for (size_t len = 0; good && len < n; len++) {
        spit(path, good, len);
        expect_refused(path, len < 8 ? "bad magic" : "truncated", "truncated file");
    }
    if (good) {                     /* one byte too many */
        unsigned char *more = calloc(n + 1, 1);
        memcpy(more, good, n);
        spit(path, more, n + 1);
        expect_refused(path, "trailing data", "trailing byte");
        free(more);
    }
    free(good);
    krill_csr_destroy(&a);
}

/* A big-endian file crafted from a little-endian one: every field and element swapped, the
 * checksums recomputed over the swapped bytes and stored big-endian. */
static void swap_bytes(unsigned char *p, int size)
{
    for (int k = 0; k < size / 2; k++) {
        unsigned char t = p[k];
        p[k] = p[size - 1 - k];
        p[size - 1 - k] = t;
    }
}

static void make_big_endian(unsigned char *b, const layout *l)
{
    const int elem[3] = { 8, 4, 8 };
    const int64_t used[3] = { l->bytes[0], 4 * l->nnz, l->bytes[2] };
    for (int s = 0; s < 3; s++) {
        for (int64_t k = 0; k < used[s]; k += elem[s]) swap_bytes(b + l->data[s] + k, elem[s]);
        for (int64_t c = 0; c < l->chunks[s]; c++) {
            const int64_t lo = c * l->chunk;
            const int64_t hi = lo + l->chunk < l->bytes[s] ? lo + l->chunk : l->bytes[s];
            uint64_t sum = fnv(b + l->data[s] + lo, (size_t)(hi - lo));
            memcpy(b + l->sums[s] + 8 * c, &sum, 8);
            swap_bytes(b + l->sums[s] + 8 * c, 8);
        }
    }
    for (int k = 8; k < 24; k += 4) swap_bytes(b + k, 4);
    for (int k = 24; k < 64; k += 8) swap_bytes(b + k, 8);
    {
        uint64_t sum = fnv(b, 120);
        memcpy(b + 120, &sum, 8);
        swap_bytes(b + 120, 8);
    }
}

static void test_header_and_order(void)
{
    krill_csr *a = NULL, *b = NULL, *rows = NULL;
    krill_bin_info info;
    size_t n = 0;
    unsigned char *good = NULL, *bad = NULL;
    const char *path = tmp("hdr.krill");
    CHECK_OK(krill_gen("convdiff3d:4", &a));
    CHECK_OK(krill_bin_write(tmp("good.krill"), a, 128));
    good = slurp(tmp("good.krill"), &n);
    bad = malloc(n);
    if (!good || !bad) goto cleanup;
    layout l = layout_of(good);
    /* wrong magic: a Matrix Market file, and one letter off */
    CHECK_OK(krill_mm_write(tmp("a.mtx"), a));
    CHECK(krill_bin_detect(tmp("a.mtx")) == 0 && krill_bin_detect(tmp("none")) == 0);
    expect_refused(tmp("a.mtx"), "not a krill binary file", "Matrix Market file");
    memcpy(bad, good, n);
    bad[0] = 'k';
    spit(path, bad, n);
    expect_refused(path, "bad magic", "magic");
    /* version 2, with its header checksum right: refused by the version */
    memcpy(bad, good, n);
    bad[12] = 2;
    header_resum(bad);
    spit(path, bad, n);
    expect_refused(path, "format version 2; this krill reads version 1", "version");
    /* a byte-order mark of neither order */
    memcpy(bad, good, n);
    bad[8] = 1, bad[9] = 2, bad[10] = 3, bad[11] = 4;
    header_resum(bad);
    spit(path, bad, n);
    expect_refused(path, "bad byte-order mark", "byte-order mark");
    /* unknown flags, nonzero reserved bytes, an inconsistent file size: checksum fixed */
    memcpy(bad, good, n);
    bad[21] = 1;
    header_resum(bad);
    spit(path, bad, n);
    expect_refused(path, "flags", "flags");
    memcpy(bad, good, n);
    bad[100] = 1;
    header_resum(bad);
    spit(path, bad, n);
    expect_refused(path, "reserved", "reserved");
    memcpy(bad, good, n);
    bad[56] ^= 8;
    header_resum(bad);
    spit(path, bad, n);
    expect_refused(path, "inconsistent", "file size field");
    /* the big-endian file: the same matrix, byte-swapped on read, whole and in slices */
    memcpy(bad, good, n);
    make_big_endian(bad, &l);
    CHECK(bad[8] == 0x0a && bad[11] == 0x0d);
    spit(path, bad, n);
    CHECK_OK(krill_bin_read(path, &b, &info));
    CHECK(same_csr(a, b) && info.swapped == 1 && info.n_rows == a->n_rows);
    CHECK_OK(krill_bin_read_rows(path, 10, 50, &rows, NULL));
    CHECK(same_rows(a, 10, 50, rows));
    krill_csr_destroy(&b);
    krill_csr_destroy(&rows);
    /* ... and a flipped value byte in it is still found */
    bad[l.data[2] + 3] ^= 1;
    spit(path, bad, n);
    expect_refused(path, "checksum mismatch in the val section, chunk 1 of", "big-endian flip");
    /* a checksum-valid file whose offsets fall: malformed */
    memcpy(bad, good, n);
    {
        int64_t v = 1000;
        memcpy(bad + l.data[0] + 8 * 3, &v, 8);
        uint64_t sum = fnv(bad + l.data[0], 128);
        memcpy(bad + l.sums[0], &sum, 8);
    }
    spit(path, bad, n);
    expect_refused(path, "row offsets must rise", "falling offsets");
    /* a checksum-valid file with columns out of order */
    memcpy(bad, good, n);
    {
        int32_t c[2];
        memcpy(c, bad + l.data[1], 8);
        int32_t t = c[0];
        c[0] = c[1], c[1] = t;
        memcpy(bad + l.data[1], c, 8);
        uint64_t sum = fnv(bad + l.data[1], 128);
        memcpy(bad + l.sums[1], &sum, 8);
    }
    spit(path, bad, n);
    expect_refused(path, "not sorted", "unsorted columns");
    /* rows out of range: an argument error */
    CHECK_STATUS(krill_bin_read_rows(tmp("good.krill"), 5, 4, &rows, NULL), KRILL_ERR_ARG);
    CHECK_STATUS(krill_bin_read_rows(tmp("good.krill"), 0, a->n_rows + 1, &rows, NULL),
                 KRILL_ERR_ARG);
    CHECK(rows == NULL);
    CHECK_STATUS(krill_bin_read(tmp("none"), &b, NULL), KRILL_ERR_IO);
    CHECK(b == NULL && strstr(krill_last_error(), "none") != NULL);
    CHECK_STATUS(krill_bin_read(dir, &b, NULL), KRILL_ERR_IO);   /* a folder */
cleanup:
    free(good);
    free(bad);
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
    krill_csr_destroy(&rows);
}

/* A 128-byte file whose valid header claims a huge matrix: refused from the sizes alone,
 * before any allocation. */
static void hostile(int64_t rows, int64_t cols, int64_t nnz, int64_t chunk, int64_t file,
                    const char *want)
{
    unsigned char h[128] = "KRILLCSR";
    const uint32_t u32[4] = { 0x0A0B0C0Du, 1, 128, 0 };
    const int64_t i64[5] = { rows, cols, nnz, chunk, file };
    krill_csr *a = NULL;
    memcpy(h + 8, u32, sizeof u32);
    memcpy(h + 24, i64, sizeof i64);
    header_resum(h);
    spit(tmp("hostile.krill"), h, sizeof h);
    long before = krill_alloc_calls();
    expect_refused(tmp("hostile.krill"), want, "hostile sizes");
    CHECK_STATUS(krill_bin_read_rows(tmp("hostile.krill"), 0, 1, &a, NULL), KRILL_ERR_PARSE);
    CHECK(krill_alloc_calls() == before && a == NULL);
}

static void test_hostile(void)
{
    layout l;
    unsigned char h[128];
    const int64_t big = 2147483647, huge = (int64_t)1 << 40;
    /* the file sizes such sizes make, so that only the real size gives them away */
    memset(h, 0, sizeof h);
    memcpy(h + 24, (int64_t[4]){ big, big, huge, 1 << 20 }, 32);
    l = layout_of(h);
    hostile(big, big, huge, 1 << 20, l.file, "truncated: 128 bytes");
    memcpy(h + 24, (int64_t[4]){ big, big, 0, 64 }, 32);
    l = layout_of(h);
    hostile(big, big, 0, 64, l.file, "truncated: 128 bytes");
    hostile(big, big, huge, 1 << 20, 128, "inconsistent");
    hostile((int64_t)1 << 31, 1, 0, 64, 128, "sizes out of range");
    hostile(-1, 1, 0, 64, 128, "sizes out of range");
    hostile(3, 3, 10, 64, 128, "sizes out of range");          /* nnz > rows x cols */
    hostile(3, 3, 1, 100, 128, "sizes out of range");          /* chunk not a power of two */
    hostile(3, 3, 1, 32, 128, "sizes out of range");           /* chunk too small */
    hostile(big, big, INT64_MAX, 64, 128, "sizes out of range");
}

/* The writer: bad arguments, a folder that does not exist, and an old file left as it was
 * when a write fails. */
static void test_writer(void)
{
    krill_csr *a = NULL, *b = NULL;
    CHECK_OK(krill_gen("poisson3d:3", &a));
    CHECK_STATUS(krill_bin_write(tmp("w.krill"), a, 100), KRILL_ERR_ARG);
    CHECK_STATUS(krill_bin_write(tmp("w.krill"), a, 32), KRILL_ERR_ARG);
    CHECK_STATUS(krill_bin_write(NULL, a, 0), KRILL_ERR_ARG);
    CHECK_STATUS(krill_bin_write(tmp("no/such/dir.krill"), a, 0), KRILL_ERR_IO);
    CHECK(access(tmp("w.krill"), F_OK) != 0);
    CHECK_OK(krill_bin_write(tmp("w.krill"), a, 0));
    a->col[1] = a->col[0];           /* not sorted: refused, the old file stays */
    CHECK_STATUS(krill_bin_write(tmp("w.krill"), a, 0), KRILL_ERR_ARG);
    CHECK_OK(krill_bin_read(tmp("w.krill"), &b, NULL));
    CHECK(b && b->nnz == a->nnz);
    CHECK_STATUS(krill_bin_write("/dev/full", b, 0), KRILL_ERR_IO);
    krill_csr_destroy(&a);
    krill_csr_destroy(&b);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/krill-bin-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    krill_host_mem_limit((size_t)1 << 30);
    TU_STEP(test_generated());
    TU_STEP(test_flags());
    TU_STEP(test_testdata());
    TU_STEP(test_flips());
    TU_STEP(test_truncation());
    TU_STEP(test_header_and_order());
    TU_STEP(test_hostile());
    TU_STEP(test_writer());
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    }
    return tu_finish("test_bin_io");
}
