/* apps/json.c - a tiny JSON writer for the commands' --json: one object, nested objects,
 * escaped strings, numbers that read back to the same double, null for non-finite; and the
 * small pieces the human reports share (byte counts, time lines). */
#include <inttypes.h>
#include <math.h>
#include "cli_impl.h"

static void write_escaped(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':  fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);   /* bytes >= 0x80 pass through: the input is UTF-8 */
        }
    }
    fputc('"', out);
}

/* Separator, indentation and "key": for the next member of the innermost object. */
static void begin_member(cli_json *json, const char *key)
{
    fputs(json->members[json->depth - 1]++ ? ",\n" : "\n", json->out);
    fprintf(json->out, "%*s", 2 * json->depth, "");
    write_escaped(json->out, key);
    fputs(": ", json->out);
}

void cli_json_begin(cli_json *json, FILE *out)
{
    json->out = out;
    json->depth = 1;
    json->members[0] = 0;
    fputc('{', out);
}

void cli_json_object(cli_json *json, const char *key)
{
    begin_member(json, key);
    fputc('{', json->out);
    json->members[json->depth++] = 0;   /* callers nest at most CLI_JSON_MAX_DEPTH deep */
}

void cli_json_close(cli_json *json)
{
    json->depth--;
    fprintf(json->out, "\n%*s}", 2 * json->depth, "");
}

void cli_json_end(cli_json *json)
{
    cli_json_close(json);
    fputc('\n', json->out);
}

void cli_json_string(cli_json *json, const char *key, const char *value)
{
    begin_member(json, key);
    if (value)
        write_escaped(json->out, value);
    else
        fputs("null", json->out);
}

void cli_json_number(cli_json *json, const char *key, double value)
{
    begin_member(json, key);
    if (isfinite(value))
        fprintf(json->out, "%.17g", value);
    else
        fputs("null", json->out);
}

void cli_json_int(cli_json *json, const char *key, int64_t value)
{
    begin_member(json, key);
    fprintf(json->out, "%" PRId64, value);
}

void cli_json_bool(cli_json *json, const char *key, int value)
{
    begin_member(json, key);
    fputs(value ? "true" : "false", json->out);
}

void cli_json_null(cli_json *json, const char *key)
{
    begin_member(json, key);
    fputs("null", json->out);
}

/* ---- small pieces of the human reports ---------------------------------------------------- */

void cli_format_bytes(char *buf, size_t len, double bytes)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

void cli_print_time(FILE *out, int width, const char *label, double seconds, double total)
{
    fprintf(out, "          %-*s %*.3f ms", width, label, width + 2, 1e3 * seconds);
    if (total > 0.0) fprintf(out, "  %5.1f%%", 100.0 * seconds / total);
    fprintf(out, "\n");
}
