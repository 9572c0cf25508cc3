"""Paired A/B verdicts: each figure's ratio B/A over ABBA and BAAB blocks.

``clusterbench ab`` measures two configurations in turn within one session
(see clusterbench.sessions.ab). Here each figure's samples are grouped by
block, each block gives one pair (the geometric mean of its A samples, of
its B samples), and stats.paired_ratio_ci turns the pairs into a ratio B/A
with its interval (99 % unless asked otherwise: see CONFIDENCE). The verdict
says which side of 1 the interval lies, in the figure's own direction
(judging.vocabulary), or that no difference was resolved, with the smallest
change this run could have resolved.
"""

import io
import math
import statistics
from dataclasses import dataclass, field

from clusterbench.core import csvfile, jsontext
from clusterbench.core.controlchars import escaped
from clusterbench.judging import stats, verdict, view, vocabulary

A, B = 'A', 'B'
#: The order of the legs of one block: a linear drift moves A and B alike.
BLOCK_ORDER = (A, B, B, A)
#: Every other block, the mirror order: each arm holds every position of a
#: block equally often, so an effect of the position itself (the first leg
#: after a pause, the last before one) falls on A and B alike too.
MIRROR_ORDER = (B, A, A, B)


def block_order(block):
    """The legs of block *block* (0, 1, ...): ABBA, then BAAB, in turn."""
    return MIRROR_ORDER if block % 2 else BLOCK_ORDER


#: A block with a DISTURBED leg is measured again, at the end: up to this
#: many blocks in all for each block asked for. Steal comes in bursts on a
#: shared host (evaluation/measured/ab-study.md, "DISTURBED legs measured
#: again"); a burst longer than the session leaves its blocks out, and the
#: verdict says what the blocks kept could resolve.
MAX_BLOCKS_FACTOR = 2
#: With a resolution asked for (``ab --resolve``), blocks go on until every
#: figure resolves it, up to this many blocks in all for each block asked for:
#: two ranks on a noisy day needed three times the blocks of a quiet one
#: (evaluation/measured/ab-study.md, "Blocks until resolved").
RESOLVE_BLOCKS_FACTOR = 4


def block_limit(asked, resolve=None):
    """The most blocks a session runs by default: *asked* times
    MAX_BLOCKS_FACTOR, or RESOLVE_BLOCKS_FACTOR with a resolution asked for."""
    return (RESOLVE_BLOCKS_FACTOR if resolve else MAX_BLOCKS_FACTOR) * asked


def more_blocks(asked, run, disturbed, limit=None, resolved=True):
    """Whether another block is due: fewer than *limit* (by default
    block_limit(*asked*)) of them ran, and either fewer than *asked* of the
    *run* blocks had no DISTURBED leg (*disturbed* had one) or a figure has
    not *resolved* the change asked for yet (unresolved())."""
    limit = limit or block_limit(asked)
    return (run - disturbed < asked or not resolved) and run < limit


def unresolved(rows, resolve):
    """The rows (judge()) whose interval is wider than ±*resolve* (a
    fraction). A figure with no interval yet (fewer than two pairs) counts
    once it has a pair: a figure of one arm only never pairs, and more
    blocks would not help it."""
    return [
        row
        for row in rows
        if row[PAIRS] and (row[RESOLVABLE] is None or row[RESOLVABLE] > resolve)
    ]


#: The interval's confidence. One A/B run judges dozens of figures: at 95 %,
#: a run of 40 unchanged figures would report two changes on average, and
#: A/A runs on a noisy VM found 7.5 % at 95 % (evaluation/measured/ab-study.md).
#: Eight blocks at 99 % resolve what five did at 95 %.
CONFIDENCE = 0.99
#: The verdict of a figure whose interval includes 1.
NO_DIFFERENCE = verdict.Kind.UNRESOLVED
#: A figure measured in one arm only, or in fewer than two usable blocks.
NOT_PAIRED = verdict.Kind.NOT_PAIRED

