"""The C programs' own checks, built out of tree with each MPI flavour:
cgsolver's unit tests and its MPI tests at 1, 2 and 4 ranks, valgrind's
memcheck of both, and the profiling library's checks (under each MPI found).
Each build is warnings-clean under -Wall -Wextra.

`make check-c` runs this file alone; `make test` runs it among the other
files, on whichever worker is free, rather than before them all.
"""

import os
import subprocess

import pytest
from conftest import PROJECT

#: name -> (directory, make target, variables).
CHECKS = {
    'cgsolver-openmpi': (
        'src/cgsolver',
        'check',
        {'CC': 'mpicc.openmpi', 'MPIRUN': 'mpirun.openmpi --oversubscribe'},
    ),
    'cgsolver-mpich': (
        'src/cgsolver',
        'check',
        {'CC': 'mpicc.mpich', 'MPIRUN': 'mpiexec.hydra'},
    ),
    'cgsolver-memcheck': ('src/cgsolver', 'memcheck', {'CC': 'mpicc.openmpi'}),
    'mpiprof': ('src/mpiprof', 'check', {}),
}


@pytest.mark.parametrize('name', CHECKS)
def test_the_c_check_passes_warnings_clean(name, tmp_path):
    directory, target, variables = CHECKS[name]
    done = subprocess.run(
        ['make', '-C', os.path.join(PROJECT, directory), target,
         f'BUILD={tmp_path / "build"}',
         *(f'{key}={value}' for key, value in variables.items())],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-6000:]
    assert 'warning:' not in out, [x for x in out.splitlines() if 'warning:' in x]
