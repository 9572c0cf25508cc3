/* report.c - output formatting. */
#include "report.h"
#include "common.h"

#include <math.h>
#include <string.h>

static void json_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* The solve's effective bandwidth, GB/s (NAN without a solve time). */
static double bandwidth_gbs(const run_report *r)
{
    return r->time_s > 0 ? r->bytes / r->time_s * 1e-9 : NAN;
}

/* The bandwidth as a share of the in-job triad's (NAN without either). */
static double triad_share(const run_report *r)
{
    return r->triad_gbs > 0 ? bandwidth_gbs(r) / r->triad_gbs : NAN;
}

static void json_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.9g", x);
    else
        fputs("null", f);
}

static void json_counts(FILE *f, const mpi_counts *c)
{
    fprintf(f,
            "{\"isend\":%lld,\"irecv\":%lld,\"allreduce\":%lld,\"iallreduce\":%lld,"
            "\"other_collectives\":%lld,\"bytes_sent\":%lld,\"allreduce_bytes\":%lld}",
            c->isend, c->irecv, c->allreduce, c->iallreduce, c->other_coll, c->bytes_sent,
            c->reduce_bytes);
}

void report_json(FILE *f, const run_report *r)
{
    fputs("CGSOLVER_JSON: {", f);
    fprintf(f, "\"version\":\"%s\",\"ranks\":%d,\"threads\":%d,", CGSOLVER_VERSION, r->ranks,
            r->threads);
    fputs("\"class\":", f);
    json_str(f, r->cls);
    if (r->grid_n > 0)
        fprintf(f, ",\"grid_n\":%ld,\"grid\":[%lld,%lld,%lld],\"stencil\":%d", r->grid_n,
                r->grid[0], r->grid[1], r->grid[2], r->stencil);
    else
        fputs(",\"grid_n\":null,\"grid\":null,\"stencil\":null", f);
    fputs(",\"problem\":", f);
    json_str(f, r->problem);
    fputs(",\"scaling\":", f);
    json_str(f, r->scaling);
    fputs(",\"variant\":", f);
    json_str(f, r->variant);
    fputs(",\"precond\":", f);
    json_str(f, r->precond);
    fprintf(f, ",\"rows\":%lld,\"nnz\":%lld,\"rows_per_rank_min\":%lld,\"rows_per_rank_max\":%lld",
            r->rows, r->nnz, r->rows_min, r->rows_max);
    fprintf(f, ",\"iterations\":%d,\"restarts\":%d,\"converged\":%s,\"breakdown\":%s",
            r->iterations, r->restarts, r->converged ? "true" : "false",
            r->breakdown ? "true" : "false");
    fputs(",\"tol\":", f);
    json_num(f, r->tol);
    fprintf(f, ",\"maxit\":%ld", r->maxit);
#define NUM(key, v)                 \
    do {                            \
        fputs(",\"" key "\":", f); \
        json_num(f, v);             \
    } while (0)
    NUM("initial_residual", r->initial_residual);
    NUM("final_residual", r->final_residual);
    NUM("true_residual", r->true_residual);
    if (r->error >= 0.0)
        NUM("error", r->error);
    else
        fputs(",\"error\":null", f);
    NUM("error_bound", r->error_bound);
    NUM("solution_norm", r->solution_norm);
    NUM("kappa", r->kappa);
    fputs(",\"kappa_source\":", f);
    json_str(f, r->kappa_source);
    NUM("ritz_min", r->ritz_min);
    NUM("ritz_max", r->ritz_max);
    NUM("time_s", r->time_s);
    NUM("setup_time_s", r->setup_time_s);
    NUM("time_per_iter_s", r->iterations > 0 ? r->time_s / r->iterations : NAN);
    NUM("gflops", r->time_s > 0 ? r->flops / r->time_s * 1e-9 : NAN);
    NUM("bandwidth_gbs", bandwidth_gbs(r));
    NUM("triad_gbs", r->triad_gbs);
    if (r->llc_bytes > 0)
        NUM("llc_bytes", r->llc_bytes);
    else
        fputs(",\"llc_bytes\":null", f);
    fprintf(f, ",\"memory_bound\":%s", r->memory_bound ? "true" : "false");
    /* The solver's bandwidth as a share of the triad's, same job and nodes:
     * printed only for a solve that streams from memory. */
    if (r->memory_bound)
        NUM("bandwidth_triad_share", triad_share(r));
    NUM("flops", r->flops);
    NUM("bytes", r->bytes);
    NUM("flops_per_iter", r->flops_per_iter);
    NUM("bytes_per_iter", r->bytes_per_iter);
    NUM("time_spmv_s", r->t_spmv);
    NUM("time_halo_s", r->t_halo);
    NUM("time_reduce_s", r->t_reduce);
    NUM("time_vector_s", r->t_vector);
    NUM("mpi_share", r->mpi_share);
    NUM("mpi_share_max", r->mpi_share_max);
#undef NUM
    fprintf(f, ",\"verified\":%s", r->verified ? "true" : "false");
    fputs(",\"mpi_counts\":", f);
    json_counts(f, &r->counts_run);
    fputs(",\"mpi_counts_solve\":", f);
    json_counts(f, &r->counts_solve);
    fputs("}\n", f);
}

