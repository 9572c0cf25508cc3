"""The sparse CG solver built and run for real through ReFrame, both MPI flavours."""

import collections

import pytest
from rfm import reframe

from clusterbench.parsers import cgsolver

pytestmark = pytest.mark.integration


@pytest.fixture(scope='module')
def class_s_run(tmp_path_factory):
    prefix = tmp_path_factory.mktemp('cg')
    rc, out, report = reframe(
        prefix, '-S', 'problem_class=S', checks='reframe_checks/cgsolver.py'
    )
    assert report is not None, out
    return rc, out, report


def runs(report):
    return [c for c in report['runs'][0]['testcases'] if not c['fixture']]


def test_every_combination_builds_runs_and_verifies(class_s_run):
    rc, out, report = class_s_run
    cases = runs(report)
    environs = {c['environ'] for c in cases}
    assert environs == {'gnu-openmpi', 'gnu-mpich'}
    assert len(cases) == 2 * 2 * 2 * 2  # environs x stencils x variants x ranks
    for case in cases:
        assert case['fail_phase'] in (None, 'performance'), case['fail_reason']
        values = {k.rsplit(':', 1)[1]: v[0] for k, v in case['perfvalues'].items()}
        # Class S fits the cache: no share of the in-job triad is a figure.
        assert set(values) == {
            f.name
            for key, (f, _) in cgsolver.FIGURES.items()
            if key not in cgsolver.OPTIONAL
        }
        assert values['time'] > 0 and values['gflops'] > 0


def test_iteration_count_does_not_depend_on_ranks_or_mpi(class_s_run):
    _, _, report = class_s_run
    iterations = collections.defaultdict(set)
    for case in runs(report):
        values = {k.rsplit(':', 1)[1]: v[0] for k, v in case['perfvalues'].items()}
        iterations[(case['stencil'], case['variant'])].add(values['iterations'])
    assert len(iterations) == 4
    for key, counts in iterations.items():
        assert max(counts) - min(counts) <= 2, (key, counts)


def test_a_solver_that_fails_verification_records_nothing(tmp_path):
    # A tolerance the solver cannot reach within its iteration limit.
    rc, out, report = reframe(
        tmp_path,
        '-S',
        'problem_class=S',
        '-S',
        'tolerance=1e-30',
        '-n',
        'CGSolverCheck%stencil=7%variant=classic%ranks_per_node=1',
        '-p',
        'gnu-openmpi',
        checks='reframe_checks/cgsolver.py',
    )
    assert rc != 0
    (case,) = runs(report)
    assert case['fail_phase'] == 'sanity'
    assert 'verification failed' in case['fail_reason'].lower(), case['fail_reason']
