"""Where and when each run was: the nodes' hardware facts, and the times of
runs and reports (the report's provenance section; reference provenance is
clusterbench.references.provenance's)."""

import datetime
import json
import os

from clusterbench.core import inputfile
from clusterbench.core.errors import ClusterbenchError


def node_facts(case):
    """host -> digest of its hardware facts (``node_facts`` of the report, else
    the ``hwinfo/<host>.json`` files kept with the outputs)."""
    facts = case.get('node_facts')
    if isinstance(facts, dict) and facts:
        return {str(h): f for h, f in facts.items() if isinstance(f, dict)}
    outdir = case.get('outputdir')
    folder = os.path.join(outdir, 'hwinfo') if outdir else None
    if not folder or not os.path.isdir(folder):
        return {}
    from clusterbench.machine import hwinfo

    found = {}
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if not entry.name.endswith('.json'):
            continue
        try:
            # A FIFO there would hang the report: regular files only.
            data = json.loads(inputfile.read_bytes(entry.path))
            found[entry.name[: -len('.json')]] = hwinfo.summary(data)
        except (OSError, ValueError, AttributeError, TypeError, ClusterbenchError):
            continue
    return found


_FACT_LABELS = (
    ('cpu', 'CPU'),
    ('topology', 'topology'),
    ('threads', 'hardware threads'),
    ('max_mhz', 'max MHz'),
    ('memory_gib', 'memory GiB'),
    ('numa_nodes', 'NUMA nodes'),
    ('kernel', 'kernel'),
    ('network', 'network'),
    ('infiniband', 'InfiniBand'),
    ('mpi', 'MPI'),
    ('ucx', 'UCX'),
    ('libfabric', 'libfabric'),
    ('compiler', 'compiler'),
    ('blas', 'BLAS'),
    ('error', 'error'),
)


def hw_summary(facts):
    """(label, text) lines of one node's facts digest; absent facts say so."""
    lines = []
    for key, label in _FACT_LABELS:
        if key not in facts:
            continue
        value = facts[key]
        if isinstance(value, list):
            value = '; '.join(str(v) for v in value) or 'none'
        elif isinstance(value, dict):
            value = '; '.join(f'{k} {v}' for k, v in value.items())
        lines.append((label, str(value)))
    return lines


# -------------------------------------------------------------------- time


def utc_now():
    return datetime.datetime.now(datetime.UTC).timestamp()


def timestamp(unix):
    """The UTC time of *unix* seconds, or None if it is no time: a report
    file may hold anything there (NaN, 1e308, a year before 1)."""
    if isinstance(unix, bool) or not isinstance(unix, (int, float)):
        return None
    try:
        return datetime.datetime.fromtimestamp(unix, datetime.UTC)
    except (OverflowError, ValueError, OSError):
        return None


def time_text(unix, text):
    when = timestamp(unix)
    if when is not None:
        return when.strftime('%Y-%m-%d %H:%M:%S UTC')
    return str(text or '')


def run_dates(config):
    if not config.completed:
        return ''
    first, last = min(config.completed), max(config.completed)
    if time_text(first, None)[:10] == time_text(last, None)[:10]:
        return f'{time_text(first, None)} .. {time_text(last, None)[11:]}'
    return f'{time_text(first, None)} .. {time_text(last, None)}'
