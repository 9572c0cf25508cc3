"""Profiling, provenance and energy end to end: the solver and hpcc under the
profiler with both MPIs, and the plugins through ReFrame (tests/data/
instrumented_checks.py combines them with the library's checks)."""

import glob
import os
import shutil
import subprocess

import pytest
from conftest import PROJECT, read
from rfm import reframe

from clusterbench.bench import profile
from clusterbench.checks.plugins.profiling import build_library
from clusterbench.parsers import cgsolver
from clusterbench.results import details as sessionreport

pytestmark = pytest.mark.integration

MPIS = {
    'openmpi': ['mpirun.openmpi', '--oversubscribe', '-np', '2'],
    'mpich': ['mpiexec.hydra', '-n', '2'],
}
CANNED_NODE = os.path.join(PROJECT, 'tests', 'data', 'sysfs', 'ib-node')
ENV = {
    'OMPI_ALLOW_RUN_AS_ROOT': '1',
    'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1',
    'OMP_NUM_THREADS': '1',
    'MPIPROF_QUIET': '1',
}


@pytest.fixture(scope='module')
def builds(tmp_path_factory):
    """cgsolver and libmpiprof built with each MPI: {mpi: (solver, library)}."""
    out = {}
    for mpi in MPIS:
        if shutil.which(f'mpicc.{mpi}') is None:
            continue
        where = tmp_path_factory.mktemp(mpi)
        subprocess.run(
            ['make', '-s', '-C', os.path.join(PROJECT, 'src', 'cgsolver'),
             f'BUILD={where}', f'CC=mpicc.{mpi}'],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
        lib = build_library(
            os.path.join(PROJECT, 'src', 'mpiprof'),
            str(where / 'mpiprof'),
            f'mpicc.{mpi}',
        )
        out[mpi] = (str(where / 'cgsolver'), lib)
    return out


@pytest.mark.parametrize('mpi', sorted(MPIS))
@pytest.mark.parametrize('variant', ['classic', 'pipelined'])
def test_solver_counters_equal_the_profile(builds, tmp_path, mpi, variant):
    if mpi not in builds:
        pytest.skip(f'{mpi} not installed')
    solver, lib = builds[mpi]
    prof_path = tmp_path / 'p.json'
    run = subprocess.run(
        [*MPIS[mpi], solver, '--class', 'S', '--variant', variant],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, **ENV, 'LD_PRELOAD': lib, 'MPIPROF_OUTPUT': str(prof_path)},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    result = cgsolver.verify(run.stdout)
    prof = profile.load(str(prof_path))
    rows = profile.cross_check(prof, result)
    assert all(ok for *_, ok in rows), rows
    counts = result['mpi_counts']
    assert counts['isend'] > 0 and counts['allreduce'] > 0
    assert (counts['iallreduce'] > 0) == (variant == 'pipelined')
    assert prof['nranks'] == 2 and prof['fortran_calls']['sum'] == 0
    assert 0 < profile.mpi_time_share(prof) <= 1


def test_a_library_that_does_not_build_is_one_line(tmp_path):
    from reframe.core.exceptions import ReframeError

    with pytest.raises(ReframeError) as err:
        build_library(os.path.join(PROJECT, 'src', 'mpiprof'), str(tmp_path), 'no-cc')
    assert str(err.value).startswith('libmpiprof did not build with no-cc: ')
    assert '\n' not in str(err.value)
    with pytest.raises(ReframeError, match='mpiprof sources not found'):
        build_library(str(tmp_path), str(tmp_path / 'b'), 'mpicc')


@pytest.fixture(scope='module')
def session(tmp_path_factory):
    prefix = tmp_path_factory.mktemp('instrumented')
    rc, out, report = reframe(
        prefix,
        '-n', 'InstrumentedCGSolver%stencil=7%variant=classic%ranks_per_node=all',
        '-n', 'CGSolverCannedEnergy%stencil=7%variant=classic%ranks_per_node=all',
        '-n', '^InstrumentedHPCC$',
        '-S', 'problem_class=S', '-S', 'hpl_n=600', '-S', 'hpl_nb=64',
        '-S', 'InstrumentedCGSolver.mpi_profile=1',
        '-S', 'InstrumentedHPCC.mpi_profile=1',
        '-S', f'CGSolverCannedEnergy.energy_sysfs_root={CANNED_NODE}',
        checks='tests/data/instrumented_checks.py',
    )  # fmt: skip
    assert report is not None, out
    cases = {}
    for case in report['runs'][0]['testcases']:
        if not case['fixture']:
            cases[(case['name'].split()[0], case['environ'])] = case
    return rc, out, report, cases, prefix


def figures(case):
    return {k.rsplit(':', 1)[1]: v[0] for k, v in case['perfvalues'].items()}


def test_every_case_passes(session):
    rc, out, _, cases, _ = session
    assert set(cases) == {
        ('InstrumentedCGSolver', 'gnu-openmpi'),
        ('InstrumentedCGSolver', 'gnu-mpich'),
        ('CGSolverCannedEnergy', 'gnu-openmpi'),
        ('InstrumentedHPCC', 'gnu-openmpi'),
    }
    for key, case in cases.items():
        # Its sanity includes: the profile agrees with the solver's counters.
        assert case['result'] == 'pass', (key, case['fail_reason'])
    assert rc == 0, out


@pytest.mark.parametrize(
    'name, environ',
    [
        ('InstrumentedCGSolver', 'gnu-openmpi'),
        ('InstrumentedCGSolver', 'gnu-mpich'),
        ('InstrumentedHPCC', 'gnu-openmpi'),
    ],
)
def test_profiled_runs_keep_share_breakdown_and_histograms(session, name, environ):
    case = session[3][(name, environ)]
    share = figures(case)['mpi_time_share']
    assert 0 < share <= 100
    digest = case['mpi_profile_summary']
    assert digest['nranks'] == 2
    assert digest['mpi_time_share'] == pytest.approx(share / 100, abs=1e-4)
    assert sum(digest['histograms']['p2p']) > 0
    assert sum(digest['histograms']['collective']) > 0
    busiest = max(f['calls'] for f in digest['functions'].values())
    assert busiest > 10
    moved = sum(f.get('bytes', 0) for f in digest['functions'].values())
    assert moved > 0
    prof = profile.load(os.path.join(case['outputdir'], 'mpiprof.json'))
    assert profile.summary(prof) == digest
    script = read(os.path.join(case['outputdir'], 'rfm_job.sh'))
    assert 'export LD_PRELOAD=' in script and 'libmpiprof.so' in script


def test_every_result_carries_the_node_facts(session):
    for case in session[3].values():
        (host, facts), *_ = case['node_facts'].items()
        assert facts['cpu'] != 'absent' and isinstance(facts['threads'], int)
        assert facts['mpi'] != 'absent'
        kept = glob.glob(os.path.join(case['outputdir'], 'hwinfo', '*.json'))
        assert [os.path.basename(p) for p in kept] == [f'{host}.json']
    mpis = {c['environ']: c['node_facts'] for c in session[3].values()}
    (openmpi,) = mpis['gnu-openmpi'].values()
    (mpich,) = mpis['gnu-mpich'].values()
    assert 'Open MPI' in openmpi['mpi'] or 'OpenRTE' in openmpi['mpi']
    assert 'MPICH' in mpich['mpi'] or 'HYDRA' in mpich['mpi']


@pytest.mark.skipif(
    os.path.exists('/sys/class/powercap') or shutil.which('ipmitool') is not None,
    reason='this machine exposes energy',
)
def test_energy_not_available_here_is_said_once_and_recorded_nowhere(session):
    _, out, _, cases, _ = session
    assert out.count('energy: not available on ') == 1
    for (name, _), case in cases.items():
        if name == 'CGSolverCannedEnergy':
            continue
        assert case['energy_summary']['available'] is False
        assert not {'energy_j', 'mean_power_w'} & set(figures(case))


def test_energy_from_a_canned_rapl_tree_becomes_figures(session):
    case = session[3][('CGSolverCannedEnergy', 'gnu-openmpi')]
    values = figures(case)
    # The canned counters do not move: no energy, yet both figures recorded.
    assert values['energy_j'] == 0 and values['mean_power_w'] == 0
    assert case['energy_summary']['source'] == 'rapl'
    assert 'mpi_time_share' not in values  # profiling was off here
    assert 'export LD_PRELOAD' not in read(
        os.path.join(case['outputdir'], 'rfm_job.sh')
    )


def test_the_session_report_shows_profiles_nodes_and_energy(session):
    report_path = os.path.join(session[4], 'report.json')
    text = sessionreport.text([report_path])
    for needle in (
        'MPI profile: InstrumentedCGSolver %stencil=7 %variant=classic '
        '%ranks_per_node=all on local:default with gnu-mpich',
        'MPI profile: InstrumentedHPCC on local:default with gnu-openmpi',
        'message sizes, p2p',
        'message sizes, collective',
        'Nodes:',
        '    with gnu-mpich: MPI ',
    ):
        assert needle in text, text
    if not os.path.exists('/sys/class/powercap'):
        assert text.count('Energy: not available on ') == 1
