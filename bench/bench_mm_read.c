/* bench/bench_mm_read.c - Matrix Market read speed: whole reads (load, parse, CSR build)
 * of each file, one warm-up read then the median of R timed reads (R >= 5).
 *
 *   bench_mm_read [--repeat R] [--csv OUT.csv] FILE...
 *
 * Prints a table: file size, entries stored, CSR nonzeros, median and best time, MB/s
 * (file bytes, 1 MB = 1e6 B) and million entries per second; --csv writes the same rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <omp.h>

#include "core/core_impl.h"
#include "krill.h"

#define MIN_REPEAT 5

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int main(int argc, char **argv)
{
    int repeat = 7, nfiles = 0, rc = 0;
    const char *csv_path = NULL;
    const char **files = calloc((size_t)argc, sizeof *files);
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--repeat") == 0 && k + 1 < argc) repeat = atoi(argv[++k]);
        else if (strcmp(argv[k], "--csv") == 0 && k + 1 < argc) csv_path = argv[++k];
        else files[nfiles++] = argv[k];
    }
    if (nfiles == 0) {
        fprintf(stderr, "usage: %s [--repeat R] [--csv OUT.csv] FILE...\n", argv[0]);
        free(files);
        return 2;
    }
    if (repeat < MIN_REPEAT) repeat = MIN_REPEAT;
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv_path && !csv) {
        fprintf(stderr, "cannot write %s\n", csv_path);
        free(files);
        return 2;
    }
    if (csv) fprintf(csv, "file,bytes,entries,nnz,threads,repeat,median_s,best_s,mb_per_s,"
                          "mentries_per_s\n");
    printf("krill Matrix Market read, %d threads, median of %d reads after 1 warm-up\n",
           omp_get_max_threads(), repeat);
    printf("%-32s %9s %11s %11s %9s %9s %9s %10s\n", "file", "MB", "entries", "nnz", "median s",
           "best s", "MB/s", "Mentries/s");
    double *t = malloc((size_t)repeat * sizeof *t);
    for (int f = 0; f < nfiles; f++) {
        struct stat sb;
        krill_csr *a = NULL;
        krill_mm_info info;
        if (stat(files[f], &sb) != 0 || krill_mm_read(files[f], &a, &info) != KRILL_OK) {
            fprintf(stderr, "%s: %s\n", files[f], krill_last_error());
            rc = 1;
            continue;
        }
        int64_t nnz = a->nnz;
        krill_csr_destroy(&a);
        for (int r = 0; r < repeat; r++) {
            double t0 = krill_wtime();
            krill_status st = krill_mm_read(files[f], &a, NULL);
            t[r] = krill_wtime() - t0;
            krill_csr_destroy(&a);
            if (st != KRILL_OK) {
                fprintf(stderr, "%s: %s\n", files[f], krill_last_error());
                rc = 1;
                break;
            }
        }
        qsort(t, (size_t)repeat, sizeof *t, cmp_double);
        double median = repeat % 2 ? t[repeat / 2] : 0.5 * (t[repeat / 2 - 1] + t[repeat / 2]);
        double mb = (double)sb.st_size / 1e6;
        printf("%-32s %9.1f %11lld %11lld %9.4f %9.4f %9.1f %10.2f\n", base_name(files[f]), mb,
               (long long)info.entries, (long long)nnz, median, t[0], mb / median,
               (double)info.entries / median / 1e6);
        if (csv)
            fprintf(csv, "%s,%lld,%lld,%lld,%d,%d,%.6f,%.6f,%.2f,%.3f\n", base_name(files[f]),
                    (long long)sb.st_size, (long long)info.entries, (long long)nnz,
                    omp_get_max_threads(), repeat, median, t[0], mb / median,
                    (double)info.entries / median / 1e6);
    }
    if (csv) fclose(csv);
    free(t);
    free(files);
    return rc;
}
