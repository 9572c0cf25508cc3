"""Judging figures against references (or a baseline run): typed verdicts
(a Kind of :mod:`clusterbench.judging.kinds` and its detail), the table's
rows and the exit code. How they are shown is clusterbench.judging.view's
alone."""

import math
import statistics
from dataclasses import dataclass, field
from typing import Optional

from clusterbench.core.reference import Reference
from clusterbench.judging import disturbed as disturbance
from clusterbench.judging import stats, vocabulary
from clusterbench.judging.kinds import (  # noqa: F401 (the verdict's names)
    DETECTION_THRESHOLD,
    DISTURBED,
    EXIT_BAD_INPUT,
    EXIT_OK,
    EXIT_REGRESSION,
    EXIT_STRICT,
    FAILED,
    FASTER,
    FASTER_HINT,
    FLAGGED,
    INCONCLUSIVE,
    MISSING,
    NO_REFERENCE,
    PASS,
    REGRESSIONS,
    SKIPPED,
    SLOWER,
    STRICT_ONLY,
    WORSE,
    Kind,
)


@dataclass(frozen=True, eq=False)
class Verdict:
    """A kind and what it rests on (``Verdict(DISTURBED, 'steal 18 %')``).

    Equal to another verdict with the same kind and detail, and to its bare
    kind when it has no detail (``judged.verdict == PASS``).
    """

    kind: Kind
    detail: str = ''

    def __post_init__(self):
        object.__setattr__(self, 'kind', Kind(self.kind))

    def __eq__(self, other):
        if isinstance(other, Verdict):
            return (self.kind, self.detail) == (other.kind, other.detail)
        if isinstance(other, str):
            return not self.detail and self.kind == other
        return NotImplemented

    def __hash__(self):
        return hash((self.kind, self.detail)) if self.detail else hash(self.kind)

    def __str__(self):
        """The plain text (CSV cells, logs); the tables show more, see view."""
        return f'{self.kind} ({self.detail})' if self.detail else str(self.kind)


def kind(what):
    """The Kind of a verdict, a table row, a judged figure, a kind, or a
    verdict's text as a CSV cell holds it (``KIND (detail)``)."""
    found = getattr(what, 'kind', what)
    if isinstance(found, Verdict):
        return found.kind
    if isinstance(found, str) and found not in Kind._value2member_map_:
        return parse(found).kind
    return Kind(found)


def parse(text):
    """The Verdict whose text (``str(verdict)``) is *text*."""
    word, sep, rest = text.partition(' (')
    if sep and rest.endswith(')'):
        return Verdict(Kind(word), rest[:-1])
    return Verdict(Kind(text))


def bounds(reference, lower, upper):
    """The allowed absolute range, exactly as ReFrame computes it."""
    return Reference(reference, lower, upper).band()


def outside(variable, unit, side):
    """The Kind of a figure *side* (-1 below, +1 above, 0 inside) of its band."""
    if side == 0:
        return PASS
    better = vocabulary.direction(variable, unit)
    if better is None:
        return FLAGGED
    if (side > 0) == (better == vocabulary.HIGHER):
        return FASTER
    return SLOWER if vocabulary.is_speed(variable, unit) else FLAGGED


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
    """The Kind of one figure on its own (ReFrame's band, our direction)."""
    if figure.ref is None:
        return NO_REFERENCE
    low, high = figure.ref.band()
    side = -1 if figure.value < low else 1 if figure.value > high else 0
    return outside(figure.variable, figure.unit, side)


#: The worst first: what a test case's one verdict is, of its figures'.
SEVERITY = (
    FAILED,
    SLOWER,
    FLAGGED,
    DISTURBED,
    INCONCLUSIVE,
    FASTER,
    NO_REFERENCE,
    PASS,
)


