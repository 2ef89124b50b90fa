/* apps/formats_report.c - what `krill formats` prints: the aligned table, the JSON object
 * and the CSV lines (svg.c draws the chart). */
#include <math.h>
#include <string.h>
#include "cli_impl.h"

#define MB 1e6                   /* the table and the chart count 10^6 bytes */
#define CELL 160                 /* longest cell of the table: "auto -> NAME" */
#define N_COLUMNS 10

double cli_format_bytes_moved(const cli_format_row *row)
{
    return (double)row->stats.bytes + 8.0 * (double)row->stats.n_cols +
           8.0 * (double)row->stats.n_rows;
}

double cli_format_gbps(const cli_format_row *row)
{
    return row->measured && row->spmv_seconds > 0.0
               ? cli_format_bytes_moved(row) / row->spmv_seconds / 1e9 : NAN;
}

double cli_format_gflops(const cli_format_row *row)
{
    return row->measured && row->spmv_seconds > 0.0
               ? 2.0 * (double)row->stats.nnz / row->spmv_seconds / 1e9 : NAN;
}

double cli_format_bytes_vs_csr(const cli_formats_report *report, const cli_format_row *row)
{
    const cli_format_row *csr = report->csr_row >= 0 ? &report->rows[report->csr_row] : NULL;
    return row->measured && csr && csr->measured && csr->stats.bytes > 0
               ? (double)row->stats.bytes / (double)csr->stats.bytes : NAN;
}

double cli_format_speedup_vs_cusparse(const cli_formats_report *report,
                                      const cli_format_row *row)
{
    const cli_format_row *peer =
        report->cusparse_row >= 0 ? &report->rows[report->cusparse_row] : NULL;
    return row->measured && peer && peer->measured && row->spmv_seconds > 0.0
               ? peer->spmv_seconds / row->spmv_seconds : NAN;
}

/* "auto -> ellr" for auto's row, else the name as asked. */
static void display_name(const cli_format_row *row, char *buf, size_t len)
{
    if (row->chosen[0])
        snprintf(buf, len, "%s -> %s", row->name, row->chosen);
    else
        snprintf(buf, len, "%s", row->name);
}

/* Decimals that give the smallest positive value of a column 3 significant digits, at
 * most `max_decimals`. */
static int column_decimals(const double *values, int n, int max_decimals)
{
    double smallest = INFINITY;
    for (int k = 0; k < n; k++)
        if (values[k] > 0.0 && values[k] < smallest) smallest = values[k];
    int decimals = isfinite(smallest) ? 2 - (int)floor(log10(smallest)) : 0;
    return decimals < 0 ? 0 : decimals > max_decimals ? max_decimals : decimals;
}

static void fixed_cell(char *cell, double value, int decimals)
{
    if (isnan(value))
        snprintf(cell, CELL, "-");
    else
        snprintf(cell, CELL, "%.*f", decimals, value);
}

static void print_header(FILE *out, const cli_formats_report *r)
{
    const krill_format_stats *m = &r->matrix;
    fprintf(out, "krill formats: %s (%s), %lld x %lld, %lld nonzeros\n", r->source,
            r->source_note, (long long)m->n_rows, (long long)m->n_cols, (long long)m->nnz);
    fprintf(out, "device   %s\n", r->device);
    fprintf(out, "matrix   N %lld, N_z %lld, K %lld (mean %.2f per row, %lld empty rows)\n",
            (long long)m->n_rows, (long long)m->nnz, (long long)m->max_row_nnz, m->mean_row_nnz,
            (long long)m->empty_rows);
    fprintf(out, "runs     N_val %lld, N_col %lld, N_non %lld, K_v %lld, K_c %lld\n",
            (long long)m->n_val, (long long)m->n_col, (long long)m->n_non, (long long)m->kv,
            (long long)m->kc);
    if (r->reordered)
        fprintf(out, "reorder  rcm: half bandwidth %ld -> %ld\n", (long)r->bandwidth_before,
                (long)r->bandwidth_after);
    fprintf(out, "timing   y = A*x, median of %d after %d warm-up (%s); GB/s counts matrix "
            "bytes + x + y once\n\n", r->reps, r->warmup, r->clock);
}

