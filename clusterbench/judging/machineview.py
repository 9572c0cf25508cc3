"""The verdicts for machines: CSV (the table's cells, full test names),
JSON (numbers at full precision, the verdict as kind and detail, where and
when each figure was measured) and JUnit XML (for a CI). See
:mod:`clusterbench.judging.view` for the person's table; both read the rows
of :func:`clusterbench.judging.verdict.rows` and share the text of a row
(:mod:`clusterbench.judging.rowtext`).
"""

import datetime
import io
import math
import xml.etree.ElementTree as ET
from collections import Counter

from clusterbench.core import csvfile, jsontext
from clusterbench.core.controlchars import xml_text
from clusterbench.judging import rowtext, verdict
from clusterbench.judging.rowtext import CSV_COLUMNS, cells, split_name, text


def format_csv(table):
    out = io.StringIO()
    writer = csvfile.writer(out, lineterminator='\n')
    writer.writerow(CSV_COLUMNS)
    for row in table:
        shown = cells(row)
        writer.writerow([shown[c] for c in CSV_COLUMNS])
    return out.getvalue().rstrip('\n')


def _one_or_all(values):
    """A value all origins share, a list where they differ, None if none."""
    found = list(dict.fromkeys(v for v in values if v not in ('', (), None)))
    if not found:
        return None
    return found[0] if len(found) == 1 else found


def record(row):
    """One row as a JSON object: numbers as numbers, the verdict as kind and
    detail, and where and when it was measured (``session``, ``timestamp``,
    ``host``, ``nodes``, ``cpu_kind``, ``cpu_model``: a value, or a list when
    the figure pooled samples that differ in it)."""
    origins = row.origins
    return {
        'test': row.test,
        'system': row.system,
        'partition': row.partition,
        'environment': row.environ,
        'variable': row.variable,
        'value': row.value,
        'samples': list(row.values),
        'n': row.n,
        'unit': row.unit or None,
        'reference': row.reference,
        'allowed_low': _finite(row.low),
        'allowed_high': _finite(row.high),
        'verdict': {
            'kind': str(row.kind),
            'detail': row.verdict.detail,
            **({'phase': row.phase} if row.phase else {}),
        },
        'fails': 'run'
        if row.kind.fails_run
        else 'strict'
        if row.kind.fails_strict
        else None,
        'session': _one_or_all(o.session for o in origins),
        'timestamp': _one_or_all(o.timestamp for o in origins),
        'host': _one_or_all(o.host for o in origins),
        'nodes': _one_or_all(o.nodes for o in origins),
        'cpu_kind': _one_or_all(o.cpu_kind for o in origins),
        'cpu_model': _one_or_all(o.cpu_model for o in origins),
        # What a first attempt ended as, when a ReFrame retry counts instead.
        'retried_after': _one_or_all(getattr(o, 'retried_after', '') for o in origins),
    }


def _finite(value):
    # JSON has no infinity: an open side of the band is null.
    return value if value is not None and math.isfinite(value) else None


def format_json(table):
    return jsontext.dumps([record(row) for row in table], indent=1)


def _junit_time(origins):
    return sum(o.seconds for o in origins if o.seconds is not None)


def _shares(table):
    """{id(row): seconds}: each test case's time split evenly over the rows
    that carry it (its figures), so that the rows add up to it once."""
    carriers = Counter(o for row in table for o in row.origins)
    return {
        id(row): sum(
            o.seconds / carriers[o] for o in row.origins if o.seconds is not None
        )
        for row in table
    }


def _outside(table):
    """The sessions' time that no test case accounts for (fixtures that fetch
    and build, ReFrame's own work), or None where no session says its time.
    Test cases run side by side (a batch partition) may sum to more than
    their session: then nothing is outside."""
    origins = {o for row in table for o in row.origins}
    sessions = {}
    for origin in origins:
        if getattr(origin, 'session_seconds', None) is not None:
            sessions[origin.session or origin.timestamp] = origin.session_seconds
    if not sessions:
        return None
    return max(sum(sessions.values()) - _junit_time(origins), 0.0)


def _junit_timestamp(origins):
    """The earliest session start as JUnit wants it: UTC, no zone."""
    stamps = []
    for origin in origins:
        try:
            when = datetime.datetime.fromisoformat(origin.timestamp)
        except ValueError:
            continue
        if when.tzinfo is not None:
            when = when.astimezone(datetime.UTC).replace(tzinfo=None)
        stamps.append(when)
    return min(stamps).strftime('%Y-%m-%dT%H:%M:%S') if stamps else None


def _classname(row):
    # Jenkins reads a dot in a class name as a package separator: a fixture's
    # parameter (%npb_binaries.benchmark) or a version would split the test.
    return f'{row.test} [{row.where}] [{row.environ}]'.replace('.', '_')


