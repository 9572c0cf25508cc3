"""Our acceptance programs (src/fabric): warnings-clean builds and their checks
of their own results (the all-pairs schedule on a real 4-node cluster is in
test_acceptance_cluster.py, with the other tests on the test cluster)."""

import os
import shutil
import subprocess

import pytest
from conftest import PROJECT

from clusterbench.acceptance import outputs

SRC = os.path.join(PROJECT, 'src', 'fabric')
COMPILERS = [cc for cc in ('mpicc.openmpi', 'mpicc.mpich') if shutil.which(cc)]
ROOT_ENV = {'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}


def build(cc, directory):
    proc = subprocess.run(
        [
            'make',
            '-C',
            SRC,
            f'CC={cc}',
            f'BUILD={directory}',
            'CFLAGS=-O2 -std=c11 -Wall -Wextra -Werror',
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'warning' not in (proc.stdout + proc.stderr).lower()
    return os.path.join(directory, 'fabric'), os.path.join(directory, 'nodeprobe')


@pytest.fixture(scope='module')
def programs(tmp_path_factory):
    if not COMPILERS:
        pytest.skip('no MPI C compiler (mpicc.openmpi, mpicc.mpich)')
    return {cc: build(cc, str(tmp_path_factory.mktemp(cc))) for cc in COMPILERS}


def test_both_mpi_flavours_build_without_a_warning(programs):
    for fabric, nodeprobe in programs.values():
        assert os.access(fabric, os.X_OK) and os.access(nodeprobe, os.X_OK)


def test_nodeprobe_measures_and_verifies(programs):
    _, nodeprobe = next(iter(programs.values()))
    proc = subprocess.run(
        [nodeprobe, '--stream-n', '262144', '--stream-reps', '2', '--dgemm-n', '128']
        + ['--samples', '3'],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, 'OPENBLAS_NUM_THREADS': '1'},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = outputs.nodeprobe(proc.stdout)
    assert result['samples'] == 3 and result['dgemm_n'] == 128
    assert result['stream_triad_gbs'] > 0 and result['dgemm_gflops'] > 0
    assert result['dgemm_error'] < 1e-12


def test_nodeprobe_bad_input_is_one_line(programs):
    _, nodeprobe = next(iter(programs.values()))
    proc = subprocess.run(
        [nodeprobe, '--samples', 'many'], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1
    assert proc.stderr == 'nodeprobe: error: bad value for --samples: many\n'


def test_fabric_refuses_ranks_that_share_one_node(programs):
    if 'mpicc.openmpi' not in programs:
        pytest.skip('Open MPI not installed')
    fabric, _ = programs['mpicc.openmpi']
    proc = subprocess.run(
        ['mpirun', '--oversubscribe', '-np', '2', fabric],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **ROOT_ENV},
        check=False,
    )
    assert proc.returncode != 0
    mine = [ln for ln in proc.stderr.splitlines() if ln.startswith('fabric:')]
    assert mine == [
        f'fabric: error: all 2 rank(s) run on one node ({os.uname().nodename}): '
        'nothing to measure (a launcher/MPI mismatch starts N one-rank jobs)'
    ]
    assert 'FABRIC_JSON' not in proc.stdout
