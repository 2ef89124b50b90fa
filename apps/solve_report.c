/* apps/solve_report.c - what `krill solve` prints: the human summary, the JSON object,
 * and the progress shown while the solver runs. */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "cli_impl.h"

/* Seconds between two updates of the live progress line (at most ~10 per second). */
#define PROGRESS_INTERVAL_S 0.1
/* Width the live line is padded to, so that a shorter line overwrites a longer one. */
#define PROGRESS_WIDTH 40

int cli_progress_monitor(int iteration, double residual_norm, void *data)
{
    cli_progress *progress = data;
    double relres = progress->bnorm > 0.0 ? residual_norm / progress->bnorm : residual_norm;
    if (progress->every_iteration) {
        fprintf(stderr, "iter %6d  resid %.6e  relres %.6e\n", iteration, residual_norm,
                relres);
    } else if (progress->live) {
        double now = cli_seconds();
        if (now - progress->last_print >= PROGRESS_INTERVAL_S) {
            char line[PROGRESS_WIDTH + 1];
            snprintf(line, sizeof line, "  iter %d  relres %.2e", iteration, relres);
            fprintf(stderr, "\r%-*s", PROGRESS_WIDTH, line);
            fflush(stderr);
            progress->last_print = now;
            progress->printed = 1;
        }
    }
    return 0;
}

void cli_progress_clear(cli_progress *progress)
{
    if (progress->printed) {
        fprintf(stderr, "\r%-*s\r", PROGRESS_WIDTH, "");
        fflush(stderr);
        progress->printed = 0;
    }
}

