"""Figures read from message-size curves: on hand-made curves and real outputs."""

import math
import os

import pytest
from conftest import read

from clusterbench.bench import curves
from clusterbench.bench.curves import Curve, CurveError
from clusterbench.parsers import imb, netpipe, osu


def bw_curve(sizes, values):
    return Curve('t', sizes, {'bandwidth': ('MB/s', values)})


def test_a_curve_rejects_sizes_out_of_order_and_ragged_columns():
    with pytest.raises(CurveError, match='not increasing'):
        bw_curve([1, 4, 2], [1, 2, 3])
    with pytest.raises(CurveError, match='2 values for 3 sizes'):
        bw_curve([1, 2, 4], [1, 2])
    with pytest.raises(CurveError, match='no message sizes'):
        bw_curve([], [])


def test_values_are_read_at_measured_sizes_only():
    curve = bw_curve([1, 2, 4, 8], [10, 20, 40, 80])
    assert curve.at('bandwidth', 4) == 40.0
    assert curve.at('bandwidth', 3) is None  # never interpolated
    assert curves.smallest_of((0, 1, 2)) == 0
    assert curves.smallest_of((1, 2)) == 1
    assert curves.smallest_of((4, 8)) is None


def test_peak_is_the_highest_value_and_the_first_of_ties():
    assert curves.peak([1, 2, 4, 8], [5, 9, 7, 9]) == (2, 9)


def test_n_half_is_interpolated_in_log_size():
    # Half of the peak (80) is 40, measured exactly at 4 bytes.
    assert curves.half_peak_size([1, 2, 4, 8], [10, 20, 40, 80]) == 4
    # 50 lies 20/70 of the way from 30 (4 B) to 100 (8 B): 2**(2 + 2/7) B.
    n_half = curves.half_peak_size([0, 4, 8], [0, 30, 100])
    assert n_half == pytest.approx(2 ** (2 + 20 / 70))
    # Below a 0-byte point the interpolation is linear in size.
    assert curves.half_peak_size([0, 4], [0, 10]) == pytest.approx(2.0)


def test_n_half_of_a_hockney_curve_is_its_half_bandwidth_size():
    # bandwidth(s) = r s / (n + s) reaches r/2 at s = n; the sweep saturates.
    r, n = 1000.0, 1500.0
    sizes = [2**k for k in range(0, 27)]
    values = [r * s / (n + s) for s in sizes]
    assert curves.half_peak_size(sizes, values) == pytest.approx(n, rel=0.03)


def test_n_half_is_not_resolved_when_the_sweep_starts_above_half_the_peak():
    assert curves.half_peak_size([1024, 2048], [60, 100]) is None
    assert curves.half_peak_size([1, 2], [0, 0]) is None


def test_message_rate_from_bandwidth():
    assert curves.message_rate(8, 80.0) == pytest.approx(1e7)
    with pytest.raises(CurveError):
        curves.message_rate(0, 1.0)


def test_size_labels():
    assert [curves.size_label(s) for s in (0, 8, 1000, 1024, 3072, 1 << 20)] == [
        '0B',
        '8B',
        '1000B',
        '1KiB',
        '3KiB',
        '1MiB',
    ]


# -- on the recorded outputs ----------------------------------------------


def fixture_text(fixtures_dir, *parts):
    return read(os.path.join(fixtures_dir, *parts))


def test_imb_pingpong_figures(fixtures_dir):
    text = fixture_text(fixtures_dir, 'imb', 'IMB-MPI1.np2.out')
    pingpong = imb.parse(text)[('PingPong', 2)]
    figures = curves.latency_figures(pingpong, 'latency', 'pingpong_')
    assert figures == {
        'pingpong_latency_0B': (0.43, 'us'),
        'pingpong_latency_8B': (0.44, 'us'),
    }
    figures = curves.bandwidth_figures(pingpong, 'bandwidth', 'pingpong_')
    assert figures['pingpong_bandwidth_1MiB'] == (12467.88, 'MB/s')
    assert figures['pingpong_bandwidth_peak'] == (12467.88, 'MB/s')
    # Half the peak, 6233.94, is crossed between 32 KiB (5931.05) and 64 KiB.
    frac = (12467.88 / 2 - 5931.05) / (8091.84 - 5931.05)
    assert figures['pingpong_n_half'][0] == pytest.approx(32768 * 2**frac)
    assert figures['pingpong_n_half'][1] == 'B'


def test_imb_collective_figures(fixtures_dir):
    text = fixture_text(fixtures_dir, 'imb', 'IMB-MPI1.np2.out')
    allreduce = imb.parse(text)[('Allreduce', 2)]
    figures = curves.latency_figures(
        allreduce, 't_avg', 'allreduce_', curves.COLLECTIVE_SIZES
    )
    assert figures == {
        'allreduce_latency_8B': (0.65, 'us'),
        'allreduce_latency_1KiB': (1.23, 'us'),
        'allreduce_latency_1MiB': (757.06, 'us'),
    }


