"""The samples of reference updates: every verified figure of some run
reports, grouped per reference (the input of references.update.propose).

Here, not in references/: reading run reports is this package's job, and
references/ stays below results/.
"""

import math

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import disturbed
from clusterbench.references.lookup import index_value
from clusterbench.references.update import Samples
from clusterbench.results import runreport


class NoVerifiedFigure(ClusterbenchError):
    """Not one verified, undisturbed figure in the reports."""


def collect(report_paths, left_out=None):
    """Samples of every verified figure in the reports, grouped per reference.

    DISTURBED samples are left out (judging.disturbed) and counted in
    *left_out*, a :class:`~clusterbench.judging.disturbed.LeftOut`, when given."""
    groups = {}
    used = 0
    left_out = disturbed.LeftOut() if left_out is None else left_out
    for path in report_paths:
        data = runreport.load(path)
        session = data['session_info'].get('uuid') or path
        for run in data['runs']:
            for case in run.get('testcases', []):
                if case.get('fixture') or not case.get('reference_file'):
                    continue
                if (
                    case.get('result') != 'pass'
                    and case.get('fail_phase') != 'performance'
                ):
                    continue
                broke = disturbed.of_case(case)
                if broke:
                    # Its conditions broke the thresholds: not a measurement.
                    figures = len(case.get('perfvalues') or {}) or 1
                    left_out.add(broke, session, figures)
                    continue
                index = tuple(case.get('reference_index') or ())
                key = tuple(index_value(case, name) for name in index)
                if any(k is None for k in key):
                    continue
                for pkey, values in (case.get('perfvalues') or {}).items():
                    value, unit = values[0], values[4]
                    if value is None:
                        continue
                    var = pkey.rsplit(':', 1)[1]
                    if not math.isfinite(value):
                        # JSON's NaN and Infinity (or 1e999) read as numbers:
                        # a report that has them is refused whole.
                        raise ClusterbenchError(
                            f'{path}: {case["display_name"]}: {var} is {value}: '
                            f'not a figure; nothing was updated'
                        )
                    ident = (case['system'], _class_name(case), key, var)
                    group = groups.get(ident)
                    if group is None:
                        group = groups[ident] = Samples(
                            case['system'],
                            _class_name(case),
                            case['reference_file'],
                            index,
                            key,
                            var,
                            unit or '',
                        )
                    group.values.append(float(value))
                    if path not in group.reports:
                        group.reports.append(path)
                    group.sessions.add(session)
                    group.per_session.setdefault(session, []).append(float(value))
                    group.nodes.update(case.get('job_nodelist') or [])
                    group.facts = case.get('processor_facts') or {}
                    if case.get('node_facts'):
                        group.facts = {**group.facts, 'node_facts': case['node_facts']}
                    group.identity = identity_of(case) or group.identity
                    used += 1
                probe = (case.get('run_conditions') or {}).get('host_probe')
                if isinstance(probe, dict):
                    # One probe per run, shared by the run's figures.
                    for ident, group in groups.items():
                        if ident[:3] == (case['system'], _class_name(case), key):
                            group.probes.setdefault(session, []).append(probe)
    if not used:
        why = '; '.join(left_out.lines())
        raise NoVerifiedFigure(
            'no verified figure in '
            + ', '.join(report_paths)
            + (f' ({why})' if why else '')
            + ': nothing to update'
        )
    return list(groups.values())


def identity_of(case):
    """The machine identity recorded with a test case: taken around the job
    (``machine_identity``), else from the node facts; {} when none was."""
    ident = case.get('machine_identity')
    if not isinstance(ident, dict) or not ident:
        nodes = case.get('node_facts') or {}
        ident = next(
            (
                f['identity']
                for f in nodes.values()
                if isinstance(f, dict) and isinstance(f.get('identity'), dict)
            ),
            {},
        )
    return {'source': 'recorded', **ident} if ident else {}


def _class_name(case):
    # ReFrame keys external references by the test's class name, which leads
    # the display name ("CGSolverCheck %stencil=7 ...").
    return case['display_name'].split()[0]