void cli_report_human(FILE *out, const cli_solve_report *r)
{
    const krill_solve_times *t = &r->info.times;
    char bytes[32];
    cli_format_bytes(bytes, sizeof bytes, (double)r->stats.bytes);
    fprintf(out, "matrix    %s (%s)\n", r->source, r->source_note);
    fprintf(out, "          n %" PRId64 ", nnz %" PRId64 ", format %s", r->n, r->nnz, r->format);
    if (r->stats.variant[0]) fprintf(out, " (%s)", r->stats.variant);
    fprintf(out, ", %s stored%s\n", bytes, r->load ? " on rank 0" : "");
    if (r->format_choice) fprintf(out, "          auto: %s\n", r->format_choice);
    if (strcmp(r->reorder, "none") != 0)
        fprintf(out, "          reorder %s: half bandwidth %" PRId32 " -> %" PRId32 ", %.3f ms\n",
                r->reorder, r->bandwidth_before, r->bandwidth_after, 1e3 * r->reorder_seconds);
    else
        fprintf(out, "          reorder %s: half bandwidth %" PRId32 "\n", r->reorder,
                r->bandwidth_before);
    fprintf(out, "device    %s\n", r->device);
    if (r->load || strcmp(r->partition, "rows") != 0) {   /* --partition: what it gave */
        int64_t halo = 0;
        for (int k = 0; r->load && k < r->ranks; k++) halo += r->load[k].halo;
        if (r->load && r->load[0].permuted)
            fprintf(out, "partition metis: METIS's parts of A + A^T, rows renumbered (x in A's "
                    "numbering), total halo %" PRId64 "\n", halo);
        else if (strcmp(r->partition, "rows") != 0)
            fprintf(out, "partition %s: nothing to partition on one rank or without a graph to "
                    "cut: row blocks%s\n", r->partition, r->load ? "" : " (one process)");
        else
            fprintf(out, "partition rows: row blocks balanced by nonzeros, total halo %" PRId64
                    "\n", halo);
    }
    if (r->load && r->load[0].halo_timed_ms[0] > 0.0)   /* the same on every rank */
        fprintf(out, "halo      through %s: timed at setup, %.3f ms an SpMV (through %s: %.3f)\n",
                r->load[0].halo_path ? "NCCL" : "the host", r->load[0].halo_timed_ms[r->load[0].halo_path],
                r->load[0].halo_path ? "the host" : "NCCL", r->load[0].halo_timed_ms[!r->load[0].halo_path]);
    else if (r->load && r->load[0].halo_path)
        fprintf(out, "halo      through NCCL (KRILL_NCCL=1)\n");
    for (int k = 0; r->load && k < r->ranks; k++)
        fprintf(out, "%s rank %d: rows %" PRId64 ", nnz %" PRId64 " + %" PRId64 " off-rank, "
                "halo %" PRId64 " in from %d ranks, %" PRId64 " out to %d\n",
                k ? "         " : "ranks    ", k, r->load[k].rows, r->load[k].nnz_diag,
                r->load[k].nnz_off, r->load[k].halo, r->load[k].recv_ranks, r->load[k].sent,
                r->load[k].send_ranks);
    fprintf(out, "solver    %s (%s)\n", r->solver, r->solver_why);
    fprintf(out, "          precond %s, rtol %g, atol %g, maxit %d", r->precond, r->opts.rtol,
            r->opts.atol, r->opts.maxit);
    if (r->ortho && r->opts.sstep > 1)
        fprintf(out, ", restart %d, s-step %d (Newton basis, block CGS2 + Cholesky-QR)",
                r->opts.restart, r->opts.sstep);
    else if (r->ortho)
        fprintf(out, ", restart %d, ortho %s", r->opts.restart, r->ortho);
    fprintf(out, "\n");
    if (r->precond_built) fprintf(out, "          %s\n", r->precond_built);
    if (r->repro && r->repro_slices == 0)
        fprintf(out, "repro     on: Ozaki scheme, exact (every reduction correctly rounded)\n");
    else if (r->repro)
        fprintf(out, "repro     on: Ozaki scheme, at most %d slices per operand\n",
                r->repro_slices);
    fprintf(out, "rhs       %s\n", r->rhs);
    fprintf(out, "result    %s after %d iterations\n", krill_reason_string(r->info.reason),
            r->info.iterations);
    if (r->info.reason == KRILL_DIVERGED_INDEFINITE &&
        (r->opts.solver == KRILL_SOLVER_CG || r->opts.solver == KRILL_SOLVER_PIPECG))
        fprintf(out, "          CG needs A and M definite: for a symmetric indefinite A "
                "try --solver minres\n");
    else if (r->info.reason == KRILL_DIVERGED_INDEFINITE)
        fprintf(out, "          MINRES needs a definite M: try another --precond, or none\n");
    fprintf(out, "          true relative residual %.3e\n", r->info.relres);
    if (r->exact_known)
        fprintf(out, "          error vs x = 1: max |x_i - 1| %.3e, ||x - 1|| / ||1|| %.3e\n",
                r->error_inf, r->error_rel);
    fprintf(out, "          solution hash %016" PRIx64 " (FNV-1a of x's bytes)\n", r->x_hash);
    fprintf(out, "time      load %.3f ms, build %.3f ms, solve:\n", 1e3 * r->load_seconds,
            1e3 * r->build_seconds);
    cli_print_time(out, 8, "setup", t->setup, t->total);
    cli_print_time(out, 8, "spmv", t->spmv, t->total);
    cli_print_time(out, 8, "precond", t->precond, t->total);
    cli_print_time(out, 8, "ortho", t->ortho, t->total);
    cli_print_time(out, 8, "other", t->other, t->total);
    cli_print_time(out, 8, "total", t->total, 0.0);
    if (r->ranks > 1) {
        cli_print_time(out, 8, "comm", t->comm, t->total);   /* within the phases above */
        if (t->halo > 0.0)
            fprintf(out, "          halo exchange in flight %.3f ms, %.1f%% of it hidden behind "
                    "the local product\n", 1e3 * t->halo, 100.0 * t->halo_hidden / t->halo);
    }
    if (r->info.iterations > 0)
        fprintf(out, "          %.3f ms per iteration\n",
                1e3 * t->total / (double)r->info.iterations);
    if (r->runs > 0 && r->info.iterations > 0)
        fprintf(out, "          %.3f ms per iteration: median of %d more solves (--runs)\n",
                1e3 * r->median_total / (double)r->info.iterations, r->runs);
}

