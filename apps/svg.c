/* apps/svg.c - `krill formats --plot`: a two-panel horizontal bar chart as a standalone SVG
 * file (no dependencies): memory stored per format on the left, SpMV time on the right, the
 * formats in the same order in both, csr drawn as the reference. */
#include <math.h>
#include <string.h>
#include "cli_impl.h"

/* Geometry in SVG user units (pixels). */
#define SVG_WIDTH 1000
#define ROW_HEIGHT 26            /* one format per row */
#define BAR_HEIGHT 16
#define CHARS_TO_PX 6.6          /* width of one character of the 12 px labels, roughly */
#define PANELS_TOP 84            /* below the title, subtitle and panel titles */
#define PANEL_GAP 80             /* between the panels: room for the left panel's values */
#define RIGHT_MARGIN 70          /* room for the right panel's values */
#define AXIS_SPACE 56            /* tick labels and axis title under a panel */
#define LEGEND_SPACE 34
#define TARGET_TICKS 5           /* about this many intervals per axis */

#define COLOR_BAR "#4878a8"
#define COLOR_CSR "#8c8c8c"
#define COLOR_FASTEST "#2e8b57"
#define COLOR_GRID "#dddddd"
#define COLOR_BAND "#f3f5f7"
#define FONT "font-family=\"Helvetica, Arial, sans-serif\""
/* A white outline under a value label, so that the reference line never hides it. */
#define HALO "stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\""


/* Text with &, <, >, " and ' escaped for XML content and attribute values. */
static void xml_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t') fputc(*s, out);   /* XML 1.0 chars */
        }
    }
}

/* An axis 0 .. max in `n_steps` steps of 1, 2, 2.5 or 5 times a power of ten. */
typedef struct axis {
    double step, max;
    int n_steps, decimals;       /* decimals that print every tick exactly */
} axis;

static axis nice_axis(double largest)
{
    axis a;
    if (!(largest > 0.0) || !isfinite(largest)) largest = 1.0;
    double raw = largest / TARGET_TICKS;
    double magnitude = pow(10.0, floor(log10(raw)));
    double f = raw / magnitude;
    a.step = (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 2.5 ? 2.5 : f <= 5.0 ? 5.0 : 10.0) *
             magnitude;
    a.n_steps = (int)ceil(largest / a.step - 1e-9);
    if (a.n_steps < 1) a.n_steps = 1;
    a.max = a.n_steps * a.step;
    a.decimals = 0;
    while (a.decimals < 12) {
        double scaled = a.step * pow(10.0, a.decimals);
        if (fabs(scaled - nearbyint(scaled)) <= 1e-6 * scaled) break;
        a.decimals++;
    }
    return a;
}

/* A bar's value with 3 significant digits, no exponent. */
static void value_text(char *buf, size_t len, double v)
{
    int decimals = v > 0.0 ? 2 - (int)floor(log10(v)) : 0;
    decimals = decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
    snprintf(buf, len, "%.*f", decimals, v);
}

typedef struct panel {
    const char *id;              /* "memory" or "spmv-time" */
    const char *title;
    const char *axis_title;      /* SVG markup */
    double x0, width;            /* left edge and length of the value axis */
    double value[64];            /* per row; NaN = no bar */
    int highlight;               /* row drawn in COLOR_FASTEST, -1 = none */
} panel;

static double bar_y(int k)
{
    return PANELS_TOP + k * ROW_HEIGHT + (ROW_HEIGHT - BAR_HEIGHT) / 2.0;
}

static void draw_panel(FILE *out, const cli_formats_report *r, const panel *p, int n)
{
    double largest = 0.0;
    double bottom = PANELS_TOP + n * ROW_HEIGHT;
    char text[32];
    for (int k = 0; k < n; k++)
        if (p->value[k] > largest) largest = p->value[k];
    axis a = nice_axis(largest);
    fprintf(out, "<g class=\"panel\" id=\"%s\">\n", p->id);
    fprintf(out, "<text x=\"%.1f\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">%s</text>\n",
            p->x0, PANELS_TOP - 10, p->title);
    for (int t = 0; t <= a.n_steps; t++) {           /* grid, ticks and their labels */
        double x = p->x0 + p->width * t / a.n_steps;
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x,
                PANELS_TOP, x, bottom + 4, t ? COLOR_GRID : "#333333");
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">"
                "%.*f</text>\n", x, bottom + 17, a.decimals, t * a.step);
    }
    fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n",
            p->x0, bottom, p->x0 + p->width, bottom);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%s"
            "</text>\n", p->x0 + p->width / 2, bottom + 38, p->axis_title);
    for (int k = 0; k < n; k++) {                   /* bars; the values come last */
        double y = bar_y(k);
        const char *color = k == p->highlight ? COLOR_FASTEST
                            : k == r->csr_row ? COLOR_CSR : COLOR_BAR;
        if (isnan(p->value[k])) {
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" font-style=\"italic\" "
                    "fill=\"#888888\">not measured</text>\n", p->x0 + 4, y + BAR_HEIGHT - 4);
            continue;
        }
        value_text(text, sizeof text, p->value[k]);
        fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
                "fill=\"%s\"><title>", p->x0, y, p->width * p->value[k] / a.max, BAR_HEIGHT,
                color);
        xml_text(out, r->rows[k].name);
        fprintf(out, ": %s</title></rect>\n", text);
    }
    if (r->csr_row >= 0 && !isnan(p->value[r->csr_row])) {   /* the reference line */
        double x = p->x0 + p->width * p->value[r->csr_row] / a.max;
        fprintf(out, "<line class=\"reference\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#444444\" stroke-dasharray=\"5,4\"/>\n", x, PANELS_TOP - 4, x, bottom);
    }
    for (int k = 0; k < n; k++) {                   /* values at the bar ends, over the line */
        if (isnan(p->value[k])) continue;
        value_text(text, sizeof text, p->value[k]);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" " HALO ">%s</text>\n",
                p->x0 + p->width * p->value[k] / a.max + 4, bar_y(k) + BAR_HEIGHT - 4, text);
    }
    fprintf(out, "</g>\n");
}

