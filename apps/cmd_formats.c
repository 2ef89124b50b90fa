/* apps/cmd_formats.c - `krill formats`: build one matrix in every storage format of a
 * device and compare them: bytes stored, build time, SpMV time, bandwidth, and y against
 * the plain CSR reference. formats_report.c prints the table, JSON and CSV; svg.c draws
 * the chart.
 *
 * Accuracy: each format's y = A*x (x random in [-1, 1)) is compared row by row with the
 * serial reference krill_csr_spmv_ref. Summing row i's len_i products in any order (with
 * or without FMA) errs by at most gamma_len (|A| |x|)_i, gamma_n = n u / (1 - n u),
 * u = 2^-53; two such sums differ by at most 2 gamma_K, K the longest row. A larger
 * difference is a wrong result, not rounding: the row is flagged and the exit code is 3. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli_impl.h"
#include "formats/formats_impl.h"   /* krill_csr_row_stats, krill_csr_run_stats */

/* Defaults of --warmup and --reps: enough runs for a stable median of a microsecond GPU
 * SpMV, few enough that a matrix of 10^8 nonzeros on a 2-core CPU takes seconds per format. */
#define DEFAULT_WARMUP 5
#define DEFAULT_REPS 25
#define MAX_FORMATS 64
/* Seed of the deterministic random x in [-1, 1). */
#define RANDOM_X_SEED 0x853C49E6748FEA9Bull

static const char *const device_names[] = { "auto", "cpu", "gpu", NULL };
static const krill_device device_types[] = { KRILL_DEVICE_AUTO, KRILL_DEVICE_CPU,
                                             KRILL_DEVICE_CUDA };
static const char *const reorder_names[] = { "none", "rcm", NULL };

/* The GPU CSR kernels of the SpMV paper's section 3, forced, so that the table shows what
 * `csr`'s automatic choice gains: a thread per row with cyclic or block assignment of rows,
 * a warp per row, and lanes per row from the mean row length. */
static const char *const gpu_csr_variants[] = { "csr:cyclic", "csr:block", "csr:warp",
                                                "csr:vector", NULL };

static void formats_usage(FILE *out)
{
    fprintf(out,
            "usage: krill formats A.mtx [options]\n"
            "       krill formats --gen SPEC [options]\n"
            "\n"
            "Build A in every storage format available on the device and compare them: bytes\n"
            "stored, build time, SpMV time, bandwidth, GFLOP/s, and y = A*x against the CSR\n"
            "reference. A format that cannot hold A (e.g. ell past 2^31 entries) gets a row\n"
            "that says why.\n"
            "\n"
            "matrix\n"
            "  --gen SPEC          generate A (see krill gen --list) instead of reading a file\n"
            "  --reorder none|rcm  renumber A first with reverse Cuthill-McKee (default none);\n"
            "                      the header shows the half bandwidth before and after\n"
            "formats\n"
            "  --formats LIST      comma-separated names, e.g. csr,ell,csr:warp,auto (krill\n"
            "                      info lists the formats). Default: every registered format\n"
            "                      with an implementation on the device (on the GPU that\n"
            "                      includes cusparse, and the CSR kernels are also shown forced:\n"
            "                      csr:cyclic, csr:block, csr:warp, csr:vector), and auto (the\n"
            "                      format krill would choose)\n"
            "where\n"
            "  --device auto|cpu|gpu   default auto: the GPU when one is present\n"
            "  --threads N         OpenMP threads (default: OpenMP's)\n"
            "timing\n"
            "  --warmup W          untimed SpMVs before timing (default %d)\n"
            "  --reps R            timed SpMVs, the median is reported (default %d)\n"
            "output\n"
            "  --json FILE|-       one JSON object (- = stdout)\n"
            "  --csv FILE|-        a header line, then one line per format (- = stdout)\n"
            "  --plot FILE.svg     two-panel bar chart: memory (MB) and SpMV time (us)\n"
            "  --quiet             no table on stdout (nor when an output goes to -)\n"
            "\n"
            "columns\n"
            "  variant       the kernel or layout the format settled on\n"
            "  MB            matrix data stored (values and indices), 10^6 bytes\n"
            "  vs csr        bytes stored / csr's bytes stored\n"
            "  build ms      krill_mat_create, wall clock, host-to-device copy included\n"
            "  spmv us       y = A*x, median of R runs (CUDA events on the GPU, the host clock\n"
            "                on the CPU); * marks the fastest (auto's row aside)\n"
            "  GB/s          bytes moved / time, bytes moved = matrix bytes + 8 n_cols (x read\n"
            "                once) + 8 n_rows (y written once): the least traffic possible\n"
            "  GFLOP/s       2 nnz / time\n"
            "  max rel diff  max over rows of |y_i - yref_i| / (|A| |x|)_i, x random in [-1, 1),\n"
            "                yref from the serial CSR reference; ! marks a difference above\n"
            "                2 gamma_K (K the longest row), more than rounding can explain\n"
            "  vs cusparse   (GPU) cusparse's time / this time: above 1 is faster\n"
            "The matrix lines give the RBP paper's quantities: N rows, N_z nonzeros, K longest\n"
            "row; N_val values in runs of >= 2 consecutive columns, N_col run column indices\n"
            "(2 per run), N_non isolated entries, K_v and K_c their most in one row. JSON and\n"
            "CSV also give each format's own stats (zero where a format has no such quantity).\n"
            "\n"
            "exit codes: 0 done, 2 bad usage or bad input, or an output could not be written,\n"
            "            3 krill or the device failed (an SpMV failed, or a format's y is off by\n"
            "            more than rounding)\n",
            DEFAULT_WARMUP, DEFAULT_REPS);
}

