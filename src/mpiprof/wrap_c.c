/* wrap_c.c - the C bindings: MPI_X records and forwards to PMPI_X.
 *
 * Bytes per call (the figure in "bytes" and in the histograms):
 *   sends, Sendrecv(_replace): count x type size of the message sent;
 *   Recv: the bytes actually received; Irecv: the posted buffer size;
 *   Bcast, (I)Reduce, (I)Allreduce, Scan, Exscan: count x type size;
 *   Gather(v): the rank's own block (receive side at the root, so that
 *     MPI_IN_PLACE needs no special case); Scatter(v): the block received
 *     (send side at the root); Allgather(v): the rank's own block;
 *   Alltoall(v): everything the rank receives (== sends, by type matching);
 *   Reduce_scatter(_block): the whole reduced vector;
 *   Barrier: 0. Completion and communicator calls carry no bytes.
 */
#include "mpiprof.h"

#include "bytes.h"

/* Record call, time and bytes; a call nested in a Fortran wrapper passes
 * straight through (the Fortran wrapper records it). */
#define PROFILED(id, call, bytes_expr)                                     \
    do {                                                                   \
        if (mpiprof_depth)                                                 \
            return call;                                                   \
        double t0_ = mpiprof_now();                                        \
        int rc_ = call;                                                    \
        double dt_ = mpiprof_now() - t0_;                                  \
        mpiprof_record(id, dt_, rc_ == MPI_SUCCESS ? (uint64_t)(bytes_expr) : 0); \
        return rc_;                                                        \
    } while (0)

#define TB(type, count) mpiprof_type_bytes(type, count)

/* ---- initialisation and finalisation ---- */

int MPI_Init(int *argc, char ***argv)
{
    double t0 = mpiprof_now();
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) {
        int level = MPI_THREAD_SINGLE;
        PMPI_Query_thread(&level);
        mpiprof_on_init(t0, level);
    }
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    double t0 = mpiprof_now();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        mpiprof_on_init(t0, *provided);
    return rc;
}

int MPI_Finalize(void)
{
    mpiprof_on_finalize();
    return PMPI_Finalize();
}

/* ---- point-to-point ---- */

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    PROFILED(F_SEND, PMPI_Send(buf, count, dt, dest, tag, comm), TB(dt, count));
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    PROFILED(F_SSEND, PMPI_Ssend(buf, count, dt, dest, tag, comm), TB(dt, count));
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    PROFILED(F_RSEND, PMPI_Rsend(buf, count, dt, dest, tag, comm), TB(dt, count));
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    PROFILED(F_BSEND, PMPI_Bsend(buf, count, dt, dest, tag, comm), TB(dt, count));
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    PROFILED(F_ISEND, PMPI_Isend(buf, count, dt, dest, tag, comm, req), TB(dt, count));
}

int MPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    PROFILED(F_ISSEND, PMPI_Issend(buf, count, dt, dest, tag, comm, req), TB(dt, count));
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    PROFILED(F_IRSEND, PMPI_Irsend(buf, count, dt, dest, tag, comm, req), TB(dt, count));
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    PROFILED(F_IBSEND, PMPI_Ibsend(buf, count, dt, dest, tag, comm, req), TB(dt, count));
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    MPI_Status local;
    if (status == MPI_STATUS_IGNORE)
        status = &local;
    PROFILED(F_RECV, PMPI_Recv(buf, count, dt, src, tag, comm, status),
             mpiprof_received_bytes(status, dt, count));
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    PROFILED(F_IRECV, PMPI_Irecv(buf, count, dt, src, tag, comm, req), TB(dt, count));
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                 void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                 MPI_Status *status)
{
    PROFILED(F_SENDRECV,
             PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag,
                           comm, status),
             TB(stype, scount));
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src,
                         int rtag, MPI_Comm comm, MPI_Status *status)
{
    PROFILED(F_SENDRECV_REPLACE,
             PMPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, status),
             TB(dt, count));
}

/* ---- completion ---- */

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    PROFILED(F_WAIT, PMPI_Wait(req, status), 0);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    PROFILED(F_WAITALL, PMPI_Waitall(n, reqs, statuses), 0);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    PROFILED(F_WAITANY, PMPI_Waitany(n, reqs, index, status), 0);
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    PROFILED(F_WAITSOME, PMPI_Waitsome(n, reqs, outcount, indices, statuses), 0);
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    PROFILED(F_TEST, PMPI_Test(req, flag, status), 0);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    PROFILED(F_TESTALL, PMPI_Testall(n, reqs, flag, statuses), 0);
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    PROFILED(F_TESTANY, PMPI_Testany(n, reqs, index, flag, status), 0);
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    PROFILED(F_TESTSOME, PMPI_Testsome(n, reqs, outcount, indices, statuses), 0);
}

int MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *status)
{
    PROFILED(F_PROBE, PMPI_Probe(src, tag, comm, status), 0);
}

int MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    PROFILED(F_IPROBE, PMPI_Iprobe(src, tag, comm, flag, status), 0);
}

/* ---- collectives ---- */

int MPI_Barrier(MPI_Comm comm)
{
    PROFILED(F_BARRIER, PMPI_Barrier(comm), 0);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    PROFILED(F_BCAST, PMPI_Bcast(buf, count, dt, root, comm), TB(dt, count));
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm)
{
    PROFILED(F_REDUCE, PMPI_Reduce(sbuf, rbuf, count, dt, op, root, comm), TB(dt, count));
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
    PROFILED(F_ALLREDUCE, PMPI_Allreduce(sbuf, rbuf, count, dt, op, comm), TB(dt, count));
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
    PROFILED(F_GATHER, PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
             mpiprof_rooted_bytes(comm, root, stype, scount, rtype, rcount));
}

int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                MPI_Comm comm)
{
    PROFILED(F_GATHERV,
             PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm),
             mpiprof_rooted_v_bytes(comm, root, stype, scount, rtype, rcounts));
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm)
{
    PROFILED(F_SCATTER, PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
             mpiprof_rooted_bytes(comm, root, rtype, rcount, stype, scount));
}

int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
                 MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm)
{
    PROFILED(F_SCATTERV,
             PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm),
             mpiprof_rooted_v_bytes(comm, root, rtype, rcount, stype, scounts));
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    PROFILED(F_ALLGATHER, PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm),
             TB(rtype, rcount));
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                   const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    PROFILED(F_ALLGATHERV,
             PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm),
             mpiprof_own_block_bytes(comm, rtype, rcounts));
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    PROFILED(F_ALLTOALL, PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm),
             TB(rtype, (int64_t)rcount * mpiprof_comm_size(comm)));
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                  MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                  MPI_Datatype rtype, MPI_Comm comm)
{
    PROFILED(F_ALLTOALLV,
             PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm),
             TB(rtype, mpiprof_sum_counts(rcounts, mpiprof_comm_size(comm))));
}

int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm)
{
    PROFILED(F_REDUCE_SCATTER, PMPI_Reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm),
             TB(dt, mpiprof_sum_counts(rcounts, mpiprof_comm_size(comm))));
}

int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt,
                             MPI_Op op, MPI_Comm comm)
{
    PROFILED(F_REDUCE_SCATTER_BLOCK, PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm),
             TB(dt, (int64_t)rcount * mpiprof_comm_size(comm)));
}

int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
             MPI_Comm comm)
{
    PROFILED(F_SCAN, PMPI_Scan(sbuf, rbuf, count, dt, op, comm), TB(dt, count));
}

int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
               MPI_Comm comm)
{
    PROFILED(F_EXSCAN, PMPI_Exscan(sbuf, rbuf, count, dt, op, comm), TB(dt, count));
}

/* ---- non-blocking collectives (time is the time to start them) ---- */

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    PROFILED(F_IBARRIER, PMPI_Ibarrier(comm, req), 0);
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
               MPI_Request *req)
{
    PROFILED(F_IBCAST, PMPI_Ibcast(buf, count, dt, root, comm, req), TB(dt, count));
}

int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request *req)
{
    PROFILED(F_IREDUCE, PMPI_Ireduce(sbuf, rbuf, count, dt, op, root, comm, req),
             TB(dt, count));
}

int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    PROFILED(F_IALLREDUCE, PMPI_Iallreduce(sbuf, rbuf, count, dt, op, comm, req),
             TB(dt, count));
}

int MPI_Igather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    PROFILED(F_IGATHER,
             PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req),
             mpiprof_rooted_bytes(comm, root, stype, scount, rtype, rcount));
}

int MPI_Iscatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)
{
    PROFILED(F_ISCATTER,
             PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req),
             mpiprof_rooted_bytes(comm, root, rtype, rcount, stype, scount));
}

int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    PROFILED(F_IALLGATHER,
             PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req),
             TB(rtype, rcount));
}

int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    PROFILED(F_IALLTOALL,
             PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req),
             TB(rtype, (int64_t)rcount * mpiprof_comm_size(comm)));
}

/* ---- communicators ---- */

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    PROFILED(F_COMM_SPLIT, PMPI_Comm_split(comm, color, key, newcomm), 0);
}

int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    PROFILED(F_COMM_SPLIT_TYPE, PMPI_Comm_split_type(comm, type, key, info, newcomm), 0);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    PROFILED(F_COMM_DUP, PMPI_Comm_dup(comm, newcomm), 0);
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    PROFILED(F_COMM_CREATE, PMPI_Comm_create(comm, group, newcomm), 0);
}

int MPI_Comm_free(MPI_Comm *comm)
{
    PROFILED(F_COMM_FREE, PMPI_Comm_free(comm), 0);
}
