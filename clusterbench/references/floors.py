"""The smallest tolerance of a proposed reference, per kind of figure.

A reference made from few sessions cannot see how much sessions differ: three
sessions that happen to agree give a band that the next healthy session
leaves. Each kind of figure therefore has a floor, learnt from the spread
between sessions of figures of that kind on the hosts with data
(:data:`SOURCE`; ``evaluation/baseline_floors.py`` derives and prints it):
twice the median, over the kind's figures, of the robust relative spread of
the session medians (about 95 % of a kind's healthy sessions stay inside),
rounded up to a whole percent and never below :data:`MINIMUM`.

:func:`kind_of` names the kind of a figure from its test, name, unit and
parameters; the first rule of :data:`RULES` that matches decides.
"""

import re

from clusterbench.core.figures import SOLVER
from clusterbench.judging import vocabulary
from clusterbench.parsers.catalog import CATALOG

#: Never a narrower floor: the old single floor of `references update`.
MINIMUM = 0.03

#: Where the learnt floors come from (printed by evaluation/baseline_floors.py).
SOURCE = (
    'evaluation/baseline_floors.py over reference_data/local/provenance/*.yaml: '
    '14 sessions of AMD-25-17 (Zen 4, 2 cores, KVM), 2026-11-24'
)

#: kind -> floor (a relative tolerance). Learnt: see SOURCE. ``count`` and
#: ``share`` are declared: a count (iterations) is deterministic, and a share
#: near zero has its own absolute floor (vocabulary.SHARE_FLOOR).
FLOORS = {
    'count': MINIMUM,
    'share': MINIMUM,
    'efficiency': 0.04,
    'message size': 0.64,
    'latency': 0.08,
    'DGEMM rate': 0.03,
    'HPL rate': 0.08,
    'memory bandwidth': 0.13,
    'solver, one rank per node': 0.14,
    'solver, all ranks': 0.29,
    'MPI bandwidth': 0.18,
    'other rate': 0.18,
}

#: A kind with no data on any host: the detection threshold of the issue
#: (a 10 % change must be resolvable), until sessions teach better.
NO_DATA = 0.10

_MEMORY = re.compile(r'stream|copy|scale|add|triad', re.I)


def one_rank(params):
    """A test run on one rank per node, by its parameters."""
    ranks = params.get('ranks_per_node', params.get('num_tasks'))
    return str(ranks) == '1'


#: (kind, rule over (test, variable, unit, params)), first match wins.
RULES = (
    ('share', lambda t, v, u, p: vocabulary.is_share(v, u)),
    ('count', lambda t, v, u, p: u == 'iterations'),
    ('efficiency', lambda t, v, u, p: u == '%'),
    ('message size', lambda t, v, u, p: u == 'B'),
    ('latency', lambda t, v, u, p: u in vocabulary.LATENCY_UNITS),
    ('DGEMM rate', lambda t, v, u, p: 'dgemm' in v.lower()),
    ('HPL rate', lambda t, v, u, p: 'hpl' in v.lower() or t.startswith('HPL')),
    (
        'solver, one rank per node',
        lambda t, v, u, p: CATALOG.kind(v, u) == SOLVER and one_rank(p),
    ),
    ('solver, all ranks', lambda t, v, u, p: CATALOG.kind(v, u) == SOLVER),
    ('memory bandwidth', lambda t, v, u, p: bool(_MEMORY.search(v + ' ' + t))),
    ('MPI bandwidth', lambda t, v, u, p: u in vocabulary.BANDWIDTH_UNITS),
    ('other rate', lambda t, v, u, p: vocabulary.is_rate(u)),
)


def kind_of(test, variable, unit, params=None):
    """The kind of one figure (see RULES), or ``'other'``."""
    params = params or {}
    for kind, rule in RULES:
        if rule(test or '', variable or '', (unit or '').strip(), params):
            return kind
    return 'other'


def floor_of(test, variable, unit, params=None):
    """(floor, kind) of one figure."""
    kind = kind_of(test, variable, unit, params)
    return FLOORS.get(kind, NO_DATA), kind


def floor_for(samples):
    """(floor, kind) of a :class:`~clusterbench.references.update.Samples`."""
    params = dict(zip(samples.index, samples.key))
    return floor_of(samples.test, samples.variable, samples.unit, params)
