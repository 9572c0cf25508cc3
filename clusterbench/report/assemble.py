"""From ReFrame run reports and stored sessions to the report's data model.

Everything the report shows is computed here, without plotting or HTML:
configurations and their labels, figures and verdicts per configuration,
message-size curves, scaling series, per-node and per-link acceptance data,
elasticities and provenance. A section without data carries the reason
instead, and a figure that was not measured stays ``None`` (never zero).
"""

import dataclasses
import datetime
import json
import math
import os
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Optional

from clusterbench import runreport, stacknames, stats, verdict, vocabulary
from clusterbench.errors import ClusterbenchError
from clusterbench.report import curves as curvelib

MISSING = 'missing'
FAILED = verdict.FAILED

# ---------------------------------------------------------------- inputs


@dataclass
class Run:
    """One input: a ReFrame JSON report or one stored session of the database."""

    source: str
    data: dict

    @property
    def info(self):
        return self.data.get('session_info') or {}


def load_reports(paths):
    """The reports at *paths*; a directory stands for its ``report.json``."""
    runs = []
    for path in paths:
        if os.path.isdir(path):
            candidate = os.path.join(path, 'report.json')
            if not os.path.isfile(candidate):
                raise ClusterbenchError(f'{path}: directory without report.json')
            path = candidate
        runs.append(Run(path, runreport.load(path)))
    return runs


def load_history(query, config):
    """The sessions of ReFrame's results database matching *query*."""
    from clusterbench import history

    runs = []
    for session in history.sessions(query, config):
        uuid = (session.get('session_info') or {}).get('uuid', '?')
        if not isinstance(session.get('runs'), list):
            raise ClusterbenchError(f'stored session {uuid}: no "runs" list')
        runs.append(Run(f'stored session {uuid}', session))
    return runs


# ---------------------------------------------------------- configurations


def _stack_from_name(environ):
    tokens = re.split(r'[-_+.@ ]+', environ.lower())
    mpi = next((m for m in stacknames.MPI_NAMES for t in tokens if t == m), None)
    compiler = next(
        (stacknames.COMPILERS[t] for t in tokens if t in stacknames.COMPILERS), None
    )
    blas = next((b for b in stacknames.BLAS for t in tokens if t == b), None)
    return mpi, compiler, blas


def _stack(case):
    """(MPI, compiler, BLAS, where from) of a test case."""
    extras = {}
    for key in ('environ_extras', 'extras'):
        if isinstance(case.get(key), dict):
            extras = case[key]
            break
    from_name = _stack_from_name(case['environ'])
    found, origin = [], set()
    for i, key in enumerate(('mpi', 'compiler', 'blas')):
        param = case.get(key)
        if isinstance(param, str) and param:
            found.append(param)
            origin.add('test parameters')
        elif isinstance(extras.get(key), str) and extras[key]:
            found.append(extras[key])
            origin.add('environment extras')
        else:
            found.append(from_name[i])
            if from_name[i]:
                origin.add('environment name')
    return (*found, ', '.join(sorted(origin)) or 'unknown')