typedef struct formats_args {
    const char *matrix_path;     /* positional A.mtx, or NULL */
    const char *gen_spec;        /* --gen, or NULL */
    const char *formats;         /* --formats, NULL = the default list */
    const char *json_path, *csv_path, *plot_path;
    int device;                  /* index in device_names */
    int reorder;                 /* index in reorder_names */
    int threads;                 /* 0 = OpenMP's default */
    int warmup, reps;
    int quiet, help;
} formats_args;

/* Where the outputs go; stdout is shared, so at most one of them may be "-". */
typedef struct formats_outputs {
    krill_outfile json, csv, plot;   /* .f == NULL: not asked for */
    int table;                   /* print the table on stdout */
} formats_outputs;

typedef struct format_list {
    int n;
    char names[MAX_FORMATS][64];
} format_list;

static int parse_formats_args(int argc, char **argv, formats_args *args)
{
    const double int_max = 2147483647.0;
    int n_positional = 0;
    memset(args, 0, sizeof *args);
    args->warmup = DEFAULT_WARMUP;
    args->reps = DEFAULT_REPS;
    const cli_option options[] = {
        { .name = "--help", .kind = CLI_FLAG, .flag = &args->help },
        { .name = "-h", .kind = CLI_FLAG, .flag = &args->help },
        { .name = "--gen", .kind = CLI_STRING, .string = &args->gen_spec },
        { .name = "--formats", .kind = CLI_STRING, .string = &args->formats },
        { .name = "--json", .kind = CLI_STRING, .string = &args->json_path },
        { .name = "--csv", .kind = CLI_STRING, .string = &args->csv_path },
        { .name = "--plot", .kind = CLI_STRING, .string = &args->plot_path },
        { .name = "--device", .kind = CLI_CHOICE, .integer = &args->device,
          .choices = device_names },
        { .name = "--reorder", .kind = CLI_CHOICE, .integer = &args->reorder,
          .choices = reorder_names },
        { .name = "--threads", .kind = CLI_INT, .integer = &args->threads, .min = 1,
          .max = KRILL_MAX_THREADS },
        { .name = "--warmup", .kind = CLI_INT, .integer = &args->warmup, .min = 0,
          .max = int_max },
        { .name = "--reps", .kind = CLI_INT, .integer = &args->reps, .min = 1,
          .max = int_max },
        { .name = "--quiet", .kind = CLI_FLAG, .flag = &args->quiet },
    };
    int rc = cli_parse(argc, argv, options, sizeof options / sizeof options[0],
                       &args->matrix_path, 1, &n_positional);
    if (rc != CLI_EXIT_OK || args->help) goto done;
    if (args->matrix_path && args->gen_spec) {
        fprintf(stderr, "krill formats: give either a matrix file or --gen, not both\n");
        rc = CLI_EXIT_USAGE;
    } else if (!args->matrix_path && !args->gen_spec) {
        fprintf(stderr, "krill formats: give a matrix file or --gen SPEC (see krill formats "
                        "--help)\n");
        rc = CLI_EXIT_USAGE;
    } else {
        int to_stdout = 0;
        const char *paths[] = { args->json_path, args->csv_path, args->plot_path };
        for (int k = 0; k < 3; k++) to_stdout += paths[k] && !strcmp(paths[k], "-");
        if (to_stdout > 1) {
            fprintf(stderr, "krill formats: only one of --json, --csv and --plot can write "
                            "to stdout (-)\n");
            rc = CLI_EXIT_USAGE;
        }
    }
done:
    return rc;
}

