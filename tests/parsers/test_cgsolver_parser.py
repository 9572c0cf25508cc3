"""Parser of our solver's output (tests/data holds a real class B run)."""

import os

import pytest
from conftest import PROJECT, read

from clusterbench.parsers import cgsolver

SAMPLE = os.path.join(PROJECT, 'tests', 'data', 'cgsolver.B.7pt.classic.2ranks.out')


@pytest.fixture
def text():
    return read(SAMPLE)


def test_verified_run_yields_its_figures(text):
    result = cgsolver.verify(
        text, ranks=2, stencil=7, variant='classic', **{'class': 'B'}
    )
    figs = cgsolver.figures(result)
    assert figs['iterations'] == (result['iterations'], 'iterations')
    assert figs['mpi_share'][0] == pytest.approx(100 * result['mpi_share'])
    assert figs['time'][0] == result['time_s'] > 0


def test_failed_verification(text):
    bad = text.replace('VERIFICATION SUCCESSFUL', 'VERIFICATION FAILED')
    with pytest.raises(cgsolver.CGSolverParseError, match='verification FAILED'):
        cgsolver.verify(bad)


def test_truncated_output(text):
    cut = text[: text.index('CGSOLVER_JSON')]
    with pytest.raises(cgsolver.CGSolverParseError, match='verification line missing'):
        cgsolver.verify(cut)
    with pytest.raises(cgsolver.CGSolverParseError, match='no CGSOLVER_JSON'):
        cgsolver.parse(cut)


def test_two_singletons_instead_of_one_job(text):
    with pytest.raises(cgsolver.CGSolverParseError, match='2 verification lines'):
        cgsolver.verify(text + text)


def test_mismatched_request(text):
    with pytest.raises(cgsolver.CGSolverParseError, match='ranks=2, 4 requested'):
        cgsolver.verify(text, ranks=4)


def test_json_disagreeing_with_verdict(text):
    bad = text.replace('"verified":true', '"verified":false')
    with pytest.raises(cgsolver.CGSolverParseError, match='verified=False'):
        cgsolver.verify(bad)


def test_malformed_json(text):
    bad = text.replace('"iterations":', '"iterations"', 1)
    with pytest.raises(cgsolver.CGSolverParseError, match='malformed CGSOLVER_JSON'):
        cgsolver.parse(bad)


def test_the_in_job_triad_share_is_a_figure():
    # Real runs of the solver as it is now (2 ranks, Open MPI, Intel-6-207).
    text = read(
        os.path.join(
            PROJECT, 'tests', 'data', 'cgsolver.B.7pt.classic.2ranks.triad.out'
        )
    )
    result = cgsolver.verify(text, ranks=2, stencil=7, **{'class': 'B'})
    assert result['memory_bound'] is True and result['triad_gbs'] > 0
    share = result['bandwidth_gbs'] / result['triad_gbs']
    assert result['bandwidth_triad_share'] == pytest.approx(share, rel=1e-6)
    figs = cgsolver.figures(result)
    assert figs['job_triad_efficiency'] == (
        pytest.approx(100 * result['bandwidth_triad_share']),
        '%',
    )
    assert 'in-job triad :' in text


def test_a_solve_that_fits_the_cache_has_no_triad_share():
    text = read(
        os.path.join(PROJECT, 'tests', 'data', 'cgsolver.S.7pt.classic.2ranks.out')
    )
    result = cgsolver.verify(text, ranks=2, **{'class': 'S'})
    assert result['memory_bound'] is False and result['llc_bytes'] > 0
    assert 'job_triad_efficiency' not in cgsolver.figures(result)
    assert 'the problem fits the cache: no figure' in text


def test_an_output_of_the_solver_before_the_triad_records_the_rest(text):
    result = cgsolver.verify(text, ranks=2)
    assert 'bandwidth_triad_share' not in result
    assert set(cgsolver.figures(result)) == {
        'time',
        'gflops',
        'bandwidth',
        'iterations',
        'mpi_share',
    }


def test_a_printed_triad_share_that_is_no_number_fails(text):
    bad = text.replace('"mpi_share":', '"bandwidth_triad_share":null,"mpi_share":', 1)
    with pytest.raises(
        cgsolver.CGSolverParseError, match='no numeric bandwidth_triad_share'
    ):
        cgsolver.figures(cgsolver.verify(bad, ranks=2))
