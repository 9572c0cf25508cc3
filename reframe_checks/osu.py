"""OSU Micro-Benchmarks where installed: ``-S osu_prefix=DIR``.

Skipped, with one line saying how to provide it, when neither a prefix
(``-S osu_prefix=DIR`` or ``CLUSTERBENCH_OSU_PREFIX``) nor an environment
with feature ``osu`` gives the suite.
"""

import reframe as rfm

from clusterbench.checks.osu import OSUCollectiveBase, OSUPointToPointBase


@rfm.simple_test
class OSUPointToPointCheck(OSUPointToPointBase):
    tags = {'default', 'latency', 'bandwidth', 'network', 'osu'}
    maintainers = ['clusterbench']


@rfm.simple_test
class OSUCollectiveCheck(OSUCollectiveBase):
    tags = {'default', 'latency', 'collectives', 'network', 'osu'}
    maintainers = ['clusterbench']
