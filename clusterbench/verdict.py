"""Judging figures against references (or a baseline run) and printing verdicts."""

import csv
import io
import json
import math
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Optional

from clusterbench import stats

PASS = 'pass'
FLAGGED = 'FLAGGED'
NO_REFERENCE = 'no reference'
FAILED = 'FAILED'
SKIPPED = 'skipped'
#: A run whose conditions broke the partition's thresholds: shown, not judged.
DISTURBED = 'DISTURBED'


def bounds(reference, lower, upper):
    """The allowed absolute range, exactly as ReFrame computes it."""

    def bound(thres, infinite):
        if thres is None:
            return infinite
        if reference == 0:
            return thres
        return reference * (1 + (-thres if reference < 0 else thres))

    return bound(lower, -math.inf), bound(upper, math.inf)


def judge(figure):
    """pass / FLAGGED / no reference for one figure on its own (ReFrame's rule)."""
    if not figure.has_reference:
        return NO_REFERENCE
    low, high = bounds(figure.reference, figure.lower, figure.upper)
    return PASS if low <= figure.value <= high else FLAGGED


@dataclass
class Judged:
    """All samples of one figure of one configuration, and their verdict."""

    test: str
    system: str
    partition: str
    environ: str
    variable: str
    unit: str
    values: list
    reference: Optional[float]
    lower: Optional[float]
    upper: Optional[float]
    baseline: Optional[list] = None
    verdict: str = NO_REFERENCE
    ci: Optional[tuple] = None
    disturbed: Optional[str] = None

    @property
    def value(self):
        return statistics.median(self.values)

    def judge(self):
        if self.disturbed:
            self.verdict = f'{DISTURBED} ({self.disturbed})'
            return self
        if self.baseline:
            # Against another run: its median is the reference value.
            ref = statistics.median(self.baseline)
            target = self.baseline
        elif self.reference is not None:
            ref, target = self.reference, self.reference
        else:
            self.verdict = NO_REFERENCE
            return self
        if ref == 0:
            low, high = bounds(0, self.lower, self.upper)
            inside = [low <= v <= high for v in self.values]
            self.verdict = PASS if any(inside) else FLAGGED
            return self
        self.ci = stats.median_ratio_ci(self.values, target)
        sign = -1 if ref < 0 else 1
        out = stats.beyond_tolerance(self.ci, self.lower, self.upper, sign)
        self.verdict = FLAGGED if out else PASS
        return self


def group(figures, baseline=None, tolerance=None):
    """Judge the figures, pooling repeated samples of the same figure.

    With *baseline* figures (another run), each figure is judged against the
    baseline's samples with the reference's tolerance, or *tolerance* (a
    relative band) where the reference has none.
    """
    pooled = {}
    for fig in figures:
        key = (fig.test, fig.system, fig.partition, fig.environ, fig.variable)
        disturbed = getattr(fig, 'disturbed', None)
        # Disturbed samples are a row of their own: they never decide a verdict.
        entry = pooled.get((*key, bool(disturbed)))
        if entry is None:
            entry = pooled[(*key, bool(disturbed))] = Judged(
                *key, fig.unit, [], fig.reference, fig.lower, fig.upper
            )
            entry.disturbed = disturbed
        entry.values.append(fig.value)
        if fig.has_reference:
            entry.reference, entry.lower, entry.upper = (
                fig.reference,
                fig.lower,
                fig.upper,
            )
    if baseline is not None:
        base = {}
        for fig in baseline:
            if getattr(fig, 'disturbed', None):
                continue
            key = (fig.test, fig.system, fig.partition, fig.environ, fig.variable)
            base.setdefault(key, []).append(fig.value)
        for key, entry in pooled.items():
            entry.baseline = base.get(key[:-1])
            if entry.reference is None and tolerance is not None:
                entry.lower, entry.upper = -tolerance, tolerance
            if entry.baseline is None:
                entry.reference = None
    return [entry.judge() for entry in pooled.values()]


COLUMNS = (
    'test',
    'partition',
    'environment',
    'variable',
    'value',
    'n',
    'unit',
    'reference',
    'allowed range',
    'verdict',
)


def rows(judged, failures):
    """Table rows: one per figure, one per failed test case."""
    table = []
    for j in judged:
        ref = statistics.median(j.baseline) if j.baseline else j.reference
        if ref is not None and j.verdict != NO_REFERENCE:
            low, high = bounds(ref, j.lower, j.upper)
            ref_text, allowed = _num(ref), f'{_num(low)} .. {_num(high)}'
        else:
            ref_text, allowed = '-', '-'
        table.append(
            (
                j.test,
                f'{j.system}:{j.partition}',
                j.environ,
                j.variable,
                _num(j.value),
                str(len(j.values)),
                j.unit,
                ref_text,
                allowed,
                j.verdict,
            )
        )
    for fail in failures:
        if fail.phase == SKIPPED:
            text = f'{SKIPPED}: {fail.reason}'
        else:
            text = f'{FAILED} ({fail.phase}): {fail.reason}'
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
                '-',
                text,
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
    for kind in (FAILED, SKIPPED, DISTURBED):
        if verdict.startswith(kind):
            return kind
    return verdict


def summary(table):
    counts = Counter(_kind(row[-1]) for row in table)
    kinds = (PASS, FLAGGED, NO_REFERENCE, FAILED)
    text = ', '.join(f'{counts[k]} {k}' for k in kinds)
    for extra in (DISTURBED, SKIPPED):
        text += f', {counts[extra]} {extra}' if counts[extra] else ''
    return text


def anything_wrong(table):
    return any(_kind(row[-1]) in (FLAGGED, FAILED) for row in table)
