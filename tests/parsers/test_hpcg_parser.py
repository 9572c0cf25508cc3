"""The HPCG parser on the real HPCG 3.1 summary from ../shared/fixtures."""

import os

import pytest
from conftest import read

from clusterbench.checks.hpcg import hpcg_dat
from clusterbench.parsers import hpcg

NAME = 'HPCG-Benchmark_3.1.104x104x104.2ranks.txt'


@pytest.fixture(scope='module')
def summary(fixtures_dir):
    return read(os.path.join(fixtures_dir, 'hpcg', NAME))


def test_the_recorded_run_is_valid_and_yields_its_figures(summary):
    values = hpcg.verify(summary, source=NAME, nprocs=2)
    assert values['Local Domain Dimensions::nx'] == '104'
    assert hpcg.figures(values) == {
        'hpcg': (3.70367, 'GFlop/s'),
        'hpcg_bandwidth': (28.5458, 'GB/s'),
        'hpcg_time': (77.1705, 's'),
    }


def test_an_invalid_rating_yields_nothing(summary):
    text = summary.replace('HPCG result is VALID', 'HPCG result is INVALID')
    with pytest.raises(hpcg.HPCGParseError, match=f'{NAME}: HPCG result is INVALID'):
        hpcg.verify(text, source=NAME)


@pytest.mark.parametrize(
    'key',
    [
        'Spectral Convergence Tests::Result',
        'Iteration Count Information::Result',
        'Reproducibility Information::Result',
    ],
)
def test_a_failed_verification_test_yields_nothing(summary, key):
    text = summary.replace(f'{key}=PASSED', f'{key}=FAILED')
    with pytest.raises(hpcg.HPCGParseError, match=f'{key}=FAILED'):
        hpcg.verify(text)


def test_a_summary_cut_short_yields_nothing(summary):
    with pytest.raises(hpcg.HPCGParseError, match='no final rating line'):
        hpcg.verify(summary[: summary.index('Final Summary=')])


def test_the_process_count_must_be_the_one_requested(summary):
    with pytest.raises(hpcg.HPCGParseError, match='2 processes ran, 4 requested'):
        hpcg.verify(summary, nprocs=4)


def test_hpcg_dat_names_the_local_grid_and_the_run_time():
    lines = hpcg_dat(104, 60).splitlines()
    assert len(lines) == 4
    assert lines[2].split() == ['104', '104', '104'] and lines[3] == '60'
