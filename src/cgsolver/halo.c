/* halo.c - halo (ghost value) exchange with non-blocking point-to-point MPI.
 *
 * Setup: every rank knows which global columns it needs (sorted ghost list)
 * and, from the block partition, who owns them.  Counts are exchanged with
 * one MPI_Alltoall, then the index lists with MPI_Isend/MPI_Irecv, so each
 * owner learns which of its entries to send to whom. */
#include "common.h"
#include "csr.h"
#include "mpi_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_SETUP 101
#define TAG_HALO 202

void halo_setup(dist_csr *A)
{
    halo_plan *h = &A->halo;
    memset(h, 0, sizeof(*h));
    const int p = A->nranks;

    /* Receive side: ghosts are sorted, so each owner's ghosts are contiguous. */
    int *need = cg_xcalloc((size_t)p, sizeof(int));
    for (int i = 0; i < A->nghost; i++)
        need[bp_owner(&A->part, A->ghost_gid[i])]++;
    int nrecv = 0;
    for (int r = 0; r < p; r++)
        if (need[r] > 0)
            nrecv++;
    h->nrecv = nrecv;
    h->recv_rank = cg_xmalloc(sizeof(int) * (size_t)(nrecv + 1));
    h->recv_off = cg_xmalloc(sizeof(int) * (size_t)(nrecv + 1));
    h->recv_cnt = cg_xmalloc(sizeof(int) * (size_t)(nrecv + 1));
    for (int r = 0, k = 0, off = 0; r < p; r++) {
        if (need[r] > 0) {
            h->recv_rank[k] = r;
            h->recv_off[k] = off;
            h->recv_cnt[k] = need[r];
            off += need[r];
            k++;
        }
    }

    /* Send side: learn how many entries each rank needs from us. */
    int *give = cg_xcalloc((size_t)p, sizeof(int));
    MPI_Alltoall(need, 1, MPI_INT, give, 1, MPI_INT, A->comm);
    cgm_count_other();
    int nsend = 0, total = 0;
    for (int r = 0; r < p; r++)
        if (give[r] > 0) {
            nsend++;
            total += give[r];
        }
    h->nsend = nsend;
    h->send_rank = cg_xmalloc(sizeof(int) * (size_t)(nsend + 1));
    h->send_off = cg_xmalloc(sizeof(int) * (size_t)(nsend + 1));
    h->send_cnt = cg_xmalloc(sizeof(int) * (size_t)(nsend + 1));
    h->send_idx = cg_xmalloc(sizeof(int32_t) * (size_t)(total + 1));
    h->send_buf = cg_xmalloc(sizeof(double) * (size_t)(total + 1));
    h->reqs = cg_xmalloc(sizeof(MPI_Request) * (size_t)(nrecv + nsend + 1));
    h->stats = cg_xmalloc(sizeof(MPI_Status) * (size_t)(nrecv + nsend + 1));
    int64_t *gids = cg_xmalloc(sizeof(int64_t) * (size_t)(total + 1));
    for (int r = 0, k = 0, off = 0; r < p; r++) {
        if (give[r] > 0) {
            h->send_rank[k] = r;
            h->send_off[k] = off;
            h->send_cnt[k] = give[r];
            off += give[r];
            k++;
        }
    }

    /* Exchange the global index lists. */
    MPI_Request *rq = h->reqs;
    int nreq = 0;
    for (int k = 0; k < nsend; k++)
        cgm_irecv(gids + h->send_off[k], h->send_cnt[k], MPI_INT64_T, h->send_rank[k], TAG_SETUP,
                  A->comm, &rq[nreq++]);
    for (int k = 0; k < nrecv; k++)
        cgm_isend(A->ghost_gid + h->recv_off[k], h->recv_cnt[k], MPI_INT64_T, h->recv_rank[k],
                  TAG_SETUP, A->comm, &rq[nreq++]);
    MPI_Waitall(nreq, rq, h->stats);

    for (int i = 0; i < total; i++) {
        int64_t loc = gids[i] - A->row0;
        if (loc < 0 || loc >= A->nlocal) {
            fprintf(stderr, "cgsolver: error: internal halo setup inconsistency on rank %d\n",
                    A->rank);
            MPI_Abort(A->comm, CG_EXIT_ERROR);
        }
        h->send_idx[i] = (int32_t)loc;
    }
    cg_free(gids);
    cg_free(need);
    cg_free(give);
}

void halo_free(halo_plan *h)
{
    cg_free(h->recv_rank);
    cg_free(h->recv_off);
    cg_free(h->recv_cnt);
    cg_free(h->send_rank);
    cg_free(h->send_off);
    cg_free(h->send_cnt);
    cg_free(h->send_idx);
    cg_free(h->send_buf);
    cg_free(h->reqs);
    cg_free(h->stats);
    memset(h, 0, sizeof(*h));
}

void halo_start(dist_csr *A, double *x)
{
    halo_plan *h = &A->halo;
    double *ghost = x + A->nlocal;
    for (int k = 0; k < h->nrecv; k++)
        cgm_irecv(ghost + h->recv_off[k], h->recv_cnt[k], MPI_DOUBLE, h->recv_rank[k], TAG_HALO,
                  A->comm, &h->reqs[k]);
    for (int k = 0; k < h->nsend; k++) {
        double *restrict buf = h->send_buf + h->send_off[k];
        const int32_t *restrict idx = h->send_idx + h->send_off[k];
        const int cnt = h->send_cnt[k];
        for (int i = 0; i < cnt; i++)
            buf[i] = x[idx[i]];
        cgm_isend(buf, cnt, MPI_DOUBLE, h->send_rank[k], TAG_HALO, A->comm,
                  &h->reqs[h->nrecv + k]);
    }
}

void halo_finish(dist_csr *A)
{
    halo_plan *h = &A->halo;
    if (h->nrecv + h->nsend > 0)
        MPI_Waitall(h->nrecv + h->nsend, h->reqs, h->stats);
}