def test_osu_bandwidth_figures_see_through_the_protocol_switch(fixtures_dir):
    curve = osu.parse(fixture_text(fixtures_dir, 'osu', 'osu_bw.out'))
    figures = curves.bandwidth_figures(curve, 'bandwidth')
    assert figures['bandwidth_peak'] == (12977.09, 'MB/s')
    assert figures['bandwidth_1MiB'] == (12520.69, 'MB/s')
    # 5609 MB/s at 2 KiB then the rendezvous dip: half the peak (6488.5) is
    # first reached between 16 KiB (5807.66) and 32 KiB (8155.62).
    frac = (12977.09 / 2 - 5807.66) / (8155.62 - 5807.66)
    assert figures['n_half'][0] == pytest.approx(16384 * 2**frac)


def test_osu_latency_message_rate_and_collective_figures(fixtures_dir):
    lat = osu.parse(fixture_text(fixtures_dir, 'osu', 'osu_latency.out'))
    assert curves.latency_figures(lat, 'latency') == {
        'latency_1B': (0.14, 'us'),
        'latency_8B': (0.17, 'us'),
    }
    mbw = osu.parse(fixture_text(fixtures_dir, 'osu', 'osu_mbw_mr.out'))
    assert curves.rate_figures(mbw, 'message_rate') == {
        'message_rate_1B': (10383963.27, 'msg/s'),
        'message_rate_8B': (10300086.59, 'msg/s'),
    }
    derived = curves.rate_figures(mbw, bandwidth='bandwidth')
    assert derived['message_rate_8B'][0] == pytest.approx(82.40e6 / 8)
    allreduce = osu.parse(fixture_text(fixtures_dir, 'osu', 'osu_allreduce.out'))
    assert curves.latency_figures(
        allreduce, 'latency', sizes=curves.COLLECTIVE_SIZES
    ) == {
        'latency_8B': (0.28, 'us'),
        'latency_1KiB': (0.60, 'us'),
        'latency_1MiB': (155.88, 'us'),
    }


def test_netpipe_figures(fixtures_dir):
    text = fixture_text(fixtures_dir, 'netpipe', 'np.openmpi.tcp-loopback.out')
    curve = netpipe.parse(text)
    lat = curves.latency_figures(curve, 'latency')
    assert lat == {'latency_1B': (31.16, 'us'), 'latency_8B': (22.75, 'us')}
    bw = curves.bandwidth_figures(curve, 'bandwidth')
    # 1048576 bytes at 9230.818365 Mbps (2**20 bit/s).
    assert bw['bandwidth_1MiB'][0] == pytest.approx(9230.818365 * 2**20 / 8 / 1e6)
    assert bw['bandwidth_peak'][0] == pytest.approx(14771.453714 * 2**20 / 8 / 1e6)
    assert 0 < bw['n_half'][0] < 1 << 20
    # A sweep that stopped below 1 MiB has no 1 MiB figure, not a guess.
    short = netpipe.parse(
        fixture_text(fixtures_dir, 'netpipe', 'np.openmpi.tcp-2namespaces.out')
    )
    assert 'bandwidth_1MiB' not in curves.bandwidth_figures(short, 'bandwidth')


def test_every_fixture_curve_has_a_peak_and_a_resolved_n_half(fixtures_dir):
    for name in sorted(os.listdir(os.path.join(fixtures_dir, 'osu'))):
        curve = osu.parse(fixture_text(fixtures_dir, 'osu', name), name)
        if 'bandwidth' in curve.columns:
            size, top = curves.peak(curve.sizes, curve.values('bandwidth'))
            n_half = curves.half_peak_size(curve.sizes, curve.values('bandwidth'))
            assert top > 0 and curve.sizes[0] < n_half <= size, name


# -- the kept table -------------------------------------------------------


def test_curve_table_round_trips_through_csv(tmp_path, fixtures_dir):
    curve = osu.parse(fixture_text(fixtures_dir, 'osu', 'osu_mbw_mr.out'))
    path = curves.write_csv(tmp_path / 'curve_osu_mbw_mr.csv', curve)
    lines = path.read_text().splitlines()
    assert lines[0] == 'bytes,bandwidth_mbs,message_rate_msgs'
    assert lines[1] == '1,10.38,10383963.27'
    assert len(lines) == 1 + len(curve.sizes)
    back = curves.read_csv(path, 'osu_mbw_mr')
    assert back.sizes == curve.sizes
    assert back.columns == curve.columns


def test_reading_a_foreign_table_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / 'other.csv'
    path.write_text('size,value\n1,2\n')
    with pytest.raises(CurveError, match=r'other\.csv: not a curve table'):
        curves.read_csv(path)
    path.write_text('bytes,latency_us\n1,2\n2\n')
    with pytest.raises(CurveError, match=r'other\.csv:3: 1 cells, expected 2'):
        curves.read_csv(path)
    with pytest.raises(CurveError, match='cannot read'):
        curves.read_csv(tmp_path / 'missing.csv')


def test_as_dict_is_what_the_run_report_keeps():
    curve = Curve('x', [1, 2], {'latency': ('us', [0.5, math.pi])}, {'k': 1})
    assert curve.as_dict() == {
        'columns': ['bytes', 'latency_us'],
        'units': {'latency': 'us'},
        'rows': [[1, 0.5], [2, math.pi]],
        'meta': {'k': 1},
    }
