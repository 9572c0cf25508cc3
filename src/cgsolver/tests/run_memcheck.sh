#!/bin/sh
# Memory checking with valgrind (single process, MPI singleton start).
# Leaks and errors inside the MPI libraries are suppressed with
# valgrind-mpi.supp (plus Open MPI's own file when present); only
# "definitely lost" blocks count as leak errors.
#   CGSOLVER / TEST_UNIT  binaries (default: ../cgsolver, ../test_unit)
#   VALGRIND              default "valgrind"
set -u
here=$(cd "$(dirname "$0")" && pwd)
CGSOLVER=${CGSOLVER:-$here/../cgsolver}
TEST_UNIT=${TEST_UNIT:-$here/../test_unit}
VALGRIND=${VALGRIND:-valgrind}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

supp="--suppressions=$here/valgrind-mpi.supp"
for f in /usr/share/openmpi/openmpi-valgrind.supp; do
    [ -r "$f" ] && supp="$supp --suppressions=$f"
done
vg="$VALGRIND -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite $supp"

pass=0
fail=0
# check LABEL EXPECTED_STATUS CMD...
check() {
    label=$1
    want=$2
    shift 2
    "$@" >/tmp/cgsolver-memcheck.$$ 2>&1
    rc=$?
    if [ "$rc" -eq "$want" ]; then
        pass=$((pass + 1))
        echo "ok   - valgrind clean: $label"
    else
        fail=$((fail + 1))
        echo "FAIL - $label: exit $rc (expected $want; 99 = valgrind error)"
        grep '==[0-9]*==' /tmp/cgsolver-memcheck.$$ | head -n 40
    fi
    rm -f /tmp/cgsolver-memcheck.$$
}

cd "$here" || exit 1
check "unit tests" 0 $vg "$TEST_UNIT"
check "solve n=10 classic" 0 $vg "$CGSOLVER" --n 10
check "solve n=8 27-pt pipelined jacobi" 0 $vg "$CGSOLVER" --n 8 --stencil 27 --variant pipelined --precond jacobi
check "solve matrix file" 0 $vg "$CGSOLVER" --matrix data/poisson2d_10.mtx --precond jacobi
check "weak scaling" 0 $vg "$CGSOLVER" --n 6 --scaling weak --variant pipelined
check "non-symmetric file (error path)" 1 $vg "$CGSOLVER" --matrix data/nonsym_4.mtx
check "bad option (error path)" 1 $vg "$CGSOLVER" --class Z
check "verification failure path" 2 $vg "$CGSOLVER" --n 10 --maxit 3
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
