"""The HPCC parser and verifier on real hpcc 1.5 outputs from ../shared/fixtures."""

import glob
import os

import pytest
from conftest import read

from clusterbench.parsers import hpcc

QUIET = {
    'hpccoutf.N20000.1x2.txt': (2, 20000, 88.2718),
    'hpccoutf.N2000.1x2.txt': (2, 2000, 7.05217),
    'hpccoutf.N2000.2nodes-tcp.txt': (2, 2000, None),
    'hpccoutf.N20000.1x2.contended.txt': (2, 20000, None),
}


@pytest.fixture(scope='module')
def outputs(fixtures_dir):
    paths = sorted(glob.glob(os.path.join(fixtures_dir, 'hpcc', 'hpccoutf.*.txt')))
    assert paths, 'no hpcc outputs among the fixtures'
    return {os.path.basename(p): read(p) for p in paths}


def test_every_recorded_output_verifies_and_yields_all_figures(outputs):
    for name, text in outputs.items():
        procs, n, hpl = QUIET[name]
        summary = hpcc.verify(text, name, nprocs=procs, n=n)
        figs = hpcc.figures(summary, name)
        assert set(figs) == {f.name for f, _ in hpcc.FIGURES.values()} | {
            'hpl_dgemm_efficiency'
        }
        assert all(value > 0 for value, _ in figs.values()), name
        if hpl is not None:
            assert figs['hpl'] == (pytest.approx(hpl), 'GFlop/s')


def test_figures_are_scaled_and_derived_correctly(outputs):
    summary = hpcc.parse_summary(outputs['hpccoutf.N20000.1x2.txt'])
    figs = hpcc.figures(summary)
    assert summary['HPL_Tflops'] == pytest.approx(0.0882718)
    assert figs['pingpong_latency_min'] == (
        pytest.approx(summary['MinPingPongLatency_usec']),
        'us',
    )
    # 88.27 GF/s of 2 x 51.99 GF/s DGEMM
    assert figs['hpl_dgemm_efficiency'][0] == pytest.approx(84.89, abs=0.01)


def test_summary_keeps_text_values(outputs):
    summary = hpcc.parse_summary(outputs['hpccoutf.N2000.1x2.txt'])
    assert summary['VersionRelease'] == 'f'
    assert summary['CommWorldProcs'] == 2.0


def test_hpl_residual_tally(outputs):
    assert hpcc.hpl_residual_checks(outputs['hpccoutf.N2000.1x2.txt']) == (1, 0)


def test_truncated_output_is_rejected(outputs):
    text = outputs['hpccoutf.N2000.1x2.txt']
    killed = text[: text.index('Begin of HPL section.')]
    with pytest.raises(hpcc.HPCCParseError, match='no HPCC summary'):
        hpcc.verify(killed, source='killed.txt')
    cut_summary = text[: text.index('StarDGEMM_Gflops')]
    with pytest.raises(hpcc.HPCCParseError, match='truncated'):
        hpcc.parse_summary(cut_summary)


def test_foreign_output_is_rejected(fixtures_dir):
    npb = read(os.path.join(fixtures_dir, 'npb', 'cg.A.2.out'))
    with pytest.raises(hpcc.HPCCParseError, match='cg.A.2.out: no HPCC summary'):
        hpcc.verify(npb, source='cg.A.2.out')


def test_failed_run_yields_no_figures(outputs):
    text = outputs['hpccoutf.N2000.1x2.txt']
    with pytest.raises(hpcc.HPCCParseError, match='Success=0'):
        hpcc.verify(text.replace('Success=1', 'Success=0'))
    failed_hpl = (
        text.replace('...... PASSED', '...... FAILED')
        .replace('1 tests completed and passed', '0 tests completed and passed')
        .replace('0 tests completed and failed', '1 tests completed and failed')
    )
    with pytest.raises(hpcc.HPCCParseError, match='residual check: 0 passed, 1 failed'):
        hpcc.verify(failed_hpl)


def test_wrong_process_count_or_size_is_rejected(outputs):
    text = outputs['hpccoutf.N2000.1x2.txt']
    with pytest.raises(hpcc.HPCCParseError, match='ran on 2.0 processes, 4 requested'):
        hpcc.verify(text, nprocs=4)
    with pytest.raises(hpcc.HPCCParseError, match='HPL N=2000.0, 3000 requested'):
        hpcc.verify(text, n=3000)


def test_missing_figure_is_an_error(outputs):
    summary = hpcc.parse_summary(outputs['hpccoutf.N2000.1x2.txt'])
    del summary['MPIFFT_Gflops']
    with pytest.raises(hpcc.HPCCParseError, match='no numeric MPIFFT_Gflops'):
        hpcc.figures(summary)