void cli_report_json(FILE *out, const cli_solve_report *r)
{
    const krill_solve_times *t = &r->info.times;
    char hash[17];
    cli_json json;
    cli_json_begin(&json, out);
    cli_json_bool(&json, "converged", r->info.reason > 0);
    cli_json_string(&json, "reason", krill_reason_string(r->info.reason));
    cli_json_int(&json, "iterations", r->info.iterations);
    cli_json_number(&json, "relres", r->info.relres);
    cli_json_number(&json, "resnorm", r->info.resnorm);
    cli_json_number(&json, "bnorm", r->info.bnorm);
    if (r->exact_known) {
        cli_json_number(&json, "error", r->error_rel);
        cli_json_number(&json, "error_inf", r->error_inf);
    } else {
        cli_json_null(&json, "error");
        cli_json_null(&json, "error_inf");
    }
    cli_json_object(&json, "times");
    cli_json_number(&json, "setup", t->setup);
    cli_json_number(&json, "spmv", t->spmv);
    cli_json_number(&json, "precond", t->precond);
    cli_json_number(&json, "ortho", t->ortho);
    cli_json_number(&json, "other", t->other);
    cli_json_number(&json, "total", t->total);
    cli_json_number(&json, "comm", t->comm);
    cli_json_number(&json, "halo", t->halo);
    cli_json_number(&json, "halo_hidden", t->halo_hidden);
    if (r->runs > 0) {   /* --runs: the median whole-solve time of the repeats */
        cli_json_int(&json, "runs", r->runs);
        cli_json_number(&json, "median_total", r->median_total);
    }
    cli_json_number(&json, "load", r->load_seconds);
    cli_json_number(&json, "build", r->build_seconds);
    cli_json_number(&json, "reorder", r->reorder_seconds);
    cli_json_close(&json);
    cli_json_string(&json, "matrix", r->source);
    cli_json_int(&json, "n", r->n);
    cli_json_int(&json, "nnz", r->nnz);
    cli_json_string(&json, "format", r->format);
    cli_json_string(&json, "format_choice", r->format_choice);   /* null unless auto */
    cli_json_string(&json, "variant", r->stats.variant);
    cli_json_int(&json, "bytes", (int64_t)r->stats.bytes);
    cli_json_string(&json, "reorder", r->reorder);
    cli_json_int(&json, "bandwidth_before", r->bandwidth_before);
    cli_json_int(&json, "bandwidth_after", r->bandwidth_after);
    cli_json_string(&json, "device", r->device);
    cli_json_string(&json, "partition", r->partition);
    cli_json_bool(&json, "permuted", r->load && r->load[0].permuted);
    cli_json_string(&json, "solver", r->solver);
    cli_json_string(&json, "precond", r->precond);
    cli_json_string(&json, "precond_detail", r->precond_built);
    cli_json_string(&json, "ortho", r->ortho);
    if (r->ortho)
        cli_json_int(&json, "restart", r->opts.restart);
    else
        cli_json_null(&json, "restart");
    if (r->ortho && r->opts.sstep > 1)   /* s-step GMRES: ortho above is not used */
        cli_json_int(&json, "sstep", r->opts.sstep);
    else
        cli_json_null(&json, "sstep");
    cli_json_number(&json, "rtol", r->opts.rtol);
    cli_json_number(&json, "atol", r->opts.atol);
    cli_json_int(&json, "maxit", r->opts.maxit);
    cli_json_string(&json, "rhs", r->rhs);
    cli_json_bool(&json, "repro", r->repro);
    if (r->repro)
        cli_json_int(&json, "repro_slices", r->repro_slices);
    else
        cli_json_null(&json, "repro_slices");
    snprintf(hash, sizeof hash, "%016" PRIx64, r->x_hash);
    cli_json_string(&json, "x_hash", hash);
    if (r->load) {               /* a distributed solve: each rank's load, by rank */
        cli_json_int(&json, "ranks", r->ranks);
        cli_json_string(&json, "halo_path", r->load[0].halo_path ? "nccl" : "host");
        if (r->load[0].halo_timed_ms[0] > 0.0) {
            cli_json_object(&json, "halo_timed_ms");
            cli_json_number(&json, "host", r->load[0].halo_timed_ms[0]);
            cli_json_number(&json, "nccl", r->load[0].halo_timed_ms[1]);
            cli_json_close(&json);
        }
        cli_json_object(&json, "per_rank");
        for (int k = 0; k < r->ranks; k++) {
            char key[16];
            snprintf(key, sizeof key, "%d", k);
            cli_json_object(&json, key);
            cli_json_int(&json, "rows", r->load[k].rows);
            cli_json_int(&json, "nnz_diag", r->load[k].nnz_diag);
            cli_json_int(&json, "nnz_off", r->load[k].nnz_off);
            cli_json_int(&json, "halo", r->load[k].halo);
            cli_json_int(&json, "sent", r->load[k].sent);
            cli_json_int(&json, "recv_ranks", r->load[k].recv_ranks);
            cli_json_int(&json, "send_ranks", r->load[k].send_ranks);
            cli_json_close(&json);
        }
        cli_json_close(&json);
    }
    cli_json_end(&json);
}
