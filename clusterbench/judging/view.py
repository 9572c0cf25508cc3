"""The verdict table for a person (fits the terminal) and for CI (JUnit XML).

Both take the rows of :func:`clusterbench.judging.verdict.rows` (full test names; csv
and json print those rows as they are). The person's table:

- one line per check first (its test cases and verdict counts), then its
  per-figure rows: all of them with ``verbose``, otherwise only those that are
  not ``pass``;
- test names shortened to the check and the parameters that vary among its
  tests in this table;
- skipped tests grouped one line per reason (each with ``show_all``);
- failure reasons listed in full below the table, wrapped;
- cells shortened with ``…`` until the table fits the terminal's width.
"""

import re
import shutil
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections import Counter

from clusterbench.judging import verdict

_PARAM = re.compile(r'\s+%([.\w$]+)=(\S+)')

#: Table columns that may be shortened to fit, and their narrowest.
_SHRINKABLE = {'test': 24, 'verdict': 12, 'variable': 14, 'environment': 11}
#: Columns left out, in this order, of a table still too wide for a narrow
#: terminal (csv and json have them all).
_DROPPABLE = ('n', 'allowed range', 'partition', 'unit')

#: The width of output that does not go to a terminal (a pipe, a file, CI logs).
DEFAULT_WIDTH = 160


def terminal_width():
    """The terminal's width, or DEFAULT_WIDTH when stdout is no terminal (an
    inherited COLUMNS describes some other terminal then)."""
    if sys.stdout.isatty():
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


def split_name(name):
    """('CGSolverCheck', {'stencil': '7', ...}) of a ReFrame test name."""
    base = name.split()[0] if name.split() else name
    return base, dict(_PARAM.findall(name))


def short_names(names):
    """{full name: check + only the parameters that vary among its tests}."""
    params = {}
    for name in names:
        base, values = split_name(name)
        params.setdefault(base, {})[name] = values
    short = {}
    for base, tests in params.items():
        keys = []
        for values in tests.values():
            keys += [k for k in values if k not in keys]
        varying = [
            k for k in keys if len({values.get(k) for values in tests.values()}) > 1
        ]
        for name, values in tests.items():
            kept = [f'{k.split(".")[-1]}={values[k]}' for k in varying if k in values]
            short[name] = ' '.join([base, *kept])
    if len(set(short.values())) < len(short):
        return {name: name for name in short}
    return short


def _counts(rows):
    counts = Counter(verdict.kind(row[-1]) for row in rows)
    order = [*verdict.SUMMARY_ORDER, verdict.SKIPPED]
    words = sorted(counts, key=lambda w: order.index(w) if w in order else len(order))
    return ', '.join(f'{counts[word]} {word}' for word in words)


def _cell(row):
    """The verdict cell: the hint for FASTER, the phase only for FAILED."""
    text = row[-1]
    if verdict.kind(text) == verdict.FASTER:
        return f'{verdict.FASTER} ({verdict.FASTER_HINT})'
    if verdict.kind(text) == verdict.FAILED:
        return text.split(':', 1)[0]
    return text


def _fit(widths, width):
    """Narrow the shrinkable columns (widest first) until the table fits, and
    leave columns out where that is not enough."""
    widths = dict(widths)

    def excess():
        return sum(widths.values()) + 2 * (len(widths) - 1) - width

    shortest = sum(min(w, _SHRINKABLE.get(c, w)) for c, w in widths.items())
    for col in _DROPPABLE:
        if shortest + 2 * (len(widths) - 1) <= width:
            break
        shortest -= widths.pop(col)
    excess = excess()
    while excess > 0:
        room = {
            col: widths[col] - low
            for col, low in _SHRINKABLE.items()
            if widths[col] > low
        }
        if not room:
            break
        col = max(room, key=lambda c: widths[c])
        cut = min(excess, room[col])
        widths[col] -= cut
        excess -= cut
    return widths


def _clip(text, width):
    return text if len(text) <= width else text[: max(width - 1, 0)] + '…'


def format_table(table, verbose=False, show_all=False, width=None):
    width = width or terminal_width()
    short = short_names(dict.fromkeys(row[0] for row in table))
    judged = [row for row in table if verdict.kind(row[-1]) != verdict.SKIPPED]
    skipped = [row for row in table if verdict.kind(row[-1]) == verdict.SKIPPED]

    checks = {}
    for row in judged:
        checks.setdefault(split_name(row[0])[0], []).append(row)
    shown = []
    for check, rows in checks.items():
        cases = len({row[:3] for row in rows})
        title = f'{check}: {cases} test case{"s" * (cases != 1)}: {_counts(rows)}'
        shown.append(title)
        for row in rows:
            if verbose or verdict.kind(row[-1]) != verdict.PASS:
                shown.append((short[row[0]], *row[1:-1], _cell(row)))

    cells = [r for r in shown if isinstance(r, tuple)]
    widths = {c: len(c) for c in verdict.COLUMNS}
    for row in cells:
        for col, cell in zip(verdict.COLUMNS, row):
            widths[col] = max(widths[col], len(str(cell)))
    widths = _fit(widths, width)

    def line(row):
        text = '  '.join(
            _clip(str(cell), widths[col]).ljust(widths[col])
            for col, cell in zip(verdict.COLUMNS, row)
            if col in widths
        )
        return text.rstrip()

    lines = []
    if cells:
        lines += [line(verdict.COLUMNS), '  '.join('-' * widths[c] for c in widths)]
    for entry in shown:
        lines.append(line(entry) if isinstance(entry, tuple) else _clip(entry, width))

    if skipped:
        lines += ['', 'Skipped:']
        if show_all:
            for row in skipped:
                where = f'{short[row[0]]} on {row[1]} with {row[2]}'
                lines += _wrapped(f'{where}: {_reason(row)}', width)
        else:
            reasons = {}
            for row in skipped:
                reasons.setdefault(_reason(row), []).append(row)
            for reason, rows in reasons.items():
                bases = dict.fromkeys(split_name(row[0])[0] for row in rows)
                what = ', '.join(bases)
                n = len(rows)
                lines += _wrapped(f'{n} {what} test{"s" * (n != 1)}: {reason}', width)
            lines.append('  (--all lists each skipped test)')

    failed = [row for row in judged if verdict.kind(row[-1]) == verdict.FAILED]
    if failed:
        lines += ['', 'Failures:']
        for row in failed:
            lines += _wrapped(
                f'{short[row[0]]} on {row[1]} with {row[2]}: {row[-1]}', width
            )
    return '\n'.join(lines)