static void draw_legend(FILE *out, double x, double y, int on_gpu)
{
    static const struct { const char *color, *label; } items[] = {
        { COLOR_CSR, "csr (reference; dashed line: its value)" },
        { COLOR_FASTEST, "fastest (auto aside)" },
        { COLOR_BAR, "other formats" },
    };
    for (size_t k = 0; k < sizeof items / sizeof items[0]; k++) {
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x,
                y - 10, items[k].color);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s</text>\n", x + 17, y,
                items[k].label);
        x += 17 + CHARS_TO_PX * (double)strlen(items[k].label) + 24;
    }
    if (on_gpu)
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">cusparse: NVIDIA's "
                "cuSPARSE SpMV</text>\n", x, y);
}

void cli_formats_svg(FILE *out, const cli_formats_report *r)
{
    const int n = r->n_rows < 64 ? r->n_rows : 64;
    const krill_format_stats *m = &r->matrix;
    size_t longest = 6;
    char name[160];
    panel memory = { .id = "memory", .title = "Memory stored",
                     .axis_title = "matrix data, MB (10<tspan dy=\"-5\" font-size=\"9\">6"
                                   "</tspan><tspan dx=\"3\" dy=\"5\">bytes)</tspan>",
                     .highlight = -1 };
    panel spmv = { .id = "spmv-time", .title = "SpMV time",
                   .axis_title = "y = A*x, &#181;s (median)", .highlight = r->fastest_row };
    for (int k = 0; k < n; k++) {
        const cli_format_row *row = &r->rows[k];
        if (row->chosen[0]) snprintf(name, sizeof name, "%s -> %s", row->name, row->chosen);
        else snprintf(name, sizeof name, "%s", row->name);
        if (strlen(name) > longest) longest = strlen(name);
        memory.value[k] = row->measured ? (double)row->stats.bytes / 1e6 : NAN;
        spmv.value[k] = row->measured ? 1e6 * row->spmv_seconds : NAN;
    }
    const double label_width = 16 + CHARS_TO_PX * (double)longest;
    const double panel_width = (SVG_WIDTH - label_width - PANEL_GAP - RIGHT_MARGIN) / 2;
    const int height = PANELS_TOP + n * ROW_HEIGHT + AXIS_SPACE + LEGEND_SPACE;
    memory.x0 = label_width;
    memory.width = spmv.width = panel_width;
    spmv.x0 = label_width + panel_width + PANEL_GAP;

    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" " FONT ">\n", SVG_WIDTH, height, SVG_WIDTH, height);
    fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(out, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">Storage "
            "formats: ", 12);
    xml_text(out, r->source);
    fputs(" on ", out);
    xml_text(out, r->device);
    fprintf(out, "</text>\n<text x=\"12\" y=\"44\" font-size=\"12\" fill=\"#444444\">"
            "%lld x %lld, %lld nonzeros, longest row %lld%s; SpMV median of %d runs (%s)"
            "</text>\n", (long long)m->n_rows, (long long)m->n_cols, (long long)m->nnz,
            (long long)m->max_row_nnz, r->reordered ? ", RCM-renumbered" : "", r->reps,
            r->clock);
    for (int k = 0; k < n; k += 2)                   /* row bands across both panels */
        fprintf(out, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
                PANELS_TOP + k * ROW_HEIGHT, SVG_WIDTH, ROW_HEIGHT, COLOR_BAND);
    for (int k = 0; k < n; k++) {
        const cli_format_row *row = &r->rows[k];
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">",
                label_width - 8, bar_y(k) + BAR_HEIGHT - 4);
        xml_text(out, row->name);
        if (row->chosen[0]) {
            fputs(" -&gt; ", out);
            xml_text(out, row->chosen);
        }
        fputs("</text>\n", out);
    }
    draw_panel(out, r, &memory, n);
    draw_panel(out, r, &spmv, n);
    draw_legend(out, 12, height - 14, r->on_gpu);
    fprintf(out, "</svg>\n");
}
