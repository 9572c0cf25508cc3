"""What a partition declares of its ceilings, kept in the run report: the
node's peak, its link's peak and its own bands of the portable figures.

``extras.peak_gflops_per_node``: the node's double-precision peak, where the
site knows it better than the computed one (FLOP per cycle x clock x cores).
``extras.portable_bands``: a band of its own for a portable figure,
``{'hpl_peak_efficiency': [40, 120]}`` (in the figure's unit, %). The link
declarations: see :mod:`clusterbench.machine.linkpeak`. All are read by
``clusterbench.results.portable`` when it judges a session, so every judged
check records them (:class:`~clusterbench.checks.plugins.judged.JudgedCheck`).
"""

from reframe.core.exceptions import ReframeError

from clusterbench.core.errors import ClusterbenchError
from clusterbench.machine import linkpeak
from clusterbench.parsers.catalog import bands_of


def record_declared_ceilings(check):
    """The partition's declared node peak and portable bands (at setup)."""
    extras = check.current_partition.extras
    where = f'{check.current_partition.fullname}: extras'
    try:
        check.peak_gflops_per_node = float(extras.get('peak_gflops_per_node') or 0)
    except (TypeError, ValueError):
        raise ClusterbenchError(
            f'{where}: peak_gflops_per_node '
            f'{extras.get("peak_gflops_per_node")!r} is not a number'
        ) from None
    bands = bands_of(extras.get('portable_bands') or {}, where)
    check.portable_bands = {k: [b.lower, b.upper] for k, b in bands.items()}


def read_link_peak(check, crosses_link, not_crossing):
    """Take the declared link peak (at setup: errors come early).

    Sets ``link_peak``, or ``efficiency_note`` saying why there is none:
    *not_crossing* when the run's traffic does not cross the link.
    """
    if not crosses_link:
        check.efficiency_note = not_crossing
        return
    try:
        peak, reason = linkpeak.from_extras(
            check.current_partition.extras,
            f'partition {check.current_partition.fullname}',
        )
    except ClusterbenchError as err:
        raise ReframeError(str(err)) from None
    if peak is None:
        check.efficiency_note = f'no efficiency figure: {reason}'
    else:
        check.link_peak = peak.as_dict()
