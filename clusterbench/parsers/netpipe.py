"""NetPIPE 3.x output file (``NPopenmpi -o FILE``): bytes, Mbps, seconds per line.

NetPIPE writes one line per message size, ``%8d %lf %12.8lf``: the bytes moved
per transfer, the rate in Mbps (2**20 bit/s) and the time of one transfer in
seconds: half the round trip in ping-pong mode, the time of one exchange in
bidirectional mode (``-2``, where both the bytes and the rate count both
directions). Each time is the best (lowest) of NetPIPE's three trials, each
trial the mean over its repetitions.

Every line is checked against the other two columns (rate x time = bytes, to
the printed precision), so a foreign or mangled file is an error, never a
curve. The transcript NetPIPE prints while running (``  3:  4 bytes ...
--> ... Mbps in ... usec``) tells how many sizes it finished; a file with
fewer lines is truncated.
"""

import re

from clusterbench.bench import curves
from clusterbench.bench.curves import Curve
from clusterbench.core.errors import ClusterbenchError

#: The figures the checks read from these curves (declared with the curves).
DECLARED = curves.DECLARED

#: NetPIPE's "Mbps" is 2**20 bit/s; bandwidth figures are MB/s (10**6 B/s).
MBPS_TO_MBS = (1 << 20) / 8 / 1e6

_TRANSCRIPT = re.compile(
    r'^\s*(\d+):\s+(\d+) bytes\s+(\d+) times -->\s+([\d.]+) Mbps in\s+([\d.]+) usec',
    re.M,
)


class NetPIPEParseError(ClusterbenchError):
    """Not a complete NetPIPE output file."""


def _row(line, lineno, source):
    fields = line.split()
    if len(fields) != 3:
        what = 'an integrity-check (-i) file?' if len(fields) == 2 else 'foreign file?'
        raise NetPIPEParseError(
            f'{source}:{lineno}: expected "bytes Mbps seconds", got {line.strip()!r} '
            f'({what})'
        )
    try:
        nbytes, mbps, seconds = int(fields[0]), float(fields[1]), float(fields[2])
    except ValueError:
        raise NetPIPEParseError(
            f'{source}:{lineno}: not numbers: {line.strip()!r} (foreign file?)'
        ) from None
    if nbytes <= 0 or mbps <= 0 or seconds <= 0:
        raise NetPIPEParseError(
            f'{source}:{lineno}: non-positive value: {line.strip()!r}'
        )
    # NetPIPE prints the rate to 1e-6 Mbps and the time to 1e-8 s: within
    # that rounding, rate x time must give the bytes back.
    expected = nbytes * 8 / (mbps * (1 << 20))
    slack = 5.01e-9 + expected * (5.01e-7 / mbps + 1e-9)
    if abs(seconds - expected) > slack:
        raise NetPIPEParseError(
            f'{source}:{lineno}: {nbytes} bytes at {mbps} Mbps do not take '
            f'{seconds} s (not a NetPIPE line)'
        )
    return nbytes, mbps, seconds


def parse(text, source='np.out', bidirectional=False):
    """The curve of a NetPIPE output file.

    Columns: ``bandwidth`` (MB/s) and ``latency`` (us, half the round trip)
    for ping-pong; ``bandwidth`` (MB/s, both directions together) and
    ``time`` (us per exchange) for a bidirectional (``-2``) file, whose byte
    counts NetPIPE doubles and which are halved back to the message size.
    """
    if not text.strip():
        raise NetPIPEParseError(f'{source}: empty (NetPIPE measured nothing)')
    if not text.endswith('\n'):
        raise NetPIPEParseError(f'{source}: last line is cut off (output truncated)')
    sizes, mbps, times = [], [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        nbytes, rate, seconds = _row(line, lineno, source)
        if bidirectional:
            if nbytes % 2:
                raise NetPIPEParseError(
                    f'{source}:{lineno}: odd byte count {nbytes}: not a '
                    f'bidirectional (-2) output'
                )
            nbytes //= 2
        if sizes and nbytes <= sizes[-1]:
            raise NetPIPEParseError(
                f'{source}:{lineno}: size {nbytes} after {sizes[-1]} '
                f'(sizes must increase: two runs in one file?)'
            )
        sizes.append(nbytes)
        mbps.append(rate)
        times.append(seconds)
    bandwidth = [r * MBPS_TO_MBS for r in mbps]
    time_us = [round(t * 1e6, 6) for t in times]
    if bidirectional:
        columns = {'bandwidth': ('MB/s', bandwidth), 'time': ('us', time_us)}
        mode = 'bidirectional'
    else:
        columns = {'bandwidth': ('MB/s', bandwidth), 'latency': ('us', time_us)}
        mode = 'pingpong'
    return Curve('netpipe', sizes, columns, {'mode': mode})


def transcript_sizes(text):
    """Message sizes NetPIPE reported finishing, from its running transcript."""
    return [int(m.group(2)) for m in _TRANSCRIPT.finditer(text)]


def verify(text, source='np.out', transcript=None, upper=None, bidirectional=False):
    """The curve of a complete run, or :class:`NetPIPEParseError` saying why not.

    *transcript* (NetPIPE's stdout and stderr) must list exactly the sizes in
    the file; *upper* (``-u``, a power of two) must have been reached, as
    NetPIPE's sweep measures every power of two up to its upper bound unless
    it stopped early.
    """
    curve = parse(text, source, bidirectional)
    if transcript is not None:
        reported = transcript_sizes(transcript)
        if reported != list(curve.sizes):
            raise NetPIPEParseError(
                f'{source}: {len(curve.sizes)} sizes in the file, '
                f"{len(reported)} in NetPIPE's transcript (output truncated or "
                f'from another run)'
            )
    if upper is not None and upper not in curve.sizes:
        raise NetPIPEParseError(
            f'{source}: sweep ends at {curve.sizes[-1]} bytes without reaching '
            f'the requested {upper} (run cut short, or NetPIPE stopped early: it '
            f'ends a sweep when one transfer takes over a second)'
        )
    return curve