def of_test_case(perfvalues, disturbed='', threshold=DETECTION_THRESHOLD):
    """One Verdict for a test case from ReFrame's ``perfvalues`` (``{'sys:part:
    figure': [value, ref, lower, upper, unit, result]}``), as the table judges
    one sample: the worst kind of its figures, the detail naming them
    (``SLOWER (gflops, bandwidth)``). None without figures. For ReFrame's
    perflog, see clusterbench.checks.plugins.runconditions."""
    if not perfvalues:
        return None
    found = {}
    for key, (value, ref, lower, upper, unit, _) in perfvalues.items():
        if value is None:
            continue
        variable = key.rsplit(':', 1)[-1]
        # ReFrame's "no reference" is (0, None, None).
        has_ref = not (ref == 0 and lower is None and upper is None)
        reference = Reference(ref, lower, upper, unit or '') if has_ref else None
        judged = Judged('', '', '', '', variable, unit or '', [value], reference)
        judged.threshold, judged.disturbed = threshold, disturbed or None
        found.setdefault(judged.judge().kind, []).append(variable)
    if not found:
        return None
    worst = min(found, key=SEVERITY.index)
    if worst == DISTURBED:
        return Verdict(DISTURBED, disturbed)
    return Verdict(worst, '' if worst == PASS else ', '.join(found[worst]))


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
    #: What the samples are judged against: with a *baseline*, its median
    #: and the tolerance (see group()); None: no reference.
    ref: Optional[Reference]
    baseline: Optional[list] = None
    verdict: Verdict = Verdict(NO_REFERENCE)
    ci: Optional[tuple] = None
    disturbed: Optional[str] = None
    #: See DETECTION_THRESHOLD; None: no INCONCLUSIVE verdict.
    threshold: Optional[float] = DETECTION_THRESHOLD
    #: Where the samples were measured (results.runreport.Origin), each once.
    origins: list = field(default_factory=list)
    #: Judged against a portable figure's band (its reference is only the
    #: band's middle, never shown as a reference: see rows).
    band: bool = False

    def __post_init__(self):
        if not isinstance(self.verdict, Verdict):
            self.verdict = Verdict(self.verdict)

    @property
    def value(self):
        return statistics.median(self.values)

    @property
    def kind(self):
        # kind(): also where a caller assigned a bare Kind to .verdict.
        return kind(self.verdict)

    @property
    def compared_to(self):
        """The value judged against: the baseline's median, or the reference."""
        return self.ref.value if self.ref else None

    def judge(self):
        self._judge_undisturbed()
        if self.disturbed:
            self.verdict = self._despite_disturbance()
        return self

    def _despite_disturbance(self):
        """The verdict of a figure measured in a DISTURBED run: DISTURBED,
        unless it fails its band by more than the disturbance can explain
        (judging.disturbed.beyond): then that verdict, naming both."""
        ref = self.compared_to
        share = vocabulary.is_share(self.variable, self.unit)
        better = vocabulary.direction(self.variable, self.unit)
        if self.kind.fails_run and ref and ref > 0 and better and not share:
            low, high = self.ref.band()
            detail = disturbance.beyond(
                self.value, low, high, better == vocabulary.HIGHER, self.disturbed
            )
            if detail:
                return Verdict(self.kind, detail)
        return Verdict(DISTURBED, self.disturbed)

    def _judge_undisturbed(self):
        if self.ref is None:
            self.verdict = Verdict(NO_REFERENCE)
            return
        # Against another run: the CI is of the ratio to its samples.
        ref, target = self.ref.value, self.baseline or self.ref.value
        if ref == 0:
            low, high = self.ref.band()
            if any(low <= v <= high for v in self.values):
                side = 0
            else:
                side = -1 if self.value < low else 1
        else:
            self.ci = stats.median_ratio_ci(self.values, target)
            sign = -1 if ref < 0 else 1
            # The side of the ratio; for a negative reference the value's
            # side is the other one.
            side = sign * stats.departure(self.ci, self.ref.lower, self.ref.upper, sign)
        self.verdict = Verdict(outside(self.variable, self.unit, side))
        if side == 0:
            why = inconclusive(
                self.variable,
                self.unit,
                self.value,
                ref,
                self.ref.lower,
                self.ref.upper,
                self.threshold,
            )
            if why:
                self.verdict = Verdict(INCONCLUSIVE, why)


