"""The link peak a partition declares, for efficiency figures against it."""

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import variable
from reframe.core.exceptions import ReframeError

from clusterbench.core.errors import ClusterbenchError
from clusterbench.machine import linkpeak


class DeclaredLinkPeak(rfm.RegressionTestPlugin):
    """Reads ``extras`` link declarations (see :mod:`clusterbench.machine.linkpeak`)."""

    #: The partition's declared link peak (MB/s per direction), if any.
    link_peak = variable(typ.Dict[str, object], value={})
    #: Why there is no efficiency figure, when there is none.
    efficiency_note = variable(str, value='')

    def read_link_peak(
        self, crosses_link, not_crossing='intra-node run: the link is not used'
    ):
        """Take the declared peak (at setup: errors come early).

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
