/* report.h - human-readable summary and the single-line JSON record. */
#ifndef CGSOLVER_REPORT_H
#define CGSOLVER_REPORT_H

#include <stdio.h>

#include "mpi_stats.h"

typedef struct {
    /* configuration */
    int ranks, threads;
    const char *cls;       /* class letter string or NULL (matrix file) */
    long grid_n;           /* base grid edge, 0 if none */
    long long grid[3];     /* nx ny nz */
    int stencil;           /* 0 if none */
    const char *problem;   /* "generated" or the matrix file path */
    const char *scaling, *variant, *precond;
    long long rows, nnz, rows_min, rows_max;
    double tol;
    long maxit;
    /* results */
    int iterations, restarts, converged, breakdown;
    double initial_residual, final_residual, true_residual;
    double error, error_bound; /* error < 0: unknown (null) */
    double solution_norm;      /* ||x||_2, to compare answers across runs */
    double kappa;
    const char *kappa_source;
    double ritz_min, ritz_max;
    double time_s, setup_time_s;
    double flops, bytes, bytes_per_iter, flops_per_iter;
    double triad_gbs; /* in-job triad, node GB/s (median of the passes) */
    double llc_bytes; /* last-level cache of rank 0's CPU, < 0 unknown */
    int memory_bound; /* an iteration moves more than the ranks' LLC share */
    double t_spmv, t_halo, t_reduce, t_vector; /* max over ranks */
    double mpi_share, mpi_share_max;
    int verified;
    mpi_counts counts_run, counts_solve; /* summed over ranks */
} run_report;

/* Human summary (several lines). */
void report_human(FILE *f, const run_report *r);

/* Exactly one line: "CGSOLVER_JSON: {...}\n". */
void report_json(FILE *f, const run_report *r);

#endif
