"""Intel MPI Benchmarks (IMB-MPI1) where installed: ``-S imb_prefix=DIR``.

Skipped, with one line saying how to provide it, when neither a prefix
(``-S imb_prefix=DIR`` or ``CLUSTERBENCH_IMB_PREFIX``) nor an environment
with feature ``imb`` gives the suite.
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
