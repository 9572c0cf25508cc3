"""The scaling section: speedup and efficiency against the smallest run."""

import statistics
from collections import defaultdict

from clusterbench.core.figures import Better
from clusterbench.report.identity import PLACEMENT, SIZE, name_without, scaling_title
from clusterbench.report.model import ScalingPoint, ScalingSeries


def build(benchmarks, scaling_samples):
    """The scaling section: one series per test run at two or more rank counts."""
    families = {}
    for b in benchmarks:
        if b.application:
            families[(name_without(b.test, PLACEMENT | SIZE), b.variable)] = b
    out = []
    found = sorted(scaling_samples.items())
    kinds = defaultdict(set)
    for (system, part, kind, *_), _samples in found:
        kinds[(system, part)].add(kind)
    for (system, part, kind, environ, test, var), samples in found:
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
            scaling_title(test, var),
            var,
            bench.unit,
            # A kind of its own never joins another's series (two machines).
            f'{system}:{part} {environ}'
            + (f' {kind or "CPU ?"}' if len(kinds[(system, part)]) > 1 else ''),
            test,
            weak=weak,
        )
        base_ranks = min(by_ranks)
        base = statistics.median(by_ranks[base_ranks])
        for ranks in sorted(by_ranks):
            value = statistics.median(by_ranks[ranks])
            if not base or not value:
                continue
            if bench.better == Better.LOWER:
                speedup = base / value
            else:
                speedup = value / base
            # Weak scaling: ideal is constant time, or rate growing with ranks.
            if weak and bench.better == Better.LOWER:
                ideal = 1.0
            else:
                ideal = ranks / base_ranks
            series.points.append(
                ScalingPoint(ranks, nodes_of[ranks], value, speedup, ideal)
            )
        out.append(series)
    return out
