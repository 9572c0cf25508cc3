"""One rule for DISTURBED samples: left out of every figure, and said.

A test case whose run broke its conditions' thresholds
(clusterbench.noisyhost.conditions) records what it broke in ``disturbed``,
e.g. ``"steal 18 %, ranks' CPU share 71 %"``. Its figures are no
measurement of the machine: `references update`, `baseline`, `trend` (and
the report and `ab`) leave them out of everything they pool, and say how
many they left out, one line per kind of disturbance: never silence.
"""

import re
from dataclasses import dataclass, field

#: The kinds of disturbance a run can record, as their text begins
#: (noisyhost.conditions.disturbed, checks/plugins/runconditions.py). A part
#: of the text that begins with none of them continues the one before it
#: (``host probe gather -18 %, copy -12 %``).
KINDS = (
    'steal',
    "ranks' CPU share",
    'other processes',
    'host probe',
    # The probe at the test's parallelism (noisyhost.hostprobe.NAMES).
    'host memory bandwidth',
    'host DGEMM',
    'host shared-memory copy',
)


def kinds(text):
    """{kind: what was recorded for it} of one ``disturbed`` text, in order;
    a text naming no known kind is a kind of its own (a newer release may
    record more)."""
    found = {}
    last = None
    for part in (p.strip() for p in (text or '').split(',')):
        if not part:
            continue
        kind = next((k for k in KINDS if part.startswith(k)), None)
        if kind is None and last is not None:
            found[last] += f', {part}'
            continue
        kind = kind or part.rstrip('0123456789.%- ') or part
        found[kind] = f'{found[kind]}, {part}' if kind in found else part
        last = kind
    return found


#: How many times the loss it measured a disturbance may explain. The ranks'
#: CPU share, steal and other processes' time are averages over the ranks
#: (or the node): a loss that fell on one rank holds the others back while
#: they wait for it, so with two ranks a share of 90 % can mean one rank at
#: 80 %; the host probe reads one moment beside the test.
TIMES_MEASURED = 2.0

_PERCENT = re.compile(r'([-+\u2212]?\d+(?:\.\d+)?) ?%')


def _loss(kind, what):
    """The share of the speed that one recorded disturbance measured lost
    (0..1), or None where its text holds no such number."""
    numbers = [float(n.replace('\u2212', '-')) for n in _PERCENT.findall(what)]
    if kind == "ranks' CPU share" and numbers:
        return 1 - numbers[0] / 100
    if kind in ('steal', 'other processes') and numbers:
        return numbers[0] / 100
    # The host probe (and a probe of a newer release in its own words):
    # its worst drop.
    drops = [-n / 100 for n in numbers if n < 0]
    return max(drops) if drops else None


def explained(text):
    """The largest relative loss of speed that the disturbance *text* can
    explain (0..1: each measured loss :data:`TIMES_MEASURED` times, each on
    the speed the others left), or None where it names a disturbance it
    holds no number for: that may explain anything."""
    found = kinds(text)
    if not found:
        return None
    left = 1.0
    for kind, what in found.items():
        loss = _loss(kind, what)
        if loss is None:
            return None
        left *= 1 - min(1.0, max(0.0, TIMES_MEASURED * loss))
    return 1 - left


def beyond(value, low, high, higher, text):
    """'' where the disturbance *text* may explain *value* beyond its band
    [*low*, *high*] on its bad side (*higher*: higher is better), else the
    detail of the verdict that judges it all the same: ``-62 % beyond its
    band; the disturbance (ranks' CPU share 89.8 %) explains at most -20 %``.
    A band open on its bad side, or reaching zero, explains everything."""
    loss = explained(text)
    if loss is None or loss >= 1:
        return ''
    if higher:
        edge, worst = low, low * (1 - loss)
        if not 0 < edge < float('inf') or value >= worst:
            return ''
        change, allowed = value / edge - 1, -loss
    else:
        edge, worst = high, high / (1 - loss)
        if not 0 < edge < float('inf') or value <= worst:
            return ''
        change, allowed = value / edge - 1, 1 / (1 - loss) - 1
    return (
        f'{change * 100:+.0f} % beyond its band; the disturbance ({text}) '
        f'explains at most {allowed * 100:+.0f} %'
    )


@dataclass
class _Kind:
    samples: int = 0
    sessions: set = field(default_factory=set)
    example: str = ''


@dataclass
class LeftOut:
    """The DISTURBED samples a command left out, by kind of disturbance."""

    by_kind: dict = field(default_factory=dict)
    samples: int = 0
    sessions: set = field(default_factory=set)

    def add(self, text, session, samples=1):
        """Count *samples* of *session* left out for the disturbance *text*."""
        self.samples += samples
        self.sessions.add(session)
        for kind, what in kinds(text).items():
            entry = self.by_kind.setdefault(kind, _Kind())
            entry.samples += samples
            entry.sessions.add(session)
            entry.example = entry.example or what

    def __bool__(self):
        return bool(self.samples)

    def lines(self):
        """One line per kind of disturbance; [] when nothing was left out."""
        return [
            f'left out {_count(k.samples, "DISTURBED sample")} of '
            f'{_count(len(k.sessions), "session")}: {kind} (e.g. {k.example})'
            for kind, k in sorted(self.by_kind.items())
        ]


def _count(n, what):
    return f'{n} {what}{"s" * (n != 1)}'
