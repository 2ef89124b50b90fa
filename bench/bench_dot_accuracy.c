/* bench/bench_dot_accuracy.c - bench_dot's accuracy tables: DOT (Table 3 of the OzBLAS
 * paper) and GEMV-T against MPFR, and the plain GPU columns written on one machine and read
 * on another (bench_dot.c's opening comment says how each is computed). */
#ifdef KRILL_HAVE_MPFR
#include <mpfr.h>
#endif

#include "bench/bench_dot.h"

/* ---- accuracy ------------------------------------------------------------------------------ */

#ifdef KRILL_HAVE_MPFR
/* The exact x'y rounded to nearest (ties to even), through MPFR. Returns 0, or -1 if an
 * operation rounded (it cannot with the precision below; checked anyway). */
static int reference_dot(int64_t n, const double *x, const double *y, double *out)
{
    int e_hi = INT_MIN, e_lo = INT_MAX, inexact = 0;
    for (int64_t i = 0; i < n; i++) {
        int ex = 0, ey = 0;
        if (x[i] == 0.0 || y[i] == 0.0) continue;
        frexp(x[i], &ex);
        frexp(y[i], &ey);
        /* |x_i y_i| < 2^(ex + ey); its last bit is worth at least 2^(ex + ey - 106) */
        if (ex + ey > e_hi) e_hi = ex + ey;
        if (ex + ey < e_lo) e_lo = ex + ey;
    }
    if (e_hi == INT_MIN) {   /* every product is zero */
        *out = 0.0;
        return 0;
    }
    int carries = 1;
    while (carries < 63 && ((int64_t)1 << carries) < n) carries++;
    const mpfr_prec_t prec = (mpfr_prec_t)(e_hi - (e_lo - 106) + carries + 1);
    mpfr_t acc, a, b;
    mpfr_init2(acc, prec);
    mpfr_init2(a, 53);
    mpfr_init2(b, 53);
    mpfr_set_zero(acc, 1);
    for (int64_t i = 0; i < n; i++) {
        mpfr_set_d(a, x[i], MPFR_RNDN);
        mpfr_set_d(b, y[i], MPFR_RNDN);
        inexact |= mpfr_fma(acc, a, b, acc, MPFR_RNDN) != 0;
    }
    *out = mpfr_get_d(acc, MPFR_RNDN);
    mpfr_clear(acc);
    mpfr_clear(a);
    mpfr_clear(b);
    return inexact ? -1 : 0;
}
#endif

/* ---- the plain GPU columns computed on one machine, read on another ----------------------- */

/* The two plain GPU methods, in the file's column order. */
static void gpu_value_methods(dot_method *m)
{
    m[0] = dot_make_method("plain GPU (cuBLAS ddot)", DOT_CUBLAS, KRILL_REPRO_OFF, 0);
    m[1] = dot_make_method("plain GPU (krill)", DOT_VEC, KRILL_REPRO_OFF, 0);
}

/* --write-gpu: every (phi, seed) of the run, both plain GPU methods, into o->write_gpu_path */
int run_write_gpu(const dot_opts *o)
{
    krill_status st = KRILL_OK;
    krill_ctx *gpu = NULL;
    krill_vec *xg = NULL, *yg = NULL;
    double *x = NULL, *y = NULL, *slot = NULL;
    dot_method m[2];
    FILE *f = NULL;
    const int64_t n = o->n;
    if (krill_cuda_device_count() < 1) {
        printf("bench_dot accuracy --write-gpu: skipped: no GPU\n");
        return EXIT_SKIPPED;
    }
    gpu_value_methods(m);
    KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CUDA, 0, &gpu));
    KRILL_ALLOC(x, n);
    KRILL_ALLOC(y, n);
    KRILL_TRY(krill_vec_create(gpu, n, &xg));
    KRILL_TRY(krill_vec_create(gpu, n, &yg));
    KRILL_MEM_ALLOC(gpu, slot, 1);
    f = fopen(o->write_gpu_path, "w");
    if (!f) {
        st = krill_error(KRILL_ERR_IO, "cannot write %s", o->write_gpu_path);
        goto cleanup;
    }
    fprintf(f, "# GPU: %s\n# phi seed column n value (column 0: cuBLAS ddot, 1: krill)\n",
            krill_ctx_describe(gpu));
    for (int p = 0; p < o->n_phis; p++)
        for (int t = 0; t < o->trials; t++) {
            double v[2];
            KRILL_TRY(krill_gen_dot_vectors(n, o->phis[p], (uint64_t)t + 1, x, y));
            KRILL_TRY(krill_vec_upload(xg, x));
            KRILL_TRY(krill_vec_upload(yg, y));
            for (int c = 0; c < 2; c++) {
                KRILL_TRY(dot_value(gpu, &m[c], n, xg, yg, NULL, slot, &v[c]));
                fprintf(f, "%a %d %d %lld %a\n", o->phis[p], t + 1, c, (long long)n, v[c]);
            }
        }
    if (fclose(f) != 0) st = krill_error(KRILL_ERR_IO, "cannot write %s", o->write_gpu_path);
    f = NULL;
    if (st == KRILL_OK)
        printf("wrote %s: %d phis x %d trials, n = %lld, on %s\n", o->write_gpu_path, o->n_phis,
               o->trials, (long long)n, krill_ctx_describe(gpu));