def _nodes(case):
    nodes = case.get('num_nodes')
    if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes > 0:
        return nodes
    hosts = case.get('job_nodelist') or []
    if hosts:
        return len(set(hosts))
    # A test that failed before its job ran has no node list; under the
    # local scheduler it could only have run on this one node.
    return 1 if case.get('scheduler') == 'local' else None


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

    @property
    def label(self):
        """Every part, unknown ones shown as such."""
        nodes = '? nodes' if self.nodes is None else _plural(self.nodes, 'node')
        return (
            f'{self.system}:{self.partition} · {self.environ} · '
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
        return ' '.join(parts)


def _plural(n, word):
    return f'{n} {word}' if n == 1 else f'{n} {word}s'


# --------------------------------------------------------------- benchmarks

_PARAM = re.compile(r'\s+%([.\w$]+)=(\S+)')
#: Parameters that say where or how often a test ran, not what it ran.
_PLACEMENT = {'.nid', '.part', '.repeat_no', '$nid', '$part', '$repeat_no'}
#: Parameters that set the size of a run (scaling series are along them).
_SIZE = {'ranks_per_node', 'num_nodes', 'num_tasks', 'nodes', 'ranks'}


def split_name(name):
    """('CGSolverCheck', {'stencil': '7', ...}) of a ReFrame test name."""
    base = name.split()[0] if name.split() else name
    return base, dict(_PARAM.findall(name))


def _name_without(name, drop):
    base, params = split_name(name)
    kept = ' '.join(f'%{k}={v}' for k, v in params.items() if k not in drop)
    return f'{base} {kept}'.strip()


def _test_name(name, hosts):
    """*name* without placement parameters and parameters naming its nodes."""
    base, params = split_name(name)
    kept = [
        f'%{k}={v}'
        for k, v in params.items()
        if k not in _PLACEMENT and not any(h and h in v for h in hosts)
    ]
    return ' '.join([base, *kept])


#: Reference-index entries that the configuration (not the figure) carries.
_IN_CONFIG = {'mpi', 'compiler', 'blas', 'num_nodes'}


def _identity(case):
    """What else makes a figure this figure: the check's reference index.

    Variables set with ``-S`` (a problem class, a rank count) are not in the
    test's name, yet a class S and a class C figure are not samples of one
    figure. The check's ``reference_index`` names what its reference depends
    on; those variables join the name (as ``%var=value``).
    """
    _, params = split_name(case['name'])
    extra = []
    for key in case.get('reference_index') or []:
        if not isinstance(key, str) or key.startswith('$') or key in _IN_CONFIG:
            continue
        value = case.get(key)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        if any(k == key or k.endswith(f'.{key}') for k in params):
            continue
        extra.append(f' %{key}={value}')
    return ''.join(extra)


def better(variable, unit):
    """'higher', 'lower' or None (not a figure of merit) for one figure."""
    return vocabulary.direction(variable, unit)


@dataclass
class Benchmark:
    """One figure of one test (with its parameters): a row of the summary."""

    key: tuple  # (test name, variable)
    test: str
    variable: str
    unit: str
    base: str
    params: dict
    better: Optional[str]
    application: Optional[str] = None  # family shown in the application section

    @property
    def title(self):
        shown = ' '.join(
            f'{k}={v}' for k, v in self.params.items() if k not in _PLACEMENT
        )
        return f'{self.base} {shown} · {self.variable}'.replace('  ', ' ')

    @property
    def short_title(self):
        """The title without the test's name (under a heading that has it)."""
        shown = ' '.join(
            f'{k}={v}' for k, v in self.params.items() if k not in _PLACEMENT
        )
        return f'{shown} · {self.variable}' if shown else self.variable


def application_family(base, variable, unit):
    """The application family of a figure, or None when it is not a headline.

    NPB (any Mop/s figure), our CG solver's GFlop/s, HPL, STREAM triad, HPCG.
    """
    low, test = variable.lower(), base.lower()
    if unit == 'Mop/s' and 'per_process' not in low:
        return 'NPB'
    if test.startswith('cgsolver') and low == 'gflops':
        return 'CG solver'
    if low == 'hpl':
        return 'HPL'
    if low in ('stream_triad', 'stream_star_triad'):
        return 'STREAM'
    if test.startswith('hpcg') and unit in ('GFlop/s', 'TFlop/s'):
        return 'HPCG'
    return None


# --------------------------------------------------------------- the model


@dataclass
class Cell:
    """The figure of one benchmark on one configuration (or why there is none)."""

    config: Config
    benchmark: Benchmark
    state: str  # a verdict (pass, SLOWER, FASTER, ...), FAILED or missing
    values: list = field(default_factory=list)
    reference: Optional[float] = None
    lower: Optional[float] = None
    upper: Optional[float] = None
    reason: str = ''
    best: bool = False
    reference_file: str = ''

    @property
    def value(self):
        return statistics.median(self.values) if self.values else None

    @property
    def allowed(self):
        if self.reference is None:
            return None
        return verdict.bounds(self.reference, self.lower, self.upper)


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


def _median_curve(curves):
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
    better: Optional[str]
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
    better: Optional[str]
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
    """Figures measured in two or more sessions (see clusterbench.trend)."""

    series: list = field(default_factory=list)  # [trend.Series]
    omitted: int = 0


#: Trend plots in one report; the ones that moved or left their band first.
MAX_TRENDS = 30


def _trends(runs, limit=MAX_TRENDS):
    from clusterbench import trend

    try:
        series = trend.collect([(run.source, run.data) for run in runs])
    except ClusterbenchError as err:
        return Trends(reason=f'no trend: {err}')
    drawn = [s for s in series if len(s.points) >= 2]
    if not drawn:
        return Trends(
            reason='every figure comes from one session: a trend needs two or '
            'more (--history QUERY, or several reports)'
        )

    def judged_out(s):
        return any(verdict.kind(p.verdict) != verdict.PASS for p in s.points)

    drawn.sort(key=lambda s: (s.change is None, not judged_out(s), s.title))
    return Trends(series=drawn[:limit], omitted=max(len(drawn) - limit, 0))


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
            if c is not None and c.reference is not None
        ]

    def counts(self, config):
        found = defaultdict(int)
        for b in self.benchmarks:
            found[self.cell(config, b).state] += 1
        return found


# ---------------------------------------------------------------- assembly


def assemble(runs, title='Benchmark report', now=None):
    """The report's data model from *runs* (see :func:`load_reports`)."""
    builder = _Builder()
    for run in runs:
        builder.add_run(run)
    data = builder.finish(title, now)
    data.trends = _trends(runs)
    return data


