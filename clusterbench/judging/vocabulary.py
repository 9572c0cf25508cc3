"""The figure vocabulary: for every figure the checks record, which way is better.

Answered from the one catalog of figure declarations
(:mod:`clusterbench.parsers.catalog`: each benchmark declares its figures
beside its parser) and used by verdicts (``SLOWER`` / ``FLAGGED`` /
``FASTER``), reference updates (``--one-sided`` bands), the HTML report (best
configuration) and acceptance (robust direction). A figure no benchmark
declares (an old report's) falls back to its unit: a rate (``.../s``) is
better higher, a time better lower. A declared figure with no direction (an
iteration count) is no figure of merit, and a change in either direction
beyond its tolerance stays ``FLAGGED``.
"""

from clusterbench.core import figures
from clusterbench.parsers.catalog import CATALOG

HIGHER = figures.HIGHER
LOWER = figures.LOWER

TIME_UNITS = figures.TIME_UNITS
LATENCY_UNITS = figures.LATENCY_UNITS
BANDWIDTH_UNITS = figures.BANDWIDTH_UNITS
FLOP_RATE_UNITS = figures.FLOP_RATE_UNITS
#: Every unit a figure may be recorded in: reference files are checked
#: against this set.
UNITS = figures.UNITS

#: Figures that are a share of a whole and live near zero (the share of the
#: run spent in MPI is ~0.05 % for one rank): a relative tolerance around such
#: a value is noise around zero. Their references get an absolute floor in
#: their own unit (SHARE_FLOOR percentage points), and a detection threshold
#: is measured in points of the whole, not relative to the value.
SHARES = frozenset(f.name for f in CATALOG.figures if f.share)
#: The smallest band of a share figure, in percentage points.
SHARE_FLOOR = 1.0


def declaration(variable, unit=None):
    """The declaration of a figure (in *unit*, if it has one there), or None."""
    return CATALOG.declared(variable or '', unit) or CATALOG.declared(variable or '')


def undeclared(variable, unit=None):
    """'' for a declared figure in a declared unit, else why not (one phrase)."""
    return CATALOG.problem(variable or '', unit)


def is_share(variable, unit):
    """A share of a whole near zero, in % (see SHARES)."""
    if (unit or '').strip() != '%':
        return False
    found = declaration(variable, unit)
    if found is not None:
        return found.share
    # A prefixed share of a benchmark that does not declare it (intra_mpi_share).
    return any((variable or '').endswith(f'_{share}') for share in SHARES)


def is_rate(unit):
    return (unit or '').strip().endswith('/s')


def is_time(unit):
    return (unit or '').strip() in TIME_UNITS


def is_link_unit(unit):
    """A latency or a bandwidth unit: the figure can describe one link."""
    return (unit or '').strip() in LATENCY_UNITS | BANDWIDTH_UNITS


def direction(variable, unit):
    """HIGHER, LOWER or None (not a figure of merit) for one figure."""
    found = declaration(variable, unit)
    if found is not None:
        return found.better
    if is_rate(unit):
        return HIGHER
    if is_time(unit):
        return LOWER
    return None


def is_memory_bound(variable, unit):
    """A figure the node's memory bandwidth bounds, declared so
    (``bound=MEMORY``), or a STREAM figure: it moves with the bandwidth that
    neighbours on the node leave it."""
    found = declaration(variable, unit)
    if found is not None and found.bound == figures.MEMORY:
        return True
    return (variable or '').startswith('stream_')


def is_deterministic(variable, unit):
    """A figure declared not to depend on time (an iteration count): a
    DISTURBED run measures it right all the same."""
    found = declaration(variable, unit)
    return found is not None and found.deterministic


def is_speed(variable, unit):
    """A rate or a time: a bad change is ``SLOWER``, otherwise ``FLAGGED``."""
    return is_rate(unit) or is_time(unit)
