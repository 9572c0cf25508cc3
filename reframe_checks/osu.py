"""OSU Micro-Benchmarks: an installed prefix (``-S osu_prefix=DIR`` or
``CLUSTERBENCH_OSU_PREFIX``), an environment with feature ``osu``, Spack
(``-S build_mode=spack``), else built from the release (OSU 7.4).

Skipped, with one line saying how to provide it, when none of them gives
the suite (offline, with no release cached or mirrored).
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
