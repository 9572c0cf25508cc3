c     STAND-IN (see ../README), not NPB code. One MPI routine called with an
c     integer and with a double precision buffer, as NPB's Fortran does:
c     gfortran >= 10 rejects this unless -fallow-argument-mismatch is given.
      subroutine probe(n, x)
      include 'mpif.h'
      integer n, ierr
      double precision x
      call mpi_bcast(n, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
      call mpi_bcast(x, 1, MPI_DOUBLE_PRECISION, 0,
     >               MPI_COMM_WORLD, ierr)
      end