/* Open `path` for writing ("-" = stdout) into *out; nothing when path is NULL. */
static int open_output(const char *option, const char *path, krill_outfile *out)
{
    int rc = CLI_EXIT_OK;
    if (path && !strcmp(path, "-"))
        cli_output_stdout(out);
    else if (path)
        rc = cli_output_open(out, option, path);
    return rc;
}

static int open_outputs(const formats_args *args, formats_outputs *out)
{
    int rc = open_output("--json", args->json_path, &out->json);
    if (rc == CLI_EXIT_OK) rc = open_output("--csv", args->csv_path, &out->csv);
    if (rc == CLI_EXIT_OK) rc = open_output("--plot", args->plot_path, &out->plot);
    out->table = !args->quiet && out->json.f != stdout && out->csv.f != stdout &&
                 out->plot.f != stdout;
    return rc;
}

/* Put the written outputs in place (commit) or discard them; the first failure's code. */
static int close_outputs(formats_outputs *out, int commit)
{
    int rc_json = cli_output_close(&out->json, "--json", commit);
    int rc_csv = cli_output_close(&out->csv, "--csv", commit);
    int rc_plot = cli_output_close(&out->plot, "--plot", commit);
    return rc_json != CLI_EXIT_OK ? rc_json : rc_csv != CLI_EXIT_OK ? rc_csv : rc_plot;
}

/* Read the file or generate --gen SPEC; with --reorder rcm renumber it (square only). */
static int load_matrix(const formats_args *args, cli_formats_report *report, krill_csr **csr)
{
    int rc = CLI_EXIT_OK;
    int32_t *perm = NULL;
    krill_csr *permuted = NULL;
    if (args->matrix_path) {
        report->source = args->matrix_path;
        report->source_note = "Matrix Market file";
        CLI_TRY(krill_mm_read(args->matrix_path, csr, NULL));
    } else {
        report->source = args->gen_spec;
        report->source_note = "generated";
        CLI_TRY(krill_gen(args->gen_spec, csr));
    }
    report->reordered = args->reorder == 1;
    if (report->reordered && (*csr)->n_rows != (*csr)->n_cols) {
        rc = cli_error(CLI_EXIT_USAGE, "--reorder rcm: %s is rectangular (%ld x %ld); "
                       "renumbering needs a square matrix", report->source,
                       (long)(*csr)->n_rows, (long)(*csr)->n_cols);
        goto cleanup;
    }
    report->bandwidth_before = krill_csr_bandwidth(*csr);
    if (report->reordered) {
        perm = malloc((size_t)((*csr)->n_rows > 0 ? (*csr)->n_rows : 1) * sizeof *perm);
        if (!perm) {
            rc = cli_error(CLI_EXIT_FAILURE, "out of memory for a permutation of %ld rows",
                           (long)(*csr)->n_rows);
            goto cleanup;
        }
        CLI_TRY(krill_order_rcm(*csr, perm));
        CLI_TRY(krill_csr_permute(*csr, perm, &permuted));
        krill_csr_destroy(csr);
        *csr = permuted;
        permuted = NULL;
    }
    report->bandwidth_after = report->reordered ? krill_csr_bandwidth(*csr)
                                                : report->bandwidth_before;
    krill_csr_row_stats(*csr, &report->matrix);
    krill_csr_run_stats(*csr, 0, &report->matrix);
cleanup:
    if (rc != CLI_EXIT_OK) krill_csr_destroy(csr);
    krill_csr_destroy(&permuted);
    free(perm);
    return rc;
}

