"""Fabric acceptance: judge every link from the fabric program's N x N matrices.

A link (a pair of nodes) is FLAGGED when one of its figures is outside the
population of the other links (robust z-score against their median and MAD;
needs three nodes or more, else there are no other links) or outside the
link specification (the partition's ``extras.acceptance``, kept in the run
report by the fabric check): bandwidth in either direction below
``link_bandwidth_min_mbs``, median latency above ``link_latency_max_us``, a
share of stalled round trips (a lost packet costs a TCP retransmission
timeout) above ``link_stall_max``, message rate below ``link_msgrate_min_mmps``.

With three nodes or more, a node all of whose links are flagged while links
between other nodes pass is named as the culprit (its port, cable or NIC).
"""

from dataclasses import dataclass, field

from clusterbench.acceptance import outputs, robust, runcases
from clusterbench.judging import stats
from clusterbench.judging.verdict import FLAGGED, PASS, Kind

#: Population figures of a link: name -> (keys in the link dict, direction, unit).
POPULATION = {
    'latency': (('latency_us',), -1, 'us'),
    'bandwidth': (('bandwidth_ab_mbs', 'bandwidth_ba_mbs'), 1, 'MB/s'),
    'msgrate': (('msgrate_ab_mmps', 'msgrate_ba_mmps'), 1, 'Mmsg/s'),
}

#: The stall share every healthy link keeps below, unless the spec says other.
DEFAULT_STALL_MAX = 0.01


@dataclass
class Link:
    a: str
    b: str
    figures: dict
    verdict: Kind = PASS
    reasons: list = field(default_factory=list)
    #: What is wrong, by figure: 'latency', 'bandwidth', 'msgrate', 'stalls'.
    flags: set = field(default_factory=set)

    def flag(self, family, text):
        self.flags.add(family)
        self.reasons.append(text)

    @property
    def name(self):
        return f'{self.a}<->{self.b}'


@dataclass
class FabricVerdict:
    nodes: list
    links: list
    culprits: dict  # node -> why
    result: dict
    test: str = ''
    environ: str = ''


def fabric_results(cases):
    """``(test, environ, result, spec)`` of every fabric case of the reports."""
    found = []
    for case in cases:
        result = case.get('fabric_result')
        if result and result.get('nodes'):
            found.append(
                (
                    runcases.base_name(case),
                    case.get('environ', ''),
                    result,
                    case.get('link_spec') or {},
                )
            )
    return found


def judge(result, spec=None, z_max=robust.Z_MAX, min_spread=robust.MIN_SPREAD):
    """Judge the links of one fabric result; return a :class:`FabricVerdict`."""
    spec = dict(spec or {})
    spec.setdefault('link_stall_max', DEFAULT_STALL_MAX)
    links = [Link(f['a'], f['b'], f) for f in (dict(x) for x in outputs.links(result))]
    # Population: each figure of a link against the same figure of the others.
    for family, (keys, sign, unit) in POPULATION.items():
        for link in links:
            peers = [
                other.figures[k]
                for other in links
                if other is not link
                for k in keys
                if other.figures[k] is not None
            ]
            if not peers:
                continue
            for key in keys:
                value = link.figures[key]
                if value is None:
                    continue
                z, centre, _ = stats.robust_z(value, peers, min_spread)
                link.figures[f'{key}_z'] = z
                if robust.beyond(z, sign, z_max):
                    link.flag(
                        family,
                        f'{_label(key, link)} {value:.4g} {unit} is '
                        f"{robust.relative(value, centre)} the other links' "
                        f'median {centre:.4g} (robust z {z:+.1f}, limit {z_max:g})',
                    )
    # Specification.
    for link in links:
        f = link.figures
        _both_ways_at_least(link, 'bandwidth', spec.get('link_bandwidth_min_mbs'))
        ceiling = spec.get('link_latency_max_us')
        if (
            ceiling is not None
            and f['latency_us'] is not None
            and f['latency_us'] > ceiling
        ):
            link.flag(
                'latency',
                f'latency {f["latency_us"]:.4g} us above the specification '
                f'{ceiling:g} us',
            )
        stall_max = spec['link_stall_max']
        if f['stall_fraction'] is not None and f['stall_fraction'] > stall_max:
            link.flag(
                'stalls',
                f'stalls: {f["stalls"]} of {f["round_trips"]} round trips '
                f'({f["stall_fraction"]:.1%}) took longer than the stall threshold '
                f'(lost packets: TCP retransmissions), specification '
                f'{stall_max:.1%}',
            )
        _both_ways_at_least(link, 'msgrate', spec.get('link_msgrate_min_mmps'))
    # Nodes: a node's links against the other nodes' links (see _node_outliers).
    outliers = _node_outliers(result['nodes'], links, z_max, min_spread)
    for node, (family, why) in outliers.items():
        for link in links:
            if node in (link.a, link.b):
                link.flag(family, f'its end {node}: {why}')
    for link in links:
        if link.reasons:
            link.verdict = FLAGGED
    culprits = _culprits(result['nodes'], links)
    for node, (_, why) in outliers.items():
        culprits[node] = why + '; its port, cable or NIC'
    return FabricVerdict(result['nodes'], links, culprits, result)


