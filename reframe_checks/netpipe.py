"""NetPIPE on every partition whose environment offers ``netpipe``."""

import reframe as rfm

from clusterbench.checks.netpipe import NetPIPEBase


@rfm.simple_test
class NetPIPECheck(NetPIPEBase):
    tags = {'default', 'latency', 'bandwidth', 'network'}
    maintainers = ['clusterbench']
