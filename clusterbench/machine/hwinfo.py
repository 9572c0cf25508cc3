"""Hardware and software facts of one node, kept with every result.

Read from /proc and /sys (roots configurable, for tests on canned trees) and
from a few commands, all without root: CPU model and topology, frequencies,
memory and NUMA layout, kernel, network interfaces and speeds, InfiniBand
HCAs and ports, and the MPI, UCX, libfabric, compiler and BLAS versions. A
fact that cannot be had is the string ``'absent'``, and ``facts['absent']``
says why, keyed by the fact's dotted path. Nothing here raises on odd input.

This module is the public face (the command is
``python -m clusterbench.cli.hwinfo``); the work is in its parts:
nodefacts (the collector: CPU, memory, NUMA, platform), netfacts (network,
InfiniBand), softfacts (versions; the library probe libprobe.py), digest
(summary and identity) and factreader (what they share).

    python -m clusterbench.cli.hwinfo                   JSON on stdout
    python -m clusterbench.cli.hwinfo --output-dir DIR  DIR/<hostname>.json
    python -m clusterbench.cli.hwinfo --summary         the one-screen digest
"""

import json
import os
import socket
import sys

from clusterbench.machine.digest import (
    format_identity,
    format_software,
    format_summary,
    identity,
    summary,
)
from clusterbench.machine.factreader import ABSENT, FORMAT, run_command
from clusterbench.machine.netfacts import parse_ib_rate, parse_ibv_devinfo
from clusterbench.machine.nodefacts import (
    Collector,
    collect,
    cpu_kind,
    cpu_kind_of_file,
)
from clusterbench.machine.softfacts import probe_libraries

__all__ = [
    'ABSENT',
    'FORMAT',
    'Collector',
    'collect',
    'cpu_kind',
    'cpu_kind_of_file',
    'format_identity',
    'format_software',
    'format_summary',
    'identity',
    'parse_ib_rate',
    'parse_ibv_devinfo',
    'probe_libraries',
    'run_command',
    'summary',
    'write_per_node',
]


def write_per_node(directory, facts):
    """Write DIR/<host>.json unless another rank on this node already did."""
    host = facts['host'] if facts['host'] != ABSENT else socket.gethostname()
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f'{host}.json')
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return None
    with os.fdopen(fd, 'w') as f:
        json.dump(facts, f, indent=1)
        f.write('\n')
    return path


if __name__ == '__main__':
    # The program is the command line's (argparse lives in cli alone).
    print(
        'clusterbench: error: clusterbench.machine.hwinfo is a library: '
        'run python -m clusterbench.cli.hwinfo',
        file=sys.stderr,
    )
    sys.exit(2)
