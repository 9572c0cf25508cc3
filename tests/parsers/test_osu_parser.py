"""OSU Micro-Benchmarks outputs: the recorded ones, other formats, bad input."""

import os

import pytest
from conftest import read

from clusterbench.parsers import osu
from clusterbench.parsers.osu import OSUParseError

FIXTURES = {
    'osu_latency': ('latency', 1 << 22),
    'osu_bw': ('bandwidth', 1 << 22),
    'osu_bibw': ('bandwidth', 1 << 22),
    'osu_mbw_mr': ('bandwidth', 1 << 22),
    'osu_allreduce': ('latency', 1 << 20),
}

# Other formats of OSU 7.4, as printed on this kind of machine.
BCAST_FULL = """
# OSU MPI Broadcast Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
1                       0.45              0.14              0.77         100
2                       0.45              0.14              0.77         100
4                       0.44              0.11              0.76         100
"""
BARRIER = """
# OSU MPI Barrier Latency Test v7.4
# Avg Latency(us)
             0.80
"""
BW_VALIDATED = """
# OSU MPI Bandwidth Test v7.4
# Datatype: MPI_CHAR.
# Size      Bandwidth (MB/s)        Validation
1                       0.28              Pass
2                       0.13              Pass
"""
ALLREDUCE_FAILED = """
# OSU MPI Allreduce Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)        Validation
8                       0.59              Pass
16                      0.57              Fail
DATA VALIDATION ERROR: osu_allreduce exited with status 1 on message size 16.
"""
LATENCY_TAIL = """
# OSU MPI Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)  P50 Tail Lat(us)  P90 Tail Lat(us)  P99 Tail Lat(us)
4                       0.42              0.40              0.51              0.69
8                       0.42              0.45              0.51              0.60
"""


def fixture(fixtures_dir, name):
    return read(os.path.join(fixtures_dir, 'osu', name))


@pytest.mark.parametrize('contended', ['', '.contended'])
@pytest.mark.parametrize('bench', sorted(FIXTURES))
def test_every_recorded_output_is_a_complete_sweep(fixtures_dir, bench, contended):
    column, top = FIXTURES[bench]
    text = fixture(fixtures_dir, f'{bench}{contended}.out')
    pairs = 1 if bench == 'osu_mbw_mr' else None
    curve = osu.verify(
        text, f'{bench}.out', benchmark=bench, min_size=1, max_size=top, pairs=pairs
    )
    assert curve.name == bench
    assert curve.sizes == tuple(osu.sweep(1, top))
    assert column in curve.columns
    assert curve.meta['version'] == '7.4'
    assert curve.meta['datatype'] == 'MPI_CHAR'


def test_values_and_units(fixtures_dir):
    lat = osu.parse(fixture(fixtures_dir, 'osu_latency.out'))
    assert lat.at('latency', 4194304) == 887.63
    assert lat.unit('latency') == 'us'
    mbw = osu.parse(fixture(fixtures_dir, 'osu_mbw_mr.out'))
    assert mbw.meta['pairs'] == 1 and mbw.meta['window'] == 64
    assert mbw.at('bandwidth', 1) == 10.38
    assert mbw.at('message_rate', 1) == 10383963.27
    assert mbw.unit('message_rate') == 'msg/s'


def test_the_doubling_sweep():
    assert osu.sweep(1, 16) == [1, 2, 4, 8, 16]
    assert osu.sweep(0, 4) == [0, 1, 2, 4]
    assert osu.sweep(3, 20) == [3, 6, 12]


def test_full_barrier_validated_and_tail_formats():
    bcast = osu.parse(BCAST_FULL)
    assert bcast.name == 'osu_bcast'
    assert list(bcast.columns) == [
        'latency',
        'latency_min',
        'latency_max',
        'iterations',
    ]
    assert bcast.at('latency_max', 4) == 0.76
    barrier = osu.verify(BARRIER, benchmark='osu_barrier', min_size=1, max_size=1 << 20)
    assert barrier.sizes == (0,) and barrier.values('latency') == (0.80,)
    bw = osu.parse(BW_VALIDATED)
    assert list(bw.columns) == ['bandwidth']
    tail = osu.parse(LATENCY_TAIL)
    assert tail.at('latency_p99', 4) == 0.69


