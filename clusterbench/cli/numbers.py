"""The one kind of argparse type a numeric option has: a finite number within
its bounds, else argparse's one error line naming the option and the value.

Python reads ``nan``, ``inf`` and ``1e400`` as floats; an option that took
them as given passed NaN into a comparison (always false: ``ab --strict``
exited 0 with ``--detection-threshold nan``) or an endless wait. Every
numeric option of clusterbench/cli has one of these types
(tests/cli/test_bad_inputs_round4_options.py finds them in the parsers). Kept
apart from cli/common.py: the job-script wrappers import it, and nothing
heavier.
"""

import argparse
import math


class Number:
    """An argparse type: a number from *lowest* to *highest* (None: no
    bound), each excluded when *above* (*below*), whole when *whole*; a word
    of *words* is taken as it is (``--floor kind``)."""

    def __init__(self, what, lowest, highest=None, *, whole=False, above=False,
                 below=False, words=()):  # fmt: skip
        self.what, self.lowest, self.highest = what, lowest, highest
        self.whole, self.above, self.below = whole, above, below
        self.words = tuple(words)

    def __call__(self, text):
        if text in self.words:
            return text
        try:
            value = int(text) if self.whole else float(text)
        except ValueError:
            value = None
        if value is None or not self.within(value):
            raise argparse.ArgumentTypeError(f'{self.bounds()}, not {text!r}')
        return value

    def within(self, value):
        low = value > self.lowest if self.above else value >= self.lowest
        high = self.highest is None or (
            value < self.highest if self.below else value <= self.highest
        )
        return math.isfinite(value) and low and high

    def bounds(self):
        low, high = _text(self.lowest), _text(self.highest)
        if self.highest is None:
            text = f'more than {low}' if self.above else f'{low} or more'
        elif self.above and self.below:
            text = f'between {low} and {high}, both excluded'
        elif self.above or self.below:
            low = f'more than {low}' if self.above else f'at least {low}'
            high = f'less than {high}' if self.below else f'at most {high}'
            text = f'{low} and {high}'
        else:
            text = f'from {low} to {high}'
        words = ''.join(f' or "{word}"' for word in self.words)
        return f'{self.what}{words}, {text}'

    def __repr__(self):
        # argparse names a type by its repr in "invalid <type> value".
        return self.what


def _text(bound):
    return f'{bound:g}' if isinstance(bound, float) else str(bound)


def count_of(what, most=None):
    """A whole number of *what*, 0 or more (at most *most*)."""
    return Number(f'a number of {what}', 0, most, whole=True)


#: A relative change a verdict must detect (--detection-threshold, references
#: check --max-tolerance): beyond 1 (100 %) nothing better-higher can fall.
CHANGE = Number('a fraction (0.1 is 10 %)', 0, 1)
#: Seconds of a wait: a day at most.
SECONDS = Number('seconds', 0, 86400)
#: k, the multiple of a spread: 0 would make every band its floor.
MULTIPLE = Number('a multiple of the spread', 0, 100, above=True)
