"""How verdicts are shown: the table for a person (fits the terminal), CSV,
JSON and JUnit XML for machines. The only place a verdict becomes text.

All take the rows of :func:`clusterbench.judging.verdict.rows`. The person's
table:

- columns whose cell is the same on every row (partition, environment, n,
  unit) said once above the table, not on each row;
- one line per check first (its test cases and verdict counts), then its
  per-figure rows: all of them with ``verbose``, otherwise only those that are
  not ``pass`` or passed in a retry (``pass (retried after TIMEOUT)``), and
  its INCONCLUSIVE ones said in one line
  (:mod:`clusterbench.judging.inconclusive`) and its DISTURBED ones in one
  line per reason (a check all DISTURBED for one reason: one line in all);
- test names shortened to the check and the parameters that vary among its
  tests in this table, and never cut: those parameters are what tells two
  rows apart;
- ``vs ref``: the value against what it was judged against, in % (in points
  of the whole for a share);
- skipped tests grouped one line per reason (each with ``show_all``);
- failure reasons listed in full below the table, wrapped;
- a verdict never cut: one too long for its column is its kind and a note's
  number (``DISTURBED [1]``), the note said once, whole, below the table;
- other cells shortened with ``…`` until the table fits the terminal's width;
- the summary line last.

Text from a report (test names, reasons) reaches the table with its
control characters escaped (``\\x1b``), never raw to a terminal.

CSV keeps the table's text cells (full test names); JSON gives numbers as
numbers at full precision and the verdict as ``{"kind", "detail"}``, with
where and when each figure was measured; JUnit fails a figure by its kind.
"""

import shutil
import sys
import textwrap
from collections import Counter

from clusterbench.core.controlchars import escaped, escaped_lines
from clusterbench.judging import inconclusive, machineview, verdict
from clusterbench.judging.rowtext import (
    COLUMNS,
    SUMMARY_ORDER,
    cells,
    counts,
    retried,
    split_name,
    text,
)

#: Columns said once above the table when every row has the same cell.
_CONSTANT = ('partition', 'environment', 'n', 'unit')
#: Table columns that may be shortened to fit, and their narrowest (never
#: the test: its parameters tell the rows apart).
_SHRINKABLE = {'verdict': 12, 'variable': 14, 'environment': 11}
#: Columns left out, in this order, of a table still too wide for a narrow
#: terminal (csv and json have them all).
_DROPPABLE = ('n', 'allowed range', 'partition', 'unit')

#: The width of output that does not go to a terminal (a pipe, a file, CI logs).
DEFAULT_WIDTH = 160


def band(lower, upper):
    """``±11 %``, ``-4 %/+19 %`` or ``-5 %/+∞``: a band's relative
    tolerances (None: no bound on that side)."""
    if lower is not None and upper is not None and -lower == upper:
        return f'±{percent(upper)}'

    def one(value, infinite):
        return infinite if value is None else f'{value:+.0%}'.replace('%', ' %')

    return f'{one(lower, "-∞")}/{one(upper, "+∞")}'


def percent(value, digits=0):
    """``11 %``: a fraction as a percentage."""
    return f'{value:.{digits}%}'.replace('%', ' %')


def summary(table):
    """``3 pass, 1 SLOWER, 0 no reference, 0 FAILED``: pass, no reference and
    FAILED always, the other verdicts where they occur."""
    counts = Counter(row.kind for row in table)
    always = (verdict.PASS, verdict.NO_REFERENCE, verdict.FAILED)
    line = ', '.join(
        f'{counts[k]} {k}' for k in SUMMARY_ORDER if k in always or counts[k]
    )
    skipped = counts[verdict.SKIPPED]
    return line + (f', {skipped} {verdict.SKIPPED}' if skipped else '')


def terminal_width():
    """The terminal's width, or DEFAULT_WIDTH when stdout is no terminal (an
    inherited COLUMNS describes some other terminal then)."""
    if sys.stdout.isatty():
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


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


def _cell(row):
    """The verdict cell: the hint for FASTER, the phase only for FAILED."""
    if row.kind == verdict.FASTER:
        return f'{verdict.FASTER} ({verdict.FASTER_HINT})'
    if row.kind == verdict.FAILED:
        return f'{verdict.FAILED} ({row.phase})'
    return text(row)


