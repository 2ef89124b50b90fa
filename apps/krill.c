/* apps/krill.c - the `krill` command: subcommand dispatch, top-level usage, --version. */
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include "cli_impl.h"

static const cli_command *const commands[] = {
    &cli_solve_command,
    &cli_gen_command,
    &cli_convert_command,
    &cli_info_command,
    &cli_formats_command,
    &cli_dot_command,
    &cli_apsp_command,
    &cli_overlap_command,
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static const cli_command *find_command(const char *name)
{
    const cli_command *found = NULL;
    for (int k = 0; k < N_COMMANDS && !found; k++)
        if (!strcmp(commands[k]->name, name)) found = commands[k];
    return found;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: krill COMMAND [ARGS]\n"
            "\n"
            "krill solves sparse linear systems Ax = b with Krylov methods (GMRES, CG) and\n"
            "all-pairs shortest paths of weighted graphs (blocked Floyd-Warshall) on the CPU\n"
            "(OpenMP) or an NVIDIA GPU (CUDA).\n"
            "\n"
            "commands:\n");
    for (int k = 0; k < N_COMMANDS; k++)
        fprintf(out, "  %-8s %s\n", commands[k]->name, commands[k]->summary);
    fprintf(out,
            "  help     this text, or `krill help COMMAND` for one command\n"
            "\n"
            "  krill --version   print the version\n"
            "\n"
            "exit codes: 0 success (solve: converged), 1 solve did not converge,\n"
            "            2 bad usage or bad input, or an output could not be written,\n"
            "            3 krill or the device failed\n");
}

int cli_fail(krill_status st)
{
    const char *message = krill_last_error();
    fprintf(stderr, "krill: %s\n", message[0] ? message : krill_status_string(st));
    return cli_exit_code(st);
}

int cli_exit_code(krill_status st)
{
    switch (st) {
    case KRILL_ERR_ARG:
    case KRILL_ERR_IO:
    case KRILL_ERR_PARSE:
    case KRILL_ERR_UNSUPPORTED:
    case KRILL_ERR_NUMERIC:
    case KRILL_ERR_NO_DEVICE:
        return CLI_EXIT_USAGE;
    default:
        return CLI_EXIT_FAILURE;
    }
}

int cli_error(int exit_code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("krill: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return exit_code;
}

double cli_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* OpenMP's default team (OMP_NUM_THREADS, else one thread a core) does the work before a
 * context exists (reading, generating, writing files): it is checked as krill_ctx_create
 * checks a context's, so that a count above KRILL_MAX_THREADS (exit 2) or one the system
 * refuses (exit 3) is reported, not a SIGSEGV or libgomp's exit(1) in a reader. */
static int check_default_threads(void)
{
    int rc = CLI_EXIT_OK;
    krill_ctx_opts opts = KRILL_CTX_OPTS_INIT;
    krill_ctx *ctx = NULL;
    char why[512];
    opts.device = KRILL_DEVICE_CPU;
    krill_status st = krill_ctx_create(&opts, &ctx);
    if (st != KRILL_OK) {
        snprintf(why, sizeof why, "%s", krill_last_error());
        rc = cli_fail(krill_error(st, "OpenMP's default team (OMP_NUM_THREADS, else one "
                                  "thread a core): %s", why));
    }
    krill_ctx_destroy(&ctx);
    return rc;
}

/* `krill help [COMMAND]` */
static int help(int argc, char **argv)
{
    int rc = CLI_EXIT_OK;
    if (argc < 3) {
        usage(stdout);
    } else {
        const cli_command *cmd = find_command(argv[2]);
        if (cmd) {
            cmd->usage(stdout);
        } else {
            fprintf(stderr, "krill help: unknown command '%s'\n", argv[2]);
            rc = CLI_EXIT_USAGE;
        }
    }
    return rc;
}

int main(int argc, char **argv)
{
    int rc = CLI_EXIT_USAGE;
    const cli_command *cmd = argc > 1 ? find_command(argv[1]) : NULL;
    cli_guard_std_streams();
    if (argc < 2) {
        usage(stderr);
    } else if (cmd) {
        rc = check_default_threads();
        if (rc == CLI_EXIT_OK) rc = cmd->run(argc - 1, argv + 1);
        krill_overlap_release_staging();   /* page-locked slots the GPU executor kept */
    } else if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
               !strcmp(argv[1], "-h")) {
        rc = help(argc, argv);
    } else if (!strcmp(argv[1], "--version")) {
        printf("krill %s\n", krill_version());
        rc = CLI_EXIT_OK;
    } else {
        fprintf(stderr, "krill: unknown command '%s' (see krill --help)\n", argv[1]);
    }
    return cli_close_stdout(rc);
}
