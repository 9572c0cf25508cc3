"""The sensitivity section: how a figure follows the resources a configuration
offers (memory bandwidth, FLOP rate, link bandwidth), as log-log elasticities."""

import math
import statistics

from clusterbench.report.model import Elasticity, Sensitivity

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


def build(data, minimum=3):
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
