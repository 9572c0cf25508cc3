"""The figure columns of the executive page: the machine's (DGEMM per core,
MPI inside and between nodes), then one per application family, as the
figures' declarations name them (``Figure.headline``).

A family's column shows the median of the cell with the most samples among
its figures. A few families say more, with the ratios of
:mod:`clusterbench.report.headline` (HPL against the peak and DGEMM, STREAM
per node by its stated definition, NPB's geometric mean): that is what
:data:`RICHER` holds, by family. A new figure declared with a headline gets
its family's column without a line here.
"""

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from clusterbench.core.figures import Better
from clusterbench.parsers.catalog import CATALOG
from clusterbench.report import headline
from clusterbench.report.execstat import Stat, cells, derived, pick, variable
from clusterbench.report.identity import split_name


@dataclass(frozen=True)
class Line:
    """One figure of a column: the row's key, its ``executive.csv`` column,
    the words around it, the name its spread goes by ('' for none) and its
    label in the chart against the baseline ('' for none)."""

    key: str
    csv: str
    before: str = ''
    after: str = ''
    spread: str = ''
    compared: str = ''


def _no_note(row):
    return ''


@dataclass(frozen=True)
class Column:
    title: str
    lines: tuple
    #: The row's figures of this column: ``build(row, context)``.
    build: Callable
    #: The words under the figures, a function of the row.
    note: Callable = _no_note

    def hint(self, row):
        """The first figure's note (its definition), shown on hover."""
        stat = row.get(self.lines[0].key)
        return stat.note if stat is not None else ''

    def measured(self, row):
        return any(row.get(line.key) is not None for line in self.lines)


@dataclass
class Context:
    """What the columns build from: the inputs, the row's configurations,
    (config key, test) -> the latest case, and the node's peak."""

    data: object
    configs: list
    case_of: Callable
    peak_node: object = None
    peak_core: object = None

    def ranks(self, cell):
        case = self.case_of(cell.config.key, cell.benchmark.test) or {}
        value = case.get('num_tasks')
        return value if isinstance(value, int) and value > 0 else None


# ------------------------------------------------------ the machine's columns


def _dgemm(row, ctx):
    cell = pick(cells(ctx.data, ctx.configs, variable('dgemm_star')))
    note = 'HPCC StarDGEMM: per process, one core each'
    if cell is None or not cell.values:
        cell = pick(cells(ctx.data, ctx.configs, variable('dgemm_single'))) or cell
        note = 'HPCC SingleDGEMM: one process alone'
    dgemm = Stat.of(cell, note)
    row.figures['dgemm_core'] = dgemm
    row.cells['dgemm_core'] = cell
    if dgemm is not None and dgemm.value is not None:
        row.figures['dgemm_pct_core'] = dgemm.scaled(
            headline.share(1.0, ctx.peak_core),
            '% of core peak',
            "DGEMM / a core's peak",
        )


def _mpi(where):
    """Latency, bandwidth and n½ at *where* ('intra', 'inter'): NetPIPE's or
    the PingPong curves' figures, else HPCC's PingPong."""

    def build(row, ctx):
        single = [c for c in ctx.configs if (c.nodes == 1) == (where == 'intra')]

        def netpipe(name):
            def wanted(bench):
                return (
                    bench.variable == name
                    and bench.params.get('placement') == where
                    and bench.params.get('mode', 'pingpong') == 'pingpong'
                )

            return pick(cells(ctx.data, ctx.configs, wanted))

        lat = netpipe('latency_1B') or netpipe('latency_8B')
        bw = netpipe('bandwidth_peak')
        if lat is None and single:
            lat = pick(cells(ctx.data, single, variable('pingpong_latency_min')))
        if bw is None and single:
            bw = pick(cells(ctx.data, single, variable('pingpong_bandwidth_max')))
        bw_stat = Stat.of(bw)
        if bw_stat is not None and bw_stat.unit == 'MB/s':
            bw_stat = bw_stat.scaled(1e-3, 'GB/s')
        row.figures[f'lat_{where}'] = Stat.of(lat)
        row.figures[f'bw_{where}'] = bw_stat
        row.figures[f'nhalf_{where}'] = Stat.of(netpipe('n_half'))
        if where == 'inter' and bw is not None and bw_stat is not None:
            case = ctx.case_of(bw.config.key, bw.benchmark.test) or {}
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

    return build


def _mpi_lines(where, words):
    return (
        Line(f'lat_{where}', f'latency_{where}_us', spread='latency',
             compared=f'latency {words}'),
        Line(f'bw_{where}', f'bandwidth_{where}_gbs', spread='bandwidth',
             compared=f'bandwidth {words}'),
        *(
            (Line('bw_link_pct', 'bandwidth_inter_share_of_link_peak',
                  after=' of link peak'),)
            if where == 'inter' else ()
        ),
        Line(f'nhalf_{where}', f'n_half_{where}_bytes', before='n½ '),
    )  # fmt: skip


MACHINE = (
    Column(
        'DGEMM / core',
        (
            Line(
                'dgemm_core',
                'dgemm_per_core_gflops',
                spread='DGEMM',
                compared='DGEMM/core',
            ),
            Line(
                'dgemm_pct_core', 'dgemm_share_of_core_peak', after=" of a core's peak"
            ),
        ),  # fmt: skip
        _dgemm,
    ),
    Column('MPI inside a node', _mpi_lines('intra', 'in node'), _mpi('intra')),
    Column('MPI between nodes', _mpi_lines('inter', 'between'), _mpi('inter')),
)


