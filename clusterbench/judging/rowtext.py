"""The text of one verdict row, which the person's table
(:mod:`clusterbench.judging.view`) and the machines' CSV and JUnit
(:mod:`clusterbench.judging.machineview`) share: its cells, its verdict in
words, its check's name and the counts of verdicts."""

import math
import re
from collections import Counter

from clusterbench.judging import verdict, vocabulary

_PARAM = re.compile(r'\s+%([.\w$]+)=(\S+)')

#: The table's columns (csv has the same, without ``vs ref``).
COLUMNS = (
    'test',
    'partition',
    'environment',
    'variable',
    'value',
    'n',
    'unit',
    'reference',
    'vs ref',
    'allowed range',
    'verdict',
)
CSV_COLUMNS = tuple(c for c in COLUMNS if c != 'vs ref')
#: The order of the counts in the summary line.
SUMMARY_ORDER = (
    verdict.PASS,
    verdict.SLOWER,
    verdict.FLAGGED,
    verdict.FASTER,
    verdict.INCONCLUSIVE,
    verdict.NO_REFERENCE,
    verdict.DISTURBED,
    verdict.FAILED,
)


def text(row):
    """The verdict of *row* as text: ``INCONCLUSIVE (-12 % inside ±25 %)``,
    ``FAILED (sanity): why``, ``skipped: why``."""
    found = row.verdict
    if found.kind == verdict.FAILED:
        return f'{found.kind} ({row.phase}): {found.detail}'
    if found.kind == verdict.SKIPPED:
        return f'{found.kind}: {found.detail}'
    retry = retried(row)
    if retry:
        detail = '; '.join(filter(None, (found.detail, retry)))
        return f'{found.kind} ({detail})'
    return str(found)


def retried(row):
    """``retried after TIMEOUT``: what the first attempt of a test case that
    counts as its retry (ReFrame's --max-retries) ended as; '' if none."""
    after = {getattr(o, 'retried_after', '') for o in row.origins} - {''}
    return f'retried after {" or ".join(sorted(after))}' if after else ''


def _num(value):
    if value is None:
        return '-'
    if value in (math.inf, -math.inf):
        return '∞' if value > 0 else '-∞'
    return f'{value:.4g}'


def vs_reference(row):
    """``-12.0 %``: the value against what it was judged against (points of
    the whole for a share); ``-`` where there is nothing to compare."""
    ref, value = row.reference, row.value
    if ref is None or value is None:
        return '-'
    if vocabulary.is_share(row.variable, row.unit):
        return f'{value - ref:+.1f} pp'
    if ref == 0:
        return '-'
    return f'{(value - ref) / abs(ref) * 100:+.1f} %'


def cells(row):
    """{column: text} of one row."""
    figure = row.variable is not None
    allowed = '-'
    if row.low is not None or row.high is not None:
        allowed = f'{_num(row.low)} .. {_num(row.high)}'
    reference = _num(row.reference)
    if row.band:
        # A portable band is a range: its middle is no reference.
        reference = f'band {_num(row.low)}..{_num(row.high)} {row.unit}'.strip()
    return {
        'test': row.test,
        'partition': row.where,
        'environment': row.environ,
        'variable': row.variable if figure else '-',
        'value': _num(row.value),
        'n': str(row.n) if figure else '-',
        'unit': row.unit if figure else '-',
        'reference': reference,
        'vs ref': vs_reference(row),
        'allowed range': allowed,
        'verdict': text(row),
    }


def counts(rows):
    """``3 pass, 1 SLOWER``: the verdicts of *rows* counted, in the summary's
    order."""
    counts = Counter(row.kind for row in rows)
    order = [*SUMMARY_ORDER, verdict.SKIPPED]
    kinds = sorted(counts, key=lambda k: order.index(k) if k in order else len(order))
    return ', '.join(f'{counts[k]} {k}' for k in kinds)


def split_name(name):
    """('CGSolverCheck', {'stencil': '7', ...}) of a ReFrame test name."""
    base = name.split()[0] if name.split() else name
    return base, dict(_PARAM.findall(name))
