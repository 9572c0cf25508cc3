/* cg.h - conjugate-gradient solvers (classic and pipelined, optional
 * Jacobi preconditioning). */
#ifndef CGSOLVER_CG_H
#define CGSOLVER_CG_H

#include "csr.h"
#include "mpi_stats.h"
#include "options.h"
#include "perf.h"

#define CG_MAX_RESTARTS 5

typedef struct {
    int iterations;   /* x updates performed */
    int restarts;     /* residual replacements (true residual too large at convergence) */
    int converged;    /* recurrence residual reached tol */
    int breakdown;    /* non-positive curvature / non-finite coefficient */
    double bnorm;     /* ||b|| */
    double res0;      /* initial relative residual ||b - A x0|| / ||b|| */
    double res_final; /* final relative recurrence residual */
    double time_solve;
    perf_stats perf;
    int ritz_n;       /* Lanczos steps used for the estimates below */
    double ritz_min, ritz_max; /* extreme Ritz values of the preconditioned operator */
} cg_result;

/* Work run between iterations that is not the solve's (the in-job triad):
 * fn(arg) every `every` iterations, at a point where no communication is in
 * flight, on every rank at the same iteration; its time is left out of the
 * solve's and added to `time`, its MPI calls are added to `counts`. */
typedef struct {
    void (*fn)(void *arg);
    void *arg;
    int every;
    double time;
    mpi_counts counts;
} cg_probe;

/* Solve A x = b from the initial guess in x (length csr_vec_len(A)).
 * probe may be NULL. Collective. */
void cg_solve(dist_csr *A, const double *b, double *x, const cg_options *o, cg_probe *probe,
              cg_result *res);

/* ||b - A x|| (global), using tmp (length csr_vec_len(A)) as scratch. */
double true_residual_norm(dist_csr *A, const double *b, double *x, double *tmp,
                          perf_stats *ps);

#endif
