/* core.c - profiling state, clock, MPI_Init / MPI_Finalize hooks. */
#include "mpiprof.h"

#include <time.h>

mpiprof_state mpiprof_g = {.thread_level = -1};
_Thread_local int mpiprof_depth;

#define MPIPROF_NAME(id, name, cat) name,
const char *const mpiprof_names[F_COUNT] = {MPIPROF_FUNCTIONS(MPIPROF_NAME)};
#undef MPIPROF_NAME
#define MPIPROF_CAT(id, name, cat) cat,
const int mpiprof_categories[F_COUNT] = {MPIPROF_FUNCTIONS(MPIPROF_CAT)};
#undef MPIPROF_CAT

double mpiprof_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wall time counts from library load until MPI_Init is seen (a program
 * whose MPI_Init we do not intercept still gets a meaningful share). */
__attribute__((constructor)) static void mpiprof_load(void)
{
    mpiprof_g.t_start = mpiprof_now();
}

uint64_t mpiprof_type_bytes(MPI_Datatype type, int64_t count)
{
    if (count <= 0)
        return 0;
    MPI_Count size = 0;
    if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (uint64_t)size * (uint64_t)count;
}

void mpiprof_on_init(double t_enter, int thread_level)
{
    if (mpiprof_g.initialized)
        return;
    double t = mpiprof_now();
    mpiprof_g.initialized = 1;
    mpiprof_g.t_init = t - t_enter;
    mpiprof_g.t_start = t;
    mpiprof_g.thread_level = thread_level;
}

void mpiprof_on_finalize(void)
{
    if (mpiprof_g.finalized)
        return;
    mpiprof_g.finalized = 1;
    int up = 0, down = 0;
    PMPI_Initialized(&up);
    PMPI_Finalized(&down);
    if (up && !down)
        mpiprof_write_report();
}
