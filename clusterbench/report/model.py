"""The report's data model: configurations, figures, cells and sections.

Plain data, filled by :mod:`clusterbench.report.assemble` and read by the
plots and the HTML. A section without data carries the reason instead, and a
figure that was not measured stays ``None`` (never zero).
"""

import dataclasses
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Optional

from clusterbench.core.figures import Better
from clusterbench.core.reference import Reference
from clusterbench.judging import verdict
from clusterbench.report import curves as curvelib
from clusterbench.report.identity import PLACEMENT

MISSING = verdict.MISSING
FAILED = verdict.FAILED


@dataclass
class Config:
    """One configuration: system, partition, environment and node count."""

    key: tuple
    id: str
    system: str
    partition: str
    environ: str
    mpi: Optional[str]
    compiler: Optional[str]
    blas: Optional[str]
    nodes: Optional[int]
    stack_origin: str = ''
    hosts: set = field(default_factory=set)
    processor: dict = field(default_factory=dict)
    hwinfo: dict = field(default_factory=dict)  # host -> facts
    sources: set = field(default_factory=set)
    completed: list = field(default_factory=list)  # job completion times
    #: The nodes' CPU kind (identity.cpu_kind_of): part of the key, so that
    #: two kinds of one partition are two configurations, never pooled.
    cpu_kind: str = ''
    #: Set where the inputs hold two kinds of this partition: the labels
    #: then name the kind (else they stay as they were).
    kinds_differ: bool = False

    @property
    def label(self):
        """Every part, unknown ones shown as such."""
        nodes = '? nodes' if self.nodes is None else _plural(self.nodes, 'node')
        kind = f' · {self.cpu_kind or "CPU ?"}' if self.kinds_differ else ''
        return (
            f'{self.system}:{self.partition}{kind} · {self.environ} · '
            f'MPI {self.mpi or "?"} · {self.compiler or "compiler ?"} · '
            f'BLAS {self.blas or "?"} · {nodes}'
        )

    @property
    def short(self):
        """The terse label of the classic studies: the parts that are known."""
        parts = [f'{self.system}/{self.partition}', self.environ]
        if self.stack_origin != 'environment name':
            # Named by the environment already when read from its name.
            env = self.environ.lower()
            parts += [
                p for p in (self.mpi, self.compiler, self.blas) if p and p not in env
            ]
        parts.append(f'{self.nodes}n' if self.nodes is not None else '?n')
        if self.kinds_differ:
            parts.append(self.cpu_kind or 'CPU ?')
        return ' '.join(parts)


def _plural(n, word):
    return f'{n} {word}' if n == 1 else f'{n} {word}s'


@dataclass
class Benchmark:
    """One figure of one test (with its parameters): a row of the summary."""

    key: tuple  # (test name, variable)
    test: str
    variable: str
    unit: str
    base: str
    params: dict
    better: Optional[Better]  # vocabulary.direction: HIGHER, LOWER or None
    application: Optional[str] = None  # family shown in the application section

    @property
    def title(self):
        shown = ' '.join(
            f'{k}={v}' for k, v in self.params.items() if k not in PLACEMENT
        )
        return f'{self.base} {shown} · {self.variable}'.replace('  ', ' ')

    @property
    def short_title(self):
        """The title without the test's name (under a heading that has it)."""
        shown = ' '.join(
            f'{k}={v}' for k, v in self.params.items() if k not in PLACEMENT
        )
        return f'{shown} · {self.variable}' if shown else self.variable


@dataclass
class Cell:
    """The figure of one benchmark on one configuration (or why there is none)."""

    config: Config
    benchmark: Benchmark
    state: verdict.Kind  # pass, SLOWER, FASTER, ..., FAILED or MISSING
    values: list = field(default_factory=list)
    ref: Optional[Reference] = None
    reason: str = ''
    best: bool = False
    reference_file: str = ''
    #: Samples of DISTURBED sessions: shown and counted, never pooled with
    #: the others (a DISTURBED HPL of 16.0 is not averaged into a healthy 62.4).
    disturbed: list = field(default_factory=list)
    disturbed_why: str = ''

    @property
    def value(self):
        return statistics.median(self.values) if self.values else None

    @property
    def allowed(self):
        return None if self.ref is None else self.ref.band()


@dataclass
class Section:
    """A section's content, or the reason it has none."""

    reason: str = ''

    @property
    def empty(self):
        return bool(self.reason)


@dataclass
class CommLine:
    config: Config
    curve: curvelib.Curve
    test: str
    placement: str = ''
    #: Repeated runs drawn as this one line (their median per size).
    runs: int = 1

    @property
    def label_tool(self):
        where = f', {self.placement}-node' if self.placement else ''
        runs = f', median of {self.runs} runs' if self.runs > 1 else ''
        return f'{self.curve.tool}{where}{runs}'

    @property
    def label(self):
        return f'{self.config.id} {self.config.short} ({self.label_tool})'