def _fit(widths, width, verdicts=()):
    """Narrow the shrinkable columns (widest first) until the table fits, and
    leave columns out where that is not enough. The verdict column keeps
    room for the shortest form of *verdicts* (the cells): its kind and a
    note's number (_notes)."""
    widths = dict(widths)
    distinct = len(set(verdicts))
    floors = {
        **_SHRINKABLE,
        'verdict': max(
            [_SHRINKABLE['verdict']]
            + [len(f'{cell.split(" (")[0]} [{distinct}]') for cell in verdicts]
        ),
    }

    def excess():
        return sum(widths.values()) + 2 * (len(widths) - 1) - width

    shortest = sum(min(w, floors.get(c, w)) for c, w in widths.items())
    for col in _DROPPABLE:
        if shortest + 2 * (len(widths) - 1) <= width:
            break
        if col in widths:
            shortest -= widths.pop(col)
    excess = excess()
    while excess > 0:
        room = {
            col: widths[col] - low
            for col, low in floors.items()
            if col in widths and widths[col] > low
        }
        if not room:
            break
        col = max(room, key=lambda c: widths[c])
        cut = min(excess, room[col])
        widths[col] -= cut
        excess -= cut
    return widths


def _cases(rows):
    cases = len({(row.test, row.where, row.environ) for row in rows})
    return f'{cases} test case{"s" * (cases != 1)}'


def _figures(rows):
    return f'{len(rows)} figure{"s" * (len(rows) != 1)}'


def _disturbed(rows):
    """{reason: rows} of the DISTURBED *rows*: each reason said once."""
    found = {}
    for row in rows:
        if row.kind == verdict.DISTURBED:
            found.setdefault(row.verdict.detail, []).append(row)
    return found


def _notes(rows, widths):
    """A verdict cell too long for its column becomes its kind and a note's
    number (``DISTURBED [1]``); the notes, each once and whole, go below the
    table. Never cut: the reason is what the verdict rests on."""
    notes = {}
    for row in rows:
        cell = row['verdict']
        if len(cell) <= widths['verdict']:
            continue
        number = notes.setdefault(cell, len(notes) + 1)
        row['verdict'] = f'{cell.split(" (")[0]} [{number}]'
        widths['verdict'] = max(widths['verdict'], len(row['verdict']))
    return [f'[{n}] {cell}' for cell, n in notes.items()]


def _clip(text, width):
    return text if len(text) <= width else text[: max(width - 1, 0)] + '…'


def constant_columns(table):
    """{column: cell} of the _CONSTANT columns that read the same on every
    row of the table that has them (figures; partition and environment also
    on failed tests)."""
    found = {}
    rows = [row for row in table if row.kind != verdict.SKIPPED]
    figures = [row for row in rows if row.variable is not None]
    for col in _CONSTANT:
        having = figures if col in ('n', 'unit') else rows
        shown = {cells(row)[col] for row in having}
        if len(shown) == 1 and len(table) > 1:
            found[col] = shown.pop()
    return found


