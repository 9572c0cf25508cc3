"""What a partition declares for the portable figures, kept in the run report.

``extras.peak_gflops_per_node``: the node's double-precision peak, where the
site knows it better than the computed one (FLOP per cycle x clock x cores).
``extras.portable_bands``: a band of its own for a portable figure,
``{'hpl_peak_efficiency': [40, 120]}`` (in the figure's unit, %). Both are
read by ``clusterbench.results.portable`` when it judges a session.
"""

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, variable

from clusterbench.core.errors import ClusterbenchError
from clusterbench.parsers.catalog import bands_of


class PortableCeilings(rfm.RegressionTestPlugin):
    """Records the partition's declared node peak and its portable bands."""

    peak_gflops_per_node = variable(float, value=0.0)
    portable_bands = variable(typ.Dict[str, typ.List[float]], value={})

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