def _reason(row):
    return row[-1].split(':', 1)[1].strip() if ':' in row[-1] else row[-1]


def _wrapped(text, width):
    return textwrap.wrap(
        text, width, initial_indent='  ', subsequent_indent='      '
    ) or ['']


def format_junit(table, strict=False):
    """JUnit XML: one testsuite per check, one testcase per figure (and one per
    test that failed or was skipped before recording any). Regressions and
    failures are ``<failure>``; no reference, FASTER, DISTURBED and
    INCONCLUSIVE are failures only when *strict*, otherwise noted in
    ``system-out``; so is a table that measured nothing (all skipped)."""
    suites = {}
    for row in table:
        suites.setdefault(split_name(row[0])[0], []).append(row)
    root = ET.Element('testsuites', name='clusterbench')
    totals = Counter()
    for check, rows in suites.items():
        suite = ET.SubElement(root, 'testsuite', name=check)
        counts = Counter()
        for row in rows:
            test, where, environ, variable, value, n, unit, ref, allowed, text = row
            word = verdict.kind(text)
            case = ET.SubElement(
                suite,
                'testcase',
                classname=f'{test} [{where}] [{environ}]',
                name=variable if variable != '-' else word.lower(),
            )
            counts['tests'] += 1
            detail = f'{value} {unit} (n={n}), reference {ref}, allowed {allowed}'
            detail += f': {text}'
            if word == verdict.SKIPPED:
                ET.SubElement(case, 'skipped', message=_reason(row))
                counts['skipped'] += 1
            elif word in verdict.REGRESSIONS or (
                strict and word in verdict.STRICT_ONLY
            ):
                failure = ET.SubElement(case, 'failure', type=word, message=text)
                failure.text = detail
                counts['failures'] += 1
            else:
                ET.SubElement(case, 'system-out').text = detail
        for key in ('tests', 'failures', 'skipped'):
            suite.set(key, str(counts[key]))
        totals.update(counts)
    if strict and verdict.nothing_measured(table):
        # The exit code (3) fails the gate; say why where CI shows the tests.
        suite = ET.SubElement(
            root, 'testsuite', name='clusterbench', tests='1', failures='1', skipped='0'
        )
        case = ET.SubElement(suite, 'testcase', classname='clusterbench', name='run')
        why = f'nothing measured ({_counts(table) or "no figure"})'
        ET.SubElement(case, 'failure', type='nothing measured', message=why)
        totals.update(tests=1, failures=1)
    for key in ('tests', 'failures', 'skipped'):
        root.set(key, str(totals[key]))
    for element in root.iter():
        element.text = element.text and _xml_text(element.text)
        for key, value in element.attrib.items():
            element.set(key, _xml_text(value))
    ET.indent(root)
    return ET.tostring(root, encoding='unicode', xml_declaration=True)


#: What XML 1.0 cannot hold, escaped or not: the control characters but tab,
#: newline and CR, surrogates (ElementTree writes them raw, and then no parser
#: reads the file).
_NOT_XML = re.compile(r'[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')


def _xml_text(text):
    """*text* with what XML cannot hold written as ``\\x01``: the name of a
    test stays recognisable, and the JUnit file parses."""
    return _NOT_XML.sub(lambda m: m.group().encode('unicode_escape').decode(), text)


FORMATS = ('table', 'csv', 'json', 'junit')


def render(
    table, fmt='table', strict=False, verbose=False, show_all=False, not_loaded=()
):
    """The verdicts in *fmt*; a table ends with the counts (and the checks
    that did not load, which fail a run) and what --strict makes of them."""
    if fmt == 'csv':
        return verdict.format_csv(table)
    if fmt == 'json':
        return verdict.format_json(table)
    if fmt == 'junit':
        return format_junit(table, strict)
    summary = verdict.summary(table)
    if not_loaded:
        summary += f', {len(not_loaded)} not loaded'
    text = format_table(table, verbose, show_all) + f'\n\n{summary}'
    text += ''.join(f'\nnot loaded: {line}' for line in not_loaded)
    findings = _counts(verdict.strict_findings(table))
    if verdict.nothing_measured(table):
        findings = f'nothing measured ({_counts(table) or "no figure"})'
    if findings:
        effect = 'fail this run' if strict else 'would fail with --strict'
        text += f'\n{findings}: {effect} (exit {verdict.EXIT_STRICT})'
    return text
