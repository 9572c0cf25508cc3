"""The executive page shown: its figures as text for the HTML table, and as
rows of plain values for ``executive.csv``."""

from clusterbench.judging import verdict
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


#: (figure key, CSV column) of the headline figures, in the page's order.
FIGURES = (
    ('hpl', 'hpl_gflops'),
    ('hpl_pct_peak', 'hpl_share_of_peak'),
    ('hpl_dgemm', 'hpl_over_dgemm'),
    ('dgemm_core', 'dgemm_per_core_gflops'),
    ('dgemm_pct_core', 'dgemm_share_of_core_peak'),
    ('stream_node', 'stream_triad_per_node_gbs'),
    ('stream_core', 'stream_triad_per_core_gbs'),
    ('bytes_per_flop', 'bytes_per_flop'),
    ('lat_intra', 'latency_intra_us'),
    ('bw_intra', 'bandwidth_intra_gbs'),
    ('nhalf_intra', 'n_half_intra_bytes'),
    ('lat_inter', 'latency_inter_us'),
    ('bw_inter', 'bandwidth_inter_gbs'),
    ('bw_link_pct', 'bandwidth_inter_share_of_link_peak'),
    ('nhalf_inter', 'n_half_inter_bytes'),
    ('cg', 'cg_solver_gflops'),
    ('npb', 'npb_geomean_mops'),
)


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
    for _, column in FIGURES:
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
        for key, _ in FIGURES:
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