class _Builder:
    def __init__(self):
        self.configs = {}
        self.sources = []
        self.samples = defaultdict(list)  # (config key, test, var) -> [Figure]
        self.case_info = {}  # (config key, test) -> latest case dict
        self.failures = []
        self.units = {}
        self.seen_cases = set()
        self.comm_cases = []  # (config key, test, placement, case, curves)
        self.comm_problems = []
        self.skipped = []  # (system, partition, environ, test, reason)
        self.node_cases = defaultdict(list)  # (system, partition) -> one-node cases
        self.fabric_cases = []
        self.pair_samples = defaultdict(list)
        self.scaling_samples = defaultdict(list)
        self.warnings = []

    # --- reading

    def add_run(self, run):
        info = run.info
        source = SourceInfo(
            run.source,
            str(info.get('uuid', '')),
            str(info.get('hostname', '')),
            _time(info.get('time_start_unix'), info.get('time_start')),
            _time(info.get('time_end_unix'), info.get('time_end')),
            str(info.get('version', '')),
            str(info.get('cmdline', '')),
        )
        self.sources.append(source)
        found = runreport.cases(run.data, run.source)
        index = runreport.case_index(found)
        for case in found:
            if case.get('fixture'):
                continue
            uid = case.get('uuid')
            if uid and uid in self.seen_cases:
                continue  # the same session read twice (report and database)
            if uid:
                self.seen_cases.add(uid)
            source.cases += 1
            if case.get('result') == 'skip':
                # Not run here by design (e.g. inter-node on one node): no
                # configuration of its own, no failure; the reason is listed.
                _, reason = runreport.not_run(case, index)
                self.skipped.append(
                    (
                        case['system'],
                        case['partition'],
                        case['environ'],
                        case['name'],
                        reason,
                    )
                )
                continue
            self._add_case(case, run.source)

    def _config(self, case, source):
        mpi, compiler, blas, origin = _stack(case)
        nodes = _nodes(case)
        key = (
            case['system'],
            case['partition'],
            case['environ'],
            mpi,
            compiler,
            blas,
            nodes,
        )
        config = self.configs.get(key)
        if config is None:
            config = self.configs[key] = Config(
                key,
                '',
                case['system'],
                case['partition'],
                case['environ'],
                mpi,
                compiler,
                blas,
                nodes,
                origin,
            )
        config.sources.add(source)
        config.hosts.update(h for h in case.get('job_nodelist') or [] if h)
        if isinstance(case.get('processor_facts'), dict) and case['processor_facts']:
            config.processor = case['processor_facts']
        when = case.get('job_completion_time_unix')
        if isinstance(when, (int, float)):
            config.completed.append(when)
        return config

    def _add_case(self, case, source):
        config = self._config(case, source)
        one = {'runs': [{'testcases': [case]}]}
        figures, failures = runreport.extract(one, source)
        hosts = sorted(set(case.get('job_nodelist') or []))
        # Where a test ran is not what it ran: placement parameters (ReFrame's
        # --distribute, a node or pair parameter) do not make a new figure.
        name = _test_name(case['name'], hosts) + _identity(case)
        self.case_info[(config.key, name)] = case
        for fail in failures:
            self.failures.append((config, dataclasses.replace(fail, test=name)))
        for fig in figures:
            self.samples[(config.key, name, fig.variable)].append(fig)
            self.units.setdefault((name, fig.variable), fig.unit)
        found, problem = curvelib.from_case(case)
        if found:
            placement = split_name(case['name'])[1].get('placement', '')
            self.comm_cases.append((config.key, name, placement, case, found))
        if problem:
            self.comm_problems.append(f'{name} on {config.short}: {problem}')
        for host, facts in _node_facts(case).items():
            config.hwinfo.setdefault(host, facts)
        placement = name
        if len(hosts) == 1:
            self.node_cases[(case['system'], case['partition'])].append(case)
        if isinstance(case.get('fabric_result'), dict):
            self.fabric_cases.append(case)
        ranks = case.get('num_tasks')
        for fig in figures:
            group = (case['system'], case['partition'], placement, fig.variable)
            if len(hosts) == 2 and ranks == 2:
                self.pair_samples[group].append((tuple(hosts), fig, case['environ']))
            if isinstance(ranks, int) and ranks > 0:
                series = (
                    case['system'],
                    case['partition'],
                    case['environ'],
                    _name_without(name, _PLACEMENT | _SIZE),
                    fig.variable,
                )
                self.scaling_samples[series].append(
                    (ranks, _nodes(case), fig, case.get('scaling'))
                )

    # --- building

    def _merge_stacks(self):
        """Fill a configuration's unknown MPI/compiler/BLAS from its siblings.

        Tests of one environment that say nothing of (say) BLAS belong with
        the tests of that environment that name one, when they name exactly
        one: HPCC in gnu-openmpi and HPLCheck %blas=openblas in gnu-openmpi
        are one configuration, not two.
        """
        groups = defaultdict(list)
        for key in self.configs:
            groups[(key[0], key[1], key[2], key[6])].append(key)
        remap = {}
        for keys in groups.values():
            known = [{k[i] for k in keys if k[i] is not None} for i in (3, 4, 5)]
            for key in keys:
                filled = list(key)
                for pos, values in zip((3, 4, 5), known):
                    if filled[pos] is None and len(values) == 1:
                        filled[pos] = next(iter(values))
                filled = tuple(filled)
                if filled != key:
                    remap[key] = filled
        if not remap:
            return
        merged = {}
        for key, config in self.configs.items():
            new = remap.get(key, key)
            target = merged.get(new)
            if target is None:
                config.key = new
                config.mpi, config.compiler, config.blas = new[3], new[4], new[5]
                if key != new:
                    config.stack_origin += ' (completed from the same environment)'
                merged[new] = config
                continue
            target.hosts |= config.hosts
            target.sources |= config.sources
            target.completed += config.completed
            target.processor = target.processor or config.processor
            for host, facts in config.hwinfo.items():
                target.hwinfo.setdefault(host, facts)
        # The absorbed configurations' data now belongs to the merged ones.
        by_key = {}
        for key in self.configs:
            by_key[key] = merged[remap.get(key, key)]
        self.configs = merged

        def move(table):
            out = defaultdict(list) if isinstance(table, defaultdict) else {}
            for (key, *rest), value in table.items():
                new = (by_key[key].key, *rest)
                if isinstance(out, defaultdict):
                    out[new] += value
                else:
                    out.setdefault(new, value)
            return out

        self.samples = move(self.samples)
        self.case_info = move(self.case_info)
        self.failures = [(by_key[c.key] if c.key in by_key else c, f)
                         for c, f in self.failures]  # fmt: skip
        self.comm_cases = [(by_key[k].key, *rest) for k, *rest in self.comm_cases]

    def finish(self, title, now):
        self._merge_stacks()
        configs = sorted(
            self.configs.values(),
            key=lambda c: (
                c.system,
                c.partition,
                c.environ,
                c.nodes if c.nodes is not None else 0,
                str(c.key),
            ),
        )
        for i, config in enumerate(configs, 1):
            config.id = f'C{i}'
        benchmarks = self._benchmarks()
        cells = self._cells(configs, benchmarks)
        applications = [(b.application, b) for b in benchmarks if b.application]
        applications.sort(key=lambda p: (_FAMILY_ORDER.get(p[0], 99), p[1].title))
        data = ReportData(
            title=title,
            generated=_time(now if now is not None else _now(), None),
            sources=self.sources,
            configs=configs,
            benchmarks=benchmarks,
            cells=cells,
            failures=self.failures,
            skipped=self.skipped,
            applications=applications,
            communication=Communication(),
            scaling=Section(),
            scaling_series=[],
            acceptance=Acceptance(),
            sensitivity=Sensitivity(),
            warnings=self.warnings,
        )
        data.communication = self._communication(data)
        data.scaling_series = self._scaling(benchmarks)
        if not data.scaling_series:
            data.scaling = Section(
                'no test ran at two or more rank or node counts in one '
                'configuration (e.g. CGSolverCheck with ranks_per_node=1 and '
                'all, or runs with -S num_nodes=N)'
            )
        data.acceptance = self._acceptance(benchmarks)
        data.sensitivity = _sensitivity(data)
        if not benchmarks and not self.failures:
            self.warnings.append('the inputs hold no figure and no failed test')
        return data

    def _benchmarks(self):
        found = {}
        for (_, name, variable), figs in self.samples.items():
            key = (name, variable)
            if key in found:
                continue
            base, params = split_name(name)
            unit = self.units.get(key, figs[0].unit)
            found[key] = Benchmark(
                key,
                name,
                variable,
                unit,
                base,
                params,
                better(variable, unit),
                application_family(base, variable, unit),
            )
        # A test that failed everywhere still gets a row, so it is seen.
        for _, fail in self.failures:
            if not any(k[0] == fail.test for k in found):
                key = (fail.test, '-')
                base, params = split_name(fail.test)
                found[key] = Benchmark(key, fail.test, '-', '', base, params, None)
        return sorted(found.values(), key=lambda b: (b.base, b.test, b.variable))

    def _cells(self, configs, benchmarks):
        failed = {}
        for config, fail in self.failures:
            failed.setdefault((config.key, fail.test), fail)
        cells = {}
        for bench in benchmarks:
            row = []
            for config in configs:
                figs = self.samples.get((config.key, bench.test, bench.variable))
                cell = self._cell(config, bench, figs, failed)
                cells[(config.id, bench.key)] = cell
                row.append(cell)
            _mark_best(row, bench.better)
        return cells

    def _cell(self, config, bench, figs, failed):
        case = self.case_info.get((config.key, bench.test)) or {}
        ref_file = str(case.get('reference_file') or '')
        if figs:
            judged = verdict.Judged(
                bench.test,
                config.system,
                config.partition,
                config.environ,
                bench.variable,
                bench.unit,
                [],
                None,
                None,
                None,
            )
            for fig in figs:
                judged.values.append(fig.value)
                if fig.has_reference:
                    judged.reference = fig.reference
                    judged.lower, judged.upper = fig.lower, fig.upper
            judged.judge()
            return Cell(
                config,
                bench,
                judged.verdict,
                list(judged.values),
                judged.reference,
                judged.lower,
                judged.upper,
                reference_file=ref_file,
            )
        fail = failed.get((config.key, bench.test))
        if fail is not None:
            return Cell(
                config,
                bench,
                FAILED,
                reason=f'{fail.phase}: {fail.reason}',
                reference_file=ref_file,
            )
        return Cell(config, bench, MISSING, reason='not run on this configuration')

    # --- communication

    def _communication(self, data):
        comm = Communication()
        by_key = {c.key: c for c in data.configs}
        runs = defaultdict(list)
        for config_key, test, placement, _case, found in self.comm_cases:
            for curve in found:
                key = (curve.operation, curve.metric, config_key, test, placement)
                runs[key + (curve.tool,)].append(curve)
        for (op, metric, config_key, test, placement, _), curves in runs.items():
            line = CommLine(
                by_key[config_key], _median_curve(curves), test, placement, len(curves)
            )
            comm.lines.setdefault((op, metric), []).append(line)
        barrier = comm.lines.pop(('Barrier', curvelib.LATENCY), [])
        for line in barrier:
            value = line.curve.points[0][1] if line.curve.points else None
            comm.barrier.append((line.config, line.label_tool, value))
        for lines in comm.lines.values():
            for line in lines:
                line.curve.points.sort()
        comm.table = _link_table(data, comm, self.comm_cases)
        comm.notes = self.comm_problems
        if not comm.lines and not comm.barrier and not comm.table:
            comm.reason = (
                'no message-size curves (IMB, OSU or NetPIPE checks keep them in '
                'the run report) and no PingPong figures in the inputs'
            )
            if self.comm_problems:
                comm.reason += '; ' + '; '.join(self.comm_problems)
        return comm

    # --- scaling

    def _scaling(self, benchmarks):
        families = {}
        for b in benchmarks:
            if b.application:
                families[(_name_without(b.test, _PLACEMENT | _SIZE), b.variable)] = b
        out = []
        for (system, part, environ, test, var), samples in sorted(
            self.scaling_samples.items()
        ):
            bench = families.get((test, var))
            if bench is None or bench.better is None:
                continue
            by_ranks = defaultdict(list)
            nodes_of = {}
            weak = False
            for ranks, nodes, fig, scaling in samples:
                by_ranks[ranks].append(fig.value)
                nodes_of[ranks] = nodes
                weak = weak or scaling == 'weak'
            if len(by_ranks) < 2:
                continue
            series = ScalingSeries(
                _scaling_title(test, var),
                var,
                bench.unit,
                f'{system}:{part} {environ}',
                test,
                weak=weak,
            )
            base_ranks = min(by_ranks)
            base = statistics.median(by_ranks[base_ranks])
            for ranks in sorted(by_ranks):
                value = statistics.median(by_ranks[ranks])
                if not base or not value:
                    continue
                if bench.better == 'lower':
                    speedup = base / value
                else:
                    speedup = value / base
                # Weak scaling: ideal is constant time, or rate growing with ranks.
                if weak and bench.better == 'lower':
                    ideal = 1.0
                else:
                    ideal = ranks / base_ranks
                series.points.append(
                    ScalingPoint(ranks, nodes_of[ranks], value, speedup, ideal)
                )
            out.append(series)
        return out

    # --- acceptance

    def _acceptance(self, benchmarks):
        acc = Acceptance()
        wanted = {
            (_name_without(b.test, _PLACEMENT), b.variable): b for b in benchmarks
        }
        for (system, part), cases in sorted(self.node_cases.items()):
            groups, verdicts = _node_groups(f'{system}:{part}', cases)
            acc.nodes += groups
            acc.node_verdicts += verdicts
        if not acc.nodes:
            hosts = {h for cases in self.node_cases.values() for c in cases
                     for h in c.get('job_nodelist') or []}  # fmt: skip
            acc.nodes_reason = (
                'no figure was measured on two or more nodes one node at a '
                'time'
                + (f' (all runs were on {", ".join(sorted(hosts))})' if hosts else '')
            )
        for case in self.fabric_cases:
            matrices, culprits = _fabric_matrices(case)
            acc.pairs += matrices
            acc.culprits += culprits
        fabric = {m.system for m in acc.pairs}
        for (system, part, test, var), samples in sorted(self.pair_samples.items()):
            if f'{system}:{part}' in fabric:
                continue  # the fabric check's matrices say it all
            bench = wanted.get((test, var))
            pairs = {p for p, _, _ in samples}
            unit = bench.unit if bench else ''
            if bench is None or len(pairs) < 2 or not _is_link_figure(var, unit):
                continue
            acc.pairs.append(_pair_matrix(system, part, test, var, bench, samples))
        if not acc.pairs:
            acc.pairs_reason = (
                'no all-pairs fabric result (FabricCheck) and no latency or '
                'bandwidth figure measured for two or more node pairs (one rank '
                'on each of two nodes)'
            )
        if not acc.nodes and not acc.pairs:
            acc.reason = f'{acc.nodes_reason}; {acc.pairs_reason}'
        return acc