# ------------------------------------------------- families that say more


def _hpl(row, ctx):
    cell = pick(cells(ctx.data, ctx.configs, variable('hpl')))
    hpl = row.figures['hpl'] = Stat.of(cell)
    row.cells['hpl'] = cell
    if hpl is None or hpl.value is None:
        return
    nodes = (cell.config.nodes if cell else None) or row.nodes
    row.figures['hpl_pct_peak'] = hpl.scaled(
        headline.share(1.0 / (nodes or 1), ctx.peak_node),
        '% of peak',
        'HPL per node / peak per node',
    )
    dgemm = row.get('dgemm_core')
    if dgemm is not None and cell is not None:
        ratio = headline.hpl_over_dgemm(hpl.value, dgemm.value, ctx.ranks(cell))
        row.figures['hpl_dgemm'] = derived(
            ratio, 'ratio', 'HPL / (DGEMM per core x ranks)'
        )


def _stream(row, ctx):
    for name, definition in (
        ('stream_triad', headline.STREAM_NODE),
        ('stream_star_triad', headline.STREAM_STAR),
        ('stream_single_triad', headline.STREAM_SINGLE),
    ):
        cell = pick(cells(ctx.data, ctx.configs, variable(name)))
        if cell is None or not cell.values:
            continue
        ranks = ctx.ranks(cell)
        nodes = cell.config.nodes or 1
        per_node = headline.stream_per_node(
            1.0, definition, (ranks or 0) / nodes if ranks else None
        )
        node = Stat.of(cell, definition).scaled(per_node, 'GB/s', definition)
        if node is None:
            continue
        row.figures['stream_node'] = node
        if row.cores:
            row.figures['stream_core'] = node.scaled(1.0 / row.cores, 'GB/s')
        row.figures['bytes_per_flop'] = derived(
            headline.bytes_per_flop(node.value, ctx.peak_node),
            'B/flop',
            'STREAM triad per node / peak per node',
        )
        return
    # Only DISTURBED STREAM samples: say so in the row.
    cell = pick(cells(ctx.data, ctx.configs, variable('stream_triad'))) or pick(
        cells(ctx.data, ctx.configs, variable('stream_star_triad'))
    )
    if cell is not None:
        row.figures['stream_node'] = Stat.of(cell)


def _stream_note(row):
    stat = row.get('stream_node')
    return headline.SHORT.get(stat.note, '') if stat else 'not measured'


def _cg_any(bench):
    return bench.base.startswith('CGSolver') and bench.variable == 'gflops'


def _cg(row, ctx):
    whole_node = pick(
        cells(ctx.data, ctx.configs,
              lambda b: _cg_any(b) and b.params.get('ranks_per_node') == 'all')
    )  # fmt: skip
    cell = whole_node or pick(cells(ctx.data, ctx.configs, _cg_any))
    row.figures['cg'] = Stat.of(cell)
    row.cells['cg'] = cell


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
    return {name: pick(cells) for name, cells in found.items()}


def _npb(row, ctx):
    found = row.npb = npb_cells(ctx.data, ctx.configs)
    mean = headline.geomean([c.value for c in found.values()])
    if mean is not None:
        row.figures['npb'] = Stat(
            mean,
            'Mop/s',
            note=f'geometric mean of {len(found)} NPB benchmark(s): '
            + ', '.join(sorted(found)),
            better=Better.HIGHER,
        )


def _npb_note(row):
    return f'{len(row.npb)} benchmarks' if row.npb else ''


#: The families whose column says more than their median, by the family
#: their declarations name.
RICHER = {
    'HPL': Column(
        'HPL',
        (
            Line('hpl', 'hpl_gflops', spread='HPL', compared='HPL'),
            Line('hpl_pct_peak', 'hpl_share_of_peak', after=' of peak'),
            Line('hpl_dgemm', 'hpl_over_dgemm', before='HPL/DGEMM '),
        ),
        _hpl,
    ),
    'STREAM': Column(
        'STREAM triad',
        (
            Line(
                'stream_node',
                'stream_triad_per_node_gbs',
                after=' / node',
                spread='STREAM',
                compared='STREAM/node',
            ),
            Line('stream_core', 'stream_triad_per_core_gbs', after=' / core'),
            Line('bytes_per_flop', 'bytes_per_flop'),
        ),  # fmt: skip
        _stream,
        _stream_note,
    ),
    'CG solver': Column(
        'CG solver',
        (Line('cg', 'cg_solver_gflops', spread='CG solver', compared='CG solver'),),
        _cg,
    ),
    'NPB': Column(
        'NPB',
        (Line('npb', 'npb_geomean_mops', compared='NPB geomean'),),
        _npb,
        _npb_note,
    ),
}


# ----------------------------------------------------- any other family


def _plain(family, key):
    def build(row, ctx):
        def wanted(bench):
            return bench.application == family

        row.figures[key] = Stat.of(pick(cells(ctx.data, ctx.configs, wanted)))

    return build


def family_column(family):
    """The column of an application *family*: its richer one, else its median."""
    if family in RICHER:
        return RICHER[family]
    key = 'headline_' + re.sub(r'[^a-z0-9]+', '_', family.lower()).strip('_')
    line = Line(key, key, spread=family, compared=family)
    return Column(family, (line,), _plain(family, key))


def columns():
    """Every figure column: the machine's, then each declared family's."""
    return (*MACHINE, *(family_column(f) for f in CATALOG.headlines()))
