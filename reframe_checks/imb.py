"""Intel MPI Benchmarks (IMB-MPI1): an installed prefix (``-S imb_prefix=DIR``
or ``CLUSTERBENCH_IMB_PREFIX``), an environment with feature ``imb``, Spack
(``-S build_mode=spack``), else built from the release (IMB 2021.7).

Skipped, with one line saying how to provide it, when none of them gives
the suite (offline, with no release cached or mirrored).
"""

import reframe as rfm

from clusterbench.checks.imb import IMBCollectiveBase, IMBPointToPointBase


@rfm.simple_test
class IMBPointToPointCheck(IMBPointToPointBase):
    tags = {'default', 'latency', 'bandwidth', 'network', 'imb'}
    maintainers = ['clusterbench']


@rfm.simple_test
class IMBCollectiveCheck(IMBCollectiveBase):
    tags = {'default', 'latency', 'collectives', 'network', 'imb'}
    maintainers = ['clusterbench']