/* Try `name` on a 1x1 identity: it builds in every format the device implements. */
static krill_status probe_format(krill_ctx *ctx, const char *name)
{
    int64_t row_ptr[2] = { 0, 1 };
    int32_t col[1] = { 0 };
    double val[1] = { 1.0 };
    const krill_csr one = { 1, 1, 1, row_ptr, col, val };
    krill_mat *mat = NULL;
    krill_status st = krill_mat_create(ctx, &one, name, &mat);
    krill_mat_destroy(&mat);
    return st;
}

static int list_has(const format_list *list, const char *name)
{
    int found = 0;
    for (int k = 0; k < list->n && !found; k++) found = !strcmp(list->names[k], name);
    return found;
}

/* Append `name` when the device implements it; otherwise, for registry names, note it in
 * `missing` ("cusparse" on the CPU). */
static void add_if_available(krill_ctx *ctx, const char *name, int registered,
                             format_list *list, char *missing, size_t missing_len)
{
    const int wanted = list->n < MAX_FORMATS && !list_has(list, name);
    if (wanted && probe_format(ctx, name) == KRILL_OK) {
        snprintf(list->names[list->n++], sizeof list->names[0], "%s", name);
    } else if (wanted && registered) {
        size_t used = strlen(missing);
        snprintf(missing + used, missing_len - used, "%s%s", used ? ", " : "", name);
    }
    krill_clear_error();
}

/* The default list: the registry's formats in its order (the forced CSR kernels after csr
 * on the GPU), then auto. */
static void default_formats(krill_ctx *ctx, format_list *list, char *missing,
                            size_t missing_len)
{
    int on_gpu = krill_ctx_device(ctx) == KRILL_DEVICE_CUDA;
    for (const char *const *name = krill_format_names(); *name; name++) {
        add_if_available(ctx, *name, 1, list, missing, missing_len);
        if (on_gpu && !strcmp(*name, "csr"))
            for (const char *const *variant = gpu_csr_variants; *variant; variant++)
                add_if_available(ctx, *variant, 0, list, missing, missing_len);
    }
    add_if_available(ctx, "auto", 0, list, missing, missing_len);
}

/* --formats LIST: names separated by commas, none empty, none twice, each one a format
 * krill knows (an unknown name or variant is a usage error; a format that the device does
 * not implement stays, and its row says so). */
static int explicit_formats(krill_ctx *ctx, const char *text, format_list *list)
{
    int rc = CLI_EXIT_OK;
    const char *p = text;
    while (rc == CLI_EXIT_OK) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            rc = cli_error(CLI_EXIT_USAGE, "--formats: empty name in '%s'", text);
        } else if (len >= sizeof list->names[0]) {
            rc = cli_error(CLI_EXIT_USAGE, "--formats: name too long: '%.*s'", (int)len, p);
        } else if (list->n >= MAX_FORMATS) {
            rc = cli_error(CLI_EXIT_USAGE, "--formats: more than %d names", MAX_FORMATS);
        } else {
            char *name = list->names[list->n];
            memcpy(name, p, len);
            name[len] = '\0';
            if (list_has(list, name))
                rc = cli_error(CLI_EXIT_USAGE, "--formats: '%s' is given twice", name);
            else if (probe_format(ctx, name) == KRILL_ERR_ARG)
                rc = cli_error(CLI_EXIT_USAGE, "--formats: %s", krill_last_error());
            else
                list->n++;
            krill_clear_error();
        }
        if (p[len] == '\0') break;
        p += len + 1;
    }
    return rc;
}

