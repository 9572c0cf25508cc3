"""src/mpiprof, the PMPI profiling library: warnings-clean builds with both MPIs,
its own `make check` (C and Fortran programs, preloaded and linked, 2 ranks,
Open MPI and MPICH), and where it writes its file."""

import json
import os
import shutil
import subprocess

import pytest
from conftest import PROJECT

from clusterbench.bench import profile

pytestmark = pytest.mark.integration

SRC = os.path.join(PROJECT, 'src', 'mpiprof')
MPIS = {
    'openmpi': ['mpirun.openmpi', '--oversubscribe', '-np', '2'],
    'mpich': ['mpiexec.hydra', '-n', '2'],
}
ROOT_OK = {'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}


def available(mpi):
    return shutil.which(f'mpicc.{mpi}') is not None


@pytest.fixture(scope='module')
def checked(tmp_path_factory):
    """`make check` once: it builds both flavours into check-<mpi>/."""
    build = tmp_path_factory.mktemp('mpiprof')
    proc = subprocess.run(
        ['make', '-C', SRC, f'BUILD={build}', 'check'],
        capture_output=True,
        text=True,
        timeout=600,
    )
    return build, proc


def test_make_check_passes_for_both_mpis(checked):
    build, proc = checked
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for mpi in MPIS:
        if not available(mpi):
            continue
        section = out.split(f'== {mpi}\n', 1)[1].split('== ', 1)[0]
        for case in (
            'C program, LD_PRELOAD',
            'C program, linked with libmpiprof.a',
            'Fortran (mpif.h) program, LD_PRELOAD',
            'Fortran (mpif.h) program, linked with libmpiprof.a',
            'unwritable MPIPROF_OUTPUT: one error line, exit 0',
        ):
            assert f'ok   - {case}\n' in section, (mpi, section)


def test_builds_are_warning_free(checked):
    _, proc = checked
    assert 'warning:' not in proc.stdout + proc.stderr


def run_profiled(mpi, build, cwd, env, args=()):
    lib = os.path.join(build, f'check-{mpi}', 'libmpiprof.so')
    prog = os.path.join(build, f'check-{mpi}', 'test_c')
    return subprocess.run(
        [*MPIS[mpi], prog, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        env={**os.environ, **ROOT_OK, 'LD_PRELOAD': lib, **env},
    )


@pytest.mark.skipif(not available('openmpi'), reason='Open MPI not installed')
def test_output_file_names(checked, tmp_path):
    build, _ = checked
    # Default: ./mpiprof.<job id>.json, the job id of the batch system ...
    run = run_profiled(
        'openmpi', build, tmp_path, {'SLURM_JOB_ID': '4242', 'SLURM_STEP_ID': '3'}
    )
    assert run.returncode == 0, run.stderr
    assert os.path.isfile(tmp_path / 'mpiprof.4242.3.json')
    assert 'mpiprof: wrote mpiprof.4242.3.json (2 ranks, MPI ' in run.stderr
    # ... a directory gets the default name, a template its %j / %p filled in.
    outdir = tmp_path / 'out'
    outdir.mkdir()
    run = run_profiled(
        'openmpi',
        build,
        tmp_path,
        {'PBS_JOBID': '77.pbs', 'MPIPROF_OUTPUT': str(outdir)},
    )
    assert os.path.isfile(outdir / 'mpiprof.77.pbs.json'), run.stderr
    run = run_profiled(
        'openmpi',
        build,
        tmp_path,
        {'MPIPROF_OUTPUT': str(tmp_path / 'p-%j.json'), 'MPIPROF_QUIET': '1'},
    )
    assert run.stderr.strip() == ''
    (written,) = [f for f in os.listdir(tmp_path) if f.startswith('p-')]
    prof = json.loads((tmp_path / written).read_text())
    assert prof['command'].endswith('test_c')
    assert prof['nranks'] == 2 and prof['nodes'] == 1
    assert prof['fortran_calls']['sum'] == 0
    assert not [f for f in os.listdir(tmp_path) if '.tmp' in f]


@pytest.mark.skipif(not available('openmpi'), reason='Open MPI not installed')
def test_odd_command_lines_and_overlong_paths(checked, tmp_path):
    build, _ = checked
    out = tmp_path / 'p.json'
    run = run_profiled(
        'openmpi', build, tmp_path, {'MPIPROF_OUTPUT': str(out)}, ['na\u00efve "q"\t']
    )
    assert run.returncode == 0, run.stderr
    prof = profile.load(str(out))  # valid JSON, valid UTF-8
    assert prof['command'].endswith('test_c na??ve "q"\t')
    run = run_profiled('openmpi', build, tmp_path, {'MPIPROF_OUTPUT': 'x' * 5000})
    assert run.returncode == 0
    assert run.stderr.strip().splitlines() == [
        'mpiprof: MPIPROF_OUTPUT is too long; no profile written'
    ]