cleanup:
    if (st != KRILL_OK) fprintf(stderr, "bench_dot: %s\n", krill_last_error());
    if (f) fclose(f);
    krill_vec_destroy(&xg);
    krill_vec_destroy(&yg);
    krill_mem_free(gpu, slot);
    krill_ctx_destroy(&gpu);
    krill_free(x);
    krill_free(y);
    return st == KRILL_OK ? 0 : 1;
}

#ifdef KRILL_HAVE_MPFR
/* --read-gpu: values[(p trials + t) per + c] for the run's phi p, seed t + 1 and column
 * c < per (have[] marks the ones found), from lines "phi seed column n value" (DOT: per 2,
 * cuBLAS and krill; GEMV: per k, the entries of V'w), and the file's "# GPU:" line into
 * device (size cap). Lines of other phis, seeds or columns are skipped; another n, or a
 * line that does not parse, is an error naming the file and line. */
static krill_status gpu_values_read(const dot_opts *o, int per, double *values,
                                    unsigned char *have, char *device, size_t cap)
{
    krill_status st = KRILL_OK;
    char line[512];
    long line_no = 0;
    FILE *f = fopen(o->read_gpu_path, "r");
    if (!f) return krill_error(KRILL_ERR_IO, "cannot read %s", o->read_gpu_path);
    snprintf(device, cap, "(not named in the file)");
    while (fgets(line, sizeof line, f)) {
        double phi, v;
        int seed, c, p = 0;
        long long n;
        line_no++;
        if (!strncmp(line, "# GPU: ", 7)) {
            snprintf(device, cap, "%.*s", (int)strcspn(line + 7, "\n"), line + 7);
            continue;
        }
        if (line[0] == '#') continue;
        if (sscanf(line, "%la %d %d %lld %la", &phi, &seed, &c, &n, &v) != 5) {
            st = krill_error(KRILL_ERR_PARSE, "%s:%ld: expected \"phi seed column n value\"",
                             o->read_gpu_path, line_no);
            goto cleanup;
        }
        if (n != o->n) {
            st = krill_error(KRILL_ERR_ARG, "%s:%ld: n = %lld, this run's is %d",
                             o->read_gpu_path, line_no, n, o->n);
            goto cleanup;
        }
        while (p < o->n_phis && o->phis[p] != phi) p++;
        if (p == o->n_phis || seed < 1 || seed > o->trials || c < 0 || c >= per) continue;
        values[((size_t)p * o->trials + seed - 1) * per + c] = v;
        have[((size_t)p * o->trials + seed - 1) * per + c] = 1;
    }
    if (ferror(f)) st = krill_error(KRILL_ERR_IO, "cannot read %s", o->read_gpu_path);
cleanup:
    fclose(f);
    return st;
}
#endif

/* Columns of the accuracy table: where each runs. */
typedef struct acc_column {
    dot_method method;
    int on_gpu_only;             /* cuBLAS, krill plain on the GPU */
    int file_column;             /* on_gpu_only: its column in --read-gpu's file */
    double max_err[MAX_LIST];    /* per phi */
    long gpu_differs[MAX_LIST];  /* reproducible modes: GPU bits != CPU bits */
    long not_exact[MAX_LIST];    /* exact mode: trials whose value != MPFR's */
} acc_column;