void report_human(FILE *f, const run_report *r)
{
    fprintf(f, "cgsolver %s - MPI sparse conjugate-gradient benchmark\n", CGSOLVER_VERSION);
    if (r->grid_n > 0)
        fprintf(f,
                "  problem      : generated 3-D Poisson, %d-point stencil, grid %lldx%lldx%lld "
                "(class %s, n=%ld, %s scaling)\n",
                r->stencil, r->grid[0], r->grid[1], r->grid[2], r->cls, r->grid_n, r->scaling);
    else
        fprintf(f, "  problem      : Matrix Market file %s (b = A*ones)\n", r->problem);
    fprintf(f, "  matrix       : %lld rows, %lld nonzeros; %d ranks x %d threads, %lld..%lld rows/rank\n",
            r->rows, r->nnz, r->ranks, r->threads, r->rows_min, r->rows_max);
    fprintf(f, "  solver       : %s CG, preconditioner %s, tol %.3g, maxit %ld\n", r->variant,
            r->precond, r->tol, r->maxit);
    fprintf(f, "  iterations   : %d (residual replacements %d)%s%s\n", r->iterations,
            r->restarts, r->converged ? "" : ", NOT CONVERGED",
            r->breakdown ? ", BREAKDOWN (matrix not SPD?)" : "");
    fprintf(f, "  residual     : initial %.3e, final recurrence %.3e, true ||b-Ax||/||b|| %.3e\n",
            r->initial_residual, r->final_residual, r->true_residual);
    if (r->error >= 0.0)
        fprintf(f, "  error        : ||x-x*||/||x*|| %.3e (bound %.3e, kappa %.4g %s)\n", r->error,
                r->error_bound, r->kappa, r->kappa_source);
    fprintf(f, "  time         : solve %.4f s (%.3f ms/iteration), setup %.3f s\n", r->time_s,
            r->iterations > 0 ? 1e3 * r->time_s / r->iterations : 0.0, r->setup_time_s);
    fprintf(f, "  performance  : %.3f GFLOP/s, effective bandwidth %.3f GB/s (%.1f MB/iteration)\n",
            r->time_s > 0 ? r->flops / r->time_s * 1e-9 : 0.0,
            isfinite(bandwidth_gbs(r)) ? bandwidth_gbs(r) : 0.0, r->bytes_per_iter * 1e-6);
    fprintf(f, "  in-job triad : %.3f GB/s over the same footprint, before, during and after "
               "the solve (solver at %.1f %% of it%s)\n",
            r->triad_gbs,
            isfinite(triad_share(r)) ? 100.0 * triad_share(r) : 0.0,
            r->memory_bound ? "" : "; the problem fits the cache: no figure");
    fprintf(f, "  breakdown    : spmv %.4f s, halo wait %.4f s, reductions %.4f s, vector %.4f s "
               "(max over ranks); MPI share %.1f%%\n",
            r->t_spmv, r->t_halo, r->t_reduce, r->t_vector, 100.0 * r->mpi_share);
    fprintf(f, "  MPI calls    : %lld Isend, %lld Irecv, %lld Allreduce, %lld Iallreduce, "
               "%lld bytes sent (whole run, summed over ranks)\n",
            r->counts_run.isend, r->counts_run.irecv, r->counts_run.allreduce,
            r->counts_run.iallreduce, r->counts_run.bytes_sent);
}
