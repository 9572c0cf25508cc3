"""What a session recorded besides its figures: MPI profiles, nodes, energy.

Read from the run report's test cases (the plugins
:mod:`~clusterbench.checks.plugins.profiling`,
:mod:`~clusterbench.checks.plugins.nodefacts` and
:mod:`~clusterbench.checks.plugins.energy` keep their digests there), and printed
after the verdict table with ``-v``: per configuration the run conditions,
the MPI time share, the per-call breakdown and the message-size histograms;
each node's facts once; and once per node, that energy was not available and
why. Without ``-v``, one line (:func:`digest`) says what there is.
"""

import textwrap

from clusterbench.bench import profile
from clusterbench.core import disturbance
from clusterbench.machine import hwinfo
from clusterbench.noisyhost import conditions
from clusterbench.results import runreport


def _configuration(case):
    return (
        f'{case["display_name"]} on {case["system"]}:{case["partition"]} '
        f'with {case["environ"]}'
    )


def _gather(report_paths):
    profiles, nodes, software, no_energy, runs = [], {}, {}, {}, []
    for path in report_paths:
        for case in runreport.cases(runreport.load(path), path):
            if case.get('fixture'):
                continue
            if case.get('run_conditions'):
                runs.append((_configuration(case), case['run_conditions']))
            digest = case.get('mpi_profile_summary')
            if digest:
                profiles.append((_configuration(case), digest))
            for host, facts in (case.get('node_facts') or {}).items():
                if isinstance(facts, dict):
                    nodes.setdefault(host, facts)
                    # The software seen depends on the environment.
                    software.setdefault(host, {}).setdefault(case['environ'], facts)
            summary = case.get('energy_summary') or {}
            if summary and not summary.get('available'):
                no_energy.setdefault(
                    str(summary.get('host') or '?'), summary.get('reason')
                )
    return profiles, nodes, software, no_energy, runs


def digest(report_paths):
    """One line: what :func:`sections` would show ('' if nothing)."""
    profiles, nodes, _, no_energy, runs = _gather(report_paths)
    disturbed = sum(1 for _, measured in runs if disturbance.of_conditions(measured))
    parts = []
    if runs:
        parts.append(
            f'run conditions of {len(runs)} test case{"s" * (len(runs) != 1)}'
            + (f' ({disturbed} disturbed)' if disturbed else '')
        )
    if profiles:
        parts.append(f'{len(profiles)} MPI profile{"s" * (len(profiles) != 1)}')
    if nodes:
        parts.append(f'facts of {len(nodes)} node{"s" * (len(nodes) != 1)}')
    if no_energy:
        parts.append('energy not available')
    forced = sorted({f.get('openblas_coretype') for f in nodes.values()} - {None, ''})
    if forced:
        # Chosen for OpenBLAS, not by it: say so where the figures are read.
        parts.append('OpenBLAS kernels set by OPENBLAS_CORETYPE=' + ','.join(forced))
    if not parts:
        return ''
    return 'Session details: ' + ', '.join(parts) + ' (-v shows them)'


def sections(report_paths):
    """Text lines for the reports at *report_paths* ([] if nothing to show)."""
    profiles, nodes, software, no_energy, runs = _gather(report_paths)
    lines = []
    if runs:
        lines += ['', "Run conditions (steal, other processes, ranks' CPU share):"]
        for title, measured in runs:
            (line,) = _shown(title, lambda c: [conditions.format_line(c)], measured)
            lines.append(line if line.startswith('  ') else f'  {title}: {line}')
    for title, digest in profiles:
        lines += ['', f'MPI profile: {title}']
        lines += _shown(title, profile.format_summary, digest)
    if nodes:
        lines += ['', 'Nodes:']
        for host, facts in sorted(nodes.items()):
            if 'error' in facts:
                lines.append(f'  {host}: facts unreadable: {facts["error"]}')
                continue
            lines += _shown(host, hwinfo.format_summary, facts, software=False)
            for environ, seen in sorted(software.get(host, {}).items()):
                if 'error' not in seen:
                    (text,) = _shown(host, lambda s: [hwinfo.format_software(s)], seen)
                    lines.append(f'    with {environ}: {text}')
    for host, reason in sorted(no_energy.items()):
        lines += ['', f'Energy: not available on {host}: {reason}']
    return lines


def _shown(what, format_lines, *args, **kwargs):
    # These digests come from a report file, maybe edited or foreign: one
    # that does not have the expected shape is named, not a traceback.
    try:
        return format_lines(*args, **kwargs)
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        return [f'  {what}: not shown: malformed in the report']


def text(report_paths, width=None):
    """The sections as text; with *width*, long lines are wrapped to it (their
    continuation indented under the line's own indentation)."""
    lines = sections(report_paths)
    if width:
        lines = [part for line in lines for part in _fitted(line, width)]
    return '\n'.join(lines).strip('\n')


def _fitted(line, width):
    if len(line) <= width:
        return [line]
    indent = ' ' * (len(line) - len(line.lstrip()))
    return textwrap.wrap(
        line.strip(),
        width,
        initial_indent=indent,
        subsequent_indent=indent + '    ',
        break_on_hyphens=False,
    )