static int acc_columns(const dot_opts *o, int have_gpu, acc_column *cols)
{
    int n = 0;
    char name[40];
    cols[n++] = (acc_column){ .method = dot_make_method("plain CPU (OpenMP)", DOT_VEC,
                                                    KRILL_REPRO_OFF, 0) };
    if (have_gpu) {
        dot_method m[2];
        gpu_value_methods(m);
        for (int c = 0; c < 2; c++)
            cols[n++] = (acc_column){ .method = m[c], .on_gpu_only = 1, .file_column = c };
    }
    for (int k = 0; k < o->n_slices; k++) {
        snprintf(name, sizeof name, "Ozaki S=%d", o->slices[k]);
        cols[n++] = (acc_column){ .method = dot_make_method(name, DOT_VEC, KRILL_REPRO_OZAKI,
                                                        o->slices[k]) };
    }
    for (int k = 0; k < o->n_slices; k++) {
        snprintf(name, sizeof name, "fast S=%d", o->slices[k]);
        cols[n++] = (acc_column){ .method = dot_make_method(name, DOT_VEC, KRILL_REPRO_OZAKI_FAST,
                                                        o->slices[k]) };
    }
    cols[n++] = (acc_column){ .method = dot_make_method("exact", DOT_VEC, KRILL_REPRO_OZAKI, 0) };
    return n;
}

static void acc_write_table(FILE *f, const dot_opts *o, const acc_column *cols, int n_cols,
                            int markdown)
{
    if (markdown) {
        fprintf(f, "| phi |");
        for (int c = 0; c < n_cols; c++) fprintf(f, " %s |", cols[c].method.name);
        fprintf(f, "\n|---:|");
        for (int c = 0; c < n_cols; c++) fprintf(f, "---:|");
        fprintf(f, "\n");
    } else {
        fprintf(f, "%-5s", "phi");
        for (int c = 0; c < n_cols; c++) fprintf(f, " %24s", cols[c].method.name);
        fprintf(f, "\n");
    }
    for (int p = 0; p < o->n_phis; p++) {
        fprintf(f, markdown ? "| %g |" : "%-5g", o->phis[p]);
        for (int c = 0; c < n_cols; c++) {
            char cell[48];
            if (cols[c].max_err[p] == 0.0)
                snprintf(cell, sizeof cell, "0");
            else
                snprintf(cell, sizeof cell, "%.2e", cols[c].max_err[p]);
            fprintf(f, markdown ? " %s |" : " %24s", cell);
        }
        fprintf(f, "\n");
    }
}