def format_junit(table, strict=False):
    """JUnit XML: one testsuite per check, one testcase per figure (and one per
    test that failed or was skipped before recording any), each with its
    share of the ``time`` of the ReFrame test case that measured it (split
    evenly over the test case's figures: they add up to it once, as the
    suite's ``time`` does); the session's time outside its test cases
    (fixtures, ReFrame's own work) is one passed testcase of a suite
    ``clusterbench``, so that a CI's sum of the durations is the session's.
    A suite has the session's ``timestamp`` (UTC) and ``hostname`` and the
    CPU identity as properties.

    What fails: regressions and failures are ``<failure>``; no reference,
    FASTER, INCONCLUSIVE and DISTURBED are failures only when *strict*,
    otherwise no reference, FASTER and INCONCLUSIVE are noted in
    ``system-out`` and a DISTURBED figure is ``<skipped>`` (measured, not
    judged: a fully disturbed run shows as all skipped, never as passed); so
    is a table that measured nothing (all skipped) a failure when *strict*.
    """
    suites = {}
    for row in table:
        suites.setdefault(split_name(row.test)[0], []).append(row)
    root = ET.Element('testsuites', name='clusterbench')
    totals = Counter()
    shares = _shares(table)
    for check, rows in suites.items():
        suite = ET.SubElement(root, 'testsuite', name=check)
        origins = list(dict.fromkeys(o for row in rows for o in row.origins))
        _suite_identity(suite, origins)
        counts = Counter()
        for row in rows:
            word = row.kind
            case = ET.SubElement(
                suite,
                'testcase',
                classname=_classname(row),
                name=row.variable if row.variable is not None else str(word).lower(),
                time=f'{shares[id(row)]:.3f}',
            )
            counts['tests'] += 1
            shown = cells(row)
            detail = (
                f'{shown["value"]} {shown["unit"]} (n={shown["n"]}), reference '
                f'{shown["reference"]} ({shown["vs ref"]}), allowed '
                f'{shown["allowed range"]}: {text(row)}'
            )
            if word == verdict.SKIPPED:
                ET.SubElement(case, 'skipped', message=row.verdict.detail)
                counts['skipped'] += 1
            elif word.fails_run or (strict and word.fails_strict):
                failure = ET.SubElement(
                    case, 'failure', type=str(word), message=text(row)
                )
                failure.text = detail
                counts['failures'] += 1
            elif word == verdict.DISTURBED:
                ET.SubElement(case, 'skipped', message=f'{text(row)}: not judged')
                ET.SubElement(case, 'system-out').text = detail
                counts['skipped'] += 1
            else:
                ET.SubElement(case, 'system-out').text = detail
        suite.set('time', f'{_junit_time(origins):.3f}')
        for key in ('tests', 'failures', 'skipped'):
            suite.set(key, str(counts[key]))
        suite.set('errors', '0')
        totals.update(counts)
        totals['time'] += _junit_time(origins)
    outside = _outside(table)
    if outside is not None:
        _outside_suite(root, outside)
        totals.update(tests=1)
        totals['time'] += outside
    if strict and verdict.nothing_measured(table):
        # The exit code (3) fails the gate; say why where CI shows the tests.
        suite = ET.SubElement(
            root, 'testsuite', name='clusterbench', tests='1', failures='1', skipped='0'
        )
        case = ET.SubElement(suite, 'testcase', classname='clusterbench', name='run')
        why = f'nothing measured ({rowtext.counts(table) or "no figure"})'
        ET.SubElement(case, 'failure', type='nothing measured', message=why)
        totals.update(tests=1, failures=1)
    for key in ('tests', 'failures', 'skipped'):
        root.set(key, str(totals[key]))
    root.set('time', f'{totals["time"]:.3f}')
    for element in root.iter():
        element.text = element.text and xml_text(element.text)
        for key, value in element.attrib.items():
            element.set(key, xml_text(value))
    ET.indent(root)
    return ET.tostring(root, encoding='unicode', xml_declaration=True)


def _outside_suite(root, seconds):
    """The session's time outside its test cases, as a passed testcase: a
    CI sums testcases, and this time was spent on the run all the same."""
    suite = ET.SubElement(
        root, 'testsuite', name='clusterbench', tests='1', failures='0',
        skipped='0', errors='0', time=f'{seconds:.3f}',
    )  # fmt: skip
    case = ET.SubElement(
        suite, 'testcase', classname='clusterbench',
        name='session outside its test cases', time=f'{seconds:.3f}',
    )  # fmt: skip
    ET.SubElement(case, 'system-out').text = (
        "ReFrame's session time that no test case accounts for: its fixtures "
        '(fetching and building sources) and its own work between test cases'
    )


def _suite_identity(suite, origins):
    """timestamp, hostname and the identity of a suite's sessions and CPUs."""
    stamp = _junit_timestamp(origins)
    if stamp:
        suite.set('timestamp', stamp)
    host = _one_or_all(o.host for o in origins)
    if host:
        suite.set('hostname', host if isinstance(host, str) else ' '.join(host))
    properties = None
    for key in ('session', 'cpu_kind', 'cpu_model'):
        for value in dict.fromkeys(getattr(o, key) for o in origins):
            if value:
                if properties is None:
                    properties = ET.SubElement(suite, 'properties')
                ET.SubElement(properties, 'property', name=key, value=value)
