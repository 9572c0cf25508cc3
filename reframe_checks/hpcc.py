"""HPC Challenge on every partition whose environment offers ``hpcc``."""

import reframe as rfm

from clusterbench.checks.hpcc import HPCCBase


@rfm.simple_test
class HPCCCheck(HPCCBase):
    tags = {'default', 'hpl', 'stream', 'dgemm', 'latency'}
    maintainers = ['clusterbench']
