"""The executive page: one row per system:partition, the headline figures a
committee reads first, from undisturbed sessions only.

Each headline figure is the median of one configuration's samples (the one
with the most), with its [min-max] and n; the ratios against the node's
ceilings come from :mod:`clusterbench.report.headline`. DISTURBED samples
are never in a figure: they are counted as left out. The figure columns are
:mod:`clusterbench.report.execcolumns`': the machine's, then one per
application family the figures' declarations name (``Figure.headline``).
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Optional

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import verdict
from clusterbench.machine import peak as peaklib
from clusterbench.report import execcolumns, exechardware, referenceage, sessionwords
from clusterbench.report.model import FAILED, MISSING, Section

#: The next command where a system has no references.
NEXT_COMMAND = 'clusterbench baseline --system {system}'

#: Verdicts from the worst down: the row's badge is its worst. Each kind once
#: (verdict.WORSE is FLAGGED: listed, it made a second verdict_FLAGGED column).
SEVERITY = (
    FAILED,
    verdict.SLOWER,
    verdict.FLAGGED,
    verdict.INCONCLUSIVE,
    verdict.FASTER,
    verdict.DISTURBED,
    verdict.NO_REFERENCE,
    verdict.PASS,
)


@dataclass
class Row:
    system: str
    partition: str
    nodes: Optional[int] = None
    cores: Optional[int] = None
    cpu_kind: str = ''
    microarchitecture: str = ''
    memory_gib: Optional[float] = None
    interconnect: str = ''
    link_peak_mbs: Optional[float] = None
    peak: Optional[peaklib.Peak] = None
    peak_note: str = ''
    figures: dict = field(default_factory=dict)  # key -> Stat
    sessions: int = 0
    disturbed_sessions: int = 0
    #: (ids of the sessions with an undisturbed test that measured, ids of
    #: those with a DISTURBED test): a session may be in both.
    session_ids: tuple = ((), ())
    disturbed_samples: int = 0
    spread: Optional[float] = None
    spread_of: str = ''
    counts: dict = field(default_factory=dict)
    reference_age: str = ''
    environs: list = field(default_factory=list)
    #: The cells some figures come from (for the roofline): key -> Cell.
    cells: dict = field(default_factory=dict)
    npb: dict = field(default_factory=dict)  # NPB benchmark -> Cell
    #: Set where the inputs hold two CPU kinds of this partition: its key
    #: then names the kind, one row per kind.
    kinds_differ: bool = False
    #: Of the counts, the portable figures judged against their bands.
    band_judged: int = 0

    @property
    def where(self):
        return f'{self.system}:{self.partition}'

    @property
    def key(self):
        if self.kinds_differ:
            return f'{self.where} ({self.cpu_kind or "CPU ?"})'
        return self.where

    @property
    def verdict(self):
        # A DISTURBED cell is a session left out (shown, never pooled): the
        # row's verdict is that of what was judged, DISTURBED only when
        # nothing else was measured.
        for state in (
            *(s for s in SEVERITY if s != verdict.DISTURBED),
            verdict.DISTURBED,
        ):
            if self.counts.get(state):
                return state
        return MISSING

    @property
    def judged(self):
        """Figures judged against references (a portable figure judged
        against its band is not: a partition with only those still has no
        references, and is told how to make them)."""
        judged = sum(n for s, n in self.counts.items() if s not in _UNJUDGED)
        return judged - self.band_judged

    def get(self, key):
        return self.figures.get(key)

    @property
    def sessions_said(self):
        return sessionwords.said(*self.session_ids)


@dataclass
class Executive(Section):
    rows: list = field(default_factory=list)
    baseline: str = ''
    #: The figure columns some row measured (execcolumns.Column).
    columns: tuple = ()

    @property
    def judged(self):
        return sum(r.judged for r in self.rows)

    @property
    def no_reference(self):
        return sum(r.counts.get(verdict.NO_REFERENCE, 0) for r in self.rows)

    @property
    def disturbed_sessions(self):
        return sum(r.disturbed_sessions for r in self.rows)

    @property
    def sessions_said(self):
        """Every row's sessions, each counted once."""
        healthy = set().union(*(r.session_ids[0] for r in self.rows))
        disturbed = set().union(*(r.session_ids[1] for r in self.rows))
        return sessionwords.said(healthy, disturbed)

    @property
    def without_reference(self):
        """Systems with figures and not one reference."""
        return sorted(
            {r.system for r in self.rows if r.counts and not r.judged},
        )

    @property
    def next_commands(self):
        return [NEXT_COMMAND.format(system=s) for s in self.without_reference]


