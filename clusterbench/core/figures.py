"""What a figure is: one declaration per figure, and the closed set of units.

A benchmark declares each figure it records once, beside the parser that
reads it (``DECLARED`` of ``clusterbench/parsers/<benchmark>.py``): its name
(or a name pattern for a family of curve figures), its unit, which way is
better and, for an efficiency or a share, what it is a share of. A figure
whose expected range holds on any healthy machine (a *portable* figure) also
carries its default band and where that band comes from. Parsers, checks, the
vocabulary of verdicts, reference validation and the portable verdicts all
read these declarations; ``clusterbench.parsers.catalog`` collects them.
"""

import enum
import re
from dataclasses import dataclass
from typing import Optional


class Better(enum.StrEnum):
    """Which way a figure of merit is better (a string too: ``'higher'``,
    as reports and CSV files write it)."""

    HIGHER = 'higher'
    LOWER = 'lower'


class FigureKind(enum.StrEnum):
    """The kind of figure whose spread between sessions sets the floor of a
    proposed band (Figure.kind)."""

    #: The figures of a whole application solve (a solver, not a kernel):
    #: they move between sessions more than a kernel's (references/floors.py).
    SOLVER = 'solver'


class Bound(enum.StrEnum):
    """What bounds a figure (Figure.bound)."""

    #: The node's memory bandwidth: a roofline's memory side.
    MEMORY = 'memory'


# The members by their short names, as the declarations read them.
HIGHER, LOWER = Better.HIGHER, Better.LOWER
SOLVER = FigureKind.SOLVER
MEMORY = Bound.MEMORY

TIME_UNITS = frozenset({'s', 'ms', 'us', 'ns'})
#: The times a link's latency is given in (a figure in seconds is a run time).
LATENCY_UNITS = frozenset({'ms', 'us', 'ns'})
BANDWIDTH_UNITS = frozenset({'GB/s', 'MB/s', 'Gb/s', 'Mb/s'})
FLOP_RATE_UNITS = frozenset({'TFlop/s', 'GFlop/s', 'MFlop/s', 'Mop/s'})

#: Every unit a figure may be recorded in: a declaration in another unit is
#: refused when it is made, a reference in another unit by `references check`.
UNITS = frozenset(
    {
        *FLOP_RATE_UNITS,
        *BANDWIDTH_UNITS,
        *TIME_UNITS,
        'GUP/s',
        'msg/s',
        'Mmsg/s',
        '%',
        'B',
        'iterations',
        'J',
        'W',
        '',
    }
)

#: What the placeholders of a name pattern stand for: a message size as the
#: curves name it (0B, 8B, 1KiB, 1MiB) and the prefix of a benchmark's
#: figures (``pingpong_``, ``bidir_``; none at all too).
_PLACEHOLDERS = {
    '<size>': r'\d+(?:B|KiB|MiB)',
    '<prefix>': r'(?:[a-z0-9]+_)*',
}


class DeclarationError(ValueError):
    """A declaration that contradicts the vocabulary or another one."""


