/* callcost.c - the cost of one cheap MPI call (MPI_Test on MPI_REQUEST_NULL),
 * in ns: run it with and without the profiler preloaded; the difference is
 * the profiler's cost per call. Prints "CALLCOST_NS <best of 5>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    double best = 1e30;
    MPI_Init(&argc, &argv);
    for (int rep = 0; rep < 5; rep++) {
        double t0 = MPI_Wtime();
        for (long i = 0; i < n; i++) {
            MPI_Request req = MPI_REQUEST_NULL;
            int flag;
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        }
        double dt = MPI_Wtime() - t0;
        if (dt < best)
            best = dt;
    }
    printf("CALLCOST_NS %.2f\n", 1e9 * best / (double)n);
    MPI_Finalize();
    return 0;
}
