"""What a test case is: its software stack, node count, name and parameters,
and the family of its figures. The keys the report groups by."""

import re

from clusterbench.judging import vocabulary
from clusterbench.parsers.catalog import CATALOG
from clusterbench.site import contract, stacknames


def _stack_from_name(environ):
    tokens = re.split(r'[-_+.@ ]+', environ.lower())
    mpi = next((m for m in stacknames.MPI_NAMES for t in tokens if t == m), None)
    compiler = next(
        (stacknames.COMPILERS[t] for t in tokens if t in stacknames.COMPILERS), None
    )
    blas = next((b for b in stacknames.BLAS for t in tokens if t == b), None)
    return mpi, compiler, blas


def stack_of(case):
    """(MPI, compiler, BLAS, where from) of a test case."""
    extras = {}
    for key in ('environ_extras', 'extras'):
        if isinstance(case.get(key), dict):
            extras = case[key]
            break
    from_name = _stack_from_name(case['environ'])
    found, origin = [], set()
    for i, key in enumerate(('mpi', 'compiler', 'blas')):
        param = case.get(key)
        if isinstance(param, str) and param:
            found.append(param)
            origin.add('test parameters')
        elif isinstance(extras.get(key), str) and extras[key]:
            found.append(extras[key])
            origin.add('environment extras')
        else:
            found.append(from_name[i])
            if from_name[i]:
                origin.add('environment name')
    return (*found, ', '.join(sorted(origin)) or 'unknown')


def nodes_of(case):
    nodes = case.get('num_nodes')
    if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes > 0:
        return nodes
    hosts = case.get('job_nodelist') or []
    if hosts:
        return len(set(hosts))
    # A test that failed before its job ran has no node list; under the
    # local scheduler it could only have run on this one node.
    return 1 if contract.runs_here(case) else None


def cpu_kind_of(case):
    """The CPU kind (vendor-family-model) of the nodes *case* ran on, or ''.

    Part of a configuration's identity: a Zen 3 and a Zen 4 session of one
    ``system:partition`` are two machines, never samples of one figure.
    """
    for where in (case, case.get('machine_identity'), case.get('processor_facts')):
        kind = where.get('cpu_kind') if isinstance(where, dict) else None
        if isinstance(kind, str) and kind:
            return kind
    return ''


# --------------------------------------------------------------- benchmarks

PARAM = re.compile(r'\s+%([.\w$]+)=(\S+)')
#: Parameters that say where or how often a test ran, not what it ran.
PLACEMENT = {'.nid', '.part', '.repeat_no', '$nid', '$part', '$repeat_no'}
#: Parameters that set the size of a run (scaling series are along them).
SIZE = {'ranks_per_node', 'num_nodes', 'num_tasks', 'nodes', 'ranks'}


def split_name(name):
    """('CGSolverCheck', {'stencil': '7', ...}) of a ReFrame test name."""
    base = name.split()[0] if name.split() else name
    return base, dict(PARAM.findall(name))


def name_without(name, drop):
    base, params = split_name(name)
    kept = ' '.join(f'%{k}={v}' for k, v in params.items() if k not in drop)
    return f'{base} {kept}'.strip()


def test_name(name, hosts):
    """*name* without placement parameters and parameters naming its nodes."""
    base, params = split_name(name)
    kept = [
        f'%{k}={v}'
        for k, v in params.items()
        if k not in PLACEMENT and not any(h and h in v for h in hosts)
    ]
    return ' '.join([base, *kept])


#: Reference-index entries that the configuration (not the figure) carries.
IN_CONFIG = {'mpi', 'compiler', 'blas', 'num_nodes', 'cpu_kind'}


def identity_of(case):
    """What else makes a figure this figure: the check's reference index.

    Variables set with ``-S`` (a problem class, a rank count) are not in the
    test's name, yet a class S and a class C figure are not samples of one
    figure. The check's ``reference_index`` names what its reference depends
    on; those variables join the name (as ``%var=value``).
    """
    _, params = split_name(case['name'])
    extra = []
    for key in case.get('reference_index') or []:
        if not isinstance(key, str) or key.startswith('$') or key in IN_CONFIG:
            continue
        value = case.get(key)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        if any(k == key or k.endswith(f'.{key}') for k in params):
            continue
        extra.append(f' %{key}={value}')
    return ''.join(extra)


def better(variable, unit):
    """Better.HIGHER, LOWER or None (not a figure of merit) for one figure."""
    return vocabulary.direction(variable, unit)


def application_family(variable, unit):
    """The application family of a figure (its declaration's ``headline``),
    or None when it is not a headline."""
    return CATALOG.headline(variable, unit) or None


def scaling_title(test, variable):
    base, params = split_name(test)
    shown = ' '.join(f'{k}={v}' for k, v in params.items())
    return f'{base} {shown} · {variable}'.replace('  ', ' ')
