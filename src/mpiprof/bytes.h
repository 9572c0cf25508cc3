/* bytes.h - payload sizes of MPI calls, shared by the C and Fortran wrappers. */
#ifndef MPIPROF_BYTES_H
#define MPIPROF_BYTES_H

#include "mpiprof.h"

static inline int mpiprof_comm_size(MPI_Comm comm)
{
    int n = 0;
    if (PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return 0;
    return n;
}

static inline int mpiprof_comm_rank(MPI_Comm comm)
{
    int r = -1;
    if (PMPI_Comm_rank(comm, &r) != MPI_SUCCESS)
        return -1;
    return r;
}

static inline int64_t mpiprof_sum_counts(const int *counts, int n)
{
    int64_t sum = 0;
    for (int i = 0; counts && i < n; i++)
        sum += counts[i];
    return sum;
}

/* Bytes a completed receive delivered (the posted size if unknown). */
static inline uint64_t mpiprof_received_bytes(const MPI_Status *status, MPI_Datatype dt,
                                              int posted)
{
    int n = MPI_UNDEFINED;
    if (PMPI_Get_count(status, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED)
        return n > 0 ? (uint64_t)n : 0;
    return mpiprof_type_bytes(dt, posted);
}

/* Rooted collectives: the root's arguments (root_*) at the root, the
 * rank's own (own_*) elsewhere. */
static inline uint64_t mpiprof_rooted_bytes(MPI_Comm comm, int root, MPI_Datatype own_t,
                                            int own_c, MPI_Datatype root_t, int root_c)
{
    if (mpiprof_comm_rank(comm) == root)
        return mpiprof_type_bytes(root_t, root_c);
    return mpiprof_type_bytes(own_t, own_c);
}

static inline uint64_t mpiprof_rooted_v_bytes(MPI_Comm comm, int root, MPI_Datatype own_t,
                                              int own_c, MPI_Datatype root_t,
                                              const int *root_counts)
{
    int rank = mpiprof_comm_rank(comm);
    if (rank == root)
        return root_counts && rank >= 0 ? mpiprof_type_bytes(root_t, root_counts[rank]) : 0;
    return mpiprof_type_bytes(own_t, own_c);
}

/* The rank's own block of a v-collective that every rank receives. */
static inline uint64_t mpiprof_own_block_bytes(MPI_Comm comm, MPI_Datatype t,
                                               const int *counts)
{
    int rank = mpiprof_comm_rank(comm);
    return counts && rank >= 0 ? mpiprof_type_bytes(t, counts[rank]) : 0;
}

#endif