def group(
    figures, baseline=None, tolerance=None, threshold=DETECTION_THRESHOLD, band=False
):
    """Judge the figures, pooling repeated samples of the same figure.
    *threshold*: see DETECTION_THRESHOLD; *band*: the figures' references
    are portable bands (results.portable.banded), shown as bands.

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
                *key, fig.unit, [], fig.ref
            )
            entry.disturbed = disturbed
            entry.threshold, entry.band = threshold, band
        entry.values.append(fig.value)
        origin = getattr(fig, 'origin', None)
        if origin is not None and origin not in entry.origins:
            entry.origins.append(origin)
        if fig.ref is not None:
            entry.ref = fig.ref
    if baseline is not None:
        base = {}
        for fig in baseline:
            if getattr(fig, 'disturbed', None):
                continue
            key = (fig.test, fig.system, fig.partition, fig.environ, fig.variable)
            base.setdefault(key, []).append(fig.value)
        for key, entry in pooled.items():
            entry.baseline = base.get(key[:-1])
            if entry.baseline is None:
                entry.ref = None
                continue
            # Its median is the reference value, within the reference's band.
            band = entry.ref or Reference(0)
            if entry.ref is None and tolerance is not None:
                band = Reference(0, -tolerance, tolerance)
            entry.ref = Reference(
                statistics.median(entry.baseline), band.lower, band.upper, entry.unit
            )
    return [entry.judge() for entry in pooled.values()]


@dataclass(frozen=True)
class Row:
    """One row of the verdict table: a judged figure, or a test case that
    failed or was skipped before recording any (then the figure's fields
    are empty). Numbers stay numbers; the view formats them."""

    test: str
    system: str
    partition: str
    environ: str
    verdict: Verdict
    variable: Optional[str] = None
    unit: str = ''
    values: tuple = ()
    #: What the figure was judged against (the reference, or the baseline's
    #: median) and the allowed range around it; None where nothing was.
    reference: Optional[float] = None
    low: Optional[float] = None
    high: Optional[float] = None
    #: The phase a FAILED test case failed in (``sanity``, ``run``, ...).
    phase: str = ''
    #: Where the samples were measured (see Judged.origins).
    origins: tuple = ()
    #: A portable figure's band: *low* and *high* are its ends, and it has no
    #: reference (the band's middle is none).
    band: bool = False

    def __post_init__(self):
        if not isinstance(self.verdict, Verdict):
            object.__setattr__(self, 'verdict', Verdict(self.verdict))

    @property
    def kind(self):
        return self.verdict.kind

    @property
    def where(self):
        return f'{self.system}:{self.partition}'

    @property
    def value(self):
        return statistics.median(self.values) if self.values else None

    @property
    def n(self):
        return len(self.values)


def rows(judged, failures):
    """The table: one Row per figure, one per failed or skipped test case."""
    table = []
    for j in judged:
        ref = j.compared_to
        low = high = None
        if ref is not None and j.kind != NO_REFERENCE:
            low, high = j.ref.band()
        if j.band or j.kind == NO_REFERENCE:
            ref = None
        table.append(
            Row(
                j.test,
                j.system,
                j.partition,
                j.environ,
                j.verdict,
                j.variable,
                j.unit,
                tuple(j.values),
                ref,
                low,
                high,
                origins=tuple(j.origins),
                band=j.band and low is not None,
            )
        )
    for fail in failures:
        skipped = fail.phase == SKIPPED
        table.append(
            Row(
                fail.test,
                fail.system,
                fail.partition,
                fail.environ,
                Verdict(SKIPPED if skipped else FAILED, fail.reason),
                phase='' if skipped else fail.phase,
                origins=tuple(o for o in [getattr(fail, 'origin', None)] if o),
            )
        )
    return table


def anything_wrong(table):
    """A regression or a failure: what fails every run."""
    return any(kind(row).fails_run for row in table)


def strict_findings(table):
    """What fails only a --strict run: no reference, FASTER, DISTURBED,
    INCONCLUSIVE."""
    return [row for row in table if kind(row).fails_strict]


def nothing_measured(table):
    """No figure judged and no test failed: every test was skipped (or passed
    without a figure). Not a failure, but nothing a CI gate can call a pass."""
    return all(kind(row) == SKIPPED for row in table)


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