def _node_outliers(nodes, links, z_max, min_spread):
    """Nodes whose links, taken together, are outside the other nodes' links.

    Each node's figure is the median over all its links (both directions),
    judged by robust z-score against the other nodes'. A bad node spoils one
    link of every other node but all of its own, so this finds it where the
    per-link population cannot (with 4 nodes, half of the links are its).
    Needs three nodes or more.
    """
    if len(nodes) < 3:
        return {}
    found = {}
    for family, (keys, sign, unit) in POPULATION.items():
        per_node = {}
        for node in nodes:
            values = [
                lk.figures[k]
                for lk in links
                if node in (lk.a, lk.b)
                for k in keys
                if lk.figures[k] is not None
            ]
            if values:
                per_node[node] = stats.median(values)
        for node, value in per_node.items():
            peers = [v for other, v in per_node.items() if other != node]
            z, centre, _ = stats.robust_z(value, peers, min_spread)
            if robust.beyond(z, sign, z_max) and node not in found:
                found[node] = (
                    family,
                    f'the median {family} of its links, {value:.4g} {unit}, is '
                    f'{robust.relative(value, centre)} the other '
                    f"nodes' median {centre:.4g} (robust z {z:+.1f}, limit "
                    f'{z_max:g})',
                )
    return found


#: A link figure measured each way: its keys and its unit.
_EACH_WAY = {
    'bandwidth': (('bandwidth_ab_mbs', 'bandwidth_ba_mbs'), 'MB/s'),
    'msgrate': (('msgrate_ab_mmps', 'msgrate_ba_mmps'), 'Mmsg/s'),
}


def _both_ways_at_least(link, family, floor):
    """Flags *link* for each direction whose *family* figure is below *floor*."""
    keys, unit = _EACH_WAY[family]
    for key in keys:
        value = link.figures[key]
        if floor is not None and value is not None and value < floor:
            link.flag(
                family,
                f'{_label(key, link)} {value:.4g} {unit} below the '
                f'specification {floor:g} {unit}',
            )


def _label(key, link):
    if key.endswith('_ab_mbs') or key.endswith('_ab_mmps'):
        return f'{key.split("_")[0]} {link.a}->{link.b}'
    if key.endswith('_ba_mbs') or key.endswith('_ba_mmps'):
        return f'{key.split("_")[0]} {link.b}->{link.a}'
    return key.split('_')[0]


def _culprits(nodes, links):
    """Nodes all of whose links are flagged for one figure (bandwidth, say)
    while some link between other nodes is not: the node's end is at fault."""
    if len(nodes) < 3:
        return {}
    out = {}
    for node in nodes:
        mine = [lk for lk in links if node in (lk.a, lk.b)]
        others = [lk for lk in links if node not in (lk.a, lk.b)]
        families = sorted(
            family
            for family in ('latency', 'bandwidth', 'msgrate', 'stalls')
            if mine
            and all(family in lk.flags for lk in mine)
            and any(family not in lk.flags for lk in others)
        )
        if families:
            out[node] = (
                f'all {len(mine)} of its links flagged for {" and ".join(families)} '
                f'while links between other nodes are not: its port, cable or NIC'
            )
    return out


def _fmt(value, spec='.4g'):
    return '-' if value is None else format(value, spec)


def matrices(result):
    """The N x N matrices as text: median latency and bandwidth."""
    names = result['nodes']
    width = max(8, *(len(n) for n in names)) + 2
    out = []
    for title, key, spec in (
        ('latency, median (us)', 'latency_p50_us', '.2f'),
        ('bandwidth (MB/s), row -> column', 'bandwidth_mbs', '.1f'),
        ('message rate (Mmsg/s), row -> column', 'msgrate_mmps', '.4f'),
    ):
        out.append(title)
        out.append(''.rjust(width) + ''.join(n.rjust(width) for n in names))
        for i, row in enumerate(names):
            cells = [
                '-' if i == j else _fmt(result[key][i][j], spec)
                for j in range(len(names))
            ]
            out.append(row.rjust(width) + ''.join(c.rjust(width) for c in cells))
        out.append('')
    return out


def table(verdict):
    """Matrices, the per-link table, and the culprits, as text."""
    lines = [
        f'{verdict.test} [{verdict.environ}]: {len(verdict.nodes)} nodes, '
        f'{verdict.result.get("rounds")} round(s), '
        f'{verdict.result.get("wall_s", 0):.2f} s'
        if verdict.test
        else f'{len(verdict.nodes)} nodes',
        '',
    ]
    lines += matrices(verdict.result)
    header = [
        'link',
        'latency us',
        'p99 us',
        'stalls',
        'bw a->b MB/s',
        'bw b->a MB/s',
        'msgrate a->b',
        'msgrate b->a',
        'verdict',
    ]
    rows = [header]
    for link in verdict.links:
        f = link.figures
        rows.append(
            [
                link.name,
                _fmt(f['latency_us']),
                _fmt(f['latency_p99_us']),
                f'{f["stalls"]}/{f["round_trips"]}',
                _fmt(f['bandwidth_ab_mbs']),
                _fmt(f['bandwidth_ba_mbs']),
                _fmt(f['msgrate_ab_mmps']),
                _fmt(f['msgrate_ba_mmps']),
                link.verdict,
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines += ['  '.join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.append('')
    for link in verdict.links:
        for reason in link.reasons:
            lines.append(f'{link.name}: {link.verdict}: {reason}')
    for node, why in sorted(verdict.culprits.items()):
        lines.append(f'culprit {node}: {why}')
    flagged = [lk.name for lk in verdict.links if lk.verdict != PASS]
    lines.append(
        f'{len(verdict.links)} link(s): '
        + (f'{len(flagged)} flagged: {", ".join(flagged)}' if flagged else 'all pass')
    )
    return '\n'.join(lines)


def as_json(verdict):
    return {
        'test': verdict.test,
        'environ': verdict.environ,
        'nodes': verdict.nodes,
        'links': [
            {
                'link': lk.name,
                'verdict': lk.verdict,
                'flags': sorted(lk.flags),
                'reasons': lk.reasons,
                'figures': lk.figures,
            }
            for lk in verdict.links
        ],
        'culprits': verdict.culprits,
    }