/* Row i of the reference: yref = A x (serial CSR) and (|A| |x|)_i, the scale of its
 * rounding error. */
typedef struct reference {
    double *x, *y_ref, *abs_ax, *y;   /* y: room for a format's result */
} reference;

static int make_reference(const krill_csr *a, reference *ref)
{
    int rc = CLI_EXIT_OK;
    size_t n_cols = (size_t)(a->n_cols > 0 ? a->n_cols : 1);
    size_t n_rows = (size_t)(a->n_rows > 0 ? a->n_rows : 1);
    uint64_t state = RANDOM_X_SEED;
    ref->x = malloc(n_cols * sizeof *ref->x);
    ref->y_ref = malloc(n_rows * sizeof *ref->y_ref);
    ref->abs_ax = malloc(n_rows * sizeof *ref->abs_ax);
    ref->y = malloc(n_rows * sizeof *ref->y);
    if (!ref->x || !ref->y_ref || !ref->abs_ax || !ref->y) {
        rc = cli_error(CLI_EXIT_FAILURE, "out of memory for 4 vectors of %zu doubles",
                       n_rows > n_cols ? n_rows : n_cols);
        goto done;
    }
    for (int32_t j = 0; j < a->n_cols; j++) {      /* xorshift64*; its top 53 bits */
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        uint64_t bits = (state * 0x2545F4914F6CDD1Dull) >> 11;
        ref->x[j] = 2.0 * ((double)bits / 9007199254740992.0) - 1.0;
    }
    krill_csr_spmv_ref(a, 1.0, ref->x, 0.0, ref->y_ref);
    for (int32_t i = 0; i < a->n_rows; i++) {
        double sum = 0.0;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            sum += fabs(a->val[p]) * fabs(ref->x[a->col[p]]);
        ref->abs_ax[i] = sum;
    }
done:
    return rc;
}

static void free_reference(reference *ref)
{
    free(ref->x);
    free(ref->y_ref);
    free(ref->abs_ax);
    free(ref->y);
}

/* max_i |y_i - yref_i| / (|A| |x|)_i; a row with (|A| |x|)_i = 0 must give exactly 0
 * (else Inf); NaN anywhere gives NaN. */
static double max_rel_diff(const reference *ref, int64_t n_rows)
{
    double worst = 0.0;
    for (int64_t i = 0; i < n_rows; i++) {
        double d = fabs(ref->y[i] - ref->y_ref[i]);
        double r = ref->abs_ax[i] > 0.0 ? d / ref->abs_ax[i] : d == 0.0 ? 0.0 : INFINITY;
        if (!isnan(worst) && (isnan(r) || r > worst)) worst = r;
    }
    return worst;
}

/* 2 gamma_K, gamma_K = K u / (1 - K u), u = 2^-53. */
static double rounding_bound(int64_t k)
{
    double ku = (double)k * 0x1p-53;
    return 2.0 * ku / (1.0 - ku);
}

static void note_error(cli_format_row *row, const char *what)
{
    const char *message = krill_last_error();
    snprintf(row->error, sizeof row->error, "%s%s", what, message[0] ? message : "failed");
    krill_clear_error();
}

/* Build `row->name` on ctx, check y = A x against the reference, time the SpMV. A build
 * that fails is a row with the reason; an SpMV or timing that fails (a failure of krill or
 * the device) sets row->spmv_failed. */
