/* stencil.c - 7-point and 27-point Poisson operators, exact solution and
 * analytic condition numbers. */
#include "stencil.h"
#include "common.h"

#include <math.h>
#include <mpi.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

int64_t stencil_global_nnz(const stencil_grid *g)
{
    if (g->points == 27)
        return (3 * g->nx - 2) * (3 * g->ny - 2) * (3 * g->nz - 2);
    int64_t n = stencil_rows(g);
    return 7 * n - 2 * (g->ny * g->nz + g->nx * g->nz + g->nx * g->ny);
}

void stencil_generate(const stencil_grid *g, int64_t row0, int nrows, int64_t **rowptr_out,
                      int64_t **gcol_out, double **val_out)
{
    const int64_t nx = g->nx, ny = g->ny, nz = g->nz, nxy = nx * ny;
    const int full = g->points == 27;
    const double center = full ? 26.0 : 6.0;
    int64_t *rowptr = cg_xmalloc(sizeof(int64_t) * ((size_t)nrows + 1));

    /* Count first (exact), then fill. */
    rowptr[0] = 0;
    for (int r = 0; r < nrows; r++) {
        int64_t gid = row0 + r;
        int64_t i = gid % nx, j = (gid / nx) % ny, k = gid / nxy;
        int64_t ci = 1 + (i > 0) + (i < nx - 1);
        int64_t cj = 1 + (j > 0) + (j < ny - 1);
        int64_t ck = 1 + (k > 0) + (k < nz - 1);
        int64_t cnt = full ? ci * cj * ck : (ci + cj + ck - 2);
        rowptr[r + 1] = rowptr[r] + cnt;
    }
    const int64_t nnz = rowptr[nrows];
    int64_t *gcol = cg_xmalloc(sizeof(int64_t) * (size_t)(nnz > 0 ? nnz : 1));
    double *val = cg_xmalloc(sizeof(double) * (size_t)(nnz > 0 ? nnz : 1));

    CG_OMP(parallel for schedule(static))
    for (int r = 0; r < nrows; r++) {
        int64_t gid = row0 + r;
        int64_t i = gid % nx, j = (gid / nx) % ny, k = gid / nxy;
        int64_t e = rowptr[r];
        /* Neighbours in increasing global index order: dk, dj, di. */
        for (int dk = -1; dk <= 1; dk++) {
            if (k + dk < 0 || k + dk >= nz)
                continue;
            for (int dj = -1; dj <= 1; dj++) {
                if (j + dj < 0 || j + dj >= ny)
                    continue;
                for (int di = -1; di <= 1; di++) {
                    if (i + di < 0 || i + di >= nx)
                        continue;
                    int dist = (di != 0) + (dj != 0) + (dk != 0);
                    if (!full && dist > 1)
                        continue;
                    gcol[e] = gid + di + nx * dj + nxy * dk;
                    val[e] = dist == 0 ? center : -1.0;
                    e++;
                }
            }
        }
    }
    *rowptr_out = rowptr;
    *gcol_out = gcol;
    *val_out = val;
}

static uint64_t splitmix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double stencil_exact(const stencil_grid *g, int64_t gid)
{
    const uint64_t seed = 20240601ULL;
    int64_t i = gid % g->nx, j = (gid / g->nx) % g->ny, k = gid / (g->nx * g->ny);
    double x = (double)(i + 1) / (double)(g->nx + 1);
    double y = (double)(j + 1) / (double)(g->ny + 1);
    double z = (double)(k + 1) / (double)(g->nz + 1);
    double smooth = sin(M_PI * x) * sin(2.0 * M_PI * y) * sin(3.0 * M_PI * z);
    double u = (double)(splitmix64((uint64_t)gid ^ seed) >> 11) * 0x1.0p-53; /* [0,1) */
    return 1.0 + smooth + 0.25 * u;
}

void stencil_eig_bounds(const stencil_grid *g, double *lmin, double *lmax)
{
    const int64_t n[3] = {g->nx, g->ny, g->nz};
    if (g->points == 7) {
        /* A = sum_d I x T_d x I with T = tridiag(-1,2,-1): eigenvalues
         * sum_d 4 sin^2(k_d pi / (2(n_d+1))). */
        double lo = 0.0, hi = 0.0;
        for (int d = 0; d < 3; d++) {
            double h = M_PI / (2.0 * (double)(n[d] + 1));
            lo += 4.0 * pow(sin(h), 2);
            hi += 4.0 * pow(sin((double)n[d] * h), 2);
        }
        *lmin = lo;
        *lmax = hi;
        return;
    }
    /* 27-point: A = 27 I - (S x S x S), S = tridiag(1,1,1) with eigenvalues
     * 1 + 2 cos(k pi/(n+1)).  Extremes of a product over a box of factor
     * values are attained at corners. */
    double a[3], b[3];
    for (int d = 0; d < 3; d++) {
        double c = cos(M_PI / (double)(n[d] + 1));
        a[d] = 1.0 + 2.0 * c; /* largest factor */
        b[d] = 1.0 - 2.0 * c; /* smallest factor (negative for n >= 2) */
    }
    double pmax = -INFINITY, pmin = INFINITY;
    for (int m = 0; m < 8; m++) {
        double prod = 1.0;
        for (int d = 0; d < 3; d++)
            prod *= (m >> d & 1) ? b[d] : a[d];
        if (prod > pmax)
            pmax = prod;
        if (prod < pmin)
            pmin = prod;
    }
    *lmin = 27.0 - pmax;
    *lmax = 27.0 - pmin;
}

double stencil_kappa(const stencil_grid *g)
{
    double lo, hi;
    stencil_eig_bounds(g, &lo, &hi);
    return hi / lo;
}

void stencil_weak_grid(long n, int p, int points, stencil_grid *g)
{
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(p, 3, dims); /* non-increasing: dims[0] >= dims[1] >= dims[2] */
    g->nz = (int64_t)n * dims[0];  /* slowest index: the decomposed direction */
    g->ny = (int64_t)n * dims[1];
    g->nx = (int64_t)n * dims[2];
    g->points = points;
}