int run_accuracy(const dot_opts *o)
{
    int rc = 1;
#ifndef KRILL_HAVE_MPFR
    (void)o;
    (void)acc_columns;
    (void)acc_write_table;
    (void)dot_value;
    (void)dot_rel_error;
    printf("bench_dot accuracy: skipped: built without MPFR (install libmpfr-dev and "
           "reconfigure); the reference is MPFR's exact dot product\n");
    rc = EXIT_SKIPPED;
#else
    krill_status st = KRILL_OK;
    krill_ctx *cpu = NULL, *gpu = NULL;
    krill_vec *xc = NULL, *yc = NULL, *xg = NULL, *yg = NULL;
    double *x = NULL, *y = NULL, *slot_cpu = NULL, *slot_gpu = NULL;
    acc_column cols[MAX_METHODS];
    long failures = 0;
    const int from_file = o->read_gpu_path != NULL;
    const int have_gpu = !from_file && krill_cuda_device_count() > 0;
    const int64_t n = o->n;
    const int n_cols = acc_columns(o, have_gpu || from_file, cols);
    double *file_values = NULL;
    unsigned char *file_have = NULL;
    char file_device[256] = "";
    FILE *csv = NULL;

    KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CPU, o->threads, &cpu));
    KRILL_ALLOC(x, n);
    KRILL_ALLOC(y, n);
    KRILL_TRY(krill_vec_wrap(cpu, n, x, &xc));
    KRILL_TRY(krill_vec_wrap(cpu, n, y, &yc));
    KRILL_MEM_ALLOC(cpu, slot_cpu, 1);
    if (from_file) {
        file_values = calloc((size_t)o->n_phis * o->trials * 2, sizeof *file_values);
        file_have = calloc((size_t)o->n_phis * o->trials * 2, 1);
        if (!file_values || !file_have) {
            st = krill_error(KRILL_ERR_ALLOC, "GPU values of %d x %d trials", o->n_phis,
                             o->trials);
            goto cleanup;
        }
        KRILL_TRY(gpu_values_read(o, 2, file_values, file_have, file_device,
                                  sizeof file_device));
    }
    if (have_gpu) {
        KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CUDA, 0, &gpu));
        KRILL_TRY(krill_vec_create(gpu, n, &xg));
        KRILL_TRY(krill_vec_create(gpu, n, &yg));
        KRILL_MEM_ALLOC(gpu, slot_gpu, 1);
    }
    printf("accuracy: n = %lld, %d trials per phi (seeds 1..%d), CPU: %s%s%s\n",
           (long long)n, o->trials, o->trials, krill_ctx_describe(cpu), gpu ? ", GPU: " : "",
           gpu ? krill_ctx_describe(gpu)
               : from_file ? " (plain GPU columns from --read-gpu's file)"
                           : " (no GPU: GPU columns left out)");
    for (int p = 0; p < o->n_phis; p++) {
        for (int c = 0; c < n_cols; c++) cols[c].max_err[p] = 0.0;
        for (int t = 0; t < o->trials; t++) {
            double ref = 0.0;
            KRILL_TRY(krill_gen_dot_vectors(n, o->phis[p], (uint64_t)t + 1, x, y));
            if (reference_dot(n, x, y, &ref) != 0) {
                fprintf(stderr, "bench_dot: MPFR's sum rounded (phi %g, seed %d)\n", o->phis[p],
                        t + 1);
                failures++;
            }
            if (gpu) {
                KRILL_TRY(krill_vec_upload(xg, x));
                KRILL_TRY(krill_vec_upload(yg, y));
            }
            for (int c = 0; c < n_cols; c++) {
                acc_column *col = &cols[c];
                double value = 0.0, value_gpu = 0.0;
                if (col->on_gpu_only && from_file) {
                    const size_t at = ((size_t)p * o->trials + t) * 2 + col->file_column;
                    if (!file_have[at]) {
                        st = krill_error(KRILL_ERR_ARG, "%s: no value for phi %g, seed %d, "
                                         "column %d", o->read_gpu_path, o->phis[p], t + 1,
                                         col->file_column);
                        goto cleanup;
                    }
                    value = file_values[at];
                } else if (col->on_gpu_only) {
                    KRILL_TRY(dot_value(gpu, &col->method, n, xg, yg, NULL, slot_gpu, &value));
                } else {
                    KRILL_TRY(dot_value(cpu, &col->method, n, xc, yc, NULL, slot_cpu, &value));
                    if (gpu && dot_method_is_repro(&col->method)) {
                        KRILL_TRY(dot_value(gpu, &col->method, n, xg, yg, NULL, slot_gpu,
                                            &value_gpu));
                        if (memcmp(&value, &value_gpu, sizeof value) != 0) {
                            if (col->gpu_differs[p]++ == 0)
                                fprintf(stderr, "bench_dot: %s, phi %g, seed %d: CPU %a, "
                                        "GPU %a\n", col->method.name, o->phis[p], t + 1, value,
                                        value_gpu);
                            failures++;
                        }
                    }
                }
                const double err = dot_rel_error(value, ref);
                if (err > col->max_err[p]) col->max_err[p] = err;
                if (col->method.mode == KRILL_REPRO_OZAKI &&
                    col->method.slices == 0 && err != 0.0) {
                    if (col->not_exact[p]++ == 0)
                        fprintf(stderr, "bench_dot: exact mode, phi %g, seed %d: %a, MPFR "
                                "%a\n", o->phis[p], t + 1, value, ref);
                    failures++;
                }
            }
        }
        printf("phi %g done\n", o->phis[p]);
        fflush(stdout);
    }
    printf("\nmax relative error against MPFR (rounded to nearest), n = %lld, %d trials:\n",
           (long long)n, o->trials);
    acc_write_table(stdout, o, cols, n_cols, 0);
    if (o->md_path) {
        FILE *md = fopen(o->md_path, "w");
        if (!md) {
            st = krill_error(KRILL_ERR_IO, "cannot write %s", o->md_path);
            goto cleanup;
        }
        fprintf(md, "### DOT accuracy: max relative error against MPFR (n = %lld, %d trials "
                    "per phi)\n\nInputs (rand - 0.5) * exp(phi * randn) (krill_gen_dot_vectors,"
                    " seeds 1..%d). CPU: %s%s%s. Reproducible modes computed on the CPU%s. "
                    "0 = correctly rounded in every trial.\n\n",
                (long long)n, o->trials, o->trials, krill_ctx_describe(cpu),
                gpu ? "; GPU: " : from_file ? "; plain GPU columns from " : "",
                gpu ? krill_ctx_describe(gpu) : from_file ? o->read_gpu_path : "",
                gpu ? " and on the GPU (identical bits required)" : " (no GPU in this run)");
        if (from_file)
            fprintf(md, "The plain GPU columns were computed on %s by `bench_dot accuracy "
                        "--write-gpu` with the same n, phis and seeds.\n\n", file_device);
        acc_write_table(md, o, cols, n_cols, 1);
        fprintf(md, "\nChecks: %ld failure(s) (exact mode != MPFR, GPU bits != CPU bits, or "
                    "MPFR rounding).\n", failures);
        fclose(md);
    }
    if (o->csv_path) {
        csv = fopen(o->csv_path, "w");
        if (!csv) {
            st = krill_error(KRILL_ERR_IO, "cannot write %s", o->csv_path);
            goto cleanup;
        }
        fprintf(csv, "n,trials,phi,method,mode,slices,max_rel_error,gpu_differs,not_exact\n");
        for (int p = 0; p < o->n_phis; p++)
            for (int c = 0; c < n_cols; c++)
                fprintf(csv, "%lld,%d,%g,\"%s\",%d,%d,%.6e,%ld,%ld\n", (long long)n, o->trials,
                        o->phis[p], cols[c].method.name, (int)cols[c].method.mode,
                        cols[c].method.slices, cols[c].max_err[p], cols[c].gpu_differs[p],
                        cols[c].not_exact[p]);
    }
    if (failures) printf("wrong result: %ld check(s) failed (see stderr)\n", failures);
    rc = failures ? 1 : 0;
