"""IMB-MPI1 outputs: the recorded ones, and truncated, foreign or mangled input."""

import os

import pytest
from conftest import read

from clusterbench.parsers import imb
from clusterbench.parsers.imb import IMBParseError

RECORDED = ('PingPong', 'Sendrecv', 'Exchange', 'Bcast', 'Reduce', 'Allreduce')

# IMB-MPI1 2021.11 run here as `PingPing Alltoall Barrier -msglog 3:6 -iter 100`.
SMALL = """\
#----------------------------------------------------------------
#    Intel(R) MPI Benchmarks 2021.11, MPI-1 part
#----------------------------------------------------------------

#---------------------------------------------------
# Benchmarking PingPing
# #processes = 2
#---------------------------------------------------
       #bytes #repetitions      t[usec]   Mbytes/sec
            0          100         0.49         0.00
            8          100         0.49        16.20
           16          100         0.52        30.79
           32          100         0.77        41.41
           64          100         0.54       118.47

#----------------------------------------------------------------
# Benchmarking Alltoall
# #processes = 2
#----------------------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
            0          100         0.03         0.04         0.04
            8          100         0.47         0.55         0.51
           16          100         0.55         0.59         0.57
           32          100         0.55         0.60         0.57
           64          100         0.62         0.64         0.63

#---------------------------------------------------
# Benchmarking Barrier
# #processes = 2
#---------------------------------------------------
 #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
          100         0.51         0.52         0.52


# All processes entering MPI_Finalize

"""


@pytest.fixture(params=['IMB-MPI1.np2.out', 'IMB-MPI1.np2.contended.out'])
def recorded(request, fixtures_dir):
    return request.param, read(os.path.join(fixtures_dir, 'imb', request.param))


def test_every_table_of_the_recorded_outputs(recorded):
    name, text = recorded
    tables = imb.parse(text, name)
    assert set(tables) == {(b, 2) for b in (*RECORDED, 'Barrier')}
    for bench in RECORDED:
        curve = tables[(bench, 2)]
        assert curve.name == bench
        assert curve.sizes[-1] == 4194304
        assert curve.meta == {'processes': 2}
    # MPI_FLOAT reductions skip 1 and 2 bytes.
    assert tables[('Allreduce', 2)].sizes[:3] == (0, 4, 8)
    assert tables[('Barrier', 2)].sizes == (0,)
    assert imb.version(text) == '2021.11'


def test_columns_and_values(fixtures_dir):
    text = read(os.path.join(fixtures_dir, 'imb', 'IMB-MPI1.np2.out'))
    tables = imb.parse(text)
    pingpong = tables[('PingPong', 2)]
    assert list(pingpong.columns) == ['repetitions', 'latency', 'bandwidth']
    assert pingpong.at('latency', 1048576) == 84.10
    assert pingpong.at('bandwidth', 1048576) == 12467.88
    assert pingpong.at('repetitions', 4194304) == 10
    sendrecv = tables[('Sendrecv', 2)]
    assert list(sendrecv.columns) == [
        'repetitions',
        't_min',
        't_max',
        't_avg',
        'bandwidth',
    ]
    assert sendrecv.unit('t_max') == 'us' and sendrecv.unit('bandwidth') == 'MB/s'
    assert tables[('Barrier', 2)].values('t_avg') == (0.57,)


def test_verify_finds_what_was_asked_for(recorded):
    name, text = recorded
    found = imb.verify(
        text, name, benchmarks=['PingPong', 'Sendrecv'], processes=2, max_size=1 << 22
    )
    assert list(found) == ['PingPong', 'Sendrecv']
    found = imb.verify(
        SMALL, benchmarks=['PingPing', 'Alltoall', 'Barrier'], processes=2, max_size=64
    )
    assert found['PingPing'].at('latency', 8) == 0.49
    assert found['Barrier'].sizes == (0,)


def test_a_missing_benchmark_or_process_count_is_an_error(recorded):
    name, text = recorded
    with pytest.raises(IMBParseError, match=f'{name}: no Alltoall on 2 processes'):
        imb.verify(text, name, benchmarks=['PingPong', 'Alltoall'], processes=2)
    with pytest.raises(IMBParseError, match='no PingPong on 4 processes'):
        imb.verify(text, name, benchmarks=['PingPong'], processes=4)
    with pytest.raises(IMBParseError, match='Bcast ends at 4194304 bytes, 1048576'):
        imb.verify(text, name, benchmarks=['Bcast'], processes=2, max_size=1 << 20)


def test_an_output_without_its_final_line_is_truncated(recorded):
    name, text = recorded
    # Killed in the middle of Allreduce's table.
    cut = text[: text.index('      524288           80', text.index('Allreduce'))]
    with pytest.raises(IMBParseError, match=f'{name}: no "All processes entering'):
        imb.parse(cut, name)


def test_foreign_outputs_are_not_imb(fixtures_dir):
    for path in (('osu', 'osu_bw.out'), ('netpipe', 'np.openmpi.sharedmem.out')):
        text = read(os.path.join(fixtures_dir, *path))
        with pytest.raises(IMBParseError, match=f'{path[1]}: no "Intel'):
            imb.parse(text, path[1])


def test_each_rank_printing_its_own_banner_is_a_launcher_mismatch():
    with pytest.raises(IMBParseError, match='2 IMB banners.*launcher and MPI'):
        imb.parse(SMALL + SMALL, 'out')


@pytest.mark.parametrize(
    'old, new, message',
    [
        # Bandwidth no longer follows from size / time.
        ('        16.20', '        26.20', r'PingPing: 26\.2 Mbytes/sec at 8 bytes'),
        ('         0.49        16.20', '         0.49', r'out:11: 3 fields'),
        ('         0.51\n', '         x.51\n', r"t_avg is not a number: 'x\.51'"),
        ('t_avg[usec]\n', 't_mean[usec]\n', r"unknown column 't_mean\[usec\]'"),
        (
            '# #processes = 2\n#-----------------------------------------------------'
            '-----------',
            '#---',
            r'Alltoall without a "#processes" line',
        ),
        (
            '           16          100         0.52',
            '            4          100         0.52',
            'sizes do not increase',
        ),
    ],
)
def test_mangled_tables_are_errors(old, new, message):
    assert old in SMALL
    with pytest.raises(IMBParseError, match=message):
        imb.parse(SMALL.replace(old, new, 1), 'out')


def test_a_section_without_results_is_an_error():
    empty = SMALL.replace(
        SMALL[
            SMALL.index('       #bytes') : SMALL.index(
                '#------------------------------------------------------------'
                '----\n# Benchmarking Alltoall'
            )
        ],
        '\n',
    )
    with pytest.raises(IMBParseError, match='PingPing on 2 processes has no results'):
        imb.parse(empty, 'out')


def test_bandwidth_is_checked_against_the_rounding_of_the_printed_time():
    # A real PingPong row (IMB 2021.11, Open MPI, this machine): 128 B in a
    # printed 0.17 usec is 753 MB/s at 0.170 but 775.8 MB/s at 0.165.
    row = '          128         1000         0.17       775.56\n'
    text = SMALL.replace('           64          100         0.54       118.47\n', row)
    assert imb.parse(text, 'out')[('PingPing', 2)].values('bandwidth')[-1] == 775.56
    # Beyond what any time that prints as 0.17 can give: refused.
    beyond = row.replace('775.56', '776.56')
    with pytest.raises(IMBParseError, match='776.56 Mbytes/sec at 128 bytes'):
        imb.parse(
            SMALL.replace(
                '           64          100         0.54       118.47\n', beyond
            ),
            'out',
        )