/* One row's cells: format, variant, MB, vs csr, build ms, spmv us, GB/s, GFLOP/s, max rel
 * diff, vs cusparse; decimals[] per numeric column. */
static void row_cells(const cli_formats_report *r, int k, const int *decimals,
                      char cells[N_COLUMNS][CELL])
{
    const cli_format_row *row = &r->rows[k];
    display_name(row, cells[0], CELL);
    snprintf(cells[1], CELL, "%s", row->stats.variant[0] ? row->stats.variant : "-");
    fixed_cell(cells[2], (double)row->stats.bytes / MB, decimals[2]);
    fixed_cell(cells[3], cli_format_bytes_vs_csr(r, row), 2);
    fixed_cell(cells[4], 1e3 * row->build_seconds, decimals[4]);
    fixed_cell(cells[5], 1e6 * row->spmv_seconds, decimals[5]);
    strncat(cells[5], k == r->fastest_row ? "*" : " ", CELL - strlen(cells[5]) - 1);
    fixed_cell(cells[6], cli_format_gbps(row), decimals[6]);
    fixed_cell(cells[7], cli_format_gflops(row), decimals[7]);
    const char *flag = row->max_rel_diff <= r->diff_bound ? "" : "! ";   /* keeps alignment */
    if (row->max_rel_diff == 0.0)
        snprintf(cells[8], CELL, "%s0", flag);
    else
        snprintf(cells[8], CELL, "%s%.1e", flag, row->max_rel_diff);
    fixed_cell(cells[9], cli_format_speedup_vs_cusparse(r, row), 2);
}

/* Column-wide decimals of the numeric columns, from the measured rows. */
static void table_decimals(const cli_formats_report *r, int *decimals)
{
    enum { MAX_ROWS = 64 };
    double values[5][MAX_ROWS];
    int n = 0;
    for (int k = 0; k < r->n_rows && n < MAX_ROWS; k++) {
        const cli_format_row *row = &r->rows[k];
        if (!row->measured) continue;
        values[0][n] = (double)row->stats.bytes / MB;
        values[1][n] = 1e3 * row->build_seconds;
        values[2][n] = 1e6 * row->spmv_seconds;
        values[3][n] = cli_format_gbps(row);
        values[4][n] = cli_format_gflops(row);
        n++;
    }
    decimals[2] = column_decimals(values[0], n, 6);
    decimals[4] = column_decimals(values[1], n, 3);
    decimals[5] = column_decimals(values[2], n, 3);
    decimals[6] = column_decimals(values[3], n, 2);
    decimals[7] = column_decimals(values[4], n, 2);
}

static void print_footer(FILE *out, const cli_formats_report *r)
{
    const cli_format_row *fastest = r->fastest_row >= 0 ? &r->rows[r->fastest_row] : NULL;
    int wrong = 0;
    if (fastest)
        fprintf(out, "\n* fastest: %s, %.3f us\n", fastest->name, 1e6 * fastest->spmv_seconds);
    for (int k = 0; k < r->n_rows; k++) {
        const cli_format_row *row = &r->rows[k];
        if (row->measured && row->chosen[0]) {
            fprintf(out, "%s: %s\n", row->name, row->choice);
            if (fastest && fastest->spmv_seconds > 0.0)
                fprintf(out, "%s's SpMV time: %.2fx the fastest's (%s)\n", row->name,
                        row->spmv_seconds / fastest->spmv_seconds, fastest->name);
        }
        wrong += row->measured && !(row->max_rel_diff <= r->diff_bound);
    }
    if (wrong)
        fprintf(out, "! y differs from the reference by more than rounding explains "
                "(2 gamma_K = %.2e): a wrong result\n", r->diff_bound);
}

