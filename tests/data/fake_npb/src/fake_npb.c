/*
 * STAND-IN for an NPB benchmark -- clusterbench's own test code, not NPB.
 * It computes nothing of NPB's: it prints a report in NPB 3.x's output format
 * for the benchmark and class it was built for (-DBENCHMARK, -DCLASS) and the
 * processes it runs on, so that the check's build and sanity logic can be
 * exercised in CI. Only classes S and W are known to it. See ../README.
 */
#include <ctype.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct problem {
    const char *bench;
    char cls;
    const char *size;
    int iterations;
    const char *optype;
};

/* NPB's documented problem sizes of classes S and W (facts, see npb_rules). */
static const struct problem problems[] = {
    {"bt", 'S', " 12x  12x  12", 60, "floating point"},
    {"bt", 'W', " 24x  24x  24", 200, "floating point"},
    {"cg", 'S', "1400", 15, "floating point"},
    {"cg", 'W', "7000", 15, "floating point"},
    {"ep", 'S', "33554432", 0, "Random numbers generated"},
    {"ep", 'W', "67108864", 0, "Random numbers generated"},
    {"ft", 'S', " 64x  64x  64", 6, "floating point"},
    {"ft", 'W', "128x 128x  32", 6, "floating point"},
    {"is", 'S', "65536", 10, "keys ranked"},
    {"is", 'W', "1048576", 10, "keys ranked"},
    {"lu", 'S', " 12x  12x  12", 50, "floating point"},
    {"lu", 'W', " 33x  33x  33", 300, "floating point"},
    {"mg", 'S', " 32x  32x  32", 4, "floating point"},
    {"mg", 'W', "128x 128x 128", 4, "floating point"},
    {"sp", 'S', " 12x  12x  12", 100, "floating point"},
    {"sp", 'W', " 36x  36x  36", 400, "floating point"},
};

int main(int argc, char **argv)
{
    int rank, size, i;
    char name[3];
    const struct problem *p = NULL;
    const char *verdict = getenv("FAKE_NPB_VERIFY");
    const char *zeta = getenv("FAKE_NPB_ZETA");
    double t0, t, work = 0.0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 0; i < (int)(sizeof problems / sizeof problems[0]); i++)
        if (!strcmp(problems[i].bench, BENCHMARK) && problems[i].cls == CLASS)
            p = &problems[i];
    if (!p || (COMPILED_NPROCS && size != COMPILED_NPROCS)) {
        if (rank == 0)
            fprintf(stderr, "fake NPB: %s class %c on %d processes not supported\n",
                    BENCHMARK, CLASS, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    name[0] = (char)toupper(BENCHMARK[0]);
    name[1] = (char)toupper(BENCHMARK[1]);
    name[2] = '\0';

    t0 = MPI_Wtime();
    for (i = 1; i <= 2000000; i++)
        work += 1.0 / i;
    MPI_Allreduce(MPI_IN_PLACE, &work, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    t = MPI_Wtime() - t0;

    if (rank == 0) {
        double mops = 4.0 * size / (t > 1e-6 ? t : 1e-6);
        printf("\n\n NAS Parallel Benchmarks 3.4 -- %s Benchmark\n\n", name);
        printf(" Stand-in for tests (not NPB): sum %.3f\n", work);
        printf(" Total number of processes: %6d\n\n", size);
        if (!strcmp(BENCHMARK, "cg")) {
            const char *official = CLASS == 'S' ? "0.8597177507865E+01"
                                                : "0.1036259508712E+02";
            printf(" Zeta is     %s\n", zeta ? zeta : official);
        }
        printf("\n\n %s Benchmark Completed.\n", name);
        printf(" Class           =                        %c\n", CLASS);
        printf(" Size            =            %13s\n", p->size);
        printf(" Iterations      =             %12d\n", p->iterations);
        printf(" Time in seconds =             %12.2f\n", t);
        printf(" Total processes =             %12d\n", size);
        printf(" Active processes=             %12d\n", size);
        printf(" Mop/s total     =             %12.2f\n", mops);
        printf(" Mop/s/process   =             %12.2f\n", mops / size);
        printf(" Operation type  = %24s\n", p->optype);
        printf(" Verification    =             %12s\n",
               verdict ? verdict : "SUCCESSFUL");
        printf(" Version         =             %12s\n", "stand-in");
        printf("\n Compile options:\n");
        printf("    MPIFC        = %s\n", FORTRAN_STR);
        printf("    FFLAGS       = %s\n", FFLAGS_STR);
        printf("    MPICC        = %s\n", MPICC_STR);
        printf("    CFLAGS       = %s\n\n", CFLAGS_STR);
    }
    MPI_Finalize();
    return 0;
}