static void measure_format(krill_ctx *ctx, const krill_csr *a, reference *ref, krill_vec *x,
                          krill_vec *y, const formats_args *args, cli_format_row *row)
{
    krill_mat *mat = NULL;
    double t0 = cli_seconds();
    krill_status st = krill_mat_create(ctx, a, row->name, &mat);
    if (st == KRILL_OK) st = krill_ctx_sync(ctx);
    row->build_seconds = cli_seconds() - t0;
    if (st != KRILL_OK) {
        note_error(row, "");
        goto cleanup;
    }
    krill_mat_stats(mat, &row->stats);
    if (krill_mat_choice(mat)) {
        snprintf(row->chosen, sizeof row->chosen, "%s", krill_mat_format(mat));
        snprintf(row->choice, sizeof row->choice, "%s", krill_mat_choice(mat));
    }
    st = krill_mat_spmv(mat, 1.0, x, 0.0, y);
    if (st == KRILL_OK) st = krill_vec_download(y, ref->y);
    if (st == KRILL_OK) {
        row->max_rel_diff = max_rel_diff(ref, a->n_rows);
        st = krill_mat_time_spmv(mat, args->warmup, args->reps, &row->spmv_seconds);
    }
    if (st != KRILL_OK) {
        note_error(row, "SpMV failed: ");
        row->spmv_failed = 1;
        goto cleanup;
    }
    row->measured = 1;
cleanup:
    krill_mat_destroy(&mat);
}

/* The rows the ratios refer to: csr (exactly, else the first csr variant) and cusparse;
 * the fastest measured row, auto's aside (it repeats the format it chose). */
static void find_reference_rows(cli_formats_report *report)
{
    report->csr_row = report->cusparse_row = report->fastest_row = -1;
    for (int k = 0; k < report->n_rows; k++) {
        const cli_format_row *row = &report->rows[k];
        size_t base = strcspn(row->name, ":");
        if (!strcmp(row->name, "csr") ||
            (report->csr_row < 0 && base == 3 && !strncmp(row->name, "csr", 3)))
            report->csr_row = k;
        if (report->cusparse_row < 0 && base == 8 && !strncmp(row->name, "cusparse", 8))
            report->cusparse_row = k;
        if (row->measured && !row->chosen[0] &&
            (report->fastest_row < 0 ||
             row->spmv_seconds < report->rows[report->fastest_row].spmv_seconds))
            report->fastest_row = k;
    }
}

/* Measure every format of the list into report->rows. *bad counts the rows whose SpMV
 * failed or whose y is wrong. Returns an exit code: not CLI_EXIT_OK when the measurement
 * could not be set up (then there is no table). */
static int measure_all(krill_ctx *ctx, const krill_csr *a, const format_list *list,
                       const formats_args *args, cli_formats_report *report, int *bad)
{
    int rc = CLI_EXIT_OK;
    reference ref = { 0 };
    krill_vec *x = NULL, *y = NULL;
    int live = !args->quiet && isatty(fileno(stderr));
    report->rows = calloc((size_t)(list->n > 0 ? list->n : 1), sizeof *report->rows);
    if (!report->rows) {
        rc = cli_error(CLI_EXIT_FAILURE, "out of memory for %d table rows", list->n);
        goto cleanup;
    }
    rc = make_reference(a, &ref);
    if (rc != CLI_EXIT_OK) goto cleanup;
    CLI_TRY(krill_vec_create(ctx, a->n_cols, &x));
    CLI_TRY(krill_vec_create(ctx, a->n_rows, &y));
    CLI_TRY(krill_vec_upload(x, ref.x));
    for (int k = 0; k < list->n; k++) {
        cli_format_row *row = &report->rows[report->n_rows++];
        snprintf(row->name, sizeof row->name, "%s", list->names[k]);
        if (live) fprintf(stderr, "\r  measuring %-40s", row->name);
        measure_format(ctx, a, &ref, x, y, args, row);
        *bad += row->spmv_failed ||
                (row->measured && !(row->max_rel_diff <= report->diff_bound));
    }
    if (live) fprintf(stderr, "\r%-52s\r", "");
    find_reference_rows(report);
cleanup:
    krill_vec_destroy(&x);
    krill_vec_destroy(&y);
    free_reference(&ref);
    return rc;
}