void cli_formats_table(FILE *out, const cli_formats_report *r)
{
    static const char *const titles[N_COLUMNS] = {
        "format", "variant", "MB", "vs csr", "build ms", "spmv us", "GB/s", "GFLOP/s",
        "max rel diff", "vs cusparse",
    };
    const int n_columns = r->on_gpu && r->cusparse_row >= 0 ? N_COLUMNS : N_COLUMNS - 1;
    int decimals[N_COLUMNS] = { 0 };
    int width[N_COLUMNS];
    char cells[N_COLUMNS][CELL];
    print_header(out, r);
    table_decimals(r, decimals);
    for (int c = 0; c < N_COLUMNS; c++) width[c] = (int)strlen(titles[c]);
    for (int k = 0; k < r->n_rows; k++) {
        row_cells(r, k, decimals, cells);
        int last = r->rows[k].measured ? n_columns : 1;
        for (int c = 0; c < last; c++)
            if ((int)strlen(cells[c]) > width[c]) width[c] = (int)strlen(cells[c]);
    }
    for (int c = 0; c < n_columns; c++)
        fprintf(out, c < 2 ? "%-*s%s" : "%*s%s", width[c], titles[c],
                c + 1 < n_columns ? "  " : "\n");
    for (int k = 0; k < r->n_rows; k++) {
        const cli_format_row *row = &r->rows[k];
        row_cells(r, k, decimals, cells);
        if (!row->measured) {
            fprintf(out, "%-*s  %s%s\n", width[0], cells[0],
                    row->spmv_failed ? "" : "not built: ", row->error);
            continue;
        }
        for (int c = 0; c < n_columns; c++)
            fprintf(out, c < 2 ? "%-*s%s" : "%*s%s", width[c], cells[c],
                    c + 1 < n_columns ? "  " : "\n");
    }
    print_footer(out, r);
}

/* ---- JSON -------------------------------------------------------------------------------- */

static void json_stats(cli_json *json, const char *key, const krill_format_stats *s)
{
    cli_json_object(json, key);
    cli_json_int(json, "N", s->n_rows);
    cli_json_int(json, "n_cols", s->n_cols);
    cli_json_int(json, "Nz", s->nnz);
    cli_json_int(json, "K", s->max_row_nnz);
    cli_json_int(json, "Kv", s->kv);
    cli_json_int(json, "Kc", s->kc);
    cli_json_int(json, "N_val", s->n_val);
    cli_json_int(json, "N_col", s->n_col);
    cli_json_int(json, "N_non", s->n_non);
    cli_json_number(json, "mean_row_nnz", s->mean_row_nnz);
    cli_json_int(json, "empty_rows", s->empty_rows);
    cli_json_close(json);
}

static void json_row(cli_json *json, const cli_formats_report *r, int k)
{
    const cli_format_row *row = &r->rows[k];
    cli_json_object(json, row->name);
    cli_json_bool(json, "measured", row->measured);
    if (!row->measured) cli_json_string(json, "error", row->error);
    if (row->measured || row->spmv_failed) {
        cli_json_string(json, "chosen", row->chosen[0] ? row->chosen : NULL);
        cli_json_string(json, "choice", row->choice[0] ? row->choice : NULL);
        cli_json_string(json, "variant", row->stats.variant);
        cli_json_int(json, "bytes", (int64_t)row->stats.bytes);
        cli_json_number(json, "build_seconds", row->build_seconds);
    }
    if (row->measured) {
        cli_json_number(json, "bytes_vs_csr", cli_format_bytes_vs_csr(r, row));
        cli_json_number(json, "spmv_seconds", row->spmv_seconds);
        cli_json_number(json, "bytes_moved", cli_format_bytes_moved(row));
        cli_json_number(json, "gbytes_per_second", cli_format_gbps(row));
        cli_json_number(json, "gflops", cli_format_gflops(row));
        cli_json_number(json, "max_rel_diff", row->max_rel_diff);
        cli_json_bool(json, "within_rounding", row->max_rel_diff <= r->diff_bound);
        if (r->on_gpu)
            cli_json_number(json, "speedup_vs_cusparse", cli_format_speedup_vs_cusparse(r, row));
        cli_json_bool(json, "fastest", k == r->fastest_row);
    }
    if (row->measured || row->spmv_failed) json_stats(json, "stats", &row->stats);
    cli_json_close(json);
}