COLUMNS = (
    'test',
    'variable',
    'unit',
    'A median',
    'B median',
    'B/A',
    'CI low',
    'CI high',
    'resolvable',
    'pairs',
    'left out',
    'confidence',
    'verdict',
)
RESOLVABLE, PAIRS = COLUMNS.index('resolvable'), COLUMNS.index('pairs')


@dataclass
class Sample:
    """One figure's value in one leg: its arm (A or B) and its block."""

    arm: str
    block: int
    test: str
    variable: str
    unit: str
    value: float
    disturbed: str = None


@dataclass
class Paired:
    test: str
    variable: str
    unit: str
    values: dict = field(default_factory=lambda: {A: {}, B: {}})
    left_out: int = 0

    def add(self, sample):
        # A count that does not depend on time is right on a loaded host too.
        steady = vocabulary.is_deterministic(self.variable, self.unit)
        if sample.disturbed and not steady:
            self.left_out += 1
            return
        self.values[sample.arm].setdefault(sample.block, []).append(sample.value)

    def pairs(self):
        """(a, b) per block that has both arms: their geometric means."""
        a, b = self.values[A], self.values[B]
        return [(_geomean(a[k]), _geomean(b[k])) for k in sorted(a) if k in b]

    def medians(self):
        return tuple(
            statistics.median([v for vs in self.values[arm].values() for v in vs])
            if self.values[arm]
            else None
            for arm in (A, B)
        )


def _geomean(values):
    if any(v <= 0 for v in values):
        # Each term divided first: the sum of two values near 1e308 is not a float.
        return math.fsum(v / len(values) for v in values)
    return math.exp(statistics.fmean(math.log(v) for v in values))


#: B resolved worse in a figure of merit that is no speed (an efficiency).
WORSE = verdict.Kind.AB_WORSE


def ab_verdict(variable, unit, ci):
    """The verdict of B against A from the interval *ci* of B/A (None: not
    paired), in docs/ab.md's words: SLOWER for a speed that got worse,
    WORSE for any other figure of merit (an efficiency), FLAGGED only for a
    figure with no better direction that changed, FASTER; pass becomes "no
    difference resolved"."""
    if ci is None:
        return NOT_PAIRED
    word = verdict.outside(variable, unit, stats.ratio_side(ci))
    if word == verdict.FLAGGED and vocabulary.direction(variable, unit):
        return WORSE
    return NO_DIFFERENCE if word == verdict.PASS else word


def judge(samples, confidence=CONFIDENCE):
    """Table rows (see COLUMNS), one per figure, from *samples* (Sample),
    each judged by its *confidence* interval of B/A."""
    figures = {}
    for sample in samples:
        key = (sample.test, sample.variable)
        if key not in figures:
            figures[key] = Paired(sample.test, sample.variable, sample.unit)
        figures[key].add(sample)
    short = view.short_names([test for test, _ in figures])
    return [_row(fig, short[fig.test], confidence) for fig in figures.values()]


def _row(fig, name, confidence):
    a_med, b_med = fig.medians()
    pairs = fig.pairs()
    ci = None
    if len(pairs) >= 2:
        try:
            ci = stats.paired_ratio_ci(pairs, confidence)
        except ValueError:
            ci = None  # a value of zero or below: no ratio to speak of
    low, point, high = ci or (None, None, None)
    return (
        name,
        fig.variable,
        fig.unit,
        a_med,
        b_med,
        point,
        low,
        high,
        stats.resolvable_change(ci) if ci else None,
        len(pairs),
        fig.left_out,
        confidence,
        ab_verdict(fig.variable, fig.unit, ci),
    )


def failure_rows(failed, names=None):
    """Rows of test cases that failed in a leg: ``[(arm, failure), ...]``."""
    names = names or {}
    return [
        (
            names.get(f.test, f.test), '-', '-', None, None, None, None, None, None,
            0, 0, None,
            verdict.Verdict(verdict.FAILED, f'arm {arm}, {f.phase}: {f.reason}'),
        )
        for arm, f in failed
    ]  # fmt: skip


