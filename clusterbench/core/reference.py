"""What a figure is judged against: one reference value and its bounds."""

import math
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Reference:
    """A reference as ReFrame's ``(value, lower, upper, unit)`` tuple holds it.

    *value* is the reference figure (or the median it is judged against,
    such as a baseline run's). *lower* and *upper* are the allowed departure
    as fractions of *value* (``-0.1``: 10 % below), mirrored for a negative
    value as ReFrame does, absolute for a value of zero, and None where that
    side is unbounded. *unit* is the figure's unit ('' where unknown).
    """

    value: float
    lower: Optional[float] = None
    upper: Optional[float] = None
    unit: str = ''

    @classmethod
    def from_reframe(cls, entry):
        """From ReFrame's reference tuple, with or without its unit."""
        value, lower, upper, *unit = entry
        return cls(value, lower, upper, unit[0] if unit else '')

    def band(self):
        """The allowed absolute range ``(lo, hi)``, exactly as ReFrame
        computes it (infinite on an unbounded side)."""

        def bound(thres, infinite):
            if thres is None:
                return infinite
            if self.value == 0:
                return thres
            return self.value * (1 + (-thres if self.value < 0 else thres))

        return bound(self.lower, -math.inf), bound(self.upper, math.inf)
