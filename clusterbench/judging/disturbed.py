"""One rule for DISTURBED samples: left out of every figure, and said.

A test case whose run broke its conditions' thresholds
(clusterbench.noisyhost.conditions) records what it broke
(``run_conditions.disturbance``, clusterbench.core.disturbance) and its
words in ``disturbed``, e.g. ``"steal 18 %, ranks' CPU share 71 %"``. Its
figures are no measurement of the machine: `references update`,
`baseline`, `trend` (and the report and `ab`) leave them out of everything
they pool, and say how many they left out, one line per kind of
disturbance: never silence.
"""

from dataclasses import dataclass, field

from clusterbench.core import disturbance
from clusterbench.core.disturbance import Kind


def kinds(disturbed):
    """{kind: its words} of what a run broke (a
    :class:`~clusterbench.core.disturbance.Disturbed`, or an old record's
    words), in order; a kind this release does not know is a kind of its
    own (a newer release may record more)."""
    found = {}
    parts = disturbance.of(disturbed).parts
    for i, part in enumerate(parts):
        first = part.name not in found
        words = part.words(first=first or parts[i - 1].name != part.name)
        found[part.name] = words if first else f'{found[part.name]}, {words}'
    return found


def of_case(case):
    """What the run of a run report's test case broke, as data
    (core.disturbance.read)."""
    return disturbance.read(case)


#: How many times the loss it measured a disturbance may explain. The ranks'
#: CPU share, steal and other processes' time are averages over the ranks
#: (or the node): a loss that fell on one rank holds the others back while
#: they wait for it, so with two ranks a share of 90 % can mean one rank at
#: 80 %; the host probe reads one moment beside the test.
TIMES_MEASURED = 2.0


def _loss(part):
    """The share of the speed that one disturbance measured lost (0..1), or
    None where nothing was measured."""
    if part.measured is None:
        return None
    if part.kind is Kind.RANKS_CPU_SHARE:
        return 1 - part.measured
    if part.kind in (Kind.STEAL, Kind.OTHER_PROCESSES):
        return part.measured
    # A host probe (or a kind of a newer release): its drop.
    return 1 - part.measured if part.measured < 1 else None


def explained(disturbed):
    """The largest relative loss of speed that the disturbance can explain
    (0..1: each kind's measured loss, its worst, :data:`TIMES_MEASURED`
    times, each on the speed the others left), or None where it names a
    disturbance that measured nothing: that may explain anything."""
    by_kind = {}
    for part in disturbance.of(disturbed).parts:
        by_kind.setdefault(part.name, []).append(_loss(part))
    if not by_kind:
        return None
    left = 1.0
    for losses in by_kind.values():
        measured = [loss for loss in losses if loss is not None]
        if not measured:
            return None
        left *= 1 - min(1.0, max(0.0, TIMES_MEASURED * max(measured)))
    return 1 - left


def beyond(value, low, high, higher, text):
    """'' where the disturbance *text* (what a run broke) may explain
    *value* beyond its band [*low*, *high*] on its bad side (*higher*:
    higher is better), else the detail of the verdict that judges it all the
    same: ``-62 % beyond its band; the disturbance (ranks' CPU share 89.8 %)
    explains at most -20 %``.
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
        """Count *samples* of *session* left out for the disturbance *text*
        (what a run broke)."""
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
