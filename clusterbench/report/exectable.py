"""The executive page shown: its figures as text for the HTML table, and as
rows of plain values for ``executive.csv``."""

from clusterbench.judging import verdict
from clusterbench.report import execcolumns
from clusterbench.report.executive import SEVERITY

# ----------------------------------------------------------------- showing

#: Units shown as a percentage of a ceiling.
SHARES = ('% of peak', '% of core peak', '% of link peak')


def text(stat, digits=4):
    """'62.4 GFlop/s [60.1-63.0] n=3', '79.7 %', or why there is no figure."""
    if stat is None:
        return '—'
    if stat.value is None:
        return f'{verdict.DISTURBED} only ({stat.left_out} left out)'
    if stat.unit in SHARES:
        return f'{stat.value * 100:.1f} %'
    if stat.unit in ('ratio', 'B/flop'):
        return f'{stat.value:.3g}' + (' B/flop' if stat.unit == 'B/flop' else '')
    if stat.unit == 'B':
        return _bytes(stat.value) + (f' n={stat.n}' if stat.n else '')
    out = f'{stat.value:.{digits}g} {stat.unit}'
    if stat.n > 1 and stat.low is not None and stat.high is not None:
        out += f' [{stat.low:.{digits}g}–{stat.high:.{digits}g}]'
    if stat.n:
        out += f' n={stat.n}'
    return out


def _bytes(value):
    for unit, scale in (('MiB', 2**20), ('KiB', 2**10)):
        if value >= scale:
            return f'{value / scale:.3g} {unit}'
    return f'{value:.3g} B'


def figures():
    """(figure key, CSV column) of every figure column, declared families
    included (a column for each, measured or not: one header for all)."""
    return [(line.key, line.csv) for c in execcolumns.columns() for line in c.lines]


def csv_rows(page):
    """The executive table as rows of plain values (the first is the header)."""
    header = [
        'system',
        'partition',
        'verdict',
        'environments',
        'nodes',
        'cores_per_node',
        'cpu_kind',
        'microarchitecture',
        'memory_gib',
        'interconnect',
        'peak_gflops_per_node',
        'peak_how',
    ]
    for _, column in figures():
        header += [column, f'{column}_min', f'{column}_max', f'{column}_n']
    header += [
        'stream_definition',
        'sessions',
        'disturbed_sessions_left_out',
        'disturbed_samples_left_out',
        'spread_between_sessions',
        'spread_of',
        'figures_judged',
        *(f'verdict_{s}'.replace(' ', '_') for s in SEVERITY),
        'reference_age',
    ]
    rows = [header]
    for row in page.rows:
        peak = row.peak
        line = [
            row.system,
            row.partition,
            row.verdict,
            ' '.join(row.environs),
            row.nodes,
            row.cores,
            row.cpu_kind,
            row.microarchitecture,
            row.memory_gib,
            row.interconnect,
            peak.per_node if peak else None,
            row.peak_note,
        ]
        for key, _ in figures():
            stat = row.get(key)
            if stat is None:
                line += [None, None, None, None]
            else:
                line += [stat.value, stat.low, stat.high, stat.n or None]
        stream = row.get('stream_node')
        line += [
            stream.note if stream else None,
            row.sessions,
            row.disturbed_sessions,
            row.disturbed_samples,
            row.spread,
            row.spread_of or None,
            row.judged,
            *(row.counts.get(s, 0) for s in SEVERITY),
            row.reference_age,
        ]
        rows.append(line)
    return rows
