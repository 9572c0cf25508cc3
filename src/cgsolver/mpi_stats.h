/* mpi_stats.h - counted wrappers around the MPI calls the solver makes, so
 * the program can report how many messages / bytes it generated (for
 * cross-checking an MPI profiler). */
#ifndef CGSOLVER_MPI_STATS_H
#define CGSOLVER_MPI_STATS_H

#include <mpi.h>

typedef struct {
    long long isend;          /* MPI_Isend calls */
    long long irecv;          /* MPI_Irecv calls */
    long long allreduce;      /* MPI_Allreduce calls */
    long long iallreduce;     /* MPI_Iallreduce calls */
    long long other_coll;     /* other collectives (Bcast, Scatterv, Alltoall, Reduce, ...) */
    long long bytes_sent;     /* payload bytes passed to MPI_Isend */
    long long reduce_bytes;   /* payload bytes contributed to (I)allreduce */
} mpi_counts;

#define MPI_COUNTS_NFIELDS 7

extern mpi_counts g_mpi_counts;

void mpi_counts_to_array(const mpi_counts *c, long long a[MPI_COUNTS_NFIELDS]);
void mpi_counts_from_array(mpi_counts *c, const long long a[MPI_COUNTS_NFIELDS]);
void mpi_counts_diff(const mpi_counts *after, const mpi_counts *before, mpi_counts *out);
/* acc += more, field by field. */
void mpi_counts_add(mpi_counts *acc, const mpi_counts *more);

int cgm_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request *req);
int cgm_irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
              MPI_Request *req);
int cgm_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm);
int cgm_iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req);
/* Record one "other" collective call (made directly by the caller). */
void cgm_count_other(void);

#endif