cleanup:
    if (st != KRILL_OK) fprintf(stderr, "bench_dot: %s\n", krill_last_error());
    if (csv) fclose(csv);
    free(file_values);
    free(file_have);
    krill_vec_destroy(&xc);
    krill_vec_destroy(&yc);
    krill_vec_destroy(&xg);
    krill_vec_destroy(&yg);
    krill_mem_free(cpu, slot_cpu);
    krill_mem_free(gpu, slot_gpu);
    krill_ctx_destroy(&cpu);
    krill_ctx_destroy(&gpu);
    krill_free(x);
    krill_free(y);
#endif
    return rc;
}

/* ---- GEMV accuracy ------------------------------------------------------------------------ */

/* y = V'w (k results in ctx's memory, the host on the CPU) in the column's mode. */
static krill_status gemv_values(krill_ctx *ctx, const dot_method *m, int64_t n, int k,
                                const double *v, const double *w, double *y)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(dot_set_mode(ctx, m));
    if (dot_method_is_repro(m)) {
        KRILL_TRY(krill_ozaki_mdot(ctx, n, k, v, n, w, y));
    } else {
        for (int j = 0; j < k; j++) KRILL_TRY(krill_blas_dot(ctx, n, v + (int64_t)j * n, w, y + j));
    }
cleanup:
    return st;
}

/* Trial t's V (n x k, column j: krill_gen_dot_vectors' x for seed 1000 (t + 1) + j) and w
 * (its y for seed t + 1) for phi; tmp: n doubles of scratch. */
static krill_status gemv_inputs(int64_t n, int k, double phi, int t, double *v, double *w,
                                double *tmp)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_gen_dot_vectors(n, phi, (uint64_t)t + 1, tmp, w));
    for (int j = 0; j < k; j++)
        KRILL_TRY(krill_gen_dot_vectors(n, phi, 1000 * ((uint64_t)t + 1) + j,
                                        v + (int64_t)j * n, tmp));
cleanup:
    return st;
}

/* gemv --write-gpu: V'w by cuBLAS dgemv (krill_cuda_gemv_t) for every (phi, seed) of the
 * run, one line "phi seed column n value" per entry of V'w (%a), after a "# GPU:" line */
