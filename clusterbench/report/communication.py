"""The communication section: message-size curves of IMB, OSU and NetPIPE,
barrier latencies and the per-link table against the declared peak."""

from collections import defaultdict

from clusterbench.report import curves as curvelib
from clusterbench.report.model import CommLine, Communication, LinkRow, median_curve


def build(data, comm_cases, comm_problems):
    """The communication section: message-size curves, barrier, link table."""
    comm = Communication()
    by_key = {c.key: c for c in data.configs}
    runs = defaultdict(list)
    for config_key, test, placement, _case, found in comm_cases:
        for curve in found:
            key = (curve.operation, curve.metric, config_key, test, placement)
            runs[key + (curve.tool,)].append(curve)
    for (op, metric, config_key, test, placement, _), curves in runs.items():
        line = CommLine(
            by_key[config_key], median_curve(curves), test, placement, len(curves)
        )
        comm.lines.setdefault((op, metric), []).append(line)
    barrier = comm.lines.pop(('Barrier', curvelib.LATENCY), [])
    for line in barrier:
        value = line.curve.points[0][1] if line.curve.points else None
        comm.barrier.append((line.config, line.label_tool, value))
    for lines in comm.lines.values():
        for line in lines:
            line.curve.points.sort()
    comm.table = _link_table(data, comm, comm_cases)
    comm.notes = comm_problems
    if not comm.lines and not comm.barrier and not comm.table:
        comm.reason = (
            'no message-size curves (IMB, OSU or NetPIPE checks keep them in '
            'the run report) and no PingPong figures in the inputs'
        )
        if comm_problems:
            comm.reason += '; ' + '; '.join(comm_problems)
    return comm


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
