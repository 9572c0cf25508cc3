"""The last-level caches of a node: their total size, for sizing STREAM.

STREAM's rules ask each array to be at least four times the sum of all the
last-level caches of the node. Sources, first found first used: the
partition's ``extras.llc_bytes`` (a site's declaration), the cache topology
ReFrame detected for the partition's processor, and, for a partition whose
nodes are this host (the ``local`` scheduler), Linux's sysfs
(``/sys/devices/system/cpu/cpu*/cache/index*``).
"""

import glob
import os
import re

_UNITS = {'': 1, 'K': 1024, 'M': 1024**2, 'G': 1024**3}


def _size(text):
    found = re.fullmatch(r'\s*(\d+)\s*([KMG]?)\s*', text)
    return int(found.group(1)) * _UNITS[found.group(2)] if found else None


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def sysfs_llc_bytes(root='/'):
    """Total bytes of the distinct last-level caches in sysfs under *root*.

    A cache shared by several CPUs appears once per CPU; it is counted once
    (by its level and the CPUs that share it). ``None`` if sysfs has none.
    """
    caches = {}
    pattern = os.path.join(root, 'sys/devices/system/cpu/cpu[0-9]*/cache/index[0-9]*')
    for index in glob.glob(pattern):
        kind = _read(os.path.join(index, 'type'))
        level = _read(os.path.join(index, 'level'))
        size = _size(_read(os.path.join(index, 'size')) or '')
        shared = _read(os.path.join(index, 'shared_cpu_list'))
        if kind == 'Instruction' or not level or not level.isdigit() or not size:
            continue
        caches[(int(level), shared or index)] = size
    if not caches:
        return None
    last = max(level for level, _ in caches)
    return sum(size for (level, _), size in caches.items() if level == last)


def topology_llc_bytes(topology):
    """The same from ReFrame's processor topology (``caches``), or ``None``."""
    caches = [
        c
        for c in (topology or {}).get('caches', [])
        if re.fullmatch(r'L\d+', str(c.get('type', ''))) and c.get('size')
    ]
    if not caches:
        return None
    last = max(int(c['type'][1:]) for c in caches)
    return sum(
        int(c['size']) * max(1, len(c.get('cpusets') or []))
        for c in caches
        if int(c['type'][1:]) == last
    )


def node_llc_bytes(declared, topology, runs_here):
    """A partition's nodes' last-level caches in bytes, or ``None``: its
    declared ``llc_bytes``, its processor *topology* (ReFrame's), and this
    host's sysfs if its jobs run here (a PartitionSpec's ``runs_here``)."""
    if declared:
        return int(declared)
    found = topology_llc_bytes(topology)
    if found:
        return found
    if runs_here:
        return sysfs_llc_bytes()
    return None
