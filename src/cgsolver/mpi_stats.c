/* mpi_stats.c - counted MPI wrappers. */
#include "mpi_stats.h"

mpi_counts g_mpi_counts;

static long long type_bytes(MPI_Datatype dt, int count)
{
    int sz = 0;
    MPI_Type_size(dt, &sz);
    return (long long)sz * (long long)count;
}

void mpi_counts_to_array(const mpi_counts *c, long long a[MPI_COUNTS_NFIELDS])
{
    a[0] = c->isend;
    a[1] = c->irecv;
    a[2] = c->allreduce;
    a[3] = c->iallreduce;
    a[4] = c->other_coll;
    a[5] = c->bytes_sent;
    a[6] = c->reduce_bytes;
}

void mpi_counts_from_array(mpi_counts *c, const long long a[MPI_COUNTS_NFIELDS])
{
    c->isend = a[0];
    c->irecv = a[1];
    c->allreduce = a[2];
    c->iallreduce = a[3];
    c->other_coll = a[4];
    c->bytes_sent = a[5];
    c->reduce_bytes = a[6];
}

void mpi_counts_diff(const mpi_counts *after, const mpi_counts *before, mpi_counts *out)
{
    long long a[MPI_COUNTS_NFIELDS], b[MPI_COUNTS_NFIELDS], d[MPI_COUNTS_NFIELDS];
    mpi_counts_to_array(after, a);
    mpi_counts_to_array(before, b);
    for (int i = 0; i < MPI_COUNTS_NFIELDS; i++)
        d[i] = a[i] - b[i];
    mpi_counts_from_array(out, d);
}

void mpi_counts_add(mpi_counts *acc, const mpi_counts *more)
{
    long long a[MPI_COUNTS_NFIELDS], m[MPI_COUNTS_NFIELDS];
    mpi_counts_to_array(acc, a);
    mpi_counts_to_array(more, m);
    for (int i = 0; i < MPI_COUNTS_NFIELDS; i++)
        a[i] += m[i];
    mpi_counts_from_array(acc, a);
}

int cgm_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    g_mpi_counts.isend++;
    g_mpi_counts.bytes_sent += type_bytes(dt, count);
    return MPI_Isend(buf, count, dt, dest, tag, comm, req);
}

int cgm_irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    g_mpi_counts.irecv++;
    return MPI_Irecv(buf, count, dt, src, tag, comm, req);
}

int cgm_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
    g_mpi_counts.allreduce++;
    g_mpi_counts.reduce_bytes += type_bytes(dt, count);
    return MPI_Allreduce(sbuf, rbuf, count, dt, op, comm);
}

int cgm_iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    g_mpi_counts.iallreduce++;
    g_mpi_counts.reduce_bytes += type_bytes(dt, count);
    return MPI_Iallreduce(sbuf, rbuf, count, dt, op, comm, req);
}

void cgm_count_other(void)
{
    g_mpi_counts.other_coll++;
}
