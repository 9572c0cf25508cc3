"""NetPIPE output files: the recorded ones, and truncated or foreign input."""

import os

import pytest
from conftest import read

from clusterbench.parsers import netpipe
from clusterbench.parsers.netpipe import NetPIPEParseError

FILES = {
    'np.openmpi.sharedmem.out': (118, 1, 4194307),
    'np.openmpi.tcp-loopback.out': (106, 1, 1048579),
    'np.openmpi.tcp-2namespaces.out': (25, 1, 99),
}

# Three lines of a real bidirectional run (NPopenmpi -2 -a): NetPIPE prints
# twice the message size and the rate of both directions together.
BIDIR = """\
    4096 12005.353230   0.00000260
    6144 21301.000287   0.00000220
    8192 4612.889829   0.00001355
"""

# What NetPIPE prints while it runs (stderr), for the same sizes.
TRANSCRIPT = """\
Now starting the main loop
  0:       1 bytes 377865 times -->     10.07 Mbps in       1.51 usec
  1:       2 bytes  66023 times -->     27.80 Mbps in       1.10 usec
  2:       3 bytes 112968 times -->     40.59 Mbps in       0.56 usec
"""
THREE_ROWS = """\
       1 10.066020   0.00000076
       2 27.801208   0.00000055
       3 40.590191   0.00000056
"""


def fixture(fixtures_dir, name):
    return read(os.path.join(fixtures_dir, 'netpipe', name))


@pytest.mark.parametrize('name', sorted(FILES))
def test_every_recorded_file_parses(fixtures_dir, name):
    rows, first, last = FILES[name]
    curve = netpipe.parse(fixture(fixtures_dir, name), name)
    assert curve.name == 'netpipe'
    assert len(curve.sizes) == rows
    assert (curve.sizes[0], curve.sizes[-1]) == (first, last)
    assert set(curve.columns) == {'bandwidth', 'latency'}
    assert curve.unit('bandwidth') == 'MB/s' and curve.unit('latency') == 'us'
    assert curve.meta == {'mode': 'pingpong'}


def test_units_are_converted_from_netpipe_mbps_and_seconds(fixtures_dir):
    curve = netpipe.parse(fixture(fixtures_dir, 'np.openmpi.tcp-loopback.out'))
    # "1048576 9230.818365 0.00086666": Mbps are 2**20 bit/s.
    assert curve.at('bandwidth', 1048576) == pytest.approx(9230.818365 * 0.131072)
    assert curve.at('latency', 1048576) == pytest.approx(866.66)
    # Bandwidth and time describe the same transfer.
    assert 1048576 / 866.66 == pytest.approx(curve.at('bandwidth', 1048576), rel=1e-4)


def test_a_bidirectional_file_is_halved_back_to_message_sizes():
    curve = netpipe.parse(BIDIR, 'np.out', bidirectional=True)
    assert curve.sizes == (2048, 3072, 4096)
    assert set(curve.columns) == {'bandwidth', 'time'}
    # The rate stays the combined one of both directions.
    assert curve.at('bandwidth', 3072) == pytest.approx(21301.000287 * 0.131072)
    assert curve.at('time', 3072) == pytest.approx(2.20)
    assert curve.meta == {'mode': 'bidirectional'}
    with pytest.raises(NetPIPEParseError, match=r'np\.out:1: odd byte count 1'):
        netpipe.parse(THREE_ROWS, 'np.out', bidirectional=True)


def test_a_complete_run_agrees_with_its_transcript():
    curve = netpipe.verify(THREE_ROWS, transcript=TRANSCRIPT, upper=2)
    assert curve.sizes == (1, 2, 3)
    assert netpipe.transcript_sizes(TRANSCRIPT) == [1, 2, 3]


def test_a_file_shorter_than_the_transcript_is_truncated():
    two_rows = ''.join(THREE_ROWS.splitlines(keepends=True)[:2])
    with pytest.raises(
        NetPIPEParseError, match=r'np\.out: 2 sizes in the file, 3 in NetPIPE'
    ):
        netpipe.verify(two_rows, transcript=TRANSCRIPT)


def test_a_sweep_that_stops_before_the_upper_bound_is_incomplete(fixtures_dir):
    text = fixture(fixtures_dir, 'np.openmpi.tcp-loopback.out')
    cut = ''.join(text.splitlines(keepends=True)[:60])
    with pytest.raises(
        NetPIPEParseError, match=r'np\.out: sweep ends at 6144 bytes without reaching'
    ):
        netpipe.verify(cut, upper=1 << 20)
    assert netpipe.verify(text, upper=1 << 20).sizes[-1] == 1048579


def test_a_line_cut_in_the_middle_is_truncation_not_a_number(fixtures_dir):
    text = fixture(fixtures_dir, 'np.openmpi.sharedmem.out')
    cut = text[: text.index('4194304 5460.07')] + '4194304 54'
    with pytest.raises(NetPIPEParseError, match='last line is cut off'):
        netpipe.parse(cut, 'np.out')


@pytest.mark.parametrize(
    'text, message',
    [
        ('', r'np\.out: empty'),
        ('   \n', r'np\.out: empty'),
        ('       1 29.923138\n', r'np\.out:1: expected "bytes Mbps seconds"'),
        ('       1 x 0.00000025\n', r'np\.out:1: not numbers'),
        ('       1 29.9 0.0000002 7\n', r'np\.out:1: expected "bytes Mbps'),
        ('       0 29.923138 0.00000025\n', r'np\.out:1: non-positive'),
        # The rate does not go with the time: not a NetPIPE line.
        ('       1 2.923138   0.00000025\n', r'np\.out:1: 1 bytes at 2\.923138 Mbps'),
        (
            '       8 388.571366 0.00000016\n       4 217.800482 0.00000014\n',
            r'np\.out:2: size 4 after 8',
        ),
    ],
)
def test_foreign_or_mangled_input_is_an_error(text, message):
    with pytest.raises(NetPIPEParseError, match=message):
        netpipe.parse(text, 'np.out')


def test_other_suites_outputs_are_not_netpipe(fixtures_dir):
    for path in (('osu', 'osu_bw.out'), ('imb', 'IMB-MPI1.np2.out')):
        text = read(os.path.join(fixtures_dir, *path))
        with pytest.raises(NetPIPEParseError) as err:
            netpipe.parse(text, path[1])
        assert str(err.value).startswith(f'{path[1]}:')


def test_two_runs_in_one_file_are_rejected(fixtures_dir):
    text = fixture(fixtures_dir, 'np.openmpi.tcp-2namespaces.out')
    with pytest.raises(NetPIPEParseError, match='two runs in one file'):
        netpipe.parse(text + text, 'np.out')
