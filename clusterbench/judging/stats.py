"""The statistics every judge uses: significance of a change, and robust spread.

Verdicts, reference updates, acceptance and the report all call this module;
the median, the MAD and its 1.4826 scaling, the tolerance band and the robust
z-score are written here and nowhere else.

Verdicts on repeated samples: a flag must be significant.

A figure is flagged only when its median ratio (new samples against the
reference value, or against the samples of a baseline run) lies outside the
tolerance band and the bootstrap confidence interval of that ratio excludes
1: the change is beyond tolerance and not explained by the samples' noise.
With one sample the interval is the sample itself, so the verdict is exactly
ReFrame's.
"""

import functools
import math
import random
import statistics

DEFAULT_BOOTSTRAP = 2000
DEFAULT_CONFIDENCE = 0.95


def _percentile(sorted_values, q):
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    low = int(pos)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (pos - low)


@functools.lru_cache(maxsize=32)
def _draws(n, m, n_boot, seed):
    """The positions the bootstrap resamples, exactly those ``random.choices``
    would draw (each iteration *n* positions of the samples, then *m* of the
    baseline's, each ``floor(random() * size)``), as arrays: drawn once per
    size, so that judging thousands of figures (a report) costs array
    arithmetic, not millions of Python calls. Same seed, same verdicts."""
    import numpy as np

    rng = random.Random(seed)
    uniform = np.array([rng.random() for _ in range(n_boot * (n + m))])
    uniform = uniform.reshape(n_boot, n + m)
    new = np.floor(uniform[:, :n] * n).astype(np.intp)
    base = np.floor(uniform[:, n:] * m).astype(np.intp) if m else None
    return new, base