int run_gemv_write_gpu(const dot_opts *o)
{
    int rc = 1;
#ifndef KRILL_HAVE_CUDA
    (void)o;
    (void)gemv_inputs;
    printf("bench_dot gemv --write-gpu: skipped: built without CUDA\n");
    rc = EXIT_SKIPPED;
#else
    krill_status st = KRILL_OK;
    krill_ctx *gpu = NULL;
    double *v = NULL, *w = NULL, *tmp = NULL, *y = NULL, *dv = NULL, *dw = NULL, *dy = NULL;
    FILE *f = NULL;
    const int64_t n = o->n;
    const int k = o->k;
    if (krill_cuda_device_count() < 1) {
        printf("bench_dot gemv --write-gpu: skipped: no GPU\n");
        return EXIT_SKIPPED;
    }
    KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CUDA, 0, &gpu));
    KRILL_ALLOC(v, n * k);
    KRILL_ALLOC(w, n);
    KRILL_ALLOC(tmp, n);
    KRILL_ALLOC(y, k);
    KRILL_MEM_ALLOC(gpu, dv, n * k);
    KRILL_MEM_ALLOC(gpu, dw, n);
    KRILL_MEM_ALLOC(gpu, dy, k);
    f = fopen(o->write_gpu_path, "w");
    if (!f) {
        st = krill_error(KRILL_ERR_IO, "cannot write %s", o->write_gpu_path);
        goto cleanup;
    }
    fprintf(f, "# GPU: %s\n# phi seed column n cublas_dgemv\n", krill_ctx_describe(gpu));
    for (int p = 0; p < o->n_phis; p++)
        for (int t = 0; t < o->trials; t++) {
            KRILL_TRY(gemv_inputs(n, k, o->phis[p], t, v, w, tmp));
            KRILL_TRY(krill_mem_upload(gpu, dv, v, (size_t)(n * k) * sizeof *v));
            KRILL_TRY(krill_mem_upload(gpu, dw, w, (size_t)n * sizeof *w));
            KRILL_TRY(krill_cuda_gemv_t(gpu, n, k, dv, n, dw, dy));
            KRILL_TRY(krill_mem_download(gpu, y, dy, (size_t)k * sizeof *y));
            for (int j = 0; j < k; j++)
                fprintf(f, "%a %d %d %lld %a\n", o->phis[p], t + 1, j, (long long)n, y[j]);
        }
    if (fclose(f) != 0) st = krill_error(KRILL_ERR_IO, "cannot write %s", o->write_gpu_path);
    f = NULL;
    if (st == KRILL_OK)
        printf("wrote %s: %d phis x %d trials x %d columns, n = %lld, on %s\n",
               o->write_gpu_path, o->n_phis, o->trials, k, (long long)n,
               krill_ctx_describe(gpu));
cleanup:
    if (st != KRILL_OK) fprintf(stderr, "bench_dot: %s\n", krill_last_error());
    if (f) fclose(f);
    krill_mem_free(gpu, dv);
    krill_mem_free(gpu, dw);
    krill_mem_free(gpu, dy);
    krill_ctx_destroy(&gpu);
    krill_free(v);
    krill_free(w);
    krill_free(tmp);
    krill_free(y);
    rc = st == KRILL_OK ? 0 : 1;
#endif
    return rc;
}

