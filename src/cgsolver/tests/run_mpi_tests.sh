#!/bin/sh
# MPI integration tests for cgsolver.
#
#   MPIRUN    launcher, default "mpirun --oversubscribe" (Open MPI);
#             e.g. MPIRUN=mpiexec.hydra for MPICH
#   CGSOLVER  binary, default ../cgsolver relative to this script
#   RANKS     rank counts to compare, default "1 2 4"
#
# Checks: verification passes at every rank count, the iteration count
# agrees with the 1-rank run within ITER_SLACK (2) iterations, the
# solution norm agrees to 1e-6 (relative), weak scaling keeps the rows per
# rank fixed, bad input exits 1 with exactly one "cgsolver: error: " line
# (no hang: every run has a timeout), and failed verification exits 2.
set -u

here=$(cd "$(dirname "$0")" && pwd)
MPIRUN=${MPIRUN:-mpirun --oversubscribe}
CGSOLVER=${CGSOLVER:-$here/../cgsolver}
RANKS=${RANKS:-1 2 4}
ITER_SLACK=2
TIMEOUT=${TIMEOUT:-120}
DATA=$here/data
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }

# run NP ARGS... : stdout -> $tmp/out, stderr -> $tmp/err, status -> $rc
run() {
    np=$1
    shift
    timeout "$TIMEOUT" $MPIRUN -n "$np" "$CGSOLVER" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}

json() { # json KEY : numeric/bool field of the CGSOLVER_JSON line in $tmp/out
    grep '^CGSOLVER_JSON: ' "$tmp/out" | sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p" | head -n 1
}

# relative difference |a-b| <= tol*|a|
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
    m = a < 0 ? -a : a; exit !(d <= t * m) }'; }

check_consistency() { # label ARGS...
    label=$1
    shift
    it1=""
    nrm1=""
    for np in $RANKS; do
        run "$np" "$@"
        it=$(json iterations)
        nrm=$(json solution_norm)
        nj=$(grep -c '^CGSOLVER_JSON: ' "$tmp/out")
        if [ "$rc" -ne 0 ] || ! grep -qx 'VERIFICATION SUCCESSFUL' "$tmp/out" || [ "$nj" -ne 1 ]; then
            bad "$label np=$np: rc=$rc (expected 0, one JSON line, VERIFICATION SUCCESSFUL)"
            sed 's/^/    /' "$tmp/out" "$tmp/err" | tail -n 20
            continue
        fi
        if [ -z "$it1" ]; then
            it1=$it
            nrm1=$nrm
            ok "$label np=$np: verified, $it iterations"
            continue
        fi
        d=$((it - it1))
        [ $d -lt 0 ] && d=$((-d))
        if [ $d -le $ITER_SLACK ] && close "$nrm1" "$nrm" 1e-6; then
            ok "$label np=$np: verified, $it iterations (1 rank: $it1), solution norm agrees"
        else
            bad "$label np=$np: iterations $it vs $it1 (slack $ITER_SLACK), norm $nrm vs $nrm1"
        fi
        if [ "$np" -gt 1 ]; then
            s=$(grep '^CGSOLVER_JSON: ' "$tmp/out" | sed -n 's/.*"mpi_counts":{"isend":\([0-9]*\),"irecv":\([0-9]*\).*/\1 \2/p')
            a=${s% *}
            b=${s#* }
            if [ -n "$s" ] && [ "$a" = "$b" ] && [ "$a" -gt 0 ]; then
                ok "$label np=$np: MPI_Isend count = MPI_Irecv count ($a)"
            else
                bad "$label np=$np: MPI counts isend/irecv '$s'"
            fi
        fi
    done
}

expect_error() { # label NP pattern ARGS...
    label=$1
    np=$2
    pat=$3
    shift 3
    run "$np" "$@"
    nerr=$(grep -c '^cgsolver: error: ' "$tmp/err")
    if [ "$rc" -eq 1 ] && [ "$nerr" -eq 1 ] && grep -q "^cgsolver: error: .*$pat" "$tmp/err" &&
        ! grep -q 'VERIFICATION' "$tmp/out"; then
        ok "$label (np=$np): exit 1, '$(grep '^cgsolver: error: ' "$tmp/err")'"
    else
        bad "$label (np=$np): rc=$rc, $nerr error lines (expected exit 1 and one line matching '$pat')"
        sed 's/^/    /' "$tmp/err" | head -n 10
    fi
}

echo "# cgsolver MPI tests: MPIRUN='$MPIRUN' RANKS='$RANKS'"

check_consistency "S 7-pt classic" --class S
check_consistency "S 27-pt pipelined jacobi" --class S --stencil 27 --variant pipelined --precond jacobi
check_consistency "n=20 7-pt pipelined" --n 20 --variant pipelined
check_consistency "n=12 27-pt classic jacobi" --n 12 --stencil 27 --precond jacobi
check_consistency "poisson2d_10.mtx classic" --matrix "$DATA/poisson2d_10.mtx"
check_consistency "poisson2d_10.mtx pipelined jacobi" --matrix "$DATA/poisson2d_10.mtx" --variant pipelined --precond jacobi

# Weak scaling: rows per rank stay n^3.
for np in $RANKS; do
    run "$np" --n 10 --scaling weak
    rmin=$(json rows_per_rank_min)
    rmax=$(json rows_per_rank_max)
    if [ "$rc" -eq 0 ] && [ "$rmin" = 1000 ] && [ "$rmax" = 1000 ]; then
        ok "weak scaling np=$np: 1000 rows per rank, verified"
    else
        bad "weak scaling np=$np: rc=$rc rows/rank $rmin..$rmax"
    fi
done

# Bad input: one error line from rank 0, exit 1, no hang.
expect_error "unknown class" 2 "unknown class" --class Q
expect_error "unknown option" 2 "unknown option" --bogus 1
expect_error "missing option value" 2 "needs a value" --tol
expect_error "bad tolerance" 2 "invalid tolerance" --tol -1
expect_error "grid too small for ranks" 4 "too small" --n 3
expect_error "missing matrix file" 2 "cannot open" --matrix "$DATA/no_such_file.mtx"
expect_error "not Matrix Market" 2 "not a Matrix Market file" --matrix "$DATA/not_matrix_market.txt"
expect_error "non-symmetric matrix" 2 "not symmetric" --matrix "$DATA/nonsym_4.mtx"
expect_error "non-positive diagonal" 2 "not positive" --matrix "$DATA/not_positive_diag.mtx"
expect_error "truncated matrix" 2 "file ends" --matrix "$DATA/truncated.mtx"
expect_error "matrix with fewer rows than ranks" 4 "fewer than the 4 ranks" --matrix "$DATA/tiny_spd_3.mtx"
expect_error "memory would not fit" 2 "too large" --n 50000
expect_error "weak scaling with a matrix" 2 "weak" --matrix "$DATA/poisson2d_10.mtx" --scaling weak

# Help and failed verification.
run 2 --help
if [ "$rc" -eq 0 ] && grep -q '^Usage: cgsolver' "$tmp/out"; then ok "--help exits 0"; else bad "--help rc=$rc"; fi
run 2 --class S --maxit 5
if [ "$rc" -eq 2 ] && grep -qx 'VERIFICATION FAILED' "$tmp/out" && [ "$(json verified)" = false ]; then
    ok "iteration limit -> VERIFICATION FAILED, exit 2"
else
    bad "iteration limit: rc=$rc (expected 2)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