def format_table(table, verbose=False, show_all=False, width=None):
    width = width or terminal_width()
    short = short_names(dict.fromkeys(row.test for row in table))
    judged = [row for row in table if row.kind != verdict.SKIPPED]
    skipped = [row for row in table if row.kind == verdict.SKIPPED]
    constant = constant_columns(table)
    columns = [c for c in COLUMNS if c not in constant]

    checks = {}
    for row in judged:
        checks.setdefault(split_name(row.test)[0], []).append(row)
    shown = []
    for check, rows in checks.items():
        disturbed = {} if verbose else _disturbed(rows)
        if len(disturbed) == 1 and all(r.kind == verdict.DISTURBED for r in rows):
            # A check measured on a loaded host: one line, its reason whole.
            ((reason, group),) = disturbed.items()
            said = f'{check}: {_cases(group)}, {_figures(group)} DISTURBED: {reason}'
            shown += _wrapped(said, width, indent='')
            continue
        title = f'{check}: {_cases(rows)}: {counts(rows)}'
        shown.append(title)
        folded = '' if verbose else inconclusive.line(rows)
        if folded:
            shown += _wrapped(folded, width)
        for reason, group in disturbed.items():
            said = f'{_cases(group)}, {_figures(group)} DISTURBED: {reason}'
            shown += _wrapped(said, width)
        for row in rows:
            if folded and row.kind == verdict.INCONCLUSIVE:
                continue
            if disturbed and row.kind == verdict.DISTURBED:
                continue
            # A pass in a retry is shown: the first attempt did not pass.
            if verbose or row.kind != verdict.PASS or retried(row):
                found = cells(row)
                found.update(test=short[row.test], verdict=_cell(row))
                # Escaped before the widths are taken from them.
                found = {col: escaped(cell) for col, cell in found.items()}
                shown.append(found)

    rows = [r for r in shown if isinstance(r, dict)]
    widths = {c: len(c) for c in columns}
    for row in rows:
        for col in columns:
            widths[col] = max(widths[col], len(row[col]))
    widths = _fit(widths, width, [row['verdict'] for row in rows])
    notes = _notes(rows, widths) if 'verdict' in widths else []

    def line(row):
        return '  '.join(
            _clip(row[col], widths[col]).ljust(widths[col])
            for col in columns
            if col in widths
        ).rstrip()

    lines = []
    if constant and judged:
        said = ', '.join(f'{col} {cell}' for col, cell in constant.items())
        lines += _wrapped(f'every row: {said}', width, indent='')
    if rows:
        lines += [line({c: c for c in columns})]
        lines.append('  '.join('-' * widths[c] for c in columns if c in widths))
    for entry in shown:
        lines.append(
            line(entry) if isinstance(entry, dict) else _clip(escaped(entry), width)
        )
    if notes:
        lines += ['', 'Verdicts in full:']
        for note in notes:
            lines += _wrapped(note, width)

    if skipped:
        lines += ['', 'Skipped:']
        if show_all:
            for row in skipped:
                where = f'{short[row.test]} on {row.where} with {row.environ}'
                lines += _wrapped(f'{where}: {row.verdict.detail}', width)
        else:
            reasons = {}
            for row in skipped:
                reasons.setdefault(row.verdict.detail, []).append(row)
            for reason, rows in reasons.items():
                bases = dict.fromkeys(split_name(row.test)[0] for row in rows)
                what = ', '.join(bases)
                n = len(rows)
                lines += _wrapped(f'{n} {what} test{"s" * (n != 1)}: {reason}', width)
            lines.append('  (--all lists each skipped test)')

    failed = [row for row in judged if row.kind == verdict.FAILED]
    if failed:
        lines += ['', 'Failures:']
        for row in failed:
            lines += _wrapped(
                f'{short[row.test]} on {row.where} with {row.environ}: {text(row)}',
                width,
            )
    return '\n'.join(lines)


def _wrapped(text, width, indent='  '):
    # Escaped first: textwrap would turn a \r into a space, and keep an ESC.
    return textwrap.wrap(
        escaped(text), width, initial_indent=indent, subsequent_indent=indent + '    '
    ) or ['']


FORMATS = ('table', 'csv', 'json', 'junit')


def render(
    table,
    fmt='table',
    strict=False,
    verbose=False,
    show_all=False,
    not_loaded=(),
    details='',
):
    """The verdicts in *fmt*. A table is followed by *details* (what the
    session recorded besides its figures) and ends with the counts (and the
    checks that did not load, which fail a run) and what --strict makes of
    them: the last lines, where ``tail`` finds them."""
    if fmt == 'csv':
        return machineview.format_csv(table)
    if fmt == 'json':
        return machineview.format_json(table)
    if fmt == 'junit':
        return machineview.format_junit(table, strict)
    shown = format_table(table, verbose, show_all)
    if details:
        shown += f'\n\n{escaped_lines(details)}'
    return shown + '\n\n' + closing(table, strict, not_loaded)


def closing(table, strict=False, not_loaded=()):
    """The summary line, the checks that did not load and the --strict note."""
    line = summary(table)
    if not_loaded:
        line += f', {len(not_loaded)} not loaded'
    line += ''.join(f'\nnot loaded: {escaped(what)}' for what in not_loaded)
    findings = counts(verdict.strict_findings(table))
    if verdict.nothing_measured(table):
        findings = f'nothing measured ({counts(table) or "no figure"})'
    if findings:
        effect = 'fail this run' if strict else 'would fail with --strict'
        line += f'\n{findings}: {effect} (exit {verdict.EXIT_STRICT})'
    return line
