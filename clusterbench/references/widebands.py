"""A band wider than ±100 % is not shipped: its figure is context only.

A band that lets a rate fall to zero, or a size grow 1,600-fold, judges
nothing: every run passes it, and a slower one reads INCONCLUSIVE at best.
Such a figure (NetPIPE's intra-node bandwidth, seen in two modes 4x apart)
is written into no reference file; its provenance keeps what the band would
have been and why (``context_only``), `references show` lists it, and a run
shows its value as `no reference`. The width is measured as the verdicts
measure a change (judging.verdict): relative to the reference, for a share
near zero in points of the whole; an open side (``null``, a one-sided band)
is no width.
"""

import math

from clusterbench.judging import verdict, vocabulary
from clusterbench.references import validate as refdata

#: The widest band shipped, on either side: ±100 %.
WIDEST = 1.0


def too_wide(variable, unit, entry):
    """'' for a reference *entry* ``[ref, lower, upper, unit]`` that may be
    shipped, else why not: ``band would be -100 %..+161755 % (wider than
    ±100 %)``."""
    ref, lower, upper = entry[:3]
    if not ref or not all(_number(t) for t in (ref, lower, upper) if t is not None):
        return ''
    low, high = verdict.bounds(ref, lower, upper)
    # As verdict measures a change: a share near zero in points of the whole.
    scale = 100.0 if vocabulary.is_share(variable, unit) else abs(ref)
    sides = [(ref - low) / scale, (high - ref) / scale]
    if not any(refdata.wider(w, WIDEST) for w in sides if math.isfinite(w)):
        return ''
    return (
        f'band would be {_side(lower, "-∞")}..{_side(upper, "+∞")} '
        f'(wider than ±{WIDEST * 100:.0f} %)'
    )


def _side(value, infinite):
    return infinite if value is None else f'{value:+.0%}'.replace('%', ' %')


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)
