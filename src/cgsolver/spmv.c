/* spmv.c - overlapped SpMV: post halo, interior rows, wait, boundary rows. */
#include "spmv.h"
#include "common.h"

#include <string.h>

#define POLL_BLOCKS 4096 /* blocks (up to 32768 rows) between MPI_Test calls */

/* Prefetch, found by measurement on AMD Zen 4 (class B, one rank, the
 * variants alternating in one process): x three chunks ahead (x is read
 * from L2; without the hint the slots' x streams stall on its latency);
 * the values of short chunks (7-point) 4 KB ahead into L2, 17 % faster
 * than none; the values of long chunks (27-point) not at all, 6 % faster
 * than 2 KB ahead. */
#define X_AHEAD (3 * CHUNK_ROWS)
#define VAL_AHEAD 512
#define SHORT_CHUNK 16

#if defined(__GNUC__)
/* Two doubles: SSE2 on any x86-64, so no -march is needed for it. */
typedef double pair __attribute__((vector_size(16)));

static inline pair load_pair(const double *p)
{
    pair v;
    memcpy(&v, p, sizeof v); /* unaligned: x + column starts anywhere */
    return v;
}

/* s[j] = row j of the chunk times x: per slot, CHUNK_ROWS consecutive
 * values times CHUNK_ROWS consecutive x entries. */
static inline void chunk_rows(const double *restrict v, const int32_t *restrict c,
                              const double *restrict x, int w, double *restrict s)
{
    pair a0 = {0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0;
    const int short_chunk = w < SHORT_CHUNK;
    for (int k = 0; k < w; k++) {
        const double *xs = x + c[k], *vs = v + (size_t)k * CHUNK_ROWS;
        if (short_chunk)
            __builtin_prefetch(vs + VAL_AHEAD, 0, 1);
        __builtin_prefetch(xs + X_AHEAD, 0, 3);
        a0 += load_pair(vs) * load_pair(xs);
        a1 += load_pair(vs + 2) * load_pair(xs + 2);
        a2 += load_pair(vs + 4) * load_pair(xs + 4);
        a3 += load_pair(vs + 6) * load_pair(xs + 6);
    }
    memcpy(s, &a0, sizeof a0);
    memcpy(s + 2, &a1, sizeof a1);
    memcpy(s + 4, &a2, sizeof a2);
    memcpy(s + 6, &a3, sizeof a3);
}
_Static_assert(CHUNK_ROWS == 8, "chunk_rows holds a chunk in four pairs");
#else
static inline void chunk_rows(const double *restrict v, const int32_t *restrict c,
                              const double *restrict x, int w, double *restrict s)
{
    for (int j = 0; j < CHUNK_ROWS; j++)
        s[j] = 0.0;
    for (int k = 0; k < w; k++)
        for (int j = 0; j < CHUNK_ROWS; j++)
            s[j] += v[(size_t)k * CHUNK_ROWS + j] * x[c[k] + j];
}
#endif

/* y = A x over blocks [b0, b1); returns the sum of y_i x_i over their rows. */
static double blocks_kernel(const chunk_matrix *M, const double *restrict x,
                            double *restrict y, int b0, int b1)
{
    double dot = 0.0;
    CG_OMP(parallel for schedule(static) reduction(+:dot))
    for (int b = b0; b < b1; b++) {
        const int r = M->row[b], w = M->width[b];
        const double *restrict v = M->val + M->voff[b];
        const int32_t *restrict c = M->col + M->coff[b];
        if (w > 0) {
            double s[CHUNK_ROWS];
            chunk_rows(v, c, x, w, s);
            for (int j = 0; j < CHUNK_ROWS; j++) {
                y[r + j] = s[j];
                dot += s[j] * x[r + j];
            }
        } else {
            double s = 0.0;
            for (int e = 0; e < -w; e++)
                s += v[e] * x[c[e]];
            y[r] = s;
            dot += s * x[r];
        }
    }
    return dot;
}

double spmv_model_bytes(const dist_csr *A) { return A->spmv_bytes_global; }

double spmv_model_flops(const dist_csr *A, int with_dot)
{
    return 2.0 * (double)A->nnz_global + (with_dot ? 2.0 * (double)A->nglobal : 0.0);
}

void spmv(dist_csr *A, double *x, double *y, double *dot, perf_stats *ps, MPI_Request *poll)
{
    double t0 = MPI_Wtime();
    halo_start(A, x);
    double t1 = MPI_Wtime();

    const chunk_matrix *M = &A->chunks;
    double d = 0.0;
    for (int k = 0; k < A->n_int_runs; k++) {
        int b0 = M->range_blk[k], b1 = M->range_blk[k + 1];
        if (poll == NULL) {
            d += blocks_kernel(M, x, y, b0, b1);
            continue;
        }
        for (int c = b0; c < b1; c += POLL_BLOCKS) {
            int c1 = c + POLL_BLOCKS < b1 ? c + POLL_BLOCKS : b1;
            d += blocks_kernel(M, x, y, c, c1);
            if (*poll != MPI_REQUEST_NULL) {
                int flag;
                MPI_Test(poll, &flag, MPI_STATUS_IGNORE);
            }
        }
    }
    double t2 = MPI_Wtime();
    halo_finish(A);
    double t3 = MPI_Wtime();
    const int nr = A->n_int_runs + A->n_bnd_runs;
    d += blocks_kernel(M, x, y, M->range_blk[A->n_int_runs], M->range_blk[nr]);
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