def _row_medians(table):
    """The median of each row, as statistics.median computes it (the middle
    value, or the mean of the two middle values)."""
    k = table.shape[1]
    if k == 1:
        return table[:, 0]
    if k == 2:  # the mean of the two, in either order
        return (table[:, 0] + table[:, 1]) / 2
    table.sort(axis=1)
    if k % 2:
        return table[:, k // 2]
    return (table[:, k // 2 - 1] + table[:, k // 2]) / 2


def median_ratio_ci(
    samples, baseline, confidence=DEFAULT_CONFIDENCE, n_boot=DEFAULT_BOOTSTRAP, seed=0
):
    """(low, point, high): bootstrap CI of median(samples) / baseline.

    *baseline* is a number (a reference value) or a list of samples (another
    run), in which case both sides are resampled. The seed is fixed so that a
    verdict is reproducible.
    """
    if not samples:
        raise ValueError('no samples')
    base_samples = baseline if isinstance(baseline, (list, tuple)) else None
    base_point = statistics.median(base_samples) if base_samples else baseline
    if not base_point:
        raise ValueError('baseline is zero')
    point = statistics.median(samples) / base_point
    if len(samples) == 1 and (base_samples is None or len(base_samples) == 1):
        return point, point, point
    import numpy as np

    n, m = len(samples), len(base_samples or ())
    new_at, base_at = _draws(n, m, n_boot, seed)
    new = _row_medians(np.asarray(samples, dtype=float)[new_at])
    base = (
        _row_medians(np.asarray(base_samples, dtype=float)[base_at])
        if m
        else base_point
    )
    ratios = np.sort(new / base)
    alpha = (1 - confidence) / 2
    return (
        float(_percentile(ratios, alpha)),
        point,
        float(_percentile(ratios, 1 - alpha)),
    )


def departure(ci, lower, upper, reference_sign=1):
    """-1 or +1 when the ratio is below or above the tolerance *and* that change
    is significant, else 0.

    Beyond tolerance: the median ratio (the interval's point) lies outside
    [1+lower, 1+upper]. Significant: the interval excludes 1, no change, on
    that same side. Asking for the whole interval to clear the tolerance
    instead would miss a real 10 % slowdown of a figure whose tolerance is 8 %
    almost every time; asking only for the median would flag samples that
    scatter on both sides of the reference. For a negative reference the
    relative band flips, as in ReFrame; the side is that of the ratio (a ratio
    above 1 is a value further from zero).
    """
    low_band = -float('inf') if lower is None else 1 + lower
    high_band = float('inf') if upper is None else 1 + upper
    if reference_sign < 0:
        low_band, high_band = (2 - high_band, 2 - low_band)
    low, point, high = ci
    if point < low_band:
        return -1 if high < 1 else 0
    if point > high_band:
        return 1 if low > 1 else 0
    return 0


def beyond_tolerance(ci, lower, upper, reference_sign=1):
    """True when the change is beyond tolerance *and* significant (either side)."""
    return departure(ci, lower, upper, reference_sign) != 0


# -- robust spread: median and MAD ---------------------------------------------

#: MAD x 1.4826 estimates the standard deviation of normally distributed data.
MAD_SCALE = 1.4826


def median(values):
    values = list(values)
    if not values:
        raise ValueError('median of nothing')
    return statistics.median(values)


def mad(values):
    """Median absolute deviation from the median."""
    values = list(values)
    centre = median(values)
    return median(abs(v - centre) for v in values)


def relative_spread(values):
    """The robust relative spread, 1.4826 x MAD / |median| (0 for a zero median)."""
    values = list(values)
    centre = median(values)
    return MAD_SCALE * mad(values) / abs(centre) if centre else 0.0


def tolerance_band(values, floor, k=3.0):
    """The relative band around the median that *values* call normal:
    max(floor, k x their robust relative spread)."""
    return max(floor, k * relative_spread(values))


def session_band(sessions, floor, k=3.0, absolute_floor=None, margin=None):
    """``(centre, tolerance, spread)`` of a figure from its samples grouped by
    session (a list of lists, one per session).

    Reruns inside one session agree better than sessions do (the machine's
    state, the placement, the clock change between sessions), so with two
    sessions or more the per-session medians set everything: the centre is
    their median, the spread their robust relative spread, and the tolerance
    is ``max(floor, k x spread, reach + margin)`` where *reach* is the
    relative distance from the centre to the farthest session median (at
    least half their range): a figure seen in two modes is covered in both.
    *margin* is *floor* unless given (evaluation/session_holdout.py weighs
    other margins: a smaller one catches more 10 % slowdowns of the steady
    figures and turns more held-out sessions red).
    With one session its samples' spread is all there is. *absolute_floor*
    (in the figure's unit) is the smallest band for a value near zero,
    converted to a relative one (for a centre of zero ReFrame reads the
    threshold as absolute)."""
    sessions = [list(s) for s in sessions if len(s)]
    if not sessions:
        raise ValueError('median of nothing')
    if len(sessions) == 1:
        values = sessions[0]
        centre, spread, reach = median(values), relative_spread(values), 0.0
    else:
        medians = [median(s) for s in sessions]
        centre, spread = median(medians), relative_spread(medians)
        far = max(centre - min(medians), max(medians) - centre)
        margin = floor if margin is None else margin
        reach = far / abs(centre) + margin if centre else 0.0
    tolerance = max(floor, k * spread, reach)
    if absolute_floor is not None:
        tolerance = max(
            tolerance, absolute_floor / abs(centre) if centre else absolute_floor
        )
    return centre, tolerance, spread


# -- a monotone drift over a sequence ------------------------------------------


def theil_sen(values):
    """``(slope, intercept)`` of *values* against their position 0, 1, ...:
    the median of the pairwise slopes (Theil-Sen), robust to an outlier."""
    values = list(values)
    if len(values) < 2:
        raise ValueError('a slope needs two values')
    slopes = [
        (values[j] - values[i]) / (j - i)
        for i in range(len(values))
        for j in range(i + 1, len(values))
    ]
    slope = median(slopes)
    intercept = median(v - slope * i for i, v in enumerate(values))
    return slope, intercept


def mann_kendall_z(values):
    """The Mann-Kendall z of a monotone trend in *values* (no ties
    correction): |z| > 1.96 is a trend at 95 %, its sign the direction."""
    values = list(values)
    n = len(values)
    score = sum(
        (values[j] > values[i]) - (values[j] < values[i])
        for i in range(n)
        for j in range(i + 1, n)
    )
    variance = n * (n - 1) * (2 * n + 5) / 18
    if not score or not variance:
        return 0.0
    return (score - math.copysign(1, score)) / math.sqrt(variance)


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


# -- paired A/B: the ratio of two configurations measured in turn -------------

#: Student's t, two-sided, for 1..30 degrees of freedom, per confidence level;
#: beyond 30: the normal quantile + c/df, within 0.2 % of the exact value.
_T = {
    0.95: (
        (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)
        + (2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086)
        + (2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
    ),
    0.99: (
        (63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169)
        + (3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845)
        + (2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750)
    ),
}
_T_TAIL = {0.95: (1.960, 2.5), 0.99: (2.576, 5.2)}
#: The confidence levels a paired interval can have.
CONFIDENCES = tuple(_T)


def t_quantile(df, confidence=0.95):
    """The two-sided *confidence* quantile of Student's t with *df* degrees
    of freedom (*confidence* one of CONFIDENCES)."""
    if df < 1:
        raise ValueError('no degrees of freedom')
    if confidence not in _T:
        raise ValueError(f'confidence {confidence}: one of {CONFIDENCES}')
    table = _T[confidence]
    if df <= len(table):
        return table[df - 1]
    normal, slope = _T_TAIL[confidence]
    return normal + slope / df


def paired_ratio_ci(pairs, confidence=0.95):
    """``(low, point, high)``: the *confidence* t-interval of the ratio b/a
    from paired measurements *pairs* ``[(a, b), ...]``, on the log ratio of
    each pair.

    Each pair is measured close together in time (one ABBA block), so a slow
    drift of the machine moves a and b alike and cancels in their ratio: the
    interval is as narrow as the noise *within* a block allows. The point is
    the geometric mean of the ratios. One pair gives no interval (0, inf).
    Values must be positive (rates and times are).
    """
    if not pairs:
        raise ValueError('no pairs')
    if any(a <= 0 or b <= 0 for a, b in pairs):
        raise ValueError('a ratio of values that are not all positive')
    # The difference of the logs, not the log of b / a: a ratio beyond the
    # floats (1e300 against 1e-300) has a log all the same.
    logs = [math.log(b) - math.log(a) for a, b in pairs]
    centre = statistics.fmean(logs)
    if len(logs) < 2:
        return 0.0, _exp(centre), math.inf
    t = t_quantile(len(logs) - 1, confidence)
    half = t * statistics.stdev(logs) / math.sqrt(len(logs))
    return _exp(centre - half), _exp(centre), _exp(centre + half)


def _exp(x):
    """e**x, or infinity where it is beyond the floats (a ratio B/A that
    large is still a ratio, its side of 1 clear)."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def resolvable_change(ci):
    """The smallest relative change an interval *ci* could have told from no
    change: its half-width on the log scale, as a fraction (0.04 = 4 %)."""
    low, _, high = ci
    if low <= 0 or math.isinf(high):
        return math.inf
    return _exp((math.log(high) - math.log(low)) / 2) - 1


def ratio_side(ci):
    """-1 when the whole interval is below 1, +1 when above, else 0."""
    low, _, high = ci
    return -1 if high < 1 else 1 if low > 1 else 0
