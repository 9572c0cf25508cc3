/* prog_c.c - a fixed sequence of MPI calls whose counts and bytes the
 * profile must reproduce exactly (check_profile.py holds the expectation).
 * prog_f.f90 makes the same calls through the Fortran bindings. 2 ranks. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    static double big[8192];
    double d[4] = {1, 2, 3, 4}, r[4];
    int ints[100] = {0}, rints[100], one, all[2], rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "prog_c: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int peer = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    const int counts[3] = {1, 128, 8192}; /* 8 B, 1 KiB, 64 KiB */
    for (int i = 0; i < 3; i++) {
        if (rank == 0) {
            MPI_Send(big, counts[i], MPI_DOUBLE, peer, i, MPI_COMM_WORLD);
            MPI_Recv(big, counts[i], MPI_DOUBLE, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(big, counts[i], MPI_DOUBLE, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(big, counts[i], MPI_DOUBLE, peer, i, MPI_COMM_WORLD);
        }
    }
    for (int i = 0; i < 5; i++) {
        MPI_Request req[2];
        MPI_Irecv(rints, 100, MPI_INT, peer, 10, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(ints, 100, MPI_INT, peer, 10, MPI_COMM_WORLD, &req[1]);
        MPI_Status sts[2];
        MPI_Waitall(2, req, sts);
    }
    for (int i = 0; i < 7; i++)
        MPI_Allreduce(d, r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++)
        MPI_Bcast(ints, 10, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++)
        MPI_Reduce(d, r, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    one = rank;
    MPI_Alltoall(all, 1, MPI_INT, rints, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++) {
        MPI_Status st;
        MPI_Sendrecv(d, 2, MPI_DOUBLE, peer, 20, r, 2, MPI_DOUBLE, peer, 20, MPI_COMM_WORLD,
                     &st);
    }
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &half);
    MPI_Comm_free(&half);
    MPI_Gather(&one, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
