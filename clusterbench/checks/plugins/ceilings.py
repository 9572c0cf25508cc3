"""What a partition declares of its ceilings, kept in the run report: the
node's peak, its link's peak and its own bands of the portable figures.

``extras.peak_gflops_per_node``: the node's double-precision peak, where the
site knows it better than the computed one (FLOP per cycle x clock x cores).
``extras.portable_bands``: a band of its own for a portable figure,
``{'hpl_peak_efficiency': [40, 120]}`` (in the figure's unit, %). The link
declarations: see :mod:`clusterbench.machine.linkpeak`. All are read by
``clusterbench.results.portable`` when it judges a session, so every check
that records a portable figure records them.
"""

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, variable
from reframe.core.exceptions import ReframeError

from clusterbench.core.errors import ClusterbenchError
from clusterbench.machine import linkpeak
from clusterbench.parsers.catalog import bands_of


class DeclaredCeilings(rfm.RegressionTestPlugin):
    """Records the partition's declared node peak and portable bands (always),
    and its link peak when a check's traffic crosses the link."""

    peak_gflops_per_node = variable(float, value=0.0)
    portable_bands = variable(typ.Dict[str, typ.List[float]], value={})
    #: The partition's declared link peak (MB/s per direction), if any.
    link_peak = variable(typ.Dict[str, object], value={})
    #: Why there is no link efficiency figure, when there is none.
    efficiency_note = variable(str, value='')

    @run_after('setup')
    def _record_declared_ceilings(self):
        extras = self.current_partition.extras
        where = f'{self.current_partition.fullname}: extras'
        try:
            self.peak_gflops_per_node = float(extras.get('peak_gflops_per_node') or 0)
        except (TypeError, ValueError):
            raise ClusterbenchError(
                f'{where}: peak_gflops_per_node '
                f'{extras.get("peak_gflops_per_node")!r} is not a number'
            ) from None
        bands = bands_of(extras.get('portable_bands') or {}, where)
        self.portable_bands = {k: [b.lower, b.upper] for k, b in bands.items()}

    def read_link_peak(
        self, crosses_link, not_crossing='intra-node run: the link is not used'
    ):
        """Take the declared link peak (at setup: errors come early).

        Sets ``link_peak``, or ``efficiency_note`` saying why there is none:
        *not_crossing* when the run's traffic does not cross the link.
        """
        if not crosses_link:
            self.efficiency_note = not_crossing
            return
        try:
            peak, reason = linkpeak.from_extras(
                self.current_partition.extras,
                f'partition {self.current_partition.fullname}',
            )
        except ClusterbenchError as err:
            raise ReframeError(str(err)) from None
        if peak is None:
            self.efficiency_note = f'no efficiency figure: {reason}'
        else:
            self.link_peak = peak.as_dict()
