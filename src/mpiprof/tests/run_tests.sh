#!/bin/sh
# mpiprof tests: the C and Fortran programs at 2 ranks, preloaded and statically
# linked; each profile must hold exactly the calls and bytes the program made.
#
#   BUILD_DIR  where the Makefile put the library and the test programs
#   MPIRUN     launcher up to the rank count, e.g. "mpirun.openmpi --oversubscribe -np"
#   PYTHON     python3
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=${BUILD_DIR:?}
MPIRUN=${MPIRUN:-mpirun -np}
PYTHON=${PYTHON:-python3}
TIMEOUT=${TIMEOUT:-60}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export MPIPROF_QUIET=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0

run() {
    # run OUT PRELOAD PROGRAM: the launcher inherits LD_PRELOAD and passes it on,
    # as in a ReFrame job script (it must not disturb the launcher itself).
    out=$1 preload=$2 prog=$3
    rm -f "$out"
    if [ -n "$preload" ]; then
        env MPIPROF_OUTPUT="$out" LD_PRELOAD="$preload" timeout "$TIMEOUT" $MPIRUN 2 \
            "$prog" >"$tmp/log" 2>&1 </dev/null
    else
        env MPIPROF_OUTPUT="$out" timeout "$TIMEOUT" $MPIRUN 2 "$prog" >"$tmp/log" 2>&1 </dev/null
    fi
}

check() {
    # check NAME INTERFACE PRELOAD PROGRAM
    name=$1 interface=$2 preload=$3 prog=$4
    run "$tmp/$name.json" "$preload" "$prog"
    rc=$?
    if [ $rc -ne 0 ]; then
        fail=$((fail + 1)); echo "FAIL - $name: exit $rc"; sed 's/^/  /' "$tmp/log"
    elif [ ! -s "$tmp/$name.json" ]; then
        fail=$((fail + 1)); echo "FAIL - $name: no profile written"; sed 's/^/  /' "$tmp/log"
    elif "$PYTHON" "$here/check_profile.py" "$tmp/$name.json" --interface "$interface" \
            >"$tmp/why" 2>&1; then
        pass=$((pass + 1)); echo "ok   - $name"
    else
        fail=$((fail + 1)); echo "FAIL - $name"; cat "$tmp/why"
    fi
}

check "C program, LD_PRELOAD" c "$B/libmpiprof.so" "$B/test_c"
check "C program, linked with libmpiprof.a" c "" "$B/test_c_static"
check "Fortran (mpif.h) program, LD_PRELOAD" fortran "$B/libmpiprof.so" "$B/test_f"
check "Fortran (mpif.h) program, linked with libmpiprof.a" fortran "" "$B/test_f_static"

# What the C layer alone sees of Fortran calls (a finding, not a test).
run "$tmp/c-only.json" "$B/libmpiprof-c-only.so" "$B/test_f"
if [ -s "$tmp/c-only.json" ]; then
    echo "info - Fortran program without Fortran wrappers: $("$PYTHON" "$here/check_profile.py" \
        "$tmp/c-only.json" --count-only) by the C wrappers"
else
    echo "info - Fortran program without Fortran wrappers: no profile at all (the Fortran" \
        "bindings call PMPI_* directly, MPI_Finalize included)"
fi

# An unwritable output path: the program still succeeds, with one line on stderr.
run "/nonexistent-dir/x.json" "$B/libmpiprof.so" "$B/test_c"
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c '^mpiprof: cannot write /nonexistent-dir/x.json' "$tmp/log")" = 1 ]; then
    pass=$((pass + 1)); echo "ok   - unwritable MPIPROF_OUTPUT: one error line, exit 0"
else
    fail=$((fail + 1)); echo "FAIL - unwritable MPIPROF_OUTPUT (exit $rc)"; sed 's/^/  /' "$tmp/log"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
