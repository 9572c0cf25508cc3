/* wrap_f.c - the Fortran (mpif.h / use mpi) bindings.
 *
 * Why these exist: Open MPI 4.1's Fortran bindings (libmpi_mpifh) call
 * PMPI_* directly, so C wrappers alone never see a Fortran call. MPICH 4.0's
 * (libmpichfort) call MPI_*, so there the C wrappers would see them, but
 * other builds differ. Each wrapper here therefore records the call itself
 * and forwards to the MPI library's own Fortran profiling entry point
 * (pmpi_send_ etc., looked up at run time), with mpiprof_depth raised: a C
 * wrapper reached from inside passes through, and no call counts twice.
 * Forwarding to the Fortran PMPI entry (rather than translating to C) keeps
 * the library's handling of MPI_IN_PLACE, MPI_BOTTOM and MPI_STATUS_IGNORE,
 * whose Fortran addresses are the library's own business.
 *
 * Every wrapper is exported under the four usual manglings: mpi_send_,
 * mpi_send__, mpi_send and MPI_SEND.
 */
#define _GNU_SOURCE
#include "mpiprof.h"

#include "bytes.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef MPI_Fint F; /* every Fortran argument is passed by reference */

/* The MPI library's Fortran entry point for mpi_<name>. */
static void *fortran_symbol(const char *name)
{
    char sym[96];
    const char *const forms[] = {"pmpi_%s_", "pmpi_%s__", "pmpi_%s"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        snprintf(sym, sizeof(sym), forms[i], name);
        void *p = dlsym(RTLD_DEFAULT, sym);
        if (p)
            return p;
    }
    snprintf(sym, sizeof(sym), "PMPI_%s", name);
    for (char *q = sym; *q; q++)
        *q = (char)toupper((unsigned char)*q);
    void *p = dlsym(RTLD_DEFAULT, sym);
    if (!p) {
        fprintf(stderr, "mpiprof: the MPI library has no Fortran entry pmpi_%s_\n", name);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

#define RESOLVE(fp, name)                          \
    do {                                           \
        if (!fp) {                                 \
            void *p_ = fortran_symbol(name);       \
            memcpy(&fp, &p_, sizeof(fp));          \
        }                                          \
    } while (0)

#define F_CALL(id, call, bytes_expr)                                          \
    do {                                                                      \
        if (mpiprof_depth) {                                                  \
            call;                                                             \
            return;                                                           \
        }                                                                     \
        double t0_ = mpiprof_now();                                           \
        mpiprof_depth++;                                                      \
        call;                                                                 \
        mpiprof_depth--;                                                      \
        double dt_ = mpiprof_now() - t0_;                                     \
        mpiprof_g.fortran_calls++;                                            \
        mpiprof_record(id, dt_, *ierr == MPI_SUCCESS ? (uint64_t)(bytes_expr) : 0); \
    } while (0)

#define ALIASES(lower, UPPER, proto)                                    \
    void mpi_##lower##_ proto __attribute__((alias("mpiprof_f_" #lower)));  \
    void mpi_##lower##__ proto __attribute__((alias("mpiprof_f_" #lower))); \
    void mpi_##lower proto __attribute__((alias("mpiprof_f_" #lower)));     \
    void MPI_##UPPER proto __attribute__((alias("mpiprof_f_" #lower)));

static inline MPI_Datatype T(const F *t)
{
    return PMPI_Type_f2c(*t);
}

static inline MPI_Comm C(const F *c)
{
    return PMPI_Comm_f2c(*c);
}

static inline uint64_t TB(const F *t, int64_t count)
{
    return mpiprof_type_bytes(T(t), count);
}

static int64_t fsum(const F *counts, int n)
{
    int64_t sum = 0;
    for (int i = 0; counts && i < n; i++)
        sum += counts[i];
    return sum;
}

static uint64_t f_rooted(const F *comm, const F *root, const F *own_t, const F *own_c,
                         const F *root_t, const F *root_c)
{
    if (mpiprof_comm_rank(C(comm)) == *root)
        return TB(root_t, *root_c);
    return TB(own_t, *own_c);
}

static uint64_t f_rooted_v(const F *comm, const F *root, const F *own_t, const F *own_c,
                           const F *root_t, const F *root_counts)
{
    int rank = mpiprof_comm_rank(C(comm));
    if (rank == *root)
        return rank >= 0 ? TB(root_t, root_counts[rank]) : 0;
    return TB(own_t, *own_c);
}

static uint64_t f_received(const F *status, const F *t, const F *posted)
{
    if (status != MPI_F_STATUS_IGNORE) {
        MPI_Status cs;
        if (PMPI_Status_f2c(status, &cs) == MPI_SUCCESS)
            return mpiprof_received_bytes(&cs, T(t), *posted);
    }
    return TB(t, *posted);
}

/* ---- initialisation and finalisation ---- */

#define P_INIT (F * ierr)
void mpiprof_f_init P_INIT;
void mpiprof_f_init(F *ierr)
{
    static void (*real) P_INIT;
    RESOLVE(real, "init");
    double t0 = mpiprof_now();
    mpiprof_depth++;
    real(ierr);
    mpiprof_depth--;
    if (*ierr == MPI_SUCCESS) {
        int level = MPI_THREAD_SINGLE;
        PMPI_Query_thread(&level);
        mpiprof_on_init(t0, level);
    }
}
ALIASES(init, INIT, P_INIT)

#define P_INIT_THREAD (F * required, F * provided, F * ierr)
void mpiprof_f_init_thread P_INIT_THREAD;
void mpiprof_f_init_thread(F *required, F *provided, F *ierr)
{
    static void (*real) P_INIT_THREAD;
    RESOLVE(real, "init_thread");
    double t0 = mpiprof_now();
    mpiprof_depth++;
    real(required, provided, ierr);
    mpiprof_depth--;
    if (*ierr == MPI_SUCCESS)
        mpiprof_on_init(t0, (int)*provided);
}
ALIASES(init_thread, INIT_THREAD, P_INIT_THREAD)

#define P_FINALIZE (F * ierr)
void mpiprof_f_finalize P_FINALIZE;
void mpiprof_f_finalize(F *ierr)
{
    static void (*real) P_FINALIZE;
    RESOLVE(real, "finalize");
    mpiprof_on_finalize();
    mpiprof_depth++;
    real(ierr);
    mpiprof_depth--;
}
ALIASES(finalize, FINALIZE, P_FINALIZE)

/* ---- point-to-point ---- */

#define P_SEND (void *buf, F *count, F *dt, F *dest, F *tag, F *comm, F *ierr)
#define SEND_LIKE(lower, UPPER, id)                                           \
    void mpiprof_f_##lower P_SEND;                                            \
    void mpiprof_f_##lower(void *buf, F *count, F *dt, F *dest, F *tag, F *comm, F *ierr) \
    {                                                                         \
        static void (*real) P_SEND;                                           \
        RESOLVE(real, #lower);                                                \
        F_CALL(id, real(buf, count, dt, dest, tag, comm, ierr), TB(dt, *count)); \
    }                                                                         \
    ALIASES(lower, UPPER, P_SEND)

SEND_LIKE(send, SEND, F_SEND)
SEND_LIKE(ssend, SSEND, F_SSEND)
SEND_LIKE(rsend, RSEND, F_RSEND)
SEND_LIKE(bsend, BSEND, F_BSEND)

#define P_ISEND (void *buf, F *count, F *dt, F *dest, F *tag, F *comm, F *req, F *ierr)
#define ISEND_LIKE(lower, UPPER, id)                                          \
    void mpiprof_f_##lower P_ISEND;                                           \
    void mpiprof_f_##lower(void *buf, F *count, F *dt, F *dest, F *tag, F *comm, F *req, \
                           F *ierr)                                           \
    {                                                                         \
        static void (*real) P_ISEND;                                          \
        RESOLVE(real, #lower);                                                \
        F_CALL(id, real(buf, count, dt, dest, tag, comm, req, ierr), TB(dt, *count)); \
    }                                                                         \
    ALIASES(lower, UPPER, P_ISEND)

ISEND_LIKE(isend, ISEND, F_ISEND)
ISEND_LIKE(issend, ISSEND, F_ISSEND)
ISEND_LIKE(irecv, IRECV, F_IRECV)

#define P_RECV (void *buf, F *count, F *dt, F *src, F *tag, F *comm, F *status, F *ierr)
void mpiprof_f_recv P_RECV;
void mpiprof_f_recv(void *buf, F *count, F *dt, F *src, F *tag, F *comm, F *status, F *ierr)
{
    static void (*real) P_RECV;
    RESOLVE(real, "recv");
    F_CALL(F_RECV, real(buf, count, dt, src, tag, comm, status, ierr),
           f_received(status, dt, count));
}
ALIASES(recv, RECV, P_RECV)

#define P_SENDRECV                                                                     \
    (void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf, F *rcount, F *rtype, \
     F *src, F *rtag, F *comm, F *status, F *ierr)
void mpiprof_f_sendrecv P_SENDRECV;
void mpiprof_f_sendrecv(void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf,
                        F *rcount, F *rtype, F *src, F *rtag, F *comm, F *status, F *ierr)
{
    static void (*real) P_SENDRECV;
    RESOLVE(real, "sendrecv");
    F_CALL(F_SENDRECV,
           real(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status,
                ierr),
           TB(stype, *scount));
}
ALIASES(sendrecv, SENDRECV, P_SENDRECV)

/* ---- completion ---- */

#define P_WAIT (F * req, F *status, F *ierr)
void mpiprof_f_wait P_WAIT;
void mpiprof_f_wait(F *req, F *status, F *ierr)
{
    static void (*real) P_WAIT;
    RESOLVE(real, "wait");
    F_CALL(F_WAIT, real(req, status, ierr), 0);
}
ALIASES(wait, WAIT, P_WAIT)

#define P_WAITALL (F * n, F *reqs, F *statuses, F *ierr)
void mpiprof_f_waitall P_WAITALL;
void mpiprof_f_waitall(F *n, F *reqs, F *statuses, F *ierr)
{
    static void (*real) P_WAITALL;
    RESOLVE(real, "waitall");
    F_CALL(F_WAITALL, real(n, reqs, statuses, ierr), 0);
}
ALIASES(waitall, WAITALL, P_WAITALL)

#define P_WAITANY (F * n, F *reqs, F *index, F *status, F *ierr)
void mpiprof_f_waitany P_WAITANY;
void mpiprof_f_waitany(F *n, F *reqs, F *index, F *status, F *ierr)
{
    static void (*real) P_WAITANY;
    RESOLVE(real, "waitany");
    F_CALL(F_WAITANY, real(n, reqs, index, status, ierr), 0);
}
ALIASES(waitany, WAITANY, P_WAITANY)

#define P_TEST (F * req, F *flag, F *status, F *ierr)
void mpiprof_f_test P_TEST;
void mpiprof_f_test(F *req, F *flag, F *status, F *ierr)
{
    static void (*real) P_TEST;
    RESOLVE(real, "test");
    F_CALL(F_TEST, real(req, flag, status, ierr), 0);
}
ALIASES(test, TEST, P_TEST)

/* ---- collectives ---- */

#define P_BARRIER (F * comm, F *ierr)
void mpiprof_f_barrier P_BARRIER;
void mpiprof_f_barrier(F *comm, F *ierr)
{
    static void (*real) P_BARRIER;
    RESOLVE(real, "barrier");
    F_CALL(F_BARRIER, real(comm, ierr), 0);
}
ALIASES(barrier, BARRIER, P_BARRIER)

#define P_BCAST (void *buf, F *count, F *dt, F *root, F *comm, F *ierr)
void mpiprof_f_bcast P_BCAST;
void mpiprof_f_bcast(void *buf, F *count, F *dt, F *root, F *comm, F *ierr)
{
    static void (*real) P_BCAST;
    RESOLVE(real, "bcast");
    F_CALL(F_BCAST, real(buf, count, dt, root, comm, ierr), TB(dt, *count));
}
ALIASES(bcast, BCAST, P_BCAST)

#define P_REDUCE (void *sbuf, void *rbuf, F *count, F *dt, F *op, F *root, F *comm, F *ierr)
void mpiprof_f_reduce P_REDUCE;
void mpiprof_f_reduce(void *sbuf, void *rbuf, F *count, F *dt, F *op, F *root, F *comm,
                      F *ierr)
{
    static void (*real) P_REDUCE;
    RESOLVE(real, "reduce");
    F_CALL(F_REDUCE, real(sbuf, rbuf, count, dt, op, root, comm, ierr), TB(dt, *count));
}
ALIASES(reduce, REDUCE, P_REDUCE)

#define P_ALLREDUCE (void *sbuf, void *rbuf, F *count, F *dt, F *op, F *comm, F *ierr)
#define ALLREDUCE_LIKE(lower, UPPER, id)                                     \
    void mpiprof_f_##lower P_ALLREDUCE;                                      \
    void mpiprof_f_##lower(void *sbuf, void *rbuf, F *count, F *dt, F *op, F *comm, F *ierr) \
    {                                                                        \
        static void (*real) P_ALLREDUCE;                                     \
        RESOLVE(real, #lower);                                               \
        F_CALL(id, real(sbuf, rbuf, count, dt, op, comm, ierr), TB(dt, *count)); \
    }                                                                        \
    ALIASES(lower, UPPER, P_ALLREDUCE)

ALLREDUCE_LIKE(allreduce, ALLREDUCE, F_ALLREDUCE)
ALLREDUCE_LIKE(scan, SCAN, F_SCAN)

#define P_GATHER                                                                    \
    (void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *root, F *comm, \
     F *ierr)
void mpiprof_f_gather P_GATHER;
void mpiprof_f_gather(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype,
                      F *root, F *comm, F *ierr)
{
    static void (*real) P_GATHER;
    RESOLVE(real, "gather");
    F_CALL(F_GATHER, real(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr),
           f_rooted(comm, root, stype, scount, rtype, rcount));
}
ALIASES(gather, GATHER, P_GATHER)

void mpiprof_f_scatter P_GATHER;
void mpiprof_f_scatter(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype,
                       F *root, F *comm, F *ierr)
{
    static void (*real) P_GATHER;
    RESOLVE(real, "scatter");
    F_CALL(F_SCATTER, real(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr),
           f_rooted(comm, root, rtype, rcount, stype, scount));
}
ALIASES(scatter, SCATTER, P_GATHER)

#define P_GATHERV                                                                       \
    (void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs, F *rtype, F *root, \
     F *comm, F *ierr)
void mpiprof_f_gatherv P_GATHERV;
void mpiprof_f_gatherv(void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs,
                       F *rtype, F *root, F *comm, F *ierr)
{
    static void (*real) P_GATHERV;
    RESOLVE(real, "gatherv");
    F_CALL(F_GATHERV,
           real(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, ierr),
           f_rooted_v(comm, root, stype, scount, rtype, rcounts));
}
ALIASES(gatherv, GATHERV, P_GATHERV)

#define P_SCATTERV                                                                      \
    (void *sbuf, F *scounts, F *displs, F *stype, void *rbuf, F *rcount, F *rtype, F *root, \
     F *comm, F *ierr)
void mpiprof_f_scatterv P_SCATTERV;
void mpiprof_f_scatterv(void *sbuf, F *scounts, F *displs, F *stype, void *rbuf, F *rcount,
                        F *rtype, F *root, F *comm, F *ierr)
{
    static void (*real) P_SCATTERV;
    RESOLVE(real, "scatterv");
    F_CALL(F_SCATTERV,
           real(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, ierr),
           f_rooted_v(comm, root, rtype, rcount, stype, scounts));
}
ALIASES(scatterv, SCATTERV, P_SCATTERV)

#define P_ALLGATHER \
    (void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *comm, F *ierr)
void mpiprof_f_allgather P_ALLGATHER;
void mpiprof_f_allgather(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype,
                         F *comm, F *ierr)
{
    static void (*real) P_ALLGATHER;
    RESOLVE(real, "allgather");
    F_CALL(F_ALLGATHER, real(sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr),
           TB(rtype, *rcount));
}
ALIASES(allgather, ALLGATHER, P_ALLGATHER)

void mpiprof_f_alltoall P_ALLGATHER;
void mpiprof_f_alltoall(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype,
                        F *comm, F *ierr)
{
    static void (*real) P_ALLGATHER;
    RESOLVE(real, "alltoall");
    F_CALL(F_ALLTOALL, real(sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr),
           TB(rtype, (int64_t)*rcount * mpiprof_comm_size(C(comm))));
}
ALIASES(alltoall, ALLTOALL, P_ALLGATHER)

#define P_ALLGATHERV                                                                  \
    (void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs, F *rtype, F *comm, \
     F *ierr)
void mpiprof_f_allgatherv P_ALLGATHERV;
void mpiprof_f_allgatherv(void *sbuf, F *scount, F *stype, void *rbuf, F *rcounts, F *displs,
                          F *rtype, F *comm, F *ierr)
{
    static void (*real) P_ALLGATHERV;
    RESOLVE(real, "allgatherv");
    F_CALL(F_ALLGATHERV, real(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, ierr),
           TB(rtype, rcounts[mpiprof_comm_rank(C(comm))]));
}
ALIASES(allgatherv, ALLGATHERV, P_ALLGATHERV)

#define P_ALLTOALLV                                                                   \
    (void *sbuf, F *scounts, F *sdispls, F *stype, void *rbuf, F *rcounts, F *rdispls, \
     F *rtype, F *comm, F *ierr)
void mpiprof_f_alltoallv P_ALLTOALLV;
void mpiprof_f_alltoallv(void *sbuf, F *scounts, F *sdispls, F *stype, void *rbuf, F *rcounts,
                         F *rdispls, F *rtype, F *comm, F *ierr)
{
    static void (*real) P_ALLTOALLV;
    RESOLVE(real, "alltoallv");
    F_CALL(F_ALLTOALLV,
           real(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, ierr),
           TB(rtype, fsum(rcounts, mpiprof_comm_size(C(comm)))));
}
ALIASES(alltoallv, ALLTOALLV, P_ALLTOALLV)

#define P_REDUCE_SCATTER (void *sbuf, void *rbuf, F *rcounts, F *dt, F *op, F *comm, F *ierr)
void mpiprof_f_reduce_scatter P_REDUCE_SCATTER;
void mpiprof_f_reduce_scatter(void *sbuf, void *rbuf, F *rcounts, F *dt, F *op, F *comm,
                              F *ierr)
{
    static void (*real) P_REDUCE_SCATTER;
    RESOLVE(real, "reduce_scatter");
    F_CALL(F_REDUCE_SCATTER, real(sbuf, rbuf, rcounts, dt, op, comm, ierr),
           TB(dt, fsum(rcounts, mpiprof_comm_size(C(comm)))));
}
ALIASES(reduce_scatter, REDUCE_SCATTER, P_REDUCE_SCATTER)

/* ---- communicators ---- */

#define P_COMM_SPLIT (F * comm, F *color, F *key, F *newcomm, F *ierr)
void mpiprof_f_comm_split P_COMM_SPLIT;
void mpiprof_f_comm_split(F *comm, F *color, F *key, F *newcomm, F *ierr)
{
    static void (*real) P_COMM_SPLIT;
    RESOLVE(real, "comm_split");
    F_CALL(F_COMM_SPLIT, real(comm, color, key, newcomm, ierr), 0);
}
ALIASES(comm_split, COMM_SPLIT, P_COMM_SPLIT)

#define P_COMM_DUP (F * comm, F *newcomm, F *ierr)
void mpiprof_f_comm_dup P_COMM_DUP;
void mpiprof_f_comm_dup(F *comm, F *newcomm, F *ierr)
{
    static void (*real) P_COMM_DUP;
    RESOLVE(real, "comm_dup");
    F_CALL(F_COMM_DUP, real(comm, newcomm, ierr), 0);
}
ALIASES(comm_dup, COMM_DUP, P_COMM_DUP)

#define P_COMM_FREE (F * comm, F *ierr)
void mpiprof_f_comm_free P_COMM_FREE;
void mpiprof_f_comm_free(F *comm, F *ierr)
{
    static void (*real) P_COMM_FREE;
    RESOLVE(real, "comm_free");
    F_CALL(F_COMM_FREE, real(comm, ierr), 0);
}
ALIASES(comm_free, COMM_FREE, P_COMM_FREE)
