/* spmv.c - overlapped SpMV: post halo, interior rows, wait, boundary rows. */
#include "spmv.h"
#include "common.h"

#define POLL_CHUNK 32768 /* rows between MPI_Test calls */

/* Rows of the common stencil lengths get a fixed-trip-count inner loop with
 * four independent partial sums (breaks the FMA latency chain); the branch
 * on the row length is almost perfectly predicted.  Other rows (domain
 * boundary, matrix files) take the generic loop.  The summation order
 * depends only on the row, never on the partition, so results do not
 * depend on the number of ranks. */
#define FIXED_ROW(LEN)                                                  \
    do {                                                                \
        const double *restrict v_ = val + e0;                           \
        const int32_t *restrict c_ = col + e0;                          \
        double a_[4] = {0.0, 0.0, 0.0, 0.0};                            \
        int k_ = 0;                                                     \
        for (; k_ + 4 <= (LEN); k_ += 4)                                \
            for (int j_ = 0; j_ < 4; j_++)                              \
                a_[j_] += v_[k_ + j_] * x[c_[k_ + j_]];                 \
        for (int j_ = 0; k_ < (LEN); k_++, j_++)                        \
            a_[j_] += v_[k_] * x[c_[k_]];                               \
        s = (a_[0] + a_[1]) + (a_[2] + a_[3]);                          \
    } while (0)

/* Software prefetch of the two matrix streams ~1.3 KB ahead (prefetches
 * never fault, so running past the end of the arrays is harmless). */
#if defined(__GNUC__)
#define PREFETCH_STREAMS(e0)                                   \
    do {                                                       \
        __builtin_prefetch(val + (e0) + 160, 0, 0);            \
        __builtin_prefetch(col + (e0) + 320, 0, 0);            \
    } while (0)
#else
#define PREFETCH_STREAMS(e0) ((void)0)
#endif

static double rows_kernel(const int32_t *restrict rp, const int32_t *restrict col,
                          const double *restrict val, const double *restrict x,
                          double *restrict y, int r0, int r1)
{
    double dot = 0.0;
    CG_OMP(parallel for schedule(static) reduction(+:dot))
    for (int i = r0; i < r1; i++) {
        double s = 0.0;
        const int e0 = rp[i], e1 = rp[i + 1];
        const int len = e1 - e0;
        PREFETCH_STREAMS(e0);
        if (len == 7)
            FIXED_ROW(7);
        else if (len == 27)
            FIXED_ROW(27);
        else
            for (int e = e0; e < e1; e++)
                s += val[e] * x[col[e]];
        y[i] = s;
        dot += s * x[i];
    }
    return dot;
}

double spmv_model_bytes(const dist_csr *A)
{
    /* values (8) + column index (4) per nonzero, row pointer (4) per row,
     * read x once, write y once. */
    return 12.0 * (double)A->nnz_global + 4.0 * (double)(A->nglobal + A->nranks) +
           16.0 * (double)A->nglobal;
}

double spmv_model_flops(const dist_csr *A, int with_dot)
{
    return 2.0 * (double)A->nnz_global + (with_dot ? 2.0 * (double)A->nglobal : 0.0);
}

void spmv(dist_csr *A, double *x, double *y, double *dot, perf_stats *ps, MPI_Request *poll)
{
    double t0 = MPI_Wtime();
    halo_start(A, x);
    double t1 = MPI_Wtime();

    double d = 0.0;
    for (int k = 0; k < A->n_int_runs; k++) {
        int r0 = A->int_runs[2 * k], r1 = A->int_runs[2 * k + 1];
        if (poll == NULL) {
            d += rows_kernel(A->rowptr, A->col, A->val, x, y, r0, r1);
            continue;
        }
        for (int c = r0; c < r1; c += POLL_CHUNK) {
            int c1 = c + POLL_CHUNK < r1 ? c + POLL_CHUNK : r1;
            d += rows_kernel(A->rowptr, A->col, A->val, x, y, c, c1);
            if (*poll != MPI_REQUEST_NULL) {
                int flag;
                MPI_Test(poll, &flag, MPI_STATUS_IGNORE);
            }
        }
    }
    double t2 = MPI_Wtime();
    halo_finish(A);
    double t3 = MPI_Wtime();
    for (int k = 0; k < A->n_bnd_runs; k++)
        d += rows_kernel(A->rowptr, A->col, A->val, x, y, A->bnd_runs[2 * k],
                         A->bnd_runs[2 * k + 1]);
    double t4 = MPI_Wtime();
    if (dot)
        *dot = d;
    if (ps) {
        ps->t_halo += (t1 - t0) + (t3 - t2);
        ps->t_spmv += (t2 - t1) + (t4 - t3);
        ps->flops += spmv_model_flops(A, dot != NULL);
        ps->bytes += spmv_model_bytes(A);
        ps->n_spmv++;
    }
}
