"""INCONCLUSIVE said once: the one line that stands, in the person's table,
for a check's figures that cannot resolve a change here.

Such a figure is worse than its reference by at least the detection
threshold, yet inside a band wider than that (or beyond it, but not
significantly): the band, made from this machine's spread between sessions,
cannot tell the change from noise. Listing each of them tells nothing more
than their number, why and what to do, which this line says; ``-v`` lists
them, and CSV, JSON and JUnit keep every one (machines read them).
"""

from clusterbench.judging import verdict, vocabulary


def _worse(row):
    """How much worse than its reference *row* is, in % (None for a share,
    judged in points, or without a reference)."""
    if row.reference in (None, 0) or row.value is None:
        return None
    if vocabulary.is_share(row.variable, row.unit):
        return None
    change = (row.value - row.reference) / abs(row.reference) * 100
    better = vocabulary.direction(row.variable, row.unit)
    return {vocabulary.HIGHER: -change, vocabulary.LOWER: change}.get(
        better, abs(change)
    )


def _width(row):
    """The band's tolerance on *row*'s bad side, in % of its reference."""
    if row.reference in (None, 0) or vocabulary.is_share(row.variable, row.unit):
        return None
    below = row.low is not None and (row.reference - row.low) / abs(row.reference)
    above = row.high is not None and (row.high - row.reference) / abs(row.reference)
    better = vocabulary.direction(row.variable, row.unit)
    found = {vocabulary.HIGHER: below, vocabulary.LOWER: above}.get(
        better, max(below or 0, above or 0)
    )
    return None if found is None or found is False else found * 100


def _span(numbers):
    def shown(number):
        return '∞' if number == float('inf') else f'{number:.0f}'

    low, high = shown(min(numbers)), shown(max(numbers))
    return f'{low} %' if low == high else f'{low}-{high} %'


def line(rows):
    """The one line for the INCONCLUSIVE *rows* of one check ('' for none):
    how many, how much worse and inside which bands, what moves them, and
    what to do."""
    rows = [row for row in rows if row.kind == verdict.INCONCLUSIVE]
    if not rows:
        return ''
    worse = [w for w in map(_worse, rows) if w is not None]
    beyond = [r for r in rows if 'beyond the band' in r.verdict.detail]
    inside = [r for r in rows if r not in beyond]
    widths = [w for w in map(_width, inside) if w is not None]
    parts = [f'{len(rows)} {verdict.INCONCLUSIVE}:']
    if worse:
        parts.append(f'worse by {_span(worse)},')
    if widths and min(widths) == float('inf'):
        parts.append('inside bands open on their bad side')
    elif widths:
        parts.append(f'inside bands {_span(widths)} wide on their bad side')
    elif inside:
        parts.append('inside their bands')
    if beyond:
        joiner = 'or' if inside else ''
        parts.append(f'{joiner} beyond them but not significantly ({len(beyond)})')
    said = ' '.join(p for p in parts if p) + ': they cannot resolve such a change here'
    memory = sum(vocabulary.is_memory_bound(r.variable, r.unit) for r in rows)
    if memory:
        said += (
            f' ({memory} memory-bound: they move with the bandwidth that '
            'neighbours on the node leave them)'
        )
    return (
        f'{said}; to resolve a change, `clusterbench ab`; for narrower bands, '
        'more baseline sessions (`clusterbench baseline`); -v lists them'
    )
