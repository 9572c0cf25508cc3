"""Ranking a population: which way is better, and how far off in words.

The statistics themselves (median, MAD, robust z-score) are in
:mod:`clusterbench.judging.stats`.
"""

from clusterbench.judging import stats, vocabulary

#: How far (robust z) a figure may lie from its peers on its bad side, and the
#: smallest spread assumed of them (a fraction of their median).
Z_MAX = 3.5
MIN_SPREAD = 0.05


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


def beyond(z, sign, z_max=Z_MAX):
    """Whether a robust z-score lies beyond *z_max* on the bad side (*sign*:
    +1 more is better, -1 less is, 0 either side is bad)."""
    if z is None:
        return False
    return (-sign * z if sign else abs(z)) > z_max


def outliers(values, sign, z_max=Z_MAX, min_spread=MIN_SPREAD):
    """{name: why} of the *values* ({name: value}, e.g. per node pair) that
    lie beyond *z_max* on the bad side of the others: each against the
    median and MAD of the rest, as ``acceptance nodes`` and ``links`` judge
    a node's and a link's figures (the one outlier judge)."""
    flags = {}
    for name, value in values.items():
        peers = [v for other, v in values.items() if other != name]
        z, centre, _ = stats.robust_z(value, peers, min_spread)
        if beyond(z, sign, z_max):
            flags[name] = (
                f"{value:.4g} is {relative(value, centre)} the others' median "
                f'{centre:.4g} (robust z {z:+.1f}, limit {z_max:g})'
            )
    return flags
