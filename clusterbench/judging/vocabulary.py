"""The figure vocabulary: for every figure the checks record, which way is better.

Declared once here and used by verdicts (``SLOWER`` / ``FLAGGED`` / ``FASTER``),
reference updates (``--one-sided`` bands), the HTML report (best
configuration) and acceptance (robust direction). The unit decides for speeds:
a rate (``.../s``) is better higher, a time better lower. Figures whose unit
does not say (efficiencies, shares, energy, sizes) are named below. A figure
with neither (an iteration count) is no figure of merit: it has no direction,
and a change in either direction beyond its tolerance stays ``FLAGGED``.
"""

HIGHER = 'higher'
LOWER = 'lower'

TIME_UNITS = {'s', 'ms', 'us', 'ns'}
#: The times a link's latency is given in (a figure in seconds is a run time).
LATENCY_UNITS = {'ms', 'us', 'ns'}
BANDWIDTH_UNITS = {'GB/s', 'MB/s', 'Gb/s', 'Mb/s'}
FLOP_RATE_UNITS = {'TFlop/s', 'GFlop/s', 'MFlop/s', 'Mop/s'}

#: Every unit a figure may be recorded in: reference files are checked
#: against this set.
UNITS = {
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

#: Figures whose unit does not tell the direction, by name. A name also
#: matches as the suffix of a prefixed figure (``bidir_n_half``).
NAMED = {
    # percentages
    'hpl_dgemm_efficiency': HIGHER,
    'pingpong_link_efficiency': HIGHER,
    'link_efficiency': HIGHER,
    'link_efficiency_bidir': HIGHER,
    'mpi_time_share': LOWER,
    'mpi_share': LOWER,
    'stalls_worst': LOWER,
    # energy and power of the same work
    'energy_j': LOWER,
    'mean_power_w': LOWER,
    # the message size that reaches half the peak bandwidth
    'n_half': LOWER,
}


#: Figures that are a share of a whole and live near zero (the share of the
#: run spent in MPI is ~0.05 % for one rank): a relative tolerance around such
#: a value is noise around zero. Their references get an absolute floor in
#: their own unit (SHARE_FLOOR percentage points), and a detection threshold
#: is measured in points of the whole, not relative to the value.
SHARES = {'mpi_share', 'mpi_time_share', 'stalls_worst'}
#: The smallest band of a share figure, in percentage points.
SHARE_FLOOR = 1.0


def is_share(variable, unit):
    """A share of a whole near zero, in % (see SHARES)."""
    if (unit or '').strip() != '%':
        return False
    return any(variable == s or (variable or '').endswith(f'_{s}') for s in SHARES)


def _named(variable):
    for name, better in NAMED.items():
        if variable == name or variable.endswith(f'_{name}'):
            return better
    return None


def is_rate(unit):
    return (unit or '').strip().endswith('/s')


def is_time(unit):
    return (unit or '').strip() in TIME_UNITS


def is_link_unit(unit):
    """A latency or a bandwidth unit: the figure can describe one link."""
    return (unit or '').strip() in LATENCY_UNITS | BANDWIDTH_UNITS


def direction(variable, unit):
    """HIGHER, LOWER or None (not a figure of merit) for one figure."""
    named = _named(variable or '')
    if named:
        return named
    if is_rate(unit):
        return HIGHER
    if is_time(unit):
        return LOWER
    return None


def is_speed(variable, unit):
    """A rate or a time: a bad change is ``SLOWER``, otherwise ``FLAGGED``."""
    return (is_rate(unit) or is_time(unit)) and _named(variable or '') is None
