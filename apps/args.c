/* apps/args.c - the strict option parser shared by the subcommands. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli_impl.h"

static const cli_option *find_option(const cli_option *options, int n_options,
                                     const char *name, size_t name_len)
{
    const cli_option *found = NULL;
    for (int k = 0; k < n_options && !found; k++)
        if (strlen(options[k].name) == name_len && !strncmp(options[k].name, name, name_len))
            found = &options[k];
    return found;
}

static int bad_value(const char *cmd, const cli_option *opt, const char *value,
                     const char *expected)
{
    fprintf(stderr, "krill %s: %s expects %s, got '%s'\n", cmd, opt->name, expected, value);
    return CLI_EXIT_USAGE;
}

/* Store `value` into the option's target; CLI_EXIT_USAGE (with a message) if it does not
 * parse or is out of range. */
static int store_value(const char *cmd, const cli_option *opt, const char *value)
{
    int rc = CLI_EXIT_OK;
    char expected[96];
    char *end = NULL;
    errno = 0;
    switch (opt->kind) {
    case CLI_STRING:
        if (value[0] == '\0')
            rc = bad_value(cmd, opt, value, "a non-empty value");
        else
            *opt->string = value;
        break;
    case CLI_INT:
    case CLI_FLAG_INT: {
        long long v = strtoll(value, &end, 10);
        if (end == value || *end != '\0' || errno == ERANGE || v < opt->min || v > opt->max) {
            snprintf(expected, sizeof expected, "an integer in [%.0f, %.0f]", opt->min, opt->max);
            rc = bad_value(cmd, opt, value, expected);
        } else {
            *opt->integer = (int)v;
        }
        break;
    }
    case CLI_DOUBLE: {
        double v = strtod(value, &end);
        if (end == value || *end != '\0' || !isfinite(v) || v < opt->min || v > opt->max) {
            if (isinf(opt->max))
                snprintf(expected, sizeof expected, "a finite number >= %g", opt->min);
            else
                snprintf(expected, sizeof expected, "a number in [%g, %g]", opt->min, opt->max);
            rc = bad_value(cmd, opt, value, expected);
        } else {
            *opt->real = v;
        }
        break;
    }
    case CLI_CHOICE: {
        int index = -1;
        for (int k = 0; opt->choices[k] && index < 0; k++)
            if (!strcmp(opt->choices[k], value)) index = k;
        if (index < 0) {
            fprintf(stderr, "krill %s: %s expects one of", cmd, opt->name);
            for (int k = 0; opt->choices[k]; k++)
                fprintf(stderr, "%s %s", k ? "," : "", opt->choices[k]);
            fprintf(stderr, "; got '%s'\n", value);
            rc = CLI_EXIT_USAGE;
        } else {
            *opt->integer = index;
        }
        break;
    }
    case CLI_FLAG:
        rc = bad_value(cmd, opt, value, "no value");
        break;
    }
    return rc;
}

int cli_parse(int argc, char **argv, const cli_option *options, int n_options,
              const char **positional, int max_positional, int *n_positional)
{
    const char *cmd = argv[0];
    int rc = CLI_EXIT_OK;
    int options_done = 0;
    *n_positional = 0;
    for (int i = 1; i < argc && rc == CLI_EXIT_OK; i++) {
        const char *arg = argv[i];
        if (options_done || arg[0] != '-' || arg[1] == '\0') {
            if (*n_positional >= max_positional) {
                fprintf(stderr, "krill %s: unexpected argument '%s'\n", cmd, arg);
                rc = CLI_EXIT_USAGE;
            } else {
                positional[(*n_positional)++] = arg;
            }
            continue;
        }
        if (!strcmp(arg, "--")) {
            options_done = 1;
            continue;
        }
        const char *equals = strchr(arg, '=');
        size_t name_len = equals ? (size_t)(equals - arg) : strlen(arg);
        const cli_option *opt = find_option(options, n_options, arg, name_len);
        if (!opt) {
            fprintf(stderr, "krill %s: unknown option '%.*s' (see krill %s --help)\n", cmd,
                    (int)name_len, arg, cmd);
            rc = CLI_EXIT_USAGE;
        } else if (opt->kind == CLI_FLAG || opt->kind == CLI_FLAG_INT) {
            if (equals)
                rc = store_value(cmd, opt, equals + 1);
            if (rc == CLI_EXIT_OK) *opt->flag = 1;
        } else if (equals) {
            rc = store_value(cmd, opt, equals + 1);
        } else if (i + 1 >= argc) {
            fprintf(stderr, "krill %s: option %s needs a value\n", cmd, opt->name);
            rc = CLI_EXIT_USAGE;
        } else {
            rc = store_value(cmd, opt, argv[++i]);
        }
    }
    return rc;
}

double cli_parse_bytes(const char *text)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || v < 0) return -1;
    if (*end == 'K' || *end == 'k') v *= 1024.0, end++;
    else if (*end == 'M' || *end == 'm') v *= 1048576.0, end++;
    else if (*end == 'G' || *end == 'g') v *= 1073741824.0, end++;
    return *end ? -1 : v;
}
