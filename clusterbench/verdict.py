"""Judging figures against their references and printing the verdicts."""

import csv
import io
import json
import math
from collections import Counter

PASS = 'pass'
FLAGGED = 'FLAGGED'
NO_REFERENCE = 'no reference'
FAILED = 'FAILED'


def bounds(reference, lower, upper):
    """The allowed range of a reference with relative thresholds (None = open)."""
    low = -math.inf if lower is None else reference * (1 + lower)
    high = math.inf if upper is None else reference * (1 + upper)
    # A negative reference flips the sense of the relative thresholds.
    return (min(low, high), max(low, high))


def judge(figure):
    """pass / FLAGGED / no reference for one figure."""
    if not figure.has_reference:
        return NO_REFERENCE
    low, high = bounds(figure.reference, figure.lower, figure.upper)
    return PASS if low <= figure.value <= high else FLAGGED


COLUMNS = (
    'test',
    'partition',
    'environment',
    'variable',
    'value',
    'unit',
    'reference',
    'allowed range',
    'verdict',
)


def rows(figures, failures):
    """Table rows: one per figure, one per failed test case."""
    table = []
    for fig in figures:
        if fig.has_reference:
            low, high = bounds(fig.reference, fig.lower, fig.upper)
            ref, allowed = _num(fig.reference), f'{_num(low)} .. {_num(high)}'
        else:
            ref, allowed = '-', '-'
        table.append(
            (
                fig.test,
                f'{fig.system}:{fig.partition}',
                fig.environ,
                fig.variable,
                _num(fig.value),
                fig.unit,
                ref,
                allowed,
                judge(fig),
            )
        )
    for fail in failures:
        table.append(
            (
                fail.test,
                f'{fail.system}:{fail.partition}',
                fail.environ,
                '-',
                '-',
                '-',
                '-',
                '-',
                f'{FAILED} ({fail.phase}): {fail.reason}',
            )
        )
    return table


def _num(value):
    if value in (math.inf, -math.inf):
        return '∞' if value > 0 else '-∞'
    return f'{value:.4g}'


def format_table(table):
    widths = [len(c) for c in COLUMNS]
    for row in table:
        widths = [max(w, len(str(cell))) for w, cell in zip(widths, row)]
    lines = [
        '  '.join(c.ljust(w) for c, w in zip(COLUMNS, widths)).rstrip(),
        '  '.join('-' * w for w in widths),
    ]
    for row in table:
        lines.append('  '.join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    return '\n'.join(lines)


def format_csv(table):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator='\n')
    writer.writerow(COLUMNS)
    writer.writerows(table)
    return out.getvalue().rstrip('\n')


def format_json(table):
    return json.dumps([dict(zip(COLUMNS, row)) for row in table], indent=1)


def _kind(verdict):
    return FAILED if verdict.startswith(FAILED) else verdict


def summary(table):
    counts = Counter(_kind(row[-1]) for row in table)
    return ', '.join(f'{counts[k]} {k}' for k in (PASS, FLAGGED, NO_REFERENCE, FAILED))


def anything_wrong(table):
    return any(_kind(row[-1]) in (FLAGGED, FAILED) for row in table)
