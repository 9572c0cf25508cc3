"""The HPL parser on real HPL output: the HPL sections of recorded hpcc runs.

HPC Challenge runs HPL itself and writes xhpl's own report into its output
file, so the HPL section of a recorded ``hpccoutf.txt`` is real xhpl output.
"""

import glob
import os
import re

import pytest
from conftest import read

from clusterbench.checks.hpl import hpl_dat
from clusterbench.parsers import hpl


@pytest.fixture(scope='module')
def outputs(fixtures_dir):
    paths = sorted(glob.glob(os.path.join(fixtures_dir, 'hpcc', 'hpccoutf.*.txt')))
    assert paths, 'no hpcc outputs among the fixtures'
    return {os.path.basename(p): read(p) for p in paths}


def _summary(text, key):
    return float(re.search(rf'^{key}=(\S+)$', text, re.M).group(1))


def test_every_recorded_hpl_run_passed_and_matches_the_summary(outputs):
    for name, text in outputs.items():
        (test,) = hpl.verify(text, source=name, nprocs=2)
        assert test['n'] == int(_summary(text, 'HPL_N'))
        assert test['nb'] == int(_summary(text, 'HPL_NB'))
        assert test['residual'] < 16.0
        # hpcc's summary states the same rate in TFlop/s.
        assert test['gflops'] == pytest.approx(
            1000 * _summary(text, 'HPL_Tflops'), rel=1e-3
        )


def test_figures_of_the_large_run(outputs):
    tests = hpl.verify(outputs['hpccoutf.N20000.1x2.txt'], n=20000, nprocs=2)
    assert hpl.figures(tests) == {'hpl': (88.27, 'GFlop/s'), 'hpl_time': (60.43, 's')}


def _hpl_only(outputs):
    text = outputs['hpccoutf.N2000.1x2.txt']
    return re.search(
        r'^Begin of HPL section\.$(.*)^End of HPL section\.$', text, re.M | re.S
    ).group(1)


def test_plain_xhpl_output_without_hpcc_sections(outputs):
    (test,) = hpl.verify(_hpl_only(outputs), n=2000)
    assert (test['p'], test['q'], test['gflops']) == (1, 2, 7.052)


@pytest.mark.parametrize(
    'change, message',
    [
        (('...... PASSED', '...... FAILED'), 'residual check FAILED'),
        (
            ('1 tests completed and passed', '0 tests completed and passed'),
            '0 tests passed, 1 ran',
        ),
        (
            ('0 tests completed and failed', '1 tests completed and failed'),
            'residual check FAILED',
        ),
    ],
)
def test_a_failed_residual_check_yields_nothing(outputs, change, message):
    with pytest.raises(hpl.HPLParseError, match=message):
        hpl.verify(_hpl_only(outputs).replace(*change), source='xhpl output')


def test_a_run_cut_short_yields_nothing(outputs):
    text = _hpl_only(outputs)
    cut = text[: text.rindex('||Ax-b||')]
    with pytest.raises(hpl.HPLParseError, match='residual check missing'):
        hpl.verify(cut)
    with pytest.raises(hpl.HPLParseError, match='no HPL result line'):
        hpl.verify(text[: text.index('WR11')])


def test_the_problem_must_be_the_one_requested(outputs):
    with pytest.raises(hpl.HPLParseError, match='N=2000, 4000 requested'):
        hpl.verify(_hpl_only(outputs), n=4000)
    with pytest.raises(hpl.HPLParseError, match=r'P x Q = 1 x 2, 4 ranks requested'):
        hpl.verify(_hpl_only(outputs), nprocs=4)


def test_hpl_dat_has_hpls_line_layout(fixtures_dir):
    # The first 31 lines of a recorded hpcc input are an HPL.dat; for the same
    # problem ours differs only in the output device (6: stdout).
    recorded = read(os.path.join(fixtures_dir, 'hpcc', 'hpccinf.N2000.1x2.txt'))
    ours = hpl_dat({'n': 2000, 'nb': 80, 'p': 1, 'q': 2}).splitlines()
    theirs = recorded.splitlines()[:31]
    assert len(ours) == 31
    differ = [i for i in range(2, 31) if ours[i].split() != theirs[i].split()]
    assert differ == [3]
    assert ours[3].split()[0] == '6' and ours[3].split()[1:] == theirs[3].split()[1:]
