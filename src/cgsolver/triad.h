/* triad.h - the memory bandwidth the solve could have had, measured in the
 * same job: a STREAM-like triad over the solver's own footprint, run before
 * the solve, between its iterations and after it. Neighbours that take
 * bandwidth during the job slow the solve and these passes alike, so the
 * solver's share of the triad holds where its absolute rate does not. */
#ifndef CGSOLVER_TRIAD_H
#define CGSOLVER_TRIAD_H

#include <mpi.h>

/* Passes before and after the solve; at most TRIAD_MAX passes in all. */
#define TRIAD_BRACKET 5
#define TRIAD_MAX 256
/* Arrays of at most this many bytes per rank: the solver's memory, not
 * the triad's, must decide whether a problem fits. */
#define TRIAD_MAX_BYTES (512.0 * 1024 * 1024)

typedef struct {
    MPI_Comm comm;
    double *a, *b, *c;
    long len;
    int nranks;
    double gbs[TRIAD_MAX]; /* node bandwidth of each pass, GB/s */
    int n;
} triad;

/* Arrays that move bytes_per_rank bytes per pass (capped), on every rank. */
void triad_open(triad *t, MPI_Comm comm, double bytes_per_rank);
/* One pass on every rank at once; records all ranks' bytes over the
 * slowest rank's time. Collective; a no-op once TRIAD_MAX are recorded. */
void triad_pass(triad *t);
/* TRIAD_BRACKET passes. Collective. */
void triad_bracket(triad *t);
void triad_close(triad *t);

/* The median of the passes, GB/s (NAN without any). */
double triad_median(const triad *t);

#endif
