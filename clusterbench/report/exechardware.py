"""The hardware of an executive row: nodes, cores, CPU kind and
microarchitecture, memory, interconnect, the declared link peak and the
node's peak (declared, else computed from the clock and the cores)."""

from clusterbench.machine import peak as peaklib


def describe(row, configs, facts):
    """Fill *row*'s hardware from its configurations and the latest case
    with node facts (*facts*)."""
    processor = next((c.processor for c in configs if c.processor), {})
    identity = facts.get('machine_identity') or {}
    if not isinstance(identity, dict):
        identity = {}
    row.cpu_kind = str(identity.get('cpu_kind') or processor.get('cpu_kind') or '')
    row.microarchitecture = (
        peaklib.microarchitecture(row.cpu_kind, processor.get('arch')) or ''
    )
    cpus, per_core = processor.get('num_cpus'), processor.get('num_cpus_per_core') or 1
    if isinstance(cpus, int) and cpus > 0:
        row.cores = cpus // per_core if isinstance(per_core, int) else cpus
    hwinfo = next((c.hwinfo for c in configs if c.hwinfo), {})
    node = next(iter(hwinfo.values()), {}) if hwinfo else {}
    memory = node.get('memory_gib')
    if isinstance(memory, (int, float)):
        row.memory_gib = float(memory)
    elif isinstance(identity.get('memory_bytes'), int):
        row.memory_gib = identity['memory_bytes'] / 2**30
    row.interconnect = _interconnect(node, facts)
    link = facts.get('link_peak') or {}
    if isinstance(link, dict) and _number(link.get('peak_mbs')):
        row.link_peak_mbs = float(link['peak_mbs'])
    row.peak, row.peak_note = _peak(row, identity, facts)


def _interconnect(node, facts):
    link = facts.get('link_peak') or {}
    declared = ''
    if isinstance(link, dict) and isinstance(link.get('peak_mbs'), (int, float)):
        declared = f', link peak {link["peak_mbs"] / 1000:.3g} GB/s declared'
    ib = node.get('infiniband')
    if ib and ib != 'absent':
        text = ib if isinstance(ib, str) else '; '.join(map(str, ib))
        return f'InfiniBand {text}{declared}'
    up = [n for n in node.get('network') or [] if ' up' in str(n)]
    if up:
        return '; '.join(str(n).replace(' speed absent', '') for n in up) + declared
    return ('unknown' + declared) if declared else 'unknown'


def _peak(row, identity, facts):
    declared = facts.get('peak_gflops_per_node')
    if isinstance(declared, (int, float)) and declared > 0 and row.cores:
        return peaklib.declared(declared, row.cores), 'declared'
    mhz, how = None, ''
    for key in ('max_mhz', 'base_mhz'):
        value = identity.get(key)
        if isinstance(value, (int, float, str)) and _number(value):
            mhz, how = float(value), key
            break
    conditions = facts.get('run_conditions') or {}
    if mhz is None and _number(conditions.get('mhz_before')):
        mhz, how = float(conditions['mhz_before']), 'clock read during the run'
    found = peaklib.computed(
        row.cpu_kind, row.cores, mhz, fallback_arch=row.microarchitecture or None
    )
    if found is None:
        return None, 'no clock or core count to compute it from'
    return found, f'computed ({found.source}; {how})'


def _number(value):
    try:
        return float(value) > 0
    except (TypeError, ValueError):
        return False
