"""Proposed references as a reader reads them: figure by figure, named by its
test's short name, never as a chain of ``$index`` keys.

One heading line per place the references apply (system:partition,
environment, CPU kind), then one line per figure::

    local:default, gnu-openmpi, CPU AMD-25-17 (x86_64_v4, AMD EPYC, 2 CPUs)
      + CGSolverCheck stencil=7 variant=pipelined / gflops: 4.556 GFlop/s
        ±14 % (n=3 in 3 sessions, spread 1.2 %; floor 14 %: solver, one rank
        per node)

``+`` a new reference, ``~`` one that replaces another (shown as old ->
new), ``=`` one that stays as it is. Names and values come from reports:
their control characters are shown escaped (``\\x1b``), never raw.
"""

import os

from clusterbench.core.controlchars import escaped
from clusterbench.judging import view
from clusterbench.references import directory as refdir
from clusterbench.references import lookup

#: Index keys that say where a reference applies rather than which test
#: configuration it is: shown once in the heading.
_PLACE = ('$partition', '$environ', '$system')


def _is_place(name):
    return name in _PLACE or name.startswith('$processor.') or name == 'cpu_kind'


def place(samples):
    """The heading of a proposal: where its reference applies."""
    params = dict(zip(samples.index, samples.key))
    where = params.get('$partition') or f'{samples.system}'
    parts = [str(where)]
    if params.get('$environ'):
        parts.append(str(params['$environ']))
    cpu = [
        f'{params[k]}'
        for k in ('$processor.arch', '$processor.model')
        if params.get(k) is not None
    ]
    if params.get('$processor.num_cpus') is not None:
        cpu.append(f'{params["$processor.num_cpus"]} CPUs')
    if params.get('cpu_kind') is not None:
        parts.append(
            f'CPU {params["cpu_kind"]}' + (f' ({", ".join(cpu)})' if cpu else '')
        )
    elif cpu:
        parts.append(', '.join(cpu))
    return ', '.join(parts)


def short_name(samples):
    """``CGSolverCheck stencil=7 variant=pipelined / gflops``."""
    test = short_test(samples.test, samples.index, samples.key)
    return f'{test} / {samples.variable}'


def short_test(test, index, key):
    """``CGSolverCheck stencil=7 variant=pipelined``: the test and the
    parameters of its ``$index`` key that are no place."""
    params = [
        f'{name}={value}' for name, value in zip(index, key) if not _is_place(name)
    ]
    return ' '.join([test, *params])


def _band(entry):
    _, lower, upper, _ = entry
    return view.band(lower, upper)


def _figure(prop):
    s = prop.samples
    n, sessions = len(s.values), len(s.sessions)
    floor = f'; floor of {prop.kind}' if prop.kind else ''
    band = f'context only: {prop.context}' if prop.context else _band(prop.entry)
    return (
        f'{prop.entry[0]:g} {s.unit} {band} '
        f'(n={n} in {sessions} session{"s" * (sessions != 1)}, '
        f'spread {view.percent(prop.spread, 1)}{floor})'
    )


def lines(proposals, directory):
    """The proposal, heading by heading, against the references in
    *directory* (a root of system directories)."""
    cache, out, heading = {}, [], None
    for prop in sorted(proposals, key=_order):
        s = prop.samples
        here = place(s)
        if here != heading:
            out.append(here)
            heading = here
        old = _old(prop, directory, cache)
        new = _figure(prop)
        name = short_name(s)
        if old is None:
            out.append(f'  + {name}: {new}')
        elif list(old[:3]) == prop.entry[:3] and not prop.context:
            out.append(f'  = {name}: {new}')
        else:
            was = f'{old[0]:g} {s.unit} {_band(list(old[:3]) + [None])}'
            out.append(f'  ~ {name}: {was} -> {new}')
    return [escaped(line) for line in out]


def short_lines(proposals):
    """The proposals by name under their place's heading, with how many
    sessions back each (those a baseline leaves without a reference)."""
    out, heading = [], None
    for prop in proposals:
        here = place(prop.samples)
        if here != heading:
            out.append(here)
            heading = here
        sessions = len(prop.samples.sessions)
        out.append(f'  - {short_name(prop.samples)} ({sessions})')
    return [escaped(line) for line in out]


def _order(prop):
    s = prop.samples
    return (place(s), s.test, tuple(map(str, s.key)), s.variable)


def _old(prop, directory, cache):
    """The reference that *directory* has now for the proposal's figure."""
    s = prop.samples
    path = os.path.join(refdir.system_directory(directory, s.system), s.reference_file)
    if path not in cache:
        cache[path] = lookup.load_file(path)
    entry = cache[path].get(s.test)
    if not isinstance(entry, dict):
        return None
    level = entry
    for key in s.key:
        if not isinstance(level, dict) or key not in level:
            return None
        level = level[key]
    found = level.get(s.variable) if isinstance(level, dict) else None
    return found if isinstance(found, list) and len(found) >= 3 else None
