"""`clusterbench replay`: re-judge stored outputs against today's references.

Nothing is re-run. For every test case of a stored session, the benchmark's
own output is parsed and verified again by the check's parser, and the
figures are judged against the references now in reference_data/<system>/.

A report is data, never code: the parser is chosen from :data:`PARSERS` by the
test's class name (whatever a report's ``replay_parser`` says is ignored), and
only files inside the session directory are read.
"""

import os

from clusterbench.core import disturbance, inputfile
from clusterbench.core.errors import ClusterbenchError
from clusterbench.core.reference import Reference
from clusterbench.judging import verdict
from clusterbench.parsers import cgsolver, hpcc
from clusterbench.references import lookup as reflookup
from clusterbench.results import guide, judgedsession, retries, runreport
from clusterbench.results.runreport import Failure, Figure, Origin

#: The checks whose stored outputs can be verified again: class name -> the
#: parser module (``replay_file(case)`` names the benchmark's output file,
#: ``replay(text, case, path)`` verifies its text and returns its figures).
PARSERS = {
    'HPCCCheck': hpcc,
    'CGSolverCheck': cgsolver,
}


def find_report(path):
    """The report of *path*, a report or a session directory. Anything there
    that is not a directory is the report, for runreport.load to read or to
    refuse in its line (a FIFO, a device, a file too big)."""
    if not os.path.isdir(path) and os.path.lexists(path):
        return path
    candidate = os.path.join(path, 'report.json')
    if os.path.lexists(candidate):
        return candidate
    raise ClusterbenchError(
        f'{path}: no report.json (give a session directory of results/ or a '
        f'ReFrame JSON report)'
    )


def _inside(path, root):
    """*path* resolved (symbolic links too) if it lies under *root*, else None."""
    real = os.path.realpath(path)
    return real if os.path.commonpath([real, root]) == root else None


def output_directory(case, parser, root):
    """The directory under *root* holding the case's stored output, or a
    Failure reason. ReFrame copies a passed test's files to its output
    directory but leaves a failed (e.g. FLAGGED) test's files in its stage
    directory, so both are looked at, in that order."""
    outside = []
    for key in ('outputdir', 'stagedir'):
        directory = case.get(key)
        if not directory:
            continue
        directory = os.path.join(root, directory)  # a relative one is the session's
        name = os.path.join(directory, parser.replay_file(case))
        if _inside(directory, root) is None or _inside(name, root) is None:
            outside.append(f'{key} {directory}')
        elif os.path.isfile(name):
            return os.path.realpath(directory), None
    if outside:
        return None, (
            f'not read: {", ".join(outside)} is outside the session directory {root}'
        )
    return None, (
        f'stored output {parser.replay_file(case)} found in neither outputdir '
        f'nor stagedir'
    )


def replay(path, references, threshold=verdict.DETECTION_THRESHOLD, notes=None):
    """The verdict table of a stored session re-judged against *references*;
    *notes* (a list), when given, gets the guidance of a machine that has no
    references (results.guide). A session's confirmation runs are replayed
    with it, their figures pooled with the first run's (judgedsession)."""
    main = find_report(path)
    loaded = judgedsession.Loaded([], [], [], [], [])
    for report in judgedsession.session_reports([main]):
        _replay_report(report, references, loaded)
    if not loaded.figures and not loaded.failures and not loaded.portable:
        raise ClusterbenchError(f'{main}: no replayable test case')
    judged, table = judgedsession.judge(loaded, threshold=threshold)
    if notes is not None:
        notes += guide.lines(judged, loaded.cases, references)
    return table


def _replay_report(report, references, loaded):
    """Add the figures of the stored outputs of *report* to *loaded*."""
    data = runreport.load(report)
    runreport.require_cases(data, report)
    root = os.path.realpath(os.path.dirname(os.path.abspath(report)))
    figures, failures, cache = [], [], {}
    cases = runreport.cases(data, report)
    index = runreport.case_index(cases)
    # A failed attempt that a retry (--max-retries) replaced is not replayed.
    tries = retries.attempts(data)
    for case in cases:
        if case.get('fixture') or retries.superseded(tries, case):
            continue
        ident = (case['name'], case['system'], case['partition'], case['environ'])
        check = case['name'].split()[0]
        parser = PARSERS.get(check)
        if parser is None:
            if case.get('replay_parser'):
                reason = (
                    f"no replay parser for {check} (the report's replay_parser "
                    f'{str(case["replay_parser"])[:60]!r} is not used)'
                )
                failures.append(Failure(*ident, 'replay', reason))
            continue
        if case.get('result') in ('skip', 'fail_deps'):
            # Never ran, so nothing to replay: skipped with its reason, as
            # `compare` shows it, not a failure to find its output.
            failures.append(Failure(*ident, *runreport.not_run(case, index)))
            continue
        if not isinstance(case.get('num_tasks'), int):
            failures.append(Failure(*ident, 'replay', 'the report has no num_tasks'))
            continue
        directory, problem = output_directory(case, parser, root)
        if directory is None:
            failures.append(Failure(*ident, 'replay', problem))
            continue
        output = os.path.join(directory, parser.replay_file(case))
        try:
            # A FIFO or a device there must not hang the replay, nor
            # /dev/zero fill the memory: the reader refuses them.
            text = inputfile.read_bytes(output).decode(errors='replace')
        except OSError as err:
            failures.append(Failure(*ident, 'replay', f'{output}: {err.strerror}'))
            continue
        except ClusterbenchError as err:
            failures.append(Failure(*ident, 'replay', str(err)))
            continue
        try:
            found = parser.replay(text, case, output)
        except ClusterbenchError as err:
            failures.append(Failure(*ident, 'sanity', str(err)))
            continue
        try:
            refs = reflookup.references_for(case, references, cache)
        except reflookup.OutsideDirectory as err:
            failures.append(Failure(*ident, 'replay', str(err)))
            continue
        for name, (value, unit) in found.items():
            ref = refs.get(name)
            figures.append(
                Figure(
                    *ident,
                    name,
                    value,
                    unit,
                    Reference(*ref[:3], unit) if ref else None,
                    None,
                    disturbed=disturbance.read(case) or None,
                    origin=retries.noted(Origin(), tries, case)
                    if id(case) in tries
                    else None,
                )
            )
    judgedsession.add(loaded, data, report, figures=figures, failures=failures)