_FAMILY_ORDER = {'NPB': 0, 'CG solver': 1, 'HPL': 2, 'STREAM': 3, 'HPCG': 4}


def _is_link_figure(variable, unit):
    low = variable.lower()
    return vocabulary.is_link_unit(unit) or 'latency' in low


def _scaling_title(test, variable):
    base, params = split_name(test)
    shown = ' '.join(f'{k}={v}' for k, v in params.items())
    return f'{base} {shown} · {variable}'.replace('  ', ' ')


def _mark_best(row, direction):
    if direction is None:
        return
    measured = [c for c in row if c.values and c.state != FAILED]
    if len(measured) < 2:
        return
    pick = max if direction == 'higher' else min
    best = pick(measured, key=lambda c: c.value)
    best.best = True


def _robust_flags(values, direction, floor=0.05, k=3.0):
    """host/pair -> reason for values far from the median on the worse side."""
    if len(values) < 3:
        return {}, statistics.median(values.values()) if values else 0.0
    median = stats.median(values.values())
    if not median:
        return {}, median
    band = stats.tolerance_band(values.values(), floor, k)
    flags = {}
    for name, value in values.items():
        dev = value / median - 1
        worse = (
            (direction == 'higher' and dev < -band)
            or (direction == 'lower' and dev > band)
            or (direction is None and abs(dev) > band)
        )
        if worse:
            flags[name] = (
                f'{dev * 100:+.1f}% from the median of {len(values)} '
                f'(band ±{band * 100:.1f}%)'
            )
    return flags, median


