/* perf.h - time breakdown and work counters of a solve.  flops and bytes
 * are GLOBAL (whole-problem) amounts: every rank adds the same model
 * numbers, so any rank's value is the global total. */
#ifndef CGSOLVER_PERF_H
#define CGSOLVER_PERF_H

typedef struct {
    double t_spmv;   /* local SpMV arithmetic */
    double t_halo;   /* posting, packing and waiting for the halo exchange */
    double t_reduce; /* MPI_Allreduce / waiting for MPI_Iallreduce */
    double t_vector; /* fused vector updates and local dot products */
    double flops;    /* floating-point operations (global) */
    double bytes;    /* minimal memory traffic model (global) */
    long long n_spmv;
} perf_stats;

#endif
