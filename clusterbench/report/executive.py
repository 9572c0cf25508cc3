"""The executive page: one row per system:partition, the headline figures a
committee reads first, from undisturbed sessions only.

Each headline figure is the median of one configuration's samples (the one
with the most), with its [min-max] and n; the ratios against the node's
ceilings come from :mod:`clusterbench.report.headline`. DISTURBED samples
are never in a figure: they are counted as left out.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Optional

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import verdict
from clusterbench.machine import peak as peaklib
from clusterbench.report import headline, referenceage, sessionwords
from clusterbench.report.identity import split_name
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
class Stat:
    """One headline figure: median [low-high] of n samples, or why not."""

    value: Optional[float]
    unit: str = ''
    low: Optional[float] = None
    high: Optional[float] = None
    n: int = 0
    state: str = ''
    note: str = ''
    left_out: int = 0

    @classmethod
    def of(cls, cell, note=''):
        if cell is None:
            return None
        values = cell.values
        return cls(
            cell.value,
            cell.benchmark.unit,
            min(values) if values else None,
            max(values) if values else None,
            len(values),
            cell.state,
            note or cell.benchmark.title,
            len(cell.disturbed),
        )

    def scaled(self, factor, unit, note=None):
        """The same samples times *factor* (a constant: the range scales too)."""
        if self.value is None or factor is None:
            return None

        def times(v):
            return None if v is None else v * factor

        return Stat(
            times(self.value),
            unit,
            times(self.low),
            times(self.high),
            self.n,
            self.state,
            self.note if note is None else note,
            self.left_out,
        )

    @property
    def spread(self):
        """(max - min) / median of two or more samples."""
        if self.n < 2 or not self.value:
            return None
        return (self.high - self.low) / abs(self.value)


def derived(value, unit, note):
    return None if value is None else Stat(value, unit, note=note)


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
    return Executive(rows=rows, baseline=chosen)


def _cells(data, configs, wanted):
    """Cells of *configs* whose benchmark *wanted* accepts."""
    for bench in data.benchmarks:
        if wanted(bench):
            for config in configs:
                cell = data.cell(config, bench)
                if cell is not None and (cell.values or cell.disturbed):
                    yield cell


def _pick(cells):
    """The cell a headline figure comes from: the most samples, then the
    higher median; a DISTURBED-only cell when there is nothing else."""
    cells = list(cells)
    measured = [c for c in cells if c.values]
    if measured:
        return max(measured, key=lambda c: (len(c.values), c.value))
    return cells[0] if cells else None


def _variable(name, param=None):
    def wanted(bench):
        if bench.variable != name:
            return False
        return param is None or all(bench.params.get(k) == v for k, v in param.items())

    return wanted


def _row(data, system, partition, configs, case_of, facts, sessions, references):
    row = Row(system, partition)
    row.environs = sorted({c.environ for c in configs})
    row.nodes = max((c.nodes for c in configs if c.nodes), default=None)
    _hardware(row, configs, facts)
    fig = row.figures
    ranks_of = _ranks_of(case_of)

    hpl_cell = _pick(_cells(data, configs, _variable('hpl')))
    hpl = Stat.of(hpl_cell)
    fig['hpl'] = hpl
    hpl_nodes = (hpl_cell.config.nodes if hpl_cell else None) or row.nodes
    peak_node = row.peak.per_node if row.peak else None
    peak_core = row.peak.per_core if row.peak else None
    if hpl is not None and hpl.value is not None:
        fig['hpl_pct_peak'] = hpl.scaled(
            headline.share(1.0 / (hpl_nodes or 1), peak_node),
            '% of peak',
            'HPL per node / peak per node',
        )
    dgemm_cell = _pick(_cells(data, configs, _variable('dgemm_star')))
    dgemm_note = 'HPCC StarDGEMM: per process, one core each'
    if dgemm_cell is None or not dgemm_cell.values:
        dgemm_cell = _pick(_cells(data, configs, _variable('dgemm_single'))) or (
            dgemm_cell
        )
        dgemm_note = 'HPCC SingleDGEMM: one process alone'
    dgemm = Stat.of(dgemm_cell, dgemm_note)
    fig['dgemm_core'] = dgemm
    if dgemm is not None and dgemm.value is not None:
        fig['dgemm_pct_core'] = dgemm.scaled(
            headline.share(1.0, peak_core), '% of core peak', "DGEMM / a core's peak"
        )
    if hpl and dgemm and hpl_cell is not None:
        ratio = headline.hpl_over_dgemm(hpl.value, dgemm.value, ranks_of(hpl_cell))
        fig['hpl_dgemm'] = derived(ratio, 'ratio', 'HPL / (DGEMM per core x ranks)')
    _stream(row, data, configs, ranks_of, peak_node)
    _mpi(row, data, configs, case_of)
    cg_cell = _pick(_cells(data, configs, _cg_preferred)) or _pick(
        _cells(data, configs, _cg_any)
    )
    fig['cg'] = Stat.of(cg_cell)
    row.cells = {'hpl': hpl_cell, 'dgemm_core': dgemm_cell, 'cg': cg_cell}
    _npb(row, data, configs)
    row.figures = {k: v for k, v in fig.items() if v is not None}
    _quality(row, data, configs, sessions)
    row.reference_age = referenceage.of_row(
        _reference_files(data, configs), references, system, partition
    )
    return row


def _ranks_of(case_of):
    def ranks(cell):
        case = case_of(cell.config.key, cell.benchmark.test) or {}
        value = case.get('num_tasks')
        return value if isinstance(value, int) and value > 0 else None

    return ranks


def _hardware(row, configs, facts):
    processor = next((c.processor for c in configs if c.processor), {})
    identity = facts.get('machine_identity') or {}
    if not isinstance(identity, dict):
        identity = {}
    row.cpu_kind = str(identity.get('cpu_kind') or processor.get('cpu_kind') or '')
    row.microarchitecture = (
        peaklib.microarchitecture(row.cpu_kind, processor.get('arch')) or ''
    )
    cpus, per_core = processor.get('num_cpus'), processor.get('num_cpus_per_core') or 1
    if isinstance(cpus, int) and cpus > 0:
        row.cores = cpus // per_core if isinstance(per_core, int) else cpus
    hwinfo = next((c.hwinfo for c in configs if c.hwinfo), {})
    node = next(iter(hwinfo.values()), {}) if hwinfo else {}
    memory = node.get('memory_gib')
    if isinstance(memory, (int, float)):
        row.memory_gib = float(memory)
    elif isinstance(identity.get('memory_bytes'), int):
        row.memory_gib = identity['memory_bytes'] / 2**30
    row.interconnect = _interconnect(node, facts)
    link = facts.get('link_peak') or {}
    if isinstance(link, dict) and _number(link.get('peak_mbs')):
        row.link_peak_mbs = float(link['peak_mbs'])
    row.peak, row.peak_note = _peak(row, identity, facts)


def _interconnect(node, facts):
    link = facts.get('link_peak') or {}
    declared = ''
    if isinstance(link, dict) and isinstance(link.get('peak_mbs'), (int, float)):
        declared = f', link peak {link["peak_mbs"] / 1000:.3g} GB/s declared'
    ib = node.get('infiniband')
    if ib and ib != 'absent':
        text = ib if isinstance(ib, str) else '; '.join(map(str, ib))
        return f'InfiniBand {text}{declared}'
    up = [n for n in node.get('network') or [] if ' up' in str(n)]
    if up:
        return '; '.join(str(n).replace(' speed absent', '') for n in up) + declared
    return ('unknown' + declared) if declared else 'unknown'


def _peak(row, identity, facts):
    declared = facts.get('peak_gflops_per_node')
    if isinstance(declared, (int, float)) and declared > 0 and row.cores:
        return peaklib.declared(declared, row.cores), 'declared'
    mhz, how = None, ''
    for key in ('max_mhz', 'base_mhz'):
        value = identity.get(key)
        if isinstance(value, (int, float, str)) and _number(value):
            mhz, how = float(value), key
            break
    conditions = facts.get('run_conditions') or {}
    if mhz is None and _number(conditions.get('mhz_before')):
        mhz, how = float(conditions['mhz_before']), 'clock read during the run'
    found = peaklib.computed(
        row.cpu_kind, row.cores, mhz, fallback_arch=row.microarchitecture or None
    )
    if found is None:
        return None, 'no clock or core count to compute it from'
    return found, f'computed ({found.source}; {how})'


def _number(value):
    try:
        return float(value) > 0
    except (TypeError, ValueError):
        return False


def _stream(row, data, configs, ranks_of, peak_node):
    for name, definition in (
        ('stream_triad', headline.STREAM_NODE),
        ('stream_star_triad', headline.STREAM_STAR),
        ('stream_single_triad', headline.STREAM_SINGLE),
    ):
        cell = _pick(_cells(data, configs, _variable(name)))
        if cell is None or not cell.values:
            continue
        stat = Stat.of(cell, definition)
        ranks = ranks_of(cell)
        nodes = cell.config.nodes or 1
        per_node = headline.stream_per_node(
            1.0, definition, (ranks or 0) / nodes if ranks else None
        )
        node = stat.scaled(per_node, 'GB/s', definition)
        if node is None:
            continue
        row.figures['stream_node'] = node
        if row.cores:
            row.figures['stream_core'] = node.scaled(1.0 / row.cores, 'GB/s')
        row.figures['bytes_per_flop'] = derived(
            headline.bytes_per_flop(node.value, peak_node),
            'B/flop',
            'STREAM triad per node / peak per node',
        )
        return
    # Only DISTURBED STREAM samples: say so in the row.
    cell = _pick(_cells(data, configs, _variable('stream_triad'))) or _pick(
        _cells(data, configs, _variable('stream_star_triad'))
    )
    if cell is not None:
        row.figures['stream_node'] = Stat.of(cell)


def _placement(bench, nodes):
    where = bench.params.get('placement')
    if where in ('intra', 'inter'):
        return where
    return 'intra' if nodes == 1 else 'inter'


def _mpi(row, data, configs, case_of):
    """Latency, bandwidth and n½ inside and between nodes: NetPIPE's or the
    PingPong curves' figures, else HPCC's PingPong."""
    for where in ('intra', 'inter'):
        single = [c for c in configs if (c.nodes == 1) == (where == 'intra')]

        def netpipe(variable, where=where):
            def wanted(bench):
                return (
                    bench.variable == variable
                    and bench.params.get('placement') == where
                    and bench.params.get('mode', 'pingpong') == 'pingpong'
                )

            return _pick(_cells(data, configs, wanted))

        lat = netpipe('latency_1B') or netpipe('latency_8B')
        bw = netpipe('bandwidth_peak')
        nhalf = netpipe('n_half')
        if lat is None and single:
            lat = _pick(_cells(data, single, _variable('pingpong_latency_min')))
        if bw is None and single:
            bw = _pick(_cells(data, single, _variable('pingpong_bandwidth_max')))
        lat_stat = Stat.of(lat)
        bw_stat = Stat.of(bw)
        if bw_stat is not None and bw_stat.unit == 'MB/s':
            bw_stat = bw_stat.scaled(1e-3, 'GB/s')
        row.figures[f'lat_{where}'] = lat_stat
        row.figures[f'bw_{where}'] = bw_stat
        row.figures[f'nhalf_{where}'] = Stat.of(nhalf)
        if where == 'inter' and bw is not None and bw_stat is not None:
            case = case_of(bw.config.key, bw.benchmark.test) or {}
            link = case.get('link_peak') or {}
            peak = link.get('peak_mbs') if isinstance(link, dict) else None
            # The partition's declared link (another check may carry it).
            peak = peak or row.link_peak_mbs
            if isinstance(peak, (int, float)) and peak > 0:
                row.figures['bw_link_pct'] = bw_stat.scaled(
                    headline.share(1.0, peak / 1000.0),
                    '% of link peak',
                    f'bandwidth / declared link peak {peak / 1000:.3g} GB/s',
                )


def _cg_preferred(bench):
    return _cg_any(bench) and bench.params.get('ranks_per_node') == 'all'


def _cg_any(bench):
    return bench.base.startswith('CGSolver') and bench.variable == 'gflops'


def npb_cells(data, configs):
    """{benchmark name: cell} of NPB's Mop/s figures, one cell each."""
    found = defaultdict(list)
    for bench in data.benchmarks:
        if bench.application != 'NPB':
            continue
        name = bench.params.get('benchmark') or split_name(bench.test)[0]
        for config in configs:
            cell = data.cell(config, bench)
            if cell is not None and cell.values:
                found[str(name).lower()].append(cell)
    return {name: _pick(cells) for name, cells in found.items()}


