/* triad.c - in-job triad bandwidth (see triad.h). */
#include "triad.h"
#include "common.h"
#include "mpi_stats.h"

#include <math.h>
#include <stdlib.h>

/* Smallest arrays: below this a pass is timer resolution, not bandwidth. */
#define TRIAD_MIN_LEN 4096L

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void triad_open(triad *t, MPI_Comm comm, double bytes_per_rank)
{
    if (bytes_per_rank > TRIAD_MAX_BYTES)
        bytes_per_rank = TRIAD_MAX_BYTES;
    /* A triad element moves 24 bytes: two reads and one write. */
    long len = (long)(bytes_per_rank / 24.0);
    t->len = len < TRIAD_MIN_LEN ? TRIAD_MIN_LEN : len;
    t->comm = comm;
    t->n = 0;
    MPI_Comm_size(comm, &t->nranks);
    t->a = cg_xmalloc((size_t)t->len * sizeof(double));
    t->b = cg_xmalloc((size_t)t->len * sizeof(double));
    t->c = cg_xmalloc((size_t)t->len * sizeof(double));
    double *a = t->a, *b = t->b, *c = t->c;
    CG_OMP(parallel for schedule(static))
    for (long i = 0; i < t->len; i++) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
}

void triad_pass(triad *t)
{
    if (t->n >= TRIAD_MAX)
        return; /* every rank has recorded as many: all return alike */
    double *a = t->a, *b = t->b, *c = t->c;
    const double q = 3.0;
    const long len = t->len;
    MPI_Barrier(t->comm);
    cgm_count_other();
    double t0 = MPI_Wtime();
    CG_OMP(parallel for schedule(static))
    for (long i = 0; i < len; i++)
        a[i] = b[i] + q * c[i];
    double dt = MPI_Wtime() - t0, slowest;
    cgm_allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, t->comm);
    /* Rotated so that no pass writes what the previous one wrote. */
    t->a = b;
    t->b = a;
    if (slowest > 0)
        t->gbs[t->n++] = 24.0 * (double)len * t->nranks / slowest * 1e-9;
}

void triad_bracket(triad *t)
{
    for (int pass = 0; pass < TRIAD_BRACKET; pass++)
        triad_pass(t);
}

void triad_close(triad *t)
{
    cg_free(t->a);
    cg_free(t->b);
    cg_free(t->c);
    t->a = t->b = t->c = NULL;
}

double triad_median(const triad *t)
{
    if (t->n == 0)
        return NAN;
    double v[TRIAD_MAX];
    for (int i = 0; i < t->n; i++)
        v[i] = t->gbs[i];
    qsort(v, (size_t)t->n, sizeof(double), by_value);
    return t->n % 2 ? v[t->n / 2] : 0.5 * (v[t->n / 2 - 1] + v[t->n / 2]);
}
