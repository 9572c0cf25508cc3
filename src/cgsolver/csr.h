/* csr.h - row-block distributed sparse matrix in CSR format.
 *
 * Each rank owns rows [row0, row0+nlocal).  Column indices are local
 * 32-bit indices: 0..nlocal-1 address owned entries, nlocal..nlocal+nghost-1
 * address ghost (halo) entries, sorted by global index.  Vectors used in
 * SpMV therefore have nlocal+nghost entries; the halo exchange fills the
 * tail.  Rows are classified as interior (only owned columns: can be
 * computed before the halo arrives) or boundary, stored as runs of
 * consecutive rows.  The SpMV reads the rows regrouped into chunks
 * (chunks.h). */
#ifndef CGSOLVER_CSR_H
#define CGSOLVER_CSR_H

#include <mpi.h>
#include <stdint.h>

#include "chunks.h"
#include "partition.h"

typedef struct {
    int nrecv;         /* neighbours we receive ghost values from */
    int *recv_rank;
    int *recv_off;     /* offset into the ghost part of the vector */
    int *recv_cnt;
    int nsend;         /* neighbours we send owned values to */
    int *send_rank;
    int *send_off;     /* offset into send_idx / send_buf */
    int *send_cnt;
    int32_t *send_idx; /* local row indices to pack */
    double *send_buf;
    MPI_Request *reqs; /* nrecv + nsend */
    MPI_Status *stats; /* nrecv + nsend (a real array: avoids GCC warnings
                        * about MPI_STATUSES_IGNORE in some MPI headers) */
} halo_plan;

typedef struct {
    MPI_Comm comm;
    int rank, nranks;
    block_partition part;
    int64_t nglobal;    /* global rows = columns */
    int64_t nnz_global;
    int64_t row0;       /* first owned global row */
    int nlocal;         /* owned rows */
    int64_t nnz_local;
    int32_t *rowptr;    /* nlocal+1 (local nnz must fit in 31 bits) */
    int32_t *col;       /* local column indices */
    double *val;
    double *diag;       /* diagonal entries (nlocal) */
    double *inv_diag;   /* 1/diag (nlocal), for Jacobi */
    int nghost;
    int64_t *ghost_gid; /* global index of every ghost column */
    halo_plan halo;
    int n_int_runs;     /* interior row runs: [start,end) pairs */
    int32_t *int_runs;
    int n_bnd_runs;     /* boundary row runs */
    int32_t *bnd_runs;
    /* What the SpMV reads: the rows of the interior runs, then of the
     * boundary runs, as chunks (chunks.h); col and val are freed once it
     * is built. */
    chunk_matrix chunks;
    double spmv_bytes_global; /* model bytes of one SpMV, all ranks */
} dist_csr;

/* Build the distributed matrix from local rows given with GLOBAL column
 * indices (sorted within each row).  Takes ownership of val, frees
 * rowptr and gcol.  The local nonzero count must not exceed INT32_MAX.  Collective over comm (sets up the halo). */
void csr_build(dist_csr *A, MPI_Comm comm, int64_t nglobal, int64_t row0, int nlocal,
               int64_t *rowptr, int64_t *gcol, double *val);

void csr_free(dist_csr *A);

/* Length vectors must have to be usable as SpMV input. */
static inline int csr_vec_len(const dist_csr *A) { return A->nlocal + A->nghost; }

/* halo.c */
void halo_setup(dist_csr *A);
void halo_free(halo_plan *h);
/* Post receives into x[nlocal..] and sends of owned entries of x. */
void halo_start(dist_csr *A, double *x);
/* Wait for the exchange started by halo_start. */
void halo_finish(dist_csr *A);

#endif
