/* problem.c - problem construction and distribution. */
#include "problem.h"
#include "common.h"
#include "mmio_reader.h"
#include "mpi_stats.h"
#include "spmv.h"
#include "sysmem.h"
#include "triad.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

double problem_mem_estimate(long long rows_per_rank, int points)
{
    /* per nonzero, at the peak: CSR value 8 + local column 4, and the
     * SpMV's copy (chunks.h) of at most 8 + 4 while it is made from them
     * (the temporary global column, 8, is freed before; the CSR arrays
     * after); per row: row pointers 12
     * (temporary 64-bit + final 32-bit), diag + inverse 16, flag 1, block
     * headers at most 16, and 11 vectors (x, b, x*, scratch + up to 7
     * solver vectors) of 8 bytes; plus 64 MiB for MPI and the runtime;
     * plus the in-job triad's arrays, about one iteration's traffic. */
    double triad = fmin((double)rows_per_rank * (12.0 * points + 64.0), TRIAD_MAX_BYTES);
    return (double)rows_per_rank * (24.0 * points + 12.0 + 17.0 + 16.0 + 88.0) +
           64.0 * 1048576.0 + triad;
}

static void finish_common(problem *pb, MPI_Comm comm)
{
    dist_csr *A = &pb->A;
    int len = csr_vec_len(A);
    long long nl = A->nlocal, mn, mx;
    cgm_allreduce(&nl, &mn, 1, MPI_LONG_LONG, MPI_MIN, comm);
    cgm_allreduce(&nl, &mx, 1, MPI_LONG_LONG, MPI_MAX, comm);
    pb->rows_min = mn;
    pb->rows_max = mx;

    double dl[2] = {INFINITY, -INFINITY}, dg[2];
    for (int i = 0; i < A->nlocal; i++) {
        dl[0] = fmin(dl[0], A->diag[i]);
        dl[1] = fmax(dl[1], A->diag[i]);
    }
    dl[0] = -dl[0]; /* max of -min */
    cgm_allreduce(dl, dg, 2, MPI_DOUBLE, MPI_MAX, comm);
    pb->diag_ratio = dg[1] / -dg[0];

    /* b = A x* */
    pb->b = cg_xcalloc((size_t)len, sizeof(double));
    spmv(A, pb->xstar, pb->b, NULL, NULL, NULL);
}

static int setup_generated(const cg_options *o, MPI_Comm comm, problem *pb, char *err,
                           size_t errlen)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    stencil_grid *g = &pb->grid;
    if (o->weak) {
        stencil_weak_grid(o->n, p, o->stencil, g);
    } else {
        g->nx = g->ny = g->nz = o->n;
        g->points = o->stencil;
    }
    const int64_t N = stencil_rows(g);
    /* Row blocks follow the lexicographic order, i.e. slabs of z-planes:
     * require at least one grid plane per rank. */
    if (g->nz < p) {
        snprintf(err, errlen,
                 "grid %lldx%lldx%lld is too small for %d ranks (it has %lld planes, at least "
                 "one plane per rank is required; use a larger --n or class)",
                 (long long)g->nx, (long long)g->ny, (long long)g->nz, p, (long long)g->nz);
        return -1;
    }
    block_partition bp = bp_make(N, p);
    /* Memory check: per-rank estimate vs MemAvailable shared by the ranks
     * of each node (the tightest node decides, same result everywhere). */
    double need = problem_mem_estimate(bp_count(&bp, 0), g->points);
    pb->mem_estimate = need;
    double avail = sysmem_available_bytes();
    double budget = avail > 0 ? avail / pb->ranks_on_node : INFINITY, min_budget;
    cgm_allreduce(&budget, &min_budget, 1, MPI_DOUBLE, MPI_MIN, comm);
    if (need > min_budget) {
        snprintf(err, errlen,
                 "problem too large: grid %lldx%lldx%lld (%lld rows, %d-point) needs about "
                 "%.2f GiB per rank but only %.2f GiB per rank are available (MemAvailable / "
                 "ranks per node); use more nodes or a smaller class",
                 (long long)g->nx, (long long)g->ny, (long long)g->nz, (long long)N, g->points,
                 need / 1073741824.0, min_budget / 1073741824.0);
        return -1;
    }

    if (bp_count(&bp, 0) * g->points > INT32_MAX) {
        snprintf(err, errlen,
                 "%lld rows per rank with a %d-point stencil exceed the 32-bit local index "
                 "range; use more ranks",
                 (long long)bp_count(&bp, 0), g->points);
        return -1;
    }
    const int64_t row0 = bp_start(&bp, rank);
    const int nlocal = (int)bp_count(&bp, rank);
    int64_t *rowptr, *gcol;
    double *val;
    stencil_generate(g, row0, nlocal, &rowptr, &gcol, &val);
    csr_build(&pb->A, comm, N, row0, nlocal, rowptr, gcol, val);
    pb->kappa = stencil_kappa(g);

    pb->xstar = cg_xcalloc((size_t)csr_vec_len(&pb->A), sizeof(double));
    for (int i = 0; i < nlocal; i++)
        pb->xstar[i] = stencil_exact(g, row0 + i);
    return 0;
}