def median_curve(curves):
    """One line for repeated runs (``--reruns``) of a configuration and tool:
    the median at each message size, over the runs that measured it."""
    if len(curves) == 1:
        return curves[0]
    at = defaultdict(list)
    for curve in curves:
        for size, value in curve.points:
            at[size].append(value)
    points = [(size, statistics.median(values)) for size, values in at.items()]
    return dataclasses.replace(
        curves[0],
        source=f'{curves[0].source} (median of {len(curves)} runs)',
        points=points,
    )


@dataclass
class LinkRow:
    """One-way latency and peak throughput of one configuration and source."""

    config: Config
    source: str
    latency_us: Optional[float]
    latency_bytes: Optional[float]
    peak_gbs: Optional[float]
    peak_bytes: Optional[float]
    declared_gbs: Optional[float]
    placement: str = ''
    note: str = ''
    declared_how: str = ''

    @property
    def efficiency(self):
        if self.peak_gbs is None or not self.declared_gbs:
            return None
        return self.peak_gbs / self.declared_gbs


@dataclass
class Communication(Section):
    lines: dict = field(default_factory=dict)  # (operation, metric) -> [CommLine]
    barrier: list = field(default_factory=list)  # [(config, tool, latency us)]
    table: list = field(default_factory=list)  # [LinkRow]
    notes: list = field(default_factory=list)


@dataclass
class ScalingPoint:
    ranks: int
    nodes: Optional[int]
    value: float
    speedup: float
    ideal: float

    @property
    def efficiency(self):
        return self.speedup / self.ideal if self.ideal else None


@dataclass
class ScalingSeries:
    benchmark_title: str
    variable: str
    unit: str
    series: str  # system:partition environ
    test: str
    points: list = field(default_factory=list)
    weak: bool = False


@dataclass
class NodeGroup:
    """One figure measured node by node: its distribution and outliers."""

    title: str
    system: str
    unit: str
    better: Optional[Better]
    values: dict  # host -> median value
    verdicts: dict  # host -> verdict
    flagged: dict  # host -> reason
    median: float


@dataclass
class PairMatrix:
    """One figure measured per node pair: the all-pairs matrix."""

    title: str
    system: str
    unit: str
    better: Optional[Better]
    nodes: list
    values: dict  # (a, b) -> value, a < b
    flagged: dict  # (a, b) -> reason


@dataclass
class Acceptance(Section):
    nodes: list = field(default_factory=list)  # [NodeGroup]
    node_verdicts: list = field(
        default_factory=list
    )  # [(partition, node, verdict, reasons)]
    pairs: list = field(default_factory=list)  # [PairMatrix]
    culprits: list = field(default_factory=list)  # [(partition, node, why)]
    nodes_reason: str = ''
    pairs_reason: str = ''


@dataclass
class Elasticity:
    benchmark: Benchmark
    resource: str
    resource_unit: str
    slope: Optional[float]
    r2: Optional[float]
    points: list  # [(config, resource value, benchmark value)]
    reason: str = ''

    @property
    def n(self):
        return len(self.points)

    @property
    def statement(self):
        if self.slope is None:
            return self.reason
        xs = [p[1] for p in self.points]
        lo, hi = min(xs), max(xs)
        more = (hi / lo - 1) * 100
        gain = ((hi / lo) ** self.slope - 1) * 100
        word = 'more' if gain >= 0 else 'less'
        return (
            f'{more:.0f}% more {self.resource} went with {abs(gain):.0f}% {word} '
            f'{self.benchmark.title} (elasticity {self.slope:.2f}, '
            f'R² {self.r2:.2f}, {self.n} configurations)'
        )


@dataclass
class Sensitivity(Section):
    rows: list = field(default_factory=list)  # [Elasticity]


@dataclass
class Trends(Section):
    """Figures measured in two or more sessions (see clusterbench.judging.trend)."""

    series: list = field(default_factory=list)  # [trend.Series]
    omitted: int = 0


@dataclass
class SourceInfo:
    name: str
    uuid: str
    hostname: str
    start: str
    end: str
    reframe: str
    cmdline: str
    cases: int = 0


@dataclass
class ReportData:
    title: str
    generated: str
    sources: list
    configs: list
    benchmarks: list
    cells: dict  # (config id, benchmark key) -> Cell
    failures: list  # [(config, runreport.Failure)]
    skipped: list  # [(system, partition, environ, test, reason)]
    applications: list  # [(family, Benchmark)]
    communication: Communication
    scaling: Section
    scaling_series: list
    acceptance: Acceptance
    sensitivity: Sensitivity
    warnings: list
    trends: Trends = field(default_factory=Trends)
    #: The executive page (clusterbench.report.executive.Executive).
    executive: Optional[Section] = None

    def cell(self, config, benchmark):
        return self.cells.get((config.id, benchmark.key))

    def row(self, benchmark):
        return [self.cell(c, benchmark) for c in self.configs]

    @property
    def references(self):
        return [
            c
            for b in self.benchmarks
            for c in self.row(b)
            if c is not None and c.ref is not None
        ]

    def counts(self, config):
        found = defaultdict(int)
        for b in self.benchmarks:
            found[self.cell(config, b).state] += 1
        return found
