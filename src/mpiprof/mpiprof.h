/* mpiprof.h - internal interface of the PMPI profiling library.
 *
 * Every intercepted MPI function has an id (MPIPROF_FUNCTIONS below). A call
 * is recorded per rank as: one more call, its wall time, its payload bytes
 * and one count in its log2 message-size histogram. The table is reduced
 * over MPI_COMM_WORLD in the MPI_Finalize wrapper and rank 0 writes one JSON
 * file for the job (see output.c).
 */
#ifndef MPIPROF_H
#define MPIPROF_H

#include <mpi.h>
#include <stdint.h>

#define MPIPROF_VERSION "1.0.0"
#define MPIPROF_FORMAT "clusterbench-mpiprof/1"

/* Histogram bins: bin 0 holds 0-byte messages, bin k >= 1 holds sizes in
 * [2^(k-1), 2^k) bytes, so 65 bins cover every 64-bit size. */
#define MPIPROF_NBINS 65

enum mpiprof_category {
    CAT_P2P,        /* point-to-point transfers: bytes and histogram */
    CAT_COLLECTIVE, /* collectives: bytes and histogram */
    CAT_COMPLETION, /* wait / test / probe: time only */
    CAT_COMM,       /* communicator management: time only */
    CAT_COUNT
};

/* X(id, MPI name, category) */
#define MPIPROF_FUNCTIONS(X)                            \
    X(SEND, "MPI_Send", CAT_P2P)                        \
    X(SSEND, "MPI_Ssend", CAT_P2P)                      \
    X(RSEND, "MPI_Rsend", CAT_P2P)                      \
    X(BSEND, "MPI_Bsend", CAT_P2P)                      \
    X(ISEND, "MPI_Isend", CAT_P2P)                      \
    X(ISSEND, "MPI_Issend", CAT_P2P)                    \
    X(IRSEND, "MPI_Irsend", CAT_P2P)                    \
    X(IBSEND, "MPI_Ibsend", CAT_P2P)                    \
    X(RECV, "MPI_Recv", CAT_P2P)                        \
    X(IRECV, "MPI_Irecv", CAT_P2P)                      \
    X(SENDRECV, "MPI_Sendrecv", CAT_P2P)                \
    X(SENDRECV_REPLACE, "MPI_Sendrecv_replace", CAT_P2P) \
    X(WAIT, "MPI_Wait", CAT_COMPLETION)                 \
    X(WAITALL, "MPI_Waitall", CAT_COMPLETION)           \
    X(WAITANY, "MPI_Waitany", CAT_COMPLETION)           \
    X(WAITSOME, "MPI_Waitsome", CAT_COMPLETION)         \
    X(TEST, "MPI_Test", CAT_COMPLETION)                 \
    X(TESTALL, "MPI_Testall", CAT_COMPLETION)           \
    X(TESTANY, "MPI_Testany", CAT_COMPLETION)           \
    X(TESTSOME, "MPI_Testsome", CAT_COMPLETION)         \
    X(PROBE, "MPI_Probe", CAT_COMPLETION)               \
    X(IPROBE, "MPI_Iprobe", CAT_COMPLETION)             \
    X(BARRIER, "MPI_Barrier", CAT_COLLECTIVE)           \
    X(BCAST, "MPI_Bcast", CAT_COLLECTIVE)               \
    X(REDUCE, "MPI_Reduce", CAT_COLLECTIVE)             \
    X(ALLREDUCE, "MPI_Allreduce", CAT_COLLECTIVE)       \
    X(GATHER, "MPI_Gather", CAT_COLLECTIVE)             \
    X(GATHERV, "MPI_Gatherv", CAT_COLLECTIVE)           \
    X(SCATTER, "MPI_Scatter", CAT_COLLECTIVE)           \
    X(SCATTERV, "MPI_Scatterv", CAT_COLLECTIVE)         \
    X(ALLGATHER, "MPI_Allgather", CAT_COLLECTIVE)       \
    X(ALLGATHERV, "MPI_Allgatherv", CAT_COLLECTIVE)     \
    X(ALLTOALL, "MPI_Alltoall", CAT_COLLECTIVE)         \
    X(ALLTOALLV, "MPI_Alltoallv", CAT_COLLECTIVE)       \
    X(REDUCE_SCATTER, "MPI_Reduce_scatter", CAT_COLLECTIVE) \
    X(REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block", CAT_COLLECTIVE) \
    X(SCAN, "MPI_Scan", CAT_COLLECTIVE)                 \
    X(EXSCAN, "MPI_Exscan", CAT_COLLECTIVE)             \
    X(IBARRIER, "MPI_Ibarrier", CAT_COLLECTIVE)         \
    X(IBCAST, "MPI_Ibcast", CAT_COLLECTIVE)             \
    X(IREDUCE, "MPI_Ireduce", CAT_COLLECTIVE)           \
    X(IALLREDUCE, "MPI_Iallreduce", CAT_COLLECTIVE)     \
    X(IGATHER, "MPI_Igather", CAT_COLLECTIVE)           \
    X(ISCATTER, "MPI_Iscatter", CAT_COLLECTIVE)         \
    X(IALLGATHER, "MPI_Iallgather", CAT_COLLECTIVE)     \
    X(IALLTOALL, "MPI_Ialltoall", CAT_COLLECTIVE)       \
    X(COMM_SPLIT, "MPI_Comm_split", CAT_COMM)           \
    X(COMM_SPLIT_TYPE, "MPI_Comm_split_type", CAT_COMM) \
    X(COMM_DUP, "MPI_Comm_dup", CAT_COMM)               \
    X(COMM_CREATE, "MPI_Comm_create", CAT_COMM)         \
    X(COMM_FREE, "MPI_Comm_free", CAT_COMM)

#define MPIPROF_ID(id, name, cat) F_##id,
enum mpiprof_function { MPIPROF_FUNCTIONS(MPIPROF_ID) F_COUNT };
#undef MPIPROF_ID

typedef struct {
    uint64_t calls;
    uint64_t bytes;
    double time;
    uint64_t hist[MPIPROF_NBINS];
} mpiprof_stat;

typedef struct {
    mpiprof_stat fn[F_COUNT];
    double t_start;       /* end of MPI_Init (or library load) */
    double t_init;        /* time spent in MPI_Init / MPI_Init_thread */
    uint64_t fortran_calls; /* calls that entered through a Fortran binding */
    int thread_level;     /* provided level, -1 if MPI_Init was not seen */
    int initialized;
    int finalized;
} mpiprof_state;

extern mpiprof_state mpiprof_g;
extern const char *const mpiprof_names[F_COUNT];
extern const int mpiprof_categories[F_COUNT];

/* Nesting depth of our own wrappers on this thread: a C wrapper reached
 * from inside a Fortran wrapper (MPICH's Fortran bindings call MPI_*, Open
 * MPI's call PMPI_*) passes straight through, so no call is counted twice. */
extern _Thread_local int mpiprof_depth;

double mpiprof_now(void);
uint64_t mpiprof_type_bytes(MPI_Datatype type, int64_t count);
void mpiprof_on_init(double t_enter, int thread_level);
void mpiprof_on_finalize(void);

static inline int mpiprof_bin(uint64_t bytes)
{
    return bytes ? 64 - __builtin_clzll(bytes) : 0;
}

static inline void mpiprof_record(int id, double dt, uint64_t bytes)
{
    mpiprof_stat *s = &mpiprof_g.fn[id];
    s->calls++;
    s->time += dt;
    s->bytes += bytes;
    if (mpiprof_categories[id] <= CAT_COLLECTIVE)
        s->hist[mpiprof_bin(bytes)]++;
}

/* The JSON report (output.c): reduce over MPI_COMM_WORLD, rank 0 writes. */
void mpiprof_write_report(void);

#endif
