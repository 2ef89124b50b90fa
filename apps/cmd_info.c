/* apps/cmd_info.c - `krill info`: version, build features, devices, formats, preconditioners. */
#include <omp.h>
#include "cli_impl.h"

static void info_usage(FILE *out)
{
    fprintf(out,
            "usage: krill info\n"
            "\n"
            "Print the version, the build features (CUDA, OpenMP, zlib), the devices found,\n"
            "the registered storage formats and the preconditioners.\n");
}

/* The OpenMP specification version that a value of _OPENMP (yyyymm) stands for. */
static const char *openmp_spec(long yyyymm)
{
    static const struct { long date; const char *version; } specs[] = {
        { 202111, "5.2" }, { 202011, "5.1" }, { 201811, "5.0" }, { 201511, "4.5" },
        { 201307, "4.0" }, { 201107, "3.1" }, { 200805, "3.0" },
    };
    const char *version = "older than 3.0";
    int found = 0;
    for (size_t k = 0; k < sizeof specs / sizeof specs[0] && !found; k++)
        if (yyyymm >= specs[k].date) {
            version = specs[k].version;
            found = 1;
        }
    return version;
}

static void print_list(const char *label, const char *const *names)
{
    printf("%-18s", label);
    for (int k = 0; names[k]; k++)
        printf("%s%s", k ? ", " : "", names[k]);
    printf("\n");
}

/* One line per device: the CPU, then every CUDA device, described by a context on it. */
static int print_devices(void)
{
    int rc = CLI_EXIT_OK;
    krill_ctx *ctx = NULL;
    krill_ctx_opts opts = KRILL_CTX_OPTS_INIT;
    krill_status st = KRILL_OK;
    int n_gpus = krill_cuda_device_count();
    opts.device = KRILL_DEVICE_CPU;
    st = krill_ctx_create(&opts, &ctx);
    if (st != KRILL_OK) goto cleanup;
    printf("%-18s%s\n", "devices", krill_ctx_describe(ctx));
    krill_ctx_destroy(&ctx);
    for (int id = 0; id < n_gpus; id++) {
        opts.device = KRILL_DEVICE_CUDA;
        opts.device_id = id;
        st = krill_ctx_create(&opts, &ctx);
        if (st != KRILL_OK) goto cleanup;
        printf("%-18s%s\n", "", krill_ctx_describe(ctx));
        krill_ctx_destroy(&ctx);
    }
    if (n_gpus == 0)
        printf("%-18s%s\n", "", krill_have_cuda() ? "no usable CUDA device found"
                                                  : "no CUDA devices (built without CUDA)");
cleanup:
    if (st != KRILL_OK) rc = cli_fail(st);
    krill_ctx_destroy(&ctx);
    return rc;
}

static int print_info(void)
{
    static const char *const solvers[] = { "gmres", "fgmres", "cg", "bicgstab", "minres",
                                             "pipecg", NULL };
    int rc = CLI_EXIT_OK;
    printf("%-18s%s\n", "krill", krill_version());
    printf("%-18s%s\n", "CUDA", krill_have_cuda() ? "yes" : "no");
    printf("%-18s%d (OpenMP %s), up to %d threads\n", "OpenMP", _OPENMP,
           openmp_spec(_OPENMP), omp_get_max_threads());
    printf("%-18s%s\n", "zlib (.mtx.gz)", krill_have_zlib() ? "yes" : "no");
    rc = print_devices();
    if (rc == CLI_EXIT_OK) {
        print_list("formats", krill_format_names());
        print_list("preconditioners", krill_pc_names());
        print_list("solvers", solvers);
        printf("%-18s%s\n", "generators", "see krill gen --list");
    }
    return rc;
}

static int info_run(int argc, char **argv)
{
    int want_help = 0, n_positional = 0;
    const cli_option options[] = {
        { .name = "--help", .kind = CLI_FLAG, .flag = &want_help },
        { .name = "-h", .kind = CLI_FLAG, .flag = &want_help },
    };
    int rc = cli_parse(argc, argv, options, sizeof options / sizeof options[0], NULL, 0,
                       &n_positional);
    if (rc == CLI_EXIT_OK && want_help)
        info_usage(stdout);
    else if (rc == CLI_EXIT_OK)
        rc = print_info();
    return rc;
}

const cli_command cli_info_command = {
    .name = "info",
    .summary = "version, build features (CUDA, OpenMP, zlib), devices, formats",
    .run = info_run,
    .usage = info_usage,
};
