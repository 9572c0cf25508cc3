/* spmv.h - distributed sparse matrix-vector product with the halo exchange
 * overlapped with the interior rows. */
#ifndef CGSOLVER_SPMV_H
#define CGSOLVER_SPMV_H

#include <mpi.h>

#include "csr.h"
#include "perf.h"

/* y = A x.  x must have csr_vec_len(A) entries (its ghost part is filled
 * here).  If dot != NULL, *dot receives the LOCAL sum of x_i * y_i over
 * owned rows (fused, saves a pass).  If poll is non-NULL, MPI_Test is
 * called on it between interior chunks to progress a pending non-blocking
 * reduction.  ps may be NULL (not accounted). */
void spmv(dist_csr *A, double *x, double *y, double *dot, perf_stats *ps, MPI_Request *poll);

/* Model bytes / flops of one SpMV (global). */
double spmv_model_bytes(const dist_csr *A);
double spmv_model_flops(const dist_csr *A, int with_dot);

#endif
