/* problem.h - set up the linear system: generated Poisson problem or a
 * Matrix Market file, distributed in row blocks, with b = A x*. */
#ifndef CGSOLVER_PROBLEM_H
#define CGSOLVER_PROBLEM_H

#include <stddef.h>

#include "csr.h"
#include "options.h"
#include "stencil.h"

typedef struct {
    int generated;           /* 1: stencil problem, 0: matrix file */
    stencil_grid grid;       /* generated only */
    double kappa;            /* analytic condition number (generated), else 0 */
    double diag_ratio;       /* max(diag)/min(diag) over the whole matrix */
    dist_csr A;
    double *b;               /* right-hand side (csr_vec_len entries) */
    double *xstar;           /* exact solution */
    double setup_time;       /* seconds (max over ranks) */
    long long rows_min, rows_max; /* rows per rank */
    double mem_estimate;     /* estimated bytes per rank (generated) */
    int ranks_on_node;       /* ranks sharing this rank's node (and its memory) */
} problem;

/* Collective.  Returns 0, or -1 on bad input / resources (same result on
 * all ranks; the message in err is valid on rank 0). */
int problem_setup(const cg_options *o, MPI_Comm comm, problem *pb, char *err, size_t errlen);

void problem_free(problem *pb);

/* Bytes per rank the generated problem needs (estimate incl. solver). */
double problem_mem_estimate(long long rows_per_rank, int points);

#endif
