"""Test cases of ReFrame run reports, as acceptance needs them."""

import re

from clusterbench.results import runreport

_NID = re.compile(r'%\.nid=(\S+)')


def _key(case):
    return (
        case.get('display_name') or case['name'],
        case.get('system'),
        case.get('partition'),
        case.get('environ'),
    )


def load(paths):
    """Every test case (not fixtures) of the reports, all runs.

    Repeated runs of a case (``--reruns``, ``--repeat``, several reports) are
    all kept, as samples; but a case that failed and was retried
    (``--max-retries``) counts by its retry only.
    """
    cases = []
    failed_at = {}
    for path in paths:
        runs = runreport.load(path)['runs']
        for case in (c for run in runs for c in run.get('testcases', [])):
            if case.get('fixture'):
                continue
            key = _key(case)
            if key in failed_at:
                # A retry replaces the failed attempt.
                position = failed_at.pop(key)
                cases[position] = case
            else:
                position = len(cases)
                cases.append(case)
            if case.get('result') == 'fail':
                failed_at[key] = position
    return cases


def base_name(case):
    """The test's class name, without parameters."""
    return case['name'].split(' ', 1)[0]


def nodes_of(case):
    """The nodes a case ran on: its ``--distribute`` pin when it has one (what
    it was sent to, even if it never ran), else the job's node list."""
    pinned = _NID.search(case.get('display_name', ''))
    if pinned:
        return pinned.group(1).split(',')
    return list(case.get('job_nodelist') or [])


def figures(case):
    """``{variable: (value, reference, lower, upper, unit, result)}`` of a case."""
    out = {}
    for key, entry in (case.get('perfvalues') or {}).items():
        name = key.rsplit(':', 1)[-1]
        value, ref, lower, upper, unit, result = (list(entry) + [None] * 6)[:6]
        out[name] = (value, ref, lower, upper, unit, result)
    return out


def failed(case):
    return case.get('result') == 'fail' and case.get('fail_phase') != 'performance'


def failure(case):
    lines = (case.get('fail_reason') or 'failed').strip().splitlines()
    return f'{base_name(case)}: {case.get("fail_phase")}: {lines[0] if lines else ""}'


def acceptance_spec(cases):
    """The partition's acceptance specification the checks recorded (merged)."""
    spec = {}
    for case in cases:
        spec.update(case.get('acceptance_spec') or {})
    return spec
