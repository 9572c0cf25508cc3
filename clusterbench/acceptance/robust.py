"""Ranking a population: which way is better, and how far off in words.

The statistics themselves (median, MAD, robust z-score) are in
:mod:`clusterbench.judging.stats`.
"""

from clusterbench.judging import vocabulary


def direction_of(unit, variable=''):
    """+1 when more is better, -1 when less is, 0 when the figure has no
    direction (see :mod:`clusterbench.judging.vocabulary`)."""
    better = vocabulary.direction(variable, unit)
    return {vocabulary.HIGHER: 1, vocabulary.LOWER: -1}.get(better, 0)


def relative(value, centre):
    """'73% below' / '40% above' / '100x above': *value* against *centre*."""
    if not centre:
        return 'unlike'
    ratio = value / centre
    if ratio >= 2:
        return f'{ratio:.3g}x above'
    return f'{abs(ratio - 1):.0%} {"below" if ratio < 1 else "above"}'