void cli_formats_json(FILE *out, const cli_formats_report *r)
{
    cli_json json;
    cli_json_begin(&json, out);
    cli_json_string(&json, "source", r->source);
    cli_json_string(&json, "source_kind", r->source_note);
    cli_json_string(&json, "device", r->device);
    json_stats(&json, "matrix", &r->matrix);
    cli_json_string(&json, "reorder", r->reordered ? "rcm" : "none");
    cli_json_int(&json, "bandwidth_before", r->bandwidth_before);
    cli_json_int(&json, "bandwidth_after", r->bandwidth_after);
    cli_json_object(&json, "timing");
    cli_json_int(&json, "warmup", r->warmup);
    cli_json_int(&json, "reps", r->reps);
    cli_json_string(&json, "statistic", "median");
    cli_json_string(&json, "clock", r->clock);
    cli_json_string(&json, "bytes_moved", "matrix bytes + 8 n_cols (x) + 8 n_rows (y)");
    cli_json_close(&json);
    cli_json_number(&json, "rounding_bound", r->diff_bound);
    cli_json_string(&json, "fastest", r->fastest_row >= 0 ? r->rows[r->fastest_row].name : NULL);
    cli_json_object(&json, "formats");
    for (int k = 0; k < r->n_rows; k++) json_row(&json, r, k);
    cli_json_close(&json);
    cli_json_end(&json);
}

/* ---- CSV --------------------------------------------------------------------------------- */

/* A field quoted when it holds a comma, quote or line break (quotes doubled). */
static void csv_text(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* A number, empty when not known (NaN). */
static void csv_number(FILE *out, double value)
{
    if (!isnan(value)) fprintf(out, "%.17g", value);
}

void cli_formats_csv(FILE *out, const cli_formats_report *r)
{
    fputs("format,measured,chosen,variant,bytes,bytes_vs_csr,build_seconds,spmv_seconds,"
          "gbytes_per_second,gflops,max_rel_diff,speedup_vs_cusparse,"
          "N,Nz,K,Kv,Kc,N_val,N_col,N_non,error\n", out);
    for (int k = 0; k < r->n_rows; k++) {
        const cli_format_row *row = &r->rows[k];
        const krill_format_stats *s = &row->stats;
        const int has_stats = row->measured || row->spmv_failed;
        csv_text(out, row->name);
        fprintf(out, ",%d,", row->measured);
        csv_text(out, row->chosen);
        fputc(',', out);
        csv_text(out, s->variant);
        fputc(',', out);
        if (has_stats) fprintf(out, "%zu", s->bytes);
        fputc(',', out);
        csv_number(out, cli_format_bytes_vs_csr(r, row));
        fputc(',', out);
        csv_number(out, has_stats ? row->build_seconds : NAN);
        fputc(',', out);
        csv_number(out, row->measured ? row->spmv_seconds : NAN);
        fputc(',', out);
        csv_number(out, cli_format_gbps(row));
        fputc(',', out);
        csv_number(out, cli_format_gflops(row));
        fputc(',', out);
        if (row->measured) fprintf(out, "%.17g", row->max_rel_diff);   /* nan, inf: wrong */
        fputc(',', out);
        csv_number(out, cli_format_speedup_vs_cusparse(r, row));
        if (has_stats)
            fprintf(out, ",%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,", (long long)s->n_rows,
                    (long long)s->nnz, (long long)s->max_row_nnz, (long long)s->kv,
                    (long long)s->kc, (long long)s->n_val, (long long)s->n_col,
                    (long long)s->n_non);
        else
            fputs(",,,,,,,,,", out);
        csv_text(out, row->error);
        fputc('\n', out);
    }
}
