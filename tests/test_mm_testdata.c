/* tests/test_mm_testdata.c - every Matrix Market file of $KRILL_TESTDATA/mtx is read or
 * refused with a reason. A file that is read must match MANIFEST.tsv (rows, cols, stored
 * entries) and, bit for bit, a second reader written here the slow obvious way (fgets +
 * sscanf + qsort), the independent oracle for parsing, expansion, duplicates and order.
 * Refusals must be KRILL_ERR_UNSUPPORTED for exactly the complex files. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "testutil.h"

#define MAX_FILES 1024
#define ORACLE_MAX_BYTES (8L << 20)     /* the oracle is slow: files up to this size */

typedef struct manifest_row {
    char file[256];                     /* "mtx/NAME.mtx" */
    long long rows, cols, nnz_stored;
    char symmetry[32], field[64];
} manifest_row;

static manifest_row *manifest;
static int manifest_n;

static void load_manifest(void)
{
    const char *path = tu_testdata_path("MANIFEST.tsv");
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[4096];
    if (!f) return;
    manifest = calloc(MAX_FILES, sizeof *manifest);
    while (fgets(line, sizeof line, f) && manifest_n < MAX_FILES) {
        /* file  source_repo  path_in_repo  commit  rows  cols  nnz_stored  symmetry  field */
        char *col[9] = {0};
        int n = 0;
        for (char *tok = strtok(line, "\t\n"); tok && n < 9; tok = strtok(NULL, "\t\n"))
            col[n++] = tok;
        if (n < 9 || strncmp(col[0], "mtx/", 4) != 0) continue;
        manifest_row *m = &manifest[manifest_n++];
        snprintf(m->file, sizeof m->file, "%s", col[0]);
        m->rows = atoll(col[4]);
        m->cols = atoll(col[5]);
        m->nnz_stored = atoll(col[6]);
        snprintf(m->symmetry, sizeof m->symmetry, "%s", col[7]);
        snprintf(m->field, sizeof m->field, "%s", col[8]);
    }
    fclose(f);
}

static const manifest_row *manifest_find(const char *name)
{
    char key[300];
    snprintf(key, sizeof key, "mtx/%s", name);
    for (int k = 0; k < manifest_n; k++)
        if (strcmp(manifest[k].file, key) == 0) return &manifest[k];
    return NULL;
}

/* ---- the oracle -----------------------------------------------------------------------
 * Triplets (row, col, origin) sorted by row, column and position in the file, so that
 * summing equal neighbours adds duplicates in file order, as krill promises to. */
typedef struct trip {
    long long i, j, origin;
    double v;
} trip;

static int trip_cmp(const void *pa, const void *pb)
{
    const trip *a = pa, *b = pb;
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    if (a->j != b->j) return a->j < b->j ? -1 : 1;
    return (a->origin > b->origin) - (a->origin < b->origin);
}

static int next_data_line(FILE *f, char *line, size_t size)
{
    while (fgets(line, (int)size, f)) {
        char *p = line + strspn(line, " \t\r");
        if (*p != '%' && *p != '\n' && *p != '\0') return 1;
    }
    return 0;
}