# ---------------------------------------------------------------- building


def build(data, case_of, facts, sessions, references=None, baseline=None):
    """The executive page of *data*.

    *case_of*: (config key, test) -> the latest case; *facts*: (system,
    partition, CPU kind) -> the latest case with node facts; *sessions*:
    (system, partition, CPU kind) -> {'healthy': uuids, 'disturbed': uuids};
    *references*: the reference root whose provenance dates the references.

    One row per system, partition and CPU kind: two kinds are two machines,
    whose figures are never pooled (the node counts are the configurations'
    own, each cell of one count).
    """
    by_identity = defaultdict(list)
    for config in data.configs:
        by_identity[(config.system, config.partition, config.cpu_kind)].append(config)
    rows = []
    for (system, partition, kind), configs in sorted(by_identity.items()):
        row = _row(
            data,
            system,
            partition,
            configs,
            case_of,
            facts.get((system, partition, kind)) or {},
            sessions.get((system, partition, kind)) or {},
            references,
        )
        row.kinds_differ = any(c.kinds_differ for c in configs)
        rows.append(row)
    if not rows:
        return Executive('no configuration in the inputs')
    names = [r.key for r in rows]
    chosen = rows[0].key
    if baseline:
        match = [r.key for r in rows if baseline in (r.key, r.where, r.system)]
        if not match:
            raise ClusterbenchError(
                f'--baseline {baseline}: no such system in the inputs '
                f'(they hold {", ".join(names)})'
            )
        chosen = match[0]
    shown = tuple(c for c in execcolumns.columns() if any(c.measured(r) for r in rows))
    return Executive(rows=rows, baseline=chosen, columns=shown)


def _row(data, system, partition, configs, case_of, facts, sessions, references):
    row = Row(system, partition)
    row.environs = sorted({c.environ for c in configs})
    row.nodes = max((c.nodes for c in configs if c.nodes), default=None)
    exechardware.describe(row, configs, facts)
    peak = row.peak
    context = execcolumns.Context(
        data,
        configs,
        case_of,
        peak.per_node if peak else None,
        peak.per_core if peak else None,
    )
    # The machine's columns first: HPL's column reads DGEMM's figure.
    for column in execcolumns.columns():
        column.build(row, context)
    row.figures = {k: v for k, v in row.figures.items() if v is not None}
    _quality(row, data, configs, sessions)
    row.reference_age = referenceage.of_row(
        _reference_files(data, configs), references, system, partition
    )
    return row


#: Cell states that are no judgement of a figure.
_UNJUDGED = (MISSING, FAILED, verdict.NO_REFERENCE, verdict.DISTURBED)


def _quality(row, data, configs, sessions):
    healthy = set(sessions.get('healthy') or ())
    disturbed = set(sessions.get('disturbed') or ())
    row.sessions = len(healthy)
    row.disturbed_sessions = len(disturbed)
    row.session_ids = (frozenset(healthy), frozenset(disturbed))
    counts = Counter()
    for bench in data.benchmarks:
        for config in configs:
            cell = data.cell(config, bench)
            if cell is None or cell.state == MISSING:
                continue
            counts[cell.state] += 1
            row.disturbed_samples += len(cell.disturbed)
            if cell.ref is None and cell.state not in _UNJUDGED:
                row.band_judged += 1
    row.counts = dict(counts)
    # The measured figures whose spread between sessions the row names.
    named = {
        line.key: line.spread
        for column in execcolumns.columns()
        for line in column.lines
        if line.spread
    }
    spreads = [
        (stat.spread, key)
        for key, stat in row.figures.items()
        if key in named and stat.spread is not None
    ]
    if spreads:
        row.spread, key = max(spreads)
        row.spread_of = named[key]


def _reference_files(data, configs):
    """The reference files the row's judged cells were judged against."""
    return {
        cell.reference_file
        for bench in data.benchmarks
        for config in configs
        for cell in [data.cell(config, bench)]
        if cell is not None and cell.ref is not None and cell.reference_file
    }
