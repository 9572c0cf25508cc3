"""Judging figures against references (or a baseline run) and printing verdicts."""

import io
import json
import math
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Optional

from clusterbench.core import csvfile
from clusterbench.judging import stats, vocabulary

PASS = 'pass'
#: Beyond tolerance in the bad direction: a speed (rate or time) ...
SLOWER = 'SLOWER'
#: ... or another figure of merit (an efficiency, energy). Fails the run.
WORSE = 'WORSE'
#: Beyond tolerance in the good direction: the reference is likely stale.
#: Reported, but fails only a --strict run.
FASTER = 'FASTER'
FASTER_HINT = 'reference stale?'
#: Beyond tolerance for a figure with no better direction (not a figure of
#: merit, see clusterbench.judging.vocabulary): fails the run, like ReFrame.
FLAGGED = 'FLAGGED'
NO_REFERENCE = 'no reference'
#: Measured while the run's conditions broke the partition's thresholds
#: (the verdict carries the measurements after the word): shown, not judged.
#: Fails only a --strict run.
DISTURBED = 'DISTURBED'
#: Worse than its reference by at least the detection threshold, yet not
#: flagged: inside a band wider than that threshold on its bad side (or beyond
#: it, but not significantly). The band cannot tell such a change from this
#: machine's noise; the verdict says so instead of ``pass``. Fails only a
#: --strict run. Plain ReFrame passes these figures.
INCONCLUSIVE = 'INCONCLUSIVE'
#: The smallest change that must never pass silently (the same number as
#: ``references check --max-tolerance``).
DETECTION_THRESHOLD = 0.10
FAILED = 'FAILED'
SKIPPED = 'skipped'

#: Exit codes of compare, replay and run.
EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2
EXIT_STRICT = 3

#: Verdicts that fail every run, and those that fail only a --strict one.
REGRESSIONS = (SLOWER, WORSE, FLAGGED, FAILED)
STRICT_ONLY = (NO_REFERENCE, FASTER, DISTURBED, INCONCLUSIVE)


def bounds(reference, lower, upper):
    """The allowed absolute range, exactly as ReFrame computes it."""

    def bound(thres, infinite):
        if thres is None:
            return infinite
        if reference == 0:
            return thres
        return reference * (1 + (-thres if reference < 0 else thres))

    return bound(lower, -math.inf), bound(upper, math.inf)


def outside(variable, unit, side):
    """The verdict of a figure *side* (-1 below, +1 above, 0 inside) of its band."""
    if side == 0:
        return PASS
    better = vocabulary.direction(variable, unit)
    if better is None:
        return FLAGGED
    if (side > 0) == (better == vocabulary.HIGHER):
        return FASTER
    return SLOWER if vocabulary.is_speed(variable, unit) else WORSE


def _scale(variable, unit, reference):
    """What a change of the figure is measured against: its reference, or
    for a share near zero the whole (100 %, changes in points)."""
    if vocabulary.is_share(variable, unit):
        return 100.0, 'pp'
    return abs(reference), '%'


def bad_side_width(variable, unit, reference, lower, upper):
    """The tolerance on the figure's bad side, in the scale of _scale (both
    sides, the wider, for a figure with no better direction); inf when that
    side is open."""
    low, high = bounds(reference, lower, upper)
    scale, _ = _scale(variable, unit, reference)
    below, above = (reference - low) / scale, (high - reference) / scale
    better = vocabulary.direction(variable, unit)
    if better == vocabulary.HIGHER:
        return below
    if better == vocabulary.LOWER:
        return above
    return max(below, above)


def inconclusive(
    variable, unit, value, reference, lower, upper, threshold=DETECTION_THRESHOLD
):
    """``-12 % inside ±25 %`` for a figure that was not flagged although it is
    worse than *reference* by at least *threshold*; None otherwise (also for a
    reference of zero, where a relative change means nothing)."""
    if threshold is None or reference is None:
        return None
    if reference == 0 and not vocabulary.is_share(variable, unit):
        return None
    scale, sign = _scale(variable, unit, reference)
    change = (value - reference) / scale
    better = vocabulary.direction(variable, unit)
    worse = {vocabulary.HIGHER: -change, vocabulary.LOWER: change}.get(
        better, abs(change)
    )
    if worse < threshold:
        return None
    low, high = bounds(reference, lower, upper)
    below, above = (reference - low) / scale, (high - reference) / scale
    if not low <= value <= high:
        # Beyond the band, but the samples' noise explains it.
        return f'{change * 100:+.0f} {sign} beyond the band, not significant'
    width = {vocabulary.HIGHER: below, vocabulary.LOWER: above}.get(
        better, below if change < 0 else above
    )
    if width <= threshold:
        return None
    if below == above:
        band_text = f'±{_pct(below)} {sign}'
    else:
        band_text = f'-{_pct(below)}/+{_pct(above)} {sign}'
    return f'{change * 100:+.0f} {sign} inside {band_text}'


