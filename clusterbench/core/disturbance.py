"""What a run broke, as data, and the one text derived from it.

A :class:`Disturbance` is one threshold a run broke: its :class:`Kind`, the
value measured and the limit. noisyhost measures and judges the run and the
check records the list in the run report (``run_conditions.disturbance``,
:meth:`Disturbed.records`) beside its words (``disturbed``); every reader
takes the data (:func:`read`), and every text that names a disturbance is
derived from it (:meth:`Disturbance.words`).

A session recorded before the data was kept holds the words alone:
:func:`from_text` reads those, the one place that reads the words back.
"""

import enum
import re
from dataclasses import dataclass
from typing import Optional


class Kind(enum.Enum):
    """A kind of disturbance, by the words that name it."""

    STEAL = 'steal'
    RANKS_CPU_SHARE = "ranks' CPU share"
    OTHER_PROCESSES = 'other processes'
    #: The one-core host probe against its references' sessions.
    HOST_PROBE = 'host probe'
    #: The host probe at the test's parallelism (noisyhost.hostprobe.NAMES).
    HOST_MEMORY_BANDWIDTH = 'host memory bandwidth'
    HOST_DGEMM = 'host DGEMM'
    HOST_SHARED_MEMORY_COPY = 'host shared-memory copy'


#: Kinds whose ``measured`` is a share of CPU time (0..1).
SHARES = (Kind.STEAL, Kind.RANKS_CPU_SHARE, Kind.OTHER_PROCESSES)
#: Kinds whose ``measured`` is a host probe's figure over the same figure in
#: the sessions of the test's references (0.8: 20 % worse).
PROBES = (
    Kind.HOST_PROBE,
    Kind.HOST_MEMORY_BANDWIDTH,
    Kind.HOST_DGEMM,
    Kind.HOST_SHARED_MEMORY_COPY,
)


def percent(value, limit):
    """*value* as a percentage, with as many decimals as it takes to stay on
    its side of *limit*: a share of 0.898 under a 90 % floor reads
    "89.8 %", never "90 %" (a label that contradicts the rule it broke)."""
    if limit is None:
        return f'{value * 100:.0f} %'
    side = (value > limit) - (value < limit)
    for decimals in range(4):
        text = f'{value * 100:.{decimals}f}'
        shown = float(text) / 100
        if (shown > limit) - (shown < limit) == side:
            return f'{text} %'
    return f'{value * 100:.12g} %'


@dataclass(frozen=True)
class Disturbance:
    """One threshold a run broke."""

    #: None: a kind this release does not know (the words of an old record).
    kind: Optional[Kind]
    #: A share (:data:`SHARES`) or a ratio to the references' probe
    #: (:data:`PROBES`); None where an old record's words give no number.
    measured: Optional[float]
    #: The threshold broken (None where an old record does not say).
    limit: Optional[float] = None
    #: The one-core probe's figure (``dgemm``, ``gather``): HOST_PROBE only.
    figure: str = ''
    #: The cores probed at the test's parallelism.
    cores: Optional[int] = None
    #: The words of an old record (shown as they were) or, for a kind this
    #: release does not know, the name of that kind.
    said: str = ''
    named: str = ''

    @property
    def name(self):
        """The words of its kind: one line per kind where disturbances are
        counted (judging.disturbed.LeftOut)."""
        return self.kind.value if self.kind else self.named

    def words(self, first=True):
        """Its text; *first*: the first of its kind in the run's list (one
        host probe names itself once: ``host probe dgemm -25 %, gather -30 %``)."""
        if self.said:
            return self.said
        if self.kind in SHARES:
            share = percent(self.measured, self.limit)
            if self.kind is Kind.OTHER_PROCESSES:
                return f'other processes {share} of the CPUs'
            return f'{self.kind.value} {share}'
        change = round(100 * (self.measured - 1))
        if self.kind is Kind.HOST_PROBE:
            return f'{"host probe " if first else ""}{self.figure} {change} %'
        many = f'{self.cores:g} core{"s" if self.cores != 1 else ""}'
        how = {
            Kind.HOST_MEMORY_BANDWIDTH: f'{many} streaming',
            Kind.HOST_DGEMM: many,
            Kind.HOST_SHARED_MEMORY_COPY: '2 cores',
        }[self.kind]
        return f"{self.kind.value} {change} % against its references' sessions ({how})"

    def record(self):
        """What the run report keeps of it (JSON)."""
        found = {'kind': self.kind.value, 'measured': self.measured}
        found['limit'] = self.limit
        if self.figure:
            found['figure'] = self.figure
        if self.cores is not None:
            found['cores'] = self.cores
        return found