def _node_groups(partition, cases):
    """Per-figure node distributions of one partition, judged as
    ``clusterbench acceptance nodes`` judges them."""
    from clusterbench.acceptance import nodes as acceptance
    from clusterbench.acceptance import robust

    nodes = acceptance.collect(cases)
    if len(nodes) < 2:
        return [], []
    ranked = acceptance.rank(nodes)
    verdicts = [(partition, n.name, n.verdict, list(n.reasons)) for n in ranked]
    groups = []
    for key in sorted({k for n in nodes.values() for k in n.figures}):
        having = [n for n in nodes.values() if key in n.figures]
        if len(having) < 2:
            continue
        unit = having[0].figures[key].unit
        values = {n.name: n.figures[key].value for n in having}
        flagged = {}
        for n in having:
            why = [r for r in n.reasons if r.startswith(f'{key} ')]
            if why:
                flagged[n.name] = '; '.join(why)
        direction = robust.direction_of(unit)
        groups.append(
            NodeGroup(
                key.replace(':', ' · '),
                partition,
                unit,
                {1: 'higher', -1: 'lower'}.get(direction),
                values,
                {n.name: n.verdict for n in having},
                flagged,
                statistics.median(values.values()),
            )
        )
    return groups, verdicts


#: Fabric matrices shown: (title, matrix, unit, better, words of its reasons).
_FABRIC = (
    ('latency (median)', 'latency_p50_us', 'us', 'lower', ('latency', 'stall')),
    ('bandwidth', 'bandwidth_mbs', 'MB/s', 'higher', ('bandwidth',)),
    ('message rate', 'msgrate_mmps', 'Mmsg/s', 'higher', ('msgrate',)),
)


