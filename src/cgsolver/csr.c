/* csr.c - construction of the distributed CSR matrix: global-to-local
 * column renumbering, ghost list, diagonal, interior/boundary row runs. */
#include "csr.h"
#include "common.h"
#include "mpi_stats.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Position of g in the sorted array v[0..n), which must contain it. */
static int find_i64(const int64_t *v, int n, int64_t g)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (v[mid] < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Collect [start,end) runs of rows whose "is boundary" flag equals want. */
static int make_runs(const unsigned char *bnd, int n, int want, int32_t **runs_out)
{
    int nruns = 0;
    for (int i = 0; i < n; i++)
        if (bnd[i] == want && (i == 0 || bnd[i - 1] != want))
            nruns++;
    int32_t *runs = cg_xmalloc(sizeof(int32_t) * 2 * (size_t)(nruns > 0 ? nruns : 1));
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (bnd[i] == want && (i == 0 || bnd[i - 1] != want))
            runs[2 * k] = i;
        if (bnd[i] == want && (i == n - 1 || bnd[i + 1] != want)) {
            runs[2 * k + 1] = i + 1;
            k++;
        }
    }
    *runs_out = runs;
    return nruns;
}

/* The interior runs' rows, then the boundary runs', as chunks; the CSR
 * copy is no longer read. */
static void build_chunks(dist_csr *A)
{
    const int n = A->n_int_runs + A->n_bnd_runs;
    int32_t *ranges = cg_xmalloc(sizeof(int32_t) * 2 * (size_t)(n > 0 ? n : 1));
    if (A->n_int_runs > 0)
        memcpy(ranges, A->int_runs, sizeof(int32_t) * 2 * (size_t)A->n_int_runs);
    if (A->n_bnd_runs > 0)
        memcpy(ranges + 2 * A->n_int_runs, A->bnd_runs, sizeof(int32_t) * 2 * (size_t)A->n_bnd_runs);
    chunks_build(&A->chunks, A->rowptr, A->col, A->val, ranges, n);
    cg_free(ranges);
    cg_free(A->col);
    cg_free(A->val);
    A->col = NULL;
    A->val = NULL;
}

void csr_build(dist_csr *A, MPI_Comm comm, int64_t nglobal, int64_t row0, int nlocal,
               int64_t *rowptr, int64_t *gcol, double *val)
{
    memset(A, 0, sizeof(*A));
    A->comm = comm;
    MPI_Comm_rank(comm, &A->rank);
    MPI_Comm_size(comm, &A->nranks);
    A->part = bp_make(nglobal, A->nranks);
    A->nglobal = nglobal;
    A->row0 = row0;
    A->nlocal = nlocal;
    A->val = val;
    const int64_t nnz = rowptr[nlocal];
    A->rowptr = cg_xmalloc(sizeof(int32_t) * ((size_t)nlocal + 1));
    for (int i = 0; i <= nlocal; i++)
        A->rowptr[i] = (int32_t)rowptr[i];
    A->nnz_local = nnz;
    const int64_t row1 = row0 + nlocal;

    /* Ghost columns: sorted unique off-rank global indices. */
    int64_t nout = 0;
    for (int64_t e = 0; e < nnz; e++)
        if (gcol[e] < row0 || gcol[e] >= row1)
            nout++;
    int64_t *ghost = cg_xmalloc(sizeof(int64_t) * (size_t)(nout > 0 ? nout : 1));
    nout = 0;
    for (int64_t e = 0; e < nnz; e++)
        if (gcol[e] < row0 || gcol[e] >= row1)
            ghost[nout++] = gcol[e];
    qsort(ghost, (size_t)nout, sizeof(int64_t), cmp_i64);
    int nghost = 0;
    for (int64_t i = 0; i < nout; i++)
        if (i == 0 || ghost[i] != ghost[i - 1])
            ghost[nghost++] = ghost[i];
    A->nghost = nghost;
    A->ghost_gid = ghost;

    /* Local 32-bit column indices, diagonal and row classification. */
    A->col = cg_xmalloc(sizeof(int32_t) * (size_t)(nnz > 0 ? nnz : 1));
    A->diag = cg_xmalloc(sizeof(double) * (size_t)nlocal);
    A->inv_diag = cg_xmalloc(sizeof(double) * (size_t)nlocal);
    unsigned char *bnd = cg_xmalloc((size_t)nlocal);
    for (int i = 0; i < nlocal; i++) {
        double d = 0.0;
        unsigned char b = 0;
        for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++) {
            int64_t g = gcol[e];
            if (g >= row0 && g < row1) {
                A->col[e] = (int32_t)(g - row0);
                if (g == row0 + i)
                    d += val[e];
            } else {
                A->col[e] = (int32_t)(nlocal + find_i64(ghost, nghost, g));
                b = 1;
            }
        }
        A->diag[i] = d;
        A->inv_diag[i] = d != 0.0 ? 1.0 / d : 0.0;
        bnd[i] = b;
    }
    cg_free(gcol);
    cg_free(rowptr);
    A->n_int_runs = make_runs(bnd, nlocal, 0, &A->int_runs);
    A->n_bnd_runs = make_runs(bnd, nlocal, 1, &A->bnd_runs);
    cg_free(bnd);
    build_chunks(A);

    long long nnz_ll = (long long)nnz, tot = 0;
    cgm_allreduce(&nnz_ll, &tot, 1, MPI_LONG_LONG, MPI_SUM, comm);
    A->nnz_global = (int64_t)tot;
    /* The matrix as the SpMV reads it, plus reading x and writing y once. */
    double bytes = chunks_bytes(&A->chunks, nnz) + 16.0 * (double)nlocal;
    cgm_allreduce(&bytes, &A->spmv_bytes_global, 1, MPI_DOUBLE, MPI_SUM, comm);

    halo_setup(A);
}

void csr_free(dist_csr *A)
{
    cg_free(A->rowptr);
    cg_free(A->col);
    cg_free(A->val);
    cg_free(A->diag);
    cg_free(A->inv_diag);
    cg_free(A->ghost_gid);
    cg_free(A->int_runs);
    cg_free(A->bnd_runs);
    chunks_free(&A->chunks);
    halo_free(&A->halo);
    memset(A, 0, sizeof(*A));
}