def _number(value):
    return value if isinstance(value, (int, float)) and value == value else None


def from_record(entry):
    """The disturbance of one entry of ``run_conditions.disturbance``;
    ValueError for one this release cannot read (a newer release's kind)."""
    if not isinstance(entry, dict):
        raise ValueError('not an object')
    kind = Kind(entry.get('kind'))
    measured, limit = _number(entry.get('measured')), _number(entry.get('limit'))
    figure, cores = entry.get('figure', ''), _number(entry.get('cores'))
    if measured is None or not isinstance(figure, str):
        raise ValueError('no measured value')
    if (kind is Kind.HOST_PROBE and not figure) or (
        kind in PROBES[1:] and cores is None
    ):
        raise ValueError('a host probe without its figure or cores')
    return Disturbance(kind, measured, limit, figure=figure, cores=cores)


def text(parts):
    """The words of a run's disturbances, in order."""
    return ', '.join(
        p.words(first=i == 0 or parts[i - 1].name != p.name)
        for i, p in enumerate(parts)
    )


class Disturbed(str):
    """What a run broke: its text ('' for nothing), derived from
    :attr:`parts`, the disturbances. A str, so that every place that shows
    it (tables, CSV, JSON, the perflog) shows the derived words as they are."""

    def __new__(cls, parts=(), said=None):
        parts = tuple(parts)
        self = super().__new__(cls, text(parts) if said is None else said)
        self.parts = parts
        return self

    def __reduce__(self):
        return (Disturbed, (self.parts, str(self)))

    def records(self):
        """``run_conditions.disturbance`` of the run report."""
        return [p.record() for p in self.parts if p.kind is not None and not p.said]


def records(disturbed):
    """The record of *disturbed* (a :class:`Disturbed`; [] for plain words)."""
    return disturbed.records() if isinstance(disturbed, Disturbed) else []


def read(case):
    """What the run of a test case of a run report broke: its record, or
    where there is none (a session recorded before it was kept, or a kind of
    a newer release) its words."""
    case = case if isinstance(case, dict) else {}
    return of_conditions(case.get('run_conditions'), case.get('disturbed'))


def of_conditions(found, words=None):
    """What a run broke, from its ``run_conditions`` *found*: their record,
    else *words* (the test case's) or their own."""
    found = found if isinstance(found, dict) else {}
    words = words if words is not None else found.get('disturbed')
    words = words if isinstance(words, str) else ''
    entries = found.get('disturbance')
    if isinstance(entries, list) and (entries or not words):
        try:
            return Disturbed(from_record(e) for e in entries)
        except ValueError:
            pass
    return of(words)


def of(disturbed):
    """*disturbed* as data: itself, or the words of an old record read."""
    if isinstance(disturbed, Disturbed):
        return disturbed
    return from_text(disturbed or '')


_NUMBER = re.compile(r'([-+\u2212]?\d+(?:\.\d+)?) ?%')


def from_text(words):
    """The disturbances an old record's *words* name, each said as it was.

    A part is of the kind its words begin with; a part that begins with no
    kind's words continues the one before it (``host probe gather -18 %,
    copy -12 %``), or names a kind of its own (a newer release's). The
    measured value is the part's first percentage (a share) or its worst
    drop (a probe, or a kind not known here)."""
    parts = []
    for part in (p.strip() for p in (words or '').split(',')):
        if not part:
            continue
        kind = next((k for k in Kind if part.startswith(k.value)), None)
        if kind is None and parts:
            kind, named = parts[-1].kind, parts[-1].named
        else:
            named = '' if kind else part.rstrip('0123456789.%- ') or part
        numbers = [float(n.replace('\u2212', '-')) for n in _NUMBER.findall(part)]
        if kind in SHARES:
            measured = numbers[0] / 100 if numbers else None
        else:
            drops = [n for n in numbers if n < 0]
            measured = 1 + min(drops) / 100 if drops else None
        parts.append(Disturbance(kind, measured, said=part, named=named))
    # Shown as it was written.
    return Disturbed(parts, said=words or '')