def _fabric_matrices(case):
    """The fabric check's all-pairs matrices, links judged as
    ``clusterbench acceptance links`` judges them."""
    from clusterbench.acceptance import links

    result = case['fabric_result']
    names = result.get('nodes') or []
    partition = f'{case["system"]}:{case["partition"]}'
    try:
        verdict = links.judge(result, case.get('link_spec') or {})
    except (KeyError, TypeError, IndexError, ValueError):
        return [], []
    out = []
    for title, key, unit, better, words in _FABRIC:
        matrix = result.get(key)
        if not isinstance(matrix, list) or len(matrix) != len(names):
            continue
        values = {
            (a, b): matrix[i][j]
            for i, a in enumerate(names)
            for j, b in enumerate(names)
            if i != j and isinstance(matrix[i][j], (int, float))
        }
        flagged = {}
        for link in verdict.links:
            why = [r for r in link.reasons if any(w in r for w in words)]
            if why:
                flagged[(link.a, link.b)] = '; '.join(why)
        base = split_name(case['name'])[0]
        out.append(
            PairMatrix(
                f'{base} · {title}',
                partition,
                unit,
                better,
                list(names),
                values,
                flagged,
            )
        )
    culprits = [(partition, node, why) for node, why in verdict.culprits.items()]
    return out, culprits