@dataclass(frozen=True)
class Band:
    """The range of a portable figure on any healthy machine, in its unit."""

    lower: float
    upper: float
    #: Where the range comes from: literature and the sessions it was checked on.
    source: str
    #: The evidence for the floor: the lowest healthy value measured on each
    #: CPU kind, ``((kind, value), ...)``; a floor above one is refused.
    healthy: tuple = ()
    #: The highest value of each fault measured, ``((fault, kind, value),
    #: ...)``. A fault above the floor is one this band cannot tell from a
    #: healthy run: the margin says so, and another band must catch it.
    faulty: tuple = ()
    #: The test cases the band is for, by their parameters, ``(('stencil',
    #: '27'),)``: a variant whose physics differ; () for every case.
    where: tuple = ()

    def __post_init__(self):
        if not self.lower < self.upper:
            raise DeclarationError(f'band {self.lower}..{self.upper} is empty')
        for kind, value in self.healthy:
            if value < self.lower:
                raise DeclarationError(
                    f'band {self.lower:g}..{self.upper:g}: a healthy {kind} read '
                    f'{value:g}, below the floor'
                )

    def fits(self, params):
        """Whether the band is for a case of parameters *params* ({name: str})."""
        return all(params.get(name) == str(value) for name, value in self.where)

    def separates(self, fault, kind):
        """Whether the floor sits above the *fault* measured on *kind*."""
        return all(
            value < self.lower for f, k, value in self.faulty if (f, k) == (fault, kind)
        )

    @property
    def margin(self):
        """The floor against its evidence, in points: ``floor 65: healthy min
        83.7 Intel-6-207 (+18.7); faulty max 51 -O0 Intel-6-207 (-14)``."""
        if not (self.healthy or self.faulty):
            return ''
        healthy = ', '.join(
            f'{v:g} {k} ({v - self.lower:+.3g})' for k, v in self.healthy
        )
        faulty = ', '.join(
            f'{v:g} {f} {k} ({v - self.lower:+.3g}'
            + ('' if v < self.lower else ': not separated')
            + ')'
            for f, k, v in self.faulty
        )
        parts = [f'floor {self.lower:g}']
        if healthy:
            parts.append(f'healthy min {healthy}')
        if faulty:
            parts.append(f'faulty max {faulty}')
        return ': '.join(parts[:2]) + ''.join(f'; {p}' for p in parts[2:])


@dataclass(frozen=True)
class Figure:
    """One figure (or one family of figures, by a name pattern)."""

    name: str
    unit: str
    #: HIGHER, LOWER or None: no figure of merit (an iteration count).
    better: Optional[Better]
    #: What an efficiency or a share is a share of ('' for a plain figure).
    of: str = ''
    #: A share of a whole that lives near zero (judged in points of the whole).
    share: bool = False
    #: The default band of a portable figure (None: judged against references).
    band: Optional[Band] = None
    #: Bands of variants whose physics differ (``Band.where``), before *band*.
    variants: tuple = ()
    #: The application family the report's executive table lists the figure
    #: under ('NPB', 'HPL'); '' for a figure that is no headline.
    headline: str = ''
    #: The kind of figure whose spread between sessions sets the floor of a
    #: proposed band (:mod:`clusterbench.references.floors`): SOLVER for the
    #: figures of a whole application solve; None lets its unit decide.
    kind: Optional[FigureKind] = None
    #: MEMORY for a figure the node's memory bandwidth bounds (a roofline's
    #: memory side): it moves with the bandwidth that neighbours leave it;
    #: where the benchmark measures one, its steady judge is its share of a
    #: triad in the same job (the CG solver's job_triad_efficiency).
    bound: Optional[Bound] = None
    #: The value does not depend on time (an iteration count): a run
    #: measured on a loaded host has it right all the same, so `ab` pairs it
    #: where the figures of speed of a DISTURBED leg are left out.
    deterministic: bool = False

    def __post_init__(self):
        if self.deterministic and (self.unit in TIME_UNITS or self.unit.endswith('/s')):
            raise DeclarationError(
                f'figure {self.name}: a time or a rate is not deterministic'
            )
        if self.unit not in UNITS:
            raise DeclarationError(
                f'figure {self.name}: unit {self.unit!r} is not one of the '
                f'vocabulary (clusterbench.core.figures.UNITS)'
            )
        for field, kind in (('better', Better), ('kind', FigureKind), ('bound', Bound)):
            value = getattr(self, field)
            if value is None or value == '':
                object.__setattr__(self, field, None)
                continue
            try:
                object.__setattr__(self, field, kind(value))
            except ValueError:
                raise DeclarationError(
                    f'figure {self.name}: {field} {value!r} is not one of '
                    f'{", ".join(m.value for m in kind)}'
                ) from None
        if self.share and self.unit != '%':
            raise DeclarationError(f'figure {self.name}: a share is in %')
        unplaced = not all(b.where for b in self.variants)
        if self.variants and (self.band is None or unplaced):
            raise DeclarationError(
                f'figure {self.name}: a variant band needs a default band and '
                'the parameters of its variant'
            )

    def band_for(self, params):
        """The band of a case of parameters *params*: its variant's, else
        the default."""
        return next((b for b in self.variants if b.fits(params)), self.band)

    @property
    def bands(self):
        """Every band of the figure: the default, then its variants'."""
        return tuple(b for b in (self.band, *self.variants) if b is not None)

    @property
    def is_pattern(self):
        return '<' in self.name

    def matches(self, name):
        if not self.is_pattern:
            return name == self.name
        return _pattern(self.name).fullmatch(name or '') is not None