/* One line on stderr per format whose SpMV failed or whose y is wrong; CLI_EXIT_FAILURE. */
static int report_bad_rows(const cli_formats_report *report)
{
    for (int k = 0; k < report->n_rows; k++) {
        const cli_format_row *row = &report->rows[k];
        if (row->spmv_failed)
            fprintf(stderr, "krill: %s: %s\n", row->name, row->error);
        else if (row->measured && !(row->max_rel_diff <= report->diff_bound))
            fprintf(stderr, "krill: %s: y differs from the CSR reference by %.3g relative to "
                    "|A||x| (rounding explains at most %.3g): a wrong result\n", row->name,
                    row->max_rel_diff, report->diff_bound);
    }
    return CLI_EXIT_FAILURE;
}

static int formats_run(int argc, char **argv)
{
    formats_args args;
    formats_outputs out;
    cli_formats_report report;
    krill_ctx_opts ctx_opts = KRILL_CTX_OPTS_INIT;
    krill_ctx *ctx = NULL;
    krill_csr *csr = NULL;
    format_list *list = NULL;
    char missing[512] = "";
    int bad_rows = 0, close_rc = CLI_EXIT_OK, written = 0;
    memset(&report, 0, sizeof report);
    memset(&out, 0, sizeof out);
    int rc = parse_formats_args(argc, argv, &args);
    if (rc != CLI_EXIT_OK || args.help) {
        if (rc == CLI_EXIT_OK) formats_usage(stdout);
        goto cleanup;
    }
    rc = open_outputs(&args, &out);
    if (rc != CLI_EXIT_OK) goto cleanup;
    rc = load_matrix(&args, &report, &csr);
    if (rc != CLI_EXIT_OK) goto cleanup;
    report.warmup = args.warmup;
    report.reps = args.reps;
    report.diff_bound = rounding_bound(report.matrix.max_row_nnz);

    ctx_opts.device = device_types[args.device];
    ctx_opts.threads = args.threads;
    CLI_TRY(krill_ctx_create(&ctx_opts, &ctx));
    report.device = krill_ctx_describe(ctx);
    report.on_gpu = krill_ctx_device(ctx) == KRILL_DEVICE_CUDA;
    report.clock = report.on_gpu ? "CUDA events" : "host clock";
    list = calloc(1, sizeof *list);
    if (!list) {
        rc = cli_error(CLI_EXIT_FAILURE, "out of memory for the format list");
        goto cleanup;
    }
    if (args.formats) {
        rc = explicit_formats(ctx, args.formats, list);
        if (rc != CLI_EXIT_OK) goto cleanup;
    } else {
        default_formats(ctx, list, missing, sizeof missing);
    }

    rc = measure_all(ctx, csr, list, &args, &report, &bad_rows);
    if (rc != CLI_EXIT_OK) goto cleanup;
    if (out.table) {
        cli_formats_table(stdout, &report);
        if (missing[0])
            printf("not on %s: %s\n", report.on_gpu ? "the GPU" : "the CPU", missing);
    }
    if (out.json.f) cli_formats_json(out.json.f, &report);
    if (out.csv.f) cli_formats_csv(out.csv.f, &report);
    if (out.plot.f) cli_formats_svg(out.plot.f, &report);
    written = 1;
    if (bad_rows > 0) rc = report_bad_rows(&report);
cleanup:
    close_rc = close_outputs(&out, written);
    if (rc == CLI_EXIT_OK) rc = close_rc;
    free(report.rows);
    free(list);
    krill_ctx_destroy(&ctx);
    krill_csr_destroy(&csr);
    return rc;
}

const cli_command cli_formats_command = {
    .name = "formats",
    .summary = "compare the storage formats on one matrix: bytes, SpMV time, accuracy",
    .run = formats_run,
    .usage = formats_usage,
};