def _pair_matrix(system, part, test, var, bench, samples):
    per_pair = defaultdict(list)
    for pair, fig, _ in samples:
        per_pair[tuple(sorted(pair))].append(fig)
    values = {
        p: statistics.median(f.value for f in figs) for p, figs in per_pair.items()
    }
    flags, _ = _robust_flags(values, bench.better)
    for pair, figs in per_pair.items():
        if _verdict_of(figs) in verdict.REGRESSIONS:
            flags.setdefault(pair, 'outside its reference tolerance')
    nodes = sorted({n for p in values for n in p})
    return PairMatrix(
        _scaling_title(test, var),
        f'{system}:{part}',
        bench.unit,
        bench.better,
        nodes,
        values,
        flags,
    )


def _verdict_of(figs):
    judged = verdict.Judged(
        *(['x'] * 5), figs[0].unit, [f.value for f in figs], None, None, None
    )
    for fig in figs:
        if fig.has_reference:
            judged.reference, judged.lower, judged.upper = (
                fig.reference,
                fig.lower,
                fig.upper,
            )
    return judged.judge().verdict


# ----------------------------------------------------------- communication


def _declared_peak(case):
    """(peak GB/s per direction, how) the check read from its partition, or None."""
    peak = case.get('link_peak')
    if isinstance(peak, dict):
        value = peak.get('peak_mbs')
        if (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and value > 0
        ):
            return float(value) / 1000.0, str(peak.get('how') or '')
    return None, ''


def _link_table(data, comm, comm_cases):
    rows = []
    keys = []
    for metric in (curvelib.LATENCY, curvelib.BANDWIDTH):
        for line in comm.lines.get(('PingPong', metric), []):
            key = (line.config.id, line.curve.tool, line.placement)
            if key not in keys:
                keys.append(key)
    by_id = {c.id: c for c in data.configs}
    cases = {}
    for config_key, _, placement, case, found in comm_cases:
        for curve in found:
            cases.setdefault((config_key, curve.tool, placement), case)
    for config_id, tool, placement in keys:
        config = by_id[config_id]

        def points(metric, config_id=config_id, tool=tool, placement=placement):
            for line in comm.lines.get(('PingPong', metric), []):
                if (line.config.id, line.curve.tool, line.placement) == (
                    config_id,
                    tool,
                    placement,
                ):
                    return line.curve.points
            return []

        latency = size = peak = peak_size = None
        lat = points(curvelib.LATENCY)
        if lat:
            size, latency = min(lat)
        bw = points(curvelib.BANDWIDTH)
        if bw:
            peak_size, peak_mbs = max(bw, key=lambda p: p[1])
            peak = peak_mbs / 1000.0
        case = cases.get((config.key, tool, placement)) or {}
        declared, how = _declared_peak(case)
        note = '' if declared else str(case.get('efficiency_note') or '')
        rows.append(
            LinkRow(
                config,
                tool,
                latency,
                size,
                peak,
                peak_size,
                declared,
                placement,
                note,
                how,
            )
        )
    # HPCC's PingPong figures, where a configuration has no curve of its own.
    have = {r.config.id for r in rows}
    for config in data.configs:
        if config.id in have:
            continue
        latency = _figure_value(data, config, 'pingpong_latency_min')
        peak = _figure_value(data, config, 'pingpong_bandwidth_max')
        if latency is None and peak is None:
            continue
        rows.append(
            LinkRow(
                config,
                'HPCC',
                latency,
                None,
                peak,
                None,
                None,
                note='HPCC: min latency / max bandwidth over rank pairs',
            )
        )
    return rows


def _figure_value(data, config, variable):
    for bench in data.benchmarks:
        if bench.variable == variable:
            cell = data.cell(config, bench)
            if cell is not None and cell.value is not None:
                return cell.value
    return None


# ------------------------------------------------------------- sensitivity

#: Resources a configuration offers, and the figures that measure them (in
#: order of preference): (test prefix or '', variable).
RESOURCES = (
    (
        'memory bandwidth',
        (('Stream', 'stream_triad'), ('', 'stream_star_triad')),
    ),
    (
        'link bandwidth',
        (('', 'pingpong_bandwidth_max'), ('', 'ring_natural_bandwidth')),
    ),
    ('latency', (('', 'pingpong_latency_min'), ('', 'ring_natural_latency'))),
    (
        'floating-point rate',
        (('', 'dgemm_single'), ('', 'dgemm_star'), ('', 'dgemm')),
    ),
)


def _resource_values(data):
    """resource -> {config id: (value, unit, what)}."""
    out = {}
    link = {}
    for row in data.communication.table:
        # The network is what an inter-node row measures; prefer it.
        if row.config.id not in link or row.placement == 'inter':
            link[row.config.id] = row
    for name, candidates in RESOURCES:
        values = {}
        for config in data.configs:
            if (
                name == 'link bandwidth'
                and link.get(config.id)
                and link[config.id].peak_gbs
            ):
                values[config.id] = (link[config.id].peak_gbs, 'GB/s', 'PingPong peak')
                continue
            if name == 'latency' and link.get(config.id) and link[config.id].latency_us:
                values[config.id] = (link[config.id].latency_us, 'us', 'PingPong')
                continue
            for prefix, variable in candidates:
                found = [
                    b
                    for b in data.benchmarks
                    if b.variable == variable and b.base.startswith(prefix)
                ]
                cell = next(
                    (
                        data.cell(config, b)
                        for b in found
                        if data.cell(config, b).value is not None
                    ),
                    None,
                )
                if cell is not None:
                    values[config.id] = (cell.value, cell.benchmark.unit, variable)
                    break
        out[name] = values
    return out


