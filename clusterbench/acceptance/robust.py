"""Robust statistics for ranking a population: median, MAD, robust z-score."""

import math

from clusterbench import vocabulary

#: MAD x 1.4826 estimates the standard deviation of normally distributed data.
MAD_SCALE = 1.4826


def median(values):
    values = sorted(values)
    if not values:
        raise ValueError('median of nothing')
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else 0.5 * (values[mid - 1] + values[mid])


def mad(values):
    """Median absolute deviation from the median."""
    centre = median(values)
    return median([abs(v - centre) for v in values])


def robust_z(value, peers, min_spread=0.05):
    """``(z, centre, scale)`` of *value* against its *peers* (itself excluded).

    ``centre`` is the peers' median and ``scale`` their spread, 1.4826 x MAD,
    but never less than ``min_spread`` x |centre|: with few peers (one, for a
    2-node cluster) the MAD says nothing, and a relative floor turns the
    z-score into "how many floors away from the peers". ``(None, None, None)``
    without peers.
    """
    if not peers:
        return None, None, None
    centre = median(peers)
    scale = max(MAD_SCALE * mad(peers), min_spread * abs(centre))
    if scale == 0:
        z = 0.0 if value == centre else math.copysign(math.inf, value - centre)
        return z, centre, scale
    return (value - centre) / scale, centre, scale


def direction_of(unit):
    """+1 when more is better (rates), -1 when less is (times), 0 otherwise."""
    if vocabulary.is_rate(unit):
        return 1
    if vocabulary.is_time(unit):
        return -1
    return 0


def relative(value, centre):
    """'73% below' / '40% above' / '100x above': *value* against *centre*."""
    if not centre:
        return 'unlike'
    ratio = value / centre
    if ratio >= 2:
        return f'{ratio:.3g}x above'
    return f'{abs(ratio - 1):.0%} {"below" if ratio < 1 else "above"}'
