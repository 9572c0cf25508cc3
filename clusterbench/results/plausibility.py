"""Figures no network can give: an "inter-node" latency that is not clearly
slower than the same session's shared-memory latency on one node.

A message between two nodes crosses the node's memory, its adapter, the
link and the other node's memory; within one node it only crosses the
memory. Any network's latency is several times shared memory's (InfiniBand
~1 us against ~0.25 us, TCP ~18 us against ~1.4 us). An inter-node figure
within LATENCY_RATIO of the intra-node one means MPI did not cross a
network: the "nodes" are namespaces or containers of one host and MPI found
shared memory between them (MPICH over UCX on the test cluster, unless held
to TCP: 0.67 us). Said in one line per configuration under the verdicts;
the figures are kept as they are.
"""

import re

from clusterbench.results import runreport

#: An inter-node latency below this many times the intra-node one is
#: implausible for any network.
LATENCY_RATIO = 1.5
_PLACEMENT = re.compile(r'\s*%placement=\w+')


def _latencies(case):
    """{figure: value in us} of a test case's latency figures."""
    found = {}
    for key, values in (case.get('perfvalues') or {}).items():
        name = key.rsplit(':', 1)[-1]
        # ReFrame's (value, reference, lower, upper, unit, result).
        if name.startswith('latency') and isinstance(values, list) and len(values) > 4:
            value, unit = values[0], values[4]
            if isinstance(value, (int, float)) and unit == 'us' and value > 0:
                found[name] = value
    return found


def lines(report_paths):
    """One line per configuration whose inter-node latency is implausible."""
    pairs = {}
    for path in report_paths:
        for case in runreport.cases(runreport.load(path), path):
            placement = case.get('placement')
            if case.get('fixture') or placement not in ('inter', 'intra'):
                continue
            key = (
                _PLACEMENT.sub('', str(case.get('display_name', ''))),
                f'{case["system"]}:{case["partition"]}',
                case['environ'],
            )
            pairs.setdefault(key, {}).setdefault(placement, {}).update(_latencies(case))
    found = []
    for (test, where, environ), by in sorted(pairs.items()):
        inter, intra = by.get('inter', {}), by.get('intra', {})
        for figure in sorted(set(inter) & set(intra)):
            if inter[figure] < LATENCY_RATIO * intra[figure]:
                found.append(
                    f'implausible: {test} on {where} with {environ}: inter-node '
                    f'{figure} {inter[figure]:.3g} us is not slower than within '
                    f'one node ({intra[figure]:.3g} us): MPI is not crossing a '
                    f'network between these nodes (one host? hold MPI to the '
                    f'network, see docs/adoption.md)'
                )
                break  # one line per configuration
    return found