def _pct(fraction):
    return '∞' if math.isinf(fraction) else f'{fraction * 100:.0f}'


def judge(figure):
    """The verdict of one figure on its own (ReFrame's band, our direction)."""
    if not figure.has_reference:
        return NO_REFERENCE
    low, high = bounds(figure.reference, figure.lower, figure.upper)
    side = -1 if figure.value < low else 1 if figure.value > high else 0
    return outside(figure.variable, figure.unit, side)


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
    #: See DETECTION_THRESHOLD; None: no INCONCLUSIVE verdict.
    threshold: Optional[float] = DETECTION_THRESHOLD

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
            if any(low <= v <= high for v in self.values):
                side = 0
            else:
                side = -1 if self.value < low else 1
        else:
            self.ci = stats.median_ratio_ci(self.values, target)
            sign = -1 if ref < 0 else 1
            # The side of the ratio; for a negative reference the value's
            # side is the other one.
            side = sign * stats.departure(self.ci, self.lower, self.upper, sign)
        self.verdict = outside(self.variable, self.unit, side)
        if side == 0:
            why = inconclusive(
                self.variable,
                self.unit,
                self.value,
                ref,
                self.lower,
                self.upper,
                self.threshold,
            )
            if why:
                self.verdict = f'{INCONCLUSIVE} ({why})'
        return self


def group(figures, baseline=None, tolerance=None, threshold=DETECTION_THRESHOLD):
    """Judge the figures, pooling repeated samples of the same figure.
    *threshold*: see DETECTION_THRESHOLD.

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
            entry.threshold = threshold
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


def format_csv(table):
    out = io.StringIO()
    writer = csvfile.writer(out, lineterminator='\n')
    writer.writerow(COLUMNS)
    writer.writerows(table)
    return out.getvalue().rstrip('\n')


def format_json(table):
    return json.dumps([dict(zip(COLUMNS, row)) for row in table], indent=1)


def kind(verdict):
    """The verdict word of a table cell (``FAILED (sanity): ...`` -> FAILED)."""
    for word in (FAILED, SKIPPED, FASTER, DISTURBED, INCONCLUSIVE):
        if verdict.startswith(word):
            return word
    return verdict


SUMMARY_ORDER = (
    PASS,
    SLOWER,
    WORSE,
    FLAGGED,
    FASTER,
    INCONCLUSIVE,
    NO_REFERENCE,
    DISTURBED,
    FAILED,
)


def summary(table):
    """``3 pass, 1 SLOWER, 0 no reference, 0 FAILED``: pass, no reference and
    FAILED always, the other verdicts where they occur."""
    counts = Counter(kind(row[-1]) for row in table)
    always = (PASS, NO_REFERENCE, FAILED)
    text = ', '.join(
        f'{counts[k]} {k}' for k in SUMMARY_ORDER if k in always or counts[k]
    )
    return text + (f', {counts[SKIPPED]} {SKIPPED}' if counts[SKIPPED] else '')


def anything_wrong(table):
    """A regression or a failure: what fails every run."""
    return any(kind(row[-1]) in REGRESSIONS for row in table)


def strict_findings(table):
    """What fails only a --strict run: no reference, FASTER, DISTURBED,
    INCONCLUSIVE."""
    return [row for row in table if kind(row[-1]) in STRICT_ONLY]


def nothing_measured(table):
    """No figure judged and no test failed: every test was skipped (or passed
    without a figure). Not a failure, but nothing a CI gate can call a pass."""
    return all(kind(row[-1]) == SKIPPED for row in table)


def exit_code(table, strict=False):
    """0 all judged and within tolerance; 1 a regression or a failure;
    3 (only with *strict*) a figure without reference, FASTER, DISTURBED or
    INCONCLUSIVE, or nothing measured at all.
    (2, bad input, is raised before any table exists.)"""
    if anything_wrong(table):
        return EXIT_REGRESSION
    if strict and (strict_findings(table) or nothing_measured(table)):
        return EXIT_STRICT
    return EXIT_OK
