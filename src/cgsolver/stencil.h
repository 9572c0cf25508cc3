/* stencil.h - generated 3-D Poisson problems (Dirichlet boundary) on an
 * nx*ny*nz grid, lexicographic ordering g = i + nx*(j + ny*k). */
#ifndef CGSOLVER_STENCIL_H
#define CGSOLVER_STENCIL_H

#include <stdint.h>

typedef struct {
    int64_t nx, ny, nz;
    int points; /* 7 or 27 */
} stencil_grid;

static inline int64_t stencil_rows(const stencil_grid *g) { return g->nx * g->ny * g->nz; }

/* Exact number of nonzeros of the global matrix. */
int64_t stencil_global_nnz(const stencil_grid *g);

/* Generate rows [row0, row0+nrows) with global column indices (sorted per
 * row).  Arrays are allocated here (cg_xmalloc). */
void stencil_generate(const stencil_grid *g, int64_t row0, int nrows, int64_t **rowptr,
                      int64_t **gcol, double **val);

/* Manufactured exact solution at global row gid: a smooth sine product
 * plus a deterministic pseudo-random part (fixed seed, hash of gid, hence
 * independent of the number of ranks). */
double stencil_exact(const stencil_grid *g, int64_t gid);

/* Analytic extreme eigenvalues and condition number of the operator. */
void stencil_eig_bounds(const stencil_grid *g, double *lmin, double *lmax);
double stencil_kappa(const stencil_grid *g);

/* Grid for weak scaling: base edge n per rank, p ranks.  Uses
 * MPI_Dims_create-style balanced factorisation of p into 3 factors so that
 * each rank owns exactly n^3 rows. */
void stencil_weak_grid(long n, int p, int points, stencil_grid *g);

#endif
