"""The STREAM parser on real stream.c 5.10 outputs from ../shared/fixtures."""

import glob
import os
import re

import pytest
from conftest import read

from clusterbench.parsers import stream


@pytest.fixture(scope='module')
def outputs(fixtures_dir):
    paths = sorted(glob.glob(os.path.join(fixtures_dir, 'stream', 'stream.*.out')))
    assert len(paths) == 8, 'expected 8 recorded STREAM outputs'
    return {os.path.basename(p): read(p) for p in paths}


def test_every_recorded_run_validates_with_its_thread_count(outputs):
    for name, text in outputs.items():
        threads = int(re.match(r'stream\.omp(\d)', name).group(1))
        result = stream.verify(text, source=name, threads=threads)
        assert result['array_size'] == 80_000_000
        figs = stream.figures(result)
        assert set(figs) == {f'stream_{k}' for k in stream.KERNELS}
        # 80M doubles: anything off by an order of magnitude is a parse error.
        assert all(5 < value < 100 and unit == 'GB/s' for value, unit in figs.values())


def test_best_rates_are_read_and_scaled_to_gb(outputs):
    result = stream.verify(outputs['stream.omp2.out'])
    assert stream.figures(result) == {
        'stream_copy': (pytest.approx(29.5067), 'GB/s'),
        'stream_scale': (pytest.approx(26.3082), 'GB/s'),
        'stream_add': (pytest.approx(25.9569), 'GB/s'),
        'stream_triad': (pytest.approx(27.1033), 'GB/s'),
    }


def test_a_run_that_failed_validation_yields_nothing(outputs):
    text = outputs['stream.omp1.out'].replace(
        'Solution Validates: avg error less than 1.000000e-13 on all three arrays',
        'Failed Validation on array a[], AvgRelAbsErr > epsilon (1.000000e-13)',
    )
    with pytest.raises(
        stream.StreamParseError,
        match=r'stream.omp1.out: Failed Validation on array a\[\]',
    ):
        stream.verify(text, source='stream.omp1.out')


def test_a_truncated_run_yields_nothing(outputs):
    text = outputs['stream.omp1.out']
    with pytest.raises(stream.StreamParseError, match="no 'Solution Validates' line"):
        stream.verify(text[: text.index('Triad:')])
    without_add = re.sub(r'^Add:.*\n', '', text, flags=re.M)
    with pytest.raises(stream.StreamParseError, match='no rate for add'):
        stream.verify(without_add)


def test_the_thread_count_must_be_the_one_requested(outputs):
    with pytest.raises(stream.StreamParseError, match='1 threads counted, 2 requested'):
        stream.verify(outputs['stream.omp1.out'], threads=2)
