"""The acceptance section: each node's figures against its peers', and each
link's against the other links' (fabric matrices and pairwise figures)."""

import statistics
from collections import defaultdict

from clusterbench.core.figures import Better
from clusterbench.judging import verdict, vocabulary
from clusterbench.report.identity import (
    PLACEMENT,
    name_without,
    scaling_title,
    split_name,
)
from clusterbench.report.model import Acceptance, NodeGroup, PairMatrix


def build(benchmarks, node_cases, fabric_cases, pair_samples):
    """The acceptance section: nodes against their peers, links against theirs."""
    acc = Acceptance()
    wanted = {(name_without(b.test, PLACEMENT), b.variable): b for b in benchmarks}
    kinds = defaultdict(set)
    for system, part, kind in node_cases:
        kinds[(system, part)].add(kind)
    for (system, part, kind), cases in sorted(node_cases.items()):
        where = f'{system}:{part}'
        if len(kinds[(system, part)]) > 1:
            where += f' ({kind or "CPU ?"})'
        groups, verdicts = _node_groups(where, cases)
        acc.nodes += groups
        acc.node_verdicts += verdicts
    if not acc.nodes:
        hosts = {h for cases in node_cases.values() for c in cases
                 for h in c.get('job_nodelist') or []}  # fmt: skip
        acc.nodes_reason = (
            'no figure was measured on two or more nodes one node at a '
            'time'
            + (f' (all runs were on {", ".join(sorted(hosts))})' if hosts else '')
        )
    for case in fabric_cases:
        matrices, culprits = _fabric_matrices(case)
        acc.pairs += matrices
        acc.culprits += culprits
    fabric = {m.system for m in acc.pairs}
    for (system, part, test, var), samples in sorted(pair_samples.items()):
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


def _is_link_figure(variable, unit):
    low = variable.lower()
    return vocabulary.is_link_unit(unit) or 'latency' in low


def _robust_flags(values, direction):
    """(host/pair -> why, median) for values far from the others on the worse
    side: acceptance's judge (:func:`clusterbench.acceptance.robust.outliers`)."""
    from clusterbench.acceptance import robust

    sign = {Better.HIGHER: 1, Better.LOWER: -1}.get(direction, 0)
    median = statistics.median(values.values()) if values else 0.0
    return robust.outliers(values, sign), median


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
                {1: Better.HIGHER, -1: Better.LOWER}.get(direction),
                values,
                {n.name: n.verdict for n in having},
                flagged,
                statistics.median(values.values()),
            )
        )
    return groups, verdicts


#: Fabric matrices shown: (title, matrix, unit, better, words of its reasons).
_FABRIC = (
    ('latency (median)', 'latency_p50_us', 'us', Better.LOWER, ('latency', 'stall')),
    ('bandwidth', 'bandwidth_mbs', 'MB/s', Better.HIGHER, ('bandwidth',)),
    ('message rate', 'msgrate_mmps', 'Mmsg/s', Better.HIGHER, ('msgrate',)),
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
        if _verdict_of(figs).fails_run:
            flags.setdefault(pair, 'outside its reference tolerance')
    nodes = sorted({n for p in values for n in p})
    return PairMatrix(
        scaling_title(test, var),
        f'{system}:{part}',
        bench.unit,
        bench.better,
        nodes,
        values,
        flags,
    )


def _verdict_of(figs):
    judged = verdict.Judged(*(['x'] * 5), figs[0].unit, [f.value for f in figs], None)
    for fig in figs:
        if fig.ref is not None:
            judged.ref = fig.ref
    return judged.judge().kind