def _npb(row, data, configs):
    cells = row.npb = npb_cells(data, configs)
    mean = headline.geomean([c.value for c in cells.values()])
    if mean is not None:
        stat = Stat(
            mean,
            'Mop/s',
            note=f'geometric mean of {len(cells)} NPB benchmark(s): '
            + ', '.join(sorted(cells)),
        )
        row.figures['npb'] = stat


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
            if cell.reference is None and cell.state not in _UNJUDGED:
                row.band_judged += 1
    row.counts = dict(counts)
    spreads = [
        (stat.spread, key)
        for key, stat in row.figures.items()
        if key in SPREAD_OF and stat.spread is not None
    ]
    if spreads:
        row.spread, key = max(spreads)
        row.spread_of = SPREAD_OF[key]


#: Measured figures whose spread between sessions the row names.
SPREAD_OF = {
    'hpl': 'HPL',
    'dgemm_core': 'DGEMM',
    'stream_node': 'STREAM',
    'cg': 'CG solver',
    'lat_intra': 'latency',
    'bw_intra': 'bandwidth',
    'lat_inter': 'latency',
    'bw_inter': 'bandwidth',
}


def _reference_files(data, configs):
    """The reference files the row's judged cells were judged against."""
    return {
        cell.reference_file
        for bench in data.benchmarks
        for config in configs
        for cell in [data.cell(config, bench)]
        if cell is not None and cell.reference is not None and cell.reference_file
    }
