"""Node acceptance: rank the nodes of a partition by their battery figures.

Input: ReFrame run reports of a battery run on every node at once (each test
case ran on one node, e.g. with ``--distribute``). For each node and figure
(``Test:variable``, median over repeated samples), the robust z-score against
the same figure of the *other* nodes (median and MAD of the peers) says how
far the node is from the population; a node is FLAGGED when a figure lies
beyond ``z_max`` on the bad side (below for rates, above for times), or when
ReFrame judged the figure outside its reference. A node whose battery failed
(e.g. the node was lost) is FAILED with the reason; a node that was expected
but has no result at all is missing (the verdict kinds are
:class:`clusterbench.judging.verdict.Kind`). Each condemned node is named with the
figure that condemned it.
"""

from dataclasses import dataclass, field

from clusterbench.acceptance import robust, runcases
from clusterbench.judging import stats, view
from clusterbench.judging.verdict import FAILED, FLAGGED, MISSING, PASS, Kind


@dataclass
class Figure:
    test: str
    name: str
    unit: str
    values: list
    reference: tuple = None  # (ref, lower, upper) when the figure had one
    outside_reference: bool = False
    z: float = None
    peers_median: float = None

    @property
    def value(self):
        return stats.median(self.values)

    @property
    def key(self):
        return f'{self.test}:{self.name}'


@dataclass
class Node:
    name: str
    figures: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    verdict: Kind = PASS
    reasons: list = field(default_factory=list)


def collect(cases, figures=None):
    """``{node: Node}`` from the test cases of one-node runs.

    *figures*: only these (``Test:variable`` or ``variable``) are kept;
    default: those the check names in ``acceptance_figures``, else every
    figure with a direction (a rate or a time).
    """
    nodes = {}
    for case in cases:
        where = runcases.nodes_of(case)
        if len(where) != 1 or case.get('result') == 'skip':
            continue
        node = nodes.setdefault(where[0], Node(where[0]))
        if runcases.failed(case):
            node.failures.append(runcases.failure(case))
            continue
        test = runcases.base_name(case)
        wanted = figures or case.get('acceptance_figures') or None
        for name, (value, ref, lower, upper, unit, result) in runcases.figures(
            case
        ).items():
            key = f'{test}:{name}'
            if wanted and key not in wanted and name not in wanted:
                continue
            if not robust.direction_of(unit):
                continue
            if not isinstance(value, (int, float)):
                continue
            fig = node.figures.setdefault(key, Figure(test, name, unit, []))
            fig.values.append(float(value))
            if lower is not None or upper is not None:
                fig.reference = (ref, lower, upper)
                fig.outside_reference = fig.outside_reference or result == 'fail'
    return nodes


def rank(nodes, z_max=robust.Z_MAX, min_spread=robust.MIN_SPREAD, expected=()):
    """Judge every node against its peers and references; return them sorted
    worst first (failed, flagged by |z|, then passing)."""
    for name in expected:
        if name not in nodes:
            node = nodes[name] = Node(name)
            node.verdict = MISSING
            node.reasons.append('no battery result at all (node down or not run?)')
    keys = sorted({k for n in nodes.values() for k in n.figures})
    for key in keys:
        for node in nodes.values():
            fig = node.figures.get(key)
            if fig is None:
                continue
            peers = [
                other.figures[key].value
                for other in nodes.values()
                if other is not node and key in other.figures
            ]
            fig.z, fig.peers_median, _ = stats.robust_z(fig.value, peers, min_spread)
    for node in nodes.values():
        if node.verdict == MISSING:
            continue
        if node.failures:
            node.verdict = FAILED
            node.reasons += node.failures
        bad = []
        for fig in node.figures.values():
            sign = robust.direction_of(fig.unit)
            if sign and robust.beyond(fig.z, sign, z_max):
                bad.append(
                    (
                        abs(fig.z),
                        f'{fig.key} {fig.value:.4g} {fig.unit} is '
                        f"{robust.relative(fig.value, fig.peers_median)} its peers' "
                        f'median '
                        f'{fig.peers_median:.4g} (robust z {fig.z:+.1f}, limit '
                        f'{z_max:g})',
                    )
                )
            if fig.outside_reference:
                ref, lower, upper = fig.reference
                bad.append(
                    (
                        float('inf'),
                        f'{fig.key} {fig.value:.4g} {fig.unit} outside its '
                        f'reference {ref:.4g} ({view.band(lower, upper)})',
                    )
                )
        if bad:
            if node.verdict == PASS:
                node.verdict = FLAGGED
            node.reasons += [text for _, text in sorted(bad, reverse=True)]
    order = {FAILED: 0, MISSING: 0, FLAGGED: 1, PASS: 2}
    return sorted(
        nodes.values(),
        key=lambda n: (order[n.verdict], -_worst_z(n), n.name),
    )


def _worst_z(node):
    zs = [
        -robust.direction_of(f.unit) * f.z
        for f in node.figures.values()
        if f.z is not None and robust.direction_of(f.unit)
    ]
    return max(zs, default=0.0)


def _labels(keys):
    """Short column labels: the variable, or Test:variable when ambiguous."""
    names = [k.split(':', 1)[1] for k in keys]
    return {k: (n if names.count(n) == 1 else k) for k, n in zip(keys, names)}


def table(ranked):
    """The per-node table: one row per node, its figures, verdict and why."""
    keys = sorted({k for n in ranked for k in n.figures})
    labels = _labels(keys)
    units = {}
    for n in ranked:
        for k, f in n.figures.items():
            units[k] = f.unit
    header = ['node'] + [f'{labels[k]} ({units[k]})' for k in keys] + ['verdict']
    rows = [header]
    for node in ranked:
        row = [node.name]
        for k in keys:
            fig = node.figures.get(k)
            if fig is None:
                row.append('-')
            elif fig.z is None:
                row.append(f'{fig.value:.4g}')
            else:
                row.append(f'{fig.value:.4g} ({fig.z:+.1f})')
        row.append(node.verdict)
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ['  '.join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.append('')
    lines.append('(robust z-score against the median of the other nodes in brackets)')
    for node in ranked:
        for reason in node.reasons:
            lines.append(f'{node.name}: {node.verdict}: {reason}')
    flagged = [n.name for n in ranked if n.verdict != PASS]
    lines.append(
        f'{len(ranked)} node(s): '
        + (
            f'{len(flagged)} not accepted: {", ".join(flagged)}'
            if flagged
            else 'all pass'
        )
    )
    return '\n'.join(lines)


def as_json(ranked):
    return [
        {
            'node': n.name,
            'verdict': n.verdict,
            'reasons': n.reasons,
            'figures': {
                k: {
                    'value': f.value,
                    'unit': f.unit,
                    'samples': f.values,
                    'z': f.z,
                    'peers_median': f.peers_median,
                    'outside_reference': f.outside_reference,
                }
                for k, f in sorted(n.figures.items())
            },
        }
        for n in ranked
    ]