/* Read path the obvious way and compare with a; returns 1 when equal, 0 with a message. */
static int oracle_matches(const char *path, const krill_csr *a)
{
    char line[1024], object[64], format[64], field[64], symmetry[64];
    FILE *f = fopen(path, "r");
    trip *t = NULL;
    int ok = 0;
    long long rows, cols, entries, n = 0;
    if (!f || !fgets(line, sizeof line, f) ||
        sscanf(line, "%%%%MatrixMarket %63s %63s %63s %63s", object, format, field,
               symmetry) != 4 ||
        strcasecmp(format, "coordinate") != 0 || !next_data_line(f, line, sizeof line) ||
        sscanf(line, "%lld %lld %lld", &rows, &cols, &entries) != 3) {
        fprintf(stderr, "%s: the oracle cannot read the header\n", path);
        goto done;
    }
    int pattern = strcasecmp(field, "pattern") == 0;
    int mirror = strcasecmp(symmetry, "general") != 0;
    double sign = strcasecmp(symmetry, "skew-symmetric") == 0 ? -1.0 : 1.0;
    t = malloc((size_t)(2 * entries + 1) * sizeof *t);
    for (long long k = 0; k < entries; k++) {
        long long i, j;
        double v = 1.0;
        if (!next_data_line(f, line, sizeof line) ||
            (pattern ? sscanf(line, "%lld %lld", &i, &j) != 2
                     : sscanf(line, "%lld %lld %lf", &i, &j, &v) != 3)) {
            fprintf(stderr, "%s: the oracle cannot read entry %lld\n", path, k + 1);
            goto done;
        }
        t[n++] = (trip){i - 1, j - 1, k, v};
        if (mirror && i != j) t[n++] = (trip){j - 1, i - 1, k, sign * v};
    }
    qsort(t, (size_t)n, sizeof *t, trip_cmp);
    long long u = 0;                    /* sum equal neighbours into t[0..u) */
    for (long long k = 0; k < n; k++) {
        if (u > 0 && t[u - 1].i == t[k].i && t[u - 1].j == t[k].j) t[u - 1].v += t[k].v;
        else t[u++] = t[k];
    }
    if (a->n_rows != rows || a->n_cols != cols || a->nnz != u) {
        fprintf(stderr, "%s: krill %d x %d nnz %lld, oracle %lld x %lld nnz %lld\n", path,
                a->n_rows, a->n_cols, (long long)a->nnz, rows, cols, u);
        goto done;
    }
    for (long long k = 0; k < u; k++) {
        int row_ok = a->row_ptr[t[k].i] <= k && k < a->row_ptr[t[k].i + 1];
        if (!row_ok || a->col[k] != t[k].j || memcmp(&a->val[k], &t[k].v, sizeof(double)) != 0) {
            fprintf(stderr, "%s: entry %lld: oracle (%lld, %lld) %.17g, krill col %d %.17g\n",
                    path, k, t[k].i, t[k].j, t[k].v, a->col[k], a->val[k]);
            goto done;
        }
    }
    ok = 1;
done:
    free(t);
    if (f) fclose(f);
    return ok;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_matrix_file(const char *name)
{
    size_t n = strlen(name);
    return (n > 4 && strcmp(name + n - 4, ".mtx") == 0) ||
           (n > 7 && strcmp(name + n - 7, ".mtx.gz") == 0);
}

int main(void)
{
    const char *mtx = tu_testdata_path("mtx");
    struct stat sb;
    if (!mtx || stat(mtx, &sb) != 0) tu_skip("no testdata folder ($KRILL_TESTDATA/mtx absent)");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", mtx);
    load_manifest();
    CHECK(manifest_n > 0);

    char *names[MAX_FILES];
    int n = 0;
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    for (struct dirent *e; d && (e = readdir(d)) != NULL && n < MAX_FILES;)
        if (is_matrix_file(e->d_name)) names[n++] = strdup(e->d_name);
    if (d) closedir(d);
    qsort(names, (size_t)n, sizeof *names, name_cmp);

    int read = 0, refused = 0, oracle = 0;
    char reasons[2048] = "";
    for (int k = 0; k < n; k++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        const manifest_row *m = manifest_find(names[k]);
        int complex_file = m && strstr(m->field, "complex") != NULL;
        krill_csr *a = NULL;
        krill_mm_info info;
        krill_status st = krill_mm_read(path, &a, &info);
        tu_checks++;
        if (!m) {
            tu_failures++;
            fprintf(stderr, "%s: not in MANIFEST.tsv\n", names[k]);
        }
        if (st == KRILL_OK) {
            read++;
            CHECK_OK(krill_csr_check(a, names[k]));
            if (m && (a->n_rows != m->rows || a->n_cols != m->cols ||
                      info.entries != m->nnz_stored || complex_file)) {
                tu_failures++;
                fprintf(stderr, "%s: read %d x %d with %lld entries, manifest says %lld x %lld "
                        "with %lld (%s)\n", names[k], a->n_rows, a->n_cols,
                        (long long)info.entries, m->rows, m->cols, m->nnz_stored, m->field);
            }
            if (stat(path, &sb) == 0 && sb.st_size <= ORACLE_MAX_BYTES &&
                strstr(names[k], ".gz") == NULL) {
                oracle++;
                tu_checks++;
                if (!oracle_matches(path, a)) tu_failures++;
            }
        } else {
            refused++;
            const char *msg = krill_last_error();
            printf("refused %s: %s\n", names[k], msg);
            if (st != KRILL_ERR_UNSUPPORTED || !complex_file || !strstr(msg, "complex")) {
                tu_failures++;
                fprintf(stderr, "%s: %s (%s)\n", names[k], krill_status_string(st), msg);
            }
            /* the reason: the message after "PATH:LINE: ", up to its first ':' */
            const char *why = strncmp(msg, path, strlen(path)) == 0 ? msg + strlen(path) : msg;
            why += strspn(why, ":0123456789 ");
            size_t used = strlen(reasons);
            snprintf(reasons + used, sizeof reasons - used, "%s%s: %.*s", refused > 1 ? "; " : "",
                     names[k], (int)strcspn(why, ":"), why);
        }
        krill_csr_destroy(&a);
        free(names[k]);
    }
    printf("testdata: read %d, refused %d (%s), %d checked against the oracle\n", read, refused,
           refused ? reasons : "none", oracle);
    free(manifest);
    return tu_finish("test_mm_testdata");
}
