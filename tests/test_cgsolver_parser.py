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
