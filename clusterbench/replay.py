"""`clusterbench replay`: re-judge stored outputs against today's references.

Nothing is re-run. For every test case of a stored session, the benchmark's
own output is parsed and verified again by the check's parser, and the
figures are judged against the references now in reference_data/.
"""

import importlib
import os

from clusterbench import reflookup, runreport, verdict
from clusterbench.errors import ClusterbenchError
from clusterbench.runreport import Failure, Figure


def find_report(path):
    if os.path.isfile(path):
        return path
    candidate = os.path.join(path, 'report.json')
    if os.path.isfile(candidate):
        return candidate
    raise ClusterbenchError(
        f'{path}: no report.json (give a session directory of results/ or a '
        f'ReFrame JSON report)'
    )


def _parser(spec, case):
    module, _, func = spec.partition(':')
    try:
        return getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError):
        raise ClusterbenchError(
            f'{case["name"]}: unknown output parser {spec!r}'
        ) from None


def replay(path, references):
    report = find_report(path)
    data = runreport.load(report)
    figures, failures, cache = [], [], {}
    for case in runreport.cases(data, report):
        spec = case.get('replay_parser')
        if case.get('fixture') or not spec:
            continue
        ident = (case['name'], case['system'], case['partition'], case['environ'])
        directory = next(
            (
                d
                for d in (case.get('outputdir'), case.get('stagedir'))
                if d and os.path.isdir(d)
            ),
            None,
        )
        if directory is None:
            failures.append(Failure(*ident, 'replay', 'stored outputs not found'))
            continue
        try:
            found = _parser(spec, case)(directory, case)
        except ClusterbenchError as err:
            failures.append(Failure(*ident, 'sanity', str(err)))
            continue
        refs = reflookup.references_for(case, references, cache)
        for name, (value, unit) in found.items():
            ref = refs.get(name)
            figures.append(
                Figure(
                    *ident,
                    name,
                    value,
                    unit,
                    *(ref[:3] if ref else (None, None, None)),
                    None,
                    disturbed=case.get('disturbed') or None,
                )
            )
    if not figures and not failures:
        raise ClusterbenchError(f'{report}: no replayable test case')
    return verdict.rows(verdict.group(figures), failures)