_COMPILED = {}


def _pattern(name):
    if name not in _COMPILED:
        regex = re.escape(name)
        for placeholder, part in _PLACEHOLDERS.items():
            regex = regex.replace(re.escape(placeholder), part)
        _COMPILED[name] = re.compile(regex)
    return _COMPILED[name]


class Catalog:
    """Every declared figure, looked up by the name a run recorded."""

    def __init__(self, *groups):
        seen = {}
        for group in groups:
            for figure in group:
                other = seen.setdefault((figure.name, figure.unit), figure)
                if other != figure:
                    raise DeclarationError(
                        f'figure {figure.name} ({figure.unit}) is declared twice, '
                        f'differently: {other} and {figure}'
                    )
        self.figures = tuple(seen.values())
        self._exact = {}
        for figure in self.figures:
            if not figure.is_pattern:
                self._exact.setdefault(figure.name, []).append(figure)
        self._patterns = [f for f in self.figures if f.is_pattern]
        self._found = {}  # name -> find(name): the catalog never changes
        self._agree()

    def _agree(self):
        """One name, one better direction: a figure judged both ways is a bug."""
        by_name = {}
        for figure in self.figures:
            other = by_name.setdefault(figure.name, figure)
            if (other.better, other.share) != (figure.better, figure.share):
                raise DeclarationError(
                    f'figure {figure.name} is declared twice, better '
                    f'{other.better} and {figure.better}'
                )

    def find(self, name):
        """The declarations of *name*: its own, else the patterns it matches."""
        found = self._found.get(name)
        if found is None:
            exact = self._exact.get(name)
            if exact:
                found = tuple(exact)
            else:
                found = tuple(f for f in self._patterns if f.matches(name))
            self._found[name] = found
        return found

    def declared(self, name, unit=None):
        """The declaration of *name* in *unit* (any unit: None), or None."""
        for figure in self.find(name):
            if unit is None or figure.unit == (unit or '').strip():
                return figure
        return None

    def problem(self, name, unit=None):
        """'' for a declared figure in a declared unit, else why not, in words."""
        found = self.find(name)
        if not found:
            return f'figure {name!r} is declared by no benchmark'
        if unit is None or self.declared(name, unit):
            return ''
        units = ', '.join(sorted({repr(f.unit) for f in found}))
        return f'unit {unit!r} of {name!r}: it is declared in {units}'

    def portable(self):
        """The declarations that carry a default band."""
        return tuple(f for f in self.figures if f.band is not None)

    def headline(self, name, unit):
        """The application family of a figure, '' when it is no headline."""
        figure = self.declared(name, unit)
        return figure.headline if figure is not None else ''

    def headlines(self):
        """The application families of the declarations, by name."""
        return tuple(sorted({f.headline for f in self.figures if f.headline}))

    def kind(self, name, unit):
        """The declared kind of a figure (SOLVER), None when none is declared."""
        figure = self.declared(name, unit)
        return figure.kind if figure is not None else None

    def bound(self, name, unit):
        """What bounds a figure (MEMORY), None when none is declared."""
        figure = self.declared(name, unit)
        return figure.bound if figure is not None else None
