/*
 * fabric's shared definitions: its options, the job's layout into nodes, the
 * metrics measured per pair of nodes, and what fabric.c and report.c call of
 * each other.
 */
#ifndef FABRIC_H
#define FABRIC_H

#include <mpi.h>

#define FABRIC_VERSION "1.0.0"
#define NAME_LEN MPI_MAX_PROCESSOR_NAME

typedef struct {
    int lat_size, lat_iters, warmup;
    int bw_size, bw_window, bw_iters;
    int mr_size, mr_window, mr_iters;
    double max_time, stall_ms;
} options;

/* Ranks grouped into nodes by processor name, in order of first appearance. */
typedef struct {
    int nnodes, ppn;
    int *node_of;        /* node index of each rank */
    int *local_of;       /* index of each rank within its node */
    int *rank_at;        /* rank of (node, local index): node * ppn + local */
    char (*names)[NAME_LEN];
} layout;

/* The matrices measured, each nnodes x nnodes, in this order. */
enum {
    M_P50,
    M_MEAN,
    M_P99,
    M_MIN,
    M_MAX,
    M_STALLS,
    M_LAT_ITERS,
    M_BW,
    M_BW_PEAK,
    M_BW_ITERS,
    M_MR,
    M_MR_PEAK,
    M_MR_ITERS,
    M_COUNT
};

/* One line "fabric: error: ..." on rank 0, then exit with code. */
void die(int code, const char *msg);

/* The partner node of `node` in round `round` of the circle schedule, or -1. */
int partner(int nnodes, int round, int node);

/* Rank 0's report of the summed matrices *all*; returns whether every pair
 * of distinct nodes was measured (latency, bandwidth and message rate). */
int report(const options *o, const layout *l, int nranks, const double *all,
           const double *round_s, int rounds, double wall);

#endif