static int setup_file(const cg_options *o, MPI_Comm comm, problem *pb, char *err, size_t errlen)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    mm_matrix m;
    memset(&m, 0, sizeof(m));
    long long hdr[3] = {0, 0, 0};
    if (rank == 0) {
        if (mm_read_spd(o->matrix, &m, err, errlen) != 0) {
            hdr[0] = -1;
        } else {
            hdr[1] = m.n;
            if (m.n >= p) {
                block_partition bp = bp_make(m.n, p);
                for (int r = 0; r < p; r++) {
                    int64_t s = bp_start(&bp, r), e = s + bp_count(&bp, r);
                    long long c = m.rowptr[e] - m.rowptr[s];
                    if (c > hdr[2])
                        hdr[2] = c;
                }
            }
        }
    }
    MPI_Bcast(hdr, 3, MPI_LONG_LONG, 0, comm);
    cgm_count_other();
    if (hdr[0] != 0)
        return -1;
    const int64_t n = hdr[1];
    if (n < p) {
        snprintf(err, errlen, "matrix '%s' has %lld rows, fewer than the %d ranks", o->matrix,
                 (long long)n, p);
        mm_free(&m);
        return -1;
    }
    if (hdr[2] > INT_MAX) {
        snprintf(err, errlen, "matrix '%s' has too many nonzeros per rank; use more ranks",
                 o->matrix);
        mm_free(&m);
        return -1;
    }

    /* Scatter row lengths, column indices and values in row blocks. */
    block_partition bp = bp_make(n, p);
    const int64_t row0 = bp_start(&bp, rank);
    const int nlocal = (int)bp_count(&bp, rank);
    int *cnt = NULL, *dsp = NULL, *rowlen_all = NULL;
    if (rank == 0) {
        cnt = cg_xmalloc(sizeof(int) * (size_t)p);
        dsp = cg_xmalloc(sizeof(int) * (size_t)p);
        rowlen_all = cg_xmalloc(sizeof(int) * (size_t)n);
        for (int64_t i = 0; i < n; i++)
            rowlen_all[i] = (int)(m.rowptr[i + 1] - m.rowptr[i]);
        for (int r = 0; r < p; r++) {
            cnt[r] = (int)bp_count(&bp, r);
            dsp[r] = (int)bp_start(&bp, r);
        }
    }
    int *rowlen = cg_xmalloc(sizeof(int) * (size_t)nlocal);
    MPI_Scatterv(rowlen_all, cnt, dsp, MPI_INT, rowlen, nlocal, MPI_INT, 0, comm);
    cgm_count_other();
    int64_t *rowptr = cg_xmalloc(sizeof(int64_t) * ((size_t)nlocal + 1));
    rowptr[0] = 0;
    for (int i = 0; i < nlocal; i++)
        rowptr[i + 1] = rowptr[i] + rowlen[i];
    cg_free(rowlen);
    const int64_t lnnz = rowptr[nlocal];

    /* Element displacements may exceed INT_MAX for huge files, so send
     * from per-rank base pointers with a contiguous type when needed. */
    int64_t *gcol = cg_xmalloc(sizeof(int64_t) * (size_t)(lnnz > 0 ? lnnz : 1));
    double *val = cg_xmalloc(sizeof(double) * (size_t)(lnnz > 0 ? lnnz : 1));
    if (rank == 0) {
        for (int r = 0; r < p; r++) {
            int64_t s = bp_start(&bp, r), e = s + bp_count(&bp, r);
            cnt[r] = (int)(m.rowptr[e] - m.rowptr[s]);
        }
    }
    /* Point-to-point from rank 0 keeps 64-bit offsets (Scatterv displs are int). */
    if (rank == 0) {
        for (int r = 1; r < p; r++) {
            int64_t s = m.rowptr[bp_start(&bp, r)];
            MPI_Request rq[2];
            cgm_isend(m.col + s, cnt[r], MPI_INT64_T, r, 11, comm, &rq[0]);
            cgm_isend(m.val + s, cnt[r], MPI_DOUBLE, r, 12, comm, &rq[1]);
            MPI_Status st[2];
            MPI_Waitall(2, rq, st);
        }
        memcpy(gcol, m.col, sizeof(int64_t) * (size_t)lnnz);
        memcpy(val, m.val, sizeof(double) * (size_t)lnnz);
    } else {
        MPI_Request rq[2];
        cgm_irecv(gcol, (int)lnnz, MPI_INT64_T, 0, 11, comm, &rq[0]);
        cgm_irecv(val, (int)lnnz, MPI_DOUBLE, 0, 12, comm, &rq[1]);
        MPI_Status st[2];
        MPI_Waitall(2, rq, st);
    }
    cg_free(cnt);
    cg_free(dsp);
    cg_free(rowlen_all);
    mm_free(&m);

    csr_build(&pb->A, comm, n, row0, nlocal, rowptr, gcol, val);
    pb->kappa = 0.0;
    pb->xstar = cg_xcalloc((size_t)csr_vec_len(&pb->A), sizeof(double));
    for (int i = 0; i < nlocal; i++)
        pb->xstar[i] = 1.0;
    return 0;
}

int problem_setup(const cg_options *o, MPI_Comm comm, problem *pb, char *err, size_t errlen)
{
    memset(pb, 0, sizeof(*pb));
    MPI_Barrier(comm);
    cgm_count_other();
    double t0 = MPI_Wtime();
    pb->generated = o->matrix == NULL;
    pb->ranks_on_node = sysmem_ranks_on_node(comm);
    int rc = pb->generated ? setup_generated(o, comm, pb, err, errlen)
                           : setup_file(o, comm, pb, err, errlen);
    if (rc != 0)
        return rc;
    finish_common(pb, comm);
    double t = MPI_Wtime() - t0;
    cgm_allreduce(&t, &pb->setup_time, 1, MPI_DOUBLE, MPI_MAX, comm);
    return 0;
}

void problem_free(problem *pb)
{
    csr_free(&pb->A);
    cg_free(pb->b);
    cg_free(pb->xstar);
    memset(pb, 0, sizeof(*pb));
}