def exit_code(rows, strict=False, threshold=verdict.DETECTION_THRESHOLD):
    """1: B resolved worse in a figure (SLOWER, WORSE; or FLAGGED: a figure
    with no direction changed),
    or a test failed in a leg;
    3 (*strict*): a figure not paired, or one that could not resolve
    *threshold*; else 0. B faster is the answer sought, not a finding."""
    words = [verdict.kind(row[-1]) for row in rows]
    if any(w in verdict.REGRESSIONS for w in words):
        return verdict.EXIT_REGRESSION
    unresolved = [
        row for row in rows if row[-1] == NOT_PAIRED or (row[8] or 0) > threshold
    ]
    if strict and (unresolved or not rows):
        return verdict.EXIT_STRICT
    return verdict.EXIT_OK


def judged_nothing(rows):
    """Whether no figure that depends on time was paired: every leg was
    DISTURBED (or measured one arm only), so the session cannot say whether
    B is slower; a deterministic figure (an iteration count) may still be
    paired. Not a pass: `ab` exits EXIT_STRICT (could not judge)."""
    timed = [
        row
        for row in rows
        if verdict.kind(row[-1]) != verdict.FAILED
        and not vocabulary.is_deterministic(row[1], row[2])
    ]
    return bool(timed) and all(row[-1] == NOT_PAIRED for row in timed)


def _pct(value):
    return '-' if value is None else f'{(value - 1) * 100:+.1f} %'


def _num(value):
    return '-' if value is None else f'{value:.4g}'


def text_cells(row):
    """The cells of one row as the table shows them."""
    name, var, unit, a_med, b_med, point, low, high, res, pairs, out, _, word = row
    ratio = '-' if point is None else f'{point:.3f} [{low:.3f}, {high:.3f}]'
    if point is not None and math.isinf(high):
        ratio = f'{point:.3f} [-]'
    resolved = '-' if res is None else f'±{res * 100:.1f} %'
    left = f', {out} disturbed left out' if out else ''
    if word == NO_DIFFERENCE and res is not None:
        word = f'{word} (±{res * 100:.1f} %)'
    return (
        name,
        var,
        unit,
        _num(a_med),
        _num(b_med),
        ratio,
        _pct(point),
        resolved,
        f'{pairs}{left}',
        word,
    )


def text_header(confidence=CONFIDENCE):
    return (
        'test',
        'variable',
        'unit',
        'A median',
        'B median',
        f'B/A [{confidence:.0%} CI]'.replace('%', ' %'),
        'change',
        'resolvable',
        'pairs',
        'verdict',
    )


def format_table(rows, width=None):
    levels = {row[11] for row in rows if row[11]}
    header = text_header(levels.pop() if len(levels) == 1 else CONFIDENCE)
    # Names from the legs' reports: control characters escaped, never raw.
    cells = [header, *[[escaped(str(c)) for c in text_cells(row)] for row in rows]]
    widths = [max(len(str(r[i])) for r in cells) for i in range(len(header))]
    lines = [
        '  '.join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells
    ]
    lines.insert(1, '  '.join('-' * w for w in widths))
    return '\n'.join(line[:width] if width else line for line in lines)


def summary(rows):
    counts = {}
    for row in rows:
        counts[verdict.kind(row[-1])] = counts.get(verdict.kind(row[-1]), 0) + 1
    left = sum(row[10] for row in rows)
    text = ', '.join(f'{n} {word}' for word, n in counts.items()) or 'no figure'
    return text + (f'; {left} disturbed samples left out' if left else '')


def render(rows, fmt='table'):
    if fmt == 'csv':
        out = io.StringIO()
        writer = csvfile.writer(out, lineterminator='\n')
        writer.writerow(COLUMNS)
        writer.writerows(rows)
        return out.getvalue().rstrip('\n')
    if fmt == 'json':
        return jsontext.dumps([dict(zip(COLUMNS, row)) for row in rows], indent=1)
    return f'{format_table(rows)}\n\n{summary(rows)}'