def test_a_failed_validation_is_never_a_figure():
    with pytest.raises(OSUParseError, match=r'osu\.out:6: data validation Fail at 16'):
        osu.parse(ALLREDUCE_FAILED.split('DATA')[0], 'osu.out')
    # The error line itself is not OSU table output either.
    with pytest.raises(OSUParseError, match=r'osu\.out:(6|7):'):
        osu.parse(ALLREDUCE_FAILED, 'osu.out')


def test_a_truncated_sweep_is_reported(fixtures_dir):
    text = fixture(fixtures_dir, 'osu_bw.out')
    cut = ''.join(text.splitlines(keepends=True)[:-5])
    with pytest.raises(
        OSUParseError, match=r'osu_bw\.out: sizes 1\.\.131072 \(18 sizes\), expected'
    ):
        osu.verify(cut, 'osu_bw.out', benchmark='osu_bw', min_size=1, max_size=1 << 22)
    # A row cut mid-way: too few fields, or the last line unterminated.
    with pytest.raises(OSUParseError, match=r'osu_bw\.out:27: 1 fields'):
        osu.parse(text.rstrip('\n')[:-10] + '\n', 'osu_bw.out')
    with pytest.raises(OSUParseError, match='last line is cut off'):
        osu.parse(text.rstrip('\n')[:-1], 'osu_bw.out')


def test_a_run_that_measured_nothing_is_reported():
    header_only = BCAST_FULL.split('1    ')[0]
    with pytest.raises(OSUParseError, match='no measurement'):
        osu.parse(header_only, 'x')
    with pytest.raises(OSUParseError, match='no column header'):
        osu.parse('# OSU MPI Latency Test v7.4\n', 'x')


@pytest.mark.parametrize(
    'other', [('imb', 'IMB-MPI1.np2.out'), ('netpipe', 'np.openmpi.sharedmem.out')]
)
def test_other_suites_outputs_are_not_osu(fixtures_dir, other):
    text = read(os.path.join(fixtures_dir, *other))
    with pytest.raises(OSUParseError, match=f'{other[1]}: no "# OSU MPI'):
        osu.parse(text, other[1])


def test_every_rank_printing_its_own_table_means_a_launcher_mismatch(fixtures_dir):
    text = fixture(fixtures_dir, 'osu_latency.out')
    with pytest.raises(OSUParseError, match='2 OSU titles.*launcher and MPI'):
        osu.parse(text + text, 'osu_latency.out')


def test_the_output_must_be_of_the_benchmark_asked_for(fixtures_dir):
    text = fixture(fixtures_dir, 'osu_bibw.out')
    with pytest.raises(OSUParseError, match='output of osu_bibw, not osu_bw'):
        osu.verify(text, benchmark='osu_bw', min_size=1, max_size=1 << 22)
    mbw = fixture(fixtures_dir, 'osu_mbw_mr.out')
    with pytest.raises(OSUParseError, match=r'ran 1 pair\(s\), 2 requested'):
        osu.verify(mbw, benchmark='osu_mbw_mr', min_size=1, max_size=1 << 22, pairs=2)


def test_unknown_columns_and_mismatched_numbers_are_rejected(fixtures_dir):
    mbw = fixture(fixtures_dir, 'osu_mbw_mr.out')
    with pytest.raises(OSUParseError, match="unknown column 'GB/s'"):
        osu.parse(mbw.replace('MB/s  ', 'GB/s  '), 'x')
    # The message rate no longer matches the bandwidth of the same row.
    with pytest.raises(OSUParseError, match='at 1 bytes 20383963.27 messages/s'):
        osu.parse(mbw.replace('10383963.27', '20383963.27'), 'x')
    lat = fixture(fixtures_dir, 'osu_latency.out')
    with pytest.raises(OSUParseError, match="latency is not a number: '0.1x'"):
        osu.parse(lat.replace('0.14\n', '0.1x\n'), 'x')
    with pytest.raises(OSUParseError, match='sizes do not increase'):
        osu.parse(lat.replace('\n2  ', '\n1  '), 'x')
