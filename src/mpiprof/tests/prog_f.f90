! prog_f.f90 - the call sequence of prog_c.c through the mpif.h bindings
! (as NPB uses them), including MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE.
program prog_f
  implicit none
  include 'mpif.h'
  double precision :: big(8192), d(4), r(4)
  integer :: ints(100), rints(100), one, all(2), req(2), st(MPI_STATUS_SIZE)
  integer :: rank, nprocs, peer, i, ierr, half
  integer :: counts(3) = (/ 1, 128, 8192 /)

  big = 0d0
  d = (/ 1d0, 2d0, 3d0, 4d0 /)
  ints = 0
  all = 0
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs /= 2) then
    if (rank == 0) write(0, '(a)') 'prog_f: run with 2 ranks'
    call mpi_abort(MPI_COMM_WORLD, 1, ierr)
  end if
  peer = 1 - rank
  call mpi_barrier(MPI_COMM_WORLD, ierr)
  do i = 1, 3
    if (rank == 0) then
      call mpi_send(big, counts(i), MPI_DOUBLE_PRECISION, peer, i, MPI_COMM_WORLD, ierr)
      call mpi_recv(big, counts(i), MPI_DOUBLE_PRECISION, peer, i, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
    else
      call mpi_recv(big, counts(i), MPI_DOUBLE_PRECISION, peer, i, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
      call mpi_send(big, counts(i), MPI_DOUBLE_PRECISION, peer, i, MPI_COMM_WORLD, ierr)
    end if
  end do
  do i = 1, 5
    call mpi_irecv(rints, 100, MPI_INTEGER, peer, 10, MPI_COMM_WORLD, req(1), ierr)
    call mpi_isend(ints, 100, MPI_INTEGER, peer, 10, MPI_COMM_WORLD, req(2), ierr)
    call mpi_waitall(2, req, MPI_STATUSES_IGNORE, ierr)
  end do
  do i = 1, 7
    call mpi_allreduce(d, r, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  do i = 1, 2
    call mpi_bcast(ints, 10, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  end do
  do i = 1, 3
    call mpi_reduce(d, r, 4, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  end do
  one = rank
  call mpi_alltoall(all, 1, MPI_INTEGER, rints, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, 2
    call mpi_sendrecv(d, 2, MPI_DOUBLE_PRECISION, peer, 20, r, 2, MPI_DOUBLE_PRECISION, &
                      peer, 20, MPI_COMM_WORLD, st, ierr)
  end do
  call mpi_comm_split(MPI_COMM_WORLD, 0, rank, half, ierr)
  call mpi_comm_free(half, ierr)
  call mpi_gather(one, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call mpi_finalize(ierr)
end program prog_f