def loglog_slope(xs, ys):
    """(slope, R²) of log y against log x by least squares; None if undefined."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    sxx = sum((x - mx) ** 2 for x in lx)
    if sxx < 1e-12:
        return None, None
    sxy = sum((x - mx) * (y - my) for x, y in zip(lx, ly))
    syy = sum((y - my) ** 2 for y in ly)
    slope = sxy / sxx
    r2 = (sxy * sxy) / (sxx * syy) if syy > 1e-300 else 1.0
    return slope, r2


def _sensitivity(data, minimum=3):
    sens = Sensitivity()
    if len(data.configs) < minimum:
        sens.reason = (
            f'needs {minimum} or more configurations; the inputs have '
            f'{len(data.configs)}'
        )
        return sens
    resources = _resource_values(data)
    for _, bench in data.applications:
        for resource, values in resources.items():
            points = []
            for config in data.configs:
                cell = data.cell(config, bench)
                res = values.get(config.id)
                if (
                    res
                    and cell is not None
                    and cell.value is not None
                    and cell.value > 0
                    and res[0] > 0
                ):
                    points.append((config, res[0], cell.value))
            if res_is_self(bench, values):
                continue
            unit = next(iter(values.values()))[1] if values else ''
            if len(points) < minimum:
                sens.rows.append(
                    Elasticity(
                        bench,
                        resource,
                        unit,
                        None,
                        None,
                        points,
                        f'{resource}: {len(points)} configuration(s) have both '
                        f'figures, {minimum} needed',
                    )
                )
                continue
            slope, r2 = loglog_slope([p[1] for p in points], [p[2] for p in points])
            reason = '' if slope is not None else f'{resource} is the same on all'
            sens.rows.append(
                Elasticity(bench, resource, unit, slope, r2, points, reason)
            )
    if not sens.rows:
        sens.reason = 'no application benchmark figure in the inputs'
    return sens


def res_is_self(bench, values):
    """True when the resource is measured by this very figure (HPL vs HPL)."""
    return any(what == bench.variable for _, _, what in values.values())


# -------------------------------------------------------------- provenance


def _node_facts(case):
    """host -> digest of its hardware facts (``node_facts`` of the report, else
    the ``hwinfo/<host>.json`` files kept with the outputs)."""
    facts = case.get('node_facts')
    if isinstance(facts, dict) and facts:
        return {str(h): f for h, f in facts.items() if isinstance(f, dict)}
    outdir = case.get('outputdir')
    folder = os.path.join(outdir, 'hwinfo') if outdir else None
    if not folder or not os.path.isdir(folder):
        return {}
    from clusterbench import hwinfo

    found = {}
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if not entry.name.endswith('.json'):
            continue
        try:
            with open(entry.path) as f:
                data = json.load(f)
            found[entry.name[: -len('.json')]] = hwinfo.summary(data)
        except (OSError, ValueError, AttributeError, TypeError):
            continue
    return found


_FACT_LABELS = (
    ('cpu', 'CPU'),
    ('topology', 'topology'),
    ('threads', 'hardware threads'),
    ('max_mhz', 'max MHz'),
    ('memory_gib', 'memory GiB'),
    ('numa_nodes', 'NUMA nodes'),
    ('kernel', 'kernel'),
    ('network', 'network'),
    ('infiniband', 'InfiniBand'),
    ('mpi', 'MPI'),
    ('ucx', 'UCX'),
    ('libfabric', 'libfabric'),
    ('compiler', 'compiler'),
    ('blas', 'BLAS'),
    ('error', 'error'),
)


def hw_summary(facts):
    """(label, text) lines of one node's facts digest; absent facts say so."""
    lines = []
    for key, label in _FACT_LABELS:
        if key not in facts:
            continue
        value = facts[key]
        if isinstance(value, list):
            value = '; '.join(str(v) for v in value) or 'none'
        elif isinstance(value, dict):
            value = '; '.join(f'{k} {v}' for k, v in value.items())
        lines.append((label, str(value)))
    return lines


# -------------------------------------------------------------------- time


def _now():
    return datetime.datetime.now(datetime.timezone.utc).timestamp()


def _time(unix, text):
    if isinstance(unix, (int, float)):
        return datetime.datetime.fromtimestamp(unix, datetime.timezone.utc).strftime(
            '%Y-%m-%d %H:%M:%S UTC'
        )
    return str(text or '')


def run_dates(config):
    if not config.completed:
        return ''
    first, last = min(config.completed), max(config.completed)
    if _time(first, None)[:10] == _time(last, None)[:10]:
        return f'{_time(first, None)} .. {_time(last, None)[11:]}'
    return f'{_time(first, None)} .. {_time(last, None)}'
