/* main.c - cgsolver driver: parse, set up, solve, verify, report. */
#include "cg.h"
#include "common.h"
#include "mpi_stats.h"
#include "options.h"
#include "problem.h"
#include "report.h"
#include "spmv.h"
#include "sysmem.h"
#include "triad.h"
#include "vecops.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* All ranks reach the same decision; only rank 0 prints the one line. */
static int fail(int rank, const char *msg)
{
    if (rank == 0) {
        fprintf(stderr, "cgsolver: error: %s\n", msg);
        fflush(stderr);
    }
    MPI_Finalize();
    return CG_EXIT_ERROR;
}

/* A triad pass every this many iterations: some 8 to 14 in a class B solve. */
#define TRIAD_EVERY 25

static void triad_probe(void *arg)
{
    triad_pass(arg);
}

int main(int argc, char **argv)
{
    int provided, rank, nranks;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);

    char err[CG_ERRLEN] = "";
    cg_options o;
    if (options_parse(argc, argv, &o, err, sizeof(err)) != 0)
        return fail(rank, err);
    if (o.help) {
        if (rank == 0)
            options_usage(stdout);
        MPI_Finalize();
        return CG_EXIT_OK;
    }

    problem pb;
    if (problem_setup(&o, comm, &pb, err, sizeof(err)) != 0)
        return fail(rank, err);
    dist_csr *A = &pb.A;
    const int len = csr_vec_len(A), n = A->nlocal;

    /* The model's traffic of one iteration, whole problem. */
    const int jac = o.precond == PC_JACOBI;
    const double N = (double)A->nglobal;
    double bytes_per_iter, flops_per_iter;
    if (o.variant == CG_PIPELINED) {
        bytes_per_iter = spmv_model_bytes(A) + N * cg_pipe_update_bytes(jac);
        flops_per_iter = spmv_model_flops(A, 0) + N * cg_pipe_update_flops(jac);
    } else {
        bytes_per_iter =
            spmv_model_bytes(A) + N * (cg_classic_update_bytes(jac) + cg_classic_direction_bytes(jac));
        flops_per_iter = spmv_model_flops(A, 1) +
                         N * (cg_classic_update_flops(jac) + cg_classic_direction_flops(jac));
    }

    /* The triad runs over the footprint one iteration moves: before the
     * solve, between its iterations and after it. */
    triad tr;
    triad_open(&tr, comm, bytes_per_iter / nranks);
    triad_bracket(&tr);
    cg_probe probe = {.fn = triad_probe, .arg = &tr, .every = TRIAD_EVERY};
    mpi_counts before_solve = g_mpi_counts;
    double *x = cg_xcalloc((size_t)len, sizeof(double));
    cg_result res;
    cg_solve(A, pb.b, x, &o, &probe, &res);
    mpi_counts after_solve = g_mpi_counts;
    triad_bracket(&tr);
    triad_close(&tr);
    /* The share judges a solve that streams from memory: one whose
     * iteration moves more than the rank's part of the last-level cache. */
    const double llc = sysmem_llc_bytes();
    const int memory_bound = llc > 0 && bytes_per_iter / nranks >= llc / pb.ranks_on_node;

    /* Verification (not timed): true residual and error, recomputed. */
    double *tmp = cg_xcalloc((size_t)len, sizeof(double));
    double bnorm_loc = vec_dot(n, pb.b, pb.b), bnorm2;
    cgm_allreduce(&bnorm_loc, &bnorm2, 1, MPI_DOUBLE, MPI_SUM, comm);
    double bnorm = bnorm2 > 0 ? sqrt(bnorm2) : 1.0;
    double true_res = true_residual_norm(A, pb.b, x, tmp, NULL) / bnorm;
    double el[3] = {0.0, 0.0, 0.0}, eg[3];
    for (int i = 0; i < n; i++) {
        double d = x[i] - pb.xstar[i];
        el[0] += d * d;
        el[1] += pb.xstar[i] * pb.xstar[i];
        el[2] += x[i] * x[i];
    }
    cgm_allreduce(el, eg, 3, MPI_DOUBLE, MPI_SUM, comm);
    double error = eg[1] > 0 ? sqrt(eg[0] / eg[1]) : sqrt(eg[0]);

    /* Error bound ||x-x*||/||x*|| <= kappa(A) ||b-Ax||/||b||. */
    double kappa, bound;
    const char *kappa_source;
    double ritz_kappa = res.ritz_n > 0 && res.ritz_min > 0 ? res.ritz_max / res.ritz_min : 1.0;
    if (pb.generated) {
        kappa = pb.kappa;
        kappa_source = "analytic";
        bound = 1.01 * kappa * (true_res + 1e-14);
    } else {
        /* Lanczos estimate of the preconditioned operator, times kappa(D)
         * for Jacobi; a lower estimate, hence the safety factor 10. */
        kappa = ritz_kappa * (o.precond == PC_JACOBI ? pb.diag_ratio : 1.0);
        kappa_source = "lanczos";
        bound = 10.0 * kappa * (true_res + 1e-14);
    }
    int verified = res.converged && !res.breakdown && isfinite(true_res) && true_res <= o.tol &&
                   isfinite(error) && error <= bound;

    /* Gather timings and counters. */
    double tl[6] = {res.perf.t_spmv, res.perf.t_halo, res.perf.t_reduce, res.perf.t_vector,
                    res.time_solve, 0.0};
    double mpi_t = res.perf.t_halo + res.perf.t_reduce;
    tl[5] = res.time_solve > 0 ? mpi_t / res.time_solve : 0.0;
    double tmax[6], sums[2], suml[2] = {mpi_t, res.time_solve};
    MPI_Reduce(tl, tmax, 6, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(suml, sums, 2, MPI_DOUBLE, MPI_SUM, 0, comm);
    mpi_counts with_probe, solve_counts;
    mpi_counts_diff(&after_solve, &before_solve, &with_probe);
    /* The solve's own calls: the triad passes between its iterations are not. */
    mpi_counts_diff(&with_probe, &probe.counts, &solve_counts);
    /* three MPI_Reduce calls: the two above and the counter reduction below */
    cgm_count_other();
    cgm_count_other();
    cgm_count_other();
    long long cl[2 * MPI_COUNTS_NFIELDS], cg[2 * MPI_COUNTS_NFIELDS];
    mpi_counts_to_array(&g_mpi_counts, cl);
    mpi_counts_to_array(&solve_counts, cl + MPI_COUNTS_NFIELDS);
    MPI_Reduce(cl, cg, 2 * MPI_COUNTS_NFIELDS, MPI_LONG_LONG, MPI_SUM, 0, comm);

    if (rank == 0) {
        run_report r;
        memset(&r, 0, sizeof(r));
        char cls[16];
        r.ranks = nranks;
        r.threads = cg_num_threads();
        if (pb.generated) {
            if (o.n_given)
                snprintf(cls, sizeof(cls), "custom");
            else
                snprintf(cls, sizeof(cls), "%c", o.cls);
            r.cls = cls;
            r.grid_n = o.n;
            r.grid[0] = pb.grid.nx;
            r.grid[1] = pb.grid.ny;
            r.grid[2] = pb.grid.nz;
            r.stencil = o.stencil;
            r.problem = "generated";
        } else {
            r.cls = NULL;
            r.problem = o.matrix;
        }
        r.scaling = o.weak ? "weak" : "strong";
        r.variant = variant_name(o.variant);
        r.precond = precond_name(o.precond);
        r.rows = (long long)A->nglobal;
        r.nnz = (long long)A->nnz_global;
        r.rows_min = pb.rows_min;
        r.rows_max = pb.rows_max;
        r.tol = o.tol;
        r.maxit = o.maxit;
        r.iterations = res.iterations;
        r.restarts = res.restarts;
        r.converged = res.converged;
        r.breakdown = res.breakdown;
        r.initial_residual = res.res0;
        r.final_residual = res.res_final;
        r.true_residual = true_res;
        r.error = error;
        r.error_bound = bound;
        r.solution_norm = sqrt(eg[2]);
        r.kappa = kappa;
        r.kappa_source = kappa_source;
        r.ritz_min = res.ritz_min;
        r.ritz_max = res.ritz_max;
        r.time_s = tmax[4];
        r.setup_time_s = pb.setup_time;
        r.flops = res.perf.flops;
        r.bytes = res.perf.bytes;
        r.bytes_per_iter = bytes_per_iter;
        r.flops_per_iter = flops_per_iter;
        r.triad_gbs = triad_median(&tr);
        r.llc_bytes = llc;
        r.memory_bound = memory_bound;
        r.t_spmv = tmax[0];
        r.t_halo = tmax[1];
        r.t_reduce = tmax[2];
        r.t_vector = tmax[3];
        r.mpi_share = sums[1] > 0 ? sums[0] / sums[1] : 0.0;
        r.mpi_share_max = tmax[5];
        r.verified = verified;
        mpi_counts_from_array(&r.counts_run, cg);
        mpi_counts_from_array(&r.counts_solve, cg + MPI_COUNTS_NFIELDS);

        report_human(stdout, &r);
        report_json(stdout, &r);
        puts(verified ? "VERIFICATION SUCCESSFUL" : "VERIFICATION FAILED");
        fflush(stdout);
    }

    cg_free(x);
    cg_free(tmp);
    problem_free(&pb);
    /* Debian's MPICH 4.0 over UCX TCP can deadlock in MPI_Finalize when
     * ranks arrive far apart (fixed in MPICH 4.2): meet first. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return verified ? CG_EXIT_OK : CG_EXIT_VERIFY_FAILED;
}
