"""A stored session judged: its report and its confirmation runs' reports
(``<session>/confirm/*/report.json``) turned into one verdict table.

`run` (after its confirmation runs), `compare`, `replay` and `report` all
judge a session here, so that each figure has one verdict in all of them, in
every format (docs/verdicts.md). The confirmation runs are part of the
session: given its ``report.json`` or its directory, they are found and
pooled without being named.
"""

import dataclasses
import glob
import os

from clusterbench.core.errors import ClusterbenchError
from clusterbench.judging import verdict
from clusterbench.references import lookup as reflookup
from clusterbench.results import portable, runreport

#: The name of a session's report in its directory (`clusterbench run`).
REPORT = 'report.json'
#: Where a session keeps its confirmation runs' reports, beside its report.
CONFIRMATIONS = os.path.join('confirm', '*', REPORT)


def report_of(path):
    """The report of *path*: a report, or a session directory's report.json."""
    if not os.path.isdir(path) or os.path.basename(path) == REPORT:
        return path  # runreport.load reads it or refuses it in its line
    candidate = os.path.join(path, REPORT)
    if not os.path.lexists(candidate):
        raise ClusterbenchError(f'{path}: directory without {REPORT}')
    return candidate


def confirmations(report):
    """The reports of the confirmation runs of the session whose report is
    *report* (none unless it is a session's ``report.json``)."""
    if os.path.basename(report) != REPORT:
        return []
    found = glob.glob(os.path.join(os.path.dirname(report), CONFIRMATIONS))
    return sorted(p for p in found if os.path.isfile(p))


def session_reports(paths):
    """The reports of *paths* (reports or session directories), each followed
    by its confirmation runs' reports; a report named twice counts once."""
    found, seen = [], set()
    for path in paths:
        report = report_of(path)
        for one in [report, *confirmations(report)]:
            real = os.path.realpath(one)
            if real not in seen:
                seen.add(real)
                found.append(one)
    return found


@dataclasses.dataclass
class Loaded:
    """What the reports of sessions hold for their verdicts."""

    figures: list
    failures: list
    #: Portable figures: each judged against its band (results.portable).
    portable: list
    #: Their test cases, fixtures left out.
    cases: list
    #: The reports read, confirmation runs' included.
    reports: list


def load(paths, references=None, keep_recorded=False):
    """The figures of the sessions at *paths* and of their confirmation runs,
    re-judged against *references* when given (else as recorded)."""
    loaded = Loaded([], [], [], [], [])
    for path in session_reports(paths):
        data = runreport.load(path)
        runreport.require_cases(data, path)
        if references:
            reflookup.rejudge(data, references)
        add(loaded, data, path, keep_recorded)
    return loaded


def add(loaded, data, path, keep_recorded=False, figures=None, failures=None):
    """Add the report *data* read from *path* to *loaded*; *figures* and
    *failures*, when given, are its figures found otherwise (a replay's)."""
    if figures is None:
        figures, failures = runreport.extract(data, path)
    figures, derived = portable.split(data, path, figures, keep_recorded)
    loaded.figures += figures
    loaded.failures += failures
    loaded.portable += derived
    loaded.cases += [c for c in runreport.cases(data, path) if not c.get('fixture')]
    loaded.reports.append(path)
    return loaded


def judge(loaded, baseline=None, tolerance=0.05,
          threshold=verdict.DETECTION_THRESHOLD):  # fmt: skip
    """(the figures judged against their references, the verdict table):
    every sample of a figure, first run and confirmation runs, pooled into
    one row; a portable figure judged against its band."""
    judged = verdict.group(
        loaded.figures, baseline, tolerance=tolerance, threshold=threshold
    )
    table = verdict.rows(judged + portable.judge(loaded.portable), loaded.failures)
    return judged, table


def verdicts(table):
    """{(test, system, partition, environ, variable): Verdict} of a table's
    figures: what every other view of the session says of them."""
    found = {}
    for r in table:
        if r.variable is None:
            continue
        key = (r.test, r.system, r.partition, r.environ, r.variable)
        # One figure in rows of several runs (a DISTURBED session beside a
        # healthy one): the judged row speaks for it, never the left-out one.
        if key not in found or verdict.kind(found[key]) == verdict.DISTURBED:
            found[key] = r.verdict
    return found