int run_gemv_accuracy(const dot_opts *o)
{
    int rc = 1;
#ifndef KRILL_HAVE_MPFR
    (void)o;
    (void)gemv_values;
    printf("bench_dot gemv: skipped: built without MPFR (the GPU column: --write-gpu)\n");
    rc = EXIT_SKIPPED;
#else
    krill_status st = KRILL_OK;
    krill_ctx *cpu = NULL;
    double *v = NULL, *w = NULL, *tmp = NULL, *y = NULL, *ref = NULL;
    acc_column cols[MAX_METHODS];
    long failures = 0;
    const int64_t n = o->n;
    const int k = o->k, from_file = o->read_gpu_path != NULL;
    int n_cols = acc_columns(o, 0, cols);
    double *file_values = NULL;
    unsigned char *file_have = NULL;
    char file_device[256] = "";
    KRILL_TRY(bench_ctx_create(KRILL_DEVICE_CPU, o->threads, &cpu));
    if (from_file) {   /* cuBLAS dgemv's column, after plain CPU */
        const size_t count = (size_t)o->n_phis * o->trials * k;
        memmove(&cols[2], &cols[1], (size_t)(n_cols - 1) * sizeof *cols);
        cols[1] = (acc_column){ .method = dot_make_method("plain GPU (cuBLAS dgemv)", DOT_CUBLAS,
                                                      KRILL_REPRO_OFF, 0), .on_gpu_only = 1 };
        n_cols++;
        file_values = calloc(count, sizeof *file_values);
        file_have = calloc(count, 1);
        if (!file_values || !file_have) {
            st = krill_error(KRILL_ERR_ALLOC, "GPU values of %zu entries", count);
            goto cleanup;
        }
        KRILL_TRY(gpu_values_read(o, k, file_values, file_have, file_device,
                                  sizeof file_device));
    }
    KRILL_ALLOC(v, n * k);
    KRILL_ALLOC(w, n);
    KRILL_ALLOC(tmp, n);
    KRILL_ALLOC(y, k);
    KRILL_ALLOC(ref, k);
    printf("gemv accuracy: V'w, V %lld x %d, %d trials per phi, CPU: %s\n", (long long)n, k,
           o->trials, krill_ctx_describe(cpu));
    for (int p = 0; p < o->n_phis; p++) {
        for (int c = 0; c < n_cols; c++) cols[c].max_err[p] = 0.0;
        for (int t = 0; t < o->trials; t++) {
            KRILL_TRY(gemv_inputs(n, k, o->phis[p], t, v, w, tmp));
            for (int j = 0; j < k; j++)
                if (reference_dot(n, v + (int64_t)j * n, w, &ref[j]) != 0) failures++;
            for (int c = 0; c < n_cols; c++) {
                acc_column *col = &cols[c];
                if (col->on_gpu_only) {
                    const size_t at = ((size_t)p * o->trials + t) * k;
                    for (int j = 0; j < k; j++) {
                        if (!file_have[at + j]) {
                            st = krill_error(KRILL_ERR_ARG, "%s: no value for phi %g, seed %d, "
                                             "column %d", o->read_gpu_path, o->phis[p], t + 1, j);
                            goto cleanup;
                        }
                        y[j] = file_values[at + j];
                    }
                } else {
                    KRILL_TRY(gemv_values(cpu, &col->method, n, k, v, w, y));
                }
                for (int j = 0; j < k; j++) {
                    const double err = dot_rel_error(y[j], ref[j]);
                    if (err > col->max_err[p]) col->max_err[p] = err;
                    if (col->method.mode == KRILL_REPRO_OZAKI && col->method.slices == 0 &&
                        err != 0.0 && col->not_exact[p]++ == 0) {
                        fprintf(stderr, "bench_dot gemv: exact mode, phi %g, trial %d, column "
                                "%d: %a, MPFR %a\n", o->phis[p], t + 1, j, y[j], ref[j]);
                        failures++;
                    }
                }
            }
        }
        printf("phi %g done\n", o->phis[p]);
        fflush(stdout);
    }
    printf("\nmax relative error against MPFR (rounded to nearest), V'w, V %lld x %d, "
           "%d trials:\n", (long long)n, k, o->trials);
    acc_write_table(stdout, o, cols, n_cols, 0);
    if (o->md_path) {
        FILE *md = fopen(o->md_path, "w");
        if (!md) {
            st = krill_error(KRILL_ERR_IO, "cannot write %s", o->md_path);
            goto cleanup;
        }
        fprintf(md, "### GEMV accuracy: max relative error of V'w against MPFR (V %lld x %d, "
                    "%d trials per phi)\n\nCPU: %s. Reproducible modes through "
                    "krill_ozaki_mdot. 0 = correctly rounded in every entry.\n\n",
                (long long)n, k, o->trials, krill_ctx_describe(cpu));
        if (from_file)
            fprintf(md, "The cuBLAS column was computed on %s by `bench_dot gemv --write-gpu` "
                        "with the same n, k, phis and seeds (%s).\n\n", file_device,
                    o->read_gpu_path);
        acc_write_table(md, o, cols, n_cols, 1);
        fprintf(md, "\nChecks: %ld failure(s).\n", failures);
        fclose(md);
    }
    if (failures) printf("wrong result: %ld check(s) failed (see stderr)\n", failures);
    rc = failures ? 1 : 0;
cleanup:
    if (st != KRILL_OK) fprintf(stderr, "bench_dot: %s\n", krill_last_error());
    free(file_values);
    free(file_have);
    krill_ctx_destroy(&cpu);
    krill_free(v);
    krill_free(w);
    krill_free(tmp);
    krill_free(y);
    krill_free(ref);
#endif
    return rc;
}
